//! The rest of the screen (issue 24): `ls --screen` shows each running
//! background run's last screen line and never waits long for a stuck
//! supervisor; `logs` renders a run at the sizes its terminal had. Real runs
//! on real pseudo-terminals, gated on events (a line in the log, a record's
//! state), never on sleeps.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::bg::{wait_for, wait_logged, Bg};
use crate::pty::Term;
use crate::support::{assert_contains, BIN};

/// `ls --screen <args>` with a failure bound: killed (and the test failed) if
/// it is still running after a minute.
fn ls_screen(env: &Bg, args: &[&str]) -> (String, Duration) {
    let start = Instant::now();
    let mut child = env
        .cmd(BIN, &env.repo)
        .args(["ls", "--screen"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limit = start + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ls --screen still running after a minute: it waits for a stuck supervisor");
        }
        // Polling for the process's end, bounded above; no gate on time.
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), start.elapsed())
}

fn screen_of(json: &str, id: &str) -> Value {
    let v: Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
        .unwrap_or_else(|| panic!("no session {id} in {json}"))["screen"]
        .clone()
}

fn supervisor_of(env: &Bg, id: &str) -> i32 {
    env.record(id)["process"]["supervisor_pid"]
        .as_i64()
        .unwrap() as i32
}

#[test]
fn ls_shows_the_last_screen_line_and_says_when_a_supervisor_does_not_answer() {
    let env = Bg::new();
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "printf 'first\\r\\n  \\033[32mthe last line\\033[m  \\r\\n\\r\\n'; read x",
        ],
    );
    env.spawn_bg("b", &["sh", "-c", "printf 'b is here'; read x"]);
    env.spawn_bg("done", &["true"]);
    env.wait_state("done", "exited");
    wait_logged(&env, "a", "the last line");
    wait_logged(&env, "b", "b is here");
    let (json, _) = ls_screen(&env, &["--json"]);
    assert_eq!(screen_of(&json, "a"), "the last line");
    assert_eq!(screen_of(&json, "b"), "b is here");
    assert_eq!(screen_of(&json, "done"), Value::Null);
    // Without --screen, no key and no question asked.
    let plain = env.ls_json();
    assert!(plain[0].get("screen").is_none(), "{plain}");
    let (table, _) = ls_screen(&env, &[]);
    assert_contains(&table, "SCREEN");
    assert_contains(&table, "the last line");

    // b's supervisor stopped: ls answers anyway, and says so.
    let b = supervisor_of(&env, "b");
    // SAFETY: signals a process this test started (b's supervisor).
    assert_eq!(unsafe { libc::kill(b, libc::SIGSTOP) }, 0);
    let (table, took) = ls_screen(&env, &[]);
    let (json, _) = ls_screen(&env, &["--json"]);
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(b, libc::SIGCONT) }, 0);
    assert!(took < Duration::from_secs(30), "{took:?}");
    let line_b = table
        .lines()
        .find(|l| l.contains(" b "))
        .unwrap_or_default();
    assert_contains(line_b, "(no answer)");
    assert_contains(&table, "the last line");
    assert_eq!(screen_of(&json, "b"), Value::Null);
    assert_eq!(screen_of(&json, "a"), "the last line");
    // Going again, it answers again.
    let (json, _) = ls_screen(&env, &["--json"]);
    assert_eq!(screen_of(&json, "b"), "b is here");
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["stop", "b"]).ok();
}

#[test]
fn logs_renders_the_run_at_the_sizes_its_terminal_had() {
    let env = Bg::new();
    let fifo = env.root().join("next");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Right-aligned at column 140, once now and once after each line on the FIFO.
    let script = format!(
        "exec 3<>'{}'; printf '\\033[140Gone\\r\\n'; read l <&3; printf '\\033[140Gtwo\\r\\n'; \
         read l <&3",
        fifo.display()
    );
    // Started from a terminal 30 x 150: the run's terminal has its size.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["spawn", "--bg", "a", "--", "sh", "-c", &script]);
    let mut t = Term::spawn(cmd, 30, 150);
    assert_eq!(t.wait().code(), Some(0), "{}", t.shown());
    wait_logged(&env, "a", "one");
    // Attached from a terminal 24 x 100: the run's terminal is resized.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut t = Term::spawn(cmd, 24, 100);
    t.expect("detach with");
    wait_for("the run's terminal to be 24 x 100", || {
        let json = env.bullpen(&["peek", "--json", "a"]).ok().stdout;
        let json: Value = serde_json::from_str(&json).unwrap();
        (json["cols"] == 100).then_some(())
    });
    std::fs::write(&fifo, "x\n").unwrap();
    t.expect("two");
    t.send(b"\x1c");
    t.expect("detached from session");
    t.wait();
    std::fs::write(&fifo, "x\n").unwrap();
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    let lines: Vec<&str> = logs.lines().collect();
    assert_eq!(lines[0], format!("{}one", " ".repeat(139)), "{logs:?}");
    assert_eq!(lines[1], format!("{}two", " ".repeat(99)), "{logs:?}");
    // The log itself is still the bytes as written.
    let raw = env.bullpen(&["logs", "--raw", "a"]).ok().stdout;
    assert_contains(&raw, "\x1b[140Gone\r");
    assert_contains(&raw, "\x1b[140Gtwo\r");
}

#[test]
fn ls_screen_lines_stay_with_their_rows_when_attention_sorts_them() {
    let env = Bg::new();
    // "a" keeps writing (working); "b" asks and waits on its terminal (needs
    // input), so --attention shows b first.
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "printf 'line of a\\r\\n'; while :; do printf '\\r'; sleep 0.05; done",
        ],
    );
    env.spawn_bg("b", &["sh", "-c", "printf 'question of b? '; read x"]);
    wait_logged(&env, "a", "line of a");
    wait_logged(&env, "b", "question of b?");
    crate::attention::wait_activity(&env, "b", "needs input");
    crate::attention::wait_activity(&env, "a", "working");
    let (json, _) = ls_screen(&env, &["--attention", "--json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let order: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["b", "a"], "{json}");
    assert_eq!(screen_of(&json, "a"), "line of a");
    assert_eq!(screen_of(&json, "b"), "question of b?");
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["stop", "b"]).ok();
}
