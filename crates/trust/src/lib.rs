//! The trust model (ARCHITECTURE.md "Trust model"): refs are shared and
//! untrusted; the authority to signal a process, run a command or delete a
//! directory comes from local proof (`local`), checked against the live system.
//! `decide` holds the decisions (pure); this file gathers their facts.

pub mod confined;
// The floor below, under the names the code has always used.
use bullpen_model as model;
use bullpen_sys as sys;

pub mod decide;
pub mod local;

use crate::model::local::LocalRun;
use crate::model::Record;
use crate::sys::layout::Layout;
use crate::sys::procfs;
use decide::SignalFacts;

/// What `/proc` shows now about a run this machine started.
pub fn signal_facts(run: &LocalRun) -> SignalFacts {
    SignalFacts {
        boot_id: procfs::boot_id(),
        command_now: procfs::identity(run.command.pid),
        supervisor_now: run.supervisor.as_ref().map(|s| procfs::identity(s.pid)),
        own_pgrp: procfs::own_pgrp(),
    }
}

/// The layout a session's recorded worktree is checked against: the
/// repository's, with the worktree root this machine created the session under
/// when that is where the record says the worktree is (`decide::created_root`).
/// A session created before `bullpen.worktreeRoot` or `BULLPEN_HOME` changed
/// keeps working (resume, path, gc, rm); a record that merely claims a path is
/// checked against the current root as before.
pub fn session_layout(layout: &Layout, record: &Record) -> Layout {
    let created = local::Local::of(layout, &record.id).created();
    match created
        .ok()
        .flatten()
        .and_then(|c| decide::created_root(&record.worktree, &c))
    {
        Some(root) if root != layout.worktree_root => Layout {
            worktree_root: root,
            ..layout.clone()
        },
        _ => layout.clone(),
    }
}
