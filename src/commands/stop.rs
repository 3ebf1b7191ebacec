//! `git bullpen stop`: end a background run as closing its window would: its
//! whole process group, SIGHUP, SIGTERM, then SIGKILL after a timeout; the
//! supervisor records `stopped`.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::context::Ctx;
use crate::model::SessionId;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen stop fix-login
  git bullpen stop --timeout 30 fix-login

Ends the session's command as closing its terminal's window would: SIGHUP to its \
process group (the command and every child it started that stayed in its group; an \
interactive shell ends on it and saves its history), then SIGTERM (after 2 seconds, or \
half of --timeout if shorter), then SIGKILL once --timeout seconds have passed since the \
SIGHUP; each only while something of the group is left. It then waits for the \
session's supervisor to record the end: the state becomes `stopped` (or stays `exited` \
if the command ended by itself before stop got to it), said as everywhere else \
(`session fix-login stopped by SIGHUP after 5m 2s`). Provenance notes are written as \
for any other end.

A session that is not running is left alone: stop says so and exits 0, so it is safe \
in clean-up scripts. A `lost` session (its supervisor is gone) is ended by stop itself: \
whatever is left of its process group is terminated and the record says `stopped`. A \
foreground run belongs to the terminal that started it; stop refuses it and names its pid.";

/// End a running background session (SIGHUP, SIGTERM, then SIGKILL after a timeout).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session to stop.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::running_session_id_candidates))]
    pub id: SessionId,

    /// Seconds from the first signal (SIGHUP) to SIGKILL (decimals allowed).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub timeout: Duration,
}

pub(crate) fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1e9).contains(&v) => Ok(Duration::from_secs_f64(v)),
        _ => Err("not a number of seconds (e.g. 10 or 0.5)".to_string()),
    }
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover(cwd, ui)?;
    crate::stop::stop(&ctx, &args.id, args.timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        assert_eq!(parse_secs("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_secs("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_secs("0"), Ok(Duration::ZERO));
        for bad in ["-1", "x", "inf", "NaN", ""] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }
}
