//! Background runs, the dispatcher's side (`spawn --bg`, `resume --bg`): start a
//! detached supervisor (`supervisor.rs`) and wait until it reports the command
//! running.
//!
//! The dispatcher re-executes bullpen itself as the hidden subcommand
//! `__supervise`, detached (new session, stdin from /dev/null, stdout and stderr
//! appended to the session's log under the common git dir). There is no daemon:
//! one supervisor per run, and it exits when the run ends.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use super::gate;
use super::liveness::ensure_not_running;
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::model::command::quoted;
use crate::model::sandbox::Mode;
use crate::model::SessionId;
use crate::trust::decide::Runnable;

/// Run `argv` in the session's worktree in the background: a detached supervisor
/// runs it, records it and its end. Returns once the record shows it running
/// (so `ls` right after says `running`); prints the session id on stdout.
/// With `sandbox` on, the supervisor runs the command confined (`run::sandbox`).
pub fn run_background(
    ctx: &Ctx,
    stored: Stored,
    run: &Runnable,
    event: &str,
    sandbox: Mode,
) -> Result<i32> {
    ensure_not_running(ctx, &stored)?;
    let id = stored.record.id.clone();
    let pid = dispatch(ctx, &stored, run, event, sandbox)?;
    writeln!(ctx.ui.out(), "{id}").context("cannot write to stdout")?;
    ctx.ui.flush()?;
    ctx.ui.info(format!(
        "running in the background (pid {pid}); attach: git bullpen attach {id}; output: git \
         bullpen logs {id}; end it: git bullpen stop {id}"
    ));
    Ok(0)
}

/// The hidden subcommand the dispatcher runs.
pub const SUBCOMMAND: &str = "__supervise";

/// Start a detached supervisor for `stored` running `argv`, and wait until it
/// reports the command running. Returns the command's pid.
pub fn dispatch(
    ctx: &Ctx,
    stored: &Stored,
    run: &Runnable,
    event: &str,
    sandbox: Mode,
) -> Result<u32> {
    let id = &stored.record.id;
    let argv = run.argv();
    if argv.is_empty() {
        bail!("the session's command is empty");
    }
    let scrollback = scrollback(ctx)?;
    let log_path = ctx.layout.log_path(id);
    let log = open_log(&log_path)?;
    let exe = std::env::current_exe()
        .context("cannot find the git-bullpen executable to start the supervisor")?;
    let (ready_r, ready_w) = gate::pipe()?;
    let mut args = supervisor_args(
        id,
        &stored.commit.to_string(),
        event,
        ready_w.as_raw_fd(),
        argv,
    );
    args.splice(1..1, ["--scrollback".into(), scrollback.to_string().into()]);
    if sandbox != Mode::Off {
        super::sandbox::check(sandbox)?;
        super::sandbox::warn_unenforced(ctx, sandbox);
        args.splice(1..1, ["--sandbox".into(), sandbox.as_str().into()]);
    }
    // The run's terminal starts with the size of the one it was started from.
    if let Some((rows, cols)) = caller_window_size() {
        args.splice(1..1, ["--size".into(), format!("{rows}x{cols}").into()]);
    }
    let worktree = PathBuf::from(&stored.record.worktree);
    gate::spawn_detached(&exe, &args, &worktree, &log, ready_w.as_raw_fd())
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

/// The lines of scrollback the run's terminal model keeps: git config
/// `bullpen.scrollback`, else the default.
fn scrollback(ctx: &Ctx) -> Result<usize> {
    use crate::model::config::{parse_count, SCROLLBACK};
    match ctx.repo.config_string(SCROLLBACK) {
        None => Ok(super::keep::DEFAULT_SCROLLBACK),
        Some(v) => parse_count(&v).map_err(|why| {
            crate::model::Error::failed(format!(
                "bad numeric config value {} for '{SCROLLBACK}': {why}",
                quoted(&v)
            ))
            .hint("bullpen.scrollback is a number of lines, e.g. 1000 or 10k")
            .into()
        }),
    }
}

/// The window size of the terminal bullpen was started from, if any.
fn caller_window_size() -> Option<(u16, u16)> {
    crate::sys::term::window_size(rustix::stdio::stdin())
        .or_else(|| crate::sys::term::window_size(rustix::stdio::stderr()))
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
        let timeout = rustix::event::Timespec::try_from(left).ok();
        let mut fds = [rustix::event::PollFd::new(
            &file,
            rustix::event::PollFlags::IN,
        )];
        let ready = match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                return Err(std::io::Error::from(e))
                    .context("cannot wait for the supervisor's report")
            }
        };
        if ready == 0 {
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
pub(crate) fn open_log(path: &Path) -> Result<File> {
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
            .map_err(|_| format!("the supervisor sent a malformed report: {}", quoted(report)));
    }
    if let Some(why) = report.strip_prefix("error ") {
        return Err(why.to_owned());
    }
    if report.is_empty() {
        return Err("the supervisor ended without reporting".to_owned());
    }
    Err(format!(
        "the supervisor sent a malformed report: {}",
        quoted(report)
    ))
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
        let (r, w) = gate::pipe().unwrap();
        let mut w = File::from(w);
        w.write_all(b"running 7\n").unwrap();
        drop(w);
        assert_eq!(
            read_report(r, Duration::from_secs(60)).unwrap(),
            "running 7\n"
        );
        let (r, w) = gate::pipe().unwrap();
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
