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

#[derive(Debug, Parser)]
#[command(
    name = "git-bullpen",
    bin_name = "git bullpen",
    version,
    about = "Run commands side by side, each in its own git worktree and branch",
    long_about = LONG_ABOUT,
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
    Attach(commands::attach::Args),
    Gc(commands::gc::Args),
    #[command(name = "__supervise", hide = true)]
    Supervise(commands::supervise::Args),
}
