//! `git bullpen __supervise` (hidden): the detached supervisor of a background
//! run. Started by bullpen itself (`spawn --bg`); see `crate::run::supervisor`.

use std::path::Path;

use anyhow::Result;

use crate::model::SessionId;
use crate::run::supervisor::{self, Request};
use crate::ui::Ui;

/// Internal: supervise a background run (started by `spawn --bg`).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_name = "ID")]
    pub id: SessionId,

    /// The record commit the dispatcher saw; the run starts only if the record
    /// is still exactly that.
    #[arg(long, value_name = "COMMIT")]
    pub expect: String,

    /// The event name written to the record's history.
    #[arg(long, value_name = "EVENT", default_value = "running")]
    pub event: String,

    /// Descriptor on which to report `running <pid>` or `error <why>`.
    #[arg(long, value_name = "FD")]
    pub ready_fd: Option<i32>,

    /// The terminal's first window size.
    #[arg(long, value_name = "ROWSxCOLS", value_parser = parse_size)]
    pub size: Option<(u16, u16)>,

    /// Lines of scrollback the run's terminal model keeps.
    #[arg(long, value_name = "LINES", default_value_t = crate::run::keep::DEFAULT_SCROLLBACK)]
    pub scrollback: usize,

    /// Run the command confined (`--sandbox`): strict or best-effort.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub sandbox: Option<crate::model::sandbox::Mode>,

    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    supervisor::supervise(
        Request {
            id: args.id,
            expect: args.expect,
            event: args.event,
            ready_fd: args.ready_fd,
            size: args.size.unwrap_or(crate::run::pty::DEFAULT_SIZE),
            scrollback: args.scrollback,
            run: crate::trust::decide::handed_over(args.command),
            sandbox: args.sandbox.unwrap_or(crate::model::sandbox::Mode::Off),
        },
        cwd,
        ui,
    )
}

fn parse_mode(s: &str) -> Result<crate::model::sandbox::Mode, String> {
    crate::model::sandbox::Mode::parse(s)
        .ok_or_else(|| format!("{} is not a sandbox mode", crate::model::command::quoted(s)))
}

fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let bad = || {
        format!(
            "{} is not a window size (ROWSxCOLS, e.g. 24x80)",
            crate::model::command::quoted(s)
        )
    };
    let (r, c) = s.split_once('x').ok_or_else(bad)?;
    match (r.parse::<u16>(), c.parse::<u16>()) {
        (Ok(r), Ok(c)) if r > 0 && c > 0 => Ok((r, c)),
        _ => Err(bad()),
    }
}
