//! What spawn calls uncommitted changes of the main worktree (it says they
//! stay behind): tracked files that differ from HEAD, staged or not; never
//! untracked files.

use crate::support::Env;

const SAID: &str = "the uncommitted changes of the main worktree stay there";

fn says(env: &Env, id: &str) -> bool {
    env.bullpen(&["spawn", id, "--", "true"])
        .ok()
        .stderr
        .contains(SAID)
}

#[test]
fn staged_changes_are_uncommitted_changes() {
    let env = Env::new();
    // Staged, and the file as staged: the index differs from HEAD, the file
    // does not differ from the index.
    std::fs::write(env.repo.join("README"), "staged\n").unwrap();
    env.git_out(&["add", "README"]);
    assert!(says(&env, "modified"));
    env.git_out(&["reset", "-q", "--hard"]);

    std::fs::write(env.repo.join("new"), "new\n").unwrap();
    env.git_out(&["add", "new"]);
    assert!(says(&env, "added"));
    env.git_out(&["reset", "-q", "--hard"]);

    env.git_out(&["rm", "-q", "README"]);
    assert!(says(&env, "removed"));
    env.git_out(&["reset", "-q", "--hard"]);

    // Deleted from the worktree only.
    std::fs::remove_file(env.repo.join("README")).unwrap();
    assert!(says(&env, "deleted"));
    env.git_out(&["reset", "-q", "--hard"]);

    std::fs::write(env.repo.join("untracked"), "mine\n").unwrap();
    assert!(!says(&env, "untracked"), "an untracked file is no change");
}
