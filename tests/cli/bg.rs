//! Background sessions: `spawn --bg`, the supervisor, `logs`, `stop`, and
//! liveness in `ls`. Real processes; every test kills what it started (the
//! `Bg` guard kills every recorded process group and supervisor on drop).

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{assert_contains, record_json, record_ref, Env, Run, BIN};

/// Generous: machines under load are slow, and these waits end as soon as the
/// condition holds.
const DEADLINE: Duration = Duration::from_secs(60);

/// An `Env` whose background processes are killed when the test ends, pass or fail.
pub(crate) struct Bg {
    env: Env,
    /// Processes the test itself started.
    children: Vec<Child>,
}

impl Deref for Bg {
    type Target = Env;
    fn deref(&self) -> &Env {
        &self.env
    }
}

impl Drop for Bg {
    fn drop(&mut self) {
        for c in &mut self.children {
            kill_group_of(c.id());
            let _ = c.kill();
            let _ = c.wait();
        }
        // Whatever the records say (a broken build may have lost track), nothing
        // this test started may outlive it: kill every process working in its
        // temp dir, a few rounds in case one forks while we look.
        let root = self.env.root();
        for _ in 0..5 {
            let strays: Vec<u32> = all_procs()
                .iter()
                .filter(|p| p.alive() && p.pid != std::process::id())
                .filter(|p| {
                    std::fs::read_link(format!("/proc/{}/cwd", p.pid))
                        .is_ok_and(|cwd| cwd.starts_with(&root))
                })
                .map(|p| p.pid)
                .collect();
            if strays.is_empty() {
                break;
            }
            for pid in strays {
                kill(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let Ok(out) = self
            .env
            .cmd("git", &self.env.repo)
            .args([
                "for-each-ref",
                "--format=%(refname)",
                "refs/bullpen/sessions/",
            ])
            .output()
        else {
            return;
        };
        for refname in String::from_utf8_lossy(&out.stdout).lines() {
            let Some(rec) = read_record_ref(&self.env, refname) else {
                continue;
            };
            let p = &rec["process"];
            let (Some(pid), Some(sid)) = (p["pid"].as_u64(), p["supervisor_pid"].as_u64()) else {
                if let (Some(pid), Some(start)) = (p["pid"].as_u64(), p["start_time"].as_u64()) {
                    if proc_stat(pid as u32).is_some_and(|s| s.start_time == start) {
                        kill(pid as u32, libc::SIGKILL);
                    }
                }
                continue;
            };
            // A run on a terminal leads its own session; an older one stayed
            // in its supervisor's.
            for m in group_members(pid as u32, pid as u32)
                .into_iter()
                .chain(group_members(pid as u32, sid as u32))
            {
                kill(m, libc::SIGKILL);
            }
            if let Some(start) = p["supervisor_start_time"].as_u64() {
                if proc_stat(sid as u32).is_some_and(|s| s.start_time == start) {
                    kill(sid as u32, libc::SIGKILL);
                }
            }
        }
    }
}

impl Bg {
    pub(crate) fn new() -> Bg {
        Bg {
            env: Env::new(),
            children: Vec::new(),
        }
    }

    /// `spawn --bg <id> -- <command>`, asserting success; returns what it printed.
    pub(crate) fn spawn_bg(&self, id: &str, command: &[&str]) -> Run {
        let mut args = vec!["spawn", "--bg", id, "--"];
        args.extend_from_slice(command);
        self.bullpen(&args).ok()
    }

    pub(crate) fn row(&self, id: &str) -> Value {
        self.try_row(id)
            .unwrap_or_else(|| panic!("no session {id} in ls --json"))
    }

    pub(crate) fn try_row(&self, id: &str) -> Option<Value> {
        let json = self.ls_json();
        json.as_array()
            .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
    }

    pub(crate) fn state(&self, id: &str) -> String {
        self.row(id)["state"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Poll `ls` until `id` exists and shows `state`.
    pub(crate) fn wait_state(&self, id: &str, state: &str) -> Value {
        wait_for(&format!("session {id} to be {state}"), || {
            self.try_row(id).filter(|row| row["state"] == state)
        })
    }

    pub(crate) fn record_commit(&self, id: &str) -> String {
        self.git_out(&["rev-parse", &record_ref(id)])
    }

    /// What `resume --bg` starts, run by hand in worktree `wt`: a supervisor for
    /// the record of `id` as it was at commit `expect`, to run `touch second`.
    fn supervise_in(&self, wt: &Path, id: &str, expect: &str) -> Run {
        let args = [
            "__supervise",
            id,
            "--expect",
            expect,
            "--",
            "touch",
            "second",
        ];
        self.bullpen_in(wt, &args)
    }

    /// A long-lived process owned by the test (killed by the guard).
    fn start_sleeper(&mut self) -> u32 {
        let child = self
            .cmd("sleep", &self.repo.clone())
            .arg("1000")
            .spawn()
            .unwrap();
        let pid = child.id();
        self.children.push(child);
        pid
    }
}

/// The record at `refname`, if it can be read: what the guard uses, which must
/// not panic.
fn read_record_ref(env: &Env, refname: &str) -> Option<Value> {
    let git = |args: &[&str]| {
        env.cmd("git", &env.repo)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    serde_json::from_str(&record_json(git, refname)).ok()
}

/// Poll `f` until it returns `Some`, for at most `DEADLINE`.
#[track_caller]
pub(crate) fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) pid: u32,
    pub(crate) state: char,
    pub(crate) pgrp: u32,
    pub(crate) session: u32,
    pub(crate) start_time: u64,
}

impl ProcStat {
    fn alive(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// `/proc/<pid>/stat`, parsed independently of the code under test.
pub(crate) fn proc_stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    Some(ProcStat {
        pid,
        state: f[0].chars().next()?,
        pgrp: f[2].parse().ok()?,
        session: f[3].parse().ok()?,
        start_time: f[19].parse().ok()?,
    })
}

fn all_procs() -> Vec<ProcStat> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter_map(proc_stat)
        .collect()
}

/// Field 7 of `/proc/<pid>/stat`: the controlling terminal's device (0: none).
fn tty_nr(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = text[text.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    f[4].parse().unwrap()
}

/// Field 4 of `/proc/<pid>/stat`: the parent.
fn ppid(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    f[1].parse().ok()
}

/// Whether `pid` descends from `ancestor`.
fn descends(pid: u32, ancestor: u32) -> bool {
    let mut at = pid;
    for _ in 0..64 {
        match ppid(at) {
            Some(p) if p == ancestor => return true,
            Some(p) if p > 1 => at = p,
            _ => return false,
        }
    }
    false
}

/// Living processes of process group `pgid` in session `sid`.
pub(crate) fn group_members(pgid: u32, sid: u32) -> Vec<u32> {
    all_procs()
        .into_iter()
        .filter(|p| p.pgrp == pgid && p.session == sid && p.alive())
        .map(|p| p.pid)
        .collect()
}

/// Whether `p` (as seen before) is still that same living process.
pub(crate) fn still_alive(p: &ProcStat) -> bool {
    proc_stat(p.pid).is_some_and(|now| now.start_time == p.start_time && now.alive())
}

pub(crate) fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Kill every process whose group is led by `pid` (only if `pid` leads a group).
fn kill_group_of(pid: u32) {
    if proc_stat(pid).is_some_and(|s| s.pgrp == pid) {
        // SAFETY: as above.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
}

pub(crate) fn pid_of(row: &Value) -> u32 {
    row["pid"].as_u64().expect("pid recorded") as u32
}

/// Wait until `pid` has exec'd `program` (what a shell does last in
/// `trap '' HUP; exec sleep 1000`): only then is what it set up in place.
pub(crate) fn wait_exec(pid: u32, program: &str) {
    let want = format!("{program}\0");
    wait_for(&format!("pid {pid} to exec {program}"), || {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.starts_with(want.as_bytes()))
            .then_some(())
    });
}

/// A log with the time in bullpen's end lines (`... after 1.2s`) as `[T]`.
pub(crate) fn timeless(log: &str) -> String {
    log.lines()
        .map(
            |l| match (l.starts_with("bullpen: session "), l.rfind(" after ")) {
                (true, Some(i)) => format!("{} after [T]\n", &l[..i]),
                _ => format!("{l}\n"),
            },
        )
        .collect()
}

fn cwd_of(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap()
}

// ----- the tests -----

#[test]
fn spawn_bg_returns_running_then_exits_and_logs_show_output() {
    let env = Bg::new();
    let run = env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "while [ ! -e go ]; do sleep 0.05; done; echo done",
        ],
    );
    assert_eq!(run.stdout, "a\n", "only the id on stdout");
    let worktree = env.worktree_of("a");
    assert!(
        run.stderr.contains(worktree.to_str().unwrap()),
        "worktree path on stderr: {}",
        run.stderr
    );
    // The dispatcher returned only once the run was recorded: no waiting needed.
    let row = env.row("a");
    assert_eq!(row["state"], "running", "{row}");
    let rec = env.record("a");
    assert_eq!(rec["process"]["background"], true);
    assert!(rec["process"]["supervisor_pid"].is_u64());

    std::fs::write(worktree.join("go"), "").unwrap();
    let row = env.wait_state("a", "exited");
    assert_eq!(row["exit_code"], 0);
    let logs = env.bullpen(&["logs", "a"]).ok();
    // The command's output, then bullpen's line: how the run ended, after how long.
    assert_eq!(
        timeless(&logs.stdout),
        "done\nbullpen: session a exited 0 after [T]\n"
    );
    let took = logs.stdout.trim_end().rsplit(" after ").next().unwrap();
    assert!(took.ends_with('s'), "{took}");
}

#[test]
fn the_log_ends_with_how_the_run_ended_on_a_line_of_its_own() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "printf 'no newline'; exit 5"]);
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        "no newline\nbullpen: session a exited 5 after [T]\n"
    );
    env.spawn_bg("b", &["sleep", "1000"]);
    env.bullpen(&["stop", "b"]).ok();
    let logs = env.bullpen(&["logs", "b"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        "bullpen: session b stopped by SIGHUP after [T]\n"
    );
}

#[test]
fn two_bg_sessions_from_one_directory_never_meet() {
    let env = Bg::new();
    let script = "echo \"$BULLPEN_SESSION\" > mine.txt; exec sleep 1000";
    env.spawn_bg("a", &["sh", "-c", script]);
    env.spawn_bg("b", &["sh", "-c", script]);
    let (wa, wb) = (env.worktree_of("a"), env.worktree_of("b"));
    assert_ne!(wa, wb);
    for (id, wt) in [("a", &wa), ("b", &wb)] {
        let pid = pid_of(&env.row(id));
        assert_eq!(&cwd_of(pid), wt, "{id} runs in its own worktree");
        let branch = env.git(wt, &["rev-parse", "--abbrev-ref", "HEAD"]).ok();
        assert_eq!(branch.stdout.trim(), format!("bullpen/{id}"));
        let mine = wait_for("mine.txt", || {
            std::fs::read_to_string(wt.join("mine.txt")).ok()
        });
        assert_eq!(mine, format!("{id}\n"));
    }
    assert!(
        !env.repo.join("mine.txt").exists(),
        "nothing lands in the main worktree"
    );
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["stop", "b"]).ok();
    assert_eq!(env.state("a"), "stopped");
    assert_eq!(env.state("b"), "stopped");
}

#[test]
fn session_survives_its_dispatcher_and_terminal() {
    use std::os::unix::process::CommandExt;
    let mut env = Bg::new();
    // A stand-in for a terminal: a shell in its own session that runs the
    // dispatcher and stays, as a login shell would. Closing the terminal kills
    // that whole session.
    let mut term = env.cmd("sh", &env.repo);
    term.args([
        "-c",
        &format!("'{BIN}' spawn --bg a -- sleep 1000 >/dev/null 2>&1; exec sleep 1000"),
    ])
    // A terminal's stdin is live, unlike the tests' /dev/null.
    .stdin(Stdio::piped())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    // SAFETY: setsid(2) is async-signal-safe.
    unsafe {
        term.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let term = term.spawn().unwrap();
    let term_sid = term.id();
    env.children.push(term);
    let row = env.wait_state("a", "running");
    let child = proc_stat(pid_of(&row)).unwrap();
    let rec = env.record("a");
    let supervisor = proc_stat(rec["process"]["supervisor_pid"].as_u64().unwrap() as u32).unwrap();
    assert_ne!(
        supervisor.session, term_sid,
        "the supervisor has its own session"
    );
    assert_eq!(
        std::fs::read_link(format!("/proc/{}/fd/0", supervisor.pid)).unwrap(),
        Path::new("/dev/null"),
        "the supervisor's stdin is /dev/null"
    );
    // The command is on a terminal of its own, held by the supervisor: the
    // leader of its own session and group, the terminal its controlling one.
    let tty = std::fs::read_link(format!("/proc/{}/fd/0", child.pid)).unwrap();
    assert!(tty.starts_with("/dev/pts/"), "the command's stdin: {tty:?}");
    assert_eq!((child.pgrp, child.session), (child.pid, child.pid));
    assert_ne!(
        tty_nr(child.pid),
        0,
        "the command has a controlling terminal"
    );

    // Close the terminal: hang up and kill its process group (the shell, and
    // the dispatcher had it still been there).
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(-(term_sid as i32), libc::SIGHUP);
        libc::kill(-(term_sid as i32), libc::SIGKILL);
    }
    wait_for("the terminal's process group to be gone", || {
        all_procs()
            .iter()
            .all(|p| p.pgrp != term_sid || !p.alive())
            .then_some(())
    });
    assert!(still_alive(&child), "the command outlived the terminal");
    assert!(
        still_alive(&supervisor),
        "the supervisor outlived the terminal"
    );
    assert_eq!(env.state("a"), "running");
    env.bullpen(&["stop", "a"]).ok();
    assert!(!still_alive(&child));
}

#[test]
fn a_reused_pid_shows_lost_not_running() {
    let mut env = Bg::new();
    env.bullpen(&["spawn", "fg", "--", "true"]).ok();
    env.bullpen(&["spawn", "bg", "--", "true"]).ok();
    // A different, living process now holds the pid the records name.
    let pid = env.start_sleeper();
    let real = wait_for("the sleeper's stat", || proc_stat(pid)).start_time;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let set = |env: &Bg, id: &str, background: bool, start: u64| {
        env.edit_record(id, |r| {
            r["state"] = "running".into();
            r["exit"] = Value::Null;
            r["process"] = serde_json::json!({
                "pid": pid,
                "start_time": start,
                "boot_id": boot.trim(),
                "background": background,
                "supervisor_pid": if background { Some(pid) } else { None },
                "supervisor_start_time": if background { Some(start) } else { None },
                "started_at": "2026-01-01T00:00:00Z",
            });
        })
    };
    // Control: with the true start time the process is taken for the session's.
    set(&env, "fg", false, real);
    set(&env, "bg", true, real);
    assert_eq!(env.state("fg"), "running");
    assert_eq!(env.state("bg"), "running");
    // The same pid with another start time is another process: lost.
    set(&env, "fg", false, real + 1);
    set(&env, "bg", true, real + 1);
    assert_eq!(env.state("fg"), "lost");
    assert_eq!(env.state("bg"), "lost");
    assert!(still_alive(&proc_stat(pid).unwrap()), "ls signals nothing");
}

#[test]
fn stop_escalates_to_sigkill_and_leaves_no_process_of_the_group() {
    let env = Bg::new();
    // The shell and both children ignore SIGHUP and SIGTERM (ignored signals
    // are inherited).
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "trap '' HUP TERM; sleep 1000 & sleep 1000 & wait",
        ],
    );
    let rec = env.record("a");
    let pgid = rec["process"]["pid"].as_u64().unwrap() as u32;
    // On its terminal the command leads its own session.
    let members: Vec<ProcStat> = wait_for("the shell and its two children", || {
        let m = group_members(pgid, pgid);
        (m.len() == 3).then(|| m.iter().filter_map(|p| proc_stat(*p)).collect())
    });
    let run = env.bullpen(&["stop", "--timeout", "0.5", "a"]).ok();
    assert_contains(&run.stderr, "SIGKILL");
    for m in &members {
        assert!(!still_alive(m), "{m:?} survived stop");
    }
    let row = env.row("a");
    assert_eq!(row["state"], "stopped", "{row}");
    assert_eq!(row["signal"], 9);
}

#[test]
fn stop_ends_a_command_and_the_children_it_started() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "sleep 1000 & sleep 1000 & wait"]);
    let rec = env.record("a");
    let pgid = rec["process"]["pid"].as_u64().unwrap() as u32;
    let sid = rec["process"]["supervisor_pid"].as_u64().unwrap() as u32;
    let supervisor = proc_stat(sid).unwrap();
    let members: Vec<ProcStat> = wait_for("the shell and its two children", || {
        let m = group_members(pgid, pgid);
        (m.len() == 3).then(|| m.iter().filter_map(|p| proc_stat(*p)).collect())
    });
    for m in &members {
        assert!(descends(m.pid, sid), "{m:?} descends from the supervisor");
    }
    let run = env.bullpen(&["stop", "a"]).ok();
    assert_contains(&run.stderr, "session a stopped by SIGHUP after ");
    for m in &members {
        assert!(!still_alive(m), "{m:?} survived stop");
    }
    let row = env.row("a");
    assert_eq!(row["state"], "stopped", "{row}");
    assert_eq!(row["signal"], 1, "the supervisor recorded how it ended");
    wait_for("the supervisor to exit", || {
        (!still_alive(&supervisor)).then_some(())
    });
    let history = env.git_out(&["log", "--format=%s", "refs/bullpen/sessions/a"]);
    assert!(
        history.starts_with("bullpen: a stopped by SIGHUP\nbullpen: a stop requested"),
        "{history}"
    );
}

#[test]
fn stop_of_a_session_that_is_not_running_changes_nothing() {
    let env = Bg::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let before = env.snapshot();
    let run = env.bullpen(&["stop", "a"]).ok();
    assert_contains(&run.stderr, "not running (exited 0)");
    assert_eq!(env.snapshot(), before);
    assert_eq!(env.state("a"), "exited");
    env.bullpen(&["stop", "nope"]).fails();
}

#[test]
fn stop_refuses_a_foreground_run_naming_its_pid() {
    let mut env = Bg::new();
    let fg = env
        .cmd(BIN, &env.repo)
        .args(["spawn", "a", "--", "sleep", "1000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    env.children.push(fg);
    let row = env.wait_state("a", "running");
    let pid = pid_of(&row);
    let run = env.bullpen(&["stop", "a"]).fails();
    assert_contains(&run.stderr, &format!("pid {pid}"));
    assert_eq!(env.state("a"), "running");
    kill(pid, libc::SIGKILL);
    env.wait_state("a", "exited");
}

#[test]
fn logs_show_stdout_and_stderr_and_follow_until_the_end() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "echo to-out; echo to-err >&2"]);
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok();
    assert_contains(&logs.stdout, "to-out\n");
    assert_contains(&logs.stdout, "to-err\n");

    // --follow: started while the run goes on, returns once it has ended, with
    // everything it printed.
    env.spawn_bg(
        "b",
        &[
            "sh",
            "-c",
            "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two",
        ],
    );
    let follow = env
        .cmd(BIN, &env.repo)
        .args(["logs", "--follow", "b"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::write(env.worktree_of("b").join("go"), "").unwrap();
    let out = follow.wait_with_output().unwrap();
    assert!(out.status.success());
    // The end line is in the log before the end is recorded: --follow has it.
    assert_eq!(
        timeless(&String::from_utf8_lossy(&out.stdout)),
        "one\ntwo\nbullpen: session b exited 0 after [T]\n"
    );
    assert_eq!(env.state("b"), "exited");
}

#[test]
fn logs_of_a_session_without_a_background_run_say_so() {
    let env = Bg::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let run = env.bullpen(&["logs", "a"]).fails();
    assert_eq!(run.code(), 128);
    assert_contains(&run.stderr, "no log");
}

#[test]
fn ls_json_shows_the_log_outside_every_worktree() {
    let env = Bg::new();
    env.bullpen(&["spawn", "fg", "--", "true"]).ok();
    env.spawn_bg("bg", &["sh", "-c", "echo noisy"]);
    env.wait_state("bg", "exited");
    let fg = env.row("fg");
    assert_eq!(fg["log"], Value::Null);
    crate::ls::assert_row_keys(&fg);
    let bg = env.row("bg");
    let log = PathBuf::from(bg["log"].as_str().unwrap());
    let common = env.git_out(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    assert_eq!(log, Path::new(&common).join("bullpen/logs/bg.log"));
    // As the terminal carried it (`\r\n` line ends: `logs` prints text), then
    // the supervisor's end line.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("noisy\r\nbullpen: "), "{text:?}");
    assert_eq!(
        timeless(&text),
        "noisy\nbullpen: session bg exited 0 after [T]\n"
    );
    let wt = env.worktree_of("bg");
    assert_eq!(
        env.git(&wt, &["status", "--porcelain", "--ignored"])
            .ok()
            .stdout,
        ""
    );
    assert_eq!(
        env.git(&env.repo, &["status", "--porcelain"]).ok().stdout,
        ""
    );
}

#[test]
fn supervisor_writes_provenance_notes_for_background_commits() {
    let env = Bg::new();
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "echo x > f && git add f && git commit -q -m from-bg",
        ],
    );
    let row = env.wait_state("a", "exited");
    assert_eq!(row["exit_code"], 0, "{row}");
    let note = env.git_out(&["notes", "--ref=bullpen", "show", "bullpen/a"]);
    assert!(note.contains("bullpen-session: a"), "{note}");
    assert!(note.contains("bullpen-exit: exit 0"), "{note}");
}

#[test]
fn killing_the_supervisor_shows_lost_and_stop_still_cleans_up() {
    let env = Bg::new();
    // The supervisor holds the run's terminal: killing it hangs the terminal up,
    // which ends a command that does not ignore SIGHUP. This one does, and lingers.
    env.spawn_bg("a", &["sh", "-c", "trap '' HUP; exec sleep 1000"]);
    env.spawn_bg("b", &["sleep", "1000"]);
    let rec = env.record("a");
    let child = proc_stat(rec["process"]["pid"].as_u64().unwrap() as u32).unwrap();
    // Killed before the shell ignores SIGHUP, it would end with the hang-up.
    wait_exec(child.pid, "sleep");
    let supervisor = rec["process"]["supervisor_pid"].as_u64().unwrap() as u32;
    kill(supervisor, libc::SIGKILL);
    env.wait_state("a", "lost");
    assert!(still_alive(&child), "the command itself lingers");
    assert_eq!(env.state("b"), "running", "other sessions are untouched");
    env.bullpen(&["logs", "a"]).ok();
    // A second start is refused while the lingering command lives.
    let commit = env.record_commit("a");
    let wt = env.worktree_of("a");
    let second = env.supervise_in(&wt, "a", &commit);
    assert_contains(&second.stderr, &format!("pid {}", child.pid));
    assert!(!wt.join("second").exists());

    let run = env.bullpen(&["stop", "a"]).ok();
    assert_contains(&run.stderr, "lost");
    assert!(!still_alive(&child));
    assert_eq!(env.state("a"), "stopped");
    assert_eq!(env.state("b"), "running");
    env.bullpen(&["stop", "b"]).ok();
}

#[test]
fn a_second_start_of_a_running_session_is_refused_naming_the_pid() {
    let env = Bg::new();
    env.spawn_bg("a", &["sleep", "1000"]);
    let pid = pid_of(&env.row("a"));
    let before = env.record_commit("a");
    let wt = env.worktree_of("a");
    // What `resume --bg` would start: a supervisor for the record as it is now.
    let run = env.supervise_in(&wt, "a", &before).fails();
    assert_contains(&run.stderr, &format!("pid {pid}"));
    assert!(!wt.join("second").exists(), "the second command never ran");
    assert_eq!(env.record_commit("a"), before, "the record is unchanged");
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_start_for_a_record_that_changed_meanwhile_runs_nothing() {
    let env = Bg::new();
    env.spawn_bg("a", &["true"]);
    env.wait_state("a", "exited");
    // The record moved on since "ready": a start requested back then must lose.
    let stale = env.git_out(&["rev-parse", "refs/bullpen/sessions/a~2"]);
    let before = env.record_commit("a");
    let wt = env.worktree_of("a");
    let run = env.supervise_in(&wt, "a", &stale).fails();
    assert_contains(&run.stderr, "changed while this run was starting");
    assert!(!wt.join("second").exists(), "the command never ran");
    assert_eq!(env.record_commit("a"), before, "the record is unchanged");
}

#[test]
fn a_command_that_cannot_start_is_recorded_127() {
    let env = Bg::new();
    let run = env
        .bullpen(&["spawn", "--bg", "a", "--", "no-such-command-xyz"])
        .fails();
    assert_eq!(run.code(), 125);
    assert_contains(&run.stderr, "no-such-command-xyz");
    let row = env.row("a");
    assert_eq!(row["state"], "exited", "{row}");
    assert_eq!(row["exit_code"], 127);
    // The run was claimed (it started, then failed): unlike a run that never
    // started, the session stays whole.
    assert!(env.worktree_of("a").is_dir(), "the worktree stays");
    env.git(&env.repo, &["rev-parse", "--verify", "-q", "bullpen/a"])
        .ok();
}

#[test]
fn spawn_bg_without_a_command_starts_the_shell_on_its_terminal() {
    let env = Bg::new();
    // The hermetic SHELL is /bin/sh; there is a terminal for it now.
    env.bullpen(&["spawn", "--bg", "a"]).ok();
    let row = env.row("a");
    assert_eq!(row["state"], "running", "{row}");
    assert_eq!(row["command"], serde_json::json!(["/bin/sh"]));
    // It waits for someone to type: what is typed through attach reaches it.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut t = crate::pty::Term::spawn(cmd, 24, 80);
    t.expect("detach with Ctrl-\\");
    t.send(b"exit 7\r");
    assert_eq!(t.wait().code(), Some(7), "{}", t.shown());
    // bullpen.command is started instead when it is set.
    env.git_out(&["config", "bullpen.command", "echo configured"]);
    env.bullpen(&["spawn", "--bg", "b"]).ok();
    env.wait_state("b", "exited");
    assert_eq!(
        timeless(&env.bullpen(&["logs", "b"]).ok().stdout),
        "configured\nbullpen: session b exited 0 after [T]\n"
    );
}

/// `spawn --bg` failed before its run started: exit 125 with `cause`, the
/// command never ran, and nothing of the session is left.
#[track_caller]
fn assert_bg_failed_closed(env: &Bg, run: &Run, cause: &str, before: &str, marker: &Path) {
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(
        run.stderr.contains(cause),
        "{cause:?} not in:\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("session a did not start; nothing of it is left"),
        "{}",
        run.stderr
    );
    assert!(!marker.exists(), "the command never ran");
    assert_eq!(
        env.snapshot(),
        before,
        "no record, branch or worktree is left"
    );
    assert!(
        !env.repo.join(".git/bullpen/logs/a.log").exists(),
        "no empty log is left"
    );
}

#[test]
fn spawn_bg_that_cannot_open_its_log_leaves_nothing_behind() {
    let env = Bg::new();
    let state = env.repo.join(".git/bullpen");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("logs"), "a file where the log directory goes\n").unwrap();
    let before = env.snapshot();
    let marker = env.root().join("command-ran");
    let run = env
        .bullpen(&[
            "spawn",
            "--bg",
            "a",
            "--",
            "touch",
            marker.to_str().unwrap(),
        ])
        .fails();
    assert_bg_failed_closed(
        &env,
        &run,
        "cannot create the log directory",
        &before,
        &marker,
    );

    // Nothing holds the id: once the log can be written, the same spawn runs.
    std::fs::remove_file(state.join("logs")).unwrap();
    env.spawn_bg("a", &["touch", marker.to_str().unwrap()]);
    env.wait_state("a", "exited");
    assert!(marker.exists());
}

#[test]
fn spawn_bg_whose_supervisor_cannot_start_leaves_nothing_behind() {
    let env = Bg::new();
    // The supervisor is bullpen itself (`current_exe`): a copy that a hook
    // removes while spawn creates the worktree (as an upgrade or uninstall
    // might) cannot be started again.
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("git-bullpen");
    std::fs::copy(BIN, &exe).unwrap();
    let hooks = env.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\nrm -f '{}'\n", exe.display())).unwrap();
    crate::support::make_executable(&hook);
    let before = env.snapshot();
    let marker = env.root().join("command-ran");
    let run: Run = env
        .cmd(&exe, &env.repo)
        .args([
            "spawn",
            "--bg",
            "a",
            "--",
            "touch",
            marker.to_str().unwrap(),
        ])
        .output()
        .unwrap()
        .into();
    assert!(!exe.exists(), "the hook ran");
    assert_bg_failed_closed(&env, &run, "cannot start the supervisor", &before, &marker);
}

#[test]
fn resume_bg_runs_again_in_the_background_and_appends_to_the_log() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "echo first"]);
    env.wait_state("a", "exited");
    // Run from the main worktree: the command still runs in the session's.
    let run = env
        .bullpen(&["resume", "--bg", "a", "--", "sh", "-c", "pwd; echo second"])
        .ok();
    assert_eq!(run.stdout, "a\n");
    env.wait_state("a", "exited");
    let wt = env.worktree_of("a");
    let logs = env.bullpen(&["logs", "a"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        format!(
            "first\nbullpen: session a exited 0 after [T]\n{}\nsecond\n\
             bullpen: session a exited 0 after [T]\n",
            wt.display()
        )
    );
    let history = env.git_out(&["log", "--format=%s", "refs/bullpen/sessions/a"]);
    assert!(history.contains("bullpen: a resumed"), "{history}");
}

#[test]
fn resume_while_a_background_run_lives_is_refused_naming_the_pid() {
    let env = Bg::new();
    // Ignores SIGHUP: it outlives its supervisor (and the terminal it held).
    env.spawn_bg("a", &["sh", "-c", "trap '' HUP; exec sleep 1000"]);
    let pid = pid_of(&env.row("a"));
    // Only then does it ignore SIGHUP (and outlive its supervisor, below).
    wait_exec(pid, "sleep");
    let before = env.record_commit("a");
    for args in [
        &["resume", "a", "--", "touch", "second"][..],
        &["resume", "--bg", "a", "--", "touch", "second"][..],
    ] {
        let run = env.bullpen(args).fails();
        assert!(
            run.stderr.contains(&format!("pid {pid}")),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!env.worktree_of("a").join("second").exists());
    assert_eq!(env.record_commit("a"), before);

    // Lost (supervisor killed) while its command lingers: still one live process.
    let sup = env.record("a")["process"]["supervisor_pid"]
        .as_u64()
        .unwrap() as u32;
    kill(sup, libc::SIGKILL);
    env.wait_state("a", "lost");
    let run = env
        .bullpen(&["resume", "--bg", "a", "--", "touch", "second"])
        .fails();
    assert_contains(&run.stderr, &format!("pid {pid}"));
    assert!(!env.worktree_of("a").join("second").exists());

    // Once stopped, it may run again.
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["resume", "--bg", "a", "--", "touch", "second"])
        .ok();
    env.wait_state("a", "exited");
    assert!(env.worktree_of("a").join("second").exists());
}

#[test]
fn a_lost_run_with_leftovers_in_its_group_is_not_resumed() {
    let env = Bg::new();
    // The child ignores SIGHUP (inherited from the shell), so it outlives the
    // terminal that the killed supervisor held.
    env.spawn_bg("a", &["sh", "-c", "trap '' HUP; sleep 1000 & wait"]);
    let rec = env.record("a");
    let leader = rec["process"]["pid"].as_u64().unwrap() as u32;
    let sup = rec["process"]["supervisor_pid"].as_u64().unwrap() as u32;
    let left: Vec<u32> = wait_for("the shell's child", || {
        let m: Vec<u32> = group_members(leader, leader)
            .into_iter()
            .filter(|p| *p != leader)
            .collect();
        (m.len() == 1).then_some(m)
    });
    // The supervisor and the command are gone; the command's child lingers.
    kill(sup, libc::SIGKILL);
    kill(leader, libc::SIGKILL);
    env.wait_state("a", "lost");
    // SIGKILL lands asynchronously: until the leader is dead, resume rightly
    // names it (the first living process of the run) rather than its child.
    wait_for("the command to be dead", || {
        proc_stat(leader).is_none_or(|p| !p.alive()).then_some(())
    });
    for args in [
        &["resume", "a", "--", "touch", "second"][..],
        &["resume", "--bg", "a", "--", "touch", "second"][..],
    ] {
        let run = env.bullpen(args).fails();
        assert!(
            run.stderr.contains(&format!("pid {}", left[0])),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!env.worktree_of("a").join("second").exists());
    // Neither the command nor the supervisor lives to prove the leftover is the
    // session's (its ids could have been reused): stop refuses, naming it.
    let run = env.bullpen(&["stop", "a"]).fails();
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("kill {}", left[0])),
        "{}",
        run.stderr
    );
    assert_eq!(group_members(leader, leader), left, "nothing was signalled");
    assert_eq!(env.state("a"), "lost");
    kill(left[0], libc::SIGKILL);
    wait_for("the leftover to end", || {
        group_members(leader, leader).is_empty().then_some(())
    });
    env.bullpen(&["stop", "a"]).ok();
    assert_eq!(env.state("a"), "stopped");
}

#[test]
fn an_unreaped_zombie_is_not_alive() {
    let mut env = Bg::new();
    env.bullpen(&["spawn", "--bg", "a", "--", "true"]).ok();
    env.wait_state("a", "exited");
    // A process that has ended but that nobody reaped (its parent, this test,
    // does not wait for it yet): it still has a /proc entry with a start time.
    let zombie = env.cmd("true", &env.repo.clone()).spawn().unwrap();
    let pid = zombie.id();
    env.children.push(zombie);
    let stat = wait_for("a zombie", || proc_stat(pid).filter(|s| s.state == 'Z'));
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    env.edit_record("a", |r| {
        r["state"] = "running".into();
        r["process"]["pid"] = pid.into();
        r["process"]["start_time"] = stat.start_time.into();
        r["process"]["supervisor_pid"] = pid.into();
        r["process"]["supervisor_start_time"] = stat.start_time.into();
        r["process"]["boot_id"] = boot.trim().into();
    });
    assert_eq!(env.state("a"), "lost");
}

#[test]
fn gc_names_a_running_sessions_own_processes_once_never_as_strangers() {
    let env = Bg::new();
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env.spawn_bg("busy", &["sleep", "300"]);
    let row = env.wait_state("busy", "running");
    let pid = row["pid"].as_u64().unwrap();
    let wt = env.worktree_of("busy");
    // The supervisor and the command both have their cwd in the worktree: the
    // session's own, named once as its process.
    let (run, entries) = crate::gc::gc(&env, &["--dry-run"]);
    run.ok();
    let e = crate::gc::session(&entries, "busy");
    assert_eq!(
        e["reason"],
        format!("busy: the session's process (pid {pid}) is running"),
        "{e}"
    );
    // A stranger in it is still named.
    let mut stranger = std::process::Command::new("sleep")
        .arg("300")
        .current_dir(&wt)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let spid = stranger.id();
    wait_for("the stranger to be in the worktree", || {
        std::fs::read_link(format!("/proc/{spid}/cwd"))
            .ok()
            .filter(|c| *c == wt)
    });
    let (_, entries) = crate::gc::gc(&env, &["--dry-run"]);
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert_eq!(
        crate::gc::session(&entries, "busy")["reason"],
        format!(
            "busy: the session's process (pid {pid}) is running; busy: pid {spid} (sleep) has \
             its current directory in it"
        )
    );
    env.bullpen(&["stop", "busy"]).ok();
}

/// The session's log holds `needle`: its supervisor has read it from the
/// terminal (and fed it to its model: the log is written first, in one step).
pub(crate) fn wait_logged(env: &Env, id: &str, needle: &str) {
    let log = env.repo.join(format!(".git/bullpen/logs/{id}.log"));
    wait_for(&format!("{needle:?} in the log of {id}"), || {
        std::fs::read(&log)
            .ok()
            .filter(|l| l.windows(needle.len()).any(|w| w == needle.as_bytes()))
    });
}
