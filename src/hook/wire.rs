//! How the built-in agent profiles call `git bullpen hook`, without writing
//! into a worktree: Claude Code reads its hooks from `--settings <file>`, a
//! file under `<common>/bullpen/hooks/`; Codex runs its `notify` program, set
//! with `-c notify=[...]`. `bullpen.agent.<name>.hooks = false` turns it off.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::model::agent::AgentName;
use crate::model::command::render_command;
use crate::sys::atomic;

/// Claude Code's hook events that say something of attention
/// (`model::activity::next`).
pub const CLAUDE_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "Elicitation",
    "ElicitationResult",
    "Stop",
    "StopFailure",
    "SessionEnd",
];

/// The arguments the profile of `name` gets so that the agent reports to
/// `git bullpen hook`: only where `line` (the form it runs) runs that agent's
/// own program (`claude`, `/opt/bin/claude --model opus`), not a command of
/// someone's own under its name; none for an agent bullpen has no wiring for,
/// or with `bullpen.agent.<name>.hooks` false.
pub fn extra_args(ctx: &Ctx, name: &AgentName, line: &str) -> Result<Vec<String>> {
    if !runs_program(line, name.as_str()) {
        return Ok(Vec::new());
    }
    let key = format!("{}.{name}.hooks", crate::model::config::AGENT);
    if let Some(v) = ctx.repo.config_value(&key) {
        if matches!(
            v.as_deref().map(str::trim),
            Some("false" | "no" | "off" | "0")
        ) {
            return Ok(Vec::new());
        }
    }
    let exe = std::env::current_exe()
        .context("cannot tell where git-bullpen is, for the agent's hooks")?
        .to_string_lossy()
        .into_owned();
    match name.as_str() {
        "claude" => {
            let path = claude_settings_path(ctx);
            let mut text = serde_json::to_vec_pretty(&claude_settings(&exe))
                .context("cannot serialize Claude Code's settings")?;
            text.push(b'\n');
            // The same for every session (the hook finds its session itself),
            // naming the git-bullpen that runs; written when it differs.
            if std::fs::read(&path).ok().as_deref() != Some(&text[..]) {
                atomic::write(&path, &text)?;
            }
            Ok(vec![
                "--settings".to_owned(),
                path.to_string_lossy().into_owned(),
            ])
        }
        "codex" => {
            let argv = [exe, "hook".to_owned(), "codex-notify".to_owned()];
            // A TOML array of strings: JSON's string escapes are TOML's.
            let toml = serde_json::to_string(&argv).context("cannot serialize codex's notify")?;
            Ok(vec!["-c".to_owned(), format!("notify={toml}")])
        }
        _ => Ok(Vec::new()),
    }
}

/// Pure: does the shell line `line` run `program` (its first word, by file name)?
pub fn runs_program(line: &str, program: &str) -> bool {
    line.split_whitespace()
        .next()
        .and_then(|w| w.rsplit('/').next())
        .is_some_and(|w| w == program)
}

fn claude_settings_path(ctx: &Ctx) -> PathBuf {
    ctx.layout
        .state_dir
        .join("hooks")
        .join("claude-settings.json")
}

/// Pure: Claude Code settings that run `<exe> hook <event>` for each event of
/// [`CLAUDE_EVENTS`] (hooks' shape: `{"hooks": {"<Event>": [{"matcher": "*",
/// "hooks": [{"type": "command", "command": "..."}]}]}}`).
pub fn claude_settings(exe: &str) -> Value {
    let mut hooks = serde_json::Map::new();
    for event in CLAUDE_EVENTS {
        let command = render_command(&[exe.to_owned(), "hook".to_owned(), (*event).to_owned()]);
        hooks.insert(
            (*event).to_owned(),
            json!([{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]),
        );
    }
    json!({ "hooks": hooks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_go_only_to_the_agent_s_own_program() {
        assert!(runs_program("claude", "claude"));
        assert!(runs_program("claude --continue", "claude"));
        assert!(runs_program("/opt/bin/claude --model opus", "claude"));
        assert!(!runs_program("echo start >> log", "claude"));
        assert!(!runs_program("my-claude", "claude"));
        assert!(!runs_program("", "claude"));
    }

    #[test]
    fn claude_settings_run_the_hook_for_every_event() {
        let s = claude_settings("/opt/my bin/git-bullpen");
        for e in CLAUDE_EVENTS {
            assert_eq!(
                s["hooks"][e][0]["hooks"][0]["command"],
                format!("'/opt/my bin/git-bullpen' hook {e}")
            );
            assert_eq!(s["hooks"][e][0]["hooks"][0]["type"], "command");
        }
    }
}
