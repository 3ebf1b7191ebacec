//! `git bullpen ls`: every session with its observed state.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::context::{stdout_color, warn, Ctx};
use crate::git::Oid;
use crate::process;
use crate::session::{observed_state, Observed, SessionId, State};
use crate::store::{self, Stored};
use crate::time;

const AFTER_LONG_HELP: &str = "\
Columns: ID, STATE, BRANCH (+commits ahead of its base), AGE, WORKTREE.

States: provisioning, ready, running, exited (with code), stopped, lost (recorded \
running but its process is gone), missing (worktree directory gone), collected \
(removed by gc; shown with --all).

--json prints an array of objects with the stable keys id, state, branch, base, \
worktree, command, created_at, exit_code, signal, pid, host, ahead, log (the background \
log's path) (null where unknown); \
see the README for the contract.";

/// List sessions.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Print JSON (an array of objects with stable keys).
    #[arg(long)]
    pub json: bool,

    /// Include collected sessions.
    #[arg(long, short)]
    pub all: bool,

    /// Only these sessions.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::any_session_id_candidates))]
    pub ids: Vec<SessionId>,
}

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
    #[serde(skip)]
    pub observed: Option<Observed>,
}

/// Facts gathered for one session.
pub struct Facts {
    pub alive: bool,
    pub worktree_exists: bool,
    pub ahead: Option<usize>,
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    let sessions = if args.ids.is_empty() {
        let (mut sessions, unreadable) = store::load_all(&ctx.repo)?;
        for u in &unreadable {
            warn(format!("skipping {}: {:#}", u.refname, u.error));
        }
        if !args.all {
            sessions.retain(|s| s.record.state != State::Collected);
        }
        sessions
    } else {
        // Named sessions: every one must exist and be readable, or it is an error.
        args.ids
            .iter()
            .map(|id| {
                store::load(&ctx.repo, id)?.with_context(|| {
                    format!("no session named \"{id}\" (see `git bullpen ls --all`)")
                })
            })
            .collect::<Result<Vec<_>>>()?
    };
    let rows: Vec<Row> = sessions.iter().map(|s| row(s, &gather(&ctx, s))).collect();
    let stdout = std::io::stdout();
    // Buffered: a line-buffered StdoutLock makes one write(2) per line (21,000 for
    // `--json` at 1,000 sessions).
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        crate::context::write_json(&mut out, &rows)?;
    } else {
        render_table(&mut out, &rows, time::now_unix(), stdout_color())
            .context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(0)
}

/// Facts for one row. A fact that cannot be read is reported and left unknown:
/// one bad record never hides the others.
fn gather(ctx: &Ctx, s: &Stored) -> Facts {
    let r = &s.record;
    let alive = r.state == State::Running
        && r.process.as_ref().is_some_and(|p| {
            // A run is alive while the process that records its end is.
            process::is_session_alive(p)
        });
    let worktree_exists = Path::new(&r.worktree).is_dir();
    let ahead = (|| -> Result<Option<usize>> {
        let Some(tip) = crate::runner::branch_tip(ctx, r)? else {
            return Ok(None);
        };
        let base = r.base.parse::<Oid>()?;
        Ok(Some(ctx.repo.commits_between(tip, &[base])?.len()))
    })()
    .unwrap_or_else(|e| {
        warn(format!(
            "{}: cannot count commits ahead of its base: {e:#}",
            r.id
        ));
        None
    });
    Facts {
        alive,
        worktree_exists,
        ahead,
    }
}

/// Pure: the row for a record and its facts.
pub fn row(s: &Stored, f: &Facts) -> Row {
    let r = &s.record;
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
        observed: Some(observed),
    }
}

fn state_cell(r: &Row) -> String {
    match (r.observed, r.exit_code, r.signal) {
        (Some(Observed::Stored(State::Exited)), Some(c), _) => format!("exited {c}"),
        (Some(Observed::Stored(State::Exited)), None, Some(s)) => format!("exited sig{s}"),
        _ => r.state.clone(),
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
            [r.id.clone(), state_cell(r), branch, age, r.worktree.clone()]
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
