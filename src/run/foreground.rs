//! A run in the foreground: the command on the caller's terminal, bullpen
//! waiting to record how it ended.

use std::path::Path;

use anyhow::{Context, Result};

use super::claim::{claim, Claim};
use super::finish::finish;
use super::gate::{self, Attach, Spec};
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::model::sandbox::Mode;
use crate::model::{time, Exit, Process, State};
use crate::sys::procfs;
use crate::trust::decide::Runnable;

/// Run `argv` in the session's worktree in the foreground, record running/exited,
/// write provenance notes, and return the shell-style exit status.
/// With `sandbox` on, the command runs confined (`run::sandbox`).
pub fn run_foreground(
    ctx: &Ctx,
    stored: Stored,
    run: &Runnable,
    event: &str,
    sandbox: Mode,
) -> Result<i32> {
    let id = stored.record.id.clone();
    let worktree = Path::new(&stored.record.worktree).to_path_buf();
    let run_start = ctx.repo.ref_target(&id.branch_ref())?;
    // Held until the command has ended: its private TMPDIR goes with it.
    let sandbox = super::sandbox::prepare(ctx, &stored.record, sandbox)?;
    let mut env = super::env::session_env(ctx, &stored.record);
    env.extend(sandbox.iter().flat_map(|s| s.env()));
    let exec = match &sandbox {
        Some(s) => s.runnable(run),
        None => run.clone(),
    };
    let spec = Spec {
        run: &exec,
        cwd: &worktree,
        env,
        landlock: sandbox.as_ref().and_then(|s| s.landlock_fd()),
    };
    // What bullpen printed so far must reach the terminal before the command does.
    ctx.ui.flush()?;
    // The command is held between fork and exec while the record claims the run
    // with one compare-and-swap against the version that was checked: of two
    // concurrent starts only one runs, and the record names the command's pid
    // before it runs.
    let gated = gate::start_gated(&spec, Attach::Terminal, |pid| {
        if let Some(s) = &sandbox {
            s.forked(ctx, pid)?;
        }
        claim(
            ctx,
            &stored,
            Claim {
                event,
                argv: run.argv(),
                process: foreground_process(pid),
                run_start,
                log: None,
                socket: None,
                sandbox: sandbox.as_ref().map(|s| s.record_value()),
            },
        )
    })?;
    let _interrupts = gated.interrupts;
    let (running, mut child) = match (gated.admitted, gated.child) {
        (Some(running), Ok(child)) => {
            if let Some(s) = &sandbox {
                s.running();
            }
            (running, child)
        }
        (Some(running), Err(e)) => {
            // Claimed, but the command could not be executed: like a shell, say
            // why and exit 127 (not found) or 126 (recorded as such).
            ctx.ui.error(&e);
            let code = crate::model::exit::of_exec_failure(&e);
            end_sandbox(ctx, sandbox);
            finish(ctx, &running, Exit::now(Some(code), None), State::Exited)?;
            return Ok(code);
        }
        (None, Err(e)) => return Err(e),
        (None, Ok(mut child)) => {
            // Not admitted, yet `spawn` says it runs: only when the child was killed
            // (SIGKILL) before it reached the gate. Never leave a process unrecorded.
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!(
                "the command of session {id} started without being recorded; it was killed"
            )
        }
    };
    let status = child
        .wait()
        .context("cannot wait for the session's command")?;
    let (code, signal) = gate::split_status(status);
    let exit = Exit::now(code, signal);
    // Before the end is recorded: the notes go on the branches as they were.
    end_sandbox(ctx, sandbox);
    finish(ctx, &running, exit.clone(), State::Exited)?;
    Ok(exit.shell_status())
}

/// A sandboxed run has ended: put back what it must not have changed.
fn end_sandbox(ctx: &Ctx, sandbox: Option<super::sandbox::Sandbox<'_>>) {
    if let Some(s) = sandbox {
        s.end(ctx);
    }
}

/// The record of a foreground run: the command, and this bullpen process as its
/// supervisor, so that the run counts as alive until its end is recorded (after
/// the command exits, bullpen still writes notes and the exit).
fn foreground_process(pid: u32) -> Process {
    let ident = procfs::identity(pid);
    let me = std::process::id();
    Process {
        pid,
        start_time: ident.start_time,
        boot_id: ident.boot_id,
        background: false,
        supervisor_pid: Some(me),
        started_at: time::now_rfc3339(),
        supervisor_start_time: procfs::start_time(me),
        stop_requested_at: None,
        terminal: false,
        command: None,
    }
}
