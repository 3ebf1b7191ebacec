//! wait: until sessions' runs end, then how the last one ended. `decide` reads
//! a record (pure); this file polls the records and `/proc`.

pub mod attention;
pub mod decide;

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store;
use crate::model::{ending, Error, Record, SessionId, State};
use crate::run::liveness::live_spawner;
use crate::sys::procfs;
use decide::{waiting, Wait};

/// How often the records are read again while waiting.
const POLL: Duration = Duration::from_millis(50);

/// How waiting ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every run ended; the last session's status.
    Status(i32),
    /// `--timeout` ran out with a run still going.
    TimedOut,
}

/// Wait for the runs of `ids` to end, in order (each must name a session);
/// the status of the last one. Bounded by `timeout` over all of them.
pub fn wait(ctx: &Ctx, ids: &[SessionId], timeout: Option<Duration>) -> Result<Ended> {
    for id in ids {
        store::require(&ctx.repo, id)?;
    }
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut status = 0;
    for (i, id) in ids.iter().enumerate() {
        let last = i + 1 == ids.len();
        loop {
            match look(ctx, id)? {
                Wait::Going => {}
                Wait::Ended(s) => {
                    let stored = store::require(&ctx.repo, id)?;
                    if let Some(words) = ending::of_record(&stored.record) {
                        ctx.ui.info(format!("session {id} {words}"));
                    }
                    status = s;
                    break;
                }
                Wait::NeverRan => {
                    ctx.ui
                        .info(format!("session {id} has not run; nothing to wait for"));
                    status = 0;
                    break;
                }
                Wait::Lost => {
                    let e = Error::failed(format!(
                        "session {id} is lost: its supervisor is gone without recording \
                         how the run ended"
                    ))
                    .hint(format!(
                        "`git bullpen stop {id}` ends what is left of it; `git bullpen logs {id}` \
                         shows its output"
                    ));
                    if last {
                        return Err(e.into());
                    }
                    ctx.ui.warn(e.message());
                    break;
                }
                Wait::Interrupted => {
                    return Err(Error::failed(format!(
                        "session {id} was never finished: the spawn that created it was \
                         interrupted"
                    ))
                    .hint("`git bullpen gc` cleans it up (it keeps anything that holds work)")
                    .into())
                }
            }
            if let Some(deadline) = deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    ctx.ui.info(format!(
                        "session {id} is still running after {}s (--timeout); it goes on",
                        timeout.unwrap_or_default().as_secs_f64()
                    ));
                    return Ok(Ended::TimedOut);
                }
                std::thread::sleep(POLL.min(left));
            } else {
                std::thread::sleep(POLL);
            }
        }
    }
    Ok(Ended::Status(status))
}

/// Where the session's run stands now. A run that looks lost is read once more:
/// its supervisor records the end and then exits, so between the two reads
/// the end is in the record.
fn look(ctx: &Ctx, id: &SessionId) -> Result<Wait> {
    let read = || -> Result<Wait> {
        let stored = store::require(&ctx.repo, id)?;
        Ok(waiting(&stored.record, alive(ctx, &stored.record)))
    };
    match read()? {
        Wait::Lost => read(),
        w => Ok(w),
    }
}

fn alive(ctx: &Ctx, r: &Record) -> bool {
    match r.state {
        State::Running => r.process.as_ref().is_some_and(procfs::is_session_alive),
        State::Provisioning => live_spawner(ctx, r).is_some(),
        _ => false,
    }
}
