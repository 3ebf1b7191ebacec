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

    /// Never page the output of ls and logs (as git --no-pager).
    #[arg(short = 'P', long)]
    pub no_pager: bool,
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
    Spawn(Quiet<commands::spawn::Args>),
    Ls(commands::ls::Args),
    Resume(Quiet<commands::resume::Args>),
    Path(commands::path::Args),
    Stop(Quiet<commands::stop::Args>),
    Logs(commands::logs::Args),
    Attach(Quiet<commands::attach::Args>),
    Peek(commands::peek::Args),
    Wait(Quiet<commands::wait::Args>),
    Rm(Quiet<commands::rm::Args>),
    Gc(Quiet<commands::gc::Args>),
    Push(Quiet<commands::push::Args>),
    Fetch(Quiet<commands::fetch::Args>),
    Hook(commands::hook::Args),
    Help(commands::help::Args),
    #[command(name = "__supervise", hide = true)]
    Supervise(commands::supervise::Args),
}

// A command's own arguments and `-q/--quiet`, for the commands that print
// progress or a banner on stderr. (Not a doc comment: clap would take it for
// the command's about text.)
#[derive(Debug, clap::Args)]
pub struct Quiet<A: clap::Args> {
    #[command(flatten)]
    pub args: A,

    /// Print no progress and no `bullpen:` lines on stderr; warnings, hints,
    /// errors and what goes to stdout stay.
    #[arg(short, long)]
    pub quiet: bool,
}

impl Command {
    /// `-q` was given.
    pub fn quiet(&self) -> bool {
        match self {
            Command::Spawn(q) => q.quiet,
            Command::Resume(q) => q.quiet,
            Command::Stop(q) => q.quiet,
            Command::Attach(q) => q.quiet,
            Command::Wait(q) => q.quiet,
            Command::Rm(q) => q.quiet,
            Command::Gc(q) => q.quiet,
            Command::Push(q) => q.quiet,
            Command::Fetch(q) => q.quiet,
            _ => false,
        }
    }

    /// The command's name for `pager.bullpen.<name>` when what it prints may
    /// be paged: a listing or a log, never JSON or `logs --follow` or `--raw`.
    pub fn pages(&self) -> Option<&'static str> {
        match self {
            Command::Ls(a) if !a.json => Some("ls"),
            Command::Logs(a) if !a.follow && !a.raw => Some("logs"),
            _ => None,
        }
    }

    /// Dispatch; returns the process exit status.
    pub fn run(self, cwd: &Path, ui: &Ui) -> Result<i32> {
        match self {
            Command::Spawn(q) => commands::spawn::run(q.args, cwd, ui),
            Command::Ls(args) => commands::ls::run(args, cwd, ui),
            Command::Resume(q) => commands::resume::run(q.args, cwd, ui),
            Command::Path(args) => commands::path::run(args, cwd, ui),
            Command::Stop(q) => commands::stop::run(q.args, cwd, ui),
            Command::Logs(args) => commands::logs::run(args, cwd, ui),
            Command::Attach(q) => commands::attach::run(q.args, cwd, ui),
            Command::Peek(args) => commands::peek::run(args, cwd, ui),
            Command::Wait(q) => commands::wait::run(q.args, cwd, ui),
            Command::Rm(q) => commands::rm::run(q.args, cwd, ui),
            Command::Supervise(args) => commands::supervise::run(args, cwd, ui),
            Command::Gc(q) => commands::gc::run(q.args, cwd, ui),
            Command::Push(q) => commands::push::run(q.args, cwd, ui),
            Command::Fetch(q) => commands::fetch::run(q.args, cwd, ui),
            Command::Hook(args) => commands::hook::run(args, cwd, ui),
            Command::Help(args) => commands::help::run(args, cwd, ui),
        }
    }
}

/// Whether clap's help was asked for with `--help` (the long one, exit 0) rather
/// than `-h` (the short usage, which exits as a usage error does, as git's `-h`):
/// `--help` among the arguments before a `--`.
pub fn long_help_asked<'a>(args: impl IntoIterator<Item = &'a str>) -> bool {
    args.into_iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_long_help_before_dashdash_is_the_long_help() {
        for (args, long) in [
            (&["--help"][..], true),
            (&["ls", "--help"], true),
            (&["ls", "-h"], false),
            (&["-h"], false),
            (&["spawn", "-h", "--", "x", "--help"], false),
            (&["spawn", "x", "--", "--help"], false),
        ] {
            assert_eq!(
                super::long_help_asked(args.iter().copied()),
                long,
                "{args:?}"
            );
        }
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
