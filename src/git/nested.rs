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
/// a `.git` in each directory holding tracked files, and the ignored entries
/// whole, whose files it counts; without, the whole tree.
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
        let (found, counted) = match map {
            Some(map) => find_nested_mapped(top, map, cli_config)?,
            None => find_nested(top, false)?,
        };
        tally = counted;
        for (dir, dot_git_is_dir) in found {
            let repo = gix::open(&dir)
                .with_context(|| format!("could not open the repository at {}", dir.display()))?;
            seen.insert(canonical(repo.git_dir()));
            let rel = dir.strip_prefix(top).unwrap_or(&dir);
            out.push(Nested {
                path: rel.to_string_lossy().into_owned(),
                kind: if dot_git_is_dir {
                    NestedKind::Repository
                } else {
                    NestedKind::Submodule
                },
                unpublished: unpublished_refs(&repo)
                    .with_context(|| format!("could not read the history of {}", dir.display()))?,
                // A repository of its own: its own objects.
                dirt: Some(dirt_of(&dir, cli_config, None)?),
            });
        }
    }
    if let Some(modules) = modules {
        for git_dir in find_git_dirs(modules)? {
            if seen.contains(&canonical(&git_dir)) {
                continue;
            }
            let repo = open_git_dir(&git_dir)?;
            out.push(Nested {
                path: git_dir.to_string_lossy().into_owned(),
                kind: NestedKind::SubmoduleGitDir,
                unpublished: unpublished_refs(&repo).with_context(|| {
                    format!("could not read the history of {}", git_dir.display())
                })?,
                dirt: None,
            });
        }
    }
    Ok((out, tally))
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

/// Directories below `top` (never `top` itself) that hold a `.git` entry, with
/// whether it is a directory (or a symlink) rather than a gitdir file. Symlinks
/// are not followed and `.git` entries are not entered; a nested repository's
/// own tree is searched too. With `count`, the files (and symlinks) below `top`
/// are counted too, with their sizes.
fn find_nested(top: &Path, count: bool) -> Result<(Vec<(PathBuf, bool)>, Ignored)> {
    let mut found = Vec::new();
    let mut tally = Ignored::default();
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
                    found.push((dir.clone(), !ft.is_file()));
                }
                continue;
            }
            if ft.is_dir() {
                stack.push(entry.path());
            } else if count {
                tally.files += 1;
                tally.bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    found.sort();
    Ok((found, tally))
}

/// [`find_nested`] with the map a status of the worktree drew: every `.git`
/// status cannot see is in a directory holding tracked files (a repository
/// initialised there, a submodule) or in an ignored directory; an untracked one
/// makes the worktree dirty already. So: one `lstat` per tracked directory,
/// and a walk of each ignored entry, counting its files.
fn find_nested_mapped(
    top: &Path,
    map: &StatusMap,
    cli_config: &[gix::bstr::BString],
) -> Result<(Vec<(PathBuf, bool)>, Ignored)> {
    let mut found = Vec::new();
    for dir in &tracked_dirs_at(top, cli_config)? {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let at = top.join(dir);
        if let Ok(m) = at.join(".git").symlink_metadata() {
            found.push((at, !m.is_file()));
        }
    }
    let mut tally = Ignored::default();
    for (entry, is_dir) in &map.ignored {
        let at = top.join(entry);
        if !*is_dir {
            if let Ok(m) = at.symlink_metadata() {
                tally.files += 1;
                tally.bytes += m.len();
            }
            continue;
        }
        if let Ok(m) = at.join(".git").symlink_metadata() {
            found.push((at.clone(), !m.is_file()));
        }
        let (below, counted) = find_nested(&at, true)?;
        found.extend(below);
        tally.files += counted.files;
        tally.bytes += counted.bytes;
    }
    found.sort();
    found.dedup();
    Ok((found, tally))
}

/// Git dirs under a `modules/` directory: submodule names may hold slashes, and
/// a submodule's own submodules live in its `modules/`.
fn find_git_dirs(modules: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![modules.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("could not list {}", dir.display()))
                )
            }
        };
        for entry in rd {
            let entry = entry.with_context(|| format!("could not list {}", dir.display()))?;
            let ft = entry
                .file_type()
                .with_context(|| format!("could not read {}", entry.path().display()))?;
            if !ft.is_dir() {
                continue;
            }
            let path = entry.path();
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

/// Its local branches, stash and detached HEAD that no remote-tracking ref of
/// its own reaches, by name. A tip whose commit is missing counts as unpublished.
fn unpublished_refs(repo: &gix::Repository) -> Result<Vec<String>> {
    let mut tips: Vec<(String, gix::ObjectId)> = Vec::new();
    let head = repo.head().context("could not read HEAD")?;
    if head.referent_name().is_none() {
        if let Some(id) = head.id() {
            tips.push(("HEAD".to_owned(), id.detach()));
        }
    }
    let platform = repo.references().context("could not read refs")?;
    for prefix in ["refs/heads/", "refs/stash"] {
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
    Ok(tips
        .into_iter()
        .filter(|(_, id)| unpublished.contains(id))
        .map(|(name, _)| name)
        .collect())
}
