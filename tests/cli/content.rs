//! gc's proof of content commit by commit (issue 22): every commit no remote
//! ref reaches needs its own change on the integration ref, at a commit newer
//! than the session's fork from it. A second clone of the bare remote plays
//! the forge. `oracle` checks the proof against a brute-force reference over
//! random histories.

mod oracle;

use std::path::PathBuf;

use serde_json::Value;

use crate::gc::{branch_exists, gc, session, setup, spawn_pushed};
use crate::support::Env;

/// A clone of `origin` that merges the way a forge does.
struct Forge {
    dir: PathBuf,
}

impl Forge {
    fn new(env: &Env) -> Forge {
        let dir = env.root().join("forge");
        let origin = env.root().join("origin.git");
        env.git(
            &env.root(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        )
        .ok();
        Forge { dir }
    }

    #[track_caller]
    fn git(&self, env: &Env, args: &[&str]) -> String {
        env.git(&self.dir, args).ok().stdout.trim().to_owned()
    }

    fn sync(&self, env: &Env) {
        self.git(env, &["fetch", "-q", "origin"]);
        self.git(env, &["checkout", "-q", "main"]);
        self.git(env, &["reset", "-q", "--hard", "origin/main"]);
    }

    /// Squash-merge `origin/<branch>` into main, push main, delete the branch there.
    fn squash(&self, env: &Env, branch: &str) -> String {
        self.sync(env);
        self.git(
            env,
            &["merge", "-q", "--squash", &format!("origin/{branch}")],
        );
        self.git(env, &["commit", "-q", "-m", &format!("Squashed {branch}")]);
        self.push_and_delete(env, branch)
    }

    fn push_and_delete(&self, env: &Env, branch: &str) -> String {
        self.git(env, &["push", "-q", "origin", "main"]);
        self.git(env, &["push", "-q", "origin", "--delete", branch]);
        self.git(env, &["rev-parse", "HEAD"])
    }
}

/// `git fetch --prune`: the branches the forge deleted go here too.
fn fetch(env: &Env) {
    env.git(&env.repo, &["fetch", "-q", "--prune", "origin"])
        .ok();
}

#[track_caller]
fn kept(env: &Env, id: &str, wt: &std::path::Path, reason: &str) {
    let (_, entries) = gc(env, &["--dry-run"]);
    let e = session(&entries, id);
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], reason, "{e}");
    assert_eq!(e["published"], Value::Null, "{e}");
    // A real gc, and a plain rm, keep it too.
    let (run, entries) = gc(env, &[]);
    run.ok();
    assert_eq!(session(&entries, id)["action"], "kept");
    let rm = env.bullpen(&["rm", id]);
    assert_eq!(rm.code(), 3, "{}\n{}", rm.stdout, rm.stderr);
    assert!(wt.exists(), "{} went", wt.display());
    assert!(branch_exists(env, id));
}

/// The session's first commit changes README and adds a debug file; it is
/// pushed and squash-merged. A second commit, never pushed, undoes part of it.
fn squashed_then(env: &Env, id: &str, undo: &str) -> (PathBuf, Forge) {
    let wt = spawn_pushed(
        env,
        id,
        "echo changed > README && echo debug > debug.txt && git add README debug.txt && \
         git commit -q -m 'change README, debug'",
    );
    let forge = Forge::new(env);
    forge.squash(env, &format!("bullpen/{id}"));
    fetch(env);
    let run = env.cmd("sh", &wt).args(["-c", undo]).output().unwrap();
    assert!(run.status.success(), "{run:?}");
    (wt, forge)
}

#[test]
fn an_unpushed_commit_removing_a_file_of_a_squashed_one_keeps_the_session() {
    let env = setup();
    let (wt, _) = squashed_then(
        &env,
        "undo",
        "git rm -q debug.txt && git commit -q -m 'drop debug'",
    );
    kept(
        &env,
        "undo",
        &wt,
        "2 commits not on any remote (1 of 2 commits' changes are on origin/main)",
    );
}

#[test]
fn an_unpushed_commit_putting_back_what_a_squashed_one_changed_keeps_the_session() {
    let env = setup();
    let (wt, _) = squashed_then(
        &env,
        "back",
        "echo hello > README && git commit -q -am 'README back'",
    );
    kept(
        &env,
        "back",
        &wt,
        "2 commits not on any remote (1 of 2 commits' changes are on origin/main)",
    );
}

#[test]
fn a_commit_whose_change_the_squash_left_out_keeps_the_session() {
    // Added and removed again before the squash: the squash holds the net
    // change, not the file the first commit added (its removal is there: the
    // file is not).
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "net",
        "echo debug > debug.txt && git add debug.txt && git commit -q -m debug && \
         git rm -q debug.txt && git commit -q -m 'no debug' && \
         echo r > r.txt && git add r.txt && git commit -q -m r",
    );
    let forge = Forge::new(&env);
    forge.squash(&env, "bullpen/net");
    fetch(&env);
    kept(
        &env,
        "net",
        &wt,
        "3 commits not on any remote (2 of 3 commits' changes are on origin/main)",
    );
}

#[test]
fn a_main_commit_older_than_the_sessions_base_is_no_landing() {
    let env = setup();
    // A feature branch on the remote; the session starts from its commit.
    let forge = Forge::new(&env);
    forge.sync(&env);
    forge.git(&env, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(forge.dir.join("feat.txt"), "feat\n").unwrap();
    std::fs::write(forge.dir.join("feat2.txt"), "feat2\n").unwrap();
    forge.git(&env, &["add", "feat.txt", "feat2.txt"]);
    forge.git(&env, &["commit", "-q", "-m", "feature"]);
    forge.git(&env, &["push", "-q", "origin", "feature"]);
    fetch(&env);
    env.bullpen(&[
        "spawn",
        "part",
        "--base",
        "origin/feature",
        "--",
        "sh",
        "-c",
        "git rm -q feat2.txt && git commit -q -m 'not feat2'",
    ])
    .ok();
    let wt = env.worktree_of("part");
    // main takes the feature with a merge commit; its branch goes.
    forge.sync(&env);
    forge.git(
        &env,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge feature",
            "origin/feature",
        ],
    );
    forge.push_and_delete(&env, "feature");
    fetch(&env);
    kept(&env, "part", &wt, "1 commit not on any remote");
}

#[test]
fn a_squashed_session_with_a_later_commit_that_main_also_made_is_removed_and_named() {
    // The undo done on main too: each commit has its own landing.
    let env = setup();
    let (wt, forge) = squashed_then(
        &env,
        "both",
        "git rm -q debug.txt && git commit -q -m 'drop debug'",
    );
    forge.sync(&env);
    forge.git(&env, &["rm", "-q", "debug.txt"]);
    forge.git(&env, &["commit", "-q", "-m", "no debug on main"]);
    forge.git(&env, &["push", "-q", "origin", "main"]);
    let last = forge.git(&env, &["rev-parse", "HEAD"]);
    let squash = forge.git(&env, &["rev-parse", "HEAD~1"]);
    fetch(&env);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "both");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(e["published"]["how"], "rebased", "{e}");
    assert_eq!(e["published"]["commit"], last.as_str(), "{e}");
    let landings = e["published"]["landings"].as_array().expect("landings");
    let on: Vec<&str> = landings.iter().map(|l| l["on"].as_str().unwrap()).collect();
    assert_eq!(on, [last.as_str(), squash.as_str()], "{e}");
    assert!(!wt.exists());
}

#[test]
fn the_commits_it_landed_on_name_the_session_and_a_collected_one_says_where_its_work_went() {
    let env = setup();
    let two = "echo one > one.txt && git add one.txt && git commit -q -m one && \
               echo two > two.txt && git add two.txt && git commit -q -m two";
    spawn_pushed(&env, "sq", two);
    let sq = env.git_out(&["rev-parse", "bullpen/sq"]);
    let sq1 = env.git_out(&["rev-parse", "bullpen/sq~1"]);
    spawn_pushed(
        &env,
        "rb",
        "echo a > a.txt && git add a.txt && git commit -q -m a && \
         echo b > b.txt && git add b.txt && git commit -q -m b",
    );
    let rb = env.git_out(&["rev-parse", "bullpen/rb"]);
    let rb1 = env.git_out(&["rev-parse", "bullpen/rb~1"]);
    let forge = Forge::new(&env);
    let squash = forge.squash(&env, "bullpen/sq");
    // rb's commits picked one by one (a rebase merge).
    for c in [&rb1, &rb] {
        forge.git(&env, &["cherry-pick", c]);
    }
    let pick_b = forge.push_and_delete(&env, "bullpen/rb");
    let pick_a = forge.git(&env, &["rev-parse", "HEAD~1"]);
    fetch(&env);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "sq")["action"], "removed");
    assert_eq!(session(&entries, "rb")["action"], "removed");

    let note = |c: &str| env.git_out(&["notes", "--ref=bullpen", "show", c]);
    assert_eq!(
        note(&squash),
        format!("bullpen-session: sq\nbullpen-squashed: {sq} {sq1}")
    );
    assert_eq!(
        note(&pick_b),
        format!("bullpen-session: rb\nbullpen-rebased: {rb}")
    );
    assert_eq!(
        note(&pick_a),
        format!("bullpen-session: rb\nbullpen-rebased: {rb1}")
    );
    let log = env.git_out(&["log", "--notes=bullpen", "--format=%N", "origin/main"]);
    assert!(
        log.contains("bullpen-session: sq") && log.contains("bullpen-session: rb"),
        "{log}"
    );
    let record = env.record("sq");
    assert_eq!(
        record["published"]["landings"],
        serde_json::json!([{"commit": sq, "on": squash}, {"commit": sq1, "on": squash}]),
        "{record}"
    );

    // resume and path of a collected session say where its work went.
    let went = format!(
        "hint: its work is on origin/main: squash-merged into origin/main as {squash} \
         (`git log --notes=bullpen origin/main` names the session)"
    );
    let path = env.bullpen(&["path", "sq"]).fails();
    crate::support::assert_contains(&path.stderr, &went);
    // Nothing here shows bullpen created it (else resume recreates it: see
    // leftovers::a_collected_session_is_resumed_in_its_recreated_worktree), while
    // its command stays recorded here (as `command.json`, the form it has after
    // `resume --save` or from an older bullpen).
    let local = env.repo.join(".git/bullpen/local/sq");
    let created: serde_json::Value =
        serde_json::from_slice(&std::fs::read(local.join("created.json")).expect("proof"))
            .expect("created.json");
    std::fs::write(local.join("command.json"), created["command"].to_string()).expect("command");
    std::fs::remove_file(local.join("created.json")).expect("proof");
    let resume = env.bullpen(&["resume", "sq"]).fails();
    crate::support::assert_contains(&resume.stderr, &went);
}
