//! What `ls` shows, as pure functions of records and facts: the row (also the
//! JSON object) and the table for people, fitted to a width.

use std::path::Path;

use serde::Serialize;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::model::activity::{self, Stamped};
use crate::model::agent::AgentName;
use crate::model::command::{escaped, quoted};
use crate::model::record::observed_state;
use crate::model::{time, Dirt, Observed, Record, State};

/// One line of `ls`, also the JSON object. Keys are a compatibility surface:
/// add, never rename or remove.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub state: String,
    pub branch: String,
    pub base: String,
    pub worktree: String,
    /// The command of the latest run (what it really ran).
    pub command: Vec<String>,
    pub created_at: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub pid: Option<u32>,
    pub host: String,
    pub ahead: Option<usize>,
    /// The background log (absolute path), or null if the session never ran in
    /// the background.
    pub log: Option<String>,
    /// The session's own command: what a plain `resume` runs (for an agent
    /// session, this machine's profile of its agent).
    pub session_command: Vec<String>,
    /// What a plain `resume` runs now, exactly (null: it would refuse).
    pub resume_command: Option<Vec<String>>,
    /// The agent the session runs (null: a plain session).
    pub agent: Option<String>,
    /// The current directory is inside this session's worktree.
    pub current: bool,
    /// When the latest run started / ended (RFC 3339), null if never / not yet.
    pub run_started_at: Option<String>,
    pub run_ended_at: Option<String>,
    /// The ref `--base` named at creation (null: a commit, or an older record).
    pub base_ref: Option<String>,
    /// With `--status` (else null): commits on `base_ref` the branch lacks,
    /// uncommitted work, and whether the tip is on a remote.
    pub behind: Option<usize>,
    /// Modified tracked files (skip-worktree and assume-unchanged ones too).
    pub modified: Option<usize>,
    pub staged: Option<usize>,
    /// Untracked files, those an untracked `.gitignore` hides too.
    pub untracked: Option<usize>,
    pub deleted: Option<usize>,
    pub published: Option<bool>,
    /// Commits on the branch that no `refs/remotes/*` ref reaches.
    pub unpublished: Option<usize>,
    /// When the record last changed (RFC 3339, as the machine that wrote it saw it).
    pub updated_at: String,
    /// The clone that created the session (null: a record from before clone ids).
    pub clone_id: Option<String>,
    /// With `--remote`: the remote the session was fetched from (null: this clone's).
    pub remote: Option<String>,
    /// Whether a terminal is attached to the run (`git bullpen attach`); null
    /// unless the session is running in the background on a terminal.
    pub attached: Option<bool>,
    /// When the session's background log was last written (RFC 3339), i.e. the
    /// last time its command wrote output; null when it has no log, or an empty one.
    pub last_output_at: Option<String>,
    /// What a running session is doing (`working`, `needs input`, `idle`,
    /// `exited`) and since when (RFC 3339); null when not running or not known.
    pub activity: Option<String>,
    pub activity_since: Option<String>,
    /// With `--all-repos`: the repository (its main worktree; null otherwise).
    pub repository: Option<String>,
    /// How the latest run was confined (`--sandbox`: enforcement, mode, what the
    /// kernel did not enforce, the writable paths); null: it was not.
    pub sandbox: Option<serde_json::Value>,
    #[serde(skip)]
    pub observed: Option<Observed>,
    /// When the shown state began (unix seconds), for the table.
    #[serde(skip)]
    pub since: Option<i64>,
    /// Whether `--status` facts were gathered (the table's extra columns).
    #[serde(skip)]
    pub with_status: bool,
    /// With `--remote`: the host as the table shows it (`model::remote::host_label`).
    #[serde(skip)]
    pub host_label: Option<String>,
    /// With `--screen` (else absent): the last non-empty line on the screen of
    /// a running background run, null when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenLine>,
}

/// What `ls --screen` found on a session's screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ScreenLine {
    /// Its last non-empty line ("" when the screen is blank).
    Line(String),
    /// Not a running background run on a terminal.
    NotRunning,
    /// Its supervisor did not answer in time.
    NoAnswer,
    /// It could not be asked, or refused.
    Unreadable,
}

/// The SCREEN cell.
pub(crate) fn screen_cell(r: &Row) -> String {
    match &r.screen {
        Some(ScreenLine::Line(l)) => escaped(l),
        Some(ScreenLine::NoAnswer) => "(no answer)".to_owned(),
        Some(ScreenLine::Unreadable) => "(unreadable)".to_owned(),
        Some(ScreenLine::NotRunning) | None => "-".to_owned(),
    }
}

/// Facts gathered for one session.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub alive: bool,
    pub worktree_exists: bool,
    pub ahead: Option<usize>,
    pub current: bool,
    /// `Some` with `--status`.
    pub status: Option<StatusFacts>,
    /// What a plain `resume` would run, when it is not the record's `command`
    /// (an agent session: its profile's form on this machine).
    pub session_command: Option<Vec<String>>,
    /// Running on a terminal: whether one is attached now.
    pub attached: Option<bool>,
    /// When the log was last written (unix seconds).
    pub last_output: Option<i64>,
    /// What the run is doing, from its local state (`model::activity::shown`).
    pub activity: Option<Stamped>,
}

/// What decides a clean-up (`ls --status`): each `None` when it cannot be told
/// (no worktree, no branch, an error, already reported).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusFacts {
    pub dirt: Option<Dirt>,
    pub behind: Option<usize>,
    pub published: Option<bool>,
    pub unpublished: Option<usize>,
}

/// Pure: the row for a record and its facts.
pub fn row(r: &Record, f: &Facts) -> Row {
    let observed = observed_state(r.state, f.alive, f.worktree_exists);
    let run_started_at = r.process.as_ref().map(|p| p.started_at.clone());
    let run_ended_at = r.exit.as_ref().map(|e| e.at.clone());
    let since = match observed {
        Observed::Stored(State::Running) | Observed::Lost => run_started_at.as_deref(),
        Observed::Stored(State::Exited | State::Stopped) | Observed::Missing => {
            run_ended_at.as_deref().or(Some(&r.created_at))
        }
        Observed::Stored(State::Collected) => Some(r.updated_at.as_str()),
        Observed::Stored(State::Ready | State::Provisioning) => Some(r.created_at.as_str()),
    }
    .and_then(time::parse_rfc3339);
    let status = f.status.clone().unwrap_or_default();
    let dirt = status.dirt.as_ref();
    Row {
        id: r.id.to_string(),
        state: observed.as_str().to_owned(),
        branch: r.id.branch(),
        base: r.base.clone(),
        worktree: r.worktree.clone(),
        command: r.run_command().to_vec(),
        created_at: r.created_at.clone(),
        exit_code: r.exit.as_ref().and_then(|e| e.code),
        signal: r.exit.as_ref().and_then(|e| e.signal),
        pid: r.process.as_ref().map(|p| p.pid),
        host: r.host.clone(),
        ahead: f.ahead,
        log: r.log.clone(),
        session_command: f
            .session_command
            .clone()
            .unwrap_or_else(|| r.command.clone()),
        resume_command: None,
        agent: r.agent.clone(),
        current: f.current,
        run_started_at,
        run_ended_at,
        base_ref: r.base_ref.clone(),
        behind: status.behind,
        modified: dirt.map(|d| d.modified + d.unseen),
        staged: dirt.map(|d| d.staged),
        untracked: dirt.map(|d| d.untracked + d.hiding.iter().map(|h| h.files).sum::<usize>()),
        deleted: dirt.map(|d| d.deleted),
        published: status.published,
        unpublished: status.unpublished,
        updated_at: r.updated_at.clone(),
        clone_id: r.clone_id.clone(),
        remote: None,
        attached: f
            .attached
            .filter(|_| observed == Observed::Stored(State::Running)),
        last_output_at: f.last_output.map(time::rfc3339),
        activity: running_activity(f, observed).map(|a| a.activity.as_str().to_owned()),
        activity_since: running_activity(f, observed).map(|a| a.since.clone()),
        repository: None,
        sandbox: r.extra.get(crate::model::sandbox::RECORD_KEY).cloned(),
        observed: Some(observed),
        since,
        with_status: f.status.is_some(),
        host_label: None,
        screen: None,
    }
}

/// The activity of a run that is alive, only.
fn running_activity(f: &Facts, observed: Observed) -> Option<&Stamped> {
    f.activity
        .as_ref()
        .filter(|_| observed == Observed::Stored(State::Running))
}

/// What is known here of a session fetched from a remote: nothing observed,
/// only what its record says and what the fetched branch holds.
#[derive(Clone, Debug, Default)]
pub struct RemoteFacts {
    pub remote: String,
    /// Commits on the fetched `<remote>/bullpen/<id>` since its base (`None`:
    /// not fetched here).
    pub ahead: Option<usize>,
    /// Its host, told apart from this clone (`model::remote::host_label`).
    pub host_label: String,
}

/// Pure: the row of a fetched session. Its state is the recorded one, as of
/// when it was recorded (`updated_at`): nothing of it (its process, its path)
/// is looked at here, so a remote `running` stays `running`, never `lost`.
pub fn remote_row(r: &Record, f: &RemoteFacts) -> Row {
    let local = Facts {
        alive: r.state == State::Running,
        worktree_exists: true,
        ahead: f.ahead,
        current: false,
        status: None,
        session_command: None,
        attached: None,
        last_output: None,
        activity: None,
    };
    let mut row = row(r, &local);
    row.observed = Some(Observed::Stored(r.state));
    row.state = r.state.as_str().to_owned();
    row.since = time::parse_rfc3339(&r.updated_at);
    row.remote = Some(f.remote.clone());
    row.host_label = Some(f.host_label.clone());
    row
}

/// How the table is laid out.
pub struct View<'a> {
    pub now: i64,
    pub color: bool,
    /// The widest a line may be (`None`: as wide as it takes).
    pub width: Option<usize>,
    /// The repository's worktree root: worktrees inside it are shown relative
    /// to it, and it is shown once, under the table.
    pub root: &'a Path,
    /// `$HOME`, shown as `~`.
    pub home: Option<&'a Path>,
}

/// `exited 0 2h ago`, `running 5m`, `ready 3d ago`, ...; a background run on a
/// terminal says what it is doing after that: `running 5m (attached, idle 3m)`.
pub(crate) fn state_cell(r: &Row, now: i64) -> String {
    let when = state_cell_short(r, now);
    let cell = match r.observed {
        Some(Observed::Stored(State::Running)) if r.activity.is_some() => {
            let since = r.activity_since.as_deref().and_then(time::parse_rfc3339);
            let what = r.activity.as_deref().unwrap_or_default();
            let attached = r.attached == Some(true);
            format!("{when} ({})", activity::cell(what, since, attached, now))
        }
        Some(Observed::Stored(State::Running)) if r.attached.is_some() => {
            format!("{when} ({})", activity(r, now))
        }
        _ => when,
    };
    sandboxed(r, cell)
}

/// The STATE cell without what a run on a terminal is doing: `running 5m`.
pub(crate) fn state_cell_short(r: &Row, now: i64) -> String {
    let what = match (r.observed, r.exit_code, r.signal) {
        (Some(Observed::Stored(State::Exited)), Some(c), _) => format!("exited {c}"),
        (Some(Observed::Stored(State::Exited)), None, Some(s)) => format!("exited sig{s}"),
        _ => r.state.clone(),
    };
    match (r.observed, r.since) {
        (_, None) => what,
        (Some(Observed::Stored(State::Running)), Some(t)) => {
            format!("{what} {}", time::age(now - t))
        }
        (_, Some(t)) => format!("{what} {} ago", time::age(now - t)),
    }
}

/// Pure: a state cell of a run under `--sandbox` says so: `exited 0 2m ago
/// (sandboxed)`, `(sandboxed, best-effort)` where the kernel enforced less.
fn sandboxed(r: &Row, cell: String) -> String {
    let Some(sandbox) = &r.sandbox else {
        return cell;
    };
    let partial = sandbox["not_enforced"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    match partial {
        true => format!("{cell} (sandboxed, best-effort)"),
        false => format!("{cell} (sandboxed)"),
    }
}

/// Pure: what a run on a terminal is doing: `attached, idle 3m`, `idle 12s`.
fn activity(r: &Row, now: i64) -> String {
    let idle = r
        .last_output_at
        .as_deref()
        .and_then(time::parse_rfc3339)
        .map(|t| format!("idle {}", time::age(now - t)));
    match (r.attached, idle) {
        (Some(true), Some(idle)) => format!("attached, {idle}"),
        (Some(true), None) => "attached".to_owned(),
        (_, Some(idle)) => idle,
        (_, None) => "no output yet".to_owned(),
    }
}

pub(crate) fn color_of(r: &Row) -> &'static str {
    match r.observed {
        Some(Observed::Stored(State::Running)) => "\x1b[32m",
        Some(Observed::Lost) | Some(Observed::Missing) => "\x1b[31m",
        Some(Observed::Stored(State::Exited)) if r.exit_code != Some(0) => "\x1b[33m",
        Some(Observed::Stored(State::Collected)) => "\x1b[2m",
        _ => "",
    }
}

/// `+3`, `+3 -2` (with `--status`: behind its base ref), `gone`.
pub(crate) fn branch_cell(r: &Row) -> String {
    match (r.ahead, r.behind) {
        (None, _) => "gone".to_owned(),
        (Some(a), Some(b)) if b > 0 => format!("+{a} -{b}"),
        (Some(a), _) => format!("+{a}"),
    }
}

/// `clean`, `2M 1D 1S 4?` (modified, deleted, staged, untracked), `-` when unknown.
pub(crate) fn changes_cell(r: &Row) -> String {
    let (Some(m), Some(d), Some(s), Some(u)) = (r.modified, r.deleted, r.staged, r.untracked)
    else {
        return "-".to_owned();
    };
    let parts: Vec<String> = [(m, "M"), (d, "D"), (s, "S"), (u, "?")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, l)| format!("{n}{l}"))
        .collect();
    if parts.is_empty() {
        "clean".to_owned()
    } else {
        parts.join(" ")
    }
}

/// The agent's name, `-` for a plain session; a name from a record that is no
/// valid agent name is shown with its control characters escaped.
pub(crate) fn agent_cell(r: &Row) -> String {
    match r.agent.as_deref() {
        None => "-".to_owned(),
        Some(a) if a.parse::<AgentName>().is_ok() => a.to_owned(),
        Some(a) => quoted(a),
    }
}

pub(crate) fn published_cell(r: &Row) -> String {
    match r.published {
        Some(true) => "yes".to_owned(),
        Some(false) => "no".to_owned(),
        None => "-".to_owned(),
    }
}

/// Pure: a path for people: relative to `root` when strictly inside it, else
/// with `$HOME` as `~`.
pub fn shorten(path: &Path, root: &Path, home: Option<&Path>) -> String {
    if path != root {
        if let Ok(rel) = path.strip_prefix(root) {
            return rel.display().to_string();
        }
    }
    tilde(path, home)
}

pub(crate) fn tilde(path: &Path, home: Option<&Path>) -> String {
    match home.filter(|h| h.parent().is_some()) {
        Some(h) if path == h => "~".to_owned(),
        Some(h) => match path.strip_prefix(h) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => path.display().to_string(),
        },
        None => path.display().to_string(),
    }
}

/// Pure: `s` cut to at most `width` columns, the cut marked with `…` at the
/// end (`from_start`: at the start, keeping the end, for paths).
pub fn truncate(s: &str, width: usize, from_start: bool) -> String {
    if s.width() <= width {
        return s.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept = String::new();
    let mut used = 1; // the ellipsis
    let take = |c: char, kept: &mut String, used: &mut usize| -> bool {
        let w = c.width().unwrap_or(0);
        if *used + w > width {
            return false;
        }
        *used += w;
        kept.push(c);
        true
    };
    if from_start {
        for c in s.chars().rev() {
            if !take(c, &mut kept, &mut used) {
                break;
            }
        }
        let kept: String = kept.chars().rev().collect();
        format!("…{kept}")
    } else {
        for c in s.chars() {
            if !take(c, &mut kept, &mut used) {
                break;
            }
        }
        format!("{kept}…")
    }
}

/// `running on laptop, as of 5m ago`, `exited 1 on build-box (this clone), as of 2h ago`.
pub(crate) fn remote_state_cell(r: &Row, now: i64) -> String {
    let what = remote_state_what(r);
    match r.since {
        Some(t) => format!("{what}, as of {} ago", time::age(now - t)),
        None => what,
    }
}

/// `running on laptop`: what a fetched record says, without when it said it.
pub(crate) fn remote_state_what(r: &Row) -> String {
    let what = match (r.observed, r.exit_code, r.signal) {
        (Some(Observed::Stored(State::Exited)), Some(c), _) => format!("exited {c}"),
        (Some(Observed::Stored(State::Exited)), None, Some(s)) => format!("exited sig{s}"),
        _ => r.state.clone(),
    };
    let host = r.host_label.as_deref().unwrap_or(&r.host);
    format!("{what} on {host}")
}

#[cfg(test)]
mod tests {
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
                "exited sig15 1m ago",
            ),
            (
                ended(record("d", State::Stopped), None, Some(15), 86_400),
                facts(0),
                "stopped 1d ago",
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
            "  ID  STATE            BRANCH  CHANGES   PUBLISHED\n  \
               a   exited 0 1m ago  +3 -5   2M 1S 4?  no\n  \
               b   exited 0 1m ago  +1      clean     yes\n  \
               c   missing 1m ago   gone    -         -\n\
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
        insta::assert_snapshot!(at(80, true), @r"
          ID            AGENT   STATE            BRANCH  CHANGES  PUBLISHED  WORKTREE
        * fix-login     claude  running 5m       +3      2M 4?    no
          fix-logout    claude  running 2h       +3      clean    no
          tests         -       exited 1 2h ago  +0      clean    yes
          docs-rewrite  -       exited 0 1d ago  +2      clean    no         …cs-rewrite
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
        insta::assert_snapshot!(at(100, true), @r"
          ID            AGENT   STATE            BRANCH  CHANGES  PUBLISHED  WORKTREE
        * fix-login     claude  running 5m       +3      2M 4?    no
          fix-logout    claude  running 2h       +3      clean    no
          tests         -       exited 1 2h ago  +0      clean    yes
          docs-rewrite  -       exited 0 1d ago  +2      clean    no         ~/old-root/docs-rewrite
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
        insta::assert_snapshot!(at(200, true), @r"
          ID            AGENT   STATE                           BRANCH  CHANGES  PUBLISHED  WORKTREE
        * fix-login     claude  running 5m (attached, idle 3m)  +3      2M 4?    no
          fix-logout    claude  running 2h (idle 12s)           +3      clean    no
          tests         -       exited 1 2h ago                 +0      clean    yes
          docs-rewrite  -       exited 0 1d ago                 +2      clean    no         ~/old-root/docs-rewrite
        worktree root: ~/.local/share/bullpen/worktrees/app-1a2b3c4d
        ");
    }
}
