//! The notes a push sends: the remote's notes plus ours on the commits the
//! remote will have, never the notes of sessions it does not get.
//!
//! `refs/notes/bullpen` here holds the notes of every session of this clone,
//! each with its id and command (an agent's prompt). Its history does too, so
//! what goes is a commit of its own: its parent is the remote's notes tip (a
//! fast-forward there) and its tree that tip's plus our notes on the commits
//! the push's tips reach. Once it landed, the local notes ref becomes a merge
//! of ours and it (tree: ours, a superset), so ours still holds what the
//! remote has, and the next fetch finds nothing to merge.

use std::collections::{HashMap, HashSet};

use anyhow::{Context, Result};

use crate::model::notes::{union, Union};

use super::records::one_line;
use super::{gid, gids, oid, Expect, Oid, Repo};

impl Repo {
    /// A notes commit for a remote whose notes tip is `theirs` (none: it has
    /// no notes): parent `theirs`, tree `theirs`'s plus each note of
    /// `notes_ref` on a commit that `tips` reach (what the remote will have
    /// after the push) and that the remote lacks or holds less of. `None` when
    /// no such note differs from the remote's. A note of theirs that ours does
    /// not hold whole (`model::notes::union`) stays theirs.
    pub fn notes_for_push(
        &self,
        notes_ref: &str,
        theirs: Option<Oid>,
        tips: &[Oid],
        message: &str,
    ) -> Result<Option<Oid>> {
        let Some(ours) = self.ref_target(notes_ref)? else {
            return Ok(None);
        };
        let their_notes: HashMap<_, _> = match theirs {
            Some(t) => self.notes_of_commit(t)?.into_iter().collect(),
            None => HashMap::new(),
        };
        let mut wanted: HashMap<gix::ObjectId, gix::ObjectId> = self
            .notes_of_commit(ours)?
            .into_iter()
            .filter(|(object, blob)| their_notes.get(object) != Some(blob))
            .collect();
        if wanted.is_empty() {
            return Ok(None);
        }
        let reached = self.reached_of(tips, &wanted.keys().copied().collect())?;
        wanted.retain(|object, _| reached.contains(object));
        let mut state = self.notes_state(notes_ref, theirs)?;
        let mut changed = false;
        for (object, our_blob) in wanted {
            let annotated = oid(object);
            if let Some(their_blob) = their_notes.get(&object) {
                let mine = self.note_bytes(our_blob, annotated)?;
                let other = self.note_bytes(*their_blob, annotated)?;
                if union(&mine, &other) != Union::Ours {
                    continue;
                }
            }
            state
                .edit(object, Some(our_blob), &self.repo)
                .with_context(|| format!("could not add the note on {annotated} to the push"))?;
            changed = true;
        }
        if !changed {
            return Ok(None);
        }
        let tree = state
            .write(&self.repo)
            .context("could not write the notes tree of the push")?;
        let parents = theirs.into_iter().map(gid).collect::<Result<_>>()?;
        Ok(Some(self.write_commit(tree, message, parents)?))
    }

    /// After `pushed` (from [`Repo::notes_for_push`]) landed: `notes_ref`
    /// becomes a merge of ours and it, ours' tree (which holds all of it), so
    /// ours contains what the remote has. Nothing when ours is `pushed` or
    /// has it as a parent; deeper is not looked for (a walk of ours' whole
    /// history, to save a merge that changes no tree).
    pub fn adopt_pushed_notes(&self, notes_ref: &str, pushed: Oid, message: &str) -> Result<()> {
        for _ in 0..5 {
            let Some(ours) = self.ref_target(notes_ref)? else {
                return Ok(());
            };
            if ours == pushed {
                return Ok(());
            }
            let commit = self
                .repo
                .find_commit(gid(ours)?)
                .with_context(|| format!("could not read notes commit {ours}"))?;
            if commit.parent_ids().any(|p| oid(p.detach()) == pushed) {
                return Ok(());
            }
            let tree = commit
                .tree_id()
                .with_context(|| format!("could not read the tree of notes commit {ours}"))?
                .detach();
            let merged = self.write_commit(tree, message, gids(&[ours, pushed])?)?;
            let reflog = format!("notes: {}", one_line(message));
            match self.update_ref(notes_ref, merged, Expect::At(ours), &reflog) {
                Ok(()) => return Ok(()),
                Err(e) if e.downcast_ref::<super::CasConflict>().is_some() => {}
                Err(e) => return Err(e),
            }
        }
        anyhow::bail!("gave up merging the pushed notes into {notes_ref}: it kept changing")
    }

    /// Of `wanted`, the commits that `tips` reach: one walk, newest first,
    /// that ends once all are found and never goes below the oldest of them
    /// by commit time (else it would read the whole history of the tips for
    /// a note on a commit they do not reach, an unpushed session's). A
    /// commit reached only through one dated before it (a skewed clock) is
    /// missed: its note stays here, as an unpushed one does.
    fn reached_of(
        &self,
        tips: &[Oid],
        wanted: &HashSet<gix::ObjectId>,
    ) -> Result<HashSet<gix::ObjectId>> {
        let mut found = HashSet::new();
        if tips.is_empty() || wanted.is_empty() {
            return Ok(found);
        }
        let mut oldest: Option<i64> = None;
        for id in wanted {
            // A note on what is not a commit here is on nothing a tip reaches.
            let Ok(commit) = self.repo.find_commit(*id) else {
                continue;
            };
            let time = commit
                .time()
                .with_context(|| format!("could not read the date of commit {id}"))?
                .seconds;
            oldest = Some(oldest.map_or(time, |o| o.min(time)));
        }
        let Some(oldest) = oldest else {
            return Ok(found);
        };
        // Each tip once, and only commits (a remote-tracking ref may be a tag).
        let mut tips = gids(tips)?;
        tips.sort_unstable();
        tips.dedup();
        tips.retain(|t| self.repo.find_commit(*t).is_ok());
        let walk = self
            .repo
            .rev_walk(tips)
            .sorting(gix::revision::walk::Sorting::ByCommitTimeCutoff {
                order: gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
                seconds: oldest,
            })
            .all()
            .context("could not walk the history of the pushed branches")?;
        for info in walk {
            let info = info.context("could not walk the history of the pushed branches")?;
            if wanted.contains(&info.id) {
                found.insert(info.id);
                if found.len() == wanted.len() {
                    break;
                }
            }
        }
        Ok(found)
    }
}
