//! One file per subcommand: its clap `Args`, a `run` that calls the feature,
//! and the rendering of what it returns. `cli::Command::run` dispatches to them.

pub mod attach;
pub mod fetch;
pub mod gc;
pub mod help;
pub mod hook;
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

    /// Confine the command: it may write its worktree, its admin directory, the
    /// object store, its branch's ref and reflog, a private TMPDIR and what git
    /// config bullpen.sandbox.allowWrite adds, and read everything (Landlock).
    /// --sandbox=best-effort runs with what the kernel enforces.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "strict", value_parser = ["strict", "best-effort"])]
    pub sandbox: Option<String>,

    /// Run unconfined, whatever git config bullpen.sandbox says.
    #[arg(long, conflicts_with = "sandbox")]
    pub no_sandbox: bool,
}

impl RunArgs {
    /// The sandbox mode of the run: the flags, else git config bullpen.sandbox;
    /// a strict one the kernel cannot enforce fails here, before anything is made.
    pub fn sandbox(
        &self,
        ctx: &crate::context::Ctx,
    ) -> anyhow::Result<crate::model::sandbox::Mode> {
        let flag = self
            .sandbox
            .as_deref()
            .and_then(crate::model::sandbox::Mode::parse);
        let mode = crate::run::sandbox::mode(ctx, flag, self.no_sandbox)?;
        crate::run::sandbox::check(mode)?;
        Ok(mode)
    }
}
