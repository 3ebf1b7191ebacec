//! `wait --for input|idle|exit`: until one of the sessions gets there
//! (`model::activity::arrived`), polling their records and local state.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::context::Ctx;
use crate::git::store;
use crate::model::activity::{arrived, Arrival, Awaited};
use crate::model::{SessionId, State};
use crate::sys::procfs;

const POLL: Duration = Duration::from_millis(50);

/// How waiting for a state ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This session (of the repository at this index) got there.
    Reached(usize, SessionId),
    /// Every run ended without getting there.
    AllEnded,
    TimedOut,
}

/// The sessions to watch: those named (each must exist), or with `any`
/// every running one of each repository.
pub fn candidates(ctxs: &[Ctx], ids: &[SessionId], any: bool) -> Result<Vec<(usize, SessionId)>> {
    let mut out = Vec::new();
    for (i, ctx) in ctxs.iter().enumerate() {
        if any {
            let (sessions, _unreadable) = store::load_all(&ctx.repo)?;
            out.extend(
                sessions
                    .into_iter()
                    .filter(|s| s.record.state == State::Running)
                    .map(|s| (i, s.record.id)),
            );
        } else {
            for id in ids {
                store::require(&ctx.repo, id)?;
                out.push((i, id.clone()));
            }
        }
    }
    Ok(out)
}

/// Wait until one of `watched` gets to `awaited`.
pub fn wait_for(
    ctxs: &[Ctx],
    mut watched: Vec<(usize, SessionId)>,
    awaited: Awaited,
    timeout: Option<Duration>,
) -> Result<Outcome> {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        let mut i = 0;
        while i < watched.len() {
            let (repo, id) = &watched[i];
            let ctx = &ctxs[*repo];
            let stored = store::require(&ctx.repo, id)?;
            let r = &stored.record;
            let process = r
                .process
                .as_ref()
                .filter(|p| r.state == State::Running && procfs::is_session_alive(p));
            let activity = process
                .and_then(|p| crate::ls::activity_of(ctx, id, p.pid))
                .map(|s| s.activity);
            match arrived(awaited, activity, process.is_none()) {
                Some(Arrival::Reached) => return Ok(Outcome::Reached(*repo, id.clone())),
                Some(Arrival::Ended) => {
                    watched.remove(i);
                    continue;
                }
                None => i += 1,
            }
        }
        if watched.is_empty() {
            return Ok(Outcome::AllEnded);
        }
        let pause = match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Outcome::TimedOut);
                }
                POLL.min(left)
            }
            None => POLL,
        };
        std::thread::sleep(pause);
    }
}
