//! The facts of one session as re-read at the act, under the lock: a type of
//! their own, which only [`Gatherer::recheck`] makes and the removal takes.

use super::*;
use crate::trust::decide::CreatedHere;

/// A session's facts as re-read at the act, under the lock: what can change
/// cheaply read again, and who uses its directory scanned again. Only
/// [`Gatherer::recheck`] makes one; the removal takes nothing else.
/// It alone carries the recorded path as a [`ConfinedPath`], checked right
/// then: what the teardown removes.
/// With it, the local proof that bullpen created the worktree here.
pub(crate) struct AtAct {
    facts: SessionFacts,
    acting: Acting,
}

impl AtAct {
    /// The session's worktree path, confined to its root as checked at the
    /// act (`None`: it is not, and the plan keeps the session as untrusted).
    pub(crate) fn confined(&self) -> Option<&ConfinedPath> {
        self.acting.confined.as_ref()
    }

    /// The local proof that bullpen created the worktree here, at its path
    /// (`None`: there is none, and the plan keeps the session).
    pub(crate) fn created_here(&self) -> Option<&CreatedHere> {
        self.acting.created.as_ref()
    }
}

impl std::ops::Deref for AtAct {
    type Target = SessionFacts;
    fn deref(&self) -> &SessionFacts {
        &self.facts
    }
}

impl Gatherer<'_> {
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
        let (mut f, acting) = self.session_facts(fresh, branch, &known)?;
        f.checked_out_elsewhere = before.checked_out_elsewhere.clone();
        if f.untrusted.is_none() && f.on_disk == OnDisk::Directory {
            let scan = procfs::scan(std::slice::from_ref(&path));
            f.busy = strangers(scan.busy(&path), r, f.liveness);
        }
        Ok(AtAct { facts: f, acting })
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
}
