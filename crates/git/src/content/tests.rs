//! The proof of content against real repositories: histories written with git
//! plumbing in a temp dir (every commit at one fixed time unless a test says
//! otherwise, so no walk can lean on the clock).

use std::path::PathBuf;
use std::process::Command;

use super::{Content, ContentQuery, IntegrationRef};
use crate::model::{Evidence, Landing, Oid, Since, Unmerged};
use crate::Repo;

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::Builder::new()
            .prefix("bullpen-content-")
            .tempdir()
            .expect("temp dir");
        let dir = tmp.path().canonicalize().expect("canonical").join("repo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let f = Fixture { _tmp: tmp, dir };
        f.git(&["init", "-q", "-b", "main"]);
        f
    }

    fn git_at(&self, date: &str, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(&self.dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn git(&self, args: &[&str]) -> String {
        self.git_at("2020-01-01T00:00:00Z", args)
    }

    /// A commit with `parents` whose tree is `files` (path, content), at `date`.
    fn commit_at(&self, date: &str, parents: &[Oid], files: &[(&str, &str)], msg: &str) -> Oid {
        let index = self.dir.join(".git/test-index");
        let _ = std::fs::remove_file(&index);
        for (path, content) in files {
            let blob = self.hash(content);
            let out = Command::new("git")
                .current_dir(&self.dir)
                .env("GIT_INDEX_FILE", &index)
                .args(["update-index", "--add", "--cacheinfo"])
                .arg(format!("100644,{blob},{path}"))
                .output()
                .expect("update-index");
            assert!(out.status.success(), "{out:?}");
        }
        let out = Command::new("git")
            .current_dir(&self.dir)
            .env("GIT_INDEX_FILE", &index)
            .args(["write-tree"])
            .output()
            .expect("write-tree");
        assert!(out.status.success(), "{out:?}");
        let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let mut args = vec!["commit-tree".to_owned(), tree, "-m".into(), msg.into()];
        for p in parents {
            args.push("-p".into());
            args.push(p.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.git_at(date, &args).parse().expect("oid")
    }

    fn commit(&self, parents: &[Oid], files: &[(&str, &str)], msg: &str) -> Oid {
        self.commit_at("2020-01-01T00:00:00Z", parents, files, msg)
    }

    fn hash(&self, content: &str) -> String {
        let path = self.dir.join(".git/test-blob");
        std::fs::write(&path, content).expect("write blob");
        self.git(&["hash-object", "-w", path.to_str().expect("utf-8")])
    }

    fn repo(&self) -> Repo {
        Repo::discover(&self.dir).expect("discover")
    }
}

fn main_ref(tip: Oid) -> IntegrationRef {
    IntegrationRef {
        name: "origin/main".into(),
        refname: "refs/remotes/origin/main".into(),
        tip,
        chosen: "test".into(),
    }
}

/// The proof for one session: `commits` newest first.
fn prove(f: &Fixture, tip: Oid, commits: &[Oid], main: Oid) -> Content {
    let q = ContentQuery {
        tip,
        commits: commits.to_vec(),
    };
    let mut answers = f.repo().find_content(&[q], &[main_ref(main)]);
    answers.pop().expect("one answer").expect("no error")
}

#[test]
fn each_commit_needs_its_own_landing_not_the_net_change() {
    let f = Fixture::new();
    let base = f.commit(&[], &[("README", "hello\n")], "base");
    // c1 changes README and adds a debug file; squashed onto main.
    let c1 = f.commit(
        &[base],
        &[("README", "changed\n"), ("debug", "debug\n")],
        "c1",
    );
    let squash = f.commit(
        &[base],
        &[("README", "changed\n"), ("debug", "debug\n")],
        "squash c1",
    );
    // c2 removes the debug file again: c1 and c2 together change only README,
    // which the squash holds; c2 itself is on no ref.
    let c2 = f.commit(&[c1], &[("README", "changed\n")], "c2");
    assert_eq!(
        prove(&f, c2, &[c2, c1], squash),
        Content::Unmerged(Some(Unmerged::Partly {
            into: "origin/main".into(),
            merged: 1,
            of: 2
        }))
    );
    // main removes it too: now each has a landing of its own.
    let later = f.commit(&[squash], &[("README", "changed\n")], "no debug");
    let Content::Published(e) = prove(&f, c2, &[c2, c1], later) else {
        panic!("not published");
    };
    assert_eq!(
        e.landings(),
        [
            Landing {
                commit: c2,
                on: later
            },
            Landing {
                commit: c1,
                on: squash
            }
        ]
    );
    assert!(
        matches!(e, Evidence::Rebased { commits: 2, last, since: Since::Unchanged, .. } if last == later)
    );
}

#[test]
fn the_fork_point_is_never_a_landing() {
    let f = Fixture::new();
    let base = f.commit(&[], &[("README", "hello\n")], "base");
    let c1 = f.commit(&[base], &[("README", "hello\n"), ("q", "q\n")], "add q");
    let c2 = f.commit(&[c1], &[("README", "hello\n")], "rm q");
    // main's only new commit holds neither; c2's change (no q) holds at the
    // fork, which proves nothing.
    let other = f.commit(&[base], &[("README", "hello\n"), ("o", "o\n")], "other");
    assert_eq!(
        prove(&f, c2, &[c2, c1], other),
        Content::Unmerged(Some(Unmerged::Partly {
            into: "origin/main".into(),
            merged: 1,
            of: 2
        }))
    );
    // main at the fork: nothing is newer, nothing landed.
    assert_eq!(prove(&f, c2, &[c2, c1], base), Content::Unmerged(None));

    // c2 puts README back as it was at the fork; main's only commit since
    // changed it otherwise: only the fork holds c2's change.
    let c1 = f.commit(&[base], &[("README", "changed\n")], "change");
    let c2 = f.commit(&[c1], &[("README", "hello\n")], "put back");
    let theirs = f.commit(&[base], &[("README", "theirs\n")], "theirs");
    assert_eq!(prove(&f, c2, &[c2, c1], theirs), Content::Unmerged(None));
}

#[test]
fn a_main_commit_older_than_the_fork_is_no_landing_whatever_the_clock() {
    let f = Fixture::new();
    let root = f.commit(&[], &[("README", "hello\n")], "root");
    let m1 = f.commit(&[root], &[("README", "hello\n"), ("m", "m\n")], "m1");
    // A feature off root, merged into main with a merge commit; the session
    // starts on the feature and removes one of its files.
    let feature = f.commit(
        &[root],
        &[("README", "hello\n"), ("f1", "1\n"), ("f2", "2\n")],
        "feature",
    );
    let merge = f.commit(
        &[m1, feature],
        &[
            ("README", "hello\n"),
            ("m", "m\n"),
            ("f1", "1\n"),
            ("f2", "2\n"),
        ],
        "merge feature",
    );
    let s = f.commit(&[feature], &[("README", "hello\n"), ("f1", "1\n")], "no f2");
    // m1 and root lack f2, as the session does: neither descends from the fork.
    assert_eq!(prove(&f, s, &[s], merge), Content::Unmerged(None));

    // Skewed: the feature dated before everything on main, its own parent
    // included; main's commits older than the fork by topology are newer by the
    // clock. Still exact.
    let f = Fixture::new();
    let late = "2021-01-01T00:00:00Z";
    let root = f.commit_at(late, &[], &[("README", "hello\n")], "root");
    let feature = f.commit(&[root], &[("README", "hello\n"), ("f2", "2\n")], "feature");
    let m1 = f.commit_at(late, &[root], &[("README", "m\n")], "m1");
    let merge = f.commit_at(
        late,
        &[m1, feature],
        &[("README", "m\n"), ("f2", "2\n")],
        "merge feature",
    );
    let s = f.commit(&[feature], &[("README", "hello\n")], "no f2");
    assert_eq!(prove(&f, s, &[s], merge), Content::Unmerged(None));
    // A later main commit that removes f2 is a landing.
    let rm = f.commit_at(late, &[merge], &[("README", "m\n")], "rm f2");
    let Content::Published(e) = prove(&f, s, &[s], rm) else {
        panic!("not published");
    };
    assert_eq!(e.commit(), Some(rm));
}

#[test]
fn a_landing_where_both_sides_changed_the_file_is_git_s_merge() {
    let f = Fixture::new();
    let base = f.commit(&[], &[("list", "a\nb\nc\nd\ne\nf\ng\n")], "base");
    let s = f.commit(&[base], &[("list", "A\nb\nc\nd\ne\nf\ng\n")], "top");
    let m = f.commit(&[base], &[("list", "a\nb\nc\nd\ne\nf\nG\n")], "bottom");
    // Not there yet: merging would bring the top line in.
    assert_eq!(prove(&f, s, &[s], m), Content::Unmerged(None));
    let squash = f.commit(&[m], &[("list", "A\nb\nc\nd\ne\nf\nG\n")], "squash");
    let Content::Published(e) = prove(&f, s, &[s], squash) else {
        panic!("not published");
    };
    assert_eq!(e.commit(), Some(squash));
    // Conflicting: kept, and says so.
    let clash = f.commit(&[base], &[("list", "X\nb\nc\nd\ne\nf\ng\n")], "clash");
    assert_eq!(
        prove(&f, s, &[s], clash),
        Content::Unmerged(Some(Unmerged::Conflicts {
            into: "origin/main".into()
        }))
    );
}

#[test]
fn commits_that_change_nothing_prove_nothing_nor_does_an_orphan() {
    let f = Fixture::new();
    let base = f.commit(&[], &[("README", "hello\n")], "base");
    let empty = f.commit(&[base], &[("README", "hello\n")], "empty");
    let main = f.commit(&[base], &[("README", "hello\n"), ("o", "o\n")], "other");
    assert_eq!(
        prove(&f, empty, &[empty], main),
        Content::Unmerged(Some(Unmerged::NoChanges))
    );
    // An orphan session: no merge base, no proof.
    let orphan = f.commit(&[], &[("x", "x\n")], "orphan");
    assert_eq!(prove(&f, orphan, &[orphan], main), Content::Unmerged(None));
}

#[test]
fn a_file_the_session_deleted_and_main_renamed_is_not_there() {
    let f = Fixture::new();
    let body = "1\n2\n3\n4\n5\n6\n7\n8\n";
    let base = f.commit(&[], &[("README", "hello\n"), ("a", body)], "base");
    let s = f.commit(&[base], &[("README", "hello\n")], "delete a");
    // main has no `a` either: it moved it (git's merge sees rename/delete).
    let moved = f.commit(
        &[base],
        &[("README", "hello\n"), ("b", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n")],
        "rename a to b",
    );
    assert_eq!(
        prove(&f, s, &[s], moved),
        Content::Unmerged(Some(Unmerged::Conflicts {
            into: "origin/main".into()
        }))
    );
    // Deleted there for good: a landing.
    let gone = f.commit(&[base], &[("README", "hello\n")], "delete a too");
    assert!(matches!(prove(&f, s, &[s], gone), Content::Published(_)));
}
