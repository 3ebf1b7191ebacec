//! Repositories of unusual shape and state: paths git allows but few tools
//! expect, formats bullpen cannot read, files a crashed git left behind.

use crate::support::Env;

/// `env` with its repository moved to a fresh one at `root/<name>` (one
/// commit on `main`, a bare `origin` with `main` pushed).
fn repo_named(name: &str) -> Env {
    let mut env = Env::new();
    let repo = env.root().join(name);
    std::fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]).ok();
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    env.git(&repo, &["add", "README"]).ok();
    env.git(&repo, &["commit", "-q", "-m", "initial"]).ok();
    env.repo = repo;
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
    assert_eq!(run.code(), 128, "{}", run.stderr);
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
