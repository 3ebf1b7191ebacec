//! Ending what a run left behind: the processes its lingering supervisor (a
//! child subreaper) still waits for after the command ended, as closing a
//! terminal does: SIGHUP, then SIGTERM, then SIGKILL.

use std::time::Duration;

use anyhow::{bail, Result};

use super::{escalate, KILL_GRACE};
use crate::context::Ctx;
use crate::model::{ending, SessionId};
use crate::run::group::signal_leftovers;
use crate::sys::procfs;
use crate::trust::decide::leftover_authority;
use crate::trust::local::Local;

/// End what session `id`'s run left behind, if this machine proves there is
/// something (`leftovers.json`, its supervisor alive as it recorded itself).
/// Returns the pids signalled and the last signal's name; `None`: nothing to end.
pub fn end_leftovers(
    ctx: &Ctx,
    id: &SessionId,
    timeout: Duration,
) -> Result<Option<(Vec<u32>, String)>> {
    let Some(proof) = Local::of(&ctx.layout, id).leftovers()? else {
        return Ok(None);
    };
    let now = procfs::identity(proof.supervisor.pid);
    let Some(authority) = leftover_authority(&proof, &now) else {
        return Ok(None);
    };
    let gone = || procfs::descendants(authority.supervisor()).is_empty();
    let mut ended = Vec::new();
    let send = |signal| {
        let pids = signal_leftovers(&authority, signal)?;
        for &pid in &pids {
            if !ended.contains(&pid) {
                ended.push(pid);
            }
        }
        Ok(!pids.is_empty())
    };
    if let Some(sent) = escalate(timeout, send, gone)? {
        return Ok(sent.last().map(|&last| (ended, ending::signal_name(last))));
    }
    bail!(
        "processes {} left behind by session {id} are still there {}s after SIGKILL; run stop \
         again later",
        procfs::descendants(authority.supervisor())
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        KILL_GRACE.as_secs()
    )
}
