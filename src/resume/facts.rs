//! The facts resume placement decides on: what is at the recorded worktree path,
//! the branch, git's worktree entries. Read-only: it changes nothing on disk.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::decide::{AtPath, DirKind, Facts, Place};
use crate::context::Ctx;
use crate::git::PathRepo;
use crate::model::{Error, Record};
use crate::trust::confined::{ConfinedPath, Unconfined};

/// The recorded worktree path, confined to the session's root: what resume
/// recreates its worktree at (`Made`), checked under the lock before it does.
pub fn confined(ctx: &Ctx, record: &Record) -> Result<ConfinedPath> {
    let layout = crate::trust::session_layout(&ctx.layout, record);
    let path = PathBuf::from(&record.worktree);
    ConfinedPath::new(&layout.worktree_root, &path).map_err(|why| {
        Error::refused(format!(
            "cannot recreate the worktree of session {}: {}",
            record.id,
            why.describe(&path, &layout.worktree_root)
        ))
        .into()
    })
}

/// Gather the facts for [`super::decide::decide`]. Read-only: it changes nothing on disk.
pub fn inspect(ctx: &Ctx, record: &Record) -> Result<Facts> {
    let path = PathBuf::from(&record.worktree);
    // The root this machine created the session under, if the record's path is
    // the one it created; else the current one.
    let layout = crate::trust::session_layout(&ctx.layout, record);
    let root = &layout.worktree_root;
    // A symlink at the path itself is there to be named: occupied.
    let confined = match ConfinedPath::new(root, &path) {
        Err(Unconfined::Symlink(at)) => at == path,
        other => other.is_ok(),
    };
    let place = if !confined {
        Place::OutsideRoot
    } else if path == layout.worktree_path(&record.id) {
        Place::Expected
    } else {
        Place::ElsewhereInRoot
    };
    let branch = record.id.branch();
    let branch_ref = record.id.branch_ref();
    let branch_exists = ctx.repo.ref_target(&branch_ref)?.is_some();

    let mut branch_checked_out_at = None;
    let mut stale_entries_here = Vec::new();
    let mut branch_in_missing_worktree = None;
    for wt in ctx.repo.worktrees()? {
        let here = same_path(&wt.path, &path);
        let on_branch = wt.head_ref.as_deref() == Some(branch_ref.as_str());
        match (here, wt.exists, &wt.admin_id) {
            (true, false, Some(admin_id)) => stale_entries_here.push(admin_id.clone()),
            (false, true, _) if on_branch => branch_checked_out_at = Some(wt.path),
            (false, false, _) if on_branch => {
                branch_in_missing_worktree = Some((wt.path, wt.locked))
            }
            _ => {}
        }
    }

    let suffix = format!("/{branch}");
    let remote_branches = ctx
        .repo
        .refs_with_prefix("refs/remotes/")?
        .into_iter()
        .filter_map(|(name, _)| {
            let short = name.strip_prefix("refs/remotes/")?;
            short.ends_with(&suffix).then(|| short.to_owned())
        })
        .collect();

    Ok(Facts {
        id: record.id.to_string(),
        at_path: at_path(ctx, &path)?,
        path,
        worktree_root: root.clone(),
        place,
        branch,
        recorded_branch: record.branch.clone(),
        branch_exists,
        branch_checked_out_at,
        stale_entries_here,
        branch_in_missing_worktree,
        remote_branches,
    })
}

fn at_path(ctx: &Ctx, path: &Path) -> Result<AtPath> {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AtPath::Nothing),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot look at {}", path.display()));
        }
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path)
            .with_context(|| format!("cannot read the symlink {}", path.display()))?;
        return Ok(AtPath::Symlink {
            target,
            dangling: std::fs::metadata(path).is_err(),
        });
    }
    if kind.is_file() {
        return Ok(AtPath::File);
    }
    if !kind.is_dir() {
        return Ok(AtPath::Special);
    }
    let kind = match ctx.repo.inspect_path(path)? {
        PathRepo::OurWorktree { head_ref } => DirKind::OurWorktree { head_ref },
        PathRepo::Other { description } => DirKind::OtherRepo { description },
        PathRepo::None => {
            let empty = std::fs::read_dir(path)
                .with_context(|| format!("cannot list {}", path.display()))?
                .next()
                .is_none();
            DirKind::Plain { empty }
        }
    };
    Ok(AtPath::Dir(kind))
}

/// The same path, also when it is gone: compared as given, then with the
/// parent resolved (git records real paths; the record may not).
fn same_path(a: &Path, b: &Path) -> bool {
    crate::sys::paths::same(a, b)
}
