//! Unit tests of `table.rs`.
use super::*;
use crate::ls::fit::{render_remote_table, render_table};

const ROOT: &str = "/home/me/.local/share/bullpen/worktrees/app-1a2b3c4d";
const NOW: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

fn record(id: &str, state: State) -> Record {
    serde_json::from_value(serde_json::json!({
        "schema": 1, "id": id, "branch": format!("bullpen/{id}"),
        "worktree": format!("{ROOT}/{id}"),
        "base": "0".repeat(40), "command": ["claude"], "state": state.as_str(),
        "host": "h", "created_at": time::rfc3339(NOW - 3 * 86_400),
        "updated_at": time::rfc3339(NOW - 3600),
    }))
    .unwrap()
}

fn ended(mut r: Record, code: Option<i32>, signal: Option<i32>, ago: i64) -> Record {
    r.exit = Some(crate::model::Exit {
        code,
        signal,
        at: time::rfc3339(NOW - ago),
    });
    r
}

fn running(mut r: Record, ago: i64) -> Record {
    r.process = Some(
        serde_json::from_value(serde_json::json!({
            "pid": 42, "started_at": time::rfc3339(NOW - ago),
        }))
        .unwrap(),
    );
    r
}

fn facts(ahead: usize) -> Facts {
    Facts {
        alive: true,
        worktree_exists: true,
        ahead: Some(ahead),
        ..Facts::default()
    }
}

fn table(rows: &[Row], width: Option<usize>) -> String {
    let mut out = Vec::new();
    let view = View {
        now: NOW,
        color: false,
        width,
        root: Path::new(ROOT),
        home: Some(Path::new("/home/me")),
    };
    render_table(&mut out, rows, &view).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn each_state_says_what_happened_last_and_when() {
    let lost = Facts {
        alive: false,
        ..facts(0)
    };
    let gone = Facts {
        worktree_exists: false,
        ahead: None,
        ..facts(0)
    };
    let table = [
        (
            running(record("a", State::Running), 300),
            facts(3),
            "running 5m",
        ),
        (
            ended(record("b", State::Exited), Some(0), None, 7200),
            facts(1),
            "exited 0 2h ago",
        ),
        (
            ended(record("c", State::Exited), None, Some(15), 60),
            facts(0),
            "killed by SIGTERM 1m ago",
        ),
        (
            ended(record("d", State::Stopped), None, Some(15), 86_400),
            facts(0),
            "stopped by SIGTERM 1d ago",
        ),
        (record("e", State::Ready), facts(0), "ready 3d ago"),
        (
            running(record("f", State::Running), 120),
            lost,
            "lost 2m ago",
        ),
        (
            ended(record("g", State::Exited), Some(0), None, 30),
            gone,
            "missing 30s ago",
        ),
        (record("h", State::Collected), facts(0), "collected 1h ago"),
    ];
    for (r, f, want) in table {
        assert_eq!(state_cell(&row(&r, &f), NOW), want, "{}", r.id);
    }
}

#[test]
fn a_run_on_a_terminal_says_whether_it_is_attached_and_how_long_it_is_idle() {
    let on_terminal = |attached: bool, last_output: Option<i64>| Facts {
        attached: Some(attached),
        last_output,
        ..facts(0)
    };
    let r = running(record("a", State::Running), 600);
    let table = [
        (
            on_terminal(true, Some(NOW - 180)),
            "running 10m (attached, idle 3m)",
        ),
        (on_terminal(false, Some(NOW - 12)), "running 10m (idle 12s)"),
        (on_terminal(true, None), "running 10m (attached)"),
        (on_terminal(false, None), "running 10m (no output yet)"),
        // A run not on a terminal (an older bullpen's) says nothing more.
        (facts(0), "running 10m"),
    ];
    for (f, want) in table {
        assert_eq!(state_cell(&row(&r, &f), NOW), want);
    }
    // Only a running session is attached; a lost one is not.
    let lost = row(
        &r,
        &Facts {
            alive: false,
            ..on_terminal(true, Some(NOW - 5))
        },
    );
    assert_eq!(lost.attached, None);
    assert_eq!(state_cell(&lost, NOW), "lost 10m ago");
    assert_eq!(
        lost.last_output_at.as_deref(),
        Some(time::rfc3339(NOW - 5).as_str())
    );
}

#[test]
fn the_table_marks_the_current_session_and_shows_the_root_once() {
    let mut current = facts(3);
    current.current = true;
    let mut elsewhere = ended(record("old", State::Exited), Some(0), None, 60);
    elsewhere.worktree = "/home/me/old-root/old".into();
    let rows = [
        row(&running(record("fix-login", State::Running), 300), &current),
        row(
            &ended(record("tests", State::Exited), Some(1), None, 7200),
            &facts(0),
        ),
        row(&elsewhere, &facts(0)),
    ];
    assert_eq!(
        table(&rows, None),
        "  ID         STATE            BRANCH  WORKTREE\n\
         * fix-login  running 5m       +3\n  \
           tests      exited 1 2h ago  +0\n  \
           old        exited 0 1m ago  +0      ~/old-root/old\n\
         worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d\n"
    );
}

#[test]
fn status_columns_say_what_decides_a_clean_up() {
    let with = |ahead, status: StatusFacts| Facts {
        status: Some(status),
        ..facts(ahead)
    };
    let dirty = StatusFacts {
        dirt: Some(Dirt {
            modified: 2,
            staged: 1,
            untracked: 4,
            ..Dirt::default()
        }),
        behind: Some(5),
        published: Some(false),
        unpublished: Some(3),
    };
    let clean = StatusFacts {
        dirt: Some(Dirt::default()),
        behind: Some(0),
        published: Some(true),
        unpublished: Some(0),
    };
    let rows = [
        row(
            &ended(record("a", State::Exited), Some(0), None, 60),
            &with(3, dirty),
        ),
        row(
            &ended(record("b", State::Exited), Some(0), None, 60),
            &with(1, clean),
        ),
        row(
            &ended(record("c", State::Exited), Some(0), None, 60),
            &Facts {
                ahead: None,
                worktree_exists: false,
                ..with(0, StatusFacts::default())
            },
        ),
    ];
    assert_eq!(
        table(&rows, None),
        "  ID  STATE            BRANCH  CHANGES     PUBLISHED\n  \
           a   exited 0 1m ago  +3 -5   2M 1S 4?    no\n  \
           b   exited 0 1m ago  +1      clean       yes\n  \
           c   missing 1m ago   gone    -           -\n\
         worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d\n"
    );
}

#[test]
fn a_long_id_is_cut_to_fit_and_no_line_is_wider_than_the_terminal() {
    let id = "a-very-long-session-id-".repeat(3);
    let id = &id[..60];
    let rows = [
        row(&running(record(id, State::Running), 300), &facts(12)),
        row(&record("short", State::Ready), &facts(0)),
    ];
    let text = table(&rows, Some(80));
    for line in text.lines() {
        assert!(line.width() <= 80, "{} columns: {line:?}", line.width());
    }
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    // The worktree only repeats the id: the ID takes the cut alone.
    assert!(
        lines[1].starts_with("  a-very-long-session-id-a-very"),
        "{text}"
    );
    assert!(lines[1].contains("…  running 5m "), "{text}");
    assert!(lines[1].ends_with("  +12"), "{text}");
    assert!(lines[2].starts_with("  short  "), "{text}");
    assert_eq!(lines[0].width(), 80, "{text}");
    // Narrower than what is never cut: each line is cut, never wrapped.
    for line in table(&rows, Some(20)).lines() {
        assert!(line.width() <= 20, "{line:?}");
    }
}

#[test]
fn paths_and_cells_are_cut_by_display_width() {
    assert_eq!(truncate("abcdef", 4, false), "abc…");
    assert_eq!(truncate("/a/b/c/dd", 5, true), "…c/dd");
    assert_eq!(truncate("short", 9, false), "short");
    // Wide characters take two columns each.
    assert_eq!(truncate("日本語のid", 5, false), "日本…");
    assert_eq!(truncate("abc", 0, false), "");
    let root = Path::new("/r/w");
    let home = Some(Path::new("/home/me"));
    assert_eq!(shorten(Path::new("/r/w/x"), root, home), "x");
    assert_eq!(shorten(Path::new("/home/me/x"), root, home), "~/x");
    assert_eq!(
        shorten(Path::new("/elsewhere/x"), root, home),
        "/elsewhere/x"
    );
    assert_eq!(shorten(Path::new("/r/w"), root, home), "/r/w");
    // A home of `/` shortens nothing.
    assert_eq!(shorten(Path::new("/x"), root, Some(Path::new("/"))), "/x");
}

#[test]
fn a_fetched_session_shows_what_its_record_says_as_of_when() {
    let remote = |host: &str| RemoteFacts {
        remote: "origin".into(),
        ahead: Some(3),
        host_label: host.into(),
    };
    // Running, its process gone (it is another machine's), its worktree
    // absent here: still what the record says, never lost or missing.
    let mut r = running(record("fix-login", State::Running), 600);
    r.updated_at = time::rfc3339(NOW - 300);
    let rows = [
        remote_row(&r, &remote("laptop")),
        remote_row(
            &ended(record("tests", State::Exited), Some(1), None, 7200),
            &RemoteFacts {
                ahead: None,
                ..remote("box (this clone)")
            },
        ),
    ];
    assert_eq!(rows[0].state, "running");
    assert_eq!(rows[0].remote.as_deref(), Some("origin"));
    let mut out = Vec::new();
    let view = View {
        now: NOW,
        color: false,
        width: None,
        root: Path::new(ROOT),
        home: None,
    };
    render_remote_table(&mut out, &rows, &view).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "  ID                STATE                                       BRANCH\n  \
           origin/fix-login  running on laptop, as of 5m ago             +3\n  \
           origin/tests      exited 1 on box (this clone), as of 1h ago  gone\n"
    );
}

#[test]
fn an_agent_column_appears_when_a_session_runs_an_agent() {
    let mut a = ended(record("a", State::Exited), Some(0), None, 60);
    a.agent = Some("claude".into());
    let mut forged = ended(record("f", State::Exited), Some(0), None, 60);
    forged.agent = Some("x\u{1b}[31m".into());
    let rows = [
        row(&a, &facts(1)),
        row(
            &ended(record("b", State::Exited), Some(1), None, 60),
            &facts(0),
        ),
        row(&forged, &facts(0)),
    ];
    assert_eq!(
        table(&rows, None),
        "  ID  AGENT        STATE            BRANCH\n  \
           a   claude       exited 0 1m ago  +1\n  \
           b   -            exited 1 1m ago  +0\n  \
           f   'x\\033[31m'  exited 0 1m ago  +0\n\
         worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d\n"
    );
    assert_eq!(rows[0].agent.as_deref(), Some("claude"));
    // Without agents, no column.
    assert!(!table(&rows[1..2], None).contains("AGENT"));
    // The state is still the painted cell.
    let mut out = Vec::new();
    let view = View {
        now: NOW,
        color: true,
        width: None,
        root: Path::new(ROOT),
        home: None,
    };
    render_table(&mut out, &rows[1..2], &view).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\x1b[33mexited 1 1m ago\x1b[0m"), "{text:?}");
    let mut out = Vec::new();
    render_table(&mut out, &rows[..2], &view).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\x1b[33mexited 1 1m ago\x1b[0m"), "{text:?}");
}

#[test]
fn json_keeps_the_latest_runs_command_and_adds_the_sessions_own() {
    let mut r = running(record("a", State::Running), 10);
    if let Some(p) = r.process.as_mut() {
        p.command = Some(vec!["git".into(), "log".into()]);
    }
    let row = row(&r, &facts(0));
    assert_eq!(row.command, ["git", "log"]);
    assert_eq!(row.session_command, ["claude"]);
    assert_eq!(
        row.run_started_at.as_deref(),
        Some(time::rfc3339(NOW - 10).as_str())
    );
}

/// The sessions the width snapshots show: agents, ids that share a prefix, a
/// run with a terminal attached, a worktree under an older root.
fn many(with_status: bool) -> Vec<Row> {
    let agent = |mut r: Record| {
        r.agent = Some("claude".to_owned());
        r
    };
    let on_terminal = |attached: bool, idle: i64| Facts {
        attached: Some(attached),
        last_output: Some(NOW - idle),
        current: attached,
        ..facts(3)
    };
    let mut old = ended(record("docs-rewrite", State::Exited), Some(0), None, 86_400);
    old.worktree = "/home/me/old-root/docs-rewrite".to_owned();
    let mut rows = vec![
        row(
            &agent(running(record("fix-login", State::Running), 300)),
            &on_terminal(true, 180),
        ),
        row(
            &agent(running(record("fix-logout", State::Running), 7200)),
            &on_terminal(false, 12),
        ),
        row(
            &ended(record("tests", State::Exited), Some(1), None, 7200),
            &facts(0),
        ),
        row(&old, &facts(2)),
    ];
    if with_status {
        let dirt = Dirt {
            modified: 2,
            untracked: 4,
            ..Dirt::default()
        };
        for (i, r) in rows.iter_mut().enumerate() {
            r.with_status = true;
            r.modified = Some(if i == 0 { dirt.modified } else { 0 });
            r.deleted = Some(0);
            r.staged = Some(0);
            r.untracked = Some(if i == 0 { dirt.untracked } else { 0 });
            r.published = Some(i == 2);
            r.behind = Some(0);
        }
    }
    rows
}

#[test]
fn the_table_at_60_80_100_and_200_columns() {
    let at = |width: usize, with_status: bool| {
        let text = table(&many(with_status), Some(width));
        for line in text.lines() {
            assert!(line.width() <= width, "{width}: {line:?}");
        }
        text
    };
    insta::assert_snapshot!(at(60, false), @r"
      ID            AGENT   STATE            BRANCH  WORKTREE
    * fix-login     claude  running 5m       +3
      fix-logout    claude  running 2h       +3
      tests         -       exited 1 2h ago  +0
      docs-rewrite  -       exited 0 1d ago  +2      …cs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(60, true), @r"
      ID            AGENT   STATE            BRANCH  CHANGES
    * fix-login     claude  running 5m       +3      2M 4?
      fix-logout    claude  running 2h       +3      clean
      tests         -       exited 1 2h ago  +0      clean
      docs-rewrite  -       exited 0 1d ago  +2      clean
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    (2 columns hidden; widen the terminal or use --json)
    ");
    insta::assert_snapshot!(at(80, false), @r"
      ID            AGENT   STATE            BRANCH  WORKTREE
    * fix-login     claude  running 5m       +3
      fix-logout    claude  running 2h       +3
      tests         -       exited 1 2h ago  +0
      docs-rewrite  -       exited 0 1d ago  +2      ~/old-root/docs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(80, true), @"
      ID          AGENT   STATE            BRANCH  CHANGES     PUBLISHED  WORKTREE
    * fix-login   claude  running 5m       +3      2M 4?       no
      fix-logout  claude  running 2h       +3      clean       no
      tests       -       exited 1 2h ago  +0      clean       yes
      docs-rewr…  -       exited 0 1d ago  +2      clean       no         …s-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(100, false), @r"
      ID            AGENT   STATE                           BRANCH  WORKTREE
    * fix-login     claude  running 5m (attached, idle 3m)  +3
      fix-logout    claude  running 2h (idle 12s)           +3
      tests         -       exited 1 2h ago                 +0
      docs-rewrite  -       exited 0 1d ago                 +2      ~/old-root/docs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(100, true), @"
      ID            AGENT   STATE            BRANCH  CHANGES     PUBLISHED  WORKTREE
    * fix-login     claude  running 5m       +3      2M 4?       no
      fix-logout    claude  running 2h       +3      clean       no
      tests         -       exited 1 2h ago  +0      clean       yes
      docs-rewrite  -       exited 0 1d ago  +2      clean       no         ~/old-root/docs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(200, false), @r"
      ID            AGENT   STATE                           BRANCH  WORKTREE
    * fix-login     claude  running 5m (attached, idle 3m)  +3
      fix-logout    claude  running 2h (idle 12s)           +3
      tests         -       exited 1 2h ago                 +0
      docs-rewrite  -       exited 0 1d ago                 +2      ~/old-root/docs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
    insta::assert_snapshot!(at(200, true), @"
      ID            AGENT   STATE                           BRANCH  CHANGES     PUBLISHED  WORKTREE
    * fix-login     claude  running 5m (attached, idle 3m)  +3      2M 4?       no
      fix-logout    claude  running 2h (idle 12s)           +3      clean       no
      tests         -       exited 1 2h ago                 +0      clean       yes
      docs-rewrite  -       exited 0 1d ago                 +2      clean       no         ~/old-root/docs-rewrite
    worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
    ");
}

/// The width of a cell is what `unicode-width` says, the printable ASCII fast
/// path included: every byte below 0x80 alone and in a word, and non-ASCII.
#[test]
fn width_is_unicode_width() {
    use unicode_width::UnicodeWidthStr;
    let mut cases: Vec<String> = (0u8..0x80)
        .flat_map(|b| {
            let c = char::from(b);
            [c.to_string(), format!("ab{c}cd"), format!("{c}{c}")]
        })
        .collect();
    cases.extend(
        [
            "",
            "日本語のid",
            "e\u{301}",
            "\u{1b}[31mx",
            "tab\there",
            "\r\n",
        ]
        .map(String::from),
    );
    for s in cases {
        assert_eq!(width(&s), s.width(), "{s:?}");
    }
}
