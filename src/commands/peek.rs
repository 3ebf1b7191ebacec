//! `git bullpen peek`: print a background run's current screen without
//! attaching (see `crate::attach::peek`).

use std::path::Path;

use anyhow::Result;

use crate::attach::peek::Form;
use crate::context::Ctx;
use crate::model::SessionId;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # what its terminal shows now
  git bullpen peek fix-login
  # with colours and attributes
  git bullpen peek --color fix-login
  # every row, and where the cursor is
  git bullpen peek --json fix-login

The supervisor of every background run keeps a model of the run's terminal: its \
screen, scrollback and modes, fed by everything the command writes. peek asks it for \
the screen as it is now and prints it as text, one line a row, without the blank rows \
at the bottom. It never takes the terminal: another terminal may be attached meanwhile \
and goes on undisturbed. With --color (or color.bullpen, color.ui) the colours and \
attributes are kept as SGR sequences; --json gives the size, the cursor (row and \
column from 0, and whether it is shown), whether the program is on the alternate \
screen, and every row.

peek connects only to a run started on this machine, through the socket its \
supervisor recorded in the session's local state, and only when the process \
answering there is that supervisor, running as you, as attach does.";

/// Print a background session's current screen, without attaching.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to look at.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::attachable_candidates))]
    pub id: SessionId,

    /// Print JSON: the size, the cursor and every row of the screen.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let form = match (args.json, ui.color()) {
        (true, _) => Form::Json,
        (false, true) => Form::Color,
        (false, false) => Form::Text,
    };
    crate::attach::peek::peek(&ctx, &args.id, form)
}
