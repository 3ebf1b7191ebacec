//! A new worktree's index with no racily clean entry, so that its first status
//! re-hashes nothing.
//!
//! git (and gix) trust an entry's stat data only when the file's mtime is
//! older than the index's own, in whole seconds: `git worktree add` writes the
//! files and then the index within the same second, so every file it wrote in
//! that second is read and hashed again by each status until an index is
//! written a second later. Waiting for that second would cost spawn up to one;
//! instead, right after the checkout and before anything else runs there, each
//! such file still exactly as git wrote it (the stat its entry recorded, its
//! content the entry's blob) gets its mtime set one second before the index's,
//! and the index is written again with the new stat. In-process where gix
//! writes every extension the index has; else `git update-index --refresh`
//! hashes the files moved back and records them.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

use super::{DotGit, Repo};

impl Repo {
    /// Settle the index of `worktree`, just made by `git worktree add` and not
    /// yet handed to anything: see the module. Returns how many files it moved
    /// back (none: the index was settled already, or holds no such entry).
    pub fn settle_fresh_index(&self, worktree: &Path) -> Result<usize> {
        let DotGit::Ours { admin_id, .. } = self.dot_git(worktree) else {
            bail!(
                "{} is not a worktree of this repository",
                worktree.display()
            );
        };
        let index_path = self
            .common_dir
            .join("worktrees")
            .join(admin_id)
            .join("index");
        let index_meta = match std::fs::metadata(&index_path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            other => other.with_context(|| format!("cannot look at {}", index_path.display()))?,
        };
        let index_secs = index_meta.mtime();
        // Decoded as it is: `File::at` dissolves a split index into one.
        let bytes = std::fs::read(&index_path)
            .with_context(|| format!("cannot read {}", index_path.display()))?;
        let modified = index_meta
            .modified()
            .with_context(|| format!("{} has no usable mtime", index_path.display()))?;
        let (state, _) = gix::index::State::from_bytes(
            &bytes,
            modified.into(),
            gix::hash::Kind::Sha1,
            gix::index::decode::Options::default(),
        )
        .with_context(|| format!("could not read the index {}", index_path.display()))?;
        // gix writes the tree cache and the sparse marker; any other extension
        // is git's to keep.
        let in_process = state.link().is_none()
            && state.untracked().is_none()
            && state.fs_monitor().is_none()
            && state.resolve_undo().is_none();
        let mut index = if state.link().is_none() {
            gix::index::File::from_state(state, &index_path)
        } else {
            // Its entries, the shared index's included.
            gix::index::File::at(
                &index_path,
                gix::hash::Kind::Sha1,
                false,
                gix::index::decode::Options::default(),
            )
            .with_context(|| format!("could not read the index {}", index_path.display()))?
        };
        let back = u64::try_from(index_secs - 1)
            .map(|secs| UNIX_EPOCH + Duration::new(secs, index_meta.mtime_nsec() as u32))
            .with_context(|| format!("{} has no usable mtime", index_path.display()))?;
        let mut moved = 0;
        let (entries, paths) = index.entries_mut_and_pathbacking();
        for entry in entries.iter_mut() {
            if !racy(entry, index_secs) {
                continue;
            }
            let Ok(relative) = gix::path::from_bstr(entry.path_in(paths)) else {
                continue;
            };
            let path = worktree.join(relative);
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if !meta.is_file() || !as_checked_out(entry, &meta) {
                continue;
            }
            let mut file = std::fs::File::open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let opened = file
                .metadata()
                .with_context(|| format!("cannot look at {}", path.display()))?;
            if opened.ino() != meta.ino() || opened.dev() != meta.dev() {
                continue;
            }
            if in_process {
                let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
                file.read_to_end(&mut data)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let id =
                    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
                        .with_context(|| format!("cannot hash {}", path.display()))?;
                // Not the blob as it is (a filter, an edit): git's to judge.
                if id != entry.id {
                    continue;
                }
            }
            file.set_modified(back)
                .with_context(|| format!("cannot set the mtime of {}", path.display()))?;
            if in_process {
                let now = gix::index::fs::Metadata::from_file(&file)
                    .with_context(|| format!("cannot look at {}", path.display()))?;
                entry.stat = gix::index::entry::Stat::from_fs(&now)
                    .with_context(|| format!("{} has no usable mtime", path.display()))?;
            }
            moved += 1;
        }
        if moved > 0 && in_process {
            index
                .write(gix::index::write::Options::default())
                .with_context(|| format!("could not write the index {}", index_path.display()))?;
        } else if moved > 0 {
            self.run_git_env(
                Some(worktree),
                &["update-index".as_ref(), "-q".as_ref(), "--refresh".as_ref()],
                &[],
            )?;
        }
        Ok(moved)
    }
}

/// A regular file's entry that git re-hashes on every status: its mtime is not
/// older than the index's, in seconds (git's own test, `is_racy_timestamp`).
fn racy(entry: &gix::index::Entry, index_secs: i64) -> bool {
    use gix::index::entry::{Flags, Mode};
    (entry.mode == Mode::FILE || entry.mode == Mode::FILE_EXECUTABLE)
        && !entry
            .flags
            .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
        && i64::from(entry.stat.mtime.secs) >= index_secs
}

/// The file is exactly as the checkout left it: the stat its entry recorded.
fn as_checked_out(entry: &gix::index::Entry, meta: &std::fs::Metadata) -> bool {
    let s = &entry.stat;
    i64::from(s.mtime.secs) == meta.mtime()
        && i64::from(s.mtime.nsecs) == meta.mtime_nsec()
        && u64::from(s.size) == meta.len() & u64::from(u32::MAX)
        && u64::from(s.ino) == meta.ino() & u64::from(u32::MAX)
}
