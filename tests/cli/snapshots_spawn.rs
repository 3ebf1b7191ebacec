//! What `spawn`, `resume` and `path` print, word for word, with the status
//! they end with: their successes, refusals, failures and usage errors, hints
//! included (the test clock and width pinned, see `snapshots_support`).

use crate::bg::Bg;
use crate::snapshots_support::World;
use crate::support::Env;

#[test]
fn spawn_in_the_foreground_and_its_commands_status() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["spawn", "a", "--", "true"]), @r#"
    $ git bullpen spawn a -- true
    exit 0
    --- stderr
    bullpen: session a on bullpen/a in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "b", "--", "sh", "-c", "exit 3"]), @r#"
    $ git bullpen spawn b -- sh -c 'exit 3'
    exit 3
    --- stderr
    bullpen: session b on bullpen/b in [ROOT]/bullpen-home/worktrees/repo-[KEY]/b
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "c", "--", "sh", "-c", "echo out; echo err >&2"]), @r#"
    $ git bullpen spawn c -- sh -c 'echo out; echo err >&2'
    exit 0
    --- stdout
    out
    --- stderr
    bullpen: session c on bullpen/c in [ROOT]/bullpen-home/worktrees/repo-[KEY]/c
    err
    "#);
}

#[test]
fn spawn_in_the_background() {
    let env = Bg::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["spawn", "--bg", "r", "--", "sleep", "300"]), @"
    $ git bullpen spawn --bg r -- sleep 300
    exit 0
    --- stdout
    r
    --- stderr
    bullpen: session r on bullpen/r in [ROOT]/bullpen-home/worktrees/repo-[KEY]/r
    bullpen: running in the background (pid [PID]); attach: git bullpen attach r; output: git bullpen logs r; end it: git bullpen stop r
    ");
    insta::assert_snapshot!(w.show(&["spawn", "r", "--", "true"]), @r#"
    $ git bullpen spawn r -- true
    exit 125
    --- stderr
    fatal: session id 'r' is already in use
    hint: see `git bullpen ls --all r`; pick another id
    "#);
    env.bullpen(&["stop", "r"]).ok();
}

#[test]
fn spawn_refusals_failures_and_usage_errors() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "a", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["spawn", "a", "--", "true"]), @r#"
    $ git bullpen spawn a -- true
    exit 125
    --- stderr
    fatal: session id 'a' is already in use
    hint: see `git bullpen ls --all a`; pick another id
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "Bad/Id", "--", "true"]), @r#"
    $ git bullpen spawn Bad/Id -- true
    exit 125
    --- stderr
    error: invalid value 'Bad/Id' for '[ID]': invalid session id 'Bad/Id': it must start with a lowercase letter or a digit (ids match [a-z0-9][a-z0-9._-]{0,62}, with no '..', not ending in '.lock' or '.')

    For more information, try '--help'.
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "a..b", "--", "true"]), @r#"
    $ git bullpen spawn a..b -- true
    exit 125
    --- stderr
    error: invalid value 'a..b' for '[ID]': invalid session id 'a..b': it contains ".." (ids match [a-z0-9][a-z0-9._-]{0,62}, with no '..', not ending in '.lock' or '.')

    For more information, try '--help'.
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "x", "--base", "no-such-rev", "--", "true"]), @r#"
    $ git bullpen spawn x --base no-such-rev -- true
    exit 125
    --- stderr
    fatal: invalid --base 'no-such-rev': unknown revision
    hint: --base takes a revision as `git rev-parse` does: a branch, a tag, a commit id, HEAD~2, origin/main
    "#);
    insta::assert_snapshot!(w.show(&["spawn", "--no-such-flag"]), @r#"
    $ git bullpen spawn --no-such-flag
    exit 125
    --- stderr
    error: unexpected argument '--no-such-flag' found

      tip: to pass '--no-such-flag' as a value, use '-- --no-such-flag'

    Usage: git bullpen spawn [OPTIONS] [ID] [-- <COMMAND>...]

    For more information, try '--help'.
    "#);
    let elsewhere = env.root().join("not-a-repo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    insta::assert_snapshot!(w.show_in(&elsewhere, &["spawn", "y", "--", "true"]), @r#"
    $ git bullpen spawn y -- true
    exit 125
    --- stderr
    fatal: not a git repository (or any parent up to /): [ROOT]/not-a-repo
    hint: run bullpen inside a git repository (or name one with `git --git-dir`)
    "#);
}

#[test]
fn spawn_of_a_command_that_cannot_run() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["spawn", "nf", "--", "no-such-command-anywhere"]), @r#"
    $ git bullpen spawn nf -- no-such-command-anywhere
    exit 127
    --- stderr
    bullpen: session nf on bullpen/nf in [ROOT]/bullpen-home/worktrees/repo-[KEY]/nf
    fatal: cannot run 'no-such-command-anywhere' in [ROOT]/bullpen-home/worktrees/repo-[KEY]/nf: No such file or directory
    "#);
    let script = env.root().join("not-executable");
    std::fs::write(&script, "#!/bin/sh\ntrue\n").unwrap();
    insta::assert_snapshot!(w.show(&["spawn", "ne", "--", script.to_str().unwrap()]), @r#"
    $ git bullpen spawn ne -- [ROOT]/not-executable
    exit 126
    --- stderr
    bullpen: session ne on bullpen/ne in [ROOT]/bullpen-home/worktrees/repo-[KEY]/ne
    fatal: cannot run '[ROOT]/not-executable' in [ROOT]/bullpen-home/worktrees/repo-[KEY]/ne: Permission denied
    "#);
}

#[test]
fn resume_and_what_stands_in_its_way() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "a", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["resume", "a", "--", "sh", "-c", "exit 5"]), @r#"
    $ git bullpen resume a -- sh -c 'exit 5'
    exit 5
    --- stderr
    bullpen: resuming session a on bullpen/a in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a
    "#);
    insta::assert_snapshot!(w.show(&["resume", "no-such"]), @r#"
    $ git bullpen resume no-such
    exit 125
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    insta::assert_snapshot!(w.show(&["resume"]), @r#"
    $ git bullpen resume
    exit 125
    --- stderr
    error: no session id given, and [ROOT]/repo is not inside any session's worktree
    hint: name one: git bullpen resume <id> (`git bullpen ls` lists them)
    "#);
    // Its worktree deleted, its branch still there: recreated.
    let wt = env.worktree_of("a");
    std::fs::remove_dir_all(&wt).unwrap();
    insta::assert_snapshot!(w.show(&["resume", "a", "--", "true"]), @r#"
    $ git bullpen resume a -- true
    exit 0
    --- stderr
    bullpen: git still registers the worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/a (its directory is gone); removing that entry (a) first
    bullpen: worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/a is gone; recreating it from bullpen/a
    bullpen: resuming session a on bullpen/a in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a
    "#);
    // A file where the worktree was: occupied.
    std::fs::remove_dir_all(&wt).unwrap();
    std::fs::write(&wt, "not a worktree").unwrap();
    insta::assert_snapshot!(w.show(&["resume", "a"]), @r#"
    $ git bullpen resume a
    exit 125
    --- stderr
    fatal: cannot resume session a: [ROOT]/bullpen-home/worktrees/repo-[KEY]/a is occupied by a regular file; bullpen runs a session only in its own worktree and leaves what is there alone
    hint: move it aside, then resume again to recreate the worktree from bullpen/a
    "#);
    std::fs::remove_file(&wt).unwrap();
    // Neither the worktree nor the branch: nothing to resume from.
    env.git_out(&["worktree", "prune"]);
    env.git_out(&["branch", "-D", "bullpen/a"]);
    insta::assert_snapshot!(w.show(&["resume", "a"]), @r#"
    $ git bullpen resume a
    exit 125
    --- stderr
    fatal: cannot resume session a: its worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/a is gone and so is its branch bullpen/a; there is nothing to resume from
    hint: the session's history is in `git log refs/bullpen/sessions/a`
    "#);
}

#[test]
fn resume_of_a_run_in_the_background_is_refused() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "r", "--", "sleep", "300"]).ok();
    insta::assert_snapshot!(w.show(&["resume", "r"]), @"
    $ git bullpen resume r
    exit 125
    --- stderr
    fatal: session r is already running (pid [PID]); only one process per session
    hint: attach to it: git bullpen attach r; wait for it: git bullpen wait r; end it: git bullpen stop r
    ");
    env.bullpen(&["stop", "r"]).ok();
}

#[test]
fn path_of_a_session() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "a", "--", "true"]).ok();
    insta::assert_snapshot!(w.show(&["path", "a"]), @r#"
    $ git bullpen path a
    exit 0
    --- stdout
    [ROOT]/bullpen-home/worktrees/repo-[KEY]/a
    "#);
    insta::assert_snapshot!(w.show(&["path", "no-such"]), @r#"
    $ git bullpen path no-such
    exit 128
    --- stderr
    fatal: no session named 'no-such'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
    insta::assert_snapshot!(w.show(&["path"]), @r#"
    $ git bullpen path
    exit 129
    --- stderr
    error: no session id given, and [ROOT]/repo is not inside any session's worktree
    hint: name one: git bullpen path <id> (`git bullpen ls` lists them)
    "#);
    std::fs::remove_dir_all(env.worktree_of("a")).unwrap();
    insta::assert_snapshot!(w.show(&["path", "a"]), @r#"
    $ git bullpen path a
    exit 128
    --- stderr
    fatal: session a has no worktree to go to: [ROOT]/bullpen-home/worktrees/repo-[KEY]/a does not exist
    hint: `git bullpen resume a` recreates it from bullpen/a
    "#);
}
