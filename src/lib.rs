//! git-bullpen: run commands side by side, each in its own git worktree and branch,
//! with everything recorded in the repository. See ARCHITECTURE.md.

pub mod busy;
pub mod cli;
pub mod commands;
pub mod complete;
pub mod config;
pub mod context;
pub mod fsutil;
pub mod gc_facts;
pub mod gc_plan;
pub mod git;
pub mod ids;
pub mod layout;
pub mod placement;
pub mod process;
pub mod runner;
pub mod session;
pub mod store;
pub mod supervise;
pub mod teardown;
pub mod time;
