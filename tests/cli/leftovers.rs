//! Work that is not a commit, and the smaller leftovers: an agent's
//! conversation, a copied-in file edited since, the `ls` cache, a failed
//! `--bg` start's log, an admin entry git left half-removed.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::bg::Bg;
use crate::support::{assert_contains, Env};

/// Make a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().expect("utf-8")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[test]
fn ls_does_not_block_on_a_fifo_where_its_cache_goes() {
    let env = Env::new();
    env.spawn_sh("a", "true");
    let cache = env.repo.join(".git/bullpen/cache/ls");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&cache);
    mkfifo(&cache);
    let mut child = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["ls", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Only a bound on a failure: `ls` answers at once, or hangs forever.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ls blocked on the FIFO where its cache goes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_contains(&String::from_utf8_lossy(&out.stdout), "a ");
}

#[test]
fn a_failed_bg_spawn_leaves_no_log_for_a_later_session_of_that_id() {
    let env = Bg::new();
    // A file where the supervisor's socket directory goes: it writes why to
    // its log, reports the error and ends before it claims the run.
    let sockets = crate::hermetic::runtime_dir(&env.home).join("bullpen");
    std::fs::create_dir_all(sockets.parent().unwrap()).unwrap();
    std::fs::write(&sockets, "not a directory\n").unwrap();
    let run = env
        .bullpen(&["spawn", "--bg", "a", "--", "echo", "first"])
        .fails();
    assert_contains(
        &run.stderr,
        "session a did not start; nothing of it is left",
    );
    let log = env.repo.join(".git/bullpen/logs/a.log");
    assert!(!log.exists(), "the failed start's log is gone");

    std::fs::remove_file(&sockets).unwrap();
    env.spawn_bg("a", &["echo", "second"]);
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    assert!(
        !logs.contains("socket") && !logs.contains("fatal"),
        "the new session shows only its own output:\n{logs}"
    );
    assert_contains(&logs, "second");
}

/// A repository whose `main` is on a bare `origin`, and an agent `claude`
/// whose profile only says where it ran.
fn published_env() -> Env {
    let env = Env::new();
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env.git_out(&["config", "bullpen.agent.claude.command", "true"]);
    env
}

/// Session `id`'s record with every time of its activity set to `at`.
fn set_activity(env: &Env, id: &str, at: &str) {
    env.edit_record(id, |r| {
        r["created_at"] = at.into();
        r["process"]["started_at"] = at.into();
        r["exit"]["at"] = at.into();
    });
}

#[test]
fn an_agent_session_with_no_commit_of_its_own_is_kept_for_its_conversation() {
    let env = published_env();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    env.spawn_sh("plain", "true");
    let wt = env.worktree_of("a");

    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        "kept     a: no commit of its own, but its agent 'claude' keeps its conversation by \
         the worktree's path (last active ",
    );
    assert_contains(&run.stdout, "within bullpen.gc.agentGrace 2.weeks.ago)");
    // A branch with no commit of its own is never called published.
    assert_contains(
        &run.stdout,
        "removed  plain: holds no commit of its own, clean and idle",
    );
    assert!(!run.stdout.contains("published"), "{}", run.stdout);
    assert!(wt.is_dir(), "the agent's worktree stays");

    // `rm` keeps it too; `--force` is the way to let it go.
    let run = env.bullpen(&["rm", "a"]);
    assert_eq!(run.code(), 3, "{}{}", run.stdout, run.stderr);
    assert_contains(&run.stdout, "keeps its conversation");
    assert_contains(&run.stderr, "git bullpen rm --force a");
    assert!(wt.is_dir());

    // Its grace runs from its last activity: a record last active before the
    // cutoff goes; `never` keeps it whatever its age.
    set_activity(&env, "a", "2026-01-01T00:00:00Z");
    env.git_out(&["config", "bullpen.gc.agentGrace", "never"]);
    env.bullpen(&["gc"]).ok();
    assert!(wt.is_dir(), "never: kept");
    env.git_out(&["config", "bullpen.gc.agentGrace", "2026-06-01"]);
    set_activity(&env, "a", "2026-07-01T00:00:00Z");
    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        "last active 2026-07-01T00:00:00Z, within bullpen.gc.agentGrace 2026-06-01",
    );
    assert!(wt.is_dir(), "active after the cutoff: kept");
    set_activity(&env, "a", "2026-01-01T00:00:00Z");
    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        "removed  a: holds no commit of its own, clean and idle",
    );
    assert!(!wt.exists());
}

#[test]
fn a_bad_agent_grace_fails_gc_before_anything_is_done() {
    let env = published_env();
    env.spawn_sh("plain", "true");
    env.git_out(&["config", "bullpen.gc.agentGrace", "soon"]);
    let run = env.bullpen(&["gc"]).fails();
    assert_contains(
        &run.stderr,
        "fatal: bullpen.gc.agentGrace: \"soon\" is not an expiry",
    );
    assert!(env.worktree_of("plain").is_dir());
}

#[test]
fn a_file_bullpen_copied_in_is_work_once_edited() {
    let env = published_env();
    std::fs::write(env.repo.join(".gitignore"), ".env\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore .env"])
        .ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    std::fs::write(env.repo.join(".worktreeinclude"), ".env\n").unwrap();
    std::fs::write(env.repo.join(".env"), "KEY=1\n").unwrap();

    let edited = env.spawn_sh("edited", "echo KEY=2 >> .env");
    let touched = env.spawn_sh("touched", "touch -d 2001-01-01 .env");
    let gone = env.spawn_sh("deleted", "rm .env");
    let same = env.spawn_sh("same", "true");
    assert_eq!(
        std::fs::read_to_string(same.join(".env")).unwrap(),
        "KEY=1\n"
    );
    // What bullpen copied is remembered locally, never in a ref.
    let local = env.repo.join(".git/bullpen/local/edited/included.json");
    let text = std::fs::read_to_string(&local).unwrap();
    assert_contains(&text, "\"path\": \".env\"");
    let refs = env.git_out(&["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("included"), "{refs}");

    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        "kept     edited: 1 file copied in from the main worktree (.worktreeinclude) was \
         edited since: '.env'",
    );
    assert!(edited.join(".env").is_file(), "the edited copy stays");
    // Only touched (the same content), deleted, or as copied: disposable.
    assert_contains(
        &run.stdout,
        "removed  same: holds no commit of its own, clean and idle; and 1 ignored file, 6 bytes",
    );
    assert_contains(&run.stdout, "removed  touched: ");
    assert_contains(&run.stdout, "removed  deleted: ");
    assert!(!touched.exists() && !gone.exists() && !same.exists());

    // rm keeps it; --force discards it as any uncommitted change.
    assert_eq!(env.bullpen(&["rm", "edited"]).code(), 3);
    assert!(edited.is_dir());
    let run = env.bullpen(&["rm", "--force", "edited"]).ok();
    assert_contains(
        &run.stdout,
        "forced: discarded 1 file copied in from the main worktree (.worktreeinclude) was \
         edited since: '.env'",
    );
    assert!(!edited.exists());
}

#[test]
fn a_collected_session_is_resumed_in_its_recreated_worktree() {
    let env = published_env();
    let log = env.root().join("agent.log");
    let line = |form: &str| format!("echo {form} \"$PWD\" >> '{}'", log.display());
    env.git_out(&["config", "bullpen.agent.claude.command", &line("start")]);
    env.git_out(&["config", "bullpen.agent.claude.resume", &line("resume")]);
    env.git_out(&["config", "bullpen.gc.agentGrace", "now"]);
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    let tip = env.git_out(&["rev-parse", "bullpen/a"]);
    // A plain session whose pushed commit is its work.
    let b = env.spawn_sh("b", "echo b > b && git add b && git commit -q -m b");
    env.git(&env.repo, &["push", "-q", "origin", "bullpen/b"])
        .ok();
    let b_tip = env.git_out(&["rev-parse", "bullpen/b"]);
    env.bullpen(&["gc"]).ok();
    assert!(!wt.exists() && !b.exists());
    assert_eq!(env.record("a")["state"], "collected");
    assert_eq!(env.record("a")["last_tip"], tip.as_str());

    // The agent goes on with its conversation, where it kept it.
    let run = env.bullpen(&["resume", "a"]).ok();
    assert_contains(
        &run.stderr,
        &format!(
            "session a was collected; recreating its worktree {} from its last tip {tip}",
            wt.display()
        ),
    );
    assert_contains(&run.stderr, "continuing its conversation");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().last().unwrap(),
        format!("resume {}", wt.display())
    );
    assert_eq!(env.git_out(&["rev-parse", "bullpen/a"]), tip);
    assert_ne!(env.record("a")["state"], "collected");
    assert!(env.record("a").get("last_tip").is_none());

    env.bullpen(&["resume", "b", "--", "true"]).ok();
    assert_eq!(std::fs::read_to_string(b.join("b")).unwrap(), "b\n");
    assert_eq!(env.git_out(&["rev-parse", "bullpen/b"]), b_tip);
}

#[test]
fn a_collected_session_is_recreated_only_where_bullpen_made_it_and_the_path_is_free() {
    let env = published_env();
    let a = env.spawn_sh("a", "true");
    let b = env.spawn_sh("b", "true");
    env.bullpen(&["gc"]).ok();
    assert!(!a.exists() && !b.exists());
    let before = env.snapshot();

    // No local proof that bullpen created it there: a fetched or forged
    // record never makes this machine create a worktree.
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/a")).unwrap();
    let run = env.bullpen(&["resume", "a", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "session a was collected");
    assert_contains(&run.stderr, "cannot be recreated");
    assert!(!a.exists());

    // Something else at the path is left alone.
    std::fs::create_dir_all(b.parent().unwrap()).unwrap();
    std::fs::write(&b, "mine\n").unwrap();
    let run = env.bullpen(&["resume", "b", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "is occupied by a regular file");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "mine\n");
    std::fs::remove_file(&b).unwrap();
    let after = env.snapshot();
    assert_eq!(
        before
            .lines()
            .filter(|l| !l.contains("/local/a"))
            .collect::<Vec<_>>(),
        after.lines().collect::<Vec<_>>(),
        "refusals change nothing"
    );

    // A recorded path elsewhere in the root is never taken.
    env.edit_record("b", |r| {
        let other = a.to_str().unwrap().to_owned();
        r["worktree"] = other.into();
    });
    let run = env.bullpen(&["resume", "b", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(!a.exists());
}

#[test]
fn gc_finishes_an_admin_entry_git_left_half_removed_and_only_a_sessions() {
    let env = published_env();
    let admin = |name: &str| env.repo.join(".git/worktrees").join(name);
    let user_dir = env.root().join("user");
    // A user's worktree made first, named as a session later is: the session's
    // entry becomes `d1`, the user's is `d`.
    let user_d = user_dir.join("d");
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "user-d",
        user_d.to_str().unwrap(),
    ]);
    let a = env.spawn_sh("a", "true");
    let d = env.spawn_sh("d", "true");
    assert!(admin("d1").is_dir(), "the session's entry is d1");
    let f = env.spawn_sh("f", "true");
    env.bullpen(&["rm", "f"]).ok();
    assert!(!f.exists() && !admin("f").exists());
    let user_f = user_dir.join("f");
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "user-f",
        user_f.to_str().unwrap(),
    ]);
    let user_x = user_dir.join("x");
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "user-x",
        user_x.to_str().unwrap(),
    ]);

    // `git worktree remove` killed part-way: the directory and the entry's
    // gitdir file are gone, the rest of the entry is not.
    let half = |dir: &Path, name: &str, head_too: bool| {
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::remove_file(admin(name).join("gitdir")).unwrap();
        if head_too {
            std::fs::remove_file(admin(name).join("HEAD")).unwrap();
        }
    };
    half(&a, "a", false);
    half(&user_d, "d", true); // no HEAD left to tell whose it is
    half(&user_f, "f", false); // named as a session gone before, HEAD on user-f
    half(&user_x, "x", false);
    // A session's, but nothing here shows bullpen created it.
    let g = env.spawn_sh("g", "true");
    half(&g, "g", false);
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/g")).unwrap();

    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        &format!(
            "pruned     worktree entry a: git left it half-removed (no gitdir file) and its \
             directory {} is gone",
            a.display()
        ),
    );
    assert!(!admin("a").exists(), "the session's entry is finished");
    assert_contains(
        &run.stdout,
        "worktree entry g: git left it half-removed (no gitdir file), but it is nothing on \
         this machine shows",
    );
    assert!(admin("g").is_dir());
    for user in ["d", "f", "x"] {
        assert!(admin(user).is_dir(), "the user's entry {user} stays");
        assert!(
            !run.stdout.contains(&format!("worktree entry {user}:")),
            "and is not reported:\n{}",
            run.stdout
        );
    }
    // Session d itself goes as any published, clean, idle one.
    assert_contains(&run.stdout, "removed    d: ");
    assert!(!d.exists());
}

#[test]
fn the_teardown_fallback_leaves_a_worktree_whose_entry_git_now_registers_elsewhere() {
    let mut env = published_env();
    let wt = env.spawn_sh("a", "true");
    let other = env.root().join("elsewhere");
    let gitdir = env.repo.join(".git/worktrees/a/gitdir");
    // Between gc's checks and git's removal, the entry is moved to another
    // path (`git worktree move` by someone else), and git fails.
    crate::gc::on_worktree_remove(
        &mut env,
        &format!(
            "printf '%s\\n' '{}/.git' > '{}'",
            other.display(),
            gitdir.display()
        ),
    );
    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        &format!(
            "kept  a: not removed: its worktree entry a is now registered for {}",
            other.display()
        ),
    );
    assert!(wt.join("README").is_file(), "the directory is not touched");
    assert!(gitdir.is_file(), "nor the entry");
}

#[test]
fn attach_checks_the_identity_of_whoever_answers_on_the_socket() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do echo got-$x; done"]);
    // The supervisor this machine recorded (its pid and start time as the
    // record says, so every earlier check passes) but not the process that
    // answers: another boot's.
    let pid = env.record("a")["process"]["pid"].as_u64().unwrap();
    let proof = env
        .repo
        .join(format!(".git/bullpen/local/a/run-{pid}.json"));
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proof).unwrap()).unwrap();
    run["supervisor"]["boot_id"] = "00000000-0000-0000-0000-000000000000".into();
    std::fs::write(&proof, serde_json::to_string(&run).unwrap()).unwrap();

    let mut cmd = env.cmd(crate::support::BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut term = crate::pty::Term::spawn(cmd, 24, 80);
    let status = term.wait();
    assert_eq!(status.code(), Some(125), "{}", term.shown());
    assert_contains(&term.shown(), "is answered by pid");
    assert_contains(&term.shown(), "not by the session's supervisor");
    let _ = env.bullpen(&["stop", "a"]);
}

/// What people read of this file's rules, word for word.
#[test]
fn the_words_of_conversations_copies_and_revivals() {
    let env = published_env();
    std::fs::write(env.repo.join(".gitignore"), ".env\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore .env"])
        .ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    std::fs::write(env.repo.join(".worktreeinclude"), ".env\n").unwrap();
    std::fs::write(env.repo.join(".env"), "KEY=1\n").unwrap();
    env.git_out(&["config", "bullpen.gc.agentGrace", "never"]);
    env.bullpen(&["spawn", "--agent", "claude", "agent"]).ok();
    set_activity(&env, "agent", "2026-01-01T00:00:00Z");
    env.spawn_sh("copy", "echo KEY=2 >> .env");
    env.spawn_sh("plain", "true");
    let show = |args: &[&str]| {
        let run = env.bullpen(args);
        crate::snapshots::normalise(
            &env,
            &format!("exit {}\n{}--\n{}", run.code(), run.stdout, run.stderr),
        )
    };
    insta::assert_snapshot!(show(&["gc"]), @"
    exit 0
    kept     agent: no commit of its own, but its agent 'claude' keeps its conversation by the worktree's path (last active 2026-01-01T00:00:00Z, within bullpen.gc.agentGrace never)
    kept     copy: 1 file copied in from the main worktree (.worktreeinclude) was edited since: '.env'
    removed  plain: holds no commit of its own, clean and idle; and 1 ignored file, 6 bytes
    --
    bullpen: gc: 1 removed, 2 kept
    ");
    insta::assert_snapshot!(show(&["resume", "plain", "--", "true"]), @"
    exit 0
    --
    bullpen: session plain was collected; recreating its worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/plain from its last tip [OID]
    bullpen: copied from the main worktree (.worktreeinclude): .env (1 file)
    bullpen: resuming session plain on bullpen/plain in [ROOT]/bullpen-home/worktrees/repo-[KEY]/plain
    ");
}
