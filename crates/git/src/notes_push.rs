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
    /// ours contains what the remote has. Nothing when ours already does.
    pub fn adopt_pushed_notes(&self, notes_ref: &str, pushed: Oid, message: &str) -> Result<()> {
        for _ in 0..5 {
            let Some(ours) = self.ref_target(notes_ref)? else {
                return Ok(());
            };
            if self.is_ancestor(pushed, ours)? {
                return Ok(());
            }
            let tree = self
                .repo
                .find_commit(gid(ours)?)
                .with_context(|| format!("could not read notes commit {ours}"))?
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

    /// Of `wanted`, the commits that `tips` reach: one walk, ended as soon as
    /// all are found (else it reads the whole history of the tips).
    fn reached_of(
        &self,
        tips: &[Oid],
        wanted: &HashSet<gix::ObjectId>,
    ) -> Result<HashSet<gix::ObjectId>> {
        let mut found = HashSet::new();
        if tips.is_empty() || wanted.is_empty() {
            return Ok(found);
        }
        let walk = self
            .repo
            .rev_walk(gids(tips)?)
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
