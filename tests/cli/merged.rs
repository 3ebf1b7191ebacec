//! gc's proof of content: sessions whose changes reached the remote's main
//! branch the way forges merge (squash, rebase, cherry-pick), with the session
//! branch deleted on the remote and pruned here. A second clone of the bare
//! remote plays the forge and merges with plain git.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::gc::{branch_exists, gc, session, setup, spawn_pushed};
use crate::support::{assert_contains, Env};

/// Two commits, each with a file of its own.
const TWO: &str = "echo one > one.txt && git add one.txt && git commit -q -m 'one' && \
                   echo two > two.txt && git add two.txt && git commit -q -m 'two'";

/// A second clone of `origin` that merges the way a forge does.
pub(crate) struct Forge {
    dir: PathBuf,
}

impl Forge {
    pub(crate) fn new(env: &Env) -> Forge {
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
    pub(crate) fn git(&self, env: &Env, args: &[&str]) -> String {
        env.git(&self.dir, args).ok().stdout.trim().to_owned()
    }

    /// Up to date with `origin/main`, on `main`.
    pub(crate) fn sync(&self, env: &Env) {
        self.git(env, &["fetch", "-q", "origin"]);
        self.git(env, &["checkout", "-q", "main"]);
        self.git(env, &["reset", "-q", "--hard", "origin/main"]);
    }

    /// Squash-merge the session branches into main, push, delete them on the
    /// remote; the squash commit.
    pub(crate) fn squash(&self, env: &Env, ids: &[&str]) -> String {
        self.sync(env);
        for id in ids {
            self.git(
                env,
                &["merge", "-q", "--squash", &format!("origin/bullpen/{id}")],
            );
        }
        self.git(
            env,
            &[
                "commit",
                "-q",
                "-m",
                &format!("Squashed {}", ids.join(", ")),
            ],
        );
        self.push_and_delete(env, ids)
    }

    /// Push main, delete the session branches on the remote; main's tip.
    pub(crate) fn push_and_delete(&self, env: &Env, ids: &[&str]) -> String {
        self.git(env, &["push", "-q", "origin", "main"]);
        for id in ids {
            self.git(
                env,
                &["push", "-q", "origin", "--delete", &format!("bullpen/{id}")],
            );
        }
        self.git(env, &["rev-parse", "HEAD"])
    }

    /// Cherry-pick these commits (of a session branch) onto main, one each,
    /// after someone else's commit (else, with the tests' fixed dates, a pick
    /// onto the session's own base would be the very same commit).
    pub(crate) fn pick(&self, env: &Env, commits: &[&str]) {
        self.commit_file(env, "other.txt", "someone else's\n");
        for c in commits {
            self.git(env, &["cherry-pick", c]);
        }
    }

    /// Commit a file on main (someone else's work) and push.
    fn commit_file(&self, env: &Env, name: &str, content: &str) {
        self.sync(env);
        std::fs::write(self.dir.join(name), content).unwrap();
        self.git(env, &["add", name]);
        self.git(env, &["commit", "-q", "-m", &format!("edit {name}")]);
        self.git(env, &["push", "-q", "origin", "main"]);
    }
}

/// `git fetch --prune`: the remote's deleted branches go here too.
pub(crate) fn fetch(env: &Env) {
    env.git(&env.repo, &["fetch", "-q", "--prune", "origin"])
        .ok();
}

fn assert_no_remote_branch(env: &Env, id: &str) {
    let refs = env.git_out(&["for-each-ref", "refs/remotes/"]);
    assert!(!refs.contains(&format!("bullpen/{id}")), "{refs}");
}

fn short(env: &Env, commit: &str) -> String {
    env.git_out(&["rev-parse", "--short", commit])
}

/// The note bullpen keeps on `commit`.
fn note(env: &Env, commit: &str) -> String {
    env.git_out(&["notes", "--ref=bullpen", "show", commit])
}

fn removed(e: &Value) {
    assert_eq!(e["action"], "removed", "{e}");
}

fn gone(env: &Env, id: &str, wt: &Path) {
    assert!(!wt.exists(), "{} is still there", wt.display());
    assert!(!branch_exists(env, id));
    assert_eq!(env.record(id)["state"], "collected");
}

#[test]
fn a_squash_merged_two_commit_session_is_removed_with_its_evidence_named_and_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "sq", TWO);
    let tip = env.git_out(&["rev-parse", "bullpen/sq"]);
    let forge = Forge::new(&env);
    let squash = forge.squash(&env, &["sq"]);
    fetch(&env);
    assert_no_remote_branch(&env, "sq");

    let (dry, planned) = gc(&env, &["--dry-run"]);
    dry.ok();
    let e = session(&planned, "sq");
    let words = format!("squash-merged into origin/main as {}", short(&env, &squash));
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(
        e["reason"],
        format!("published ({words}), clean and idle"),
        "{e}"
    );
    assert_eq!(e["published"]["how"], "squash-merged", "{e}");
    assert_eq!(e["published"]["ref"], "origin/main", "{e}");
    assert_eq!(e["published"]["commit"], squash.as_str(), "{e}");
    assert_eq!(e["published"]["since"], "unchanged", "{e}");
    assert_eq!(e["published"]["description"], words.as_str(), "{e}");
    assert!(wt.exists(), "a dry run removes nothing");
    let human = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(
        &human.stdout,
        &format!("would remove  sq: published ({words})"),
    );
    assert_contains(
        &human.stderr,
        "looking for the changes of 1 unpublished session on origin/main (origin/HEAD is not set)",
    );

    let (run, entries) = gc(&env, &[]);
    run.ok();
    removed(session(&entries, "sq"));
    gone(&env, "sq", &wt);
    // The evidence stays: in the note of the tip, and in the record's last commit.
    let full = format!("squash-merged into origin/main as {squash}");
    assert_contains(&note(&env, &tip), &format!("bullpen-published: {full}"));
    let log = env.git_out(&["log", "--notes=bullpen", "-1", &tip]);
    assert_contains(&log, &format!("bullpen-published: {full}"));
    let subject = env.git_out(&["log", "-1", "--format=%s", "refs/bullpen/sessions/sq"]);
    assert_eq!(subject, format!("bullpen: sq collected: {full}"));
    let record = env.record("sq");
    assert_eq!(record["published"]["how"], "squash-merged", "{record}");
    assert_eq!(record["published"]["commit"], squash.as_str(), "{record}");
    assert_eq!(record["published"]["tip"], tip.as_str(), "{record}");
}

#[test]
fn a_rebase_merged_session_is_removed() {
    let env = setup();
    let wt = spawn_pushed(&env, "rb", TWO);
    let first = env.git_out(&["rev-parse", "bullpen/rb~1"]);
    let second = env.git_out(&["rev-parse", "bullpen/rb"]);
    let forge = Forge::new(&env);
    forge.pick(&env, &[&first, &second]);
    let last = forge.push_and_delete(&env, &["rb"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "rb");
    removed(e);
    assert_eq!(e["published"]["how"], "rebased", "{e}");
    assert_eq!(e["published"]["commit"], last.as_str(), "{e}");
    assert_eq!(
        e["published"]["description"],
        format!(
            "rebased onto origin/main (2 commits, the last {})",
            short(&env, &last)
        ),
        "{e}"
    );
    gone(&env, "rb", &wt);
}

#[test]
fn a_session_only_partly_merged_is_kept_and_says_how_much() {
    let env = setup();
    let wt = spawn_pushed(&env, "part", TWO);
    let first = env.git_out(&["rev-parse", "bullpen/part~1"]);
    let forge = Forge::new(&env);
    forge.pick(&env, &[&first]);
    forge.push_and_delete(&env, &["part"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "part");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"], "2 commits not on any remote (1 of 2 commits' changes are on origin/main)",
        "{e}"
    );
    assert_eq!(e["published"], Value::Null, "{e}");
    assert!(wt.exists() && branch_exists(&env, "part"));
}

#[test]
fn a_squash_followed_by_a_new_local_commit_is_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "more", TWO);
    let forge = Forge::new(&env);
    forge.squash(&env, &["more"]);
    fetch(&env);
    env.git(&wt, &["commit", "-q", "--allow-empty", "-m", "nothing yet"])
        .ok();
    std::fs::write(wt.join("three.txt"), "3\n").unwrap();
    env.git(&wt, &["add", "three.txt"]).ok();
    env.git(&wt, &["commit", "-q", "-m", "three"]).ok();

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "more");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"], "4 commits not on any remote (2 of 3 commits' changes are on origin/main)",
        "{e}"
    );
    assert!(wt.exists() && branch_exists(&env, "more"));
}

#[test]
fn two_sessions_squashed_in_one_commit_are_both_removed() {
    let env = setup();
    let a = spawn_pushed(
        &env,
        "sa",
        "echo a > a.txt && git add a.txt && git commit -q -m a",
    );
    let b = spawn_pushed(
        &env,
        "sb",
        "echo b > b.txt && git add b.txt && git commit -q -m b",
    );
    let forge = Forge::new(&env);
    let squash = forge.squash(&env, &["sa", "sb"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    for (id, wt) in [("sa", &a), ("sb", &b)] {
        let e = session(&entries, id);
        removed(e);
        assert_eq!(e["published"]["how"], "squash-merged", "{e}");
        assert_eq!(e["published"]["commit"], squash.as_str(), "{e}");
        gone(&env, id, wt);
    }
}

#[test]
fn a_merge_reverted_on_main_was_published_so_the_session_goes() {
    let env = setup();
    // Squash-merged, then reverted: its content is in the remote's history.
    let wt = spawn_pushed(&env, "rev", TWO);
    let forge = Forge::new(&env);
    let squash = forge.squash(&env, &["rev"]);
    forge.git(&env, &["revert", "--no-edit", &squash]);
    forge.git(&env, &["push", "-q", "origin", "main"]);
    // Merged with a merge commit, then reverted (the branch tip stays reachable).
    let wt2 = spawn_pushed(
        &env,
        "mrev",
        "echo m > m.txt && git add m.txt && git commit -q -m m",
    );
    forge.sync(&env);
    forge.git(
        &env,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge mrev",
            "origin/bullpen/mrev",
        ],
    );
    forge.git(&env, &["revert", "--no-edit", "-m", "1", "HEAD"]);
    forge.push_and_delete(&env, &["mrev"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "rev");
    removed(e);
    assert_eq!(e["published"]["how"], "squash-merged", "{e}");
    assert_eq!(e["published"]["since"], "reverted", "{e}");
    assert_eq!(
        e["published"]["description"],
        format!(
            "squash-merged into origin/main as {} (reverted there since)",
            short(&env, &squash)
        ),
        "{e}"
    );
    gone(&env, "rev", &wt);
    let e = session(&entries, "mrev");
    removed(e);
    assert_eq!(
        e["reason"], "published (reachable from origin/main), clean and idle",
        "{e}"
    );
    gone(&env, "mrev", &wt2);
}

#[test]
fn a_session_whose_changes_conflict_with_main_is_kept() {
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "clash",
        "echo mine > README && git commit -q -am mine",
    );
    let forge = Forge::new(&env);
    forge.commit_file(&env, "README", "theirs\n");
    forge.push_and_delete(&env, &["clash"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "clash");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"], "1 commit not on any remote (its changes conflict with origin/main)",
        "{e}"
    );
    assert!(wt.exists() && branch_exists(&env, "clash"));
}

#[test]
fn a_squash_merged_session_whose_file_main_also_changed_is_removed() {
    let env = setup();
    std::fs::write(env.repo.join("list.txt"), "a\nb\nc\nd\ne\nf\ng\n").unwrap();
    env.git(&env.repo, &["add", "list.txt"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "list"]).ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    // The session changes the top of the file; main changes its bottom before
    // the squash, so the squash commit holds neither side's version alone.
    let wt = spawn_pushed(
        &env,
        "both",
        "sed -i 's/^a$/A/' list.txt && git commit -q -am top",
    );
    let forge = Forge::new(&env);
    forge.commit_file(&env, "list.txt", "a\nb\nc\nd\ne\nf\nG\n");
    let squash = forge.squash(&env, &["both"]);
    assert_eq!(
        std::fs::read_to_string(forge.dir.join("list.txt")).unwrap(),
        "A\nb\nc\nd\ne\nf\nG\n"
    );
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "both");
    removed(e);
    assert_eq!(e["published"]["commit"], squash.as_str(), "{e}");
    gone(&env, "both", &wt);
    // git's merge wrote nothing into the repository.
    let tmp = env.repo.join(".git/bullpen/tmp");
    assert!(!tmp.exists(), "{} left behind", tmp.display());
}

#[test]
fn integration_refs_come_from_origin_head_and_bullpen_gc_integration_ref() {
    let env = setup();
    spawn_pushed(
        &env,
        "rel",
        "echo r > r.txt && git add r.txt && git commit -q -m r",
    );
    let forge = Forge::new(&env);
    forge.sync(&env);
    forge.git(&env, &["checkout", "-q", "-b", "release/1.0"]);
    forge.git(&env, &["merge", "-q", "--squash", "origin/bullpen/rel"]);
    forge.git(&env, &["commit", "-q", "-m", "rel on the release branch"]);
    forge.git(&env, &["push", "-q", "origin", "release/1.0"]);
    forge.push_and_delete(&env, &["rel"]);
    fetch(&env);
    env.git(&env.repo, &["remote", "set-head", "origin", "main"])
        .ok();

    let (_, entries) = gc(&env, &["--dry-run"]);
    assert_eq!(session(&entries, "rel")["action"], "kept");
    let dry = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(&dry.stderr, "on origin/main (origin/HEAD)");

    env.git(
        &env.repo,
        &["config", "bullpen.gc.integrationRef", "origin/release/*"],
    )
    .ok();
    let (_, entries) = gc(&env, &["--dry-run"]);
    let e = session(&entries, "rel");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(e["published"]["ref"], "origin/release/1.0", "{e}");

    // An empty value drops what comes before it, the defaults included.
    env.git(
        &env.repo,
        &["config", "--add", "bullpen.gc.integrationRef", ""],
    )
    .ok();
    let dry = env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(
        !dry.stderr.contains("looking for the changes"),
        "{}",
        dry.stderr
    );
    env.git(
        &env.repo,
        &["config", "--add", "bullpen.gc.integrationRef", "nosuch/*"],
    )
    .ok();
    let dry = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(
        &dry.stderr,
        "warning: bullpen.gc.integrationRef \"nosuch/*\" matches no remote-tracking ref",
    );
}

#[test]
fn a_session_whose_commits_change_no_file_is_not_proven_by_content() {
    let env = setup();
    let wt = env.spawn_sh("empty", "git commit -q --allow-empty -m nothing");
    let (_, entries) = gc(&env, &[]);
    let e = session(&entries, "empty");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"], "1 commit not on any remote (they change no file)",
        "{e}"
    );
    assert!(wt.exists());
}

#[test]
fn a_session_that_merges_cleanly_but_is_not_on_main_is_kept() {
    let env = setup();
    std::fs::write(env.repo.join("list.txt"), "a\nb\nc\nd\ne\nf\ng\n").unwrap();
    env.git(&env.repo, &["add", "list.txt"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "list"]).ok();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    let wt = spawn_pushed(
        &env,
        "top",
        "sed -i 's/^a$/A/' list.txt && git commit -q -am top",
    );
    // main changes the same file elsewhere; the session's change is not there.
    let forge = Forge::new(&env);
    forge.commit_file(&env, "list.txt", "a\nb\nc\nd\ne\nf\nG\n");
    forge.push_and_delete(&env, &["top"]);
    fetch(&env);

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "top");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], "1 commit not on any remote", "{e}");
    assert!(wt.exists() && branch_exists(&env, "top"));
}
