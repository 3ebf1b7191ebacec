//! The facts `gc` decides on, gathered from git, the file system and `/proc`
//! (see [`super::plan`] for the decisions). For many sessions at once: one
//! publish walk, one proof of content for the sessions it does not settle, one
//! `/proc` scan, registered worktrees indexed once, and status (the costly fact)
//! on a few threads. Right before a removal, [`Gatherer::recheck`] reads again
//! only what can change cheaply for that one session.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::plan::{
    self, Branch, Contents, Conversation, Link, Liveness, Marker, OnDisk, OrphanFacts, Places,
    Registration, SessionFacts, Via,
};
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::git::{
    Content, ContentQuery, DotGit, IntegrationRef, NestedTarget, StatusMap, Worktree,
};
use crate::model::command::quoted;
use crate::model::config::{DEFAULT_AGENT_GRACE, GC_AGENT_GRACE};
use crate::model::id::GC_TEARDOWN_KEY as MARKER_KEY;
use crate::model::paths::normalize;
use crate::model::process::{same_process, Group};
use crate::model::usage::{Busy, User};
use crate::model::{time, Error, Evidence, Oid, Process, Record, SessionId, State};
use crate::run::liveness::{live_process, live_spawner};
use crate::sys::procfs::{self, Scan};
use crate::sys::{copy, paths};
use crate::trust::confined::ConfinedPath;
use crate::trust::{self, local::Local};

/// The key paths are compared under ([`paths::comparable`]).
pub(crate) fn key(path: &Path) -> PathBuf {
    paths::comparable(path)
}

/// Owned versions of the places a recorded path must never be.
struct PlacePaths {
    root: PathBuf,
    home: Option<PathBuf>,
    repo: PathBuf,
    git_dir: PathBuf,
}

impl PlacePaths {
    fn places(&self) -> Places<'_> {
        Places {
            worktree_root: &self.root,
            home: self.home.as_deref(),
            repo: &self.repo,
            git_dir: &self.git_dir,
        }
    }
}

fn place_paths(ctx: &Ctx, root: &Path) -> (PlacePaths, PlacePaths) {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let lexical = PlacePaths {
        root: root.to_path_buf(),
        home: home.as_deref().map(normalize),
        repo: ctx.repo.main_worktree().to_path_buf(),
        git_dir: ctx.repo.common_dir().to_path_buf(),
    };
    let canon = |p: &Path| paths::canonical_or_self(p);
    let canonical = PlacePaths {
        root: canon(&lexical.root),
        home: lexical.home.as_deref().map(canon),
        repo: canon(&lexical.repo),
        git_dir: canon(&lexical.git_dir),
    };
    (lexical, canonical)
}

/// What one gc gathers once and uses for every session: the places a path
/// must never be, the remote-tracking refs and the integration refs.
/// A session's facts as re-read at the act, under the lock: what can change
/// cheaply read again, and who uses its directory scanned again. Only
/// [`Gatherer::recheck`] makes one; the removal takes nothing else.
/// It alone carries the recorded path as a [`ConfinedPath`], checked right
/// then: what the teardown removes.
pub(crate) struct AtAct {
    facts: SessionFacts,
    confined: Option<ConfinedPath>,
}

impl AtAct {
    /// The session's worktree path, confined to its root as checked at the
    /// act (`None`: it is not, and the plan keeps the session as untrusted).
    pub(crate) fn confined(&self) -> Option<&ConfinedPath> {
        self.confined.as_ref()
    }
}

impl std::ops::Deref for AtAct {
    type Target = SessionFacts;
    fn deref(&self) -> &SessionFacts {
        &self.facts
    }
}

pub(crate) struct Gatherer<'a> {
    ctx: &'a Ctx<'a>,
    /// Where the costly facts (status, nested repositories) are needed: as gc's
    /// plan says, or `rm --force`'s.
    plan: fn(&SessionFacts) -> plan::Decision,
    lexical: PlacePaths,
    canonical: PlacePaths,
    /// Remote-tracking refs by the commit they point at (short names).
    remote_at: HashMap<Oid, Vec<String>>,
    /// `(short name, tip)` of every remote-tracking ref.
    remote_refs: Vec<(String, Oid)>,
    integration: Vec<IntegrationRef>,
    /// `bullpen.gc.agentGrace`, read, and as written.
    grace: (time::Expire, String),
    /// Whether the refs the proof of content looks at were named on stderr.
    named: std::cell::Cell<bool>,
}

/// How much [`Gatherer::all`] computes before any decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Everything, for every session (a dry run, `rm`'s report).
    Whole,
    /// Everything, except the status and nested repositories of sessions that
    /// nothing else keeps: a real gc computes those right before removing, under
    /// the lock, once ([`Gatherer::complete`]).
    LeaveRemovable,
}

impl<'a> Gatherer<'a> {
    /// Read the remote-tracking refs and the integration refs once; what
    /// people should hear about them (a `bullpen.gc.integrationRef` that
    /// matches nothing) goes to stderr now.
    pub(crate) fn new(
        ctx: &'a Ctx<'a>,
        plan: fn(&SessionFacts) -> plan::Decision,
    ) -> Result<Gatherer<'a>> {
        let (lexical, canonical) = place_paths(ctx, &ctx.layout.worktree_root);
        let short = |n: &str| n.strip_prefix("refs/remotes/").unwrap_or(n).to_owned();
        let remote_refs: Vec<(String, Oid)> = ctx
            .repo
            .remote_refs()?
            .into_iter()
            .map(|(n, o)| (short(&n), o))
            .collect();
        let mut remote_at: HashMap<Oid, Vec<String>> = HashMap::new();
        for (n, o) in &remote_refs {
            remote_at.entry(*o).or_default().push(n.clone());
        }
        let (integration, notes) = match ctx.repo.integration_refs() {
            Ok(found) => found,
            Err(e) => (
                Vec::new(),
                vec![format!(
                    "cannot tell which refs sessions are merged into, so none is looked at: {e:#}"
                )],
            ),
        };
        for n in notes {
            ctx.ui.warn(n);
        }
        let grace_value = ctx
            .repo
            .config_string(GC_AGENT_GRACE)
            .unwrap_or_else(|| DEFAULT_AGENT_GRACE.to_owned());
        let grace = time::parse_expire(&grace_value, time::now_unix()).map_err(|why| {
            Error::failed(format!("{GC_AGENT_GRACE}: {why}")).hint(format!(
                "set it with `git config {GC_AGENT_GRACE} 2.weeks` (or never)"
            ))
        })?;
        Ok(Gatherer {
            ctx,
            plan,
            lexical,
            canonical,
            remote_at,
            remote_refs,
            integration,
            grace: (grace, grace_value),
            named: std::cell::Cell::new(false),
        })
    }

    /// The facts of these sessions: one publish walk for all of them, one
    /// proof of content for those it does not settle, one `/proc` scan for all
    /// their directories, and status and nested repositories as `depth` says.
    pub(crate) fn all(
        &self,
        sessions: &[Stored],
        depth: Depth,
    ) -> Result<Vec<Result<SessionFacts>>> {
        let repo = &self.ctx.repo;
        let worktrees = repo.worktrees()?;
        let known = Known::new(&worktrees);
        let tips: Vec<Result<Option<Oid>>> = sessions
            .iter()
            .map(|s| repo.ref_target(&s.record.id.branch_ref()))
            .collect();
        let states = self.branch_states(sessions, &tips)?;
        let mut partial = Vec::with_capacity(sessions.len());
        for (s, branch) in sessions.iter().zip(states) {
            partial.push(
                branch.and_then(|branch| self.session_facts(s, branch, &known).map(|(f, _)| f)),
            );
        }
        let dirs: Vec<PathBuf> = partial
            .iter()
            .filter_map(|f| f.as_ref().ok())
            .filter(|f| f.untrusted.is_none() && f.on_disk == OnDisk::Directory)
            .map(|f| PathBuf::from(&f.worktree))
            .collect();
        let scan = procfs::scan(&dirs);
        for (f, s) in partial.iter_mut().zip(sessions) {
            let Ok(f) = f else { continue };
            if f.untrusted.is_none() && f.on_disk == OnDisk::Directory {
                f.busy = strangers(scan.busy(Path::new(&f.worktree)), &s.record, f.liveness);
            }
        }
        let wanted: Vec<usize> = partial
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().ok().map(|f| (i, f)))
            .filter(|(_, f)| {
                plan::wants_status(f) && (depth == Depth::Whole || !(self.plan)(f).needs_status())
            })
            .map(|(i, _)| i)
            .collect();
        self.status(&mut partial, &wanted);
        if depth == Depth::Whole {
            let wanted: Vec<usize> = partial
                .iter()
                .enumerate()
                .filter(|(_, f)| f.as_ref().is_ok_and(|f| (self.plan)(f).needs_nested()))
                .map(|(i, _)| i)
                .collect();
            self.nested(&mut partial, &wanted);
        }
        Ok(partial)
    }

    /// One session again, right before acting on it (with the lock held): its
    /// record as read just now (`fresh`), and what can change cheaply read again
    /// — its branch tip, its own worktree entry (not the whole list), its `.git`,
    /// its process, the local proof, and who uses its directory (one directory's
    /// `/proc` scan: a process may have entered it since the gather). The
    /// remote-tracking refs and other worktrees' branches are taken from `before`
    /// (the gather of this gc); status and nested repositories are left to
    /// [`Gatherer::complete`].
    pub(crate) fn recheck(&self, fresh: &Stored, before: &SessionFacts) -> Result<AtAct> {
        let repo = &self.ctx.repo;
        let r = &fresh.record;
        let tip = repo.ref_target(&r.id.branch_ref())?;
        let branch = if tip == before.branch_state.tip() && r.state == before.state {
            before.branch_state.clone()
        } else {
            // The branch moved: what the gather proved was for another tip.
            self.branch_states(std::slice::from_ref(fresh), &[Ok(tip)])?
                .pop()
                .unwrap_or(Ok(Branch::Missing))?
        };
        let path = PathBuf::from(&r.worktree);
        let k = key(&path);
        let mut candidates: Vec<String> = Vec::new();
        if let Some(reg) = &before.registration {
            candidates.push(reg.admin_id.clone());
        }
        if let DotGit::Ours { admin_id, .. } = repo.dot_git(&path) {
            candidates.push(admin_id);
        }
        if let Some(m) = marker(r) {
            candidates.push(m.admin_id);
        }
        let mut entries = Vec::new();
        for c in candidates {
            if entries
                .iter()
                .any(|w: &Worktree| w.admin_id.as_deref() == Some(c.as_str()))
            {
                continue;
            }
            if let Some(w) = repo.worktree_entry(&c)? {
                if key(&w.path) == k {
                    entries.push(w);
                }
            }
        }
        let known = Known::new(&entries);
        let (mut f, confined) = self.session_facts(fresh, branch, &known)?;
        f.checked_out_elsewhere = before.checked_out_elsewhere.clone();
        if f.untrusted.is_none() && f.on_disk == OnDisk::Directory {
            let scan = procfs::scan(std::slice::from_ref(&path));
            f.busy = strangers(scan.busy(&path), r, f.liveness);
        }
        Ok(AtAct { facts: f, confined })
    }

    /// Status, then (where nothing else keeps it) nested repositories and what
    /// is ignored, of one session: what a real gc computes right before
    /// removing, under the lock, once.
    pub(crate) fn complete(&self, f: &mut AtAct) {
        let f = &mut f.facts;
        let wants = plan::wants_status(f);
        let mut one = vec![Ok(std::mem::replace(f, placeholder()))];
        if wants {
            self.status(&mut one, &[0]);
        }
        if one[0].as_ref().is_ok_and(|f| (self.plan)(f).needs_nested()) {
            self.nested(&mut one, &[0]);
        }
        if let Some(Ok(done)) = one.pop() {
            *f = done;
        }
    }

    /// Status is the costly fact: registered worktrees on a few threads.
    fn status(&self, partial: &mut [Result<SessionFacts>], wanted: &[usize]) {
        let repo = &self.ctx.repo;
        let mut through_entry = Vec::new();
        for &i in wanted {
            let Ok(f) = &mut partial[i] else { continue };
            match status_via(f) {
                StatusVia::Entry => through_entry.push(i),
                StatusVia::AgainstTip(tip) => {
                    f.dirt = Some(
                        repo.dirt_against(Path::new(&f.worktree), tip)
                            .map_err(|e| format!("{e:#}")),
                    )
                }
                StatusVia::None => {
                    f.dirt = Some(Err("there is no way to compute its status".to_owned()))
                }
            }
        }
        let paths: Vec<PathBuf> = through_entry
            .iter()
            .filter_map(|&i| partial[i].as_ref().ok())
            .map(|f| PathBuf::from(&f.worktree))
            .collect();
        for (i, dirt) in through_entry.into_iter().zip(repo.dirt_many(&paths)) {
            if let Ok(f) = &mut partial[i] {
                f.dirt = Some(dirt.map_err(|e| format!("{e:#}")));
            }
        }
    }

    /// Nested repositories: a walk of the whole tree, ignored directories too
    /// (which it counts), so only where nothing else keeps the session.
    fn nested(&self, partial: &mut [Result<SessionFacts>], wanted: &[usize]) {
        let mut targets = Vec::new();
        for &i in wanted {
            let Ok(f) = &partial[i] else { continue };
            targets.push(NestedTarget {
                worktree: (f.on_disk == OnDisk::Directory).then(|| PathBuf::from(&f.worktree)),
                admin_id: f.registration.as_ref().map(|r| r.admin_id.clone()),
                map: status_map(f),
            });
        }
        for (&i, nested) in wanted.iter().zip(self.ctx.repo.nested_many(&targets)) {
            if let Ok(f) = &mut partial[i] {
                match nested {
                    Ok((repos, mut ignored)) => {
                        f.nested = Some(Ok(repos));
                        if let Some(Ok(d)) = &f.dirt {
                            ignored.caches = d.caches.clone();
                        }
                        f.ignored = Some(ignored);
                    }
                    Err(e) => f.nested = Some(Err(format!("{e:#}"))),
                }
            }
        }
    }

    /// Where each session's branch stands: one walk for all tips (which
    /// commits no remote-tracking ref reaches), the evidence for those it
    /// reaches, and one proof of content for the others.
    fn branch_states(
        &self,
        sessions: &[Stored],
        tips: &[Result<Option<Oid>>],
    ) -> Result<Vec<Result<Branch>>> {
        let repo = &self.ctx.repo;
        let all_tips: Vec<Oid> = tips
            .iter()
            .filter_map(|t| t.as_ref().ok().copied().flatten())
            .collect();
        let reach = repo.unpublished_commits(&all_tips)?;
        let mut out: Vec<Result<Branch>> = Vec::with_capacity(sessions.len());
        let mut queries = Vec::new();
        let mut asked = Vec::new();
        for (i, (s, tip)) in sessions.iter().zip(tips).enumerate() {
            let tip = match tip {
                Ok(t) => *t,
                Err(e) => {
                    out.push(Err(anyhow::anyhow!("{e:#}")));
                    continue;
                }
            };
            let base = s.record.base.parse::<Oid>().ok();
            let at_base =
                s.record.state == State::Provisioning && tip.is_some_and(|t| base == Some(t));
            out.push(Ok(match tip {
                None => Branch::Missing,
                Some(tip) if at_base => Branch::AtBase { tip },
                Some(tip) => match reach.get(&tip) {
                    // A remote reaches it, but so does its base: no commit of its
                    // own, nothing of it published.
                    Some(commits)
                        if commits.is_empty()
                            && base.is_some_and(|b| repo.reaches(b, tip).unwrap_or(false)) =>
                    {
                        Branch::AtBase { tip }
                    }
                    Some(commits) if commits.is_empty() => Branch::Published {
                        tip,
                        evidence: self.reachable(tip, &s.record.id),
                    },
                    commits => {
                        let commits = commits.cloned().unwrap_or_default();
                        if !self.integration.is_empty() {
                            queries.push(ContentQuery {
                                tip,
                                commits: commits.clone(),
                            });
                            asked.push(i);
                        }
                        Branch::Unpublished {
                            tip,
                            ahead: Some(commits.len()),
                            found: None,
                        }
                    }
                },
            }));
        }
        if !queries.is_empty() && !self.named.replace(true) {
            let refs: Vec<String> = self
                .integration
                .iter()
                .map(|r| format!("{} ({})", r.name, r.chosen))
                .collect();
            self.ctx.ui.info(format!(
                "looking for the changes of {} on {}",
                match queries.len() {
                    1 => "1 unpublished session".to_owned(),
                    n => format!("{n} unpublished sessions"),
                },
                refs.join(", ")
            ));
        }
        let answers = repo.find_content(&queries, &self.integration);
        for (i, answer) in asked.into_iter().zip(answers) {
            let Ok(Branch::Unpublished { tip, ahead, .. }) = &out[i] else {
                continue;
            };
            let (tip, ahead) = (*tip, *ahead);
            match answer {
                Ok(Content::Published(evidence)) => {
                    out[i] = Ok(Branch::Published { tip, evidence });
                }
                Ok(Content::Unmerged(found)) => {
                    out[i] = Ok(Branch::Unpublished { tip, ahead, found });
                }
                Err(e) => self.ctx.ui.warn(format!(
                    "{}: cannot tell whether its changes are in {}: {e:#}",
                    sessions[i].record.id,
                    self.integration
                        .iter()
                        .map(|r| r.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        Ok(out)
    }

    /// Which remote-tracking ref reaches `tip` (known reachable): one that
    /// points at it (the session's own `*/bullpen/<id>` first), else the
    /// session's `*/bullpen/<id>` or an integration ref that reaches it.
    fn reachable(&self, tip: Oid, id: &SessionId) -> Evidence {
        let own = |n: &str| n.ends_with(&format!("/{}", id.branch()));
        if let Some(names) = self.remote_at.get(&tip) {
            let from = names
                .iter()
                .find(|n| own(n))
                .or_else(|| names.iter().find(|n| !n.ends_with("/HEAD")))
                .or(names.first());
            return Evidence::Reachable {
                from: from.cloned(),
            };
        }
        let candidates = self
            .remote_refs
            .iter()
            .filter(|(n, _)| own(n))
            .cloned()
            .chain(self.integration.iter().map(|r| (r.name.clone(), r.tip)));
        for (name, at) in candidates {
            if self.ctx.repo.reaches(at, tip).unwrap_or(false) {
                return Evidence::Reachable { from: Some(name) };
            }
        }
        Evidence::Reachable { from: None }
    }

    /// Every fact about one session except who uses its directory, status and
    /// nested repositories; and its path, confined, if it is.
    fn session_facts(
        &self,
        s: &Stored,
        branch_state: Branch,
        known: &Known,
    ) -> Result<(SessionFacts, Option<ConfinedPath>)> {
        let (mut f, confined) = session_facts(
            self.ctx,
            s,
            branch_state,
            known,
            &self.lexical,
            &self.canonical,
        )?;
        f.conversation = self.conversation(&s.record);
        if f.untrusted.is_none() && f.on_disk == OnDisk::Directory {
            f.edited_copies = edited_copies(self.ctx, &s.record);
        }
        Ok((f, confined))
    }

    /// The conversation of an agent session that ran: the record's agent, or the
    /// one this machine recorded for it (a record can lose its `agent` key).
    fn conversation(&self, r: &Record) -> Option<Conversation> {
        if r.process.is_none() && r.exit.is_none() {
            return None;
        }
        let agent = r.agent.clone().or_else(|| {
            Local::of(&self.ctx.layout, &r.id)
                .command()
                .ok()
                .flatten()
                .and_then(|c| c.agent)
        })?;
        let (grace, grace_value) = &self.grace;
        Some(Conversation {
            agent,
            last_active: last_active(r),
            grace: *grace,
            grace_value: grace_value.clone(),
        })
    }
}

/// What the session's status tells the walk for nested repositories: only a
/// status of the worktree through its own index (not one against the branch
/// tip, where the index is not the worktree's) maps where to look.
fn status_map(f: &SessionFacts) -> Option<StatusMap> {
    match (&f.dirt, status_via(f)) {
        (Some(Ok(d)), StatusVia::Entry) => Some(StatusMap::of(d)),
        _ => None,
    }
}

/// A stand-in while one session's facts are completed.
fn placeholder() -> SessionFacts {
    SessionFacts {
        id: String::new(),
        state: State::Collected,
        worktree: String::new(),
        branch: String::new(),
        untrusted: Some("placeholder".to_owned()),
        on_disk: OnDisk::Missing,
        registration: None,
        link: Link::Absent,
        branch_state: Branch::Missing,
        dirt: None,
        nested: None,
        ignored: None,
        liveness: Liveness::NotRunning,
        busy: Busy::Idle,
        left_behind: Vec::new(),
        marker: None,
        checked_out_elsewhere: Vec::new(),
        created_here: Err(String::new()),
        spawner_alive: None,
        conversation: None,
        edited_copies: Ok(Vec::new()),
    }
}

/// The files bullpen copied into the session's worktree (its local state says
/// which, and what they held) that changed since: another content, or another
/// kind of file. One deleted loses nothing (the main worktree has it); one
/// whose stat is as copied (`IncludedFile::unchanged`) is not read again.
fn edited_copies(ctx: &Ctx, r: &Record) -> std::result::Result<Vec<String>, String> {
    let included = Local::of(&ctx.layout, &r.id)
        .included()
        .map_err(|e| format!("{e:#}"))?;
    let Some(included) = included else {
        return Ok(Vec::new());
    };
    let worktree = Path::new(&r.worktree);
    let mut edited = Vec::new();
    for f in included.files {
        let rel = Path::new(&f.path);
        let through_real_dirs = copy::is_plain_relative(rel)
            && copy::real_dirs_to(worktree, rel, false)
                .map_err(|e| format!("cannot inspect {}: {e}", worktree.join(rel).display()))?;
        if !through_real_dirs {
            edited.push(f.path);
            continue;
        }
        let path = worktree.join(rel);
        let meta = match path.symlink_metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
        };
        if !meta.is_file() {
            edited.push(f.path);
            continue;
        }
        let mtime = (meta.mtime(), meta.mtime_nsec());
        if f.unchanged(
            meta.len(),
            mtime,
            (meta.ctime(), meta.ctime_nsec()),
            meta.ino(),
        ) {
            continue;
        }
        let now = ctx.repo.hash_file(&path).map_err(|e| format!("{e:#}"))?;
        if now.map(|o| o.to_string()).as_deref() != Some(f.blob.as_str()) {
            edited.push(f.path);
        }
    }
    Ok(edited)
}

/// When a session was last active, as its record says: the latest of its
/// creation, its run's start and its end (not `updated_at`: gc's own notes in
/// the record move that).
fn last_active(r: &Record) -> Option<i64> {
    let p = r.process.as_ref();
    [
        Some(r.created_at.as_str()),
        p.map(|p| p.started_at.as_str()),
        r.exit.as_ref().map(|e| e.at.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter_map(time::parse_rfc3339)
    .max()
}

/// Who uses a session's directory, less the session's own processes while it
/// runs (its command, its supervisor, its process group): those are named once,
/// as "the session's process is running", never as strangers. Only when the run
/// is alive as recorded: a record naming a stranger's pid hides nobody otherwise.
fn strangers(busy: Busy, r: &Record, liveness: Liveness) -> Busy {
    let (Busy::InUse(users), Liveness::Alive { .. }, Some(p)) = (&busy, liveness, &r.process)
    else {
        return busy;
    };
    let left: Vec<User> = users
        .iter()
        .filter(|u| !own_process(p, u.pid))
        .cloned()
        .collect();
    if left.is_empty() {
        Busy::Idle
    } else {
        Busy::InUse(left)
    }
}

/// Is `pid` the recorded run's command, its supervisor, or in its process group?
fn own_process(p: &Process, pid: u32) -> bool {
    let now = procfs::identity(pid);
    if pid == p.pid && same_process(p, &now) {
        return true;
    }
    if Some(pid) == p.supervisor_pid && p.supervisor_start_time.is_some() {
        let supervisor = Process {
            start_time: p.supervisor_start_time,
            ..p.clone()
        };
        if same_process(&supervisor, &now) {
            return true;
        }
    }
    match (Group::of(p), procfs::stat(pid)) {
        (Some(g), Some(stat)) => g.has_member(&stat),
        _ => false,
    }
}

/// Gather the facts of these sessions, everything included (see
/// [`Gatherer::all`] with [`Depth::Whole`]): for commands that ask gc's
/// questions about a few sessions (`rm`).
#[allow(dead_code)]
pub(crate) fn gather_sessions(ctx: &Ctx, sessions: &[Stored]) -> Result<Vec<Result<SessionFacts>>> {
    Gatherer::new(ctx, plan::plan_session)?.all(sessions, Depth::Whole)
}

enum StatusVia {
    /// Through its worktree entry (gix status).
    Entry,
    /// Its entry is gone: against the branch tip.
    AgainstTip(Oid),
    None,
}

fn status_via(f: &SessionFacts) -> StatusVia {
    match (plan::via(f), f.branch_state.tip()) {
        (Some(Via::GitWorktreeRemove), _) => StatusVia::Entry,
        // What is left of a teardown, or a tree whose entry is gone: compared with
        // the branch tip (its index may be gone).
        (Some(Via::AdminEntryGone | Via::FinishTeardown), Some(tip)) => StatusVia::AgainstTip(tip),
        _ => StatusVia::None,
    }
}

/// The registered worktrees, indexed once per gathering (so 1,000 sessions do
/// not resolve 1,000 paths each).
struct Known<'a> {
    /// Linked and main worktrees by [`key`] of their path.
    by_key: HashMap<PathBuf, &'a Worktree>,
    /// Worktrees by the ref their HEAD is on, with their key.
    by_head: HashMap<&'a str, Vec<(PathBuf, &'a Worktree)>>,
}

impl<'a> Known<'a> {
    fn new(worktrees: &'a [Worktree]) -> Known<'a> {
        let mut by_key = HashMap::new();
        let mut by_head: HashMap<&str, Vec<(PathBuf, &Worktree)>> = HashMap::new();
        for w in worktrees {
            let k = key(&w.path);
            if let Some(head) = w.head_ref.as_deref() {
                by_head.entry(head).or_default().push((k.clone(), w));
            }
            by_key.entry(k).or_insert(w);
        }
        Known { by_key, by_head }
    }
}

/// Every fact about one session except who uses its directory; and its path,
/// confined to its root, if it is.
fn session_facts(
    ctx: &Ctx,
    s: &Stored,
    branch_state: Branch,
    known: &Known,
    lexical: &PlacePaths,
    canonical: &PlacePaths,
) -> Result<(SessionFacts, Option<ConfinedPath>)> {
    let repo = &ctx.repo;
    let r = &s.record;
    let path = PathBuf::from(&r.worktree);
    let branch_ref = r.id.branch_ref();
    let resolved = std::fs::canonicalize(&path).ok();
    // A session this machine created under an earlier worktree root is checked
    // against that root (`trust::session_layout`); any other record against the
    // current one.
    let own = crate::trust::session_layout(&ctx.layout, r);
    let own_places;
    let (lexical, canonical) = if own.worktree_root == ctx.layout.worktree_root {
        (lexical, canonical)
    } else {
        own_places = place_paths(ctx, &own.worktree_root);
        (&own_places.0, &own_places.1)
    };
    let canonical_places = canonical.places();
    let confined = ConfinedPath::new(&own.worktree_root, &path);
    let mut untrusted = plan::untrusted(
        &path,
        &lexical.places(),
        resolved.as_deref().map(|c| (c, &canonical_places)),
        confined.as_ref().map(|_| ()),
    );
    if untrusted.is_none() && r.branch != r.id.branch() {
        untrusted = Some(format!(
            "it names branch {}, but the session's branch is {}",
            quoted(&r.branch),
            r.id.branch()
        ));
    }
    let on_disk = match path.symlink_metadata() {
        Ok(m) if m.is_dir() && interrupted_before_add(ctx, r, &path) => OnDisk::Missing,
        Ok(m) if m.is_dir() => OnDisk::Directory,
        Ok(m) if m.file_type().is_symlink() => OnDisk::Other("a symlink".to_owned()),
        Ok(m) if m.is_file() => OnDisk::Other("a file".to_owned()),
        Ok(_) => OnDisk::Other("not a directory".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::Missing,
        Err(e) => OnDisk::Other(format!("unreadable ({e})")),
    };
    let k = key(&path);
    let registration = known
        .by_key
        .get(&k)
        .filter(|w| w.admin_id.is_some())
        .and_then(|w| {
            Some(Registration {
                admin_id: w.admin_id.clone()?,
                head_ref: w.head_ref.clone(),
                locked: w.locked,
            })
        });
    let checked_out_elsewhere = known
        .by_head
        .get(branch_ref.as_str())
        .into_iter()
        .flatten()
        .filter(|(wk, _)| *wk != k)
        .map(|(_, w)| w.path.to_string_lossy().into_owned())
        .collect();
    let link = if on_disk == OnDisk::Directory && untrusted.is_none() {
        link(repo.dot_git(&path))
    } else {
        Link::Absent
    };
    let marker = marker(r);
    let facts = SessionFacts {
        id: r.id.to_string(),
        state: r.state,
        worktree: r.worktree.clone(),
        branch: r.id.branch(),
        untrusted,
        on_disk,
        registration,
        link,
        branch_state,
        dirt: None,
        nested: None,
        ignored: None,
        liveness: liveness(r),
        busy: Busy::Idle,
        left_behind: left_behind(ctx, r),
        marker,
        checked_out_elsewhere,
        created_here: created_here(ctx, r),
        spawner_alive: live_spawner(ctx, r),
        conversation: None,
        edited_copies: Ok(Vec::new()),
    };
    let confined = confined.ok().filter(|_| facts.untrusted.is_none());
    Ok((facts, confined))
}

/// The empty directory a spawn made here, exclusively, just before its `git
/// worktree add`, when the spawn died there: nothing of a worktree, no work.
fn interrupted_before_add(ctx: &Ctx, r: &Record, path: &Path) -> bool {
    r.state == State::Provisioning
        && live_spawner(ctx, r).is_none()
        && created_here(ctx, r).is_ok()
        && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// What the session's ended run left behind, proven its own: what descends
/// from the supervisor that wrote `leftovers.json` here, while it lives as recorded.
fn left_behind(ctx: &Ctx, r: &Record) -> Vec<u32> {
    let Ok(Some(proof)) = Local::of(&ctx.layout, &r.id).leftovers() else {
        return Vec::new();
    };
    match trust::decide::leftover_authority(&proof, &procfs::identity(proof.supervisor.pid)) {
        Some(a) => procfs::descendants(a.supervisor()),
        None => Vec::new(),
    }
}

/// The local proof that bullpen created the session's worktree here.
fn created_here(ctx: &Ctx, r: &Record) -> std::result::Result<(), String> {
    created_here_at(ctx, &r.id, &r.worktree)
}

/// The local proof that bullpen created session `id`'s worktree here, at `worktree`.
pub(crate) fn created_here_at(
    ctx: &Ctx,
    id: &SessionId,
    worktree: &str,
) -> std::result::Result<(), String> {
    let created = Local::of(&ctx.layout, id).created();
    let created = created
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    trust::decide::created_here(worktree, created).map_err(|why| why.describe())
}

/// Is the session's own process alive? Only asked for records in `running`.
/// A recorded process whose identity cannot be verified (no start time or boot
/// id) is unknown while its pid exists: gc keeps what it cannot tell, and never
/// names that pid as the session's.
fn liveness(r: &Record) -> Liveness {
    if r.state != State::Running {
        return Liveness::NotRunning;
    }
    let Some(p) = &r.process else {
        return Liveness::Unknown;
    };
    let unverifiable = p.start_time.is_none() || p.boot_id.is_none();
    // Kept, but never named as the session's: whoever has that pid may be anyone.
    if unverifiable && procfs::pid_exists(p.pid) {
        return Liveness::Unknown;
    }
    // The command, its supervisor, or anything left in its process group.
    match live_process(r) {
        Some(pid) => Liveness::Alive { pid },
        None => Liveness::NotRunning,
    }
}

fn marker(r: &Record) -> Option<Marker> {
    let m = r.extra.get(MARKER_KEY)?;
    Some(Marker {
        admin_id: m.get("admin_id")?.as_str()?.to_owned(),
        tip: m.get("tip")?.as_str()?.parse().ok()?,
    })
}

/// What a directory's `.git` entry says, in the plan's words.
fn link(dot_git: DotGit) -> Link {
    match dot_git {
        DotGit::Absent => Link::Absent,
        DotGit::Directory => Link::Repository,
        DotGit::Ours {
            admin_id,
            admin_exists,
        } => Link::Ours {
            admin_id,
            admin_exists,
        },
        DotGit::Foreign { description } => Link::Foreign(description),
    }
}

pub(crate) fn orphan_facts(ctx: &Ctx, path: &Path, scan: &Scan) -> OrphanFacts {
    let contents = match ctx.repo.dot_git(path) {
        DotGit::Directory => Contents::Repository,
        dot_git => match count_files(path) {
            Ok(0) => Contents::NoWork {
                dot_git: link(dot_git),
            },
            Ok(n) => Contents::Files(n),
            Err(e) => Contents::Unreadable(e),
        },
    };
    OrphanFacts {
        path: path.to_string_lossy().into_owned(),
        contents,
        busy: scan.busy(path),
    }
}

/// Files and symlinks under `dir` (never following symlinks), not counting a
/// top-level `.git` file. Stops counting at a cap: any count is "has work".
fn count_files(dir: &Path) -> std::result::Result<usize, String> {
    const CAP: usize = 10_000;
    let mut n = 0;
    let mut stack = vec![(dir.to_path_buf(), true)];
    while let Some((d, top)) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| format!("cannot list {}: {e}", d.display()))?;
        for entry in rd {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", d.display()))?;
            let ft = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", entry.path().display()))?;
            if ft.is_dir() {
                stack.push((entry.path(), false));
            } else if !(top && entry.file_name() == ".git" && ft.is_file()) {
                n += 1;
                if n >= CAP {
                    return Ok(n);
                }
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_files_but_not_the_top_dot_git_file() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join(".git"), "gitdir: /nowhere\n").unwrap();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        assert_eq!(count_files(d).unwrap(), 0);
        std::fs::write(d.join("a/b/.git"), "x").unwrap();
        assert_eq!(count_files(d).unwrap(), 1);
        std::os::unix::fs::symlink("/etc", d.join("l")).unwrap();
        assert_eq!(count_files(d).unwrap(), 2);
    }
}
