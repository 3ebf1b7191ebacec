//! `git bullpen resume`: run a session's command again, in its recorded worktree
//! and nowhere else (see `crate::resume`).

use std::path::Path;

use anyhow::Result;

use super::RunArgs;
use crate::context::Ctx;
use crate::model::remote::Target;
use crate::model::{Error, SessionId};
use crate::resume::remote::{resume_remote, RemoteRequest};
use crate::resume::{resume, Request};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # the recorded command, again (an agent: its conversation)
  git bullpen resume fix-login
  # an agent session: a new conversation
  git bullpen resume fix-login --fresh
  git bullpen resume fix-login -- claude --continue
  git bullpen resume fix-login -- git log --oneline -3
  git bullpen resume --bg fix-login -- claude -p 'now add tests'
  # from now on
  git bullpen resume --save fix-login -- claude --continue
  # the session you are in
  cd \"$(git bullpen path fix-login)\" && git bullpen resume
  # pushed from elsewhere
  git bullpen resume origin/fix-login -- claude --continue
  # an agent session: this machine's profile
  git bullpen resume origin/fix-login

The command runs in the session's recorded worktree, whatever directory (or worktree \
of the repository) you run resume from. If that directory was deleted and the branch \
bullpen/<id> still exists, the worktree is recreated at the same path first (said on \
stderr). Anything else at the recorded path (a file, a symlink, a plain or empty \
directory, another repository, a worktree on another branch or with a detached HEAD) \
is left alone and resume fails, naming what is there. A session that is running is \
not resumed. One that gc collected is recreated at its recorded path (where an \
agent finds its conversation again) from its branch, or from the tip gc deleted, \
when nothing is there and this machine created it there. Without an id, resume means the session whose \
worktree the current directory is in.

A command given after -- runs once: the session's own command (the one a plain resume \
runs, and `git bullpen ls --json` shows as session_command) stays as it was, unless \
--save makes the new one the session's own. The provenance notes name what really ran. \
A plain resume runs the session's command only if this machine recorded it (spawn, or \
resume --save here): records can arrive from a fetch or a hand edit.

A session that runs an agent (spawn --agent, or git config bullpen.agent) resumes with \
this machine's profile of that agent and continues exactly the session's own \
conversation, by the id this machine recorded (Claude Code: claude --resume <uuid>, the \
id bullpen chose at spawn; Codex: codex resume <id>, the id learned from Codex's store \
after the first run), after the agent exited, a stop, a lost run or a reboot alike; \
where no id is known, its resume form (bullpen.agent.<name>.resume; built in: claude \
--continue, codex resume --last) continues the most recent conversation in the \
worktree, said on stderr. With --fresh (or if the session never ran) its start form \
starts a new conversation, which becomes the session's own. The options given to spawn \
after -- follow either; the task prompt given there is never said again. The record \
names the agent, but what runs, and which conversation, is only ever read from this \
machine's git config and local state: a record naming an agent this machine has no \
profile for, or other arguments than this machine recorded, is refused (exit 125, as every refusal of resume). When \
the resume form fails and the agent's own store holds no conversation of the session, \
bullpen says how to start a new conversation; it does not start one by itself. resume \
--save replaces the agent with the command given.

A worktree that resume recreates gets the files .worktreeinclude names and the \
bullpen.setup commands, as in spawn (--no-setup skips setup); if that fails, the recreated \
worktree is removed again and nothing runs.

With --bg the command runs detached, as with `spawn --bg`: its output is appended to \
the session's log (`git bullpen logs <id>`), and `git bullpen stop <id>` ends it. \
--sandbox (or git config bullpen.sandbox) confines the command as in spawn: it writes \
only its worktree and what a commit on its branch needs.

To go to a session's worktree in your shell: cd \"$(git bullpen path <id>)\".

resume <remote>/<id> continues here a session another machine pushed (`git bullpen \
push` there, `git bullpen fetch` here; `git bullpen ls --remote` lists them). It becomes \
a new session of this repository, made as spawn makes one: a local branch bullpen/<id> \
that tracks <remote>/bullpen/<id>, a worktree under this machine's worktree root, and \
a record whose history starts with the other machine's, so that `git bullpen push` \
from here adds to the remote's record instead of replacing it. It runs the command \
given after --, which becomes the new session's own. With nothing after --, a session \
whose record names an agent runs this machine's profile of that agent (its resume form \
if it ran there, its start form with --fresh), as for any session from elsewhere only \
when the record gives the agent no extra arguments; any other is refused, saying what \
to type. The command, path, process and arguments in the other machine's record are \
never used. .worktreeinclude and bullpen.setup apply to the new worktree as in spawn (--no-setup \
skips setup). An id already used here is refused: pick another with --as <new-id>.";

/// Run a command again in a session's worktree (recreated if it was deleted).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to resume (default: the one whose worktree you are in), or
    /// <remote>/<id>: a session fetched from a remote, continued here.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::resume_candidates))]
    pub id: Option<Target>,

    /// With <remote>/<id>: the id of the new session here (default: its id there).
    #[arg(long = "as", value_name = "NEW-ID")]
    pub as_id: Option<SessionId>,

    /// Make the command given after -- the session's own: what a plain resume
    /// runs from now on.
    #[arg(long, requires = "command")]
    pub save: bool,

    /// For a session that runs an agent: start a new conversation (its
    /// profile's start form) instead of continuing the last one.
    #[arg(long, conflicts_with = "command")]
    pub fresh: bool,

    /// Do not run the bullpen.setup commands in a worktree that resume recreates
    /// (or makes, for <remote>/<id>).
    #[arg(long)]
    pub no_setup: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let id = match args.id {
        Some(Target::Remote(from)) => {
            let ctx = Ctx::discover(cwd, ui)?;
            let sandbox = args.run.sandbox(&ctx)?;
            return resume_remote(
                &ctx,
                RemoteRequest {
                    from,
                    as_id: args.as_id,
                    command: args.run.command,
                    bg: args.run.bg,
                    sandbox,
                    fresh: args.fresh,
                    setup: !args.no_setup,
                },
            );
        }
        Some(Target::Local(id)) => Some(id),
        None => None,
    };
    if let Some(as_id) = &args.as_id {
        let from = id.as_ref().map_or("<id>".to_owned(), |id| id.to_string());
        return Err(Error::usage(format!(
            "--as is for continuing a fetched session: resume <remote>/{from} --as {as_id}"
        ))
        .into());
    }
    let ctx = Ctx::discover(cwd, ui)?;
    let sandbox = args.run.sandbox(&ctx)?;
    let id = ctx.session_or_here(id, cwd, "resume")?;
    resume(
        &ctx,
        Request {
            id,
            command: args.run.command,
            bg: args.run.bg,
            sandbox,
            save: args.save,
            fresh: args.fresh,
            setup: !args.no_setup,
        },
    )
}
