//! `git bullpen spawn`: a new session: branch, worktree, record; then run its command.

use std::path::Path;

use anyhow::Result;

use super::RunArgs;
use crate::context::Ctx;
use crate::model::{config, Error, SessionId};
use crate::run::{self, env};
use crate::spawn::{self, create_session};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn fix-login -- claude
  git bullpen spawn --base origin/main -- sh -c 'make test'
  git bullpen spawn            # generated id, runs bullpen.command, $SHELL or /bin/sh
  git bullpen spawn --bg fix-login -- claude -p 'fix the login bug'

The worktree is created under the worktree root ($BULLPEN_HOME/worktrees/<repo-key>/, \
or git config bullpen.worktreeRoot) and its path is printed on stderr. The command runs \
there with BULLPEN_SESSION, BULLPEN_BRANCH and BULLPEN_WORKTREE set; bullpen exits with \
its status. Commits it made get a provenance note in refs/notes/bullpen.

With --bg, bullpen starts a detached supervisor (its own session, stdin from /dev/null, \
output appended to <git common dir>/bullpen/logs/<id>.log) and returns as soon as the \
command is recorded running: the id is printed on stdout, the worktree on stderr. The \
run survives the terminal; see it with `git bullpen ls` and `git bullpen logs <id>`, \
end it with `git bullpen stop <id>`. --bg needs a command (or bullpen.command).";

/// Start a new session in its own worktree and branch, and run a command there.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Session id ([a-z0-9][a-z0-9._-]{0,62}); generated when omitted.
    #[arg(value_name = "ID")]
    pub id: Option<SessionId>,

    /// Revision the session branch starts from.
    #[arg(long, value_name = "REV", default_value = "HEAD", add = clap_complete::ArgValueCandidates::new(crate::complete::revision_candidates))]
    pub base: String,

    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    let RunArgs { bg, command } = args.run;
    if bg && command.is_empty() && !env::has_configured_command(&ctx) {
        return Err(Error::failed("spawn --bg needs a command")
            .hint(format!(
                "give one after `--`, or set git config {} (a background run has no \
                 terminal for an interactive shell)",
                config::COMMAND
            ))
            .into());
    }
    let command = if command.is_empty() {
        env::default_command(&ctx)
    } else {
        command
    };
    let created = create_session(&ctx, args.id.as_ref(), &args.base, &command)?;
    let record = &created.stored.record;
    ui.info(format!(
        "session {} on {} in {}",
        record.id, record.branch, record.worktree
    ));
    if bg {
        return spawn::start_background(&ctx, created, &command);
    }
    run::run_foreground(&ctx, created.stored, &command, "running")
}
