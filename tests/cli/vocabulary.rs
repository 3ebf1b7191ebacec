//! One vocabulary for the end of a run: each kind of end built for real (an
//! exit, a signal, each of stop's signals, a lost run), and what `wait`,
//! `logs`, `stop`, `attach` and `ls` (STATE and `--json`'s `ended`) say of it,
//! word for word; then the other wordings people read once (issue 27), each
//! pinned. Every test ends what it started (the `Bg` guard).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bg::{kill, proc_stat, timeless, wait_for, Bg};
use crate::pty::Term;
use crate::snapshots_support::{pinned, World};
use crate::support::{Env, BIN};

/// What every command says of session `id` once its run has ended (a minute
/// later, on the test clock).
fn said_of_the_end(w: World, id: &str) -> String {
    let later = w.after(60);
    let mut out = String::new();
    for args in [
        ["wait", id],
        ["logs", id],
        ["stop", id],
        ["attach", id],
        ["ls", id],
    ] {
        out.push_str(&later.show(&args));
    }
    out + &json_end(later, id)
}

/// `ls --json`'s words for the end: `state`, `ended`.
fn json_end(w: World, id: &str) -> String {
    let run = w.run(&["ls", "--json", id]).ok();
    let rows: Value = serde_json::from_str(&run.stdout).expect("ls --json parses");
    format!(
        "$ git bullpen ls --json {id}: state {}, ended {}\n",
        rows[0]["state"], rows[0]["ended"]
    )
}

/// A file the run creates once it is ready to be signalled (its traps set).
fn ready_file(env: &Env, id: &str) -> PathBuf {
    env.root().join(format!("{id}.ready"))
}

fn wait_file(path: &Path) {
    wait_for(&format!("{} to appear", path.display()), || {
        path.exists().then_some(())
    });
}

/// A background run of `sh -c '<traps>; : > ready; exec sleep 300'`, once its
/// traps are set.
fn spawn_ignoring(w: World, id: &str, traps: &str) {
    let ready = ready_file(w.env, id);
    let script = format!("{traps} : > '{}'; exec sleep 300", ready.display());
    w.run(&["spawn", "--bg", id, "--", "sh", "-c", &script])
        .ok();
    wait_file(&ready);
}

/// The pids of the supervisor and the command of session `id`'s run.
fn pids(env: &Env, id: &str) -> (u32, u32) {
    let p = &env.record(id)["process"];
    let pid = |k: &str| p[k].as_u64().expect("a pid") as u32;
    (pid("supervisor_pid"), pid("pid"))
}

fn wait_gone(pid: u32) {
    wait_for(&format!("pid {pid} to be gone"), || {
        proc_stat(pid).is_none().then_some(())
    });
}

#[test]
fn an_exit_in_one_wording() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "ok", "--", "true"]).ok();
    w.run(&["spawn", "--bg", "seven", "--", "sh", "-c", "exit 7"])
        .ok();
    insta::assert_snapshot!(said_of_the_end(w, "ok"), @r#"
    $ git bullpen wait ok
    exit 0
    --- stderr
    bullpen: session ok exited 0 after [T]
    $ git bullpen logs ok
    exit 0
    --- stdout
    bullpen: session ok exited 0 after [T]
    $ git bullpen stop ok
    exit 0
    --- stderr
    bullpen: session ok is not running (exited 0); nothing to stop
    $ git bullpen attach ok
    exit 125
    --- stderr
    fatal: session ok is not running (exited 0); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg ok; its output so far: git bullpen logs ok
    $ git bullpen ls ok
    exit 0
    --- stdout
      ID  STATE            BRANCH
      ok  exited 0 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json ok: state "exited", ended "exited 0"
    "#);
    insta::assert_snapshot!(said_of_the_end(w, "seven"), @r#"
    $ git bullpen wait seven
    exit 7
    --- stderr
    bullpen: session seven exited 7 after [T]
    $ git bullpen logs seven
    exit 0
    --- stdout
    bullpen: session seven exited 7 after [T]
    $ git bullpen stop seven
    exit 0
    --- stderr
    bullpen: session seven is not running (exited 7); nothing to stop
    $ git bullpen attach seven
    exit 125
    --- stderr
    fatal: session seven is not running (exited 7); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg seven; its output so far: git bullpen logs seven
    $ git bullpen ls seven
    exit 0
    --- stdout
      ID     STATE            BRANCH
      seven  exited 7 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json seven: state "exited", ended "exited 7"
    "#);
}

#[test]
fn a_signal_in_one_wording() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "segv", "--", "sh", "-c", "kill -SEGV $$"])
        .ok();
    insta::assert_snapshot!(said_of_the_end(w, "segv"), @r#"
    $ git bullpen wait segv
    exit 139
    --- stderr
    bullpen: session segv killed by SIGSEGV after [T]
    $ git bullpen logs segv
    exit 0
    --- stdout
    bullpen: session segv killed by SIGSEGV after [T]
    $ git bullpen stop segv
    exit 0
    --- stderr
    bullpen: session segv is not running (killed by SIGSEGV); nothing to stop
    $ git bullpen attach segv
    exit 125
    --- stderr
    fatal: session segv is not running (killed by SIGSEGV); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg segv; its output so far: git bullpen logs segv
    $ git bullpen ls segv
    exit 0
    --- stdout
      ID    STATE                     BRANCH
      segv  killed by SIGSEGV 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json segv: state "exited", ended "killed by SIGSEGV"
    "#);
}

#[test]
fn each_of_stops_signals_in_one_wording() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "hup", "--", "sleep", "300"]).ok();
    spawn_ignoring(w, "term", "trap '' HUP;");
    spawn_ignoring(w, "kill", "trap '' HUP TERM;");
    let mut shown = w.show(&["stop", "hup"]);
    shown += &w.show(&["stop", "--timeout", "30", "term"]);
    shown += &w.show(&["stop", "--timeout", "0.2", "kill"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen stop hup
    exit 0
    --- stderr
    bullpen: session hup stopped by SIGHUP after [T]
    $ git bullpen stop --timeout 30 term
    exit 0
    --- stderr
    bullpen: session term stopped by SIGTERM after [T]
    $ git bullpen stop --timeout 0.2 kill
    exit 0
    --- stderr
    bullpen: session kill stopped by SIGKILL after [T] (--timeout ran out)
    ");
    insta::assert_snapshot!(said_of_the_end(w, "hup"), @r#"
    $ git bullpen wait hup
    exit 129
    --- stderr
    bullpen: session hup stopped by SIGHUP after [T]
    $ git bullpen logs hup
    exit 0
    --- stdout
    bullpen: session hup stopped by SIGHUP after [T]
    $ git bullpen stop hup
    exit 0
    --- stderr
    bullpen: session hup is not running (stopped by SIGHUP); nothing to stop
    $ git bullpen attach hup
    exit 125
    --- stderr
    fatal: session hup is not running (stopped by SIGHUP); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg hup; its output so far: git bullpen logs hup
    $ git bullpen ls hup
    exit 0
    --- stdout
      ID   STATE                     BRANCH
      hup  stopped by SIGHUP 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json hup: state "stopped", ended "stopped by SIGHUP"
    "#);
    insta::assert_snapshot!(said_of_the_end(w, "term"), @r#"
    $ git bullpen wait term
    exit 143
    --- stderr
    bullpen: session term stopped by SIGTERM after [T]
    $ git bullpen logs term
    exit 0
    --- stdout
    bullpen: session term stopped by SIGTERM after [T]
    $ git bullpen stop term
    exit 0
    --- stderr
    bullpen: session term is not running (stopped by SIGTERM); nothing to stop
    $ git bullpen attach term
    exit 125
    --- stderr
    fatal: session term is not running (stopped by SIGTERM); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg term; its output so far: git bullpen logs term
    $ git bullpen ls term
    exit 0
    --- stdout
      ID    STATE                      BRANCH
      term  stopped by SIGTERM 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json term: state "stopped", ended "stopped by SIGTERM"
    "#);
    insta::assert_snapshot!(said_of_the_end(w, "kill"), @r#"
    $ git bullpen wait kill
    exit 137
    --- stderr
    bullpen: session kill stopped by SIGKILL after [T]
    $ git bullpen logs kill
    exit 0
    --- stdout
    bullpen: session kill stopped by SIGKILL after [T]
    $ git bullpen stop kill
    exit 0
    --- stderr
    bullpen: session kill is not running (stopped by SIGKILL); nothing to stop
    $ git bullpen attach kill
    exit 125
    --- stderr
    fatal: session kill is not running (stopped by SIGKILL); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg kill; its output so far: git bullpen logs kill
    $ git bullpen ls kill
    exit 0
    --- stdout
      ID    STATE                      BRANCH
      kill  stopped by SIGKILL 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json kill: state "stopped", ended "stopped by SIGKILL"
    "#);
}

/// What is said of a lost run, before `stop` ends it.
fn said_of_the_lost(w: World, id: &str) -> String {
    let mut out = String::new();
    for args in [["ls", id], ["wait", id], ["attach", id], ["logs", id]] {
        out.push_str(&w.show(&args));
    }
    out + &json_end(w, id)
}

#[test]
fn a_lost_run_with_nothing_left_to_signal_in_one_wording() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "gone", "--", "sleep", "300"]).ok();
    let (supervisor, command) = pids(&env, "gone");
    kill(supervisor, libc::SIGKILL);
    kill(command, libc::SIGKILL);
    wait_gone(command);
    env.wait_state("gone", "lost");
    insta::assert_snapshot!(said_of_the_lost(w, "gone"), @r#"
    $ git bullpen ls gone
    exit 0
    --- stdout
      ID    STATE        BRANCH
      gone  lost 0s ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen wait gone
    exit 125
    --- stderr
    fatal: session gone is lost: its supervisor is gone without recording how the run ended
    hint: `git bullpen stop gone` ends what is left of it; `git bullpen logs gone` shows its output
    $ git bullpen attach gone
    exit 125
    --- stderr
    fatal: session gone is lost: its supervisor is gone, and its terminal with it
    hint: end what is left with `git bullpen stop gone`; its output so far: git bullpen logs gone
    $ git bullpen logs gone
    exit 0
    $ git bullpen ls --json gone: state "lost", ended null
    "#);
    insta::assert_snapshot!(w.show(&["stop", "gone"]), @"
    $ git bullpen stop gone
    exit 0
    --- stderr
    bullpen: session gone is lost: its supervisor is gone; ending what is left of it
    bullpen: session gone stopped after [T] (no process was left to signal)
    ");
    insta::assert_snapshot!(said_of_the_end(w, "gone"), @r#"
    $ git bullpen wait gone
    exit 1
    --- stderr
    bullpen: session gone stopped after [T]
    $ git bullpen logs gone
    exit 0
    --- stdout
    bullpen: session gone stopped after [T] (no process was left to signal)
    $ git bullpen stop gone
    exit 0
    --- stderr
    bullpen: session gone is not running (stopped); nothing to stop
    $ git bullpen attach gone
    exit 125
    --- stderr
    fatal: session gone is not running (stopped); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg gone; its output so far: git bullpen logs gone
    $ git bullpen ls gone
    exit 0
    --- stdout
      ID    STATE           BRANCH
      gone  stopped 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json gone: state "stopped", ended "stopped"
    "#);
}

#[test]
fn a_run_whose_supervisor_died_in_one_wording() {
    let env = Bg::new();
    let w = World::new(&env);
    spawn_ignoring(w, "orphan", "trap '' HUP;");
    let (supervisor, command) = pids(&env, "orphan");
    kill(supervisor, libc::SIGKILL);
    env.wait_state("orphan", "lost");
    assert!(proc_stat(command).is_some(), "its command outlives it");
    insta::assert_snapshot!(said_of_the_lost(w, "orphan"), @r#"
    $ git bullpen ls orphan
    exit 0
    --- stdout
      ID      STATE        BRANCH
      orphan  lost 0s ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen wait orphan
    exit 125
    --- stderr
    fatal: session orphan is lost: its supervisor is gone without recording how the run ended
    hint: `git bullpen stop orphan` ends what is left of it; `git bullpen logs orphan` shows its output
    $ git bullpen attach orphan
    exit 125
    --- stderr
    fatal: session orphan is lost: its supervisor is gone, and its terminal with it
    hint: end what is left with `git bullpen stop orphan`; its output so far: git bullpen logs orphan
    $ git bullpen logs orphan
    exit 0
    $ git bullpen ls --json orphan: state "lost", ended null
    "#);
    insta::assert_snapshot!(w.show(&["stop", "--timeout", "30", "orphan"]), @"
    $ git bullpen stop --timeout 30 orphan
    exit 0
    --- stderr
    bullpen: session orphan is lost: its supervisor is gone; ending what is left of it
    bullpen: session orphan stopped after [T] (stop sent SIGHUP, SIGTERM)
    ");
    wait_gone(command);
    insta::assert_snapshot!(said_of_the_end(w, "orphan"), @r#"
    $ git bullpen wait orphan
    exit 1
    --- stderr
    bullpen: session orphan stopped after [T]
    $ git bullpen logs orphan
    exit 0
    --- stdout
    bullpen: session orphan stopped after [T] (stop sent SIGHUP, SIGTERM)
    $ git bullpen stop orphan
    exit 0
    --- stderr
    bullpen: session orphan is not running (stopped); nothing to stop
    $ git bullpen attach orphan
    exit 125
    --- stderr
    fatal: session orphan is not running (stopped); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg orphan; its output so far: git bullpen logs orphan
    $ git bullpen ls orphan
    exit 0
    --- stdout
      ID      STATE           BRANCH
      orphan  stopped 1m ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    $ git bullpen ls --json orphan: state "stopped", ended "stopped"
    "#);
}

/// `git bullpen attach <id>` on a terminal until the run ends there; the last
/// line it printed, its duration as `[T]`.
fn attached_until_the_end(env: &Bg, id: &str, end: impl FnOnce(&mut Term)) -> (i32, String) {
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", id]);
    let mut t = Term::spawn(cmd, 24, 80);
    t.expect("detach with Ctrl-\\");
    wait_for(&format!("{id} to be attached"), || {
        env.try_row(id).filter(|r| r["attached"] == true)
    });
    end(&mut t);
    t.expect(&format!("session {id} "));
    let code = t.wait().code().unwrap_or(-1);
    let shown = t.shown();
    let said = format!("bullpen: session {id} ");
    let last = shown
        .lines()
        .rev()
        .find_map(|l| l.find(&said).map(|at| l[at..].trim_end()))
        .unwrap_or_default();
    (code, timeless(last).trim_end().to_owned())
}

#[test]
fn attach_says_the_end_in_the_same_words() {
    let env = Bg::new();
    let w = World::new(&env);
    let mut shown = String::new();
    for (id, script) in [
        ("seven", "read x; exit 7"),
        ("segv", "read x; kill -SEGV $$"),
    ] {
        w.run(&["spawn", "--bg", id, "--", "sh", "-c", script]).ok();
        let (code, last) = attached_until_the_end(&env, id, |t| t.send(b"go\r"));
        shown += &format!("attach {id}: exit {code}: {last}\n");
    }
    w.run(&["spawn", "--bg", "hup", "--", "sleep", "300"]).ok();
    let (code, last) = attached_until_the_end(&env, "hup", |_| {
        env.bullpen(&["stop", "hup"]).ok();
    });
    shown += &format!("attach hup: exit {code}: {last}\n");
    insta::assert_snapshot!(pinned(&env, &shown), @"
    attach seven: exit 7: bullpen: session seven exited 7 after [T]
    attach segv: exit 139: bullpen: session segv killed by SIGSEGV after [T]
    attach hup: exit 129: bullpen: session hup stopped by SIGHUP after [T]
    ");
}

#[test]
fn a_refused_attach_says_since_when_the_other_terminal_holds_it() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&[
        "spawn",
        "--bg",
        "a",
        "--",
        "sh",
        "-c",
        "while read x; do :; done",
    ])
    .ok();
    let on_terminal = |now: i64| {
        let mut cmd = env.cmd(BIN, &env.repo);
        cmd.args(["attach", "a"])
            .env("BULLPEN_TEST_EPOCH", now.to_string());
        Term::spawn(cmd, 24, 80)
    };
    let mut first = on_terminal(w.now);
    first.expect("detach with Ctrl-\\");
    wait_for("a to be attached", || {
        env.try_row("a").filter(|r| r["attached"] == true)
    });
    let mut second = on_terminal(w.after(10).now);
    second.expect("one terminal at a time");
    assert_eq!(second.wait().code(), Some(125));
    let shown = second.shown();
    let refusal = shown
        .lines()
        .find_map(|l| l.find("fatal: ").map(|at| l[at..].trim_end()))
        .unwrap_or_default();
    insta::assert_snapshot!(pinned(&env, refusal), @"fatal: session a is attached to another terminal (pid [PID], since 10s); one terminal at a time");
    first.send(b"\x1c");
    assert_eq!(first.wait().code(), Some(0));
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_background_spawn_and_a_second_start_name_attach() {
    let env = Bg::new();
    let w = World::new(&env);
    let mut shown = w.show(&["spawn", "--bg", "r", "--", "sleep", "300"]);
    shown += &w.show(&["resume", "r"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen spawn --bg r -- sleep 300
    exit 0
    --- stdout
    r
    --- stderr
    bullpen: session r on bullpen/r in [ROOT]/bullpen-home/worktrees/repo-[KEY]/r
    bullpen: running in the background (pid [PID]); attach: git bullpen attach r; output: git bullpen logs r; end it: git bullpen stop r
    $ git bullpen resume r
    exit 125
    --- stderr
    fatal: session r is already running (pid [PID]); only one process per session
    hint: attach to it: git bullpen attach r; wait for it: git bullpen wait r; end it: git bullpen stop r
    ");
    env.bullpen(&["stop", "r"]).ok();
}

#[test]
fn dry_runs_say_what_would_be_discarded() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "dirty", "--", "sh", "-c", "echo draft > notes.txt"])
        .ok();
    let mut shown = w.show(&["rm", "--dry-run", "--force", "dirty"]);
    shown += &w.show(&["rm", "--force", "dirty"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen rm --dry-run --force dirty
    exit 0
    --- stdout
    would remove  dirty: forced: would discard 1 commit not on any remote, 1 untracked file
    $ git bullpen rm --force dirty
    exit 0
    --- stdout
    removed  dirty: forced: discarded 1 commit not on any remote, 1 untracked file
    ");
}

#[test]
fn a_usage_error_names_the_ids_it_was_given() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["resume", "x", "--as", "y"]), @"
    $ git bullpen resume x --as y
    exit 125
    --- stderr
    error: --as is for continuing a fetched session: resume <remote>/x --as y
    ");
}

/// A session with one commit of its own, not on any remote.
fn unpublished(w: World, id: &str) {
    w.run(&[
        "spawn",
        id,
        "--",
        "sh",
        "-c",
        &format!("git commit -q --allow-empty -m {id}"),
    ])
    .ok();
}

#[test]
fn rm_of_an_unpublished_session_says_nothing_of_origin_head() {
    let env = Env::new();
    env.add_bare_remote();
    env.git_out(&["push", "-q", "origin", "main"]);
    let w = World::new(&env);
    unpublished(w, "u");
    unpublished(w, "v");
    let mut shown = w.show(&["rm", "u"]);
    shown += &w.show(&["rm", "--force", "u"]);
    // gc still says where it looks: it may take a while there.
    shown += &w.show(&["gc", "--dry-run"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen rm u
    exit 3
    --- stdout
    kept  u: 1 commit not on any remote (they change no file)
    --- stderr
    hint: u: `git bullpen rm --force u` removes it anyway, discarding that work
    $ git bullpen rm --force u
    exit 0
    --- stdout
    removed  u: forced: discarded 1 commit not on any remote (they change no file)
    $ git bullpen gc --dry-run
    exit 0
    --- stdout
    would keep  v: 1 commit not on any remote (they change no file)
    --- stderr
    bullpen: looking for the changes of 1 unpublished session on origin/main (origin/HEAD is not set)
    bullpen: gc --dry-run (nothing changed), would be: 1 kept
    ");
}

#[test]
fn a_dangling_origin_head_is_named_with_its_fix() {
    let env = Env::new();
    env.add_bare_remote();
    env.git_out(&["push", "-q", "origin", "main"]);
    // The default branch was `master` before a rename; HEAD still points there.
    env.git_out(&[
        "symbolic-ref",
        "refs/remotes/origin/HEAD",
        "refs/remotes/origin/master",
    ]);
    let w = World::new(&env);
    unpublished(w, "u");
    insta::assert_snapshot!(w.show(&["gc", "--dry-run"]), @"
    $ git bullpen gc --dry-run
    exit 0
    --- stdout
    would keep  u: 1 commit not on any remote (they change no file)
    --- stderr
    warning: origin/HEAD points at origin/master, which does not exist (a renamed default branch?); fix it: git remote set-head origin --auto
    bullpen: looking for the changes of 1 unpublished session on origin/main (origin/HEAD points at the missing origin/master)
    bullpen: gc --dry-run (nothing changed), would be: 1 kept
    ");
}

#[test]
fn a_stacked_branch_names_the_remote_ref_that_reaches_it() {
    let env = Env::new();
    env.add_bare_remote();
    env.git_out(&["push", "-q", "origin", "main"]);
    let w = World::new(&env);
    unpublished(w, "stack-a");
    w.run(&[
        "spawn",
        "stack-b",
        "--base",
        "bullpen/stack-a",
        "--",
        "sh",
        "-c",
        "git commit -q --allow-empty -m b",
    ])
    .ok();
    // Only the top of the stack is pushed (its pull request holds both).
    env.git_out(&["push", "-q", "origin", "bullpen/stack-b"]);
    insta::assert_snapshot!(w.show(&["gc", "--dry-run"]), @"
    $ git bullpen gc --dry-run
    exit 0
    --- stdout
    would remove  stack-a: published (reachable from origin/bullpen/stack-b), clean and idle
    would remove  stack-b: published (reachable from origin/bullpen/stack-b), clean and idle
    --- stderr
    bullpen: gc --dry-run (nothing changed), would be: 2 removed
    ");
}

#[test]
fn an_empty_list_says_what_there_is_elsewhere() {
    let env = Env::new();
    let origin = env.add_bare_remote();
    env.git_out(&["push", "-q", "origin", "main"]);
    let w = World::new(&env);
    unpublished(w, "a");
    w.run(&["push", "--all"]).ok();
    let clone = env.root().join("clone");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    )
    .ok();
    let mut shown = w.show_in(&clone, &["ls"]);
    w.run_in(&clone, &["fetch"]).ok();
    shown += &w.show_in(&clone, &["ls"]);
    shown += &w.show_in(&clone, &["ls", "--remote"]);
    let bare = env.root().join("empty.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    )
    .ok();
    shown += &w.show_in(&bare, &["ls"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen ls
    exit 0
    --- stderr
    hint: no sessions yet; start one with `git bullpen spawn <id> -- <command>`
    $ git bullpen ls
    exit 0
    --- stderr
    hint: no sessions here, but 1 fetched from a remote; `git bullpen ls --remote` shows it
    $ git bullpen ls --remote
    exit 0
    --- stdout
      ID        STATE                                                     BRANCH
      origin/a  exited 0 on host (another clone, [OID]), as of 0s ago  +1
    $ git bullpen ls
    exit 0
    --- stderr
    hint: no sessions in this bare repository: spawn needs a worktree (run it in a clone); `git bullpen ls --remote` lists what `git bullpen fetch` brings
    ");
}

#[test]
fn a_spawn_says_once_that_uncommitted_changes_stay_behind() {
    let env = Env::new();
    let w = World::new(&env);
    // Clean: nothing said.
    let mut shown = w.show(&["spawn", "clean", "--", "true"]);
    std::fs::write(env.repo.join("README"), "edited\n").unwrap();
    shown += &w.show(&["spawn", "edited", "--", "true"]);
    // From a session's worktree, the main worktree's changes are not in question.
    let wt = env.worktree_of("clean");
    shown += &w.show_in(&wt, &["spawn", "inner", "--", "true"]);
    insta::assert_snapshot!(shown, @"
    $ git bullpen spawn clean -- true
    exit 0
    --- stderr
    bullpen: session clean on bullpen/clean in [ROOT]/bullpen-home/worktrees/repo-[KEY]/clean
    $ git bullpen spawn edited -- true
    exit 0
    --- stderr
    bullpen: session edited on bullpen/edited in [ROOT]/bullpen-home/worktrees/repo-[KEY]/edited
    bullpen: the uncommitted changes of the main worktree stay there: the session starts from HEAD as committed; to take them along: git stash, then git stash pop in [ROOT]/bullpen-home/worktrees/repo-[KEY]/edited
    $ git bullpen spawn inner -- true
    exit 0
    --- stderr
    bullpen: session inner on bullpen/inner in [ROOT]/bullpen-home/worktrees/repo-[KEY]/inner
    ");
}
