//! `git bullpen spawn`: creation, the command's run, provenance, and failing closed.

use std::path::Path;

use crate::support::{assert_contains, Env, Run};

#[test]
fn spawn_runs_in_a_new_worktree_on_its_own_branch() {
    let env = Env::new();
    let run = env
        .bullpen(&[
            "spawn",
            "demo",
            "--",
            "sh",
            "-c",
            "echo hi > f && git add f && git commit -qm wip && pwd && git rev-parse --abbrev-ref HEAD",
        ])
        .ok();
    let wt = env.worktree_of("demo");
    assert!(
        wt.starts_with(&env.bullpen_home),
        "{wt:?} is under BULLPEN_HOME"
    );
    assert!(
        !wt.starts_with(&env.repo),
        "worktree is outside the repository"
    );
    assert_eq!(run.stdout, format!("{}\nbullpen/demo\n", wt.display()));
    assert!(
        run.stderr.contains(&wt.display().to_string()),
        "path on stderr: {}",
        run.stderr
    );

    let list = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}\n", wt.display())),
        "{list}"
    );
    assert!(list.contains("branch refs/heads/bullpen/demo"), "{list}");
    // The main worktree is untouched.
    assert!(!env.repo.join("f").exists());
    assert_eq!(env.git_out(&["status", "--porcelain"]), "");

    let rec = env.record("demo");
    assert_eq!(rec["schema"], 1);
    assert_eq!(rec["id"], "demo");
    assert_eq!(rec["state"], "exited");
    assert_eq!(rec["exit"]["code"], 0);
    assert_eq!(rec["branch"], "bullpen/demo");
    assert_eq!(rec["worktree"], wt.display().to_string());
    assert_eq!(rec["base"], env.git_out(&["rev-parse", "main"]));

    // The record's history is the session's event log.
    let events = env.git_out(&["log", "--format=%s", "refs/bullpen/sessions/demo"]);
    let events: Vec<&str> = events.lines().collect();
    assert_eq!(
        events,
        [
            "bullpen: demo exited 0",
            "bullpen: demo running",
            "bullpen: demo provisioning"
        ]
    );
    // No reflog for records (git writes none under refs/bullpen/ either): the
    // commits are the log.
    assert!(!env.repo.join(".git/logs/refs/bullpen").exists());
}

#[test]
fn provenance_notes_cover_new_commits_only() {
    let env = Env::new();
    env.bullpen(&[
        "spawn",
        "demo",
        "--",
        "sh",
        "-c",
        "git commit -q --allow-empty -m one && git commit -q --allow-empty -m two",
    ])
    .ok();
    let log = env.git_out(&["log", "--notes=bullpen", "-1", "bullpen/demo"]);
    assert!(log.contains("bullpen-session: demo"), "{log}");
    assert!(log.contains("bullpen-exit: exit 0"), "{log}");
    let note = env.git_out(&["notes", "--ref=bullpen", "show", "bullpen/demo~1"]);
    assert!(note.contains("bullpen-command: sh -c"), "{note}");
    // The base commit is not the session's work and gets no note.
    let base = env.git(&env.repo, &["notes", "--ref=bullpen", "show", "main"]);
    assert!(
        !base.status.success(),
        "base commit has no note: {}",
        base.stdout
    );
    // One notes commit for the whole run.
    assert_eq!(
        env.git_out(&["rev-list", "--count", "refs/notes/bullpen"]),
        "1"
    );
}

#[test]
fn exit_status_and_environment_are_passed_through() {
    let env = Env::new();
    let run = env.bullpen(&[
        "spawn",
        "st",
        "--",
        "sh",
        "-c",
        "echo $BULLPEN_SESSION $BULLPEN_BRANCH $BULLPEN_WORKTREE; exit 7",
    ]);
    assert_eq!(run.code(), 7, "{}", run.stderr);
    let wt = env.worktree_of("st");
    assert_eq!(run.stdout, format!("st bullpen/st {}\n", wt.display()));
    assert_eq!(env.record("st")["exit"]["code"], 7);

    let run = env.bullpen(&["spawn", "sig", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(run.code(), 128 + 15);
    let rec = env.record("sig");
    assert_eq!(rec["exit"]["signal"], 15);
    assert!(rec["exit"]["code"].is_null());
}

#[test]
fn default_command_comes_from_git_config() {
    let env = Env::new();
    env.git_out(&["config", "bullpen.command", "echo from-config; pwd"]);
    let run = env.bullpen(&["spawn", "cfg"]).ok();
    let wt = env.worktree_of("cfg");
    assert_eq!(run.stdout, format!("from-config\n{}\n", wt.display()));
}

#[test]
fn worktree_root_can_be_set_per_repository() {
    let env = Env::new();
    let root = env.root().join("elsewhere");
    env.git_out(&["config", "bullpen.worktreeRoot", root.to_str().unwrap()]);
    env.bullpen(&["spawn", "w", "--", "true"]).ok();
    assert_eq!(env.worktree_of("w"), root.join("w"));
}

#[test]
fn spawn_from_a_linked_worktree_belongs_to_the_repository() {
    let env = Env::new();
    env.bullpen(&["spawn", "first", "--", "true"]).ok();
    let first = env.worktree_of("first");
    let sub = first.join("deep/dir");
    std::fs::create_dir_all(&sub).unwrap();
    let run = env
        .bullpen_in(&sub, &["spawn", "second", "--base", "main", "--", "pwd"])
        .ok();
    let second = env.worktree_of("second");
    assert_eq!(run.stdout.trim(), second.display().to_string());
    assert_eq!(second.parent(), first.parent(), "same worktree root");
    // Visible from the main worktree, based on main.
    assert_eq!(env.ls_json().as_array().unwrap().len(), 2);
    assert_eq!(
        env.record("second")["base"],
        env.git_out(&["rev-parse", "main"])
    );
}

#[test]
fn base_selects_the_starting_commit() {
    let env = Env::new();
    let first = env.git_out(&["rev-parse", "HEAD"]);
    env.git_out(&["commit", "-q", "--allow-empty", "-m", "second"]);
    let run = env
        .bullpen(&[
            "spawn",
            "b",
            "--base",
            "HEAD~1",
            "--",
            "git",
            "rev-parse",
            "HEAD",
        ])
        .ok();
    assert_eq!(run.stdout.trim(), first);
}

#[test]
fn invalid_ids_are_usage_errors_before_anything_is_created() {
    let env = Env::new();
    let before = env.snapshot();
    for bad in ["Bad", "a..b", "x.lock", "-x", "a/b", "trailing."] {
        let run = env.bullpen(&["spawn", bad, "--", "true"]);
        assert_eq!(run.code(), 125, "{bad}: {}", run.stderr);
        if !bad.starts_with('-') {
            assert_contains(&run.stderr, "invalid session id");
        }
    }
    assert_eq!(env.snapshot(), before);
}

#[test]
fn an_id_in_use_is_refused_by_name() {
    let env = Env::new();
    env.bullpen(&["spawn", "dup", "--", "true"]).ok();
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "dup", "--", "touch", "ran"]).fails();
    assert_contains(&run.stderr, "'dup' is already in use");
    assert_eq!(env.snapshot(), before);
    assert!(!env.worktree_of("dup").join("ran").exists());
}

#[test]
fn an_existing_branch_or_path_is_not_reused() {
    let env = Env::new();
    env.git_out(&["branch", "bullpen/taken"]);
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "taken", "--", "true"]).fails();
    assert_contains(&run.stderr, "branch bullpen/taken already exists");
    assert_eq!(env.snapshot(), before);

    // A leftover directory at the would-be worktree path is never taken over.
    env.bullpen(&["spawn", "probe", "--", "true"]).ok();
    let occupied = env.worktree_of("probe").with_file_name("occupied");
    std::fs::create_dir_all(&occupied).unwrap();
    std::fs::write(occupied.join("precious"), "work").unwrap();
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "occupied", "--", "true"]).fails();
    assert_contains(&run.stderr, "already exists");
    assert_eq!(env.snapshot(), before);
    assert_eq!(
        std::fs::read_to_string(occupied.join("precious")).unwrap(),
        "work"
    );
}

fn assert_fails_closed(env: &Env, cwd: &Path, before: &str, cause: &str) -> Run {
    let marker = env.root().join("command-ran");
    let run = env
        .bullpen_in(
            cwd,
            &["spawn", "x", "--", "touch", marker.to_str().unwrap()],
        )
        .fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(
        run.stderr.contains(cause),
        "expected {cause:?} in:\n{}",
        run.stderr
    );
    assert!(!marker.exists(), "the command must not run");
    assert_eq!(env.snapshot(), before, "nothing is left behind");
    run
}

#[test]
fn outside_a_repository_fails_closed() {
    let env = Env::new();
    let outside = env.root().join("not-a-repo");
    std::fs::create_dir_all(&outside).unwrap();
    let before = env.snapshot();
    assert_fails_closed(&env, &outside, &before, "not a git repository");
}

#[test]
fn a_bare_repository_fails_closed() {
    let env = Env::new();
    let bare = env.add_bare_remote();
    let before = env.snapshot();
    assert_fails_closed(&env, &bare, &before, "bare repository");
}

#[test]
fn no_git_on_path_fails_closed() {
    let env = Env::new();
    let before = env.snapshot();
    let empty = env.root().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let marker = env.root().join("command-ran");
    let out = env
        .cmd(crate::support::BIN, &env.repo)
        .env("PATH", &empty)
        .args([
            "spawn",
            "x",
            "--",
            "/usr/bin/touch",
            marker.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let run: Run = out.into();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "git not found on PATH");
    assert!(!marker.exists());
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_reftable_repository_fails_closed() {
    let env = Env::new();
    let rt = env.root().join("reftable");
    env.git(
        &env.root(),
        &["init", "-q", "--ref-format=reftable", rt.to_str().unwrap()],
    )
    .ok();
    env.git(&rt, &["commit", "-q", "--allow-empty", "-m", "x"])
        .ok();
    let before = env.snapshot();
    assert_fails_closed(&env, &rt, &before, "reftable");
}

#[test]
fn a_failing_worktree_add_leaves_nothing_behind() {
    let mut env = Env::new();
    let before = env.snapshot();
    env.fail_git_when("worktree add");
    let run = assert_fails_closed(&env, &env.repo.clone(), &before, "injected failure");
    assert!(
        run.stderr.contains("git worktree add"),
        "argv named: {}",
        run.stderr
    );
}

#[test]
fn a_partial_worktree_add_is_undone() {
    // git creates the branch and the worktree, then the post-checkout hook fails.
    let env = Env::new();
    env.failing_post_checkout_hook();
    let before = env.snapshot();
    let run = assert_fails_closed(&env, &env.repo, &before, "cannot create the worktree");
    assert_contains(&run.stderr, "exit 1");
    assert_eq!(env.git_out(&["branch", "--list", "bullpen/*"]), "");
}

#[test]
fn a_bad_base_fails_before_anything_is_created() {
    let env = Env::new();
    let before = env.snapshot();
    let run = env
        .bullpen(&["spawn", "x", "--base", "no-such-rev", "--", "true"])
        .fails();
    assert_contains(&run.stderr, "no-such-rev");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn concurrent_spawns_without_ids_all_get_their_own_session() {
    let env = Env::new();
    let children: Vec<_> = (0..20)
        .map(|_| {
            env.cmd(crate::support::BIN, &env.repo)
                .args(["spawn", "--", "true"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let run: Run = c.wait_with_output().unwrap().into();
        run.ok();
    }
    let sessions = env.ls_json();
    let sessions = sessions.as_array().unwrap();
    assert_eq!(sessions.len(), 20);
    let ids: std::collections::HashSet<_> =
        sessions.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 20);
    for s in sessions {
        assert_eq!(s["state"], "exited", "{s}");
        assert_eq!(s["exit_code"], 0);
        let id = s["id"].as_str().unwrap();
        env.record(id); // parses
        assert!(Path::new(s["worktree"].as_str().unwrap())
            .join("README")
            .is_file());
    }
    let branches = env.git_out(&["branch", "--list", "bullpen/*"]);
    assert_eq!(branches.lines().count(), 20);
    let wts = env.git_out(&["worktree", "list", "--porcelain"]);
    assert_eq!(wts.matches("branch refs/heads/bullpen/").count(), 20);
}

/// The children of `parent` that are still bullpen itself: forked, not exec'd.
fn forked_bullpens_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some((comm, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
            else {
                return false;
            };
            let ppid = rest
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            comm == "git-bullpen" && ppid == Some(parent)
        })
        .collect()
}

/// Whether SIGINT is in the signal mask `field` (`SigBlk:`, `SigIgn:`, `SigPnd:`,
/// `ShdPnd:`) of `/proc/<pid>/status`.
fn sigint_in(pid: u32, field: &str) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// A Ctrl-C while the command is held at the gate (forked, its run being claimed,
/// not yet exec'd) is not lost: it ends the command as soon as the gate opens,
/// and the end is recorded with signal 2.
///
/// The claim is held open for real: the record's reflog is a FIFO, and gix's
/// append to it (the claim's ref update) blocks until this test reads it. The
/// writes before (provisioning, ready) and after (the exit) are read at once.
#[test]
fn ctrl_c_while_the_run_is_being_claimed_ends_the_command() {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    use std::sync::{atomic, mpsc, Arc};
    use std::time::{Duration, Instant};

    let env = Env::new();
    // The last child bullpen starts before the gate's: once it has run, the
    // next forked bullpen is the command (git's, forked earlier, would look
    // held too in the instant between its fork and its exec).
    let set_up = env.root().join("set-up");
    env.git(
        &env.repo,
        &[
            "config",
            "bullpen.setup",
            &format!(": > '{}'", set_up.display()),
        ],
    )
    .ok();
    let logs = env.repo.join(".git/logs/refs/bullpen/sessions");
    std::fs::create_dir_all(&logs).unwrap();
    let fifo = logs.join("int");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    // The reader: each reflog append is one open-write-close of the FIFO; the
    // second (the claim) waits for `go`.
    let (entries_tx, entries) = mpsc::channel::<String>();
    let (go, go_rx) = mpsc::channel::<()>();
    let stop = Arc::new(atomic::AtomicBool::new(false));
    let reader = {
        let fifo = fifo.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            for n in 1.. {
                if n == 2 && go_rx.recv().is_err() {
                    return;
                }
                let mut entry = String::new();
                if let Ok(mut f) = std::fs::File::open(&fifo) {
                    let _ = f.read_to_string(&mut entry);
                }
                if stop.load(atomic::Ordering::SeqCst) || entries_tx.send(entry).is_err() {
                    return;
                }
            }
        })
    };

    let child = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["spawn", "int", "--", "sleep", "10"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let bullpen = child.id();
    // Whatever happens, nothing of this run outlives the test (a failure above
    // the release would leave bullpen blocked on the FIFO).
    // Disarmed once bullpen has been waited for (its group id may be reused then).
    struct KillGroup(Option<i32>);
    impl Drop for KillGroup {
        fn drop(&mut self) {
            if let Some(pgid) = self.0 {
                // SAFETY: kill(2) on the process group this test created.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
        }
    }
    let mut group = KillGroup(Some(bullpen as i32));
    let deadline = Instant::now() + Duration::from_secs(60);
    let entry = entries
        .recv_timeout(Duration::from_secs(60))
        .expect("no provisioning reflog entry");
    assert!(entry.contains("bullpen: provisioning"), "{entry}");
    while !set_up.exists() {
        assert!(Instant::now() < deadline, "the setup never ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Now bullpen forks the command and claims the run; the claim blocks on the
    // FIFO. Wait until the command is held at the gate (still bullpen) with the
    // terminal's signals blocked and at their defaults: from then on a Ctrl-C
    // stays pending in it.
    let held = loop {
        let held = forked_bullpens_of(bullpen)
            .into_iter()
            .find(|&pid| sigint_in(pid, "SigBlk:") && !sigint_in(pid, "SigIgn:"));
        if let Some(pid) = held {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command was never held");
        std::thread::sleep(Duration::from_millis(5));
    };
    // Ctrl-C: the terminal signals its whole foreground group.
    // SAFETY: kill(2) on the process group this test created.
    unsafe { libc::kill(-(bullpen as i32), libc::SIGINT) };
    assert!(
        sigint_in(held, "SigPnd:") || sigint_in(held, "ShdPnd:"),
        "the Ctrl-C is not pending in the held command"
    );
    go.send(()).unwrap();
    let claim = entries.recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(claim.contains("bullpen: running"), "{claim}");

    let run: Run = child.wait_with_output().unwrap().into();
    group.0 = None;
    stop.store(true, atomic::Ordering::SeqCst);
    // Release the reader from waiting for another writer: open the FIFO
    // without blocking (that succeeds only while it waits) until it is done.
    while !reader.is_finished() {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = reader.join();
    // A Ctrl-C lost at the gate would let `sleep 10` end with 0.
    assert_eq!(run.code(), 128 + 2, "{}", run.stderr);
    std::fs::remove_file(&fifo).unwrap();
    let rec = env.record("int");
    assert_eq!(rec["state"], "exited", "{rec}");
    assert_eq!(rec["exit"]["signal"], 2, "{rec}");
}

#[test]
fn ctrl_c_reaches_the_command_and_bullpen_records_the_outcome() {
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    // A process group of its own stands in for the terminal's foreground group.
    let child = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["spawn", "int", "--", "sleep", "100"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pgid = child.id() as i32;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let ls = env.bullpen(&["ls", "--json", "--all"]);
        if ls.stdout.contains("\"running\"") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never running: {}",
            ls.stdout
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the process group this test created.
    unsafe { libc::kill(-pgid, libc::SIGINT) };
    let run: Run = child.wait_with_output().unwrap().into();
    assert_eq!(run.code(), 128 + 2, "{}", run.stderr);
    let rec = env.record("int");
    assert_eq!(rec["state"], "exited");
    assert_eq!(rec["exit"]["signal"], 2);
}

/// Record commits carry the repository's identity as git resolves it (the
/// environment over `author.*`/`committer.*` over `user.*`; `bullpen
/// <bullpen@localhost>` when there is none), and the time now in the local
/// offset (`TZ`) unless `GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` say otherwise.
/// bullpen reads these itself rather than through gix's `author()` (issue 17).
#[test]
fn record_commits_carry_the_identity_and_local_time_git_would_use() {
    let env = Env::new();
    let who = |id: &str| {
        env.git_out(&[
            "log",
            "-1",
            "--format=%an <%ae>|%cn <%ce>|%ad",
            "--date=raw",
            &format!("refs/bullpen/sessions/{id}"),
        ])
    };
    let spawn = |id: &str, unset: &[&str], vars: &[(&str, &str)]| {
        let mut cmd = env.cmd(crate::support::BIN, &env.repo);
        cmd.args(["spawn", id, "--", "true"]);
        for v in unset {
            cmd.env_remove(v);
        }
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let run: crate::support::Run = cmd.output().unwrap().into();
        run.ok();
    };
    // The environment's names and dates (the hermetic ones).
    spawn("envs", &[], &[]);
    let got = who("envs");
    assert!(
        got.starts_with("Test Author <author@example.com>|Test Committer <committer@example.com>|"),
        "{got}"
    );
    let names = [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ];
    let dates = ["GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"];
    // None at all: bullpen's own, at the local time, in TZ's offset.
    spawn(
        "nobody",
        &[&names[..], &dates[..]].concat(),
        &[("TZ", "Asia/Kolkata")],
    );
    let got = who("nobody");
    assert!(
        got.starts_with("bullpen <bullpen@localhost>|bullpen <bullpen@localhost>|"),
        "{got}"
    );
    assert!(got.ends_with(" +0530"), "{got}");
    let secs: i64 = got
        .rsplit('|')
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - secs).abs() < 600, "{got}: not now ({now})");
    // user.* in the repository's config; committer.* over it for the committer.
    env.git_out(&["config", "user.name", "Repo User"]);
    env.git_out(&["config", "user.email", "user@repo"]);
    env.git_out(&["config", "committer.name", "Repo Committer"]);
    spawn("config", &names, &[]);
    let got = who("config");
    assert!(
        got.starts_with("Repo User <user@repo>|Repo Committer <user@repo>|"),
        "{got}"
    );
}
