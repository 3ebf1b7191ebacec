//! Special files (FIFOs, sockets, devices) in a worktree: `git status` and
//! gix's status list none of them (git cannot track them), yet each is
//! something a person made there and may be sorry to lose. They are found by
//! type alone (`readdir`'s `d_type`), never opened: opening a FIFO for
//! reading waits for a writer. And the places where git and gix read a file
//! blocking: a special file there is refused by name before they run.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The special files below `worktree` that status did not see: in every
/// directory status walks (not the `.git` entries, not an ignored directory
/// of `ignored`, not a repository nested there, which its own status
/// answers for), neither tracked in `index` nor ignored by the worktree's
/// rules. Relative paths, sorted. And the untracked directories holding a
/// `.git` met on the way: status takes one whose `HEAD` it cannot read for
/// no repository (and lists nothing of a `.git` alone).
pub(super) fn untracked_special_files(
    repo: &gix::Repository,
    index: &gix::index::State,
    worktree: &Path,
    ignored: &[(gix::bstr::BString, bool)],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    use gix::bstr::ByteSlice;
    let ignored_dirs: HashSet<&[u8]> = ignored
        .iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(p, _)| p.as_slice())
        .collect();
    let mut found = Vec::new();
    let mut repositories = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = worktree.join(&rel);
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            // Gone since the status, or not a directory any more.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                continue
            }
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("could not list {}", dir.display()))
                )
            }
        };
        let mut here = Vec::new();
        let mut subdirs = Vec::new();
        let mut is_repository = false;
        for entry in rd {
            let entry = entry.with_context(|| format!("could not list {}", dir.display()))?;
            let name = entry.file_name();
            if name == ".git" {
                is_repository = true;
                continue;
            }
            let ft = entry
                .file_type()
                .with_context(|| format!("could not read {}", entry.path().display()))?;
            let path = rel.join(&name);
            if ft.is_dir() {
                if !ignored_dirs.contains(path.as_os_str().as_bytes()) {
                    subdirs.push(path);
                }
            } else if ft.is_fifo() || ft.is_socket() || ft.is_char_device() || ft.is_block_device()
            {
                here.push(path);
            }
        }
        // A repository nested below the top: status does not enter it.
        if is_repository && !rel.as_os_str().is_empty() {
            let mut prefix = rel.as_os_str().as_bytes().to_vec();
            let tracked = index.entry_by_path(prefix.as_bstr()).is_some() || {
                prefix.push(b'/');
                index.prefixed_entries_range(prefix.as_bstr()).is_some()
            };
            if !tracked {
                repositories.push(rel);
            }
            continue;
        }
        found.extend(here);
        stack.extend(subdirs);
    }
    if found.is_empty() {
        return Ok((found, repositories));
    }
    let mut excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .context("could not load the ignore rules")?;
    let mut out = Vec::new();
    for path in found {
        let rela = path.as_os_str().as_bytes().as_bstr();
        if index.entry_by_path(rela).is_some() {
            continue; // tracked: status calls it a changed type
        }
        let excluded = excludes
            .at_entry(rela, None)
            .with_context(|| {
                format!(
                    "could not match {} against the ignore rules",
                    path.display()
                )
            })?
            .is_excluded();
        if !excluded {
            out.push(path);
        }
    }
    out.sort();
    Ok((out, repositories))
}

/// Refuse a repository at `worktree` (a worktree, or one nested in it) whose
/// files gix reads as it opens it or takes its status are not regular files
/// (a FIFO would hold the read forever): its `.gitmodules`, and in its git
/// dir `HEAD`, the loose ref `HEAD` names, `index`, `commondir`, `gitdir`,
/// `config`, `config.worktree`, `packed-refs`. Each is looked at by type
/// only (through a symbolic link, as gix opens it), and a `.git` file or
/// `HEAD` read without blocking. A file swapped in after the look is not
/// seen. Ignore and
/// attributes files need no check: gix skips those that are not regular.
pub(super) fn refuse_special_git_files(worktree: &Path) -> Result<()> {
    let dot_git = worktree.join(".git");
    // Followed: gix follows a symbolic link there too.
    let git_dir = match dot_git.metadata() {
        Ok(m) if m.is_file() => {
            let content = crate::sys::regular::read(&dot_git)
                .with_context(|| format!("could not read {}", dot_git.display()))?
                .unwrap_or_default();
            match super::worktrees::gitfile_target(&content) {
                Some(target) => {
                    let target = super::worktrees::path_from_bytes(target);
                    worktree.join(target) // as is when absolute
                }
                None => return Ok(()), // gix refuses it, naming why
            }
        }
        Ok(m) if !m.is_dir() => return Err(not_regular(&dot_git)),
        _ => dot_git,
    };
    let common = crate::sys::regular::read(&git_dir.join("commondir"))
        .ok()
        .flatten()
        .and_then(|c| super::worktrees::plain_path_file(&c).map(super::worktrees::path_from_bytes))
        .map(|c| git_dir.join(c));
    let mut paths = vec![worktree.join(".gitmodules")];
    for name in [
        "HEAD",
        "index",
        "commondir",
        "gitdir",
        "config",
        "config.worktree",
        "packed-refs",
    ] {
        paths.push(git_dir.join(name));
    }
    if let Some(common) = &common {
        paths.push(common.join("packed-refs"));
    }
    let head = crate::sys::regular::read(&git_dir.join("HEAD"))
        .ok()
        .flatten()
        .unwrap_or_default();
    if let Some(name) = std::str::from_utf8(&head)
        .ok()
        .and_then(|h| h.trim_end().strip_prefix("ref:"))
        .map(str::trim)
        .filter(|n| n.starts_with("refs/") && !n.split('/').any(|c| c == ".." || c.is_empty()))
    {
        paths.push(git_dir.join(name));
        if let Some(common) = &common {
            paths.push(common.join(name));
        }
    }
    for path in paths {
        match path.metadata() {
            Ok(m) if !m.is_file() && !m.is_dir() => return Err(not_regular(&path)),
            _ => {} // absent, or what gix itself refuses
        }
    }
    Ok(())
}

/// The refusal of a special file where git keeps a file.
fn not_regular(path: &Path) -> anyhow::Error {
    crate::model::Error::refused(format!(
        "{} is not a regular file (a FIFO, a socket or a device): bullpen does not read it, \
         as reading it could wait forever",
        path.display()
    ))
    .hint("remove it, or put the file git expects there")
    .into()
}

impl super::Repo {
    /// Refuse, naming it, a special file where the git CLI reads the
    /// repository's ignore and attributes rules (`info/exclude`,
    /// `info/attributes`, `core.excludesFile`, `core.attributesFile`, or
    /// their defaults under `$XDG_CONFIG_HOME/git/`): git opens each blocking
    /// (gix skips them). With `dir`, also a `.gitignore` or `.gitattributes`
    /// anywhere below it that is not a regular file (a walk by type, not
    /// entering `.git`): what `git status` in `dir` would open.
    pub(super) fn refuse_special_rule_files(&self, dir: Option<&Path>) -> Result<()> {
        let mut paths = vec![
            self.common_dir.join("info/exclude"),
            self.common_dir.join("info/attributes"),
        ];
        let config = self.repo.config_snapshot();
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
        for (key, default) in [
            ("core.excludesFile", "ignore"),
            ("core.attributesFile", "attributes"),
        ] {
            match config.trusted_path(key) {
                Ok(Some(path)) => paths.push(path),
                Err(_) => {} // git says why itself
                Ok(None) => paths.extend(xdg.as_ref().map(|x| x.join("git").join(default))),
            }
        }
        for path in paths {
            if path.metadata().is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                return Err(not_regular(&path));
            }
        }
        let Some(dir) = dir else { return Ok(()) };
        let mut stack = vec![dir.to_path_buf()];
        while let Some(at) = stack.pop() {
            let rd = match std::fs::read_dir(&at) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(
                        anyhow::Error::new(e).context(format!("could not list {}", at.display()))
                    )
                }
            };
            for entry in rd {
                let entry = entry.with_context(|| format!("could not list {}", at.display()))?;
                let name = entry.file_name();
                let ft = entry
                    .file_type()
                    .with_context(|| format!("could not read {}", entry.path().display()))?;
                if name == ".git" {
                    continue;
                }
                if ft.is_dir() {
                    stack.push(entry.path());
                } else if (name == ".gitignore" || name == ".gitattributes")
                    && !ft.is_file()
                    && !ft.is_symlink()
                {
                    return Err(not_regular(&entry.path()));
                }
            }
        }
        Ok(())
    }
}
