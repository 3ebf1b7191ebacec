//! What `ls` shows, as pure functions of records and facts: the row (also the
//! JSON object) and the table for people.

use std::io::Write;

use serde::Serialize;

use crate::model::record::observed_state;
use crate::model::{time, Observed, Record, State};

/// One line of `ls`, also the JSON object. Keys are a compatibility surface:
/// add, never rename or remove.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub state: String,
    pub branch: String,
    pub base: String,
    pub worktree: String,
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
    /// Whether a terminal is attached to the run (`git bullpen attach`); null
    /// unless the session is running in the background on a terminal.
    pub attached: Option<bool>,
    /// When the session's background log was last written (RFC 3339), i.e. the
    /// last time its command wrote output; null when it has no log, or an empty one.
    pub last_output_at: Option<String>,
    #[serde(skip)]
    pub observed: Option<Observed>,
}

/// Facts gathered for one session.
pub struct Facts {
    pub alive: bool,
    pub worktree_exists: bool,
    pub ahead: Option<usize>,
    /// Running on a terminal: whether one is attached now.
    pub attached: Option<bool>,
    /// When the log was last written (unix seconds).
    pub last_output: Option<i64>,
}

/// Pure: the row for a record and its facts.
pub fn row(r: &Record, f: &Facts) -> Row {
    let observed = observed_state(r.state, f.alive, f.worktree_exists);
    Row {
        id: r.id.to_string(),
        state: observed.as_str().to_owned(),
        branch: r.id.branch(),
        base: r.base.clone(),
        worktree: r.worktree.clone(),
        command: r.command.clone(),
        created_at: r.created_at.clone(),
        exit_code: r.exit.as_ref().and_then(|e| e.code),
        signal: r.exit.as_ref().and_then(|e| e.signal),
        pid: r.process.as_ref().map(|p| p.pid),
        host: r.host.clone(),
        ahead: f.ahead,
        log: r.log.clone(),
        attached: f
            .attached
            .filter(|_| observed == Observed::Stored(State::Running)),
        last_output_at: f.last_output.map(time::rfc3339),
        observed: Some(observed),
    }
}

fn state_cell(r: &Row, now: i64) -> String {
    match (r.observed, r.exit_code, r.signal) {
        (Some(Observed::Stored(State::Exited)), Some(c), _) => format!("exited {c}"),
        (Some(Observed::Stored(State::Exited)), None, Some(s)) => format!("exited sig{s}"),
        (Some(Observed::Stored(State::Running)), _, _) if r.attached.is_some() => {
            format!("{} ({})", r.state, activity(r, now))
        }
        _ => r.state.clone(),
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

fn color_of(r: &Row) -> &'static str {
    match r.observed {
        Some(Observed::Stored(State::Running)) => "\x1b[32m",
        Some(Observed::Lost) | Some(Observed::Missing) => "\x1b[31m",
        Some(Observed::Stored(State::Exited)) if r.exit_code != Some(0) => "\x1b[33m",
        Some(Observed::Stored(State::Collected)) => "\x1b[2m",
        _ => "",
    }
}

/// The human table. Padding is computed on plain text so colour never misaligns.
pub fn render_table(
    out: &mut dyn Write,
    rows: &[Row],
    now: i64,
    color: bool,
) -> std::io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let branch = match r.ahead {
                Some(n) => format!("{} +{n}", r.branch),
                None => format!("{} (gone)", r.branch),
            };
            let age = time::parse_rfc3339(&r.created_at)
                .map(|t| time::age(now - t))
                .unwrap_or_else(|| "?".into());
            [
                r.id.clone(),
                state_cell(r, now),
                branch,
                age,
                r.worktree.clone(),
            ]
        })
        .collect();
    let header = ["ID", "STATE", "BRANCH", "AGE", "WORKTREE"];
    let mut width = header.map(str::len);
    for c in &cells {
        for (w, cell) in width.iter_mut().zip(c.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut dyn Write, c: &[String], paint: &str| -> std::io::Result<()> {
        let pad = |i: usize| " ".repeat(width[i] - c[i].chars().count());
        let (on, off) = if paint.is_empty() {
            ("", "")
        } else {
            (paint, "\x1b[0m")
        };
        writeln!(
            out,
            "{}{}  {on}{}{off}{}  {}{}  {}{}  {}",
            c[0],
            pad(0),
            c[1],
            pad(1),
            c[2],
            pad(2),
            c[3],
            pad(3),
            c[4]
        )
    };
    let head: Vec<String> = header.iter().map(|s| s.to_string()).collect();
    line(out, &head, "")?;
    for (c, r) in cells.iter().zip(rows) {
        line(out, c, if color { color_of(r) } else { "" })?;
    }
    Ok(())
}
