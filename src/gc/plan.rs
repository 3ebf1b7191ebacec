//! What `gc` does, decided as a pure function over plain facts (no git, no I/O):
//! [`plan_session`] for each session, [`plan_admin_entry`] and [`plan_orphan`]
//! for leftovers, and [`untrusted`] for recorded paths that must never be touched.
//! `gc --dry-run` and `gc` print and do what these return; the real run asks
//! again, with fresh facts, right before it removes anything.

use std::path::{Component, Path};

use crate::model::paths::is_strictly_inside;
use crate::model::status::{dirt_words, nested_words, nested_work, Ignored};
use crate::model::usage::{describe_users, Busy, User};
use crate::model::{Dirt, Evidence, Nested, Oid, State, Unmerged};

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
    /// An interrupted spawn's branch, still at the base it was made from: it
    /// holds no commit of its own, so deleting it loses nothing.
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
    pub marker: Option<Marker>,
    /// Other worktrees (main included) whose HEAD is on the session branch.
    pub checked_out_elsewhere: Vec<String>,
    /// Local proof that bullpen created this worktree here, at this path (`Err`:
    /// why there is none): the authority to delete the worktree and the branch.
    pub created_here: Result<(), String>,
    /// While `provisioning`: the spawn that is creating it, if it still lives.
    pub spawner_alive: Option<u32>,
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
    BusyUnknown(String),
    MarkerStale,
    CheckedOutElsewhere(Vec<String>),
    /// Only this stands in the way: compute the status and plan again.
    StatusNotChecked,
    /// Only this stands in the way: look for nested repositories and plan again.
    NestedNotChecked,
}

impl Reason {
    /// Reasons that may go away by themselves (what `--wait` waits for).
    pub fn is_transient(&self) -> bool {
        matches!(self, Reason::Alive { .. } | Reason::Busy(_))
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

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
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
        Branch::Published { .. } | Branch::AtBase { .. } => {}
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
    let nested_pending = nested_reasons(f, &mut reasons);
    liveness_reasons(f, &mut reasons);
    match &f.busy {
        Busy::Idle => {}
        Busy::InUse(users) => reasons.push(Reason::Busy(users.clone())),
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
    plan_session(&f)
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

/// Places a recorded worktree path must never be, besides outside the root.
pub struct Places<'a> {
    pub worktree_root: &'a Path,
    pub home: Option<&'a Path>,
    /// The main worktree.
    pub repo: &'a Path,
    /// The common git dir.
    pub git_dir: &'a Path,
}

/// Pure: why a recorded worktree path must never be acted on, or `None`.
/// Checked on the path as recorded and, when it exists, as resolved
/// (`canonical`, against the canonical worktree root in `canonical_places`).
pub fn untrusted(
    path: &Path,
    places: &Places,
    canonical: Option<(&Path, &Places)>,
) -> Option<String> {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Some(format!(
            "{} is not an absolute, normalised path",
            path.display()
        ));
    }
    if let Some(why) = special(path, places) {
        return Some(why);
    }
    if !is_strictly_inside(path, places.worktree_root) {
        return Some(format!(
            "{} is outside the worktree root {} (did bullpen.worktreeRoot change?)",
            path.display(),
            places.worktree_root.display()
        ));
    }
    if let Some((resolved, cplaces)) = canonical {
        if resolved != path {
            if let Some(why) = special(resolved, cplaces) {
                return Some(format!(
                    "{} resolves to {}: {why}",
                    path.display(),
                    resolved.display()
                ));
            }
            if !is_strictly_inside(resolved, cplaces.worktree_root) {
                return Some(format!(
                    "{} resolves to {}, outside the worktree root {}",
                    path.display(),
                    resolved.display(),
                    cplaces.worktree_root.display()
                ));
            }
        }
    }
    None
}

fn special(path: &Path, places: &Places) -> Option<String> {
    let shown = path.display();
    if path.parent().is_none() {
        return Some(format!("{shown} is the filesystem root"));
    }
    if let Some(home) = places.home {
        if path == home {
            return Some(format!("{shown} is the home directory"));
        }
        if home.starts_with(path) {
            return Some(format!("{shown} contains the home directory"));
        }
    }
    if path == places.repo {
        return Some(format!("{shown} is the repository itself"));
    }
    if places.repo.starts_with(path) {
        return Some(format!("{shown} contains the repository"));
    }
    if path.starts_with(places.git_dir) || places.git_dir.starts_with(path) {
        return Some(format!("{shown} is (in) the repository's git directory"));
    }
    None
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::usage::Use;
    use crate::model::{NestedKind, Since};

    fn tip() -> Oid {
        "1111111111111111111111111111111111111111".parse().unwrap()
    }
    fn other_tip() -> Oid {
        "2222222222222222222222222222222222222222".parse().unwrap()
    }

    /// A session that gc may remove: every guard passes.
    fn removable() -> SessionFacts {
        SessionFacts {
            id: "s".into(),
            state: State::Exited,
            worktree: "/root/wt/s".into(),
            branch: "bullpen/s".into(),
            untrusted: None,
            on_disk: OnDisk::Directory,
            registration: Some(Registration {
                admin_id: "s".into(),
                head_ref: Some("refs/heads/bullpen/s".into()),
                locked: false,
            }),
            link: Link::Ours {
                admin_id: "s".into(),
                admin_exists: true,
            },
            branch_state: Branch::Published {
                tip: tip(),
                evidence: reachable(),
            },
            dirt: Some(Ok(Dirt::default())),
            nested: Some(Ok(Vec::new())),
            ignored: Some(Ignored::default()),
            liveness: Liveness::NotRunning,
            busy: Busy::Idle,
            marker: None,
            checked_out_elsewhere: Vec::new(),
            created_here: Ok(()),
            spawner_alive: None,
        }
    }

    fn reachable() -> Evidence {
        Evidence::Reachable {
            from: Some("origin/bullpen/s".into()),
        }
    }

    fn squashed(since: Since) -> Evidence {
        Evidence::Squashed {
            into: "origin/main".into(),
            commit: other_tip(),
            short: "2222222".into(),
            since,
        }
    }

    fn partly() -> Unmerged {
        Unmerged::Partly {
            into: "origin/main".into(),
            merged: 1,
            of: 2,
        }
    }

    fn unmerged(found: Option<Unmerged>) -> Branch {
        Branch::Unpublished {
            tip: tip(),
            ahead: Some(2),
            found,
        }
    }

    fn untracked(n: usize) -> Dirt {
        Dirt {
            untracked: n,
            ..Dirt::default()
        }
    }

    /// A submodule `lib` with these unpublished refs and this dirt.
    fn sub(unpublished: &[&str], dirt: Dirt) -> Nested {
        Nested {
            path: "lib".into(),
            kind: NestedKind::Submodule,
            unpublished: unpublished.iter().map(|s| s.to_string()).collect(),
            dirt: Some(dirt),
        }
    }

    fn user() -> User {
        User {
            pid: 4242,
            name: "pytest".into(),
            how: Use::OpenFile,
        }
    }

    fn keep(reasons: Vec<Reason>) -> Decision {
        Decision::Keep(reasons)
    }

    #[test]
    fn session_table() {
        let remove = Decision::Remove {
            via: Via::GitWorktreeRemove,
            tip: tip(),
        };
        type Edit = fn(&mut SessionFacts);
        let table: Vec<(&str, Edit, Decision)> = vec![
            ("all guards pass", |_| {}, remove.clone()),
            (
                "untrusted",
                |f| f.untrusted = Some("x".into()),
                keep(vec![Reason::Untrusted("x".into())]),
            ),
            (
                "provisioning, its spawner alive",
                |f| {
                    f.state = State::Provisioning;
                    f.spawner_alive = Some(7);
                },
                keep(vec![Reason::Provisioning { pid: 7 }]),
            ),
            (
                "an interrupted spawn, its branch at the base",
                |f| {
                    f.state = State::Provisioning;
                    f.branch_state = Branch::AtBase { tip: tip() };
                },
                remove.clone(),
            ),
            (
                "an interrupted spawn with a dirty worktree",
                |f| {
                    f.state = State::Provisioning;
                    f.branch_state = Branch::AtBase { tip: tip() };
                    f.dirt = Some(Ok(Dirt {
                        untracked: 1,
                        ..Dirt::default()
                    }));
                },
                keep(vec![Reason::Dirty(Dirt {
                    untracked: 1,
                    ..Dirt::default()
                })]),
            ),
            (
                "not created on this machine",
                |f| f.created_here = Err("no local state".into()),
                keep(vec![Reason::NotCreatedHere("no local state".into())]),
            ),
            (
                "a file at the path",
                |f| f.on_disk = OnDisk::Other("a file".into()),
                keep(vec![Reason::NotADirectory("a file".into())]),
            ),
            (
                "unpublished",
                |f| {
                    f.branch_state = Branch::Unpublished {
                        tip: tip(),
                        ahead: Some(2),
                        found: None,
                    }
                },
                keep(vec![Reason::Unpublished {
                    ahead: Some(2),
                    found: None,
                }]),
            ),
            (
                "branch gone",
                |f| f.branch_state = Branch::Missing,
                keep(vec![Reason::BranchMissing]),
            ),
            (
                "squash-merged into an integration ref",
                |f| {
                    f.branch_state = Branch::Published {
                        tip: tip(),
                        evidence: squashed(Since::Unchanged),
                    }
                },
                remove.clone(),
            ),
            (
                "rebase-merged into an integration ref",
                |f| {
                    f.branch_state = Branch::Published {
                        tip: tip(),
                        evidence: Evidence::Rebased {
                            into: "origin/main".into(),
                            commits: 2,
                            last: other_tip(),
                            short: "2222222".into(),
                            since: Since::Unchanged,
                        },
                    }
                },
                remove.clone(),
            ),
            (
                "squash-merged, then reverted there",
                |f| {
                    f.branch_state = Branch::Published {
                        tip: tip(),
                        evidence: squashed(Since::Reverted),
                    }
                },
                remove.clone(),
            ),
            (
                "partly merged",
                |f| f.branch_state = unmerged(Some(partly())),
                keep(vec![Reason::Unpublished {
                    ahead: Some(2),
                    found: Some(partly()),
                }]),
            ),
            (
                "conflicts with the integration ref",
                |f| {
                    f.branch_state = unmerged(Some(Unmerged::Conflicts {
                        into: "origin/main".into(),
                    }))
                },
                keep(vec![Reason::Unpublished {
                    ahead: Some(2),
                    found: Some(Unmerged::Conflicts {
                        into: "origin/main".into(),
                    }),
                }]),
            ),
            (
                "commits that change no file",
                |f| f.branch_state = unmerged(Some(Unmerged::NoChanges)),
                keep(vec![Reason::Unpublished {
                    ahead: Some(2),
                    found: Some(Unmerged::NoChanges),
                }]),
            ),
            (
                "squash-merged, worktree gone",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.branch_state = Branch::Published {
                        tip: tip(),
                        evidence: squashed(Since::Changed),
                    };
                },
                Decision::Collect { tip: Some(tip()) },
            ),
            (
                "partly merged, worktree gone",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.branch_state = unmerged(Some(partly()));
                },
                keep(vec![Reason::GoneUnpublished {
                    ahead: Some(2),
                    found: Some(partly()),
                }]),
            ),
            (
                "squash-merged but dirty and busy: every reason",
                |f| {
                    f.branch_state = Branch::Published {
                        tip: tip(),
                        evidence: squashed(Since::Unchanged),
                    };
                    f.dirt = Some(Ok(untracked(1)));
                    f.busy = Busy::InUse(vec![user()]);
                },
                keep(vec![Reason::Dirty(untracked(1)), Reason::Busy(vec![user()])]),
            ),
            (
                "untracked",
                |f| {
                    f.dirt = Some(Ok(Dirt {
                        untracked: 3,
                        ..Dirt::default()
                    }))
                },
                keep(vec![Reason::Dirty(Dirt {
                    untracked: 3,
                    ..Dirt::default()
                })]),
            ),
            (
                "staged",
                |f| {
                    f.dirt = Some(Ok(Dirt {
                        staged: 1,
                        ..Dirt::default()
                    }))
                },
                keep(vec![Reason::Dirty(Dirt {
                    staged: 1,
                    ..Dirt::default()
                })]),
            ),
            (
                "status failed",
                |f| f.dirt = Some(Err("boom".into())),
                keep(vec![Reason::DirtUnknown("boom".into())]),
            ),
            (
                "status not computed, nothing else in the way",
                |f| f.dirt = None,
                keep(vec![Reason::StatusNotChecked]),
            ),
            (
                "status not computed, unpublished anyway",
                |f| {
                    f.dirt = None;
                    f.branch_state = Branch::Unpublished {
                        tip: tip(),
                        ahead: Some(1),
                        found: None,
                    };
                },
                keep(vec![Reason::Unpublished {
                    ahead: Some(1),
                    found: None,
                }]),
            ),
            (
                "locked",
                |f| {
                    if let Some(r) = f.registration.as_mut() {
                        r.locked = true
                    }
                },
                keep(vec![Reason::Locked]),
            ),
            (
                "HEAD elsewhere",
                |f| {
                    if let Some(r) = f.registration.as_mut() {
                        r.head_ref = Some("refs/heads/main".into())
                    }
                },
                keep(vec![Reason::HeadElsewhere(Some("refs/heads/main".into()))]),
            ),
            (
                "HEAD detached",
                |f| {
                    if let Some(r) = f.registration.as_mut() {
                        r.head_ref = None
                    }
                },
                keep(vec![Reason::HeadElsewhere(None)]),
            ),
            (
                "session process alive",
                |f| f.liveness = Liveness::Alive { pid: 7 },
                keep(vec![Reason::Alive { pid: 7 }]),
            ),
            (
                "session process unknowable",
                |f| f.liveness = Liveness::Unknown,
                keep(vec![Reason::AliveUnknown]),
            ),
            (
                "someone has a file open",
                |f| f.busy = Busy::InUse(vec![user()]),
                keep(vec![Reason::Busy(vec![user()])]),
            ),
            (
                "cannot tell who uses it",
                |f| f.busy = Busy::CannotTell("no /proc".into()),
                keep(vec![Reason::BusyUnknown("no /proc".into())]),
            ),
            (
                "not registered, no .git",
                |f| {
                    f.registration = None;
                    f.link = Link::Absent;
                },
                keep(vec![Reason::NotOurs(
                    "not a registered worktree of this repository (it has no .git file)".into(),
                )]),
            ),
            (
                "not registered, another repository",
                |f| {
                    f.registration = None;
                    f.link = Link::Repository;
                },
                keep(vec![Reason::NotOurs(
                    "not a registered worktree of this repository (it holds a repository of its own (.git directory))".into(),
                )]),
            ),
            (
                "registered, but .git points elsewhere",
                |f| f.link = Link::Foreign("its .git file points at /x".into()),
                keep(vec![Reason::NotOurs(
                    "its .git does not match the worktree entry s registered for it (its .git file points at /x); run `git worktree repair`".into(),
                )]),
            ),
            (
                "registered, but a repository of its own is there",
                |f| f.link = Link::Repository,
                keep(vec![Reason::NotOurs(
                    "git registers worktree entry s for it, but it holds a repository of its own (.git directory); not gc's to remove".into(),
                )]),
            ),
            (
                "registered, .git names another entry",
                |f| {
                    f.link = Link::Ours {
                        admin_id: "t".into(),
                        admin_exists: true,
                    }
                },
                keep(vec![Reason::NotOurs(
                    "its .git does not match the worktree entry s registered for it (its .git file points at worktree entry t); run `git worktree repair`".into(),
                )]),
            ),
            (
                "admin entry gone, clean against the branch",
                |f| {
                    f.registration = None;
                    f.link = Link::Ours {
                        admin_id: "s".into(),
                        admin_exists: false,
                    };
                },
                Decision::Remove {
                    via: Via::AdminEntryGone,
                    tip: tip(),
                },
            ),
            (
                "admin entry gone, files differ from the branch",
                |f| {
                    f.registration = None;
                    f.link = Link::Ours {
                        admin_id: "s".into(),
                        admin_exists: false,
                    };
                    f.dirt = Some(Ok(Dirt {
                        modified: 1,
                        ..Dirt::default()
                    }));
                },
                keep(vec![Reason::Dirty(Dirt {
                    modified: 1,
                    ..Dirt::default()
                })]),
            ),
            (
                "interrupted teardown, remnant without .git, only deletions",
                |f| {
                    f.registration = None;
                    f.link = Link::Absent;
                    f.dirt = Some(Ok(Dirt {
                        deleted: 2,
                        ..Dirt::default()
                    }));
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                },
                Decision::Remove {
                    via: Via::FinishTeardown,
                    tip: tip(),
                },
            ),
            (
                "interrupted teardown, branch moved since",
                |f| {
                    f.registration = None;
                    f.link = Link::Absent;
                    f.dirt = None;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: other_tip(),
                    });
                },
                keep(vec![Reason::MarkerStale]),
            ),
            (
                "interrupted teardown, but busy",
                |f| {
                    f.registration = None;
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                    f.busy = Busy::InUse(vec![user()]);
                },
                keep(vec![Reason::Busy(vec![user()])]),
            ),
            (
                "interrupted teardown marker, but .git names another entry",
                |f| {
                    f.registration = None;
                    f.link = Link::Ours {
                        admin_id: "t".into(),
                        admin_exists: false,
                    };
                    f.dirt = Some(Err("no".into()));
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                },
                keep(vec![Reason::DirtUnknown("no".into())]),
            ),
            (
                "git died in the teardown: entry left, .git gone, only deletions",
                |f| {
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                    f.dirt = Some(Ok(Dirt {
                        deleted: 3,
                        ..Dirt::default()
                    }));
                },
                Decision::Remove {
                    via: Via::FinishTeardown,
                    tip: tip(),
                },
            ),
            (
                "git died in the teardown, and something new appeared",
                |f| {
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                    f.dirt = Some(Ok(Dirt {
                        deleted: 3,
                        untracked: 1,
                        ..Dirt::default()
                    }));
                },
                keep(vec![Reason::RemnantHoldsNew(Dirt {
                    deleted: 3,
                    untracked: 1,
                    ..Dirt::default()
                })]),
            ),
            (
                "git died in the teardown, the branch moved since",
                |f| {
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: other_tip(),
                    });
                },
                keep(vec![Reason::MarkerStale]),
            ),
            (
                "git died in the teardown, its entry locked since",
                |f| {
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                    if let Some(r) = f.registration.as_mut() {
                        r.locked = true
                    }
                },
                keep(vec![Reason::Locked]),
            ),
            (
                "no .git, registered, the note names another entry: not ours",
                |f| {
                    f.link = Link::Absent;
                    f.marker = Some(Marker {
                        admin_id: "t".into(),
                        tip: tip(),
                    });
                },
                keep(vec![Reason::NotOurs(
                    "its .git does not match the worktree entry s registered for it (it has no .git file); run `git worktree repair`".into(),
                )]),
            ),
            (
                "interrupted teardown marker, registered again: full checks",
                |f| {
                    f.marker = Some(Marker {
                        admin_id: "s".into(),
                        tip: tip(),
                    });
                    f.dirt = Some(Ok(Dirt {
                        untracked: 1,
                        ..Dirt::default()
                    }));
                },
                keep(vec![Reason::Dirty(Dirt {
                    untracked: 1,
                    ..Dirt::default()
                })]),
            ),
            (
                "a submodule with a commit on none of its remotes",
                |f| f.nested = Some(Ok(vec![sub(&["main"], Dirt::default())])),
                keep(vec![Reason::Nested(vec![sub(&["main"], Dirt::default())])]),
            ),
            (
                "a nested repository with untracked files",
                |f| f.nested = Some(Ok(vec![sub(&[], untracked(1))])),
                keep(vec![Reason::Nested(vec![sub(&[], untracked(1))])]),
            ),
            (
                "nested repositories all clean and published",
                |f| {
                    f.nested = Some(Ok(vec![
                        sub(&[], Dirt::default()),
                        sub(&[], Dirt::default()),
                    ]))
                },
                remove.clone(),
            ),
            (
                "cannot look for nested repositories",
                |f| f.nested = Some(Err("perm".into())),
                keep(vec![Reason::NestedUnknown("perm".into())]),
            ),
            (
                "nested repositories not looked for yet",
                |f| f.nested = None,
                keep(vec![Reason::NestedNotChecked]),
            ),
            (
                "status first, then nested repositories",
                |f| {
                    f.dirt = None;
                    f.nested = None;
                },
                keep(vec![Reason::StatusNotChecked]),
            ),
            (
                "worktree gone, a submodule git dir in its entry unpublished",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.nested = Some(Ok(vec![Nested {
                        kind: NestedKind::SubmoduleGitDir,
                        dirt: None,
                        ..sub(&["HEAD"], Dirt::default())
                    }]));
                },
                keep(vec![Reason::Nested(vec![Nested {
                    kind: NestedKind::SubmoduleGitDir,
                    dirt: None,
                    ..sub(&["HEAD"], Dirt::default())
                }])]),
            ),
            (
                "worktree gone, its entry's modules not looked at",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.nested = None;
                },
                keep(vec![Reason::NestedNotChecked]),
            ),
            (
                "worktree and entry gone: nothing nested to look at",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.registration = None;
                    f.nested = None;
                },
                Decision::Collect { tip: Some(tip()) },
            ),
            (
                "branch checked out in another worktree",
                |f| f.checked_out_elsewhere = vec!["/else".into()],
                keep(vec![Reason::CheckedOutElsewhere(vec!["/else".into()])]),
            ),
            (
                "worktree gone, branch checked out in another worktree",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.checked_out_elsewhere = vec!["/else".into()];
                },
                keep(vec![Reason::CheckedOutElsewhere(vec!["/else".into()])]),
            ),
            (
                "worktree gone, published",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.link = Link::Absent;
                    f.dirt = None;
                },
                Decision::Collect { tip: Some(tip()) },
            ),
            (
                "worktree and branch gone",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.registration = None;
                    f.branch_state = Branch::Missing;
                },
                Decision::Collect { tip: None },
            ),
            (
                "worktree and branch gone, not created here: only the record changes",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.registration = None;
                    f.branch_state = Branch::Missing;
                    f.created_here = Err("no local state".into());
                },
                Decision::Collect { tip: None },
            ),
            (
                "worktree gone, branch published, not created here",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.registration = None;
                    f.created_here = Err("no local state".into());
                },
                keep(vec![Reason::NotCreatedHere("no local state".into())]),
            ),
            (
                "an interrupted spawn that never made its worktree",
                |f| {
                    f.state = State::Provisioning;
                    f.on_disk = OnDisk::Missing;
                    f.registration = None;
                    f.branch_state = Branch::AtBase { tip: tip() };
                },
                Decision::Collect { tip: Some(tip()) },
            ),
            (
                "worktree gone, unpublished",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.branch_state = Branch::Unpublished {
                        tip: tip(),
                        ahead: Some(1),
                        found: None,
                    };
                },
                keep(vec![Reason::GoneUnpublished {
                    ahead: Some(1),
                    found: None,
                }]),
            ),
            (
                "worktree gone, locked entry",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    if let Some(r) = f.registration.as_mut() {
                        r.locked = true
                    }
                },
                keep(vec![Reason::Locked]),
            ),
            (
                "worktree gone, process alive",
                |f| {
                    f.on_disk = OnDisk::Missing;
                    f.liveness = Liveness::Alive { pid: 9 };
                },
                keep(vec![Reason::Alive { pid: 9 }]),
            ),
        ];
        for (name, edit, want) in table {
            let mut f = removable();
            edit(&mut f);
            assert_eq!(plan_session(&f), want, "{name}");
        }
    }

    #[test]
    fn all_reasons_are_reported_together() {
        let mut f = removable();
        f.branch_state = Branch::Unpublished {
            tip: tip(),
            ahead: Some(2),
            found: None,
        };
        f.dirt = Some(Ok(Dirt {
            untracked: 3,
            ..Dirt::default()
        }));
        f.busy = Busy::InUse(vec![user()]);
        let d = plan_session(&f);
        let Decision::Keep(reasons) = &d else {
            panic!("{d:?}")
        };
        let words: Vec<String> = reasons.iter().map(|r| r.describe("bullpen/s")).collect();
        assert_eq!(
            words,
            [
                "2 commits not on any remote",
                "3 untracked files",
                "busy: pid 4242 (pytest) has a file open in it"
            ]
        );
        assert!(!d.is_waitable(), "unpublished work is not waited for");
    }

    #[test]
    fn status_is_asked_for_only_when_it_decides() {
        let mut f = removable();
        f.dirt = None;
        assert!(plan_session(&f).needs_status());
        f.busy = Busy::InUse(vec![user()]);
        assert!(!plan_session(&f).needs_status());
        assert!(!plan_session(&removable()).needs_status());
    }

    #[test]
    fn status_is_wanted_wherever_the_directory_is_ours_so_every_reason_is_named() {
        let mut f = removable();
        f.dirt = None;
        f.busy = Busy::InUse(vec![user()]);
        f.branch_state = unmerged(None);
        assert!(wants_status(&f), "kept for other reasons: still looked at");
        assert!(!wants_status(&removable()), "computed already");
        for edit in [
            (|f: &mut SessionFacts| f.untrusted = Some("x".into())) as fn(&mut SessionFacts),
            |f| f.on_disk = OnDisk::Missing,
            |f| f.link = Link::Foreign("elsewhere".into()),
            |f| {
                f.state = State::Provisioning;
                f.spawner_alive = Some(7);
            },
        ] {
            let mut f = removable();
            f.dirt = None;
            edit(&mut f);
            assert!(!wants_status(&f), "{f:?}");
        }
    }

    #[test]
    fn only_busy_is_waitable() {
        let mut f = removable();
        f.busy = Busy::InUse(vec![user()]);
        assert!(plan_session(&f).is_waitable());
        f.busy = Busy::CannotTell("x".into());
        assert!(!plan_session(&f).is_waitable());
        let mut f = removable();
        f.liveness = Liveness::Alive { pid: 3 };
        assert!(plan_session(&f).is_waitable());
        assert!(!plan_session(&removable()).is_waitable());
    }

    fn places<'a>(root: &'a Path, home: &'a Path, repo: &'a Path, git: &'a Path) -> Places<'a> {
        Places {
            worktree_root: root,
            home: Some(home),
            repo,
            git_dir: git,
        }
    }

    #[test]
    fn untrusted_paths() {
        // A deliberately broad root, so that only the special-place checks stand
        // between these paths and removal.
        let root = Path::new("/");
        let p = places(
            root,
            Path::new("/home/u"),
            Path::new("/home/u/src/app"),
            Path::new("/home/u/src/app/.git"),
        );
        let cases = [
            ("/", Some("is the filesystem root")),
            ("/home/u", Some("is the home directory")),
            ("/home", Some("contains the home directory")),
            ("/home/u/src/app", Some("is the repository itself")),
            ("/home/u/src", Some("contains the repository")),
            ("/home/u/src/app/.git/worktrees/x", Some("git directory")),
            (
                "/home/u/src/app/../x",
                Some("not an absolute, normalised path"),
            ),
            ("relative/x", Some("not an absolute, normalised path")),
            ("/data/wt/x", None),
            ("/home/u/src/app/.worktrees/x", None),
        ];
        for (path, want) in cases {
            let got = untrusted(Path::new(path), &p, None);
            match (want, &got) {
                (None, None) => {}
                (Some(w), Some(g)) if g.contains(w) => {}
                _ => panic!("{path}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn untrusted_outside_root_and_through_symlinks() {
        let root = Path::new("/data/wt");
        let p = places(
            root,
            Path::new("/home/u"),
            Path::new("/src/app"),
            Path::new("/src/app/.git"),
        );
        assert_eq!(untrusted(Path::new("/data/wt/x"), &p, None), None);
        assert!(untrusted(Path::new("/data/wt"), &p, None)
            .unwrap()
            .contains("outside the worktree root"));
        assert!(untrusted(Path::new("/data/wtx/a"), &p, None)
            .unwrap()
            .contains("outside the worktree root"));
        assert!(untrusted(Path::new("/tmp/a"), &p, None)
            .unwrap()
            .contains("outside the worktree root"));
        // Confined as written, but a symlink makes it resolve elsewhere.
        let escaped = untrusted(
            Path::new("/data/wt/x"),
            &p,
            Some((Path::new("/home/u"), &p)),
        );
        assert!(escaped.unwrap().contains("home directory"));
        let escaped = untrusted(Path::new("/data/wt/x"), &p, Some((Path::new("/etc"), &p)));
        assert!(escaped.unwrap().contains("outside the worktree root"));
    }

    #[test]
    fn admin_entries() {
        let f = AdminFacts {
            admin_id: "x".into(),
            path: "/root/wt/x".into(),
            locked: false,
            session: Some("x".into()),
            created_here: Ok(()),
            modules: Some(Ok(vec![])),
        };
        assert_eq!(plan_admin_entry(&f), AdminDecision::Prune);
        let published = Nested {
            path: "/git/worktrees/x/modules/lib".into(),
            kind: NestedKind::SubmoduleGitDir,
            unpublished: vec![],
            dirt: None,
        };
        let unpublished = Nested {
            unpublished: vec!["main".into()],
            ..published.clone()
        };
        type Edit = fn(&mut AdminFacts);
        let table: Vec<(&str, Edit, Option<&str>)> = vec![
            ("a session's, nothing under it", |_| {}, None),
            (
                "a user's (not a session's path)",
                |f| f.session = None,
                Some("not ours"),
            ),
            ("locked", |f| f.locked = true, Some("locked")),
            (
                "nothing here proves bullpen created it",
                |f| f.created_here = Err("no local state".into()),
                Some("no local state"),
            ),
            (
                "submodules not looked at",
                |f| f.modules = None,
                Some("not looked at"),
            ),
            (
                "cannot read its submodules",
                |f| f.modules = Some(Err("bad".into())),
                Some("cannot tell"),
            ),
        ];
        for (name, edit, want) in table {
            let mut g = f.clone();
            edit(&mut g);
            match (plan_admin_entry(&g), want) {
                (AdminDecision::Prune, None) => {}
                (AdminDecision::NotOurs, Some("not ours")) => {}
                (AdminDecision::Keep(why), Some(w)) if why.contains(w) => {}
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
        let f2 = AdminFacts {
            modules: Some(Ok(vec![published.clone()])),
            ..f.clone()
        };
        assert_eq!(
            plan_admin_entry(&f2),
            AdminDecision::Prune,
            "published submodule"
        );
        let f3 = AdminFacts {
            modules: Some(Ok(vec![published, unpublished])),
            ..f
        };
        assert_eq!(
            plan_admin_entry(&f3),
            AdminDecision::Keep(
                "submodule git dir /git/worktrees/x/modules/lib holds work: main not on any of its remotes"
                    .into()
            )
        );
    }

    #[test]
    fn orphan_table() {
        let base = OrphanFacts {
            path: "/wt/x".into(),
            contents: Contents::NoWork {
                dot_git: Link::Ours {
                    admin_id: "x".into(),
                    admin_exists: false,
                },
            },
            busy: Busy::Idle,
        };
        assert!(matches!(plan_orphan(&base), OrphanDecision::Remove(w) if w.contains("dangling")));
        let empty = OrphanFacts {
            contents: Contents::NoWork {
                dot_git: Link::Absent,
            },
            ..base.clone()
        };
        assert!(matches!(plan_orphan(&empty), OrphanDecision::Remove(_)));
        for kept in [
            Contents::Files(2),
            Contents::Repository,
            Contents::Unreadable("perm".into()),
            Contents::NoWork {
                dot_git: Link::Foreign("points at /elsewhere".into()),
            },
            Contents::NoWork {
                dot_git: Link::Ours {
                    admin_id: "x".into(),
                    admin_exists: true,
                },
            },
        ] {
            let f = OrphanFacts {
                contents: kept.clone(),
                ..base.clone()
            };
            assert!(
                matches!(plan_orphan(&f), OrphanDecision::Keep(_)),
                "{kept:?}"
            );
        }
        let busy = OrphanFacts {
            busy: Busy::InUse(vec![user()]),
            ..base.clone()
        };
        assert!(matches!(plan_orphan(&busy), OrphanDecision::Keep(w) if w.contains("pid 4242")));
        let unknown = OrphanFacts {
            busy: Busy::CannotTell("x".into()),
            ..base
        };
        assert!(matches!(plan_orphan(&unknown), OrphanDecision::Keep(_)));
    }
}
