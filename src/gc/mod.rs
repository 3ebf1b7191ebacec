//! gc: remove the worktrees of sessions whose work is provably safe elsewhere,
//! repair leftovers, and report everything it kept and why.
//!
//! Three layers: `facts` gathers (one publish walk for all sessions, one `/proc`
//! scan), `plan` decides (pure, table-tested), `execute` runs the session loop
//! and `act` carries out one decision (asking the plan again with fresh facts
//! right before each removal); `notes`, `expire` and `leftovers` are gc's other
//! jobs; `teardown` takes one worktree down so that it cannot crash, `report`
//! says what happened.

mod act;
pub mod execute;
mod expire;
pub mod facts;
mod leftovers;
mod notes;
pub mod plan;
pub mod report;
pub mod teardown;
mod tmpdirs;
