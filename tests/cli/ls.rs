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
        // Added with issue 12.
        "session_command",
        "current",
        "run_started_at",
        "run_ended_at",
        "base_ref",
        "behind",
        "modified",
        "staged",
        "untracked",
        "deleted",
        "published",
        "unpublished",
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
    // A header, one row and the worktree root; what they say:
    // snapshots::spawn_and_the_ls_table_...
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[1].starts_with("  demo "), "{table}");
    assert!(lines[2].starts_with("worktree root: "), "{table}");
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
fn empty_repository_lists_nothing_and_says_so_on_stderr() {
    let env = Env::new();
    let run = env.bullpen(&["ls"]).ok();
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "hint: no sessions yet; start one with `git bullpen spawn <id> -- <command>`\n"
    );
    let run = env.bullpen(&["ls", "--json"]).ok();
    assert_eq!(run.stdout.trim(), "[]");
    // Only collected ones: ls says where they are.
    env.bullpen(&["spawn", "c", "--", "true"]).ok();
    env.edit_record("c", |r| r["state"] = "collected".into());
    let run = env.bullpen(&["ls"]).ok();
    assert_eq!(run.stdout, "");
    assert_contains(
        &run.stderr,
        "1 collected; `git bullpen ls --all` shows them",
    );
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
    assert!(!table.contains("\n  c "), "{table}");
    assert!(table.contains("\n  d "), "{table}");
    let all = env.bullpen(&["ls", "--all"]).ok().stdout;
    assert!(all.contains("\n  c ") && all.contains("collected"), "{all}");
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

/// `git-bullpen <args>` on a terminal of `cols` columns (util-linux `script`
/// gives it a pseudo-terminal; `stty` sets the width bullpen reads from it).
fn on_a_terminal(env: &Env, cwd: &std::path::Path, cols: usize, args: &str) -> String {
    let mut cmd = env.cmd("script", cwd);
    cmd.args([
        "-qec",
        &format!("stty cols {cols} rows 24; {} {args}", crate::support::BIN),
        "/dev/null",
    ]);
    let run: crate::support::Run = cmd.output().unwrap().into();
    // The terminal turns each newline into CR LF.
    run.ok().stdout.replace("\r\n", "\n")
}

fn width(line: &str) -> usize {
    // No colour codes in these tables (NO_COLOR): characters are columns.
    line.chars().count()
}

#[test]
fn on_an_80_column_terminal_a_60_character_id_is_cut_and_no_line_wraps() {
    let env = Env::new();
    let long = "a-session-with-a-very-long-id-that-goes-on-and-on-and-on-0001";
    let long = &long[..60];
    env.spawn_sh(long, "git commit -q --allow-empty -m w");
    env.bullpen(&["spawn", "short", "--", "true"]).ok();
    let wt = env.worktree_of("short");
    let table = on_a_terminal(&env, &wt, 80, "ls");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    for line in &lines {
        let plain = strip_ansi(line);
        assert!(width(&plain) <= 80, "{} columns: {plain:?}", width(&plain));
    }
    let row = strip_ansi(lines[1]);
    assert!(row.starts_with("  a-session-with-a-very-"), "{table}");
    assert!(row.contains('…'), "the id is cut with an ellipsis: {table}");
    assert!(row.contains("exited 0 "), "{table}");
    assert!(row.ends_with(" +1"), "{table}");
    // The session the current directory is in is marked, as `git branch` does.
    assert!(strip_ansi(lines[2]).starts_with("* short "), "{table}");
    assert!(lines[3].starts_with("worktree root: "), "{table}");

    // COLUMNS wins over the terminal, and applies in a pipe too.
    let run = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["ls"])
        .env("COLUMNS", "50")
        .output()
        .unwrap();
    let piped = String::from_utf8_lossy(&run.stdout).into_owned();
    for line in piped.lines() {
        assert!(width(line) <= 50, "{line:?}");
    }
    // Into a pipe without COLUMNS: nothing is cut.
    let whole = env.bullpen(&["ls"]).ok().stdout;
    assert!(whole.contains(long), "{whole}");
}

/// A table line's cells (the mark aside): what two or more spaces separate.
fn cells(line: &str) -> Vec<String> {
    line.get(2..)
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The text without ANSI colour sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn ls_shows_when_the_last_run_ended_not_when_the_session_was_made() {
    let env = Env::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    // Created long ago, last run a minute ago.
    let long_ago = "2020-01-01T00:00:00Z";
    let minute_ago = bullpen::model::time::rfc3339(bullpen::model::time::now_unix() - 90);
    env.edit_record("a", |r| {
        r["created_at"] = long_ago.into();
        r["exit"]["at"] = minute_ago.clone().into();
    });
    let table = env.bullpen(&["ls"]).ok().stdout;
    assert_eq!(
        cells(table.lines().nth(1).unwrap())[1],
        "exited 0 1m ago",
        "{table}"
    );
    let row = &env.ls_json()[0];
    assert_eq!(row["created_at"], long_ago);
    assert_eq!(row["run_ended_at"], minute_ago.as_str());
}

#[test]
fn ls_status_shows_uncommitted_work_behind_and_published() {
    let env = Env::new();
    env.add_bare_remote();
    std::fs::write(env.repo.join(".gitignore"), "target/\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore target"])
        .ok();
    // a: pushed, then dirty in every way; b: one unpublished commit; main moves on.
    let a = env.spawn_sh("a", "git commit -q --allow-empty -m a");
    env.git(&a, &["push", "-q", "origin", "bullpen/a"]).ok();
    std::fs::write(a.join("README"), "changed\n").unwrap();
    std::fs::write(a.join("staged.txt"), "s\n").unwrap();
    env.git(&a, &["add", "staged.txt"]).ok();
    std::fs::write(a.join("new1"), "u\n").unwrap();
    std::fs::write(a.join("new2"), "u\n").unwrap();
    std::fs::create_dir_all(a.join("target")).unwrap();
    std::fs::write(a.join("target/ignored"), "i\n").unwrap();
    env.spawn_sh("b", "git commit -q --allow-empty -m b");
    env.git_out(&["commit", "-q", "--allow-empty", "-m", "main moves"]);
    env.git_out(&["commit", "-q", "--allow-empty", "-m", "main moves again"]);

    let table = env.bullpen(&["ls", "--status"]).ok().stdout;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        cells(lines[0]),
        ["ID", "STATE", "BRANCH", "CHANGES", "PUBLISHED"],
        "{table}"
    );
    assert_eq!(
        cells(lines[1])[2..],
        ["+1 -2", "1M 1S 2?", "yes"],
        "{table}"
    );
    assert_eq!(cells(lines[2])[2..], ["+1 -2", "clean", "no"], "{table}");
    // -s is the short form; plain ls has none of these columns. (The STATE
    // cells say how long ago, which may cross a second between the two runs.)
    let but_state = |t: &str| -> Vec<Vec<String>> {
        t.lines()
            .map(|l| {
                let mut c = cells(l);
                if c.len() > 2 {
                    c.remove(1);
                }
                c
            })
            .collect()
    };
    assert_eq!(
        but_state(&env.bullpen(&["ls", "-s"]).ok().stdout),
        but_state(&table)
    );
    assert!(!env.bullpen(&["ls"]).ok().stdout.contains("CHANGES"));

    let json: serde_json::Value =
        serde_json::from_str(&env.bullpen(&["ls", "--status", "--json"]).ok().stdout).unwrap();
    let (ja, jb) = (&json[0], &json[1]);
    assert_row_keys(ja);
    assert_eq!(
        (&ja["modified"], &ja["staged"], &ja["untracked"]),
        (&1.into(), &1.into(), &2.into()),
        "{ja}"
    );
    assert_eq!(ja["published"], true);
    assert_eq!(ja["unpublished"], 0);
    assert_eq!(ja["behind"], 2);
    assert_eq!(ja["base_ref"], "refs/heads/main");
    assert_eq!(jb["published"], false);
    assert_eq!(jb["unpublished"], 1);
    assert_eq!(jb["modified"], 0);
    // Without --status the keys are there, null.
    let plain = &env.ls_json()[0];
    assert_row_keys(plain);
    assert_eq!(plain["modified"], serde_json::Value::Null);
    assert_eq!(plain["published"], serde_json::Value::Null);
}

#[test]
fn ls_status_looks_only_into_the_sessions_own_worktrees() {
    let env = Env::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    // A record pointing at the main worktree, which has uncommitted work: a
    // record's path alone is not looked into.
    std::fs::write(env.repo.join("scratch.txt"), "mine\n").unwrap();
    let main = env.repo.to_str().unwrap().to_owned();
    env.edit_record("a", |r| r["worktree"] = main.clone().into());
    let json: serde_json::Value =
        serde_json::from_str(&env.bullpen(&["ls", "--status", "--json"]).ok().stdout).unwrap();
    assert_eq!(json[0]["untracked"], serde_json::Value::Null, "{}", json[0]);
    assert_eq!(json[0]["modified"], serde_json::Value::Null);
}

/// `ls` keeps what it read from objects in `<common>/bullpen/cache/ls`, keyed
/// by object ids (issue 17): a record that changed, or a branch that moved, is
/// read anew, never taken from the cache.
#[test]
fn ls_shows_what_records_and_branches_say_now_not_what_it_cached() {
    let env = Env::new();
    let wt = env.spawn_sh("demo", "git commit -q --allow-empty -m one");
    let first = env.ls_json();
    assert_eq!(first[0]["ahead"], 1);
    assert!(env.repo.join(".git/bullpen/cache/ls").is_file());

    env.edit_record("demo", |r| r["host"] = "elsewhere".into());
    env.git(&wt, &["commit", "-q", "--allow-empty", "-m", "two"])
        .ok();
    let now = env.ls_json();
    assert_eq!(now[0]["host"], "elsewhere", "{now}");
    assert_eq!(now[0]["ahead"], 2, "{now}");
}

/// A cache file that is damaged, cut short or of another version is not read
/// at all: `ls` says what the objects say, and rewrites it.
#[test]
fn a_damaged_ls_cache_is_ignored_and_rewritten() {
    let env = Env::new();
    env.spawn_sh("demo", "git commit -q --allow-empty -m one");
    let want = env.bullpen(&["ls", "--json"]).ok().stdout;
    let cache = env.repo.join(".git/bullpen/cache/ls");
    let good = std::fs::read_to_string(&cache).unwrap();
    // An entry that says otherwise, in a file that is cut short (no `end`
    // line), or that claims one line too many: none of it is believed.
    let forged = good.replace("\"host\":\"", "\"host\":\"forged-");
    assert_ne!(forged, good);
    let cut = forged.rsplit_once("end ").unwrap().0.to_owned();
    let miscounted = forged.replace("end 2", "end 3");
    for damaged in [cut.as_str(), miscounted.as_str(), "garbage", ""] {
        std::fs::write(&cache, damaged).unwrap();
        assert_eq!(env.bullpen(&["ls", "--json"]).ok().stdout, want);
        assert_eq!(std::fs::read_to_string(&cache).unwrap(), good);
    }
    // The whole forged file is believed (it is only a cache of what the
    // records say, as trusted as they are): proof the cache is what ls reads.
    std::fs::write(&cache, &forged).unwrap();
    assert_contains(&env.bullpen(&["ls", "--json"]).ok().stdout, "forged-");
}

/// The session the current directory is in is found by the identity of the
/// directories holding it (issue 17: no path resolved per session), so a
/// directory deep in a worktree, reached through a symbolic link, still counts.
#[test]
fn the_current_session_is_found_through_a_link_and_from_below() {
    let env = Env::new();
    let alpha = env.spawn_sh("alpha", "mkdir -p deep/er");
    env.spawn_sh("beta", "true");
    let link = env.root().join("link");
    std::os::unix::fs::symlink(&alpha, &link).unwrap();
    let below = link.join("deep/er");
    let path = env.bullpen_in(&below, &["path"]).ok().stdout;
    assert_eq!(path.trim(), alpha.display().to_string());
    let rows: serde_json::Value =
        serde_json::from_str(&env.bullpen_in(&below, &["ls", "--json"]).ok().stdout).unwrap();
    let current: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["current"] == true)
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(current, ["alpha"]);
    // From the main worktree: none.
    let rows = env.bullpen(&["ls", "--json"]).ok().stdout;
    assert!(!rows.contains("\"current\": true"), "{rows}");
}
