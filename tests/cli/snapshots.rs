//! What people read, word for word: the `ls` table, the gc report, and the
//! messages of refusals and errors, each with its exit status and both streams.
//!
//! These pin the current wording. A change of wording is fine: review the diff
//! and accept it (`cargo insta review`, or edit the `@"..."` by hand). Under CI
//! (`CI` set) a mismatch fails and nothing is written. What commands do (files,
//! refs, records, that nothing ran) is checked by the other modules.

use crate::bg::Bg;
use crate::gc::{setup, spawn_pushed, COMMIT};
use crate::support::Env;

/// Machine-specific parts of bullpen's output replaced by stable placeholders:
/// the test's temp dir (`[ROOT]`), the hash in the worktree root's repository
/// key (`repo-[KEY]`), pids (`pid [PID]`), object ids (`[OID]`), and the AGE
/// cell of a table (`[AGE]`, which keeps the columns after it aligned among the
/// rows, though no longer under their header).
fn normalise(env: &Env, text: &str) -> String {
    let text = text.replace(&env.root().display().to_string(), "[ROOT]");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphanumeric()) {
        let (gap, tail) = rest.split_at(start);
        out.push_str(gap);
        let end = tail
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tail.len());
        let (word, tail) = tail.split_at(end);
        let is_hex = word.len() >= 7
            && word.bytes().any(|b| b.is_ascii_digit())
            && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let placeholder = if out.ends_with("repo-") && is_hex {
            "[KEY]"
        } else if out.ends_with("pid ") && word.bytes().all(|b| b.is_ascii_digit()) {
            "[PID]"
        } else if is_hex {
            "[OID]"
        } else {
            word
        };
        out.push_str(placeholder);
        rest = tail;
    }
    out.push_str(rest);
    out.lines().map(age_cell).collect::<Vec<_>>().join("\n")
}

/// A table row's age cell (`42s`, `5m`, `3h`, `12d`, padded and followed by the
/// two spaces between columns) as `[AGE]  `.
fn age_cell(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(gap) = rest.find("  ") {
        let cell = &rest[..gap];
        let next = rest[gap..].trim_start_matches(' ');
        let is_age = cell.len() >= 2
            && cell.ends_with(['s', 'm', 'h', 'd'])
            && cell[..cell.len() - 1].bytes().all(|b| b.is_ascii_digit());
        match is_age {
            true => out.push_str("[AGE]  "),
            false => out.push_str(&rest[..rest.len() - next.len()]),
        }
        rest = next;
    }
    out.push_str(rest);
    out
}

/// `git bullpen <args>` as typed (an argument with spaces in quotes).
fn typed(args: &[&str]) -> String {
    let quoted = |a: &&str| match a.contains(' ') {
        true => format!("'{a}'"),
        false => a.to_string(),
    };
    let words: Vec<String> = args.iter().map(quoted).collect();
    format!("$ git bullpen {}", words.join(" "))
}

/// How `git bullpen <args>`, run in the main worktree, ended, and each stream
/// that is not empty (a stream left out printed nothing).
fn outcome(env: &Env, args: &[&str]) -> String {
    let run = env.bullpen(args);
    let mut text = format!("exit {}\n", run.code());
    for (name, stream) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if !stream.is_empty() {
            let stream = normalise(env, stream.trim_end());
            text.push_str(&format!("--- {name}\n{stream}\n"));
        }
    }
    text
}

/// A command as a reader sees it: the command line and its outcome.
fn show(env: &Env, args: &[&str]) -> String {
    format!("{}\n{}", typed(args), outcome(env, args))
}

/// Commands shown one after the other, a blank line between; consecutive ones
/// that end the same way are listed together above their one outcome.
fn show_all(env: &Env, commands: &[&[&str]]) -> String {
    let mut groups: Vec<(Vec<String>, String)> = Vec::new();
    for args in commands {
        let outcome = outcome(env, args);
        match groups.last_mut() {
            Some((lines, last)) if *last == outcome => lines.push(typed(args)),
            _ => groups.push((vec![typed(args)], outcome)),
        }
    }
    let shown: Vec<String> = groups
        .iter()
        .map(|(lines, outcome)| format!("{}\n{outcome}", lines.join("\n")))
        .collect();
    shown.join("\n")
}

#[test]
fn the_normaliser_replaces_only_what_differs_between_machines() {
    let env = Env::new();
    let root = env.root().display().to_string();
    let text = format!(
        "ID  AGE  WORKTREE\nx   9s   {root}/w/repo-0a1b2c3d/x\ny   12m  {root}/w/repo-0a1b2c3d/y\n\
         pid 4242 at 0123abcdef, effaced (exit 3)"
    );
    insta::assert_snapshot!(normalise(&env, &text), @r"
    ID  AGE  WORKTREE
    x   [AGE]  [ROOT]/w/repo-[KEY]/x
    y   [AGE]  [ROOT]/w/repo-[KEY]/y
    pid [PID] at [OID], effaced (exit 3)
    ");
}

const EMPTY_COMMIT: &str = "git commit -q --allow-empty -m work";

#[test]
fn spawn_and_the_ls_table_of_sessions_in_every_state() {
    let env = Bg::new();
    // Spawned in the order of their ids: `ls` lists by creation time, then id,
    // so the order holds whether or not two spawns share a second.
    let spawned = show(&env, &["spawn", "a-done", "--", "sh", "-c", EMPTY_COMMIT]);
    env.bullpen(&["spawn", "b-failed", "--", "sh", "-c", "exit 3"])
        .fails();
    env.bullpen(&["spawn", "c-killed", "--", "sh", "-c", "kill -TERM $$"])
        .fails();
    env.bullpen(&["spawn", "d-missing", "--", "true"]).ok();
    std::fs::remove_dir_all(env.worktree_of("d-missing")).unwrap();
    env.bullpen(&["spawn", "e-no-branch", "--", "true"]).ok();
    let wt = env.worktree_of("e-no-branch");
    env.git_out(&["worktree", "remove", wt.to_str().unwrap()]);
    env.git_out(&["branch", "-D", "bullpen/e-no-branch"]);
    env.bullpen(&["spawn", "f-collected", "--", "true"]).ok();
    env.edit_record("f-collected", |r| r["state"] = "collected".into());
    let spawned_bg = show(&env, &["spawn", "--bg", "g-running", "--", "sleep", "300"]);

    insta::assert_snapshot!(spawned, @r"
    $ git bullpen spawn a-done -- sh -c 'git commit -q --allow-empty -m work'
    exit 0
    --- stderr
    bullpen: session a-done on bullpen/a-done in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a-done
    ");
    insta::assert_snapshot!(spawned_bg, @r"
    $ git bullpen spawn --bg g-running -- sleep 300
    exit 0
    --- stdout
    g-running
    --- stderr
    bullpen: session g-running on bullpen/g-running in [ROOT]/bullpen-home/worktrees/repo-[KEY]/g-running
    bullpen: running in the background (pid [PID]); output: git bullpen logs g-running; end it: git bullpen stop g-running
    ");
    insta::assert_snapshot!(show(&env, &["ls", "--all"]), @r"
    $ git bullpen ls --all
    exit 0
    --- stdout
    ID           STATE         BRANCH                      AGE  WORKTREE
    a-done       exited 0      bullpen/a-done +1           [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/a-done
    b-failed     exited 3      bullpen/b-failed +0         [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/b-failed
    c-killed     exited sig15  bullpen/c-killed +0         [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/c-killed
    d-missing    missing       bullpen/d-missing +0        [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/d-missing
    e-no-branch  missing       bullpen/e-no-branch (gone)  [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/e-no-branch
    f-collected  collected     bullpen/f-collected +0      [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/f-collected
    g-running    running       bullpen/g-running +0        [AGE]  [ROOT]/bullpen-home/worktrees/repo-[KEY]/g-running
    ");
}

#[test]
fn gc_report_dry_run_then_for_real() {
    let env = setup();
    // In the order of their ids, as gc reports sessions by creation time, then id.
    spawn_pushed(&env, "a-published", COMMIT);
    env.spawn_sh(
        "b-unpublished",
        &format!("{COMMIT} && echo 2 > b && git add b && git commit -q -m b"),
    );
    spawn_pushed(
        &env,
        "c-dirty",
        "echo draft > notes.txt; echo edit >> README",
    );
    let gone = spawn_pushed(&env, "d-gone", "true");
    std::fs::remove_dir_all(gone).unwrap();

    insta::assert_snapshot!(show(&env, &["gc", "--dry-run"]), @r"
    $ git bullpen gc --dry-run
    exit 0
    --- stdout
    would prune    worktree entry d-gone: its directory [ROOT]/bullpen-home/worktrees/repo-[KEY]/d-gone is gone
    would remove   a-published: published (reachable from origin/bullpen/a-published), clean and idle
    would keep     b-unpublished: 2 commits not on any remote
    would keep     c-dirty: 1 modified file, 1 untracked file
    would collect  d-gone: the worktree is gone and the branch is published (reachable from origin/bullpen/d-gone)
    --- stderr
    bullpen: looking for the changes of 1 unpublished session on origin/main (origin/HEAD is not set)
    bullpen: gc --dry-run (nothing changed), would be: 1 removed, 1 collected, 1 pruned, 2 kept
    ");
    insta::assert_snapshot!(show(&env, &["gc"]), @r"
    $ git bullpen gc
    exit 0
    --- stdout
    pruned     worktree entry d-gone: its directory [ROOT]/bullpen-home/worktrees/repo-[KEY]/d-gone is gone
    removed    a-published: published (reachable from origin/bullpen/a-published), clean and idle
    kept       b-unpublished: 2 commits not on any remote
    kept       c-dirty: 1 modified file, 1 untracked file
    collected  d-gone: the worktree is gone and the branch is published (reachable from origin/bullpen/d-gone)
    --- stderr
    bullpen: looking for the changes of 1 unpublished session on origin/main (origin/HEAD is not set)
    bullpen: gc: 1 removed, 1 collected, 1 pruned, 2 kept
    ");
    insta::assert_snapshot!(show(&env, &["gc"]), @r"
    $ git bullpen gc
    exit 0
    --- stdout
    kept  b-unpublished: 2 commits not on any remote
    kept  c-dirty: 1 modified file, 1 untracked file
    --- stderr
    bullpen: looking for the changes of 1 unpublished session on origin/main (origin/HEAD is not set)
    bullpen: gc: 2 kept
    ");
}

#[test]
fn refusals_and_errors() {
    let env = Bg::new();
    for id in [
        "a-file",
        "b-empty-dir",
        "c-collected",
        "d-taken",
        "e-gone",
        "f-outside",
    ] {
        env.bullpen(&["spawn", id, "--", "true"]).ok();
    }
    env.bullpen(&["spawn", "--bg", "h-running", "--", "sleep", "300"])
        .ok();
    let worktree = |id| env.worktree_of(id);
    // The recorded worktree path occupied: by a file, by an empty directory.
    let occupy = |id| {
        let wt = worktree(id);
        std::fs::remove_dir_all(&wt).unwrap();
        env.git_out(&["worktree", "prune"]);
        wt
    };
    std::fs::write(occupy("a-file"), "mine\n").unwrap();
    std::fs::create_dir(occupy("b-empty-dir")).unwrap();
    let wt = worktree("c-collected");
    env.git_out(&["worktree", "remove", wt.to_str().unwrap()]);
    env.edit_record("c-collected", |r| r["state"] = "collected".into());
    // Neither the worktree nor the branch is left.
    let wt = worktree("e-gone");
    env.git_out(&["worktree", "remove", wt.to_str().unwrap()]);
    env.git_out(&["branch", "-D", "bullpen/e-gone"]);
    // A record pointing outside the worktree root, at a real worktree of the branch.
    let outside = env.root().join("outside");
    let (wt, outside) = (worktree("f-outside"), outside.to_str().unwrap());
    env.git_out(&["worktree", "move", wt.to_str().unwrap(), outside]);
    env.edit_record("f-outside", |r| r["worktree"] = outside.into());

    let table = show_all(
        &env,
        &[
            &["resume", "a-file", "--", "touch", "ran"][..],
            &["resume", "b-empty-dir", "--", "touch", "ran"],
            &["resume", "c-collected", "--", "touch", "ran"],
            &["resume", "e-gone", "--", "touch", "ran"],
            &["resume", "f-outside", "--", "touch", "ran"],
            &["resume", "h-running", "--", "touch", "ran"],
            &["spawn", "d-taken", "--", "touch", "ran"],
            &["spawn", "--bg", "g-no-command"],
            &["logs", "d-taken"],
            &["stop", "d-taken"],
            &["stop", "nope"],
            &["logs", "nope"],
            &["path", "nope"],
            &["resume", "nope"],
            &["spawn", "Not-Valid", "--", "true"],
        ],
    );
    insta::assert_snapshot!(table, @r#"
    $ git bullpen resume a-file -- touch ran
    exit 3
    --- stderr
    error: cannot resume session a-file: [ROOT]/bullpen-home/worktrees/repo-[KEY]/a-file is occupied by a regular file; bullpen runs a session only in its own worktree and leaves what is there alone
    hint: move it aside, then resume again to recreate the worktree from bullpen/a-file

    $ git bullpen resume b-empty-dir -- touch ran
    exit 3
    --- stderr
    error: cannot resume session b-empty-dir: [ROOT]/bullpen-home/worktrees/repo-[KEY]/b-empty-dir is occupied by an empty directory; bullpen runs a session only in its own worktree and leaves what is there alone
    hint: `rmdir [ROOT]/bullpen-home/worktrees/repo-[KEY]/b-empty-dir`, then resume again to recreate the worktree from bullpen/b-empty-dir

    $ git bullpen resume c-collected -- touch ran
    exit 3
    --- stderr
    error: session c-collected was collected by `git bullpen gc` (its worktree was removed after its work was published); there is nothing to resume
    hint: to start again from its branch: `git bullpen spawn <new-id> --base bullpen/c-collected`

    $ git bullpen resume e-gone -- touch ran
    exit 3
    --- stderr
    error: cannot resume session e-gone: its worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/e-gone is gone and so is its branch bullpen/e-gone; there is nothing to resume from
    hint: the session's history is in `git log refs/bullpen/sessions/e-gone`

    $ git bullpen resume f-outside -- touch ran
    exit 3
    --- stderr
    error: cannot resume session f-outside: its record says the worktree is [ROOT]/outside, which is not inside the worktree root [ROOT]/bullpen-home/worktrees/repo-[KEY]; records can arrive from a fetch or a hand edit, so bullpen does not act on that path
    hint: if the worktree root moved, point git config bullpen.worktreeRoot at the directory that holds f-outside's worktree
    hint: to start again from its branch: `git bullpen spawn <new-id> --base bullpen/f-outside`

    $ git bullpen resume h-running -- touch ran
    exit 3
    --- stderr
    error: session h-running is already running (pid [PID]); only one process per session
    hint: wait for it, or end it with `git bullpen stop h-running`

    $ git bullpen spawn d-taken -- touch ran
    exit 3
    --- stderr
    error: session id "d-taken" is already in use
    hint: see `git bullpen ls --all d-taken`; pick another id

    $ git bullpen spawn --bg g-no-command
    exit 128
    --- stderr
    error: spawn --bg needs a command
    hint: give one after `--`, or set git config bullpen.command (a background run has no terminal for an interactive shell)

    $ git bullpen logs d-taken
    exit 128
    --- stderr
    error: session d-taken has no log (it would be [ROOT]/repo/.git/bullpen/logs/d-taken.log)
    hint: only background runs (`git bullpen spawn --bg`) write one

    $ git bullpen stop d-taken
    exit 0
    --- stderr
    bullpen: session d-taken is not running (exited, exit 0); nothing to stop

    $ git bullpen stop nope
    $ git bullpen logs nope
    $ git bullpen path nope
    $ git bullpen resume nope
    exit 128
    --- stderr
    error: no session named "nope"
    hint: see `git bullpen ls --all` for the sessions there are

    $ git bullpen spawn Not-Valid -- true
    exit 129
    --- stderr
    error: invalid value 'Not-Valid' for '[ID]': invalid session id "Not-Valid": it must start with a lowercase letter or a digit (ids match [a-z0-9][a-z0-9._-]{0,62}, with no "..", not ending in ".lock" or ".")

    For more information, try '--help'.
    "#);
}
