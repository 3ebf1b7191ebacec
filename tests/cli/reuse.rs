//! Liveness by identity: a background run whose supervisor and command were
//! SIGKILLed, their pid then taken by an unrelated process that starts a
//! session of its own, is lost — to `ls`, `resume`, `gc`, `rm` and `stop`
//! alike — and the stranger is never named as the session's, nor signalled.
//!
//! The pid is reused on purpose in a private pid namespace (`unshare -fp
//! --mount-proc`, then `/proc/sys/kernel/ns_last_pid`); every command runs in it
//! through `nsenter`. Needs root: skipped without it, but with `CI` set a
//! missing capability fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::bg::wait_for;
use crate::support::{Env, Run, BIN};

/// The namespace's init (a shell that reaps orphans while it waits), ended
/// with everything in the namespace when dropped.
struct Namespace {
    unshare: Child,
    init: u32,
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Its init ending takes every process of the namespace with it.
        // SAFETY: kill(2) on the namespace init this test started.
        unsafe { libc::kill(self.init as i32, libc::SIGKILL) };
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

impl Namespace {
    fn new() -> Option<Namespace> {
        let mut unshare = Command::new("unshare")
            .args(["-fp", "--mount-proc", "--kill-child"])
            .args(["sh", "-c", "sleep 1000000 & wait"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let children = format!("/proc/{0}/task/{0}/children", unshare.id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let init = loop {
            if let Ok(Some(_)) = unshare.try_wait() {
                return None; // no capability: unshare failed
            }
            if let Some(pid) = std::fs::read_to_string(&children)
                .ok()
                .and_then(|c| c.split_whitespace().next().and_then(|p| p.parse().ok()))
            {
                break pid;
            }
            assert!(std::time::Instant::now() < deadline, "no namespace init");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let ns = Namespace { unshare, init };
        // Its own /proc is mounted once its init runs the shell.
        wait_for("the namespace's /proc", || {
            let out = Command::new("nsenter")
                .args([
                    "-t",
                    &ns.init.to_string(),
                    "-p",
                    "-m",
                    "--",
                    "test",
                    "-e",
                    "/proc/1",
                ])
                .status()
                .ok()?;
            out.success().then_some(())
        });
        Some(ns)
    }

    /// `program args` in the namespace, with the test's hermetic environment.
    fn run(&self, env: &Env, cwd: &Path, program: &str, args: &[&str]) -> Run {
        let mut cmd = env.cmd("nsenter", cwd);
        let wd = format!("--wd={}", cwd.display());
        cmd.args(["-t", &self.init.to_string(), "-p", "-m", &wd, "--", program])
            .args(args)
            .output()
            .expect("nsenter")
            .into()
    }

    fn bullpen(&self, env: &Env, args: &[&str]) -> Run {
        self.run(env, &env.repo, BIN, args)
    }
}

#[test]
fn a_reused_pid_does_not_make_a_lost_run_look_alive() {
    let env = Env::new();
    let Some(ns) = Namespace::new() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: cannot make a private pid namespace (unshare -fp needs root)"
        );
        eprintln!("skipped: cannot make a private pid namespace (unshare -fp needs root)");
        return;
    };
    let mut runs = Vec::new();
    for id in ["a", "b"] {
        ns.bullpen(&env, &["spawn", "--bg", id, "--", "sleep", "1000"])
            .ok();
        runs.push(wait_for("the run to be recorded", || {
            let rec = env.record(id);
            let p = &rec["process"];
            Some((p["pid"].as_u64()?, p["supervisor_pid"].as_u64()?))
        }));
    }
    // Supervisors and commands SIGKILLed; once their pids are free, a stranger
    // takes each command's pid, leading a session (and group) of its own.
    let mut script = String::new();
    for (pid, supervisor) in &runs {
        script.push_str(&format!("kill -9 {supervisor} {pid}\n"));
    }
    for (pid, supervisor) in &runs {
        script.push_str(&format!(
            "while [ -e /proc/{pid} ] || [ -e /proc/{supervisor} ]; do sleep 0.01; done\n"
        ));
    }
    for (pid, _) in &runs {
        script.push_str(&format!(
            "echo {last} > /proc/sys/kernel/ns_last_pid\n\
             setsid sleep 1000 </dev/null >/dev/null 2>&1 &\n\
             echo $!\n",
            last = pid - 1
        ));
    }
    let strangers = ns.run(&env, &env.repo, "sh", &["-c", &script]).ok();
    let want: Vec<String> = runs.iter().map(|(pid, _)| pid.to_string()).collect();
    assert_eq!(
        strangers.stdout.split_whitespace().collect::<Vec<_>>(),
        want,
        "the strangers did not get the pids"
    );
    let (a, b) = (runs[0].0, runs[1].0);
    let alive = |pid: u64, what: &str| {
        let r = ns.run(&env, &env.repo, "test", &["-e", &format!("/proc/{pid}")]);
        assert!(r.status.success(), "stranger {pid} is gone after {what}");
    };
    // Running, or a pid to kill: the stranger named as the session's.
    let names_stranger = |run: &Run, pid: u64| {
        // Saying the recorded process is gone is the truth.
        let text = format!("{}{}", run.stdout, run.stderr).replace(
            &format!("was recorded running (pid {pid}), but that process is gone"),
            "",
        );
        text.contains("running")
            || text.contains(&format!("pid {pid}"))
            || text.contains(&format!("kill {pid}"))
            || text.contains(&format!("pids {pid}"))
    };

    // Every command is asked, and every one that names a stranger is reported.
    let mut wrong = Vec::new();
    let ls = ns.bullpen(&env, &["ls", "--all"]);
    if ls.stdout.contains("running") {
        wrong.push(format!("ls:\n{}", ls.stdout));
    }
    let gc = ns.bullpen(&env, &["gc", "--dry-run"]);
    if names_stranger(&gc, a) || names_stranger(&gc, b) {
        wrong.push(format!("gc:\n{}{}", gc.stdout, gc.stderr));
    }
    let rm = ns.bullpen(&env, &["rm", "--dry-run", "a", "b"]);
    if names_stranger(&rm, a) || names_stranger(&rm, b) {
        wrong.push(format!("rm:\n{}{}", rm.stdout, rm.stderr));
    }
    let stop = ns.bullpen(&env, &["stop", "a"]);
    if names_stranger(&stop, a) || env.record("a")["state"] != "stopped" {
        wrong.push(format!("stop:\n{}{}", stop.stdout, stop.stderr));
    }
    let resume = ns.bullpen(&env, &["resume", "b", "--", "true"]);
    if names_stranger(&resume, b) || env.record("b")["state"] != "exited" {
        wrong.push(format!("resume:\n{}{}", resume.stdout, resume.stderr));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    alive(a, "stop");
    alive(b, "resume");
}
