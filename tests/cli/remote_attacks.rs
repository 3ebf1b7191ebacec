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
use crate::support::{assert_contains, make_executable, which_git, Env, BIN};

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

/// Where a `git` wrapper holds bullpen: before the git command whose
/// arguments hold `needle` runs, or once it has run (its output given to
/// bullpen, which is then still reading it).
#[derive(Clone, Copy)]
enum At {
    Before,
    After,
}

/// Put a `git` first on `machine`'s PATH that holds at `needle` (see [`At`]):
/// it writes its pid to the returned file and blocks opening a FIFO that no
/// one writes. The test kills bullpen there, then the wrapper.
fn hold_git(env: &Env, machine: &mut Machine, needle: &str, at: At) -> PathBuf {
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
fn killed_while_held(env: &Env, machine: &mut Machine, pid_file: &Path, argv: &[&str]) {
    let mut child = machine
        .cmd(env, BIN, &machine.dir)
        .args(argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pid_file.exists() {
        if let Some(status) = child.try_wait().unwrap() {
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
    child.kill().unwrap();
    child.wait().unwrap();
    drop(wrapper);
    machine.path_prefix = None;
}

fn outgoing(machine: &Machine, env: &Env) -> String {
    machine.git_out(env, &["for-each-ref", "refs/bullpen/outgoing/"])
}

/// The remote takes the refs and dies before it says so (its
/// `reference-transaction` hook kills `receive-pack` once the refs are
/// committed): git says the remote hung up, and nothing more. bullpen does
/// not say what landed, says it may have, and a push made again settles it.
#[test]
fn a_remote_that_dies_after_taking_the_refs_is_settled_by_the_next_push() {
    let m = Machines::new();
    let (env, a) = (&m.env, &m.a);
    a.bullpen(env, &args(&["spawn", "x"], &commit("x.txt", "x")))
        .ok();
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
