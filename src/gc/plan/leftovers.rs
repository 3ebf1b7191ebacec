//! The plans for leftovers: admin entries of vanished session worktrees,
//! entries git left half-removed, orphaned directories in the worktree root.

use super::reason::plural;
use super::*;
use crate::model::status::nested_work;
use crate::model::usage::{describe_users, Busy};
use crate::model::Nested;

/// Facts about one registered admin entry whose worktree directory is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminFacts {
    pub admin_id: String,
    pub path: String,
    pub locked: bool,
    /// The session whose worktree (`<worktree root>/<id>`) it is registered
    /// for, if any: only those are gc's. A user's worktree on a disk that is not
    /// mounted keeps its registration.
    pub session: Option<String>,
    /// Local proof that bullpen created that session's worktree here, at that
    /// path (`Err`: why there is none): the authority to remove its entry.
    pub created_here: Result<(), String>,
    /// The submodule git dirs under its `modules/` (computed for sessions' entries).
    pub modules: Option<Result<Vec<Nested>, String>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdminDecision {
    /// Remove exactly this entry.
    Prune,
    Keep(String),
    /// Not a session's: not gc's to judge, not reported.
    NotOurs,
}

/// Pure: an admin entry of a session's vanished worktree is removed unless
/// locked or holding submodule work; anyone else's is left alone.
pub fn plan_admin_entry(f: &AdminFacts) -> AdminDecision {
    if f.session.is_none() {
        return AdminDecision::NotOurs;
    }
    if let Err(why) = &f.created_here {
        return AdminDecision::Keep(why.clone());
    }
    if f.locked {
        return AdminDecision::Keep(
            "locked (git worktree unlock, or plug its drive back in)".to_owned(),
        );
    }
    match &f.modules {
        None => AdminDecision::Keep("its submodule git dirs were not looked at".to_owned()),
        Some(Err(why)) => AdminDecision::Keep(format!(
            "cannot tell whether its submodule git dirs hold work: {why}"
        )),
        Some(Ok(repos)) => match nested_work(repos) {
            None => AdminDecision::Prune,
            Some(work) => AdminDecision::Keep(work),
        },
    }
}

/// An admin entry git left half-removed (no `gitdir` file: a `git worktree
/// remove` killed part-way), which nothing lists any more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HalfRemovedFacts {
    pub admin_id: String,
    /// The session of that id whose worktree (`<worktree root>/<id>`) is gone
    /// and registered under no other entry, if any: only those are gc's.
    pub session: Option<String>,
    /// What its `HEAD` names (`None`: no `HEAD` left; `Some("")`: no branch).
    pub head: Option<String>,
    pub locked: bool,
    /// Local proof that bullpen created that session's worktree here.
    pub created_here: Result<(), String>,
}

/// Pure: a half-removed entry is finished only when it is a session's entry
/// (its name, its `HEAD` if any on the session's branch) that bullpen created
/// here; anyone else's is not gc's to judge.
pub fn plan_half_removed(f: &HalfRemovedFacts) -> AdminDecision {
    let Some(id) = &f.session else {
        return AdminDecision::NotOurs;
    };
    if f.head
        .as_ref()
        .is_some_and(|h| *h != branch_ref(&format!("bullpen/{id}")))
    {
        return AdminDecision::NotOurs;
    }
    if let Err(why) = &f.created_here {
        return AdminDecision::Keep(why.clone());
    }
    if f.locked {
        return AdminDecision::Keep("locked (git worktree unlock)".to_owned());
    }
    AdminDecision::Prune
}

/// What an unclaimed directory in the worktree root holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contents {
    /// Nothing but empty directories and possibly a `.git` file.
    NoWork {
        dot_git: Link,
    },
    /// `n` files or symlinks (besides a top-level `.git` file).
    Files(usize),
    /// A `.git` directory: someone's repository.
    Repository,
    Unreadable(String),
}

/// A directory in the worktree root that no registered worktree and no live
/// session claims, but that is bullpen's (a `.git` file into this repository's
/// worktree entries, or where a collected session's worktree was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrphanFacts {
    pub path: String,
    pub contents: Contents,
    pub busy: Busy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrphanDecision {
    Remove(String),
    Keep(String),
}

/// Pure: an orphaned directory is removed only when it holds no work and nobody
/// uses it; a `.git` file pointing at a live entry (registered elsewhere) is left
/// for a person to judge.
pub fn plan_orphan(f: &OrphanFacts) -> OrphanDecision {
    let why = match &f.contents {
        Contents::NoWork { dot_git } => match dot_git {
            Link::Absent => "nothing in it but empty directories".to_owned(),
            Link::Ours {
                admin_exists: false,
                ..
            } => "only a dangling .git file".to_owned(),
            Link::Foreign(why) => {
                return OrphanDecision::Keep(format!(
                    "its only file is a .git file that is not this repository's ({why})"
                ))
            }
            Link::Ours {
                admin_id,
                admin_exists: true,
            } => {
                // Not `git worktree repair <path>`: that would move the live entry
                // (registered for another directory) here.
                return OrphanDecision::Keep(format!(
                    "its only file is a .git file pointing at worktree entry {admin_id}, which \
                     is registered for another directory; remove it by hand if you do not need it"
                ));
            }
            Link::Repository => return OrphanDecision::Keep("it holds a repository".to_owned()),
        },
        Contents::Files(n) => {
            return OrphanDecision::Keep(format!(
                "not a registered worktree, but it holds {}; look inside and remove it by hand",
                plural(*n, "file", "files")
            ))
        }
        Contents::Repository => {
            return OrphanDecision::Keep("it holds a repository (.git directory)".to_owned())
        }
        Contents::Unreadable(why) => {
            return OrphanDecision::Keep(format!("cannot look inside: {why}"))
        }
    };
    match &f.busy {
        Busy::Idle => OrphanDecision::Remove(why),
        Busy::InUse(users) => OrphanDecision::Keep(format!("busy: {}", describe_users(users))),
        Busy::CannotTell(why) => {
            OrphanDecision::Keep(format!("cannot tell whether it is in use: {why}"))
        }
    }
}
