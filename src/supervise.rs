//! Background runs: the dispatcher side (`spawn --bg`, later `resume --bg`) and the
//! supervisor it starts.
//!
//! The dispatcher re-executes bullpen itself as the hidden subcommand
//! `__supervise`, detached (new session, stdin from /dev/null, stdout and stderr
//! appended to the session's log under the common git dir). There is no daemon:
//! one supervisor per run, and it exits when the run ends.
//!
//! The supervisor
//! 1. re-reads the record and refuses if a process of the session is alive or the
//!    record is no longer the one the dispatcher saw (`--expect`);
//! 2. forks the command in its own process group and holds it before exec
//!    ([`process::start_gated`]) while it claims the record with one
//!    compare-and-swap: state `running`, the command's pid and start time, its own
//!    pid and start time, the boot id. Two concurrent starts cannot both win, and
//!    the loser's command never runs;
//! 3. reports `running <pid>` (or `error <why>`) to the dispatcher on an inherited
//!    pipe, so the dispatcher returns only once `ls` shows the run as running;
//! 4. waits, and records the end with [`runner::finish`] (provenance notes
//!    included). If `stop` asked for the end first, the state is `stopped`.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::context::Ctx;
use crate::git::Oid;
use crate::process;
use crate::runner;
use crate::session::{Exit, Process, SessionId, State};
use crate::store::{self, Stored};
use crate::time;

/// The hidden subcommand the dispatcher runs.
pub const SUBCOMMAND: &str = "__supervise";

/// Start a detached supervisor for `stored` running `argv`, and wait until it
/// reports the command running. Returns the command's pid.
pub fn dispatch(ctx: &Ctx, stored: &Stored, argv: &[String], event: &str) -> Result<u32> {
    let id = &stored.record.id;
    if argv.is_empty() {
        bail!("the session's command is empty");
    }
    let log_path = ctx.layout.log_path(id);
    let log = open_log(&log_path)?;
    let exe = std::env::current_exe()
        .context("cannot find the git-bullpen executable to start the supervisor")?;
    let (ready_r, ready_w) = process::pipe()?;
    let args = supervisor_args(
        id,
        &stored.commit.to_string(),
        event,
        ready_w.as_raw_fd(),
        argv,
    );
    let worktree = PathBuf::from(&stored.record.worktree);
    process::spawn_detached(&exe, &args, &worktree, &log, ready_w.as_raw_fd())
        .with_context(|| format!("cannot start the supervisor of session {id}"))?;
    // Only the supervisor holds the write end now: EOF means it is done talking.
    drop(ready_w);
    let report = read_report(ready_r, REPORT_LIMIT).with_context(|| {
        format!(
            "the supervisor of session {id} has not reported; see `git bullpen ls {id}` \
             and the log {}",
            log_path.display()
        )
    })?;
    parse_report(&report).map_err(|why| {
        anyhow!(
            "the background run of session {id} did not start: {why} (log: {})",
            log_path.display()
        )
    })
}

/// How long the dispatcher waits for the supervisor's report. It normally comes
/// in milliseconds; this only bounds a supervisor stuck on something unexpected.
const REPORT_LIMIT: Duration = Duration::from_secs(60);

/// Read the report pipe until EOF, for at most `limit`.
fn read_report(fd: OwnedFd, limit: Duration) -> Result<String> {
    let deadline = Instant::now() + limit;
    let mut file = File::from(fd);
    let mut report = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!("no report after {}s", limit.as_secs());
        }
        let mut pfd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: `pfd` is one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err).context("cannot wait for the supervisor's report");
        }
        if rc == 0 {
            continue; // timed out: the deadline check above ends the loop
        }
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => report.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("cannot read the supervisor's report"),
        }
    }
    Ok(String::from_utf8_lossy(&report).into_owned())
}

/// The supervisor's argv after the executable.
fn supervisor_args(
    id: &SessionId,
    expect: &str,
    event: &str,
    ready_fd: RawFd,
    argv: &[String],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        SUBCOMMAND.into(),
        id.as_str().into(),
        "--expect".into(),
        expect.into(),
        "--event".into(),
        event.into(),
        "--ready-fd".into(),
        ready_fd.to_string().into(),
        "--".into(),
    ];
    args.extend(argv.iter().map(OsString::from));
    args
}

/// Open (create) the log for appending. Readable by the owner only: an agent's
/// output may contain secrets.
fn open_log(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open the log {}", path.display()))
}

/// Pure: the dispatcher's reading of the supervisor's report. Nothing at all
/// means the supervisor died before it could say anything.
pub fn parse_report(report: &str) -> Result<u32, String> {
    let report = report.trim();
    if let Some(pid) = report.strip_prefix("running ") {
        return pid
            .trim()
            .parse()
            .map_err(|_| format!("the supervisor sent a malformed report: {report:?}"));
    }
    if let Some(why) = report.strip_prefix("error ") {
        return Err(why.to_owned());
    }
    if report.is_empty() {
        return Err("the supervisor ended without reporting".to_owned());
    }
    Err(format!(
        "the supervisor sent a malformed report: {report:?}"
    ))
}

/// What the supervisor was asked to do.
pub struct Request {
    pub id: SessionId,
    /// The record commit the dispatcher saw; the claim must replace exactly it.
    pub expect: String,
    pub event: String,
    pub ready_fd: Option<RawFd>,
    pub argv: Vec<String>,
}

/// The supervisor's report pipe to the dispatcher (absent when run by hand).
struct Ready(Option<File>);

impl Ready {
    fn take(fd: Option<RawFd>) -> Result<Ready> {
        let Some(fd) = fd else {
            return Ok(Ready(None));
        };
        // SAFETY: fcntl(F_GETFD) only queries the descriptor.
        if fd < 3 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            bail!("--ready-fd {fd} is not an open descriptor");
        }
        // SAFETY: the dispatcher passed us this descriptor for our sole use, and
        // it was checked to be open.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // Keep it from the command: it must see EOF once we are done.
        // SAFETY: sets a flag on a descriptor we own.
        unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        Ok(Ready(Some(File::from(owned))))
    }

    fn send(&mut self, line: &str) {
        if let Some(mut f) = self.0.take() {
            // The dispatcher may be gone (killed); nothing to do about that.
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// The supervisor: claim the record, run the command, record the end. Its stdout
/// and stderr are the session's log, so whatever it says lands there.
pub fn supervise(req: Request, cwd: &Path) -> Result<i32> {
    let mut ready = Ready::take(req.ready_fd)?;
    let (ctx, running, child) = match start(&req, cwd) {
        Ok(started) => started,
        Err(e) => {
            ready.send(&format!("error {e:#}").replace('\n', " "));
            return Err(e);
        }
    };
    let pid = child.id();
    ready.send(&format!("running {pid}"));
    drop(ready);
    let status = wait(child);
    let (code, signal) = match status {
        Ok(status) => process::split_status(status),
        Err(e) => {
            crate::context::warn(format!("{e:#}"));
            (None, None)
        }
    };
    let exit = Exit {
        code,
        signal,
        at: time::now_rfc3339(),
    };
    runner::finish(&ctx, &running, exit, State::Exited)?;
    Ok(0)
}

fn wait(mut child: std::process::Child) -> Result<std::process::ExitStatus> {
    child
        .wait()
        .context("cannot wait for the session's command")
}

/// Everything up to a running, recorded command.
fn start(req: &Request, cwd: &Path) -> Result<(Ctx, Stored, std::process::Child)> {
    let ctx = Ctx::discover(cwd)?;
    let id = &req.id;
    let fresh = store::load(&ctx.repo, id)?
        .ok_or_else(|| anyhow!("no session named {id:?}: its record is gone"))?;
    runner::ensure_not_running(&ctx, &fresh)?;
    // The claim below replaces exactly the record the dispatcher saw, or nothing:
    // if another start or a stop got there first, the compare-and-swap fails.
    let expect: Oid = req
        .expect
        .parse()
        .with_context(|| format!("--expect {:?} is not a commit id", req.expect))?;
    let stored = Stored {
        record: fresh.record,
        commit: expect,
    };
    let worktree = PathBuf::from(&stored.record.worktree);
    let run_start = runner::branch_tip(&ctx, &stored.record)?;
    let log = ctx.layout.log_path(id).to_string_lossy().into_owned();
    let me = std::process::id();
    let me_started = process::start_time(me);
    let spec = process::Spec {
        argv: &req.argv,
        cwd: &worktree,
        env: runner::session_env(&stored.record),
    };
    let gated = process::start_gated(&spec, process::Attach::OwnGroup, |pid| {
        let ident = process::identity(pid);
        let proc_rec = Process {
            pid,
            start_time: ident.start_time,
            boot_id: ident.boot_id,
            background: true,
            supervisor_pid: Some(me),
            started_at: time::now_rfc3339(),
            supervisor_start_time: me_started,
            stop_requested_at: None,
        };
        store::try_update(&ctx.repo, &stored, &req.event, |r| {
            r.state = State::Running;
            r.command = req.argv.clone();
            r.process = Some(proc_rec);
            r.exit = None;
            r.run_start = run_start.map(|o| o.to_string());
            r.log = Some(log.clone());
        })
        .map_err(|e| {
            if store::is_conflict(&e) {
                e.context(format!(
                    "the record of session {id} changed since this run was requested (another \
                     start or stop got there first); nothing was run: check `git bullpen ls {id}`"
                ))
            } else {
                e.context(format!("cannot record that session {id} is running"))
            }
        })
    })?;
    match (gated.admitted, gated.child) {
        (Some(running), Ok(child)) => Ok((ctx, running, child)),
        (Some(running), Err(e)) => {
            // Claimed, but the command could not be executed: a shell says 127.
            let exit = Exit {
                code: Some(127),
                signal: None,
                at: time::now_rfc3339(),
            };
            if let Err(undo) = runner::finish(&ctx, &running, exit, State::Exited) {
                crate::context::warn(format!("{undo:#}"));
            }
            Err(e)
        }
        (None, Err(e)) => Err(e),
        (None, Ok(mut child)) => {
            // start_gated never releases a command that was not admitted; should
            // that ever change, do not leave it running unrecorded.
            let _ = child.kill();
            let _ = child.wait();
            bail!("internal error: the command of session {id} started without being recorded")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports() {
        assert_eq!(parse_report("running 42\n"), Ok(42));
        assert_eq!(
            parse_report("error session a is already running (pid 7)\n"),
            Err("session a is already running (pid 7)".to_owned())
        );
        assert!(parse_report("").unwrap_err().contains("without reporting"));
        assert!(parse_report("running x").unwrap_err().contains("malformed"));
        assert!(parse_report("what").unwrap_err().contains("malformed"));
    }

    #[test]
    fn the_report_is_read_to_eof_and_a_silent_supervisor_is_not_waited_for_forever() {
        let (r, w) = process::pipe().unwrap();
        let mut w = File::from(w);
        w.write_all(b"running 7\n").unwrap();
        drop(w);
        assert_eq!(
            read_report(r, Duration::from_secs(60)).unwrap(),
            "running 7\n"
        );
        let (r, w) = process::pipe().unwrap();
        let err = read_report(r, Duration::from_millis(50)).unwrap_err();
        assert!(err.to_string().contains("no report"), "{err}");
        drop(w);
    }

    #[test]
    fn supervisor_args_end_with_the_command_after_a_separator() {
        let id: SessionId = "a".parse().unwrap();
        let argv = vec!["sh".to_owned(), "-c".to_owned(), "echo --expect".to_owned()];
        let args = supervisor_args(&id, "abc", "running", 5, &argv);
        let sep = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(
            &args[sep + 1..],
            &["sh", "-c", "echo --expect"].map(OsString::from)
        );
        assert_eq!(args[0], SUBCOMMAND);
    }
}
