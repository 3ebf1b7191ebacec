//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

#[path = "../common/hermetic.rs"]
mod hermetic;
mod support;

mod agents;
mod attach;
mod bg;
mod color;
mod content;
mod docs;
mod gc;
mod gitenv;
mod layout;
mod lifecycle;
mod ls;
mod merged;
mod messages;
mod provisioning;
mod pty;
mod ready;
mod remote;
mod repo;
mod resume;
mod ship;
mod snapshots;
mod spawn;
mod trust;
