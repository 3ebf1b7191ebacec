//! clap definitions only. Each subcommand's arguments live in its own file under
//! `commands/`; this file assembles them.

use clap::{Parser, Subcommand};

use crate::commands;

const LONG_ABOUT: &str = "\
Run coding agents (or any long command) side by side in one repository.

Every session gets its own linked worktree on its own branch (bullpen/<id>), outside \
the repository's directory. Everything bullpen knows about a session lives in the \
repository itself: a record under refs/bullpen/sessions/<id> and provenance notes in \
refs/notes/bullpen. There is no daemon and no database.";

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn fix-login -- claude      # a session, its worktree and branch
  git bullpen spawn --bg tests -- make test  # in the background
  git bullpen ls --status                    # every session, and what gc decides on
  git bullpen wait tests && git bullpen logs tests
  cd \"$(git bullpen path fix-login)\"
  git bullpen resume fix-login
  git push origin bullpen/fix-login && git bullpen gc
  git bullpen rm --force tests               # discard a session's work";

#[derive(Debug, Parser)]
#[command(
    name = "git-bullpen",
    bin_name = "git bullpen",
    version,
    about = "Run commands side by side, each in its own git worktree and branch",
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Spawn(commands::spawn::Args),
    Ls(commands::ls::Args),
    Resume(commands::resume::Args),
    Path(commands::path::Args),
    Stop(commands::stop::Args),
    Logs(commands::logs::Args),
    Wait(commands::wait::Args),
    Rm(commands::rm::Args),
    Gc(commands::gc::Args),
    #[command(name = "__supervise", hide = true)]
    Supervise(commands::supervise::Args),
}
