//! A run's leftovers belong to it: an agent's daemon (as Codex's `app-server`)
//! that double-forks out of the run's process group into a session of its own,
//! its current directory in the worktree, stays with the run's supervisor (a
//! child subreaper) after the command ends; `stop` ends it, and gc names it with
//! the command that does. A process that is not the run's is never named as its.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::bg::wait_for;
use crate::support::{assert_contains, Env};

/// A copy of `sleep` named `codex`, so that `/proc/<pid>/comm` says so.
fn fake_codex(env: &Env) -> PathBuf {
    let dir = env.root().join("agent-bin");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let sleep = Command::new("sh")
        .args(["-c", "command -v sleep"])
        .output()
        .expect("sh");
    let sleep = String::from_utf8_lossy(&sleep.stdout).trim().to_owned();
    let codex = dir.join("codex");
    if !codex.exists() {
        std::fs::copy(&sleep, &codex).expect("copy sleep");
    }
    codex
}

/// Every process named `name` whose current directory is `dir`.
fn in_dir(name: &str, dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
                && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir)
                && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
        })
        .collect()
}

/// Ends a process this test caused, whoever owns it by then.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill(2) on a process this test started (through bullpen).
        unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
    }
}

/// A published repository with a background session whose command starts a
/// daemon in the worktree and ends; the daemon's pid, once the command ended.
fn session_with_a_daemon(env: &Env, id: &str) -> (PathBuf, KillOnDrop) {
    session_with(env, id, "echo started", "exited")
}

/// As [`session_with_a_daemon`], the command running `then` after the daemon
/// started, until the record says `state`.
fn session_with(env: &Env, id: &str, then: &str, state: &str) -> (PathBuf, KillOnDrop) {
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env.git(&env.repo, &["fetch", "-q", "origin"]).ok();
    let codex = fake_codex(env);
    // The command ends only once the daemon leads its own session (else the
    // terminal's hang-up at the command's end could reach it first).
    let ready = env.root().join(format!("{id}.daemon-ready"));
    let script = format!(
        "( setsid sh -c ': > \"$0\"; exec \"$1\" 1000' '{ready}' '{codex}' </dev/null >/dev/null 2>&1 & ); \
         while [ ! -e '{ready}' ]; do sleep 0.01; done; {then}",
        ready = ready.display(),
        codex = codex.display()
    );
    env.bullpen(&["spawn", "--bg", id, "--", "sh", "-c", &script])
        .ok();
    wait_for("the record's state", || {
        (env.record(id)["state"] == state).then_some(())
    });
    let worktree = env.worktree_of(id);
    let pid = wait_for("the daemon", || in_dir("codex", &worktree).first().copied());
    (worktree, KillOnDrop(pid))
}

fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z')),
    }
}

#[test]
fn stop_ends_the_daemon_a_run_left_behind_and_gc_then_removes_the_worktree() {
    let env = Env::new();
    let (worktree, daemon) = session_with_a_daemon(&env, "agent");
    // gc and rm name it, with the command that ends it.
    let gc = env.bullpen(&["gc"]).ok();
    assert_contains(
        &gc.stdout,
        &format!(
            "kept  agent: busy: pid {} (codex) has its current directory in it, left behind \
             by its run (`git bullpen stop agent` ends it)",
            daemon.0
        ),
    );
    let rm = env.bullpen(&["rm", "agent"]);
    assert_eq!(rm.code(), 3, "{}", rm.stderr);
    assert_contains(
        &rm.stderr,
        "hint: agent: its run left processes behind: end them with `git bullpen stop agent`, \
         then rm it",
    );
    let stop = env.bullpen(&["stop", "agent"]).ok();
    assert_contains(
        &stop.stderr,
        &format!("ended what its run left behind: pid {} (SIGHUP)", daemon.0),
    );
    wait_for("the daemon to end", || gone(daemon.0).then_some(()));
    let gc = env.bullpen(&["gc"]).ok();
    assert_contains(&gc.stdout, "removed  agent");
    assert!(!worktree.exists());
}

#[test]
fn stop_never_signals_a_process_that_is_not_the_runs() {
    let env = Env::new();
    let (worktree, daemon) = session_with_a_daemon(&env, "agent");
    // Someone else's process in the worktree, not descended from the run.
    let theirs: Child = Command::new(fake_codex(&env))
        .arg("1000")
        .current_dir(&worktree)
        .spawn()
        .expect("start");
    let t = theirs.id();
    let mut theirs = EndOnDrop(theirs);
    let gc = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(
        &gc.stdout,
        &format!(
            "pid {} (codex) has its current directory in it, left behind",
            daemon.0
        ),
    );
    assert_contains(
        &gc.stdout,
        &format!("; busy: pid {t} (codex) has its current directory in it\n"),
    );
    let stop = env.bullpen(&["stop", "agent"]).ok();
    assert!(!stop.stderr.contains(&t.to_string()), "{}", stop.stderr);
    wait_for("the daemon to end", || gone(daemon.0).then_some(()));
    assert!(
        theirs.0.try_wait().expect("try_wait").is_none(),
        "stop ended a process that is not the run's"
    );
}

/// A child of the test, ended and reaped when dropped.
struct EndOnDrop(Child);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn stopping_a_running_session_ends_its_daemon_too() {
    let env = Env::new();
    let (_, daemon) = session_with(&env, "agent", "exec sleep 1000", "running");
    let stop = env.bullpen(&["stop", "agent"]).ok();
    assert_contains(
        &stop.stderr,
        &format!("ended what its run left behind: pid {} (SIGHUP)", daemon.0),
    );
    wait_for("the daemon to end", || gone(daemon.0).then_some(()));
    assert_eq!(env.record("agent")["state"], "stopped");
}
