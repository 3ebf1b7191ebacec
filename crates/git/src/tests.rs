use super::*;
use crate::model::Hiding;
use std::collections::HashSet;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary directory removed on drop (no extra dev-dependency).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bullpen-git-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(std::fs::canonicalize(&dir).expect("canonical temp dir"))
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run real git hermetically in `dir`; panics with stderr on failure.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository `repo` with one commit on `main` inside a fresh temp dir.
fn init_repo() -> (TempDir, PathBuf) {
    let tmp = TempDir::new();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").expect("write a.txt");
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    (tmp, repo)
}

fn commit_file(dir: &Path, name: &str, content: &str) -> Oid {
    std::fs::write(dir.join(name), content).expect("write file");
    git(dir, &["add", name]);
    git(dir, &["commit", "-q", "-m", name]);
    git(dir, &["rev-parse", "HEAD"])
        .trim()
        .parse()
        .expect("oid")
}

#[test]
fn discover_from_linked_worktree_subdir() {
    let (tmp, repo) = init_repo();
    let wt = tmp.path().join("wt");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(wt.join("sub/dir")).unwrap();

    let main = Repo::discover(&repo).unwrap();
    let linked = Repo::discover(&wt.join("sub/dir")).unwrap();
    assert_eq!(main.common_dir(), linked.common_dir());
    assert_eq!(main.main_worktree(), linked.main_worktree());
    assert_eq!(linked.main_worktree(), repo.as_path());
    assert_eq!(linked.common_dir(), repo.join(".git").as_path());
    // HEAD resolves in the worktree we were discovered from.
    assert_eq!(
        linked.resolve_commit("HEAD").unwrap(),
        main.resolve_commit("main").unwrap()
    );
}

#[test]
fn discover_errors_are_clear() {
    let tmp = TempDir::new();
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    // Only meaningful if no repository encloses the temp dir.
    if Command::new("git")
        .arg("-C")
        .arg(&plain)
        .args(["rev-parse", "--git-dir"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(false)
    {
        let err = Repo::discover(&plain)
            .err()
            .expect("not a repo")
            .to_string();
        assert!(err.contains("not a git repository"), "{err}");
    }

    let bare = tmp.path().join("bare.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    // A bare repository opens (its records can be read); what needs a worktree is refused.
    let opened = Repo::discover(&bare).expect("a bare repository opens");
    assert!(opened.is_bare());
    let err = format!("{:#}", opened.require_worktree().expect_err("bare"));
    assert!(err.contains("is a bare repository"), "{err}");

    let reftable = tmp.path().join("rt");
    git(
        tmp.path(),
        &[
            "init",
            "-q",
            "--ref-format=reftable",
            reftable.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(reftable.join("sub")).unwrap();
    let err = Repo::discover(&reftable.join("sub"))
        .err()
        .expect("reftable")
        .to_string();
    assert!(
        err.contains("stores its refs in the reftable format"),
        "{err}"
    );
}

#[test]
fn records_cas_without_reflog() {
    let (_tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let refname = "refs/bullpen/sessions/abc";

    let c1 = repo
        .write_file_commit("session.json", b"{\"schema\":1}\n", "create", None)
        .unwrap();
    repo.update_ref(refname, c1, Expect::Absent, "bullpen: create")
        .unwrap();
    assert_eq!(repo.ref_target(refname).unwrap(), Some(c1));
    assert_eq!(
        repo.read_file_at(c1, "session.json").unwrap().as_deref(),
        Some(&b"{\"schema\":1}\n"[..])
    );
    assert_eq!(repo.read_file_at(c1, "nope.json").unwrap(), None);

    // Creating again with a different commit loses.
    let other = repo
        .write_file_commit("session.json", b"{}\n", "other", None)
        .unwrap();
    let err = repo
        .update_ref(refname, other, Expect::Absent, "x")
        .unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");

    let c2 = repo
        .write_file_commit("session.json", b"{\"schema\":2}\n", "ready", Some(c1))
        .unwrap();
    repo.update_ref(refname, c2, Expect::At(c1), "bullpen: ready")
        .unwrap();
    // Stale expectation loses.
    let err = repo
        .update_ref(refname, other, Expect::At(c1), "x")
        .unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
    // Expecting a ref that does not exist loses too.
    let err = repo
        .update_ref("refs/bullpen/sessions/missing", other, Expect::At(c1), "x")
        .unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");

    // git agrees, and there is no reflog: refs/bullpen/ gets none from git either.
    assert_eq!(
        git(&repo_dir, &["rev-parse", refname]).trim(),
        c2.to_string()
    );
    let log = repo_dir.join(".git/logs").join(refname);
    assert!(!log.exists());
    // A record's reflog that exists (written by a bullpen before this one) is
    // still appended to, as git appends to any reflog that exists.
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, "").unwrap();
    let c3 = repo
        .write_file_commit("session.json", b"{\"schema\":3}\n", "running", Some(c2))
        .unwrap();
    repo.update_ref(refname, c3, Expect::At(c2), "bullpen: running")
        .unwrap();
    let entries = git(&repo_dir, &["reflog", "show", "--format=%H %gs", refname]);
    assert_eq!(entries.trim(), format!("{c3} bullpen: running"));
    repo.update_ref(refname, c2, Expect::At(c3), "bullpen: back")
        .unwrap();
    assert_eq!(
        git(&repo_dir, &["rev-parse", &format!("{c2}^")]).trim(),
        c1.to_string()
    );
    let who = git(
        &repo_dir,
        &["log", "-1", "--format=%an <%ae>", &c2.to_string()],
    );
    assert!(!who.trim().is_empty());

    let listed = repo.refs_with_prefix("refs/bullpen/sessions/").unwrap();
    assert_eq!(listed, vec![(refname.to_string(), c2)]);
    assert_eq!(
        repo.refs_with_prefix("refs/bullpen/sessions/a")
            .unwrap()
            .len(),
        1
    );
    assert!(repo
        .refs_with_prefix("refs/bullpen/sessions/b")
        .unwrap()
        .is_empty());
    assert!(repo.refs_with_prefix("refs/nothing/").unwrap().is_empty());

    let err = repo.delete_ref(refname, c1, "gone").unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
    repo.delete_ref(refname, c2, "gone").unwrap();
    assert_eq!(repo.ref_target(refname).unwrap(), None);
    let err = repo.delete_ref(refname, c2, "gone").unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
}

#[test]
fn a_file_is_read_from_a_commit_loose_packed_or_nested() {
    let (_tmp, repo_dir) = init_repo();
    std::fs::create_dir_all(repo_dir.join("d/e")).unwrap();
    std::fs::write(repo_dir.join("d/e/f.txt"), "deep\n").unwrap();
    git(&repo_dir, &["add", "d"]);
    git(&repo_dir, &["commit", "-q", "-m", "deep"]);
    let repo = Repo::discover(&repo_dir).unwrap();
    let record = repo
        .write_file_commit("session.json", b"{}\n", "create", None)
        .unwrap();
    let head = repo.resolve_commit("HEAD").unwrap();
    let read = |repo: &Repo| {
        assert_eq!(
            repo.read_file_at(record, "session.json")
                .unwrap()
                .as_deref(),
            Some(&b"{}\n"[..])
        );
        assert_eq!(
            repo.read_file_at(head, "d/e/f.txt").unwrap().as_deref(),
            Some(&b"deep\n"[..])
        );
        assert_eq!(repo.read_file_at(head, "d/e/nope").unwrap(), None);
        assert_eq!(repo.read_file_at(head, "a.txt/x").unwrap(), None);
        let err = repo.read_file_at(head, "d/e").unwrap_err();
        assert!(format!("{err:#}").contains("is not a file"), "{err:#}");
    };
    // Loose (the record) and packed (the deep file) at once...
    git(&repo_dir, &["repack", "-q", "-d"]);
    let record2 = repo
        .write_file_commit("session.json", b"{}\n", "again", Some(record))
        .unwrap();
    read(&repo);
    // ...then everything packed.
    git(
        &repo_dir,
        &[
            "update-ref",
            "refs/bullpen/sessions/x",
            &record2.to_string(),
        ],
    );
    git(&repo_dir, &["gc", "-q", "--prune=now"]);
    let repo = Repo::discover(&repo_dir).unwrap();
    read(&repo);
    // A blob named as a commit is refused, not misread.
    let blob: Oid = git(&repo_dir, &["rev-parse", "HEAD:a.txt"])
        .trim()
        .parse()
        .unwrap();
    let err = repo.read_file_at(blob, "session.json").unwrap_err();
    assert!(format!("{err:#}").contains("not a commit"), "{err:#}");
}

#[test]
fn notes_interoperate_with_git() {
    let (_tmp, repo_dir) = init_repo();
    let a = commit_file(&repo_dir, "b.txt", "b\n");
    let b = commit_file(&repo_dir, "c.txt", "c\n");
    let repo = Repo::discover(&repo_dir).unwrap();
    let notes_ref = "refs/notes/bullpen";

    // git writes a note first; ours must append to it.
    git(
        &repo_dir,
        &[
            "notes",
            "--ref=bullpen",
            "add",
            "-m",
            "from git",
            &a.to_string(),
        ],
    );
    repo.add_notes(
        notes_ref,
        &[
            (a, "session: s1".to_string()),
            (b, "session: s1\nexit: 0".to_string()),
        ],
        "bullpen: notes for s1",
    )
    .unwrap();
    assert_eq!(
        git(
            &repo_dir,
            &["notes", "--ref=bullpen", "show", &a.to_string()]
        ),
        "from git\n\nsession: s1\n"
    );
    assert_eq!(
        git(
            &repo_dir,
            &["notes", "--ref=bullpen", "show", &b.to_string()]
        ),
        "session: s1\nexit: 0\n"
    );
    assert_eq!(
        repo.read_note(notes_ref, b).unwrap().as_deref(),
        Some("session: s1\nexit: 0\n")
    );
    let log = git(&repo_dir, &["log", "--notes=bullpen", "-1", &b.to_string()]);
    assert!(log.contains("exit: 0"), "{log}");
    // One notes commit on top of git's.
    let count = git(&repo_dir, &["rev-list", "--count", notes_ref]);
    assert_eq!(count.trim(), "2");

    // Append again, then git appends on top of ours.
    repo.add_notes(notes_ref, &[(b, "again".to_string())], "more")
        .unwrap();
    git(
        &repo_dir,
        &[
            "notes",
            "--ref=bullpen",
            "append",
            "-m",
            "git again",
            &b.to_string(),
        ],
    );
    assert_eq!(
        repo.read_note(notes_ref, b).unwrap().as_deref(),
        Some("session: s1\nexit: 0\n\nagain\n\ngit again\n")
    );
    let first = repo.resolve_commit("main~2").unwrap();
    assert_eq!(repo.read_note(notes_ref, first).unwrap(), None);
    assert_eq!(repo.read_note("refs/notes/none", first).unwrap(), None);
}

#[test]
fn notes_in_fanout_tree() {
    let (_tmp, repo_dir) = init_repo();
    let mut commits = Vec::new();
    for i in 0..3 {
        commits.push(commit_file(&repo_dir, &format!("f{i}"), "x\n"));
    }
    let repo = Repo::discover(&repo_dir).unwrap();
    // Build a notes tree with fanout by hand: git reads notes at `ab/cdef...`.
    let c = commits[0].to_string();
    let blob = {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&repo_dir)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"fanned\n").unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let sub = {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&repo_dir)
            .arg("mktree")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(
            child.stdin.take().unwrap(),
            "100644 blob {blob}\t{}",
            &c[2..]
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let root = {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&repo_dir)
            .arg("mktree")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(
            child.stdin.take().unwrap(),
            "040000 tree {sub}\t{}",
            &c[..2]
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let nc = git(&repo_dir, &["commit-tree", "-m", "fanout notes", &root]);
    git(&repo_dir, &["update-ref", "refs/notes/bullpen", nc.trim()]);
    assert_eq!(
        git(&repo_dir, &["notes", "--ref=bullpen", "show", &c]),
        "fanned\n"
    );

    repo.add_notes(
        "refs/notes/bullpen",
        &[(commits[0], "more".into()), (commits[1], "new".into())],
        "m",
    )
    .unwrap();
    assert_eq!(
        git(&repo_dir, &["notes", "--ref=bullpen", "show", &c]),
        "fanned\n\nmore\n"
    );
    assert_eq!(
        git(
            &repo_dir,
            &["notes", "--ref=bullpen", "show", &commits[1].to_string()]
        ),
        "new\n"
    );
    let listed = git(&repo_dir, &["notes", "--ref=bullpen", "list"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");
}

#[test]
fn unpublished_with_bare_remote() {
    let (tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let base = repo.resolve_commit("HEAD").unwrap();
    // No remotes: everything is unpublished.
    let all = repo.unpublished(&[base]).unwrap();
    assert!(all.contains(&base));

    let remote = tmp.path().join("remote.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    git(
        &repo_dir,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    git(&repo_dir, &["push", "-q", "origin", "main"]);
    let local = commit_file(&repo_dir, "local.txt", "l\n");

    // A fresh Repo sees the new remote-tracking refs.
    let repo = Repo::discover(&repo_dir).unwrap();
    let un = repo.unpublished(&[base, local]).unwrap();
    assert!(!un.contains(&base), "{un:?}");
    assert!(un.contains(&local), "{un:?}");
    assert_eq!(repo.commits_between(local, &[base]).unwrap(), vec![local]);

    git(&repo_dir, &["push", "-q", "origin", "main"]);
    repo.fetch_all().unwrap();
    let un = repo.unpublished(&[base, local]).unwrap();
    assert!(un.is_empty(), "{un:?}");
    let missing: Oid = "1111111111111111111111111111111111111111".parse().unwrap();
    let un = repo.unpublished(&[base, missing]).unwrap();
    assert_eq!(un, HashSet::from([missing]));
}

#[test]
fn worktrees_and_inspect_path() {
    let (tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let base = repo.resolve_commit("HEAD").unwrap();
    let wt1 = tmp.path().join("wt1");
    let wt2 = tmp.path().join("wt2");
    repo.worktree_add_new_branch(&wt1, "bullpen/one", base)
        .unwrap();
    git(&repo_dir, &["branch", "existing"]);
    repo.worktree_add_existing(&wt2, "existing").unwrap();
    git(&repo_dir, &["worktree", "lock", wt2.to_str().unwrap()]);

    let wts = repo.worktrees().unwrap();
    assert_eq!(wts.len(), 3, "{wts:?}");
    assert_eq!(wts[0].path, repo_dir);
    assert_eq!(wts[0].admin_id, None);
    assert_eq!(wts[0].head_ref.as_deref(), Some("refs/heads/main"));
    let one = wts.iter().find(|w| w.path == wt1).expect("wt1 listed");
    assert_eq!(one.head_ref.as_deref(), Some("refs/heads/bullpen/one"));
    assert!(!one.locked && one.exists);
    let two = wts.iter().find(|w| w.path == wt2).expect("wt2 listed");
    assert!(two.locked);
    assert_eq!(two.head_ref.as_deref(), Some("refs/heads/existing"));

    assert_eq!(
        repo.inspect_path(&wt1).unwrap(),
        PathRepo::OurWorktree {
            head_ref: Some("refs/heads/bullpen/one".into())
        }
    );
    assert_eq!(
        repo.inspect_path(&repo_dir).unwrap(),
        PathRepo::OurWorktree {
            head_ref: Some("refs/heads/main".into())
        }
    );
    std::fs::create_dir_all(wt1.join("sub")).unwrap();
    match repo.inspect_path(&wt1.join("sub")).unwrap() {
        PathRepo::Other { description } => {
            assert!(description.contains("subdirectory"), "{description}")
        }
        other => panic!("{other:?}"),
    }
    let (_tmp2, other_repo) = init_repo();
    match repo.inspect_path(&other_repo).unwrap() {
        PathRepo::Other { description } => {
            assert!(description.contains("another repository"), "{description}")
        }
        other => panic!("{other:?}"),
    }
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    if Command::new("git")
        .arg("-C")
        .arg(&plain)
        .args(["rev-parse", "--git-dir"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(false)
    {
        assert_eq!(repo.inspect_path(&plain).unwrap(), PathRepo::None);
    }

    // Detached HEAD reads as None.
    git(&wt1, &["checkout", "-q", "--detach"]);
    assert_eq!(
        repo.inspect_path(&wt1).unwrap(),
        PathRepo::OurWorktree { head_ref: None }
    );

    // Removal goes through the CLI; locked ones refuse with git's message.
    let WorktreeRemoval::Refused(err) = repo.worktree_remove(&wt2, true) else {
        panic!("a locked worktree is refused")
    };
    assert!(
        err.contains("`git worktree remove")
            && err.contains("failed (exit")
            && err.contains("cannot remove a locked working tree"),
        "{err}"
    );
    assert_eq!(repo.worktree_remove(&wt1, false), WorktreeRemoval::Removed);
    assert!(!wt1.exists());
    assert_eq!(repo.worktrees().unwrap().len(), 2);
    // A failing add names argv and stderr.
    let err = repo
        .worktree_add_existing(&wt1, "no-such-branch")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("git worktree add") && err.contains("no-such-branch"),
        "{err}"
    );
}

#[test]
fn dirt_counts_untracked_not_ignored() {
    let (tmp, repo_dir) = init_repo();
    std::fs::write(repo_dir.join(".gitignore"), "target/\n*.log\n").unwrap();
    git(&repo_dir, &["add", ".gitignore"]);
    git(&repo_dir, &["commit", "-q", "-m", "ignore"]);
    let repo = Repo::discover(&repo_dir).unwrap();
    let base = repo.resolve_commit("HEAD").unwrap();
    let wt = tmp.path().join("wt");
    repo.worktree_add_new_branch(&wt, "bullpen/dirt", base)
        .unwrap();

    assert_eq!(repo.dirt(&wt).unwrap(), Dirt::default());
    std::fs::create_dir_all(wt.join("target/debug")).unwrap();
    std::fs::write(wt.join("target/debug/x"), "x").unwrap();
    std::fs::write(wt.join("build.log"), "x").unwrap();
    assert!(repo.dirt(&wt).unwrap().is_clean());

    let ignored = vec![
        (PathBuf::from("build.log"), false),
        (PathBuf::from("target"), true),
    ];
    assert_eq!(repo.dirt(&wt).unwrap().ignored, ignored);
    std::fs::write(wt.join("new.txt"), "n").unwrap();
    assert_eq!(
        repo.dirt(&wt).unwrap(),
        Dirt {
            untracked: 1,
            ignored: ignored.clone(),
            ..Dirt::default()
        }
    );
    std::fs::write(wt.join("a.txt"), "changed\n").unwrap();
    std::fs::write(wt.join("staged.txt"), "s").unwrap();
    git(&wt, &["add", "staged.txt"]);
    let d = repo.dirt(&wt).unwrap();
    assert_eq!(
        d,
        Dirt {
            modified: 1,
            staged: 1,
            untracked: 1,
            ignored,
            ..Dirt::default()
        }
    );
    // The main worktree is untouched.
    assert!(repo.dirt(&repo_dir).unwrap().is_clean());
}

#[test]
fn a_repository_of_its_own_is_read_with_its_own_objects() {
    // The status of a worktree of this repository borrows its object store; any
    // other repository (a path whose `.git` points elsewhere) must keep its own.
    let (_a, a_dir) = init_repo();
    let (_b, b_dir) = init_repo();
    commit_file(&b_dir, "b.txt", "only in b\n");
    let repo = Repo::discover(&a_dir).unwrap();
    // b's HEAD is not in a: read with a's objects, its status would fail.
    assert!(repo.dirt(&b_dir).unwrap().is_clean());
    let many = repo.dirt_many(&[b_dir.clone(), a_dir.clone()]);
    assert!(
        many.iter().all(|d| d.as_ref().unwrap().is_clean()),
        "{many:?}"
    );
}

#[test]
fn config_string_reads_repo_config() {
    let (_tmp, repo_dir) = init_repo();
    git(&repo_dir, &["config", "bullpen.root", "/x/y"]);
    let repo = Repo::discover(&repo_dir).unwrap();
    assert_eq!(repo.config_string("bullpen.root").as_deref(), Some("/x/y"));
    assert_eq!(repo.config_string("bullpen.nothing"), None);
}

#[test]
fn remove_admin_entry_removes_exactly_the_entry_of_that_path() {
    let (tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let base = repo.resolve_commit("HEAD").unwrap();
    let ours = tmp.path().join("root/s");
    let theirs = tmp.path().join("usb/mine");
    repo.worktree_add_new_branch(&ours, "bullpen/s", base)
        .unwrap();
    repo.worktree_add_new_branch(&theirs, "mine", base).unwrap();
    let admin = |name: &str| repo.common_dir().join("worktrees").join(name);

    // While the directory is there, only if its .git points back.
    std::fs::write(ours.join(".git"), "gitdir: /elsewhere\n").unwrap();
    assert!(matches!(
        repo.remove_admin_entry("s", &ours).unwrap(),
        EntryRemoval::Refused(w) if w.contains("does not point at worktree entry s")
    ));
    std::fs::write(
        ours.join(".git"),
        format!("gitdir: {}\n", admin("s").display()),
    )
    .unwrap();

    // Never an entry registered for another path (a user's, its disk away).
    std::fs::rename(tmp.path().join("usb"), tmp.path().join("usb-away")).unwrap();
    assert!(matches!(
        repo.remove_admin_entry("mine", &ours).unwrap(),
        EntryRemoval::Refused(w) if w.contains("is registered for")
    ));
    assert!(matches!(
        repo.remove_admin_entry("../mine", &theirs).unwrap(),
        EntryRemoval::Refused(_)
    ));

    // Locked: left alone.
    std::fs::remove_dir_all(&ours).unwrap();
    git(&repo_dir, &["worktree", "lock", ours.to_str().unwrap()]);
    assert!(matches!(
        repo.remove_admin_entry("s", &ours).unwrap(),
        EntryRemoval::Refused(w) if w.contains("locked")
    ));
    git(&repo_dir, &["worktree", "unlock", ours.to_str().unwrap()]);

    // The session's own, directory gone: removed, and only it.
    assert_eq!(
        repo.remove_admin_entry("s", &ours).unwrap(),
        EntryRemoval::Removed
    );
    assert!(!admin("s").exists());
    assert!(admin("mine").is_dir(), "the user's entry stays");
    assert_eq!(
        repo.remove_admin_entry("s", &ours).unwrap(),
        EntryRemoval::AlreadyGone
    );
    assert_eq!(repo.admin_entries_for(&theirs).unwrap(), ["mine"]);
}

/// A repository at `dir` with one commit, cloned from a bare `upstream` so that it
/// has remote-tracking refs: published until it commits again.
fn published_clone(tmp: &Path, name: &str) -> (PathBuf, PathBuf) {
    let upstream = tmp.join(format!("{name}.git"));
    git(
        tmp,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            upstream.to_str().unwrap(),
        ],
    );
    let seed = tmp.join(format!("{name}-seed"));
    git(tmp, &["init", "-q", "-b", "main", seed.to_str().unwrap()]);
    commit_file(&seed, "lib.txt", "lib\n");
    git(&seed, &["push", "-q", upstream.to_str().unwrap(), "main"]);
    (upstream, seed)
}

#[test]
fn an_admin_entry_holding_an_unpublished_submodule_git_dir_stays() {
    let (tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let base = repo.resolve_commit("HEAD").unwrap();
    let (upstream, _) = published_clone(tmp.path(), "lib");
    let wt = tmp.path().join("root/s");
    repo.worktree_add_new_branch(&wt, "bullpen/s", base)
        .unwrap();
    git(
        &wt,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.to_str().unwrap(),
            "lib",
        ],
    );
    let modules = repo.common_dir().join("worktrees/s/modules/lib");
    assert!(
        modules.is_dir(),
        "git keeps the submodule's git dir in the entry"
    );
    let nested = repo.nested_repositories(Some(&wt), Some("s")).unwrap();
    assert_eq!(nested.len(), 1, "{nested:?}");
    assert_eq!(nested[0].path, "lib");
    assert_eq!(nested[0].kind, crate::model::NestedKind::Submodule);
    assert!(!nested[0].holds_work(), "{nested:?}");

    // A local commit in the submodule, then the worktree goes (by hand).
    commit_file(&wt.join("lib"), "local.txt", "only here\n");
    std::fs::remove_dir_all(&wt).unwrap();
    let nested = repo.nested_repositories(None, Some("s")).unwrap();
    assert_eq!(nested.len(), 1, "{nested:?}");
    assert_eq!(nested[0].kind, crate::model::NestedKind::SubmoduleGitDir);
    assert_eq!(nested[0].unpublished, ["main"]);
    match repo.remove_admin_entry("s", &wt).unwrap() {
        EntryRemoval::Refused(why) => assert!(
            why.contains("submodule git dir") && why.contains("modules/lib"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(
        modules.join("HEAD").is_file(),
        "the commit's only copy stays"
    );

    // Published: it may go.
    // As gc's hint says: `git --git-dir=<its git dir> --work-tree=. push <remote>
    // <branch>` (its checkout, `core.worktree`, is gone).
    let git_dir = format!("--git-dir={}", modules.display());
    git(
        tmp.path(),
        &[&git_dir, "--work-tree=.", "push", "-q", "origin", "main"],
    );
    assert_eq!(
        repo.remove_admin_entry("s", &wt).unwrap(),
        EntryRemoval::Removed
    );
}

#[test]
fn dirt_sees_what_git_status_hides() {
    let (tmp, repo_dir) = init_repo();
    std::fs::write(repo_dir.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(repo_dir.join("b.txt"), "b\n").unwrap();
    git(&repo_dir, &["add", ".gitignore", "b.txt"]);
    git(&repo_dir, &["commit", "-q", "-m", "more"]);
    let repo = Repo::discover(&repo_dir).unwrap();
    let tip = repo.resolve_commit("HEAD").unwrap();
    let wt = tmp.path().join("wt");
    repo.worktree_add_new_branch(&wt, "bullpen/hide", tip)
        .unwrap();
    assert!(repo.dirt(&wt).unwrap().is_clean());

    // A .gitignore that ignores itself and everything beside it.
    std::fs::create_dir_all(wt.join("secret/deep")).unwrap();
    std::fs::write(wt.join("secret/.gitignore"), "*\n").unwrap();
    for f in ["secret/a", "secret/b", "secret/deep/c"] {
        std::fs::write(wt.join(f), "x").unwrap();
    }
    // One inside an ignored directory hides nothing more: target/ is ignored anyway.
    std::fs::create_dir_all(wt.join("target/x")).unwrap();
    std::fs::write(wt.join("target/.gitignore"), "*\n").unwrap();
    std::fs::write(wt.join("target/x/o"), "x").unwrap();
    let hiding = vec![Hiding {
        dir: "secret/".into(),
        files: 3,
    }];
    let d = repo.dirt(&wt).unwrap();
    assert_eq!(d.hiding, hiding, "{d:?}");
    assert_eq!(d.untracked, 0, "git status sees nothing: {d:?}");
    assert!(!d.is_clean());
    // The same seen from the branch tip (a worktree whose entry is gone).
    let against = repo.dirt_against(&wt, tip).unwrap();
    assert_eq!(against.hiding, hiding, "{against:?}");
    // An untracked .gitignore that does not ignore itself: it counts as
    // untracked, and so do the files it hides.
    std::fs::write(wt.join("secret/.gitignore"), "a\nb\ndeep/\n").unwrap();
    let d = repo.dirt(&wt).unwrap();
    assert_eq!(d.untracked, 1);
    assert_eq!(d.hiding, hiding, "{d:?}");
    std::fs::remove_dir_all(wt.join("secret")).unwrap();
    assert!(repo.dirt(&wt).unwrap().is_clean());
    assert!(repo.dirt_against(&wt, tip).unwrap().is_clean());

    // Edits under skip-worktree and assume-unchanged: status does not look.
    git(&wt, &["update-index", "--skip-worktree", "a.txt"]);
    git(&wt, &["update-index", "--assume-unchanged", "b.txt"]);
    assert!(repo.dirt(&wt).unwrap().is_clean(), "unchanged yet");
    std::fs::write(wt.join("a.txt"), "edited\n").unwrap();
    std::fs::write(wt.join("b.txt"), "edited\n").unwrap();
    let d = repo.dirt(&wt).unwrap();
    assert_eq!(d.unseen, 2, "{d:?}");
    assert_eq!(d.modified, 0, "{d:?}");
    // Missing (a sparse checkout leaves it out): no change of content.
    std::fs::remove_file(wt.join("a.txt")).unwrap();
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    assert!(repo.dirt(&wt).unwrap().is_clean());
}

#[test]
fn notes_unless_there_say_a_text_once() {
    let (_tmp, repo_dir) = init_repo();
    let repo = Repo::discover(&repo_dir).unwrap();
    let c = repo.resolve_commit("HEAD").unwrap();
    let notes = "refs/notes/bullpen";
    repo.add_notes(notes, &[(c, "first".into())], "m").unwrap();
    repo.add_notes_unless_there(notes, &[(c, "second".into())], "m")
        .unwrap();
    let after = repo.ref_target(notes).unwrap();
    repo.add_notes_unless_there(notes, &[(c, "second".into())], "m")
        .unwrap();
    repo.add_notes_unless_there(notes, &[(c, "first\n".into())], "m")
        .unwrap();
    assert_eq!(
        repo.ref_target(notes).unwrap(),
        after,
        "no new notes commit"
    );
    assert_eq!(
        git(&repo_dir, &["notes", "--ref=bullpen", "show", "HEAD"]),
        "first\n\nsecond\n"
    );
    assert_eq!(repo.without_note(notes, &[c]).unwrap(), Vec::<Oid>::new());
}

/// A repository whose `refs/remotes/origin/main` is `remote_tip`, without a remote.
fn set_remote_tip(dir: &Path, tip: Oid) {
    git(
        dir,
        &["update-ref", "refs/remotes/origin/main", &tip.to_string()],
    );
}

#[test]
fn unpublished_commits_in_one_walk_whatever_the_commit_times() {
    // Every commit has the same time (the fixed test date): the walk's order
    // comes from the queue alone, and must still be exact.
    let (_tmp, repo_dir) = init_repo();
    let base = commit_file(&repo_dir, "b.txt", "b\n");
    git(&repo_dir, &["checkout", "-q", "-b", "s1"]);
    let s1a = commit_file(&repo_dir, "s1a.txt", "1\n");
    let s1b = commit_file(&repo_dir, "s1b.txt", "2\n");
    git(&repo_dir, &["checkout", "-q", "-b", "s2"]);
    let s2 = commit_file(&repo_dir, "s2.txt", "3\n");
    // main moves on by several commits, all hidden, from the base.
    git(&repo_dir, &["checkout", "-q", "main"]);
    let mut main_tip = base;
    for i in 0..6 {
        main_tip = commit_file(&repo_dir, &format!("m{i}.txt"), "m\n");
    }
    set_remote_tip(&repo_dir, main_tip);
    let repo = Repo::discover(&repo_dir).unwrap();
    let got = repo
        .unpublished_commits(&[s1b, s2, base, main_tip])
        .unwrap();
    let sorted = |mut v: Vec<Oid>| {
        v.sort();
        v
    };
    assert_eq!(sorted(got[&s1b].clone()), sorted(vec![s1a, s1b]));
    assert_eq!(sorted(got[&s2].clone()), sorted(vec![s1a, s1b, s2]));
    assert!(got[&base].is_empty(), "the base is on origin/main's way");
    assert!(got[&main_tip].is_empty());
    // Once s1 is pushed, only s2's own commit is left.
    git(
        &repo_dir,
        &["update-ref", "refs/remotes/origin/s1", &s1b.to_string()],
    );
    let got = repo.unpublished_commits(&[s1b, s2]).unwrap();
    assert!(got[&s1b].is_empty());
    assert_eq!(got[&s2], vec![s2]);
    // A hidden tip that reaches a session only through a merge commit.
    git(&repo_dir, &["update-ref", "-d", "refs/remotes/origin/s1"]);
    git(&repo_dir, &["checkout", "-q", "main"]);
    git(
        &repo_dir,
        &["merge", "-q", "--no-ff", "-m", "merge s2", "s2"],
    );
    let merged: Oid = git(&repo_dir, &["rev-parse", "HEAD"])
        .trim()
        .parse()
        .unwrap();
    for _ in 0..3 {
        main_tip = commit_file(&repo_dir, "later.txt", &format!("{main_tip}\n"));
    }
    set_remote_tip(&repo_dir, main_tip);
    let got = repo.unpublished_commits(&[s1b, s2, merged]).unwrap();
    assert!(got[&s1b].is_empty() && got[&s2].is_empty() && got[&merged].is_empty());
    assert!(repo.reaches(main_tip, s1a).unwrap());
    assert!(!repo.reaches(s1a, main_tip).unwrap());
}

/// `ref_ids_under` lists what gix's listing does: loose and packed refs, a
/// loose one shadowing its packed copy, symbolic refs, nested directories, no
/// lock files; and a loose ref that does not parse is an error.
#[test]
fn ref_ids_under_lists_as_gix_does() {
    let (_tmp, repo_dir) = init_repo();
    let head = git(&repo_dir, &["rev-parse", "HEAD"]);
    let head = head.trim();
    for name in ["a/x", "a/y", "b/sessions/z", "packed-only"] {
        git(
            &repo_dir,
            &["update-ref", &format!("refs/bullpen/t/{name}"), head],
        );
    }
    git(&repo_dir, &["pack-refs", "--all"]);
    std::fs::write(repo_dir.join("a2.txt"), "2\n").unwrap();
    git(&repo_dir, &["add", "a2.txt"]);
    git(&repo_dir, &["commit", "-q", "-m", "second"]);
    // Loose over packed, a new loose one, a symbolic one, a lock file.
    git(&repo_dir, &["update-ref", "refs/bullpen/t/a/x", "HEAD"]);
    git(&repo_dir, &["update-ref", "refs/bullpen/t/a/new", "HEAD"]);
    git(
        &repo_dir,
        &["symbolic-ref", "refs/bullpen/t/sym", "refs/heads/main"],
    );
    let dir = repo_dir.join(".git/refs/bullpen/t");
    std::fs::write(dir.join("a/held.lock"), format!("{head}\n")).unwrap();
    let repo = Repo::discover(&repo_dir).unwrap();
    let ours = repo.ref_ids_under("refs/bullpen/t/").unwrap();
    assert_eq!(ours, repo.ref_ids_with_prefix("refs/bullpen/t/").unwrap());
    assert_eq!(ours.len(), 6, "{ours:?}");
    assert!(ours
        .iter()
        .any(|(n, t)| n == "refs/bullpen/t/sym" && t.is_none()));
    assert!(repo.ref_ids_under("refs/bullpen/none/").unwrap().is_empty());
    std::fs::write(dir.join("a/y"), "not an id\n").unwrap();
    assert!(repo.ref_ids_under("refs/bullpen/t/").is_err());
}

/// Every file and directory below `dir` (not `.git`), relative, sorted.
fn all_below(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() == ".git" {
                continue;
            }
            let path = rel.join(entry.file_name());
            let is_dir = entry.file_type().unwrap().is_dir();
            if is_dir {
                stack.push(path.clone());
            }
            out.push((path, is_dir));
        }
    }
    out.sort();
    out
}

#[test]
fn ignored_entries_and_ignored_among_answer_as_git_does() {
    let (tmp, repo_dir) = init_repo();
    let w = |rel: &str, text: &str| {
        let path = repo_dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(
        ".gitignore",
        "*.log\n!keep.log\ntarget/\n.env\nconf/local.yml\nbuild\ndist/*\n!dist/keep\n\
         empty/\nvendor/\n",
    );
    w("sub/tracked.txt", "t\n");
    w("sub/.gitignore", "secret\n");
    w("tracked.log", "tracked, ignored\n");
    git(&repo_dir, &["add", ".gitignore", "sub"]);
    git(&repo_dir, &["add", "-f", "tracked.log"]);
    git(&repo_dir, &["commit", "-q", "-m", "rules"]);
    for rel in [
        "x.log",
        "keep.log",
        "target/debug/a",
        ".env",
        "conf/local.yml",
        "mixed/a.txt",
        "mixed/b.log",
        "sub/secret",
        "sub/deeper/secret",
        "untracked/.gitignore",
        "untracked/x.tmp",
        "untracked/y",
        "build/out",
        "dist/a",
        "dist/keep",
        "by-info",
        "deep/er/by-global",
        "vendor/lib/x",
    ] {
        w(
            rel,
            if rel.ends_with(".gitignore") {
                "*.tmp\n"
            } else {
                "x\n"
            },
        );
    }
    std::fs::create_dir_all(repo_dir.join("empty/a/b")).unwrap();
    std::fs::create_dir_all(repo_dir.join("vendor/repo")).unwrap();
    git(&repo_dir.join("vendor/repo"), &["init", "-q"]);
    std::fs::create_dir_all(repo_dir.join(".git/info")).unwrap();
    std::fs::write(repo_dir.join(".git/info/exclude"), "by-info\n").unwrap();
    let global = tmp.path().join("global-excludes");
    std::fs::write(&global, "by-global\n").unwrap();
    git(
        &repo_dir,
        &["config", "core.excludesFile", global.to_str().unwrap()],
    );
    let repo = Repo::discover(&repo_dir).unwrap();

    let listed = git(
        &repo_dir,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "--no-empty-directory",
        ],
    );
    let mut expected: Vec<(PathBuf, bool)> = listed
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| match p.strip_suffix('/') {
            Some(dir) => (PathBuf::from(dir), true),
            None => (PathBuf::from(p), false),
        })
        .collect();
    expected.sort();
    assert!(
        expected.contains(&(PathBuf::from("conf"), true)),
        "{expected:?}"
    );
    assert_eq!(repo.ignored_entries(&mut Vec::new()).unwrap(), expected);

    let dirs: Vec<PathBuf> = all_below(&repo_dir)
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(p, _)| p)
        .collect();
    let input: String = dirs.iter().map(|d| format!("{}\0", d.display())).collect();
    let out = Command::new("git")
        .args([
            "-C",
            repo_dir.to_str().unwrap(),
            "check-ignore",
            "--stdin",
            "-z",
        ])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let expected: HashSet<PathBuf> = String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect();
    assert!(expected.contains(Path::new("target")), "{expected:?}");
    assert!(!expected.contains(Path::new("conf")), "{expected:?}");
    assert_eq!(repo.ignored_among(&dirs).unwrap(), expected);
}

/// `edit_refs_packed` writes into `packed-refs` (no loose file), checks every
/// change against what is there (a stale one changes nothing), and never
/// leaves a loose file of a name shadowing what it wrote.
#[test]
fn packed_ref_edits_are_checked_and_never_shadowed() {
    use crate::remote::RefChange;
    let (_tmp, dir) = init_repo();
    let a = git(&dir, &["rev-parse", "HEAD"])
        .trim()
        .parse::<Oid>()
        .unwrap();
    let b = commit_file(&dir, "b.txt", "b");
    let repo = Repo::discover(&dir).unwrap();
    let set = |name: &str, new: Option<Oid>, expect: Expect| RefChange {
        name: name.to_owned(),
        new,
        expect,
    };
    let x = "refs/bullpen/t/sessions/x";
    let y = "refs/bullpen/t/sessions/y";
    repo.edit_refs_packed(
        &[
            set(x, Some(a), Expect::Absent),
            set(y, Some(a), Expect::Absent),
        ],
        "t",
    )
    .unwrap();
    assert!(!dir.join(".git").join(x).exists(), "written loose");
    let packed = std::fs::read_to_string(dir.join(".git/packed-refs")).unwrap();
    assert!(packed.contains(&format!("{a} {x}\n")), "{packed}");
    assert_eq!(git(&dir, &["rev-parse", x]).trim(), a.to_string());

    // A stale expectation, anywhere: nothing changes.
    for stale in [Expect::Absent, Expect::At(b)] {
        let err = repo
            .edit_refs_packed(
                &[set(y, Some(b), Expect::At(a)), set(x, Some(b), stale)],
                "t",
            )
            .unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
        assert_eq!(git(&dir, &["rev-parse", y]).trim(), a.to_string());
    }

    // A loose file of the name (another writer's): the per-ref transaction
    // sees it, so a change expecting no ref is refused, not shadowed.
    let z = "refs/bullpen/t/sessions/z";
    git(&dir, &["update-ref", z, &a.to_string()]);
    let err = repo
        .edit_refs_packed(&[set(z, Some(b), Expect::Absent)], "t")
        .unwrap_err();
    assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
    repo.edit_refs_packed(&[set(z, Some(b), Expect::At(a))], "t")
        .unwrap();
    assert_eq!(git(&dir, &["rev-parse", z]).trim(), b.to_string());
    assert!(!dir.join(".git").join(z).exists(), "a loose file left");

    // Deleted from packed-refs; git agrees with what is left.
    repo.edit_refs_packed(
        &[set(x, None, Expect::At(a)), set(z, None, Expect::At(b))],
        "t",
    )
    .unwrap();
    assert_eq!(
        git(
            &dir,
            &["for-each-ref", "--format=%(refname)", "refs/bullpen/"]
        )
        .trim(),
        y
    );
    git(&dir, &["fsck", "--no-progress"]);
}

/// A racily clean entry the settle cannot prove (here an edit of the same
/// size in checkout's own jiffy: same stat, other content) is smudged in the
/// index it writes, as git smudges one: read by git a second later, that
/// index must not pass the edit for clean.
#[test]
fn the_settle_smudges_the_racy_entries_it_leaves() {
    use std::os::unix::fs::MetadataExt;
    use std::time::{Duration, UNIX_EPOCH};
    let (tmp, repo) = init_repo();
    std::fs::write(repo.join("b.txt"), "bbbb\n").unwrap();
    git(&repo, &["add", "b.txt"]);
    git(&repo, &["commit", "-q", "-m", "b"]);
    let wt = tmp.path().join("wt");
    git(&repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let index = repo.join(".git/worktrees/wt/index");
    let at = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        UNIX_EPOCH + Duration::new(m.mtime() as u64, m.mtime_nsec() as u32)
    };
    // The edit: other bytes, the size, inode and mtime git recorded.
    let b = wt.join("b.txt");
    let was = at(&b);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&b)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"BBBB\n"))
        .unwrap();
    std::fs::File::options()
        .write(true)
        .open(&b)
        .and_then(|f| f.set_modified(was))
        .unwrap();
    // Both files in the index's own second.
    let first = at(&wt.join("a.txt")).min(was);
    let secs = first.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let set = |p: &Path, t| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .and_then(|f| f.set_modified(t))
            .unwrap()
    };
    set(&index, UNIX_EPOCH + Duration::from_secs(secs));
    let opened = Repo::discover(&repo).unwrap();
    assert_eq!(
        opened.settle_fresh_index(&wt).unwrap(),
        1,
        "a.txt moved back"
    );
    // Read as if written seconds later: only a smudged entry is hashed.
    set(&index, UNIX_EPOCH + Duration::from_secs(secs + 10));
    let status = git(&wt, &["status", "--porcelain"]);
    assert_eq!(status, " M b.txt\n");
}
