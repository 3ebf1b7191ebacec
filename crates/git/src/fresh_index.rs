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
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
        let (entries, paths) = index.entries_mut_and_pathbacking();
        let work: Vec<Racy<'_>> = entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| racy(entry, index_secs))
            .filter_map(|(at, entry)| {
                let path = gix::path::from_bstr(entry.path_in(paths)).ok()?;
                Some(Racy {
                    at,
                    path,
                    stat: entry.stat,
                    id: entry.id,
                })
            })
            .collect();
        // In path order, a contiguous share each: a thread stays in few
        // directories (`sys::in_dir` keeps the last one open).
        // Few entries (a small repository, or a checkout in an earlier second
        // than its index) are settled here, without asking for the cores or
        // starting a thread.
        let threads = match work.len() <= PER_THREAD {
            true => 1,
            false => super::threads::cores()
                .min(work.len().div_ceil(PER_THREAD))
                .max(1),
        };
        let share = work.len().div_ceil(threads).max(1);
        let settled = match threads {
            1 => vec![settle(worktree, &work, back, in_process)],
            _ => std::thread::scope(|scope| {
                let handles: Vec<_> = work
                    .chunks(share)
                    .map(|some| scope.spawn(move || settle(worktree, some, back, in_process)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(anyhow::anyhow!("a thread of the settle failed"))
                        })
                    })
                    .collect::<Vec<_>>()
            }),
        };
        let mut moved = 0;
        let mut done = vec![false; entries.len()];
        for some in settled {
            for (at, stat) in some? {
                if let (Some(stat), Some(entry)) = (stat, entries.get_mut(at)) {
                    entry.stat = stat;
                    if let Some(d) = done.get_mut(at) {
                        *d = true;
                    }
                }
                moved += 1;
            }
        }
        // The index written again here may be a second younger than the racy
        // entries left as they were (an edit in checkout's own jiffy, the same
        // size, is invisible to their stat): git smudges such an entry when it
        // writes an index (`ce_smudge_racily_clean_entry`), gix does not. A
        // size of 0 on a blob that is not empty makes git hash it again.
        if moved > 0 && in_process {
            for (entry, done) in entries.iter_mut().zip(&done) {
                if !done && racy(entry, index_secs) && !entry.id.is_empty_blob() {
                    entry.stat.size = 0;
                }
            }
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

/// Below this many racily clean entries per thread, one thread does them all
/// (a thread costs about as much as a few dozen files).
const PER_THREAD: usize = 512;

/// The buffer each thread reads files through.
const BUFFER: usize = 64 * 1024;

/// A racily clean entry: where it is in the index, its path, what it recorded.
struct Racy<'a> {
    at: usize,
    path: std::borrow::Cow<'a, Path>,
    stat: gix::index::entry::Stat,
    id: gix::ObjectId,
}

/// Move back the mtime of each of `work`'s files still exactly as git wrote
/// it. Returns the entries moved back, each with its new stat when `hash`
/// (the content read and found to be the entry's blob; without `hash`,
/// `git update-index` reads them).
///
/// The order is what makes it safe: the mtime is set first, the content read
/// after, and the stat taken last must still show that mtime. A write before
/// the mtime was set shows in the content (or the size); one after it sets
/// the mtime to now. Neither is ever recorded as clean.
fn settle(
    worktree: &Path,
    work: &[Racy<'_>],
    back: SystemTime,
    hash: bool,
) -> Result<Vec<(usize, Option<gix::index::entry::Stat>)>> {
    let mut opener = crate::sys::in_dir::Opener::new(worktree);
    let mut buf = vec![0u8; if hash { BUFFER } else { 0 }];
    let mut out = Vec::with_capacity(work.len());
    for item in work {
        let path = || worktree.join(&item.path);
        let Some(mut file) = opener
            .open(&item.path)
            .with_context(|| format!("cannot open {}", path().display()))?
        else {
            continue;
        };
        let meta = file
            .metadata()
            .with_context(|| format!("cannot look at {}", path().display()))?;
        if !meta.is_file() || !as_checked_out(&item.stat, &meta) {
            continue;
        }
        let was = meta
            .modified()
            .with_context(|| format!("{} has no usable mtime", path().display()))?;
        file.set_modified(back)
            .with_context(|| format!("cannot set the mtime of {}", path().display()))?;
        if !hash {
            out.push((item.at, None));
            continue;
        }
        // Not the blob as it is (a filter, an edit): git's to judge, and the
        // file as git left it.
        if !holds_blob(&mut file, meta.len(), &item.id, &mut buf)
            .with_context(|| format!("cannot read {}", path().display()))?
        {
            file.set_modified(was)
                .with_context(|| format!("cannot set the mtime of {}", path().display()))?;
            continue;
        }
        let now = gix::index::fs::Metadata::from_file(&file)
            .with_context(|| format!("cannot look at {}", path().display()))?;
        if now.modified() != Some(back) || now.len() != meta.len() {
            continue;
        }
        let stat = gix::index::entry::Stat::from_fs(&now)
            .with_context(|| format!("{} has no usable mtime", path().display()))?;
        out.push((item.at, Some(stat)));
    }
    Ok(out)
}

/// Whether `file`'s next `len` bytes, and no fewer, are the blob `id`:
/// streamed through `buf` (a file of up to its size: one read).
fn holds_blob(
    file: &mut std::fs::File,
    len: u64,
    id: &gix::ObjectId,
    buf: &mut [u8],
) -> Result<bool> {
    let mut hasher = gix::hash::hasher(id.kind());
    hasher.update(&gix::objs::encode::loose_header(gix::objs::Kind::Blob, len));
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        let Some(to) = buf.get_mut(..want) else {
            bail!("no buffer to read into");
        };
        let n = match file.read(to) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        hasher.update(to.get(..n).unwrap_or_default());
        left -= n as u64;
    }
    match hasher.try_finalize() {
        Ok(got) => Ok(got == *id),
        // A collision attack is not the blob.
        Err(_) => Ok(false),
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
fn as_checked_out(s: &gix::index::entry::Stat, meta: &std::fs::Metadata) -> bool {
    i64::from(s.mtime.secs) == meta.mtime()
        && i64::from(s.mtime.nsecs) == meta.mtime_nsec()
        && u64::from(s.size) == meta.len() & u64::from(u32::MAX)
        && u64::from(s.ino) == meta.ino() & u64::from(u32::MAX)
}
