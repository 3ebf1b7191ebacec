//! `git bullpen resume`: run a session's command again, in its recorded worktree
//! and nowhere else (see `crate::resume`).

use std::path::Path;

use anyhow::Result;

use super::RunArgs;
use crate::context::Ctx;
use crate::model::SessionId;
use crate::resume::{resume, Request};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen resume fix-login                 # the recorded command, again (an agent: its conversation)
  git bullpen resume fix-login --fresh         # an agent session: a new conversation
  git bullpen resume fix-login -- claude --continue
  git bullpen resume fix-login -- git log --oneline -3
  git bullpen resume --bg fix-login -- claude -p 'now add tests'
  git bullpen resume --save fix-login -- claude --continue   # from now on
  cd \"$(git bullpen path fix-login)\" && git bullpen resume   # the session you are in

The command runs in the session's recorded worktree, whatever directory (or worktree \
of the repository) you run resume from. If that directory was deleted and the branch \
bullpen/<id> still exists, the worktree is recreated at the same path first (said on \
stderr). Anything else at the recorded path (a file, a symlink, a plain or empty \
directory, another repository, a worktree on another branch or with a detached HEAD) \
is left alone and resume fails, naming what is there. A session that is running, or \
that gc collected, is not resumed. Without an id, resume means the session whose \
worktree the current directory is in.

A command given after -- runs once: the session's own command (the one a plain resume \
runs, and `git bullpen ls --json` shows as session_command) stays as it was, unless \
--save makes the new one the session's own. The provenance notes name what really ran. \
A plain resume runs the session's command only if this machine recorded it (spawn, or \
resume --save here): records can arrive from a fetch or a hand edit.

A session that runs an agent (spawn --agent, or git config bullpen.agent) resumes with \
this machine's profile of that agent: its resume form (bullpen.agent.<name>.resume; built \
in: claude --continue, codex resume --last), which continues the agent's most recent \
conversation in the session's worktree, after the agent exited, a stop, a lost run or a \
reboot alike; its start form with --fresh (or if the session never ran). The extra \
arguments given to spawn after -- follow either. The record names the agent, but what \
runs is only ever read from this machine's git config: a record naming an agent this \
machine has no profile for, or other arguments than this machine recorded, is refused \
(exit 3). When the resume form fails (Claude Code exits 1, \"No conversation found to \
continue\", where it saved none), bullpen says so and how to start a new conversation; \
it does not start one by itself. resume --save replaces the agent with the command given.

A worktree that resume recreates gets the files .worktreeinclude names and the \
bullpen.setup commands, as in spawn (--no-setup skips setup); if that fails, the recreated \
worktree is removed again and nothing runs.

With --bg the command runs detached, as with `spawn --bg`: its output is appended to \
the session's log (`git bullpen logs <id>`), and `git bullpen stop <id>` ends it.

To go to a session's worktree in your shell: cd \"$(git bullpen path <id>)\".";

/// Run a command again in a session's worktree (recreated if it was deleted).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to resume (default: the one whose worktree you are in).
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub id: Option<SessionId>,

    /// Make the command given after -- the session's own: what a plain resume
    /// runs from now on.
    #[arg(long, requires = "command")]
    pub save: bool,

    /// For a session that runs an agent: start a new conversation (its
    /// profile's start form) instead of continuing the last one.
    #[arg(long, conflicts_with = "command")]
    pub fresh: bool,

    /// Do not run the bullpen.setup commands in a worktree that resume recreates.
    #[arg(long)]
    pub no_setup: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    let id = ctx.session_or_here(args.id, cwd, "resume")?;
    resume(
        &ctx,
        Request {
            id,
            command: args.run.command,
            bg: args.run.bg,
            save: args.save,
            fresh: args.fresh,
            setup: !args.no_setup,
        },
    )
}
