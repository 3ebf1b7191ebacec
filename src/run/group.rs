//! Signalling a background run's process group.

use anyhow::{Context, Result};

use crate::model::process::Group;
use crate::sys::procfs;

/// Send `signal` to the whole group, if it still has a living member (checked
/// right before, so a group id freed and reused is not signalled). Returns
/// whether a signal was sent.
pub fn signal(group: &Group, signal: i32) -> Result<bool> {
    if procfs::group_members(group).is_empty() {
        return Ok(false);
    }
    let pgid = libc::pid_t::try_from(group.pgid)
        .with_context(|| format!("process group {} is out of range", group.pgid))?;
    // SAFETY: kill(2) has no memory-safety preconditions.
    let rc = unsafe { libc::kill(-pgid, signal) };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        return Ok(false); // ended in the meantime
    }
    Err(err).with_context(|| format!("cannot signal process group {}", group.pgid))
}
