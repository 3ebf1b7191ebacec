//! Whether the main worktree holds uncommitted changes to tracked files, asked
//! on a thread of its own while spawn makes the new worktree (spawn says that
//! they stay behind).
//!
//! One thread, on the repository as bullpen opened it: gix's `is_dirty` needed
//! it opened a second time (its configuration read and parsed again) and
//! started two more threads (the status iterator's, and a worker after reading
//! the cgroup's CPU limits to size a pool).

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use anyhow::Result;
use gix::status::index_worktree::BuiltinSubmoduleStatus;
use gix::status::plumbing::index_as_worktree::traits::FastEq;
use gix::status::plumbing::index_as_worktree::EntryStatus;
use gix::status::plumbing::index_as_worktree_with_renames::{Entry, VisitEntry};
use gix::status::tree_index::TrackRenames;

use super::Repo;

impl Repo {
    /// When bullpen runs in the main worktree: a thread that answers whether
    /// its tracked files differ from HEAD (staged or not; untracked files
    /// aside, as `git stash` leaves them); `None` in any other worktree.
    pub fn main_worktree_changes(&self) -> Option<JoinHandle<bool>> {
        let main = self.main_worktree.clone()?;
        let here = self.repo.workdir().and_then(|w| w.canonicalize().ok())?;
        if here != main {
            return None;
        }
        let repo = self.repo.clone().into_sync();
        Some(std::thread::spawn(move || {
            has_changes(&repo.to_thread_local()).unwrap_or(false)
        }))
    }
}

/// What gix's `is_dirty` answers (the index against HEAD, then the files
/// against the index, submodules as configured), on this thread alone and
/// stopping at the first change.
fn has_changes(repo: &gix::Repository) -> Result<bool> {
    let index = repo.index_or_empty()?;
    let head = repo.head_tree_id_or_empty()?;
    let mut staged = false;
    repo.tree_index_status(&head, &index, None, TrackRenames::Disabled, |_, _, _| {
        staged = true;
        Ok(ControlFlow::Break(()))
    })?;
    if staged {
        return Ok(true);
    }
    let stop = AtomicBool::new(false);
    let mut first = FirstChange {
        stop: &stop,
        found: false,
    };
    let submodules = BuiltinSubmoduleStatus::new(
        repo.clone().into_sync(),
        gix::status::Submodule::AsConfigured { check_dirty: true },
    )?;
    let walked = repo.index_worktree_status(
        &index,
        None::<&str>,
        &mut first,
        FastEq,
        submodules,
        &mut gix::progress::Discard,
        &stop,
        gix::status::index_worktree::Options {
            sorting: None,
            dirwalk_options: None,
            rewrites: None,
            thread_limit: Some(1),
        },
    );
    // Interrupted at the first change, the walk reports it as an error.
    match walked {
        _ if first.found => Ok(true),
        Ok(_) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Notes the first change the status reports and stops the walk.
struct FirstChange<'a> {
    stop: &'a AtomicBool,
    found: bool,
}

impl<'index> VisitEntry<'index> for FirstChange<'_> {
    type ContentChange = ();
    type SubmoduleStatus = gix::submodule::Status;

    fn visit_entry(&mut self, entry: Entry<'index, Self::ContentChange, Self::SubmoduleStatus>) {
        // A file as the index has it, only its stat changed: no change (nor to gix's iterator).
        if let Entry::Modification {
            status: EntryStatus::NeedsUpdate(_),
            ..
        } = entry
        {
            return;
        }
        self.found = true;
        self.stop.store(true, Ordering::Relaxed);
    }
}
