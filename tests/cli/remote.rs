//! Sessions that travel with git: `push`, `fetch`, `ls --remote`, `resume
//! <remote>/<id>`, between two clones of one bare remote that play two machines
//! (each its own HOME, BULLPEN_HOME and host name, `BULLPEN_HOSTNAME`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::record_json as stored_json;
use crate::support::{assert_contains, make_executable, which_git, Env, Run, BIN};

/// One machine: a clone of `origin` with a home and a BULLPEN_HOME of its own.
pub struct Machine {
    pub dir: PathBuf,
    pub home: PathBuf,
    pub bullpen_home: PathBuf,
    pub host: String,
    /// Directories first on PATH (a `git` wrapper for fault injection).
    pub path_prefix: Option<PathBuf>,
}

impl Machine {
    pub fn cmd(&self, env: &Env, program: &str, cwd: &Path) -> Command {
        let mut c = env.cmd(program, cwd);
        c.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("GIT_CONFIG_GLOBAL", self.home.join(".gitconfig"))
            .env("BULLPEN_HOME", &self.bullpen_home)
            .env("BULLPEN_HOSTNAME", &self.host);
        if let Some(dir) = &self.path_prefix {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut p = dir.as_os_str().to_owned();
            p.push(":");
            p.push(path);
            c.env("PATH", p);
        }
        c
    }

    pub fn bullpen(&self, env: &Env, args: &[&str]) -> Run {
        self.bullpen_in(env, &self.dir, args)
    }

    pub fn bullpen_in(&self, env: &Env, cwd: &Path, args: &[&str]) -> Run {
        self.cmd(env, BIN, cwd)
            .args(args)
            .output()
            .expect("run git-bullpen")
            .into()
    }

    pub fn git(&self, env: &Env, args: &[&str]) -> Run {
        self.cmd(env, "git", &self.dir)
            .args(args)
            .output()
            .expect("run git")
            .into()
    }

    /// `git <args>`, asserting success; trimmed stdout.
    pub fn git_out(&self, env: &Env, args: &[&str]) -> String {
        self.git(env, args).ok().stdout.trim().to_owned()
    }

    pub fn ls_json(&self, env: &Env, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["ls", "--all", "--json"];
        all.extend_from_slice(args);
        let run = self.bullpen(env, &all).ok();
        serde_json::from_str(&run.stdout).expect("ls --json parses")
    }

    /// The worktree of session `id` here.
    pub fn worktree_of(&self, env: &Env, id: &str) -> PathBuf {
        let rows = self.ls_json(env, &[]);
        let row = rows
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no session {id}: {rows:?}"));
        PathBuf::from(row["worktree"].as_str().unwrap())
    }
}

/// A bare `origin` and two clones of it: `a` (the laptop) and `b` (the build box).
pub struct Machines {
    pub env: Env,
    pub origin: PathBuf,
    pub a: Machine,
    pub b: Machine,
}

impl Machines {
    pub fn new() -> Machines {
        Machines::with_hosts("laptop", "build-box")
    }

    pub fn with_hosts(a_host: &str, b_host: &str) -> Machines {
        let env = Env::new();
        let origin = env.add_bare_remote();
        env.git_out(&["push", "-q", "origin", "main"]);
        env.git(&origin, &["symbolic-ref", "HEAD", "refs/heads/main"])
            .ok();
        let machine = |name: &str, host: &str, dir: PathBuf| {
            let home = env.root().join(format!("home-{name}"));
            let bullpen_home = env.root().join(format!("bullpen-home-{name}"));
            for d in [&home, &bullpen_home] {
                std::fs::create_dir_all(d).unwrap();
            }
            Machine {
                dir,
                home,
                bullpen_home,
                host: host.to_owned(),
                path_prefix: None,
            }
        };
        let a = machine("a", a_host, env.repo.clone());
        let b_dir = env.root().join("b");
        env.git(
            &env.root(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                b_dir.to_str().unwrap(),
            ],
        )
        .ok();
        let b = machine("b", b_host, b_dir);
        Machines { env, origin, a, b }
    }

    /// Session `x` with one commit (`a1`) on machine a, pushed, and fetched by b.
    pub fn x_from_a_fetched_by_b(&self) {
        self.a
            .bullpen(&self.env, &args(&["spawn", "x"], &commit("a1", "a1")))
            .ok();
        self.a.bullpen(&self.env, &["push", "--all"]).ok();
        self.b.bullpen(&self.env, &["fetch"]).ok();
    }

    /// `git <args>` in the bare remote; trimmed stdout.
    pub fn origin_git(&self, args: &[&str]) -> String {
        self.env
            .git(&self.origin, args)
            .ok()
            .stdout
            .trim()
            .to_owned()
    }

    /// The commit `refname` points at in the remote, if it exists.
    pub fn origin_ref(&self, refname: &str) -> Option<String> {
        let run = self
            .env
            .git(&self.origin, &["rev-parse", "--verify", "-q", refname]);
        run.status.success().then(|| run.stdout.trim().to_owned())
    }
}

/// A command that commits a file named `name` with message `message`.
pub fn commit(name: &str, message: &str) -> Vec<String> {
    vec![
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("echo {name} > {name} && git add {name} && git commit -qm '{message}'"),
    ]
}

pub fn args<'a>(head: &[&'a str], tail: &'a [String]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(tail.iter().map(String::as_str))
        .collect()
}

/// The scenario: start on the laptop, push; continue on the build box, push;
/// see both histories on the laptop (the README's walkthrough, step by step).
#[test]
fn start_on_the_laptop_continue_on_the_build_box_see_both_on_the_laptop() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);

    // The laptop starts a session that commits, and pushes it.
    let laptop_commit = commit("laptop.txt", "work on the laptop");
    a.bullpen(env, &args(&["spawn", "fix-login"], &laptop_commit))
        .ok();
    let pushed = a.bullpen(env, &["push", "origin", "fix-login"]).ok();
    assert_contains(
        &pushed.stderr,
        "pushed to origin: fix-login (record, branch)",
    );
    assert_contains(&pushed.stderr, "notes pushed to origin");
    let laptop_record = a.git_out(env, &["rev-parse", "refs/bullpen/sessions/fix-login"]);
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(laptop_record.as_str())
    );

    // The build box fetches: the session is listed with the laptop's host.
    let fetched = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&fetched.stderr, "sessions from origin: new fix-login");
    let listed = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "origin/fix-login");
    assert_contains(&listed.stdout, "exited 0 on laptop, as of ");
    let rows = b.ls_json(env, &["--remote"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["remote"], "origin");
    assert_eq!(rows[0]["host"], "laptop");
    assert_eq!(rows[0]["state"], "exited");
    assert_eq!(rows[0]["ahead"], 1);
    // Its own sessions: none.
    assert!(b.ls_json(env, &[]).is_empty());

    // It continues the session: a new local worktree on bullpen/fix-login,
    // tracking origin's, with a commit of its own.
    let box_commit = commit("box.txt", "work on the build box");
    let resumed = b
        .bullpen(env, &args(&["resume", "origin/fix-login"], &box_commit))
        .ok();
    assert_contains(
        &resumed.stderr,
        "session fix-login continues origin/fix-login (last on laptop) on bullpen/fix-login, \
         tracking origin/bullpen/fix-login",
    );
    let wt = b.worktree_of(env, "fix-login");
    assert!(wt.starts_with(&b.bullpen_home), "{}", wt.display());
    assert!(wt.join("laptop.txt").exists() && wt.join("box.txt").exists());
    assert_eq!(
        b.git_out(env, &["-C", wt.to_str().unwrap(), "symbolic-ref", "HEAD"]),
        "refs/heads/bullpen/fix-login"
    );
    assert_eq!(
        b.git_out(
            env,
            &["rev-parse", "--abbrev-ref", "bullpen/fix-login@{upstream}"]
        ),
        "origin/bullpen/fix-login"
    );
    // The local record names where it came from, continues the laptop's, and
    // runs what was given here.
    let record: Value = serde_json::from_str(&stored_json(
        |a| b.git_out(env, a),
        "refs/bullpen/sessions/fix-login",
    ))
    .unwrap();
    assert_eq!(record["host"], "build-box");
    assert_eq!(record["resumed_from"]["remote"], "origin");
    assert_eq!(record["resumed_from"]["host"], "laptop");
    assert_eq!(record["resumed_from"]["record"], laptop_record.as_str());
    assert_eq!(record["command"][2], box_commit[3].as_str());
    assert_eq!(record["worktree"], wt.to_str().unwrap());
    let first_local = b.git_out(
        env,
        &[
            "rev-list",
            "--reverse",
            &format!("{laptop_record}..refs/bullpen/sessions/fix-login"),
        ],
    );
    let first_local = first_local.lines().next().unwrap();
    assert_eq!(
        b.git_out(env, &["rev-parse", &format!("{first_local}^")]),
        laptop_record
    );
    // The local proof, written as spawn writes it.
    let local = b.dir.join(".git/bullpen/local/fix-login");
    let created: Value =
        serde_json::from_slice(&std::fs::read(local.join("created.json")).unwrap()).unwrap();
    assert_eq!(created["worktree"], wt.to_str().unwrap());
    assert_eq!(created["command"]["argv"], record["command"]);
    assert!(!local.join("command.json").exists());

    // The build box pushes (origin has the session): a fast-forward of the
    // laptop's record and branch.
    let pushed = b.bullpen(env, &["push"]).ok();
    assert_contains(
        &pushed.stderr,
        "pushed to origin: fix-login (record, branch)",
    );
    let box_record = b.git_out(env, &["rev-parse", "refs/bullpen/sessions/fix-login"]);
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(box_record.as_str())
    );
    m.origin_git(&[
        "merge-base",
        "--is-ancestor",
        &laptop_record,
        "refs/bullpen/sessions/fix-login",
    ]);

    // The laptop fetches and sees both histories: the record's events on both
    // machines, both commits on the branch, each with its machine's note.
    let fetched = a.bullpen(env, &["fetch"]).ok();
    assert_contains(&fetched.stderr, "updated fix-login");
    let listed = a.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "exited 0 on build-box, as of ");
    let events = a.git_out(
        env,
        &[
            "log",
            "--format=%s",
            "refs/bullpen/remotes/origin/sessions/fix-login",
        ],
    );
    assert_contains(&events, "provisioning (continues origin/fix-login)");
    assert!(
        events.ends_with("bullpen: fix-login provisioning"),
        "{events}"
    );
    assert_eq!(events.matches("exited 0").count(), 2, "{events}");
    let log = a.git_out(
        env,
        &[
            "log",
            "--notes=bullpen",
            "--format=%s%n%N",
            "origin/bullpen/fix-login",
        ],
    );
    assert_contains(
        &log,
        "work on the build box\nbullpen-session: fix-login\nbullpen-command: sh -c 'echo box.txt",
    );
    assert_contains(
        &log,
        "work on the laptop\nbullpen-session: fix-login\nbullpen-command: sh -c 'echo laptop.txt",
    );
    // The laptop's own session is untouched, and pushing from it loses nothing:
    // the remote has more of it, and stays as it is.
    assert_eq!(
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/fix-login"]),
        laptop_record
    );
    let again = a.bullpen(env, &["push"]).ok();
    assert_contains(
        &again.stderr,
        "origin has more of session fix-login than this clone (last recorded exited on \
         build-box",
    );
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/fix-login").as_deref(),
        Some(box_record.as_str())
    );
    // The README's last step: the laptop's worktree goes on from the box's work.
    let path = a.bullpen(env, &["path", "fix-login"]).ok().stdout;
    a.git_out(
        env,
        &[
            "-C",
            path.trim(),
            "merge",
            "-q",
            "--ff-only",
            "origin/bullpen/fix-login",
        ],
    );
    assert!(Path::new(path.trim()).join("box.txt").exists());
}

/// `git <args>` in the bare remote with `input` on stdin; trimmed stdout.
pub fn origin_stdin(m: &Machines, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = m
        .env
        .cmd("git", &m.origin)
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

/// Point `refname` in the remote at a commit whose tree holds `files` (name,
/// content), made with plumbing: a record as a forger (or a bug) pushes one.
fn forge_on_origin(m: &Machines, refname: &str, files: &[(&str, &[u8])]) -> String {
    let mut tree = String::new();
    for (name, content) in files {
        let blob = origin_stdin(m, &["hash-object", "-w", "--stdin"], content);
        tree.push_str(&format!("100644 blob {blob}\t{name}\n"));
    }
    let tree = origin_stdin(m, &["mktree"], tree.as_bytes());
    let commit = m.origin_git(&["commit-tree", &tree, "-m", "forged"]);
    m.origin_git(&["update-ref", refname, &commit]);
    commit
}

/// A session.json for `id` as bullpen writes one.
fn record_json(m: &Machines, id: &str) -> Value {
    let base = m.origin_git(&["rev-parse", "main"]);
    json!({
        "schema": 1, "id": id, "branch": format!("bullpen/{id}"),
        "worktree": format!("/elsewhere/{id}"), "base": base,
        "command": ["sh", "-c", "touch pwned"], "state": "exited", "host": "laptop",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
    })
}

/// Records on the remote that are not what a record is are refused by fetch,
/// each named with its reason, while the good ones arrive; and `ls --remote`
/// checks again what it reads (a ref written here by plain git).
#[test]
fn malformed_and_oversized_records_are_refused_while_the_others_arrive() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "good", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();

    let ok = |id: &str| serde_json::to_vec(&record_json(&m, id)).unwrap();
    let mut big = record_json(&m, "big");
    big["padding"] = "x".repeat(300 * 1024).into();
    let big = serde_json::to_vec(&big).unwrap();
    type Files<'a> = Vec<(&'a str, Vec<u8>)>;
    let cases: Vec<(&str, Files, &str)> = vec![
        (
            "broken",
            vec![("session.json", b"{ not json".to_vec())],
            "malformed session.json",
        ),
        (
            "big",
            vec![("session.json", big)],
            "more than the 262144 bullpen reads",
        ),
        (
            "extra",
            vec![
                ("session.json", ok("extra")),
                ("payload.sh", b"rm -rf ~".to_vec()),
            ],
            "holds 2 entries",
        ),
        (
            "other",
            vec![("session.json", ok("someone-else"))],
            "holds the record of session 'someone-else'",
        ),
        (
            "newer",
            vec![("session.json", {
                let mut v = record_json(&m, "newer");
                v["schema"] = 99.into();
                serde_json::to_vec(&v).unwrap()
            })],
            "newer than this bullpen understands",
        ),
        (
            "Bad_Id",
            vec![("session.json", ok("Bad_Id"))],
            "invalid session id",
        ),
        (
            "agent",
            vec![("session.json", {
                let mut v = record_json(&m, "agent");
                v["agent"] = "x\u{1b}[2J".into();
                serde_json::to_vec(&v).unwrap()
            })],
            "its agent 'x\\033[2J' is not an agent name",
        ),
    ];
    for (id, files, _) in &cases {
        let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
        forge_on_origin(&m, &format!("refs/bullpen/sessions/{id}"), &files);
    }
    let blob = origin_stdin(&m, &["hash-object", "-w", "--stdin"], b"just a blob");
    m.origin_git(&["update-ref", "refs/bullpen/sessions/blob", &blob]);

    let run = b.bullpen(env, &["fetch"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    for (id, _, why) in &cases {
        assert_contains(
            &run.stderr,
            &format!("warning: skipping origin's refs/bullpen/sessions/{id}: "),
        );
        let line = run
            .stderr
            .lines()
            .find(|l| l.contains(&format!("refs/bullpen/sessions/{id}:")))
            .unwrap();
        assert_contains(line, why);
    }
    assert_contains(
        &run.stderr,
        "refs/bullpen/sessions/blob: it points at a blob",
    );
    assert_contains(&run.stderr, "sessions from origin: new good");
    let checked = b.git_out(
        env,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/bullpen/remotes/",
        ],
    );
    assert_eq!(checked, "refs/bullpen/remotes/origin/sessions/good");
    let rows = b.ls_json(env, &["--remote"]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "good");

    // A record fixed on the remote arrives at the next fetch.
    forge_on_origin(
        &m,
        "refs/bullpen/sessions/broken",
        &[("session.json", &ok("broken"))],
    );
    let run = b.bullpen(env, &["fetch"]);
    assert_contains(&run.stderr, "new broken");

    // ls --remote reads nothing it has not checked, whoever wrote the ref.
    let bad = b.git_out(
        env,
        &["rev-parse", "refs/bullpen/incoming/origin/sessions/extra"],
    );
    b.git_out(
        env,
        &[
            "update-ref",
            "refs/bullpen/remotes/origin/sessions/extra",
            &bad,
        ],
    );
    let listed = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(
        &listed.stderr,
        "skipping refs/bullpen/remotes/origin/sessions/extra: ",
    );
    assert!(!listed.stdout.contains("origin/extra"), "{}", listed.stdout);
    assert_contains(&listed.stdout, "origin/good");
}

/// The note text on `commit` in `refs/notes/bullpen`, read by git itself.
fn note(env: &Env, cwd: &Path, commit: &str) -> String {
    env.git(cwd, &["notes", "--ref=bullpen", "show", commit])
        .ok()
        .stdout
}

/// The same commit annotated on both machines, and commits each annotated
/// alone: after a push and a fetch on each side every text is on both, and in
/// the remote. git's own `git notes` reads the merge.
#[test]
fn notes_written_on_both_machines_survive_a_push_and_fetch_on_both_sides() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    let two_commits = [
        "--",
        "sh",
        "-c",
        "for f in a0.txt a.txt; do echo $f > $f && git add $f && git commit -qm $f; done",
    ];
    a.bullpen(env, &[&["spawn", "n"][..], &two_commits].concat())
        .ok();
    let shared = a.git_out(env, &["rev-parse", "bullpen/n"]);
    let first = a.git_out(env, &["rev-parse", "bullpen/n~1"]);
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    b.bullpen(
        env,
        &args(&["resume", "origin/n"], &commit("b.txt", "from b")),
    )
    .ok();
    let b_only = b.git_out(env, &["rev-parse", "bullpen/n"]);
    // Both machines annotate the shared commit meanwhile; B adds to the note
    // on the first commit too, whose text A leaves as it was.
    a.git_out(
        env,
        &[
            "notes",
            "--ref=bullpen",
            "append",
            "-m",
            "checked on the laptop",
            &shared,
        ],
    );
    b.git_out(
        env,
        &[
            "notes",
            "--ref=bullpen",
            "append",
            "-m",
            "reviewed on the build box",
            &shared,
        ],
    );
    b.git_out(
        env,
        &[
            "notes",
            "--ref=bullpen",
            "append",
            "-m",
            "first one, seen on the box",
            &first,
        ],
    );
    // A pushes first; B's push must merge, not overwrite.
    a.bullpen(env, &["push", "--all"]).ok();
    let pushed = b.bullpen(env, &["push", "--all"]).ok();
    assert_contains(&pushed.stderr, "notes pushed to origin");
    a.bullpen(env, &["fetch"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    for (who, dir) in [("a", &a.dir), ("b", &b.dir), ("origin", &m.origin)] {
        let text = note(env, dir, &shared);
        for part in [
            "bullpen-session: n\nbullpen-command: sh -c 'for f in a0.txt a.txt",
            "checked on the laptop",
            "reviewed on the build box",
        ] {
            assert!(
                text.contains(part),
                "{who} lacks {part:?} on the shared commit:\n{text}"
            );
        }
        assert_eq!(
            text.matches("bullpen-session: n").count(),
            1,
            "{who}: {text}"
        );
        let text = note(env, dir, &b_only);
        assert_contains(&text, "bullpen-command: sh -c 'echo b.txt");
        let text = note(env, dir, &first);
        assert!(
            text.starts_with("bullpen-session: n\n")
                && text.ends_with("\n\nfirst one, seen on the box\n"),
            "{who}: {text:?}"
        );
    }
    // Both sides now hold the same notes: a push from either has nothing to add.
    let a_notes = a.git_out(env, &["rev-parse", "refs/notes/bullpen^{tree}"]);
    let b_notes = b.git_out(env, &["rev-parse", "refs/notes/bullpen^{tree}"]);
    assert_eq!(a_notes, b_notes);
    let again = a.bullpen(env, &["push", "--all"]).ok();
    assert!(!again.stderr.contains("notes pushed"), "{}", again.stderr);
}

/// A `git` first on PATH that, at the first `git push` it sees, runs `script`
/// before the real push: another machine pushing in between (its output is
/// discarded).
fn push_races(env: &Env, machine: &mut Machine, script: &str) {
    let dir = env.root().join(format!("race-bin-{}", machine.host));
    std::fs::create_dir_all(&dir).unwrap();
    let once = dir.join("armed");
    std::fs::write(&once, "").unwrap();
    let wrapper = format!(
        "#!/bin/sh\ncase \" $* \" in *\" push \"*) if [ -e '{once}' ]; then rm -f '{once}'; \
         ( {script} ) >/dev/null 2>&1; fi;; esac\nexec {real} \"$@\"\n",
        once = once.display(),
        real = which_git(),
    );
    let path = dir.join("git");
    std::fs::write(&path, wrapper).unwrap();
    make_executable(&path);
    machine.path_prefix = Some(dir);
}

/// A (the laptop) goes on with session x after B (the build box) continued it;
/// B's branch and record then each have what the remote's lack. B's push
/// refuses it, saying which session and why, while B's other sessions go.
#[test]
fn a_record_pushed_from_b_never_replaces_a_newer_one_from_a() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    m.x_from_a_fetched_by_b();
    b.bullpen(env, &args(&["resume", "origin/x"], &commit("b1", "b1")))
        .ok();
    b.bullpen(env, &args(&["spawn", "y"], &commit("y1", "y1")))
        .ok();
    a.bullpen(env, &args(&["resume", "x"], &commit("a2", "a2")))
        .ok();
    a.bullpen(env, &["push", "--all"]).ok();
    let a_record = a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"]);
    let a_branch = a.git_out(env, &["rev-parse", "bullpen/x"]);

    let run = b.bullpen(env, &["push", "--all"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: not pushing session x: origin's bullpen/x has commits that this clone's \
         lacks, and this clone's has commits it lacks; pushing would lose them",
    );
    assert_contains(
        &run.stderr,
        "hint: to go on with the remote's here, under another id: git bullpen resume origin/x --as <new-id>",
    );
    assert_contains(&run.stderr, "pushed to origin: y (record, branch)");
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/x").as_deref(),
        Some(a_record.as_str())
    );
    assert_eq!(
        m.origin_ref("refs/heads/bullpen/x").as_deref(),
        Some(a_branch.as_str())
    );
    assert!(m.origin_ref("refs/bullpen/sessions/y").is_some());
}

/// The same, but A's push lands between B's fetch (which saw nothing new on the
/// remote) and B's push: git itself refuses B's, because bullpen never forces.
#[test]
fn a_push_that_races_another_never_forces_over_it() {
    let mut m = Machines::new();
    let env = &m.env;
    m.x_from_a_fetched_by_b();
    m.b.bullpen(env, &args(&["resume", "origin/x"], &commit("b1", "b1")))
        .ok();
    m.a.bullpen(env, &args(&["resume", "x"], &commit("a2", "a2")))
        .ok();
    let a_record = m.a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"]);
    let a_branch = m.a.git_out(env, &["rev-parse", "bullpen/x"]);
    let a_dir = m.a.dir.display().to_string();
    push_races(
        env,
        &mut m.b,
        &format!(
            "git -C '{a_dir}' push origin refs/bullpen/sessions/x:refs/bullpen/sessions/x \
             bullpen/x"
        ),
    );
    let run = m.b.bullpen(env, &["push", "--all"]);
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/x").as_deref(),
        Some(a_record.as_str()),
        "B's record replaced A's newer one: {}",
        run.stderr
    );
    assert_eq!(
        m.origin_ref("refs/heads/bullpen/x").as_deref(),
        Some(a_branch.as_str()),
        "B's branch replaced A's newer one: {}",
        run.stderr
    );
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: origin did not take refs/bullpen/sessions/x: [rejected]",
    );
    assert_contains(&run.stderr, "another push reached origin in between");
}

/// Another machine's notes land on the remote between this push's fetch and
/// its push: the notes push is refused by git, fetched, merged and pushed
/// again, and every text survives.
#[test]
fn notes_that_race_a_push_are_merged_and_pushed_again() {
    let mut m = Machines::new();
    let env = &m.env;
    m.a.bullpen(env, &args(&["spawn", "n"], &commit("a.txt", "a")))
        .ok();
    let shared = m.a.git_out(env, &["rev-parse", "bullpen/n"]);
    m.a.bullpen(env, &["push", "--all"]).ok();
    m.b.bullpen(env, &["fetch"]).ok();
    m.b.git_out(
        env,
        &["notes", "--ref=bullpen", "append", "-m", "from b", &shared],
    );
    m.a.git_out(
        env,
        &[
            "notes",
            "--ref=bullpen",
            "append",
            "-m",
            "from a, racing",
            &shared,
        ],
    );
    let a_dir = m.a.dir.display().to_string();
    push_races(
        env,
        &mut m.b,
        &format!("git -C '{a_dir}' push origin refs/notes/bullpen"),
    );
    let run = m.b.bullpen(env, &["push", "--all"]).ok();
    assert_contains(&run.stderr, "notes pushed to origin");
    let text = note(env, &m.origin, &shared);
    for part in ["bullpen-session: n", "from b", "from a, racing"] {
        assert!(text.contains(part), "origin lacks {part:?}:\n{text}");
    }
}

/// An id already used here is refused (nothing is created), with the way out:
/// `--as <new-id>`, which continues it under that id.
#[test]
fn an_id_in_use_here_is_refused_with_a_hint_and_as_picks_another() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "x"], &commit("a1", "a1")))
        .ok();
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["spawn", "x", "--", "true"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let before = b.git_out(env, &["for-each-ref"]);
    let run = b.bullpen(env, &["resume", "origin/x", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "fatal: session id 'x' is already in use");
    assert_contains(
        &run.stderr,
        "hint: continue it here under another id: git bullpen resume origin/x --as <new-id> -- true",
    );
    assert_eq!(before, b.git_out(env, &["for-each-ref"]));

    b.bullpen(
        env,
        &args(&["resume", "origin/x", "--as", "x2"], &commit("b1", "b1")),
    )
    .ok();
    assert_eq!(
        b.git_out(env, &["rev-parse", "--abbrev-ref", "bullpen/x2@{upstream}"]),
        "origin/bullpen/x"
    );
    let record: Value = serde_json::from_str(&stored_json(
        |a| b.git_out(env, a),
        "refs/bullpen/sessions/x2",
    ))
    .unwrap();
    assert_eq!(record["id"], "x2");
    assert_eq!(record["resumed_from"]["id"], "x");
    let origin_x = m.origin_ref("refs/bullpen/sessions/x");
    b.bullpen(env, &["push", "origin", "x2"]).ok();
    assert!(m.origin_ref("refs/heads/bullpen/x2").is_some());
    assert_eq!(m.origin_ref("refs/bullpen/sessions/x"), origin_x);
    m.origin_git(&[
        "merge-base",
        "--is-ancestor",
        "refs/bullpen/sessions/x",
        "refs/bullpen/sessions/x2",
    ]);
    // --as is for fetched sessions only.
    let run = b.bullpen(env, &["resume", "x", "--as", "y", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
}

/// `resume <remote>/<id>` with no command runs nothing from the remote record:
/// refused, with what to type, and nothing is created.
#[test]
fn a_remote_session_resumed_without_a_command_runs_nothing() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    let marker = env.root().join("ran");
    a.bullpen(
        env,
        &[
            "spawn",
            "x",
            "--",
            "sh",
            "-c",
            &format!("touch {}.a", marker.display()),
        ],
    )
    .ok();
    std::fs::remove_file(format!("{}.a", marker.display())).unwrap();
    a.bullpen(env, &["push", "origin", "x"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let before = (
        b.git_out(env, &["for-each-ref"]),
        b.git_out(env, &["worktree", "list", "--porcelain"]),
    );
    let run = b.bullpen(env, &["resume", "origin/x"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: nothing on this machine says what to run for origin/x: a command from another \
         machine's record is never run unless you name it",
    );
    assert_contains(
        &run.stderr,
        "hint: name the command: git bullpen resume origin/x -- <command>",
    );
    assert!(
        !Path::new(&format!("{}.a", marker.display())).exists(),
        "the remote command ran"
    );
    assert_eq!(
        before,
        (
            b.git_out(env, &["for-each-ref"]),
            b.git_out(env, &["worktree", "list", "--porcelain"]),
        )
    );
    assert!(!b.dir.join(".git/bullpen/local/x").exists());
}

/// Two machines with one host name: records carry each clone's id, and `ls
/// --remote` tells this clone's own record from the other machine's.
#[test]
fn two_machines_with_one_host_name_are_told_apart_by_clone() {
    let m = Machines::with_hosts("box", "box");
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "s", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["spawn", "t", "--", "true"]).ok();
    b.bullpen(env, &["push", "--all"]).ok();
    let clone_a = std::fs::read_to_string(a.dir.join(".git/bullpen/clone-id")).unwrap();
    let clone_b = std::fs::read_to_string(b.dir.join(".git/bullpen/clone-id")).unwrap();
    assert_ne!(clone_a, clone_b);
    assert_eq!(clone_a.trim().len(), 32);
    b.bullpen(env, &["fetch"]).ok();
    let listed = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(
        &listed.stdout,
        &format!(
            "origin/s  exited 0 on box (another clone, {}), as of",
            &clone_a[..8]
        ),
    );
    assert_contains(
        &listed.stdout,
        "origin/t  exited 0 on box (this clone), as of",
    );
    a.bullpen(env, &["fetch"]).ok();
    let listed = a.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(
        &listed.stdout,
        "origin/s  exited 0 on box (this clone), as of",
    );
    assert_contains(
        &listed.stdout,
        &format!(
            "origin/t  exited 0 on box (another clone, {}), as of",
            &clone_b[..8]
        ),
    );
    let rows = b.ls_json(env, &["--remote"]);
    let s = rows.iter().find(|r| r["id"] == "s").unwrap();
    assert_eq!(s["clone_id"], clone_a.trim());
    assert_eq!(s["host"], "box");
}

/// Fetched records are out of reach of gc and rm: gc reports nothing of them
/// and changes none of their refs; rm does not know them.
#[test]
fn gc_and_rm_leave_fetched_records_alone() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "far", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let refs = || b.git_out(env, &["for-each-ref", "refs/bullpen/"]);
    let before = refs();
    assert_contains(&before, "refs/bullpen/remotes/origin/sessions/far");
    let gc = b.bullpen(env, &["gc", "--json"]).ok();
    assert!(
        !gc.stdout.contains("far") && !gc.stderr.contains("far"),
        "{}{}",
        gc.stdout,
        gc.stderr
    );
    b.bullpen(env, &["gc"]).ok();
    let rm = b.bullpen(env, &["rm", "--force", "far"]);
    assert!(!rm.status.success());
    assert_contains(&rm.stderr, "no session named 'far'");
    assert_eq!(before, refs());
}

/// Records another machine pushed (forged there with plumbing: they pass every
/// check of shape) name this machine's processes, its user's directory and a
/// command: fetched here, listed, resumed, stopped, waited for, collected, none
/// of them makes this machine signal, run or delete anything. Run as pid 1 of a
/// private pid namespace (`trust::contained`), like the other trust tests.
#[test]
fn a_fetched_record_never_makes_this_machine_signal_run_or_delete() {
    if crate::trust::contained(
        "remote::a_fetched_record_never_makes_this_machine_signal_run_or_delete",
    ) {
        return;
    }
    let m = Machines::new();
    let (env, b) = (&m.env, &m.b);
    let victim = crate::trust::Victim::start();
    let identity = crate::support::process_ref(victim.pid());
    let precious = env.root().join("precious");
    std::fs::create_dir_all(precious.join("work")).unwrap();
    std::fs::write(precious.join("work/file"), "mine\n").unwrap();
    let pwned = env.root().join("pwned");
    // B has a session of its own named like one of the forged ones.
    b.bullpen(env, &["spawn", "mine", "--", "true"]).ok();

    let running = json!({
        "pid": identity["pid"], "start_time": identity["start_time"],
        "boot_id": identity["boot_id"], "background": true,
        "supervisor_pid": identity["pid"], "supervisor_start_time": identity["start_time"],
        "started_at": "2026-01-01T00:00:00Z",
    });
    let forged = |id: &str, edit: &dyn Fn(&mut Value)| {
        let mut r = record_json(&m, id);
        r["command"] = json!(["sh", "-c", format!("touch {}", pwned.display())]);
        edit(&mut r);
        let bytes = serde_json::to_vec_pretty(&r).unwrap();
        forge_on_origin(
            &m,
            &format!("refs/bullpen/sessions/{id}"),
            &[("session.json", &bytes)],
        );
        // A branch too, so that resume gets as far as it can.
        let main = m.origin_git(&["rev-parse", "main"]);
        m.origin_git(&["update-ref", &format!("refs/heads/bullpen/{id}"), &main]);
    };
    forged("sig", &|r| {
        r["state"] = "running".into();
        r["process"] = running.clone();
    });
    forged("mine", &|r| {
        r["state"] = "running".into();
        r["process"] = running.clone();
    });
    forged("dead", &|r| {
        r["state"] = "running".into();
        r["worktree"] = json!(env.root().join("nothing-here"));
        r["process"] = json!({
            "pid": 4_194_303, "start_time": 1, "boot_id": identity["boot_id"],
            "background": true, "supervisor_pid": 4_194_303, "supervisor_start_time": 1,
            "started_at": "2026-01-01T00:00:00Z",
        });
    });
    forged("path", &|r| {
        r["worktree"] = json!(precious);
        r["log"] = json!(precious.join("work/file"));
        r["gc_teardown"] = json!({"admin_id": "path", "tip": "0", "started_at": "x"});
    });
    let untouched = |what: &str| {
        victim.assert_alive(what);
        assert!(
            precious.join("work/file").exists(),
            "{what}: the user's directory went"
        );
        assert!(!pwned.exists(), "{what}: the remote record's command ran");
    };

    b.bullpen(env, &["fetch"]).ok();
    let listed = b.bullpen(env, &["ls", "--remote"]).ok();
    // What the record says, not what is looked at here (the victim lives, but
    // nothing of it is read): neither `lost` nor a local `running`.
    assert_contains(&listed.stdout, "origin/sig   running on laptop, as of ");
    assert_contains(&listed.stdout, "origin/dead  running on laptop, as of ");
    untouched("ls --remote");
    for args in [
        vec!["stop", "--timeout", "0.2", "origin/sig"],
        vec!["wait", "--timeout", "0.2", "origin/sig"],
        vec!["logs", "origin/path"],
        vec!["rm", "--force", "origin/path"],
    ] {
        let run = b.bullpen(env, &args);
        let usage = if args[0] == "wait" { 125 } else { 129 };
        assert_eq!(run.code(), usage, "{args:?}: {}", run.stderr);
        untouched(&format!("{args:?}"));
    }
    // The local session of that name is this machine's own, not the fetched one.
    let stop = b.bullpen(env, &["stop", "--timeout", "0.2", "mine"]).ok();
    assert_contains(&stop.stderr, "not running");
    untouched("stop of the local session named like a fetched one");
    for args in [
        vec!["stop", "sig"],
        vec!["rm", "--force", "path"],
        vec!["logs", "path"],
    ] {
        let run = b.bullpen(env, &args);
        assert!(!run.status.success(), "{args:?}");
        assert_contains(&run.stderr, "no session named");
        untouched(&format!("{args:?}"));
    }
    let run = b.bullpen(env, &["resume", "origin/path"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    untouched("resume without a command");
    b.bullpen(env, &["gc"]).ok();
    untouched("gc");
    // Continued here with a command named here: its worktree is this machine's,
    // under its root; the record's path, process and command stay words.
    b.bullpen(env, &["resume", "origin/path", "--", "true"])
        .ok();
    b.bullpen(env, &["resume", "origin/sig", "--as", "sig2", "--", "true"])
        .ok();
    let wt = b.worktree_of(env, "path");
    assert!(wt.starts_with(&b.bullpen_home), "{}", wt.display());
    let record: Value = serde_json::from_str(&stored_json(
        |a| b.git_out(env, a),
        "refs/bullpen/sessions/path",
    ))
    .unwrap();
    assert!(record.get("gc_teardown").is_none(), "{record}");
    assert!(record["log"].is_null(), "{record}");
    untouched("resume with a command");
    for args in [
        vec!["stop", "--timeout", "0.2", "sig2"],
        vec!["gc"],
        vec!["rm", "--force", "path"],
    ] {
        b.bullpen(env, &args);
        untouched(&format!("{args:?} of a continued session"));
    }
    assert!(
        !wt.exists(),
        "rm --force of this machine's own session left it"
    );
}

/// An agent session continued on another machine with nothing after `--` runs
/// that machine's profile of the agent the record names (its resume form: the
/// session ran on the laptop; its start form with `--fresh`), never the
/// laptop's profile or command; the new session's local proof names the agent
/// with no arguments, so a plain `resume` here runs the profile again. A record
/// giving the agent extra arguments, or naming an agent this machine has no
/// profile of, is refused with nothing created.
#[test]
fn an_agent_session_continues_with_this_machines_profile() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    let marker = env.root().join("laptop-profile-ran");
    let commit_line = |what: &str| {
        // Extra arguments land after `echo`.
        format!("git commit -qm {what} --allow-empty && echo {what} >> {what}.txt && git add {what}.txt && git commit -qm {what} && echo")
    };
    // The laptop's profile commits; so do the build box's, differently.
    a.git_out(
        env,
        &[
            "config",
            "bullpen.agent.fake.command",
            &commit_line("a-start"),
        ],
    );
    a.git_out(
        env,
        &[
            "config",
            "bullpen.agent.fake.resume",
            &format!("touch {}", marker.display()),
        ],
    );
    b.git_out(
        env,
        &[
            "config",
            "bullpen.agent.fake.command",
            &commit_line("b-start"),
        ],
    );
    b.git_out(
        env,
        &[
            "config",
            "bullpen.agent.fake.resume",
            &commit_line("b-resume"),
        ],
    );
    a.bullpen(env, &["spawn", "--agent", "fake", "x"]).ok();
    a.bullpen(env, &["spawn", "--agent", "fake", "args", "--", "--flag"])
        .ok();
    a.bullpen(env, &["spawn", "--agent", "fake", "x3"]).ok();
    a.git_out(env, &["config", "bullpen.agent.other.command", "true"]);
    a.bullpen(env, &["spawn", "--agent", "other", "unknown"])
        .ok();
    // Named: their branches have no commits of their own.
    a.bullpen(env, &["push", "origin", "x", "args", "x3", "unknown"])
        .ok();
    b.bullpen(env, &["fetch"]).ok();
    let listed = b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "origin/x        fake   exited 0 on laptop");

    // It ran on the laptop: the build box's resume form continues it.
    let run = b.bullpen(env, &["resume", "origin/x"]).ok();
    assert_contains(
        &run.stderr,
        "session x continues origin/x (last on laptop) on bullpen/x, tracking \
         origin/bullpen/x, in ",
    );
    assert_contains(&run.stderr, ": agent fake, continuing its conversation");
    let wt = b.worktree_of(env, "x");
    assert!(wt.join("a-start.txt").exists() && wt.join("b-resume.txt").exists());
    assert!(
        !marker.exists(),
        "the laptop's profile ran on the build box"
    );
    let created: Value = serde_json::from_slice(
        &std::fs::read(b.dir.join(".git/bullpen/local/x/created.json")).unwrap(),
    )
    .unwrap();
    let local = &created["command"];
    assert_eq!(local["agent"], "fake");
    assert!(
        local["agent_args"].as_array().is_none_or(Vec::is_empty),
        "{local}"
    );
    let record: Value = serde_json::from_str(&stored_json(
        |a| b.git_out(env, a),
        "refs/bullpen/sessions/x",
    ))
    .unwrap();
    assert_eq!(record["agent"], "fake");
    assert!(
        record["agent_args"].as_array().is_none_or(Vec::is_empty),
        "{record}"
    );
    assert_eq!(record["command"], local["argv"]);
    // A plain resume here runs this machine's profile again, on local proof.
    b.bullpen(env, &["resume", "x"]).ok();
    assert_eq!(
        std::fs::read_to_string(wt.join("b-resume.txt")).unwrap(),
        "b-resume\nb-resume\n"
    );

    // --fresh: the start form.
    let run = b.bullpen(env, &["resume", "origin/x3", "--fresh"]).ok();
    assert_contains(&run.stderr, ": agent fake, a new conversation");
    let wt3 = b.worktree_of(env, "x3");
    assert!(wt3.join("b-start.txt").exists() && !wt3.join("b-resume.txt").exists());

    // Extra arguments from elsewhere, or an agent without a profile here:
    // refused, nothing created.
    let before = (
        b.git_out(env, &["for-each-ref"]),
        b.git_out(env, &["worktree", "list", "--porcelain"]),
    );
    let run = b.bullpen(env, &["resume", "origin/args"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: not running agent 'fake' with the arguments '--flag' for session origin/args: \
         its agent's extra arguments were not recorded on this machine",
    );
    assert_contains(
        &run.stderr,
        "hint: name the command to run: git bullpen resume origin/args -- <command>",
    );
    let run = b.bullpen(env, &["resume", "origin/unknown"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "no agent profile named 'other' on this machine",
    );
    assert_eq!(
        before,
        (
            b.git_out(env, &["for-each-ref"]),
            b.git_out(env, &["worktree", "list", "--porcelain"]),
        )
    );
    assert!(!b.dir.join(".git/bullpen/local/args").exists());
    assert!(!b.dir.join(".git/bullpen/local/unknown").exists());
}

/// The remote's notes descend from ours but dropped one note and rewrote
/// another (`git notes remove`, `git notes add -f`, or a forger): a fetch keeps
/// every text of ours (no fast-forward onto theirs), adds theirs, and the next
/// push gives the remote both back, as a fast-forward of its own.
#[test]
fn a_remote_that_dropped_notes_never_drops_them_here() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let two_commits = [
        "--",
        "sh",
        "-c",
        "for f in one.txt two.txt; do echo $f > $f && git add $f && git commit -qm $f; done",
    ];
    a.bullpen(env, &[&["spawn", "n"][..], &two_commits].concat())
        .ok();
    let one = a.git_out(env, &["rev-parse", "bullpen/n~1"]);
    let two = a.git_out(env, &["rev-parse", "bullpen/n"]);
    a.bullpen(env, &["push", "--all"]).ok();
    // What the push sent (a commit of its own: `push_notes_private.rs`).
    let ours = m.origin_git(&["rev-parse", "refs/notes/bullpen"]);
    m.origin_git(&["notes", "--ref=bullpen", "remove", &one]);
    m.origin_git(&[
        "notes",
        "--ref=bullpen",
        "add",
        "-f",
        "-m",
        "rewritten",
        &two,
    ]);
    m.origin_git(&["merge-base", "--is-ancestor", &ours, "refs/notes/bullpen"]);

    a.bullpen(env, &["fetch"]).ok();
    assert_contains(&note(env, &a.dir, &one), "bullpen-session: n");
    let text = note(env, &a.dir, &two);
    assert!(
        text.contains("bullpen-session: n") && text.contains("rewritten"),
        "{text}"
    );
    a.bullpen(env, &["push", "--all"]).ok();
    assert_contains(&note(env, &m.origin, &one), "bullpen-session: n");
    let text = note(env, &m.origin, &two);
    assert!(
        text.contains("bullpen-session: n") && text.contains("rewritten"),
        "{text}"
    );
}

/// `resume <remote>/<id>` fails closed as spawn does: a setup command that
/// fails leaves no record, branch, worktree, local proof, or the branch's
/// upstream configuration (`git worktree add --track` wrote it).
#[test]
fn a_remote_resume_that_fails_leaves_nothing_behind() {
    let m = Machines::new();
    let (env, b) = (&m.env, &m.b);
    m.x_from_a_fetched_by_b();
    b.git_out(env, &["config", "bullpen.setup", "false"]);
    let before = (
        b.git_out(env, &["for-each-ref"]),
        b.git_out(env, &["worktree", "list", "--porcelain"]),
        b.git_out(env, &["config", "--list", "--local"]),
    );
    let run = b.bullpen(env, &["resume", "origin/x", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "session x was not created; nothing of it is left",
    );
    assert_eq!(
        before,
        (
            b.git_out(env, &["for-each-ref"]),
            b.git_out(env, &["worktree", "list", "--porcelain"]),
            b.git_out(env, &["config", "--list", "--local"]),
        )
    );
    assert!(!b.dir.join(".git/bullpen/local/x").exists());
    // --no-setup: it is made, tracking the remote's branch.
    b.bullpen(env, &["resume", "origin/x", "--no-setup", "--", "true"])
        .ok();
    assert_eq!(
        b.git_out(env, &["config", "branch.bullpen/x.merge"]),
        "refs/heads/bullpen/x"
    );
}

/// A session continued from a remote's tracks the remote's branch; when gc
/// collects it, the branch's configuration goes with the branch, as with `git
/// branch -d`. A session of its own without any configuration changes nothing.
#[test]
fn a_collected_remote_session_takes_its_upstream_config_with_it() {
    let m = Machines::new();
    let (env, b) = (&m.env, &m.b);
    m.x_from_a_fetched_by_b();
    b.bullpen(env, &["resume", "origin/x", "--", "true"]).ok();
    b.bullpen(env, &["spawn", "mine", "--", "true"]).ok();
    assert_contains(
        &b.git_out(env, &["config", "--list", "--local"]),
        "branch.bullpen/x.merge=refs/heads/bullpen/x",
    );
    let gc = b.bullpen(env, &["gc"]).ok();
    assert_contains(
        &gc.stdout,
        "removed  x: published (reachable from origin/bullpen/x)",
    );
    assert_contains(&gc.stdout, "removed  mine");
    let config = b.git_out(env, &["config", "--list", "--local"]);
    assert!(!config.contains("branch.bullpen/"), "{config}");
    assert!(!gc.stderr.contains("configuration"), "{}", gc.stderr);
}

/// `resume <TAB>` offers this clone's sessions and the fetched ones as
/// `<remote>/<id>`, from ref names alone (as every id completion does).
#[test]
fn resume_completes_fetched_sessions() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &["spawn", "far", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    b.bullpen(env, &["spawn", "near", "--", "true"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let out = b
        .cmd(env, BIN, &b.dir)
        .env("GIT_BULLPEN_COMPLETE", "fish")
        .args(["--", "git-bullpen", "resume", ""])
        .output()
        .unwrap();
    assert!(out.status.success());
    let offered: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // zsh and fish describe the local ones (a few: their records are read).
    assert_eq!(
        offered,
        ["near\texited 0: true", "origin/far"],
        "{offered:?}"
    );
}
