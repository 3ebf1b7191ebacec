//! Running a session's command and recording what happened: the shared core of
//! `spawn` and `resume`.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, Result};

use crate::config;
use crate::context::{warn, Ctx};
use crate::git::Oid;
use crate::process;
use crate::session::{Exit, Process, Record, State};
use crate::store::{self, Stored};
use crate::time;

/// The environment a session's command gets.
pub fn session_env(record: &Record) -> Vec<(&'static str, OsString)> {
    vec![
        (config::ENV_SESSION, record.id.as_str().into()),
        (config::ENV_BRANCH, record.branch.clone().into()),
        (config::ENV_WORKTREE, record.worktree.clone().into()),
    ]
}

/// The command to run when none is given: `bullpen.command` (run with `sh -c`),
/// else `$SHELL`, else `/bin/sh`.
pub fn default_command(ctx: &Ctx) -> Vec<String> {
    if let Some(c) = ctx
        .repo
        .config_string(config::COMMAND)
        .filter(|c| !c.trim().is_empty())
    {
        return vec!["/bin/sh".into(), "-c".into(), c];
    }
    match std::env::var("SHELL") {
        Ok(s) if !s.is_empty() => vec![s],
        _ => vec!["/bin/sh".into()],
    }
}

/// Shell-like rendering of an argv for messages and notes.
pub fn render_command(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tip of the session branch now, if it exists.
/// The branch is derived from the validated id, never read from the record.
pub fn branch_tip(ctx: &Ctx, record: &Record) -> Result<Option<Oid>> {
    ctx.repo.ref_target(&record.id.branch_ref())
}

/// Run `argv` in the session's worktree in the foreground, record running/exited,
/// write provenance notes, and return the shell-style exit status.
pub fn run_foreground(ctx: &Ctx, stored: Stored, argv: &[String], event: &str) -> Result<i32> {
    let id = stored.record.id.clone();
    let worktree = Path::new(&stored.record.worktree).to_path_buf();
    let run_start = branch_tip(ctx, &stored.record)?;
    let spec = process::Spec {
        argv,
        cwd: &worktree,
        env: session_env(&stored.record),
    };
    // The command is held between fork and exec while the record claims the run
    // with one compare-and-swap against the version that was checked: of two
    // concurrent starts only one runs, and the record names the command's pid
    // before it runs.
    let gated = process::start_gated(&spec, process::Attach::Terminal, |pid| {
        store::try_update(&ctx.repo, &stored, event, |r| {
            r.state = State::Running;
            r.command = argv.to_vec();
            r.process = Some(foreground_process(pid));
            r.exit = None;
            r.run_start = run_start.map(|o| o.to_string());
        })
        .map_err(|e| {
            if store::is_conflict(&e) {
                e.context(format!(
                    "session {id} changed while starting (another bullpen started or stopped \
                     it); nothing was run; try again"
                ))
            } else {
                e.context(format!("cannot record that session {id} is running"))
            }
        })
    })?;
    let _interrupts = gated.interrupts;
    let (running, mut child) = match (gated.admitted, gated.child) {
        (Some(running), Ok(child)) => (running, child),
        (Some(running), Err(e)) => {
            // Claimed, but the command could not be executed: like a shell, say
            // why and exit 127 (recorded as such).
            eprintln!("error: {e:#}");
            let exit = Exit {
                code: Some(127),
                signal: None,
                at: time::now_rfc3339(),
            };
            finish(ctx, &running, exit, State::Exited)?;
            return Ok(127);
        }
        (None, Err(e)) => return Err(e),
        (None, Ok(mut child)) => {
            // Not admitted, yet `spawn` says it runs: only when the child was killed
            // (SIGKILL) before it reached the gate. Never leave a process unrecorded.
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!(
                "the command of session {id} started without being recorded; it was killed"
            )
        }
    };
    let status = child
        .wait()
        .context("cannot wait for the session's command")?;
    let (code, signal) = process::split_status(status);
    let exit = Exit {
        code,
        signal,
        at: time::now_rfc3339(),
    };
    finish(ctx, &running, exit.clone(), State::Exited)?;
    Ok(exit.shell_status())
}

/// The record of a foreground run: the command, and this bullpen process as its
/// supervisor, so that the run counts as alive until its end is recorded (after
/// the command exits, bullpen still writes notes and the exit).
fn foreground_process(pid: u32) -> Process {
    let ident = process::identity(pid);
    let me = std::process::id();
    Process {
        pid,
        start_time: ident.start_time,
        boot_id: ident.boot_id,
        background: false,
        supervisor_pid: Some(me),
        started_at: time::now_rfc3339(),
        supervisor_start_time: process::start_time(me),
        stop_requested_at: None,
    }
}

/// Record the end of a run and write the provenance notes for the commits it made.
pub fn finish(ctx: &Ctx, running: &Stored, exit: Exit, state: State) -> Result<Stored> {
    let record = &running.record;
    let notes_result = write_notes(ctx, record, &exit);
    // The event names the state the record most likely ends in; the closure
    // decides for real on the record it replaces (see `final_state`).
    let likely = match store::load(&ctx.repo, &record.id) {
        Ok(Some(now)) => final_state(state, &now.record),
        _ => state,
    };
    let event = format!("{} ({})", likely.as_str(), exit.describe());
    // A lost race re-reads the record; the end is applied only while the record
    // still describes this run (a newer run's record is never overwritten).
    let mut current = running.clone();
    let mut done = None;
    for _ in 0..8 {
        match store::try_update(&ctx.repo, &current, &event, |r| {
            r.state = final_state(state, r);
            r.exit = Some(exit.clone());
        }) {
            Ok(d) => {
                done = Some(d);
                break;
            }
            Err(e) if store::is_conflict(&e) => {
                let fresh = store::load(&ctx.repo, &record.id)?
                    .with_context(|| format!("the record of session {} was deleted", record.id))?;
                if !same_run(record, &fresh.record) {
                    warn(format!(
                        "session {} was started again or ended by another bullpen before \
                         this run's end ({}) was recorded; the record keeps the newer state",
                        record.id,
                        exit.describe()
                    ));
                    done = Some(fresh);
                    break;
                }
                current = fresh;
            }
            Err(e) => return Err(e),
        }
    }
    let done = done.with_context(|| {
        format!(
            "could not record the end of session {}: its record kept changing",
            record.id
        )
    })?;
    if let Err(e) = notes_result {
        warn(format!("{e:#}"));
    }
    Ok(done)
}

fn write_notes(ctx: &Ctx, record: &Record, exit: &Exit) -> Result<()> {
    let Some(tip) = branch_tip(ctx, record)? else {
        warn(format!(
            "branch {} is gone; no provenance notes written",
            record.branch
        ));
        return Ok(());
    };
    let mut hidden = Vec::new();
    if let Some(start) = record.run_start.as_deref() {
        hidden.push(
            start
                .parse::<Oid>()
                .with_context(|| format!("the record's run_start {start:?} is not a commit"))?,
        );
    } else if let Ok(base) = record.base.parse::<Oid>() {
        hidden.push(base);
    }
    let commits = ctx.repo.commits_between(tip, &hidden)?;
    let text = format!(
        "bullpen-session: {}\nbullpen-command: {}\nbullpen-exit: {}\n",
        record.id,
        render_command(&record.command),
        exit.describe()
    );
    store::add_provenance(&ctx.repo, &commits, &text, &record.id)
}

/// Pure: does `current` still describe the run `running` started (same pid and
/// start time, still running)?
pub fn same_run(running: &Record, current: &Record) -> bool {
    running.run_key().is_some() && running.run_key() == current.run_key()
}

/// Pure: the state to record when a run ends as `ended`, given the record being
/// replaced. `stop` marks the run (`process.stop_requested_at`) with a
/// compare-and-swap *before* it signals anything, and the end is written with a
/// compare-and-swap re-applied to a fresh read: whichever lands first, a run that
/// stop asked to end is `stopped`, and a run that ended before stop's mark landed
/// stays `exited` (stop then finds it not running and changes nothing).
pub fn final_state(ended: State, current: &Record) -> State {
    let stop_requested = current
        .process
        .as_ref()
        .is_some_and(|p| p.stop_requested_at.is_some());
    match ended {
        State::Exited if stop_requested => State::Stopped,
        s => s,
    }
}

/// Run `argv` in the session's worktree in the background: a detached supervisor
/// runs it, records it and its end. Returns once the record shows it running
/// (so `ls` right after says `running`); prints the session id on stdout.
pub fn run_background(ctx: &Ctx, stored: Stored, argv: &[String], event: &str) -> Result<i32> {
    use std::io::Write;
    ensure_not_running(ctx, &stored)?;
    let id = stored.record.id.clone();
    let pid = crate::supervise::dispatch(ctx, &stored, argv, event)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{id}")
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    crate::context::info(format!(
        "running in the background (pid {pid}); output: git bullpen logs {id}; end it: git bullpen stop {id}"
    ));
    Ok(0)
}

/// One live process per session: fail, naming the pid, when a process of the
/// session is alive: its command, its supervisor, or (background) anything left
/// in the command's process group. Reads the record afresh (`stored` may be stale).
pub fn ensure_not_running(ctx: &Ctx, stored: &Stored) -> Result<()> {
    let fresh = store::load(&ctx.repo, &stored.record.id)?;
    let record = fresh.as_ref().map_or(&stored.record, |s| &s.record);
    if record.extra.contains_key(crate::session::GC_TEARDOWN_KEY) {
        anyhow::bail!(
            "gc is removing the worktree of session {} (or was interrupted doing so); \
             nothing was run\nhint: run `git bullpen gc` to finish it",
            record.id
        );
    }
    if let Some(live) = live_process(record) {
        let id = &record.id;
        let hint = if record.process.as_ref().is_some_and(|p| p.background) {
            format!("wait for it, or end it with `git bullpen stop {id}`")
        } else {
            format!("wait for it, or end it (`kill {live}`)")
        };
        anyhow::bail!(
            "session {id} is already running (pid {live}); only one process per session\n\
             hint: {hint}"
        );
    }
    Ok(())
}

/// A living process of the session's recorded run, if any (see `ensure_not_running`).
pub fn live_process(record: &Record) -> Option<u32> {
    if record.state != State::Running {
        return None;
    }
    let p = record.process.as_ref()?;
    if process::is_alive(p) {
        return Some(p.pid);
    }
    if process::is_session_alive(p) {
        return p.supervisor_pid.or(Some(p.pid));
    }
    process::Group::of(p).and_then(|g| g.members().first().copied())
}

/// Whether git config `bullpen.command` names a command (else the default is an
/// interactive shell, which makes no sense without a terminal).
pub fn has_configured_command(ctx: &Ctx) -> bool {
    ctx.repo
        .config_string(config::COMMAND)
        .is_some_and(|c| !c.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(state: State, pid: u32, start: u64) -> Record {
        let mut json = serde_json::json!({
            "schema": 1, "id": "x", "branch": "bullpen/x", "worktree": "/w/x",
            "base": "0", "command": [], "state": "running", "host": "h",
            "created_at": "t", "updated_at": "t",
            "process": {"pid": pid, "start_time": start, "started_at": "t"},
        });
        json["state"] = state.as_str().into();
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn an_end_applies_only_to_the_run_it_belongs_to() {
        let running = record(State::Running, 10, 5);
        assert!(same_run(&running, &record(State::Running, 10, 5)));
        // Another run (other pid, or the same pid reused later) is never overwritten.
        assert!(!same_run(&running, &record(State::Running, 11, 5)));
        assert!(!same_run(&running, &record(State::Running, 10, 6)));
        // Already ended (e.g. recorded stopped by `stop`): not this run any more.
        assert!(!same_run(&running, &record(State::Stopped, 10, 5)));
        assert!(!same_run(
            &record(State::Exited, 10, 5),
            &record(State::Exited, 10, 5)
        ));
    }
}
