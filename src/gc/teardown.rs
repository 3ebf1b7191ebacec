//! Taking a session's worktree down without ever crashing: `git worktree remove`,
//! and where git could not finish (a late writer, its admin entry already gone,
//! submodules it never removes), a confined removal with short retries followed
//! by the removal of the session's own admin entry (never `git worktree prune`).
//! Every outcome is a value: removed, kept for a reason, or degraded (left for
//! the next `gc`).

use std::path::Path;
use std::time::Duration;

use super::plan::{Reason, Via};
use crate::git::{DotGit, EntryRemoval, Repo, WorktreeRemoval};
use crate::model::status::nested_work;
use crate::model::usage::{describe_users, Busy};
use crate::model::{Dirt, Oid};
use crate::sys::procfs;
use crate::sys::remove::{remove_tree, Stopped};
use crate::trust::confined::ConfinedPath;
use crate::trust::decide::CreatedHere;

/// How many times a directory that refuses to go is removed again.
const ATTEMPTS: usize = 5;
/// After a removal succeeds, how long to watch for a late writer bringing it back.
pub const SETTLE: Duration = Duration::from_millis(50);
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
    /// The worktree, confined to its root as checked at the act (`AtAct`).
    pub confined: &'a ConfinedPath,
    /// The admin entry (`<common>/worktrees/<admin_id>`) the worktree had.
    pub admin_id: &'a str,
    pub via: Via,
    /// The published branch tip the tree was proven clean against.
    pub tip: Oid,
    /// Watch a successful `git worktree remove` for a late writer bringing the
    /// directory back (and take the fallback if it does): where this gc saw a
    /// process in it. Otherwise the caller looks once, after all its removals
    /// (see `execute`). A fallback is always watched.
    pub watch: bool,
}

impl Target<'_> {
    fn path(&self) -> &Path {
        self.confined.path()
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The directory and its admin entry are gone. `notes`: what happened on the way.
    Removed { notes: Vec<String> },
    /// Not removed, and the worktree is whole (its `.git` and its admin entry
    /// point at each other): a re-check right before the fallback said no, or
    /// git refused (quoted).
    Kept(String),
    /// Partly done (or not at all) and left for the next `gc`: what, and what to do.
    Degraded { what: String, hint: String },
}

/// What is known of the directory when the fallback starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Before {
    /// git checked it clean and began deleting: what is left must hold nothing
    /// the branch tip lacks (deletions are git's).
    GitStarted,
    /// git deleted nothing, its admin entry is gone: it must match the tip.
    EntryGone,
    /// git deleted nothing and never will (submodules): the full checks again,
    /// through its own index, nested repositories included.
    Whole,
    /// The plan checked it under this lock (admin entry gone, or finishing an
    /// earlier teardown): nothing to add.
    Planned,
}

/// Take the worktree down. Call with the repository lock held, after the gc
/// plan (with fresh facts) said to remove it; only with the local proof that
/// bullpen created it here (`trust::decide::created_here`).
pub fn remove_worktree(repo: &Repo, _created: &CreatedHere, t: &Target) -> Outcome {
    let mut notes = Vec::new();
    let before = match t.via {
        // The plan checked the tree under this lock a moment ago, more
        // strictly than git's own check: no second status in git.
        Via::GitWorktreeRemove => match repo.worktree_remove(t.path(), true) {
            WorktreeRemoval::Removed if !t.watch && t.path().symlink_metadata().is_err() => {
                return Outcome::Removed { notes }
            }
            WorktreeRemoval::Removed if t.watch && stays_gone(t.path()) => {
                return Outcome::Removed { notes }
            }
            WorktreeRemoval::Removed => {
                notes.push(
                    "git worktree remove left the directory behind (a process wrote into it)"
                        .to_owned(),
                );
                Before::GitStarted
            }
            WorktreeRemoval::Incomplete(e) => {
                notes.push(format!("{e}; took the fallback"));
                Before::GitStarted
            }
            WorktreeRemoval::NotAWorktree(e) => {
                notes.push(format!("{e}; took the fallback"));
                Before::EntryGone
            }
            WorktreeRemoval::Submodules(_) => {
                notes.push(
                    "git does not remove worktrees with submodules; every repository in it is \
                     clean and published, so bullpen removes it"
                        .to_owned(),
                );
                Before::Whole
            }
            WorktreeRemoval::Died(e) => {
                return Outcome::Degraded {
                    what: format!("{e}: git died part-way through the removal"),
                    hint: "run `git bullpen gc` again: it finishes the removal".to_owned(),
                }
            }
            WorktreeRemoval::Refused(e) => {
                let why = format!("git worktree remove refused: {e}");
                return if is_whole(repo, t) {
                    Outcome::Kept(why)
                } else {
                    Outcome::Degraded {
                        what: format!("{why}; and the worktree is no longer whole"),
                        hint: "run `git bullpen gc` again".to_owned(),
                    }
                };
            }
        },
        Via::AdminEntryGone | Via::FinishTeardown => Before::Planned,
    };

    // The fallback. git may have removed the admin entry and part of the files
    // already; confirm the path is still ours, and holds nothing new, before
    // touching it.
    let registered_here = admin_entry_is_here(repo, t);
    let stop = |why: String, hint: String| {
        if is_whole(repo, t) {
            Outcome::Kept(why)
        } else {
            Outcome::Degraded { what: why, hint }
        }
    };
    if let Err(why) = still_ours(repo, t, registered_here) {
        // Not (or no longer provably) the session's: nothing of it is gc's to finish.
        return Outcome::Kept(format!("not removed: {why}"));
    }
    if let Err(why) = holds_nothing_new(repo, t, before, registered_here == Some(true)) {
        return stop(
            why,
            format!(
                "look at {p}: keep what you need elsewhere, remove the directory, then run \
                 `git bullpen gc` again",
                p = t.path().display()
            ),
        );
    }
    match procfs::scan(&[t.path().to_path_buf()]).busy(t.path()) {
        Busy::Idle => {}
        Busy::InUse(users) => {
            return stop(format!("busy: {}", describe_users(&users)), hint(t.path()))
        }
        Busy::CannotTell(why) => {
            return stop(
                format!("cannot tell whether it is in use: {why}"),
                hint(t.path()),
            )
        }
    }
    if let Err(why) = remove_dir_confined(t.confined) {
        return Outcome::Degraded {
            what: why,
            hint: hint(t.path()),
        };
    }
    match repo.remove_admin_entry(t.admin_id, t.path()) {
        Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => Outcome::Removed { notes },
        Ok(EntryRemoval::Refused(why)) => Outcome::Degraded {
            what: format!(
                "removed the directory, but its worktree entry {} stays: {why}",
                t.admin_id
            ),
            hint: "resolve what it names (a submodule's commits: `git --git-dir=<its git dir> \
                   --work-tree=. push <remote> <branch>`), then run `git bullpen gc` again"
                .to_owned(),
        },
        Err(e) => Outcome::Degraded {
            what: format!("removed the directory, but not its worktree entry: {e:#}"),
            hint: "run `git bullpen gc` again".to_owned(),
        },
    }
}

/// The re-check of what is in the directory, as far as `before` leaves it open.
fn holds_nothing_new(
    repo: &Repo,
    t: &Target,
    before: Before,
    registered: bool,
) -> Result<(), String> {
    let dirt: Dirt = match before {
        Before::Planned => return Ok(()),
        Before::Whole => repo
            .dirt(t.path())
            .map_err(|e| format!("cannot tell whether it is clean: {e:#}"))?,
        Before::GitStarted | Before::EntryGone => repo
            .dirt_against(t.path(), t.tip)
            .map_err(|e| format!("cannot tell whether it is clean: {e:#}"))?,
    };
    let ok = match before {
        Before::GitStarted => dirt.holds_nothing_new(),
        _ => dirt.is_clean(),
    };
    if !ok {
        return Err(format!(
            "changed during gc: {}",
            Reason::Dirty(dirt.clone()).describe("")
        ));
    }
    let admin = registered.then_some(t.admin_id);
    let nested = repo
        .nested_repositories(Some(t.path()), admin)
        .map_err(|e| {
            format!("cannot tell whether the repositories nested in it hold work: {e:#}")
        })?;
    if let Some(work) = nested_work(&nested) {
        return Err(format!("changed during gc: {work}"));
    }
    Ok(())
}

/// The worktree is whole: its `.git` file points at its admin entry, and that
/// entry is registered for this path. Whatever git did, nothing of it is gone
/// that `git status` would not show.
fn is_whole(repo: &Repo, t: &Target) -> bool {
    let linked = matches!(
        repo.dot_git(t.path()),
        DotGit::Ours { admin_id, admin_exists: true } if admin_id == t.admin_id
    );
    linked
        && repo.worktrees().is_ok_and(|wts| {
            wts.iter()
                .any(|w| w.admin_id.as_deref() == Some(t.admin_id) && same_path(&w.path, t.path()))
        })
}

/// Gone now, and still gone a moment later (a late writer recreates paths fast).
fn stays_gone(path: &Path) -> bool {
    if path.symlink_metadata().is_ok() {
        return false;
    }
    std::thread::sleep(SETTLE);
    path.symlink_metadata().is_err()
}

pub fn hint(path: &Path) -> String {
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
fn still_ours(repo: &Repo, t: &Target, registered_here: Option<bool>) -> Result<(), String> {
    check_confined(t.confined)?;
    match repo.dot_git(t.path()) {
        DotGit::Absent if t.via != Via::AdminEntryGone => {}
        DotGit::Ours { admin_id, .. } if admin_id == t.admin_id => {}
        other => {
            return Err(format!(
                "{} no longer looks like the session's worktree ({})",
                t.path().display(),
                other.describe()
            ))
        }
    }
    match registered_here {
        None => return Err("cannot read the list of worktrees".to_owned()),
        Some(true) if t.via == Via::AdminEntryGone => {
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
        if !same_path(&w.path, t.path()) {
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
    crate::sys::paths::same(a, b)
}

/// Still strictly inside the worktree root as written and as resolved, reached
/// through no symlink (checked again now), and a real directory.
fn check_confined(c: &ConfinedPath) -> Result<(), String> {
    let path = c.path();
    c.recheck().map_err(|why| why.describe(path, c.root()))?;
    let meta = path
        .symlink_metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    Ok(())
}

/// `Err(why)` when a file system is mounted at or below `path` (as
/// `/proc/self/mountinfo` says, or `path` is on another device than its
/// parent), or when that cannot be read.
fn mounted_below(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let points = procfs::mount_points()
        .map_err(|why| format!("cannot tell whether a file system is mounted in it: {why}"))?;
    let top = crate::sys::paths::canonical_or_self(path);
    if let Some(p) = points.iter().find(|p| p.starts_with(&top)) {
        return Err(format!("a file system is mounted at {}", p.display()));
    }
    let dev = |p: &Path| p.symlink_metadata().map(|m| m.dev());
    match (dev(&top), top.parent().map(dev)) {
        (Ok(a), Some(Ok(b))) if a != b => Err(format!(
            "{} is a mount point (another file system than its parent's)",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Remove a directory strictly inside the worktree root, retrying briefly while
/// something keeps refilling it. Succeeds only when it is gone and stays gone
/// for a moment. Never across a file system boundary: a mount point below it
/// (listed in `mountinfo`, or a directory on another device) stops it.
pub fn remove_dir_confined(confined: &ConfinedPath) -> Result<(), String> {
    remove_dir_confined_then(confined, |_| {})
}

/// [`remove_dir_confined`], calling `after_each(path)` after every removal
/// attempt: where a test brings the directory back, on that event.
fn remove_dir_confined_then(
    confined: &ConfinedPath,
    mut after_each: impl FnMut(&Path),
) -> Result<(), String> {
    let path = confined.path();
    let mut last = String::new();
    for pause in BACKOFF {
        if path.symlink_metadata().is_ok() {
            check_confined(confined)?;
            mounted_below(path)?;
            match remove_tree(path) {
                Ok(()) => {}
                Err(Stopped::OtherDevice(at)) => {
                    return Err(format!(
                        "{} is on another file system (a mount point): bullpen never removes \
                         across file systems",
                        at.display()
                    ))
                }
                Err(Stopped::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(Stopped::Io(e)) => last = e.to_string(),
            }
            after_each(path);
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
        let confined = ConfinedPath::new(&root, &dir).unwrap();
        remove_dir_confined(&confined).unwrap();
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
        // What cannot be confined cannot be removed (`trust::confined` says
        // why); what was confined and is now a symlink is refused right before.
        let dir = root.join("dir");
        std::fs::create_dir_all(&dir).unwrap();
        let confined = ConfinedPath::new(&root, &dir).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&outside, &dir).unwrap();
        let err = remove_dir_confined(&confined).unwrap_err();
        assert!(err.contains("is a symlink"), "{err}");
        assert!(outside.join("keep").exists());
        // And a file where the directory was.
        std::fs::remove_file(&dir).unwrap();
        std::fs::write(&dir, "x").unwrap();
        let err = remove_dir_confined(&confined).unwrap_err();
        assert!(err.contains("not a directory"), "{err}");
    }

    #[test]
    fn a_directory_that_keeps_coming_back_is_an_error_not_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = root.join("s");
        std::fs::create_dir_all(dir.join("cache")).unwrap();
        // A late writer that refills the directory right after each removal:
        // on that event, not on a timer, so every attempt sees it back.
        let mut refills = 0;
        let result = remove_dir_confined_then(&ConfinedPath::new(&root, &dir).unwrap(), |dir| {
            std::fs::create_dir_all(dir.join("cache")).unwrap();
            std::fs::write(dir.join("cache/f"), "x").unwrap();
            refills += 1;
        });
        assert_eq!(refills, ATTEMPTS);
        let err = result.unwrap_err();
        assert!(err.contains("could not remove"), "{err}");
        assert!(err.contains("it keeps coming back"), "{err}");
    }
}
