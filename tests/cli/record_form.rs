//! The two forms of a record commit: one object (a commit over the empty tree,
//! the record in its message: what bullpen writes) and three (a tree holding
//! `session.json` alone: what it wrote before, and what a hand edit makes).
//! Both are read, here and from a remote, and a forged one is refused the
//! same way in either form.

use serde_json::{json, Value};

use crate::remote::{origin_stdin, Machines};
use crate::support::{assert_contains, record_json, Env, EMPTY_TREE};

/// Every event of a spawn is one commit over the empty tree, its record at
/// the end of its message; the empty tree is in the object store, so `git
/// fsck` finds nothing missing.
#[test]
fn each_event_is_one_commit_over_the_empty_tree() {
    let env = Env::new();
    env.bullpen(&["spawn", "demo", "--", "true"]).ok();
    let commits = env.git_out(&["rev-list", "refs/bullpen/sessions/demo"]);
    let states: Vec<String> = commits
        .lines()
        .map(|c| {
            assert_eq!(
                env.git_out(&["rev-parse", &format!("{c}^{{tree}}")]),
                EMPTY_TREE
            );
            let record: Value = serde_json::from_str(&record_json(|a| env.git_out(a), c)).unwrap();
            assert_eq!(record["id"], "demo");
            record["state"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(states, ["exited", "running", "provisioning"]);
    // `git log` shows each event's record.
    let log = env.git_out(&["log", "-1", "--format=%B", "refs/bullpen/sessions/demo"]);
    assert!(
        log.starts_with("bullpen: demo exited 0\n\nstate: exited\n"),
        "{log}"
    );
    assert_contains(&log, "\n{\n  \"schema\": 1,\n  \"id\": \"demo\",");
    let fsck = env.git(&env.repo, &["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success(), "{}{}", fsck.stdout, fsck.stderr);
    assert!(!fsck.stderr.contains("missing"), "{}", fsck.stderr);
}

/// A record whose last commit is of three objects (an older bullpen's, or
/// edited by hand) is read, and the next event goes on from it as one object,
/// keeping what it held.
#[test]
fn a_record_of_three_objects_is_read_and_goes_on_as_one() {
    let env = Env::new();
    env.bullpen(&["spawn", "old", "--", "true"]).ok();
    env.edit_record("old", |r| r["kept"] = "from before".into());
    let tip = env.git_out(&["rev-parse", "refs/bullpen/sessions/old"]);
    assert_ne!(
        env.git_out(&["rev-parse", &format!("{tip}^{{tree}}")]),
        EMPTY_TREE
    );
    let rows: Vec<Value> =
        serde_json::from_str(&env.bullpen(&["ls", "--all", "--json"]).ok().stdout).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "old");
    assert_eq!(rows[0]["state"], "exited");

    env.bullpen(&["resume", "old", "--", "true"]).ok();
    let record = env.record("old");
    assert_eq!(record["kept"], "from before");
    assert_eq!(
        env.git_out(&["rev-parse", "refs/bullpen/sessions/old^{tree}"]),
        EMPTY_TREE
    );
}

/// Here too, a record of one object that names another session is refused as
/// one of three objects is, in the same words.
#[test]
fn a_forged_local_record_is_refused_alike_in_either_form() {
    let env = Env::new();
    env.bullpen(&["spawn", "real", "--", "true"]).ok();
    let tip = env.git_out(&["rev-parse", "refs/bullpen/sessions/real"]);
    // One object: the record of `real` under another name.
    env.git_out(&["update-ref", "refs/bullpen/sessions/one", &tip]);
    // Three objects: the same record in a tree.
    let json = record_json(|a| env.git_out(a), &tip);
    let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], &json);
    let tree = env.git_stdin(&["mktree"], &format!("100644 blob {blob}\tsession.json\n"));
    let three = env.git_out(&["commit-tree", &tree, "-m", "forged"]);
    env.git_out(&["update-ref", "refs/bullpen/sessions/three", &three]);

    let run = env.bullpen(&["ls", "--all"]);
    let said = |name: &str| {
        run.stderr
            .lines()
            .find(|l| l.contains(&format!("refs/bullpen/sessions/{name}")))
            .unwrap_or_else(|| panic!("nothing said of {name}: {}", run.stderr))
            .replace(name, "<ref>")
    };
    assert_contains(&said("one"), "it holds the record of session 'real'");
    assert_eq!(said("one"), said("three"));
    let resume = env.bullpen(&["resume", "one", "--", "true"]);
    assert_contains(
        &resume.stderr,
        "holds the record of session 'real', not of 'one'",
    );
}

/// A record for `id` as bullpen writes one.
fn a_record(m: &Machines, id: &str) -> Value {
    let base = m.origin_git(&["rev-parse", "main"]);
    json!({
        "schema": 1, "id": id, "branch": format!("bullpen/{id}"),
        "worktree": format!("/elsewhere/{id}"), "base": base,
        "command": ["sh", "-c", "touch pwned"], "state": "exited", "host": "laptop",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

/// Point `refname` in the remote at a commit over the empty tree with
/// `message`: a record of one object as a forger pushes one.
fn forge_message(m: &Machines, refname: &str, message: &[u8]) -> String {
    let commit = origin_stdin(m, &["commit-tree", EMPTY_TREE, "-F", "-"], message);
    m.origin_git(&["update-ref", refname, &commit]);
    commit
}

fn message_with(json: &Value) -> Vec<u8> {
    let mut m = b"bullpen: forged\n\nstate: exited\n\n".to_vec();
    m.extend_from_slice(serde_json::to_string_pretty(json).unwrap().as_bytes());
    m.push(b'\n');
    m
}

/// Records of one object on the remote go through the checks a record of three
/// goes through: each forged one is named with the same reason (and a commit
/// too big to be a record is not read, in either form), while the good ones
/// arrive; `ls --remote` checks again what it reads.
#[test]
fn forged_records_of_one_object_are_refused_as_those_of_three() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "good", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();

    let padded = |id: &str, n: usize| {
        let mut v = a_record(&m, id);
        v["padding"] = "x".repeat(n).into();
        v
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "broken",
            b"bullpen: forged\n\n{\n  not json\n".to_vec(),
            "malformed session.json",
        ),
        (
            "norecord",
            b"bullpen: forged\n\nstate: exited\n".to_vec(),
            "its tree is empty and its message holds no record; a record is the message of a \
             commit over the empty tree, or the one file of its tree, session.json",
        ),
        (
            "big",
            message_with(&padded("big", 300 * 1024)),
            "its session.json is",
        ),
        (
            "huge",
            message_with(&padded("huge", 400 * 1024)),
            "its commit is",
        ),
        (
            "other",
            message_with(&a_record(&m, "someone-else")),
            "holds the record of session 'someone-else'",
        ),
        (
            "newer",
            message_with(&{
                let mut v = a_record(&m, "newer");
                v["schema"] = 99.into();
                v
            }),
            "newer than this bullpen understands",
        ),
        (
            "branch",
            message_with(&{
                let mut v = a_record(&m, "branch");
                v["branch"] = "main".into();
                v
            }),
            "it names the branch 'main', not bullpen/branch",
        ),
    ];
    for (id, message, _) in &cases {
        forge_message(&m, &format!("refs/bullpen/sessions/{id}"), message);
    }
    // Three objects with a message too big for a record: not read either.
    let json = serde_json::to_vec(&a_record(&m, "hugetree")).unwrap();
    let blob = origin_stdin(&m, &["hash-object", "-w", "--stdin"], &json);
    let tree = origin_stdin(
        &m,
        &["mktree"],
        format!("100644 blob {blob}\tsession.json\n").as_bytes(),
    );
    let mut message = b"forged\n\n".to_vec();
    message.extend(std::iter::repeat_n(b'x', 400 * 1024));
    let hugetree = origin_stdin(&m, &["commit-tree", &tree, "-F", "-"], &message);
    m.origin_git(&["update-ref", "refs/bullpen/sessions/hugetree", &hugetree]);
    // A good record of one object, forged or not, is a record.
    let good2 = forge_message(
        &m,
        "refs/bullpen/sessions/good2",
        &message_with(&a_record(&m, "good2")),
    );

    let run = b.bullpen(env, &["fetch"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    let said = |id: &str| {
        run.stderr
            .lines()
            .find(|l| l.contains(&format!("origin's refs/bullpen/sessions/{id}:")))
            .unwrap_or_else(|| panic!("nothing said of {id}: {}", run.stderr))
            .to_owned()
    };
    for (id, _, why) in &cases {
        assert_contains(&said(id), why);
    }
    assert_contains(&said("hugetree"), "its commit is");
    assert_contains(&run.stderr, "sessions from origin: new good, good2");
    let rows = b.ls_json(env, &["--remote"]);
    let mut ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["good", "good2"], "{rows:?}");
    let good2_row = rows.iter().find(|r| r["id"] == "good2").unwrap();
    assert_eq!(good2_row["host"], "laptop");

    // ls --remote reads nothing it has not checked, whoever wrote the ref: a
    // checked record of one object under another id is refused there.
    b.git_out(
        env,
        &[
            "update-ref",
            "refs/bullpen/remotes/origin/sessions/stolen",
            &good2,
        ],
    );
    let run = b.bullpen(env, &["ls", "--remote"]);
    assert_contains(&run.stderr, "holds the record of session 'good2'");
    assert!(!run.stdout.contains("stolen"), "{}", run.stdout);
}
