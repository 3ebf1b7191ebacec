//! git-bullpen: run commands side by side, each in its own git worktree and branch,
//! with everything recorded in the repository. See ARCHITECTURE.md.

pub mod agent;
pub mod attach;
pub mod cli;
pub mod commands;
pub mod complete;
pub mod context;
pub mod gc;
pub mod hook;
pub use bullpen_git as git;
pub mod ls;
pub use bullpen_model as model;
pub mod remote;
pub mod resume;
pub mod run;
pub mod spawn;
pub mod stop;
pub use bullpen_sys as sys;
pub use bullpen_trust as trust;
pub mod ui;
pub mod wait;
