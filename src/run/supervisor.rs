//! The supervisor of a background run (the hidden `__supervise`, started by
//! `background.rs`). Its stdout and stderr are the session's log.
//!
//! 1. It re-reads the record and refuses if a process of the session is alive or
//!    the record is no longer the one the dispatcher saw (`--expect`);
//! 2. forks the command in its own process group and holds it before exec
//!    ([`gate::start_gated`]) while it claims the record with one
//!    compare-and-swap: state `running`, the command's pid and start time, its own
//!    pid and start time, the boot id. Two concurrent starts cannot both win, and
//!    the loser's command never runs;
//! 3. reports `running <pid>` (or `error <why>`) to the dispatcher on an inherited
//!    pipe, so the dispatcher returns only once `ls` shows the run as running;
//! 4. waits, and records the end with [`finish`] (provenance notes included). If
//!    `stop` asked for the end first, the state is `stopped`.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use super::claim::{claim, Claim};
use super::finish::finish;
use super::gate::{self, Attach, Spec};
use super::liveness::ensure_not_running;
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::command::quoted;
use crate::model::{time, Exit, Oid, Process, SessionId, State};
use crate::sys::procfs;
use crate::ui::Ui;

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
pub fn supervise(req: Request, cwd: &Path, ui: &Ui) -> Result<i32> {
    let mut ready = Ready::take(req.ready_fd)?;
    let (ctx, running, child) = match start(&req, cwd, ui) {
        Ok(started) => started,
        Err(e) => {
            ready.send(&format!("error {}", crate::ui::one_line(&e)));
            return Err(e);
        }
    };
    let pid = child.id();
    ready.send(&format!("running {pid}"));
    drop(ready);
    let started = std::time::Instant::now();
    let status = wait(child);
    let (code, signal) = match status {
        Ok(status) => gate::split_status(status),
        Err(e) => {
            ui.warn(format!("{e:#}"));
            (None, None)
        }
    };
    let exit = Exit::now(code, signal);
    end_line(&ctx, &running.record.id, &exit, started.elapsed());
    finish(&ctx, &running, exit, State::Exited)?;
    Ok(0)
}

/// The log's last line, bullpen's own: how the run ended and after how long
/// (`bullpen: session a exited (exit 5) after 1.2s`), on a line of its own even
/// when the command's output did not end with one. Written before the end is
/// recorded, so whoever sees the end in the record finds the log complete.
fn end_line(ctx: &Ctx, id: &SessionId, exit: &Exit, took: std::time::Duration) {
    // As `finish` will decide: `stopped` if stop asked for the end.
    let state = match store::load(&ctx.repo, id) {
        Ok(Some(now)) => super::finish::final_state(State::Exited, &now.record),
        _ => State::Exited,
    };
    let log = ctx.layout.log_path(id);
    let ends_a_line = (|| -> std::io::Result<bool> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = File::open(&log)?;
        if f.seek(SeekFrom::End(0))? == 0 {
            return Ok(true);
        }
        f.seek(SeekFrom::End(-1))?;
        let mut last = [0u8; 1];
        f.read_exact(&mut last)?;
        Ok(last[0] == b'\n')
    })()
    .unwrap_or(true);
    if !ends_a_line {
        // stdout and stderr are the same log (appended): this ends the command's line.
        let _ = writeln!(ctx.ui.out());
        let _ = ctx.ui.flush();
    }
    ctx.ui.info(format!(
        "session {id} {} ({}) after {}",
        state.as_str(),
        exit.describe(),
        time::duration(took)
    ));
}

fn wait(mut child: std::process::Child) -> Result<std::process::ExitStatus> {
    child
        .wait()
        .context("cannot wait for the session's command")
}

/// Everything up to a running, recorded command.
fn start<'ui>(
    req: &Request,
    cwd: &Path,
    ui: &'ui Ui,
) -> Result<(Ctx<'ui>, Stored, std::process::Child)> {
    let ctx = Ctx::discover(cwd, ui)?;
    let id = &req.id;
    let fresh = store::load(&ctx.repo, id)?
        .ok_or_else(|| anyhow!("no session named '{id}': its record is gone"))?;
    ensure_not_running(&ctx, &fresh)?;
    // The claim below replaces exactly the record the dispatcher saw, or nothing:
    // if another start or a stop got there first, the compare-and-swap fails.
    let expect: Oid = req
        .expect
        .parse()
        .with_context(|| format!("--expect {} is not a commit id", quoted(&req.expect)))?;
    let stored = Stored {
        record: fresh.record,
        commit: expect,
    };
    let worktree = PathBuf::from(&stored.record.worktree);
    let run_start = ctx.repo.ref_target(&id.branch_ref())?;
    let log = ctx.layout.log_path(id).to_string_lossy().into_owned();
    let me = std::process::id();
    let me_started = procfs::start_time(me);
    let spec = Spec {
        argv: &req.argv,
        cwd: &worktree,
        env: super::env::session_env(&ctx, &stored.record),
    };
    let gated = gate::start_gated(&spec, Attach::OwnGroup, |pid| {
        let ident = procfs::identity(pid);
        let proc_rec = Process {
            pid,
            start_time: ident.start_time,
            boot_id: ident.boot_id,
            background: true,
            supervisor_pid: Some(me),
            started_at: time::now_rfc3339(),
            supervisor_start_time: me_started,
            stop_requested_at: None,
            command: None,
        };
        claim(
            &ctx,
            &stored,
            Claim {
                event: &req.event,
                argv: &req.argv,
                process: proc_rec,
                run_start,
                log: Some(log.clone()),
            },
        )
    })?;
    match (gated.admitted, gated.child) {
        (Some(running), Ok(child)) => Ok((ctx, running, child)),
        (Some(running), Err(e)) => {
            // Claimed, but the command could not be executed: a shell says 127.
            if let Err(undo) = finish(&ctx, &running, Exit::now(Some(127), None), State::Exited) {
                ui.warn(format!("{undo:#}"));
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
