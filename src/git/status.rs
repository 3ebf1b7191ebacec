//! Worktree status: what makes a worktree not clean ([`Dirt`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::nested::nested_of;
use super::{Dirt, Oid, Repo};
use crate::model::Nested;

impl Repo {
    /// Modified/staged/untracked counts of the worktree at `path` (ignored files excluded).
    ///
    /// Done in-process with the gix status iterator. Untracked files are listed
    /// one by one (`--untracked-files=all`), so an untracked directory with `n`
    /// files counts `n`. Ignored files never count. `modified` covers index vs.
    /// worktree changes (including deletions and conflicts), `staged` covers
    /// HEAD tree vs. index changes.
    pub fn dirt(&self, worktree: &Path) -> Result<Dirt> {
        dirt_of(worktree)
    }

    /// Dirt of a directory that was a linked worktree of this repository but has
    /// lost its admin entry (so neither git nor gix can open it as a worktree):
    /// its files are compared with the tree of `tip` through a temporary index, with
    /// the repository's ignore rules. `staged` is always 0: the index went with the
    /// admin entry.
    pub fn dirt_against(&self, dir: &Path, tip: Oid) -> Result<Dirt> {
        let tmp_dir = self.common_dir.join("bullpen").join("tmp");
        std::fs::create_dir_all(&tmp_dir)
            .with_context(|| format!("could not create {}", tmp_dir.display()))?;
        let index = tmp_dir.join(format!(
            "index-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let result = (|| -> Result<Dirt> {
            let mut git_dir = std::ffi::OsString::from("--git-dir=");
            git_dir.push(&self.common_dir);
            let mut work_tree = std::ffi::OsString::from("--work-tree=");
            work_tree.push(dir);
            let env = [("GIT_INDEX_FILE", index.as_os_str())];
            let tip = tip.to_string();
            self.run_git_env(
                Some(dir),
                &[
                    git_dir.as_os_str(),
                    work_tree.as_os_str(),
                    "read-tree".as_ref(),
                    tip.as_ref(),
                ],
                &env,
            )?;
            let out = self.run_git_env(
                Some(dir),
                &[
                    git_dir.as_os_str(),
                    work_tree.as_os_str(),
                    "-c".as_ref(),
                    "core.fsmonitor=false".as_ref(),
                    "status".as_ref(),
                    "--porcelain=v1".as_ref(),
                    "-z".as_ref(),
                    "--untracked-files=all".as_ref(),
                    "--no-renames".as_ref(),
                    "--ignore-submodules=none".as_ref(),
                ],
                &env,
            )?;
            let mut dirt = Dirt::default();
            for entry in out.split(|b| *b == 0).filter(|e| e.len() >= 3) {
                // `XY path`: X is index vs. the main worktree's HEAD (meaningless
                // here), Y is this directory vs. the tip's tree.
                match (entry[0], entry[1]) {
                    (b'?', b'?') => dirt.untracked += 1,
                    (_, b' ') => {}
                    (_, b'D') => dirt.deleted += 1,
                    _ => dirt.modified += 1,
                }
            }
            Ok(dirt)
        })();
        let _ = std::fs::remove_file(&index);
        let _ = std::fs::remove_file(index.with_extension("lock"));
        let _ = std::fs::remove_dir(&tmp_dir); // only when empty: leave no trace

        result.with_context(|| {
            format!(
                "could not compare {} with the session branch (its worktree admin entry is gone)",
                dir.display()
            )
        })
    }

    /// [`Repo::dirt`] of many worktrees, on a few threads: with hundreds of
    /// sessions the status walks dominate gc's time.
    pub fn dirt_many(&self, worktrees: &[PathBuf]) -> Vec<Result<Dirt>> {
        on_threads(worktrees, |w| dirt_of(w))
    }

    /// [`Repo::nested_repositories`] of many (worktree, admin entry) pairs, on a
    /// few threads: each walks the whole tree, ignored directories included.
    pub fn nested_many(
        &self,
        targets: &[(Option<PathBuf>, Option<String>)],
    ) -> Vec<Result<Vec<Nested>>> {
        let items: Vec<(Option<PathBuf>, Option<PathBuf>)> = targets
            .iter()
            .map(|(w, a)| (w.clone(), a.as_deref().map(|a| self.modules_dir(a))))
            .collect();
        on_threads(&items, |(w, m)| nested_of(w.as_deref(), m.as_deref()))
    }
}

/// `f` over `items` on a few threads, results in order. A thread that panics
/// gives errors for its items, never a panic here.
fn on_threads<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> Result<T> + Sync) -> Vec<Result<T>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(items.len().max(1));
    if threads <= 1 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .zip(items.chunks(chunk))
            .flat_map(|(h, part)| {
                h.join().unwrap_or_else(|_| {
                    part.iter()
                        .map(|_| Err(anyhow::anyhow!("could not be computed (a thread failed)")))
                        .collect()
                })
            })
            .collect()
    })
}

/// The body of [`Repo::dirt`], free of `&Repo` so that threads can share it
/// (a gix repository is not `Sync`; each call opens its worktree anyway).
pub(super) fn dirt_of(worktree: &Path) -> Result<Dirt> {
    use gix::status::index_worktree::iter::Summary;
    let repo = gix::open(worktree).with_context(|| {
        format!(
            "could not open the worktree {} with gix",
            worktree.display()
        )
    })?;
    let iter = repo
        .status(gix::progress::Discard)
        .with_context(|| format!("could not get the status of {}", worktree.display()))?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .dirwalk_options(|opts| opts.empty_patterns_match_prefix(false))
        .into_iter(Vec::new())
        .with_context(|| format!("could not get the status of {}", worktree.display()))?;
    let mut dirt = Dirt::default();
    for item in iter {
        let item =
            item.with_context(|| format!("could not get the status of {}", worktree.display()))?;
        match item {
            gix::status::Item::TreeIndex(_) => dirt.staged += 1,
            gix::status::Item::IndexWorktree(item) => match item.summary() {
                None => {}
                Some(Summary::Added) => dirt.untracked += 1,
                Some(Summary::Removed) => dirt.deleted += 1,
                Some(_) => dirt.modified += 1,
            },
        }
    }
    Ok(dirt)
}
