//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

#[path = "../common/hermetic.rs"]
mod hermetic;
mod support;

mod attach;
mod bg;
mod docs;
mod gc;
mod layout;
mod ls;
mod provisioning;
mod pty;
mod repo;
mod resume;
mod ship;
mod snapshots;
mod spawn;
mod trust;
