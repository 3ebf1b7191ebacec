//! What `rm`, `stop`, `logs`, `attach`, `peek`, `wait`, `gc`, `push` and
//! `fetch` print, word for word, with their statuses: successes, refusals,
//! failures, hints (the test clock and width pinned, see `snapshots_support`).

use crate::bg::Bg;
use crate::snapshots_support::World;
use crate::support::Env;

#[test]
fn rm_keeps_work_unless_forced() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "dirty", "--", "sh", "-c", "echo draft > notes.txt"])
        .ok();
    w.run(&["spawn", "clean", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["rm", "dirty"]), @r#"
    $ git bullpen rm dirty
    exit 3
    --- stdout
    kept  dirty: 1 commit not on any remote; 1 untracked file
    --- stderr
    hint: dirty: `git bullpen rm --force dirty` removes it anyway, discarding that work
    "#);
    insta::assert_snapshot!(w.show(&["rm", "clean"]), @r#"
    $ git bullpen rm clean
    exit 3
    --- stdout
    kept  clean: 1 commit not on any remote
    --- stderr
    hint: clean: `git bullpen rm --force clean` removes it anyway, discarding that work
    "#);
    insta::assert_snapshot!(w.show(&["rm", "--force", "dirty"]), @r#"
    $ git bullpen rm --force dirty
    exit 0
    --- stdout
    removed  dirty: forced: discarded 1 commit not on any remote, 1 untracked file
    "#);
    insta::assert_snapshot!(w.show(&["rm", "no-such"]), @r#"
    $ git bullpen rm no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    insta::assert_snapshot!(w.show(&["rm"]), @r#"
    $ git bullpen rm
    exit 129
    --- stderr
    error: the following required arguments were not provided:
      <ID>...

    Usage: git bullpen rm <ID>...

    For more information, try '--help'.
    "#);
}

#[test]
fn stop_of_what_is_not_running_and_of_a_run() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "done", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["stop", "done"]), @r#"
    $ git bullpen stop done
    exit 0
    --- stderr
    bullpen: session done is not running (exited 0); nothing to stop
    "#);
    insta::assert_snapshot!(w.show(&["stop", "no-such"]), @r#"
    $ git bullpen stop no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    w.run(&["spawn", "--bg", "r", "--", "sleep", "300"]).ok();
    insta::assert_snapshot!(w.show(&["stop", "r"]), @r#"
    $ git bullpen stop r
    exit 0
    --- stderr
    bullpen: session r stopped by SIGHUP after [T]
    "#);
}

#[test]
fn logs_of_a_background_run_and_of_what_has_none() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&[
        "spawn",
        "--bg",
        "l",
        "--",
        "sh",
        "-c",
        "echo hello; echo there",
    ])
    .ok();
    env.bullpen(&["wait", "l"]).ok();
    insta::assert_snapshot!(w.show(&["logs", "l"]), @r#"
    $ git bullpen logs l
    exit 0
    --- stdout
    hello
    there
    bullpen: session l exited 0 after [T]
    "#);
    w.run(&["spawn", "fg", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["logs", "fg"]), @r#"
    $ git bullpen logs fg
    exit 128
    --- stderr
    fatal: session fg has no log (it would be [ROOT]/repo/.git/bullpen/logs/fg.log)
    hint: only background runs (`git bullpen spawn --bg`) write one
    "#);
    insta::assert_snapshot!(w.show(&["logs", "no-such"]), @r#"
    $ git bullpen logs no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
}

#[test]
fn attach_and_peek_of_what_is_not_running() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "done", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["attach", "done"]), @r#"
    $ git bullpen attach done
    exit 125
    --- stderr
    fatal: session done is not running (exited 0); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg done; its output so far: git bullpen logs done
    "#);
    insta::assert_snapshot!(w.show(&["attach", "no-such"]), @r#"
    $ git bullpen attach no-such
    exit 125
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    insta::assert_snapshot!(w.show(&["peek", "done"]), @r#"
    $ git bullpen peek done
    exit 128
    --- stderr
    fatal: session done is not running (exited 0); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg done; its output so far: git bullpen logs done
    "#);
    insta::assert_snapshot!(w.show(&["peek", "no-such"]), @r#"
    $ git bullpen peek no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
}

#[test]
fn attach_to_a_run_in_the_foreground_of_another_terminal_is_refused() {
    let env = Env::new();
    let w = World::new(&env);
    let gate = env.root().join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    // A foreground run held on a FIFO until the refusal is read.
    let mut fg = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["spawn", "a", "--", "sh", "-c"])
        .arg(format!("read x < {}", gate.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::bg::wait_for("a foreground run", || {
        env.ls_json()
            .as_array()
            .and_then(|a| a.iter().find(|s| s["id"] == "a" && s["state"] == "running"))
            .cloned()
    });
    let shown = w.show(&["attach", "a"]);
    std::fs::write(&gate, "go\n").unwrap();
    assert!(fg.wait().unwrap().success());
    insta::assert_snapshot!(shown, @r#"
    $ git bullpen attach a
    exit 125
    --- stderr
    fatal: session a runs in the foreground of another terminal (pid [PID]); only background runs can be attached
    hint: next time: git bullpen resume --bg a
    "#);
}

#[test]
fn wait_for_runs_that_ended_and_one_that_goes_on() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "three", "--", "sh", "-c", "exit 3"])
        .ok();
    insta::assert_snapshot!(w.show(&["wait", "three"]), @r#"
    $ git bullpen wait three
    exit 3
    --- stderr
    bullpen: session three exited 3 after [T]
    "#);
    w.run(&["spawn", "ok", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["wait", "ok", "three"]), @r#"
    $ git bullpen wait ok three
    exit 3
    --- stderr
    bullpen: session ok exited 0 after [T]
    bullpen: session three exited 3 after [T]
    "#);
    insta::assert_snapshot!(w.show(&["wait", "no-such"]), @r#"
    $ git bullpen wait no-such
    exit 125
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    w.run(&["spawn", "--bg", "r", "--", "sleep", "300"]).ok();
    insta::assert_snapshot!(w.show(&["wait", "--timeout", "0", "r"]), @r#"
    $ git bullpen wait --timeout 0 r
    exit 124
    --- stderr
    bullpen: session r is still running after [T] (--timeout); it goes on
    "#);
    insta::assert_snapshot!(w.show(&["wait", "--timeout", "soon", "r"]), @r#"
    $ git bullpen wait --timeout soon r
    exit 125
    --- stderr
    error: invalid value 'soon' for '--timeout <SECS>': not a number of seconds (e.g. 10 or 0.5)

    For more information, try '--help'.
    "#);
    env.bullpen(&["stop", "r"]).ok();
}

#[test]
fn gc_with_nothing_to_do_and_with_work_to_keep() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["gc"]), @r#"
    $ git bullpen gc
    exit 0
    --- stderr
    bullpen: gc: nothing to do
    "#);
    w.run(&[
        "spawn",
        "work",
        "--",
        "sh",
        "-c",
        "git commit -q --allow-empty -m work",
    ])
    .ok();
    w.run(&["spawn", "dirty", "--", "sh", "-c", "echo draft > notes.txt"])
        .ok();
    insta::assert_snapshot!(w.show(&["gc", "--dry-run"]), @r#"
    $ git bullpen gc --dry-run
    exit 0
    --- stdout
    would keep  dirty: 1 commit not on any remote; 1 untracked file
    would keep  work: 2 commits not on any remote
    --- stderr
    bullpen: gc --dry-run (nothing changed), would be: 2 kept
    "#);
    insta::assert_snapshot!(w.show(&["gc"]), @r#"
    $ git bullpen gc
    exit 0
    --- stdout
    kept  dirty: 1 commit not on any remote; 1 untracked file
    kept  work: 2 commits not on any remote
    --- stderr
    bullpen: gc: 2 kept
    "#);
    insta::assert_snapshot!(w.show(&["gc", "--no-such-flag"]), @r#"
    $ git bullpen gc --no-such-flag
    exit 129
    --- stderr
    error: unexpected argument '--no-such-flag' found

    Usage: git bullpen gc [OPTIONS]

    For more information, try '--help'.
    "#);
}

#[test]
fn push_and_fetch_without_a_remote_and_with_one() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&[
        "spawn",
        "a",
        "--",
        "sh",
        "-c",
        "git commit -q --allow-empty -m work",
    ])
    .ok();
    insta::assert_snapshot!(w.show(&["push"]), @r#"
    $ git bullpen push
    exit 128
    --- stderr
    fatal: no remote to push to
    hint: add one: git remote add origin <url>
    "#);
    insta::assert_snapshot!(w.show(&["fetch"]), @r#"
    $ git bullpen fetch
    exit 128
    --- stderr
    fatal: no remote to fetch from
    hint: add one: git remote add origin <url>
    "#);
    env.add_bare_remote();
    insta::assert_snapshot!(w.show(&["push"]), @"
    $ git bullpen push
    exit 0
    --- stderr
    hint: 1 session is not on origin yet (a): name it, or push them all with `git bullpen push --all origin`
    ");
    insta::assert_snapshot!(w.show(&["push", "--all"]), @"
    $ git bullpen push --all
    exit 0
    --- stderr
    bullpen: pushed to origin: a (record, branch)
    bullpen: notes pushed to origin
    ");
    insta::assert_snapshot!(w.show(&["fetch"]), @"
    $ git bullpen fetch
    exit 0
    --- stderr
    bullpen: sessions from origin: 1 unchanged
    ");
    insta::assert_snapshot!(w.show(&["ls", "--remote"]), @"
    $ git bullpen ls --remote
    exit 0
    --- stdout
      ID        STATE                                        BRANCH
      origin/a  exited 0 on host (this clone), as of 0s ago  +1
    ");
}

#[test]
fn what_is_not_a_command_or_not_an_option() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["no-such-command"]), @r#"
    $ git bullpen no-such-command
    exit 129
    --- stderr
    error: unrecognized subcommand 'no-such-command'

    Usage: git bullpen [OPTIONS] <COMMAND>

    For more information, try '--help'.
    "#);
    insta::assert_snapshot!(w.show(&["--color=sometimes", "ls"]), @r#"
    $ git bullpen --color=sometimes ls
    exit 129
    --- stderr
    error: invalid value 'sometimes' for '--color[=<WHEN>]'
      [possible values: always, never, auto]

    For more information, try '--help'.
    "#);
    insta::assert_snapshot!(w.show(&["ls", "--json", "--status", "--no-such"]), @r#"
    $ git bullpen ls --json --status --no-such
    exit 129
    --- stderr
    error: unexpected argument '--no-such' found

      tip: to pass '--no-such' as a value, use '-- --no-such'

    Usage: git bullpen ls --json --status [ID]...

    For more information, try '--help'.
    "#);
}

#[test]
fn colour_when_asked_for() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "a", "--", "sh", "-c", "exit 2"]).fails();
    insta::assert_snapshot!(w.after(90).show(&["--color", "ls"]), @r"
    $ git bullpen --color ls
    exit 0
    --- stdout
      ID  STATE            BRANCH
      a   \e[33mexited 2 1m ago\e[0m  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(w.show(&["--color", "rm", "no-such"]), @r#"
    $ git bullpen --color rm no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
}
