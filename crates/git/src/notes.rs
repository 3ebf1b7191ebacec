//! Notes (`refs/notes/bullpen`): appending, reading, and merging another
//! machine's notes as a union; interoperable with `git notes`.

use anyhow::{Context, Result};
use gix::bstr::ByteSlice;

use crate::model::notes::{union, Union};
use crate::model::remote::MAX_NOTE_BYTES;

use super::records::one_line;
use super::{gid, oid, CasConflict, Expect, Oid, Repo};

/// How often a notes commit is retried from a fresh read after losing a race.
const NOTES_ATTEMPTS: usize = 5;

/// How merging another machine's notes ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotesMerge {
    /// The local notes already held theirs.
    UpToDate,
    /// The local notes were behind: they now point at theirs.
    FastForward,
    /// Both had notes the other lacked, or theirs held one too big to take: a
    /// merge commit (parents: ours, if any, and theirs) holds the union.
    /// `added`: commits only they had annotated; `united`: commits both had
    /// annotated differently, whose texts were joined; `skipped`: their notes
    /// left out, as too big to merge.
    Merged {
        added: usize,
        united: usize,
        skipped: Vec<SkippedNote>,
    },
}

/// A note of theirs not taken: it is bigger than [`MAX_NOTE_BYTES`] (no note
/// bullpen writes comes near). It stays in the history of the merge (its last
/// parent); ours on that commit, if any, stays as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedNote {
    /// The annotated commit.
    pub commit: Oid,
    /// The size of their text.
    pub bytes: u64,
}

impl Repo {
    /// Attach `text` as a note in `notes_ref` (e.g. `refs/notes/bullpen`) to each
    /// commit, in one notes commit (CAS on the notes ref, retried on a lost race).
    /// An existing note on a commit is kept and the new text appended after a blank
    /// line, like `git notes append`. Interoperates with `git notes`.
    pub fn add_notes(&self, notes_ref: &str, notes: &[(Oid, String)], message: &str) -> Result<()> {
        self.add_notes_with(notes_ref, notes, message, false)
    }

    /// [`Repo::add_notes`], leaving out each text a commit's note already holds
    /// (as one of its paragraphs); no notes commit at all when nothing is new.
    pub fn add_notes_unless_there(
        &self,
        notes_ref: &str,
        notes: &[(Oid, String)],
        message: &str,
    ) -> Result<()> {
        self.add_notes_with(notes_ref, notes, message, true)
    }

    /// Of `commits`, those without a note in `notes_ref`, in the same order.
    pub fn without_note(&self, notes_ref: &str, commits: &[Oid]) -> Result<Vec<Oid>> {
        let Some(notes_commit) = self.ref_target(notes_ref)? else {
            return Ok(commits.to_vec());
        };
        let mut state = self.notes_state(notes_ref, Some(notes_commit))?;
        let mut out = Vec::new();
        for c in commits {
            let found = state
                .get(&gid(c)?, &self.repo)
                .with_context(|| format!("could not look up the note on {c} in {notes_ref}"))?;
            if found.is_none() {
                out.push(*c);
            }
        }
        Ok(out)
    }

    fn add_notes_with(
        &self,
        notes_ref: &str,
        notes: &[(Oid, String)],
        message: &str,
        unless_there: bool,
    ) -> Result<()> {
        if notes.is_empty() {
            return Ok(());
        }
        retry_cas(notes_ref, "writing notes to", || {
            self.add_notes_once(notes_ref, notes, message, unless_there)
        })
    }

    /// Merge the notes commit `theirs` (another machine's `refs/notes/bullpen`,
    /// fetched) into `notes_ref`: nothing when ours already holds it, a
    /// fast-forward when ours is behind, else a merge commit whose tree is the
    /// union (`model::notes::union` for a commit annotated on both sides, so
    /// every text either side wrote stays), written with a compare-and-swap on
    /// `notes_ref` and retried from a fresh read on a lost race. Nothing of ours
    /// is ever dropped: a note of ours is only ever replaced by a text holding it.
    pub fn merge_notes(&self, notes_ref: &str, theirs: Oid, message: &str) -> Result<NotesMerge> {
        self.repo
            .find_commit(gid(theirs)?)
            .with_context(|| format!("{theirs} is not a notes commit"))?;
        retry_cas(notes_ref, "merging notes into", || {
            self.merge_notes_once(notes_ref, theirs, message)
        })
    }

    fn merge_notes_once(&self, notes_ref: &str, theirs: Oid, message: &str) -> Result<NotesMerge> {
        let reflog = format!("notes: {}", one_line(message));
        let ours = self.ref_target(notes_ref)?;
        if let Some(ours) = ours {
            if self.is_ancestor(theirs, ours)? {
                return Ok(NotesMerge::UpToDate);
            }
        }
        // Theirs descends from ours (or there are none here), but a descendant
        // can drop or rewrite a note (`git notes remove`, a forged commit), or
        // bring one too big to take: a fast-forward only when it holds every
        // text of ours and nothing too big, else the union below.
        let descends = match ours {
            Some(ours) => self.is_ancestor(ours, theirs)?,
            None => true,
        };
        if descends && self.may_fast_forward(ours, theirs)? {
            let expect = ours.map_or(Expect::Absent, Expect::At);
            self.update_ref(notes_ref, theirs, expect, &reflog)?;
            return Ok(NotesMerge::FastForward);
        }
        let mut state = self.notes_state(notes_ref, ours)?;
        let their_notes = self.notes_of_commit(theirs)?;
        let (mut added, mut united, mut skipped) = (0, 0, Vec::new());
        for (object, their_blob) in their_notes {
            let annotated = oid(object);
            let ours_blob = state
                .get(&object, &self.repo)
                .with_context(|| format!("could not look up the note on {annotated}"))?;
            if ours_blob == Some(their_blob) {
                continue;
            }
            let their_size = self.note_size(their_blob, annotated)?;
            if their_size > MAX_NOTE_BYTES {
                skipped.push(SkippedNote {
                    commit: annotated,
                    bytes: their_size,
                });
                continue;
            }
            let new_blob = match ours_blob {
                None => {
                    added += 1;
                    their_blob
                }
                Some(our_blob) => {
                    let mine = self.note_bytes(our_blob, annotated)?;
                    let other = self.note_bytes(their_blob, annotated)?;
                    united += 1;
                    match union(&mine, &other) {
                        Union::Ours => continue,
                        Union::Theirs => their_blob,
                        Union::Both(text) => self
                            .repo
                            .write_blob(&text)
                            .with_context(|| format!("could not write the note for {annotated}"))?
                            .detach(),
                    }
                }
            };
            state
                .edit(object, Some(new_blob), &self.repo)
                .with_context(|| format!("could not merge the note on {annotated}"))?;
        }
        let tree = state
            .write(&self.repo)
            .with_context(|| format!("could not write the notes tree of {notes_ref}"))?;
        // Theirs is always a parent: what was skipped is decided once, and the
        // next fetch of the same notes finds them merged.
        let parents = ours
            .into_iter()
            .chain([theirs])
            .map(gid)
            .collect::<Result<_>>()?;
        let merged = self.write_commit(tree, message, parents)?;
        let expect = ours.map_or(Expect::Absent, Expect::At);
        self.update_ref(notes_ref, merged, expect, &reflog)?;
        Ok(NotesMerge::Merged {
            added,
            united,
            skipped,
        })
    }

    /// Every note of the notes commit `commit`: (annotated object, note blob).
    pub(super) fn notes_of_commit(
        &self,
        commit: Oid,
    ) -> Result<Vec<(gix::ObjectId, gix::ObjectId)>> {
        let tree = self
            .repo
            .find_commit(gid(commit)?)
            .with_context(|| format!("could not read notes commit {commit}"))?
            .tree_id()
            .with_context(|| format!("could not read the tree of notes commit {commit}"))?
            .detach();
        let mut out = Vec::new();
        self.notes_in_tree(tree, String::new(), &mut out)?;
        Ok(out)
    }

    /// Whether `notes_ref` may simply move from `ours` to `theirs`: theirs holds
    /// every note of ours, each with every paragraph of our text
    /// (`model::notes::union`), and every note of theirs that ours lacks is
    /// small enough to take ([`MAX_NOTE_BYTES`]).
    fn may_fast_forward(&self, ours: Option<Oid>, theirs: Oid) -> Result<bool> {
        let notes = |commit: Option<Oid>| -> Result<std::collections::HashMap<_, _>> {
            Ok(match commit {
                Some(c) => self.notes_of_commit(c)?.into_iter().collect(),
                None => std::collections::HashMap::new(),
            })
        };
        let (mine, other) = (notes(ours)?, notes(Some(theirs))?);
        for (object, their_blob) in &other {
            if mine.get(object) != Some(their_blob)
                && self.note_size(*their_blob, oid(*object))? > MAX_NOTE_BYTES
            {
                return Ok(false);
            }
        }
        for (object, our_blob) in &mine {
            match other.get(object) {
                None => return Ok(false),
                Some(their_blob) if their_blob == our_blob => {}
                Some(their_blob) => {
                    let annotated = oid(*object);
                    let mine = self.note_bytes(*our_blob, annotated)?;
                    let other = self.note_bytes(*their_blob, annotated)?;
                    if union(&other, &mine) != Union::Ours {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// The size of a note's text, from its header (nothing is inflated).
    fn note_size(&self, blob: gix::ObjectId, annotated: Oid) -> Result<u64> {
        Ok(self
            .repo
            .find_header(blob)
            .with_context(|| format!("could not read the note on {annotated}"))?
            .size())
    }

    /// The text of a note (a remote's: its size checked first, [`Repo::note_size`]).
    pub(super) fn note_bytes(&self, blob: gix::ObjectId, annotated: Oid) -> Result<Vec<u8>> {
        Ok(self
            .repo
            .find_blob(blob)
            .with_context(|| format!("could not read the note on {annotated}"))?
            .data
            .clone())
    }

    /// Every (annotated object, note blob) of a notes tree, whatever its fanout
    /// (`1a/2b3c...`); entries that are not notes are left out, as git does.
    fn notes_in_tree(
        &self,
        tree: gix::ObjectId,
        prefix: String,
        out: &mut Vec<(gix::ObjectId, gix::ObjectId)>,
    ) -> Result<()> {
        let hex_len = self.repo.object_hash().len_in_hex();
        let tree = self
            .repo
            .find_tree(tree)
            .with_context(|| format!("could not read notes tree {tree}"))?;
        for entry in tree.iter() {
            let entry = entry.context("could not read a notes tree")?;
            let name = entry.filename();
            if !name.iter().all(u8::is_ascii_hexdigit) {
                continue;
            }
            let path = format!("{prefix}{name}");
            if entry.mode().is_tree() && name.len() == 2 && path.len() < hex_len {
                self.notes_in_tree(entry.oid().to_owned(), path, out)?;
            } else if entry.mode().is_blob() && path.len() == hex_len {
                if let Ok(object) = gix::ObjectId::from_hex(path.as_bytes()) {
                    out.push((object, entry.oid().to_owned()));
                }
            }
        }
        Ok(())
    }

    /// The note on `commit` in `notes_ref`, if any. Only the tests read notes
    /// in-process (bullpen itself only writes them; `git log --notes` reads).
    #[cfg(test)]
    pub fn read_note(&self, notes_ref: &str, commit: Oid) -> Result<Option<String>> {
        let Some(notes_commit) = self.ref_target(notes_ref)? else {
            return Ok(None);
        };
        let mut state = self.notes_state(notes_ref, Some(notes_commit))?;
        let Some(blob_id) = state
            .get(&gid(commit)?, &self.repo)
            .with_context(|| format!("could not look up the note on {commit} in {notes_ref}"))?
        else {
            return Ok(None);
        };
        let blob = self
            .repo
            .find_blob(blob_id)
            .with_context(|| format!("could not read the note on {commit} in {notes_ref}"))?;
        Ok(Some(String::from_utf8_lossy(&blob.data).into_owned()))
    }

    pub(super) fn notes_state(
        &self,
        notes_ref: &str,
        notes_commit: Option<Oid>,
    ) -> Result<gix::note::plumbing::State> {
        let tree = match notes_commit {
            Some(c) => self
                .repo
                .find_commit(gid(c)?)
                .with_context(|| format!("could not read notes commit {c} of {notes_ref}"))?
                .tree_id()
                .with_context(|| {
                    format!("could not read the tree of notes commit {c} of {notes_ref}")
                })?
                .detach(),
            None => gix::ObjectId::empty_tree(self.repo.object_hash()),
        };
        gix::note::plumbing::State::new(tree, &self.repo)
            .with_context(|| format!("could not read the notes tree of {notes_ref}"))
    }

    fn add_notes_once(
        &self,
        notes_ref: &str,
        notes: &[(Oid, String)],
        message: &str,
        unless_there: bool,
    ) -> Result<()> {
        let previous = self.ref_target(notes_ref)?;
        let mut state = self.notes_state(notes_ref, previous)?;
        let mut changed = false;
        for (commit, text) in notes {
            let existing = state.get(&gid(commit)?, &self.repo).with_context(|| {
                format!("could not look up the note on {commit} in {notes_ref}")
            })?;
            let mut content = match existing {
                Some(blob_id) => {
                    let blob = self.repo.find_blob(blob_id).with_context(|| {
                        format!("could not read the note on {commit} in {notes_ref}")
                    })?;
                    let mut old = blob.data.clone();
                    while old.last() == Some(&b'\n') {
                        old.pop();
                    }
                    let wanted = text.trim_end_matches(['\n', '\r']).as_bytes();
                    if unless_there
                        && old
                            .split_str(b"\n\n")
                            .any(|paragraph| paragraph.trim_end() == wanted)
                    {
                        continue;
                    }
                    if !old.is_empty() {
                        old.extend_from_slice(b"\n\n");
                    }
                    old
                }
                None => Vec::new(),
            };
            content.extend_from_slice(text.trim_end_matches(['\n', '\r']).as_bytes());
            content.push(b'\n');
            let blob = self
                .repo
                .write_blob(&content)
                .with_context(|| format!("could not write the note for {commit}"))?
                .detach();
            state
                .edit(gid(commit)?, Some(blob), &self.repo)
                .with_context(|| format!("could not add the note for {commit} to {notes_ref}"))?;
            changed = true;
        }
        if !changed {
            return Ok(());
        }
        let tree = state
            .write(&self.repo)
            .with_context(|| format!("could not write the notes tree of {notes_ref}"))?;
        let new = self.write_commit(
            tree,
            message,
            previous.map(gid).transpose()?.into_iter().collect(),
        )?;
        let expect = match previous {
            Some(p) => Expect::At(p),
            None => Expect::Absent,
        };
        self.update_ref(
            notes_ref,
            new,
            expect,
            &format!("notes: {}", one_line(message)),
        )
    }
}

/// `attempt` until it does not lose a compare-and-swap on `notes_ref`, at most
/// [`NOTES_ATTEMPTS`] times; `doing` words the give-up ("writing notes to").
fn retry_cas<T>(notes_ref: &str, doing: &str, mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    let mut last_err = None;
    for _ in 0..NOTES_ATTEMPTS {
        match attempt() {
            Ok(done) => return Ok(done),
            Err(err) if err.downcast_ref::<CasConflict>().is_some() => last_err = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last_err
        .unwrap_or_else(|| {
            anyhow::Error::new(CasConflict {
                refname: notes_ref.to_string(),
            })
        })
        .context(format!(
            "gave up {doing} {notes_ref} after {NOTES_ATTEMPTS} attempts"
        )))
}
