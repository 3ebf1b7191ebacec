//! Programs that another repository's configuration names (a clean filter, an
//! fsmonitor, a hook) in a submodule or a repository nested in a session's
//! worktree: the agent wrote that configuration, so bullpen's own look at
//! the worktree (gc's status, `ls --status`) must run none of it, and still
//! find a dirty submodule dirty.

use std::path::{Path, PathBuf};

use crate::gc::{gc, lib_upstream, session, setup, spawn_pushed};
use crate::support::{make_executable, Env};

/// Make `repo`'s own configuration name programs that leave `marker` behind
/// when run: a clean filter for every file, an fsmonitor and the hooks a
/// status could reach (`post-index-change`).
fn arm(env: &Env, repo: &Path, marker: &Path) {
    let script = env.root().join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    make_executable(&script);
    let s = script.to_str().unwrap();
    for (key, value) in [
        ("filter.evil.clean", s),
        ("filter.evil.required", "true"),
        ("core.fsmonitor", s),
    ] {
        env.git(repo, &["config", key, value]).ok();
    }
    std::fs::write(repo.join(".gitattributes"), "* filter=evil\n").unwrap();
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-index-change", "pre-commit"] {
        std::fs::copy(&script, hooks.join(hook)).unwrap();
    }
}

/// A pushed session `a` with the submodule `lib` (its `.git` a directory in
/// the worktree), its tracked `lib.txt` edited in place (same size, so
/// status must hash it), and its configuration armed.
fn with_armed_submodule(env: &Env, marker: &Path) -> PathBuf {
    let up = lib_upstream(env);
    let wt = spawn_pushed(
        env,
        "a",
        &format!(
            "git clone -q {up} lib && git submodule add -q {up} lib && git commit -q -m 'add lib'",
            up = up.display()
        ),
    );
    let lib = wt.join("lib");
    assert!(
        lib.join(".git").is_dir(),
        "the submodule keeps its own .git"
    );
    arm(env, &lib, marker);
    std::fs::write(lib.join("lib.txt"), "LIB\n").unwrap();
    wt
}

#[test]
fn gcs_status_of_a_worktree_without_its_entry_runs_no_program_of_a_submodule() {
    let env = setup();
    let marker = env.root().join("ran");
    let wt = with_armed_submodule(&env, &marker);
    // The admin entry gone: gc compares the directory with the tip (`git
    // status` with a temporary index), which looks into the submodule.
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    for args in [&["--dry-run"][..], &[][..]] {
        let (run, entries) = gc(&env, args);
        let e = session(&entries, "a");
        assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
        assert_eq!(e["reason"], "1 modified file", "{e}");
        assert!(
            !marker.exists(),
            "gc ran a program from the submodule's configuration"
        );
    }
    assert!(wt.join("lib/lib.txt").exists());
}

#[test]
fn a_clean_submodule_of_a_worktree_without_its_entry_is_clean_and_runs_nothing() {
    let env = setup();
    let marker = env.root().join("ran");
    let wt = with_armed_submodule(&env, &marker);
    std::fs::write(wt.join("lib/lib.txt"), "lib\n").unwrap(); // as committed
    std::fs::remove_file(wt.join("lib/.gitattributes")).unwrap();
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    let (run, entries) = gc(&env, &["--dry-run"]);
    let e = session(&entries, "a");
    // Its commits are on its own remote: nothing in it is work.
    assert_eq!(e["action"], "removed", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "published (reachable from origin/bullpen/a), clean and idle (its worktree entry was \
         already gone)"
    );
    assert!(!marker.exists(), "gc ran a program from the submodule");
}

#[test]
fn a_submodule_at_another_commit_or_gone_is_a_change_as_git_counts_it() {
    let env = setup();
    let marker = env.root().join("ran");
    let wt = with_armed_submodule(&env, &marker);
    let lib = wt.join("lib");
    std::fs::write(lib.join("lib.txt"), "lib\n").unwrap();
    std::fs::remove_file(lib.join(".gitattributes")).unwrap();
    // A commit of its own, on its remote (so it is no unpublished work).
    std::fs::write(lib.join("more.txt"), "more\n").unwrap();
    env.git(&lib, &["add", "more.txt"]).ok();
    env.git(
        &lib,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "-m",
            "more",
        ],
    )
    .ok();
    env.git(&lib, &["push", "-q", "origin", "HEAD:main"]).ok();
    let _ = std::fs::remove_file(&marker); // our own git ran its fsmonitor
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    let (run, entries) = gc(&env, &["--dry-run"]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(e["reason"], "1 modified file", "{e}");
    std::fs::remove_dir_all(&lib).unwrap();
    let (run, entries) = gc(&env, &["--dry-run"]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(e["reason"], "1 deleted file", "{e}");
    assert!(!marker.exists(), "gc ran a program from the submodule");
}

#[test]
fn ls_status_and_gc_run_no_program_of_a_submodule_or_a_nested_repository() {
    let env = setup();
    let marker = env.root().join("ran");
    let wt = with_armed_submodule(&env, &marker);
    // And a repository of the agent's own in an untracked directory.
    let nested = wt.join("scratch/tool");
    env.git(&env.root(), &["init", "-q", nested.to_str().unwrap()])
        .ok();
    std::fs::write(nested.join("t.txt"), "t\n").unwrap();
    env.git(&nested, &["add", "t.txt"]).ok();
    env.git(&nested, &["commit", "-q", "-m", "t"]).ok();
    arm(&env, &nested, &marker);
    std::fs::write(nested.join("t.txt"), "T\n").unwrap();
    let _ = std::fs::remove_file(&marker); // the commit above ran its hooks
    let rows: serde_json::Value =
        serde_json::from_str(&env.bullpen(&["ls", "--status", "--json"]).ok().stdout).unwrap();
    assert_eq!(rows[0]["modified"], 1, "{}", rows[0]);
    let (run, entries) = gc(&env, &[]);
    assert_eq!(session(&entries, "a")["action"], "kept", "{}", run.stderr);
    assert!(!marker.exists(), "bullpen ran a program of the agent's");
}
