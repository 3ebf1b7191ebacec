//! Why gc keeps a session, in words people can act on.

use super::*;
use crate::model::command::quoted;
use crate::model::config::{GC_AGENT_GRACE, WORKTREE_INCLUDE};
use crate::model::status::{dirt_words, nested_words};
use crate::model::time;
use crate::model::usage::{describe_users, User};
use crate::model::{Dirt, Nested, Unmerged};

/// Why something is kept. Each has a message people can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Untrusted(String),
    /// A spawn (this pid) is still creating it.
    Provisioning {
        pid: u32,
    },
    /// Nothing on this machine proves bullpen created it: why.
    NotCreatedHere(String),
    NotADirectory(String),
    NotOurs(String),
    HeadElsewhere(Option<String>),
    Locked,
    BranchMissing,
    Unpublished {
        ahead: Option<usize>,
        found: Option<Unmerged>,
    },
    GoneUnpublished {
        ahead: Option<usize>,
        found: Option<Unmerged>,
    },
    Dirty(Dirt),
    DirtUnknown(String),
    /// What an interrupted teardown left holds something new (not only deletions).
    RemnantHoldsNew(Dirt),
    /// Repositories nested in it (or submodule git dirs under its admin entry)
    /// that hold work.
    Nested(Vec<Nested>),
    NestedUnknown(String),
    Alive {
        pid: u32,
    },
    AliveUnknown,
    Busy(Vec<User>),
    /// Users that the session's run left behind; `git bullpen stop <id>` ends them.
    LeftBehind {
        users: Vec<User>,
        id: String,
    },
    BusyUnknown(String),
    MarkerStale,
    CheckedOutElsewhere(Vec<String>),
    /// An agent session with no commit of its own, active within
    /// `bullpen.gc.agentGrace`: its conversation may be all its work.
    Conversation(Conversation),
    /// Files bullpen copied in that changed since (git ignores them).
    EditedCopies(Vec<String>),
    CopiesUnknown(String),
    /// Only this stands in the way: compute the status and plan again.
    StatusNotChecked,
    /// Only this stands in the way: look for nested repositories and plan again.
    NestedNotChecked,
}

impl Reason {
    /// Reasons that may go away by themselves (what `--wait` waits for).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Reason::Alive { .. } | Reason::Busy(_) | Reason::LeftBehind { .. }
        )
    }

    pub fn describe(&self, branch: &str) -> String {
        match self {
            Reason::Untrusted(why) => format!("untrusted record: {why}"),
            Reason::Provisioning { pid } => {
                format!("still being created (by `git bullpen spawn`, pid {pid})")
            }
            Reason::NotCreatedHere(why) => why.clone(),
            Reason::NotADirectory(what) => format!("the recorded worktree path is {what}"),
            Reason::NotOurs(why) => why.clone(),
            Reason::HeadElsewhere(Some(r)) => {
                format!("HEAD is on {r}, not {branch}")
            }
            Reason::HeadElsewhere(None) => format!("HEAD is detached, not on {branch}"),
            Reason::Locked => "the worktree is locked (git worktree unlock)".to_owned(),
            Reason::BranchMissing => format!("branch {branch} is gone"),
            Reason::Unpublished { ahead, found } => format!(
                "{} not on any remote{}",
                commits(*ahead),
                found_words(found.as_ref())
            ),
            Reason::GoneUnpublished { ahead, found } => format!(
                "the worktree is gone but {} on {branch} not on any remote{}",
                commits_are(*ahead),
                found_words(found.as_ref())
            ),
            Reason::Dirty(d) => dirt_words(d),
            Reason::DirtUnknown(why) => format!("cannot tell whether it is clean: {why}"),
            Reason::RemnantHoldsNew(d) => format!(
                "an earlier gc started removing it, but what is left holds what {branch} does \
                 not: {}; look inside, and remove it by hand if nothing there is needed",
                // Its deletions are the teardown's own.
                dirt_words(&Dirt {
                    deleted: 0,
                    ..d.clone()
                })
            ),
            Reason::Nested(repos) => repos
                .iter()
                .map(nested_words)
                .collect::<Vec<_>>()
                .join("; "),
            Reason::NestedUnknown(why) => {
                format!("cannot tell whether the repositories nested in it hold work: {why}")
            }
            Reason::Alive { pid } => format!("busy: the session's process (pid {pid}) is running"),
            Reason::AliveUnknown => "recorded running, with no process to check".to_owned(),
            Reason::Busy(users) => format!("busy: {}", describe_users(users)),
            Reason::LeftBehind { users, id } => format!(
                "busy: {}, left behind by its run (`git bullpen stop {id}` ends {})",
                describe_users(users),
                if users.len() == 1 { "it" } else { "them" }
            ),
            Reason::BusyUnknown(why) => format!("cannot tell whether it is in use: {why}"),
            Reason::MarkerStale => {
                format!("an earlier gc started removing it, but {branch} has moved since")
            }
            Reason::StatusNotChecked => {
                "cannot tell whether it is clean: its status was not computed".to_owned()
            }
            Reason::NestedNotChecked => {
                "cannot tell whether repositories nested in it hold work: not looked for".to_owned()
            }
            Reason::CheckedOutElsewhere(paths) => {
                format!("{branch} is also checked out in {}", paths.join(", "))
            }
            Reason::EditedCopies(paths) => {
                let mut shown: Vec<String> = paths.iter().take(5).map(|p| quoted(p)).collect();
                if paths.len() > 5 {
                    shown.push(format!("and {} more", paths.len() - 5));
                }
                format!(
                    "{} copied in from the main worktree ({WORKTREE_INCLUDE}) {} edited since: {}",
                    plural(paths.len(), "file", "files"),
                    if paths.len() == 1 { "was" } else { "were" },
                    shown.join(", ")
                )
            }
            Reason::CopiesUnknown(why) => format!(
                "cannot tell whether the files copied in from the main worktree \
                 ({WORKTREE_INCLUDE}) were edited: {why}"
            ),
            Reason::Conversation(c) => {
                let when = match c.last_active {
                    Some(t) => format!(
                        "last active {}, within {GC_AGENT_GRACE} {}",
                        time::rfc3339(t),
                        c.grace_value
                    ),
                    None => "when it was last active cannot be read".to_owned(),
                };
                format!(
                    "no commit of its own, but its agent {} keeps its conversation by the \
                     worktree's path ({when})",
                    quoted(&c.agent)
                )
            }
        }
    }
}

/// " (2 of 3 commits' changes are on origin/main)", or nothing.
fn found_words(found: Option<&Unmerged>) -> String {
    found
        .map(|u| format!(" ({})", u.words()))
        .unwrap_or_default()
}

fn commits(ahead: Option<usize>) -> String {
    match ahead {
        Some(1) => "1 commit".to_owned(),
        Some(n) => format!("{n} commits"),
        None => "commits".to_owned(),
    }
}

fn commits_are(ahead: Option<usize>) -> String {
    match ahead {
        Some(1) => "1 commit is".to_owned(),
        Some(n) => format!("{n} commits are"),
        None => "commits are".to_owned(),
    }
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
