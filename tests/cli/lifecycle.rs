//! The lifecycle verbs: `rm` (gc's rules for the sessions named, `--force`),
//! `wait`, `stop` returning only once what it signalled is gone, and sessions
//! that survive a change of worktree root or `BULLPEN_HOME`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bg::{group_members, kill, proc_stat, still_alive, wait_for, Bg, ProcStat};
use crate::gc::{setup, spawn_pushed, COMMIT};
use crate::support::{assert_contains, Env};

fn branch_exists(env: &Env, id: &str) -> bool {
    env.git(
        &env.repo,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/bullpen/{id}"),
        ],
    )
    .status
    .success()
}

fn state(env: &Env, id: &str) -> String {
    env.ls_json()
        .as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
        .map(|row| row["state"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// `id` is gone the way rm takes it: worktree, branch and log; its record collected.
#[track_caller]
fn assert_removed(env: &Env, id: &str, wt: &Path) {
    assert!(!wt.exists(), "{id}: the worktree is still there");
    assert!(!branch_exists(env, id), "{id}: the branch is still there");
    assert_eq!(state(env, id), "collected");
    assert!(
        !env.repo
            .join(format!(".git/bullpen/logs/{id}.log"))
            .exists(),
        "{id}: its log is still there"
    );
}

// ----- rm -----

#[test]
fn rm_applies_gcs_rules_and_says_why_it_keeps_a_session() {
    let env = setup();
    let done = spawn_pushed(&env, "done", COMMIT);
    let unpushed = env.spawn_sh("unpushed", COMMIT);
    let dirty = spawn_pushed(&env, "dirty", "echo draft > notes.txt");
    let before = env.snapshot();

    // Unpublished and dirty work is kept, each with its reason, and a hint.
    for (id, why) in [
        ("unpushed", "1 commit not on any remote"),
        ("dirty", "1 untracked file"),
    ] {
        let run = env.bullpen(&["rm", id]);
        assert_eq!(run.code(), 3, "{id}: {}", run.stderr);
        assert_eq!(run.stdout, format!("kept  {id}: {why}\n"));
        assert_contains(&run.stderr, &format!("git bullpen rm --force {id}"));
    }
    assert_eq!(env.snapshot(), before, "a refusal changes nothing");
    assert!(unpushed.join("work.txt").exists() && dirty.join("notes.txt").exists());

    // A published, clean, idle session goes: worktree, branch, log; record collected.
    std::fs::create_dir_all(env.repo.join(".git/bullpen/logs")).unwrap();
    std::fs::write(env.repo.join(".git/bullpen/logs/done.log"), "old output\n").unwrap();
    let run = env.bullpen(&["rm", "done"]).ok();
    assert_eq!(
        run.stdout,
        "removed  done: published (reachable from origin/bullpen/done), clean and idle\n"
    );
    assert_removed(&env, "done", &done);
    // Its notes stay.
    assert!(!env.git_out(&["notes", "--ref=bullpen", "list"]).is_empty());
    // Again: already collected, nothing to do.
    let run = env.bullpen(&["rm", "done"]).ok();
    assert_eq!(run.stdout, "collected  done: already collected\n");

    // Several at once, in the order given: the kept one decides the status.
    let run = env.bullpen(&["rm", "unpushed", "done"]);
    assert_eq!(run.code(), 3);
    assert_eq!(
        run.stdout,
        "kept       unpushed: 1 commit not on any remote\ncollected  done: already collected\n"
    );
}

#[test]
fn rm_of_an_unknown_id_changes_nothing() {
    let env = setup();
    spawn_pushed(&env, "a", COMMIT);
    let before = env.snapshot();
    let run = env.bullpen(&["rm", "a", "nope"]).fails();
    assert_eq!(run.code(), 128);
    assert_contains(&run.stderr, "no session named 'nope'");
    assert_eq!(env.snapshot(), before, "a typo removes nothing, not even a");
    assert_eq!(env.bullpen(&["rm"]).code(), 129, "rm needs an id");
}

#[test]
fn rm_force_discards_unpublished_and_uncommitted_work() {
    let env = setup();
    let wt = env.spawn_sh(
        "a",
        &format!("{COMMIT} && echo draft > notes.txt && echo edit >> README"),
    );
    std::fs::write(wt.join("staged.txt"), "s\n").unwrap();
    env.git(&wt, &["add", "staged.txt"]).ok();
    let before = env.snapshot();
    // --dry-run says what it would discard and changes nothing.
    let run = env.bullpen(&["rm", "--force", "--dry-run", "a"]).ok();
    assert_eq!(
        run.stdout,
        "would remove  a: forced: would discard 1 commit not on any remote, 1 modified file, \
         1 staged change, 1 untracked file\n"
    );
    assert_eq!(env.snapshot(), before);
    let run = env.bullpen(&["rm", "-f", "a"]).ok();
    assert_eq!(
        run.stdout,
        "removed  a: forced: discarded 1 commit not on any remote, 1 modified file, \
         1 staged change, 1 untracked file\n"
    );
    assert_removed(&env, "a", &wt);
    // The admin entry went with it (git's own removal).
    let list = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(!list.contains("/a\n"), "{list}");
}

#[test]
fn rm_force_never_removes_a_running_session() {
    let env = Bg::new();
    env.spawn_bg("a", &["sleep", "1000"]);
    let wt = env.worktree_of("a");
    let before = env.snapshot();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert_contains(&run.stdout, "kept  a: ");
    assert_contains(&run.stdout, "is running");
    assert_contains(&run.stderr, "stop it first (`git bullpen stop a`)");
    assert_eq!(env.snapshot(), before);
    assert!(wt.is_dir());
    assert_eq!(env.state("a"), "running");
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["rm", "--force", "a"]).ok();
    assert_removed(&env, "a", &wt);
}

/// A `sleep` this test owns, killed when dropped.
struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn rm_force_keeps_a_session_whose_process_runs_outside_its_worktree() {
    let env = setup();
    let wt = env.spawn_sh("a", COMMIT);
    // The session's own process, alive, with nothing of it inside the worktree:
    // only its liveness keeps the session.
    let sleeper = Sleeper(env.cmd("sleep", &env.root()).arg("300").spawn().unwrap());
    let pid = sleeper.0.id();
    let me = crate::support::process_ref(pid);
    env.edit_record("a", |r| {
        r["state"] = "running".into();
        r["process"] = serde_json::json!({
            "pid": pid,
            "start_time": me["start_time"],
            "boot_id": me["boot_id"],
            "background": false,
            "started_at": "2026-01-01T00:00:00Z",
        });
    });
    let before = env.snapshot();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert_contains(
        &run.stdout,
        &format!("the session's process (pid {pid}) is running"),
    );
    assert_contains(&run.stderr, "stop it first");
    assert_eq!(env.snapshot(), before);
    assert!(wt.join("work.txt").exists());
    drop(sleeper);
}

#[test]
fn rm_force_stays_inside_the_trust_rules() {
    let env = setup();
    // A record pointing at a real worktree of the branch outside the root.
    env.bullpen(&["spawn", "out", "--", "true"]).ok();
    let wt = env.worktree_of("out");
    let outside = env.root().join("outside");
    env.git_out(&[
        "worktree",
        "move",
        wt.to_str().unwrap(),
        outside.to_str().unwrap(),
    ]);
    env.edit_record("out", |r| r["worktree"] = outside.to_str().unwrap().into());
    // A session whose worktree this machine did not create (no local proof).
    env.bullpen(&["spawn", "forged", "--", "true"]).ok();
    let forged = env.worktree_of("forged");
    std::fs::remove_file(env.repo.join(".git/bullpen/local/forged/created.json")).unwrap();
    let before = env.snapshot();
    for (id, why) in [
        ("out", "is outside the worktree root"),
        (
            "forged",
            "nothing on this machine shows bullpen created its worktree",
        ),
    ] {
        let run = env.bullpen(&["rm", "--force", id]);
        assert_eq!(run.code(), 3, "{id}: {}", run.stderr);
        assert_contains(&run.stdout, why);
        assert!(
            !run.stderr.contains("--force"),
            "{id}: no hint that --force would help: {}",
            run.stderr
        );
    }
    assert_eq!(env.snapshot(), before);
    assert!(outside.join("README").exists() && forged.join("README").exists());
}

// ----- wait -----

#[test]
fn wait_exits_with_the_status_of_the_run() {
    let env = Bg::new();
    env.spawn_bg(
        "five",
        &["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; exit 5"],
    );
    let wt = env.worktree_of("five");
    let mut waiter = env.cmd(crate::support::BIN, &env.repo);
    waiter.args(["wait", "five"]);
    // The run is still going: wait in another thread, then let it end. Only
    // the end can give 5 (the run exits 5 only once `go` exists), so a wait
    // that returned early could not say 5.
    let handle = std::thread::spawn(move || waiter.output().unwrap());
    std::fs::write(wt.join("go"), "").unwrap();
    let out = handle.join().unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert_eq!(env.state("five"), "exited");

    // Already ended: at once, with its status; 0 for a success.
    assert_eq!(env.bullpen(&["wait", "five"]).code(), 5);
    env.bullpen(&["spawn", "ok", "--", "true"]).ok();
    assert_eq!(env.bullpen(&["wait", "ok"]).code(), 0);
    // Several: the status of the last one named, as a shell's wait.
    assert_eq!(env.bullpen(&["wait", "five", "ok"]).code(), 0);
    assert_eq!(env.bullpen(&["wait", "ok", "five"]).code(), 5);
    // Ended by a signal (stop's SIGHUP): 128 + N.
    env.spawn_bg("term", &["sleep", "1000"]);
    env.bullpen(&["stop", "term"]).ok();
    assert_eq!(env.bullpen(&["wait", "term"]).code(), 129);
    // An unknown id: nothing waited for.
    let run = env.bullpen(&["wait", "ok", "nope"]);
    assert_eq!(run.code(), 125);
    assert_contains(&run.stderr, "no session named 'nope'");
}

#[test]
fn wait_gives_up_after_its_timeout_and_says_so_for_a_lost_run() {
    let env = Bg::new();
    env.spawn_bg("a", &["sleep", "1000"]);
    let run = env.bullpen(&["wait", "--timeout", "0.3", "a"]);
    assert_eq!(run.code(), 124, "{}", run.stderr);
    assert_contains(&run.stderr, "still running");
    assert_eq!(env.state("a"), "running", "the run goes on");
    // Its supervisor killed: nothing will record the end.
    let sup = env.record("a")["process"]["supervisor_pid"]
        .as_u64()
        .unwrap() as u32;
    kill(sup, libc::SIGKILL);
    env.wait_state("a", "lost");
    let run = env.bullpen(&["wait", "a"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "session a is lost");
    env.bullpen(&["stop", "a"]).ok();
}

// ----- stop -----

#[test]
fn stop_of_a_lost_session_returns_only_once_what_it_signalled_is_gone() {
    let env = Bg::new();
    // A command whose children ignore SIGTERM and take their time. It ignores
    // SIGHUP too, so that it outlives the hang-up of its terminal when its
    // supervisor dies (on its terminal it leads its own session).
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "trap '' TERM HUP; sleep 1000 & sleep 1000 & wait",
        ],
    );
    let rec = env.record("a");
    let pgid = rec["process"]["pid"].as_u64().unwrap() as u32;
    let sid = rec["process"]["supervisor_pid"].as_u64().unwrap() as u32;
    let members: Vec<ProcStat> = wait_for("the shell and its two children", || {
        let m = group_members(pgid, pgid);
        (m.len() == 3).then(|| m.iter().filter_map(|p| proc_stat(*p)).collect())
    });
    kill(sid, libc::SIGKILL);
    env.wait_state("a", "lost");
    let run = env.bullpen(&["stop", "--timeout", "0.3", "a"]).ok();
    assert_contains(&run.stderr, "lost");
    // On return, nothing it signalled lives (no waiting here: at once).
    for m in &members {
        assert!(!still_alive(m), "{m:?} outlived stop");
    }
    assert_eq!(env.state("a"), "stopped");
}

// ----- a change of root -----

/// `spawn` a session, then move the worktree root from under it by `change`
/// (a git config, or BULLPEN_HOME); resume, path, rm and gc keep working.
fn survives(change: impl Fn(&mut Env)) {
    let mut env = setup();
    let wt = spawn_pushed(&env, "old", "true");
    env.bullpen(&["spawn", "dirty", "--", "sh", "-c", "echo x > f"])
        .ok();
    let dirty = env.worktree_of("dirty");
    change(&mut env);
    // New sessions go to the new root.
    env.bullpen(&["spawn", "new", "--", "true"]).ok();
    assert!(!env.worktree_of("new").starts_with(wt.parent().unwrap()));

    assert_eq!(
        env.bullpen(&["path", "old"]).ok().stdout,
        format!("{}\n", wt.display())
    );
    let run = env
        .bullpen(&["resume", "old", "--", "sh", "-c", "pwd"])
        .ok();
    assert_eq!(run.stdout.trim(), wt.to_str().unwrap());
    // A plain resume: its recorded command, here.
    env.bullpen(&["resume", "old"]).ok();
    // gc keeps the unpublished one for that reason, not as untrusted.
    let gc = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(
        &gc.stdout,
        "would remove  old: holds no commit of its own, clean and idle",
    );
    assert_contains(&gc.stdout, "would keep    dirty: 1 untracked file");
    assert!(!gc.stdout.contains("untrusted"), "{}", gc.stdout);
    // A worktree deleted by hand is recreated where it was.
    std::fs::remove_dir_all(&dirty).unwrap();
    env.bullpen(&["resume", "dirty", "--", "true"]).ok();
    assert!(dirty.join("README").exists());
    env.bullpen(&["rm", "--force", "dirty"]).ok();
    assert!(!dirty.exists());
    env.bullpen(&["gc"]).ok();
    assert!(!wt.exists(), "gc removed it under its old root");
    assert_eq!(state(&env, "old"), "collected");
}

#[test]
fn a_session_survives_a_change_of_worktree_root() {
    survives(|env| {
        let root = env.root().join("new-root");
        env.git_out(&["config", "bullpen.worktreeRoot", root.to_str().unwrap()]);
    });
}

#[test]
fn a_session_survives_a_change_of_bullpen_home() {
    survives(|env| {
        env.bullpen_home = env.root().join("other-bullpen-home");
        std::fs::create_dir_all(&env.bullpen_home).unwrap();
    });
}

#[test]
fn a_record_that_merely_claims_the_old_root_is_not_trusted() {
    let env = setup();
    let wt = spawn_pushed(&env, "real", COMMIT);
    let old_root: PathBuf = wt.parent().unwrap().to_path_buf();
    env.git_out(&[
        "config",
        "bullpen.worktreeRoot",
        env.root().join("new-root").to_str().unwrap(),
    ]);
    // Another session whose record claims a directory in the old root that
    // this machine did not create it in: a real worktree of its branch there.
    env.bullpen(&["spawn", "claims", "--", "true"]).ok();
    let claimed = old_root.join("claims");
    let made = env.worktree_of("claims");
    env.git_out(&[
        "worktree",
        "move",
        made.to_str().unwrap(),
        claimed.to_str().unwrap(),
    ]);
    env.git_out(&["push", "-q", "origin", "bullpen/claims"]);
    env.edit_record("claims", |r| {
        r["worktree"] = claimed.to_str().unwrap().into()
    });
    let before = env.snapshot();
    let run = env.bullpen(&["resume", "claims", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "not inside the worktree root");
    assert_eq!(env.bullpen(&["path", "claims"]).code(), 3);
    assert_eq!(env.snapshot(), before, "refusals change nothing");
    let gc: Value = serde_json::from_str(&env.bullpen(&["gc", "--json"]).ok().stdout).unwrap();
    let entry = gc
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "claims")
        .unwrap();
    assert_eq!(entry["action"], "kept", "{entry}");
    assert_contains(entry["reason"].as_str().unwrap(), "untrusted");
    assert!(claimed.join("README").exists());
    // The real one is still ours (gc removed it), the claimed one untouched.
    assert!(!wt.exists());
}

#[test]
fn gcs_fallback_removes_a_session_under_its_old_root() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "old", "true");
    let root = env.root().join("new-root");
    env.git_out(&["config", "bullpen.worktreeRoot", root.to_str().unwrap()]);
    // git cannot finish the removal (as with a late writer): bullpen's own
    // removal, confined to the root the session was created under, takes over.
    crate::gc::on_worktree_remove(&mut env, ":");
    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        "removed  old: holds no commit of its own, clean and idle",
    );
    assert!(!wt.exists());
    assert_eq!(state(&env, "old"), "collected");
}
