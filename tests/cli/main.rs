//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

#[path = "../common/hermetic.rs"]
mod hermetic;
mod support;

mod bg;
mod docs;
mod gc;
mod layout;
mod ls;
mod merged;
mod provisioning;
mod repo;
mod resume;
mod ship;
mod snapshots;
mod spawn;
mod trust;
