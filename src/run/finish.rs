//! The end of a run: recording how it ended, and the provenance notes on the
//! commits it made. Shared by foreground runs, the supervisor and `stop`.

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::command::{quoted, render_command};
use crate::model::ending;
use crate::model::notes::session_own_ref;
use crate::model::{Exit, Oid, Record, SessionId, State};
use crate::sys::{procfs, socket};
use crate::trust::local::Local;

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
    let event = ending::how(likely, &exit);
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
                    ctx.ui.warn(format!(
                        "session {} was started again or ended by another bullpen before \
                         this run's end ({}) was recorded; the record keeps the newer state",
                        record.id,
                        ending::how(state, &exit)
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
        ctx.ui.warn(format!("{e:#}"));
    }
    // The run has ended: its local proof has nothing left to authorise.
    if let Some(p) = &record.process {
        forget_run(ctx, &record.id, p.pid);
    }
    Ok(done)
}

/// How the run that ended with `exit` ended, in the words of its record when
/// the record holds that end (its state: `stopped` when stop asked; its
/// duration), else from `exit` alone: `session a exited 3 after 2s`. (`exit`'s
/// time is when it was heard of, not the record's.)
pub fn describe_end(ctx: &Ctx, id: &SessionId, exit: &Exit) -> String {
    let holds = |r: &Record| {
        matches!(r.state, State::Exited | State::Stopped)
            && r.exit
                .as_ref()
                .is_some_and(|e| (e.code, e.signal) == (exit.code, exit.signal))
    };
    let words = match store::load(&ctx.repo, id) {
        Ok(Some(now)) if holds(&now.record) => ending::of_record(&now.record),
        _ => None,
    };
    let words = words.unwrap_or_else(|| ending::how(State::Exited, exit));
    format!("session {id} {words}")
}

/// Forget a run that is over (its end is recorded, or a newer run's claim
/// replaced it): its local proof has nothing left to authorise. The socket it
/// names goes with it when the supervisor that made it is gone (killed; a
/// living supervisor removes its own before it records the end), so a killed
/// run leaves nothing behind. The path comes from the local proof only.
pub fn forget_run(ctx: &Ctx, id: &SessionId, pid: u32) {
    let local = Local::of(&ctx.layout, id);
    if let Ok(Some(run)) = local.run(pid) {
        let dead = run
            .supervisor
            .as_ref()
            .is_some_and(|s| !s.is(&procfs::identity(s.pid)));
        if let (true, Some(path)) = (dead, &run.socket) {
            if let Err(e) = socket::remove_socket(std::path::Path::new(path)) {
                ctx.ui.warn(format!("{e:#}"));
            }
        }
    }
    if let Err(e) = local.remove_run(pid) {
        ctx.ui.warn(format!("{e:#}"));
    }
}

/// The notes go on the commits the run made: those its branch reaches that
/// neither its start nor any other branch, remote-tracking ref or tag reaches
/// (`session_own_ref` names the session's own). A colleague's commits merged or
/// fast-forwarded into the run are on such a ref, so they get none; a commit of
/// the run that another ref already holds (pushed under another name) gets none
/// either, the safe side, as a note once pushed can never be taken back.
fn write_notes(ctx: &Ctx, record: &Record, exit: &Exit) -> Result<()> {
    let Some(tip) = ctx.repo.ref_target(&record.id.branch_ref())? else {
        ctx.ui.warn(format!(
            "branch {} is gone; no provenance notes written",
            record.branch
        ));
        return Ok(());
    };
    let floor = match record.run_start.as_deref() {
        Some(start) => start
            .parse::<Oid>()
            .with_context(|| format!("the record's run_start {} is not a commit", quoted(start)))?,
        // No recorded start (a record of an older bullpen): the base, but only
        // one the branch grew from; a base a fetched record named may be any.
        None => match record.base.parse::<Oid>() {
            Ok(base) if ctx.repo.is_ancestor(base, tip).unwrap_or(false) => base,
            _ => {
                ctx.ui.warn(format!(
                    "no provenance notes written for session {}: its record names no run \
                     start, and its base {} is not an ancestor of {}",
                    record.id,
                    quoted(&record.base),
                    record.branch
                ));
                return Ok(());
            }
        },
    };
    let commits = ctx
        .repo
        .commits_only_on(tip, &[floor], |r| session_own_ref(&record.id, r))?;
    let text = format!(
        "bullpen-session: {}\nbullpen-command: {}\nbullpen-exit: {}\n",
        record.id,
        render_command(record.run_command()),
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
