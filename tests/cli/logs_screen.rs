//! `logs` reads a run's log as its terminal showed it, and `stop` ends a
//! terminal run as closing its window would. Real background runs of fake
//! agents (shell scripts that draw with cursor motions, a `\r` spinner, the
//! alternate screen), a real interactive bash; gated on events (the record
//! says exited, a prompt in the log, a line on a pipe), never on sleeps.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::bg::{timeless, wait_for, Bg};
use crate::support::assert_contains;

/// A failure bound only: every wait ends as soon as what it waits for happens.
const DEADLINE: Duration = Duration::from_secs(60);

fn log_of(env: &Bg, id: &str) -> PathBuf {
    env.repo.join(format!(".git/bullpen/logs/{id}.log"))
}

#[test]
fn logs_gives_the_words_with_their_spaces_and_the_spinners_last_state() {
    let env = Bg::new();
    let agent = "printf 'word1\\033[3Cword2\\033[20Gword3\\n'; \
                 printf 'progress 10%%\\rprogress 100%%\\n'; \
                 for s in '|' / - '\\\\'; do printf '%s thinking\\r' \"$s\"; done; \
                 printf '\\033[2Kdone\\n'; \
                 printf '\\033[1;31mred\\033[0m \\033]0;title\\007tail\\n'; \
                 printf '%0200d\\n' 0; seq 1 30; exit 3";
    env.spawn_bg("a", &["sh", "-c", agent]);
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        format!(
            "word1   word2      word3\nprogress 100%\ndone\nred tail\n{}\n{}\
             bullpen: session a exited 3 after [T]\n",
            // Long enough to wrap, and to scroll off the screen with the lines after.
            "0".repeat(200),
            (1..=30).map(|i| format!("{i}\n")).collect::<String>()
        )
    );
    // The log itself stays the bytes as written; --raw prints them.
    let raw = env.bullpen(&["logs", "--raw", "a"]).ok();
    assert_contains(&raw.stdout, "word1\x1b[3Cword2\x1b[20Gword3\r\n");
    assert_contains(&raw.stdout, "progress 10%\rprogress 100%\r\n");
    let bytes = std::fs::read(log_of(&env, "a")).unwrap();
    assert_eq!(String::from_utf8_lossy(&bytes), raw.stdout);
    // wait says the end in the same words.
    let wait = env.bullpen(&["wait", "a"]);
    assert_eq!(wait.code(), 3);
    assert_contains(&wait.stderr, "bullpen: session a exited 3 after ");
}

#[test]
fn logs_of_a_program_that_ended_on_the_alternate_screen_shows_that_screen_last() {
    let env = Bg::new();
    env.spawn_bg(
        "full",
        &[
            "sh",
            "-c",
            "printf 'before\\n'; printf '\\033[?1049h\\033[H\\033[2J\\033[3;5Hdrawn'",
        ],
    );
    env.wait_state("full", "exited");
    let logs = env.bullpen(&["logs", "full"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        "before\n\n\n    drawn\nbullpen: session full exited 0 after [T]\n"
    );
    // One that left it first: gone from the screen, as from a terminal's.
    env.spawn_bg(
        "left",
        &[
            "sh",
            "-c",
            "printf 'before\\n\\033[?1049hdrawn\\033[?1049lafter\\n'",
        ],
    );
    env.wait_state("left", "exited");
    let logs = env.bullpen(&["logs", "left"]).ok();
    assert_eq!(
        timeless(&logs.stdout),
        "before\nafter\nbullpen: session left exited 0 after [T]\n"
    );
}

#[test]
fn logs_follow_prints_a_line_once_it_is_done_while_the_run_goes_on() {
    let env = Bg::new();
    let fifo = env.root().join("go");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let script = format!(
        "printf 'step 10%%\\rstep 100%%\\n'; read x < '{}'; printf 'second\\n'",
        fifo.display()
    );
    env.spawn_bg("a", &["sh", "-c", &script]);
    let mut cmd = env.cmd(crate::support::BIN, &env.repo);
    cmd.args(["logs", "--follow", "a"]).stdout(Stdio::piped());
    let mut follow = cmd.spawn().unwrap();
    let stdout = follow.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The run is blocked on the FIFO: this line comes while it goes on.
    let first = rx.recv_timeout(DEADLINE);
    // Let the run end whatever happened, so that nothing is left waiting.
    std::fs::write(&fifo, "go\n").unwrap();
    assert_eq!(first.as_deref(), Ok("step 100%"));
    let rest: Vec<String> = rx.iter().collect();
    let status = follow.wait().unwrap();
    reader.join().unwrap();
    assert!(status.success());
    assert_eq!(
        timeless(&(rest.join("\n") + "\n")),
        "second\nbullpen: session a exited 0 after [T]\n"
    );
}

#[test]
fn stop_ends_an_interactive_shell_by_sighup_without_waiting_for_the_timeout() {
    let env = Bg::new();
    // bash -i ignores SIGTERM; closing its window (SIGHUP) ends it.
    env.spawn_bg(
        "sh1",
        &["sh", "-c", "PS1='ready> ' exec bash --norc --noprofile -i"],
    );
    let log = log_of(&env, "sh1");
    wait_for("the shell's prompt", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains("ready> "))
    });
    // Were SIGTERM first, bash would last until SIGKILL at the timeout.
    let stop = env.bullpen(&["stop", "--timeout", "20", "sh1"]).ok();
    assert_contains(
        &stop.stderr,
        "bullpen: session sh1 stopped by SIGHUP after ",
    );
    assert!(!stop.stderr.contains("stop sent"), "{}", stop.stderr);
    let row = env.row("sh1");
    assert_eq!(row["state"], "stopped", "{row}");
    assert_eq!(row["signal"], 1, "{row}");
    let logs = env.bullpen(&["logs", "sh1"]).ok();
    assert!(
        timeless(&logs.stdout).ends_with("bullpen: session sh1 stopped by SIGHUP after [T]\n"),
        "{}",
        logs.stdout
    );
}

#[test]
fn stop_says_what_it_sent_when_the_end_does_not() {
    let env = Bg::new();
    // It catches the hang-up and exits 0 by itself.
    env.spawn_bg(
        "t",
        &["bash", "-c", "trap 'exit 0' HUP; echo armed; read x"],
    );
    let log = log_of(&env, "t");
    wait_for("the trap to be set", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains("armed"))
    });
    let stop = env.bullpen(&["stop", "--timeout", "20", "t"]).ok();
    assert_contains(&stop.stderr, "bullpen: session t stopped, exited 0 after ");
    assert_contains(&stop.stderr, "s (stop sent SIGHUP)\n");
    let row = env.row("t");
    assert_eq!(row["state"], "stopped", "{row}");
    assert_eq!(row["exit_code"], 0, "{row}");
}

#[test]
fn the_end_of_a_run_is_said_one_way() {
    let env = Bg::new();
    env.spawn_bg("a-three", &["sh", "-c", "exit 3"]);
    env.wait_state("a-three", "exited");
    env.spawn_bg("b-sleeps", &["sleep", "1000"]);
    let table = crate::snapshots::show_all(
        &env,
        &[
            &["wait", "a-three"][..],
            &["stop", "a-three"],
            &["stop", "b-sleeps"],
            &["stop", "b-sleeps"],
            &["wait", "b-sleeps"],
            &["logs", "b-sleeps"],
        ],
    );
    insta::assert_snapshot!(table, @"
    $ git bullpen wait a-three
    exit 3
    --- stderr
    bullpen: session a-three exited 3 after [T]

    $ git bullpen stop a-three
    exit 0
    --- stderr
    bullpen: session a-three is not running (exited 3); nothing to stop

    $ git bullpen stop b-sleeps
    exit 0
    --- stderr
    bullpen: session b-sleeps stopped by SIGHUP after [T]

    $ git bullpen stop b-sleeps
    exit 0
    --- stderr
    bullpen: session b-sleeps is not running (stopped by SIGHUP); nothing to stop

    $ git bullpen wait b-sleeps
    exit 129
    --- stderr
    bullpen: session b-sleeps stopped by SIGHUP after [T]

    $ git bullpen logs b-sleeps
    exit 0
    --- stdout
    bullpen: session b-sleeps stopped by SIGHUP after [T]
    ");
}
