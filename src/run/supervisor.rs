//! The supervisor of a background run (the hidden `__supervise`, started by
//! `background.rs`). Its stdout and stderr are the session's log.
//!
//! 1. It re-reads the record and refuses if a process of the session is alive or
//!    the record is no longer the one the dispatcher saw (`--expect`);
//! 2. becomes a child subreaper (every orphan of the run is re-parented to it,
//!    so the run's processes all descend from it while it lives), opens the
//!    run's pseudo-terminal (`pty`) and listens on its socket (`sys::socket`);
//! 3. forks the command on the terminal, leading a session and process group of
//!    its own, and holds it before exec ([`gate::start_gated`]) while it writes
//!    the run's local proof (`run-<pid>.json`, the socket's path included) and
//!    claims the record with one compare-and-swap: state `running`, the
//!    command's pid and start time, its own pid and start time, the boot id.
//!    Two concurrent starts cannot both win, and the loser's command never runs;
//! 4. reports `running <pid>` (or `error <why>`) to the dispatcher on an inherited
//!    pipe, so the dispatcher returns only once `ls` shows the run as running;
//! 5. relays the terminal (`relay`): output to the log, to the terminal model
//!    (`keep`) and to the attached client, the client's keys to the command,
//!    until the command ends;
//! 6. removes the socket, appends its end line to the log (`end_line`, after
//!    all of the command's output), records the end with [`finish`] (provenance
//!    notes included; `stopped` if `stop` asked for it), and only then tells the
//!    attached client how the run ended.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use super::claim::{claim, Claim};
use super::finish::finish;
use super::gate::{self, Attach, Spec};
use super::liveness::ensure_not_running;
use super::relay::{self, Relay};
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::command::quoted;
use crate::model::local::{Attached, Leftovers, LOCAL_SCHEMA};
use crate::model::{time, Exit, Oid, Process, SessionId, State};
use crate::sys::{procfs, socket};
use crate::trust::decide::Runnable;
use crate::trust::local::Local;
use crate::ui::Ui;

/// What the supervisor was asked to do.
pub struct Request {
    pub id: SessionId,
    /// The record commit the dispatcher saw; the claim must replace exactly it.
    pub expect: String,
    pub event: String,
    pub ready_fd: Option<RawFd>,
    /// The terminal's first window size (rows, columns).
    pub size: (u16, u16),
    /// Lines of scrollback the terminal model keeps (`bullpen.scrollback`).
    pub scrollback: usize,
    pub run: Runnable,
    /// `--sandbox`: how the command is confined.
    pub sandbox: crate::model::sandbox::Mode,
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
        rustix::io::fcntl_setfd(&owned, rustix::io::FdFlags::CLOEXEC)
            .map_err(std::io::Error::from)
            .with_context(|| format!("cannot keep --ready-fd {fd} from the command"))?;
        Ok(Ready(Some(File::from(owned))))
    }

    fn send(&mut self, line: &str) {
        if let Some(mut f) = self.0.take() {
            // The dispatcher may be gone (killed); nothing to do about that.
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// The run's socket file, removed when this goes (every path out of the
/// supervisor that gets past `listen`).
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = socket::remove_socket(&self.0);
    }
}

/// A started run: its record, its terminal and socket, its command's pid.
struct Started<'ui> {
    ctx: Ctx<'ui>,
    running: Stored,
    pid: u32,
    master: OwnedFd,
    listener: std::os::unix::net::UnixListener,
    socket: SocketFile,
    /// The terminal's device number.
    tty: u64,
    /// Kept until the run and what it left are over (its private TMPDIR).
    sandbox: Option<super::sandbox::Sandbox<'ui>>,
}

/// The supervisor: claim the record, run the command on its terminal, relay
/// it, record the end. Its stdout and stderr are the session's log, so
/// whatever it says lands there.
pub fn supervise(req: Request, cwd: &Path, ui: &Ui) -> Result<i32> {
    let mut ready = Ready::take(req.ready_fd)?;
    let started = match start(&req, cwd, ui) {
        Ok(started) => started,
        Err(e) => {
            ready.send(&format!("error {}", crate::ui::one_line(&e)));
            return Err(e);
        }
    };
    let Started {
        ctx,
        running,
        pid,
        master,
        listener,
        socket,
        tty,
        sandbox,
    } = started;
    // Its first activity (working) is written before the dispatcher returns, so
    // that `ls` right after shows it.
    let watch = super::attention::Watch::new(
        req.id.clone(),
        Local::of(&ctx.layout, &req.id),
        pid,
        tty,
        PathBuf::from(&running.record.worktree),
        super::notify::Notify::configured(&ctx.repo),
    );
    ready.send(&format!("running {pid}"));
    drop(ready);
    let began = std::time::Instant::now();
    let local = Local::of(&ctx.layout, &req.id);
    let me = std::process::id();
    let log = super::background::open_log(&ctx.layout.log_path(&req.id))?;
    let on_attach: relay::OnAttach = Box::new(|client: Option<(u32, &str)>| {
        let written = match client {
            Some((pid, since)) => local.write_attached(&Attached {
                schema: LOCAL_SCHEMA,
                supervisor_pid: me,
                client: procfs::process_ref(pid),
                since: since.to_owned(),
            }),
            None => local.remove_attached(),
        };
        if let Err(e) = written {
            ui.warn(format!("{e:#}"));
        }
    });
    let keep = super::keep::Keep::new(req.size.0, req.size.1, req.scrollback);
    // For `logs`: the size the run starts at, and each resize (`relay`).
    let mut sizes = super::sizes::Recorder::new(super::sizes::path(&ctx.layout, &req.id));
    if let Err(e) = sizes.record(&log, req.size.0, req.size.1) {
        ui.warn(format!("{e:#}"));
    }
    let relay = Relay::new(master, listener, log, pid, keep, on_attach, sizes)
        .context("cannot relay the session's terminal")?
        .watching(watch);
    let ended = relay.run();
    // No new client from here on; the one attached hears how it ended below.
    drop(socket);
    let (code, signal) = ended.status.unwrap_or_else(|| {
        ui.warn("cannot tell how the session's command ended");
        (None, None)
    });
    let exit = Exit::now(code, signal);
    // What the command left behind is noted before the end is recorded, so
    // that whoever sees the end (`stop`) finds the proof to end them.
    let left = leftovers(&ctx, &req.id, me);
    // The relay has copied all the command's output: the end line comes after it.
    end_line(&ctx, &running.record.id, &exit, began.elapsed());
    // Put back what the run must not have changed before the end is recorded
    // (again once what it left behind has ended too).
    if let Some(s) = &sandbox {
        s.settle(&ctx);
    }
    let recorded = finish(&ctx, &running, exit.clone(), State::Exited);
    relay::farewell(ended.client, &exit);
    if let Err(e) = Local::of(&ctx.layout, &req.id).remove_attached() {
        ui.warn(format!("{e:#}"));
    }
    if !left.is_empty() {
        linger(&ctx, &req.id, &left);
    }
    if let Some(s) = sandbox {
        s.end(&ctx);
    }
    recorded?;
    Ok(0)
}

/// The processes the ended command left behind (all descend from us, a
/// subreaper), with `leftovers.json` written for them; none written when none.
fn leftovers(ctx: &Ctx, id: &SessionId, me: u32) -> Vec<u32> {
    let left = procfs::descendants(me);
    if left.is_empty() {
        return left;
    }
    // Out of the worktree before anyone sees the end: what keeps it busy from
    // now on is what the run left, not the supervisor that waits for it.
    if let Err(e) = std::env::set_current_dir("/") {
        ctx.ui.warn(format!("cannot leave the worktree: {e}"));
    }
    let written = Local::of(&ctx.layout, id).write_leftovers(&Leftovers {
        schema: LOCAL_SCHEMA,
        supervisor: procfs::process_ref(me),
        since: time::now_rfc3339(),
    });
    match written {
        Ok(()) => left,
        Err(e) => {
            // Without the proof nobody could end them through bullpen: say so, and
            // do not stay for them.
            ctx.ui.warn(format!("{e:#}"));
            Vec::new()
        }
    }
}

/// Stay, reaping, until the last process the run left behind has ended (they
/// are ours: orphans of the run are re-parented to us), then drop the proof.
fn linger(ctx: &Ctx, id: &SessionId, left: &[u32]) {
    ctx.ui.info(format!(
        "session {id}: its command left {} behind ({}); waiting for {} (`git bullpen stop {id}` \
         ends {})",
        if left.len() == 1 {
            "a process"
        } else {
            "processes"
        },
        left.iter()
            .map(|p| format!("pid {p}"))
            .collect::<Vec<_>>()
            .join(", "),
        if left.len() == 1 { "it" } else { "them" },
        if left.len() == 1 { "it" } else { "them" },
    ));
    let _ = ctx.ui.flush();
    loop {
        match rustix::process::wait(rustix::process::WaitOptions::empty()) {
            Ok(Some(_)) => {}
            Err(rustix::io::Errno::INTR) => {}
            // ECHILD: nothing of the run is left.
            Ok(None) | Err(_) => break,
        }
    }
    if let Err(e) = Local::of(&ctx.layout, id).remove_leftovers() {
        ctx.ui.warn(format!("{e:#}"));
    }
}

/// The log's last line, bullpen's own: how the run ended and after how long
/// (`bullpen: session a exited 5 after 1.2s`), on a line of its own even
/// when the command's output did not end with one. Written after the relay has
/// copied the last of the terminal's output and before the end is recorded, so
/// whoever sees the end in the record finds the log complete.
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
        "session {id} {}",
        crate::model::ending::how_long(state, exit, Some(took))
    ));
}

/// Everything up to a running, recorded command.
fn start<'ui>(req: &Request, cwd: &Path, ui: &'ui Ui) -> Result<Started<'ui>> {
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
    // Every orphan of the run becomes our child, so that while we live every
    // process of the run descends from us (the proof `stop` needs to signal its
    // processes one by one once the command is gone: trust::decide).
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .context("cannot become the subreaper of the session's processes")?;
    let socket_path = socket::path_for(me, me_started.unwrap_or(0))?;
    let listener = socket::listen(&socket_path)?;
    let socket_file = SocketFile(socket_path.clone());
    let pty = super::pty::open(req.size.0, req.size.1)?;
    let tty = rustix::fs::fstat(&pty.slave)
        .context("cannot read the pseudo-terminal's device")?
        .st_rdev;
    let sandbox = super::sandbox::prepare(&ctx, &stored.record, req.sandbox)?;
    let mut env = super::env::session_env(&ctx, &stored.record);
    env.extend(sandbox.iter().flat_map(|s| s.env()));
    let exec = match &sandbox {
        Some(s) => s.runnable(&req.run),
        None => req.run.clone(),
    };
    let spec = Spec {
        run: &exec,
        cwd: &worktree,
        env,
        landlock: sandbox.as_ref().and_then(|s| s.landlock_fd()),
    };
    let socket_str = socket_path.to_string_lossy().into_owned();
    let gated = gate::start_gated(&spec, Attach::Pty(pty.slave.as_raw_fd()), |pid| {
        if let Some(s) = &sandbox {
            s.forked(&ctx, pid)?;
        }
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
            terminal: true,
            command: None,
        };
        claim(
            &ctx,
            &stored,
            Claim {
                event: &req.event,
                argv: req.run.argv(),
                process: proc_rec,
                run_start,
                log: Some(log.clone()),
                socket: Some(socket_str.clone()),
                sandbox: sandbox.as_ref().map(|s| s.record_value()),
            },
        )
    })?;
    // Only the command holds the slave side now: when every process of the run
    // has closed it, reading the master says so.
    drop(pty.slave);
    match (gated.admitted, gated.child) {
        (Some(running), Ok(child)) => {
            if let Some(s) = &sandbox {
                s.running();
            }
            Ok(Started {
                ctx,
                running,
                // Waited for by the relay (waitpid), not through `child`.
                pid: child.id(),
                master: pty.master,
                listener,
                socket: socket_file,
                tty,
                sandbox,
            })
        }
        (Some(running), Err(e)) => {
            // Claimed, but the command could not be executed: a shell says 127
            // (not found) or 126.
            let code = crate::model::exit::of_exec_failure(&e);
            if let Some(s) = sandbox {
                s.end(&ctx);
            }
            if let Err(undo) = finish(&ctx, &running, Exit::now(Some(code), None), State::Exited) {
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
