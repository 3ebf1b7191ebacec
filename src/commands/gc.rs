//! `git bullpen gc`: remove the worktrees of sessions whose work is provably
//! safe elsewhere, repair leftovers, and report everything it kept and why (see
//! `crate::gc`).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::gc::execute::{self, Options};
use crate::gc::report::{render, subject, summary, Action};
use crate::model::Error;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Work is whatever a person would be sorry to lose, and gc keeps it: commits on no \
remote; uncommitted, untracked and hidden files; repositories nested in the worktree; \
whatever sits on another file system mounted in it; an agent's conversation (agents \
keep it by the worktree's path); a file bullpen copied in (.worktreeinclude) that was \
edited since; and processes still using the worktree, those a run left behind \
included (`git bullpen stop <id>` ends them). What is not work goes with the \
worktree: ignored files, caches that say so (a CACHEDIR.TAG, a virtual environment's \
pyvenv.cfg, or bullpen.gc.disposable) and unchanged copies. Where gc cannot tell, it \
keeps the worktree and says why.

A session's worktree is removed only when all of these hold, each checked again \
right before removal:
  published  the tip of bullpen/<id> is reachable from a refs/remotes/* ref; or,
             by content, each commit no remote-tracking ref reaches has its own
             change in an integration ref: merging that commit (against its
             parent, as a cherry-pick) changes nothing at a commit of the ref's
             first-parent history newer than the session's fork from it and
             descending from it (the fork itself never counts): squash merges,
             rebase merges, cherry-picks
  clean      no modified, deleted, staged or untracked files (ignored files do not
             count, unless a .gitignore that is not in the index hides them: but a
             cache does not count, a directory with a valid CACHEDIR.TAG, a pyvenv.cfg,
             or matched by bullpen.gc.disposable), no edit under skip-worktree or
             assume-unchanged, and no FIFO, socket or device (git lists none; each
             counts as an untracked file)
  nested     every repository inside (a submodule, a clone or a linked worktree in
             any directory, any .git below the top) and every submodule git dir git
             keeps for the worktree is clean, its HEAD, branches, stash and reflogs on
             its own remote-tracking refs; a linked worktree is not locked
  one fs     no file system is mounted below it (mountinfo, or another device)
  copies     every file .worktreeinclude copied in is as bullpen copied it
  no agent   an agent session with no commit of its own is past bullpen.gc.agentGrace
  idle       the session's process is not running, and no process has its current
             directory, root, executable or an open file inside the worktree
  unlocked   the worktree is not locked (git worktree lock)
  ours       a registered worktree of this repository, strictly inside the worktree
             root, with HEAD on bullpen/<id>
Then its local branch is deleted with its configuration (its work is on a remote), as \
`git branch -d` does, and the record becomes \
`collected` (see `git bullpen ls --all`); the notes stay.

The integration refs are each remote's default branch (the target of \
refs/remotes/<remote>/HEAD; where that is not set, or names a branch that is gone \
(a renamed default branch: gc warns, and `git remote set-head <remote> --auto` fixes \
it), <remote>/main, else <remote>/master) and the remote-tracking refs named by git config \
bullpen.gc.integrationRef (multi-valued, globs allowed, short or full names; an \
empty value drops the refs before it, the defaults included). gc names its evidence: \
`reachable from origin/bullpen/x`, `squash-merged into origin/main as 1a2b3c4` (one \
commit of the ref brought in all of the session's commits), `rebased onto origin/main \
(2 commits, the last 1a2b3c4)` (several did; the newest named), with `(changed there \
since)` or `(reverted there since)` when the ref's tip no longer holds the changes as \
merged. A session only partly there is kept: `3 commits not on any remote (2 of 3 \
commits' changes are on origin/main)` (a commit that undoes part of a merged one, \
unpushed, is not there); so is one whose changes conflict with the ref, and one whose \
commits change no file. Where both the session and the ref changed a file, git \
decides: `git merge-tree --write-tree`, into a temporary object directory it deletes. \
When gc collects a session the evidence stays: `bullpen-published: ...` in the \
provenance note of its tip (`git log --notes=bullpen`), the subject of the record's \
last commit, and `published` in its session.json; commits on the branch without a \
provenance note get one first. Proven by content, each commit of the ref it landed on \
gets a note too (`bullpen-session: <id>`, `bullpen-squashed:` or `bullpen-rebased:` \
the session's commits it holds), and `resume` and `path` of the collected session say \
where its work is.

gc also repairs leftovers: the worktree entries of sessions whose directory vanished \
(also one a killed git worktree remove left without its gitdir file) are removed, each by itself (never `git worktree prune`: anyone else's entry, a \
worktree on a disk that is not mounted, is left alone); \
directories bullpen left in the worktree root (a .git file into this repository's \
worktree entries, or where a collected session's worktree was) that belong to no \
worktree are removed when they hold no work (e.g. only a dangling .git file) and \
reported otherwise; sessions whose worktree is gone are collected when their branch \
is published, reported and kept otherwise. A teardown that a late writer interrupted, \
or that git was killed in, is finished by a later gc when what is left holds nothing \
new. A directory a late writer brings back right after git removed it is reported \
degraded, and removed by a later gc when it holds nothing. When `git worktree remove` \
refuses for a reason of its own, the worktree is kept and git quoted. A sandboxed \
run's private TMPDIR that bullpen left alone when the run ended (a symlink, another \
user's, not the one bullpen named) is named, with why and what to do, until it is gone; \
gc never removes it. Last, a real run \
runs `git gc --auto`: bullpen's records are loose objects that nothing else packs, and \
many of them slow down `ls`.

Records of collected sessions are deleted once collected longer ago than git config \
bullpen.gc.expire (default 90.days.ago; never, now, 2.weeks, 2026-01-01, as \
gc.reflogExpire), with their logs and local state, where the branch and the worktree \
are gone; the provenance notes stay.

A branch with no commit of its own (its tip is its base) is never called published: \
`holds no commit of its own`. An agent session with no commit of its own is kept \
for git config bullpen.gc.agentGrace after its last activity (default 2.weeks.ago; \
never, now, a date, as bullpen.gc.expire): its agent keeps its conversation by the \
worktree's path, so it may be all its work. rm keeps it too; rm --force removes it.

Everything is reported: removed (with what went with it that was not work: `and 3 \
ignored files, 80 KiB`), collected, pruned, kept (with every reason that keeps it), \
expired or degraded (with what to do). gc exits 1 when anything degraded, after handling \
everything else; 0 otherwise. Processes of other users, and protected ones, cannot \
be inspected without privileges and are not considered. On a terminal, gc shows its \
progress on stderr.

--dry-run changes nothing (with --fetch it still fetches) and prints what gc would do. \
--json prints an array of objects with the stable keys kind (session, worktree-entry, \
orphan, tmpdir, record), id, action (removed, collected, pruned, kept, degraded, expired), \
reason, \
worktree, branch, hint, dry_run, published (null, or how, ref, commit, since, \
description), ignored (null, or files, bytes, caches) and path (a tmpdir's; else null).

Examples:
  git bullpen gc --dry-run
  git bullpen gc --fetch --wait 30
  git config --add bullpen.gc.integrationRef 'origin/release/*'
  git config --add bullpen.gc.disposable .tox
  git bullpen gc --json |
    jq -r '.[] | select(.action == \"kept\") | .reason'";

/// Remove worktrees of sessions that are published, clean and idle.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Change nothing; print what gc would do.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// Print JSON (an array of objects with stable keys).
    #[arg(long)]
    pub json: bool,

    /// Wait up to SECS for busy sessions to become idle.
    #[arg(long, value_name = "SECS")]
    pub wait: Option<u64>,

    /// Run `git fetch --all --prune` first.
    #[arg(long)]
    pub fetch: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    if args.fetch {
        ui.info("fetching from all remotes (git fetch --all --prune)");
        ctx.repo.fetch_all().context(
            Error::failed("cannot fetch (--fetch)")
                .hint("run gc without --fetch to use the remote-tracking refs you have"),
        )?;
    }
    let entries = execute::run(
        &ctx,
        &Options {
            dry_run: args.dry_run,
            wait: Duration::from_secs(args.wait.unwrap_or(0)),
        },
    )?;
    if !args.dry_run {
        // Every record write adds loose objects that nothing else packs; with many
        // sessions they slow down reading the records (`ls`). A no-op below git's
        // gc.auto threshold.
        if let Err(e) = ctx.repo.gc_auto() {
            ui.warn(format!(
                "git's housekeeping failed (bullpen's gc is done): {e:#}"
            ));
        }
    }
    if args.json {
        ui.write_json(&entries)?;
    } else {
        render(&mut *ui.out(), &entries, args.dry_run).context("cannot write to stdout")?;
    }
    ui.flush()?;
    for e in &entries {
        if let Some(h) = &e.hint {
            ui.hint(format!("{}: {h}", subject(e)));
        }
    }
    summary(ui, &entries, args.dry_run);
    let degraded = entries.iter().any(|e| e.action == Action::Degraded);
    Ok(if degraded { 1 } else { 0 })
}
