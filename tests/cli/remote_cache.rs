//! What makes `ls --remote` and a `fetch` with nothing new cheap is only an
//! optimisation: `ls --remote`'s cache of the checks' verdicts
//! (`<common>/bullpen/cache/remote`) and the state a finished fetch leaves
//! (`<common>/bullpen/cache/fetched-<remote>`). A record changed behind the
//! cache's back is checked, a forged cache changes no verdict, a fetch stopped
//! half-way leaves the next one to check everything, and a refused record is
//! reported by every fetch.

use std::path::{Path, PathBuf};

use crate::remote::{args, commit, Machine, Machines};
use crate::support::{assert_contains, make_executable, record_json, which_git, Env};

/// `git <args>` in `dir` with `input` on stdin; trimmed stdout.
fn git_stdin(env: &Env, dir: &Path, args: &[&str], input: &[u8]) -> String {
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

/// A commit in `dir` whose tree holds `files`, made with plumbing.
fn forge(env: &Env, dir: &Path, files: &[(&str, &[u8])]) -> String {
    let mut tree = String::new();
    for (name, content) in files {
        let blob = git_stdin(env, dir, &["hash-object", "-w", "--stdin"], content);
        tree.push_str(&format!("100644 blob {blob}\t{name}\n"));
    }
    let tree = git_stdin(env, dir, &["mktree"], tree.as_bytes());
    env.git(dir, &["commit-tree", &tree, "-m", "forged"])
        .ok()
        .stdout
        .trim()
        .to_owned()
}

fn cache_file(m: &Machine) -> PathBuf {
    m.dir.join(".git/bullpen/cache/remote")
}

/// Sessions good and other from a, fetched and listed by b (which fills b's cache).
fn fetched_and_listed() -> Machines {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "good"], &commit("g1", "g1")))
        .ok();
    a.bullpen(env, &["spawn", "other", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let rows = b.ls_json(env, &["--remote"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(cache_file(b).is_file(), "ls --remote wrote its cache");
    m
}

/// A tracking ref pointed elsewhere by hand after the cache was written: the
/// listing checks what the ref now names, whatever the cache holds for the
/// commit it named before, or for the commit it names now under another id.
#[test]
fn a_record_changed_behind_the_caches_back_is_checked() {
    let m = fetched_and_listed();
    let (env, b) = (&m.env, &m.b);
    let tracking = |id: &str| format!("refs/bullpen/remotes/origin/sessions/{id}");
    let good_json = record_json(|a| b.git_out(env, a), &tracking("good"));

    // A record of another id, which the cache holds as checked for that id.
    let other = b.git_out(env, &["rev-parse", &tracking("other")]);
    b.git_out(env, &["update-ref", &tracking("good"), &other]);
    let run = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(
        &run.stderr,
        "skipping refs/bullpen/remotes/origin/sessions/good: it holds the record of session 'other'",
    );
    assert!(!run.stdout.contains("origin/good"), "{}", run.stdout);

    // A commit that is no record (a second file beside session.json).
    let forged = forge(
        env,
        &b.dir,
        &[
            ("session.json", good_json.as_bytes()),
            ("payload.sh", b"rm -rf ~"),
        ],
    );
    b.git_out(env, &["update-ref", &tracking("good"), &forged]);
    let run = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(
        &run.stderr,
        "skipping refs/bullpen/remotes/origin/sessions/good: ",
    );
    assert_contains(&run.stderr, "holds 2 entries");
    assert_contains(&run.stdout, "origin/other");
}

/// A cache file that says a forged record passed the checks (an entry added
/// by hand, with or without the rest of the file) is not read: the forged
/// record is refused as it would be without a cache, and the good ones listed.
#[test]
fn a_forged_cache_changes_no_verdict() {
    let m = fetched_and_listed();
    let (env, b) = (&m.env, &m.b);
    let tracking = "refs/bullpen/remotes/origin/sessions/good";
    let good_json = record_json(|a| b.git_out(env, a), tracking);
    let forged = forge(
        env,
        &b.dir,
        &[
            ("session.json", good_json.as_bytes()),
            ("payload.sh", b"rm -rf ~"),
        ],
    );
    b.git_out(env, &["update-ref", tracking, &forged]);

    // The entry a cache would hold for it, were it a record: good's row.
    let real = std::fs::read_to_string(cache_file(b)).unwrap();
    let (body, mac) = real.split_at(real.trim_end().rfind('\n').unwrap() + 1);
    let row = body
        .lines()
        .find_map(|l| l.strip_prefix("r ")?.splitn(4, ' ').nth(3))
        .unwrap();
    let entry = format!("r {forged} origin good {row}\n");
    for text in [
        // Added to the real file, its MAC kept.
        format!("{body}{entry}{mac}"),
        // The real file's first line, the entry, no MAC.
        format!("{}\n{entry}", body.lines().next().unwrap()),
    ] {
        std::fs::write(cache_file(b), &text).unwrap();
        let run = b.bullpen(env, &["ls", "--remote"]).ok();
        assert_contains(
            &run.stderr,
            "skipping refs/bullpen/remotes/origin/sessions/good: ",
        );
        assert_contains(&run.stderr, "holds 2 entries");
        assert!(!run.stdout.contains("origin/good"), "{}", run.stdout);
        assert_contains(&run.stdout, "origin/other");
    }
}

/// A `git` first on PATH that does as git does, except as `run` says for
/// `git fetch` (bullpen runs `git -C <dir> [-c <pin>...] fetch ...`).
fn git_wrapper(m: &mut Machine, env: &Env, name: &str, run: &str) {
    let dir = env.root().join(format!("bin-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let wrapper = format!(
        "#!/bin/sh\nreal={real}\ncase \" $* \" in *\" fetch \"*)\n{run}\n;; esac\nexec \"$real\" \"$@\"\n",
        real = which_git(),
    );
    let path = dir.join("git");
    std::fs::write(&path, wrapper).unwrap();
    make_executable(&path);
    m.path_prefix = Some(dir);
}

/// A fetch killed after `git fetch` brought a record, before it was checked:
/// the next fetch, to which git says nothing changed, still checks and takes it.
#[test]
fn a_fetch_stopped_after_git_fetch_leaves_the_next_to_check_everything() {
    let mut m = Machines::new();
    m.a.bullpen(&m.env, &["spawn", "x", "--", "true"]).ok();
    m.a.bullpen(&m.env, &["push", "--all"]).ok();
    m.b.bullpen(&m.env, &["fetch"]).ok();
    m.a.bullpen(&m.env, &["spawn", "y", "--", "true"]).ok();
    m.a.bullpen(&m.env, &["push", "--all"]).ok();

    // The real fetch, then SIGKILL to bullpen, its parent.
    git_wrapper(
        &mut m.b,
        &m.env,
        "kill",
        "\"$real\" \"$@\"; kill -9 $PPID; exit 0",
    );
    let run = m.b.bullpen(&m.env, &["fetch"]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(run.status.signal(), Some(9), "{}", run.stderr);
    assert!(
        m.b.git(
            &m.env,
            &[
                "rev-parse",
                "-q",
                "--verify",
                "refs/bullpen/incoming/origin/sessions/y"
            ]
        )
        .status
        .success(),
        "git fetch brought y"
    );
    m.b.path_prefix = None;

    let run = m.b.bullpen(&m.env, &["fetch"]).ok();
    assert_contains(&run.stderr, "sessions from origin: new y; 1 unchanged");
    let rows = m.b.ls_json(&m.env, &["--remote"]);
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids, ["x", "y"]);
}

/// A record the remote holds that fails the checks is reported by every
/// fetch, also by one that brings nothing new (exit 1 each time).
#[test]
fn a_refused_record_is_reported_by_every_fetch() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "good", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    let bad = forge(env, &m.origin, &[("session.json", b"{ not json")]);
    m.origin_git(&["update-ref", "refs/bullpen/sessions/broken", &bad]);
    for round in 0..3 {
        let run = b.bullpen(env, &["fetch"]);
        assert_eq!(run.code(), 1, "round {round}: {}", run.stderr);
        assert_contains(
            &run.stderr,
            "warning: skipping origin's refs/bullpen/sessions/broken: ",
        );
        assert_contains(&run.stderr, "malformed session.json");
    }
    let run = b.bullpen(env, &["fetch"]);
    assert_contains(&run.stderr, "sessions from origin: 1 unchanged");
}

/// A git that does not know `git fetch --porcelain` (before 2.41): the fetch
/// is made without it and every record compared, as before.
#[test]
fn a_git_without_fetch_porcelain_still_fetches() {
    let mut m = Machines::new();
    m.a.bullpen(&m.env, &["spawn", "x", "--", "true"]).ok();
    m.a.bullpen(&m.env, &["push", "--all"]).ok();
    git_wrapper(
        &mut m.b,
        &m.env,
        "old",
        "case \" $* \" in *\" --porcelain \"*) echo \"error: unknown option \\`porcelain'\" >&2; \
         exit 129;; esac",
    );
    for expected in ["new x", "1 unchanged"] {
        let run = m.b.bullpen(&m.env, &["fetch"]).ok();
        assert_contains(&run.stderr, &format!("sessions from origin: {expected}"));
    }
    m.a.bullpen(&m.env, &["spawn", "y", "--", "true"]).ok();
    m.a.bullpen(&m.env, &["push", "--all"]).ok();
    let run = m.b.bullpen(&m.env, &["fetch"]).ok();
    assert_contains(&run.stderr, "sessions from origin: new y; 1 unchanged");
}
