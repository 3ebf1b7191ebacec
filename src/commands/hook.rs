//! `git bullpen hook <event>`: an agent's hook says what it is doing (see `crate::hook`).

use std::path::Path;

use anyhow::Result;

use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # in a session's run, as Claude Code's hooks call it:
  echo '{\"tool_name\": \"Bash\"}' | git bullpen hook PermissionRequest
  # as Codex's notify program:
  git bullpen hook codex-notify '{\"type\": \"agent-turn-complete\"}'

Run by an agent's hooks inside a session's run, not by people: the built-in profiles \
wire it up (Claude Code through --settings with a file under the repository's \
.git/bullpen/hooks/, Codex through -c notify=... and -c hooks.<Event>=..., which Codex \
runs once its user has trusted them in /hooks), and nothing is written into the \
worktree. The payload is the agent's JSON on stdin (or, for Codex's notify, the last \
argument).

Events (Claude Code's names, Codex's alike): UserPromptSubmit, PreToolUse, \
PostToolUse, PostToolUseFailure, PermissionDenied and ElicitationResult mean working; \
PermissionRequest, Elicitation, a PreToolUse of AskUserQuestion (or request_user_input) and a Notification of \
type permission_prompt or elicitation_dialog mean needs input; Stop, StopFailure, \
SessionStart, Codex's Interrupt and a Notification of type idle_prompt mean idle; SessionEnd means \
exited; codex-notify with type agent-turn-complete means idle (alone, only until the \
terminal sees the program working again). Other events change nothing.

The session is the one BULLPEN_SESSION names, and the hook is taken only from a \
process that descends from that session's running command: another session's \
processes cannot speak for it. It prints nothing on stdout, and exits 0, or non-zero \
(never 2, which would block the agent's tool) when it was not taken. Set git config \
bullpen.agent.<name>.hooks to false to start an agent without them.";

/// Take an agent's report of what it is doing (run by agents' hooks).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The agent's event (e.g. PermissionRequest, Stop).
    #[arg(value_name = "EVENT")]
    pub event: String,

    /// The event's JSON payload (default: read from stdin).
    #[arg(value_name = "PAYLOAD")]
    pub payload: Option<String>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    crate::hook::hook(&args.event, args.payload.as_deref(), cwd, ui)?;
    Ok(0)
}
