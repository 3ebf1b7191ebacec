//! Claiming a run: the one compare-and-swap that makes a record say `running`
//! with the command's pid, then the local proof that this machine started it
//! (`trust::local`), both while the command is still held at the gate.

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::local::{LocalRun, LOCAL_SCHEMA};
use crate::model::process::ProcessRef;
use crate::model::{Exit, Oid, Process, State};
use crate::trust::local::Local;

/// What a run's claim writes into the record.
pub struct Claim<'a> {
    /// The event name in the record's history (`running`, `resumed`).
    pub event: &'a str,
    pub argv: &'a [String],
    pub process: Process,
    /// The branch tip when the run starts (its notes cover what comes after).
    pub run_start: Option<Oid>,
    /// The background log, when there is one.
    pub log: Option<String>,
    /// The supervisor's socket (runs on a terminal): local proof only.
    pub socket: Option<String>,
}

/// Claim the run against exactly `stored` (no retry: a lost race runs nothing),
/// then write the local proof. If the proof cannot be written the command must
/// not run: the record is ended again (exit 127) and the error returned.
pub fn claim(ctx: &Ctx, stored: &Stored, c: Claim) -> Result<Stored> {
    let id = &stored.record.id;
    let process = c.process.clone();
    let claimed = store::try_update(&ctx.repo, stored, c.event, |r| {
        r.state = State::Running;
        r.command = c.argv.to_vec();
        r.process = Some(process);
        r.exit = None;
        r.run_start = c.run_start.map(|o| o.to_string());
        if c.log.is_some() {
            r.log = c.log.clone();
        }
    })
    .map_err(|e| {
        if store::is_conflict(&e) {
            e.context(format!(
                "session {id} changed while this run was starting (another start or stop got \
                 there first); nothing was run: check `git bullpen ls {id}`"
            ))
        } else {
            e.context(format!("cannot record that session {id} is running"))
        }
    })?;
    let local = Local::of(&ctx.layout, id);
    let proven = local
        .write_run(&local_run(&c.process, c.socket.clone()))
        .and_then(|()| local.write_command(c.argv));
    if let Err(e) = proven {
        let ended = store::try_update(&ctx.repo, &claimed, "exited (exit 127)", |r| {
            r.state = State::Exited;
            r.exit = Some(Exit::now(Some(127), None));
        });
        if let Err(undo) = ended {
            ctx.ui.warn(format!("{undo:#}"));
        }
        return Err(e.context(format!(
            "cannot write what this machine knows about session {id}'s run; nothing was run"
        )));
    }
    Ok(claimed)
}

/// The local proof of the run a record's process describes.
fn local_run(p: &Process, socket: Option<String>) -> LocalRun {
    LocalRun {
        schema: LOCAL_SCHEMA,
        command: ProcessRef {
            pid: p.pid,
            start_time: p.start_time,
            boot_id: p.boot_id.clone(),
        },
        supervisor: p.supervisor_pid.map(|pid| ProcessRef {
            pid,
            start_time: p.supervisor_start_time,
            boot_id: p.boot_id.clone(),
        }),
        background: p.background,
        started_at: p.started_at.clone(),
        terminal: p.terminal,
        socket,
    }
}
