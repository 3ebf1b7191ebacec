//! `git bullpen wait`: wait for sessions' runs to end; exit with how the last one ended.

use std::path::Path;
use std::time::Duration;

use std::io::Write;

use anyhow::{Context, Result};

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
--timeout runs out, with exit 124 (as timeout(1) does); the run goes on.

With --for input|idle|exit, wait returns as soon as one of the sessions named (or, with --any, of those running when it starts; with --all-repos, in every repository ls --all-repos lists) gets there, and prints its id on stdout (with --all-repos, the id, a tab and its repository): input, when it needs input (a permission prompt, a question); idle, when its turn is over or it needs input; exit, when its run has ended. It exits 0 when one got there, 1 when every run ended before any did (nothing more will come of them), 124 on --timeout. What a session is doing is read from its local state (git bullpen ls shows it as STATE).";

/// Wait for sessions' runs to end; exit with the last one's status.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The sessions to wait for.
    #[arg(value_name = "ID", required_unless_present = "any", add = clap_complete::ArgValueCandidates::new(crate::complete::running_session_id_candidates))]
    pub ids: Vec<SessionId>,

    /// Give up after SECS (decimals allowed), exit 124; the runs go on.
    #[arg(long, value_name = "SECS", value_parser = super::stop::parse_secs)]
    pub timeout: Option<Duration>,

    /// Return when one of the sessions needs input, is idle, or its run exits.
    #[arg(long = "for", value_name = "STATE", value_enum)]
    pub for_state: Option<For>,

    /// With --for: any session running now (instead of naming them).
    #[arg(long, requires = "for_state", conflicts_with = "ids")]
    pub any: bool,

    /// With --for: the sessions of every repository `ls --all-repos` lists.
    #[arg(long, requires = "for_state")]
    pub all_repos: bool,

    #[command(flatten)]
    pub roots: crate::ls::repos::Roots,
}

/// What `--for` waits for.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum For {
    Input,
    Idle,
    Exit,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    if let Some(state) = args.for_state {
        return run_for(&args, state, cwd, ui);
    }
    let ctx = Ctx::discover(cwd, ui)?;
    match wait(&ctx, &args.ids, args.timeout)? {
        Ended::Status(status) => Ok(status),
        Ended::TimedOut => Ok(124),
    }
}

/// `wait --for`.
fn run_for(args: &Args, state: For, cwd: &Path, ui: &Ui) -> Result<i32> {
    use crate::model::activity::Awaited;
    use crate::wait::attention::{candidates, wait_for, Outcome};
    let ctxs = match args.all_repos {
        true => crate::ls::repos::repositories(cwd, &args.roots, ui)?,
        false => vec![Ctx::discover_records(cwd, ui)?],
    };
    let watched = candidates(&ctxs, &args.ids, args.any)?;
    if watched.is_empty() {
        ui.info("no session is running; nothing to wait for");
        return Ok(1);
    }
    let awaited = match state {
        For::Input => Awaited::Input,
        For::Idle => Awaited::Idle,
        For::Exit => Awaited::Exit,
    };
    match wait_for(&ctxs, watched, awaited, args.timeout)? {
        Outcome::Reached(repo, id) => {
            let mut out = ui.out();
            let written = match args.all_repos {
                true => writeln!(out, "{id}\t{}", ctxs[repo].repo.main_worktree().display()),
                false => writeln!(out, "{id}"),
            };
            written.context("cannot write to stdout")?;
            drop(out);
            ui.flush()?;
            Ok(0)
        }
        Outcome::AllEnded => {
            ui.info("every run ended; none got there");
            Ok(1)
        }
        Outcome::TimedOut => Ok(124),
    }
}
