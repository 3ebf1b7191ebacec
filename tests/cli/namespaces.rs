//! Sessions across machines, what bullpen writes here and what it believes:
//! fetch and push write only bullpen's own namespaces and `refs/remotes/`,
//! whatever the remote's fetch refspecs say; a remote's oversized notes are
//! skipped, never fatal; `(this clone)` needs this clone's own proof; notes
//! land only on the commits a run made.

use crate::remote::{Machine, Machines};
use crate::support::{assert_contains, record_json, Env};

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
/// every local session branch it lacks; a push to it would have git set this
/// clone's branches and records back to what was pushed. Fetch and push refuse
/// it before git runs, naming the refspec and what to do. With a tracking
/// refspec added, fetch works and the mirror refspec still writes nothing here
/// (git is told to use bullpen's refspecs alone); push stays refused; a
/// remote of its own, as the hint says, takes both.
#[test]
fn a_mirror_remote_never_writes_or_prunes_this_clones_own_refs() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    // b's session z is on the remote; a's x (checked out in its worktree) and
    // y (never pushed) are not.
    b.bullpen(env, &args(&["spawn", "z"], &commit("z1"))).ok();
    b.bullpen(env, &["push", "--all"]).ok();
    a.bullpen(env, &args(&["spawn", "x"], &commit("x1"))).ok();
    a.bullpen(env, &args(&["spawn", "y"], &commit("y1"))).ok();
    let url = m.origin.to_str().unwrap();
    a.git(env, &["remote", "add", "--mirror=fetch", "backup", url])
        .ok();
    let hint = "git remote add bullpen-backup \"$(git remote get-url backup)\"";

    let refused = |cmd: &str, says: &str| {
        let before = refs(env, a);
        let run = a.bullpen(env, &[cmd, "backup"]);
        assert_eq!(refs(env, a), before, "`{cmd}` changed refs here");
        assert_eq!(run.code(), 3, "{}", run.stderr);
        assert_contains(&run.stderr, says);
        assert_contains(&run.stderr, hint);
    };
    refused(
        "fetch",
        "not fetching from backup: its fetch refspec '+refs/*:refs/*' (remote.backup.fetch) \
         puts its bullpen/* branches on refs/heads/bullpen/*",
    );
    insta::assert_snapshot!(a.bullpen(env, &["fetch", "backup"]).stderr, @r#"
    fatal: not fetching from backup: its fetch refspec '+refs/*:refs/*' (remote.backup.fetch) puts its bullpen/* branches on refs/heads/bullpen/*, where a fetch would replace and prune this clone's own refs
    hint: use a remote with git's default refspecs for bullpen: git remote add bullpen-backup "$(git remote get-url backup)"
    "#);
    insta::assert_snapshot!(a.bullpen(env, &["push", "backup"]).stderr, @r#"
    fatal: not pushing to backup: its fetch refspec '+refs/*:refs/*' (remote.backup.fetch) maps what bullpen pushes to refs/heads/bullpen/* here, which git would set to what it pushed, losing what landed there meanwhile
    hint: use a remote with git's default refspecs for bullpen: git remote add bullpen-backup "$(git remote get-url backup)"
    "#);
    let push_refused = "not pushing to backup: its fetch refspec '+refs/*:refs/*' \
                        (remote.backup.fetch) maps what bullpen pushes to \
                        refs/heads/bullpen/* here";
    refused("push", push_refused);

    // A tracking refspec beside the mirror's: the branches arrive under
    // refs/remotes/, and the mirror refspec maps nothing of what bullpen
    // fetches onto this clone's refs (not z's record, its branch, the notes).
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
    assert_ne!(
        local_ref(env, a, "refs/notes/bullpen"),
        local_ref(env, a, "refs/bullpen/incoming/backup/notes"),
        "this clone's notes were replaced by the remote's"
    );
    let x1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/x"]);
    a.git(env, &["notes", "--ref=bullpen", "show", &x1]).ok();
    refused("push", push_refused);

    // As the hint says.
    a.git(env, &["remote", "add", "bullpen-backup", url]).ok();
    a.bullpen(env, &["push", "--all", "bullpen-backup"]).ok();
    for id in ["x", "y"] {
        assert!(local_ref(env, a, &format!("refs/heads/bullpen/{id}")).is_some());
        assert!(m.origin_ref(&format!("refs/heads/bullpen/{id}")).is_some());
    }
}

/// `+refs/notes/*:refs/notes/*`, a common way to fetch notes with plain git,
/// and `+refs/bullpen/*:refs/bullpen/*`, the obvious one for records: `git
/// bullpen fetch` still merges the remote's notes into this clone's instead of
/// letting git force them over it, and writes no record of the remote's into
/// this clone's own `refs/bullpen/sessions/`. A push, which would have git set
/// this clone's records to what it pushed, is refused.
#[test]
fn a_remotes_notes_and_records_refspecs_never_replace_this_clones() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    b.bullpen(env, &args(&["spawn", "t"], &commit("t1"))).ok();
    b.bullpen(env, &["push", "--all"]).ok();
    a.bullpen(env, &args(&["spawn", "s"], &commit("s1"))).ok();
    for spec in [
        "+refs/notes/*:refs/notes/*",
        "+refs/bullpen/*:refs/bullpen/*",
    ] {
        a.git(env, &["config", "--add", "remote.origin.fetch", spec])
            .ok();
    }
    a.bullpen(env, &["fetch"]).ok();
    let s1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/s"]);
    let t1 = a.git_out(env, &["rev-parse", "refs/remotes/origin/bullpen/t"]);
    let mine = note_of(env, a, &s1).expect("the note on s1 is lost");
    assert_contains(&mine, "bullpen-session: s");
    let theirs = note_of(env, a, &t1).expect("the note on t1 was not merged");
    assert_contains(&theirs, "bullpen-session: t");
    assert_eq!(local_ref(env, a, "refs/bullpen/sessions/t"), None);
    assert!(local_ref(env, a, "refs/bullpen/remotes/origin/sessions/t").is_some());

    let before = refs(env, a);
    let run = a.bullpen(env, &["push", "--all"]).fails();
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "not pushing to origin: its fetch refspec '+refs/bullpen/*:refs/bullpen/*' \
         (remote.origin.fetch) maps what bullpen pushes to refs/bullpen/sessions/* here",
    );
    assert_eq!(refs(env, a), before);
    assert_eq!(m.origin_ref("refs/heads/bullpen/s"), None);
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
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    b.bullpen(env, &args(&["spawn", "t"], &commit("t1"))).ok();
    b.bullpen(env, &["push", "--all"]).ok();
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

    // A clone with no notes yet takes neither (no fast-forward onto the
    // remote's notes), and a later fetch says nothing more of them.
    let fresh = env.root().join("c");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            m.origin.to_str().unwrap(),
            fresh.to_str().unwrap(),
        ],
    )
    .ok();
    let fetched = env.bullpen_in(&fresh, &["fetch"]);
    assert_eq!(fetched.code(), 0, "{}", fetched.stderr);
    for commit in [&s1, &t1] {
        assert_contains(
            &fetched.stderr,
            &format!("skipping origin's note on {commit}: it is "),
        );
        let shown = env.git(&fresh, &["notes", "--ref=bullpen", "show", commit]);
        assert!(
            !shown.status.success(),
            "the big note on {commit} was taken"
        );
    }
    let again = env.bullpen_in(&fresh, &["fetch"]).ok();
    assert!(!again.stderr.contains("note on"), "{}", again.stderr);

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

/// `git <args>` in `dir` with `input` on stdin; trimmed stdout.
fn git_stdin(env: &Env, dir: &std::path::Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = env
        .cmd("git", dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A record commit on the remote holding `record` (parent: `parent`, if any),
/// made with plumbing as a forger would; `refname` points at it there.
fn forge_record(
    m: &Machines,
    refname: &str,
    record: &serde_json::Value,
    parent: Option<&str>,
) -> String {
    let blob = git_stdin(
        &m.env,
        &m.origin,
        &["hash-object", "-w", "--stdin"],
        record.to_string().as_bytes(),
    );
    let tree = git_stdin(
        &m.env,
        &m.origin,
        &["mktree"],
        format!("100644 blob {blob}\tsession.json\n").as_bytes(),
    );
    let mut args = vec!["commit-tree", tree.as_str(), "-m", "forged"];
    if let Some(p) = parent {
        args.extend(["-p", p]);
    }
    let commit = m.origin_git(&args);
    m.origin_git(&["update-ref", refname, &commit]);
    commit
}

/// The line of `<remote>/<id>` in `ls --remote`.
fn remote_line(env: &Env, m: &Machine, id: &str) -> String {
    let listed = m.bullpen(env, &["ls", "--remote"]).ok().stdout;
    listed
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("origin/{id} ")))
        .unwrap_or_else(|| panic!("no origin/{id}: {listed}"))
        .to_owned()
}

/// A record carries its clone's id, which anyone can copy: `(this clone)`
/// needs this clone's proof (it created the session here, and its own record
/// holds the fetched commit). A forged successor of this clone's pushed record,
/// and a forged record whose commit was even written into this clone's record
/// ref by hand, carry this clone's id and are still only `(claims this clone)`.
#[test]
fn this_clone_is_told_by_local_proof_not_by_a_copied_clone_id() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &["spawn", "s", "--", "true"]).ok();
    a.bullpen(env, &["spawn", "g", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    let mine = a.git_out(env, &["rev-parse", "refs/bullpen/sessions/s"]);
    let mut record: serde_json::Value =
        serde_json::from_str(&record_json(|x| a.git_out(env, x), &mine)).unwrap();
    // A successor of s's record, as if this clone had gone on with it.
    record["state"] = "running".into();
    forge_record(&m, "refs/bullpen/sessions/s", &record, Some(&mine));
    // A record of another id with this clone's id, written here by hand too.
    record["id"] = "f".into();
    record["branch"] = "bullpen/f".into();
    record["state"] = "exited".into();
    let f = forge_record(&m, "refs/bullpen/sessions/f", &record, None);
    a.bullpen(env, &["fetch"]).ok();
    a.git(env, &["update-ref", "refs/bullpen/sessions/f", &f])
        .ok();

    assert_contains(
        &remote_line(env, a, "g"),
        "exited 0 on laptop (this clone), as of",
    );
    assert_contains(
        &remote_line(env, a, "s"),
        "running on laptop (claims this clone), as of",
    );
    assert_contains(
        &remote_line(env, a, "f"),
        "exited 0 on laptop (claims this clone), as of",
    );
}

/// `sh -c <script>` after `--`.
fn sh(script: &str) -> Vec<String> {
    vec!["--".into(), "sh".into(), "-c".into(), script.into()]
}

/// A colleague's commits that a run fast-forwards or merges into its branch
/// are not the run's: they get no provenance note, while the run's own commits
/// (the merge commit too) do, also one the run pushed as the session's branch.
#[test]
fn provenance_notes_land_only_on_the_commits_a_run_made() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    let colleague = |name: &str| {
        b.git(env, &["commit", "-q", "--allow-empty", "-m", name])
            .ok();
        b.git(env, &["push", "-q", "origin", "HEAD:main"]).ok();
        b.git_out(env, &["rev-parse", "HEAD"])
    };
    let c1 = colleague("c1");
    let first = sh(
        "git fetch -q origin && git merge -q --ff-only origin/main && \
         echo x1 > x1 && git add x1 && git commit -qm x1 && \
         git push -q origin HEAD:refs/heads/bullpen/x",
    );
    a.bullpen(env, &args(&["spawn", "x"], &first)).ok();
    let x1 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/x"]);
    let c2 = colleague("c2");
    let second = sh(
        "git fetch -q origin && git merge -q --no-edit origin/main && \
         echo x2 > x2 && git add x2 && git commit -qm x2",
    );
    a.bullpen(env, &args(&["resume", "x"], &second)).ok();
    let x2 = a.git_out(env, &["rev-parse", "refs/heads/bullpen/x"]);
    let merge = a.git_out(env, &["rev-parse", "refs/heads/bullpen/x~1"]);
    assert_eq!(a.git_out(env, &["rev-parse", &format!("{merge}^2")]), c2);

    for (what, c) in [("c1", &c1), ("c2", &c2)] {
        assert_eq!(
            note_of(env, a, c),
            None,
            "the colleague's {what} got a note"
        );
    }
    for (what, c) in [("x1", &x1), ("the merge", &merge), ("x2", &x2)] {
        let note = note_of(env, a, c).unwrap_or_else(|| panic!("{what} has no note"));
        assert_contains(&note, "bullpen-session: x");
    }
}

/// A record that names no run start (one of an older bullpen, or edited) and a
/// base its branch did not grow from (a fetched record may name any): which
/// commits the run made cannot be told, so none gets a note (said so), rather
/// than every commit between that base and the tip, here the base `p` that no
/// other ref reaches.
#[test]
fn a_base_that_is_no_ancestor_of_the_branch_notes_nothing() {
    let env = crate::bg::Bg::new();
    let p = env.git_out(&["commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "p"]);
    // The run commits and, once `spawn` has returned, kills its supervisor:
    // the session is lost, its end unrecorded, until `stop` records it (and
    // writes the notes).
    let go = env.root().join("go");
    let c_path = std::ffi::CString::new(go.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let script =
        "echo c > c && git add c && git commit -qm c && read _ < \"$1\" && kill -KILL $PPID";
    let go_arg = go.to_str().unwrap();
    env.bullpen(&[
        "spawn", "--bg", "--base", &p, "x", "--", "sh", "-c", script, "sh", go_arg,
    ])
    .ok();
    // Opened once the run waits on it (a dead run fails the wait, never hangs it).
    let mut fifo = crate::bg::wait_for("the run to wait on the FIFO", || {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&go)
            .ok()
    });
    std::io::Write::write_all(&mut fifo, b"go\n").unwrap();
    drop(fifo);
    env.wait_state("x", "lost");
    let orphan = env.git_out(&["commit-tree", "HEAD^{tree}", "-m", "orphan"]);
    env.edit_record("x", |r| {
        r["run_start"] = serde_json::Value::Null;
        r["base"] = orphan.clone().into();
    });
    let stopped = env.bullpen(&["stop", "x"]).ok();
    let tip = env.git_out(&["rev-parse", "refs/heads/bullpen/x"]);
    assert_eq!(env.git_out(&["rev-parse", &format!("{tip}~1")]), p);
    for c in [&p, &tip] {
        let shown = env.git(&env.repo, &["notes", "--ref=bullpen", "show", c]);
        assert!(!shown.status.success(), "{c} got a note: {}", shown.stdout);
    }
    assert_contains(
        &stopped.stderr,
        &format!(
            "no provenance notes written for session x: its record names no run start, and \
             its base '{orphan}' is not an ancestor of bullpen/x"
        ),
    );
}

/// A branch the remote's fetch config leaves out (a negative refspec) stays
/// out of bullpen's fetch too; its record still arrives.
#[test]
fn a_branch_the_remotes_config_excludes_is_not_fetched() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    for id in ["z", "big"] {
        b.bullpen(env, &args(&["spawn", id], &commit(id))).ok();
    }
    b.bullpen(env, &["push", "--all"]).ok();
    a.git(
        env,
        &[
            "config",
            "--add",
            "remote.origin.fetch",
            "^refs/heads/bullpen/big",
        ],
    )
    .ok();
    a.bullpen(env, &["fetch"]).ok();
    assert!(local_ref(env, a, "refs/remotes/origin/bullpen/z").is_some());
    assert_eq!(local_ref(env, a, "refs/remotes/origin/bullpen/big"), None);
    assert!(local_ref(env, a, "refs/bullpen/remotes/origin/sessions/big").is_some());
}
