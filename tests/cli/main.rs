//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

mod support;

mod bg;
mod docs;
mod gc;
mod layout;
mod ls;
mod provisioning;
mod resume;
mod ship;
mod spawn;
mod trust;
