//! Special files (FIFOs, sockets, devices) in a worktree: `git status` and
//! gix's status list none of them (git cannot track them), yet each is
//! something a person made there and may be sorry to lose. They are found by
//! type alone (`readdir`'s `d_type`), never opened: opening a FIFO for
//! reading waits for a writer.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The special files below `worktree` that status did not see: in every
/// directory status walks (not the `.git` entries, not an ignored directory
/// of `ignored`, not a repository nested there, which its own status
/// answers for), neither tracked in `index` nor ignored by the worktree's
/// rules. Relative paths, sorted.
pub(super) fn untracked_special_files(
    repo: &gix::Repository,
    index: &gix::index::State,
    worktree: &Path,
    ignored: &[(gix::bstr::BString, bool)],
) -> Result<Vec<PathBuf>> {
    use gix::bstr::ByteSlice;
    let ignored_dirs: HashSet<&[u8]> = ignored
        .iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(p, _)| p.as_slice())
        .collect();
    let mut found = Vec::new();
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
            continue;
        }
        found.extend(here);
        stack.extend(subdirs);
    }
    if found.is_empty() {
        return Ok(found);
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
    Ok(out)
}
