//! The session branch spawn creates in-process before `git worktree add
//! <path> <branch>` (one git process fewer than `-b`) is the branch `git
//! branch` would have made, and a `reference-transaction` hook still sees git
//! create it.

use std::path::Path;

use crate::support::{make_executable, Env};

/// A `reference-transaction` hook in `dir` that appends "<state> <old> <ref>"
/// per ref it is told of to `log`.
fn logging_hook(dir: &Path, log: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let hook = dir.join("reference-transaction");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nwhile read old new ref; do echo \"$1 $old $ref\" >> '{}'; done\n",
            log.display()
        ),
    )
    .unwrap();
    make_executable(&hook);
}

fn assert_hook_saw_branch(log: &Path, id: &str) {
    let seen = std::fs::read_to_string(log).unwrap_or_default();
    // Created: from nothing (git's checkout later updates it in place too).
    let created = format!("committed {} refs/heads/bullpen/{id}", "0".repeat(40));
    assert!(
        seen.lines().any(|l| l == created),
        "the hook never saw the branch created:\n{seen}"
    );
}

#[test]
fn a_reference_transaction_hook_sees_git_create_the_branch() {
    let env = Env::new();
    let log = env.root().join("transactions");
    logging_hook(&env.repo.join(".git/hooks"), &log);
    env.bullpen(&["spawn", "hooked", "--", "true"]).ok();
    assert_hook_saw_branch(&log, "hooked");
}

#[test]
fn a_reference_transaction_hook_in_core_hooks_path_sees_it_too() {
    let env = Env::new();
    let log = env.root().join("transactions");
    // Relative, as git takes it: from the directory the hooks run in.
    logging_hook(&env.repo.join("my-hooks"), &log);
    env.git_out(&["config", "core.hooksPath", "my-hooks"]);
    env.bullpen(&["spawn", "hooked", "--", "true"]).ok();
    assert_hook_saw_branch(&log, "hooked");
}

#[test]
fn the_branch_is_the_one_git_branch_makes() {
    let env = Env::new();
    env.bullpen(&["spawn", "plain", "--", "true"]).ok();
    let base = env.git_out(&["rev-parse", "HEAD"]);
    assert_eq!(env.git_out(&["rev-parse", "bullpen/plain"]), base);
    assert_eq!(
        env.git_out(&["reflog", "show", "--format=%gs", "bullpen/plain"]),
        format!("branch: Created from {base}")
    );
    assert_eq!(
        env.git_out(&["rev-parse", "--abbrev-ref", "HEAD"]),
        "main",
        "the main worktree stays where it was"
    );
    let wt = env.worktree_of("plain");
    assert_eq!(
        env.git(&wt, &["symbolic-ref", "HEAD"]).ok().stdout.trim(),
        "refs/heads/bullpen/plain"
    );
}
