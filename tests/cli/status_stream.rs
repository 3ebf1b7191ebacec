//! `ls --status`: rows printed as their status is read, and PUBLISHED from
//! gc's own proof (squash and rebase merges too), cached by object ids but
//! never trusted by gc.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::gc::{branch_exists, gc, session, setup, spawn_pushed};
use crate::merged::{fetch, Forge};
use crate::support::{Env, BIN};

/// Two commits, each with a file of its own.
const TWO: &str = "echo one > one.txt && git add one.txt && git commit -q -m 'one' && \
                   echo two > two.txt && git add two.txt && git commit -q -m 'two'";

/// Two other commits.
const OTHER_TWO: &str =
    "echo three > three.txt && git add three.txt && git commit -q -m 'three' && \
                         echo four > four.txt && git add four.txt && git commit -q -m 'four'";

/// A commit no remote has in any form.
const MINE: &str = "echo mine > mine.txt && git add mine.txt && git commit -q -m 'mine'";

fn status_json(env: &Env) -> Vec<Value> {
    let out = env.bullpen(&["ls", "--status", "--json"]).ok().stdout;
    serde_json::from_str(&out).expect("ls --status --json parses")
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {rows:#?}"))
}

/// The PUBLISHED cell of `id` in the table of `ls --status`.
fn published_cell(env: &Env, id: &str) -> String {
    let table = env.bullpen(&["ls", "--status"]).ok().stdout;
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("no line for {id} in\n{table}"));
    let header = table.lines().next().unwrap_or_default();
    let at = header.find("PUBLISHED").expect("a PUBLISHED column");
    line.get(at..)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn squash_and_rebase_merged_sessions_are_published_as_gc_proves_and_gc_removes_them() {
    let env = setup();
    let sq_wt = spawn_pushed(&env, "sq", TWO);
    let rb_wt = spawn_pushed(&env, "rb", OTHER_TWO);
    let first = env.git_out(&["rev-parse", "bullpen/rb~1"]);
    let second = env.git_out(&["rev-parse", "bullpen/rb"]);
    let un_wt = env.spawn_sh("un", MINE);
    let forge = Forge::new(&env);
    forge.squash(&env, &["sq"]);
    forge.pick(&env, &[&first, &second]);
    forge.push_and_delete(&env, &["rb"]);
    fetch(&env);

    // No remote-tracking ref reaches either tip: only the proof of content
    // tells them published.
    for _ in 0..2 {
        // The second time from the cache: the same verdicts.
        let rows = status_json(&env);
        for id in ["sq", "rb"] {
            let r = row(&rows, id);
            assert_eq!(r["published"], true, "{r}");
            assert_eq!(r["unpublished"], 2, "its commits are on no remote ref: {r}");
        }
        let un = row(&rows, "un");
        assert_eq!(
            (&un["published"], &un["unpublished"]),
            (&false.into(), &1.into())
        );
        assert_eq!(published_cell(&env, "sq"), "yes");
        assert_eq!(published_cell(&env, "rb"), "yes");
        assert_eq!(published_cell(&env, "un"), "no");
    }
    let run = env.bullpen(&["ls", "--status"]).ok();
    assert!(
        !run.stderr.contains("looking for the changes"),
        "ls says nothing of the refs it looks at: {}",
        run.stderr
    );

    let (run, entries) = gc(&env, &[]);
    run.ok();
    for (id, wt) in [("sq", &sq_wt), ("rb", &rb_wt)] {
        assert_eq!(session(&entries, id)["action"], "removed", "{entries:#?}");
        assert!(!wt.exists() && !branch_exists(&env, id));
    }
    assert_eq!(session(&entries, "un")["action"], "kept");
    assert!(un_wt.exists() && branch_exists(&env, "un"));
}

#[test]
fn a_cached_verdict_counts_only_for_the_remote_refs_it_was_made_with() {
    let env = setup();
    let wt = env.spawn_sh("late", MINE);
    env.git(&env.repo, &["push", "-q", "origin", "bullpen/late"])
        .ok();
    let forge = Forge::new(&env);
    forge.sync(&env);
    let tip = forge.git(&env, &["rev-parse", "origin/bullpen/late"]);
    assert_eq!(published_cell(&env, "late"), "yes");
    // Deleted on the remote, never merged: no longer published, although the
    // branch tip did not move.
    forge.push_and_delete(&env, &["late"]);
    fetch(&env);
    assert_eq!(published_cell(&env, "late"), "no");
    // Then squash-merged by someone who had it: published again.
    forge.sync(&env);
    forge.git(&env, &["merge", "-q", "--squash", &tip]);
    forge.git(&env, &["commit", "-q", "-m", "Squashed late"]);
    forge.git(&env, &["push", "-q", "origin", "main"]);
    fetch(&env);
    assert_eq!(published_cell(&env, "late"), "yes");
    assert!(wt.exists());
}

#[test]
fn gc_never_takes_a_published_verdict_from_the_cache() {
    let env = setup();
    let wt = env.spawn_sh("mine", MINE);
    assert_eq!(published_cell(&env, "mine"), "no");
    // Rewrite the cache (local, not proof) to say the session is published.
    let cache = env.repo.join(".git/bullpen/cache/ls");
    let text = std::fs::read_to_string(&cache).expect("ls --status wrote its cache");
    let forged: Vec<String> = text
        .lines()
        .map(|l| match l.strip_prefix("p ") {
            Some(rest) => {
                let mut f: Vec<&str> = rest.split(' ').collect();
                f[3] = "1";
                f[4] = "0";
                format!("p {}", f.join(" "))
            }
            None => l.to_owned(),
        })
        .collect();
    assert_ne!(
        forged.join("\n"),
        text.trim_end(),
        "the cache holds a verdict"
    );
    std::fs::write(&cache, forged.join("\n") + "\n").unwrap();
    assert_eq!(
        published_cell(&env, "mine"),
        "yes",
        "ls shows what the cache says: only an optimisation of a listing"
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "mine");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.exists() && branch_exists(&env, "mine"));
}

/// The table shows the first rows while a later worktree's status is still
/// being read: the last session's status is held by a clean filter (run by
/// status to hash a file whose stat changed) that waits on a FIFO.
#[test]
fn rows_are_printed_as_their_status_is_read() {
    let env = Env::new();
    let gate = env.root().join("gate");
    let ok = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
    std::fs::write(env.repo.join(".gitattributes"), "README filter=gate\n").unwrap();
    env.git(&env.repo, &["add", ".gitattributes"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "attributes"])
        .ok();
    for id in ["s1", "s2", "s3"] {
        env.spawn_sh(id, "true");
    }
    // The filter waits on the gate only in the worktree of `s3` (set now: git
    // itself runs it too).
    let filter = format!(
        "case \"$PWD\" in */s3) cat '{}' >/dev/null;; esac; cat",
        gate.display()
    );
    // In the user's own (global) config: bullpen runs no program that a
    // repository's own config names (`git::pinned`).
    env.git(
        &env.repo,
        &["config", "--global", "filter.gate.clean", &filter],
    )
    .ok();
    let s3 = env.worktree_of("s3");
    // Its README looks touched: status hashes it, through the filter.
    let set = std::process::Command::new("touch")
        .args(["-d", "2001-01-01", "README"])
        .current_dir(&s3)
        .status()
        .expect("touch");
    assert!(set.success());

    let mut child = env
        .cmd(BIN, &env.repo)
        .args(["ls", "--status"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git-bullpen");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Open the gate (also to end the run when the test fails).
    let release = || {
        let mut g = std::fs::OpenOptions::new()
            .write(true)
            .open(&gate)
            .expect("open the gate");
        let _ = g.write_all(b"go\n");
    };
    // A generous bound on a failure only: each line comes on an event.
    let bound = Duration::from_secs(120);
    let mut early = Vec::new();
    for _ in 0..3 {
        match rx.recv_timeout(bound) {
            Ok(line) => early.push(line),
            Err(_) => {
                release();
                let _ = child.wait();
                panic!("ls --status printed only {early:?} before s3's status was read");
            }
        }
    }
    // Header, s1 and s2 are out while s3's status waits at the gate.
    assert!(early[0].contains("CHANGES") && early[0].contains("PUBLISHED"));
    assert!(early[1].trim_start().starts_with("s1"), "{early:?}");
    assert!(early[2].trim_start().starts_with("s2"), "{early:?}");
    assert!(rx.try_recv().is_err(), "nothing more before the gate opens");
    release();
    let status = child.wait().expect("wait for ls");
    reader.join().expect("reader");
    let rest: Vec<String> = rx.try_iter().collect();
    assert!(status.success(), "{status:?}");
    assert!(rest[0].trim_start().starts_with("s3"), "{rest:?}");
    assert!(rest[0].contains("clean"), "{rest:?}");
    assert!(rest[1].starts_with("worktree root: "), "{rest:?}");
}
