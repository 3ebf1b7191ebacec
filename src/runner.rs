//! Running a session's command and recording what happened: the shared core of
//! `spawn` and `resume`.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, Result};

use crate::config;
use crate::context::{warn, Ctx};
use crate::git::Oid;
use crate::process;
use crate::session::{Exit, Process, Record, State};
use crate::store::{self, Stored};
use crate::time;

/// The environment a session's command gets.
pub fn session_env(record: &Record) -> Vec<(&'static str, OsString)> {
    vec![
        (config::ENV_SESSION, record.id.as_str().into()),
        (config::ENV_BRANCH, record.branch.clone().into()),
        (config::ENV_WORKTREE, record.worktree.clone().into()),
    ]
}

/// The command to run when none is given: `bullpen.command` (run with `sh -c`),
/// else `$SHELL`, else `/bin/sh`.
pub fn default_command(ctx: &Ctx) -> Vec<String> {
    if let Some(c) = ctx
        .repo
        .config_string(config::COMMAND)
        .filter(|c| !c.trim().is_empty())
    {
        return vec!["/bin/sh".into(), "-c".into(), c];
    }
    match std::env::var("SHELL") {
        Ok(s) if !s.is_empty() => vec![s],
        _ => vec!["/bin/sh".into()],
    }
}

/// Shell-like rendering of an argv for messages and notes.
pub fn render_command(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tip of the session branch now, if it exists.
pub fn branch_tip(ctx: &Ctx, record: &Record) -> Result<Option<Oid>> {
    ctx.repo
        .ref_target(&format!("refs/heads/{}", record.branch))
}

/// Run `argv` in the session's worktree in the foreground, record running/exited,
/// write provenance notes, and return the shell-style exit status.
pub fn run_foreground(ctx: &Ctx, stored: Stored, argv: &[String], event: &str) -> Result<i32> {
    let worktree = Path::new(&stored.record.worktree).to_path_buf();
    let run_start = branch_tip(ctx, &stored.record)?;
    let spec = process::Spec {
        argv,
        cwd: &worktree,
        env: session_env(&stored.record),
    };
    let child = match process::start_foreground(&spec) {
        Ok(c) => c,
        Err(e) => {
            // The command could not start: record that as exit 127, like a shell.
            let at = time::now_rfc3339();
            store::update(
                &ctx.repo,
                &stored,
                "exited 127 (command not started)",
                |r| {
                    r.state = State::Exited;
                    r.command = argv.to_vec();
                    r.exit = Some(Exit {
                        code: Some(127),
                        signal: None,
                        at: at.clone(),
                    });
                },
            )?;
            return Err(e);
        }
    };
    let pid = child.pid();
    let ident = process::identity(pid);
    let proc_rec = Process {
        pid,
        start_time: ident.start_time,
        boot_id: ident.boot_id,
        background: false,
        supervisor_pid: None,
        started_at: time::now_rfc3339(),
    };
    let running = store::update(&ctx.repo, &stored, event, |r| {
        r.state = State::Running;
        r.command = argv.to_vec();
        r.process = Some(proc_rec.clone());
        r.exit = None;
        r.run_start = run_start.map(|o| o.to_string());
    });
    // Whatever happened to the record, the child is running: wait for it first.
    let status = child.wait()?;
    let running = running.context("cannot record that the session is running")?;
    let (code, signal) = process::split_status(status);
    let exit = Exit {
        code,
        signal,
        at: time::now_rfc3339(),
    };
    finish(ctx, &running, exit.clone(), State::Exited)?;
    Ok(exit.shell_status())
}

/// Record the end of a run and write the provenance notes for the commits it made.
pub fn finish(ctx: &Ctx, running: &Stored, exit: Exit, state: State) -> Result<Stored> {
    let record = &running.record;
    let notes_result = write_notes(ctx, record, &exit);
    let done = store::update(
        &ctx.repo,
        running,
        &format!("{} ({})", state.as_str(), exit.describe()),
        |r| {
            r.state = state;
            r.exit = Some(exit.clone());
        },
    )?;
    if let Err(e) = notes_result {
        warn(format!("{e:#}"));
    }
    Ok(done)
}

fn write_notes(ctx: &Ctx, record: &Record, exit: &Exit) -> Result<()> {
    let Some(tip) = branch_tip(ctx, record)? else {
        warn(format!(
            "branch {} is gone; no provenance notes written",
            record.branch
        ));
        return Ok(());
    };
    let mut hidden = Vec::new();
    if let Some(start) = record.run_start.as_deref() {
        hidden.push(start.parse::<Oid>()?);
    } else if let Ok(base) = record.base.parse::<Oid>() {
        hidden.push(base);
    }
    let commits = ctx.repo.commits_between(tip, &hidden)?;
    let text = format!(
        "bullpen-session: {}\nbullpen-command: {}\nbullpen-exit: {}\n",
        record.id,
        render_command(&record.command),
        exit.describe()
    );
    store::add_provenance(&ctx.repo, &commits, &text, &record.id)
}
