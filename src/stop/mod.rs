//! stop: end a background run as closing its terminal's window would: its
//! whole process group, SIGHUP, then SIGTERM, then SIGKILL after the timeout,
//! each only while something is left; the supervisor records `stopped`. `plan`
//! decides (pure).

pub mod leftovers;
pub mod plan;

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::{ending, time, Error, Exit, Record, SessionId, State};
use crate::run::finish::finish;
use crate::run::group;
use crate::sys::procfs;
use crate::trust::{
    self, decide::signal_authority, decide::Authority, decide::Distrust, decide::Reach,
    local::Local,
};
use plan::{plan, Facts, Plan};

/// How long, after SIGKILL, the group may take to disappear before stop gives up.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(10);
/// How long the supervisor may take to record the end once its command is gone.
const RECORD_GRACE: Duration = Duration::from_secs(30);
/// How often /proc and the record are looked at while waiting.
const POLL: Duration = Duration::from_millis(20);

pub fn stop(ctx: &Ctx, id: &SessionId, timeout: Duration) -> Result<i32> {
    let stored = store::require(&ctx.repo, id)?;
    let facts = match stored.record.process.as_ref() {
        Some(p) => Facts {
            supervisor_alive: p.background && procfs::is_session_alive(p),
            command_alive: procfs::is_alive(p),
        },
        None => Facts {
            supervisor_alive: false,
            command_alive: false,
        },
    };
    match plan(&stored.record, &facts) {
        Plan::NotRunning => {
            match leftovers::end_leftovers(ctx, id, timeout)? {
                Some(ended) => ctx.ui.info(format!(
                    "session {id} is not running ({}); ended what its run left behind: {}",
                    describe(&stored.record),
                    describe_ended(&ended)
                )),
                None => ctx.ui.info(format!(
                    "session {id} is not running ({}); nothing to stop",
                    describe(&stored.record)
                )),
            }
            Ok(0)
        }
        Plan::Foreground { pid } => Err(Error::refused(format!(
            "session {id} runs in the foreground (pid {pid}) of another terminal"
        ))
        .hint(format!("end it there (Ctrl-C), or with `kill {pid}`"))
        .into()),
        Plan::Supervised => {
            let authority = authority(ctx, &stored)?;
            stop_supervised(ctx, stored, authority, timeout)
        }
        Plan::Orphaned { background } => {
            let authority = match background {
                true => authority(ctx, &stored)?,
                false => Authority::nothing(),
            };
            stop_orphaned(ctx, stored, authority, timeout)
        }
    }
}

/// What this machine may signal for the recorded run: only a run it started
/// itself, proven by its local state and the live system. A record that fails
/// the proof is reported and left alone (nothing is marked or signalled).
fn authority(ctx: &Ctx, stored: &Stored) -> Result<Authority> {
    let record = &stored.record;
    let id = &record.id;
    let local = match &record.process {
        Some(p) => Local::of(&ctx.layout, id).run(p.pid),
        None => Ok(None),
    };
    let decided = match (&local, &record.process) {
        (Err(e), _) => Err(Distrust::NoLocalRun(Some(format!("{e:#}")))),
        (Ok(_), None) => Err(Distrust::RunMismatch),
        (Ok(run), Some(p)) => {
            let facts = run.as_ref().map(trust::signal_facts).unwrap_or_else(|| {
                trust::decide::SignalFacts {
                    boot_id: procfs::boot_id(),
                    command_now: procfs::identity(p.pid),
                    supervisor_now: None,
                    own_pgrp: procfs::own_pgrp(),
                }
            });
            signal_authority(p, run.as_ref(), &facts)
        }
    };
    decided.map_err(|why| {
        let pid = record.process.as_ref().map_or(0, |p| p.pid);
        Error::refused(format!(
            "not stopping session {id}: {}; nothing was signalled",
            why.describe()
        ))
        .hint(format!(
            "if pid {pid} is yours to end, end it yourself; the record's history is in \
             `git log -p refs/bullpen/sessions/{id}`"
        ))
        .into()
    })
}

/// "exited 0", "stopped by SIGHUP", "ready", ...
fn describe(record: &Record) -> String {
    match (&record.exit, record.state) {
        (Some(e), State::Exited | State::Stopped) => ending::how(record.state, e),
        _ => record.state.as_str().to_owned(),
    }
}

fn stop_supervised(
    ctx: &Ctx,
    stored: Stored,
    authority: Authority,
    timeout: Duration,
) -> Result<i32> {
    let id = stored.record.id.clone();
    let Some(marked) = request_stop(ctx, stored)? else {
        let now = store::load(&ctx.repo, &id)?;
        let state = now.map_or("gone".to_owned(), |s| describe(&s.record));
        ctx.ui.info(format!(
            "session {id} ended by itself before stop got to it ({state}); nothing to stop"
        ));
        return Ok(0);
    };
    let sent = terminate(&id, authority, timeout)?;
    let done = wait_recorded(ctx, &marked)?;
    report(ctx, &done.record, &sent);
    // What left the group (an agent's daemon) stays with the supervisor: end it too.
    if let Some(ended) = leftovers::end_leftovers(ctx, &id, timeout)? {
        ctx.ui.info(format!(
            "ended what its run left behind: {}",
            describe_ended(&ended)
        ));
    }
    Ok(0)
}

/// "pid 12 (SIGHUP)", "pids 12, 13 (SIGTERM)".
fn describe_ended((pids, signal): &(Vec<u32>, String)) -> String {
    let list = pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    match pids.len() {
        1 => format!("pid {list} ({signal})"),
        _ => format!("pids {list} ({signal})"),
    }
}

fn stop_orphaned(
    ctx: &Ctx,
    stored: Stored,
    authority: Authority,
    timeout: Duration,
) -> Result<i32> {
    let id = stored.record.id.clone();
    ctx.ui.info(format!(
        "session {id} is lost: its supervisor is gone; ending what is left of it"
    ));
    let sent = terminate(&id, authority, timeout)?;
    // `finish` forgets the run, and the socket its killed supervisor left.
    let done = finish(ctx, &stored, Exit::now(None, None), State::Stopped)?;
    let said = report(ctx, &done.record, &sent);
    // Its supervisor wrote no end line: the log gets stop's, as `logs` shows every end.
    if let Err(e) = end_log(ctx, &id, &said) {
        ctx.ui.warn(format!("{e:#}"));
    }
    Ok(0)
}

/// Append `bullpen: <said>` to the session's log, on a line of its own, if
/// it has a log.
fn end_log(ctx: &Ctx, id: &SessionId, said: &str) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let path = ctx.layout.log_path(id);
    if !path.is_file() {
        return Ok(());
    }
    let cannot = |what: &str| format!("cannot {what} the log {}", path.display());
    let mut last = [b'\n'];
    let mut read = std::fs::File::open(&path).with_context(|| cannot("read"))?;
    if read
        .seek(SeekFrom::End(0))
        .with_context(|| cannot("read"))?
        > 0
    {
        read.seek(SeekFrom::End(-1))
            .and_then(|_| read.read_exact(&mut last))
            .with_context(|| cannot("read"))?;
    }
    let gap = if last[0] == b'\n' { "" } else { "\n" };
    let mut log = crate::run::background::open_log(&path)?;
    writeln!(log, "{gap}bullpen: {said}").with_context(|| cannot("write to"))
}

/// `session a stopped by SIGHUP after 3s`, with what stop sent where the end
/// does not say it; said on stderr, and returned.
fn report(ctx: &Ctx, record: &Record, sent: &[i32]) -> String {
    let ended_by = record.exit.as_ref().and_then(|e| e.signal);
    let note = match sent.last() {
        None => " (no process was left to signal)".to_owned(),
        Some(&libc::SIGKILL) if ended_by == Some(libc::SIGKILL) => {
            " (--timeout ran out)".to_owned()
        }
        Some(&last) if ended_by == Some(last) => String::new(),
        Some(_) => format!(
            " (stop sent {})",
            sent.iter()
                .map(|&s| ending::signal_name(s))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let words = ending::of_record(record).unwrap_or_else(|| describe(record));
    let said = format!("session {} {words}{note}", record.id);
    ctx.ui.info(&said);
    said
}

/// Mark the run as asked to stop, with compare-and-swap against the record the
/// supervisor will replace when it records the end. `None`: the run ended (was
/// recorded as ended) before the mark could land, so there is nothing to stop.
fn request_stop(ctx: &Ctx, stored: Stored) -> Result<Option<Stored>> {
    let id = stored.record.id.clone();
    let key = stored.record.run_key();
    let mut current = stored;
    for _ in 0..8 {
        if key.is_none() || current.record.run_key() != key {
            return Ok(None);
        }
        if current
            .record
            .process
            .as_ref()
            .is_some_and(|p| p.stop_requested_at.is_some())
        {
            return Ok(Some(current)); // another stop asked already
        }
        let at = time::now_rfc3339();
        match store::try_update(&ctx.repo, &current, "stop requested", |r| {
            if let Some(p) = r.process.as_mut() {
                p.stop_requested_at = Some(at.clone());
            }
        }) {
            Ok(marked) => return Ok(Some(marked)),
            Err(e) if store::is_conflict(&e) => {
                current = store::load(&ctx.repo, &id)?
                    .ok_or_else(|| anyhow!("the record of session {id} was deleted"))?;
            }
            Err(e) => return Err(e.context(format!("cannot record the stop of session {id}"))),
        }
    }
    bail!("the record of session {id} kept changing while stop tried to mark it; try again")
}

/// End what `authority` allows as closing a terminal does ([`escalate`]);
/// return the signals sent once every member of the group is gone.
fn terminate(id: &SessionId, authority: Authority, timeout: Duration) -> Result<Vec<i32>> {
    let group = match authority.reach() {
        Reach::Nothing => return Ok(Vec::new()),
        Reach::Unproven(g) => {
            let left = procfs::group_members(&g);
            if left.is_empty() {
                return Ok(Vec::new());
            }
            let pids = left
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" ");
            return Err(Error::refused(format!(
                "not stopping session {id}: pids {pids} are still in its process group, but \
                 neither its command nor its supervisor lives to prove they are the session's; \
                 nothing was signalled"
            ))
            .hint(format!(
                "if they are the session's leftovers, end them yourself (`kill {pids}`), then \
                 run `git bullpen stop {id}` again"
            ))
            .into());
        }
        Reach::Group(g) | Reach::Members(g) => g,
    };
    let gone = || procfs::group_members(&group).is_empty();
    if let Some(sent) = escalate(timeout, |signal| group::signal(authority, signal), gone)? {
        return Ok(sent);
    }
    bail!(
        "processes {} of session {id} are still there {}s after SIGKILL (stuck in the kernel?); \
         run stop again later",
        procfs::group_members(&group)
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        KILL_GRACE.as_secs()
    )
}

/// SIGHUP, SIGTERM, SIGKILL in turn, as closing a terminal's window does (an
/// interactive shell ignores SIGTERM, not SIGHUP), each sent only while
/// something is left (`gone` is false) and followed by the wait
/// `plan::waits(timeout)` gives it: SIGKILL comes `timeout` after the first.
/// `send` says whether it signalled anything. The signals sent (none: nothing
/// was there), or `None` when something is still there after SIGKILL.
pub(crate) fn escalate(
    timeout: Duration,
    mut send: impl FnMut(i32) -> Result<bool>,
    gone: impl Fn() -> bool,
) -> Result<Option<Vec<i32>>> {
    let mut sent = Vec::new();
    let steps = [libc::SIGHUP, libc::SIGTERM, libc::SIGKILL];
    for (signal, wait) in steps.into_iter().zip(plan::waits(timeout, KILL_GRACE)) {
        if gone() {
            return Ok(Some(sent));
        }
        if send(signal)? {
            sent.push(signal);
        } else if sent.is_empty() {
            return Ok(Some(sent));
        }
        if wait_until(wait, &gone) {
            return Ok(Some(sent));
        }
    }
    Ok(None)
}

/// Poll `done` until it holds or `limit` has passed; whether it held.
pub(crate) fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Wait for the supervisor to record the end of the run `marked` describes. If
/// the supervisor is gone without recording it, record `stopped` here.
fn wait_recorded(ctx: &Ctx, marked: &Stored) -> Result<Stored> {
    let id = &marked.record.id;
    let key = marked.record.run_key();
    let supervisor = marked.record.process.clone();
    let deadline = Instant::now() + RECORD_GRACE;
    loop {
        let current = store::load(&ctx.repo, id)?
            .ok_or_else(|| anyhow!("the record of session {id} was deleted"))?;
        if current.record.run_key() != key {
            return Ok(current);
        }
        if !supervisor.as_ref().is_some_and(procfs::is_session_alive) {
            // It records the end before it exits: read once more, so that an
            // end recorded since the read above is taken as it is.
            let current = store::load(&ctx.repo, id)?
                .ok_or_else(|| anyhow!("the record of session {id} was deleted"))?;
            if current.record.run_key() != key {
                return Ok(current);
            }
            // It died without recording: do it here (the CAS in finish makes a
            // late supervisor write and this one never overwrite each other).
            return finish(ctx, &current, Exit::now(None, None), State::Stopped)
                .with_context(|| format!("cannot record that session {id} stopped"));
        }
        if Instant::now() >= deadline {
            bail!(
                "the command of session {id} has ended, but its supervisor (pid {}) has not \
                 recorded it after {}s; `git bullpen ls {id}` shows what it recorded",
                supervisor
                    .as_ref()
                    .and_then(|p| p.supervisor_pid)
                    .unwrap_or(0),
                RECORD_GRACE.as_secs()
            );
        }
        std::thread::sleep(POLL);
    }
}
