//! One integration test binary: the real `git-bullpen` against real git
//! repositories in temp dirs. One module per command.

#[path = "../common/hermetic.rs"]
mod hermetic;
mod suggest;
mod support;

mod agent_conversation;
mod agents;
mod at_act;
mod attach;
mod attacks;
mod attention;
mod bg;
mod color;
mod content;
mod conventions;
mod docs;
mod exit_status;
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
mod push_forge;
mod ready;
mod records_merge;
mod remote;
mod repo;
mod resume;
mod reuse;
mod rules;
mod run_leftovers;
mod sandbox;
mod screen;
mod screen_more;
mod ship;
mod snapshots;
mod snapshots_commands;
mod snapshots_ls;
mod snapshots_spawn;
mod snapshots_support;
mod spawn;
mod trust;
mod undo;
mod vocabulary;
