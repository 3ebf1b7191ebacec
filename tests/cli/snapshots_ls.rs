//! The `ls` table as people read it, pinned whole: its columns, alignment and
//! ages (the test clock), at a wide and a narrow width (`COLUMNS`), with and
//! without --status, and its messages.

use crate::bg::Bg;
use crate::snapshots_support::World;
use crate::support::Env;

const MINUTE: i64 = 60;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// Sessions in several states, each spawned at its own moment; the world two
/// days and five minutes after the first.
fn sessions(env: &Env) -> World<'_> {
    let w = World::new(env);
    w.run(&[
        "spawn",
        "a-done",
        "--",
        "sh",
        "-c",
        "git commit -q --allow-empty -m work",
    ])
    .ok();
    w.after(45)
        .run(&["spawn", "b-failed", "--", "sh", "-c", "exit 3"])
        .fails();
    w.after(90 * MINUTE)
        .run(&["spawn", "c-killed", "--", "sh", "-c", "kill -TERM $$"])
        .fails();
    w.after(DAY).run(&["spawn", "d-missing", "--", "true"]).ok();
    std::fs::remove_dir_all(env.worktree_of("d-missing")).unwrap();
    w.after(DAY + 3 * HOUR)
        .run(&[
            "spawn",
            "e-a-rather-long-session-name",
            "--",
            "sh",
            "-c",
            "echo draft > notes.txt",
        ])
        .ok();
    w.after(2 * DAY + 5 * MINUTE)
}

#[test]
fn ls_table_wide_and_narrow() {
    let env = Env::new();
    let w = sessions(&env);
    insta::assert_snapshot!(w.show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID                            STATE                     BRANCH
      a-done                        exited 0 2d ago           +1
      b-failed                      exited 3 2d ago           +0
      c-killed                      killed by SIGTERM 1d ago  +0
      d-missing                     missing 1d ago            +0
      e-a-rather-long-session-name  exited 0 21h ago          +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(w.width(60).show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID                        STATE                     BRANCH
      a-done                    exited 0 2d ago           +1
      b-failed                  exited 3 2d ago           +0
      c-killed                  killed by SIGTERM 1d ago  +0
      d-missing                 missing 1d ago            +0
      e-a-rather-long-session…  exited 0 21h ago          +0
    worktree root: [cut to the width]
    ");
    insta::assert_snapshot!(w.width(40).show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID    STATE                     BRANCH
      a-d…  exited 0 2d ago           +1
      b-f…  exited 3 2d ago           +0
      c-k…  killed by SIGTERM 1d ago  +0
      d-m…  missing 1d ago            +0
      e-a…  exited 0 21h ago          +0
    worktree root: [cut to the width]
    ");
}

#[test]
fn ls_status_table_wide_and_narrow() {
    let env = Env::new();
    let w = sessions(&env);
    insta::assert_snapshot!(w.width(140).show(&["ls", "--status"]), @"
    $ git bullpen ls --status
    exit 0
    --- stdout
      ID                            STATE                     BRANCH  CHANGES     PUBLISHED
      a-done                        exited 0 2d ago           +1      clean       no
      b-failed                      exited 3 2d ago           +0      clean       no
      c-killed                      killed by SIGTERM 1d ago  +0      clean       no
      d-missing                     missing 1d ago            +0      -           no
      e-a-rather-long-session-name  exited 0 21h ago          +0      1?          no
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(w.width(70).show(&["ls", "--status"]), @"
    $ git bullpen ls --status
    exit 0
    --- stdout
      ID           STATE                     BRANCH  CHANGES     PUBLISHED
      a-done       exited 0 2d ago           +1      clean       no
      b-failed     exited 3 2d ago           +0      clean       no
      c-killed     killed by SIGTERM 1d ago  +0      clean       no
      d-missing    missing 1d ago            +0      -           no
      e-a-rather…  exited 0 21h ago          +0      1?          no
    worktree root: [cut to the width]
    ");
}

#[test]
fn ls_of_one_session_and_of_a_collected_one() {
    let env = Env::new();
    let w = sessions(&env);
    insta::assert_snapshot!(w.show(&["ls", "b-failed"]), @"
    $ git bullpen ls b-failed
    exit 0
    --- stdout
      ID        STATE            BRANCH
      b-failed  exited 3 2d ago  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    env.edit_record("d-missing", |r| r["state"] = "collected".into());
    insta::assert_snapshot!(w.show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID                            STATE                     BRANCH
      a-done                        exited 0 2d ago           +1
      b-failed                      exited 3 2d ago           +0
      c-killed                      killed by SIGTERM 1d ago  +0
      e-a-rather-long-session-name  exited 0 21h ago          +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(w.show(&["ls", "--all"]), @"
    $ git bullpen ls --all
    exit 0
    --- stdout
      ID                            STATE                     BRANCH
      a-done                        exited 0 2d ago           +1
      b-failed                      exited 3 2d ago           +0
      c-killed                      killed by SIGTERM 1d ago  +0
      d-missing                     collected 1d ago          +0
      e-a-rather-long-session-name  exited 0 21h ago          +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
}

#[test]
fn ls_ages_as_time_goes_by() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "x", "--", "true"]).ok();
    let ages: Vec<String> = [0, 59, MINUTE, 59 * MINUTE, HOUR, 23 * HOUR, DAY, 40 * DAY]
        .into_iter()
        .map(|later| {
            let table = w.after(later).run(&["ls"]).ok().stdout;
            format!("+{later}s: {}", table.lines().nth(1).unwrap_or_default())
        })
        .collect();
    insta::assert_snapshot!(ages.join("\n"), @"
    +0s:   x   exited 0 0s ago  +0
    +59s:   x   exited 0 59s ago  +0
    +60s:   x   exited 0 1m ago  +0
    +3540s:   x   exited 0 59m ago  +0
    +3600s:   x   exited 0 1h ago  +0
    +82800s:   x   exited 0 23h ago  +0
    +86400s:   x   exited 0 1d ago  +0
    +3456000s:   x   exited 0 40d ago  +0
    ");
}

#[test]
fn ls_json_of_a_session() {
    let env = Env::new();
    let w = World::new(&env);
    w.run(&["spawn", "j", "--", "sh", "-c", "exit 4"]).fails();
    insta::assert_snapshot!(w.after(HOUR).show(&["ls", "--json", "j"]), @r#"
    $ git bullpen ls --json j
    exit 0
    --- stdout
    [
      {
        "id": "j",
        "state": "exited",
        "branch": "bullpen/j",
        "base": "[OID]",
        "worktree": "[ROOT]/bullpen-home/worktrees/repo-[KEY]/j",
        "command": [
          "sh",
          "-c",
          "exit 4"
        ],
        "created_at": "2026-01-01T00:00:00Z",
        "exit_code": 4,
        "signal": null,
        "pid": [PID],
        "host": "host",
        "ahead": 0,
        "log": null,
        "session_command": [
          "sh",
          "-c",
          "exit 4"
        ],
        "resume_command": [
          "sh",
          "-c",
          "exit 4"
        ],
        "agent": null,
        "current": false,
        "run_started_at": "2026-01-01T00:00:00Z",
        "run_ended_at": "2026-01-01T00:00:00Z",
        "base_ref": "refs/heads/main",
        "behind": null,
        "modified": null,
        "staged": null,
        "untracked": null,
        "deleted": null,
        "published": null,
        "unpublished": null,
        "updated_at": "2026-01-01T00:00:00Z",
        "clone_id": "[OID]",
        "remote": null,
        "attached": null,
        "last_output_at": null,
        "activity": null,
        "activity_since": null,
        "repository": null,
        "sandbox": null,
        "ended": "exited 4"
      }
    ]
    "#);
}

#[test]
fn ls_with_no_sessions_and_outside_a_repository() {
    let env = Env::new();
    let w = World::new(&env);
    insta::assert_snapshot!(w.show(&["ls"]), @r#"
    $ git bullpen ls
    exit 0
    --- stderr
    hint: no sessions yet; start one with `git bullpen spawn <id> -- <command>`
    "#);
    let elsewhere = env.root().join("not-a-repo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    insta::assert_snapshot!(w.show_in(&elsewhere, &["ls"]), @r#"
    $ git bullpen ls
    exit 128
    --- stderr
    fatal: not a git repository (or any parent up to /): [ROOT]/not-a-repo
    hint: run bullpen inside a git repository (or name one with `git --git-dir`)
    "#);
    insta::assert_snapshot!(w.show(&["ls", "No/Such"]), @r#"
    $ git bullpen ls No/Such
    exit 129
    --- stderr
    error: invalid value 'No/Such' for '[ID]...': invalid session id 'No/Such': it must start with a lowercase letter or a digit (ids match [a-z0-9][a-z0-9._-]{0,62}, with no '..', not ending in '.lock' or '.')

    For more information, try '--help'.
    "#);
    insta::assert_snapshot!(w.show(&["ls", "nothing-here"]), @r#"
    $ git bullpen ls nothing-here
    exit 128
    --- stderr
    fatal: no session named 'nothing-here'
    hint: see `git bullpen ls --all` for the sessions there are
    "#);
}

#[test]
fn ls_of_a_run_in_the_background() {
    let env = Bg::new();
    let w = World::new(&env);
    w.run(&["spawn", "--bg", "r", "--", "sleep", "300"]).ok();
    let later = w.after(5 * MINUTE + 7);
    insta::assert_snapshot!(later.show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID  STATE                 BRANCH
      r   running 5m (working)  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(later.width(50).show(&["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID  STATE                 BRANCH
      r   running 5m (working)  +0
    worktree root: [cut to the width]
    ");
    env.bullpen(&["stop", "r"]).ok();
}

#[test]
fn ls_from_inside_a_sessions_worktree_marks_it() {
    let env = Env::new();
    let w = sessions(&env);
    let wt = env.worktree_of("b-failed");
    insta::assert_snapshot!(w.show_in(&wt, &["ls"]), @"
    $ git bullpen ls
    exit 0
    --- stdout
      ID                            STATE                     BRANCH
      a-done                        exited 0 2d ago           +1
    * b-failed                      exited 3 2d ago           +0
      c-killed                      killed by SIGTERM 1d ago  +0
      d-missing                     missing 1d ago            +0
      e-a-rather-long-session-name  exited 0 21h ago          +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    ");
    insta::assert_snapshot!(w.width(40).show_in(&wt, &["ls", "--status"]), @"
    $ git bullpen ls --status
    exit 0
    --- stdout
      ID    STATE                     BRANCH
      a-d…  exited 0 2d ago           +1
    * b-f…  exited 3 2d ago           +0
      c-k…  killed by SIGTERM 1d ago  +0
      d-m…  missing 1d ago            +0
      e-a…  exited 0 21h ago          +0
    worktree root: [cut to the width]
    (2 columns hidden; widen the terminal o…
    ");
}

#[test]
fn ls_of_sessions_from_a_remote() {
    let env = Env::new();
    let w = sessions(&env);
    env.add_bare_remote();
    w.run(&["push"]).ok();
    w.after(HOUR).run(&["fetch"]).ok();
    insta::assert_snapshot!(w.after(3 * HOUR).show(&["ls", "--remote"]), @"
    $ git bullpen ls --remote
    exit 0
    --- stderr
    hint: no sessions fetched from any remote; `git bullpen fetch` brings those pushed there
    ");
    insta::assert_snapshot!(w.after(3 * HOUR).width(50).show(&["ls", "--remote"]), @"
    $ git bullpen ls --remote
    exit 0
    --- stderr
    hint: no sessions fetched from any remote; `git bullpen fetch` brings those pushed there
    ");
}
