//! `git bullpen attach`: connect this terminal to a background run's terminal
//! (see `crate::attach`).

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::model::SessionId;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn --bg fix-login -- claude
  # use it; Ctrl-\\ detaches, it keeps running
  git bullpen attach fix-login
  # from another terminal, taking it over
  git bullpen attach --steal fix-login

Every background run (spawn --bg, resume --bg) runs on a pseudo-terminal held by its \
supervisor. attach connects this terminal to it: what you type goes to the command, \
what it writes comes to your screen (and, as always, to the session's log), and the \
window size follows yours, so a full-screen program redraws to fit. The run's current \
screen is drawn first, what was written while nobody was attached included (the \
supervisor keeps a model of the run's terminal; git config bullpen.scrollback lines of \
scrollback). The terminal is put in raw mode while attached and its settings are \
restored exactly when attach ends, and every mode the program turned on in it is turned \
off again: the alternate screen, keypad and cursor-key modes, mouse reporting, bracketed \
paste, focus reporting, kitty keyboard flags, modifyOtherKeys, a hidden cursor, colours.

To look at the screen without attaching: git bullpen peek.

The detach key (default Ctrl-\\, git config bullpen.detachKey: ctrl-<key> or ^<key>) \
leaves the run going and exits 0. When the run ends while attached (by itself, or \
through `git bullpen stop`), attach exits with the run's status.

One terminal at a time: a second attach is refused, naming the process attached \
first, unless --steal, which detaches the other terminal and takes over.

attach connects only to a run started on this machine, through the socket its \
supervisor recorded in the session's local state (never a path read from the record), \
and only when the process answering there is that supervisor, running as you. The \
supervisor in turn accepts connections from your own user only.";

/// Connect this terminal to a background session's terminal (detach: Ctrl-\).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to attach to.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::attachable_candidates))]
    pub id: SessionId,

    /// Take the session over from the terminal attached to it now.
    #[arg(long)]
    pub steal: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    crate::attach::attach(&ctx, &args.id, args.steal)
}
