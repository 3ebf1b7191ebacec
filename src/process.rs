//! Processes: running a session's command, and telling whether a recorded process
//! is still the same process (pid reuse must never make a dead session look alive).

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result};

use crate::session::Process;

/// The identity of a live process: start time (clock ticks since boot) and boot id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub start_time: Option<u64>,
    pub boot_id: Option<String>,
}

/// Reads `/proc/<pid>/stat` field 22 (starttime). `None` if the process is gone
/// or `/proc` is unavailable.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parens: skip past the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')' come fields 3.. ; starttime is field 22, i.e. index 19 here.
    rest.split_whitespace().nth(19)?.parse().ok()
}

pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_owned())
}

pub fn identity(pid: u32) -> Identity {
    Identity {
        start_time: start_time(pid),
        boot_id: boot_id(),
    }
}

/// Pure: is the recorded process the one observed now? A recorded process without
/// a start time or boot id can't be proven alive, so it is not.
pub fn same_process(recorded: &Process, now: &Identity) -> bool {
    match (
        recorded.start_time,
        now.start_time,
        &recorded.boot_id,
        &now.boot_id,
    ) {
        (Some(a), Some(b), Some(x), Some(y)) => a == b && x == y,
        _ => false,
    }
}

/// Is the recorded process (or its supervisor, for background sessions) alive?
pub fn is_alive(recorded: &Process) -> bool {
    same_process(recorded, &identity(recorded.pid))
}

/// How the session's command is run.
pub struct Spec<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(&'static str, OsString)>,
}

/// A running foreground child.
pub struct Child {
    child: std::process::Child,
    _guard: IgnoreInterrupts,
}

impl Child {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn wait(mut self) -> Result<ExitStatus> {
        self.child
            .wait()
            .context("cannot wait for the session's command")
    }
}

/// While a foreground command runs, Ctrl-C and Ctrl-\ go to it (same terminal
/// process group) and bullpen ignores them so that it can record the outcome.
struct IgnoreInterrupts {
    old_int: libc::sighandler_t,
    old_quit: libc::sighandler_t,
}

impl IgnoreInterrupts {
    fn new() -> Self {
        // SAFETY: setting a signal disposition to SIG_IGN is async-signal-safe and
        // has no memory-safety preconditions.
        unsafe {
            IgnoreInterrupts {
                old_int: libc::signal(libc::SIGINT, libc::SIG_IGN),
                old_quit: libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            }
        }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        // SAFETY: restores the dispositions saved in `new`.
        unsafe {
            libc::signal(libc::SIGINT, self.old_int);
            libc::signal(libc::SIGQUIT, self.old_quit);
        }
    }
}

/// Start the command in the foreground (terminal inherited).
pub fn start_foreground(spec: &Spec) -> Result<Child> {
    let (program, args) = spec
        .argv
        .split_first()
        .context("the session's command is empty")?;
    let guard = IgnoreInterrupts::new();
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(spec.cwd);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    // SAFETY: only async-signal-safe calls (signal(2)) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot run {program:?} in {}", spec.cwd.display()))?;
    Ok(Child {
        child,
        _guard: guard,
    })
}

/// (code, signal) of an exit status.
pub fn split_status(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    (status.code(), status.signal())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(start: Option<u64>, boot: Option<&str>) -> Process {
        Process {
            pid: 1,
            start_time: start,
            boot_id: boot.map(str::to_owned),
            background: false,
            supervisor_pid: None,
            started_at: String::new(),
        }
    }

    #[test]
    fn same_process_needs_matching_start_time_and_boot() {
        let now = Identity {
            start_time: Some(10),
            boot_id: Some("b".into()),
        };
        assert!(same_process(&rec(Some(10), Some("b")), &now));
        assert!(!same_process(&rec(Some(11), Some("b")), &now), "pid reused");
        assert!(
            !same_process(&rec(Some(10), Some("other")), &now),
            "rebooted"
        );
        assert!(!same_process(&rec(None, Some("b")), &now));
        let gone = Identity {
            start_time: None,
            boot_id: Some("b".into()),
        };
        assert!(!same_process(&rec(Some(10), Some("b")), &gone));
    }

    #[test]
    fn reads_own_start_time() {
        assert!(start_time(std::process::id()).is_some());
        assert!(boot_id().is_some());
    }
}
