//! What `gc` does, decided as a pure function over plain facts (no git, no I/O):
//! [`plan_session`] for each session, [`plan_admin_entry`] and [`plan_orphan`]
//! for leftovers, and [`untrusted`] for recorded paths that must never be touched.
//! `gc --dry-run` and `gc` print and do what these return; the real run asks
//! again, with fresh facts, right before it removes anything.

use crate::model::status::Ignored;
use crate::model::time::Expire;
use crate::model::usage::{Busy, User};
use crate::model::{Dirt, Evidence, Nested, Oid, State, Unmerged};

mod leftovers;
mod places;
mod reason;

pub use leftovers::{
    plan_admin_entry, plan_half_removed, plan_orphan, AdminDecision, AdminFacts, Contents,
    HalfRemovedFacts, OrphanDecision, OrphanFacts,
};
pub use places::{untrusted, Places};
pub use reason::Reason;

/// What is on disk at a session's recorded worktree path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OnDisk {
    Missing,
    Directory,
    /// A file, a symlink (dangling too), a device...: described.
    Other(String),
}

/// The admin entry (`<common>/worktrees/<id>`) registered for the recorded path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    pub admin_id: String,
    /// Full ref HEAD points at; `None` when detached or unreadable.
    pub head_ref: Option<String>,
    pub locked: bool,
}

/// What the directory's own `.git` entry says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Absent,
    /// A `.git` directory: some repository's top level.
    Repository,
    /// A `.git` file into this repository's `worktrees/<admin_id>`.
    Ours {
        admin_id: String,
        admin_exists: bool,
    },
    Foreign(String),
}

/// Where the session branch stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Branch {
    Missing,
    /// Its work is on a remote, and how gc knows (reachable from a
    /// remote-tracking ref, or its changes contained in an integration ref).
    Published {
        tip: Oid,
        evidence: Evidence,
    },
    /// `ahead`: commits not on any remote, when counted; `found`: what the
    /// proof of content found of its changes, when anything worth saying.
    Unpublished {
        tip: Oid,
        ahead: Option<usize>,
        found: Option<Unmerged>,
    },
    /// A branch that holds no commit of its own: an interrupted spawn's, still
    /// at the base it was made from, or one whose tip a remote reaches and that
    /// is its base (or behind it). Deleting it loses no commit, and it is never
    /// called published.
    AtBase {
        tip: Oid,
    },
}

impl Branch {
    pub fn tip(&self) -> Option<Oid> {
        match self {
            Branch::Missing => None,
            Branch::Published { tip, .. }
            | Branch::Unpublished { tip, .. }
            | Branch::AtBase { tip } => Some(*tip),
        }
    }

    /// How it is published, when it is.
    pub fn evidence(&self) -> Option<&Evidence> {
        match self {
            Branch::Published { evidence, .. } => Some(evidence),
            _ => None,
        }
    }
}

/// Whether the session's own process (recorded `running`) is alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    NotRunning,
    Alive {
        pid: u32,
    },
    /// Recorded running, but with nothing to check.
    Unknown,
}

/// A teardown that an earlier `gc` started (written to the record right before
/// it began deleting): the tree was proven published, clean and idle then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub admin_id: String,
    pub tip: Oid,
}

/// An agent session's conversation: its agent keeps it by the worktree's path
/// (Claude Code, Codex), so it is work even where the branch holds no commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversation {
    pub agent: String,
    /// Its last activity, seconds since the epoch: the latest of the record's
    /// creation, run start and end (`None`: none of them reads as a time).
    pub last_active: Option<i64>,
    /// `bullpen.gc.agentGrace`, read, and as written.
    pub grace: Expire,
    pub grace_value: String,
}

impl Conversation {
    /// Still within its grace period (or cannot tell: kept).
    pub fn within_grace(&self) -> bool {
        match (self.grace, self.last_active) {
            (Expire::Never, _) | (_, None) => true,
            (Expire::Before(cutoff), Some(t)) => t > cutoff,
        }
    }
}

/// Every fact `plan_session` needs about one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFacts {
    pub id: String,
    pub state: State,
    /// The recorded worktree path (untrusted).
    pub worktree: String,
    /// `bullpen/<id>`.
    pub branch: String,
    /// `Some(why)` when the recorded path or branch must never be acted on.
    pub untrusted: Option<String>,
    pub on_disk: OnDisk,
    /// The admin entry registered for this path, if any.
    pub registration: Option<Registration>,
    pub link: Link,
    pub branch_state: Branch,
    /// `None` when not computed: status is the costly fact, so it is computed
    /// only for sessions nothing else keeps. `Err` when it failed. Compared with
    /// the branch tip when the admin entry is gone or a teardown is finished.
    pub dirt: Option<Result<Dirt, String>>,
    /// Repositories deleting the worktree would delete: nested in the directory
    /// (submodules, any `.git` below the top, ignored or not) and the submodule
    /// git dirs under its admin entry's `modules/`. Computed after `dirt`, only
    /// where it decides; `None` until then.
    pub nested: Option<Result<Vec<Nested>, String>>,
    /// What of the directory is ignored (and so goes with it unmentioned as
    /// work): counted by the walk that looks for nested repositories.
    pub ignored: Option<Ignored>,
    pub liveness: Liveness,
    pub busy: Busy,
    /// Processes the session's ended run left behind, proven its own (they
    /// descend from its lingering supervisor: `trust::decide::leftover_authority`).
    pub left_behind: Vec<u32>,
    pub marker: Option<Marker>,
    /// Other worktrees (main included) whose HEAD is on the session branch.
    pub checked_out_elsewhere: Vec<String>,
    /// Local proof that bullpen created this worktree here, at this path (`Err`:
    /// why there is none): the authority to delete the worktree and the branch.
    pub created_here: Result<(), String>,
    /// While `provisioning`: the spawn that is creating it, if it still lives.
    pub spawner_alive: Option<u32>,
    /// An agent session that ran: its conversation (`None` for a plain session).
    pub conversation: Option<Conversation>,
    /// The files bullpen copied in (`.worktreeinclude`, remembered in the local
    /// state) that changed since, by path (`Err`: why it cannot tell).
    pub edited_copies: Result<Vec<String>, String>,
}

/// How a worktree that may go is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// `git worktree remove`, falling back to a confined removal and the removal
    /// of its own admin entry.
    GitWorktreeRemove,
    /// The admin entry is gone: confined removal directly.
    AdminEntryGone,
    /// An earlier teardown was interrupted (git died or a late writer stood in
    /// its way): finish it (confined removal, then its admin entry if left).
    FinishTeardown,
}

/// What to do with one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Remove the worktree, delete the branch (if it still points at `tip`),
    /// mark the record collected.
    Remove {
        via: Via,
        tip: Oid,
    },
    /// The worktree is already gone: remove its admin entry if any, delete the
    /// branch if it still points at `tip`, mark the record collected.
    Collect {
        tip: Option<Oid>,
    },
    Keep(Vec<Reason>),
}

impl Decision {
    /// Kept only for reasons that may pass (`--wait` waits for those).
    pub fn is_waitable(&self) -> bool {
        matches!(self, Decision::Keep(r) if !r.is_empty() && r.iter().all(Reason::is_transient))
    }

    /// Kept only because the status has not been computed yet.
    pub fn needs_status(&self) -> bool {
        matches!(self, Decision::Keep(r) if r.as_slice() == [Reason::StatusNotChecked])
    }

    /// Kept only because nested repositories have not been looked for yet.
    pub fn needs_nested(&self) -> bool {
        matches!(self, Decision::Keep(r) if r.as_slice() == [Reason::NestedNotChecked])
    }
}

/// How the directory would be taken down, when it is there and ours: decides
/// what its status is compared with (its index, or the branch tip).
pub fn via(f: &SessionFacts) -> Option<Via> {
    match choose_via(f) {
        Chosen::Via(via, _) => Some(via),
        Chosen::NotOurs(_) => None,
    }
}

enum Chosen {
    /// With the reasons found on the way (locked, HEAD elsewhere, marker stale).
    Via(Via, Vec<Reason>),
    NotOurs(Reason),
}

/// A directory is there: is it ours, and how do we take it down?
fn choose_via(f: &SessionFacts) -> Chosen {
    let mut reasons = Vec::new();
    let marker_tip = f.marker.as_ref().map(|m| m.tip);
    let via = match (&f.registration, &f.link) {
        (
            Some(reg),
            Link::Ours {
                admin_id,
                admin_exists: true,
            },
        ) if *admin_id == reg.admin_id => {
            registration_reasons(f, reg, &mut reasons);
            Via::GitWorktreeRemove
        }
        (Some(reg), Link::Absent)
            if f.marker.as_ref().is_some_and(|m| m.admin_id == reg.admin_id) =>
        {
            // git died during `git worktree remove` an earlier gc ran: it deleted
            // `.git` (and perhaps more) but not yet the admin entry.
            registration_reasons(f, reg, &mut reasons);
            if f.branch_state.tip() != marker_tip {
                reasons.push(Reason::MarkerStale);
            }
            Via::FinishTeardown
        }
        (None, link) if f.marker.is_some() && marker_matches_link(f, link) => {
            // An earlier gc proved this tree published, clean and idle and started
            // deleting it; what is left is what it was deleting (plus whatever a
            // late writer put back). Finish it if nothing moved since.
            if f.branch_state.tip() != marker_tip {
                reasons.push(Reason::MarkerStale);
            }
            Via::FinishTeardown
        }
        (
            None,
            Link::Ours {
                admin_exists: false,
                ..
            },
        ) => Via::AdminEntryGone,
        (Some(reg), Link::Repository) => {
            // `git worktree repair` cannot help: it never replaces a `.git` directory.
            return Chosen::NotOurs(Reason::NotOurs(format!(
                "git registers worktree entry {} for it, but {}; not gc's to remove",
                reg.admin_id,
                describe_link(&Link::Repository)
            )))
        }
        (Some(reg), link) => {
            return Chosen::NotOurs(Reason::NotOurs(format!(
                "its .git does not match the worktree entry {} registered for it ({}); run `git worktree repair`",
                reg.admin_id,
                describe_link(link)
            )))
        }
        (None, link) => {
            return Chosen::NotOurs(Reason::NotOurs(format!(
                "not a registered worktree of this repository ({})",
                describe_link(link)
            )))
        }
    };
    Chosen::Via(via, reasons)
}

fn registration_reasons(f: &SessionFacts, reg: &Registration, reasons: &mut Vec<Reason>) {
    if reg.head_ref.as_deref() != Some(branch_ref(&f.branch).as_str()) {
        reasons.push(Reason::HeadElsewhere(reg.head_ref.clone()));
    }
    if reg.locked {
        reasons.push(Reason::Locked);
    }
}

/// The pure gc decision for one session.
pub fn plan_session(f: &SessionFacts) -> Decision {
    if let Some(why) = &f.untrusted {
        return Decision::Keep(vec![Reason::Untrusted(why.clone())]);
    }
    if let (State::Provisioning, Some(pid)) = (f.state, f.spawner_alive) {
        return Decision::Keep(vec![Reason::Provisioning { pid }]);
    }
    // A provisioning session whose spawner is gone is an interrupted spawn: it is
    // collected like any other, its branch still at the base counting as nothing
    // to lose (`Branch::AtBase`); whatever holds work keeps it.
    let mut reasons = Vec::new();
    match &f.on_disk {
        OnDisk::Other(what) => return Decision::Keep(vec![Reason::NotADirectory(what.clone())]),
        OnDisk::Missing => {
            if f.registration.as_ref().is_some_and(|r| r.locked) {
                reasons.push(Reason::Locked);
            }
            if let Branch::Unpublished { ahead, found, .. } = &f.branch_state {
                reasons.push(Reason::GoneUnpublished {
                    ahead: *ahead,
                    found: found.clone(),
                });
            }
            if !f.checked_out_elsewhere.is_empty() {
                reasons.push(Reason::CheckedOutElsewhere(f.checked_out_elsewhere.clone()));
            }
            liveness_reasons(f, &mut reasons);
            // Deleting the branch or git's entry needs the local proof; marking a
            // record whose worktree and branch are both gone collected does not.
            if f.branch_state.tip().is_some() || f.registration.is_some() {
                created_here_reason(f, &mut reasons);
            }
            // Its admin entry, if still registered, goes too: with it any
            // submodule git dir under its `modules/`.
            let nested_pending = f.registration.is_some() && nested_reasons(f, &mut reasons);
            if reasons.is_empty() && nested_pending {
                reasons.push(Reason::NestedNotChecked);
            }
            if reasons.is_empty() {
                return Decision::Collect {
                    tip: f.branch_state.tip(),
                };
            }
            return Decision::Keep(dedup(reasons));
        }
        OnDisk::Directory => {}
    }

    let (via, mut reasons) = match choose_via(f) {
        Chosen::Via(via, found) => (via, found),
        Chosen::NotOurs(why) => return Decision::Keep(vec![why]),
    };

    match &f.branch_state {
        Branch::Missing => reasons.push(Reason::BranchMissing),
        Branch::Unpublished { ahead, found, .. } => reasons.push(Reason::Unpublished {
            ahead: *ahead,
            found: found.clone(),
        }),
        Branch::AtBase { .. } => conversation_reason(f, &mut reasons),
        Branch::Published { .. } => {}
    }
    created_here_reason(f, &mut reasons);
    if !f.checked_out_elsewhere.is_empty() {
        reasons.push(Reason::CheckedOutElsewhere(f.checked_out_elsewhere.clone()));
    }
    let mut status_pending = false;
    match &f.dirt {
        // A teardown gc started deleted files; anything else is new.
        Some(Ok(d)) if via == Via::FinishTeardown && d.holds_nothing_new() => {}
        Some(Ok(d)) if via == Via::FinishTeardown => {
            reasons.push(Reason::RemnantHoldsNew(d.clone()))
        }
        Some(Ok(d)) if d.is_clean() => {}
        Some(Ok(d)) => reasons.push(Reason::Dirty(d.clone())),
        Some(Err(why)) => reasons.push(Reason::DirtUnknown(why.clone())),
        None => status_pending = true,
    }
    match &f.edited_copies {
        Ok(paths) if paths.is_empty() => {}
        Ok(paths) => reasons.push(Reason::EditedCopies(paths.clone())),
        Err(why) => reasons.push(Reason::CopiesUnknown(why.clone())),
    }
    let nested_pending = nested_reasons(f, &mut reasons);
    liveness_reasons(f, &mut reasons);
    match &f.busy {
        Busy::Idle => {}
        Busy::InUse(users) => {
            let (left, others): (Vec<User>, Vec<User>) = users
                .iter()
                .cloned()
                .partition(|u| f.left_behind.contains(&u.pid));
            if !left.is_empty() {
                reasons.push(Reason::LeftBehind {
                    users: left,
                    id: f.id.clone(),
                });
            }
            if !others.is_empty() {
                reasons.push(Reason::Busy(others));
            }
        }
        Busy::CannotTell(why) => reasons.push(Reason::BusyUnknown(why.clone())),
    }
    if reasons.is_empty() && status_pending {
        reasons.push(Reason::StatusNotChecked);
    } else if reasons.is_empty() && nested_pending {
        reasons.push(Reason::NestedNotChecked);
    }
    match (reasons.is_empty(), f.branch_state.tip()) {
        (true, Some(tip)) => Decision::Remove { via, tip },
        _ => Decision::Keep(dedup(reasons)),
    }
}

/// Every reason once, in the order found.
fn dedup(reasons: Vec<Reason>) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::with_capacity(reasons.len());
    for r in reasons {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Whether gc should compute the status of this session's directory: it is
/// there and ours to look at, and not computed yet. Also for a session kept for
/// other reasons, so that the report names everything that keeps it.
pub fn wants_status(f: &SessionFacts) -> bool {
    f.dirt.is_none()
        && f.untrusted.is_none()
        && f.on_disk == OnDisk::Directory
        && !(f.state == State::Provisioning && f.spawner_alive.is_some())
        && via(f).is_some()
}

/// `rm --force`: gc's decision when unpublished commits and uncommitted changes
/// do not count (they are what `--force` discards). Everything else still
/// keeps the session: trust and the local proof, its own process running, other
/// processes using it, a lock, the branch checked out elsewhere, repositories
/// nested in it that hold work (they are not the session's to discard).
pub fn plan_forced(f: &SessionFacts) -> Decision {
    let mut f = f.clone();
    // Its commits count for nothing, as at an interrupted spawn's base: no
    // evidence of publishing is claimed for them.
    if let Branch::Unpublished { tip, .. } = f.branch_state {
        f.branch_state = Branch::AtBase { tip };
    }
    f.dirt = Some(Ok(Dirt::default()));
    // An agent's conversation goes with the worktree (it is not deleted: its
    // agent keeps it by the path, where a resume recreates the worktree).
    f.conversation = None;
    // Edited copies are uncommitted changes too.
    f.edited_copies = Ok(Vec::new());
    plan_session(&f)
}

/// What `rm --force` lets go of this session's work that is not commits or
/// changes git sees: an agent's conversation in its grace period, edited copies.
pub fn forced_away(f: &SessionFacts) -> Vec<Reason> {
    let mut out = Vec::new();
    if matches!(f.branch_state, Branch::AtBase { .. }) {
        conversation_reason(f, &mut out);
    }
    if let Ok(paths) = &f.edited_copies {
        if !paths.is_empty() {
            out.push(Reason::EditedCopies(paths.clone()));
        }
    }
    out
}

/// An agent session whose branch holds no commit of its own: its conversation
/// is kept while within its grace period.
fn conversation_reason(f: &SessionFacts, reasons: &mut Vec<Reason>) {
    if let Some(c) = f.conversation.as_ref().filter(|c| c.within_grace()) {
        reasons.push(Reason::Conversation(c.clone()));
    }
}

/// Nested repositories that hold work keep the worktree. `true`: not looked for yet.
fn nested_reasons(f: &SessionFacts, reasons: &mut Vec<Reason>) -> bool {
    match &f.nested {
        Some(Ok(repos)) => {
            let work: Vec<Nested> = repos.iter().filter(|n| n.holds_work()).cloned().collect();
            if !work.is_empty() {
                reasons.push(Reason::Nested(work));
            }
            false
        }
        Some(Err(why)) => {
            reasons.push(Reason::NestedUnknown(why.clone()));
            false
        }
        None => true,
    }
}

fn created_here_reason(f: &SessionFacts, reasons: &mut Vec<Reason>) {
    if let Err(why) = &f.created_here {
        reasons.push(Reason::NotCreatedHere(why.clone()));
    }
}

fn liveness_reasons(f: &SessionFacts, reasons: &mut Vec<Reason>) {
    match f.liveness {
        Liveness::NotRunning => {}
        Liveness::Alive { pid } => reasons.push(Reason::Alive { pid }),
        Liveness::Unknown => reasons.push(Reason::AliveUnknown),
    }
}

/// A leftover of an interrupted teardown may still have its `.git` file (dangling,
/// to the admin entry the marker names) or none at all.
fn marker_matches_link(f: &SessionFacts, link: &Link) -> bool {
    match (link, &f.marker) {
        (Link::Absent, Some(_)) => true,
        (
            Link::Ours {
                admin_id,
                admin_exists: false,
            },
            Some(m),
        ) => *admin_id == m.admin_id,
        _ => false,
    }
}

fn describe_link(link: &Link) -> String {
    match link {
        Link::Absent => "it has no .git file".to_owned(),
        Link::Repository => "it holds a repository of its own (.git directory)".to_owned(),
        Link::Ours {
            admin_id,
            admin_exists,
        } => format!(
            "its .git file points at worktree entry {admin_id}{}",
            if *admin_exists { "" } else { ", which is gone" }
        ),
        Link::Foreign(why) => why.clone(),
    }
}

fn branch_ref(branch: &str) -> String {
    format!("refs/heads/{branch}")
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
