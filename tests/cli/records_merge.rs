//! Records that merge: two machines continue one session in turn, and its
//! record (a commit chain) is joined the way git joins history, while a branch
//! that truly diverged is still refused, and a forged record gains nothing.

use std::path::Path;

use serde_json::Value;

use crate::remote::{args, commit, Machine, Machines};
use crate::support::{assert_contains, record_json, Env};

/// The parents of `rev` in the bare remote.
fn origin_parents(m: &Machines, rev: &str) -> Vec<String> {
    m.origin_git(&["rev-list", "--parents", "-n1", rev])
        .split(' ')
        .skip(1)
        .map(str::to_owned)
        .collect()
}

fn origin_record(m: &Machines, id: &str) -> Value {
    let rev = format!("refs/bullpen/sessions/{id}");
    serde_json::from_str(&record_json(|a| m.origin_git(a), &rev)).unwrap()
}

fn rev(env: &Env, machine: &Machine, rev: &str) -> String {
    machine.git_out(env, &["rev-parse", rev])
}

/// `git merge --ff-only origin/bullpen/<id>` in the session's worktree.
fn ff_merge(env: &Env, machine: &Machine, id: &str) {
    let path = machine.bullpen(env, &["path", id]).ok().stdout;
    machine.git_out(
        env,
        &[
            "-C",
            path.trim(),
            "merge",
            "-q",
            "--ff-only",
            &format!("origin/bullpen/{id}"),
        ],
    );
}

/// The laptop starts and pushes, the box continues and pushes, the laptop
/// fetches and goes on from the box's work (the README, to here).
fn walkthrough_to_the_merge(m: &Machines) {
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(
        env,
        &args(
            &["spawn", "fix-login"],
            &commit("laptop.txt", "work on the laptop"),
        ),
    )
    .ok();
    a.bullpen(env, &["push", "origin", "fix-login"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    b.bullpen(
        env,
        &args(
            &["resume", "origin/fix-login"],
            &commit("box.txt", "work on the build box"),
        ),
    )
    .ok();
    b.bullpen(env, &["push"]).ok();
    a.bullpen(env, &["fetch"]).ok();
    ff_merge(env, a, "fix-login");
}

/// The README's walkthrough one step further: the laptop continues after
/// `merge --ff-only origin/bullpen/<id>` and pushes; then the box in turn.
#[test]
fn the_walkthrough_goes_on_on_the_laptop_and_the_records_join() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    walkthrough_to_the_merge(&m);
    let box_record = rev(env, b, "refs/bullpen/sessions/fix-login");
    let laptop_before = rev(env, a, "refs/bullpen/sessions/fix-login");

    // The laptop continues: its record moves on from its own last event, the
    // remote's from the box's.
    a.bullpen(
        env,
        &args(
            &["resume", "fix-login"],
            &commit("laptop2.txt", "more on the laptop"),
        ),
    )
    .ok();
    let laptop_ours = rev(env, a, "refs/bullpen/sessions/fix-login");
    let pushed = a.bullpen(env, &["push"]).ok();
    assert_contains(
        &pushed.stderr,
        "pushed to origin: fix-login (record, branch)",
    );
    assert_contains(
        &pushed.stderr,
        "joined session fix-login's record with origin's: both histories are in `git log \
         refs/bullpen/sessions/fix-login`",
    );
    assert!(!pushed.stderr.contains("not pushing"), "{}", pushed.stderr);

    // The join: this clone's record here and on origin, its parents the
    // laptop's last event and the box's, its state the later one (the laptop's).
    let joined = rev(env, a, "refs/bullpen/sessions/fix-login");
    assert_ne!(joined, laptop_ours);
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(joined.as_str())
    );
    assert_eq!(
        origin_parents(&m, "refs/bullpen/sessions/fix-login"),
        [laptop_ours.clone(), box_record.clone()]
    );
    let record = origin_record(&m, "fix-login");
    assert_eq!(record["host"], "laptop");
    assert_eq!(record["state"], "exited");
    assert_eq!(
        m.origin_ref("refs/heads/bullpen/fix-login"),
        Some(rev(env, a, "refs/heads/bullpen/fix-login"))
    );
    // Both histories in the log.
    let events = a.git_out(
        env,
        &["log", "--format=%s", "refs/bullpen/sessions/fix-login"],
    );
    assert_contains(
        &events,
        "bullpen: fix-login joined origin's record (there: exited on build-box)",
    );
    assert_contains(&events, "provisioning (continues origin/fix-login)");
    assert_eq!(events.matches("exited 0").count(), 3, "{events}");
    m.origin_git(&["merge-base", "--is-ancestor", &laptop_before, &joined]);

    // The box fetches: the remote has more of the session; its push leaves it.
    let fetched = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&fetched.stderr, "updated fix-login");
    let again = b.bullpen(env, &["push"]).ok();
    assert_contains(
        &again.stderr,
        "origin has more of session fix-login than this clone",
    );
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(joined.as_str())
    );

    // And the box goes on in turn: joined again, the other way round.
    ff_merge(env, b, "fix-login");
    b.bullpen(
        env,
        &args(
            &["resume", "fix-login"],
            &commit("box2.txt", "more on the build box"),
        ),
    )
    .ok();
    let box_ours = rev(env, b, "refs/bullpen/sessions/fix-login");
    let pushed = b.bullpen(env, &["push"]).ok();
    assert_contains(
        &pushed.stderr,
        "joined session fix-login's record with origin's",
    );
    assert_eq!(
        origin_parents(&m, "refs/bullpen/sessions/fix-login"),
        [box_ours, joined]
    );
    assert_eq!(origin_record(&m, "fix-login")["host"], "build-box");
    let wt = b.worktree_of(env, "fix-login");
    for f in ["laptop.txt", "box.txt", "laptop2.txt", "box2.txt"] {
        assert!(wt.join(f).exists(), "{f}");
    }
}

/// `fetch` joins too, for the local view, when this clone's record is the
/// later: the next push is then a plain fast-forward.
#[test]
fn fetch_joins_the_local_record_when_it_is_the_later() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    walkthrough_to_the_merge(&m);
    // The box records one more event (a run that commits nothing) and pushes it.
    b.bullpen(env, &["resume", "fix-login", "--", "true"]).ok();
    b.bullpen(env, &["push"]).ok();
    let box_record = rev(env, b, "refs/bullpen/sessions/fix-login");
    // The laptop goes on after that, then fetches.
    a.bullpen(
        env,
        &args(
            &["resume", "fix-login"],
            &commit("laptop2.txt", "more on the laptop"),
        ),
    )
    .ok();
    let laptop_ours = rev(env, a, "refs/bullpen/sessions/fix-login");
    let fetched = a.bullpen(env, &["fetch"]).ok();
    assert_contains(
        &fetched.stderr,
        "joined session fix-login's record with origin's",
    );
    let joined = rev(env, a, "refs/bullpen/sessions/fix-login");
    let parents = a.git_out(env, &["rev-list", "--parents", "-n1", &joined]);
    assert_eq!(parents, format!("{joined} {laptop_ours} {box_record}"));
    // This clone's own record keeps this clone's own fields.
    let record: Value = serde_json::from_str(&record_json(|x| a.git_out(env, x), &joined)).unwrap();
    assert_eq!(record["host"], "laptop");
    assert_eq!(
        record["worktree"],
        a.worktree_of(env, "fix-login").to_str().unwrap()
    );
    let pushed = a.bullpen(env, &["push"]).ok();
    assert_contains(
        &pushed.stderr,
        "pushed to origin: fix-login (record, branch)",
    );
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(joined.as_str())
    );
}

/// Both records moved on, but the branches did too: nothing is joined or
/// pushed, and the branch is named.
#[test]
fn a_branch_that_truly_diverged_is_still_refused_and_named() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    walkthrough_to_the_merge(&m);
    // The laptop's worktree forgets the box's commit and makes its own.
    let path = a.bullpen(env, &["path", "fix-login"]).ok().stdout;
    a.git_out(env, &["-C", path.trim(), "reset", "-q", "--hard", "HEAD~1"]);
    a.bullpen(
        env,
        &args(
            &["resume", "fix-login"],
            &commit("other.txt", "another way on the laptop"),
        ),
    )
    .ok();
    let before = m.origin_ref("refs/bullpen/sessions/fix-login");
    let ours = rev(env, a, "refs/bullpen/sessions/fix-login");
    let run = a.bullpen(env, &["push"]).fails();
    assert_contains(
        &run.stderr,
        "not pushing session fix-login: origin's bullpen/fix-login has commits that this \
         clone's lacks",
    );
    assert!(!run.stderr.contains("joined"), "{}", run.stderr);
    assert_eq!(m.origin_ref("refs/bullpen/sessions/fix-login"), before);
    assert_eq!(rev(env, a, "refs/bullpen/sessions/fix-login"), ours);
}

/// Write a record commit on origin: `json` as session.json, `parents` as its
/// parents; point `refs/bullpen/sessions/<id>` there.
fn forge(m: &Machines, id: &str, json: &Value, parents: &[&str]) -> String {
    let dir = m.env.root().join("forge");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("session.json");
    std::fs::write(&file, serde_json::to_vec_pretty(json).unwrap()).unwrap();
    let blob = m.origin_git(&["hash-object", "-w", file.to_str().unwrap()]);
    let tree = crate::remote::origin_stdin(
        m,
        &["mktree"],
        format!("100644 blob {blob}\tsession.json\n").as_bytes(),
    );
    let mut argv = vec!["commit-tree", tree.as_str(), "-m", "bullpen: forged"];
    for p in parents {
        argv.push("-p");
        argv.push(p);
    }
    let commit = m.origin_git(&argv);
    m.origin_git(&[
        "update-ref",
        &format!("refs/bullpen/sessions/{id}"),
        &commit,
    ]);
    commit
}

/// This machine's time half an hour from now, as a record writes it.
pub(crate) fn in_half_an_hour() -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "-d", "+30 minutes", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Forged records on the remote: one that shares no event is refused; one
/// whose events claim a later time wins the join only on the remote (this
/// clone's record, worktree and proof stay its own); one carrying this clone's
/// id, joined here as a second parent, is never taken for this clone's own.
#[test]
fn forged_records_gain_nothing_from_a_join() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    walkthrough_to_the_merge(&m);
    a.bullpen(env, &["resume", "fix-login", "--", "true"]).ok();
    let ours = rev(env, a, "refs/bullpen/sessions/fix-login");
    let box_record = rev(env, b, "refs/bullpen/sessions/fix-login");
    let mut json = origin_record(&m, "fix-login");

    // Unrelated: no parent in common with this clone's record.
    forge(&m, "fix-login", &json, &[]);
    let run = a.bullpen(env, &["push"]).fails();
    assert_contains(
        &run.stderr,
        "not pushing session fix-login: its record on origin shares no event with this one",
    );
    assert_eq!(rev(env, a, "refs/bullpen/sessions/fix-login"), ours);

    // Events that reorder: a later time (within the hour a clock may be
    // ahead), another machine's paths and process.
    json["updated_at"] = in_half_an_hour().into();
    json["state"] = "running".into();
    json["host"] = "evil".into();
    json["worktree"] = a.dir.to_str().unwrap().into();
    let forged = forge(&m, "fix-login", &json, &[&box_record]);
    let run = a.bullpen(env, &["push"]).ok();
    assert_contains(&run.stderr, "pushed to origin: fix-login (record)");
    // The join went to origin only, holding what origin had; here nothing moved.
    assert_eq!(
        origin_parents(&m, "refs/bullpen/sessions/fix-login"),
        [ours.clone(), forged]
    );
    assert_eq!(origin_record(&m, "fix-login")["host"], "evil");
    assert_eq!(rev(env, a, "refs/bullpen/sessions/fix-login"), ours);
    let here = a.ls_json(env, &["fix-login"]);
    assert_eq!(here[0]["host"], "laptop");
    assert_eq!(
        here[0]["worktree"],
        a.worktree_of(env, "fix-login").to_str().unwrap()
    );
    assert!(Path::new(here[0]["worktree"].as_str().unwrap()).exists());

    // This clone's id copied into an older record that continues the box's:
    // fetch joins it into this clone's record, as a second parent only, and
    // `ls --remote` still says it only claims this clone.
    let origin_now = m.origin_ref("refs/bullpen/sessions/fix-login").unwrap();
    a.bullpen(env, &["resume", "fix-login", "--", "true"]).ok();
    let ours = rev(env, a, "refs/bullpen/sessions/fix-login");
    let mut json = origin_record(&m, "fix-login");
    let mine = std::fs::read_to_string(a.dir.join(".git/bullpen/clone-id")).unwrap();
    json["clone_id"] = mine.trim().into();
    json["host"] = "laptop".into();
    json["state"] = "exited".into();
    json["updated_at"] = "2000-01-01T00:00:00Z".into();
    let forged = forge(&m, "fix-login", &json, &[&origin_now]);
    let fetched = a.bullpen(env, &["fetch"]).ok();
    assert_contains(
        &fetched.stderr,
        "joined session fix-login's record with origin's",
    );
    assert_eq!(
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/fix-login^2"]),
        forged
    );
    assert_eq!(
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/fix-login^1"]),
        ours
    );
    let listed = a.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "laptop (claims this clone)");
}
