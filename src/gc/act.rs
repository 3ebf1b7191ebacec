//! One decision carried out: under the worktree lock, the facts gathered again
//! (`AtAct`) and the plan asked again, then the teardown, the branch and the
//! record.

use super::execute::{again, Gc, Step};
use super::facts::AtAct;
use super::plan::{self, Decision, Link, OnDisk, Reason, SessionFacts, Via};
use super::report::{collected_reason, removed_reason, Action};
use super::teardown::{self, Target};
use crate::git::store::{self, Stored};
use crate::git::EntryRemoval;
use crate::model::id::{GC_TEARDOWN_KEY as MARKER_KEY, LAST_TIP_KEY, NOTES_REF, PUBLISHED_KEY};
use crate::model::{time, Oid, State};
use crate::sys::lock::Lock;

impl Gc<'_> {
    /// Remove or collect one session: under the repository lock, with every fact
    /// gathered again and the plan asked again right before anything is removed.
    pub(super) fn execute(
        &mut self,
        stored: &Stored,
        before: &SessionFacts,
        waiting: bool,
    ) -> Step {
        let repo = &self.ctx.repo;
        let id = &stored.record.id;
        let _lock = match Lock::acquire(&self.ctx.layout.lock_path()) {
            Ok(l) => l,
            Err(e) => {
                return self.degraded(
                    &stored.record,
                    format!("{e:#}"),
                    "check the permissions of the repository's git directory",
                )
            }
        };
        let fresh = match store::load(repo, id) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return self.kept(
                    &stored.record,
                    "its record was deleted during gc".to_owned(),
                )
            }
            Err(e) => {
                return self.kept(
                    &stored.record,
                    format!("cannot read its record again: {e:#}"),
                )
            }
        };
        if fresh.record.state == State::Collected {
            return Step::Done(Box::new(self.entry(
                "session",
                Some(&fresh.record),
                Action::Collected,
                "collected by another gc meanwhile".to_owned(),
            )));
        }
        let mut facts = match self.gather.recheck(&fresh, before) {
            Ok(f) => f,
            Err(e) => {
                return self.kept(
                    &fresh.record,
                    format!("cannot tell what state it is in: {e:#}"),
                )
            }
        };
        self.gather.complete(&mut facts);
        let decision = self.decide(&facts);
        match decision {
            Decision::Keep(_) if waiting && decision.is_waitable() => Step::Defer,
            Decision::Keep(_) if idle_note(&facts, &decision) => {
                // An earlier gc noted a teardown that no gc can finish (see
                // `idle_note`). The note would only keep the session from running
                // again, and `resume`'s hint ("run gc to finish it") from working.
                let r = &fresh.record;
                if let Err(e) = store::try_update(repo, &fresh, "gc: nothing to finish", |r| {
                    r.extra.remove(MARKER_KEY);
                }) {
                    self.ctx.ui.warn(format!(
                        "{}: could not clear the teardown note in its record: {e:#}",
                        r.id
                    ));
                }
                Step::Done(Box::new(self.planned(r, &facts, &decision)))
            }
            Decision::Keep(_) => {
                Step::Done(Box::new(self.planned(&fresh.record, &facts, &decision)))
            }
            Decision::Collect { tip } => {
                if let Some(reg) = facts.registration.as_ref().filter(|r| !r.locked) {
                    // Exactly the session's own entry, registered for its path
                    // (under the root it was created in: `trust::session_layout`).
                    let path = crate::trust::session_layout(&self.ctx.layout, &fresh.record)
                        .worktree_path(&fresh.record.id);
                    match repo.remove_admin_entry(&reg.admin_id, &path) {
                        Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
                        Ok(EntryRemoval::Refused(why)) => {
                            return self.kept(
                                &fresh.record,
                                format!(
                                    "the worktree is gone, but its worktree entry {} stays: {why}",
                                    reg.admin_id
                                ),
                            )
                        }
                        Err(e) => {
                            return self.degraded(
                                &fresh.record,
                                format!("its worktree entry could not be removed: {e:#}"),
                                again(&e),
                            )
                        }
                    }
                }
                if fresh.record.state == State::Provisioning {
                    // What a spawn killed before its `git worktree add` left: the
                    // empty directory it made (only an empty one goes).
                    let path = crate::trust::session_layout(&self.ctx.layout, &fresh.record)
                        .worktree_path(&fresh.record.id);
                    let _ = std::fs::remove_dir(path);
                }
                let reason =
                    self.discarded(&facts, collected_reason(tip, facts.branch_state.evidence()));
                self.finish(fresh, &facts, tip, Action::Collected, reason)
            }
            Decision::Remove { via, tip } => self.remove(fresh, &facts, via, tip),
        }
    }

    pub(super) fn remove(&mut self, fresh: Stored, facts: &AtAct, via: Via, tip: Oid) -> Step {
        let repo = &self.ctx.repo;
        // The plan removes only what is confined and created here.
        let (Some(confined), Some(created)) = (facts.confined(), facts.created_here()) else {
            return self.kept(
                &fresh.record,
                "internal: its worktree path is not confined to the worktree root, or nothing \
                 on this machine shows bullpen created it"
                    .to_owned(),
            );
        };
        let admin_id = match (via, &facts.registration, &facts.link, &facts.marker) {
            (Via::GitWorktreeRemove, Some(reg), _, _) => reg.admin_id.clone(),
            (Via::AdminEntryGone, _, Link::Ours { admin_id, .. }, _) => admin_id.clone(),
            (Via::FinishTeardown, _, _, Some(m)) => m.admin_id.clone(),
            _ => {
                return self.kept(
                    &fresh.record,
                    "internal: no worktree entry to remove".to_owned(),
                )
            }
        };
        // Note in the record that teardown starts, so that a later gc can finish a
        // teardown this one could not (see `plan::Marker`).
        let (stored, wrote_marker) = if via == Via::FinishTeardown {
            (fresh, false)
        } else {
            let marker = serde_json::json!({
                "admin_id": admin_id,
                "tip": tip.to_string(),
                "started_at": time::now_rfc3339(),
            });
            // One compare-and-swap against the record just checked: if a resume
            // or another gc changed it since, nothing is removed. Once the note is
            // in, `runner::ensure_not_running` refuses to start a run here.
            match store::try_update(repo, &fresh, "gc: removing the worktree", |r| {
                r.extra.insert(MARKER_KEY.to_owned(), marker.clone());
            }) {
                Ok(s) => (s, true),
                Err(e) if store::is_conflict(&e) => {
                    return self.kept(
                        &fresh.record,
                        "its record changed during gc (resumed or stopped meanwhile?); \
                         nothing removed"
                            .to_owned(),
                    );
                }
                Err(e) => {
                    return self.degraded(
                        &fresh.record,
                        format!("nothing removed: cannot record that teardown starts: {e:#}"),
                        again(&e),
                    );
                }
            }
        };
        let path = confined.path().to_path_buf();
        let watch = self.seen_busy.contains(&stored.record.id);
        // `rm --force` too: the teardown removes with `git worktree remove
        // --force` once the plan (here, the forced one) let it.
        let outcome = teardown::remove_worktree(
            repo,
            created,
            &Target {
                confined,
                admin_id: &admin_id,
                via,
                tip,
                watch,
            },
        );
        match outcome {
            teardown::Outcome::Removed { notes } => {
                if notes.is_empty() && !watch && via == Via::GitWorktreeRemove {
                    self.unwatched
                        .push((stored.record.id.clone(), path.clone()));
                }
                for n in notes {
                    self.ctx.ui.info(format!("{}: {n}", stored.record.id));
                }
                let reason = self.discarded(
                    facts,
                    removed_reason(
                        via,
                        facts.branch_state.evidence(),
                        facts.ignored.as_ref(),
                        false,
                    ),
                );
                let mut step = self.finish(stored, facts, Some(tip), Action::Removed, reason);
                if let Step::Done(e) = &mut step {
                    e.ignored = facts.ignored.clone().filter(|i| i.words().is_some());
                }
                step
            }
            teardown::Outcome::Kept(why) => {
                // The worktree is whole: nothing for a later gc to finish, and the
                // session may run again.
                if wrote_marker || stored.record.extra.contains_key(MARKER_KEY) {
                    if let Err(e) = store::update(repo, &stored, "gc: kept the worktree", |r| {
                        r.extra.remove(MARKER_KEY);
                    }) {
                        self.ctx.ui.warn(format!(
                            "{}: could not clear the teardown note in its record: {e:#}",
                            stored.record.id
                        ));
                    }
                }
                self.kept(&stored.record, why)
            }
            teardown::Outcome::Degraded { what, hint } => self.degraded(&stored.record, what, hint),
        }
    }

    /// After the worktree is gone: delete the branch if it still points at
    /// `tip` (compare-and-swap), then mark the record collected.
    pub(super) fn finish(
        &mut self,
        stored: Stored,
        facts: &SessionFacts,
        tip: Option<Oid>,
        action: Action,
        reason: String,
    ) -> Step {
        let repo = &self.ctx.repo;
        let r = &stored.record;
        let branch_ref = r.id.branch_ref();
        let evidence = facts.branch_state.evidence().cloned();
        if let Some(tip) = tip.filter(|t| !self.noted.contains(t)) {
            // The branch moved since the notes were written (or they could not be).
            match self.notes_for(r, tip, evidence.as_ref()).and_then(|n| {
                repo.add_notes_unless_there(
                    NOTES_REF,
                    &n,
                    &format!("bullpen: gc notes where the work of session {} went", r.id),
                )
            }) {
                Ok(()) => {
                    self.noted.insert(tip);
                }
                Err(e) => self.ctx.ui.warn(format!(
                    "{}: could not note where its work went ({NOTES_REF}): {e:#}",
                    r.id
                )),
            }
        }
        if let Some(tip) = tip {
            if let Err(e) = repo.delete_ref(&branch_ref, tip, "bullpen: gc") {
                match repo.ref_target(&branch_ref) {
                    Ok(None) => {} // already gone: nothing to keep
                    Ok(Some(now)) if store::is_conflict(&e) => {
                        // The worktree may be gone (Remove) but the session is not
                        // collected: clear the teardown note so nothing finishes it.
                        if let Err(e) = store::update(repo, &stored, "gc: branch moved", |rec| {
                            rec.extra.remove(MARKER_KEY);
                        }) {
                            self.ctx.ui.warn(format!(
                                "{}: could not clear the teardown note in its record: {e:#}",
                                r.id
                            ));
                        }
                        let action = if action == Action::Collected {
                            Action::Kept
                        } else {
                            action
                        };
                        return Step::Done(Box::new(self.entry(
                            "session",
                            Some(r),
                            action,
                            format!(
                                "{reason}; but {} moved to {now} during gc, so the branch and the record were kept",
                                r.id.branch()
                            ),
                        )));
                    }
                    _ => {
                        return self.degraded(
                            r,
                            format!(
                                "the worktree is gone, but {} could not be deleted: {e:#}",
                                r.id.branch()
                            ),
                            again(&e),
                        );
                    }
                }
            }
            // As `git branch -d`: the branch's configuration goes with it (the
            // upstream of a session continued from a remote's).
            if let Err(e) = repo.remove_branch_config_if_any(&r.id.branch()) {
                self.ctx.ui.warn(format!(
                    "{}: could not remove the configuration of {}: {e:#}",
                    r.id,
                    r.id.branch()
                ));
            }
        }
        // The evidence stays in the record's last commit: its subject, and
        // `published` in its session.json.
        let event = match &evidence {
            Some(e) => format!("collected: {}", e.full_words()),
            None => "collected".to_owned(),
        };
        let published = evidence.as_ref().map(|e| {
            serde_json::json!({
                "how": e.how(),
                "ref": e.on(),
                "commit": e.commit().map(|c| c.to_string()),
                "tip": tip.map(|t| t.to_string()),
                "description": e.full_words(),
                "landings": super::report::landings_json(e),
                "at": time::now_rfc3339(),
            })
        });
        match store::update(repo, &stored, &event, |rec| {
            rec.state = State::Collected;
            rec.extra.remove(MARKER_KEY);
            // Where `resume` recreates the worktree from.
            if let Some(t) = tip {
                rec.extra
                    .insert(LAST_TIP_KEY.to_owned(), serde_json::json!(t.to_string()));
            }
            if let Some(p) = &published {
                rec.extra.insert(PUBLISHED_KEY.to_owned(), p.clone());
            }
        }) {
            Ok(_) => {
                let mut e = self.entry("session", Some(r), action, reason);
                e.published = evidence;
                Step::Done(Box::new(e))
            }
            Err(e) => self.degraded(
                r,
                format!(
                    "the worktree and branch are gone, but the record could not be marked \
                     collected: {e:#}"
                ),
                again(&e),
            ),
        }
    }
}

/// A teardown note that no gc can act on, on a session gc keeps: cleared (under
/// the lock). The worktree is whole (its `.git` and admin entry point at each
/// other: gc died before git ran, or git refused), or its directory is gone, or
/// the branch moved since the note (its proof no longer holds).
pub(super) fn idle_note(f: &SessionFacts, decision: &Decision) -> bool {
    let stale = matches!(decision, Decision::Keep(r) if r.contains(&Reason::MarkerStale));
    f.marker.is_some()
        && (stale || f.on_disk == OnDisk::Missing || plan::via(f) == Some(Via::GitWorktreeRemove))
}
