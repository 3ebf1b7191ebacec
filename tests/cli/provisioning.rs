//! A session while it is being created (`provisioning`): it is its spawner's
//! alone, a change under the spawn makes the spawn undo itself, and an
//! interrupted spawn is finished by the next gc whatever moment it died at.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{make_executable, Env, BIN};

/// A post-checkout hook running `script` (inside `git worktree add`, while the
/// record says `provisioning`).
fn post_checkout(env: &Env, script: &str) {
    let hooks = env.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\n{script}\n")).unwrap();
    make_executable(&hook);
}

fn record_state(env: &Env, id: &str) -> Option<String> {
    let out = env.git(
        &env.repo,
        &["show", &format!("refs/bullpen/sessions/{id}:session.json")],
    );
    if !out.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    v["state"].as_str().map(str::to_owned)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A spawn held in its post-checkout hook: released (and ended) however the
/// test ends.
struct Held {
    child: Option<std::process::Child>,
    gate: std::path::PathBuf,
}

impl Held {
    fn id(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    fn release(mut self) -> std::process::Output {
        let _ = std::fs::write(&self.gate, "");
        self.child.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.gate, "");
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_session_being_created_is_not_resumed_and_runs_one_command() {
    let env = Env::new();
    let gate = env.root().join("go");
    post_checkout(
        &env,
        // Bounded, so that a failing test never leaves a spawn waiting forever.
        &format!(
            "i=0; while [ ! -e {} ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done",
            gate.display()
        ),
    );
    let ran = env.root().join("ran");
    let spawn = Held {
        child: Some(
            env.cmd(BIN, &env.repo)
                .args(["spawn", "x", "--", "sh", "-c"])
                .arg(format!("echo spawn >> {}", ran.display()))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        ),
        gate: gate.clone(),
    };
    wait_for("provisioning", || {
        record_state(&env, "x").as_deref() == Some("provisioning")
    });
    // Bounded: a resume that went on would wait for the spawn's lock forever.
    let mut child = env
        .cmd(BIN, &env.repo)
        .args(["resume", "x", "--", "sh", "-c"])
        .arg(format!("echo resume >> {}", ran.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            std::fs::write(&gate, "").unwrap();
            panic!("resume of a session being created did not return");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let resume: crate::support::Run = child.wait_with_output().unwrap().into();
    assert_eq!(resume.code(), 3, "{}", resume.stderr);
    assert!(
        resume.stderr.contains(&format!(
            "is still being created (by `git bullpen spawn`, pid {})",
            spawn.id()
        )),
        "{}",
        resume.stderr
    );
    let gc = env.bullpen(&["gc", "--json"]).ok();
    assert!(gc.stdout.contains("still being created"), "{}", gc.stdout);
    let out = spawn.release();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "spawn\n");
}

#[test]
fn a_record_changed_under_a_spawn_makes_it_undo_itself() {
    let env = Env::new();
    // While git creates the worktree, something else writes the record.
    post_checkout(
        &env,
        "c=$(git rev-parse refs/bullpen/sessions/x) && \
         n=$(git commit-tree \"$c^{tree}\" -p \"$c\" -m meddled) && \
         git update-ref refs/bullpen/sessions/x \"$n\" \"$c\"",
    );
    let marker = env.root().join("ran");
    let run = env
        .bullpen(&["spawn", "x", "--", "touch", marker.to_str().unwrap()])
        .fails();
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert!(
        run.stderr.contains("changed while it was being created"),
        "{}",
        run.stderr
    );
    assert!(!marker.exists(), "the command ran");
    let branch = env.git(&env.repo, &["rev-parse", "--verify", "-q", "bullpen/x"]);
    assert!(!branch.status.success(), "the branch was kept");
    let wts = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(!wts.contains("/x\n"), "the worktree was kept: {wts}");
}

/// SIGKILL spawn at many moments; after each, gc converges: no session is left
/// `provisioning`, and nothing of a killed spawn (branch, worktree, git's entry)
/// outlives the gc that collected it.
#[test]
fn a_killed_spawn_is_finished_by_the_next_gc_whenever_it_died() {
    let env = Env::new();
    let ids: Vec<String> = (0..24).map(|i| format!("k{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let mut child = env
            .cmd(BIN, &env.repo)
            .args(["spawn", id, "--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1 + (i as u64 * 7) % 50));
        let _ = child.kill();
        let _ = child.wait();
    }
    // git may still be finishing a `worktree add` its killed spawner started.
    wait_for("git to finish", || {
        !std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
            std::fs::read_link(p.path().join("cwd"))
                .is_ok_and(|cwd| cwd.starts_with(&env.repo) || cwd.starts_with(&env.bullpen_home))
                && std::fs::read_to_string(p.path().join("comm")).is_ok_and(|c| c.trim() == "git")
        })
    });
    let interrupted = ids
        .iter()
        .filter(|id| record_state(&env, id).as_deref() == Some("provisioning"))
        .count();
    assert!(interrupted > 0, "no spawn was killed while provisioning");
    eprintln!(
        "{interrupted} of {} spawns killed while provisioning",
        ids.len()
    );
    // A spawn killed inside a ref update leaves that ref's `.lock`, as git would:
    // gc names it with git's advice, and the user (here: the test, nothing else
    // runs in this repository) removes it as the advice says.
    let mut reports = String::new();
    for _ in 0..3 {
        let gc = env.bullpen(&["gc"]);
        reports.push_str(&gc.stdout);
        reports.push_str(&gc.stderr);
        let locks: Vec<&str> = gc
            .stdout
            .split("cannot lock ")
            .skip(1)
            .filter_map(|rest| rest.split(": it exists").next())
            .collect();
        if locks.is_empty() {
            break;
        }
        assert!(
            gc.stderr.contains("remove the file manually to continue"),
            "{}",
            gc.stderr
        );
        for lock in locks {
            let _ = std::fs::remove_file(lock);
        }
    }
    let wts = env.git_out(&["worktree", "list", "--porcelain"]);
    for id in &ids {
        let state = record_state(&env, id);
        // Killed later than provisioning, a session is ready, running (lost) or
        // exited: a session like any other. Never left provisioning.
        assert_ne!(state.as_deref(), Some("provisioning"), "{id}: {reports}");
        if matches!(state.as_deref(), None | Some("collected")) {
            let branch = env.git(
                &env.repo,
                &["rev-parse", "--verify", "-q", &format!("bullpen/{id}")],
            );
            assert!(!branch.status.success(), "{id}: its branch is left");
            assert!(
                !wts.contains(&format!("/{id}\n")),
                "{id}: its worktree is left: {wts}"
            );
        }
    }
}
