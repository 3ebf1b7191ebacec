//! Worktree status: what makes a worktree not clean ([`Dirt`]).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::hidden::{
    count_files, disposable_patterns, hidden_by, hidings, is_gitignore, split_caches,
    unseen_changes,
};
use super::nested::nested_of;
use super::shared::SharedObjects;
use super::special::untracked_special_files;
use super::submodules::submodule_changes;
use super::threads::{in_order, io_threads, on_threads};
use super::{Dirt, Oid, Repo};
use crate::model::error::GitFailed;
use crate::model::{Ignored, Nested};

/// What [`Repo::nested_many`] looks at for one session.
#[derive(Clone, Debug, Default)]
pub struct NestedTarget {
    /// The worktree directory, when it is there.
    pub worktree: Option<PathBuf>,
    /// Its admin entry, whose `modules/` may hold submodule git dirs.
    pub admin_id: Option<String>,
    /// What the worktree's status found (to walk only what status did not
    /// look into, and count what goes with the worktree); `None`: walk it all.
    pub map: Option<StatusMap>,
}

/// From a worktree's status: its ignored entries (each with whether it is a
/// directory). The directories holding tracked files are read from its index
/// again when the walk needs them, not kept: on a 13,000-file repository they
/// are 2,500 paths a session, 50 MiB over 200 sessions held at once.
#[derive(Clone, Debug, Default)]
pub struct StatusMap {
    pub ignored: Vec<(PathBuf, bool)>,
    /// Untracked repositories status did not enter ([`Dirt::repositories`]).
    pub repositories: Vec<PathBuf>,
    /// Untracked directories on another device ([`Dirt::mounts`]).
    pub mounts: Vec<PathBuf>,
}

impl StatusMap {
    pub fn of(dirt: &Dirt) -> StatusMap {
        StatusMap {
            ignored: dirt.ignored.clone(),
            repositories: dirt.repositories.clone(),
            mounts: dirt.mounts.clone(),
        }
    }
}

impl Repo {
    /// Modified/staged/untracked counts of the worktree at `path` (ignored files excluded).
    ///
    /// Done in-process with the gix status iterator. Untracked files are listed
    /// one by one (`--untracked-files=all`), so an untracked directory with `n`
    /// files counts `n`. Ignored files never count. `modified` covers index vs.
    /// worktree changes (including deletions and conflicts), `staged` covers
    /// HEAD tree vs. index changes.
    pub fn dirt(&self, worktree: &Path) -> Result<Dirt> {
        dirt_of(worktree, &self.cli_config, Some(&self.shared_objects()))
    }

    /// Dirt of a directory that was a linked worktree of this repository but has
    /// lost its admin entry (so neither git nor gix can open it as a worktree):
    /// its files are compared with the tree of `tip` through a temporary index, with
    /// the repository's ignore rules. `staged` is always 0: the index went with the
    /// admin entry.
    pub fn dirt_against(&self, dir: &Path, tip: Oid) -> Result<Dirt> {
        let index = self.temp_path("index")?;
        let result = (|| -> Result<Dirt> {
            // git would wait forever on a FIFO among its rule files.
            self.refuse_special_rule_files(Some(dir))?;
            let mut git_dir = std::ffi::OsString::from("--git-dir=");
            git_dir.push(&self.common_dir);
            let mut work_tree = std::ffi::OsString::from("--work-tree=");
            work_tree.push(dir);
            let env = [("GIT_INDEX_FILE", index.as_os_str())];
            let tip_id = super::gid(tip)?;
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
                    // As `dirt()`: case by case, whatever the repository says.
                    "-c".as_ref(),
                    "core.ignoreCase=false".as_ref(),
                    "status".as_ref(),
                    "--porcelain=v1".as_ref(),
                    "-z".as_ref(),
                    "--untracked-files=all".as_ref(),
                    "--ignored=matching".as_ref(),
                    "--no-renames".as_ref(),
                    // A submodule's `git status` would run what its own
                    // configuration names: bullpen looks at each itself.
                    "--ignore-submodules=all".as_ref(),
                ],
                &env,
            )?;
            let mut dirt = Dirt::default();
            let mut ignored: Vec<&[u8]> = Vec::new();
            let mut gitignores: Vec<&[u8]> = Vec::new();
            for entry in out.split(|b| *b == 0).filter(|e| e.len() >= 3) {
                // `XY path`: X is index vs. the main worktree's HEAD (meaningless
                // here), Y is this directory vs. the tip's tree.
                let path = &entry[3..];
                if is_gitignore(path) && matches!(entry[0], b'?' | b'!') {
                    gitignores.push(path);
                }
                match (entry[0], entry[1]) {
                    (b'!', b'!') => ignored.push(path),
                    (b'?', b'?') => dirt.untracked += 1,
                    (_, b' ') => {}
                    (_, b'D') => dirt.deleted += 1,
                    _ => dirt.modified += 1,
                }
            }
            let (modified, deleted) = submodule_changes(&self.repo, tip_id, dir, &self.cli_config)?;
            dirt.modified += modified;
            dirt.deleted += deleted;
            if !gitignores.is_empty() && !ignored.is_empty() {
                // Which rule ignores each: `check-ignore -v` names its file.
                let mut counts = vec![0usize; gitignores.len()];
                let mut input = Vec::new();
                for p in &ignored {
                    input.extend_from_slice(p);
                    input.push(0);
                }
                let args: [&std::ffi::OsStr; 6] = [
                    git_dir.as_os_str(),
                    work_tree.as_os_str(),
                    "check-ignore".as_ref(),
                    "-v".as_ref(),
                    "-z".as_ref(),
                    "--stdin".as_ref(),
                ];
                let out = match self.run_git_input(Some(dir), &args, &env, Some(&input)) {
                    Ok(out) => out,
                    // Exit 1, silent: none of them is ignored (any more).
                    Err(e)
                        if e.downcast_ref::<GitFailed>()
                            .is_some_and(GitFailed::none_matched) =>
                    {
                        Vec::new()
                    }
                    Err(e) => return Err(e),
                };
                let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
                for f in fields.chunks(4).filter(|f| f.len() == 4) {
                    let (source, path) = (f[0], f[3]);
                    let Some(i) = gitignores.iter().position(|g| *g == source) else {
                        continue;
                    };
                    if path == source {
                        continue;
                    }
                    counts[i] += match path.strip_suffix(b"/") {
                        Some(d) => count_files(&dir.join(std::ffi::OsStr::from_bytes(d)))?,
                        None => 1,
                    };
                }
                let hiding = hidings(&gitignores, counts);
                (dirt.hiding, dirt.caches) =
                    split_caches(dir, hiding, &disposable_patterns(&self.repo));
            }
            Ok(dirt)
        })();
        let _ = std::fs::remove_file(&index);
        let _ = std::fs::remove_file(index.with_extension("lock"));
        let _ = std::fs::remove_dir(self.temp_index_dir()); // only when empty: leave no trace

        result.with_context(|| {
            format!(
                "could not compare {} with the session branch (its worktree admin entry is gone)",
                dir.display()
            )
        })
    }

    /// Where [`Repo::dirt_against`] puts its temporary indexes (and
    /// [`Repo::merge_trees`] its temporary object directories).
    fn temp_index_dir(&self) -> PathBuf {
        self.common_dir.join("bullpen").join("tmp")
    }

    /// `<common>/bullpen/tmp/<what>-<pid>-<nanos>`, its directory made: the
    /// name every real gc's sweep knows (the pid says whose it is).
    fn temp_path(&self, what: &str) -> Result<PathBuf> {
        let root = self.temp_index_dir();
        std::fs::create_dir_all(&root)
            .with_context(|| format!("could not create {}", root.display()))?;
        Ok(root.join(format!(
            "{what}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        )))
    }

    /// A new empty directory `<common>/bullpen/tmp/<what>-<pid>-<nanos>`.
    pub(super) fn temp_dir_named(&self, what: &str) -> Result<PathBuf> {
        let dir = self.temp_path(what)?;
        std::fs::create_dir(&dir).with_context(|| format!("could not create {}", dir.display()))?;
        Ok(dir)
    }

    /// Remove `<common>/bullpen/tmp` if it is empty: leave no trace.
    pub(super) fn remove_temp_root(&self) {
        let _ = std::fs::remove_dir(self.temp_index_dir());
    }

    /// Remove the temporary indexes (and their `.lock`s) that a gc killed while it
    /// compared a directory left behind: `index-<pid>-<nanos>` whose `<pid>` is not
    /// a live process (`alive`); and the temporary object directories of merges
    /// (`objects-<pid>-<nanos>`) the same way. A live pid's file is kept (that gc may still be
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
            let gone = if name.to_str().is_some_and(|n| n.starts_with("objects-")) {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            match gone {
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
        let config = &self.cli_config;
        let shared = self.shared_objects();
        on_threads(worktrees, |w| dirt_of(w, config, Some(&shared)))
    }

    /// [`Repo::dirt_many`], each result handed to `each` (on this thread, in
    /// the order of `worktrees`) as soon as it and those before it are done;
    /// `each` returning false stops it. Two threads a core (`io_threads`:
    /// a status is mostly the kernel's `lstat`s; see BENCHMARKS.md).
    pub fn dirt_each(&self, worktrees: &[PathBuf], each: impl FnMut(usize, Result<Dirt>) -> bool) {
        let config = &self.cli_config;
        let shared = self.shared_objects();
        let status = |w: &PathBuf| dirt_of(w, config, Some(&shared));
        in_order(io_threads(), worktrees, status, each)
    }

    /// [`Repo::nested_repositories`] of many (worktree, admin entry, ignored
    /// entries) targets, on a few threads: each walks the whole tree, ignored
    /// directories included, and counts what the ignored entries hold.
    pub fn nested_many(&self, targets: &[NestedTarget]) -> Vec<Result<(Vec<Nested>, Ignored)>> {
        let modules: Vec<Option<PathBuf>> = targets
            .iter()
            .map(|t| t.admin_id.as_deref().map(|a| self.modules_dir(a)))
            .collect();
        let items: Vec<(&NestedTarget, &Option<PathBuf>)> = targets.iter().zip(&modules).collect();
        let config = &self.cli_config;
        on_threads(&items, |(t, m)| {
            nested_of(t.worktree.as_deref(), m.as_deref(), t.map.as_ref(), config)
        })
    }
}

/// The pid in the name of a temporary index of [`Repo::dirt_against`]
/// (`index-<pid>-<nanos>`, or its `.lock`); `None` for any other name.
fn temp_index_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("index-").or_else(|| {
        name.strip_prefix("objects-")
            .filter(|r| !r.ends_with(".lock"))
    })?;
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
/// the configuration of `git -c` (`cli_config`) and, for a worktree of this
/// repository, its object store (`shared`).
/// Beyond what `git status` shows: `.gitignore` files not in the index that hide
/// files ([`Dirt::hiding`]), and skip-worktree or assume-unchanged entries whose
/// file differs from the index ([`Dirt::unseen`]).
pub(super) fn dirt_of(
    worktree: &Path,
    cli_config: &[gix::bstr::BString],
    shared: Option<&SharedObjects>,
) -> Result<Dirt> {
    use gix::bstr::ByteSlice;
    use gix::dir::entry::{Kind, Status};
    use gix::status::index_worktree::iter::Summary;
    use gix::status::index_worktree::Item;
    // `core.ignoreCase=true` (a repository made on macOS, copied here) makes an
    // untracked `README` beside a tracked `readme` look tracked, to git too: gc
    // looks case by case, which can only ever find more.
    let mut overrides = cli_config.to_vec();
    overrides.push("core.ignoreCase=false".into());
    // A file edited with its size and modification time put back (`touch -r`,
    // `cp -p`) looks untouched to a stat check unless it compares the change
    // time, which every write sets and nothing sets back, to the nanosecond
    // (git records nanoseconds in the index; gix compares whole seconds by
    // default, so an edit in the second of the last refresh went unseen).
    // Stricter can only hash more files, never call one clean that is not.
    overrides.push("core.trustctime=true".into());
    overrides.push("core.checkStat=default".into());
    overrides.push("gitoxide.core.useNsec=true".into());
    super::special::refuse_special_git_files(worktree)?;
    let options = super::pinned::gix_options(overrides);
    let mut repo = gix::open_opts(worktree, options).with_context(|| {
        format!(
            "could not open the worktree {} with gix",
            worktree.display()
        )
    })?;
    if let Some(shared) = shared {
        shared.lend_to(&mut repo);
    }
    let index = repo
        .index_or_empty()
        .with_context(|| format!("could not read the index of {}", worktree.display()))?;
    let mut dirt = Dirt {
        staged: staged(&repo, &index).with_context(|| {
            format!(
                "could not compare the index of {} with HEAD",
                worktree.display()
            )
        })?,
        ..Dirt::default()
    };
    let walk = repo.dirwalk_options().with_context(|| {
        format!(
            "could not read the status options of {}",
            worktree.display()
        )
    })?;
    let iter = repo
        .status(gix::progress::Discard)
        .with_context(|| format!("could not get the status of {}", worktree.display()))?
        // `status.showUntrackedFiles=no` turns gix's directory walk off, and
        // with it every untracked and ignored entry: set it whatever the
        // configuration says (git's `--untracked-files=all`).
        .index_worktree_options_mut(|o| o.dirwalk_options = Some(walk))
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        // One thread for the index against the files: gc already runs a status
        // per worktree on every core, and more threads only cost switching.
        .index_worktree_options_mut(|o| o.thread_limit = Some(1))
        // Ignored entries too (an ignored directory as one entry, not entered):
        // some may be hidden by a `.gitignore` that is not in the index.
        .dirwalk_options(|opts| {
            opts.empty_patterns_match_prefix(false)
                .emit_ignored(Some(gix::dir::walk::EmissionMode::Matching))
        })
        .into_index_worktree_iter(Vec::new())
        .with_context(|| format!("could not get the status of {}", worktree.display()))?;
    let mut ignored = Vec::new();
    let mut gitignores = Vec::new();
    let mut repositories = Vec::new();
    let mut untracked_dirs = std::collections::BTreeSet::new();
    for item in iter {
        let item =
            item.with_context(|| format!("could not get the status of {}", worktree.display()))?;
        if let Item::DirectoryContents { entry, .. } = &item {
            let name = entry.rela_path.rsplit(|b| *b == b'/').next();
            if name == Some(b".gitignore".as_slice()) && entry.disk_kind == Some(Kind::File) {
                gitignores.push(entry.rela_path.clone());
            }
            if matches!(entry.status, Status::Untracked) {
                if entry.disk_kind == Some(Kind::Repository) {
                    // A repository status did not enter.
                    repositories.push(entry.rela_path.clone());
                } else {
                    untracked_dirs.extend(
                        entry
                            .rela_path
                            .rsplit_once_str("/")
                            .map(|(dir, _)| gix::bstr::BString::from(dir)),
                    );
                }
            }
            if matches!(entry.status, Status::Ignored(_)) {
                ignored.push((
                    entry.rela_path.clone(),
                    entry.disk_kind == Some(Kind::Directory),
                ));
                continue;
            }
        }
        match item.summary() {
            None => {}
            Some(Summary::Added) => dirt.untracked += 1,
            Some(Summary::Removed) => dirt.deleted += 1,
            Some(_) => dirt.modified += 1,
        }
    }
    // What status leaves out: git tracks no FIFO, socket or device.
    let (specials, unseen_repositories) =
        untracked_special_files(&repo, &index, worktree, &ignored).with_context(|| {
            format!("could not look for special files in {}", worktree.display())
        })?;
    dirt.untracked += specials.len();
    dirt.ignored = ignored
        .iter()
        .map(|(p, dir)| (PathBuf::from(std::ffi::OsStr::from_bytes(p)), *dir))
        .collect();
    dirt.repositories = repositories
        .iter()
        .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
        .collect();
    let (repositories, mounts) = look_closer(worktree, &untracked_dirs);
    dirt.repositories.extend(repositories);
    dirt.repositories.extend(unseen_repositories);
    dirt.repositories.sort();
    dirt.repositories.dedup();
    dirt.mounts = mounts;
    if !gitignores.is_empty() {
        let hiding = hidden_by(&repo, &index, &gitignores, &ignored).with_context(|| {
            format!("could not read the ignore rules of {}", worktree.display())
        })?;
        (dirt.hiding, dirt.caches) = split_caches(worktree, hiding, &disposable_patterns(&repo));
    }
    dirt.unseen = unseen_changes(&repo, &index).with_context(|| {
        format!(
            "could not compare skip-worktree and assume-unchanged files of {} with the index",
            worktree.display()
        )
    })?;
    Ok(dirt)
}

/// Of the directories holding untracked files (and their ancestors): those
/// with a `.git` entry that status took for no repository (a gitdir file
/// pointing nowhere: a worktree whose repository moved; status skips every
/// `.git` by name and lists the rest as untracked files), bare repositories
/// (their files look untracked), and those on another
/// device than the directory holding them (mount points status walked into).
/// One `lstat` of each and of its `.git`.
fn look_closer(
    worktree: &Path,
    dirs: &std::collections::BTreeSet<gix::bstr::BString>,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    use gix::bstr::ByteSlice;
    use std::os::unix::fs::MetadataExt;
    let dev_of = |rel: &Path| worktree.join(rel).symlink_metadata().ok().map(|m| m.dev());
    let top = dev_of(Path::new(""));
    let mut devs: std::collections::HashMap<&[u8], Option<u64>> = std::collections::HashMap::new();
    let mut repos = Vec::new();
    for dir in dirs {
        let mut at: &[u8] = dir.as_slice();
        while !at.is_empty() && !devs.contains_key(at) {
            let rel = Path::new(std::ffi::OsStr::from_bytes(at));
            devs.insert(at, dev_of(rel));
            let here = worktree.join(rel);
            if here.join(".git").symlink_metadata().is_ok() || super::nested::is_bare_git_dir(&here)
            {
                repos.push(rel.to_path_buf());
            }
            at = at.rsplit_once_str("/").map_or(&[], |(parent, _)| parent);
        }
    }
    let mut mounts: Vec<PathBuf> = devs
        .iter()
        .filter(|(at, dev)| {
            let parent = at
                .rsplit_once_str("/")
                .map_or(top, |(p, _)| devs.get(p).copied().flatten());
            dev.is_some() && parent.is_some() && **dev != parent
        })
        .map(|(at, _)| PathBuf::from(std::ffi::OsStr::from_bytes(at)))
        .collect();
    repos.sort();
    mounts.sort();
    (repos, mounts)
}

/// The directories holding tracked files (and the submodule paths) of the
/// worktree at `worktree`, from its index: where a repository nested in it
/// could be that status does not look into.
pub(super) fn tracked_dirs_at(
    worktree: &Path,
    cli_config: &[gix::bstr::BString],
) -> Result<Vec<PathBuf>> {
    super::special::refuse_special_git_files(worktree)?;
    let options = super::pinned::gix_options(cli_config.to_vec());
    let repo = gix::open_opts(worktree, options).with_context(|| {
        format!(
            "could not open the worktree {} with gix",
            worktree.display()
        )
    })?;
    let index = repo
        .index_or_empty()
        .with_context(|| format!("could not read the index of {}", worktree.display()))?;
    Ok(tracked_dirs(&index))
}

/// Every directory holding a tracked file (its ancestors too) and every
/// submodule path of `index`, relative, sorted.
fn tracked_dirs(index: &gix::index::State) -> Vec<PathBuf> {
    use gix::index::entry::Mode;
    let mut dirs: std::collections::BTreeSet<&[u8]> = std::collections::BTreeSet::new();
    for e in index.entries() {
        let path: &[u8] = e.path(index);
        if e.mode == Mode::COMMIT {
            dirs.insert(path);
        }
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|b| *b == b'/') {
            if !dirs.insert(&path[..slash]) {
                break; // its ancestors are in already
            }
            end = slash;
        }
    }
    dirs.into_iter()
        .map(|d| PathBuf::from(std::ffi::OsStr::from_bytes(d)))
        .collect()
}

/// Changes staged in `index` against `HEAD`'s tree. Where the index's cache
/// tree (its `TREE` extension, which git keeps) is valid at the top and names
/// `HEAD`'s tree, there are none, and not one tree is read: comparing the whole
/// tree would read every tree object of the commit, deltas and all (on
/// symfony/symfony, 50 MiB of the pack per worktree).
fn staged(repo: &gix::Repository, index: &gix::index::State) -> Result<usize> {
    let head = repo
        .head_tree_id_or_empty()
        .context("could not read the tree of HEAD")?
        .detach();
    if index
        .tree()
        .is_some_and(|t| t.num_entries.is_some() && t.id == head)
    {
        return Ok(0);
    }
    let mut n = 0;
    repo.tree_index_status(
        &head,
        index,
        None,
        gix::status::tree_index::TrackRenames::AsConfigured,
        |_, _, _| {
            n += 1;
            Ok(std::ops::ControlFlow::Continue(()))
        },
    )
    .context("could not compare the index with HEAD")?;
    Ok(n)
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
        assert_eq!(temp_index_pid("objects-42-17"), Some(42));
        assert_eq!(temp_index_pid("objects-42-17.lock"), None);
    }
}
