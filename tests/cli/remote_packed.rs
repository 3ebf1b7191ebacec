//! A fetch that wrote many refs leaves them packed (`git pack-refs --include`
//! of the namespaces it writes), so that later fetches and `ls --remote` read
//! one file, not thousands. Only the refs it wrote are packed, never one of
//! this clone's own; packed records are checked as loose ones are; a fetch
//! that brings nothing new runs no `git pack-refs`.

use std::path::Path;

use serde_json::{json, Value};

use crate::remote::{origin_stdin, Machine, Machines};
use crate::support::{assert_contains, make_executable, which_git, Env, BIN};

/// More sessions than a fetch needs to bring before it packs.
const MANY: usize = 70;

/// A session.json for `id` as bullpen writes one, on `base`.
fn record(id: &str, base: &str, state: &str) -> Value {
    json!({
        "schema": 1, "id": id, "branch": format!("bullpen/{id}"),
        "worktree": format!("/elsewhere/{id}"), "base": base,
        "command": ["true"], "state": state, "host": "laptop",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

/// The fast-import commands that point `refname` at a commit whose tree holds
/// `files` (name, content).
fn commit_of(refname: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out =
        format!("commit {refname}\ncommitter C <c@example.com> 1767225600 +0000\ndata 6\nevent\n")
            .into_bytes();
    for (name, content) in files {
        out.extend(format!("M 100644 inline {name}\ndata {}\n", content.len()).bytes());
        out.extend_from_slice(content);
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// Sessions `p000`.. on origin, each a record and a branch one commit past
/// main, made in one `git fast-import`.
fn many_on_origin(m: &Machines, n: usize) {
    let base = m.origin_git(&["rev-parse", "main"]);
    let mut stream = Vec::new();
    for i in 0..n {
        let id = format!("p{i:03}");
        let json = record(&id, &base, "exited").to_string();
        stream.extend(commit_of(
            &format!("refs/bullpen/sessions/{id}"),
            &[("session.json", json.as_bytes())],
        ));
        stream.extend(
            format!(
                "commit refs/heads/bullpen/{id}\ncommitter C <c@example.com> 1767225600 +0000\n\
                 data 5\nwork\nfrom {base}\nM 100644 inline {id}.txt\ndata 2\n{i:02}\n\n"
            )
            .bytes(),
        );
    }
    origin_stdin(m, &["fast-import", "--quiet"], &stream);
}

/// The loose ref files under `dir` (relative to the git dir), as ref names.
fn loose(m: &Machine, dir: &str) -> Vec<String> {
    let git_dir = m.dir.join(".git");
    let mut out = Vec::new();
    let mut todo = vec![git_dir.join(dir)];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let name = path.strip_prefix(&git_dir).unwrap();
                out.push(name.to_str().unwrap().to_owned());
            }
        }
    }
    out.sort();
    out
}

fn packed(m: &Machine) -> String {
    std::fs::read_to_string(m.dir.join(".git/packed-refs")).unwrap_or_default()
}

/// This clone's own refs, loose: they must stay as they are.
const OWN: [&str; 4] = [
    "refs/heads/mine",
    "refs/tags/t1",
    "refs/remotes/origin/elsewhere",
    "refs/bullpen/elsewhere",
];

fn own_loose_refs(m: &Machines) {
    for r in OWN {
        m.b.git_out(&m.env, &["update-ref", r, "HEAD"]);
    }
}

/// A fetch of many sessions packs the records it fetched and checked and the
/// branches, and nothing of this clone's own; `ls --remote` reads them; a
/// later fetch takes an update, drops what the remote deleted and refuses a
/// forgery over a packed copy (which stays); a forged copy packed here is
/// refused as a loose one is.
#[test]
fn a_fetch_of_many_sessions_packs_what_it_wrote_and_nothing_else() {
    let m = Machines::new();
    let (env, b) = (&m.env, &m.b);
    many_on_origin(&m, MANY);
    own_loose_refs(&m);

    let run = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&run.stderr, &format!("new {MANY}"));
    for dir in [
        "refs/bullpen/incoming/origin/sessions",
        "refs/bullpen/remotes/origin/sessions",
        "refs/remotes/origin/bullpen",
    ] {
        assert_eq!(loose(b, dir), Vec::<String>::new(), "{dir} is packed");
    }
    let packed_refs = packed(b);
    for r in [
        "refs/bullpen/incoming/origin/sessions/p000",
        "refs/bullpen/remotes/origin/sessions/p069",
        "refs/remotes/origin/bullpen/p042",
    ] {
        assert_contains(&packed_refs, &format!(" {r}\n"));
    }
    for r in OWN {
        assert!(b.dir.join(".git").join(r).is_file(), "{r} is still loose");
        assert!(!packed_refs.contains(r), "{r} was packed:\n{packed_refs}");
    }

    let rows = b.ls_json(env, &["--remote"]);
    assert_eq!(rows.len(), MANY);
    assert!(rows.iter().all(|r| r["ahead"] == 1), "{rows:?}");
    // Completion reads the names without the refs: packed ones too.
    let out = env
        .cmd(BIN, &b.dir)
        .env("GIT_BULLPEN_COMPLETE", "fish")
        .args(["--", "git-bullpen", "resume", "origin/"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let offered = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        offered
            .lines()
            .filter(|l| l.starts_with("origin/p"))
            .count(),
        MANY,
        "{offered}"
    );

    // On origin: p001 continued, p002 deleted, p003 replaced by a forgery.
    let base = m.origin_git(&["rev-parse", "main"]);
    let mut stream = Vec::new();
    let continued = record("p001", &base, "stopped").to_string();
    stream.extend(commit_of(
        "refs/bullpen/sessions/p001",
        &[("session.json", continued.as_bytes())],
    ));
    let forged = record("p003", &base, "exited").to_string();
    stream.extend(commit_of(
        "refs/bullpen/sessions/p003",
        &[("session.json", forged.as_bytes()), ("run.sh", b"rm -rf ~")],
    ));
    origin_stdin(&m, &["fast-import", "--quiet", "--force"], &stream);
    m.origin_git(&["update-ref", "-d", "refs/bullpen/sessions/p002"]);

    let run = b.bullpen(env, &["fetch"]).code();
    assert_eq!(run, 1, "a refused record makes the fetch exit 1");
    let rows = b.ls_json(env, &["--remote"]);
    let state = |id: &str| {
        rows.iter()
            .find(|r| r["id"] == id)
            .map(|r| r["state"].as_str().unwrap().to_owned())
    };
    assert_eq!(rows.len(), MANY - 1, "p002 is gone");
    assert_eq!(state("p001").as_deref(), Some("stopped"));
    assert_eq!(state("p002"), None);
    assert_eq!(
        state("p003").as_deref(),
        Some("exited"),
        "the copy checked before stays"
    );
    let p003 = b.git_out(
        env,
        &["rev-parse", "refs/bullpen/remotes/origin/sessions/p003"],
    );
    assert_ne!(
        p003,
        m.origin_git(&["rev-parse", "refs/bullpen/sessions/p003"]),
        "the forgery was not taken"
    );

    // A copy forged here with plain git, then packed: refused by ls --remote.
    let incoming = b.git_out(
        env,
        &["rev-parse", "refs/bullpen/incoming/origin/sessions/p003"],
    );
    let tracking = "refs/bullpen/remotes/origin/sessions/p004";
    b.git_out(env, &["update-ref", tracking, &incoming]);
    b.git_out(env, &["pack-refs", "--include", tracking]);
    assert!(packed(b).contains(&format!(" {tracking}\n")));
    let run = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&run.stderr, &format!("skipping {tracking}"));
    assert!(!run.stdout.contains("origin/p004"), "{}", run.stdout);
}

/// A `git` wrapper that logs each git subcommand bullpen runs.
fn logging_git(m: &mut Machine, env: &Env) -> std::path::PathBuf {
    let dir = env.root().join("bin-log");
    std::fs::create_dir_all(&dir).unwrap();
    let log = env.root().join("git.log");
    let wrapper = format!(
        "#!/bin/sh\necho \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n",
        log = log.display(),
        real = which_git(),
    );
    let path = dir.join("git");
    std::fs::write(&path, wrapper).unwrap();
    make_executable(&path);
    m.path_prefix = Some(dir);
    log
}

fn ran_pack_refs(log: &Path) -> bool {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains(" pack-refs "))
}

/// A fetch with nothing new, or with a few sessions new, runs no `git
/// pack-refs`: what it costs is paid only by a fetch that wrote many refs.
#[test]
fn a_fetch_that_wrote_few_refs_packs_nothing() {
    let mut m = Machines::new();
    many_on_origin(&m, MANY);
    let log = logging_git(&mut m.b, &m.env);
    let (env, b) = (&m.env, &m.b);
    b.bullpen(env, &["fetch"]).ok();
    assert!(ran_pack_refs(&log), "the first fetch packs");

    std::fs::remove_file(&log).unwrap();
    let run = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&run.stderr, &format!("{MANY} unchanged"));
    assert!(std::fs::read_to_string(&log).unwrap().contains("fetch"));
    assert!(!ran_pack_refs(&log), "nothing new, nothing packed");

    let base = m.origin_git(&["rev-parse", "main"]);
    let json = record("late", &base, "exited").to_string();
    let stream = commit_of(
        "refs/bullpen/sessions/late",
        &[("session.json", json.as_bytes())],
    );
    origin_stdin(&m, &["fast-import", "--quiet"], &stream);
    std::fs::remove_file(&log).unwrap();
    let run = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&run.stderr, "new late");
    assert!(!ran_pack_refs(&log), "one new session, nothing packed");
    assert!(b
        .dir
        .join(".git/refs/bullpen/remotes/origin/sessions/late")
        .is_file());
}
