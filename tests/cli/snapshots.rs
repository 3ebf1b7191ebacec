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
/// rows, though no longer under their header), and how long a run took in
/// the line that says how it ended (`bullpen: session a exited 5 after [T]`).
pub(crate) fn normalise(env: &Env, text: &str) -> String {
    normalise_but_ages(env, text)
        .lines()
        .map(age_cell)
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`normalise`] without `[AGE]`: for output read with the test clock pinned
/// (`BULLPEN_TEST_EPOCH`), whose ages and alignment are the same on every run.
pub(crate) fn normalise_but_ages(env: &Env, text: &str) -> String {
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
    out.lines().map(run_took).collect::<Vec<_>>().join("\n")
}

/// `bullpen: session a exited 5 after 1.2s (...)` with the duration as `[T]`.
fn run_took(line: &str) -> String {
    let is_duration = |w: &str| {
        w.len() >= 2
            && w.ends_with(['s', 'm', 'h', 'd'])
            && w[..w.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.')
    };
    let at = line
        .find(" after ")
        .filter(|_| line.starts_with("bullpen: session "));
    let Some(at) = at else {
        return line.to_owned();
    };
    let words: Vec<&str> = line[at + " after ".len()..].split(' ').collect();
    let n = words.iter().take_while(|w| is_duration(w)).count();
    match n {
        0 => line.to_owned(),
        _ => [&line[..at], " after [T]"]
            .into_iter()
            .chain(words[n..].iter().flat_map(|w| [" ", *w]))
            .collect(),
    }
}

/// A table cell that tells a time (`running 5m`, `exited 0 2h ago`: a word of
/// digits and `s`, `m`, `h` or `d`) with the time as `[T]`, and its padding
/// dropped: the cells after it keep their order and the two spaces between
/// columns, though no longer their alignment under the header.
fn age_cell(line: &str) -> String {
    let is_time = |w: &str| {
        w.len() >= 2
            && w.ends_with(['s', 'm', 'h', 'd'])
            && w[..w.len() - 1].bytes().all(|b| b.is_ascii_digit())
    };
    let mut out = String::new();
    let mut rest = line;
    loop {
        let (cell, next) = match rest.find("  ") {
            Some(gap) => (&rest[..gap], Some(rest[gap..].trim_start_matches(' '))),
            None => (rest, None),
        };
        let padded = &rest[..rest.len() - next.map_or(0, str::len)];
        if cell.split(' ').any(is_time) {
            let words: Vec<&str> = cell
                .split(' ')
                .map(|w| if is_time(w) { "[T]" } else { w })
                .collect();
            out.push_str(&words.join(" "));
            if next.is_some() {
                out.push_str("  ");
            }
        } else {
            out.push_str(padded);
        }
        match next {
            Some(n) => rest = n,
            None => break,
        }
    }
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
pub(crate) fn show_all(env: &Env, commands: &[&[&str]]) -> String {
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
        "  ID  STATE        WORKTREE\n  x   running 9s   {root}/w/repo-0a1b2c3d/x\n\
         * y   ready 12m ago  y\npid 4242 at 0123abcdef, effaced (exit 3) after 0.1s"
    );
    insta::assert_snapshot!(normalise(&env, &text), @r"
      ID  STATE        WORKTREE
      x   running [T]  [ROOT]/w/repo-[KEY]/x
    * y   ready [T] ago  y
    pid [PID] at [OID], effaced (exit 3) after 0.1s
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
    insta::assert_snapshot!(spawned_bg, @"
    $ git bullpen spawn --bg g-running -- sleep 300
    exit 0
    --- stdout
    g-running
    --- stderr
    bullpen: session g-running on bullpen/g-running in [ROOT]/bullpen-home/worktrees/repo-[KEY]/g-running
    bullpen: running in the background (pid [PID]); attach: git bullpen attach g-running; output: git bullpen logs g-running; end it: git bullpen stop g-running
    ");
    insta::assert_snapshot!(show(&env, &["ls", "--all"]), @"
    $ git bullpen ls --all
    exit 0
    --- stdout
      ID           STATE                     BRANCH
      a-done       exited 0 [T] ago  +1
      b-failed     exited 3 [T] ago  +0
      c-killed     killed by SIGTERM [T] ago  +0
      d-missing    missing [T] ago  +0
      e-no-branch  missing [T] ago  gone
      f-collected  collected [T] ago  +0
      g-running    running [T] (working)  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
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
    would collect  d-gone: the worktree is gone and the branch holds no commit of its own
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
    collected  d-gone: the worktree is gone and the branch holds no commit of its own
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
    // Collected, and nothing here shows bullpen created it: not recreated.
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/c-collected")).unwrap();
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
            &["attach", "d-taken"],
            &["logs", "d-taken"],
            &["stop", "d-taken"],
            &["stop", "nope"],
            &["logs", "nope"],
            &["path", "nope"],
            &["resume", "nope"],
            &["spawn", "Not-Valid", "--", "true"],
        ],
    );
    insta::assert_snapshot!(table, @"
    $ git bullpen resume a-file -- touch ran
    exit 125
    --- stderr
    fatal: cannot resume session a-file: [ROOT]/bullpen-home/worktrees/repo-[KEY]/a-file is occupied by a regular file; bullpen runs a session only in its own worktree and leaves what is there alone
    hint: move it aside, then resume again to recreate the worktree from bullpen/a-file

    $ git bullpen resume b-empty-dir -- touch ran
    exit 125
    --- stderr
    fatal: cannot resume session b-empty-dir: [ROOT]/bullpen-home/worktrees/repo-[KEY]/b-empty-dir is occupied by an empty directory; bullpen runs a session only in its own worktree and leaves what is there alone
    hint: `rmdir [ROOT]/bullpen-home/worktrees/repo-[KEY]/b-empty-dir`, then resume again to recreate the worktree from bullpen/b-empty-dir

    $ git bullpen resume c-collected -- touch ran
    exit 125
    --- stderr
    fatal: session c-collected was collected (`git bullpen gc` or `rm` removed its worktree) and cannot be recreated: nothing on this machine shows bullpen created its worktree (no local state: created elsewhere, by an older bullpen, or forged)
    hint: to start again from its branch: `git bullpen spawn <new-id> --base bullpen/c-collected`

    $ git bullpen resume e-gone -- touch ran
    exit 125
    --- stderr
    fatal: cannot resume session e-gone: its worktree [ROOT]/bullpen-home/worktrees/repo-[KEY]/e-gone is gone and so is its branch bullpen/e-gone; there is nothing to resume from
    hint: the session's history is in `git log refs/bullpen/sessions/e-gone`

    $ git bullpen resume f-outside -- touch ran
    exit 125
    --- stderr
    fatal: cannot resume session f-outside: its record says the worktree is [ROOT]/outside, which is not inside the worktree root [ROOT]/bullpen-home/worktrees/repo-[KEY]; records can arrive from a fetch or a hand edit, so bullpen does not act on that path
    hint: if the worktree root moved, point git config bullpen.worktreeRoot at the directory that holds f-outside's worktree
    hint: to start again from its branch: `git bullpen spawn <new-id> --base bullpen/f-outside`

    $ git bullpen resume h-running -- touch ran
    exit 125
    --- stderr
    fatal: session h-running is already running (pid [PID]); only one process per session
    hint: attach to it: git bullpen attach h-running; wait for it: git bullpen wait h-running; end it: git bullpen stop h-running

    $ git bullpen spawn d-taken -- touch ran
    exit 125
    --- stderr
    fatal: session id 'd-taken' is already in use
    hint: see `git bullpen ls --all d-taken`; pick another id

    $ git bullpen attach d-taken
    exit 125
    --- stderr
    fatal: session d-taken is not running (exited 0); there is nothing to attach to
    hint: start it again in the background: git bullpen resume --bg d-taken; its output so far: git bullpen logs d-taken

    $ git bullpen logs d-taken
    exit 128
    --- stderr
    fatal: session d-taken has no log (it would be [ROOT]/repo/.git/bullpen/logs/d-taken.log)
    hint: only background runs (`git bullpen spawn --bg`) write one

    $ git bullpen stop d-taken
    exit 0
    --- stderr
    bullpen: session d-taken is not running (exited 0); nothing to stop

    $ git bullpen stop nope
    $ git bullpen logs nope
    $ git bullpen path nope
    exit 128
    --- stderr
    fatal: no session named 'nope'
    hint: see `git bullpen ls --all` for the sessions there are

    $ git bullpen resume nope
    exit 125
    --- stderr
    fatal: no session named 'nope'
    hint: see `git bullpen ls --all` for the sessions there are

    $ git bullpen spawn Not-Valid -- true
    exit 125
    --- stderr
    error: invalid value 'Not-Valid' for '[ID]': invalid session id 'Not-Valid': it must start with a lowercase letter or a digit (ids match [a-z0-9][a-z0-9._-]{0,62}, with no '..', not ending in '.lock' or '.')

    For more information, try '--help'.
    ");
}

#[test]
fn lifecycle_messages() {
    let env = setup();
    spawn_pushed(&env, "a-published", COMMIT);
    env.spawn_sh("b-unpushed", COMMIT);
    env.bullpen(&["spawn", "c-gone", "--", "sh", "-c", "exit 5"])
        .fails();
    std::fs::remove_dir_all(env.worktree_of("c-gone")).unwrap();
    let table = show_all(
        &env,
        &[
            &["rm", "b-unpushed"][..],
            &["rm", "--dry-run", "--force", "b-unpushed"],
            &["rm", "a-published"],
            &["rm", "a-published"],
            &["path", "a-published"],
            &["path", "c-gone"],
            &["path"],
            &["wait", "c-gone"],
            &["rm", "nope"],
        ],
    );
    insta::assert_snapshot!(table, @"
    $ git bullpen rm b-unpushed
    exit 3
    --- stdout
    kept  b-unpushed: 1 commit not on any remote
    --- stderr
    hint: b-unpushed: `git bullpen rm --force b-unpushed` removes it anyway, discarding that work

    $ git bullpen rm --dry-run --force b-unpushed
    exit 0
    --- stdout
    would remove  b-unpushed: forced: would discard 1 commit not on any remote

    $ git bullpen rm a-published
    exit 0
    --- stdout
    removed  a-published: published (reachable from origin/bullpen/a-published), clean and idle

    $ git bullpen rm a-published
    exit 0
    --- stdout
    collected  a-published: already collected

    $ git bullpen path a-published
    exit 128
    --- stderr
    fatal: session a-published has no worktree to go to: it was collected (`git bullpen gc` or `rm` removed its worktree)
    hint: to start again from its pushed branch: `git bullpen spawn <new-id> --base origin/bullpen/a-published`

    $ git bullpen path c-gone
    exit 128
    --- stderr
    fatal: session c-gone has no worktree to go to: [ROOT]/bullpen-home/worktrees/repo-[KEY]/c-gone does not exist
    hint: `git bullpen resume c-gone` recreates it from bullpen/c-gone

    $ git bullpen path
    exit 129
    --- stderr
    error: no session id given, and [ROOT]/repo is not inside any session's worktree
    hint: name one: git bullpen path <id> (`git bullpen ls` lists them)

    $ git bullpen wait c-gone
    exit 5
    --- stderr
    bullpen: session c-gone exited 5 after [T]

    $ git bullpen rm nope
    exit 128
    --- stderr
    fatal: no session named 'nope'
    hint: see `git bullpen ls --all` for the sessions there are
    ");
}

#[test]
fn agent_and_ready_worktree_messages() {
    let env = Env::new();
    // Profiles whose forms run nothing, so the sessions are real without an agent.
    env.git_out(&["config", "bullpen.agent.claude.command", "true"]);
    env.git_out(&["config", "bullpen.agent.claude.resume", "false"]);
    env.git_out(&["config", "bullpen.agent.mine.command", "true"]);
    env.bullpen(&["spawn", "--agent", "claude", "a-agent"]).ok();
    env.bullpen(&["spawn", "--agent", "claude", "b-forged"])
        .ok();
    env.edit_record("b-forged", |r| r["agent"] = "nosuch".into());
    env.bullpen(&["spawn", "--agent", "claude", "c-args", "--", "--model", "x"])
        .ok();
    env.edit_record("c-args", |r| {
        r["agent_args"] = serde_json::json!(["--yolo"])
    });
    env.bullpen(&["spawn", "--agent", "mine", "d-mine"]).ok();
    env.bullpen(&["spawn", "e-plain", "--", "true"]).ok();
    let table = show_all(
        &env,
        &[
            &["resume", "a-agent"][..],
            &["resume", "b-forged"],
            &["resume", "c-args"],
            &["resume", "d-mine"],
            &["resume", "e-plain", "--fresh"],
            &["spawn", "--agent", "nosuch", "f-new"],
        ],
    );
    insta::assert_snapshot!(table, @r#"
    $ git bullpen resume a-agent
    exit 1
    --- stderr
    bullpen: resuming session a-agent on bullpen/a-agent in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a-agent: agent claude, continuing its conversation
    hint: agent claude exited 1 and has no conversation of session a-agent to continue; start a new one: git bullpen resume a-agent --fresh

    $ git bullpen resume b-forged
    exit 125
    --- stderr
    fatal: not running agent 'nosuch' for session b-forged: its recorded agent or arguments are not what this machine recorded (agent 'claude'; the record may come from a fetch or a hand edit)
    hint: name the command to run: git bullpen resume b-forged -- <command>

    $ git bullpen resume c-args
    exit 125
    --- stderr
    fatal: not running agent 'claude' with the arguments '--yolo' for session c-args: its recorded agent or arguments are not what this machine recorded (agent 'claude'; the record may come from a fetch or a hand edit)
    hint: name the command to run: git bullpen resume c-args -- <command>

    $ git bullpen resume d-mine
    exit 125
    --- stderr
    fatal: cannot resume session d-mine, which runs agent 'mine'; nothing was run: agent 'mine' has no resume form on this machine: git config bullpen.agent.mine.resume is not set
    hint: set it to how to continue its conversation: git config bullpen.agent.mine.resume '...'
    hint: or start a new conversation: git bullpen resume d-mine --fresh

    $ git bullpen resume e-plain --fresh
    exit 125
    --- stderr
    error: session e-plain runs no agent: --fresh starts an agent's new conversation
    hint: run its command again with `git bullpen resume e-plain`, or another one after `--`

    $ git bullpen spawn --agent nosuch f-new
    exit 125
    --- stderr
    fatal: no agent profile named 'nosuch' on this machine
    hint: define one: git config bullpen.agent.nosuch.command '<how to start it>' and git config bullpen.agent.nosuch.resume '<how to continue its conversation>' (built in: claude, codex)
    "#);

    std::fs::write(env.repo.join(".worktreeinclude"), ".env\n../secrets/*\n").unwrap();
    let refused = show_all(&env, &[&["spawn", "g-include", "--", "true"][..]]);
    std::fs::write(env.repo.join(".worktreeinclude"), ".env\n").unwrap();
    std::fs::write(env.repo.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(env.repo.join(".env"), "A=1\n").unwrap();
    env.git_out(&["config", "--add", "bullpen.setup", "echo installing"]);
    env.git_out(&[
        "config",
        "--add",
        "bullpen.setup",
        "echo 'npm ERR! missing script: ci' >&2; exit 1",
    ]);
    let setup = show_all(&env, &[&["spawn", "h-setup", "--", "true"][..]]);
    insta::assert_snapshot!(format!("{refused}\n{setup}"), @r#"
    $ git bullpen spawn g-include -- true
    exit 125
    --- stderr
    fatal: [ROOT]/repo/.worktreeinclude:2: the pattern '../secrets/*' reaches outside the worktree; nothing was created
    hint: patterns in .worktreeinclude name files inside the main worktree (gitignore syntax, relative to its top); remove the `..`

    $ git bullpen spawn h-setup -- true
    exit 125
    --- stderr
    bullpen: copied from the main worktree (.worktreeinclude): .env (1 file)
    bullpen: setup 1/2: echo installing
    installing
    bullpen: setup 2/2: echo 'npm ERR! missing script: ci' >&2; exit 1
    npm ERR! missing script: ci
    fatal: session h-setup was not created; nothing of it is left: setup command `echo 'npm ERR! missing script: ci' >&2; exit 1` failed (exit 1) in [ROOT]/bullpen-home/worktrees/repo-[KEY]/h-setup
    hint: fix it (git config --get-all bullpen.setup), or spawn with --no-setup to skip setup
    "#);
}
