//! Signalling a background run's process group: only what the trust model's
//! [`Authority`] allows (`trust::decide::signal_authority`).

use anyhow::{Context, Result};

use crate::sys::procfs;
use crate::trust::decide::{Authority, LeftoverAuthority, Reach};

/// Send `signal` as `authority` allows: the whole group while its leader lives
/// exactly as started, else each process still in the group and in the
/// supervisor's session, checked right before. Returns whether anything was
/// signalled.
pub fn signal(authority: Authority, signal: i32) -> Result<bool> {
    match authority.reach() {
        Reach::Nothing | Reach::Unproven(_) => Ok(false),
        Reach::Group(group) => {
            if procfs::group_members(&group).is_empty() {
                return Ok(false);
            }
            let pgid = libc::pid_t::try_from(group.pgid)
                .with_context(|| format!("process group {} is out of range", group.pgid))?;
            kill(-pgid, signal).with_context(|| format!("cannot signal process group {pgid}"))
        }
        Reach::Members(group) => {
            let mut sent = false;
            for pid in procfs::group_members(&group) {
                let pid = libc::pid_t::try_from(pid)
                    .with_context(|| format!("pid {pid} is out of range"))?;
                sent |= kill(pid, signal).with_context(|| format!("cannot signal pid {pid}"))?;
            }
            Ok(sent)
        }
    }
}

/// Send `signal` to each process the run left behind, listed again right
/// now: what descends from its supervisor (`authority`). Returns the pids
/// signalled.
pub fn signal_leftovers(authority: &LeftoverAuthority, signal: i32) -> Result<Vec<u32>> {
    let mut sent = Vec::new();
    for pid in procfs::descendants(authority.supervisor()) {
        let target =
            libc::pid_t::try_from(pid).with_context(|| format!("pid {pid} is out of range"))?;
        if kill(target, signal).with_context(|| format!("cannot signal pid {pid}"))? {
            sent.push(pid);
        }
    }
    Ok(sent)
}

/// kill(2) of a pid, or of a process group when `target` is negative;
/// `Ok(false)` when the target is gone already.
fn kill(target: libc::pid_t, signal: i32) -> std::io::Result<bool> {
    use rustix::process::{kill_process, kill_process_group, Pid, Signal};
    let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
    let sig = Signal::from_named_raw(signal).ok_or_else(invalid)?;
    let pid = target
        .checked_abs()
        .and_then(Pid::from_raw)
        .ok_or_else(invalid)?;
    let sent = match target < 0 {
        true => kill_process_group(pid, sig),
        false => kill_process(pid, sig),
    };
    match sent {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::SRCH) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
