//! How the built-in agent profiles call `git bullpen hook`, without writing
//! into a worktree: Claude Code reads its hooks from `--settings <file>`, a
//! file under `<common>/bullpen/hooks/`; Codex gets its `notify` program and
//! its hooks as `-c` overrides (`-c notify=[...]`, `-c hooks.<Event>=[...]`).
//! `bullpen.agent.<name>.hooks = false` turns it off.
//!
//! Codex (0.171.0) runs a hook from `-c` only once its user has trusted it
//! (`/hooks` in Codex; trust is kept in `~/.codex/config.toml` by the hook's
//! hash), so the overrides are the same for every session: trusted once, they
//! run in each. Codex also gets `--no-daemon`: else its TUI runs the session in a
//! shared app-server daemon that outlives the run, whose hooks would run with
//! the environment of whichever session started it.

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

/// Codex's hook events that say something of attention (its config's names;
/// `codex app-server`'s `hooks/list` accepts each).
pub const CODEX_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
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
    // Codex's run stays the session's own, hooks or not.
    let mut args = match name.as_str() {
        "codex" => vec!["--no-daemon".to_owned()],
        _ => Vec::new(),
    };
    let key = format!("{}.{name}.hooks", crate::model::config::AGENT);
    if let Some(v) = ctx.repo.config_value(&key) {
        if matches!(
            v.as_deref().map(str::trim),
            Some("false" | "no" | "off" | "0")
        ) {
            return Ok(args);
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
            args.extend(codex_overrides(&exe)?);
            Ok(args)
        }
        _ => Ok(args),
    }
}

/// Pure: Codex's `-c` overrides that run `<exe> hook codex-notify` as its
/// notify program and `<exe> hook <Event>` for each of [`CODEX_EVENTS`]
/// (`hooks.<Event> = [{hooks = [{type = "command", command = "..."}]}]`, the
/// shape of Claude Code's settings in TOML).
pub fn codex_overrides(exe: &str) -> Result<Vec<String>> {
    // TOML strings and arrays of strings: JSON's string escapes are TOML's.
    let toml = |v: &Value| serde_json::to_string(v).context("cannot serialize codex's hooks");
    let notify = json!([exe, "hook", "codex-notify"]);
    let mut out = vec!["-c".to_owned(), format!("notify={}", toml(&notify)?)];
    for event in CODEX_EVENTS {
        let command = render_command(&[exe.to_owned(), "hook".to_owned(), (*event).to_owned()]);
        out.push("-c".to_owned());
        out.push(format!(
            "hooks.{event}=[{{hooks=[{{type=\"command\",command={}}}]}}]",
            toml(&Value::String(command))?
        ));
    }
    Ok(out)
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
    fn codex_gets_its_notify_program_and_a_hook_for_every_event() {
        let args = codex_overrides("/opt/my bin/git-bullpen").unwrap();
        assert_eq!(
            args[..2],
            [
                "-c",
                r#"notify=["/opt/my bin/git-bullpen","hook","codex-notify"]"#
            ]
        );
        assert_eq!(args.len(), 2 + 2 * CODEX_EVENTS.len());
        assert_eq!(
            args[3],
            r#"hooks.SessionStart=[{hooks=[{type="command",command="'/opt/my bin/git-bullpen' hook SessionStart"}]}]"#
        );
        for (pair, event) in args[2..].chunks(2).zip(CODEX_EVENTS) {
            assert_eq!(pair[0], "-c");
            assert!(
                pair[1].starts_with(&format!("hooks.{event}=[")),
                "{}",
                pair[1]
            );
            assert!(
                pair[1].ends_with(&format!(" hook {event}\"}}]}}]")),
                "{}",
                pair[1]
            );
        }
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
