//! Exit statuses a script can trust (`model::exit`): `spawn`, `resume`,
//! `attach` and `wait` give their command's status, even 3, 125, 128 and 129,
//! and bullpen's own refusal, failure or usage error there is 125 (126/127 for
//! a command it could not execute); other commands keep 3/128/129; a bug is 70.

use crate::bg::Bg;
use crate::pty::Term;
use crate::support::{assert_contains, Env, BIN};

/// Statuses a command gives that bullpen's own used to share.
const STATUSES: [i32; 4] = [3, 125, 128, 129];

fn exits(n: i32) -> String {
    format!("exit {n}")
}

#[test]
fn spawn_and_resume_give_the_commands_status_whatever_it_is() {
    let env = Env::new();
    for n in STATUSES {
        let id = format!("s{n}");
        let run = env.bullpen(&["spawn", &id, "--", "sh", "-c", &exits(n)]);
        assert_eq!(run.code(), n, "spawn: {}", run.stderr);
        assert_eq!(env.record(&id)["exit"]["code"], n);
        let run = env.bullpen(&["resume", &id, "--", "sh", "-c", &exits(n)]);
        assert_eq!(run.code(), n, "resume: {}", run.stderr);
    }
}

#[test]
fn wait_gives_the_runs_status_whatever_it_is() {
    let env = Bg::new();
    for n in STATUSES {
        let id = format!("w{n}");
        env.spawn_bg(&id, &["sh", "-c", &exits(n)]);
        let run = env.bullpen(&["wait", &id]);
        assert_eq!(run.code(), n, "{}", run.stderr);
    }
}

#[test]
fn attach_gives_the_runs_status_whatever_it_is() {
    let env = Bg::new();
    for n in STATUSES {
        let id = format!("a{n}");
        // The run waits for a line typed through attach, then exits n.
        env.spawn_bg(&id, &["sh", "-c", &format!("read x; {}", exits(n))]);
        let mut cmd = env.cmd(BIN, &env.repo);
        cmd.args(["attach", &id]);
        let mut t = Term::spawn(cmd, 24, 80);
        t.expect("detach with Ctrl-\\");
        t.send(b"go\r");
        t.expect(&format!("session {id} exited {n} after "));
        assert_eq!(t.wait().code(), Some(n), "{}", t.shown());
    }
}

#[test]
fn a_command_not_found_is_127_and_one_not_executable_126_recorded_so() {
    let env = Env::new();
    let run = env.bullpen(&["spawn", "nf", "--", "no-such-command-anywhere"]);
    assert_eq!(run.code(), 127, "{}", run.stderr);
    assert_eq!(env.record("nf")["exit"]["code"], 127);
    let script = env.root().join("not-executable");
    std::fs::write(&script, "#!/bin/sh\ntrue\n").unwrap();
    let run = env.bullpen(&["spawn", "ne", "--", script.to_str().unwrap()]);
    assert_eq!(run.code(), 126, "{}", run.stderr);
    assert_contains(&run.stderr, "Permission denied");
    assert_eq!(env.record("ne")["exit"]["code"], 126);
    // In the background: the record says the same, and wait gives it.
    let bg = Bg::new();
    let run = bg.bullpen(&["spawn", "--bg", "nfb", "--", "no-such-command-anywhere"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_eq!(bg.bullpen(&["wait", "nfb"]).code(), 127);
}

#[test]
fn bullpens_own_refusal_failure_and_usage_error_are_125_where_the_command_passes_through() {
    let env = Bg::new();
    env.bullpen(&["spawn", "x", "--", "true"]).ok();
    // Refused: the id is in use.
    let run = env.bullpen(&["spawn", "x", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(&run.stderr, "fatal: ");
    // Refused: the recorded worktree is occupied by something else.
    let wt = env.worktree_of("x");
    std::fs::remove_dir_all(&wt).unwrap();
    std::fs::write(&wt, "a file").unwrap();
    let run = env.bullpen(&["resume", "x"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    // Failed: not a repository.
    let elsewhere = env.root().join("not-a-repo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for args in [
        &["spawn", "y", "--", "true"][..],
        &["resume", "x"],
        &["wait", "x"],
        &["attach", "x"],
    ] {
        let run = env.bullpen_in(&elsewhere, args);
        assert_eq!(run.code(), 125, "{args:?}: {}", run.stderr);
        assert_contains(&run.stderr, "fatal: ");
    }
    // Usage errors: clap's, and bullpen's own (an invalid id).
    for args in [
        &["spawn", "--no-such-flag"][..],
        &["resume", "Not/An/Id"],
        &["wait"],
        &["--no-color", "attach", "--bogus", "x"],
    ] {
        let run = env.bullpen(args);
        assert_eq!(run.code(), 125, "{args:?}: {}", run.stderr);
        assert_contains(&run.stderr, "error: ");
    }
    // Attach to a session that is not running: refused.
    let run = env.bullpen(&["attach", "x"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
}

#[test]
fn the_other_commands_keep_3_128_and_129() {
    let env = Env::new();
    let wt = env.spawn_sh("x", "echo draft > notes.txt");
    assert!(wt.is_dir());
    // Refused: rm keeps a session that holds work.
    let run = env.bullpen(&["rm", "x"]);
    assert_eq!(run.code(), 3, "{}", run.stderr);
    // Failed: not a repository.
    let elsewhere = env.root().join("not-a-repo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = env.bullpen_in(&elsewhere, &["ls"]);
    assert_eq!(run.code(), 128, "{}", run.stderr);
    // Usage error.
    let run = env.bullpen(&["ls", "--no-such-flag"]);
    assert_eq!(run.code(), 129, "{}", run.stderr);
    // The whole help is not an error; `-h`, the short usage, exits as a usage
    // error does, as git's (125 where the command's own status passes through).
    assert_eq!(env.bullpen(&["spawn", "--help"]).code(), 0);
    assert_eq!(env.bullpen(&["spawn", "-h"]).code(), 125);
}

#[test]
fn a_bug_in_bullpen_exits_70_and_says_so() {
    let env = Env::new();
    for args in [&["ls"][..], &["spawn", "x", "--", "true"]] {
        let run: crate::support::Run = env
            .cmd(BIN, &env.repo)
            .args(args)
            .env("BULLPEN_TEST_PANIC", "1")
            .output()
            .unwrap()
            .into();
        assert_eq!(run.code(), 70, "{args:?}: {}", run.stderr);
        assert_contains(&run.stderr, "panicked");
        assert_contains(&run.stderr, "internal error: this is a bug in git-bullpen");
    }
}
