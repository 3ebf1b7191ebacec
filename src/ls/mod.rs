//! ls: every session with its observed state. `table` turns records and facts
//! into rows and the table (pure); this file gathers the facts.

pub mod table;

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::{Oid, SessionId, State};
use crate::sys::procfs;
use crate::trust::local::Local;
use table::{row, Facts, Row};

/// The sessions to list: the named ones (each must exist), or all (collected
/// ones only with `all`). A record that cannot be read is reported and skipped.
pub fn sessions(ctx: &Ctx, ids: &[SessionId], all: bool) -> Result<Vec<Stored>> {
    if ids.is_empty() {
        let (mut sessions, unreadable) = store::load_all(&ctx.repo)?;
        for u in &unreadable {
            ctx.ui
                .warn(format!("skipping {}: {:#}", u.refname, u.error));
        }
        if !all {
            sessions.retain(|s| s.record.state != State::Collected);
        }
        Ok(sessions)
    } else {
        ids.iter().map(|id| store::require(&ctx.repo, id)).collect()
    }
}

/// The rows for these sessions.
pub fn rows(ctx: &Ctx, sessions: &[Stored]) -> Vec<Row> {
    sessions
        .iter()
        .map(|s| row(&s.record, &gather(ctx, s)))
        .collect()
}

/// Facts for one row. A fact that cannot be read is reported and left unknown:
/// one bad record never hides the others.
fn gather(ctx: &Ctx, s: &Stored) -> Facts {
    let r = &s.record;
    let alive = r.state == State::Running
        && r.process.as_ref().is_some_and(|p| {
            // A run is alive while the process that records its end is.
            procfs::is_session_alive(p)
        });
    let worktree_exists = Path::new(&r.worktree).is_dir();
    let ahead = (|| -> Result<Option<usize>> {
        let Some(tip) = ctx.repo.ref_target(&r.id.branch_ref())? else {
            return Ok(None);
        };
        let base = r.base.parse::<Oid>()?;
        Ok(Some(ctx.repo.commits_between(tip, &[base])?.len()))
    })()
    .unwrap_or_else(|e| {
        ctx.ui.warn(format!(
            "{}: cannot count commits ahead of its base: {e:#}",
            r.id
        ));
        None
    });
    let attached = r
        .process
        .as_ref()
        .filter(|p| alive && p.terminal)
        .map(|p| is_attached(ctx, s, p));
    // An empty log has had no output yet (the dispatcher creates it).
    let last_output = std::fs::metadata(ctx.layout.log_path(&r.id))
        .ok()
        .filter(|m| m.len() > 0)
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    Facts {
        alive,
        worktree_exists,
        ahead,
        attached,
        last_output,
    }
}

/// Whether a terminal is attached to the run: the supervisor's `attached.json`
/// names a client that lives as recorded, and that supervisor is the run's.
fn is_attached(ctx: &Ctx, s: &Stored, p: &crate::model::Process) -> bool {
    match Local::of(&ctx.layout, &s.record.id).attached() {
        Ok(Some(a)) => {
            Some(a.supervisor_pid) == p.supervisor_pid
                && a.client.is(&procfs::identity(a.client.pid))
        }
        _ => false,
    }
}
