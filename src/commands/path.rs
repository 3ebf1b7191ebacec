//! `git bullpen path`: print a session's worktree path, for `cd "$(...)"`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::{SessionId, State};
use crate::resume::decide::{decide, explain, Placement, Refusal};
use crate::resume::facts::inspect;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
A program cannot change its parent shell's directory, so bullpen prints the path and \
the shell does the rest:

  cd \"$(git bullpen path fix-login)\"

The path is the one recorded for the session, printed on one line. When the directory \
is not the session's worktree right now (deleted, occupied, collected) the path is \
still printed and a warning says what is wrong; `git bullpen resume <id>` recreates a \
deleted worktree. A recorded path outside the worktree root is not printed: records \
can arrive from a fetch or a hand edit. In a bare repository (a remote the records \
were pushed to), which has no worktrees of its own, the recorded path is printed with \
a warning that it could not be checked.";

/// Print a session's worktree path.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: SessionId,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let stored = store::require(&ctx.repo, &args.id)?;
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
    match decide(&facts) {
        Placement::Refuse(why @ (Refusal::OutsideRoot | Refusal::ElsewhereInRoot)) => {
            return Err(explain(&why, &facts).into())
        }
        _ if record.state == State::Collected => ui.warn(format!(
            "session {} was collected by `git bullpen gc`; its worktree no longer exists",
            record.id
        )),
        Placement::Use => {}
        Placement::Recreate { .. } => ui.warn(format!(
            "{} does not exist; `git bullpen resume {}` recreates it",
            record.worktree, record.id
        )),
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
