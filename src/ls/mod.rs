//! ls: every session with its observed state. `table` turns records and facts
//! into rows and the table (pure); this file gathers the facts.

pub mod table;

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::{Oid, SessionId, State};
use crate::sys::procfs;
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
    Facts {
        alive,
        worktree_exists,
        ahead,
    }
}
