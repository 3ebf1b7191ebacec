//! Repositories of unusual shape and state: paths git allows but few tools
//! expect, formats bullpen cannot read, files a crashed git left behind.

use crate::support::Env;

/// `env` with its repository replaced by a fresh one at `root/<name>`, made by
/// `git init <init_args>`, with one commit on `main`.
fn fresh_repo(name: &str, init_args: &[&str]) -> Env {
    let mut env = Env::new();
    let repo = env.root().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    let mut args = vec!["init", "-q", "-b", "main"];
    args.extend_from_slice(init_args);
    env.git(&repo, &args).ok();
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    env.git(&repo, &["add", "README"]).ok();
    env.git(&repo, &["commit", "-q", "-m", "initial"]).ok();
    env.repo = repo;
    env
}

/// [`fresh_repo`] with a bare `origin` that has `main`.
fn repo_named(name: &str) -> Env {
    let env = fresh_repo(name, &[]);
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env
}

#[test]
fn a_repository_whose_path_holds_a_newline_is_collected() {
    let env = repo_named("re\npo");
    env.bullpen(&[
        "spawn",
        "nl",
        "--",
        "sh",
        "-c",
        "echo x > f && git add f && git commit -qm work",
    ])
    .ok();
    let wt = env.worktree_of("nl");
    // The worktree's `.git` file names the admin entry under `re\npo/.git`.
    let dot_git = std::fs::read_to_string(wt.join(".git")).unwrap();
    assert!(dot_git.contains("re\npo"), "{dot_git:?}");
    env.git(&env.repo, &["push", "-q", "origin", "bullpen/nl"])
        .ok();

    let run = env.bullpen(&["gc", "--json"]).ok();
    let entries: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let e = entries
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "nl")
        .unwrap_or_else(|| panic!("no entry for nl: {entries:#}"));
    assert_eq!(e["action"], "removed", "{e}");
    assert!(!wt.exists(), "worktree directory removed");
    let ls = env.ls_json();
    assert_eq!(ls[0]["state"], "collected", "{ls}");
    let worktrees = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(
        !worktrees.contains(wt.to_str().unwrap()),
        "deregistered: {worktrees}"
    );
}

// ----- lock files a crashed git left behind -----

/// git's advice for a lock file that exists, which bullpen passes on as hints.
const LOCK_ADVICE: [&str; 2] = [
    "hint: Another git process seems to be running in this repository, e.g.",
    "hint: may have crashed in this repository earlier:\nhint: remove the file manually to continue.",
];

#[track_caller]
fn assert_names_lock(stderr: &str, lock: &std::path::Path) {
    let named = format!("cannot lock {}: it exists", lock.display());
    assert!(stderr.contains(&named), "{named:?} not in:\n{stderr}");
    for advice in LOCK_ADVICE {
        assert!(stderr.contains(advice), "{advice:?} not in:\n{stderr}");
    }
    assert!(!stderr.contains("another bullpen process"), "{stderr}");
}

#[test]
fn a_stale_packed_refs_lock_is_named_with_gits_advice_and_nothing_is_created() {
    let env = Env::new();
    let lock = env.repo.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "a", "--", "true"]).fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_names_lock(&run.stderr, &lock);
    assert!(!run.stderr.contains("already in use"), "{}", run.stderr);
    assert_eq!(env.snapshot(), before);
    assert!(lock.exists(), "the lock is the user's to remove");
}

#[test]
fn spawn_without_an_id_does_not_retry_on_a_stale_lock() {
    let env = Env::new();
    let lock = env.repo.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let started = std::time::Instant::now();
    let run = env.bullpen(&["spawn", "--", "true"]).fails();
    // gix waits core.packedRefsTimeout (1s) for the lock, as git does: once.
    // Retrying with 32 generated ids took over half a minute.
    let took = started.elapsed();
    assert_names_lock(&run.stderr, &lock);
    assert!(
        took < std::time::Duration::from_secs(10),
        "took {took:?}: {}",
        run.stderr
    );
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_stale_record_lock_is_named_not_taken_for_a_used_id() {
    let env = Env::new();
    let dir = env.repo.join(".git/refs/bullpen/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = dir.join("a.lock");
    std::fs::write(&lock, "").unwrap();
    let run = env.bullpen(&["spawn", "a", "--", "true"]).fails();
    assert_names_lock(&run.stderr, &lock);
    assert!(!run.stderr.contains("already in use"), "{}", run.stderr);

    // An existing session's record: its update names the lock too, at once.
    std::fs::remove_file(&lock).unwrap();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    std::fs::write(&lock, "").unwrap();
    let run = env.bullpen(&["resume", "a", "--", "true"]).fails();
    assert_names_lock(&run.stderr, &lock);
    assert!(!run.stderr.contains("changed"), "{}", run.stderr);
}

#[test]
fn a_stale_branch_lock_in_gc_is_named_not_taken_for_a_moved_branch() {
    let env = repo_named("repo2");
    env.bullpen(&[
        "spawn",
        "a",
        "--",
        "git",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "w",
    ])
    .ok();
    env.git(&env.repo, &["push", "-q", "origin", "bullpen/a"])
        .ok();
    let lock = env.repo.join(".git/refs/heads/bullpen/a.lock");
    std::fs::write(&lock, "").unwrap();
    let run = env.bullpen(&["gc", "--json"]);
    let entries: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let e = &entries[0];
    assert_eq!(e["action"], "degraded", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("cannot lock {}: it exists", lock.display())),
        "{reason}"
    );
    assert!(!reason.contains("moved"), "{reason}");
    // Once the lock is gone, the next gc finishes.
    std::fs::remove_file(&lock).unwrap();
    env.bullpen(&["gc"]).ok();
    assert_eq!(env.ls_json()[0]["state"], "collected");
}

// ----- repositories this build cannot work in -----

/// `spawn` and `ls` in `env.repo` fail up front with `cause` and `hint`, run
/// nothing and create nothing.
#[track_caller]
fn assert_refused_up_front(env: &Env, cause: &str, hint: &str) {
    let before = env.snapshot();
    let marker = env.root().join("command-ran");
    let marker_arg = marker.to_str().unwrap();
    for args in [
        &["spawn", "a", "--", "touch", marker_arg][..],
        &["spawn", "--bg", "--", "touch", marker_arg][..],
        &["ls"][..],
    ] {
        let run = env.bullpen(args).fails();
        // bullpen's own failure: 125 where the command's status passes through.
        let own = if args[0] == "spawn" { 125 } else { 128 };
        assert_eq!(run.code(), own, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(cause),
            "{args:?}: {cause:?} not in:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("hint: {hint}")),
            "{args:?}: {hint:?} not in:\n{}",
            run.stderr
        );
        assert!(!run.stderr.contains("gix"), "library words: {}", run.stderr);
    }
    assert!(!marker.exists(), "the command must not run");
    assert_eq!(env.snapshot(), before, "nothing is created");
    assert!(!env.repo.join(".git/bullpen").exists());
}

#[test]
fn a_sha256_repository_is_refused_up_front() {
    let env = fresh_repo("sha256", &["--object-format=sha256"]);
    assert_refused_up_front(
        &env,
        &format!(
            "{} uses SHA-256 object ids (extensions.objectFormat in {}); this build of \
             bullpen works in SHA-1 repositories only",
            env.repo.join(".git").display(),
            env.repo.join(".git/config").display()
        ),
        "nothing was changed; run bullpen in a SHA-1 repository",
    );
}

#[test]
fn a_repository_with_core_worktree_is_refused_up_front() {
    let env = fresh_repo("gitdir", &[]);
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    env.git(
        &env.repo,
        &["config", "core.worktree", elsewhere.to_str().unwrap()],
    )
    .ok();
    assert_refused_up_front(
        &env,
        &format!(
            "{} sets core.worktree ({}, the working tree {}): bullpen works only where the \
             main working tree holds the git directory",
            env.repo.join(".git/config").display(),
            elsewhere.display(),
            elsewhere.display()
        ),
        &format!(
            "nothing was changed; run bullpen in a clone (`git clone {} <new dir>`)",
            env.repo.join(".git").display()
        ),
    );
}

#[test]
fn core_worktree_naming_the_directory_that_holds_the_git_dir_is_harmless() {
    let env = fresh_repo("same", &[]);
    env.git(
        &env.repo,
        &["config", "core.worktree", env.repo.to_str().unwrap()],
    )
    .ok();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    assert_eq!(env.ls_json()[0]["state"], "exited");
}

// ----- what a killed gc leaves behind -----

/// A pid that belonged to a process that has ended (and was reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn gc_sweeps_the_temporary_indexes_of_killed_gcs_and_keeps_live_ones() {
    let env = Env::new();
    let tmp = env.repo.join(".git/bullpen/tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let dead = dead_pid();
    let stale = [
        tmp.join(format!("index-{dead}-1")),
        tmp.join(format!("index-{dead}-1.lock")),
        tmp.join(format!("index-{}-1700000000000000000", dead_pid())),
    ];
    // This test process is alive: its file may be in use.
    let live = tmp.join(format!("index-{}-2", std::process::id()));
    let other = tmp.join("not-an-index");
    for f in stale.iter().chain([&live, &other]) {
        std::fs::write(f, "DIRC").unwrap();
    }

    env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(
        stale.iter().all(|f| f.exists()),
        "a dry run changes nothing"
    );

    env.bullpen(&["gc"]).ok();
    for f in &stale {
        assert!(!f.exists(), "{} swept", f.display());
    }
    assert!(live.exists(), "a live gc's index is kept");
    assert!(
        other.exists(),
        "a file that is not a temporary index is left alone"
    );

    // Once nothing is left in it, the directory goes too.
    std::fs::remove_file(&other).unwrap();
    std::fs::rename(&live, tmp.join(format!("index-{dead}-2"))).unwrap();
    env.bullpen(&["gc"]).ok();
    assert!(!tmp.exists(), "the empty tmp dir is removed");
}
