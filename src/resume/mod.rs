//! resume: run a session's command again, in its recorded worktree and nowhere
//! else. The worktree is recreated when that is provably safe (nothing at the
//! path, the branch exists); anything else is refused. `facts` gathers what is at
//! the recorded path, `decide` (pure) says where to run or why not.

pub mod decide;
pub mod facts;

use std::path::Path;

use anyhow::{anyhow, Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::git::EntryRemoval;
use crate::model::command::render_command;
use crate::model::{Error, SessionId, State};
use crate::run;
use crate::sys::lock::Lock;
use crate::trust::decide::{created_here, may_run_recorded, Distrust};
use crate::trust::local::Local;
use decide::{decide, explain, start_again_hint, Placement};

/// What to resume, and how.
pub struct Request {
    pub id: SessionId,
    /// The command to run; empty: the recorded one.
    pub command: Vec<String>,
    pub bg: bool,
    /// Make `command` the session's own command (`--save`): recorded, and
    /// written to this machine's `command.json`, before it runs.
    pub save: bool,
}

/// Resume a session; the shell-style status of its command.
pub fn resume(ctx: &Ctx, req: Request) -> Result<i32> {
    let stored = store::require(&ctx.repo, &req.id)?;
    refuse_collected(ctx, &stored)?;
    run::liveness::ensure_provisioned(ctx, &stored.record)?;
    run::liveness::ensure_not_running(ctx, &stored)?;
    note_lost(ctx, &stored);
    let argv = if req.command.is_empty() {
        ensure_recorded_here(ctx, &stored)?;
        stored.record.command.clone()
    } else {
        req.command
    };
    let mut stored = place(ctx, stored)?;
    if req.save {
        stored = save_command(ctx, stored, &argv)?;
    }
    ctx.ui.info(format!(
        "resuming session {} on {} in {}",
        stored.record.id, stored.record.branch, stored.record.worktree
    ));
    if req.bg {
        return run::run_background(ctx, stored, &argv, "resumed");
    }
    run::run_foreground(ctx, stored, &argv, "resumed")
}

/// A collected session has no worktree to go back to: say so, and how to start
/// again from what is left of its branch.
fn refuse_collected(ctx: &Ctx, stored: &Stored) -> Result<()> {
    if stored.record.state != State::Collected {
        return Ok(());
    }
    let f = facts::inspect(ctx, &stored.record)?;
    Err(Error::refused(format!(
        "session {} was collected (`git bullpen gc` or `rm` removed its worktree); there \
         is nothing to resume",
        stored.record.id
    ))
    .hint(start_again_hint(&f.id, f.branch_exists, &f.remote_branches))
    .into())
}

/// A plain resume runs the record's command only when this machine recorded
/// exactly that command: a record may come from a fetch or a hand edit.
fn ensure_recorded_here(ctx: &Ctx, stored: &Stored) -> Result<()> {
    let record = &stored.record;
    let local = Local::of(&ctx.layout, &record.id).command();
    let local = local
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    let Err(why) = may_run_recorded(&record.command, local) else {
        return Ok(());
    };
    let id = &record.id;
    let shown = match render_command(&record.command) {
        s if s.is_empty() => "(none)".to_owned(),
        s => s,
    };
    let mut e = Error::refused(format!(
        "not running the recorded command of session {id}, `{shown}`: {}",
        why.describe()
    ))
    .hint(format!(
        "if you mean to run it, name it: git bullpen resume {id} -- {shown}"
    ));
    if let Distrust::CommandDiffers { local } = &why {
        e = e.hint(format!(
            "the command this machine recorded for it: git bullpen resume {id} -- {}",
            render_command(local)
        ));
    }
    Err(e.into())
}

/// `resume --save`: the command becomes the session's own, in the record and in
/// this machine's local proof, so that a plain `resume` runs it from now on.
fn save_command(ctx: &Ctx, stored: Stored, argv: &[String]) -> Result<Stored> {
    let id = stored.record.id.clone();
    let saved = store::update(&ctx.repo, &stored, "command saved", |r| {
        r.command = argv.to_vec();
    })
    .with_context(|| format!("cannot record the new command of session {id}"))?;
    Local::of(&ctx.layout, &id)
        .write_command(argv)
        .with_context(|| format!("cannot record the new command of session {id} locally"))?;
    ctx.ui.info(format!(
        "session {id}'s command is now `{}`",
        render_command(argv)
    ));
    Ok(saved)
}

/// A session recorded running whose process is gone (lost) may be resumed: say so.
fn note_lost(ctx: &Ctx, stored: &Stored) {
    let record = &stored.record;
    if let (State::Running, Some(p)) = (record.state, &record.process) {
        ctx.ui.info(format!(
            "session {} was recorded running (pid {}), but that process is gone",
            record.id, p.pid
        ));
    }
}

/// Decide where the session runs; recreate its worktree when that is the decision.
/// Refusals change nothing (not even the lock file).
fn place(ctx: &Ctx, stored: Stored) -> Result<Stored> {
    let f = facts::inspect(ctx, &stored.record)?;
    match decide(&f) {
        Placement::Use => Ok(stored),
        Placement::Refuse(why) => Err(explain(&why, &f).into()),
        Placement::Recreate { .. } => recreate(ctx, stored),
    }
}

/// `git worktree add <path> bullpen/<id>` under the per-repository lock, after
/// deciding again under it (another process may have got there first).
fn recreate(ctx: &Ctx, stored: Stored) -> Result<Stored> {
    let path = Path::new(&stored.record.worktree).to_path_buf();
    let parent = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create the worktree root {}", parent.display()))?;
    let lock = Lock::acquire(&ctx.layout.lock_path())?;
    let f = facts::inspect(ctx, &stored.record)?;
    let stale_entries = match decide(&f) {
        Placement::Recreate { stale_entries } => stale_entries,
        Placement::Use => return Ok(stored),
        Placement::Refuse(why) => return Err(explain(&why, &f).into()),
    };
    if !stale_entries.is_empty() {
        // Removing git's entry is a deletion: only for a worktree bullpen created here.
        let created = Local::of(&ctx.layout, &stored.record.id).created();
        let created = created
            .as_ref()
            .map(Option::as_ref)
            .map_err(|e| format!("{e:#}"));
        if let Err(why) = created_here(&stored.record.worktree, created) {
            return Err(Error::refused(format!(
                "cannot recreate the worktree of session {}: git still registers {} and {}",
                stored.record.id,
                path.display(),
                why.describe()
            ))
            .hint(format!(
                "if that entry is stale, `git worktree remove {}`, then resume again",
                path.display()
            ))
            .into());
        }
    }
    for admin_id in stale_entries {
        ctx.ui.info(format!(
            "git still registers the worktree {} (its directory is gone); removing that \
             entry ({admin_id}) first",
            path.display()
        ));
        match ctx.repo.remove_admin_entry(&admin_id, &path) {
            Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
            Ok(EntryRemoval::Refused(why)) => {
                return Err(Error::refused(format!(
                    "cannot recreate the worktree of session {}: git's entry {admin_id} for {} \
                     stays: {why}",
                    stored.record.id,
                    path.display()
                ))
                .into())
            }
            Err(e) => {
                return Err(e.context(format!(
                    "cannot remove git's stale worktree entry {admin_id} for {}",
                    path.display()
                )))
            }
        }
    }
    ctx.ui.info(format!(
        "worktree {} is gone; recreating it from {}",
        path.display(),
        f.branch
    ));
    if let Err(e) = ctx.repo.worktree_add_existing(&path, &f.branch) {
        crate::spawn::undo::undo_failed_add(ctx, &path);
        return Err(e.context(format!(
            "cannot recreate the worktree of session {} at {}",
            stored.record.id,
            path.display()
        )));
    }
    drop(lock);
    store::update(&ctx.repo, &stored, "worktree recreated", |_| {})
        .context("the worktree was recreated but its record could not be updated")
}
