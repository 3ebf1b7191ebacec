//! The trust model (ARCHITECTURE.md "Trust model"): refs are shared and
//! untrusted; the authority to signal a process, run a command or delete a
//! directory comes from local proof (`local`), checked against the live system.
//! `decide` holds the decisions (pure); this file gathers their facts.

pub mod decide;
pub mod local;

use crate::model::local::LocalRun;
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
