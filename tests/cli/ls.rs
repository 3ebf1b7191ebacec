//! `git bullpen ls`: the table, the JSON contract, derived states, pipes.

use crate::support::{assert_contains, Env};

/// Every key of an `ls --json` row is there (null when unknown): the keys are a
/// compatibility surface, added to but never renamed or removed.
#[track_caller]
pub(crate) fn assert_row_keys(row: &serde_json::Value) {
    for key in [
        "id",
        "state",
        "branch",
        "base",
        "worktree",
        "command",
        "created_at",
        "exit_code",
        "signal",
        "pid",
        "host",
        "ahead",
        "log",
    ] {
        assert!(row.get(key).is_some(), "ls --json keeps {key}: {row}");
    }
}

#[test]
fn table_and_json_show_the_session() {
    let env = Env::new();
    env.spawn_sh("demo", "git commit -q --allow-empty -m w");
    let table = env.bullpen(&["ls"]).ok().stdout;
    let lines: Vec<&str> = table.lines().collect();
    // A header and one row; what they say: snapshots::spawn_and_the_ls_table_...
    assert_eq!(lines.len(), 2, "{table}");
    assert!(lines[1].starts_with("demo "), "{table}");
    assert!(!table.contains('\x1b'), "no colour when not a terminal");

    let json = env.bullpen(&["ls", "--json"]).ok().stdout;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = &json[0];
    assert_row_keys(s);
    assert_eq!(s["id"], "demo");
    assert_eq!(s["state"], "exited");
    assert_eq!(s["exit_code"], 0);
    assert_eq!(s["ahead"], 1);
    assert_eq!(
        s["command"],
        serde_json::json!(["sh", "-c", "git commit -q --allow-empty -m w"])
    );
    let created = s["created_at"].as_str().unwrap();
    assert!(
        created.len() == 20 && created.ends_with('Z') && &created[10..11] == "T",
        "{created}"
    );
}

#[test]
fn empty_repository_lists_nothing() {
    let env = Env::new();
    assert_eq!(env.bullpen(&["ls"]).ok().stdout, "");
    assert_eq!(env.bullpen(&["ls", "--json"]).ok().stdout.trim(), "[]");
}

#[test]
fn ls_of_named_sessions_and_unknown_ids() {
    let env = Env::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    env.bullpen(&["spawn", "b", "--", "true"]).ok();
    let json: serde_json::Value =
        serde_json::from_str(&env.bullpen(&["ls", "--json", "b"]).ok().stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(json[0]["id"], "b");
    let run = env.bullpen(&["ls", "nope"]).fails();
    assert_contains(&run.stderr, "no session named 'nope'");
}

#[test]
fn a_running_record_without_its_process_is_lost() {
    let env = Env::new();
    env.bullpen(&["spawn", "l", "--", "true"]).ok();
    // A record claiming to run as this very test process, but with another start
    // time: the pid is alive, yet it is not the session's process.
    let me = std::process::id();
    env.edit_record("l", |r| {
        r["state"] = "running".into();
        r["process"]["pid"] = me.into();
        r["process"]["start_time"] = 1.into();
    });
    let json = env.ls_json();
    assert_eq!(json[0]["state"], "lost");
    assert!(env.bullpen(&["ls"]).ok().stdout.contains("lost"));
}

#[test]
fn a_session_whose_worktree_is_gone_is_missing() {
    let env = Env::new();
    env.bullpen(&["spawn", "m", "--", "true"]).ok();
    std::fs::remove_dir_all(env.worktree_of("m")).unwrap();
    assert_eq!(env.ls_json()[0]["state"], "missing");
}

#[test]
fn collected_sessions_show_only_with_all() {
    let env = Env::new();
    env.bullpen(&["spawn", "c", "--", "true"]).ok();
    env.bullpen(&["spawn", "d", "--", "true"]).ok();
    env.edit_record("c", |r| r["state"] = "collected".into());
    let table = env.bullpen(&["ls"]).ok().stdout;
    assert!(!table.contains("\nc "), "{table}");
    assert!(table.contains("\nd "), "{table}");
    let all = env.bullpen(&["ls", "--all"]).ok().stdout;
    assert!(all.contains("\nc ") && all.contains("collected"), "{all}");
}

#[test]
fn unknown_keys_are_ignored_and_newer_schemas_refused() {
    let env = Env::new();
    env.bullpen(&["spawn", "u", "--", "true"]).ok();
    env.bullpen(&["spawn", "n", "--", "true"]).ok();
    env.edit_record("u", |r| {
        r["from_the_future"] = serde_json::json!({"x": [1, 2]})
    });
    env.edit_record("n", |r| r["schema"] = 99.into());
    // A listing of everything still shows the readable sessions and warns about the other.
    let run = env.bullpen(&["ls", "--json"]).ok();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(json[0]["id"], "u");
    assert_contains(&run.stderr, "schema 99 is newer");
    // Asking for it by name is an error that says what to do.
    let run = env.bullpen(&["ls", "n"]).fails();
    assert_contains(&run.stderr, "upgrade git-bullpen");
}

#[test]
fn piping_into_head_exits_quietly() {
    let env = Env::new();
    for i in 0..3 {
        env.bullpen(&["spawn", &format!("s{i}"), "--", "true"]).ok();
    }
    // A reader that closes the pipe at once: bullpen must exit 0 without a panic.
    let (status, err) = env.bullpen_into_closed_pipe(&["ls", "--all"]);
    assert!(status.success(), "exit {status:?}, stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err, "");
}

#[test]
fn piping_json_into_head_exits_quietly() {
    let env = Env::new();
    // More JSON than stdout's buffer holds, so the failing write happens inside
    // serde_json (whose error wraps the broken pipe), not in the final flush.
    let long = "x".repeat(64 * 1024);
    env.bullpen(&["spawn", "s0", "--", "true", &long]).ok();
    let (status, err) = env.bullpen_into_closed_pipe(&["ls", "--all", "--json"]);
    assert!(status.success(), "exit {status:?}, stderr: {err}");
    assert_eq!(err, "");
}

/// `ls` through a pseudo-terminal (util-linux `script`), so stdout is a tty.
fn ls_on_a_terminal(env: &Env, no_color: Option<&str>) -> String {
    let mut cmd = env.cmd("script", &env.repo);
    cmd.args(["-qec", &format!("{} ls", crate::support::BIN), "/dev/null"]);
    // Not a dumb terminal (git colours nothing where TERM is unset or `dumb`).
    cmd.env("TERM", "xterm-256color");
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let run: crate::support::Run = cmd.output().unwrap().into();
    run.ok().stdout
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let env = Env::new();
    env.bullpen(&["spawn", "c", "--", "false"]).fails();
    let tty = ls_on_a_terminal(&env, None);
    assert!(tty.contains("\x1b["), "coloured on a terminal: {tty:?}");
    let no_color = ls_on_a_terminal(&env, Some("1"));
    assert!(no_color.contains("exited 1"), "{no_color:?}");
    assert!(!no_color.contains("\x1b["), "NO_COLOR: {no_color:?}");
    let piped = env.bullpen(&["ls"]).ok().stdout;
    assert!(!piped.contains("\x1b["), "{piped:?}");
}

#[test]
fn a_record_naming_a_bad_branch_does_not_hide_the_others() {
    // The branch is derived from the id, never taken from a (hand-edited) record.
    let env = Env::new();
    env.spawn_sh("a", "git commit -q --allow-empty -m w");
    env.bullpen(&["spawn", "b", "--", "true"]).ok();
    env.edit_record("a", |r| r["branch"] = "x..y".into());
    env.edit_record("b", |r| r["branch"] = "main".into());
    let json = env.ls_json();
    assert_eq!(json[0]["branch"], "bullpen/a");
    assert_eq!(json[0]["ahead"], 1);
    assert_eq!(json[1]["branch"], "bullpen/b");
    assert_eq!(json[1]["ahead"], 0);
}
