//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

#[path = "../common/hermetic.rs"]
mod hermetic;
mod support;

mod agents;
mod at_act;
mod attach;
mod attacks;
mod bg;
mod color;
mod content;
mod docs;
mod gc;
mod gitenv;
mod hidden_work;
mod layout;
mod leftovers;
mod lifecycle;
mod logs_screen;
mod ls;
mod merged;
mod messages;
mod namespaces;
mod provisioning;
mod pty;
mod ready;
mod remote;
mod repo;
mod resume;
mod reuse;
mod rules;
mod run_leftovers;
mod screen;
mod ship;
mod snapshots;
mod spawn;
mod trust;
mod undo;
