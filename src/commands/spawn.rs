//! `git bullpen spawn`: a new session: branch, worktree, record; then run its command.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use crate::context::{info, Ctx};
use crate::fsutil::Lock;
use crate::git::Oid;
use crate::runner;
use crate::session::{Record, SessionId, State, SCHEMA};
use crate::store::{self, Stored};
use crate::{ids, time};

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn fix-login -- claude
  git bullpen spawn --base origin/main -- sh -c 'make test'
  git bullpen spawn            # generated id, runs bullpen.command, $SHELL or /bin/sh
  git bullpen spawn --bg fix-login -- claude -p 'fix the login bug'

The worktree is created under the worktree root ($BULLPEN_HOME/worktrees/<repo-key>/, \
or git config bullpen.worktreeRoot) and its path is printed on stderr. The command runs \
there with BULLPEN_SESSION, BULLPEN_BRANCH and BULLPEN_WORKTREE set; bullpen exits with \
its status. Commits it made get a provenance note in refs/notes/bullpen.

With --bg, bullpen starts a detached supervisor (its own session, stdin from /dev/null, \
output appended to <git common dir>/bullpen/logs/<id>.log) and returns as soon as the \
command is recorded running: the id is printed on stdout, the worktree on stderr. The \
run survives the terminal; see it with `git bullpen ls` and `git bullpen logs <id>`, \
end it with `git bullpen stop <id>`. --bg needs a command (or bullpen.command).";

/// Start a new session in its own worktree and branch, and run a command there.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Session id ([a-z0-9][a-z0-9._-]{0,62}); generated when omitted.
    #[arg(value_name = "ID")]
    pub id: Option<SessionId>,

    /// Revision the session branch starts from.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub base: String,

    /// The command to run in the worktree (default: git config bullpen.command,
    /// else $SHELL, else /bin/sh).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// Run in the background: a detached supervisor runs the command with its
    /// output appended to the session's log; print the id and return at once.
    #[arg(long)]
    pub bg: bool,
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    if args.bg && args.command.is_empty() && !runner::has_configured_command(&ctx) {
        bail!(
            "spawn --bg needs a command: give one after `--`, or set git config {} \
             (a background run has no terminal for an interactive shell)",
            crate::config::COMMAND
        );
    }
    let command = if args.command.is_empty() {
        runner::default_command(&ctx)
    } else {
        args.command.clone()
    };
    let stored = create_session(&ctx, args.id.as_ref(), &args.base, &command)?;
    info(format!(
        "session {} on {} in {}",
        stored.record.id, stored.record.branch, stored.record.worktree
    ));
    if args.bg {
        return runner::run_background(&ctx, stored, &command, "running");
    }
    runner::run_foreground(&ctx, stored, &command, "running")
}

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
                let id = ids::generate();
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
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

/// Why `id` cannot be used, if it cannot (`None`: free). Errors reading the
/// repository are errors, not "taken".
fn taken(ctx: &Ctx, id: &SessionId) -> Result<Option<String>> {
    if store::load(&ctx.repo, id)?.is_some() {
        return Ok(Some(format!(
            "session id \"{id}\" is already in use (see `git bullpen ls --all {id}`); pick another id"
        )));
    }
    if ctx.repo.ref_target(&id.branch_ref())?.is_some() {
        return Ok(Some(format!(
            "branch {} already exists; pick another id or delete the branch",
            id.branch()
        )));
    }
    let path = ctx.layout.worktree_path(id);
    if path.symlink_metadata().is_ok() {
        return Ok(Some(format!(
            "{} already exists; pick another id or remove it",
            path.display()
        )));
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
        host: hostname(),
        created_at: now.clone(),
        updated_at: now,
        run_start: None,
        process: None,
        exit: None,
        log: None,
        extra: Default::default(),
    };
    if !ctx.layout.is_confined(&path) {
        bail!(
            "{} is not inside the worktree root {}",
            path.display(),
            ctx.layout.worktree_root.display()
        );
    }
    let stored = store::create(&ctx.repo, record, "provisioning").map_err(|e| {
        if store::is_conflict(&e) {
            e.context(format!("session id \"{id}\" is already in use"))
        } else {
            e
        }
    })?;
    match add_worktree(ctx, id, &path, base) {
        Ok(()) => store::update(&ctx.repo, &stored, "ready", |r| r.state = State::Ready)
            .context("the worktree was created but its record could not be marked ready"),
        Err(e) => {
            if let Err(undo) = store::delete(&ctx.repo, &stored, "bullpen: spawn failed") {
                crate::context::warn(format!(
                    "could not remove the record of the failed session: {undo:#}"
                ));
            }
            Err(e)
        }
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
    crate::teardown::undo_failed_add(&ctx.repo, &ctx.layout, path);
    if let Ok(Some(tip)) = ctx.repo.ref_target(branch_ref) {
        if tip == base {
            if let Err(e) = ctx
                .repo
                .delete_ref(branch_ref, tip, "bullpen: spawn failed")
            {
                crate::context::warn(format!("could not delete {branch_ref}: {e:#}"));
            }
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}
