//! Attention: which session needs you. Fake agents on PATH: one that draws a
//! spinner while it works, asks on its terminal and works again after a key;
//! one (`claude`) that calls the hook its `--settings` names, with Claude
//! Code's event names and payloads, one event per line the test feeds it. No
//! sleep gates a step: each waits for an event (a file, a FIFO, `ls` showing
//! a state) with a generous deadline as the failure bound.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::bg::{wait_for, Bg};
use crate::pty::Term;
use crate::support::{make_executable, Env, BIN};

/// The activity `ls --json` shows for `id`, once it is `want`.
pub(crate) fn wait_activity(env: &Env, id: &str, want: &str) -> Value {
    wait_for(&format!("{id} to be {want}"), || {
        let json = env.ls_json();
        json.as_array()?
            .iter()
            .find(|r| r["id"] == id && r["activity"] == want)
            .cloned()
    })
}

pub(crate) fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `bullpen.notify` appends the session, its state and repository to `file`.
pub(crate) fn notify_into(env: &Env, repo: &Path, file: &Path) {
    let cmd = format!(
        "printf '%s|%s|%s\\n' \"$BULLPEN_SESSION\" \"$BULLPEN_STATE\" \"$BULLPEN_REPOSITORY\" >> '{}'",
        file.display()
    );
    env.git(repo, &["config", "bullpen.notify", &cmd]).ok();
}

fn stop(env: &Env, id: &str) {
    env.bullpen(&["stop", id]);
}

/// A program that spins while working, asks on its terminal, and after an
/// answer spins again until `done` appears.
fn asking_program(env: &Env) -> PathBuf {
    let path = env.root().join("asking");
    let done = env.root().join("done");
    let answered = env.root().join("answered");
    std::fs::write(
        &path,
        format!(
            r#"#!/bin/sh
i=0
while [ $i -lt 5 ]; do printf '\r%s working' "$i"; i=$((i+1)); sleep 0.05; done
printf '\r\nAllow this command? [y/n] '
read answer
echo "$answer" > '{answered}'
while [ ! -e '{done}' ]; do printf '\r%s working again' "$i"; i=$((i+1)); sleep 0.05; done
"#,
            answered = answered.display(),
            done = done.display()
        ),
    )
    .unwrap();
    make_executable(&path);
    path
}

#[test]
fn the_terminal_shows_a_program_that_asks_as_needing_input_then_working_again() {
    let env = Bg::new();
    let notified = env.root().join("notified");
    notify_into(&env, &env.repo, &notified);
    let program = asking_program(&env);
    env.spawn_bg("a", &[program.to_str().unwrap()]);
    let row = wait_activity(&env, "a", "working");
    assert!(row["activity_since"].is_string(), "{row}");

    // `wait --for input` returns the id once it asks.
    let waiter = env
        .cmd(BIN, &env.repo)
        .args(["wait", "--for", "input", "a"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_activity(&env, "a", "needs input");
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a\n");
    let table = env.bullpen(&["ls"]).ok().stdout;
    assert!(table.contains("(needs input"), "{table}");
    // bullpen.notify ran, once, with the session, its state and repository.
    let want = format!("a|needs input|{}", env.repo.display());
    wait_for("notify to run", || {
        (lines(&notified) == [want.clone()]).then_some(())
    });

    // The answer, typed through attach: working again.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut t = Term::spawn(cmd, 24, 80);
    t.expect("detach with Ctrl-\\");
    t.send(b"y\r");
    wait_for("the answer", || {
        env.root().join("answered").exists().then_some(())
    });
    t.send(b"\x1c");
    t.wait();
    wait_activity(&env, "a", "working");
    assert_eq!(lines(&notified).len(), 1, "one transition, one notify");
    std::fs::write(env.root().join("done"), "").unwrap();
    env.wait_state("a", "exited");
    let row = env.row("a");
    assert_eq!(
        row["activity"],
        Value::Null,
        "only a running session has one"
    );
}

/// A fake `claude` that takes `--settings <file>` and, for each line `<Event>
/// <payload>` of the FIFO `feed`, runs the hook command its settings name
/// for that event with the payload on stdin, then appends the event to `acks`.
fn fake_claude(env: &Env, feed: &Path, acks: &Path) -> PathBuf {
    let bin = env.root().join("agents-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("claude");
    std::fs::write(
        &path,
        format!(
            r#"#!/bin/sh
settings=
while [ $# -gt 0 ]; do
  case "$1" in --settings) settings=$2; shift ;; esac
  shift
done
[ -n "$settings" ] || {{ echo 'no --settings' >&2; exit 2; }}
exec 3<'{feed}'
while read -r event payload <&3; do
  cmd=$(grep -o "\"command\": \"[^\"]* hook $event\"" "$settings" | sed 's/^"command": "//; s/"$//')
  [ -n "$cmd" ] || {{ echo "no hook for $event" >&2; exit 3; }}
  printf '%s' "$payload" | eval "$cmd"
  echo "$event $?" >> '{acks}'
done
"#,
            feed = feed.display(),
            acks = acks.display()
        ),
    )
    .unwrap();
    make_executable(&path);
    bin
}

struct Agent {
    env: Bg,
    feed: std::fs::File,
    acks: PathBuf,
}

impl Agent {
    fn start() -> Agent {
        let env = Bg::new();
        let feed = env.root().join("feed");
        let acks = env.root().join("acks");
        let made = Command::new("mkfifo").arg(&feed).status().unwrap();
        assert!(made.success());
        let bin = fake_claude(&env, &feed, &acks);
        // The built-in profile's name, run from where the fake is.
        let claude = bin.join("claude");
        env.git(
            &env.repo,
            &[
                "config",
                "bullpen.agent.claude.command",
                claude.to_str().unwrap(),
            ],
        )
        .ok();
        let resume = format!("{} --continue", claude.display());
        env.git(
            &env.repo,
            &["config", "bullpen.agent.claude.resume", &resume],
        )
        .ok();
        env.bullpen(&["spawn", "--bg", "--agent", "claude", "a"])
            .ok();
        // Opening blocks until the agent has opened its end.
        let feed = open_feed(&feed);
        Agent { env, feed, acks }
    }

    /// Stop the run, and resume the session in the background (a new run).
    fn restart(&mut self) {
        self.env.bullpen(&["stop", "a"]).ok();
        self.env.bullpen(&["resume", "--bg", "a"]).ok();
        let feed = self.env.root().join("feed");
        self.feed = open_feed(&feed);
    }

    /// Send one event; return once the hook has run, with its exit status.
    fn send(&mut self, event: &str, payload: Value) -> String {
        let before = lines(&self.acks).len();
        writeln!(self.feed, "{event} {payload}").unwrap();
        self.feed.flush().unwrap();
        wait_for(&format!("the hook of {event}"), || {
            lines(&self.acks).get(before).cloned()
        })
    }
}

/// The FIFO `path`, once the agent has opened its end: non-blocking, so that
/// an agent that never does fails the test (ENXIO until then) instead of
/// hanging it.
fn open_feed(path: &Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    wait_for("the agent to open its feed", || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .ok()
    })
}

fn tool(name: &str) -> Value {
    json!({
        "session_id": "4a1e", "transcript_path": "/t.jsonl", "cwd": "/w",
        "permission_mode": "default", "tool_name": name,
        "tool_input": {"command": "rm -rf build"}, "tool_use_id": "toolu_1"
    })
}

fn note(kind: &str) -> Value {
    json!({
        "session_id": "4a1e", "hook_event_name": "Notification",
        "message": "Claude needs your permission to use Bash", "notification_type": kind
    })
}

#[test]
fn claude_s_hooks_move_the_state_every_way_a_session_goes() {
    let mut agent = Agent::start();
    let notified = agent.env.root().join("notified");
    notify_into(&agent.env, &agent.env.repo, &notified);
    let steps: Vec<(&str, Value, &str)> = vec![
        (
            "SessionStart",
            json!({"source": "startup", "hook_event_name": "SessionStart"}),
            "idle",
        ),
        (
            "UserPromptSubmit",
            json!({"prompt": "fix the login bug"}),
            "working",
        ),
        ("PreToolUse", tool("Bash"), "working"),
        ("PermissionRequest", tool("Bash"), "needs input"),
        ("Notification", note("permission_prompt"), "needs input"),
        // Answered: back to working (worktrunk #2916 stayed waiting here).
        ("PostToolUse", tool("Bash"), "working"),
        // A question through a tool needs input (orca #7852 showed it working).
        ("PreToolUse", tool("AskUserQuestion"), "needs input"),
        ("Notification", note("idle_prompt"), "needs input"),
        ("PostToolUse", tool("AskUserQuestion"), "working"),
        ("PermissionRequest", tool("Edit"), "needs input"),
        ("PreToolUse", tool("Edit"), "working"),
        ("Stop", json!({"stop_hook_active": false}), "idle"),
        ("Notification", note("idle_prompt"), "idle"),
        (
            "UserPromptSubmit",
            json!({"prompt": "and the tests"}),
            "working",
        ),
        ("Stop", json!({"stop_hook_active": false}), "idle"),
        (
            "SessionEnd",
            json!({"reason": "prompt_input_exit"}),
            "exited",
        ),
    ];
    for (event, payload, want) in steps {
        assert_eq!(agent.send(event, payload), format!("{event} 0"));
        let row = wait_activity(&agent.env, "a", want);
        assert!(row["activity_since"].is_string(), "{row}");
    }
    // Three moves into needs input, three notifications.
    let want = format!("a|needs input|{}", agent.env.repo.display());
    assert_eq!(lines(&notified), [want.clone(), want.clone(), want]);
    stop(&agent.env, "a");
}

#[test]
fn a_new_run_starts_from_nothing_whatever_the_last_one_left() {
    let mut agent = Agent::start();
    let notified = agent.env.root().join("notified");
    notify_into(&agent.env, &agent.env.repo, &notified);
    agent.send("PermissionRequest", tool("Bash"));
    wait_activity(&agent.env, "a", "needs input");
    agent.restart();
    // The last run's `needs input` is not this run's: asking again is a new
    // move into needs input, and calls for a person again.
    agent.send("PermissionRequest", tool("Bash"));
    wait_activity(&agent.env, "a", "needs input");
    assert_eq!(lines(&notified).len(), 2, "{:?}", lines(&notified));
    stop(&agent.env, "a");
}

#[test]
fn a_hook_from_outside_the_session_s_run_is_not_taken() {
    let mut agent = Agent::start();
    agent.send("UserPromptSubmit", json!({"prompt": "p"}));
    wait_activity(&agent.env, "a", "working");
    let wt = agent.env.worktree_of("a");
    // Same session id, same worktree, but not a descendant of its command.
    let mut cmd = agent.env.cmd(BIN, &wt);
    cmd.args(["hook", "PermissionRequest"])
        .env("BULLPEN_SESSION", "a")
        .env("BULLPEN_WORKTREE", &wt)
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(out.stdout.is_empty(), "a hook never prints on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not descend from its command"), "{err}");
    // Another session's run cannot speak for it either.
    let evil = agent.env.root().join("evil");
    std::fs::write(
        &evil,
        format!(
            "#!/bin/sh\nBULLPEN_SESSION=a '{BIN}' hook PermissionRequest </dev/null\necho $? > '{}'\n",
            agent.env.root().join("evil-status").display()
        ),
    )
    .unwrap();
    make_executable(&evil);
    agent
        .env
        .bullpen(&["spawn", "b", "--", evil.to_str().unwrap()])
        .ok();
    let status = std::fs::read_to_string(agent.env.root().join("evil-status")).unwrap();
    assert_eq!(status.trim(), "3");
    assert_eq!(agent.env.row("a")["activity"], "working");
    stop(&agent.env, "a");
}

#[test]
fn ls_attention_puts_who_needs_you_first() {
    let env = Bg::new();
    env.spawn_bg(
        "a-busy",
        &["sh", "-c", "while :; do printf .; sleep 0.05; done"],
    );
    env.spawn_bg("b-asks", &["sh", "-c", "printf 'go on? '; read x"]);
    wait_activity(&env, "b-asks", "needs input");
    wait_activity(&env, "a-busy", "working");
    let json: Value =
        serde_json::from_str(&env.bullpen(&["ls", "--attention", "--json"]).ok().stdout).unwrap();
    let ids: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // Listed by creation, then id: a-busy first, unless asked for attention.
    assert_eq!(ids, ["b-asks", "a-busy"]);
    let plain: Value = serde_json::from_str(&env.bullpen(&["ls", "--json"]).ok().stdout).unwrap();
    assert_eq!(
        plain[0]["id"], "a-busy",
        "without --attention, the usual order"
    );
    stop(&env, "b-asks");
    stop(&env, "a-busy");
}

/// A new repository `name` under the test's root, with one commit.
fn repository(env: &Env, name: &str) -> PathBuf {
    let repo = env.root().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]).ok();
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    env.git(&repo, &["add", "README"]).ok();
    env.git(&repo, &["commit", "-q", "-m", "initial"]).ok();
    repo
}

#[test]
fn every_repository_at_once_and_waiting_for_input_across_them() {
    let env = Bg::new();
    let two = repository(&env, "two");
    let three = repository(&env, "three");
    let elsewhere = env.root().join("other-root");
    env.git(
        &three,
        &[
            "config",
            "bullpen.worktreeRoot",
            elsewhere.to_str().unwrap(),
        ],
    )
    .ok();
    env.bullpen(&["spawn", "one-a", "--", "true"]).ok();
    env.bullpen_in(&two, &["spawn", "two-a", "--", "true"]).ok();
    env.bullpen_in(&three, &["spawn", "three-a", "--", "true"])
        .ok();
    let notified = env.root().join("notified");
    notify_into(&env, &two, &notified);
    env.bullpen_in(
        &two,
        &[
            "spawn",
            "--bg",
            "works",
            "--",
            "sh",
            "-c",
            "while :; do printf .; sleep 0.05; done",
        ],
    )
    .ok();

    // From the repository in another root: all three, each named.
    let out = env
        .bullpen_in(&three, &["ls", "--all-repos", "--json"])
        .ok()
        .stdout;
    let json: Value = serde_json::from_str(&out).unwrap();
    let mut seen: Vec<(String, String)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let repo = PathBuf::from(r["repository"].as_str().unwrap());
            let name = repo.file_name().unwrap().to_string_lossy().into_owned();
            (name, r["id"].as_str().unwrap().to_owned())
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("repo".into(), "one-a".into()),
            ("three".into(), "three-a".into()),
            ("two".into(), "two-a".into()),
            ("two".into(), "works".into()),
        ]
    );
    let table = env.bullpen_in(&three, &["ls", "--all-repos"]).ok().stdout;
    assert!(
        table.contains(&format!("repository: {}", two.display())),
        "{table}"
    );

    // One of them asks: wait --for input --any --all-repos names it.
    env.bullpen_in(
        &two,
        &[
            "spawn",
            "--bg",
            "asks",
            "--",
            "sh",
            "-c",
            "printf 'allow? '; read x",
        ],
    )
    .ok();
    wait_for("asks to need input", || {
        let out = env
            .bullpen_in(&three, &["ls", "--all-repos", "--json"])
            .ok()
            .stdout;
        let json: Value = serde_json::from_str(&out).ok()?;
        json.as_array()?
            .iter()
            .any(|r| r["id"] == "asks" && r["activity"] == "needs input")
            .then_some(())
    });
    let out = env.bullpen(&["wait", "--for", "input", "--any", "--all-repos"]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("asks\t{}\n", two.display()));
    wait_for("notify", || (lines(&notified).len() == 1).then_some(()));
    env.bullpen_in(&two, &["stop", "asks"]);
    env.bullpen_in(&two, &["stop", "works"]);
}

#[test]
fn codex_s_notify_program_ends_its_turn() {
    let env = Bg::new();
    let status = env.root().join("notify-status");
    let codex = env.root().join("codex");
    // Runs the program its `-c notify=[...]` names, with the JSON Codex passes
    // as the last argument, then waits on its terminal (which alone would say
    // `needs input`: the agent's word wins).
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
"$@" '{{"type":"agent-turn-complete","turn-id":"1","input-messages":["fix it"],"last-assistant-message":"done"}}'
echo $? > '{status}'
read x
"#,
            status = status.display()
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
    wait_for("the notify program", || {
        std::fs::read_to_string(&status).ok()
    })
    .trim()
    .eq("0")
    .then_some(())
    .expect("the hook took it");
    wait_activity(&env, "a", "idle");
    // The terminal sees it wait on a read, but the agent reports for this run:
    // its supervisor notifies nobody.
    let terminal = env.repo.join(".git/bullpen/local/a/activity-terminal.json");
    wait_for("the terminal's view", || {
        std::fs::read_to_string(&terminal)
            .ok()
            .filter(|t| t.contains("needs_input"))
    });
    assert_eq!(env.row("a")["activity"], "idle");
    assert_eq!(lines(&notified), Vec::<String>::new());
    stop(&env, "a");
}
