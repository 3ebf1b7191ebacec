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
/// (a zombie is gone: it has ended, only its parent has not collected it; where
/// nobody reaps orphans it would otherwise look alive forever) or `/proc` is
/// unavailable.
pub fn start_time(pid: u32) -> Option<u64> {
    stat(pid).filter(|s| !s.is_dead()).map(|s| s.start_time)
}

/// This boot's id, read once per process (`ls` and `gc` ask for every running
/// session).
pub fn boot_id() -> Option<String> {
    static BOOT_ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_owned())
        })
        .clone()
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

/// While a foreground command runs, Ctrl-C and Ctrl-\ go to it (same terminal
/// process group) and bullpen ignores them so that it can record the outcome.
pub struct IgnoreInterrupts {
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

/// How a gated command is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Foreground: the terminal's process group and stdin; bullpen ignores
    /// SIGINT/SIGQUIT while it runs so that Ctrl-C reaches only the command and
    /// bullpen lives to record the outcome.
    Terminal,
    /// Background: its own process group (so `stop` can end all of it), stdin
    /// from /dev/null.
    OwnGroup,
}

/// (code, signal) of an exit status.
pub fn split_status(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    (status.code(), status.signal())
}

// ----- background sessions: liveness, detaching, gated start, process groups -----

/// Pure: is a session's recorded run alive, given what `/proc` shows now for its
/// command (`child_now`) and its supervisor (`supervisor_now`)? A background run
/// is alive exactly while its supervisor is: the supervisor is what records the
/// outcome, so a run whose supervisor is gone is lost even if its command lingers.
/// A record from before supervisors recorded their start time falls back to the
/// command. A foreground run is alive while its command is.
pub fn session_alive(
    recorded: &Process,
    child_now: &Identity,
    supervisor_now: Option<&Identity>,
) -> bool {
    match (recorded.supervisor_start_time, supervisor_now) {
        (Some(start), Some(now)) => same_process(
            &Process {
                start_time: Some(start),
                ..recorded.clone()
            },
            now,
        ),
        (Some(_), None) => false,
        _ => same_process(recorded, child_now),
    }
}

/// [`session_alive`] with the facts read from `/proc`.
pub fn is_session_alive(recorded: &Process) -> bool {
    let supervisor = recorded.supervisor_pid.map(identity);
    session_alive(recorded, &identity(recorded.pid), supervisor.as_ref())
}

/// A process as `/proc/<pid>/stat` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    pub pgrp: u32,
    pub session: u32,
    pub start_time: u64,
}

impl Stat {
    /// A zombie has ended; only its parent has not collected it yet.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Pure: parse `/proc/<pid>/stat`. The command name (field 2) may contain spaces
/// and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(pid: u32, text: &str) -> Option<Stat> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state), f[2] field 5 (pgrp), f[3] field 6 (session),
    // f[19] field 22 (starttime).
    Some(Stat {
        pid,
        state: f.first()?.chars().next()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        start_time: f.get(19)?.parse().ok()?,
    })
}

pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Every process visible in `/proc` right now.
pub fn all_processes() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .collect()
}

/// The process group of a background run, identified so that a reused pid can
/// never be mistaken for it: members have the recorded group id (the command's
/// pid), live in the supervisor's session (the supervisor called `setsid`, so
/// the session id is its pid), and started no earlier than the command did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub pgid: u32,
    pub session: u32,
    pub not_before: u64,
}

impl Group {
    /// The group of a recorded background run, if the record says enough.
    pub fn of(recorded: &Process) -> Option<Group> {
        match (
            recorded.background,
            recorded.supervisor_pid,
            recorded.start_time,
        ) {
            (true, Some(session), Some(not_before)) => Some(Group {
                pgid: recorded.pid,
                session,
                not_before,
            }),
            _ => None,
        }
    }

    /// Pure: is `p` a living member?
    pub fn has_member(&self, p: &Stat) -> bool {
        p.pgrp == self.pgid
            && p.session == self.session
            && p.start_time >= self.not_before
            && !p.is_dead()
    }

    /// The living members now (zombies do not count: they have ended).
    pub fn members(&self) -> Vec<u32> {
        all_processes()
            .iter()
            .filter(|p| self.has_member(p))
            .map(|p| p.pid)
            .collect()
    }

    /// Send `signal` to the whole group, if it still has a living member (checked
    /// right before, so a group id freed and reused is not signalled). Returns
    /// whether a signal was sent.
    pub fn signal(&self, signal: i32) -> Result<bool> {
        if self.members().is_empty() {
            return Ok(false);
        }
        let pgid = libc::pid_t::try_from(self.pgid)
            .with_context(|| format!("process group {} is out of range", self.pgid))?;
        // SAFETY: kill(2) has no memory-safety preconditions.
        let rc = unsafe { libc::kill(-pgid, signal) };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ESRCH) {
            return Ok(false); // ended in the meantime
        }
        Err(err).with_context(|| format!("cannot signal process group {}", self.pgid))
    }
}

/// A pipe whose two ends are closed on exec (`O_CLOEXEC`): (read, write).
pub fn pipe() -> Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("cannot create a pipe");
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    unsafe {
        Ok((
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        ))
    }
}

/// Start `program args` detached from the caller: a new session (`setsid`: no
/// controlling terminal, its own process group, so a closing terminal or a
/// Ctrl-C in it never reaches it), stdin from /dev/null, stdout and stderr
/// appended to `log`. `keep_fd` stays open across exec (everything else bullpen
/// opens is close-on-exec). Returns the pid; the process is not waited for.
pub fn spawn_detached(
    program: &Path,
    args: &[OsString],
    cwd: &Path,
    log: &std::fs::File,
    keep_fd: std::os::fd::RawFd,
) -> Result<u32> {
    let out = log.try_clone().context("cannot duplicate the log file")?;
    let err = log.try_clone().context("cannot duplicate the log file")?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: only async-signal-safe calls (setsid, fcntl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::fcntl(keep_fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    // Not waited for: it outlives us and is reparented when we exit.
    Ok(child.id())
}

/// The outcome of [`start_gated`].
pub struct Gated<T> {
    /// What `admit` returned when it was called and succeeded.
    pub admitted: Option<T>,
    /// The running command, or why it is not running (the error of `admit` when
    /// `admit` refused).
    pub child: Result<std::process::Child>,
    /// Held until the command has been waited for ([`Attach::Terminal`]).
    pub interrupts: Option<IgnoreInterrupts>,
}

/// Start the command (attached as `attach` says, output inherited), but hold it
/// between fork and exec until `admit(pid)` says yes:
/// the record can name the command's pid and start time *before* the command
/// has run a single instruction of its own, and a refused start runs nothing.
///
/// How: the forked child writes its pid to one pipe and blocks reading another
/// (all async-signal-safe). `Command::spawn` does not return until the child has
/// exec'd, so it runs on a helper thread while this thread reads the pid, calls
/// `admit`, and then either sends the go byte or closes the pipe (the child then
/// fails with ECANCELED and never execs).
pub fn start_gated<T>(
    spec: &Spec,
    attach: Attach,
    admit: impl FnOnce(u32) -> Result<T>,
) -> Result<Gated<T>> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    let (program, args) = spec
        .argv
        .split_first()
        .context("the session's command is empty")?;
    let (pid_r, pid_w) = pipe()?;
    let (go_r, go_w) = pipe()?;
    let (pid_r_fd, pid_w_fd, go_r_fd, go_w_fd) = (
        pid_r.as_raw_fd(),
        pid_w.as_raw_fd(),
        go_r.as_raw_fd(),
        go_w.as_raw_fd(),
    );
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(spec.cwd);
    let own_group = attach == Attach::OwnGroup;
    if own_group {
        cmd.stdin(std::process::Stdio::null());
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let interrupts = (attach == Attach::Terminal).then(IgnoreInterrupts::new);
    // SAFETY: only async-signal-safe calls (setpgid, signal, close, getpid, write,
    // read) between fork and exec; the closure captures plain integers.
    unsafe {
        cmd.pre_exec(move || {
            if own_group && libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(pid_r_fd);
            libc::close(go_w_fd);
            let pid = (libc::getpid() as u32).to_ne_bytes();
            let n = libc::write(pid_w_fd, pid.as_ptr().cast(), pid.len());
            libc::close(pid_w_fd);
            if n != pid.len() as isize {
                return Err(std::io::Error::last_os_error());
            }
            let mut go = 0u8;
            let n = loop {
                let n = libc::read(go_r_fd, (&mut go as *mut u8).cast(), 1);
                if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break n;
            };
            libc::close(go_r_fd);
            if n == 1 && go == b'g' {
                // Whatever the dispatcher inherited, the command starts with the
                // default reaction to the signals `stop` and terminals send. Only
                // now: while held at the gate it keeps bullpen's dispositions (a
                // foreground bullpen ignores Ctrl-C), so a Ctrl-C during the claim
                // cannot kill a command whose run is being recorded.
                for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            } else {
                Err(std::io::Error::from_raw_os_error(libc::ECANCELED))
            }
        });
    }
    let gated = std::thread::scope(|scope| {
        // The helper thread owns the child's ends of both pipes and closes them
        // once the fork is done, so a child that dies early shows up as EOF here.
        let spawner = scope.spawn(move || {
            let child = cmd.spawn();
            drop(pid_w);
            drop(go_r);
            child
        });
        let joined = |s: std::thread::ScopedJoinHandle<
            '_,
            std::io::Result<std::process::Child>,
        >| match s.join() {
            Ok(r) => r.with_context(|| format!("cannot run {program:?} in {}", spec.cwd.display())),
            Err(_) => Err(anyhow::anyhow!("the thread starting {program:?} panicked")),
        };
        let mut buf = [0u8; 4];
        let mut pid_pipe = std::fs::File::from(pid_r);
        if pid_pipe.read_exact(&mut buf).is_err() {
            // The child ended before reaching the gate (e.g. no such directory).
            drop(go_w);
            return Gated {
                admitted: None,
                child: joined(spawner),
                interrupts,
            };
        }
        let pid = u32::from_ne_bytes(buf);
        match admit(pid) {
            Ok(t) => {
                let mut go = std::fs::File::from(go_w);
                let sent = go.write_all(b"g");
                drop(go);
                let child = sent
                    .context("cannot release the command")
                    .and_then(|()| joined(spawner));
                Gated {
                    admitted: Some(t),
                    child,
                    interrupts,
                }
            }
            Err(e) => {
                drop(go_w);
                let _ = joined(spawner);
                Gated {
                    admitted: None,
                    child: Err(e),
                    interrupts,
                }
            }
        }
    });
    Ok(gated)
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
            supervisor_start_time: None,
            stop_requested_at: None,
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
    fn group_membership_resists_pid_reuse() {
        let g = Group {
            pgid: 100,
            session: 99,
            not_before: 50,
        };
        let p = |pgrp, session, start_time, state| Stat {
            pid: 7,
            state,
            pgrp,
            session,
            start_time,
        };
        assert!(g.has_member(&p(100, 99, 50, 'S')));
        assert!(g.has_member(&p(100, 99, 80, 'R')), "a child started later");
        assert!(
            !g.has_member(&p(100, 99, 49, 'S')),
            "older than the run: reused ids"
        );
        assert!(!g.has_member(&p(100, 5, 80, 'S')), "another session");
        assert!(!g.has_member(&p(101, 99, 80, 'S')), "another group");
        assert!(!g.has_member(&p(100, 99, 80, 'Z')), "a zombie has ended");
    }

    #[test]
    fn parses_stat_with_awkward_names() {
        let line = "42 (a) b (c) S 1 40 39 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0";
        let s = parse_stat(42, line).unwrap();
        assert_eq!(
            (s.state, s.pgrp, s.session, s.start_time),
            ('S', 40, 39, 777)
        );
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn background_liveness_follows_the_supervisor() {
        let mut bg = rec(Some(10), Some("b"));
        bg.background = true;
        bg.supervisor_pid = Some(2);
        bg.supervisor_start_time = Some(9);
        let id = |start| Identity {
            start_time: start,
            boot_id: Some("b".into()),
        };
        assert!(session_alive(&bg, &id(Some(10)), Some(&id(Some(9)))));
        assert!(
            session_alive(&bg, &id(None), Some(&id(Some(9)))),
            "command ended, end not recorded yet"
        );
        assert!(
            !session_alive(&bg, &id(Some(10)), Some(&id(None))),
            "supervisor gone: lost"
        );
        assert!(
            !session_alive(&bg, &id(Some(10)), Some(&id(Some(8)))),
            "supervisor pid reused"
        );
        let fg = rec(Some(10), Some("b"));
        assert!(session_alive(&fg, &id(Some(10)), None));
        assert!(!session_alive(&fg, &id(Some(11)), None));
    }

    #[test]
    fn reads_own_start_time() {
        assert!(start_time(std::process::id()).is_some());
        assert!(boot_id().is_some());
    }
}
