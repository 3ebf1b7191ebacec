//! clap definitions and the dispatch. Each subcommand's arguments live in its own
//! file under `commands/`; this file assembles them.

use std::path::Path;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::commands;
use crate::ui::{Ui, When};

const LONG_ABOUT: &str = "\
Run coding agents (or any long command) side by side in one repository.

Every session gets its own linked worktree on its own branch (bullpen/<id>), outside \
the repository's directory. Everything bullpen knows about a session lives in the \
repository itself: a record under refs/bullpen/sessions/<id> and provenance notes in \
refs/notes/bullpen. There is no daemon and no database.";

const AFTER_LONG_HELP: &str = "\
Examples:
  # a session, its worktree and branch
  git bullpen spawn fix-login -- claude
  # in the background
  git bullpen spawn --bg tests -- make test
  # every session, and what gc decides on
  git bullpen ls --status
  git bullpen wait tests && git bullpen logs tests
  cd \"$(git bullpen path fix-login)\"
  git bullpen resume fix-login
  git push origin bullpen/fix-login && git bullpen gc
  # sessions, records, notes to origin
  git bullpen push
  git bullpen fetch && git bullpen ls --remote
  git bullpen resume origin/fix-login -- claude --continue
  # discard a session's work
  git bullpen rm --force tests";

#[derive(Debug, Parser)]
#[command(
    name = "git-bullpen",
    bin_name = "git bullpen",
    version,
    about = "Run commands side by side, each in its own git worktree and branch",
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// When to colour the output: always, never, or auto (on a terminal). Without
    /// a value, always. Overrides git config color.bullpen and color.ui.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always",
        value_enum,
        hide_possible_values = true,
        overrides_with = "no_color"
    )]
    pub color: Option<When>,

    /// The same as --color=never.
    #[arg(long, global = true, overrides_with = "color")]
    pub no_color: bool,
}

impl Cli {
    /// `--color` (or `--no-color`), the last one given winning.
    pub fn color(&self) -> Option<When> {
        match self.no_color {
            true => Some(When::Never),
            false => self.color,
        }
    }
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
    Peek(commands::peek::Args),
    Wait(commands::wait::Args),
    Rm(commands::rm::Args),
    Gc(commands::gc::Args),
    Push(commands::push::Args),
    Fetch(commands::fetch::Args),
    Hook(commands::hook::Args),
    #[command(name = "__supervise", hide = true)]
    Supervise(commands::supervise::Args),
}

impl Command {
    /// Dispatch; returns the process exit status.
    pub fn run(self, cwd: &Path, ui: &Ui) -> Result<i32> {
        match self {
            Command::Spawn(args) => commands::spawn::run(args, cwd, ui),
            Command::Ls(args) => commands::ls::run(args, cwd, ui),
            Command::Resume(args) => commands::resume::run(args, cwd, ui),
            Command::Path(args) => commands::path::run(args, cwd, ui),
            Command::Stop(args) => commands::stop::run(args, cwd, ui),
            Command::Logs(args) => commands::logs::run(args, cwd, ui),
            Command::Attach(args) => commands::attach::run(args, cwd, ui),
            Command::Peek(args) => commands::peek::run(args, cwd, ui),
            Command::Wait(args) => commands::wait::run(args, cwd, ui),
            Command::Rm(args) => commands::rm::run(args, cwd, ui),
            Command::Supervise(args) => commands::supervise::run(args, cwd, ui),
            Command::Gc(args) => commands::gc::run(args, cwd, ui),
            Command::Push(args) => commands::push::run(args, cwd, ui),
            Command::Fetch(args) => commands::fetch::run(args, cwd, ui),
            Command::Hook(args) => commands::hook::run(args, cwd, ui),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
