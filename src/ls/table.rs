//! What `ls` shows, as pure functions of records and facts: the row (also the
//! JSON object) and the table for people, fitted to a width.

use std::path::Path;

use serde::{Deserialize, Serialize};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::model::activity::{self, Stamped};
use crate::model::agent::AgentName;
use crate::model::command::{escaped, quoted};
use crate::model::record::observed_state;
use crate::model::{ending, time, Dirt, Observed, Record, State};

/// One line of `ls`, also the JSON object. Keys are a compatibility surface:
/// add, never rename or remove. Read back only from `ls --remote`'s cache.
#[derive(Debug, Default, Serialize, Deserialize)]
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
    /// How the latest run ended, in the words attach, logs, stop and wait say
    /// (`exited 7`, `killed by SIGSEGV`, `stopped by SIGHUP`); null if it has not.
    pub ended: Option<String>,
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
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
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
    let mut row = Row {
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
        behind: None,
        modified: None,
        staged: None,
        untracked: None,
        deleted: None,
        published: None,
        unpublished: None,
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
        ended: r
            .exit
            .as_ref()
            .filter(|_| matches!(r.state, State::Exited | State::Stopped))
            .map(|e| ending::how(r.state, e)),
        observed: Some(observed),
        since,
        with_status: false,
        host_label: None,
        screen: None,
    };
    if let Some(status) = &f.status {
        set_status(&mut row, status);
    }
    row
}

/// Pure: a row's `--status` facts (`ls --status` shows them as they come).
pub fn set_status(row: &mut Row, status: &StatusFacts) {
    let dirt = status.dirt.as_ref();
    row.with_status = true;
    row.behind = status.behind;
    row.modified = dirt.map(|d| d.modified + d.unseen);
    row.staged = dirt.map(|d| d.staged);
    row.untracked = dirt.map(|d| d.untracked + d.hiding.iter().map(|h| h.files).sum::<usize>());
    row.deleted = dirt.map(|d| d.deleted);
    row.published = status.published;
    row.unpublished = status.unpublished;
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
    let what = ended_cell(r);
    match (r.observed, r.since) {
        (_, None) => what,
        (Some(Observed::Stored(State::Running)), Some(t)) => {
            format!("{what} {}", time::age(now - t))
        }
        (_, Some(t)) => format!("{what} {} ago", time::age(now - t)),
    }
}

/// `exited 7`, `killed by SIGSEGV`, `stopped by SIGHUP` (`model::ending`'s
/// words); the state for a run that has not ended.
fn ended_cell(r: &Row) -> String {
    match r.observed {
        Some(Observed::Stored(s @ (State::Exited | State::Stopped))) => {
            ending::brief(s, r.exit_code, r.signal)
        }
        _ => r.state.clone(),
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

/// Pure: the columns `s` takes on a terminal: its length when it is all
/// printable ASCII (each such character one column, as `unicode-width` says),
/// else what `unicode-width` says. A table of a thousand rows measures each
/// cell several times.
pub fn width(s: &str) -> usize {
    match s.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        true => s.len(),
        false => s.width(),
    }
}

/// Pure: `s` cut to at most `width` columns, the cut marked with `…` at the
/// end (`from_start`: at the start, keeping the end, for paths).
pub fn truncate(s: &str, width: usize, from_start: bool) -> String {
    if self::width(s) <= width {
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
/// The cell, and its short form (`remote_state_what`).
pub(crate) fn remote_state_cell(r: &Row, now: i64) -> (String, String) {
    let what = remote_state_what(r);
    match r.since {
        Some(t) => (format!("{what}, as of {} ago", time::age(now - t)), what),
        None => (what.clone(), what),
    }
}

/// `running on laptop`: what a fetched record says, without when it said it.
pub(crate) fn remote_state_what(r: &Row) -> String {
    let what = ended_cell(r);
    let host = r.host_label.as_deref().unwrap_or(&r.host);
    format!("{what} on {host}")
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
