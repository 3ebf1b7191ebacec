//! Where a resumed session runs: a pure decision over plain facts about its
//! recorded worktree path (gathered by `facts.rs`), and its explanation.
//!
//! Resuming goes to the recorded worktree or nowhere. It never falls back to the
//! caller's directory, and it never touches what it finds at the recorded path
//! unless that is exactly the session's own worktree. The record may have come
//! from a fetch or a hand edit, so its path is checked before anything else.

use std::path::PathBuf;

use crate::model::command::{escaped, quoted};
use crate::model::Error;

/// Where the recorded path lies relative to the worktree root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Exactly `<worktree root>/<id>`, where `spawn` puts this session.
    Expected,
    /// Strictly inside the worktree root, but not where this session belongs
    /// (another session's directory, a nested path).
    ElsewhereInRoot,
    /// Not strictly inside the worktree root (also: relative, with `..`).
    OutsideRoot,
}

/// What a directory at the recorded path is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirKind {
    /// The top level of a registered worktree of this repository; `head_ref` is
    /// the full ref its HEAD is on (`None`: detached).
    OurWorktree { head_ref: Option<String> },
    /// Another repository, a subdirectory of one, or an unregistered worktree.
    OtherRepo { description: String },
    /// No repository at all.
    Plain { empty: bool },
}

/// What is at the recorded path, without following a symlink there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AtPath {
    Nothing,
    File,
    Symlink {
        target: PathBuf,
        dangling: bool,
    },
    /// A fifo, socket or device.
    Special,
    Dir(DirKind),
}

/// Plain facts about one session's placement, gathered by `resume::facts::inspect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The session id, for messages.
    pub id: String,
    /// The recorded worktree path.
    pub path: PathBuf,
    /// The worktree root this repository uses now.
    pub worktree_root: PathBuf,
    pub place: Place,
    /// `bullpen/<id>`: derived from the (validated) id, never from the record.
    pub branch: String,
    /// The branch the record names; anything but `branch` means a corrupt record.
    pub recorded_branch: String,
    pub at_path: AtPath,
    /// `refs/heads/bullpen/<id>` exists.
    pub branch_exists: bool,
    /// An existing worktree other than the recorded path has the branch checked
    /// out (`git worktree add` would refuse it).
    pub branch_checked_out_at: Option<PathBuf>,
    /// Admin entries git still registers for the recorded path, whose directory
    /// is gone: the session's own (`git worktree add` would refuse until they go).
    pub stale_entries_here: Vec<String>,
    /// A registered worktree elsewhere, its directory missing (an unmounted
    /// disk?), has the branch checked out; `true` when it is locked. Not
    /// bullpen's to unregister.
    pub branch_in_missing_worktree: Option<(PathBuf, bool)>,
    /// `<remote>/bullpen/<id>` remote-tracking branches, for hints.
    pub remote_branches: Vec<String>,
}

/// The outcome of [`decide`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The recorded path is the session's worktree: run there.
    Use,
    /// Nothing is there and the branch exists: `git worktree add <path> <branch>`,
    /// after removing git's stale admin entries for the path (these ids).
    Recreate {
        stale_entries: Vec<String>,
    },
    Refuse(Refusal),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    OutsideRoot,
    ElsewhereInRoot,
    /// The record names a branch other than `bullpen/<id>`.
    ForeignBranch,
    /// Neither the worktree nor the branch exists.
    Gone,
    /// The branch is checked out in another (existing) worktree.
    BranchCheckedOutElsewhere(PathBuf),
    /// The branch is checked out in another registered worktree whose directory
    /// is missing (locked or not).
    BranchInMissingWorktree(PathBuf, bool),
    /// Something that is not the session's worktree is at the recorded path.
    Occupied(Occupant),
}

/// What occupies the recorded path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Occupant {
    File,
    Symlink { target: PathBuf, dangling: bool },
    Special,
    EmptyDir,
    PlainDir,
    OtherRepo { description: String },
    OtherBranch { head_ref: String },
    DetachedHead,
}

/// Pure: where to run, or why not. Checks that do not depend on the disk come
/// first: an untrusted path is never acted on, whatever is there.
pub fn decide(f: &Facts) -> Placement {
    match f.place {
        Place::OutsideRoot => return Placement::Refuse(Refusal::OutsideRoot),
        Place::ElsewhereInRoot => return Placement::Refuse(Refusal::ElsewhereInRoot),
        Place::Expected => {}
    }
    if f.recorded_branch != f.branch {
        return Placement::Refuse(Refusal::ForeignBranch);
    }
    let occupied = |o| Placement::Refuse(Refusal::Occupied(o));
    match &f.at_path {
        AtPath::Nothing if !f.branch_exists => Placement::Refuse(Refusal::Gone),
        AtPath::Nothing => match (&f.branch_checked_out_at, &f.branch_in_missing_worktree) {
            (Some(other), _) => {
                Placement::Refuse(Refusal::BranchCheckedOutElsewhere(other.clone()))
            }
            (None, Some((other, locked))) => {
                Placement::Refuse(Refusal::BranchInMissingWorktree(other.clone(), *locked))
            }
            (None, None) => Placement::Recreate {
                stale_entries: f.stale_entries_here.clone(),
            },
        },
        AtPath::Dir(DirKind::OurWorktree { head_ref: Some(h) })
            if *h == format!("refs/heads/{}", f.branch) =>
        {
            Placement::Use
        }
        AtPath::Dir(DirKind::OurWorktree { head_ref: Some(h) }) => {
            occupied(Occupant::OtherBranch {
                head_ref: h.clone(),
            })
        }
        AtPath::Dir(DirKind::OurWorktree { head_ref: None }) => occupied(Occupant::DetachedHead),
        AtPath::Dir(DirKind::OtherRepo { description }) => occupied(Occupant::OtherRepo {
            description: description.clone(),
        }),
        AtPath::Dir(DirKind::Plain { empty: true }) => occupied(Occupant::EmptyDir),
        AtPath::Dir(DirKind::Plain { empty: false }) => occupied(Occupant::PlainDir),
        AtPath::File => occupied(Occupant::File),
        AtPath::Symlink { target, dangling } => occupied(Occupant::Symlink {
            target: target.clone(),
            dangling: *dangling,
        }),
        AtPath::Special => occupied(Occupant::Special),
    }
}

/// Where a collected session goes back to (`revive`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revival {
    /// Its worktree is there after all (a revival whose record update failed).
    Use,
    /// `git worktree add` at the recorded path: from the branch when it exists,
    /// else on a new branch at the last known tip (`new_branch`).
    Recreate {
        stale_entries: Vec<String>,
        new_branch: bool,
    },
    /// Why not, beyond the placement rules (no proof, no tip): words.
    Refuse(String),
    /// The placement rules refuse, as for any session.
    Placement(Refusal),
}

/// Pure: a collected session is recreated at its recorded path when that path
/// is free and exactly `<worktree root>/<id>` (the rules of [`decide`]), this
/// machine's local proof shows bullpen created it there (`created_here`), and
/// its branch exists or its last known tip is a commit here (`tip_known`).
pub fn revive(f: &Facts, created_here: Result<(), String>, tip_known: bool) -> Revival {
    if let Err(why) = created_here {
        return Revival::Refuse(why);
    }
    let placement = decide(&Facts {
        branch_exists: true,
        ..f.clone()
    });
    match placement {
        Placement::Use => Revival::Use,
        Placement::Refuse(why) => Revival::Placement(why),
        Placement::Recreate { .. } if !f.branch_exists && !tip_known => Revival::Refuse(format!(
            "its branch {} is gone and its last tip is not known here",
            f.branch
        )),
        Placement::Recreate { stale_entries } => Revival::Recreate {
            stale_entries,
            new_branch: !f.branch_exists,
        },
    }
}

impl Occupant {
    /// "a regular file", "a worktree of this repository on branch main", ...
    pub fn describe(&self) -> String {
        match self {
            Occupant::File => "a regular file".to_owned(),
            Occupant::Symlink {
                target,
                dangling: true,
            } => format!("a dangling symlink (to {})", target.display()),
            Occupant::Symlink { target, .. } => format!("a symlink (to {})", target.display()),
            Occupant::Special => "a special file (fifo, socket or device)".to_owned(),
            Occupant::EmptyDir => "an empty directory".to_owned(),
            Occupant::PlainDir => "a plain directory that is not a git worktree".to_owned(),
            Occupant::OtherRepo { description } => description.clone(),
            Occupant::OtherBranch { head_ref } => format!(
                "a worktree of this repository on another branch ({})",
                head_ref.strip_prefix("refs/heads/").unwrap_or(head_ref)
            ),
            Occupant::DetachedHead => {
                "a worktree of this repository with a detached HEAD".to_owned()
            }
        }
    }
}

/// Pure: the refusal as an error people can act on, with its hints.
pub fn explain(refusal: &Refusal, f: &Facts) -> Error {
    let id = &f.id;
    // The record's path, escaped: a hand edit cannot write to the terminal.
    let path = escaped(&f.path.to_string_lossy());
    let branch = &f.branch;
    let start_again = start_again_hint(id, f.branch_exists, &f.remote_branches);
    match refusal {
        Refusal::OutsideRoot => Error::refused(format!(
            "cannot resume session {id}: its record says the worktree is {path}, which is not \
             inside the worktree root {root}; records can arrive from a fetch or a hand edit, \
             so bullpen does not act on that path",
            root = f.worktree_root.display()
        ))
        .hint(format!(
            "if the worktree root moved, point git config bullpen.worktreeRoot at the \
             directory that holds {id}'s worktree"
        ))
        .hint(start_again),
        Refusal::ElsewhereInRoot => Error::refused(format!(
            "cannot resume session {id}: its record says the worktree is {path}, but session \
             {id}'s worktree belongs at {expected}; the record was edited by hand or is \
             corrupt, so bullpen does not act on that path",
            expected = f.worktree_root.join(id).display()
        ))
        .hint(start_again),
        Refusal::ForeignBranch => Error::refused(format!(
            "cannot resume session {id}: its record names branch {recorded}, but session \
             {id}'s branch is {branch}; the record was edited by hand or is corrupt",
            recorded = quoted(&f.recorded_branch)
        ))
        .hint(format!(
            "inspect its history with `git log -p refs/bullpen/sessions/{id}`"
        )),
        Refusal::Gone => {
            let hint = match f.remote_branches.first() {
                Some(remote) => format!(
                    "the remote-tracking branch {remote} still exists: \
                     `git branch {branch} {remote}`, then resume again"
                ),
                None => format!("the session's history is in `git log refs/bullpen/sessions/{id}`"),
            };
            Error::refused(format!(
                "cannot resume session {id}: its worktree {path} is gone and so is its branch \
                 {branch}; there is nothing to resume from"
            ))
            .hint(hint)
        }
        Refusal::BranchCheckedOutElsewhere(other) => Error::refused(format!(
            "cannot resume session {id}: its worktree {path} is gone and its branch {branch} is \
             checked out in another worktree, {other}",
            other = other.display()
        ))
        .hint(format!(
            "move that worktree back with `git worktree move {other} {path}`, \
             or switch it to another branch, then resume again",
            other = other.display()
        )),
        Refusal::BranchInMissingWorktree(other, locked) => {
            let other = other.display();
            let unlock = if *locked {
                format!("`git worktree unlock {other}`, then ")
            } else {
                String::new()
            };
            Error::refused(format!(
                "cannot resume session {id}: its worktree {path} is gone and its branch {branch} \
                 is checked out in the worktree registered at {other}, whose directory is \
                 missing; bullpen leaves other worktrees' registrations alone"
            ))
            .hint(format!(
                "if {other} is on a disk that is not mounted, mount it; if it is gone for good, \
                 {unlock}`git worktree remove {other}` unregisters it; then resume again"
            ))
        }
        Refusal::Occupied(what) => {
            let hint = match what {
                Occupant::EmptyDir => format!(
                    "`rmdir {path}`, then resume again to recreate the worktree from {branch}"
                ),
                Occupant::OtherBranch { .. } | Occupant::DetachedHead => format!(
                    "if the session should go on there, `git -C {path} switch {branch}`, \
                     then resume again"
                ),
                _ => format!(
                    "move it aside, then resume again to recreate the worktree from {branch}"
                ),
            };
            Error::refused(format!(
                "cannot resume session {id}: {path} is occupied by {what}; bullpen runs a \
                 session only in its own worktree and leaves what is there alone",
                what = what.describe()
            ))
            .hint(hint)
        }
    }
}

/// Pure: how to start again from what is left of a session's branch (a hint).
pub fn start_again_hint(id: &str, branch_exists: bool, remote_branches: &[String]) -> String {
    if branch_exists {
        format!("to start again from its branch: `git bullpen spawn <new-id> --base bullpen/{id}`")
    } else if let Some(remote) = remote_branches.first() {
        format!(
            "to start again from its pushed branch: `git bullpen spawn <new-id> --base {remote}`"
        )
    } else {
        format!(
            "its branch bullpen/{id} is gone; its history is in \
             `git log refs/bullpen/sessions/{id}`"
        )
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
