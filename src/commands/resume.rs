//! `git bullpen resume`: run a session's command again, in its recorded worktree
//! and nowhere else. The worktree is recreated when that is provably safe
//! (nothing at the path, the branch exists); anything else is refused.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use crate::context::{info, Ctx};
use crate::fsutil::Lock;
use crate::placement::{self, Placement};
use crate::runner;
use crate::session::{SessionId, State};
use crate::store::{self, Stored};

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen resume fix-login                 # the recorded command, again
  git bullpen resume fix-login -- claude --continue
  git bullpen resume fix-login -- git log --oneline -3
  git bullpen resume --bg fix-login -- claude -p 'now add tests'

The command runs in the session's recorded worktree, whatever directory (or worktree \
of the repository) you run resume from. If that directory was deleted and the branch \
bullpen/<id> still exists, the worktree is recreated at the same path first (said on \
stderr). Anything else at the recorded path (a file, a symlink, a plain or empty \
directory, another repository, a worktree on another branch or with a detached HEAD) \
is left alone and resume fails, naming what is there. A session that is running, or \
that gc collected, is not resumed.

With --bg the command runs detached, as with `spawn --bg`: its output is appended to \
the session's log (`git bullpen logs <id>`), and `git bullpen stop <id>` ends it.

To go to a session's worktree in your shell: cd \"$(git bullpen path <id>)\".";

/// Run a command again in a session's worktree (recreated if it was deleted).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to resume.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: SessionId,

    /// The command to run in the worktree (default: the session's recorded command).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// Run in the background, exactly as `spawn --bg` does: print the id and return.
    #[arg(long)]
    pub bg: bool,
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    let stored = load_existing(&ctx, &args.id)?;
    refuse_collected(&ctx, &stored)?;
    runner::ensure_not_running(&ctx, &stored)?;
    note_lost(&stored);
    if args.bg
        && args.command.is_empty()
        && stored.record.command.is_empty()
        && !runner::has_configured_command(&ctx)
    {
        bail!(
            "resume --bg needs a command: give one after `--`, or set git config {}",
            crate::config::COMMAND
        );
    }
    let stored = place(&ctx, stored)?;
    let argv = if !args.command.is_empty() {
        args.command
    } else if !stored.record.command.is_empty() {
        stored.record.command.clone()
    } else {
        runner::default_command(&ctx)
    };
    info(format!(
        "resuming session {} on {} in {}",
        stored.record.id, stored.record.branch, stored.record.worktree
    ));
    if args.bg {
        return runner::run_background(&ctx, stored, &argv, "resumed");
    }
    runner::run_foreground(&ctx, stored, &argv, "resumed")
}

/// The session's record, or an error that says how to find the right id.
pub fn load_existing(ctx: &Ctx, id: &SessionId) -> Result<Stored> {
    store::load(&ctx.repo, id)?
        .ok_or_else(|| anyhow!("no session named \"{id}\" (see `git bullpen ls --all`)"))
}

/// A collected session has no worktree to go back to: say so, and how to start
/// again from what is left of its branch.
fn refuse_collected(ctx: &Ctx, stored: &Stored) -> Result<()> {
    if stored.record.state != State::Collected {
        return Ok(());
    }
    let facts = placement::inspect(ctx, &stored.record)?;
    bail!(
        "session {id} was collected by `git bullpen gc` (its worktree was removed after its \
         work was published); there is nothing to resume\n{hint}",
        id = stored.record.id,
        hint = placement::start_again_hint(&facts.id, facts.branch_exists, &facts.remote_branches)
    )
}

/// A session recorded running whose process is gone (lost) may be resumed: say so.
fn note_lost(stored: &Stored) {
    let record = &stored.record;
    if let (State::Running, Some(p)) = (record.state, &record.process) {
        info(format!(
            "session {} was recorded running (pid {}), but that process is gone",
            record.id, p.pid
        ));
    }
}

/// Decide where the session runs; recreate its worktree when that is the decision.
/// Refusals change nothing (not even the lock file).
fn place(ctx: &Ctx, stored: Stored) -> Result<Stored> {
    let facts = placement::inspect(ctx, &stored.record)?;
    match placement::decide(&facts) {
        Placement::Use => Ok(stored),
        Placement::Refuse(why) => bail!("{}", placement::explain(&why, &facts)),
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
    let facts = placement::inspect(ctx, &stored.record)?;
    let prune_first = match placement::decide(&facts) {
        Placement::Recreate { prune_first } => prune_first,
        Placement::Use => return Ok(stored),
        Placement::Refuse(why) => bail!("{}", placement::explain(&why, &facts)),
    };
    if prune_first {
        info(
            "git still registers a worktree whose directory is gone (deleted by hand?); \
             running `git worktree prune` first",
        );
        ctx.repo
            .worktree_prune()
            .context("cannot prune git's stale worktree entries")?;
    }
    info(format!(
        "worktree {} is gone; recreating it from {}",
        path.display(),
        facts.branch
    ));
    if let Err(e) = ctx.repo.worktree_add_existing(&path, &facts.branch) {
        crate::teardown::undo_failed_add(&ctx.repo, &ctx.layout, &path);
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
