//! `git bullpen rm`: discard sessions: gc's rules, executor and teardown for the
//! sessions named (see `crate::gc::execute::remove_sessions`); `--force`
//! discards unpublished and uncommitted work too, never a running session and
//! never outside the trust rules.

use std::path::Path;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::gc::execute::remove_sessions;
use crate::gc::report::{render, subject, Action, Entry};
use crate::git::store::{self, Stored};
use crate::model::{SessionId, State};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # only if its work is published and clean
  git bullpen rm fix-login
  # what --force would discard
  git bullpen rm --dry-run --force tests
  git bullpen rm --force tests old-spike

Without --force, rm applies gc's rules to the sessions named (see git-bullpen-gc(1)): \
a session's worktree and branch go only when its work is published, the worktree is \
clean and nothing uses it; otherwise it is kept, and rm says why. With --force, \
unpublished commits and uncommitted changes (modified, staged, untracked files) no \
longer keep it: `git worktree remove --force` takes the worktree down and the branch \
bullpen/<id> is deleted. Still never: a session whose process is running (stop it \
first), a worktree other processes use or that is locked, a branch checked out in \
another worktree, a repository inside it that holds work (a clone, a linked worktree, \
a submodule), a file system mounted below it, and anything the trust rules forbid (a worktree this machine did not \
create, a record pointing outside the worktree root): records can arrive from a fetch \
or a hand edit.

What goes: the worktree, the branch and the session's log; the record becomes \
`collected` (`git bullpen ls --all` still shows it, `git log \
refs/bullpen/sessions/<id>` is its history) and the provenance notes stay. A session \
already collected is reported as such; its log goes too.

--dry-run changes nothing and prints what rm would do (with --force: what it would \
discard). Every id must name a session; otherwise rm changes nothing and fails (128).";

/// Discard sessions: worktree, branch and log (gc's rules; --force discards unpublished work).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The sessions to discard.
    #[arg(value_name = "ID", required = true, add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub ids: Vec<SessionId>,

    /// Discard unpublished commits and uncommitted changes too (never a running session).
    #[arg(long, short)]
    pub force: bool,

    /// Change nothing; print what rm would do.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    let mut ids: Vec<SessionId> = Vec::new();
    for id in args.ids {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    // Every id first: a typo changes nothing.
    let stored: Vec<Stored> = ids
        .iter()
        .map(|id| store::require(&ctx.repo, id))
        .collect::<Result<_>>()?;
    let (collected, live): (Vec<Stored>, Vec<Stored>) = stored
        .into_iter()
        .partition(|s| s.record.state == State::Collected);
    let mut entries = remove_sessions(&ctx, live, args.dry_run, args.force)?;
    entries.extend(collected.iter().map(|s| Entry {
        kind: "session",
        id: Some(s.record.id.to_string()),
        action: Action::Collected,
        reason: "already collected".to_owned(),
        worktree: Some(s.record.worktree.clone()),
        branch: Some(s.record.id.branch()),
        hint: None,
        dry_run: args.dry_run,
        published: None,
        ignored: None,
        path: None,
    }));
    // In the order given.
    entries.sort_by_key(|e| {
        ids.iter()
            .position(|id| Some(id.as_str()) == e.id.as_deref())
            .unwrap_or(usize::MAX)
    });
    if !args.dry_run {
        for e in &entries {
            if matches!(e.action, Action::Removed | Action::Collected) {
                remove_log(&ctx, e);
            }
        }
    }
    render(&mut *ui.out(), &entries, args.dry_run).context("cannot write to stdout")?;
    ui.flush()?;
    for e in &entries {
        if let Some(h) = &e.hint {
            ui.hint(format!("{}: {h}", subject(e)));
        }
    }
    Ok(status(&entries))
}

/// The session's background log goes with it (its path comes from the id).
fn remove_log(ctx: &Ctx, e: &Entry) {
    let Some(id) = e.id.as_deref().and_then(|id| id.parse::<SessionId>().ok()) else {
        return;
    };
    let log = ctx.layout.log_path(&id);
    match std::fs::remove_file(&log) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => ctx.ui.warn(format!(
            "{id}: cannot remove its log {}: {err}",
            log.display()
        )),
    }
}

/// 3 when a session was kept (refused: its work or its process stands in the
/// way), else 1 when one was left half-done (degraded), else 0.
fn status(entries: &[Entry]) -> i32 {
    if entries.iter().any(|e| e.action == Action::Kept) {
        3
    } else if entries.iter().any(|e| e.action == Action::Degraded) {
        1
    } else {
        0
    }
}
