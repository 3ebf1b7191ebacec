//! Unregistering one worktree: removing exactly one admin entry
//! (`<common>/worktrees/<admin_id>`) of one of bullpen's own sessions. Never a
//! bare `git worktree prune`, which unregisters every worktree whose directory
//! is missing at that moment, a user's own on an unmounted disk included.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::nested::nested_of;
use super::worktrees::registered_path;
use super::{DotGit, Repo};
use crate::model::status::nested_work;

/// What removing an admin entry came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryRemoval {
    Removed,
    /// There was no such entry (git removed it already).
    AlreadyGone,
    /// Left in place, and why.
    Refused(String),
}

impl Repo {
    /// `<common>/worktrees/<admin_id>` when `admin_id` is one plain name and a
    /// real directory is there; else the answer for the caller to give.
    fn entry_dir(&self, admin_id: &str) -> Result<std::result::Result<PathBuf, EntryRemoval>> {
        if admin_id.is_empty()
            || admin_id == "."
            || admin_id == ".."
            || admin_id.contains(['/', '\0'])
        {
            return Ok(Err(EntryRemoval::Refused(format!(
                "{admin_id:?} is not the name of a worktree entry"
            ))));
        }
        let admin_dir = self.common_dir.join("worktrees").join(admin_id);
        match admin_dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Err(EntryRemoval::AlreadyGone))
            }
            Err(e) => {
                Err(anyhow::Error::new(e)
                    .context(format!("could not look at {}", admin_dir.display())))
            }
            Ok(m) if !m.is_dir() => Ok(Err(EntryRemoval::Refused(format!(
                "{} is not a directory",
                admin_dir.display()
            )))),
            Ok(_) => Ok(Ok(admin_dir)),
        }
    }

    /// Remove exactly `<common>/worktrees/<admin_id>`, the admin entry of the
    /// worktree at `worktree`, and nothing else; only when
    ///
    /// - `admin_id` is one plain name and the entry a real directory, not locked;
    /// - its `gitdir` file names `<worktree>/.git`;
    /// - `worktree` is gone, or its `.git` file points back at this entry. The
    ///   caller vouches that `worktree` is a session's (`<worktree root>/<id>`);
    /// - nothing under its `modules/` holds work (unpublished submodule commits),
    ///   nor, while the worktree is there, any repository nested in it.
    ///
    /// Call with the worktree lock held. `Err` only when the check or the removal
    /// could not be done.
    pub fn remove_admin_entry(&self, admin_id: &str, worktree: &Path) -> Result<EntryRemoval> {
        let admin_dir = match self.entry_dir(admin_id)? {
            Ok(dir) => dir,
            Err(answer) => return Ok(answer),
        };
        let Some(registered) = registered_path(&admin_dir)? else {
            return Ok(EntryRemoval::Refused(format!(
                "{} has no gitdir file: not a worktree entry",
                admin_dir.display()
            )));
        };
        if place(&registered) != place(worktree) {
            return Ok(EntryRemoval::Refused(format!(
                "worktree entry {admin_id} is registered for {}, not {}",
                registered.display(),
                worktree.display()
            )));
        }
        if admin_dir.join("locked").exists() {
            return Ok(EntryRemoval::Refused(format!(
                "worktree entry {admin_id} is locked (git worktree unlock {})",
                worktree.display()
            )));
        }
        let present = match worktree.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("could not look at {}", worktree.display())))
            }
            Ok(_) => true,
        };
        if present {
            match self.dot_git(worktree) {
                DotGit::Ours {
                    admin_id: back,
                    admin_exists: true,
                } if back == admin_id => {}
                other => {
                    return Ok(EntryRemoval::Refused(format!(
                        "{} is there and its .git does not point at worktree entry {admin_id} \
                         ({other:?})",
                        worktree.display()
                    )))
                }
            }
        }
        let modules = admin_dir.join("modules");
        let nested = match nested_of(
            present.then_some(worktree),
            Some(&modules),
            None,
            &self.cli_config,
        )
        .map(|(n, _)| n)
        {
            Ok(n) => n,
            Err(e) => {
                return Ok(EntryRemoval::Refused(format!(
                    "cannot tell whether its submodules hold work: {e:#}"
                )))
            }
        };
        if let Some(work) = nested_work(&nested) {
            return Ok(EntryRemoval::Refused(work));
        }
        std::fs::remove_dir_all(&admin_dir)
            .with_context(|| format!("could not remove {}", admin_dir.display()))?;
        // Like git: the `worktrees` directory goes when its last entry does.
        let _ = std::fs::remove_dir(self.common_dir.join("worktrees"));
        Ok(EntryRemoval::Removed)
    }

    /// The admin entries git left half-removed: a directory under
    /// `<common>/worktrees/` with no `gitdir` file (a `git worktree remove`
    /// killed part-way deletes the entry's files in no set order). git and
    /// [`Repo::worktrees`] no longer see them; they stay forever unless removed.
    pub fn half_removed_entries(&self) -> Result<Vec<HalfRemoved>> {
        let admin_root = self.common_dir.join("worktrees");
        let entries = match std::fs::read_dir(&admin_root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("could not list {}", admin_root.display())))
            }
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry =
                entry.with_context(|| format!("could not list {}", admin_root.display()))?;
            let dir = entry.path();
            let real_dir = dir.symlink_metadata().is_ok_and(|m| m.is_dir());
            if !real_dir || dir.join("gitdir").symlink_metadata().is_ok() {
                continue;
            }
            let Some(admin_id) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            out.push(HalfRemoved {
                head: entry_head(&dir),
                locked: dir.join("locked").exists(),
                admin_id,
            });
        }
        out.sort_by(|a, b| a.admin_id.cmp(&b.admin_id));
        Ok(out)
    }

    /// Finish removing a half-removed entry of the session whose worktree was
    /// `worktree` (the caller vouches: `<worktree root>/<id>`, proven created
    /// here), checked again: one plain name, a real directory with no `gitdir`
    /// file, not locked, `worktree` gone, nothing under its `modules/` holding
    /// work. Call with the worktree lock held.
    pub fn remove_half_removed_entry(
        &self,
        admin_id: &str,
        worktree: &Path,
    ) -> Result<EntryRemoval> {
        let admin_dir = match self.entry_dir(admin_id)? {
            Ok(dir) => dir,
            Err(answer) => return Ok(answer),
        };
        if admin_dir.join("gitdir").symlink_metadata().is_ok() {
            return Ok(EntryRemoval::Refused(format!(
                "worktree entry {admin_id} has a gitdir file again"
            )));
        }
        if admin_dir.join("locked").exists() {
            return Ok(EntryRemoval::Refused(format!(
                "worktree entry {admin_id} is locked"
            )));
        }
        match worktree.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("could not look at {}", worktree.display())))
            }
            Ok(_) => {
                return Ok(EntryRemoval::Refused(format!(
                    "{} is there again",
                    worktree.display()
                )))
            }
        }
        let modules = admin_dir.join("modules");
        match nested_of(None, Some(&modules), None, &self.cli_config).map(|(n, _)| n) {
            Ok(n) => {
                if let Some(work) = nested_work(&n) {
                    return Ok(EntryRemoval::Refused(work));
                }
            }
            Err(e) => {
                return Ok(EntryRemoval::Refused(format!(
                    "cannot tell whether its submodules hold work: {e:#}"
                )))
            }
        }
        std::fs::remove_dir_all(&admin_dir)
            .with_context(|| format!("could not remove {}", admin_dir.display()))?;
        let _ = std::fs::remove_dir(self.common_dir.join("worktrees"));
        Ok(EntryRemoval::Removed)
    }

    /// The names of all admin entries under `<common>/worktrees/`, whatever
    /// they hold: one directory listing, no file read (spawn takes it before
    /// its `git worktree add`, so its cost must not grow with the worktrees).
    pub fn admin_entry_names(&self) -> Result<HashSet<String>> {
        let admin_root = self.common_dir.join("worktrees");
        let entries = match std::fs::read_dir(&admin_root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("could not list {}", admin_root.display())))
            }
        };
        entries
            .map(|entry| {
                entry
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .with_context(|| format!("could not list {}", admin_root.display()))
            })
            .collect()
    }

    /// The admin entries registered for `path` (normally at most one).
    pub fn admin_entries_for(&self, path: &Path) -> Result<Vec<String>> {
        let want = place(path);
        Ok(self
            .worktrees()?
            .into_iter()
            .filter(|w| place(&w.path) == want)
            .filter_map(|w| w.admin_id)
            .collect())
    }
}

/// An admin entry with no `gitdir` file ([`Repo::half_removed_entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HalfRemoved {
    pub admin_id: String,
    /// What its `HEAD` file says: `None` when there is none left; `Some("")`
    /// when it names no branch (detached, unreadable).
    pub head: Option<String>,
    pub locked: bool,
}

/// The branch an entry's `HEAD` names (see [`HalfRemoved::head`]).
fn entry_head(dir: &Path) -> Option<String> {
    let content = match crate::sys::regular::read(&dir.join("HEAD")) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Ok(None) if dir.join("HEAD").symlink_metadata().is_err() => return None,
        // Not a regular file (never read: a FIFO would block), or unreadable.
        Err(_) | Ok(None) => return Some(String::new()),
        Ok(Some(c)) => String::from_utf8_lossy(&c).into_owned(),
    };
    Some(
        content
            .trim_end()
            .strip_prefix("ref:")
            .map(|t| t.trim().to_owned())
            .unwrap_or_default(),
    )
}

/// A path as compared here ([`crate::sys::paths::comparable`]).
fn place(path: &Path) -> PathBuf {
    crate::sys::paths::comparable(path)
}
