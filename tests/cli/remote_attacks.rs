//! Push, fetch and records merge against a hostile or flaky remote, and as a
//! crash sees them: a remote that dies in the middle of a push, bullpen killed
//! at each step of a push or a fetch and run again, records forged with
//! plumbing on the remote. Nothing is ever said to have landed that did not,
//! a rerun settles what a killed run left, and nothing fetched becomes the
//! authority to act here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::remote::{args, commit, Machine, Machines};
use crate::support::{assert_contains, make_executable, record_json, which_git, Env, BIN};

/// A hook of the bare remote: `body` after a shebang.
fn hook(origin: &Path, name: &str, body: &str) {
    let path = origin.join("hooks").join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    make_executable(&path);
}

/// A process killed (SIGKILL) when the test ends, however it ends.
struct Killed(u32);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-9", &self.0.to_string()])
            .status();
    }
}

/// A child of the test, killed and waited for when the test ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a `git` wrapper holds bullpen: before the git command whose
/// arguments hold `needle` runs, or once it has run (its output given to
/// bullpen, which is then still reading it).
#[derive(Clone, Copy)]
pub(crate) enum At {
    Before,
    After,
}

/// Put a `git` first on `machine`'s PATH that holds at `needle` (see [`At`]):
/// it writes its pid to the returned file and blocks opening a FIFO that no
/// one writes. The test kills bullpen there, then the wrapper.
pub(crate) fn hold_git(env: &Env, machine: &mut Machine, needle: &str, at: At) -> PathBuf {
    let dir = env.root().join(format!("hold-bin-{}", machine.host));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let pid = dir.join("pid");
    let _ = std::fs::remove_file(&fifo);
    let _ = std::fs::remove_file(&pid);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let git = which_git();
    let hold = format!(
        "echo $$ > '{pid}.tmp' && mv '{pid}.tmp' '{pid}'; : < '{fifo}'",
        pid = pid.display(),
        fifo = fifo.display()
    );
    let body = match at {
        At::Before => format!("{hold}; exec {git} \"$@\""),
        At::After => format!("{git} \"$@\"; {hold}"),
    };
    let script =
        format!("#!/bin/sh\ncase \" $* \" in *\" {needle} \"*) {body};; esac\nexec {git} \"$@\"\n");
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    machine.path_prefix = Some(dir);
    pid
}

/// Run `git bullpen <args>` on `machine` until its git wrapper holds (the pid
/// file appears), then SIGKILL bullpen and the wrapper.
pub(crate) fn killed_while_held(env: &Env, machine: &mut Machine, pid_file: &Path, argv: &[&str]) {
    let mut child = Reaped(
        machine
            .cmd(env, BIN, &machine.dir)
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pid_file.exists() {
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!("bullpen {argv:?} ended ({status}) before git held");
        }
        assert!(Instant::now() < deadline, "git never held");
        std::thread::sleep(Duration::from_millis(10));
    }
    let wrapper = Killed(
        std::fs::read_to_string(pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
    );
    // SIGKILL, and reaped.
    drop(child);
    drop(wrapper);
    machine.path_prefix = None;
}

pub(crate) fn outgoing(machine: &Machine, env: &Env) -> String {
    machine.git_out(env, &["for-each-ref", "refs/bullpen/outgoing/"])
}

/// The remote dies in the middle of a push (its `reference-transaction`
/// hook kills `receive-pack`): before it took the refs, then once it has
/// taken them but before it says so. git says only that the remote hung up:
/// bullpen does not say what landed, says it may have, and a push made again
/// settles it each time.
#[test]
fn a_remote_that_dies_in_a_push_is_settled_by_the_next() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    a.bullpen(env, &args(&["spawn", "y"], &commit("y.txt", "y")))
        .ok();
    hook(
        &m.origin,
        "reference-transaction",
        "[ \"$1\" = prepared ] && kill -9 $PPID\nexit 0\n",
    );
    let run = a.bullpen(env, &["push", "origin", "y"]);
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_contains(&run.stderr, "may have taken some of them");
    assert_eq!(m.origin_ref("refs/heads/bullpen/y"), None);
    std::fs::remove_file(m.origin.join("hooks/reference-transaction")).unwrap();
    // Killed with its ref locks taken, the remote keeps them: the next push
    // says so in the remote's words, and lands once they are gone.
    let again = a.bullpen(env, &["push", "origin", "y"]).fails();
    assert_contains(&again.stderr, "origin says: error: cannot lock ref");
    assert_contains(&again.stderr, "origin took none of its refs");
    for lock in [
        "refs/notes/bullpen.lock",
        "refs/heads/bullpen/y.lock",
        "refs/bullpen/sessions/y.lock",
    ] {
        let _ = std::fs::remove_file(m.origin.join(lock));
    }
    let again = a.bullpen(env, &["push", "origin", "y"]).ok();
    assert_contains(&again.stderr, "pushed to origin: y (record, branch)");

    hook(
        &m.origin,
        "reference-transaction",
        "[ \"$1\" = committed ] && kill -9 $PPID\nexit 0\n",
    );
    let run = a.bullpen(env, &["push", "origin", "x"]);
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_contains(&run.stderr, "the remote end hung up unexpectedly");
    assert_contains(&run.stderr, "fatal: cannot push sessions to origin");
    assert_contains(
        &run.stderr,
        "hint: origin may have taken some of them before the push failed; `git bullpen push \
         origin` again sees what landed and sends the rest",
    );
    assert!(!run.stderr.contains("pushed to origin"), "{}", run.stderr);
    let tip = a.git_out(env, &["rev-parse", "bullpen/x"]);
    assert_eq!(m.origin_ref("refs/heads/bullpen/x").as_ref(), Some(&tip));
    assert_eq!(outgoing(a, env), "");

    std::fs::remove_file(m.origin.join("hooks/reference-transaction")).unwrap();
    let again = a.bullpen(env, &["push", "origin", "x"]).ok();
    assert_contains(&again.stderr, "everything is up to date on origin");
    assert_eq!(
        a.git_out(
            env,
            &["rev-parse", "refs/bullpen/remotes/origin/sessions/x"]
        ),
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"])
    );
}

/// bullpen killed (SIGKILL) at each step of a push: while it fetches first,
/// with its refs staged before `git push` runs, and after `git push` landed
/// but before bullpen read its report. Each time the push made again lands
/// what is missing, says only what it sent, and leaves nothing staged.
#[test]
fn a_push_killed_at_each_step_is_settled_by_the_next() {
    let mut m = Machines::new();
    let env = &m.env;
    m.a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    let tip = m.a.git_out(env, &["rev-parse", "bullpen/x"]);
    let record = m.a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"]);
    for (needle, at) in [
        ("fetch", At::Before),
        ("fetch", At::After),
        ("push", At::Before),
    ] {
        let pid = hold_git(env, &mut m.a, needle, at);
        killed_while_held(env, &mut m.a, &pid, &["push", "origin", "x"]);
        assert_eq!(m.origin_ref("refs/heads/bullpen/x"), None);
    }
    // Staged, and left so by the kill.
    assert_ne!(outgoing(&m.a, env), "");
    let run = m.a.bullpen(env, &["push", "origin", "x"]).ok();
    assert_contains(&run.stderr, "pushed to origin: x (record, branch)");
    assert_eq!(m.origin_ref("refs/heads/bullpen/x").as_ref(), Some(&tip));
    assert_eq!(
        m.origin_ref("refs/bullpen/sessions/x").as_ref(),
        Some(&record)
    );
    assert_eq!(outgoing(&m.a, env), "");

    // A new commit; git push lands it and bullpen dies before it reads git's report.
    m.a.bullpen(env, &args(&["resume", "x"], &commit("y.txt", "y")))
        .ok();
    let tip = m.a.git_out(env, &["rev-parse", "bullpen/x"]);
    let pid = hold_git(env, &mut m.a, "push", At::After);
    killed_while_held(env, &mut m.a, &pid, &["push", "origin", "x"]);
    assert_eq!(m.origin_ref("refs/heads/bullpen/x").as_ref(), Some(&tip));
    assert_ne!(outgoing(&m.a, env), "");
    let run = m.a.bullpen(env, &["push", "origin", "x"]).ok();
    assert_contains(&run.stderr, "everything is up to date on origin");
    assert!(!run.stderr.contains("pushed to"), "{}", run.stderr);
    assert_eq!(outgoing(&m.a, env), "", "a rerun clears what the kill left");
}

/// bullpen killed between `git fetch` and its checks: what git brought sits
/// unchecked in the incoming namespace, and the next fetch, though git says
/// nothing changed, checks it and takes it.
#[test]
fn a_fetch_killed_between_git_and_its_checks_is_settled_by_the_next() {
    let mut m = Machines::new();
    let env = &m.env;
    // A fetch that finished: it leaves the note that its checks were done.
    m.b.bullpen(env, &["fetch"]).ok();
    m.a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    m.a.bullpen(env, &["push", "origin", "x"]).ok();
    let pid = hold_git(env, &mut m.b, "fetch", At::After);
    killed_while_held(env, &mut m.b, &pid, &["fetch"]);
    let incoming = "refs/bullpen/incoming/origin/sessions/x";
    assert_ne!(m.b.git_out(env, &["for-each-ref", incoming]), "");
    assert_eq!(
        m.b.git_out(
            env,
            &["for-each-ref", "refs/bullpen/remotes/origin/sessions/x"]
        ),
        ""
    );
    let listed = m.b.bullpen(env, &["ls", "--remote"]).ok();
    assert!(!listed.stdout.contains('x'), "{}", listed.stdout);

    let run = m.b.bullpen(env, &["fetch"]).ok();
    assert_contains(&run.stderr, "sessions from origin: new x");
    let listed = m.b.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "x");
}

/// The record at `rev` in `machine`'s clone (either form).
fn record_at(machine: &Machine, env: &Env, rev: &str) -> serde_json::Value {
    serde_json::from_str(&record_json(|a| machine.git_out(env, a), rev)).unwrap()
}

/// Put on `origin` a record of `id` made with plumbing, `parents` its parents.
fn forge_record(m: &Machines, id: &str, json: &serde_json::Value, parents: &[&str]) -> String {
    let blob = crate::remote::origin_stdin(
        m,
        &["hash-object", "-w", "--stdin"],
        &serde_json::to_vec(json).unwrap(),
    );
    let tree = crate::remote::origin_stdin(
        m,
        &["mktree"],
        format!("100644 blob {blob}\tsession.json\n").as_bytes(),
    );
    let mut argv = vec!["commit-tree", tree.as_str(), "-m", "bullpen: forged"];
    for p in parents {
        argv.extend(["-p", p]);
    }
    let commit = m.origin_git(&argv);
    m.origin_git(&[
        "update-ref",
        &format!("refs/bullpen/sessions/{id}"),
        &commit,
    ]);
    commit
}

/// What a command said, with the session's id (also in its paths) as `ID`.
fn said(run: &crate::support::Run, id: &str) -> (i32, String) {
    (run.code(), run.stderr.replace(id, "ID"))
}

/// Records forged on the remote that continue this clone's (their parent is
/// the record this clone pushed: a common event) and claim, in the far future,
/// what gives authority here: the user's own directory as the worktree, a
/// live process of this machine as the run, another command, `running`. The
/// fetch joins them into this clone's record, as second parents, this
/// clone's fields kept; and stop, attach, resume, rm and gc then act on each
/// exactly as on a session of the same history that no one forged.
#[test]
fn a_forged_record_joined_here_changes_nothing_stop_attach_resume_rm_or_gc_do() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let precious = env.root().join("precious");
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::write(precious.join("keep.txt"), "mine\n").unwrap();
    let pwned = env.root().join("pwned");
    let victim = Reaped(
        std::process::Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = victim.0.id();
    let proc_ = crate::support::process_ref(pid);
    let alive =
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));

    let ids = ["forged-a", "plain-a", "forged-b", "plain-b"];
    for id in ids {
        a.bullpen(env, &args(&["spawn", id], &commit("w.txt", "work")))
            .ok();
    }
    a.bullpen(env, &["push", "--all"]).ok();
    for id in ids {
        if id.starts_with("forged") {
            let pushed = m.origin_git(&["rev-parse", &format!("refs/bullpen/sessions/{id}")]);
            let mut json = record_at(a, env, &format!("refs/bullpen/sessions/{id}"));
            json["worktree"] = precious.to_str().unwrap().into();
            json["state"] = "running".into();
            json["process"] = serde_json::json!({
                "pid": proc_["pid"], "start_time": proc_["start_time"],
                "boot_id": proc_["boot_id"], "background": true,
                "supervisor_pid": proc_["pid"], "supervisor_start_time": proc_["start_time"],
                "started_at": "2099-01-01T00:00:00Z",
            });
            json["command"] = serde_json::json!(["sh", "-c", format!("touch {}", pwned.display())]);
            json["updated_at"] = "2099-01-01T00:00:00Z".into();
            forge_record(&m, id, &json, &[&pushed]);
        }
    }
    for id in ids {
        // This clone goes on: the two records diverge from the pushed one.
        a.bullpen(env, &["resume", id, "--", "true"]).ok();
    }
    let before: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| record_at(a, env, &format!("refs/bullpen/sessions/{id}")))
        .collect();

    let fetched = a.bullpen(env, &["fetch"]).ok();
    for id in ["forged-a", "forged-b"] {
        assert_contains(
            &fetched.stderr,
            &format!("joined session {id}'s record with origin's"),
        );
        let second = format!("refs/bullpen/sessions/{id}^2");
        assert_eq!(record_at(a, env, &second)["host"], "laptop");
        assert_eq!(record_at(a, env, &second)["state"], "running");
    }
    for (id, was) in ids.iter().zip(&before) {
        let now = record_at(a, env, &format!("refs/bullpen/sessions/{id}"));
        assert_eq!(&now, was, "{id}: the join keeps this clone's record");
    }

    // The same acts on a forged session and on one no one forged.
    for cmd in [&["stop"][..], &["attach"], &["resume"], &["rm"]] {
        let (forged, plain) = if cmd == ["rm"] {
            ("forged-b", "plain-b")
        } else {
            ("forged-a", "plain-a")
        };
        let run = |id: &str| {
            let mut argv = cmd.to_vec();
            argv.push(id);
            said(&a.bullpen(env, &argv), id)
        };
        assert_eq!(run(forged), run(plain), "{cmd:?}");
        assert!(
            alive(),
            "{cmd:?} signalled the process the forged record names"
        );
    }
    let gc = a.bullpen(env, &["gc", "--json"]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&gc.stdout).unwrap();
    let entry = |id: &str| {
        let e = entries.iter().find(|e| e["id"] == id).unwrap();
        (
            e["action"].clone(),
            e["reason"].as_str().unwrap_or_default().replace(id, "ID"),
            e["worktree"].as_str().unwrap_or_default().replace(id, "ID"),
        )
    };
    assert_eq!(entry("forged-a"), entry("plain-a"), "{}", gc.stdout);
    assert_eq!(entry("forged-a").0, "removed", "{}", gc.stdout);
    assert!(alive());
    assert!(!pwned.exists(), "the forged command ran");
    assert_eq!(
        std::fs::read_to_string(precious.join("keep.txt")).unwrap(),
        "mine\n"
    );
}

/// Names the remote chooses: git allows a right-to-left override (U+202E) or a
/// zero-width space in a ref name, and a forged record may carry one in its
/// host. Nothing bullpen prints of them reorders or hides a line: the ref is
/// named with the character escaped, the record refused.
#[test]
fn a_remote_s_names_never_reorder_what_bullpen_prints() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let main = m.origin_git(&["rev-parse", "refs/heads/main"]);
    m.origin_git(&["update-ref", "refs/bullpen/sessions/x\u{202e}cod", &main]);
    let mut json = serde_json::json!({
        "schema": 1, "id": "box", "branch": "bullpen/box", "worktree": "/w/box",
        "base": main, "command": ["true"], "state": "exited",
        "host": "build\u{200b}box\u{202e}", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    });
    forge_record(&m, "box", &json, &[]);
    let mut bad = json.clone();
    bad["id"] = "bad".into();
    bad["branch"] = "bullpen/bad".into();
    bad["state"] = "\u{1b}[2J\u{202e}".into();
    forge_record(&m, "bad", &bad, &[]);
    let run = a.bullpen(env, &["fetch"]);
    assert_eq!(run.code(), 1, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: skipping origin's refs/bullpen/sessions/bad: malformed session.json: unknown \
         variant `\\033[2J\\u{202e}`",
    );
    for c in ['\u{202e}', '\u{200b}', '\u{1b}'] {
        assert!(!run.stderr.contains(c), "{c:?} printed:\n{}", run.stderr);
    }
    assert_contains(
        &run.stderr,
        "warning: skipping origin's refs/bullpen/sessions/x\\u{202e}cod: invalid session id \
         'x\\u{202e}cod'",
    );
    assert_contains(
        &run.stderr,
        "warning: skipping origin's refs/bullpen/sessions/box: its host 'build\\u{200b}box\\u{202e}' \
         is not a plain name",
    );
    json["host"] = "build-box".into();
    forge_record(&m, "box", &json, &[]);
    a.bullpen(env, &["fetch"]).fails();
    let listed = a.bullpen(env, &["ls", "--remote"]).ok();
    assert_contains(&listed.stdout, "origin/box");
}

/// The lock files a kill leaves in the middle of a ref transaction: in the
/// incoming namespace (git fetch killed) git's own words say which; in the
/// checked one (bullpen killed) bullpen's say which, with git's advice, once,
/// and nothing of the fetch is taken half. `ls` and `ls --remote` go on from
/// what the last whole fetch took; once the file is gone the next fetch
/// settles it.
#[test]
fn a_stale_lock_left_by_a_killed_fetch_is_named_and_the_next_fetch_settles() {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    a.bullpen(env, &["push", "origin", "x"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let taken = b.git_out(
        env,
        &["rev-parse", "refs/bullpen/remotes/origin/sessions/x"],
    );
    a.bullpen(env, &["resume", "x", "--", "true"]).ok();
    a.bullpen(env, &["push", "origin", "x"]).ok();

    let refs = b.dir.join(".git/refs/bullpen");
    for (lock, words) in [
        (
            refs.join("incoming/origin/sessions/x.lock"),
            "error: cannot lock ref 'refs/bullpen/incoming/origin/sessions/x'",
        ),
        (
            refs.join("remotes/origin/sessions/x.lock"),
            "fatal: cannot record the sessions fetched from origin: cannot lock ",
        ),
    ] {
        std::fs::write(&lock, "").unwrap();
        let run = b.bullpen(env, &["fetch"]).fails();
        assert_contains(&run.stderr, words);
        assert_contains(&run.stderr, &format!("{}", lock.display()));
        assert_contains(&run.stderr, "remove the file manually to continue.");
        assert_eq!(
            run.stderr.matches(&*lock.display().to_string()).count(),
            1,
            "{}",
            run.stderr
        );
        assert_eq!(
            b.git_out(
                env,
                &["rev-parse", "refs/bullpen/remotes/origin/sessions/x"]
            ),
            taken
        );
        b.bullpen(env, &["ls", "--remote"]).ok();
        b.bullpen(env, &["ls"]).ok();
        std::fs::remove_file(&lock).unwrap();
    }
    let run = b.bullpen(env, &["fetch"]).ok();
    assert_contains(&run.stderr, "updated x");
    assert_eq!(
        b.git_out(
            env,
            &["rev-parse", "refs/bullpen/remotes/origin/sessions/x"]
        ),
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"])
    );
}

/// A forged record with a deep history and a wide commit on top (its
/// session.json the session's own, made with `git fast-import`): 3,000
/// events, the last with 500 parents. fetch checks it and joins it with this
/// clone's record (the walks are as long as the history git fetched, once),
/// and ls, push and gc go on as before.
#[test]
fn a_forged_record_with_a_deep_and_wide_history_is_joined_in_one_walk() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    a.bullpen(env, &["push", "origin", "x"]).ok();
    let pushed = m.origin_git(&["rev-parse", "refs/bullpen/sessions/x"]);
    let mut json = record_at(a, env, "refs/bullpen/sessions/x");
    json["updated_at"] = "2000-01-01T00:00:00Z".into();
    let json = serde_json::to_string(&json).unwrap();
    let mut stream = format!("blob\nmark :1\ndata {}\n{json}\n", json.len());
    let event = |mark: usize, from: Option<String>, merges: &[usize]| {
        let mut c = format!(
            "commit refs/bullpen/sessions/x\nmark :{mark}\ncommitter f <f@f> 946684800 +0000\n\
             data 6\nforged\n"
        );
        if let Some(from) = from {
            c.push_str(&format!("from {from}\n"));
        }
        for p in merges {
            c.push_str(&format!("merge :{p}\n"));
        }
        c.push_str("M 100644 :1 session.json\n");
        c
    };
    let (deep, wide) = (3_000, 500);
    for i in 0..deep {
        let from = if i == 0 {
            pushed.clone()
        } else {
            format!(":{}", i + 1)
        };
        stream.push_str(&event(i + 2, Some(from), &[]));
    }
    // Roots to merge: each its own history.
    for i in 0..wide {
        let message = format!("root {i}");
        stream.push_str(&format!(
            "commit refs/forged/root\nmark :{}\ncommitter f <f@f> 946684800 +0000\ndata {}\n\
             {message}\nM 100644 :1 session.json\nreset refs/forged/root\n\n",
            deep + 2 + i,
            message.len()
        ));
    }
    let merges: Vec<usize> = (deep + 2..deep + 2 + wide).collect();
    stream.push_str(&event(
        deep + wide + 2,
        Some(format!(":{}", deep + 1)),
        &merges,
    ));
    crate::remote::origin_stdin(&m, &["fast-import", "--quiet"], stream.as_bytes());
    let tip = m.origin_git(&["rev-parse", "refs/bullpen/sessions/x"]);
    let before: usize = m
        .origin_git(&["rev-list", "--count", &pushed])
        .parse()
        .unwrap();
    assert_eq!(
        m.origin_git(&["rev-list", "--count", "refs/bullpen/sessions/x"]),
        (before + deep + wide + 1).to_string()
    );

    a.bullpen(env, &["resume", "x", "--", "true"]).ok();
    let ours = a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x"]);
    let fetched = a.bullpen(env, &["fetch"]).ok();
    assert_contains(&fetched.stderr, "joined session x's record with origin's");
    assert_eq!(
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x^1"]),
        ours
    );
    assert_eq!(
        a.git_out(env, &["rev-parse", "refs/bullpen/sessions/x^2"]),
        tip
    );
    a.bullpen(env, &["ls", "--remote"]).ok();
    let run = a.bullpen(env, &["push", "origin", "x"]).ok();
    assert_contains(&run.stderr, "pushed to origin: x (record)");
    let (_, entries) = {
        let run = a.bullpen(env, &["gc", "--json"]);
        let entries: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
        (run, entries)
    };
    assert_eq!(entries[0]["action"], "removed", "{entries:?}");
}

/// A remote's hook writes escapes and a right-to-left override: push shows
/// the remote's words, as text.
#[test]
fn a_remote_s_words_are_shown_as_text() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    hook(
        &m.origin,
        "pre-receive",
        "printf 'no \\033[2J\\033[31mred \\342\\200\\256 here\\n' >&2\nexit 1\n",
    );
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
    let run = a.bullpen(env, &["push", "origin", "x"]).fails();
    assert_contains(
        &run.stderr,
        "warning: origin says: no \\033[2J\\033[31mred \\u{202e} here",
    );
    for c in ['\u{1b}', '\u{202e}'] {
        assert!(!run.stderr.contains(c), "{c:?} printed:\n{}", run.stderr);
    }
}

/// `resume <remote>/<id>` without a command offers the remote's recorded one
/// as a line to type, but not one with a character that makes the line read
/// otherwise than it pastes.
#[test]
fn a_remote_command_that_reads_otherwise_is_never_offered_as_a_line_to_type() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    let main = m.origin_git(&["rev-parse", "refs/heads/main"]);
    for (id, command) in [
        ("plain", serde_json::json!(["make", "test"])),
        (
            "hidden",
            serde_json::json!(["sh", "-c", "rm -rf ~ \u{202e} tset ekam"]),
        ),
    ] {
        let json = serde_json::json!({
            "schema": 1, "id": id, "branch": format!("bullpen/{id}"), "worktree": "/w/x",
            "base": main, "command": command, "state": "exited", "host": "box",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        });
        forge_record(&m, id, &json, &[]);
        m.origin_git(&["update-ref", &format!("refs/heads/bullpen/{id}"), &main]);
    }
    a.bullpen(env, &["fetch"]).ok();
    let plain = a.bullpen(env, &["resume", "origin/plain"]).fails();
    assert_contains(
        &plain.stderr,
        "the command recorded on 'box': git bullpen resume origin/plain -- make test",
    );
    let hidden = a.bullpen(env, &["resume", "origin/hidden"]).fails();
    assert_contains(&hidden.stderr, "nothing on this machine says what to run");
    assert!(
        !hidden.stderr.contains("the command recorded on"),
        "{}",
        hidden.stderr
    );
    assert!(!hidden.stderr.contains('\u{202e}'), "{}", hidden.stderr);
}
