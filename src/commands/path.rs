//! `git bullpen path`: print a session's worktree path, for `cd "$(...)"`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::evidence::collected_by_content;
use crate::model::id::PUBLISHED_KEY;
use crate::model::{Error, SessionId, State};
use crate::resume::decide::{decide, explain, start_again_hint, Placement, Refusal};
use crate::resume::facts::inspect;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  cd \"$(git bullpen path fix-login)\"
  # inside a session's worktree: its path
  git bullpen path
  code \"$(git bullpen path fix-login)\"

A program cannot change its parent shell's directory, so bullpen prints the path and \
the shell does the rest. The path is the one recorded for the session, printed on one \
line. Without an id, path means the session whose worktree the current directory is in.

When there is no worktree to go to, path prints nothing and fails (exit 128): a \
session collected by gc, and one whose worktree directory was deleted (`git bullpen \
resume <id>` recreates it from its branch). When something else occupies the recorded \
path, the path is printed and a warning says what is there. A recorded path outside \
the worktree root is not printed unless this machine created the session there: \
records can arrive from a fetch or a hand edit. In a bare repository (a remote the \
records were pushed to), which has no worktrees of its own, the recorded path is printed \
with a warning that it could not be checked.";

/// Print a session's worktree path.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session (default: the one whose worktree you are in).
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: Option<SessionId>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let id = ctx.session_or_here(args.id, cwd, "path")?;
    let stored = store::require(&ctx.repo, &id)?;
    let record = &stored.record;
    if ctx.repo.is_bare() {
        // No worktree is this repository's: the record's word is all there is.
        ui.warn(format!(
            "{} is a bare repository: this is where the record of session {} (made on {}) \
             puts its worktree, unchecked",
            ctx.repo.common_dir().display(),
            record.id,
            record.host
        ));
        writeln!(ui.out(), "{}", record.worktree).context("cannot write to stdout")?;
        ui.flush()?;
        return Ok(0);
    }
    let facts = inspect(&ctx, record)?;
    let gone = |why: &str, hint: String| -> anyhow::Error {
        Error::failed(format!("session {id} has no worktree to go to: {why}"))
            .hint(hint)
            .into()
    };
    match decide(&facts) {
        Placement::Refuse(why @ (Refusal::OutsideRoot | Refusal::ElsewhereInRoot)) => {
            return Err(explain(&why, &facts).into())
        }
        _ if record.state == State::Collected => {
            return Err(Error::failed(format!(
                "session {id} has no worktree to go to: it was collected (`git bullpen gc` \
                 or `rm` removed its worktree)"
            ))
            .hint(start_again_hint(
                &facts.id,
                facts.branch_exists,
                &facts.remote_branches,
            ))
            .hints(collected_by_content(record.extra.get(PUBLISHED_KEY)))
            .into())
        }
        Placement::Use => {}
        Placement::Recreate { .. } => {
            return Err(gone(
                &format!("{} does not exist", record.worktree),
                format!(
                    "`git bullpen resume {id}` recreates it from {}",
                    facts.branch
                ),
            ))
        }
        Placement::Refuse(Refusal::Gone) => {
            return Err(gone(
                &format!(
                    "{} does not exist, and neither does its branch {}",
                    record.worktree, facts.branch
                ),
                start_again_hint(&facts.id, false, &facts.remote_branches),
            ))
        }
        Placement::Refuse(why) => {
            let e = explain(&why, &facts);
            ui.warn(e.message());
            for h in e.hint_lines() {
                ui.hint(h);
            }
        }
    }
    writeln!(ui.out(), "{}", record.worktree).context("cannot write to stdout")?;
    ui.flush()?;
    Ok(0)
}
