//! `git bullpen stop`: end a background run: its whole process group, SIGTERM
//! first, SIGKILL after a timeout; the supervisor records `stopped`.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::context::{info, Ctx};
use crate::process::{self, Group};
use crate::runner;
use crate::session::{Exit, Record, SessionId, State};
use crate::store::{self, Stored};
use crate::time;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen stop fix-login
  git bullpen stop --timeout 30 fix-login

Sends SIGTERM to the process group of the session's command (the command and every \
child it started that stayed in its group), waits up to --timeout seconds for all of \
them to end, then sends SIGKILL. It then waits for the session's supervisor to record \
the end: the state becomes `stopped` (or stays `exited` if the command ended by itself \
before stop got to it). Provenance notes are written as for any other end.

A session that is not running is left alone: stop says so and exits 0, so it is safe \
in clean-up scripts. A `lost` session (its supervisor is gone) is ended by stop itself: \
whatever is left of its process group is terminated and the record says `stopped`. A \
foreground run belongs to the terminal that started it; stop refuses it and names its pid.";

/// How long, after SIGKILL, the group may take to disappear before stop gives up.
const KILL_GRACE: Duration = Duration::from_secs(10);
/// How long the supervisor may take to record the end once its command is gone.
const RECORD_GRACE: Duration = Duration::from_secs(30);
/// How often /proc and the record are looked at while waiting.
const POLL: Duration = Duration::from_millis(20);

/// End a running background session (SIGTERM, then SIGKILL after a timeout).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to stop.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: SessionId,

    /// Seconds to wait after SIGTERM before sending SIGKILL (decimals allowed).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub timeout: Duration,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1e9).contains(&v) => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!("{s:?} is not a number of seconds (e.g. 10 or 0.5)")),
    }
}

/// What is observed about the recorded run right now.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// The run's supervisor is the recorded process (background runs).
    pub supervisor_alive: bool,
    /// The run's command is the recorded process.
    pub command_alive: bool,
}

/// What stop will do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Not running: say so, change nothing.
    NotRunning,
    /// A foreground run belongs to its terminal: refuse, naming its pid.
    Foreground { pid: u32 },
    /// Mark the record, signal the group, let the supervisor record `stopped`.
    Supervised { group: Option<Group> },
    /// Nobody will record the end (lost): signal what is left of the group, if
    /// anything, and record `stopped` here.
    Orphaned { group: Option<Group> },
}

/// Pure: the plan for a record and the facts about its run.
pub fn plan(record: &Record, facts: &Facts) -> Plan {
    if record.state != State::Running {
        return Plan::NotRunning;
    }
    let Some(p) = record.process.as_ref() else {
        return Plan::Orphaned { group: None };
    };
    match (p.background, facts.supervisor_alive, facts.command_alive) {
        (false, _, true) => Plan::Foreground { pid: p.pid },
        (false, _, false) => Plan::Orphaned { group: None },
        (true, true, _) => Plan::Supervised {
            group: Group::of(p),
        },
        (true, false, _) => Plan::Orphaned {
            group: Group::of(p),
        },
    }
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    let id = &args.id;
    let stored = store::load(&ctx.repo, id)?
        .ok_or_else(|| anyhow!("no session named {id:?} (see `git bullpen ls --all`)"))?;
    let facts = match stored.record.process.as_ref() {
        Some(p) => Facts {
            supervisor_alive: p.background && process::is_session_alive(p),
            command_alive: process::is_alive(p),
        },
        None => Facts {
            supervisor_alive: false,
            command_alive: false,
        },
    };
    match plan(&stored.record, &facts) {
        Plan::NotRunning => {
            info(format!(
                "session {id} is not running ({}); nothing to stop",
                describe(&stored.record)
            ));
            Ok(0)
        }
        Plan::Foreground { pid } => bail!(
            "session {id} runs in the foreground (pid {pid}) of another terminal; end it there \
             (Ctrl-C), or with `kill {pid}`"
        ),
        Plan::Supervised { group } => stop_supervised(&ctx, stored, group, args.timeout),
        Plan::Orphaned { group } => stop_orphaned(&ctx, stored, group, args.timeout),
    }
}

/// "exited 0", "stopped", "ready", ...
fn describe(record: &Record) -> String {
    match (&record.exit, record.state) {
        (Some(e), State::Exited | State::Stopped) => {
            format!("{}, {}", record.state.as_str(), e.describe())
        }
        _ => record.state.as_str().to_owned(),
    }
}

fn stop_supervised(
    ctx: &Ctx,
    stored: Stored,
    group: Option<Group>,
    timeout: Duration,
) -> Result<i32> {
    let id = stored.record.id.clone();
    let Some(marked) = request_stop(ctx, stored)? else {
        let now = store::load(&ctx.repo, &id)?;
        let state = now.map_or("gone".to_owned(), |s| describe(&s.record));
        info(format!(
            "session {id} ended by itself before stop got to it ({state}); nothing to stop"
        ));
        return Ok(0);
    };
    let how = terminate(&id, group, timeout)?;
    let done = wait_recorded(ctx, &marked)?;
    report(&done.record, how);
    Ok(0)
}

fn stop_orphaned(
    ctx: &Ctx,
    stored: Stored,
    group: Option<Group>,
    timeout: Duration,
) -> Result<i32> {
    let id = stored.record.id.clone();
    info(format!(
        "session {id} is lost (its supervisor is gone); ending what is left of it"
    ));
    let how = terminate(&id, group, timeout)?;
    let exit = Exit {
        code: None,
        signal: None,
        at: time::now_rfc3339(),
    };
    let done = runner::finish(ctx, &stored, exit, State::Stopped)?;
    report(&done.record, how);
    Ok(0)
}

fn report(record: &Record, how: Signalled) {
    let how = match how {
        Signalled::Nothing => "no process was left to signal",
        Signalled::Term => "SIGTERM",
        Signalled::Kill => "SIGKILL after the timeout",
    };
    info(format!(
        "session {} {} ({how})",
        record.id,
        describe(record)
    ));
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

/// Which signal ended the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signalled {
    Nothing,
    Term,
    Kill,
}

/// SIGTERM the group, wait up to `timeout` for every member to end, then SIGKILL.
fn terminate(id: &SessionId, group: Option<Group>, timeout: Duration) -> Result<Signalled> {
    let Some(group) = group else {
        return Ok(Signalled::Nothing);
    };
    if !group.signal(libc::SIGTERM)? {
        return Ok(Signalled::Nothing);
    }
    if wait_until(timeout, || group.members().is_empty()) {
        return Ok(Signalled::Term);
    }
    group.signal(libc::SIGKILL)?;
    if wait_until(KILL_GRACE, || group.members().is_empty()) {
        return Ok(Signalled::Kill);
    }
    bail!(
        "processes {:?} of session {id} are still there {}s after SIGKILL (stuck in the kernel?); \
         run stop again later",
        group.members(),
        KILL_GRACE.as_secs()
    )
}

/// Poll `done` until it holds or `limit` has passed; whether it held.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
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
        if !supervisor.as_ref().is_some_and(process::is_session_alive) {
            // It died without recording: do it here (the CAS in finish makes a
            // late supervisor write and this one never overwrite each other).
            let exit = Exit {
                code: None,
                signal: None,
                at: time::now_rfc3339(),
            };
            return runner::finish(ctx, &current, exit, State::Stopped)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Process, SCHEMA};

    fn record(state: State, process: Option<Process>) -> Record {
        Record {
            schema: SCHEMA,
            id: "a".parse().unwrap(),
            branch: "bullpen/a".into(),
            worktree: "/w/a".into(),
            base: "0".repeat(40),
            command: vec!["sleep".into()],
            state,
            host: "h".into(),
            created_at: String::new(),
            updated_at: String::new(),
            run_start: None,
            process,
            exit: None,
            log: None,
            extra: Default::default(),
        }
    }

    fn proc_(background: bool) -> Process {
        Process {
            pid: 100,
            start_time: Some(5),
            boot_id: Some("b".into()),
            background,
            supervisor_pid: background.then_some(99),
            started_at: String::new(),
            supervisor_start_time: background.then_some(4),
            stop_requested_at: None,
        }
    }

    fn facts(supervisor_alive: bool, command_alive: bool) -> Facts {
        Facts {
            supervisor_alive,
            command_alive,
        }
    }

    #[test]
    fn plans() {
        let group = Some(Group {
            pgid: 100,
            session: 99,
            not_before: 5,
        });
        let bg = Some(proc_(true));
        let fg = Some(proc_(false));
        let table = [
            (
                State::Exited,
                bg.clone(),
                facts(true, true),
                Plan::NotRunning,
            ),
            (State::Ready, None, facts(false, false), Plan::NotRunning),
            (
                State::Stopped,
                bg.clone(),
                facts(false, false),
                Plan::NotRunning,
            ),
            (
                State::Running,
                bg.clone(),
                facts(true, true),
                Plan::Supervised { group },
            ),
            // The command ended, the supervisor is about to record it: still its job.
            (
                State::Running,
                bg.clone(),
                facts(true, false),
                Plan::Supervised { group },
            ),
            // Lost: the supervisor is gone, whether or not its command lingers.
            (
                State::Running,
                bg.clone(),
                facts(false, true),
                Plan::Orphaned { group },
            ),
            (
                State::Running,
                bg,
                facts(false, false),
                Plan::Orphaned { group },
            ),
            (
                State::Running,
                fg.clone(),
                facts(false, true),
                Plan::Foreground { pid: 100 },
            ),
            (
                State::Running,
                fg,
                facts(false, false),
                Plan::Orphaned { group: None },
            ),
            (
                State::Running,
                None,
                facts(false, false),
                Plan::Orphaned { group: None },
            ),
        ];
        for (state, process, f, want) in table {
            assert_eq!(
                plan(&record(state, process.clone()), &f),
                want,
                "{state:?} {process:?} {f:?}"
            );
        }
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse_secs("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_secs("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_secs("0"), Ok(Duration::ZERO));
        for bad in ["-1", "x", "inf", "NaN", ""] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_run_is_identified_by_pid_and_start_time_while_running() {
        let r = record(State::Running, Some(proc_(true)));
        assert_eq!(r.run_key(), Some((100, Some(5))));
        assert_eq!(record(State::Exited, Some(proc_(true))).run_key(), None);
    }
}
