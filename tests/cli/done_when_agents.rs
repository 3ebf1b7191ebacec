//! Issue 25's "Done when", end to end: three agents run in the background in
//! two repositories (one with its worktrees in another root); one asks for
//! permission. `ls --all-repos` (table and `--json`) shows it as `needs input`,
//! `bullpen.notify` has run once, `wait --for input --any --all-repos` has
//! returned its id; after the answer it is `working` again, and the other two
//! are never `needs input`.
//!
//! The one that asks is a fake `claude` that calls the hooks its `--settings`
//! names with Claude Code's payloads (`PermissionRequest`, then the
//! `Notification` of a `permission_prompt`; answered: `PostToolUse`); the
//! second is the same fake in the other repository, working; the third draws
//! a spinner on its terminal. Each step is gated on an event (a FIFO, an ack
//! file, the notify command's file), never on a timer.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::attention::{lines, notify_into};
use crate::bg::{wait_for, Bg};
use crate::support::{make_executable, Env, BIN};

/// A fake `claude` that takes `--settings <file>` and, for each line `<Event>
/// <payload>` of the FIFO `<feeds>/<its session>`, runs the hook command its
/// settings name for that event with the payload on stdin, then appends
/// `<Event> <status>` to `<feeds>/<its session>.acks`.
fn fake_claude(env: &Env, feeds: &Path) -> PathBuf {
    let path = env.root().join("claude");
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
feed='{feeds}'/$BULLPEN_SESSION
exec 3<"$feed"
while read -r event payload <&3; do
  cmd=$(grep -o "\"command\": \"[^\"]* hook $event\"" "$settings" | sed 's/^"command": "//; s/"$//')
  [ -n "$cmd" ] || {{ echo "no hook for $event" >&2; exit 3; }}
  printf '%s' "$payload" | eval "$cmd"
  echo "$event $?" >> "$feed.acks"
done
"#,
            feeds = feeds.display()
        ),
    )
    .unwrap();
    make_executable(&path);
    path
}

/// One fake claude's feed: events in, acks out.
struct Feed {
    file: std::fs::File,
    acks: PathBuf,
}

impl Feed {
    /// The FIFO for session `id`, made before its agent starts.
    fn make(feeds: &Path, id: &str) -> PathBuf {
        let path = feeds.join(id);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success());
        path
    }

    /// Open it once the agent has opened its end (non-blocking: an agent that
    /// never does fails the test instead of hanging it).
    fn open(path: &Path) -> Feed {
        let file = wait_for("the agent to open its feed", || {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .ok()
        });
        Feed {
            file,
            acks: path.with_extension("acks"),
        }
    }

    /// Send one event; return once its hook has run, with its exit status.
    fn send(&mut self, event: &str, payload: Value) -> String {
        let before = lines(&self.acks).len();
        writeln!(self.file, "{event} {payload}").unwrap();
        self.file.flush().unwrap();
        wait_for(&format!("the hook of {event}"), || {
            lines(&self.acks).get(before).cloned()
        })
    }
}

fn tool(event: &str) -> Value {
    json!({
        "session_id": "4a1e", "transcript_path": "/t.jsonl", "cwd": "/w",
        "permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
        "tool_input": {"command": "npm test", "description": "Run the tests"},
        "tool_use_id": "toolu_1"
    })
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

/// `ls --all-repos --json` from `cwd`: (repository's directory name, id) -> activity.
fn all_repos(env: &Env, cwd: &Path) -> Vec<(String, String, Value)> {
    let out = env
        .bullpen_in(cwd, &["ls", "--all-repos", "--json"])
        .ok()
        .stdout;
    let json: Value = serde_json::from_str(&out).unwrap();
    let mut rows: Vec<(String, String, Value)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let repo = PathBuf::from(r["repository"].as_str().unwrap_or_default());
            let name = repo.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                r["id"].as_str().unwrap().to_owned(),
                r["activity"].clone(),
            )
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    rows
}

#[test]
fn three_agents_in_two_repositories_one_asks_and_is_found_notified_and_answered() {
    let env = Bg::new();
    let two = repository(&env, "two");
    let elsewhere = env.root().join("other-root");
    env.git(
        &two,
        &[
            "config",
            "bullpen.worktreeRoot",
            elsewhere.to_str().unwrap(),
        ],
    )
    .ok();
    let feeds = env.root().join("feeds");
    std::fs::create_dir_all(&feeds).unwrap();
    let claude = fake_claude(&env, &feeds);
    let notified = env.root().join("notified");
    for repo in [&env.repo, &two] {
        env.git(
            repo,
            &[
                "config",
                "bullpen.agent.claude.command",
                claude.to_str().unwrap(),
            ],
        )
        .ok();
        notify_into(&env, repo, &notified);
    }

    // Three agents: one that will ask (here), one at work (in the other root),
    // one drawing a spinner on its terminal (here).
    let ask_path = Feed::make(&feeds, "fix-login");
    let work_path = Feed::make(&feeds, "add-tests");
    env.bullpen(&["spawn", "--bg", "--agent", "claude", "fix-login"])
        .ok();
    env.bullpen_in(&two, &["spawn", "--bg", "--agent", "claude", "add-tests"])
        .ok();
    let done = env.root().join("done");
    let spinner = format!(
        "i=0; while [ ! -e '{}' ]; do printf '\\r%s building' $i; i=$((i+1)); sleep 0.05; done",
        done.display()
    );
    env.spawn_bg("docs", &["sh", "-c", &spinner]);
    let mut asker = Feed::open(&ask_path);
    let mut worker = Feed::open(&work_path);
    for feed in [&mut asker, &mut worker] {
        feed.send("SessionStart", json!({"source": "startup"}));
        feed.send("UserPromptSubmit", json!({"prompt": "go"}));
        feed.send("PreToolUse", tool("PreToolUse"));
    }
    let everyone_working =
        |rows: &[(String, String, Value)]| rows.iter().all(|(_, _, a)| a == "working");
    // The repository whose root is elsewhere knows both roots: its view is every one.
    let rows = wait_for("all three working", || {
        Some(all_repos(&env, &two)).filter(|r| everyone_working(r))
    });
    let names: Vec<(&str, &str)> = rows
        .iter()
        .map(|(r, id, _)| (r.as_str(), id.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("repo", "docs"),
            ("repo", "fix-login"),
            ("two", "add-tests")
        ]
    );

    // Waiting for whoever asks first, across repositories.
    let waiter = env
        .cmd(BIN, &two)
        .args(["wait", "--for", "input", "--any", "--all-repos"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Claude Code asks: the PermissionRequest hook, then its notification.
    assert_eq!(
        asker.send("PermissionRequest", tool("PermissionRequest")),
        "PermissionRequest 0"
    );
    let note = json!({"session_id": "4a1e", "hook_event_name": "Notification",
        "message": "Claude needs your permission to use Bash",
        "notification_type": "permission_prompt"});
    assert_eq!(asker.send("Notification", note), "Notification 0");
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("fix-login\t{}\n", env.repo.display())
    );
    let rows = all_repos(&env, &two);
    let activity = |id: &str| {
        rows.iter()
            .find(|(_, i, _)| i == id)
            .map(|(_, _, a)| a.clone())
            .unwrap()
    };
    assert_eq!(activity("fix-login"), "needs input");
    assert_eq!(activity("add-tests"), "working");
    assert_eq!(activity("docs"), "working");
    let table = env.bullpen_in(&two, &["ls", "--all-repos"]).ok().stdout;
    let line = table
        .lines()
        .find(|l| l.contains("fix-login"))
        .unwrap_or_default();
    assert!(line.contains("needs input"), "{table}");
    // bullpen.notify ran once, for it (its hook started it; not waited for).
    let want = format!("fix-login|needs input|{}", env.repo.display());
    wait_for("notify", || (!lines(&notified).is_empty()).then_some(()));
    assert_eq!(lines(&notified), std::slice::from_ref(&want));

    // Answered: the tool ran.
    assert_eq!(
        asker.send("PostToolUse", tool("PostToolUse")),
        "PostToolUse 0"
    );
    let rows = wait_for("every one working again", || {
        Some(all_repos(&env, &two)).filter(|r| everyone_working(r))
    });
    assert_eq!(rows.len(), 3);
    // Nobody else was ever called for: notify runs on every move into needs input.
    assert_eq!(lines(&notified), [want]);
    std::fs::write(&done, "").unwrap();
    env.wait_state("docs", "exited");
    env.bullpen(&["stop", "fix-login"]);
    env.bullpen_in(&two, &["stop", "add-tests"]);
}
