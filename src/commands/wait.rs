//! `git bullpen wait`: wait for sessions' runs to end; exit with how the last one ended.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::context::Ctx;
use crate::model::SessionId;
use crate::ui::Ui;
use crate::wait::{wait, Ended};

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen spawn --bg tests -- make test && git bullpen wait tests
  git bullpen wait --timeout 600 fix-login tests && git bullpen gc
  git bullpen wait tests; echo \"tests exited $?\"

Waits until the run of each session named has ended (a background run, or a \
foreground one on another terminal) and exits with the status of the last session's \
run, as a shell's `wait` does: its exit code, 128+N when a signal N ended it. A session \
whose run already ended gives its status at once (0 for one that ended successfully); \
one that never ran gives 0. Each run's end is said on stderr (`session tests exited 1 \
after 3m 2s`).

A run whose supervisor vanished without recording its end (`lost` in `git bullpen ls`) \
has no status to give: wait says so and exits 125 (as bullpen's own failures do in \
wait). So does a run still going when \
--timeout runs out, with exit 124 (as timeout(1) does); the run goes on.";

/// Wait for sessions' runs to end; exit with the last one's status.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The sessions to wait for.
    #[arg(value_name = "ID", required = true, add = clap_complete::ArgValueCandidates::new(crate::complete::running_session_id_candidates))]
    pub ids: Vec<SessionId>,

    /// Give up after SECS (decimals allowed), exit 124; the runs go on.
    #[arg(long, value_name = "SECS", value_parser = super::stop::parse_secs)]
    pub timeout: Option<Duration>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    match wait(&ctx, &args.ids, args.timeout)? {
        Ended::Status(status) => Ok(status),
        Ended::TimedOut => Ok(124),
    }
}
