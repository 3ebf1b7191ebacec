//! `git bullpen ls`: every session with its observed state (see `crate::ls`).

use std::path::Path;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::ls::{rows, sessions, table::render_table};
use crate::model::{time, SessionId};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Columns: ID, STATE, BRANCH (+commits ahead of its base), AGE, WORKTREE.

States: provisioning, ready, running, exited (with code), stopped, lost (recorded \
running but its process is gone), missing (worktree directory gone), collected \
(removed by gc; shown with --all).

A background run on its terminal shows what it is doing after its state: \
`running (attached, idle 3m)` while a terminal is attached (git bullpen attach), \
`running (idle 12s)` otherwise; idle is the time since it last wrote output.

--json prints an array of objects with the stable keys id, state, branch, base, \
worktree, command, created_at, exit_code, signal, pid, host, ahead, log (the background \
log's path), attached (whether a terminal is attached to a running background run), \
last_output_at (when the log was last written) (null where unknown); \
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

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    let sessions = sessions(&ctx, &args.ids, args.all)?;
    let rows = rows(&ctx, &sessions);
    if args.json {
        ui.write_json(&rows)?;
    } else {
        render_table(&mut *ui.out(), &rows, time::now_unix(), ui.color())
            .context("cannot write to stdout")?;
    }
    ui.flush()?;
    Ok(0)
}
