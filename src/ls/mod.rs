//! ls: every session with its observed state. `table` turns records and facts
//! into rows and the table (pure); this file gathers the facts. Plain `ls`
//! costs reading the records (and one short walk per session for `ahead`);
//! `--status` adds what decides a clean-up, from the facts gc uses: one
//! publish walk for all sessions, and the status of every worktree, in
//! parallel.

pub mod attention;
pub mod fetched;
pub mod fit;
pub mod remote;
pub mod repos;
pub mod screen_line;
pub mod status;
pub mod table;

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;

use crate::context::{session_at, Ctx};
use crate::git::cache::ObjectCache;
use crate::git::store::{self, Stored};
use crate::model::id::BRANCH_PREFIX;
use crate::model::{Oid, SessionId, State};
use crate::sys::procfs;
use crate::trust::local::Local;
use table::{row, Facts, Row};

/// The sessions to list: the named ones (each must exist), or all (collected
/// ones only with `all`). A record that cannot be read is reported and skipped.
/// Also how many collected sessions were left out.
pub fn sessions(
    ctx: &Ctx,
    ids: &[SessionId],
    all: bool,
    cache: &mut ObjectCache,
) -> Result<(Vec<Stored>, usize)> {
    if ids.is_empty() {
        let (mut sessions, unreadable) = store::load_all_cached(&ctx.repo, cache)?;
        for u in &unreadable {
            ctx.ui
                .warn(format!("skipping {}: {:#}", u.refname, u.error));
        }
        let before = sessions.len();
        if !all {
            sessions.retain(|s| s.record.state != State::Collected);
        }
        let hidden = before - sessions.len();
        Ok((sessions, hidden))
    } else {
        let named = ids
            .iter()
            .map(|id| store::require(&ctx.repo, id))
            .collect::<Result<_>>()?;
        Ok((named, 0))
    }
}

/// The rows for these sessions; `cwd` decides which one is marked current;
/// `status` adds what decides a clean-up. Commits ahead come from `cache` where
/// it has them (and are added to it where it does not).
pub fn rows(
    ctx: &Ctx,
    sessions: &[Stored],
    cwd: &Path,
    status: bool,
    cache: &mut ObjectCache,
) -> Vec<Row> {
    let current = session_at(sessions, cwd);
    let mut status = if status {
        status::prepare(ctx, sessions, cache).gather(ctx)
    } else {
        Vec::new()
    };
    // Every session branch in one listing, rather than one lookup each, when
    // that is cheaper: not for `ls <id>` of a few among thousands.
    let tips: HashMap<String, Oid> = if sessions.len() > 16 {
        ctx.repo
            .ref_targets_with_prefix(BRANCH_PREFIX)
            .unwrap_or_default()
            .into_iter()
            .collect()
    } else {
        HashMap::new()
    };
    sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut f = gather(ctx, s, &tips, cache);
            f.current = current == Some(i);
            f.status = (!status.is_empty()).then(|| std::mem::take(&mut status[i]));
            with_resume_command(ctx, &s.record, row(&s.record, &f))
        })
        .collect()
}

/// `resume_command`: what a plain `resume <id>` runs now, exactly (null where
/// it would refuse).
fn with_resume_command(ctx: &Ctx, r: &crate::model::Record, mut row: Row) -> Row {
    row.resume_command = crate::resume::command::resume_command(ctx, r);
    row
}

/// Facts for one row. A fact that cannot be read is reported and left unknown:
/// one bad record never hides the others.
fn gather(ctx: &Ctx, s: &Stored, tips: &HashMap<String, Oid>, cache: &mut ObjectCache) -> Facts {
    let r = &s.record;
    let alive = r.state == State::Running
        && r.process.as_ref().is_some_and(|p| {
            // A run is alive while the process that records its end is.
            procfs::is_session_alive(p)
        });
    let worktree_exists = Path::new(&r.worktree).is_dir();
    let ahead = (|| -> Result<Option<usize>> {
        let branch = r.id.branch_ref();
        let tip = match tips.get(&branch) {
            Some(tip) => *tip,
            // Not a plain ref to an object (symbolic), or gone.
            None => match ctx.repo.ref_target(&branch)? {
                Some(tip) => tip,
                None => return Ok(None),
            },
        };
        let base = r.base.parse::<Oid>()?;
        if let Some(n) = cache.ahead(tip, base) {
            return Ok(Some(n));
        }
        let n = ctx.repo.commits_between(tip, &[base])?.len();
        cache.put_ahead(tip, base, n);
        Ok(Some(n))
    })()
    .unwrap_or_else(|e| {
        ctx.ui.warn(format!(
            "{}: cannot count commits ahead of its base: {e:#}",
            r.id
        ));
        None
    });
    let session_command = r
        .agent
        .is_some()
        .then(|| crate::resume::command::shown_command(ctx, r));
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
        current: false,
        status: None,
        session_command,
        attached,
        last_output,
        activity: r
            .process
            .as_ref()
            .filter(|_| alive)
            .and_then(|p| activity_of(ctx, &r.id, p.pid)),
    }
}

/// What the run of command `pid` is doing, from the session's local state.
pub fn activity_of(ctx: &Ctx, id: &SessionId, pid: u32) -> Option<crate::model::activity::Stamped> {
    use crate::model::activity::{shown, Source};
    let local = Local::of(&ctx.layout, id);
    let terminal = local.activity(Source::Terminal).ok().flatten();
    let agent = local.activity(Source::Agent).ok().flatten();
    shown(terminal.as_ref(), agent.as_ref(), pid).cloned()
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
