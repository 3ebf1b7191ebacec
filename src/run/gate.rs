//! Starting a session's command: the gate that holds it between fork and exec
//! until its run is recorded, detaching the supervisor, and the pipes they use.

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result};

use crate::model::command::quoted;
use crate::trust::decide::Runnable;

/// How the session's command is run.
pub struct Spec<'a> {
    /// What runs, as the trust decisions allowed it.
    pub run: &'a Runnable,
    pub cwd: &'a Path,
    pub env: Vec<(&'static str, OsString)>,
    /// `--sandbox`: the Landlock ruleset the command is restricted with
    /// before exec (`sys::landlock`).
    pub landlock: Option<std::os::fd::RawFd>,
}

/// While a foreground command runs, Ctrl-C and Ctrl-\ go to it (same terminal
/// process group) and bullpen ignores them so that it can record the outcome.
pub struct IgnoreInterrupts {
    old_int: libc::sighandler_t,
    old_quit: libc::sighandler_t,
}

impl IgnoreInterrupts {
    pub(crate) fn new() -> Self {
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
    /// Background: on the pseudo-terminal whose slave side is this descriptor
    /// (its stdin, stdout and stderr), as the leader of a session and process
    /// group of its own (so `stop` can end all of it) with the terminal as its
    /// controlling terminal. The caller keeps the descriptor open until
    /// [`start_gated`] returns.
    Pty(std::os::fd::RawFd),
}

/// (code, signal) of an exit status.
pub fn split_status(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    (status.code(), status.signal())
}

/// A pipe whose two ends are closed on exec (`O_CLOEXEC`): (read, write).
pub fn pipe() -> Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(std::io::Error::from)
        .context("cannot create a pipe")
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

/// The signals a terminal (Ctrl-C, Ctrl-\\, hang-up) and `stop` send to a
/// command: blocked while it is held at the gate, default once it runs.
const HELD_SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP];

/// [`HELD_SIGNALS`] as a signal set.
fn held_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before sigaddset adds to it; both
    // only write to the set.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        for sig in HELD_SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
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
///
/// Signals: while held, the child has SIGINT, SIGQUIT, SIGTERM and SIGHUP
/// blocked and at their default dispositions; it unblocks them just before exec.
/// A Ctrl-C or a `stop` during the claim therefore ends the command as the gate
/// opens, and its end is recorded with that signal; a refused start dies with it
/// pending, running nothing.
pub fn start_gated<T>(
    spec: &Spec,
    attach: Attach,
    admit: impl FnOnce(u32) -> Result<T>,
) -> Result<Gated<T>> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    let (program, args) = spec
        .run
        .argv()
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
    let pty = match attach {
        Attach::Pty(slave) => {
            // SAFETY: the caller keeps `slave` open until we return.
            let slave = unsafe { std::os::fd::BorrowedFd::borrow_raw(slave) };
            let dup = || -> Result<std::process::Stdio> {
                Ok(slave
                    .try_clone_to_owned()
                    .context("cannot duplicate the pseudo-terminal")?
                    .into())
            };
            cmd.stdin(dup()?).stdout(dup()?).stderr(dup()?);
            true
        }
        Attach::Terminal => false,
    };
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let landlock = spec.landlock;
    let interrupts = (attach == Attach::Terminal).then(IgnoreInterrupts::new);
    let held = held_signals();
    // SAFETY: only async-signal-safe calls (sigprocmask, signal, setsid, ioctl,
    // prctl, landlock_restrict_self, close, getpid, write, read) between fork
    // and exec (the ruleset's descriptor is open until we return); the closure captures
    // plain integers and a sigset_t by value.
    unsafe {
        cmd.pre_exec(move || {
            // The signals a terminal and `stop` send are blocked from the fork on
            // (the forking thread blocked them, and the mask is inherited; again
            // here in case it was not) and get their default dispositions at once,
            // instead of bullpen's (a foreground bullpen ignores Ctrl-C). So one
            // that arrives while the run is being claimed stays pending, and ends
            // the command the moment the gate opens and they are unblocked.
            if libc::sigprocmask(libc::SIG_BLOCK, &held, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for sig in HELD_SIGNALS {
                libc::signal(sig, libc::SIG_DFL);
            }
            // On a pseudo-terminal (already on fds 0-2): a session and process
            // group of its own, led by the command, the terminal its controlling
            // one (so a Ctrl-C typed through `attach` reaches its group).
            if pty {
                super::pty::take_as_controlling_terminal()?;
            }
            // Confined before the pid is sent: a ruleset that cannot be applied
            // ends the child here, before any claim, and nothing runs.
            if let Some(fd) = landlock {
                crate::sys::landlock::restrict_in_child(fd)?;
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
                // The run is recorded: unblock (the mask survives exec). A signal
                // that arrived meanwhile is delivered now and ends the command as
                // it would have a moment later: the record names its pid, and its
                // end is recorded with the signal.
                if libc::sigprocmask(libc::SIG_UNBLOCK, &held, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            } else {
                // Refused: nothing runs, and a pending signal dies with us.
                Err(std::io::Error::from_raw_os_error(libc::ECANCELED))
            }
        });
    }
    let gated = std::thread::scope(|scope| {
        // The helper thread owns the child's ends of both pipes and closes them
        // once the fork is done, so a child that dies early shows up as EOF here.
        let spawner = scope.spawn(move || {
            // Block the held signals in this thread only (the process still gets
            // them on its other threads), so that the child is born with them
            // blocked: no instant between fork and the first line of `pre_exec`
            // in which bullpen's dispositions could swallow one.
            let mut old = held;
            // SAFETY: both sets are valid; this changes only this thread's mask.
            let blocked = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &held, &mut old) } == 0;
            let child = cmd.spawn();
            if blocked {
                // SAFETY: restores the mask saved above.
                unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
            }
            drop(pid_w);
            drop(go_r);
            child
        });
        let joined = |s: std::thread::ScopedJoinHandle<
            '_,
            std::io::Result<std::process::Child>,
        >| match s.join() {
            Ok(r) => r.with_context(|| {
                format!("cannot run {} in {}", quoted(program), spec.cwd.display())
            }),
            Err(_) => Err(anyhow::anyhow!(
                "the thread starting {} panicked",
                quoted(program)
            )),
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
