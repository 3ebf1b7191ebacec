//! Push as a team's forge sees it: a plain push sends what the remote already
//! has, never a collected session, an empty branch or a branch the remote
//! deleted unless named; a refusal by the remote (a hook) is final, shown in
//! the remote's own words, made once, and nothing of a session lands alone.

use std::path::Path;

use crate::remote::{args, commit, Machines};
use crate::support::{assert_contains, make_executable};

/// A hook of the bare remote: `body` after a shebang.
fn hook(origin: &Path, name: &str, body: &str) {
    let path = origin.join("hooks").join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    make_executable(&path);
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_plain_push_sends_what_the_remote_already_has() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let spawn = |id: &str| {
        a.bullpen(
            env,
            &args(&["spawn", id], &commit(&format!("{id}.txt"), id)),
        )
        .ok();
    };
    // A session pushed and collected here (published, so gc removes it).
    spawn("done");
    a.bullpen(env, &["push", "origin", "done"]).ok();
    a.bullpen(env, &["fetch"]).ok();
    a.bullpen(env, &["gc"]).ok();
    assert_eq!(a.ls_json(env, &["done"])[0]["state"], "collected");
    let done_there = m.origin_ref("refs/bullpen/sessions/done");
    // Pushed, then continued here.
    spawn("tracked");
    spawn("merged");
    a.bullpen(env, &["push", "origin", "tracked", "merged"])
        .ok();
    // The forge deletes merged's branch (its pull request was merged); a
    // fetch prunes its remote-tracking branch here.
    m.origin_git(&["update-ref", "-d", "refs/heads/bullpen/merged"]);
    for id in ["tracked", "merged"] {
        a.bullpen(
            env,
            &args(&["resume", id], &commit(&format!("{id}2.txt"), "more")),
        )
        .ok();
    }
    // Never pushed: one with commits, one without.
    spawn("fresh");
    a.bullpen(env, &["spawn", "empty", "--", "true"]).ok();

    let run = a.bullpen(env, &["push"]).ok();
    assert_contains(
        &run.stderr,
        "pushed to origin: merged (record), tracked (record, branch)",
    );
    assert_contains(
        &run.stderr,
        "not pushing bullpen/merged: origin has its record but not the branch (deleted there?); \
         `git bullpen push origin merged` sends it",
    );
    assert_contains(
        &run.stderr,
        "hint: 2 sessions are not on origin yet (empty, fresh): name them, or push them all \
         with `git bullpen push --all origin`",
    );
    assert_eq!(
        m.origin_ref("refs/heads/bullpen/tracked"),
        Some(a.git_out(env, &["rev-parse", "bullpen/tracked"]))
    );
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/merged"),
        Some(a.git_out(env, &["rev-parse", "refs/bullpen/sessions/merged"]))
    );
    for gone in [
        "refs/heads/bullpen/merged",
        "refs/heads/bullpen/fresh",
        "refs/bullpen/sessions/fresh",
        "refs/heads/bullpen/empty",
        "refs/bullpen/sessions/empty",
    ] {
        assert_eq!(m.origin_ref(gone), None, "{gone}");
    }
    assert_eq!(m.origin_ref("refs/bullpen/sessions/done"), done_there);

    // --all: every live session; still no empty or deleted branch, no collected one.
    let run = a.bullpen(env, &["push", "--all"]).ok();
    assert_contains(
        &run.stderr,
        "pushed to origin: empty (record), fresh (record, branch)",
    );
    assert_contains(
        &run.stderr,
        "not pushing bullpen/empty: it has no commits of its own",
    );
    assert_eq!(m.origin_ref("refs/heads/bullpen/empty"), None);
    assert_eq!(m.origin_ref("refs/heads/bullpen/merged"), None);
    assert_eq!(m.origin_ref("refs/bullpen/sessions/done"), done_there);

    // Named, each goes whole.
    let run = a
        .bullpen(env, &["push", "origin", "merged", "empty", "done"])
        .ok();
    assert_contains(&run.stderr, "pushed to origin:");
    assert!(m.origin_ref("refs/heads/bullpen/merged").is_some());
    assert!(m.origin_ref("refs/heads/bullpen/empty").is_some());
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/done"),
        Some(a.git_out(env, &["rev-parse", "refs/bullpen/sessions/done"]))
    );
}

/// A pre-receive hook that refuses notes: one push is made, the hook's words
/// are shown, nothing of the session lands, and no "run it again".
#[test]
fn a_refusal_by_the_remote_is_final_and_shown_in_its_words() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let counter = env.root().join("pre-receive-runs");
    hook(
        &m.origin,
        "pre-receive",
        &format!(
            "echo run >> '{}'\nwhile read old new ref; do case \"$ref\" in refs/notes/*) \
             echo 'notes are not accepted here' >&2; exit 1;; esac; done\n",
            counter.display()
        ),
    );
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    let run = a.bullpen(env, &["push", "origin", "x"]).fails();
    assert_eq!(runs(&counter), 1, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: origin says: notes are not accepted here",
    );
    assert_contains(
        &run.stderr,
        "warning: origin did not take refs/heads/bullpen/x: [remote rejected] (pre-receive hook \
         declined)",
    );
    assert_contains(&run.stderr, "notes not pushed to origin");
    assert!(
        !run.stderr.contains("bullpen: pushed to origin"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("in between"), "{}", run.stderr);
    assert!(!run.stderr.contains("half pushed"), "{}", run.stderr);
    assert_eq!(m.origin_ref("refs/heads/bullpen/x"), None);
    assert_eq!(m.origin_ref("refs/bullpen/sessions/x"), None);
}

/// An update hook (one verdict per ref) that refuses records: one atomic push,
/// so the branch does not land without its record; on a remote without atomic
/// pushes it does, and the session is said to be half pushed.
#[test]
fn a_branch_never_lands_without_its_record_where_the_remote_is_atomic() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    hook(
        &m.origin,
        "update",
        "case \"$1\" in refs/bullpen/*) echo 'no records here' >&2; exit 1;; esac\n",
    );
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    let run = a.bullpen(env, &["push", "origin", "x"]).fails();
    assert_eq!(m.origin_ref("refs/heads/bullpen/x"), None, "{}", run.stderr);
    assert_contains(&run.stderr, "origin says: no records here");
    assert_contains(
        &run.stderr,
        "origin did not take refs/bullpen/sessions/x: [remote rejected] (hook declined)",
    );
    assert_contains(
        &run.stderr,
        "hint: one atomic push: origin took none of its refs",
    );
    assert!(!run.stderr.contains("half pushed"), "{}", run.stderr);
    assert_eq!(m.origin_ref("refs/heads/bullpen/x"), None);
    assert_eq!(m.origin_ref("refs/notes/bullpen"), None);

    // The same remote without atomic pushes: what it takes lands, and push says so.
    m.origin_git(&["config", "receive.advertiseAtomic", "false"]);
    let run = a.bullpen(env, &["push", "origin", "x"]).fails();
    assert_contains(
        &run.stderr,
        "warning: session x is half pushed: its branch is on origin, the rest is not",
    );
    assert_contains(&run.stderr, "origin says: no records here");
    assert_eq!(
        m.origin_ref("refs/heads/bullpen/x"),
        Some(a.git_out(env, &["rev-parse", "bullpen/x"]))
    );
    assert_eq!(m.origin_ref("refs/bullpen/sessions/x"), None);
}
