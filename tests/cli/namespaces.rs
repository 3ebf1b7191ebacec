//! Sessions across machines, what bullpen writes here and what it believes:
//! fetch and push write only bullpen's own namespaces and `refs/remotes/`,
//! whatever the remote's fetch refspecs say; a remote's oversized notes are
//! skipped, never fatal; `(this clone)` needs this clone's own proof; notes
//! land only on the commits a run made.

use crate::remote::{Machine, Machines};
use crate::support::{assert_contains, Env};

/// A command that commits a file named `name`.
fn commit(name: &str) -> Vec<String> {
    vec![
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("echo {name} > {name} && git add {name} && git commit -qm {name}"),
    ]
}

fn args<'a>(head: &[&'a str], tail: &'a [String]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(tail.iter().map(String::as_str))
        .collect()
}

/// `refname` in machine `m`'s repository, if it exists.
fn local_ref(env: &Env, m: &Machine, refname: &str) -> Option<String> {
    let run = m.git(env, &["rev-parse", "--verify", "-q", refname]);
    run.status.success().then(|| run.stdout.trim().to_owned())
}

/// Every ref of machine `m` with what it points at.
fn refs(env: &Env, m: &Machine) -> String {
    m.git_out(env, &["for-each-ref", "--format=%(objectname) %(refname)"])
}

/// A remote added with `git remote add --mirror=fetch` (`+refs/*:refs/*`) would
/// put its `bullpen/*` branches on this clone's own, and `--prune` would delete
/// every local session branch it lacks: fetch and push refuse it before git
/// runs, naming the refspec and what to configure; with that configured, the
/// mirror refspec still writes nothing here (git is told to use bullpen's
/// refspecs alone).
#[test]
fn a_mirror_remote_never_writes_or_prunes_this_clones_own_refs() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    // b's session z is on the remote; a's x (checked out in its worktree) and
    // y (never pushed) are not.
    b.bullpen(env, &args(&["spawn", "z"], &commit("z1"))).ok();
    b.bullpen(env, &["push"]).ok();
    a.bullpen(env, &args(&["spawn", "x"], &commit("x1"))).ok();
    a.bullpen(env, &args(&["spawn", "y"], &commit("y1"))).ok();
    a.git(
        env,
        &[
            "remote",
            "add",
            "--mirror=fetch",
            "backup",
            m.origin.to_str().unwrap(),
        ],
    )
    .ok();
    let before = refs(env, a);

    for cmd in ["fetch", "push"] {
        let run = a.bullpen(env, &[cmd, "backup"]).fails();
        assert_eq!(run.code(), 3, "{}", run.stderr);
        assert_contains(
            &run.stderr,
            "not fetching from backup: its fetch refspec '+refs/*:refs/*' (remote.backup.fetch) \
             puts its bullpen/* branches on refs/heads/bullpen/*",
        );
        assert_contains(
            &run.stderr,
            "git config --add remote.backup.fetch '+refs/heads/bullpen/*:refs/remotes/backup/bullpen/*'",
        );
        assert_eq!(refs(env, a), before, "`{cmd}` changed refs here");
    }

    // Configured as the hint says: the branches arrive under refs/remotes/,
    // and the mirror refspec maps nothing of what bullpen fetches onto this
    // clone's refs (not z's record, not its branch, not the notes).
    a.git(
        env,
        &[
            "config",
            "--add",
            "remote.backup.fetch",
            "+refs/heads/bullpen/*:refs/remotes/backup/bullpen/*",
        ],
    )
    .ok();
    a.bullpen(env, &["fetch", "backup"]).ok();
    assert!(local_ref(env, a, "refs/remotes/backup/bullpen/z").is_some());
    assert!(local_ref(env, a, "refs/bullpen/remotes/backup/sessions/z").is_some());
    assert_eq!(local_ref(env, a, "refs/heads/bullpen/z"), None);
    assert_eq!(local_ref(env, a, "refs/bullpen/sessions/z"), None);
    for id in ["x", "y"] {
        assert!(
            local_ref(env, a, &format!("refs/heads/bullpen/{id}")).is_some(),
            "bullpen/{id} is gone"
        );
    }
    let notes_now = local_ref(env, a, "refs/notes/bullpen");
    assert!(
        notes_now != local_ref(env, a, "refs/bullpen/incoming/backup/notes"),
        "this clone's notes were replaced by the remote's"
    );
    // The merge holds ours: the note on x's commit is still there.
    let x1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/x"]);
    a.git(env, &["notes", "--ref=bullpen", "show", &x1]).ok();
    a.bullpen(env, &["push", "backup"]).ok();
    for id in ["x", "y"] {
        assert!(local_ref(env, a, &format!("refs/heads/bullpen/{id}")).is_some());
    }
}

/// `+refs/notes/*:refs/notes/*`, a common way to fetch notes with plain git:
/// `git bullpen fetch` still merges the remote's notes into this clone's
/// instead of letting git force them over it.
#[test]
fn a_notes_refspec_of_the_remote_never_replaces_this_clones_notes() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    b.bullpen(env, &args(&["spawn", "t"], &commit("t1"))).ok();
    b.bullpen(env, &["push"]).ok();
    a.bullpen(env, &args(&["spawn", "s"], &commit("s1"))).ok();
    a.git(
        env,
        &[
            "config",
            "--add",
            "remote.origin.fetch",
            "+refs/notes/*:refs/notes/*",
        ],
    )
    .ok();
    a.bullpen(env, &["fetch"]).ok();
    let s1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/s"]);
    let t1 = a.git_out(env, &["rev-parse", "refs/remotes/origin/bullpen/t"]);
    let mine = a.git(env, &["notes", "--ref=bullpen", "show", &s1]);
    assert!(
        mine.status.success(),
        "the note on s1 is lost: {}",
        mine.stderr
    );
    assert_contains(&mine.ok().stdout, "bullpen-session: s");
    let theirs = a.git_out(env, &["notes", "--ref=bullpen", "show", &t1]);
    assert_contains(&theirs, "bullpen-session: t");
}

/// `git notes show` of `commit` in machine `m`, if it has a note.
fn note_of(env: &Env, m: &Machine, commit: &str) -> Option<String> {
    let run = m.git(env, &["notes", "--ref=bullpen", "show", commit]);
    run.status.success().then_some(run.stdout)
}

/// A note above 1 MiB on the remote, on a commit only it annotated and on one
/// both did: the fetch skips both with a named warning and exits 0, this
/// clone's note stays as it was, and later fetches and pushes succeed without
/// a word about them.
#[test]
fn notes_too_big_to_merge_are_skipped_once_and_never_fail_a_fetch() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "s"], &commit("s1"))).ok();
    a.bullpen(env, &["push"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    b.bullpen(env, &args(&["spawn", "t"], &commit("t1"))).ok();
    b.bullpen(env, &["push"]).ok();
    let s1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/s"]);
    let t1 = b.git_out(env, &["rev-parse", "refs/heads/bullpen/t"]);
    let mine = note_of(env, a, &s1).expect("a's note on s1");
    // b's notes now hold a's: a big text appended to s1's note and one on t1
    // make a descendant that a could fast-forward to.
    let big = env.root().join("big-note");
    std::fs::write(&big, "x".repeat(1024 * 1024 + 1)).unwrap();
    for c in [&s1, &t1] {
        b.git(
            env,
            &[
                "notes",
                "--ref=bullpen",
                "append",
                "-F",
                big.to_str().unwrap(),
                c,
            ],
        )
        .ok();
    }
    b.git(env, &["push", "-q", "origin", "refs/notes/bullpen"])
        .ok();

    let fetched = a.bullpen(env, &["fetch"]);
    assert_eq!(fetched.code(), 0, "{}", fetched.stderr);
    for c in [&s1, &t1] {
        let line = fetched
            .stderr
            .lines()
            .find(|l| l.contains(&format!("skipping origin's note on {c}: it is ")))
            .unwrap_or_else(|| panic!("no warning about {c}: {}", fetched.stderr));
        assert_contains(line, "bytes, more than the 1048576 bullpen merges");
    }
    assert_eq!(note_of(env, a, &s1).as_deref(), Some(mine.as_str()));
    assert_eq!(note_of(env, a, &t1), None, "the big note was taken");

    for cmd in ["fetch", "push"] {
        let again = a.bullpen(env, &[cmd]);
        assert_eq!(again.code(), 0, "`{cmd}`: {}", again.stderr);
        assert!(!again.stderr.contains("note on"), "{}", again.stderr);
    }
    assert_eq!(note_of(env, a, &s1).as_deref(), Some(mine.as_str()));
}
