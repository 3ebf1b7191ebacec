//! An adversarial review of "work is more than commits": what a hostile user
//! or a crash tries against gc and `rm`, each attempt a test. Those that found
//! a loss carry the fix's name; the others pin what held.

use std::path::Path;

use crate::gc::{gc, session, setup, spawn_pushed};
use crate::support::Env;

/// Make a bare repository at `wt/<at>` holding one commit that exists nowhere
/// else (made in a scratch clone that is then deleted).
fn bare_with_only_commit(env: &Env, wt: &Path, at: &str) {
    let bare = wt.join(at);
    env.git(
        wt,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    )
    .ok();
    let scratch = env.root().join("scratch-clone");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            scratch.to_str().unwrap(),
        ],
    )
    .ok();
    std::fs::write(scratch.join("only.txt"), "only here\n").unwrap();
    env.git(&scratch, &["add", "only.txt"]).ok();
    env.git(
        &scratch,
        &["commit", "-q", "-m", "only in the bare repository"],
    )
    .ok();
    env.git(&scratch, &["push", "-q", "origin", "HEAD:main"])
        .ok();
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn gc_keeps_a_bare_repository_in_an_ignored_directory() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    std::fs::create_dir_all(wt.join(".cache")).unwrap();
    bare_with_only_commit(&env, &wt, ".cache/remote.git");
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "nested repository .cache/remote.git holds work: main not on any of its remotes"
    );
    assert!(wt.join(".cache/remote.git/HEAD").exists());
}

#[test]
fn rm_force_keeps_a_bare_repository_in_an_untracked_directory() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    std::fs::create_dir_all(wt.join("tmp")).unwrap();
    bare_with_only_commit(&env, &wt, "tmp/remote.git");
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "kept  a: nested repository tmp/remote.git holds work: main not on any of its remotes\n"
    );
    assert!(wt.join("tmp/remote.git/HEAD").exists());
}

#[test]
fn gc_keeps_a_cache_that_holds_a_repository_with_a_commit_of_its_own() {
    // `pip install -e git+...` clones into the virtualenv's `src/`.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir -p .venv/src && echo '*' > .venv/.gitignore && echo 'home = /usr' > .venv/pyvenv.cfg && \
         git init -q -b main .venv/src/pkg && cd .venv/src/pkg && \
         echo mine > f && git add f && git commit -q -m mine",
    );
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join(".venv/src/pkg/f").exists());
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(wt.join(".venv/src/pkg/f").exists());
}

#[test]
fn a_cachedir_tag_without_the_signature_is_no_cache() {
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir notes && echo '*' > notes/.gitignore && echo 'Signature: not it' > notes/CACHEDIR.TAG && \
         echo draft > notes/draft.txt",
    );
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join("notes/draft.txt").exists());
}

#[test]
fn a_pyvenv_cfg_below_the_top_makes_no_cache() {
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir -p notes/deep && echo '*' > notes/.gitignore && echo 'home = /usr' > notes/deep/pyvenv.cfg && \
         echo draft > notes/draft.txt",
    );
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join("notes/draft.txt").exists());
}

#[test]
fn disposable_patterns_never_match_the_worktree_itself() {
    let env = setup();
    for p in [".", "*", "**", "/", "./"] {
        env.git(&env.repo, &["config", "--add", "bullpen.gc.disposable", p])
            .ok();
    }
    // The top's own self-ignoring `.gitignore`: everything hidden is work.
    let wt = spawn_pushed(&env, "a", "echo '*' > .gitignore && echo draft > draft.txt");
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join("draft.txt").exists());
}
