//! Notes (`refs/notes/bullpen`): appending and reading, interoperable with `git notes`.

use anyhow::{Context, Result};
use gix::bstr::ByteSlice;

use super::records::one_line;
use super::{gid, CasConflict, Expect, Oid, Repo};

/// How often a notes commit is retried from a fresh read after losing a race.
const NOTES_ATTEMPTS: usize = 5;

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
        let mut last_err = None;
        for _ in 0..NOTES_ATTEMPTS {
            match self.add_notes_once(notes_ref, notes, message, unless_there) {
                Ok(()) => return Ok(()),
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
                "gave up writing notes to {notes_ref} after {NOTES_ATTEMPTS} attempts"
            )))
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

    fn notes_state(
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
        let new = self.write_commit(tree, message, previous.map(gid).transpose()?)?;
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
