//! gc's leftovers: admin entries of vanished session worktrees, entries git
//! left half-removed, and orphaned directories in the worktree root.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::execute::Gc;
use super::facts::{created_here_at, key, orphan_facts};
use super::plan::{self, AdminDecision, AdminFacts, OrphanDecision};
use super::report::{Action, Entry};
use super::teardown;
use crate::git::store::{self, Stored};
use crate::git::{DotGit, EntryRemoval};
use crate::model::{SessionId, State};
use crate::sys::lock::Lock;
use crate::sys::procfs;
use crate::trust::confined::ConfinedPath;

impl Gc<'_> {
    /// Admin entries of sessions' worktrees whose directory vanished: each removed
    /// by itself (never `git worktree prune`). Entries registered anywhere else
    /// than `<worktree root>/<id>` of a session are not gc's: a user's worktree
    /// on a disk that is not mounted keeps its registration.
    pub(super) fn admin_entries(&self, sessions: &HashSet<SessionId>) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let layout = &self.ctx.layout;
        let session_of = |path: &Path| -> Option<SessionId> {
            let id: SessionId = path.file_name()?.to_str()?.parse().ok()?;
            (sessions.contains(&id) && key(&layout.worktree_path(&id)) == key(path)).then_some(id)
        };
        let facts: Vec<(AdminFacts, Option<SessionId>)> = repo
            .worktrees()?
            .into_iter()
            .filter(|w| !w.exists)
            .filter_map(|w| {
                let admin_id = w.admin_id?;
                let session = session_of(&w.path);
                let modules = session.as_ref().map(|_| {
                    repo.nested_repositories(None, Some(&admin_id))
                        .map_err(|e| format!("{e:#}"))
                });
                let created_here = match &session {
                    Some(id) => {
                        created_here_at(self.ctx, id, &layout.worktree_path(id).to_string_lossy())
                            .map(|_| ())
                    }
                    None => Err("not a session's".to_owned()),
                };
                Some((
                    AdminFacts {
                        admin_id,
                        path: w.path.to_string_lossy().into_owned(),
                        locked: w.locked,
                        session: session.as_ref().map(|s| s.to_string()),
                        created_here,
                        modules,
                    },
                    session,
                ))
            })
            .collect();
        let mut out = Vec::new();
        let mut lock = None;
        out.extend(self.half_removed_entries(sessions, &mut lock)?);
        for (f, session) in &facts {
            let mut e = Entry {
                kind: "worktree-entry",
                id: Some(f.admin_id.clone()),
                action: Action::Pruned,
                reason: format!("its directory {} is gone", f.path),
                worktree: Some(f.path.clone()),
                branch: session.as_ref().map(|s| s.branch()),
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
                path: None,
            };
            match (plan::plan_admin_entry(f), session) {
                (AdminDecision::NotOurs, _) => continue,
                (AdminDecision::Keep(why), _) => {
                    e.action = Action::Kept;
                    e.reason = format!("its directory {} is gone, but it is {why}", f.path);
                    // Sessions report their own locked entries; this is for the rest.
                }
                (AdminDecision::Prune, _) if self.dry_run => {}
                (AdminDecision::Prune, None) => continue,
                (AdminDecision::Prune, Some(id)) => {
                    if lock.is_none() {
                        lock = Some(Lock::acquire(&layout.lock_path())?);
                    }
                    let removal = repo.remove_admin_entry(&f.admin_id, &layout.worktree_path(id));
                    report_entry_removal(&mut e, removal, |why| {
                        format!("its directory {} is gone, but {why}", f.path)
                    });
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Admin entries git left half-removed (no `gitdir` file) of sessions'
    /// vanished worktrees, proven created here: removed, each by itself.
    fn half_removed_entries(
        &self,
        sessions: &HashSet<SessionId>,
        lock: &mut Option<Lock>,
    ) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let layout = &self.ctx.layout;
        let half = repo.half_removed_entries()?;
        if half.is_empty() {
            return Ok(Vec::new());
        }
        let registered: HashSet<PathBuf> = repo.worktrees()?.iter().map(|w| key(&w.path)).collect();
        let mut out = Vec::new();
        for h in half {
            let id = h
                .admin_id
                .parse::<SessionId>()
                .ok()
                .filter(|id| sessions.contains(id));
            let path = id.as_ref().map(|id| layout.worktree_path(id));
            let session = match (&id, &path) {
                (Some(id), Some(p))
                    if p.symlink_metadata().is_err() && !registered.contains(&key(p)) =>
                {
                    Some(id.clone())
                }
                _ => None,
            };
            let created_here = match (&session, &path) {
                (Some(id), Some(p)) => {
                    created_here_at(self.ctx, id, &p.to_string_lossy()).map(|_| ())
                }
                _ => Err("not a session's".to_owned()),
            };
            let f = plan::HalfRemovedFacts {
                admin_id: h.admin_id.clone(),
                session: session.as_ref().map(|s| s.to_string()),
                head: h.head,
                locked: h.locked,
                created_here,
            };
            let (Some(id), Some(path)) = (session, path) else {
                continue;
            };
            let shown = path.display().to_string();
            let mut e = Entry {
                kind: "worktree-entry",
                id: Some(h.admin_id.clone()),
                action: Action::Pruned,
                reason: format!(
                    "git left it half-removed (no gitdir file) and its directory {shown} is gone"
                ),
                worktree: Some(shown.clone()),
                branch: Some(id.branch()),
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
                path: None,
            };
            match plan::plan_half_removed(&f) {
                AdminDecision::NotOurs => continue,
                AdminDecision::Keep(why) => {
                    e.action = Action::Kept;
                    e.reason =
                        format!("git left it half-removed (no gitdir file), but it is {why}");
                }
                AdminDecision::Prune if self.dry_run => {}
                AdminDecision::Prune => {
                    if lock.is_none() {
                        *lock = Some(Lock::acquire(&layout.lock_path())?);
                    }
                    let removal = repo.remove_half_removed_entry(&h.admin_id, &path);
                    report_entry_removal(&mut e, removal, |why| {
                        format!("git left it half-removed (no gitdir file), but {why}")
                    });
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Directories in the worktree root that no worktree and no session claims,
    /// and that are bullpen's: their `.git` file points into this repository's
    /// worktree entries, or they sit where a collected session's worktree was.
    /// Anything else in the root is not gc's to judge (the root may be shared).
    pub(super) fn orphans(&self, live: &[Stored], collected: &[PathBuf]) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let root = &self.ctx.layout.worktree_root;
        let mut claimed: HashSet<PathBuf> =
            repo.worktrees()?.iter().map(|w| key(&w.path)).collect();
        claimed.extend(live.iter().map(|s| key(Path::new(&s.record.worktree))));
        let remnants: HashSet<PathBuf> = collected.iter().map(|p| key(p)).collect();
        let candidates = match std::fs::read_dir(root) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .filter(|p| {
                    let k = key(p);
                    !claimed.contains(&k)
                        && (remnants.contains(&k) || matches!(repo.dot_git(p), DotGit::Ours { .. }))
                })
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                self.ctx.ui.warn(format!(
                    "cannot look for leftovers in {}: {e}",
                    root.display()
                ));
                Vec::new()
            }
        };
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let scan = procfs::scan(&candidates);
        let mut out = Vec::new();
        for path in candidates {
            let facts = orphan_facts(self.ctx, &path, &scan);
            let decision = plan::plan_orphan(&facts);
            let mut e = Entry {
                kind: "orphan",
                id: None,
                action: Action::Kept,
                reason: String::new(),
                worktree: Some(path.to_string_lossy().into_owned()),
                branch: None,
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
                path: None,
            };
            match decision {
                OrphanDecision::Keep(why) => e.reason = why,
                OrphanDecision::Remove(why) if self.dry_run => {
                    e.action = Action::Removed;
                    e.reason = why;
                }
                OrphanDecision::Remove(why) => match self.remove_orphan(&path) {
                    Ok(None) => {
                        e.action = Action::Removed;
                        e.reason = why;
                    }
                    Ok(Some(kept)) => e.reason = kept,
                    Err(what) => {
                        e.action = Action::Degraded;
                        e.reason = what;
                        e.hint = Some(format!(
                            "look at {} and remove it by hand if it holds nothing you need",
                            path.display()
                        ));
                    }
                },
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Under the lock, ask again (is it still unclaimed, still without work,
    /// still idle?) and remove it. `Ok(Some(why))`: kept after all.
    fn remove_orphan(&self, path: &Path) -> std::result::Result<Option<String>, String> {
        let repo = &self.ctx.repo;
        let _lock = Lock::acquire(&self.ctx.layout.lock_path()).map_err(|e| format!("{e:#}"))?;
        let k = key(path);
        let registered = repo
            .worktrees()
            .map_err(|e| format!("{e:#}"))?
            .iter()
            .any(|w| key(&w.path) == k);
        if registered {
            return Ok(Some("it became a registered worktree during gc".to_owned()));
        }
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if let Ok(id) = name.parse::<SessionId>() {
                if let Ok(Some(s)) = store::load(repo, &id) {
                    if s.record.state != State::Collected && key(Path::new(&s.record.worktree)) == k
                    {
                        return Ok(Some(format!("session {id} claims it")));
                    }
                }
            }
        }
        let scan = procfs::scan(&[path.to_path_buf()]);
        match plan::plan_orphan(&orphan_facts(self.ctx, path, &scan)) {
            OrphanDecision::Keep(why) => Ok(Some(why)),
            OrphanDecision::Remove(_) => {
                let root = &self.ctx.layout.worktree_root;
                let confined =
                    ConfinedPath::new(root, path).map_err(|why| why.describe(path, root))?;
                teardown::remove_dir_confined(&confined).map(|()| None)
            }
        }
    }
}

/// A leftover entry's removal in its report line: kept with `refused`'s words
/// for git's reason, degraded (to be run again) when it could not be done.
fn report_entry_removal(
    e: &mut Entry,
    removal: Result<EntryRemoval>,
    refused: impl FnOnce(String) -> String,
) {
    match removal {
        Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
        Ok(EntryRemoval::Refused(why)) => {
            e.action = Action::Kept;
            e.reason = refused(why);
        }
        Err(err) => {
            e.action = Action::Degraded;
            e.reason = format!("{err:#}");
            e.hint = Some("run `git bullpen gc` again".to_owned());
        }
    }
}
