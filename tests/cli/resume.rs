//! `git bullpen resume` and `git bullpen path`: placement built for real with git.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{assert_contains, make_executable, which_git, Env, Run, BIN};

const MARKER: &str = "bullpen-marker";

/// A command that leaves a marker wherever it runs (and in the worktree it is told about).
fn marker_cmd() -> Vec<&'static str> {
    vec![
        "--",
        "sh",
        "-c",
        "touch bullpen-marker; touch \"$BULLPEN_WORKTREE/bullpen-marker\"",
    ]
}

/// Spawn a session that does nothing; its worktree path.
fn spawn(env: &Env, id: &str) -> PathBuf {
    env.bullpen(&["spawn", id, "--", "true"]).ok();
    env.worktree_of(id)
}

fn resume(env: &Env, id: &str, cmd: &[&str]) -> Run {
    resume_in(env, &env.repo, id, cmd)
}

fn resume_in(env: &Env, dir: &Path, id: &str, cmd: &[&str]) -> Run {
    let mut args = vec!["resume", id];
    args.extend_from_slice(cmd);
    env.bullpen_in(dir, &args)
}

/// Every file named `name` anywhere under the test's temp dir.
fn find_named(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) {
            out.push(p.clone());
        }
        if p.is_dir() && !p.is_symlink() {
            find_named(&p, name, out);
        }
    }
}

#[track_caller]
fn assert_no_marker(env: &Env) {
    let mut found = Vec::new();
    find_named(&env.root(), MARKER, &mut found);
    assert!(found.is_empty(), "the command ran: {found:?}");
}

/// `resume <id>` with a marker command fails with 3 (refused), says each of `wants` on
/// stderr, runs nothing and changes nothing.
#[track_caller]
fn assert_refused(env: &Env, id: &str, wants: &[&str]) -> Run {
    let before = env.snapshot();
    let run = resume(env, id, &marker_cmd()).fails();
    assert_eq!(run.code(), 125, "stderr:\n{}", run.stderr);
    for want in wants {
        assert!(
            run.stderr.contains(want),
            "stderr lacks {want:?}:\n{}",
            run.stderr
        );
    }
    assert_eq!(run.stdout, "");
    assert_no_marker(env);
    assert_eq!(before, env.snapshot(), "a refused resume changed something");
    run
}

fn rm_worktree_by_hand(env: &Env, wt: &Path) {
    std::fs::remove_dir_all(wt).expect("rm -rf worktree");
    env.git_out(&["worktree", "prune"]);
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

// ----- use it -----

#[test]
fn runs_in_the_recorded_worktree_from_anywhere_in_the_repository() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    let other = spawn(&env, "other");
    let sub = env.repo.join("sub/dir");
    std::fs::create_dir_all(&sub).unwrap();
    for from in [env.repo.clone(), sub, other] {
        let run = resume_in(&env, &from, "x", &["--", "pwd"]).ok();
        assert_eq!(run.stdout.trim(), s(&wt), "resumed from {}", from.display());
    }
}

#[test]
fn runs_the_recorded_command_by_default_and_passes_its_status_through() {
    let env = Env::new();
    env.bullpen(&["spawn", "x", "--", "sh", "-c", "echo ran-in \"$(pwd)\""])
        .ok();
    let wt = env.worktree_of("x");
    let run = resume(&env, "x", &[]).ok();
    assert_eq!(run.stdout.trim(), format!("ran-in {}", s(&wt)));
    let run = resume(&env, "x", &["--", "sh", "-c", "exit 7"]);
    assert_eq!(run.code(), 7);
    assert_eq!(env.record("x")["exit"]["code"], 7);
}

#[test]
fn resumed_event_and_notes_cover_only_commits_made_while_resumed() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    // A commit made by hand between runs is not the session's.
    std::fs::write(wt.join("by-hand"), "h\n").unwrap();
    env.git(&wt, &["add", "by-hand"]).ok();
    env.git(&wt, &["commit", "-qm", "by hand"]).ok();
    let by_hand = env.git_out(&["rev-parse", "bullpen/x"]);
    resume(
        &env,
        "x",
        &[
            "--",
            "sh",
            "-c",
            "echo r > r && git add r && git commit -qm resumed",
        ],
    )
    .ok();
    let resumed = env.git_out(&["rev-parse", "bullpen/x"]);
    assert_ne!(resumed, by_hand);
    let note = env.git_out(&["notes", "--ref=bullpen", "show", &resumed]);
    assert!(note.contains("bullpen-session: x"), "{note}");
    assert!(
        !env.git(&env.repo, &["notes", "--ref=bullpen", "show", &by_hand])
            .status
            .success(),
        "the commit made by hand got a note"
    );
    let log = env.git_out(&["log", "--format=%s", "refs/bullpen/sessions/x"]);
    assert!(log.lines().any(|l| l == "bullpen: x resumed"), "{log}");
}

// ----- recreate -----

#[test]
fn recreates_a_worktree_deleted_by_hand() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    // rm -rf: git keeps its admin entry, which must go first (that one only).
    std::fs::remove_dir_all(&wt).unwrap();
    let run = resume(
        &env,
        "x",
        &["--", "git", "rev-parse", "--abbrev-ref", "HEAD"],
    )
    .ok();
    assert_eq!(run.stdout, "bullpen/x\n");
    assert_contains(&run.stderr, "recreating");
    assert_contains(&run.stderr, "git still registers the worktree");
    assert_contains(&run.stderr, "removing that entry (x) first");
    assert!(wt.join("README").is_file());
    let log = env.git_out(&["log", "--format=%s", "refs/bullpen/sessions/x"]);
    assert!(log.contains("bullpen: x worktree recreated"), "{log}");
    // And again, now that nothing is stale: no prune.
    rm_worktree_by_hand(&env, &wt);
    let run = resume(&env, "x", &["--", "pwd"]).ok();
    assert_eq!(run.stdout.trim(), s(&wt));
    assert!(!run.stderr.contains("still registers"), "{}", run.stderr);
}

#[test]
fn recreates_the_worktree_root_too() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    std::fs::remove_dir_all(wt.parent().unwrap()).unwrap();
    let run = resume(&env, "x", &["--", "pwd"]).ok();
    assert_eq!(run.stdout.trim(), s(&wt));
}

#[test]
fn a_failed_recreation_leaves_nothing_behind() {
    let mut env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    // A git whose `worktree add` does its work and then fails (a failing hook, say).
    let dir = env.root().join("fault-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let wrapper = dir.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" worktree add \"*) {git} \"$@\"; echo 'fatal: injected' >&2; exit 128;; esac\nexec {git} \"$@\"\n",
            git = which_git()
        ),
    )
    .unwrap();
    make_executable(&wrapper);
    let before = env.snapshot();
    env.path_prefix.insert(0, dir);
    let run = resume(&env, "x", &marker_cmd()).fails();
    assert_contains(&run.stderr, "cannot recreate");
    assert_contains(&run.stderr, "injected");
    assert!(
        wt.symlink_metadata().is_err(),
        "a half-made worktree is left"
    );
    assert_no_marker(&env);
    assert_eq!(before, env.snapshot());
}

#[test]
fn no_worktree_and_no_branch_fails_naming_both() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    env.git_out(&["branch", "-D", "bullpen/x"]);
    // What it says: snapshots::refusals_and_errors.
    assert_refused(&env, "x", &[]);
    assert!(wt.symlink_metadata().is_err());
}

#[test]
fn no_worktree_and_no_branch_hints_at_a_remote_branch() {
    let env = Env::new();
    env.add_bare_remote();
    let wt = spawn(&env, "x");
    env.git_out(&["push", "-q", "origin", "bullpen/x"]);
    rm_worktree_by_hand(&env, &wt);
    env.git_out(&["branch", "-D", "bullpen/x"]);
    assert_refused(&env, "x", &["git branch bullpen/x origin/bullpen/x"]);
}

#[test]
fn a_branch_checked_out_in_another_worktree_is_refused() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    let moved = env.root().join("moved");
    env.git_out(&["worktree", "move", s(&wt), s(&moved)]);
    let run = assert_refused(&env, "x", &[s(&wt), "checked out in another worktree"]);
    assert!(
        run.stderr
            .contains(&format!("git worktree move {} {}", s(&moved), s(&wt))),
        "{}",
        run.stderr
    );
}

#[test]
fn the_branch_in_a_worktree_whose_disk_is_away_is_refused_and_its_entry_kept() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    // The user moved the session's worktree to a disk, then unmounted it.
    let disk = env.root().join("usb");
    let moved = disk.join("x");
    std::fs::create_dir_all(&disk).unwrap();
    env.git_out(&["worktree", "move", s(&wt), s(&moved)]);
    let away = env.root().join("usb-away");
    std::fs::rename(&disk, &away).unwrap();
    let run = assert_refused(
        &env,
        "x",
        &[s(&moved), "whose directory is missing", "gone for good"],
    );
    let registered = |env: &Env| {
        env.git_out(&["worktree", "list", "--porcelain"])
            .lines()
            .any(|l| l == format!("worktree {}", s(&moved)))
    };
    assert!(registered(&env), "its registration stays");
    // Follow the hint: plugged back in, nothing was lost; gone for good, one
    // `git worktree remove` and resume recreates the session's worktree.
    let hint = format!("`git worktree remove {}`", s(&moved));
    assert!(run.stderr.contains(&hint), "{}", run.stderr);
    env.git_out(&["worktree", "remove", s(&moved)]);
    resume(&env, "x", &["--", "true"]).ok();
    assert!(wt.join("README").is_file());
}

// ----- occupied -----

#[test]
fn a_regular_file_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    std::fs::write(&wt, "mine\n").unwrap();
    // What it says: snapshots::refusals_and_errors.
    assert_refused(&env, "x", &[]);
    assert_eq!(std::fs::read_to_string(&wt).unwrap(), "mine\n");
}

#[test]
fn a_dangling_symlink_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    std::os::unix::fs::symlink("/nonexistent/bullpen", &wt).unwrap();
    assert_refused(&env, "x", &[s(&wt), "a dangling symlink"]);
    assert!(wt.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn a_symlink_to_the_sessions_own_worktree_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    let moved = env.root().join("moved");
    env.git_out(&["worktree", "move", s(&wt), s(&moved)]);
    std::os::unix::fs::symlink(&moved, &wt).unwrap();
    assert_refused(&env, "x", &[s(&wt), "a symlink (to"]);
}

#[test]
fn an_empty_directory_is_occupied_with_an_rmdir_hint() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    std::fs::create_dir(&wt).unwrap();
    // What it says: snapshots::refusals_and_errors.
    assert_refused(&env, "x", &[]);
    assert!(wt.is_dir());
}

#[test]
fn a_plain_directory_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    std::fs::create_dir(&wt).unwrap();
    std::fs::write(wt.join("notes.txt"), "keep me\n").unwrap();
    assert_refused(&env, "x", &[s(&wt), "a plain directory"]);
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn a_clone_on_the_same_branch_name_is_another_repository() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    env.git(
        &env.root(),
        &["clone", "-q", "-b", "bullpen/x", s(&env.repo), s(&wt)],
    )
    .ok();
    assert_refused(&env, "x", &[s(&wt), "a worktree of another repository"]);
}

#[test]
fn a_worktree_on_another_branch_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    env.git_out(&["worktree", "add", "-q", "-b", "other", s(&wt)]);
    assert_refused(
        &env,
        "x",
        &[
            s(&wt),
            "a worktree of this repository on another branch (other)",
        ],
    );
}

#[test]
fn a_detached_head_is_occupied() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    env.git(&wt, &["checkout", "-q", "--detach"]).ok();
    assert_refused(&env, "x", &[s(&wt), "detached HEAD"]);
}

// ----- untrusted records -----

#[test]
fn a_recorded_path_outside_the_worktree_root_is_refused() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    // A genuine worktree of this repo on the session's branch, but outside the root.
    let outside = env.root().join("outside");
    env.git_out(&["worktree", "move", s(&wt), s(&outside)]);
    env.edit_record("x", |r| r["worktree"] = s(&outside).into());
    // What it says: snapshots::refusals_and_errors.
    assert_refused(&env, "x", &[]);
    let run = env.bullpen(&["path", "x"]).fails();
    assert_eq!(run.stdout, "");
}

#[test]
fn a_recorded_path_elsewhere_in_the_root_is_refused() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    let elsewhere = wt.with_file_name("x-elsewhere");
    env.git_out(&["worktree", "move", s(&wt), s(&elsewhere)]);
    env.edit_record("x", |r| r["worktree"] = s(&elsewhere).into());
    assert_refused(&env, "x", &[s(&elsewhere), "belongs at"]);
}

#[test]
fn a_record_naming_another_branch_is_refused() {
    let env = Env::new();
    spawn(&env, "x");
    env.edit_record("x", |r| r["branch"] = "main".into());
    assert_refused(&env, "x", &["names branch 'main'"]);
}

// ----- state refusals -----

#[test]
fn a_collected_session_explains_how_to_start_again() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    env.git_out(&["worktree", "remove", s(&wt)]);
    env.edit_record("x", |r| r["state"] = "collected".into());
    // Nothing here shows bullpen created it (else resume recreates it: see
    // leftovers::a_collected_session_is_resumed_in_its_recreated_worktree).
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/x")).unwrap();
    // What it says: snapshots::refusals_and_errors.
    assert_refused(&env, "x", &[]);
    assert!(wt.symlink_metadata().is_err());
}

#[test]
fn a_collected_session_with_only_a_pushed_branch_points_there() {
    let env = Env::new();
    env.add_bare_remote();
    let wt = spawn(&env, "x");
    env.git_out(&["push", "-q", "origin", "bullpen/x"]);
    env.git_out(&["worktree", "remove", s(&wt)]);
    env.git_out(&["branch", "-D", "bullpen/x"]);
    env.edit_record("x", |r| r["state"] = "collected".into());
    assert_refused(&env, "x", &["--base origin/bullpen/x"]);
    // The advice works.
    let run = env
        .bullpen(&[
            "spawn",
            "y",
            "--base",
            "origin/bullpen/x",
            "--",
            "git",
            "rev-parse",
            "HEAD",
        ])
        .ok();
    assert_eq!(
        run.stdout.trim(),
        env.git_out(&["rev-parse", "origin/bullpen/x"])
    );
}

/// A foreground `spawn` left running in the background of the test; killed on drop.
struct Running {
    spawn: std::process::Child,
    pid: u32,
}

impl Running {
    fn start(env: &Env, id: &str) -> Running {
        let spawn = env
            .cmd(BIN, &env.repo)
            .args(["spawn", id, "--", "sleep", "300"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start spawn");
        // From here on, Drop cleans up whatever happens.
        let mut running = Running { spawn, pid: 0 };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(out) = env
                .cmd(BIN, &env.repo)
                .args(["ls", "--all", "--json"])
                .output()
            {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
                let found = v.as_array().and_then(|a| {
                    a.iter()
                        .find(|s| s["id"] == id && s["state"] == "running")
                        .and_then(|s| s["pid"].as_u64())
                });
                if let Some(pid) = found {
                    running.pid = pid as u32;
                    return running;
                }
            }
            assert!(Instant::now() < deadline, "session {id} never ran");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kill bullpen (so the record stays "running"), leaving the command to the caller.
    fn lose(mut self) -> u32 {
        let _ = self.spawn.kill();
        let _ = self.spawn.wait();
        self.pid
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.spawn.kill();
        let _ = self.spawn.wait();
        if self.pid != 0 {
            // SAFETY: kill(2) on a pid this test started; harmless if it is gone.
            unsafe {
                libc::kill(self.pid as i32, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn a_running_session_is_refused_naming_its_pid() {
    let env = Env::new();
    let running = Running::start(&env, "x");
    assert_refused(
        &env,
        "x",
        &[
            "session x is already running",
            &format!("pid {}", running.pid),
        ],
    );
    drop(running);
}

#[test]
fn a_lost_session_can_be_resumed() {
    let env = Env::new();
    let pid = Running::start(&env, "x").lose();
    // The command itself is gone too; wait until /proc says so.
    let deadline = Instant::now() + Duration::from_secs(60);
    while Path::new(&format!("/proc/{pid}")).exists() {
        // SAFETY: kill(2) on the pid of the command this test started.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
        assert!(Instant::now() < deadline, "pid {pid} does not die");
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = resume(&env, "x", &["--", "pwd"]).ok();
    assert_eq!(run.stdout.trim(), s(&env.worktree_of("x")));
    assert_contains(&run.stderr, "that process is gone");
}

// ----- path -----

#[test]
fn path_prints_the_worktree_for_cd() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    let run = env.bullpen(&["path", "x"]).ok();
    assert_eq!(run.stdout, format!("{}\n", s(&wt)));
    assert_eq!(run.stderr, "");
    let sub = env.repo.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let out = env
        .cmd("sh", &sub)
        .args(["-c", &format!("cd \"$({BIN} path x)\" && pwd")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), s(&wt));
}

#[test]
fn path_of_a_session_without_a_worktree_fails_and_prints_nothing() {
    let env = Env::new();
    let wt = spawn(&env, "x");
    rm_worktree_by_hand(&env, &wt);
    let run = env.bullpen(&["path", "x"]).fails();
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_eq!(run.stdout, "", "no path that does not exist");
    assert_contains(&run.stderr, "has no worktree to go to");
    assert_contains(&run.stderr, "`git bullpen resume x` recreates it");
    // Once recreated, path prints it again.
    resume(&env, "x", &["--", "true"]).ok();
    assert_eq!(
        env.bullpen(&["path", "x"]).ok().stdout,
        format!("{}\n", s(&wt))
    );

    // Collected by gc (here: by hand, with the worktree gone): no path either.
    let wt = spawn(&env, "y");
    env.git_out(&["worktree", "remove", s(&wt)]);
    env.edit_record("y", |r| r["state"] = "collected".into());
    let run = env.bullpen(&["path", "y"]).fails();
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_contains(
        &run.stderr,
        "was collected (`git bullpen gc` or `rm` removed its worktree)",
    );
    assert_contains(&run.stderr, "--base bullpen/y");

    // Neither worktree nor branch.
    let wt = spawn(&env, "z");
    env.git_out(&["worktree", "remove", s(&wt)]);
    env.git_out(&["branch", "-D", "bullpen/z"]);
    let run = env.bullpen(&["path", "z"]).fails();
    assert_eq!(run.stdout, "");
    assert_contains(&run.stderr, "neither does its branch bullpen/z");
}

#[test]
fn path_and_resume_without_an_id_mean_the_session_you_are_in() {
    let env = Env::new();
    let a = spawn(&env, "a");
    let b = spawn(&env, "b");
    let deep = b.join("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(
        env.bullpen_in(&a, &["path"]).ok().stdout,
        format!("{}\n", s(&a))
    );
    assert_eq!(
        env.bullpen_in(&deep, &["path"]).ok().stdout,
        format!("{}\n", s(&b))
    );
    // resume without an id, from a subdirectory: the session's worktree.
    let run = env.bullpen_in(
        &deep,
        &["resume", "--", "sh", "-c", "pwd; echo $BULLPEN_SESSION"],
    );
    let run = run.ok();
    assert_eq!(run.stdout, format!("{}\nb\n", s(&b)));
    // Through a symlink to the worktree: still that session.
    let link = env.root().join("link-to-a");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    assert_eq!(
        env.bullpen_in(&link, &["path"]).ok().stdout,
        format!("{}\n", s(&a))
    );
    // In the main worktree there is no session to mean: a usage error saying so.
    for args in [&["path"][..], &["resume"], &["resume", "--", "true"]] {
        let run = env.bullpen(args).fails();
        let usage = if args[0] == "resume" { 125 } else { 129 };
        assert_eq!(run.code(), usage, "{args:?}: {}", run.stderr);
        assert_contains(&run.stderr, "is not inside any session's worktree");
        assert_contains(&run.stderr, "git bullpen ls");
    }
}

#[test]
fn a_one_off_command_leaves_the_sessions_command_as_it_was() {
    let env = Env::new();
    env.bullpen(&["spawn", "x", "--", "sh", "-c", "echo agent >> ran.txt"])
        .ok();
    let wt = env.worktree_of("x");
    // Spawn recorded the command in its one local file.
    let local = env.repo.join(".git/bullpen/local/x");
    let created = local.join("created.json");
    let created_before = std::fs::read_to_string(&created).unwrap();
    assert_contains(&created_before, "echo agent >> ran.txt");
    assert!(!local.join("command.json").exists());
    resume(
        &env,
        "x",
        &[
            "--",
            "sh",
            "-c",
            "echo one-off >> ran.txt && git add ran.txt && git commit -qm once",
        ],
    )
    .ok();
    let rec = env.record("x");
    assert_eq!(
        rec["command"],
        serde_json::json!(["sh", "-c", "echo agent >> ran.txt"]),
        "the session's command is kept"
    );
    assert_eq!(
        rec["process"]["command"][2],
        "echo one-off >> ran.txt && git add ran.txt && git commit -qm once"
    );
    assert_eq!(std::fs::read_to_string(&created).unwrap(), created_before);
    assert!(!local.join("command.json").exists());
    // `ls --json`: `command` is the latest run's, `session_command` the session's.
    let row = &env.ls_json()[0];
    assert_eq!(row["command"][2], rec["process"]["command"][2]);
    assert_eq!(row["session_command"], rec["command"]);
    // The provenance note names what really ran.
    let note = env.git_out(&["notes", "--ref=bullpen", "show", "bullpen/x"]);
    assert_contains(&note, "bullpen-command: sh -c 'echo one-off >> ran.txt");
    // A plain resume runs the session's own command again.
    resume(&env, "x", &[]).ok();
    assert_eq!(
        std::fs::read_to_string(wt.join("ran.txt")).unwrap(),
        "agent\none-off\nagent\n"
    );

    // --save makes a new command the session's own, here and in the record.
    resume(
        &env,
        "x",
        &["--save", "--", "sh", "-c", "echo saved >> ran.txt"],
    )
    .ok();
    assert_eq!(env.record("x")["command"][2], "echo saved >> ran.txt");
    assert_contains(
        &std::fs::read_to_string(local.join("command.json")).unwrap(),
        "echo saved >> ran.txt",
    );
    // Spawn's proof is never rewritten.
    assert_eq!(std::fs::read_to_string(&created).unwrap(), created_before);
    resume(&env, "x", &[]).ok();
    assert!(std::fs::read_to_string(wt.join("ran.txt"))
        .unwrap()
        .ends_with("saved\nsaved\n"));
    // --save without a command to save is a usage error.
    assert_eq!(resume(&env, "x", &["--save"]).code(), 125);
}

#[test]
fn path_of_an_unknown_session_fails_clearly() {
    let env = Env::new();
    let run = env.bullpen(&["path", "nope"]).fails();
    assert_eq!(run.code(), 128);
    assert_eq!(run.stdout, "");
    assert_contains(&run.stderr, "no session named 'nope'");
    let run = resume(&env, "nope", &["--", "true"]).fails();
    assert!(run.stderr.contains("no session named 'nope'"));
    assert_eq!(env.bullpen(&["path", "Not/Valid"]).code(), 129);
}

#[test]
fn path_help_documents_cd() {
    let env = Env::new();
    let run = env.bullpen(&["path", "--help"]).ok();
    assert_contains(&run.stdout, "cd \"$(git bullpen path");
}

#[test]
fn concurrent_foreground_resumes_run_the_command_once() {
    let env = Env::new();
    env.bullpen(&["spawn", "once", "--", "true"]).ok();
    let ran = env.root().join("ran");
    let go = env.root().join("go");
    // The command that runs holds its run until `go` exists, and `go` is made
    // only once the three other resumes have returned: they all overlap it.
    let script = format!(
        "echo run >> {}; while [ ! -e {} ]; do sleep 0.05; done",
        ran.display(),
        go.display()
    );
    for _ in 0..3 {
        std::fs::remove_file(&ran).ok();
        std::fs::remove_file(&go).ok();
        let mut children: Vec<_> = (0..4)
            .map(|_| {
                env.cmd(crate::support::BIN, &env.repo)
                    .args(["resume", "once", "--", "sh", "-c", &script])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while children
            .iter_mut()
            .map(|c| c.try_wait().unwrap().is_none())
            .filter(|running| *running)
            .count()
            > 1
        {
            if Instant::now() > deadline {
                std::fs::write(&go, "").unwrap();
                panic!("more than one resume is still running its command");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::write(&go, "").unwrap();
        let runs: Vec<crate::support::Run> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap().into())
            .collect();
        let ok = runs.iter().filter(|r| r.status.success()).count();
        let lines = std::fs::read_to_string(&ran).unwrap_or_default();
        assert_eq!(lines.lines().count(), 1, "the command ran once: {lines:?}");
        assert_eq!(ok, 1, "one resume ran");
        for r in runs.iter().filter(|r| !r.status.success()) {
            assert!(
                r.stderr.contains("is already running")
                    || r.stderr.contains("changed while this run was starting"),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn a_clone_where_git_still_registers_the_worktree_is_another_repository() {
    // The directory was deleted by hand and a clone put in its place before git
    // noticed: the path is still registered, but its `.git` points elsewhere.
    let env = Env::new();
    let wt = spawn(&env, "x");
    std::fs::remove_dir_all(&wt).unwrap();
    env.git(
        &env.root(),
        &["clone", "-q", "-b", "bullpen/x", s(&env.repo), s(&wt)],
    )
    .ok();
    assert!(env
        .git_out(&["worktree", "list", "--porcelain"])
        .contains(s(&wt)));
    assert_refused(&env, "x", &[s(&wt), "a worktree of another repository"]);
}

#[test]
fn a_session_gc_is_tearing_down_is_not_resumed() {
    // gc writes `gc_teardown` into the record right before it removes the
    // worktree; from then on no run may start there.
    let env = Env::new();
    spawn(&env, "x");
    env.edit_record("x", |r| {
        r["gc_teardown"] = serde_json::json!({"admin_id": "x", "tip": "0"});
    });
    assert_refused(&env, "x", &["gc is removing the worktree of session x"]);
}

#[test]
fn a_command_that_cannot_be_executed_exits_127_and_is_recorded() {
    let env = Env::new();
    spawn(&env, "x");
    let run = resume(&env, "x", &["--", "no-such-command-bullpen"]);
    assert_eq!(run.code(), 127, "{}", run.stderr);
    assert_contains(&run.stderr, "no-such-command-bullpen");
    let json = env.ls_json();
    assert_eq!(json[0]["state"], "exited");
    assert_eq!(json[0]["exit_code"], 127);
}

#[test]
fn a_foreground_run_is_alive_until_bullpen_has_recorded_its_end() {
    // Freeze bullpen while its command runs: the command ends (a zombie, not
    // reaped), but its end is not recorded yet. Another resume must not start.
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    spawn(&env, "x");
    let mut first = env
        .cmd(BIN, &env.repo)
        .args(["resume", "x", "--", "sleep", "1"])
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.ls_json()[0]["state"] != "running" {
        assert!(Instant::now() < deadline, "never running");
        std::thread::sleep(Duration::from_millis(20));
    }
    let bullpen = first.id() as i32;
    // `running` is recorded while the command is still held between fork and
    // exec; stopping bullpen before it lets the command go would hold it forever.
    let command = env.ls_json()[0]["pid"].as_u64().unwrap();
    let zombie = || {
        std::fs::read_to_string(format!("/proc/{command}/stat"))
            .is_ok_and(|s| s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
    };
    let exec_d = || {
        std::fs::read(format!("/proc/{command}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0"))
    };
    // A bound of its own: a loaded machine is slow, not wrong.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !exec_d() && !zombie() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signals to the process this test started.
    unsafe { libc::kill(bullpen, libc::SIGSTOP) };
    // Wait for `sleep 1` itself to end (a zombie until the stopped bullpen reaps it).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !zombie() {
        assert!(
            Instant::now() < deadline,
            "the command never ended: {command} {:?} {}",
            std::fs::read_to_string(format!("/proc/{command}/stat")),
            env.ls_json()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = resume(&env, "x", &marker_cmd());
    unsafe { libc::kill(bullpen, libc::SIGCONT) };
    let status = first.wait().unwrap();
    assert_eq!(refused.code(), 125, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains(&format!("is already running (pid {bullpen})")),
        "{}",
        refused.stderr
    );
    assert_no_marker(&env);
    assert!(status.success());
    assert_eq!(env.ls_json()[0]["state"], "exited");
}
