//! gc: remove the worktrees of sessions whose work is provably safe elsewhere,
//! repair leftovers, and report everything it kept and why.
//!
//! Three layers: `facts` gathers (one publish walk for all sessions, one `/proc`
//! scan), `plan` decides (pure, table-tested), `execute` acts (and asks the plan
//! again with fresh facts right before each removal); `teardown` takes one
//! worktree down so that it cannot crash, `report` says what happened.

pub mod execute;
pub mod facts;
pub mod plan;
pub mod report;
pub mod teardown;
