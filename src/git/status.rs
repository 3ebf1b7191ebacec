//! Worktree status: what makes a worktree not clean ([`Dirt`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{Dirt, Oid, Repo};

impl Repo {
    /// Modified/staged/untracked counts of the worktree at `path` (ignored files excluded).
    ///
    /// Done in-process with the gix status iterator. Untracked files are listed
    /// one by one (`--untracked-files=all`), so an untracked directory with `n`
    /// files counts `n`. Ignored files never count. `modified` covers index vs.
    /// worktree changes (including deletions and conflicts), `staged` covers
    /// HEAD tree vs. index changes.
    pub fn dirt(&self, worktree: &Path) -> Result<Dirt> {
        dirt_of(worktree, &self.cli_config)
    }

    /// Dirt of a directory that was a linked worktree of this repository but has
    /// lost its admin entry (so neither git nor gix can open it as a worktree):
    /// its files are compared with the tree of `tip` through a temporary index, with
    /// the repository's ignore rules. `staged` is always 0: the index went with the
    /// admin entry.
    pub fn dirt_against(&self, dir: &Path, tip: Oid) -> Result<Dirt> {
        let tmp_dir = self.temp_index_dir();
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

    /// Where [`Repo::dirt_against`] puts its temporary indexes.
    fn temp_index_dir(&self) -> PathBuf {
        self.common_dir.join("bullpen").join("tmp")
    }

    /// Remove the temporary indexes (and their `.lock`s) that a gc killed while it
    /// compared a directory left behind: `index-<pid>-<nanos>` whose `<pid>` is not
    /// a live process (`alive`). A live pid's file is kept (that gc may still be
    /// using it; a reused pid keeps it until that process ends). Other names are
    /// not ours and stay. The directory goes when it is empty. Returns what was
    /// removed. Nothing here is work: a temporary index only ever holds a tree that
    /// is in the object store.
    pub fn sweep_temp_indexes(&self, alive: impl Fn(u32) -> bool) -> Result<Vec<PathBuf>> {
        let dir = self.temp_index_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => {
                return Err(
                    anyhow::Error::new(err).context(format!("could not list {}", dir.display()))
                )
            }
        };
        let mut removed = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("could not list {}", dir.display()))?;
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(temp_index_pid) else {
                continue;
            };
            if alive(pid) {
                continue;
            }
            let path = entry.path();
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(anyhow::Error::new(err)
                        .context(format!("could not remove {}", path.display())))
                }
            }
        }
        let _ = std::fs::remove_dir(&dir); // only when empty
        Ok(removed)
    }

    /// [`Repo::dirt`] of many worktrees, on a few threads: with hundreds of
    /// sessions the status walks dominate gc's time.
    pub fn dirt_many(&self, worktrees: &[PathBuf]) -> Vec<Result<Dirt>> {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(worktrees.len().max(1));
        if threads <= 1 {
            return worktrees
                .iter()
                .map(|w| dirt_of(w, &self.cli_config))
                .collect();
        }
        let chunk = worktrees.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = worktrees
                .chunks(chunk)
                .map(|part| {
                    let config = &self.cli_config;
                    scope.spawn(move || part.iter().map(|w| dirt_of(w, config)).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .zip(worktrees.chunks(chunk))
                .flat_map(|(h, part)| {
                    h.join().unwrap_or_else(|_| {
                        part.iter()
                            .map(|w| {
                                Err(anyhow::anyhow!(
                                    "the status of {} could not be computed (a thread failed)",
                                    w.display()
                                ))
                            })
                            .collect()
                    })
                })
                .collect()
        })
    }
}

/// The pid in the name of a temporary index of [`Repo::dirt_against`]
/// (`index-<pid>-<nanos>`, or its `.lock`); `None` for any other name.
fn temp_index_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("index-")?;
    let rest = rest.strip_suffix(".lock").unwrap_or(rest);
    let (pid, nanos) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(nanos) {
        return None;
    }
    pid.parse().ok()
}

/// The body of [`Repo::dirt`], free of `&Repo` so that threads can share it
/// (a gix repository is not `Sync`; each call opens its worktree anyway), with
/// the configuration of `git -c` (`cli_config`).
fn dirt_of(worktree: &Path, cli_config: &[gix::bstr::BString]) -> Result<Dirt> {
    use gix::status::index_worktree::iter::Summary;
    let options = gix::open::Options::default().cli_overrides(cli_config.to_vec());
    let repo = gix::open_opts(worktree, options).with_context(|| {
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
                Some(_) => dirt.modified += 1,
            },
        }
    }
    Ok(dirt)
}

#[cfg(test)]
mod tests {
    use super::temp_index_pid;

    #[test]
    fn only_names_of_temporary_indexes_are_recognised() {
        assert_eq!(temp_index_pid("index-42-1700000000000000000"), Some(42));
        assert_eq!(temp_index_pid("index-42-17.lock"), Some(42));
        assert_eq!(temp_index_pid("index-42"), None);
        assert_eq!(temp_index_pid("index--1"), None);
        assert_eq!(temp_index_pid("index-x-1"), None);
        assert_eq!(temp_index_pid("index-1-2-3"), None);
        assert_eq!(temp_index_pid("index-99999999999-1"), None);
        assert_eq!(temp_index_pid("notes.txt"), None);
    }
}
