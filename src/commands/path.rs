//! `git bullpen path`: print a session's worktree path, for `cd "$(...)"`.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::context::{warn, Ctx};
use crate::placement::{self, Placement, Refusal};
use crate::session::{SessionId, State};

const AFTER_LONG_HELP: &str = "\
A program cannot change its parent shell's directory, so bullpen prints the path and \
the shell does the rest:

  cd \"$(git bullpen path fix-login)\"

The path is the one recorded for the session, printed on one line. When the directory \
is not the session's worktree right now (deleted, occupied, collected) the path is \
still printed and a warning says what is wrong; `git bullpen resume <id>` recreates a \
deleted worktree. A recorded path outside the worktree root is not printed: records \
can arrive from a fetch or a hand edit.";

/// Print a session's worktree path.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: SessionId,
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    let stored = super::resume::load_existing(&ctx, &args.id)?;
    let record = &stored.record;
    let facts = placement::inspect(&ctx, record)?;
    match placement::decide(&facts) {
        Placement::Refuse(why @ (Refusal::OutsideRoot | Refusal::ElsewhereInRoot)) => {
            bail!("{}", placement::explain(&why, &facts))
        }
        _ if record.state == State::Collected => warn(format!(
            "session {} was collected by `git bullpen gc`; its worktree no longer exists",
            record.id
        )),
        Placement::Use => {}
        Placement::Recreate { .. } => warn(format!(
            "{} does not exist; `git bullpen resume {}` recreates it",
            record.worktree, record.id
        )),
        Placement::Refuse(why) => warn(placement::explain(&why, &facts)),
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", record.worktree)
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    Ok(0)
}
