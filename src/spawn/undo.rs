//! Undoing a failed `git worktree add` (spawn, and resume's recreation): only
//! what this process made.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::{DotGit, EntryRemoval};
use crate::model::Error;
use crate::trust::confined::{ConfinedPath, Unconfined};

/// The worktree directory this process created itself, empty and exclusively
/// (so it was nobody else's), just before its `git worktree add`; and the
/// names of git's admin entries before the add, none of which is its own. Only
/// [`Made::create`] makes one, and only a `Made` may be undone.
#[derive(Debug)]
pub struct Made {
    path: ConfinedPath,
    dev: u64,
    ino: u64,
    entries_before: HashSet<String>,
}

impl Made {
    /// Create `path` (its parent exists) exclusively: fails when anything is
    /// there already, another repository's worktree in a shared root included.
    /// Call with the worktree lock held.
    pub fn create(ctx: &Ctx, confined: &ConfinedPath) -> Result<Made> {
        let path = confined.path();
        // Checked again under the lock; what is at the path itself is refused below.
        match confined.recheck() {
            Err(Unconfined::Symlink(at)) if at == path => {}
            Err(why) => return Err(Error::refused(why.describe(path, confined.root()))
                .hint("records can arrive from a fetch or a hand edit; bullpen does not act there")
                .into()),
            Ok(()) => {}
        }
        let entries_before = ctx.repo.admin_entry_names()?;
        match std::fs::create_dir(path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(Error::refused(format!("{} already exists", path.display()))
                    .hint("pick another id, or remove it")
                    .into())
            }
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("cannot create the worktree {}", path.display())))
            }
            Ok(()) => {}
        }
        let meta = path
            .symlink_metadata()
            .with_context(|| format!("cannot look at {}", path.display()))?;
        Ok(Made {
            path: confined.clone(),
            dev: meta.dev(),
            ino: meta.ino(),
            entries_before,
        })
    }

    pub fn path(&self) -> &Path {
        self.path.path()
    }

    /// Is what is at the path now the directory [`Made::create`] made (the
    /// same inode, not a symlink)? `None`: nothing is there.
    fn still_ours(&self) -> Result<Option<bool>> {
        match self.path().symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => {
                Err(anyhow::Error::new(e)
                    .context(format!("cannot look at {}", self.path().display())))
            }
            Ok(m) => Ok(Some(
                m.is_dir() && m.dev() == self.dev && m.ino() == self.ino,
            )),
        }
    }
}

/// After a failed `git worktree add`, with the worktree lock held: remove the
/// directory `made` — only inside the worktree root, only while it is the same
/// inode, and only when it has no `.git` yet or its `.git` points at an entry
/// that add registered — and the entries git registered for that path since
/// (no older one). Best effort: problems are warnings, the caller reports the
/// failure that brought it here.
pub fn undo_failed_add(ctx: &Ctx, made: &Made) {
    let path = made.path();
    let new_entries: Vec<String> = match ctx.repo.admin_entries_for(path) {
        Ok(now) => now
            .into_iter()
            .filter(|e| !made.entries_before.contains(e))
            .collect(),
        Err(e) => {
            ctx.ui.warn(format!("{e:#}"));
            Vec::new()
        }
    };
    match made.still_ours() {
        Ok(None) => {}
        Ok(Some(true)) if made.path.recheck().is_ok() => match ctx.repo.dot_git(path) {
            DotGit::Absent => remove(ctx, &made.path),
            DotGit::Ours { admin_id, .. } if new_entries.contains(&admin_id) => {
                remove(ctx, &made.path)
            }
            other => ctx.ui.warn(format!(
                "left {} in place: it holds {}, not the worktree this attempt made",
                path.display(),
                other.describe()
            )),
        },
        Ok(Some(_)) => ctx.ui.warn(format!(
            "left {} in place: it is not the directory this attempt created",
            path.display()
        )),
        Err(e) => ctx.ui.warn(format!("{e:#}; left it in place")),
    }
    for admin_id in new_entries {
        match ctx.repo.remove_admin_entry(&admin_id, path) {
            Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
            Ok(EntryRemoval::Refused(why)) => ctx.ui.warn(format!(
                "left git's worktree entry {admin_id} for {} in place: {why}",
                path.display()
            )),
            Err(e) => ctx.ui.warn(format!("{e:#}")),
        }
    }
}

/// Remove the directory this attempt made, never following a symlink and never
/// across a file system boundary (`sys::remove`): a mount made in it meanwhile
/// (by a hook, a filter, the user) stops the removal, and what is left stays.
fn remove(ctx: &Ctx, confined: &ConfinedPath) {
    use crate::sys::remove::{remove_tree, Stopped};
    let path = confined.path();
    match remove_tree(path) {
        Ok(()) => {}
        Err(Stopped::OtherDevice(at)) => ctx.ui.warn(format!(
            "left {} in place: a file system is mounted at {} (bullpen never removes across \
             file systems); unmount it, then remove the directory",
            path.display(),
            at.display()
        )),
        Err(Stopped::Io(e)) => ctx
            .ui
            .warn(format!("could not remove {}: {e}", path.display())),
    }
}
