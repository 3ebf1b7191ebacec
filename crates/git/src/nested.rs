//! Repositories that deleting a worktree would delete with it: submodules and any
//! other repository nested anywhere inside (ignored or not: a `.git` directory or
//! file below the top), and the submodule git dirs git keeps under the worktree's
//! admin entry (`<common>/worktrees/<id>/modules/`, where a deinitialised
//! submodule's only copy lives). Each is described with what it holds that is
//! not published: its branches, stash and detached HEAD that none of its own
//! remote-tracking refs reach, and its dirt.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::history::remote_tips;
use super::status::{dirt_of, tracked_dirs_at, StatusMap};
use super::Repo;
use crate::model::{Ignored, Nested, NestedKind};

impl Repo {
    /// The repositories nested in `worktree` (when given and present) and the
    /// git dirs under the admin entry `admin_id`'s `modules/` (when given).
    pub fn nested_repositories(
        &self,
        worktree: Option<&Path>,
        admin_id: Option<&str>,
    ) -> Result<Vec<Nested>> {
        nested_of(
            worktree,
            admin_id.map(|a| self.modules_dir(a)).as_deref(),
            None,
            &self.cli_config,
        )
        .map(|(nested, _)| nested)
    }

    /// `<common>/worktrees/<admin_id>/modules`.
    pub(super) fn modules_dir(&self, admin_id: &str) -> PathBuf {
        self.common_dir
            .join("worktrees")
            .join(admin_id)
            .join("modules")
    }
}

/// [`Repo::nested_repositories`] without `&Repo` (threads share it). With the
/// worktree's status (`map`), only what status did not look into is looked at:
/// a `.git` in each directory holding tracked files, the untracked repositories
/// status did not enter, and the ignored entries whole, whose files it counts;
/// without, the whole tree. A file system mounted below the worktree (in
/// `mountinfo`, or a directory on another device) is one too: never entered,
/// and what it holds is not bullpen's to judge.
pub(super) fn nested_of(
    worktree: Option<&Path>,
    modules: Option<&Path>,
    map: Option<&StatusMap>,
    cli_config: &[gix::bstr::BString],
) -> Result<(Vec<Nested>, Ignored)> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut tally = Ignored::default();
    if let Some(top) = worktree.filter(|w| w.is_dir()) {
        let walk = match map {
            Some(map) => find_nested_mapped(top, map, cli_config)?,
            None => find_nested(top, false)?,
        };
        tally = walk.tally;
        for dir in mounts_below(top, walk.mounts)? {
            out.push(Nested {
                path: rel(top, &dir),
                kind: NestedKind::Mount,
                unpublished: Vec::new(),
                dirt: None,
            });
        }
        for (dir, dot_git_is_dir) in walk.repos {
            super::special::refuse_special_git_files(&dir)?;
            let repo = gix::open(&dir)
                .with_context(|| format!("could not open the repository at {}", dir.display()))?;
            seen.insert(canonical(repo.git_dir()));
            let kind = if dot_git_is_dir {
                NestedKind::Repository
            } else if repo.git_dir() != repo.common_dir() {
                // Its git dir names another as its common dir (`commondir`): git's
                // own test. (gix's `kind()` goes by the path, and takes a
                // submodule's git dir under `worktrees/<id>/modules/` for one.)
                NestedKind::Worktree {
                    locked: repo.git_dir().join("locked").exists(),
                }
            } else {
                NestedKind::Submodule
            };
            // A linked worktree's branches and reflogs live in its repository,
            // elsewhere: only a detached HEAD goes with it.
            let own_refs = !matches!(kind, NestedKind::Worktree { .. });
            // A bare repository has no checkout: only its refs. (By what is on
            // disk, not its config: a checkout whose `.git` says `core.bare` is
            // looked at, and cannot be.)
            let bare = dir.join(".git").symlink_metadata().is_err() && is_bare_git_dir(&dir);
            let dirt = match bare {
                true => None,
                // A repository of its own: its own objects.
                false => Some(dirt_of(&dir, cli_config, None)?),
            };
            out.push(Nested {
                path: rel(top, &dir),
                kind,
                unpublished: unpublished_refs(&repo, own_refs)
                    .with_context(|| format!("could not read the history of {}", dir.display()))?,
                dirt,
            });
        }
    }
    if let Some(modules) = modules {
        // `modules` is `<common>/worktrees/<id>/modules`: the entry's own refs.
        if let Some(refs) = modules.parent().map(worktree_refs).transpose()? {
            if !refs.is_empty() {
                out.push(Nested {
                    path: modules
                        .parent()
                        .unwrap_or(modules)
                        .to_string_lossy()
                        .into_owned(),
                    kind: NestedKind::WorktreeRefs,
                    unpublished: refs,
                    dirt: None,
                });
            }
        }
        for git_dir in find_git_dirs(modules)? {
            if seen.contains(&canonical(&git_dir)) {
                continue;
            }
            let repo = open_git_dir(&git_dir)?;
            out.push(Nested {
                path: git_dir.to_string_lossy().into_owned(),
                kind: NestedKind::SubmoduleGitDir,
                unpublished: unpublished_refs(&repo, true).with_context(|| {
                    format!("could not read the history of {}", git_dir.display())
                })?,
                dirt: None,
            });
        }
    }
    Ok((out, tally))
}

/// For people: `dir` relative to the worktree `top`.
fn rel(top: &Path, dir: &Path) -> String {
    dir.strip_prefix(top)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}

/// The mount points at or below `top`: those the walk found on another device
/// (`on_other_device`), those `/proc/self/mountinfo` lists (a bind mount of a
/// directory on the same device has the same `st_dev`), and `top` itself when
/// it is on another device than its parent; each once, sorted, as paths
/// joined to `top`.
fn mounts_below(top: &Path, on_other_device: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    let ctop = canonical(top);
    let listed = crate::sys::procfs::mount_points().map_err(|why| {
        anyhow::anyhow!("cannot tell whether a file system is mounted in it: {why}")
    })?;
    let mut found: Vec<PathBuf> = on_other_device;
    for point in listed {
        if let Ok(below) = point.strip_prefix(&ctop) {
            found.push(top.join(below));
        }
    }
    // The worktree itself on another device than the directory holding it.
    if let Some(parent) = top.parent() {
        if device(top)? != device(parent)? {
            found.push(top.to_path_buf());
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn canonical(p: &Path) -> PathBuf {
    crate::sys::paths::canonical_or_self(p)
}

/// A git dir on its own: its checkout (`core.worktree`) may be gone.
fn open_git_dir(git_dir: &Path) -> Result<gix::Repository> {
    let mut repo = gix::open_opts(git_dir, gix::open::Options::isolated())
        .with_context(|| format!("could not open the git dir {}", git_dir.display()))?;
    let _ = repo.set_workdir(None);
    Ok(repo)
}

/// What a walk below a worktree found.
#[derive(Default)]
struct Walk {
    /// Directories holding a `.git` entry, with whether it is a directory (or
    /// a symlink) rather than a gitdir file.
    repos: Vec<(PathBuf, bool)>,
    /// Directories on another device than the one they sit in: never entered.
    mounts: Vec<PathBuf>,
    tally: Ignored,
}

impl Walk {
    fn extend(&mut self, other: Walk) {
        self.repos.extend(other.repos);
        self.mounts.extend(other.mounts);
        self.tally.files += other.tally.files;
        self.tally.bytes += other.tally.bytes;
    }

    fn finish(mut self) -> Walk {
        self.repos.sort();
        self.repos.dedup();
        self.mounts.sort();
        self.mounts.dedup();
        self
    }
}

/// The device `dir` itself is on (not following a symlink).
fn device(dir: &Path) -> Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(dir
        .symlink_metadata()
        .with_context(|| format!("could not read {}", dir.display()))?
        .dev())
}

/// Is `dir` a git directory itself (a bare repository: `git init --bare`, a
/// bare clone), by git's own test (`is_git_directory`: `HEAD`, `objects/`,
/// `refs/`)? Its commits may be on no other repository, and nothing in it is
/// named `.git`.
pub(super) fn is_bare_git_dir(dir: &Path) -> bool {
    let is = |name: &str, dir_wanted: bool| {
        dir.join(name).symlink_metadata().is_ok_and(|m| {
            if dir_wanted {
                m.is_dir()
            } else {
                m.is_file()
            }
        })
    };
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

/// Directories below `top` (never `top` itself) that hold a `.git` entry, or
/// are bare repositories ([`is_bare_git_dir`], not entered).
/// Symlinks are not followed, `.git` entries are not entered, nor is a
/// directory on another device than `top` (it is a mount point); a nested
/// repository's own tree is searched too. With `count`, the files (and
/// symlinks) below `top` are counted too, with their sizes.
fn find_nested(top: &Path, count: bool) -> Result<Walk> {
    use std::os::unix::fs::MetadataExt;
    let dev = device(top)?;
    let mut walk = Walk::default();
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd =
            std::fs::read_dir(&dir).with_context(|| format!("could not list {}", dir.display()))?;
        for entry in rd {
            let entry = entry.with_context(|| format!("could not list {}", dir.display()))?;
            let ft = entry
                .file_type()
                .with_context(|| format!("could not read {}", entry.path().display()))?;
            if entry.file_name() == ".git" {
                // A directory, a gitdir file, or a symlink to a git dir elsewhere
                // (its checkout and untracked files still go with the worktree).
                if dir != top {
                    walk.repos.push((dir.clone(), !ft.is_file()));
                }
                continue;
            }
            if ft.is_dir() {
                let meta = entry
                    .metadata()
                    .with_context(|| format!("could not read {}", entry.path().display()))?;
                if meta.dev() != dev {
                    walk.mounts.push(entry.path());
                } else if is_bare_git_dir(&entry.path()) {
                    walk.repos.push((entry.path(), true));
                } else {
                    stack.push(entry.path());
                }
            } else if count {
                walk.tally.files += 1;
                walk.tally.bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    Ok(walk.finish())
}

/// [`find_nested`] with the map a status of the worktree drew: every `.git`
/// status cannot see is in a directory holding tracked files (a repository
/// initialised there, a submodule), in an untracked repository it did not
/// enter, or in an ignored directory. So: one `lstat` of each tracked
/// directory and its `.git`, a walk of each untracked repository, and a walk of
/// each ignored entry, counting its files. The untracked mount points status
/// walked into it found already.
fn find_nested_mapped(
    top: &Path,
    map: &StatusMap,
    cli_config: &[gix::bstr::BString],
) -> Result<Walk> {
    let dev = device(top)?;
    let mut walk = Walk::default();
    walk.mounts.extend(map.mounts.iter().map(|m| top.join(m)));
    for dir in &tracked_dirs_at(top, cli_config)? {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let at = top.join(dir);
        match device(&at) {
            Ok(d) if d != dev => {
                walk.mounts.push(at);
                continue;
            }
            _ => {}
        }
        if let Ok(m) = at.join(".git").symlink_metadata() {
            walk.repos.push((at, !m.is_file()));
        }
    }
    for entry in &map.repositories {
        let at = top.join(entry);
        match device(&at) {
            Ok(d) if d != dev => walk.mounts.push(at),
            Ok(_) if is_bare_git_dir(&at) => walk.repos.push((at, true)),
            Ok(_) => {
                if let Ok(m) = at.join(".git").symlink_metadata() {
                    walk.repos.push((at.clone(), !m.is_file()));
                }
                walk.extend(find_nested(&at, false)?);
            }
            Err(_) => {} // gone since the status
        }
    }
    for (entry, is_dir) in &map.ignored {
        let at = top.join(entry);
        if !*is_dir {
            if let Ok(m) = at.symlink_metadata() {
                walk.tally.files += 1;
                walk.tally.bytes += m.len();
            }
            continue;
        }
        match device(&at) {
            Ok(d) if d != dev => {
                walk.mounts.push(at);
                continue;
            }
            Ok(_) if is_bare_git_dir(&at) => {
                walk.repos.push((at, true));
                continue;
            }
            Ok(_) => {}
            Err(_) => continue, // gone since the status
        }
        if let Ok(m) = at.join(".git").symlink_metadata() {
            walk.repos.push((at.clone(), !m.is_file()));
        }
        walk.extend(find_nested(&at, true)?);
    }
    Ok(walk.finish())
}

/// The refs an admin entry (`admin`) holds of its own, by name (`refs/worktree/x`):
/// git keeps a worktree's per-worktree refs there, loose, and `git worktree
/// remove` deletes them with it. Whatever they point at, they are someone's.
fn worktree_refs(admin: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![admin.join("refs")];
    while let Some(dir) = stack.pop() {
        for (path, ft) in entries(&dir)? {
            if ft.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(admin).unwrap_or(&path);
                found.push(name.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Git dirs under a `modules/` directory: submodule names may hold slashes, and
/// a submodule's own submodules live in its `modules/`.
fn find_git_dirs(modules: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![modules.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for (path, ft) in entries(&dir)? {
            if !ft.is_dir() {
                continue;
            }
            if path.join("HEAD").is_file() && path.join("objects").is_dir() {
                stack.push(path.join("modules"));
                found.push(path);
            } else {
                stack.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The entries of `dir` with their types (not following symlinks); none when
/// `dir` is gone.
fn entries(dir: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("could not list {}", dir.display())))
        }
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.with_context(|| format!("could not list {}", dir.display()))?;
        let ft = entry
            .file_type()
            .with_context(|| format!("could not read {}", entry.path().display()))?;
        out.push((entry.path(), ft));
    }
    Ok(out)
}

/// Its local branches, stash and detached HEAD that no remote-tracking ref of
/// its own reaches, by name, and (as [`REFLOG`](crate::model::status::REFLOG)) commits only its reflogs
/// still hold. A tip whose commit is missing counts as unpublished. Without
/// `own_refs` (a linked worktree, whose refs live in its repository elsewhere)
/// only a detached HEAD.
fn unpublished_refs(repo: &gix::Repository, own_refs: bool) -> Result<Vec<String>> {
    let mut tips: Vec<(String, gix::ObjectId)> = Vec::new();
    let head = repo.head().context("could not read HEAD")?;
    if head.referent_name().is_none() {
        if let Some(id) = head.id() {
            tips.push(("HEAD".to_owned(), id.detach()));
        }
    }
    let prefixes: &[&str] = if own_refs {
        &["refs/heads/", "refs/stash"]
    } else {
        &[]
    };
    let platform = repo.references().context("could not read refs")?;
    for prefix in prefixes.iter().copied() {
        let iter = platform
            .prefixed(prefix)
            .with_context(|| format!("could not list {prefix}"))?;
        for reference in iter {
            let mut reference = reference
                .map_err(|err| anyhow::anyhow!("{err}"))
                .with_context(|| format!("could not read a ref under {prefix}"))?;
            let name = reference.name().shorten().to_string();
            let name = if prefix == "refs/stash" {
                reference.name().as_bstr().to_string()
            } else {
                name
            };
            let id = reference
                .peel_to_id()
                .with_context(|| format!("could not resolve {name}"))?;
            tips.push((name, id.detach()));
        }
    }
    let reflog = if own_refs {
        reflog_only(repo, &tips)?
    } else {
        false
    };
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    let mut unpublished: HashSet<gix::ObjectId> = HashSet::new();
    let mut present = Vec::new();
    for (_, id) in &tips {
        if repo.has_object(id) {
            present.push(*id);
        } else {
            unpublished.insert(*id);
        }
    }
    let remotes = remote_tips(repo)?;
    if remotes.is_empty() {
        unpublished.extend(present);
    } else if !present.is_empty() {
        let wanted: HashSet<gix::ObjectId> = present.iter().copied().collect();
        let mut found = 0;
        let walk = repo
            .rev_walk(present)
            .with_hidden(remotes)
            .all()
            .context("could not walk its history")?;
        for info in walk {
            let info = info.context("could not walk its history")?;
            if wanted.contains(&info.id) && unpublished.insert(info.id) {
                found += 1;
                if found == wanted.len() {
                    break;
                }
            }
        }
    }
    let mut names: Vec<String> = tips
        .into_iter()
        .filter(|(_, id)| unpublished.contains(id))
        .map(|(name, _)| name)
        .collect();
    if reflog {
        names.push(crate::model::status::REFLOG.to_owned());
    }
    Ok(names)
}

/// Does a reflog of HEAD or of a local branch hold a commit that neither a
/// remote-tracking ref nor one of `tips` reaches (an amended or reset-away
/// commit, the only trace of which is the reflog)? Entries whose commit is
/// gone already (expired) hold nothing.
fn reflog_only(repo: &gix::Repository, tips: &[(String, gix::ObjectId)]) -> Result<bool> {
    let mut logged: HashSet<gix::ObjectId> = HashSet::new();
    let mut refs = vec![repo.find_reference("HEAD").context("could not read HEAD")?];
    let platform = repo.references().context("could not read refs")?;
    for r in platform
        .prefixed("refs/heads/")
        .context("could not list refs/heads/")?
    {
        refs.push(
            r.map_err(|err| anyhow::anyhow!("{err}"))
                .context("could not read a ref under refs/heads/")?,
        );
    }
    for r in &refs {
        let mut platform = r.log_iter();
        let Some(lines) = platform
            .all()
            .with_context(|| format!("could not read the reflog of {}", r.name().as_bstr()))?
        else {
            continue;
        };
        for line in lines {
            let line = line
                .with_context(|| format!("could not read the reflog of {}", r.name().as_bstr()))?;
            for id in [line.new_oid(), line.previous_oid()] {
                if !id.is_null() && repo.has_object(id) {
                    logged.insert(id);
                }
            }
        }
    }
    for (_, id) in tips {
        logged.remove(id);
    }
    if logged.is_empty() {
        return Ok(false);
    }
    let mut hidden = remote_tips(repo)?;
    hidden.extend(
        tips.iter()
            .map(|(_, id)| *id)
            .filter(|id| repo.has_object(id)),
    );
    // The walk yields each start that no hidden tip reaches.
    let mut walk = repo
        .rev_walk(logged.iter().copied())
        .with_hidden(hidden)
        .all()
        .context("could not walk its reflog")?;
    match walk.next() {
        Some(info) => info.map(|_| true).context("could not walk its reflog"),
        None => Ok(false),
    }
}
