//! `git bullpen hook <event>`: an agent says what it is doing
//! (`model::activity::next`). Run by the agent (its hooks, `wire`), inside the
//! session's run: the session is the one `BULLPEN_SESSION` names, and only if
//! this process descends from that session's running command, as it lives
//! (pid and start time as recorded). So a process of another session (or
//! outside any) cannot write this session's state; only the run itself can.
//! It writes only `activity-agent.json` in the session's local state, and runs
//! `bullpen.notify` on a move into `needs input`, once (under `activity.lock`).

pub mod wire;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::activity::{self, Event, Source, Stamped};
use crate::model::local::LOCAL_SCHEMA;
use crate::model::{config, time, Error, SessionId, State};
use crate::run::notify::Notify;
use crate::sys::procfs;
use crate::trust::local::Local;
use crate::ui::Ui;

/// The most of a payload read from stdin.
const MAX_PAYLOAD: u64 = 4 << 20;

/// What the hook did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The state moved to this.
    Entered(activity::Activity),
    /// The event said nothing new.
    Unchanged,
}

/// Take `event` (its payload: `payload`, else stdin) for the session this
/// process runs in.
pub fn hook(event: &str, payload: Option<&str>, cwd: &Path, ui: &Ui) -> Result<Outcome> {
    let text = match payload {
        Some(p) => p.to_owned(),
        None => {
            let mut s = String::new();
            std::io::stdin()
                .take(MAX_PAYLOAD)
                .read_to_string(&mut s)
                .context("cannot read the hook's payload from stdin")?;
            s
        }
    };
    // An agent's payload that is not JSON still tells the event.
    let payload: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let id: SessionId = std::env::var(config::ENV_SESSION)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            Error::usage(format!(
                "{} names no session: `git bullpen hook` runs inside a session's run",
                config::ENV_SESSION
            ))
            .hint("the built-in agent profiles call it from the agent's hooks")
        })?;
    let at = std::env::var_os(config::ENV_WORKTREE)
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| cwd.to_path_buf());
    let ctx = Ctx::discover_records(&at, ui)?;
    let stored = store::require(&ctx.repo, &id)?;
    let process = stored
        .record
        .process
        .as_ref()
        .filter(|_| stored.record.state == State::Running)
        .ok_or_else(|| not_its_run(&id, "it is not running"))?;
    if !procfs::is_alive(process) {
        return Err(not_its_run(&id, "its command is no longer running").into());
    }
    if !procfs::is_descendant(std::process::id(), process.pid) {
        return Err(not_its_run(
            &id,
            &format!(
                "this process does not descend from its command (pid {})",
                process.pid
            ),
        )
        .into());
    }
    let local = Local::of(&ctx.layout, &id);
    let _lock = local.activity_lock()?;
    let this_run = |s: &Stamped| s.pid == process.pid;
    let before = local.activity(Source::Agent)?.filter(this_run);
    let terminal = local.activity(Source::Terminal)?.filter(this_run);
    // A partial report moves from what is shown (the terminal's word may have
    // taken over since); a full one from the agent's own last word.
    let now = match activity::is_partial(event) {
        true => activity::shown(terminal.as_ref(), before.as_ref(), process.pid),
        false => before.as_ref(),
    }
    .map(|s| s.activity);
    let Some(to) = activity::next(
        now,
        &Event {
            name: event,
            payload: &payload,
        },
    ) else {
        return Ok(Outcome::Unchanged);
    };
    local.write_activity(&Stamped {
        schema: LOCAL_SCHEMA,
        activity: to,
        since: time::now_rfc3339(),
        source: Source::Agent,
        pid: process.pid,
        workings: 0,
        until_working: activity::until_working(event, before.as_ref(), terminal.as_ref()),
    })?;
    if activity::calls_for_attention(now, to) {
        if let Some(n) = Notify::configured(&ctx.repo) {
            // Not waited for: the agent waits for its hook.
            n.run(&id, to, Path::new(&stored.record.worktree))?;
        }
    }
    Ok(Outcome::Entered(to))
}

fn not_its_run(id: &SessionId, why: &str) -> Error {
    Error::refused(format!(
        "not taken: the hook is not of session {id}'s run ({why})"
    ))
    .hint("`git bullpen hook` is for the agent of a running session, called from its hooks")
}
