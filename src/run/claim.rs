//! Claiming a run: the local proof that this machine started it (`trust::local`,
//! `run-<pid>.json`), then the one compare-and-swap that makes a record say
//! `running` with the command's pid, both while the command is still held at
//! the gate.
//!
//! The claim records what this run runs in `process.command` and leaves the
//! session's own `command` (and the one recorded locally) as they are: a
//! one-off `resume <id> -- <cmd>` does not change what a plain `resume` runs.

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::local::{LocalRun, LOCAL_SCHEMA};
use crate::model::process::ProcessRef;
use crate::model::{Oid, Process, State};
use crate::trust::local::Local;

/// What a run's claim writes into the record.
pub struct Claim<'a> {
    /// The event name in the record's history (`running`, `resumed`).
    pub event: &'a str,
    /// What this run runs (recorded as `process.command`).
    pub argv: &'a [String],
    pub process: Process,
    /// The branch tip when the run starts (its notes cover what comes after).
    pub run_start: Option<Oid>,
    /// The background log, when there is one.
    pub log: Option<String>,
    /// The supervisor's socket (runs on a terminal): local proof only.
    pub socket: Option<String>,
    /// How the run is confined (`--sandbox`): the record's `sandbox`.
    pub sandbox: Option<serde_json::Value>,
}

/// Claim the run against exactly `stored` (no retry: a lost race runs nothing).
/// The local proof of the run is written first, so that it exists as soon as the
/// record says `running` (a `stop` right then must find it); a lost claim takes
/// it away again. If the proof cannot be written the command must not run.
pub fn claim(ctx: &Ctx, stored: &Stored, c: Claim) -> Result<Stored> {
    let id = &stored.record.id;
    let local = Local::of(&ctx.layout, id);
    let run = local_run(&c.process, c.socket.clone());
    local.write_run(&run).with_context(|| {
        format!("cannot write what this machine knows about session {id}'s run; nothing was run")
    })?;
    let mut process = c.process.clone();
    process.command = Some(c.argv.to_vec());
    let claimed = store::try_update(&ctx.repo, stored, c.event, |r| {
        r.state = State::Running;
        r.process = Some(process);
        r.exit = None;
        r.run_start = c.run_start.map(|o| o.to_string());
        if c.log.is_some() {
            r.log = c.log.clone();
        }
        match &c.sandbox {
            Some(v) => {
                r.extra
                    .insert(crate::model::sandbox::RECORD_KEY.to_owned(), v.clone());
            }
            None => {
                r.extra.remove(crate::model::sandbox::RECORD_KEY);
            }
        }
    })
    .map_err(|e| {
        if let Err(undo) = local.remove_run(run.command.pid) {
            ctx.ui.warn(format!("{undo:#}"));
        }
        if store::is_conflict(&e) {
            e.context(Lost(id.clone()))
        } else {
            e.context(format!("cannot record that session {id} is running"))
        }
    })?;
    // The run this claim replaced is over for good (nothing of it lives: the
    // start checked, and the claim landed on exactly that record): its proof
    // authorises nothing now, and a socket its killed supervisor left goes.
    if let Some(previous) = &stored.record.process {
        if previous.pid != run.command.pid {
            super::finish::forget_run(ctx, id, previous.pid);
        }
    }
    Ok(claimed)
}

/// The claim of session `.0` lost its compare-and-swap: nothing was run
/// ([`is_lost`]: a new session's spawn then takes away what it made).
#[derive(Debug)]
pub struct Lost(pub crate::model::SessionId);

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = &self.0;
        write!(
            f,
            "session {id} changed while this run was starting (another start or stop got \
             there first); nothing was run: check `git bullpen ls {id}`"
        )
    }
}

/// Whether `err` is a claim's lost compare-and-swap ([`Lost`]).
pub fn is_lost(err: &anyhow::Error) -> bool {
    err.downcast_ref::<Lost>().is_some()
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
