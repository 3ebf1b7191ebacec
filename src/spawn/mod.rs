//! Creating a session: record, branch and worktree, so that a failure at any
//! step leaves nothing behind.
//!
//! Plan, then execute: resolve the base, check the id is free (record, branch,
//! path), create the record (`provisioning`: the arbiter for the id under races),
//! then `git worktree add -b` under the per-repository lock; a foreground run
//! claims it from there, a background one is marked `ready` first.

pub mod include;
pub mod ready;
mod root_hint;
pub mod undo;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::git::Unresolved;
use crate::model::agent::AgentName;
use crate::model::local::{Conversation, Created, LOCAL_SCHEMA};
use crate::model::record::SCHEMA;
use crate::model::{names, time, Error, Oid, Record, SessionId, State};
use crate::sys::lock::Lock;
use crate::sys::procfs;
use crate::trust::confined::{ConfinedPath, Unconfined};
use crate::trust::decide::Runnable;
use crate::trust::local::{local_command, Local};

/// A session [`create_session`] made: its record (`provisioning`, or `ready`
/// after [`mark_ready`]), and the directories it created on the way to the
/// worktree (outermost first), so that a start that fails can take them away
/// again ([`run_foreground`], [`start_background`]).
pub struct Provisioned {
    pub stored: Stored,
    /// The commit the session branch was created at.
    pub base: Oid,
    pub created_dirs: Vec<PathBuf>,
    /// The worktree directory it created (the only one its undo may remove).
    pub made: undo::Made,
}

/// What a new session runs, and how its worktree is made ready.
pub struct Spec<'a> {
    pub base: &'a str,
    /// The session's own command (for an agent: its profile's start form).
    pub command: &'a [String],
    /// The agent it runs and its extra arguments (`spawn --agent`, `bullpen.agent`).
    pub agent: Option<(&'a AgentName, &'a [String])>,
    /// Run `bullpen.setup` in the new worktree (not `--no-setup`).
    pub setup: bool,
    /// The agent conversation the session starts (recorded locally with its command).
    pub conversation: Option<&'a Conversation>,
}

/// A generated session id that is free now (the record's create still decides).
pub fn free_id(ctx: &Ctx) -> Result<SessionId> {
    for _ in 0..32 {
        let id = names::generate();
        if taken(ctx, &id)?.is_none() {
            return Ok(id);
        }
    }
    bail!("could not find a free session id after 32 tries; pass one explicitly")
}

/// Create the record, branch and worktree of a new session and make the
/// worktree ready (`.worktreeinclude`, setup), leaving it `provisioning` for
/// [`run_foreground`] to claim or [`mark_ready`] to hand on. On failure
/// nothing it created is left behind. With no `id`, ids are generated until one
/// is free (the record's create-if-absent is the arbiter under races).
pub fn create_session(ctx: &Ctx, id: Option<&SessionId>, spec: &Spec) -> Result<Provisioned> {
    let base = spec.base;
    let base_oid = ctx
        .repo
        .resolve_commit(base)
        .map_err(|why| base_error(base, why))?;
    // The branch (or tag) it names, for `ls --status` to say how far behind it
    // the session falls.
    let base_ref = ctx.repo.named_ref(base);
    // What to copy into the worktree is read, and refused when a pattern
    // reaches outside it, before anything is created.
    let include = include::Include::load(ctx)?;
    let provision = |id: &SessionId| {
        let record = new_record(ctx, id, base_oid, base_ref.clone(), spec);
        provision(
            ctx,
            Seed {
                record,
                parent: None,
                start: base_oid,
                upstream: None,
                event: "provisioning",
                include: &include,
                setup: spec.setup,
                conversation: spec.conversation,
            },
        )
    };
    match id {
        Some(id) => {
            check_free(ctx, id)?;
            provision(id)
        }
        None => {
            for _ in 0..32 {
                let id = names::generate();
                if taken(ctx, &id)?.is_some() {
                    continue;
                }
                match provision(&id) {
                    Err(e) if store::is_conflict(&e) => continue,
                    other => return other,
                }
            }
            bail!("could not find a free session id after 32 tries; pass one explicitly")
        }
    }
}

/// Why `--base` names no commit, and what to do.
fn base_error(base: &str, why: Unresolved) -> anyhow::Error {
    match why {
        Unresolved::NoCommitYet { branch } => Error::failed(format!(
            "there is no commit yet: {} has none to start a session from",
            branch.map_or("HEAD".to_string(), |b| format!("branch {b}"))
        ))
        .hint("make a first commit (`git commit`), then spawn again")
        .into(),
        Unresolved::Unknown => Error::failed(format!("invalid --base '{base}': unknown revision"))
            .hint(
                "--base takes a revision as `git rev-parse` does: a branch, a tag, a commit id, \
                 HEAD~2, origin/main",
            )
            .into(),
        Unresolved::NotACommit { kind } => Error::failed(format!(
            "invalid --base '{base}': it names a {kind}, not a commit"
        ))
        .into(),
        Unresolved::Unreadable(e) => e.context(format!("cannot resolve --base '{base}'")),
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
pub fn taken(ctx: &Ctx, id: &SessionId) -> Result<Option<Error>> {
    if store::load(&ctx.repo, id)?.is_some() {
        return Ok(Some(
            Error::refused(format!("session id '{id}' is already in use"))
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

/// The record of a new session, `provisioning`, naming this process as its
/// spawner and this clone as its creator; its command and agent from `spec`.
pub fn new_record(
    ctx: &Ctx,
    id: &SessionId,
    base: Oid,
    base_ref: Option<String>,
    spec: &Spec,
) -> Record {
    let command = spec.command;
    let path = ctx.layout.worktree_path(id);
    let now = time::now_rfc3339();
    let clone_id = crate::trust::local::clone_id(&ctx.layout)
        .map_err(|e| ctx.ui.warn(format!("{e:#}; the record names no clone")))
        .ok();
    Record {
        schema: SCHEMA,
        id: id.clone(),
        branch: id.branch(),
        worktree: path.to_string_lossy().into_owned(),
        base: base.to_string(),
        base_ref,
        command: command.to_vec(),
        agent: spec.agent.map(|(name, _)| name.to_string()),
        agent_args: spec.agent.map(|(_, a)| a.to_vec()).unwrap_or_default(),
        state: State::Provisioning,
        host: procfs::hostname(),
        created_at: now.clone(),
        updated_at: now,
        run_start: None,
        process: None,
        exit: None,
        log: None,
        spawner: Some(procfs::process_ref(std::process::id())),
        clone_id,
        resumed_from: None,
        extra: Default::default(),
    }
}

/// How a new session comes to be: its `provisioning` record (from
/// [`new_record`]: its command, agent and extra arguments are what this
/// machine records as the session's own in `created.json`), the record commit
/// it continues (a remote's, for `resume <remote>/<id>`), where its branch
/// starts, and how its worktree is made ready.
pub struct Seed<'a> {
    pub record: Record,
    /// The parent of the record's first commit.
    pub parent: Option<Oid>,
    /// The commit the branch is created at.
    pub start: Oid,
    /// The remote-tracking branch the new branch tracks (created from it with
    /// `git worktree add --track`); `None`: a new branch at `start`.
    pub upstream: Option<&'a str>,
    /// The event of the record's first commit.
    pub event: &'a str,
    /// What `.worktreeinclude` copies into the worktree (read before anything is created).
    pub include: &'a Option<include::Include>,
    /// Run `bullpen.setup` in the new worktree.
    pub setup: bool,
    /// The agent conversation it starts, recorded locally with its command.
    pub conversation: Option<&'a Conversation>,
}

/// Create a session from `seed` (its id checked free first), leaving it
/// `ready`; on failure nothing it created is left behind.
pub fn create_seeded(ctx: &Ctx, seed: Seed) -> Result<Provisioned> {
    check_free(ctx, &seed.record.id)?;
    provision(ctx, seed).and_then(|created| mark_ready(ctx, created))
}

fn provision(ctx: &Ctx, seed: Seed) -> Result<Provisioned> {
    let Seed {
        record,
        parent,
        start: base,
        upstream,
        event,
        include,
        setup,
        conversation,
    } = seed;
    let id = &record.id.clone();
    let path = ctx.layout.worktree_path(id);
    let root = &ctx.layout.worktree_root;
    // Anything at the path itself is refused as `Made::create` does.
    let confined = match ConfinedPath::new(root, &path) {
        Ok(confined) => confined,
        Err(Unconfined::Symlink(at)) if at == path => {
            return Err(Error::refused(format!("{} already exists", path.display()))
                .hint("pick another id, or remove it")
                .into())
        }
        Err(why) => bail!(
            "{} is not inside the worktree root {}: {}",
            path.display(),
            root.display(),
            why.describe(&path, root)
        ),
    };
    let spawner = record.spawner.clone();
    let command = record.command.clone();
    let agent = record.agent.clone().map(|a| (a, record.agent_args.clone()));
    let stored = store::create_from(&ctx.repo, record, parent, event).map_err(|e| {
        if store::is_conflict(&e) {
            e.context(Error::refused(format!(
                "session id '{id}' is already in use"
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
            let agent = agent
                .as_ref()
                .map(|(name, args)| (name.as_str(), args.as_slice()));
            local.write_created(&Created {
                schema: LOCAL_SCHEMA,
                worktree: stored.record.worktree.clone(),
                worktree_root: ctx.layout.worktree_root.to_string_lossy().into_owned(),
                created_at: stored.record.created_at.clone(),
                spawner,
                command: Some(local_command(&command, agent)),
            })
        })
        .and_then(|()| match conversation {
            Some(c) => local.write_conversation(c),
            None => Ok(()),
        });
    let (created_dirs, made) =
        match written.and_then(|()| add_worktree(ctx, id, &confined, base, upstream)) {
            Ok(made) => made,
            Err(e) => {
                forget(ctx, &stored, &local);
                return Err(e);
            }
        };
    // Ready to work in: the ignored files `.worktreeinclude` names, then setup,
    // while the record still says `provisioning` (gc and resume leave it to
    // this spawn). A failure takes everything away again.
    if let Err(e) = ready::make_ready(ctx, &stored.record, include, setup) {
        match Lock::acquire(&ctx.layout.lock_path()) {
            Ok(_lock) => undo_worktree(ctx, &id.branch_ref(), &made, base),
            Err(undo) => ctx.ui.warn(format!("{undo:#}")),
        }
        remove_empty_dirs(&created_dirs);
        forget(ctx, &stored, &local);
        return Err(e.context(format!(
            "session {id} was not created; nothing of it is left"
        )));
    }
    root_hint::leave(ctx);
    Ok(Provisioned {
        stored,
        base,
        created_dirs,
        made,
    })
}

/// Record `ready`: one compare-and-swap from the `provisioning` record the
/// spawn created; if anything changed it meanwhile, the session is not this
/// spawn's to hand out, and everything it made is taken away again. A
/// foreground run does without (its claim moves the record from
/// `provisioning` to `running` in one commit); a background one is handed to
/// its supervisor `ready`.
pub fn mark_ready(ctx: &Ctx, created: Provisioned) -> Result<Provisioned> {
    let Provisioned {
        stored,
        base,
        created_dirs,
        made,
    } = created;
    match store::try_update(&ctx.repo, &stored, "ready", |r| r.state = State::Ready) {
        Ok(ready) => Ok(Provisioned {
            stored: ready,
            base,
            created_dirs,
            made,
        }),
        Err(e) => Err(undo_unclaimed(
            ctx,
            Provisioned {
                stored,
                base,
                created_dirs,
                made,
            },
            e,
            "the worktree was created but its record could not be marked ready",
        )),
    }
}

/// A new session's foreground run: its claim moves the record from
/// `provisioning` to `running` (no `ready` in between). A claim that lost its
/// compare-and-swap ran nothing: the spawn then undoes itself, as for a lost
/// `ready` ([`mark_ready`]).
pub fn run_foreground(
    ctx: &Ctx,
    created: Provisioned,
    command: &Runnable,
    sandbox: crate::model::sandbox::Mode,
) -> Result<i32> {
    let stored = created.stored.clone();
    match crate::run::run_foreground(ctx, stored, command, "running", sandbox) {
        Err(e) if crate::run::claim::is_lost(&e) => Err(undo_unclaimed(
            ctx,
            created,
            e,
            "the run could not be claimed",
        )),
        other => other,
    }
}

/// Take away everything a spawn made after the first change of its record
/// failed (`e`; nothing ran): the worktree, the branch while at its base, the
/// directories made for it and the local state; the record too, unless it
/// changed (then it is not this spawn's, and `e` says so). `failed` is the
/// context of an error other than a lost race.
fn undo_unclaimed(
    ctx: &Ctx,
    created: Provisioned,
    e: anyhow::Error,
    failed: &str,
) -> anyhow::Error {
    let Provisioned {
        stored,
        base,
        created_dirs,
        made,
    } = created;
    let id = &stored.record.id;
    let local = Local::of(&ctx.layout, id);
    // Under the lock, as every undo: another spawn or gc may be at this path.
    match Lock::acquire(&ctx.layout.lock_path()) {
        Ok(_lock) => undo_worktree(ctx, &id.branch_ref(), &made, base),
        Err(undo) => ctx.ui.warn(format!("{undo:#}")),
    }
    remove_empty_dirs(&created_dirs);
    if let Err(undo) = local.remove() {
        ctx.ui.warn(format!("{undo:#}"));
    }
    if store::is_conflict(&e) {
        e.context(
            Error::failed(format!(
                "the record of session {id} changed while it was being created (by another \
                 bullpen, or by hand); its worktree and branch were removed again"
            ))
            .hint(format!("see `git log refs/bullpen/sessions/{id}`")),
        )
    } else {
        forget(ctx, &stored, &local);
        e.context(failed.to_string())
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

/// `git worktree add -b` under the per-repository lock; undoes its own traces on
/// failure. Returns the directories it created for the worktree's parent, and
/// the worktree directory it created.
fn add_worktree(
    ctx: &Ctx,
    id: &SessionId,
    confined: &ConfinedPath,
    base: Oid,
    upstream: Option<&str>,
) -> Result<(Vec<PathBuf>, undo::Made)> {
    let path = confined.path();
    let parent = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    let created_dirs = create_dirs(parent)?;
    match add_worktree_locked(ctx, id, confined, base, upstream) {
        Ok(made) => Ok((created_dirs, made)),
        Err(e) => {
            remove_empty_dirs(&created_dirs);
            Err(e)
        }
    }
}

/// Leave the worktree root as it was: remove the (empty) dirs we made, innermost first.
fn remove_empty_dirs(created_dirs: &[PathBuf]) {
    for dir in created_dirs.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// `create_dir_all`, returning the directories it created, outermost first.
fn create_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let missing: Vec<_> = dir
        .ancestors()
        .take_while(|d| d.symlink_metadata().is_err())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the worktree root {}", dir.display()))?;
    Ok(missing.into_iter().rev().collect())
}

fn add_worktree_locked(
    ctx: &Ctx,
    id: &SessionId,
    confined: &ConfinedPath,
    base: Oid,
    upstream: Option<&str>,
) -> Result<undo::Made> {
    let path = confined.path();
    let _lock = Lock::acquire(&ctx.layout.lock_path())?;
    // Re-check under the lock: another process may have taken the branch or path.
    let branch_ref = id.branch_ref();
    if ctx.repo.ref_target(&branch_ref)?.is_some() {
        bail!("branch {} already exists", id.branch());
    }
    // Made here, exclusively: a directory someone else made (another repository
    // sharing the worktree root has a lock of its own) is never this spawn's.
    let made = undo::Made::create(ctx, confined)?;
    let added = match upstream {
        None => ctx
            .repo
            .worktree_add_branch_made_here(path, &id.branch(), base),
        Some(upstream) => ctx.repo.worktree_add_tracking(path, &id.branch(), upstream),
    };
    if let Err(e) = added {
        undo_worktree(ctx, &branch_ref, &made, base);
        return Err(e.context(format!(
            "cannot create the worktree of session {id} at {}",
            path.display()
        )));
    }
    // While nothing else runs there: an index whose first status re-hashes
    // nothing (`git::fresh_index`). Only a cost saved later, never a failure.
    if let Err(e) = ctx.repo.settle_fresh_index(path) {
        ctx.ui.warn(format!(
            "{e:#}; the first status in {} reads its files again",
            path.display()
        ));
    }
    Ok(made)
}

/// Best effort, under the lock: remove what a failed `git worktree add` may
/// have left of what this spawn made.
fn undo_worktree(ctx: &Ctx, branch_ref: &str, made: &undo::Made, base: Oid) {
    undo::undo_failed_add(ctx, made);
    if let Ok(Some(tip)) = ctx.repo.ref_target(branch_ref) {
        if tip == base {
            match ctx
                .repo
                .delete_ref(branch_ref, tip, "bullpen: spawn failed")
            {
                Err(e) => ctx.ui.warn(format!("could not delete {branch_ref}: {e:#}")),
                // A branch made to track a remote's (`resume <remote>/<id>`)
                // has its upstream in the config: it goes with the branch.
                Ok(()) => {
                    let branch = branch_ref.strip_prefix("refs/heads/").unwrap_or(branch_ref);
                    if let Err(e) = ctx.repo.remove_branch_config(branch) {
                        ctx.ui.warn(format!("{e:#}"));
                    }
                }
            }
        }
    }
}

/// `spawn --bg`: start the session's background run. If it could not be started
/// (no log, no supervisor, a supervisor that failed before it claimed the
/// record), spawn fails closed as it does when `git worktree add` fails: the
/// record, the branch, the worktree and the directories made for it go.
///
/// The record decides: it is deleted only if it is still the `ready` commit
/// spawn wrote (one compare-and-swap). A supervisor that claimed it (and then,
/// say, could not execute the command: `exited` 127) moved it, and then
/// everything stays, as for any run that started. A supervisor still on its way
/// loses the race instead: its claim finds no record, and it runs nothing.
pub fn start_background(
    ctx: &Ctx,
    created: Provisioned,
    command: &Runnable,
    sandbox: crate::model::sandbox::Mode,
) -> Result<i32> {
    let Provisioned {
        stored,
        base,
        created_dirs,
        made,
    } = created;
    let err = match crate::run::run_background(ctx, stored.clone(), command, "running", sandbox) {
        Ok(status) => return Ok(status),
        Err(err) => err,
    };
    match store::delete(&ctx.repo, &stored, "bullpen: spawn --bg failed") {
        Ok(()) => {}
        Err(e) if store::is_conflict(&e) => {
            // Claimed: the run started (and its record says how it went).
            return Err(err);
        }
        Err(e) => {
            ctx.ui.warn(format!(
                "could not remove the record of the session that did not start, so its \
                 worktree and branch stay too: {e:#}"
            ));
            return Err(err);
        }
    }
    let id = &stored.record.id;
    // Before the worktree and branch go: while they hold the id, no new session
    // of that id can have opened this log.
    remove_log(ctx, &ctx.layout.log_path(id));
    match Lock::acquire(&ctx.layout.lock_path()) {
        Ok(_lock) => undo_worktree(ctx, &id.branch_ref(), &made, base),
        Err(e) => ctx.ui.warn(format!(
            "could not remove the worktree of the session that did not start: {e:#}"
        )),
    }
    remove_empty_dirs(&created_dirs);
    if let Err(e) = Local::of(&ctx.layout, id).remove() {
        ctx.ui.warn(format!("{e:#}"));
    }
    Err(err.context(format!("session {id} did not start; nothing of it is left")))
}

/// The log the dispatcher opened for a run that never started: its record is
/// gone, so a later session of that id must not show it. What the supervisor
/// wrote there before it failed is the error it reported (already in `err`).
fn remove_log(ctx: &Ctx, log: &Path) {
    match std::fs::remove_file(log) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => ctx
            .ui
            .warn(format!("could not remove the log {}: {e}", log.display())),
    }
    if let Some(dir) = log.parent() {
        let _ = std::fs::remove_dir(dir); // only when empty
    }
}
