//! Codex's own hooks (codex-cli 0.171.0): the built-in profile wires them
//! through `-c hooks.<Event>=[...]` overrides (and its notify program through
//! `-c notify=[...]`), with `--no-daemon` so that they run in the session's own
//! run. The fake `codex` takes those overrides as the real one does and, for
//! each line `<Event> <payload>` of a FIFO, runs the command the override names
//! with the payload on stdin (`notify`: the notify program, the payload as its
//! last argument). The payloads are the shapes of the `*.command.input`
//! schemas inside the 0.171.0 binary, in the orders a session produces.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::attention::{lines, notify_into, wait_activity};
use crate::bg::{wait_for, Bg};
use crate::pty::Term;
use crate::support::{make_executable, BIN};

/// A fake `codex` in `dir`: refuses to run without `--no-daemon`, keeps each
/// `-c hooks.<Event>` command, then serves the FIFO `feed`, appending
/// `<Event> <status>` to `acks` after each.
fn fake_codex(dir: &Path, feed: &Path, acks: &Path) -> PathBuf {
    let path = dir.join("codex");
    let hooks = dir.join("codex-hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        &path,
        format!(
            r#"#!/bin/sh
hooks='{hooks}'
daemon=1 notify=
while [ $# -gt 0 ]; do
  case "$1" in
    --no-daemon) daemon= ;;
    -c)
      case "$2" in
        notify=*) notify=${{2#notify=}} ;;
        hooks.*)
          event=${{2#hooks.}}; event=${{event%%=*}}
          printf '%s' "$2" | sed 's/.*command="\(.*\)"}}]}}]$/\1/' > "$hooks/$event" ;;
      esac
      shift ;;
  esac
  shift
done
[ -z "$daemon" ] || {{ echo 'would run in the shared daemon' >&2; exit 2; }}
exec 3<'{feed}'
while read -r event payload <&3; do
  if [ "$event" = notify ]; then
    list=$(printf '%s' "$notify" | sed 's/^\[//; s/\]$//; s/","/" "/g')
    eval "set -- $list"
    "$@" "$payload"
  else
    [ -s "$hooks/$event" ] || {{ echo "no hook for $event" >&2; exit 3; }}
    printf '%s' "$payload" | sh -c "$(cat "$hooks/$event")"
  fi
  echo "$event $?" >> '{acks}'
done
"#,
            hooks = hooks.display(),
            feed = feed.display(),
            acks = acks.display()
        ),
    )
    .unwrap();
    make_executable(&path);
    path
}

struct Codex {
    env: Bg,
    feed: std::fs::File,
    acks: PathBuf,
}

impl Codex {
    fn start() -> Codex {
        let env = Bg::new();
        let feed = env.root().join("feed");
        let acks = env.root().join("acks");
        let made = Command::new("mkfifo").arg(&feed).status().unwrap();
        assert!(made.success());
        let codex = fake_codex(&env.root(), &feed, &acks);
        env.git(
            &env.repo,
            &[
                "config",
                "bullpen.agent.codex.command",
                codex.to_str().unwrap(),
            ],
        )
        .ok();
        env.bullpen(&["spawn", "--bg", "--agent", "codex", "a"])
            .ok();
        // Non-blocking, so that an agent that never opens its end fails the
        // test (ENXIO until then) instead of hanging it.
        let feed = wait_for("the agent to open its feed", || {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&feed)
                .ok()
        });
        Codex { env, feed, acks }
    }

    fn send(&mut self, event: &str, payload: Value) -> String {
        let before = lines(&self.acks).len();
        writeln!(self.feed, "{event} {payload}").unwrap();
        self.feed.flush().unwrap();
        wait_for(&format!("the hook of {event}"), || {
            lines(&self.acks).get(before).cloned()
        })
    }
}

/// The fields every turn-scoped Codex hook gets.
fn turn(event: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": "01a2348a-6eee-7340-9911-dc0a738eac68",
        "turn_id": "01a2348a-6f9e-7c32-8860-c9426be20dd5",
        "transcript_path": "/h/.codex/sessions/2026/12/02/rollout-2026-12-02T02-16-57-01a2348a-6eee-7340-9911-dc0a738eac68.jsonl",
        "cwd": "/w", "hook_event_name": event, "model": "gpt-6.2-sol",
        "permission_mode": "default",
    });
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        v.extend(extra.clone());
    }
    v
}

fn bash(event: &str) -> Value {
    turn(
        event,
        json!({"tool_name": "Bash", "tool_use_id": "call_1",
            "tool_input": {"command": "cargo test", "description": "run the tests"}}),
    )
}

#[test]
fn codex_s_hooks_move_the_state_every_way_a_session_goes() {
    let mut codex = Codex::start();
    let notified = codex.env.root().join("notified");
    notify_into(&codex.env, &codex.env.repo, &notified);
    let done = json!({"type": "agent-turn-complete", "turn-id": "1",
        "input-messages": ["run the tests"], "last-assistant-message": "done"});
    let steps: Vec<(&str, Value, &str)> = vec![
        (
            "SessionStart",
            json!({"session_id": "s", "transcript_path": null, "cwd": "/w",
                "hook_event_name": "SessionStart", "model": "gpt-6.2-sol",
                "permission_mode": "default", "source": "startup"}),
            "idle",
        ),
        (
            "UserPromptSubmit",
            turn("UserPromptSubmit", json!({"prompt": "run the tests"})),
            "working",
        ),
        ("PreToolUse", bash("PreToolUse"), "working"),
        // The approval prompt, then its answer.
        (
            "PermissionRequest",
            bash("PermissionRequest"),
            "needs input",
        ),
        (
            "PostToolUse",
            turn(
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_use_id": "call_1",
                    "tool_input": {"command": "cargo test"}, "tool_response": "ok"}),
            ),
            "working",
        ),
        (
            "Stop",
            turn(
                "Stop",
                json!({"stop_hook_active": false, "last_assistant_message": "done"}),
            ),
            "idle",
        ),
        // Its notify program after the Stop hook: no less exact.
        ("notify", done, "idle"),
        (
            "UserPromptSubmit",
            turn("UserPromptSubmit", json!({"prompt": "and commit"})),
            "working",
        ),
        (
            "PermissionRequest",
            bash("PermissionRequest"),
            "needs input",
        ),
        // Interrupted at the prompt (Esc): the turn is over.
        ("Interrupt", turn("Interrupt", json!({})), "idle"),
        (
            "SessionEnd",
            json!({"session_id": "s", "transcript_path": null, "cwd": "/w",
                "hook_event_name": "SessionEnd", "reason": "other"}),
            "exited",
        ),
    ];
    for (event, payload, want) in steps {
        assert_eq!(codex.send(event, payload), format!("{event} 0"));
        wait_activity(&codex.env, "a", want);
    }
    let want = format!("a|needs input|{}", codex.env.repo.display());
    assert_eq!(lines(&notified), [want.clone(), want]);
    codex.env.bullpen(&["stop", "a"]);
}

/// Where Codex has not been told to trust bullpen's hooks, only its notify
/// program runs: it ends a turn, and the terminal's view takes over again as
/// soon as the program works (workmux #197: "waiting" never shown for Codex).
#[test]
fn codex_s_notify_alone_gives_way_to_the_terminal_when_it_works_again() {
    let env = Bg::new();
    let codex = env.root().join("codex");
    let gone = env.root().join("prompted");
    let done = env.root().join("done");
    // A turn, notify, its prompt; a typed prompt; a turn that asks on its terminal.
    std::fs::write(
        &codex,
        format!(
            r#"#!/bin/sh
notify=
while [ $# -gt 0 ]; do
  case "$1" in -c) case "$2" in notify=*) notify=${{2#notify=}} ;; esac; shift ;; esac
  shift
done
list=$(printf '%s' "$notify" | sed 's/^\[//; s/\]$//; s/","/" "/g')
eval "set -- $list"
printf 'working\r\n'
"$@" '{{"type":"agent-turn-complete","turn-id":"1","input-messages":["hi"],"last-assistant-message":"hello"}}'
printf '> '
read prompt
: > '{gone}'
printf 'working on %s\r\n' "$prompt"
printf 'Allow command cargo test? [y/n] '
read answer
while [ ! -e '{done}' ]; do printf '.'; sleep 0.05; done
"#,
            gone = gone.display(),
            done = done.display()
        ),
    )
    .unwrap();
    make_executable(&codex);
    env.git(
        &env.repo,
        &[
            "config",
            "bullpen.agent.codex.command",
            codex.to_str().unwrap(),
        ],
    )
    .ok();
    let notified = env.root().join("notified");
    notify_into(&env, &env.repo, &notified);
    env.bullpen(&["spawn", "--bg", "--agent", "codex", "a"])
        .ok();
    wait_activity(&env, "a", "idle");
    // On its prompt, the terminal sees it wait on a read: notify's idle holds,
    // and nobody is called.
    let terminal = env.repo.join(".git/bullpen/local/a/activity-terminal.json");
    wait_for("the terminal's view", || {
        std::fs::read_to_string(&terminal)
            .ok()
            .filter(|t| t.contains("needs_input"))
    });
    assert_eq!(env.row("a")["activity"], "idle");
    assert_eq!(lines(&notified), Vec::<String>::new());

    // A prompt typed: it works, then asks on its terminal.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut t = Term::spawn(cmd, 24, 80);
    t.expect("detach with Ctrl-\\");
    t.send(b"run the tests\r");
    wait_for("the prompt read", || gone.exists().then_some(()));
    t.send(b"\x1c");
    t.wait();
    wait_activity(&env, "a", "needs input");
    let want = format!("a|needs input|{}", env.repo.display());
    wait_for("notify", || {
        (lines(&notified) == [want.clone()]).then_some(())
    });
    env.bullpen(&["stop", "a"]);
}
