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
use crate::git::{DotGit, NestedTarget, StatusMap, Worktree};
use crate::model::command::quoted;
use crate::model::config::{DEFAULT_AGENT_GRACE, GC_AGENT_GRACE};
use crate::model::id::GC_TEARDOWN_KEY as MARKER_KEY;
use crate::model::paths::normalize;
use crate::model::process::{same_process, Group};
use crate::model::usage::{Busy, User};
use crate::model::{time, Error, Oid, Process, Record, SessionId, State};
use crate::run::liveness::{live_process, live_spawner};
use crate::sys::procfs::{self, Scan};
use crate::sys::{copy, paths};
use crate::trust::confined::ConfinedPath;
use crate::trust::{self, local::Local};

mod at_act;
mod orphan;
mod publish;
mod session;

pub(crate) use at_act::AtAct;
pub(crate) use orphan::orphan_facts;
pub(crate) use publish::Publish;
pub(crate) use session::created_here_at;
use session::{edited_copies, last_active, link, marker, session_facts, strangers, Acting, Known};

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
pub(crate) struct Gatherer<'a> {
    ctx: &'a Ctx<'a>,
    /// Where the costly facts (status, nested repositories) are needed: as gc's
    /// plan says, or `rm --force`'s.
    plan: fn(&SessionFacts) -> plan::Decision,
    lexical: PlacePaths,
    canonical: PlacePaths,
    /// The remote-tracking refs and the integration refs: what decides publish.
    publish: Publish<'a>,
    /// `bullpen.gc.agentGrace`, read, and as written.
    grace: (time::Expire, String),
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
    /// Read the remote-tracking refs and the integration refs once
    /// ([`Publish::new`]) and `bullpen.gc.agentGrace`.
    pub(crate) fn new(
        ctx: &'a Ctx<'a>,
        plan: fn(&SessionFacts) -> plan::Decision,
    ) -> Result<Gatherer<'a>> {
        let (lexical, canonical) = place_paths(ctx, &ctx.layout.worktree_root);
        let publish = Publish::new(ctx, true)?;
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
            publish,
            grace: (grace, grace_value),
        })
    }

    /// Without the progress line naming the refs the proof of content looks
    /// at (`rm`: its line for each session says what was found).
    pub(crate) fn quiet(self) -> Gatherer<'a> {
        self.publish.quiet();
        self
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

    /// Where each session's branch stands ([`Publish::branch_states`]).
    fn branch_states(
        &self,
        sessions: &[Stored],
        tips: &[Result<Option<Oid>>],
    ) -> Result<Vec<Result<Branch>>> {
        self.publish.branch_states(sessions, tips)
    }

    /// Every fact about one session except who uses its directory, status and
    /// nested repositories; and its path, confined, if it is.
    fn session_facts(
        &self,
        s: &Stored,
        branch_state: Branch,
        known: &Known,
    ) -> Result<(SessionFacts, Acting)> {
        let (mut f, acting) = session_facts(
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
        Ok((f, acting))
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
