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
