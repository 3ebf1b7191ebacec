//! Taking a session's worktree down without ever crashing: `git worktree remove`,
//! and when that fails (or leaves the directory behind), a confined removal with
//! short retries followed by `git worktree prune`. Every outcome is a value:
//! removed, left untouched for a reason, or degraded (left for the next `gc`).

use std::path::Path;
use std::time::Duration;

use super::plan::{Reason, Via};
use crate::git::{DotGit, Repo};
use crate::model::paths::{is_strictly_inside, normalize};
use crate::model::usage::{describe_users, Busy};
use crate::sys::layout::Layout;
use crate::sys::procfs;

/// How many times a directory that refuses to go is removed again.
const ATTEMPTS: usize = 5;
/// After a removal succeeds, how long to watch for a late writer bringing it back.
const SETTLE: Duration = Duration::from_millis(50);
/// Pause between attempts.
const BACKOFF: [Duration; ATTEMPTS] = [
    Duration::from_millis(20),
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(200),
    Duration::from_millis(400),
];

/// What to take down.
pub struct Target<'a> {
    pub path: &'a Path,
    /// The admin entry (`<common>/worktrees/<admin_id>`) the worktree had.
    pub admin_id: &'a str,
    pub via: Via,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The directory and its admin entry are gone. `notes`: what happened on the way.
    Removed { notes: Vec<String> },
    /// Nothing was removed: a re-check right before the fallback said no.
    Untouched(String),
    /// Partly done (or not at all) and left for the next `gc`: what, and what to do.
    Degraded { what: String, hint: String },
}

/// Take the worktree down. Call with the repository lock held, after the gc
/// plan (with fresh facts) said to remove it.
pub fn remove_worktree(repo: &Repo, layout: &Layout, t: &Target) -> Outcome {
    let root = layout.worktree_root.as_path();
    let mut notes = Vec::new();
    if t.via == Via::GitWorktreeRemove {
        match repo.worktree_remove(t.path) {
            Ok(()) if stays_gone(t.path) => return Outcome::Removed { notes },
            Ok(()) => notes.push(
                "git worktree remove left the directory behind (a process wrote into it)"
                    .to_owned(),
            ),
            Err(e) => notes.push(format!("{e:#}; took the fallback")),
        }
    }

    // The fallback. git may have removed the admin entry and part of the files
    // already; confirm the path is still ours before touching it.
    let registered_here = admin_entry_is_here(repo, t);
    let untouched = |why: String| {
        if t.via != Via::GitWorktreeRemove || registered_here == Some(true) {
            // Nothing was removed yet (git refused before it started, or git
            // was not asked): the directory is as it was.
            Outcome::Untouched(why)
        } else {
            Outcome::Degraded {
                what: why,
                hint: hint(t.path),
            }
        }
    };
    if let Err(why) = still_ours(repo, root, t, registered_here) {
        return untouched(format!("not removed: {why}"));
    }
    if registered_here == Some(true) {
        // git's own checks did not run to completion: repeat ours.
        match repo.dirt(t.path) {
            Ok(d) if d.is_clean() => {}
            Ok(d) => {
                return untouched(format!(
                    "changed during gc: {}",
                    Reason::Dirty(d).describe("")
                ))
            }
            Err(e) => return untouched(format!("cannot tell whether it is clean: {e:#}")),
        }
    }
    match procfs::scan(&[t.path.to_path_buf()]).busy(t.path) {
        Busy::Idle => {}
        Busy::InUse(users) => return untouched(format!("busy: {}", describe_users(&users))),
        Busy::CannotTell(why) => {
            return untouched(format!("cannot tell whether it is in use: {why}"))
        }
    }
    if let Err(why) = remove_dir_confined(root, t.path) {
        return Outcome::Degraded {
            what: why,
            hint: hint(t.path),
        };
    }
    if let Err(e) = repo.worktree_prune() {
        return Outcome::Degraded {
            what: format!("removed the directory, but {e:#}"),
            hint: "run `git worktree prune`, then `git bullpen gc` again".to_owned(),
        };
    }
    if admin_entry_is_here(repo, t) == Some(true) {
        return Outcome::Degraded {
            what: format!(
                "removed the directory, but its worktree entry {} is still registered",
                t.admin_id
            ),
            hint: "run `git worktree prune`, then `git bullpen gc` again".to_owned(),
        };
    }
    Outcome::Removed { notes }
}

/// Gone now, and still gone a moment later (a late writer recreates paths fast).
fn stays_gone(path: &Path) -> bool {
    if path.symlink_metadata().is_ok() {
        return false;
    }
    std::thread::sleep(SETTLE);
    path.symlink_metadata().is_err()
}

fn hint(path: &Path) -> String {
    format!(
        "a process may still be writing into {p}: find it with `fuser -v {p}` or `lsof +D {p}`, \
         stop it, then run `git bullpen gc` again",
        p = path.display()
    )
}

/// `Some(true)` when the admin entry is still registered for this path,
/// `Some(false)` when it is gone, `None` when the worktree list cannot be read.
fn admin_entry_is_here(repo: &Repo, t: &Target) -> Option<bool> {
    let wts = repo.worktrees().ok()?;
    Some(
        wts.iter()
            .any(|w| w.admin_id.as_deref() == Some(t.admin_id)),
    )
}

/// The re-check before the fallback removes anything by itself: strictly inside
/// the worktree root (as written and as resolved), a real directory (not a
/// symlink), and nothing says it belongs to anyone else.
fn still_ours(
    repo: &Repo,
    root: &Path,
    t: &Target,
    registered_here: Option<bool>,
) -> Result<(), String> {
    check_confined(root, t.path)?;
    match repo.dot_git(t.path) {
        DotGit::Absent if t.via != Via::AdminEntryGone => {}
        DotGit::Ours { admin_id, .. } if admin_id == t.admin_id => {}
        other => {
            return Err(format!(
                "{} no longer looks like the session's worktree ({})",
                t.path.display(),
                other.describe()
            ))
        }
    }
    match registered_here {
        None => return Err("cannot read the list of worktrees".to_owned()),
        Some(true) if t.via != Via::GitWorktreeRemove => {
            return Err(format!(
                "its worktree entry {} is registered again",
                t.admin_id
            ))
        }
        Some(_) => {}
    }
    // The entry this worktree had must not now be registered for another path,
    // nor locked (git refuses to remove a locked worktree: so must we).
    let wts = repo
        .worktrees()
        .map_err(|e| format!("cannot read the list of worktrees: {e:#}"))?;
    for w in wts {
        if w.admin_id.as_deref() != Some(t.admin_id) {
            continue;
        }
        if !same_path(&w.path, t.path) {
            return Err(format!(
                "its worktree entry {} is now registered for {}",
                t.admin_id,
                w.path.display()
            ));
        }
        if w.locked {
            return Err("it was locked during gc (git worktree unlock)".to_owned());
        }
    }
    Ok(())
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => normalize(a) == normalize(b),
    }
}

/// Strictly inside the worktree root as written and as resolved, and a real directory.
pub fn check_confined(root: &Path, path: &Path) -> Result<(), String> {
    if !is_strictly_inside(path, root) {
        return Err(format!(
            "{} is not strictly inside the worktree root {}",
            path.display(),
            root.display()
        ));
    }
    let meta = path
        .symlink_metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    let resolved = std::fs::canonicalize(path)
        .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
    let croot = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if !is_strictly_inside(&resolved, &croot) {
        return Err(format!(
            "{} resolves to {}, outside the worktree root",
            path.display(),
            resolved.display()
        ));
    }
    Ok(())
}

/// Remove a directory strictly inside the worktree root, retrying briefly while
/// something keeps refilling it. Succeeds only when it is gone and stays gone
/// for a moment.
pub fn remove_dir_confined(root: &Path, path: &Path) -> Result<(), String> {
    let mut last = String::new();
    for pause in BACKOFF {
        if path.symlink_metadata().is_ok() {
            check_confined(root, path)?;
            // remove_dir_all never follows symlinks inside the tree.
            match std::fs::remove_dir_all(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => last = e.to_string(),
            }
        }
        if stays_gone(path) {
            return Ok(());
        }
        if path.symlink_metadata().is_ok() && last.is_empty() {
            last = "it keeps coming back".to_owned();
        }
        std::thread::sleep(pause);
    }
    Err(format!(
        "could not remove {} after {ATTEMPTS} attempts ({last})",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_a_confined_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = root.join("s");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/f"), "x").unwrap();
        remove_dir_confined(&root, &dir).unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn refuses_outside_the_root_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        let l = root.clone();
        assert!(remove_dir_confined(&l, &outside).is_err());
        assert!(remove_dir_confined(&l, &root).is_err());
        assert!(remove_dir_confined(&l, &root.join("../outside")).is_err());
        let link = root.join("link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(remove_dir_confined(&l, &link).is_err());
        assert!(outside.join("keep").exists());
    }

    #[test]
    fn a_directory_that_keeps_coming_back_is_an_error_not_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = root.join("s");
        std::fs::create_dir_all(dir.join("cache")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let stop = stop.clone();
            let dir = dir.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::create_dir_all(dir.join("cache"));
                    let _ = std::fs::write(dir.join("cache/f"), "x");
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let result = remove_dir_confined(&root, &dir);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        let err = result.unwrap_err();
        assert!(err.contains("could not remove"), "{err}");
    }
}
