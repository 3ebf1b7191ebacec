//! Creating a session: record, branch and worktree, so that a failure at any
//! step leaves nothing behind.
//!
//! Plan, then execute: resolve the base, check the id is free (record, branch,
//! path), create the record (`provisioning`: the arbiter for the id under races),
//! then `git worktree add -b` under the per-repository lock, and mark it `ready`.

pub mod undo;

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::local::{Created, LOCAL_SCHEMA};
use crate::model::record::SCHEMA;
use crate::model::{names, time, Error, Oid, Record, SessionId, State};
use crate::sys::lock::Lock;
use crate::sys::procfs;
use crate::trust::local::Local;

/// Create the record, branch and worktree of a new session, leaving it `ready`.
/// On failure nothing it created is left behind. With no `id`, ids are generated
/// until one is free (the record's create-if-absent is the arbiter under races).
pub fn create_session(
    ctx: &Ctx,
    id: Option<&SessionId>,
    base: &str,
    command: &[String],
) -> Result<Stored> {
    let base_oid = ctx
        .repo
        .resolve_commit(base)
        .with_context(|| format!("cannot resolve --base {base:?} to a commit"))?;
    match id {
        Some(id) => {
            check_free(ctx, id)?;
            provision(ctx, id, base_oid, command)
        }
        None => {
            for _ in 0..32 {
                let id = names::generate();
                if taken(ctx, &id)?.is_some() {
                    continue;
                }
                match provision(ctx, &id, base_oid, command) {
                    Err(e) if store::is_conflict(&e) => continue,
                    other => return other,
                }
            }
            bail!("could not find a free session id after 32 tries; pass one explicitly")
        }
    }
}

/// Cheap checks with clear messages, before anything is created.
fn check_free(ctx: &Ctx, id: &SessionId) -> Result<()> {
    match taken(ctx, id)? {
        Some(why) => Err(why.into()),
        None => Ok(()),
    }
}

/// Why `id` cannot be used, if it cannot (`None`: free). Errors reading the
/// repository are errors, not "taken".
fn taken(ctx: &Ctx, id: &SessionId) -> Result<Option<Error>> {
    if store::load(&ctx.repo, id)?.is_some() {
        return Ok(Some(
            Error::refused(format!("session id \"{id}\" is already in use"))
                .hint(format!("see `git bullpen ls --all {id}`; pick another id")),
        ));
    }
    if ctx.repo.ref_target(&id.branch_ref())?.is_some() {
        return Ok(Some(
            Error::refused(format!("branch {} already exists", id.branch()))
                .hint("pick another id, or delete the branch"),
        ));
    }
    let path = ctx.layout.worktree_path(id);
    if path.symlink_metadata().is_ok() {
        return Ok(Some(
            Error::refused(format!("{} already exists", path.display()))
                .hint("pick another id, or remove it"),
        ));
    }
    Ok(None)
}

fn provision(ctx: &Ctx, id: &SessionId, base: Oid, command: &[String]) -> Result<Stored> {
    let path = ctx.layout.worktree_path(id);
    let now = time::now_rfc3339();
    let record = Record {
        schema: SCHEMA,
        id: id.clone(),
        branch: id.branch(),
        worktree: path.to_string_lossy().into_owned(),
        base: base.to_string(),
        command: command.to_vec(),
        state: State::Provisioning,
        host: procfs::hostname(),
        created_at: now.clone(),
        updated_at: now,
        run_start: None,
        process: None,
        exit: None,
        log: None,
        spawner: Some(procfs::process_ref(std::process::id())),
        extra: Default::default(),
    };
    if !ctx.layout.is_confined(&path) {
        bail!(
            "{} is not inside the worktree root {}",
            path.display(),
            ctx.layout.worktree_root.display()
        );
    }
    let spawner = record.spawner.clone();
    let stored = store::create(&ctx.repo, record, "provisioning").map_err(|e| {
        if store::is_conflict(&e) {
            e.context(Error::refused(format!(
                "session id \"{id}\" is already in use"
            )))
        } else {
            e
        }
    })?;
    // The record's create won the id; what this machine knows about the session
    // is written before anything else exists (see `trust::local`).
    let local = Local::of(&ctx.layout, id);
    let written = spawner
        .context("internal: the new record names no spawner")
        .and_then(|spawner| {
            local.write_created(&Created {
                schema: LOCAL_SCHEMA,
                worktree: stored.record.worktree.clone(),
                worktree_root: ctx.layout.worktree_root.to_string_lossy().into_owned(),
                created_at: stored.record.created_at.clone(),
                spawner,
            })
        })
        .and_then(|()| local.write_command(command));
    let result = written.and_then(|()| add_worktree(ctx, id, &path, base));
    if let Err(e) = result {
        forget(ctx, &stored, &local);
        return Err(e);
    }
    // One compare-and-swap from the record this spawn created: if anything
    // changed it meanwhile, the session is not this spawn's to hand out.
    match store::try_update(&ctx.repo, &stored, "ready", |r| r.state = State::Ready) {
        Ok(ready) => Ok(ready),
        Err(e) => {
            undo_worktree(ctx, &id.branch_ref(), &path, base);
            if let Err(undo) = local.remove() {
                ctx.ui.warn(format!("{undo:#}"));
            }
            if store::is_conflict(&e) {
                Err(e.context(
                    Error::failed(format!(
                    "the record of session {id} changed while it was being created (by another \
                     bullpen, or by hand); its worktree and branch were removed again"
                ))
                    .hint(format!("see `git log refs/bullpen/sessions/{id}`")),
                ))
            } else {
                forget(ctx, &stored, &local);
                Err(e.context("the worktree was created but its record could not be marked ready"))
            }
        }
    }
}

/// Undo a spawn's record and local state (its worktree is gone or never was).
fn forget(ctx: &Ctx, stored: &Stored, local: &Local) {
    if let Err(undo) = store::delete(&ctx.repo, stored, "bullpen: spawn failed") {
        ctx.ui.warn(format!(
            "could not remove the record of the failed session: {undo:#}"
        ));
    }
    if let Err(undo) = local.remove() {
        ctx.ui.warn(format!("{undo:#}"));
    }
}

/// `git worktree add -b` under the per-repository lock; undoes its own traces on failure.
fn add_worktree(ctx: &Ctx, id: &SessionId, path: &Path, base: Oid) -> Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    let created_dirs = create_dirs(parent)?;
    let result = add_worktree_locked(ctx, id, path, base);
    if result.is_err() {
        // Leave the worktree root as it was: remove the (empty) dirs we made.
        for dir in created_dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    result
}

/// `create_dir_all`, returning the directories it created, outermost first.
fn create_dirs(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let missing: Vec<_> = dir
        .ancestors()
        .take_while(|d| d.symlink_metadata().is_err())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the worktree root {}", dir.display()))?;
    Ok(missing.into_iter().rev().collect())
}

fn add_worktree_locked(ctx: &Ctx, id: &SessionId, path: &Path, base: Oid) -> Result<()> {
    let _lock = Lock::acquire(&ctx.layout.lock_path())?;
    // Re-check under the lock: another process may have taken the branch or path.
    let branch_ref = id.branch_ref();
    if ctx.repo.ref_target(&branch_ref)?.is_some() {
        bail!("branch {} already exists", id.branch());
    }
    if path.symlink_metadata().is_ok() {
        bail!("{} already exists", path.display());
    }
    let added = ctx.repo.worktree_add_new_branch(path, &id.branch(), base);
    if let Err(e) = added {
        undo_worktree(ctx, &branch_ref, path, base);
        return Err(e.context(format!(
            "cannot create the worktree of session {id} at {}",
            path.display()
        )));
    }
    Ok(())
}

/// Best effort: remove what a failed `git worktree add` may have left.
fn undo_worktree(ctx: &Ctx, branch_ref: &str, path: &Path, base: Oid) {
    undo::undo_failed_add(ctx, path);
    if let Ok(Some(tip)) = ctx.repo.ref_target(branch_ref) {
        if tip == base {
            if let Err(e) = ctx
                .repo
                .delete_ref(branch_ref, tip, "bullpen: spawn failed")
            {
                ctx.ui.warn(format!("could not delete {branch_ref}: {e:#}"));
            }
        }
    }
}
