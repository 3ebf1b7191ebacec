//! Sessions that know their agent: profiles, and a plain `resume` that continues
//! the agent's conversation in the session's own worktree. The agents are fakes
//! on PATH (`agent_conversation::install_fakes`), scripts named `claude` and
//! `codex` that record their argv and cwd, and keep their conversations where
//! the real ones do.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{assert_contains, process_ref, Env, Run};

/// One call of a fake agent: which one, where, with what.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    agent: String,
    cwd: PathBuf,
    args: String,
}

/// An environment with fake `claude` and `codex` first on PATH.
struct Agents {
    env: Env,
}

impl std::ops::Deref for Agents {
    type Target = Env;
    fn deref(&self) -> &Env {
        &self.env
    }
}

impl Agents {
    fn new() -> Agents {
        let mut env = Env::new();
        crate::agent_conversation::install_fakes(&mut env);
        Agents { env }
    }

    /// Every call of a fake agent so far.
    fn calls(&self) -> Vec<Call> {
        let text = std::fs::read_to_string(self.root().join("agents.log")).unwrap_or_default();
        text.lines()
            .map(|l| {
                let mut f = l.splitn(3, '\t');
                Call {
                    agent: f.next().unwrap_or_default().to_owned(),
                    cwd: PathBuf::from(f.next().unwrap_or_default()),
                    args: f.next().unwrap_or_default().to_owned(),
                }
            })
            .collect()
    }

    fn last_call(&self) -> Call {
        self.calls().pop().expect("an agent ran")
    }

    /// Forget every conversation (an agent that never saved one).
    fn forget_conversations(&self) {
        for store in [".claude/projects", ".codex/sessions"] {
            let _ = std::fs::remove_dir_all(self.home.join(store));
        }
    }

    /// The conversation bullpen recorded as session `id`'s own.
    fn conversation_id(&self, id: &str) -> String {
        let path = self
            .repo
            .join(format!(".git/bullpen/local/{id}/conversation.json"));
        let c: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        c["id"].as_str().unwrap_or_default().to_owned()
    }
}

fn call(agent: &str, cwd: &Path, args: &str) -> Call {
    Call {
        agent: agent.to_owned(),
        cwd: cwd.to_path_buf(),
        args: args.to_owned(),
    }
}

fn row(env: &Env, id: &str) -> Value {
    let json = env.ls_json();
    json.as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
        .unwrap_or_else(|| panic!("no session {id}: {json}"))
}

#[test]
fn spawn_runs_each_built_in_agents_start_form_in_the_worktree() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    let uuid = env.conversation_id("a");
    assert_eq!(
        env.last_call(),
        call("claude", &wt, &format!("--session-id {uuid} --name a"))
    );
    env.bullpen(&["spawn", "--agent", "codex", "b", "--", "--model", "o3"])
        .ok();
    let wt_b = env.worktree_of("b");
    assert_eq!(
        env.last_call(),
        call("codex", &wt_b, "--no-daemon --model o3")
    );
    // The record keeps the agent's name (and the arguments); ls shows it.
    assert_eq!(env.record("a")["agent"], "claude");
    assert_eq!(env.record("b")["agent"], "codex");
    assert_eq!(env.record("b")["agent_args"], json!(["--model", "o3"]));
    assert_eq!(row(&env, "a")["agent"], "claude");
    let table = env.bullpen(&["ls"]).ok().stdout;
    assert_contains(&table, "AGENT");
    assert!(
        table
            .lines()
            .any(|l| l.contains(" a ") && l.contains("claude")),
        "{table}"
    );
    // A plain session has no agent.
    env.bullpen(&["spawn", "c", "--", "true"]).ok();
    assert_eq!(row(&env, "c")["agent"], Value::Null);
    assert!(env.record("c").get("agent").is_none());
}

#[test]
fn a_plain_resume_after_the_run_ended_continues_in_the_same_worktree() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    env.bullpen(&["spawn", "--agent", "codex", "b", "--", "--model", "o3"])
        .ok();
    let (wt_a, wt_b) = (env.worktree_of("a"), env.worktree_of("b"));
    let (uuid, codex_id) = (env.conversation_id("a"), env.conversation_id("b"));
    let continue_a = format!("--resume {uuid}");
    // What a plain resume runs is what ls --json says it runs.
    assert_eq!(
        row(&env, "a")["session_command"],
        json!(["/bin/sh", "-c", "claude --resume \"$@\"", "claude", uuid])
    );
    // From anywhere: the main worktree, the other session's worktree.
    let run = env.bullpen_in(&wt_b, &["resume", "a"]).ok();
    assert_contains(&run.stderr, "agent claude, continuing its conversation");
    assert_eq!(env.last_call(), call("claude", &wt_a, &continue_a));
    env.bullpen(&["resume", "b"]).ok();
    assert_eq!(
        env.last_call(),
        call(
            "codex",
            &wt_b,
            &format!("resume {codex_id} --no-daemon --model o3")
        )
    );
    // It stays an agent session: again.
    env.bullpen(&["resume", "a"]).ok();
    assert_eq!(env.last_call(), call("claude", &wt_a, &continue_a));
}

#[test]
fn a_plain_resume_after_a_reboot_continues_the_conversation() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    // The machine rebooted while the agent ran in the background: the record says
    // running, with the boot id of the boot before, and this machine's local
    // proof of that run is as the supervisor wrote it then. Since the reboot, a
    // process that has nothing to do with it holds the same ids (pid, process
    // group, session): after a reboot nothing of the run lives, whatever does.
    let holder = KillOnDrop({
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("1000");
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        cmd.spawn().unwrap()
    });
    let holder_pid = holder.0.id();
    let old_boot = "00000000-0000-4000-8000-000000000000";
    let me = crate::bg::wait_for("the holder to exec", || {
        let comm = std::fs::read_to_string(format!("/proc/{holder_pid}/comm")).ok()?;
        (comm.trim() == "sleep").then(|| process_ref(holder_pid))
    });
    let pid = me["pid"].as_u64().unwrap();
    let start = me["start_time"].clone();
    env.edit_record("a", |r| {
        r["state"] = "running".into();
        r["exit"] = Value::Null;
        r["process"] = json!({
            "pid": pid, "start_time": start, "boot_id": old_boot, "background": true,
            "supervisor_pid": pid, "supervisor_start_time": start,
            "started_at": "2026-01-01T00:00:00Z",
            "command": ["/bin/sh", "-c", "claude"],
        });
    });
    let local = env
        .repo
        .join(format!(".git/bullpen/local/a/run-{pid}.json"));
    let proof = json!({
        "schema": 1,
        "command": {"pid": pid, "start_time": start, "boot_id": old_boot},
        "supervisor": {"pid": pid, "start_time": start, "boot_id": old_boot},
        "background": true,
        "started_at": "2026-01-01T00:00:00Z",
    });
    std::fs::write(&local, serde_json::to_vec_pretty(&proof).unwrap()).unwrap();
    assert_eq!(row(&env, "a")["state"], "lost");
    let run = env.bullpen(&["resume", "a"]).ok();
    assert_contains(&run.stderr, "that process is gone");
    let uuid = env.conversation_id("a");
    assert_eq!(
        env.last_call(),
        call("claude", &wt, &format!("--resume {uuid}"))
    );
    assert_eq!(row(&env, "a")["state"], "exited");
    drop(holder);
}

#[test]
fn fresh_starts_a_new_conversation_and_the_session_continues_that_one() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "codex", "a", "--", "--model", "o3"])
        .ok();
    let wt = env.worktree_of("a");
    let run = env.bullpen(&["resume", "a", "--fresh"]).ok();
    assert_contains(&run.stderr, "agent codex, a new conversation");
    assert_eq!(
        env.last_call(),
        call("codex", &wt, "--no-daemon --model o3")
    );
    env.bullpen(&["resume", "a"]).ok();
    let id = env.conversation_id("a");
    assert_eq!(
        env.last_call(),
        call("codex", &wt, &format!("resume {id} --no-daemon --model o3"))
    );
    // --fresh is for agents, and not with a command of its own.
    env.bullpen(&["spawn", "plain", "--", "true"]).ok();
    let run = env.bullpen(&["resume", "plain", "--fresh"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "runs no agent");
    let run = env.bullpen(&["resume", "a", "--fresh", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
}

#[test]
fn a_profile_in_git_config_overrides_the_built_in() {
    let env = Agents::new();
    env.git_out(&[
        "config",
        "bullpen.agent.claude.command",
        "claude --model opus",
    ]);
    env.git_out(&[
        "config",
        "bullpen.agent.claude.resume",
        "claude --continue --model opus",
    ]);
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    assert_eq!(env.last_call(), call("claude", &wt, "--model opus"));
    env.bullpen(&["resume", "a"]).ok();
    assert_eq!(
        env.last_call(),
        call("claude", &wt, "--continue --model opus")
    );
    // A profile of its own, named by bullpen.agent as the default of a spawn
    // without a command; `git -c` counts as git config.
    env.git_out(&[
        "config",
        "bullpen.agent.mine.command",
        "codex --profile mine",
    ]);
    env.git_out(&["config", "bullpen.agent", "mine"]);
    env.bullpen(&["spawn", "b"]).ok();
    assert_eq!(
        env.last_call(),
        call("codex", &env.worktree_of("b"), "--profile mine")
    );
    assert_eq!(env.record("b")["agent"], "mine");
    // It has no resume form: a plain resume says how to give it one.
    let run = env.bullpen(&["resume", "b"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "bullpen.agent.mine.resume");
    env.git_bullpen(
        &env.repo,
        &[
            "-c",
            "bullpen.agent.mine.resume=codex resume --last",
            "bullpen",
            "resume",
            "b",
        ],
    )
    .ok();
    assert_eq!(
        env.last_call(),
        call("codex", &env.worktree_of("b"), "resume --last")
    );
}

#[test]
fn a_record_naming_an_agent_this_machine_has_no_profile_for_is_refused() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let calls = env.calls().len();
    // From another machine (nothing of it recorded here), naming an agent this
    // machine has no profile for.
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/a")).unwrap();
    env.edit_record("a", |r| r["agent"] = "nosuch".into());
    let before = env.snapshot();
    let run = env.bullpen(&["resume", "a"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: cannot resume session a, which runs agent 'nosuch'; nothing was run: no agent \
         profile named 'nosuch' on this machine",
    );
    assert_contains(&run.stderr, "git config bullpen.agent.nosuch.command");
    assert_eq!(env.calls().len(), calls, "nothing ran");
    assert_eq!(env.snapshot(), before, "nothing changed");
    // Recorded here, and the profile is gone from this machine's config since.
    env.git_out(&["config", "bullpen.agent.mine.command", "claude"]);
    env.bullpen(&["spawn", "--agent", "mine", "m"]).ok();
    env.git_out(&["config", "--unset", "bullpen.agent.mine.command"]);
    let calls = env.calls().len();
    let run = env.bullpen(&["resume", "m", "--fresh"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "no agent profile named 'mine' on this machine");
    assert_eq!(env.calls().len(), calls, "nothing ran");
    // A spawn of an agent with no profile fails before anything is created.
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "--agent", "nosuch", "b"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: no agent profile named 'nosuch' on this machine",
    );
    assert_contains(&run.stderr, "git config bullpen.agent.nosuch.command");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_record_whose_agent_or_arguments_differ_from_what_was_recorded_here_is_refused() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a", "--", "--model", "opus"])
        .ok();
    env.bullpen(&["spawn", "--agent", "codex", "b"]).ok();
    let calls = env.calls().len();
    // Another agent than this machine recorded: refused.
    env.edit_record("a", |r| r["agent"] = "codex".into());
    let run = env.bullpen(&["resume", "a"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "not what this machine recorded");
    // Arguments this machine never recorded: refused. (They would reach the
    // agent: a Codex `-c` can name a command to run.)
    env.edit_record("b", |r| {
        r["agent_args"] = json!(["-c", "notify=[\"evil\"]"])
    });
    let run = env.bullpen(&["resume", "b"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "git bullpen resume b -- <command>");
    assert_eq!(env.calls().len(), calls, "nothing ran");
    // A session this machine has no local state for (from another machine):
    // its agent's profile, from here, runs; arguments from the record do not.
    env.bullpen(&["spawn", "--agent", "codex", "c"]).ok();
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/c")).unwrap();
    env.bullpen(&["resume", "c"]).ok();
    assert_eq!(
        env.last_call(),
        call("codex", &env.worktree_of("c"), "resume --last --no-daemon")
    );
    env.edit_record("c", |r| r["agent_args"] = json!(["--yolo"]));
    let run = env.bullpen(&["resume", "c"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "extra arguments were not recorded on this machine",
    );
}

#[test]
fn an_agent_with_no_conversation_to_continue_is_reported_not_restarted() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    env.forget_conversations();
    let uuid = env.conversation_id("a");
    let run: Run = env.bullpen(&["resume", "a"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(&run.stderr, "No conversation found with session ID");
    assert_contains(
        &run.stderr,
        "hint: agent claude exited 1 and has no conversation of session a to continue; start a \
         new one: git bullpen resume a --fresh",
    );
    // One run, not a second one unasked.
    assert_eq!(
        env.last_call(),
        call("claude", &wt, &format!("--resume {uuid}"))
    );
    assert_eq!(
        env.calls().iter().filter(|c| c.cwd == wt).count(),
        2,
        "spawn, then the one resume"
    );
    env.bullpen(&["resume", "a", "--fresh"]).ok();
    env.bullpen(&["resume", "a"]).ok();
    let fresh = env.conversation_id("a");
    assert_ne!(fresh, uuid);
    assert_eq!(
        env.last_call(),
        call("claude", &wt, &format!("--resume {fresh}"))
    );
}

#[test]
fn a_saved_command_replaces_the_agent() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let calls = env.calls().len();
    env.bullpen(&["resume", "--save", "a", "--", "true"]).ok();
    assert!(env.record("a").get("agent").is_none());
    env.bullpen(&["resume", "a"]).ok();
    assert_eq!(
        env.calls().len(),
        calls,
        "the saved command ran, not claude"
    );
}

#[test]
fn the_command_is_told_the_main_worktree_and_the_base() {
    let env = Env::new();
    let out = env.root().join("env.out");
    let script = format!(
        "printf '%s %s %s\\n' \"$BULLPEN_MAIN_WORKTREE\" \"$BULLPEN_BASE\" \"$PWD\" > '{}'",
        out.display()
    );
    let wt = env.spawn_sh("a", &script);
    let head = env.git_out(&["rev-parse", "HEAD"]);
    let main = std::fs::canonicalize(&env.repo).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("{} {head} {}\n", main.display(), wt.display())
    );
    // From another session's worktree too: the main worktree, never the caller's.
    let script_b = script.replace("env.out", "env-b.out");
    env.bullpen_in(&wt, &["spawn", "b", "--", "sh", "-c", &script_b])
        .ok();
    let got = std::fs::read_to_string(env.root().join("env-b.out")).unwrap();
    assert!(
        got.starts_with(&format!("{} {head} ", main.display())),
        "{got}"
    );
    // And in the background, from the supervisor.
    let script_c = script.replace("env.out", "env-c.out");
    env.bullpen(&["spawn", "--bg", "c", "--", "sh", "-c", &script_c])
        .ok();
    env.bullpen(&["wait", "c"]).ok();
    let got = std::fs::read_to_string(env.root().join("env-c.out")).unwrap();
    assert!(
        got.starts_with(&format!("{} {head} ", main.display())),
        "{got}"
    );
}

/// A child the test started, ended however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_session_that_never_ran_starts_its_agent_and_bg_takes_the_default_agent() {
    let env = Agents::new();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    // As a spawn interrupted between its `ready` record and its run leaves it:
    // no conversation can have been saved, so a plain resume starts the one
    // spawn chose.
    env.forget_conversations();
    env.edit_record("a", |r| {
        r["state"] = "ready".into();
        r["process"] = Value::Null;
        r["exit"] = Value::Null;
    });
    let run = env.bullpen(&["resume", "a"]).ok();
    assert_contains(&run.stderr, "agent claude, a new conversation");
    let uuid = env.conversation_id("a");
    assert_eq!(
        env.last_call(),
        call("claude", &wt, &format!("--session-id {uuid} --name a"))
    );
    // `spawn --bg` with no command runs git config bullpen.agent.
    env.git_out(&["config", "bullpen.agent", "codex"]);
    let run = env.bullpen(&["spawn", "--bg", "b"]).ok();
    assert_eq!(run.stdout, "b\n");
    env.bullpen(&["wait", "b"]).ok();
    assert_eq!(
        env.last_call(),
        call("codex", &env.worktree_of("b"), "--no-daemon")
    );
}
