//! `git bullpen spawn`: a new session: branch, worktree, record; then run its command.

use std::path::Path;

use anyhow::{Context, Result};

use super::RunArgs;
use crate::agent::Invoke;
use crate::context::Ctx;
use crate::model::agent::{AgentName, Form};
use crate::model::local::Conversation;
use crate::model::sandbox::Mode;
use crate::model::SessionId;
use crate::run::{self, env};
use crate::spawn::{self, create_session, Spec};
use crate::trust::decide::typed;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn fix-login -- claude
  # then, any time: git bullpen resume fix-login
  git bullpen spawn --agent claude fix-login
  # extra arguments for the agent
  git bullpen spawn --agent codex tests -- --model o3
  git bullpen spawn --base origin/main -- sh -c 'make test'
  # generated id, runs bullpen.agent, bullpen.command, $SHELL or /bin/sh
  git bullpen spawn
  # then: git bullpen attach fix-login
  git bullpen spawn --bg fix-login -- claude

The worktree is created under the worktree root ($BULLPEN_HOME/worktrees/<repo-key>/, \
or git config bullpen.worktreeRoot) and its path is printed on stderr. The command runs \
there with BULLPEN_SESSION, BULLPEN_BRANCH, BULLPEN_WORKTREE, BULLPEN_MAIN_WORKTREE (the \
repository's main worktree) and BULLPEN_BASE (the commit it started from) set; bullpen \
exits with its status. Commits it made get a provenance note in refs/notes/bullpen. \
The session starts from --base as committed: uncommitted changes in the main worktree \
stay there, and a spawn from there says so once, on stderr (to take them along: git \
stash, then git stash pop in the new worktree).

Agents. --agent <name> runs an agent's profile, and the session remembers the agent: \
a plain `git bullpen resume <id>` then continues exactly the session's own conversation \
in its worktree (after the agent exited, a stop, a lost run or a reboot alike), and \
`resume <id> --fresh` starts a new one that becomes the session's own. The words after \
-- are split as the agent reads them: its options and their values follow the session \
(every later form gets them); the rest is the task prompt, said this once. A profile is \
shell lines, each run with /bin/sh -c, with the words bullpen adds appended as \"$@\" \
(as git runs a ! alias):
  bullpen.agent.<name>.command  how to start the agent
  bullpen.agent.<name>.resume  how to continue its most recent conversation in the current directory (when bullpen knows no conversation id)
  bullpen.agent.<name>.program  the program looked for on PATH before anything is created (and run by the built-in forms)
  bullpen.agent.<name>.prompt  positional (the words that are neither options nor their values are the task prompt; built-ins) or none (every word follows the session; the default of a profile of your own)
  bullpen.agent.<name>.valueOptions  the options that take a value, space-separated: --x one, --x... all up to the next option, --x? an optional one
Built in, and overridden key by key by git config: claude (claude, claude --continue) and \
codex (codex, codex resume --last). A configured command or resume line runs as written, \
with no conversation id added. git config bullpen.agent names the agent a spawn without \
a command runs (before bullpen.command). A profile is only ever read from this machine's \
git config: the record keeps the agent's name, never what it runs or which conversation. \
An agent whose program is not on PATH fails before anything is created.

Claude Code, worked through: `git bullpen spawn --agent claude fix-login -- --model opus \
'fix the login bug'` runs `claude --session-id <uuid> --name fix-login --model opus 'fix \
the login bug'` in the new worktree, the uuid chosen by bullpen and kept in this \
machine's local state. After a reboot, `git bullpen resume fix-login` runs `claude \
--resume <uuid> --model opus` there: that conversation, whatever else was started in \
the directory since. If Claude Code has no such conversation in its store, bullpen says \
how to start a new one (--fresh) and starts nothing by itself.

Codex, worked through: `git bullpen spawn --agent codex tests -- --model o3` runs `codex \
--model o3` in the new worktree; bullpen then learns the id of the session Codex \
recorded for that directory ($CODEX_HOME or ~/.codex, sessions/), and `git bullpen \
resume tests` runs `codex resume <id> --model o3`. Where none is found it says so and \
runs `codex resume --last --model o3`.

Ready worktrees. After `git worktree add`, and before the command runs:
  .worktreeinclude  a file at the top of the main worktree, in gitignore syntax: the ignored files of the main worktree that match it are copied into the new worktree (.env, .envrc, local config; a directory git ignores itself, such as node_modules/, comes whole when it matches), as copy-on-write clones where the file system supports them, plain copies elsewhere, with their permissions. Never a tracked file, never over a file the new worktree has, never a symbolic link or through one; a pattern with a .. component is refused before anything is created.
  bullpen.setup  git config, multi-valued (git config --add bullpen.setup 'npm ci'): commands run in the new worktree in order with /bin/sh -c and the session's environment, stdin from /dev/null, their output on stderr. If one fails, spawn fails and nothing of the session is left (record, branch, worktree, local state). --no-setup skips them. Setup is only ever read from git config, never from a file in the repository, so that cloning a repository never runs its code.
For --bg, both happen before spawn returns (in the foreground), so a failure fails the \
spawn as above.

With --bg, bullpen starts a detached supervisor that runs the command on a terminal of \
its own (a pseudo-terminal; everything written there is appended to <git common \
dir>/bullpen/logs/<id>.log) and returns as soon as the command is recorded running: the \
id is printed on stdout, the worktree on stderr. The run survives the terminal it was \
started from; connect to it with `git bullpen attach <id>` (Ctrl-\\ detaches), see it \
with `git bullpen ls` and `git bullpen logs <id>`, end it with `git bullpen stop <id>`. \
Without a command, --bg starts bullpen.agent, bullpen.command or your shell, as in the \
foreground.

Sandbox. With --sandbox (or git config bullpen.sandbox true) the command runs under \
Landlock, in the foreground and with --bg: it reads everything and writes only its \
worktree, its admin directory (<git dir>/worktrees/<name>), the object store, the files \
of refs/heads/bullpen/ (its branch's ref and lock; the kernel's rules are per directory, \
so other sessions' branches too), its branch's reflog, a private TMPDIR removed after \
the run, /dev/null and the terminals, the state of its agent (~/.claude, ~/.claude.json, \
~/.codex) and what git config bullpen.sandbox.allowWrite adds. Never the repository's \
config, hooks/, packed-refs, info/, other refs, other worktrees or the main checkout: \
nothing that runs later outside the sandbox. So its git runs with gc.auto=0, \
gc.autoPackLimit=0, gc.packRefs=false and maintenance.auto=false (after your own git \
-c); it cannot pack refs, change remotes, install hooks or git stash (refs/stash is \
shared). Signals to processes outside the sandbox are refused too. A kernel without \
Landlock ABI 6 (Linux 6.12) fails --sandbox before anything is made; \
--sandbox=best-effort runs with what the kernel enforces and says what it does not. \
--sandbox --dry-run prints the rules and makes nothing. ls shows a sandboxed run's \
state with (sandboxed); ls --json has the rules as sandbox.";

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

    /// Run this agent's profile (built in: claude, codex; or git config
    /// bullpen.agent.<NAME>.command); what follows `--` is passed to it.
    #[arg(long, value_name = "NAME", add = clap_complete::ArgValueCandidates::new(crate::complete::agent_candidates))]
    pub agent: Option<AgentName>,

    /// Do not run the bullpen.setup commands in the new worktree.
    #[arg(long)]
    pub no_setup: bool,

    /// With --sandbox: print the rules the command would run under (the
    /// paths it may write, and why), and create nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    // A spawn holds no large index, and writes a dozen loose objects.
    crate::sys::memory::reuse_large_frees();
    let ctx = Ctx::discover(cwd, ui)?;
    let sandbox = args.run.sandbox(&ctx)?;
    let RunArgs { bg, command, .. } = args.run;
    // An agent (named, or git config bullpen.agent when no command is given)
    // runs its profile's start form, with what follows `--` as its arguments.
    let agent = match args.agent {
        Some(name) => Some(name),
        None if command.is_empty() => crate::agent::default_agent(&ctx)?,
        None => None,
    };
    // An agent's session is named before it is made: its conversation is.
    let id = match (&agent, args.id) {
        (Some(_), None) => Some(spawn::free_id(&ctx)?),
        (_, id) => id,
    };
    let (command, agent_args, conversation) = match (&agent, &id) {
        (Some(name), Some(id)) => agent_start(&ctx, name, id, &command)?,
        // A background run has a terminal too: the default command runs there.
        _ if command.is_empty() => (env::default_command(&ctx), Vec::new(), None),
        _ => (command, Vec::new(), None),
    };
    let spec = Spec {
        base: &args.base,
        command: &command,
        agent: agent.as_ref().map(|name| (name, agent_args.as_slice())),
        setup: !args.no_setup,
        conversation: conversation.as_ref(),
    };
    if args.dry_run {
        return dry_run(&ctx, id.as_ref(), agent.as_ref(), sandbox);
    }
    // Asked while the worktree is made; said once it is.
    let changes = ctx.repo.main_worktree_changes();
    let created = create_session(&ctx, id.as_ref(), &spec)?;
    let record = &created.stored.record;
    match &agent {
        Some(name) => ui.info(format!(
            "session {} on {} in {} (agent {name})",
            record.id, record.branch, record.worktree
        )),
        None => ui.info(format!(
            "session {} on {} in {}",
            record.id, record.branch, record.worktree
        )),
    }
    if changes.is_some_and(|c| c.join().unwrap_or(false)) {
        ui.info(format!(
            "the uncommitted changes of the main worktree stay there: the session starts from \
             {} as committed; to take them along: git stash, then git stash pop in {}",
            args.base, record.worktree
        ));
    }
    if bg {
        let ready = spawn::mark_ready(&ctx, created)?;
        return spawn::start_background(&ctx, ready, &typed(command), sandbox);
    }
    let record = created.stored.record.clone();
    let status = spawn::run_foreground(&ctx, created, &typed(command), sandbox)?;
    crate::agent::learn_after_run(&ctx, &record);
    Ok(status)
}

/// What a new agent session runs: its profile's start form, with the words
/// after `--` split into the options that follow the session (recorded as its
/// extra arguments) and the task prompt (said this once), and the
/// conversation it starts. Fails before anything is made when the profile or
/// its program is missing.
fn agent_start(
    ctx: &Ctx,
    name: &AgentName,
    id: &SessionId,
    words: &[String],
) -> Result<(Vec<String>, Vec<String>, Option<Conversation>)> {
    let profile = crate::agent::require(ctx, name, None)?;
    let words = profile.split(words);
    let conversation = crate::agent::new_conversation(&profile)?;
    let how = Invoke {
        form: Form::Start,
        session: id,
        existing: false,
        words: &words,
        conversation: conversation.as_ref().and_then(|c| c.id.as_deref()),
    };
    let run = crate::agent::invoke(ctx, &profile, &how)?;
    Ok((run.argv, words.options, conversation))
}

/// `--sandbox --dry-run`: the rules the run would get, and nothing made.
fn dry_run(
    ctx: &Ctx,
    id: Option<&SessionId>,
    agent: Option<&AgentName>,
    sandbox: Mode,
) -> Result<i32> {
    use std::io::Write;
    if sandbox == Mode::Off {
        return Err(crate::model::Error::usage(
            "--dry-run prints the rules of --sandbox: give --sandbox (or set bullpen.sandbox)",
        )
        .into());
    }
    let text = run::sandbox::planned(ctx, id, agent, sandbox)?;
    ctx.ui
        .out()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(0)
}
