//! One file per subcommand: its clap `Args`, a `run` that calls the feature,
//! and the rendering of what it returns. `cli::Command::run` dispatches to them.

pub mod attach;
pub mod fetch;
pub mod gc;
pub mod logs;
pub mod ls;
pub mod path;
pub mod peek;
pub mod push;
pub mod resume;
pub mod rm;
pub mod spawn;
pub mod stop;
pub mod supervise;
pub mod wait;

/// How a session's command is run: shared by `spawn` and `resume`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The command to run in the worktree (its default is under DESCRIPTION).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,

    /// Run in the background: a detached supervisor runs the command on a
    /// terminal (`git bullpen attach` connects to it), its output appended to
    /// the session's log; print the id and return at once.
    #[arg(long)]
    pub bg: bool,
}
