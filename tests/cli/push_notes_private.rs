//! `push` sends the notes of what it pushes and nothing of the sessions it
//! does not: a note holds a session's id and command (an agent's prompt).

use crate::remote::{args, commit, Machines};
use crate::support::assert_contains;

/// Every object in the bare remote's store, as `cat-file --batch` prints them.
fn origin_objects(m: &Machines) -> String {
    let out = m
        .env
        .cmd("git", &m.origin)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .expect("run git cat-file");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The note on `commit` in the remote (empty when none).
fn origin_note(m: &Machines, commit: &str) -> String {
    let run = m
        .env
        .git(&m.origin, &["notes", "--ref=bullpen", "show", commit]);
    run.stdout
}

/// Two sessions with commits: pushing one sends its notes and not a byte of
/// the other's (its id, its command), in the tip or in the history of the
/// notes ref; pushing the other then sends its notes too.
#[test]
fn a_push_sends_no_note_of_a_session_it_does_not_push() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "public"], &commit("p1", "p1")))
        .ok();
    a.bullpen(
        env,
        &args(&["spawn", "secret"], &commit("hush-prompt", "s1")),
    )
    .ok();
    let public = a.git_out(env, &["rev-parse", "bullpen/public"]);
    let secret = a.git_out(env, &["rev-parse", "bullpen/secret"]);
    let pushed = a.bullpen(env, &["push", "origin", "public"]).ok();
    assert_contains(&pushed.stderr, "notes pushed to origin");
    assert_contains(&origin_note(&m, &public), "bullpen-session: public");
    let objects = origin_objects(&m);
    assert!(
        !objects.contains("hush-prompt") && !objects.contains("bullpen-session: secret"),
        "the remote holds the unpushed session's note:\n{objects}"
    );
    assert_eq!(origin_note(&m, &secret), "");
    // The local notes lost nothing and still contain the remote's.
    assert_contains(
        &a.git_out(env, &["notes", "--ref=bullpen", "show", &secret]),
        "bullpen-session: secret",
    );
    let theirs = m.origin_git(&["rev-parse", "refs/notes/bullpen"]);
    a.git(
        env,
        &["merge-base", "--is-ancestor", &theirs, "refs/notes/bullpen"],
    )
    .ok();

    a.bullpen(env, &["push", "origin", "secret"]).ok();
    assert_contains(&origin_note(&m, &secret), "bullpen-session: secret");
    assert_contains(&origin_note(&m, &public), "bullpen-session: public");
    // A second machine sees both, through git's own log.
    m.b.bullpen(env, &["fetch"]).ok();
    for (session, c) in [("public", &public), ("secret", &secret)] {
        let log = m.b.git_out(env, &["log", "-1", "--notes=bullpen", c]);
        assert_contains(&log, &format!("bullpen-session: {session}"));
    }
}

/// A session pushed, given more commits, pushed again: the new commits'
/// notes go, on top of what the remote had (a fast-forward there).
#[test]
fn a_session_pushed_again_sends_the_notes_of_its_new_commits() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "s"], &commit("one", "one")))
        .ok();
    a.bullpen(env, &args(&["spawn", "private"], &commit("mine-only", "m")))
        .ok();
    a.bullpen(env, &["push", "origin", "s"]).ok();
    let first_notes = m.origin_git(&["rev-parse", "refs/notes/bullpen"]);
    a.bullpen(env, &args(&["resume", "s"], &commit("two", "two")))
        .ok();
    let second = a.git_out(env, &["rev-parse", "bullpen/s"]);
    let pushed = a.bullpen(env, &["push", "origin", "s"]).ok();
    assert_contains(&pushed.stderr, "notes pushed to origin");
    assert_contains(&origin_note(&m, &second), "echo two");
    assert_contains(&origin_note(&m, &format!("{second}~1")), "echo one");
    let now = m.origin_git(&["rev-parse", "refs/notes/bullpen"]);
    m.env
        .git(
            &m.origin,
            &["merge-base", "--is-ancestor", &first_notes, &now],
        )
        .ok();
    assert!(!origin_objects(&m).contains("mine-only"));
    // Nothing new: the next push sends no notes.
    let again = a.bullpen(env, &["push", "origin", "s"]).ok();
    assert!(!again.stderr.contains("notes pushed"), "{}", again.stderr);
}

/// Two clones pushing their own sessions in turn: each push is a
/// fast-forward of the remote's notes, and both end with every note.
#[test]
fn alternate_pushes_from_two_clones_converge() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "fa"], &commit("fa", "fa")))
        .ok();
    b.bullpen(env, &args(&["spawn", "fb"], &commit("fb", "fb")))
        .ok();
    a.bullpen(env, &args(&["spawn", "ka"], &commit("keep-a", "ka")))
        .ok();
    b.bullpen(env, &args(&["spawn", "kb"], &commit("keep-b", "kb")))
        .ok();
    let fa = a.git_out(env, &["rev-parse", "bullpen/fa"]);
    let fb = b.git_out(env, &["rev-parse", "bullpen/fb"]);
    a.bullpen(env, &["push", "origin", "fa"]).ok();
    b.bullpen(env, &["push", "origin", "fb"]).ok();
    a.bullpen(
        env,
        &[
            "resume",
            "fa",
            "--",
            "sh",
            "-c",
            "echo a2 > a2 && git add a2 && git commit -qm a2",
        ],
    )
    .ok();
    a.bullpen(env, &["push", "origin", "fa"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    a.bullpen(env, &["fetch"]).ok();
    let fa2 = a.git_out(env, &["rev-parse", "bullpen/fa"]);
    for (who, dir) in [("a", &a.dir), ("b", &b.dir), ("origin", &m.origin)] {
        for (session, c) in [("fa", &fa), ("fa", &fa2), ("fb", &fb)] {
            let log = env
                .git(dir, &["log", "-1", "--notes=bullpen", c])
                .ok()
                .stdout;
            assert!(
                log.contains(&format!("bullpen-session: {session}")),
                "{who} lacks the note on {c}:\n{log}"
            );
        }
    }
    let objects = origin_objects(&m);
    assert!(
        !objects.contains("keep-a") && !objects.contains("keep-b"),
        "{objects}"
    );
    // Each side still has its own private notes.
    let ka = a.git_out(env, &["rev-parse", "bullpen/ka"]);
    assert_contains(&note_here(a, env, &ka), "bullpen-session: ka");
}

fn note_here(machine: &crate::remote::Machine, env: &crate::support::Env, c: &str) -> String {
    machine.git_out(env, &["notes", "--ref=bullpen", "show", c])
}

/// A session's commit merged into main and pushed with plain git: the next
/// push sends its note (the remote has the commit), while the note of a
/// session pushed only to another remote stays off this one.
#[test]
fn a_push_sends_the_notes_of_commits_the_remote_got_from_plain_git() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "landed"], &commit("l1", "l1")))
        .ok();
    a.bullpen(
        env,
        &args(&["spawn", "elsewhere"], &commit("backup-prompt", "e1")),
    )
    .ok();
    let landed = a.git_out(env, &["rev-parse", "bullpen/landed"]);
    a.git(env, &["merge", "-q", "--ff-only", "bullpen/landed"])
        .ok();
    a.git(env, &["push", "-q", "origin", "main"]).ok();
    // Another remote has the other session's branch, by plain git too.
    let backup = env.root().join("backup.git");
    let backup_s = backup.to_str().expect("utf-8");
    env.git(&env.root(), &["init", "-q", "--bare", backup_s])
        .ok();
    a.git(env, &["remote", "add", "backup", backup_s]).ok();
    a.git(env, &["push", "-q", "backup", "bullpen/elsewhere"])
        .ok();

    let pushed = a.bullpen(env, &["push", "origin"]).ok();
    assert_contains(&pushed.stderr, "notes pushed to origin");
    assert_contains(&origin_note(&m, &landed), "bullpen-session: landed");
    let objects = origin_objects(&m);
    assert!(
        !objects.contains("backup-prompt") && !objects.contains("bullpen-session: elsewhere"),
        "the remote holds the note of a session it does not have:\n{objects}"
    );
}

/// Commits of different dates: the walk for the notes goes down to the
/// oldest commit with a note to send, so a session's old commit gets its
/// note across with its new one, while an unpushed session's newer one stays.
#[test]
fn a_push_sends_the_notes_of_old_and_new_commits_alike() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let dated = |file: &str, year: u32| {
        vec![
            "--".to_owned(),
            "sh".to_owned(),
            "-c".to_owned(),
            format!(
                "echo {file} > {file} && git add {file} && \
                 GIT_COMMITTER_DATE='{year}-01-01T00:00:00Z' git commit -qm {file}"
            ),
        ]
    };
    a.bullpen(env, &args(&["spawn", "s"], &dated("old-one", 2001)))
        .ok();
    a.bullpen(env, &args(&["resume", "s"], &dated("new-one", 2002)))
        .ok();
    a.bullpen(
        env,
        &args(&["spawn", "later"], &dated("later-prompt", 2003)),
    )
    .ok();
    let tip = a.git_out(env, &["rev-parse", "bullpen/s"]);
    a.bullpen(env, &["push", "origin", "s"]).ok();
    assert_contains(&origin_note(&m, &tip), "new-one");
    assert_contains(&origin_note(&m, &format!("{tip}~1")), "old-one");
    assert!(!origin_objects(&m).contains("later-prompt"));
}
