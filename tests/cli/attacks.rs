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

/// A repository whose main worktree has an ignored `.env` that
/// `.worktreeinclude` copies into every new worktree.
fn with_included_env() -> Env {
    let env = setup();
    std::fs::write(env.repo.join(".gitignore"), ".cache/\n.env\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore .env"])
        .ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    std::fs::write(env.repo.join(".worktreeinclude"), ".env\n").unwrap();
    std::fs::write(env.repo.join(".env"), "KEY=1\n").unwrap();
    env
}

fn touch_like(env: &Env, reference: &Path, target: &Path) {
    let ok = env
        .cmd("touch", &env.root())
        .arg("-r")
        .arg(reference)
        .arg(target)
        .status()
        .unwrap()
        .success();
    assert!(ok, "touch -r");
}

#[test]
fn a_copy_edited_with_its_size_and_mtime_put_back_is_still_work() {
    // Same size, modification time restored (`touch -r`, `cp -p`, `rsync -t`
    // do it): only the content says it changed.
    let env = with_included_env();
    let wt = env.spawn_sh("a", "true");
    let copy = wt.join(".env");
    let stamp = env.root().join("stamp");
    std::fs::write(&stamp, "").unwrap();
    touch_like(&env, &copy, &stamp);
    std::fs::write(&copy, "KEY=9\n").unwrap();
    touch_like(&env, &stamp, &copy);
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "1 file copied in from the main worktree (.worktreeinclude) was edited since: '.env'"
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "KEY=9\n");
}

#[test]
fn a_copy_replaced_by_a_symlink_is_work_and_a_chmod_alone_is_not() {
    let env = with_included_env();
    let linked = env.spawn_sh("linked", "rm .env && ln -s /etc/hostname .env");
    let chmoded = env.spawn_sh("chmoded", "chmod 600 .env");
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "linked");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(linked.join(".env").symlink_metadata().is_ok());
    // The same content: as disposable as any ignored file.
    assert_eq!(session(&entries, "chmoded")["action"], "removed");
    assert!(!chmoded.exists());
}

// ----- gc killed (SIGKILL) at its worktree removal, then a second gc -----

/// Put a `git` first on PATH that, asked to remove a worktree, runs `snippet`
/// (sh; `$wt` the worktree, `$real` the real git) and then SIGKILLs the gc
/// that ran it, and itself.
fn kill_gc_at_worktree_remove(env: &mut Env, snippet: &str) {
    let dir = env.root().join("kill-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\nreal={}\nfor wt; do :; done\ncase \" $* \" in *\" worktree remove \"*) \
         {snippet}; kill -9 $PPID; kill -9 $$;; esac\nexec \"$real\" \"$@\"\n",
        crate::support::which_git()
    );
    std::fs::write(dir.join("git"), script).unwrap();
    crate::support::make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
}

fn branch_exists(env: &Env, id: &str) -> bool {
    crate::gc::branch_exists(env, id)
}

#[test]
fn gc_killed_right_after_git_removed_the_worktree_is_finished_by_the_next() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "a", crate::gc::COMMIT);
    kill_gc_at_worktree_remove(&mut env, "\"$real\" \"$@\"");
    let run = env.bullpen(&["gc"]);
    assert!(!run.status.success(), "gc was killed");
    assert!(!wt.exists());
    assert!(branch_exists(&env, "a"), "killed before the branch went");
    env.path_prefix.remove(0);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "a");
    assert_eq!(e["action"], "collected", "{e}");
    assert!(!branch_exists(&env, "a"));
    assert_eq!(env.record("a")["state"], "collected");
    assert!(!env.repo.join(".git/worktrees/a").exists());
    // The work is where the evidence says: on origin.
    env.git_out(&["rev-parse", "--verify", "origin/bullpen/a"]);
}

#[test]
fn gc_killed_half_way_through_git_is_finished_and_new_work_is_kept() {
    // git deletes the tree first (`.git` among the first), then the entry's
    // `gitdir`: killed in between, with the tracked files half gone.
    for (id, new_work) in [("done", false), ("more", true)] {
        let mut env = setup();
        let wt = spawn_pushed(&env, id, crate::gc::COMMIT);
        kill_gc_at_worktree_remove(&mut env, "rm -f \"$wt/.git\" \"$wt/README\"");
        let run = env.bullpen(&["gc"]);
        assert!(!run.status.success(), "gc was killed");
        env.path_prefix.remove(0);
        assert!(wt.join("work.txt").exists());
        if new_work {
            std::fs::write(wt.join("late.txt"), "written after the kill\n").unwrap();
        }
        let (run, entries) = gc(&env, &[]);
        run.ok();
        let e = session(&entries, id);
        if new_work {
            assert_eq!(e["action"], "kept", "{e}");
            assert_eq!(
                std::fs::read_to_string(wt.join("late.txt")).unwrap(),
                "written after the kill\n"
            );
            assert!(branch_exists(&env, id));
        } else {
            assert_eq!(e["action"], "removed", "{e}");
            assert!(!wt.exists());
            assert!(!branch_exists(&env, id));
            assert!(!env.repo.join(format!(".git/worktrees/{id}")).exists());
        }
    }
}

#[test]
fn gc_killed_after_the_entry_lost_its_gitdir_is_finished_by_the_next() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "a", crate::gc::COMMIT);
    let admin = env.repo.join(".git/worktrees/a");
    kill_gc_at_worktree_remove(
        &mut env,
        &format!("rm -rf \"$wt\" && rm -f {}/gitdir", admin.display()),
    );
    assert!(!env.bullpen(&["gc"]).status.success());
    env.path_prefix.remove(0);
    assert!(!wt.exists() && admin.is_dir());
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "a")["action"], "collected", "{entries:?}");
    assert!(!admin.exists(), "{entries:?}");
    assert!(!branch_exists(&env, "a"));
}

// ----- agent grace -----

fn agent_env() -> Env {
    let env = setup();
    env.git_out(&["config", "bullpen.agent.claude.command", "true"]);
    env
}

#[test]
fn a_negative_agent_grace_is_refused_not_read_as_a_cutoff_in_the_future() {
    // "-2.weeks" would put the cutoff two weeks ahead: every conversation,
    // one active a minute ago included, would be past it.
    let env = agent_env();
    env.bullpen(&["spawn", "--agent", "claude", "a"]).ok();
    let wt = env.worktree_of("a");
    env.git_out(&["config", "bullpen.gc.agentGrace", "-2.weeks"]);
    let run = env.bullpen(&["gc"]).fails();
    crate::support::assert_contains(
        &run.stderr,
        "fatal: bullpen.gc.agentGrace: \"-2.weeks\" is not an expiry",
    );
    assert!(wt.is_dir());
}

#[test]
fn a_record_last_active_in_the_future_or_unreadable_keeps_its_conversation() {
    let env = agent_env();
    env.bullpen(&["spawn", "--agent", "claude", "future"]).ok();
    env.bullpen(&["spawn", "--agent", "claude", "garbled"]).ok();
    for (id, at) in [("future", "2999-01-01T00:00:00Z"), ("garbled", "yesterday")] {
        env.edit_record(id, |r| {
            r["created_at"] = at.into();
            if r["process"].is_object() {
                r["process"]["started_at"] = at.into();
            }
            if r["exit"].is_object() {
                r["exit"]["at"] = at.into();
            }
        });
    }
    env.git_out(&["config", "bullpen.gc.agentGrace", "now"]);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    for id in ["future", "garbled"] {
        let e = session(&entries, id);
        assert_eq!(e["action"], "kept", "{e}");
        assert!(env.worktree_of(id).is_dir());
    }
}

// ----- rm --force against what points out of the worktree -----

/// A repository outside every worktree with a commit on no remote; its path.
fn elsewhere_with_a_commit(env: &Env) -> std::path::PathBuf {
    let there = env.root().join("elsewhere");
    env.git(
        &env.root(),
        &["init", "-q", "-b", "main", there.to_str().unwrap()],
    )
    .ok();
    std::fs::write(there.join("mine.txt"), "mine\n").unwrap();
    env.git(&there, &["add", "mine.txt"]).ok();
    env.git(&there, &["commit", "-q", "-m", "mine"]).ok();
    there
}

#[test]
fn rm_force_takes_a_symlink_to_a_repository_and_never_what_it_points_at() {
    let env = setup();
    let there = elsewhere_with_a_commit(&env);
    let wt = spawn_pushed(&env, "a", "true");
    std::os::unix::fs::symlink(&there, wt.join("link")).unwrap();
    std::os::unix::fs::symlink(&there, wt.join(".cache")).unwrap();
    env.bullpen(&["rm", "--force", "a"]).ok();
    assert!(!wt.exists());
    assert_eq!(
        std::fs::read_to_string(there.join("mine.txt")).unwrap(),
        "mine\n"
    );
    env.git(&there, &["rev-parse", "--verify", "main"]).ok();
}

#[test]
fn rm_force_keeps_a_checkout_whose_git_file_points_at_another_repository() {
    // `git --git-dir=elsewhere/.git --work-tree=dir checkout`, recorded as a
    // `.git` file: its branches live elsewhere, its checkout here.
    let env = setup();
    let there = elsewhere_with_a_commit(&env);
    let wt = spawn_pushed(&env, "a", "true");
    let dir = wt.join("borrowed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".git"),
        format!("gitdir: {}\n", there.join(".git").display()),
    )
    .unwrap();
    std::fs::write(dir.join("mine.txt"), "edited in the borrowed checkout\n").unwrap();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.txt")).unwrap(),
        "edited in the borrowed checkout\n"
    );
    env.git(&there, &["rev-parse", "--verify", "main"]).ok();
}

#[test]
fn gc_keeps_the_main_repositorys_own_worktree_in_an_ignored_directory_with_an_edit() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let mine = wt.join(".cache/mine");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "user",
            mine.to_str().unwrap(),
        ],
    )
    .ok();
    std::fs::write(mine.join("README"), "the user's edit\n").unwrap();
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(mine.join("README")).unwrap(),
        "the user's edit\n"
    );
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(mine.join("README").exists());
}

// ----- forged collected records -----

#[test]
fn a_forged_published_in_a_collected_record_cannot_write_to_the_terminal() {
    let env = setup();
    spawn_pushed(&env, "a", crate::gc::COMMIT);
    env.bullpen(&["gc"]).ok();
    assert_eq!(env.record("a")["state"], "collected");
    env.edit_record("a", |r| {
        r["published"] = serde_json::json!({
            "how": "squashed",
            "ref": "origin/main\u{1b}[2J",
            "description": "as 1234567\u{1b}]0;owned\u{7}",
        });
    });
    for args in [&["path", "a"][..], &["resume", "a", "--", "true"][..]] {
        let run = env.bullpen(args);
        assert!(
            !run.stderr.contains('\u{1b}') && !run.stdout.contains('\u{1b}'),
            "{args:?} wrote a control character:\n{:?}",
            run.stderr
        );
    }
}

#[test]
fn forged_words_anywhere_in_a_record_cannot_write_to_the_terminal() {
    let env = setup();
    spawn_pushed(&env, "a", crate::gc::COMMIT);
    spawn_pushed(&env, "b", crate::gc::COMMIT);
    env.bullpen(&["gc"]).ok();
    let esc = "\u{1b}]0;owned\u{7}";
    env.edit_record("a", |r| {
        r["last_tip"] = format!("{esc}deadbeef").into();
        r["worktree"] = format!("{}{esc}", r["worktree"].as_str().unwrap()).into();
        r["host"] = format!("h{esc}").into();
        r["base_ref"] = format!("refs/heads/main{esc}").into();
    });
    env.edit_record("b", |r| {
        r["last_tip"] = format!("{esc}deadbeef").into();
        r["command"] = serde_json::json!([format!("sh{esc}")]);
        r["agent"] = format!("claude{esc}").into();
    });
    let mut bad = Vec::new();
    for args in [
        &["path", "a"][..],
        &["resume", "a", "--", "true"][..],
        &["resume", "b"][..],
        &["resume", "b", "--", "true"][..],
        &["ls"][..],
        &["ls", "--all"][..],
        &["ls", "--all", "--status"][..],
        &["gc"][..],
        &["gc", "--dry-run"][..],
        &["rm", "a"][..],
        &["rm", "--force", "b"][..],
    ] {
        let run = env.bullpen(args);
        if run.stderr.contains('\u{1b}') || run.stdout.contains('\u{1b}') {
            bad.push(format!("{args:?}:\n{:?}\n{:?}", run.stdout, run.stderr));
        }
    }
    assert!(
        bad.is_empty(),
        "wrote a control character:\n{}",
        bad.join("\n")
    );
}

#[test]
fn reviving_a_collected_session_goes_nowhere_that_is_not_bullpens() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", crate::gc::COMMIT);
    env.bullpen(&["gc"]).ok();
    assert!(!wt.exists() && !branch_exists(&env, "a"));
    env.git(
        &env.repo,
        &["push", "-q", "origin", "--delete", "bullpen/a"],
    )
    .ok();
    env.git(&env.repo, &["fetch", "-q", "--prune", "origin"])
        .ok();
    let before = env.snapshot();

    // The recorded path moved out of the root by a hand edit.
    let elsewhere = env.root().join("elsewhere");
    let good = env.record("a");
    env.edit_record("a", |r| r["worktree"] = elsewhere.to_str().unwrap().into());
    assert_eq!(env.bullpen(&["resume", "a", "--", "true"]).code(), 125);
    assert!(!elsewhere.exists());

    // Its last tip forged: a blob, a tree, a commit this clone lacks.
    let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], "not a commit\n");
    let tree = env.git_out(&["rev-parse", "main^{tree}"]);
    for tip in [
        blob.as_str(),
        tree.as_str(),
        "1234567890123456789012345678901234567890",
    ] {
        env.edit_record("a", |r| {
            *r = good.clone();
            r["last_tip"] = tip.into();
            r["published"] = serde_json::Value::Null;
        });
        let run = env.bullpen(&["resume", "a", "--", "true"]);
        assert!(!run.status.success(), "{tip}: {}", run.stderr);
        assert!(!wt.exists(), "{tip}: {}", run.stderr);
        assert!(!branch_exists(&env, "a"), "{tip}");
    }

    // Its path taken by a symlink to the user's own directory.
    env.edit_record("a", |r| *r = good.clone());
    let mine = env.root().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::os::unix::fs::symlink(&mine, &wt).unwrap();
    let run = env.bullpen(&["resume", "a", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 0);
    std::fs::remove_file(&wt).unwrap();
    let after = env.snapshot();
    // Only the record's own chain moved (the hand edits).
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("refs/bullpen/sessions/a "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&after), strip(&before));

    // As recorded, it comes back where it was, from the tip gc deleted.
    env.bullpen(&["resume", "a", "--", "true"]).ok();
    assert!(wt.join("work.txt").is_file());
}

// ----- what lives in the session's own admin entry -----

#[test]
fn a_commit_on_a_detached_head_in_the_session_worktree_keeps_it() {
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "git checkout -q --detach && echo d > d.txt && git add d.txt && git commit -q -m detached",
    );
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join("d.txt").exists());
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(wt.join("d.txt").exists());
}

#[test]
fn a_per_worktree_ref_holding_a_commit_keeps_the_session() {
    // `refs/worktree/*` (and `refs/bisect/*`) live in the worktree's admin
    // entry: removing the worktree deletes them.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "echo k > k.txt && git add k.txt && git commit -q -m keep && \
         git update-ref refs/worktree/keep HEAD && git reset -q --hard HEAD~1",
    );
    env.git(&env.repo, &["push", "-q", "-f", "origin", "bullpen/a"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "the worktree's own refs refs/worktree/keep go with it (git worktree remove deletes them)"
    );
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    env.git(&wt, &["rev-parse", "--verify", "refs/worktree/keep"])
        .ok();
    // Once its owner moves the ref away (or deletes it), the session goes.
    env.git(&wt, &["branch", "kept", "refs/worktree/keep"]).ok();
    env.git(&wt, &["update-ref", "-d", "refs/worktree/keep"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    assert_eq!(
        session(&entries, "a")["action"],
        "removed",
        "{}",
        run.stderr
    );
    assert!(!wt.exists());
    env.git(&env.repo, &["rev-parse", "--verify", "kept"]).ok();
}

// ----- odd paths -----

#[test]
fn a_worktree_root_with_odd_characters_in_its_path_is_collected_and_kept_alike() {
    let env = setup();
    let odd = env
        .root()
        .join("odd root\n with 'quotes' \"and\" \\ \u{7f} é -x");
    std::fs::create_dir_all(&odd).unwrap();
    env.git(
        &env.repo,
        &["config", "bullpen.worktreeRoot", odd.to_str().unwrap()],
    )
    .ok();
    let done = spawn_pushed(&env, "done", crate::gc::COMMIT);
    let wip = env.spawn_sh("wip", crate::gc::COMMIT);
    assert!(done.starts_with(&odd) && wip.starts_with(&odd), "{done:?}");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(
        session(&entries, "done")["action"],
        "removed",
        "{entries:?}"
    );
    assert_eq!(session(&entries, "wip")["action"], "kept", "{entries:?}");
    assert!(!done.exists());
    assert!(wip.join("work.txt").exists());
    let run = env.bullpen(&["rm", "wip"]);
    assert_eq!(run.code(), 3, "{}", run.stdout);
    assert!(wip.join("work.txt").exists());
    env.bullpen(&["rm", "--force", "wip"]).ok();
    assert!(!wip.exists());
}

#[test]
fn a_worktree_root_that_is_not_utf8_fails_spawn_closed() {
    use std::os::unix::ffi::OsStrExt;
    let env = setup();
    let odd = env
        .root()
        .join(std::ffi::OsStr::from_bytes(b"root-\xff\xfe"));
    std::fs::create_dir_all(&odd).unwrap();
    let mut cmd = env.cmd("git", &env.repo);
    cmd.args(["config", "bullpen.worktreeRoot"])
        .arg(odd.as_os_str());
    assert!(cmd.status().unwrap().success());
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "a", "--", "true"]);
    if run.status.success() {
        // Then it must be where it says, and gc must find it as its own.
        let (run, entries) = gc(&env, &[]);
        run.ok();
        assert_eq!(session(&entries, "a")["action"], "removed", "{entries:?}");
    } else {
        assert_eq!(env.snapshot(), before, "{}", run.stderr);
        assert_eq!(std::fs::read_dir(&odd).unwrap().count(), 0);
    }
}

#[test]
fn a_locked_session_worktree_is_kept_by_rm_force_and_gc() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", crate::gc::COMMIT);
    env.git(
        &env.repo,
        &[
            "worktree",
            "lock",
            "--reason",
            "on a trip",
            wt.to_str().unwrap(),
        ],
    )
    .ok();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "a")["action"], "kept", "{entries:?}");
    assert!(wt.join("work.txt").exists());
    assert!(branch_exists(&env, "a"));
}

#[test]
fn status_config_that_hides_untracked_files_does_not_hide_them_from_gc() {
    let env = setup();
    for (k, v) in [
        ("status.showUntrackedFiles", "no"),
        ("status.showIgnored", "no"),
        ("core.untrackedCache", "true"),
        ("status.submoduleSummary", "false"),
        ("diff.ignoreSubmodules", "all"),
        ("status.ignoreSubmodules", "all"),
    ] {
        env.git(&env.repo, &["config", k, v]).ok();
    }
    // `status.showUntrackedFiles=no` turned gix's whole directory walk off:
    // no untracked file, no ignored entry, no repository nested in either.
    let wt = spawn_pushed(&env, "a", "mkdir -p d && echo draft > d/draft.txt");
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(e["reason"], "1 untracked file", "{e}");
    assert!(wt.join("d/draft.txt").exists());
    let wt = spawn_pushed(
        &env,
        "b",
        "mkdir -p vendor .cache && git init -q -b main vendor/tool && cd vendor/tool && \
         echo mine > f && git add f && git commit -q -m mine && cd ../.. && \
         git init -q -b main .cache/tool && cd .cache/tool && \
         echo mine > f && git add f && git commit -q -m mine",
    );
    let run = env.bullpen(&["rm", "--force", "b"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(wt.join("vendor/tool/f").exists() && wt.join(".cache/tool/f").exists());
}

#[test]
fn a_submodule_with_a_local_commit_is_kept_whatever_ignore_submodules_says() {
    let mut env = setup();
    let _ = &mut env;
    let up = crate::gc::lib_upstream(&env);
    let wt = spawn_pushed(
        &env,
        "sub",
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} lib && \
             git commit -q -m 'add lib' && git config -f .gitmodules submodule.lib.ignore all && \
             git commit -q -am 'ignore lib' && \
             (cd lib && echo local > local.txt && git add local.txt && git commit -q -m local)",
            up.display()
        ),
    );
    env.git(&env.repo, &["config", "diff.ignoreSubmodules", "all"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "sub");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join("lib/local.txt").exists());
}

#[test]
fn a_tracked_file_edited_with_its_size_and_mtime_put_back_is_still_work() {
    for config in [
        None,
        Some(("core.trustctime", "false")),
        Some(("core.checkStat", "minimal")),
    ] {
        edited_with_stat_put_back(config);
    }
}

fn edited_with_stat_put_back(config: Option<(&str, &str)>) {
    let env = setup();
    if let Some((k, v)) = config {
        env.git(&env.repo, &["config", k, v]).ok();
    }
    let wt = spawn_pushed(&env, "a", crate::gc::COMMIT);
    let file = wt.join("work.txt");
    // An old modification time, recorded in the index by a refresh: the entry is
    // then not racily clean (the index is newer), so only its stat is compared.
    let old = |env: &crate::support::Env| {
        env.cmd("touch", &wt)
            .args(["-d", "@1577836800", "work.txt"])
            .status()
            .unwrap()
    };
    assert!(old(&env).success());
    env.git(&wt, &["update-index", "-q", "--refresh"]).ok();
    let before = std::fs::read_to_string(&file).unwrap();
    let edited: String = before.chars().rev().collect();
    assert_eq!(edited.len(), before.len());
    std::fs::write(&file, &edited).unwrap();
    assert!(old(&env).success());
    if config.is_some() {
        // What makes it hard: git's own status, trusting that stat, says clean.
        let status = env.git(&wt, &["status", "--porcelain"]).ok().stdout;
        assert_eq!(status, "", "{config:?}: git itself sees the edit");
    }
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{config:?}: {e}\n{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
}

#[test]
fn rm_force_keeps_a_nested_checkout_whose_config_says_it_is_bare() {
    // Only what is on disk makes a repository bare: a checkout whose config
    // says `core.bare` cannot be looked at, so it stays.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir -p vendor && git init -q -b main vendor/tool && cd vendor/tool && \
         echo mine > f && git config core.bare true",
    );
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(wt.join("vendor/tool/f").exists());
}

#[test]
fn an_untracked_file_differing_from_a_tracked_one_only_in_case_is_work_under_ignorecase() {
    // A repository made on a case-insensitive file system (macOS) and
    // copied here keeps core.ignoreCase=true.
    let env = setup();
    env.git(&env.repo, &["config", "core.ignoreCase", "true"])
        .ok();
    let script = format!("{} && echo other > WORK.TXT", crate::gc::COMMIT);
    let wt = spawn_pushed(&env, "a", &script);
    // And where its admin entry is gone (compared with the tip by `git status`).
    let lost = spawn_pushed(&env, "lost", &script);
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/lost")).unwrap();
    let (run, entries) = gc(&env, &[]);
    for id in ["a", "lost"] {
        let e = session(&entries, id);
        assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    }
    assert!(wt.join("WORK.TXT").exists() && lost.join("WORK.TXT").exists());
}

#[test]
fn files_written_outside_a_sparse_checkouts_cone_are_work() {
    let env = setup();
    for d in ["in", "out"] {
        std::fs::create_dir_all(env.repo.join(d)).unwrap();
        std::fs::write(env.repo.join(d).join("f.txt"), format!("{d}\n")).unwrap();
    }
    env.git(&env.repo, &["add", "in", "out"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "two dirs"]).ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    for (id, sparse_index) in [("plain", "--no-sparse-index"), ("index", "--sparse-index")] {
        let wt = spawn_pushed(
            &env,
            id,
            &format!(
                "git sparse-checkout init --cone {sparse_index} && git sparse-checkout set in && \
                 test ! -e out/f.txt && mkdir -p out && echo new > out/new.txt && \
                 echo edited > out/f.txt"
            ),
        );
        let (run, entries) = gc(&env, &[]);
        let e = session(&entries, id);
        assert_eq!(e["action"], "kept", "{sparse_index}: {e}\n{}", run.stderr);
        assert!(wt.join("out/new.txt").exists());
        let run = env.bullpen(&["rm", id]);
        assert_eq!(run.code(), 3, "{}", run.stdout);
    }
}

#[test]
fn an_unreadable_record_of_what_was_copied_in_keeps_the_worktree() {
    let env = with_included_env();
    let wt = env.spawn_sh("a", "true");
    let local = env.repo.join(".git/bullpen/local/a/included.json");
    assert!(local.is_file());
    std::fs::write(&local, "{ not json").unwrap();
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert!(wt.join(".env").exists());
}

#[test]
fn a_repository_made_at_the_top_of_the_worktree_is_never_removed() {
    // The agent replaced the worktree's `.git` file with a repository of its
    // own, holding a commit that is nowhere else.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "rm .git && git init -q -b main && echo mine > mine.txt && git add mine.txt && \
         git commit -q -m mine",
    );
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(wt.join(".git").is_dir() && wt.join("mine.txt").exists());
}

// ----- stop and what a run left behind -----

#[test]
fn stop_never_ends_a_strangers_children_through_a_stale_leftovers_file() {
    use std::process::{Command, Stdio};
    let env = setup();
    env.spawn_sh("a", "true");
    // A stranger with a child, as a reused pid's new owner would be.
    let ready = env.root().join("stranger-ready");
    let mut stranger = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 300 & echo $! > {}; wait", ready.display()))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&ready).is_ok_and(|s| s.ends_with('\n')) {
        assert!(
            std::time::Instant::now() < deadline,
            "the stranger never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let child: u32 = std::fs::read_to_string(&ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _end = EndBoth(child);
    let real = crate::support::process_ref(stranger.id());
    let file = env.repo.join(".git/bullpen/local/a/leftovers.json");
    let mut outcomes = Vec::new();
    for forged in [
        // The pid with another start time (reused), or of another boot.
        serde_json::json!({"pid": stranger.id(), "start_time": real["start_time"].as_u64().unwrap() + 1, "boot_id": real["boot_id"]}),
        serde_json::json!({"pid": stranger.id(), "start_time": real["start_time"], "boot_id": "00000000-0000-0000-0000-000000000000"}),
        serde_json::json!({"pid": stranger.id()}),
        serde_json::json!({"pid": 1, "start_time": crate::support::process_ref(1)["start_time"], "boot_id": real["boot_id"]}),
    ] {
        let text =
            serde_json::json!({"schema": 1, "supervisor": forged, "since": "2026-01-01T00:00:00Z"});
        std::fs::write(&file, serde_json::to_vec(&text).unwrap()).unwrap();
        let run = env.bullpen(&["stop", "a"]);
        outcomes.push(format!(
            "{forged}: exit {:?}: {}",
            run.status.code(),
            run.stderr
        ));
        let alive = std::path::Path::new(&format!("/proc/{child}")).exists();
        assert!(alive, "stop ended the stranger's child: {outcomes:#?}");
    }
    let _ = stranger.kill();
    let _ = stranger.wait();
}

/// Ends the stranger's child however the test ends (the stranger itself is
/// then left with nothing to wait for).
struct EndBoth(u32);

impl Drop for EndBoth {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.0.to_string())
            .status();
    }
}

#[test]
fn gc_keeps_a_bare_repository_that_is_itself_ignored() {
    let env = setup();
    std::fs::write(env.repo.join(".git/info/exclude"), "*.git/\n").unwrap();
    let wt = spawn_pushed(&env, "a", "true");
    bare_with_only_commit(&env, &wt, "remote.git");
    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "a");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "nested repository remote.git holds work: main not on any of its remotes"
    );
    assert!(wt.join("remote.git/HEAD").exists());
}
