//! One live process per session: what of a session's recorded run still lives.

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::id::GC_TEARDOWN_KEY;
use crate::model::process::Group;
use crate::model::{Error, Record, State};
use crate::sys::procfs;
use crate::trust::local::Local;

/// Fail, naming the pid, when a process of the session is alive: its command,
/// its supervisor, or (background) anything left in the command's process
/// group. Reads the record afresh (`stored` may be stale).
pub fn ensure_not_running(ctx: &Ctx, stored: &Stored) -> Result<()> {
    let fresh = store::load(&ctx.repo, &stored.record.id)?;
    let record = fresh.as_ref().map_or(&stored.record, |s| &s.record);
    if record.extra.contains_key(GC_TEARDOWN_KEY) {
        return Err(Error::refused(format!(
            "gc is removing the worktree of session {} (or was interrupted doing so); \
             nothing was run",
            record.id
        ))
        .hint("run `git bullpen gc` to finish it")
        .into());
    }
    if let Some(live) = live_process(record) {
        let id = &record.id;
        let hint = if record.process.as_ref().is_some_and(|p| p.terminal) {
            format!(
                "attach to it: git bullpen attach {id}; wait for it: git bullpen wait {id}; end \
                 it: git bullpen stop {id}"
            )
        } else if record.process.as_ref().is_some_and(|p| p.background) {
            format!("wait for it, or end it with `git bullpen stop {id}`")
        } else {
            format!("wait for it, or end it (`kill {live}`)")
        };
        return Err(Error::refused(format!(
            "session {id} is already running (pid {live}); only one process per session"
        ))
        .hint(hint)
        .into());
    }
    Ok(())
}

/// The spawn still creating a `provisioning` session, if it lives (the record's
/// word, or this machine's: either keeps the others away, which is safe).
pub fn live_spawner(ctx: &Ctx, record: &Record) -> Option<u32> {
    if record.state != State::Provisioning {
        return None;
    }
    let local = Local::of(&ctx.layout, &record.id)
        .created()
        .ok()
        .flatten()
        .map(|c| c.spawner);
    record
        .spawner
        .iter()
        .chain(local.iter())
        .find(|s| s.is(&procfs::identity(s.pid)))
        .map(|s| s.pid)
}

/// A `provisioning` session is its spawner's: refuse to act on it (saying why
/// and what to do), whether the spawn still runs or was interrupted.
pub fn ensure_provisioned(ctx: &Ctx, record: &Record) -> Result<()> {
    if record.state != State::Provisioning {
        return Ok(());
    }
    let id = &record.id;
    Err(match live_spawner(ctx, record) {
        Some(pid) => Error::refused(format!(
            "session {id} is still being created (by `git bullpen spawn`, pid {pid})"
        ))
        .hint("wait for the spawn to finish, then try again"),
        None => Error::refused(format!(
            "session {id} was never finished: the spawn that created it was interrupted"
        ))
        .hint("`git bullpen gc` cleans it up (it keeps anything that holds work)"),
    }
    .into())
}

/// A living process of the session's recorded run, if any (see `ensure_not_running`).
pub fn live_process(record: &Record) -> Option<u32> {
    if record.state != State::Running {
        return None;
    }
    let p = record.process.as_ref()?;
    // Started before the last reboot: nothing of that run lives, whatever
    // processes now hold its ids.
    if p.boot_id.is_some() && p.boot_id != procfs::boot_id() {
        return None;
    }
    if procfs::is_alive(p) {
        return Some(p.pid);
    }
    if procfs::is_session_alive(p) {
        return p.supervisor_pid.or(Some(p.pid));
    }
    Group::of(p).and_then(|g| procfs::group_members(&g).first().copied())
}
