//! Agents as they really are (issue 25, items 1-3): a task prompt said once, the
//! session's own conversation continued exactly, and an agent that is not
//! installed failing before anything is made. The agents are fakes on PATH that
//! behave like Claude Code 2.1.197 and codex-cli 0.171.0 where it matters: they
//! keep their conversations where the real ones do (`~/.claude/projects/<the
//! directory, non-alphanumerics as '-'>/<uuid>.jsonl`; `~/.codex/sessions/
//! YYYY/MM/DD/rollout-<time>-<id>.jsonl`, first line a `session_meta` with `id`
//! and `cwd`), take `--session-id`/`--resume`/`--continue` and `resume
//! <id>`/`--last`, and log their argv and the conversation they started or
//! continued.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{assert_contains, make_executable, Env};

/// The fake `claude`: a conversation per file in its store, as the real one.
const CLAUDE: &str = r#"#!/bin/sh
printf '%s\t%s\t%s\n' claude "$PWD" "$*" >> "$FAKE_ROOT/agents.log"
cwd=$(pwd -P)
store="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/$(printf '%s' "$cwd" | tr -c 'a-zA-Z0-9' -)"
sid= resume= cont=
while [ $# -gt 0 ]; do
  case "$1" in
    --session-id) sid=$2; shift ;;
    -r|--resume) resume=$2; shift ;;
    -c|--continue) cont=1 ;;
    -n|--name|--model|--effort) shift ;;
  esac
  shift
done
mkdir -p "$store"
if [ -n "$resume" ]; then
  if [ ! -s "$store/$resume.jsonl" ]; then
    echo "No conversation found with session ID: $resume" >&2; exit 1
  fi
  id=$resume; what=continued
elif [ -n "$cont" ]; then
  id=$(ls -t "$store" 2>/dev/null | sed -n 's/\.jsonl$//p' | head -n 1)
  if [ -z "$id" ]; then echo 'No conversation found to continue' >&2; exit 1; fi
  what=continued
else
  id=${sid:-$(cat /proc/sys/kernel/random/uuid)}
  if [ -e "$store/$id.jsonl" ]; then echo "Session ID $id is already in use." >&2; exit 1; fi
  what=started
fi
echo '{"type":"user"}' >> "$store/$id.jsonl"
printf 'claude\t%s\t%s\t%s\n' "$what" "$id" "$cwd" >> "$FAKE_ROOT/conversations.log"
if [ -e "$FAKE_ROOT/offline" ]; then echo 'API Error: Connection error.' >&2; exit 1; fi
"#;

/// The fake `codex`: a session file per session, its id and cwd on its first line.
const CODEX: &str = r#"#!/bin/sh
printf '%s\t%s\t%s\n' codex "$PWD" "$*" >> "$FAKE_ROOT/agents.log"
cwd=$(pwd -P)
home="${CODEX_HOME:-$HOME/.codex}"
mine() { grep -l "\"cwd\":\"$cwd\"" $(find "$home/sessions" -name 'rollout-*.jsonl' 2>/dev/null) /dev/null 2>/dev/null; }
file=
if [ "$1" = resume ]; then
  if [ "$2" = --last ]; then
    file=$(ls -t $(mine) 2>/dev/null | head -n 1)
  else
    file=$(find "$home/sessions" -name "rollout-*-$2.jsonl" 2>/dev/null | head -n 1)
    if [ -z "$file" ]; then echo "No saved session found with ID $2" >&2; exit 1; fi
  fi
fi
if [ -n "$file" ]; then
  id=$(basename "$file" .jsonl | sed 's/.*-\([0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}\)$/\1/')
  what=continued
else
  id=$(cat /proc/sys/kernel/random/uuid)
  what=started
  if [ ! -e "$FAKE_ROOT/codex-saves-nothing" ]; then
    day="$home/sessions/$(date -u +%Y/%m/%d)"
    mkdir -p "$day"
    file="$day/rollout-$(date -u +%Y-%m-%dT%H-%M-%S)-$id.jsonl"
    printf '{"timestamp":"%s","type":"session_meta","payload":{"id":"%s","timestamp":"%s","cwd":"%s","originator":"codex_cli_rs","cli_version":"0.171.0","base_instructions":{"text":"%s"}}}\n' \
      "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$id" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$cwd" "You are Codex." > "$file"
  fi
fi
[ -n "$file" ] && echo '{"type":"turn_context"}' >> "$file"
printf 'codex\t%s\t%s\t%s\n' "$what" "$id" "$cwd" >> "$FAKE_ROOT/conversations.log"
"#;

/// Put the fake `claude` and `codex` first on PATH (logging under the env's root).
pub fn install_fakes(env: &mut Env) {
    let bin = env.root().join("agents-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, script) in [("claude", CLAUDE), ("codex", CODEX)] {
        let path = bin.join(name);
        let script = script.replacen(
            "#!/bin/sh\n",
            &format!("#!/bin/sh\nFAKE_ROOT='{}'\n", env.root().display()),
            1,
        );
        std::fs::write(&path, script).unwrap();
        make_executable(&path);
    }
    env.path_prefix.insert(0, bin);
    // The argv of the profiles themselves; their hooks are attention.rs's (and
    // `the_hooks_come_with_the_conversation_id` below).
    for agent in ["claude", "codex"] {
        let key = format!("bullpen.agent.{agent}.hooks");
        env.git(&env.repo, &["config", &key, "false"]).ok();
    }
}

/// What a fake agent did with a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Turn {
    agent: String,
    what: String,
    id: String,
    cwd: PathBuf,
}

fn fakes() -> Env {
    let mut env = Env::new();
    install_fakes(&mut env);
    env
}

fn turns(env: &Env) -> Vec<Turn> {
    let text = std::fs::read_to_string(env.root().join("conversations.log")).unwrap_or_default();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.splitn(4, '\t').collect();
            Turn {
                agent: f[0].into(),
                what: f[1].into(),
                id: f[2].into(),
                cwd: f[3].into(),
            }
        })
        .collect()
}

fn last_turn(env: &Env) -> Turn {
    turns(env).pop().expect("an agent ran")
}

/// The argv of the last fake agent call (its arguments, as one line).
fn last_args(env: &Env) -> String {
    let text = std::fs::read_to_string(env.root().join("agents.log")).unwrap();
    let line = text.lines().last().expect("an agent ran").to_owned();
    line.splitn(3, '\t').nth(2).unwrap_or_default().to_owned()
}

fn conversation(env: &Env, id: &str) -> Value {
    let path = env
        .repo
        .join(format!(".git/bullpen/local/{id}/conversation.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn row(env: &Env, id: &str) -> Value {
    let json = env.ls_json();
    json.as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
        .unwrap_or_else(|| panic!("no session {id}: {json}"))
}

/// Run a fake agent by hand in `dir`, as a person would.
fn by_hand(env: &Env, agent: &str, dir: &Path, args: &[&str]) {
    let status = env.cmd(agent, dir).args(args).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_task_prompt_is_said_once_and_options_follow_the_session() {
    let env = fakes();
    env.bullpen(&[
        "spawn",
        "--agent",
        "claude",
        "fk2",
        "--",
        "--model",
        "opus",
        "fix the login bug",
    ])
    .ok();
    let uuid = conversation(&env, "fk2")["id"].as_str().unwrap().to_owned();
    assert_eq!(
        last_args(&env),
        format!("--session-id {uuid} --name fk2 --model opus fix the login bug")
    );
    // The record keeps what follows the session; the prompt is not replayed.
    assert_eq!(env.record("fk2")["agent_args"], json!(["--model", "opus"]));
    let plain = json!([
        "/bin/sh",
        "-c",
        "claude --resume \"$@\"",
        "claude",
        uuid,
        "--model",
        "opus"
    ]);
    assert_eq!(row(&env, "fk2")["resume_command"], plain);
    env.bullpen(&["resume", "fk2"]).ok();
    assert_eq!(last_args(&env), format!("--resume {uuid} --model opus"));
    // A new conversation is not given the old task either.
    env.bullpen(&["resume", "fk2", "--fresh"]).ok();
    assert!(
        last_args(&env).ends_with("--name fk2 --model opus"),
        "{}",
        last_args(&env)
    );

    env.bullpen(&[
        "spawn",
        "--agent",
        "codex",
        "t",
        "--",
        "--model",
        "o3",
        "fix",
        "the",
        "\"login\"",
        "bug",
    ])
    .ok();
    assert_eq!(
        last_args(&env),
        "--no-daemon --model o3 fix the \"login\" bug"
    );
    assert_eq!(env.record("t")["agent_args"], json!(["--model", "o3"]));
    let id = last_turn(&env).id;
    env.bullpen(&["resume", "t"]).ok();
    assert_eq!(
        last_args(&env),
        format!("resume {id} --no-daemon --model o3")
    );
}

#[test]
fn claude_code_resumes_exactly_the_sessions_conversation() {
    let env = fakes();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    let own = last_turn(&env);
    assert_eq!(
        (own.what.as_str(), own.cwd.as_path()),
        ("started", wt.as_path())
    );
    assert_eq!(conversation(&env, "a")["id"], own.id.as_str());
    // A second conversation in the worktree, started by hand after it: the
    // most recent there, which `--continue` would pick.
    by_hand(&env, "claude", &wt, &[]);
    let other = last_turn(&env).id;
    assert_ne!(other, own.id);
    let run = env.bullpen(&["resume", "a"]).ok();
    assert_contains(&run.stderr, "agent claude, continuing its conversation");
    assert_eq!(last_turn(&env).id, own.id, "{}", last_args(&env));
    assert_eq!(last_turn(&env).what, "continued");
    // The shared record does not choose it: a forged record naming the other
    // conversation in its commands changes nothing.
    env.edit_record("a", |r| {
        let forged = json!(["/bin/sh", "-c", format!("claude --resume {other}")]);
        r["command"] = forged.clone();
        r["process"]["command"] = forged;
        r["conversation"] = other.clone().into();
    });
    env.bullpen(&["resume", "a"]).ok();
    assert_eq!(last_turn(&env).id, own.id);
    assert!(!last_args(&env).contains(&other));
}

#[test]
fn fresh_starts_a_conversation_that_becomes_the_sessions_own() {
    let env = fakes();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let first = last_turn(&env).id;
    env.bullpen(&["resume", "a", "--fresh"]).ok();
    let fresh = last_turn(&env);
    assert_eq!(fresh.what, "started");
    assert_ne!(fresh.id, first);
    assert_eq!(conversation(&env, "a")["id"], fresh.id.as_str());
    env.bullpen(&["resume", "a"]).ok();
    assert_eq!(last_args(&env), format!("--resume {}", fresh.id));

    env.bullpen(&["spawn", "--agent", "codex", "b"]).ok();
    let first = last_turn(&env).id;
    env.bullpen(&["resume", "b", "--fresh"]).ok();
    let fresh = last_turn(&env);
    assert_eq!(fresh.what, "started");
    assert_ne!(fresh.id, first);
    env.bullpen(&["resume", "b"]).ok();
    assert_eq!(last_args(&env), format!("resume {} --no-daemon", fresh.id));
    assert_eq!(last_turn(&env).id, fresh.id);
}

#[test]
fn codex_is_resumed_by_the_id_learned_from_its_store() {
    let env = fakes();
    env.bullpen(&["spawn", "--agent", "codex", "t"]).ok();
    let wt = env.worktree_of("t");
    let own = last_turn(&env).id;
    assert_eq!(
        conversation(&env, "t")["id"],
        own.as_str(),
        "learned after the first run"
    );
    // Another session in that directory since, by hand: `--last` would take it.
    by_hand(&env, "codex", &wt, &[]);
    let run = env.bullpen(&["resume", "t"]).ok();
    assert_eq!(last_args(&env), format!("resume {own} --no-daemon"));
    assert_eq!(last_turn(&env).id, own);
    assert!(!run.stderr.contains("most recent"), "{}", run.stderr);
}

#[test]
fn codex_falls_back_to_its_last_session_with_a_note_and_never_takes_a_forged_id() {
    let env = fakes();
    std::fs::write(env.root().join("codex-saves-nothing"), "").unwrap();
    env.bullpen(&["spawn", "--agent", "codex", "t", "--", "--model", "o3"])
        .ok();
    let wt = env.worktree_of("t");
    assert_eq!(conversation(&env, "t")["id"], Value::Null);
    // Something else wrote a "session" of this worktree whose id is an option.
    let day = env.home.join(".codex/sessions/2099/01/01");
    std::fs::create_dir_all(&day).unwrap();
    let forged = json!({
        "timestamp": "2099-01-01T00:00:00.000Z", "type": "session_meta",
        "payload": {"id": "--dangerously-bypass-approvals-and-sandbox",
                    "timestamp": "2099-01-01T00:00:00.000Z", "cwd": wt}
    });
    std::fs::write(
        day.join("rollout-2099-01-01T00-00-00-x.jsonl"),
        format!("{forged}\n"),
    )
    .unwrap();
    let run = env.bullpen(&["resume", "t"]).ok();
    assert_eq!(last_args(&env), "resume --last --no-daemon --model o3");
    assert_contains(&run.stderr, "bullpen: no codex session of ");
    assert_contains(
        &run.stderr,
        "was found in its store; continuing its most recent one there",
    );
}

#[test]
fn the_fresh_hint_appears_only_when_the_agent_has_no_conversation_of_the_session() {
    let env = fakes();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let id = last_turn(&env).id;
    // Offline: the conversation is there, the agent fails anyway.
    std::fs::write(env.root().join("offline"), "").unwrap();
    let run = env.bullpen(&["resume", "a"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(&run.stderr, "API Error: Connection error.");
    assert!(!run.stderr.contains("--fresh"), "{}", run.stderr);
    std::fs::remove_file(env.root().join("offline")).unwrap();
    // Its conversation gone from Claude Code's store: now a new one is the way on.
    let wt = std::fs::canonicalize(env.worktree_of("a")).unwrap();
    let dir: String = wt
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    std::fs::remove_file(env.home.join(format!(".claude/projects/{dir}/{id}.jsonl"))).unwrap();
    let run = env.bullpen(&["resume", "a"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        &format!("No conversation found with session ID: {id}"),
    );
    assert_contains(
        &run.stderr,
        "hint: agent claude exited 1 and has no conversation of session a to continue; start a \
         new one: git bullpen resume a --fresh",
    );
}

#[test]
fn an_agent_that_is_not_installed_fails_before_anything_is_created() {
    // No fakes: neither claude nor codex is on PATH.
    let env = Env::new();
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "--agent", "claude", "x", "--", "fix it"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: cannot run agent 'claude': its program 'claude' (the built-in profile \
         bullpen.agent.claude) is not on PATH; nothing was created",
    );
    assert_contains(
        &run.stderr,
        "hint: install it or put its directory on PATH; or say where it is: git config \
         bullpen.agent.claude.program /path/to/claude",
    );
    let nothing = |env: &Env, id: &str| {
        assert!(env
            .git(
                &env.repo,
                &["rev-parse", "--verify", "-q", &format!("bullpen/{id}")]
            )
            .fails()
            .stdout
            .is_empty());
        assert!(!env.repo.join(format!(".git/bullpen/local/{id}")).exists());
    };
    nothing(&env, "x");
    // The default agent, with a generated id; and a configured profile.
    env.git_out(&["config", "bullpen.agent", "codex"]);
    let run = env.bullpen(&["spawn", "--bg"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "its program 'codex' (the built-in profile bullpen.agent.codex)",
    );
    env.git_out(&[
        "config",
        "bullpen.agent.mine.command",
        "no-such-agent --yes",
    ]);
    let run = env.bullpen(&["spawn", "--agent", "mine", "y"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "its program 'no-such-agent' (the profile bullpen.agent.mine)",
    );
    nothing(&env, "y");
    env.git_out(&["config", "--unset", "bullpen.agent"]);
    env.git_out(&["config", "--remove-section", "bullpen.agent.mine"]);
    assert_eq!(env.snapshot(), before, "nothing was created");
    // Where the program is, git config can say.
    let mut env = env;
    install_fakes(&mut env);
    let fake = env.root().join("agents-bin/claude");
    env.path_prefix.clear();
    env.git_out(&[
        "config",
        "bullpen.agent.claude.program",
        fake.to_str().unwrap(),
    ]);
    env.bullpen(&["spawn", "--agent", "claude", "z"]).ok();
    assert_eq!(last_turn(&env).what, "started");
}

/// With its hooks wired (the default), Claude Code still starts exactly the
/// session's conversation, and is resumed by it.
#[test]
fn the_hooks_come_with_the_conversation_id() {
    let env = fakes();
    env.git(
        &env.repo,
        &["config", "--unset", "bullpen.agent.claude.hooks"],
    )
    .ok();
    env.bullpen(&[
        "spawn", "--agent", "claude", "hk", "--", "--model", "opus", "go",
    ])
    .ok();
    let uuid = conversation(&env, "hk")["id"].as_str().unwrap().to_owned();
    let args = last_args(&env);
    assert!(
        args.starts_with(&format!("--session-id {uuid} --name hk --settings ")),
        "{args}"
    );
    assert!(args.ends_with(" --model opus go"), "{args}");
    env.bullpen(&["resume", "hk"]).ok();
    let args = last_args(&env);
    assert!(
        args.starts_with(&format!("--resume {uuid} --settings ")),
        "{args}"
    );
    assert!(args.ends_with(" --model opus"), "{args}");
}
