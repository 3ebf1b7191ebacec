//! Records: refs (read, list, compare-and-swap update/delete; reflogs as git writes them)
//! and objects (file blobs, one-file trees, commits with our signatures).

use anyhow::{bail, Context, Result};

use super::{gid, oid, CasConflict, Expect, Oid, Repo};
use crate::model::command::quoted;

impl Repo {
    /// The commit a ref (full name) points at, peeled; `None` when the ref does not exist.
    pub fn ref_target(&self, refname: &str) -> Result<Option<Oid>> {
        let Some(mut reference) = self
            .repo
            .try_find_reference(refname)
            .with_context(|| format!("could not read ref {refname}"))?
        else {
            return Ok(None);
        };
        let commit = reference
            .peel_to_commit()
            .with_context(|| format!("ref {refname} does not point at a commit"))?;
        Ok(Some(oid(commit.id)))
    }

    /// The full name of the ref a revision names, following symbolic refs
    /// (`HEAD` on main → `refs/heads/main`, `origin/main` →
    /// `refs/remotes/origin/main`); `None` for anything else (an object id, a
    /// detached HEAD, `main~2`).
    pub fn named_ref(&self, rev: &str) -> Option<String> {
        let mut reference = self.repo.try_find_reference(rev).ok()??;
        for _ in 0..5 {
            match reference.target() {
                gix::refs::TargetRef::Object(_) => {
                    return Some(reference.name().as_bstr().to_string())
                }
                gix::refs::TargetRef::Symbolic(name) => {
                    let name = name.as_bstr().to_string();
                    reference = self.repo.try_find_reference(name.as_str()).ok()??;
                }
            }
        }
        None
    }

    /// The full names of the refs under `prefix`, sorted, whatever they point at
    /// (for completion: nothing is read but the refs).
    pub fn ref_names_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let platform = self.repo.references().context("could not read refs")?;
        let iter = platform
            .prefixed(prefix)
            .with_context(|| format!("could not list refs under {prefix}"))?;
        let mut out = Vec::new();
        for reference in iter.flatten() {
            out.push(reference.name().as_bstr().to_string());
        }
        out.sort();
        Ok(out)
    }

    /// The last components of the refs under the directory `prefix` (ending in
    /// `/`), sorted and without duplicates, and without reading one of them: the
    /// loose ones are the directory's file names (a `.lock` is not a ref), the
    /// packed ones come from `packed-refs`. For completion, which must answer in a
    /// few milliseconds at thousands of sessions: a name listed here may point
    /// at anything, or at nothing readable.
    pub fn ref_names_under(&self, prefix: &str) -> Result<Vec<String>> {
        let mut out = std::collections::BTreeSet::new();
        let dir = self.common_dir.join(prefix);
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                for entry in entries {
                    let entry =
                        entry.with_context(|| format!("could not list {}", dir.display()))?;
                    let Ok(name) = entry.file_name().into_string() else {
                        continue;
                    };
                    let is_file = entry.file_type().is_ok_and(|t| t.is_file());
                    let full = format!("{prefix}{name}");
                    if is_file
                        && !name.ends_with(".lock")
                        && gix::refs::FullName::try_from(full.as_str()).is_ok()
                    {
                        out.insert(name);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
        }
        let packed = self
            .repo
            .refs
            .cached_packed_buffer()
            .map_err(|e| anyhow::anyhow!("{e}"))
            .context("could not read packed-refs")?;
        if let Some(packed) = packed {
            let iter = packed
                .iter_prefixed(prefix.into())
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("could not read packed-refs")?;
            for reference in iter.flatten() {
                let name = reference.name.as_bstr().to_string();
                if let Some(last) = name.strip_prefix(prefix) {
                    if !last.contains('/') {
                        out.insert(last.to_owned());
                    }
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// The first components of the names of the refs under the directory
    /// `prefix` (ending in `/`) that lie deeper (`<prefix><dir>/...`), sorted and
    /// without duplicates, without reading a ref: the loose ones' directory
    /// names, the packed ones from `packed-refs`. A directory listed may hold
    /// no ref at all (git leaves empty ones behind).
    pub fn ref_dirs_under(&self, prefix: &str) -> Result<Vec<String>> {
        let mut out = std::collections::BTreeSet::new();
        let dir = self.common_dir.join(prefix);
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                for entry in entries {
                    let entry =
                        entry.with_context(|| format!("could not list {}", dir.display()))?;
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        if let Ok(name) = entry.file_name().into_string() {
                            out.insert(name);
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
        }
        let packed = self
            .repo
            .refs
            .cached_packed_buffer()
            .map_err(|e| anyhow::anyhow!("{e}"))
            .context("could not read packed-refs")?;
        if let Some(packed) = packed {
            let iter = packed
                .iter_prefixed(prefix.into())
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("could not read packed-refs")?;
            for reference in iter.flatten() {
                let name = reference.name.as_bstr().to_string();
                if let Some((first, _)) = name.strip_prefix(prefix).and_then(|r| r.split_once('/'))
                {
                    out.insert(first.to_owned());
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Every ref whose full name starts with `prefix`, with the commit it points at.
    pub fn refs_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Oid)>> {
        let platform = self.repo.references().context("could not read refs")?;
        let iter = platform
            .prefixed(prefix)
            .with_context(|| format!("could not list refs under {prefix}"))?;
        let mut out = Vec::new();
        for reference in iter {
            let mut reference = reference
                .map_err(|err| anyhow::anyhow!("{err}"))
                .with_context(|| format!("could not read a ref under {prefix}"))?;
            let name = reference.name().as_bstr().to_string();
            let commit = reference
                .peel_to_commit()
                .with_context(|| format!("ref {name} does not point at a commit"))?;
            out.push((name, oid(commit.id)));
        }
        out.sort();
        Ok(out)
    }

    /// Every ref whose full name starts with `prefix`, with the object it names
    /// directly (no object is read: a ref naming a tag or a blob is listed as
    /// it is, and fails where its commit is read). Symbolic refs are left out.
    pub fn ref_targets_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Oid)>> {
        let platform = self.repo.references().context("could not read refs")?;
        let iter = platform
            .prefixed(prefix)
            .with_context(|| format!("could not list refs under {prefix}"))?;
        let mut out = Vec::new();
        for reference in iter {
            let reference = reference
                .map_err(|err| anyhow::anyhow!("{err}"))
                .with_context(|| format!("could not read a ref under {prefix}"))?;
            if let gix::refs::TargetRef::Object(id) = reference.target() {
                out.push((reference.name().as_bstr().to_string(), oid(id)));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The content of file `path` in the tree of `commit`, `None` when absent.
    ///
    /// Its objects are read loose first, then from the packs: a record is loose
    /// until git packs it, and every object looked up in the packs first costs
    /// a search of each pack index. On a large repository (1.3 million objects,
    /// a 38 MB `.idx`) those searches for hundreds of records bring most of the
    /// index into memory, where the loose read costs one `open`.
    pub fn read_file_at(&self, commit: Oid, path: &str) -> Result<Option<Vec<u8>>> {
        use gix::objs::tree::EntryKind;
        let mut buf = Vec::new();
        let id = gid(commit)?;
        let mut tree = {
            let data = self
                .object_loose_first(&id, gix::object::Kind::Commit, &mut buf)
                .with_context(|| format!("could not read commit {commit}"))?;
            gix::objs::CommitRefIter::from_bytes(data, self.repo.object_hash())
                .tree_id()
                .with_context(|| format!("could not read the tree of commit {commit}"))?
        };
        let mut parts = path.split('/').peekable();
        while let Some(name) = parts.next() {
            let data = self
                .object_loose_first(&tree, gix::object::Kind::Tree, &mut buf)
                .with_context(|| format!("could not read the tree of commit {commit}"))?;
            let mut found = None;
            for entry in gix::objs::TreeRefIter::from_bytes(data, self.repo.object_hash()) {
                let entry = entry
                    .with_context(|| format!("could not look up {path} in commit {commit}"))?;
                if entry.filename == name.as_bytes() {
                    found = Some((entry.oid.to_owned(), entry.mode.kind()));
                    break;
                }
            }
            let Some((entry, kind)) = found else {
                return Ok(None);
            };
            if parts.peek().is_some() {
                if kind != EntryKind::Tree {
                    return Ok(None);
                }
                tree = entry;
                continue;
            }
            if !matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable) {
                bail!("{path} in commit {commit} is not a file");
            }
            let data = self
                .object_loose_first(&entry, gix::object::Kind::Blob, &mut buf)
                .with_context(|| format!("could not read {path} in commit {commit}"))?;
            return Ok(Some(data.to_vec()));
        }
        Ok(None)
    }

    /// The data of object `id`, which must be a `kind`: its loose file when
    /// there is one, else wherever git keeps it (packs, alternates).
    fn object_loose_first<'b>(
        &self,
        id: &gix::oid,
        kind: gix::object::Kind,
        buf: &'b mut Vec<u8>,
    ) -> Result<&'b [u8]> {
        use gix::objs::Find;
        let found = match self.loose.try_find(id, buf) {
            Ok(Some(data)) => Some(data.kind),
            // Not loose (or unreadable so): the object database decides.
            Ok(None) | Err(_) => None,
        };
        let found = match found {
            Some(kind) => Some(kind),
            None => self
                .repo
                .objects
                .try_find(id, buf)
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .map(|data| data.kind),
        };
        match found {
            None => bail!("object {id} is missing"),
            Some(k) if k != kind => bail!("object {id} is a {k}, not a {kind}"),
            Some(_) => Ok(buf.as_slice()),
        }
    }

    /// Write a commit over the empty tree with `message` and `parents`, in
    /// order (a record commit: the record is in its message, see
    /// `model::record::message`), and return it. The empty tree is written
    /// too, once: git has it without the object, but `git fsck` would name it
    /// missing. Author and committer as [`Repo::write_file_commit`].
    pub fn write_message_commit(&self, message: &[u8], parents: &[Oid]) -> Result<Oid> {
        let message = std::str::from_utf8(message).context("a commit message that is not UTF-8")?;
        // gix writes no object that exists already (one look-up).
        let tree = self
            .repo
            .write_object(gix::objs::Tree::empty())
            .context("could not write the empty tree")?
            .detach();
        self.write_commit(
            tree,
            message,
            parents.iter().map(|p| gid(*p)).collect::<Result<_>>()?,
        )
    }

    /// The message of `commit` when its tree is the empty tree (a record
    /// commit of one object); `None` for any other tree. Read loose first, as
    /// [`Repo::read_file_at`] reads.
    pub fn empty_tree_message(&self, commit: Oid) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        let id = gid(commit)?;
        let data = self
            .object_loose_first(&id, gix::object::Kind::Commit, &mut buf)
            .with_context(|| format!("could not read commit {commit}"))?;
        let parsed = gix::objs::CommitRef::from_bytes(data, self.repo.object_hash())
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("could not read commit {commit}"))?;
        if !parsed.tree().is_empty_tree() {
            return Ok(None);
        }
        Ok(Some(parsed.message.to_vec()))
    }

    /// Write a commit whose tree holds exactly one file (`file_name` = `content`),
    /// with `parent` as its only parent (or none), and return it. Author and
    /// committer are the repository's identity, or `bullpen <bullpen@localhost>`.
    pub fn write_file_commit(
        &self,
        file_name: &str,
        content: &[u8],
        message: &str,
        parent: Option<Oid>,
    ) -> Result<Oid> {
        self.write_file_commit_parents(file_name, content, message, parent.as_slice())
    }

    /// [`Repo::write_file_commit`] with any number of parents, in order (a
    /// record that joins two machines' histories has two).
    pub fn write_file_commit_parents(
        &self,
        file_name: &str,
        content: &[u8],
        message: &str,
        parents: &[Oid],
    ) -> Result<Oid> {
        if file_name.is_empty() || file_name.contains('/') || file_name == "." || file_name == ".."
        {
            bail!("invalid record file name {}", quoted(file_name));
        }
        let blob = self
            .repo
            .write_blob(content)
            .with_context(|| format!("could not write the blob for {file_name}"))?
            .detach();
        let tree = gix::objs::Tree {
            entries: vec![gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: file_name.into(),
                oid: blob,
            }],
        };
        let tree_id = self
            .repo
            .write_object(&tree)
            .with_context(|| format!("could not write the tree for {file_name}"))?
            .detach();
        self.write_commit(
            tree_id,
            message,
            parents.iter().map(|p| gid(*p)).collect::<Result<_>>()?,
        )
    }

    /// Point `refname` at `new` if and only if it currently matches `expect`;
    /// a reflog entry with `message` is written where git would write one
    /// (`core.logAllRefUpdates`: a branch, a remote-tracking ref, a note, or
    /// a ref whose reflog exists), so none for a record: its commits are its
    /// log, and a reflog was one more file and three appends per spawn. A
    /// mismatch returns an error that downcasts to [`CasConflict`].
    pub fn update_ref(&self, refname: &str, new: Oid, expect: Expect, message: &str) -> Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let name = full_name(refname)?;
        let expected = match expect {
            Expect::Absent => PreviousValue::MustNotExist,
            Expect::At(old) => {
                PreviousValue::MustExistAndMatch(gix::refs::Target::Object(gid(old)?))
            }
        };
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: one_line(message).into(),
                },
                expected,
                new: gix::refs::Target::Object(gid(new)?),
            },
            name,
            deref: false,
        };
        self.apply_edit(refname, edit, matches!(expect, Expect::At(_)))
            .with_context(|| format!("could not update ref {refname} to {new}"))
    }

    /// Create the branch `refs/heads/<branch>` at `at`, as `git branch <branch>
    /// <at>` does: refused when it exists, with a reflog entry in git's words
    /// (gix, as git, writes a branch's reflog as `core.logAllRefUpdates` says). (gix takes a branch that exists at `at`
    /// already for a success: callers check it is absent under their lock.)
    pub fn create_branch(&self, branch: &str, at: Oid) -> Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let refname = format!("refs/heads/{branch}");
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: format!("branch: Created from {at}").into(),
                },
                expected: PreviousValue::MustNotExist,
                new: gix::refs::Target::Object(gid(at)?),
            },
            name: full_name(&refname)?,
            deref: false,
        };
        match self.apply_edit(&refname, edit, false) {
            Err(e) if e.downcast_ref::<CasConflict>().is_some() => {
                bail!("a branch named '{branch}' already exists")
            }
            other => other.with_context(|| format!("could not create branch {branch} at {at}")),
        }
    }

    /// Delete `refname` if and only if it points at `expected` (mismatch: [`CasConflict`]).
    pub fn delete_ref(&self, refname: &str, expected: Oid, message: &str) -> Result<()> {
        use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
        // gix has no reflog message for deletions (the reflog goes with the ref, as in git).
        let _ = message;
        let edit = RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(gid(
                    expected,
                )?)),
                log: RefLog::AndReference,
            },
            name: full_name(refname)?,
            deref: false,
        };
        self.apply_edit(refname, edit, true)
            .with_context(|| format!("could not delete ref {refname}"))
    }

    /// Author and committer for objects and reflogs: the repository's identity,
    /// or `bullpen <bullpen@localhost>`; the time is now unless
    /// `GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` say otherwise.
    ///
    /// The identity is read from the configuration as gix's `author()` and
    /// `committer()` resolve it (`GIT_AUTHOR_NAME` and the like are applied to
    /// the configuration when the repository is opened), but not through them:
    /// their first call also takes the local time through jiff, which with `TZ`
    /// set walks the whole time-zone database (a few milliseconds of every
    /// spawn). The time's offset comes from the C library instead.
    pub(super) fn signatures(&self) -> (gix::actor::Signature, gix::actor::Signature) {
        let config = self.repo.config_snapshot();
        let first = |keys: &[&str]| -> Option<gix::bstr::BString> {
            keys.iter().find_map(|k| config.string(*k))
        };
        let make = |name: Option<gix::bstr::BString>,
                    email: Option<gix::bstr::BString>,
                    date_var: &str| {
            let (name, email) = match (name, email) {
                (Some(name), Some(email)) => (name, email),
                _ => ("bullpen".into(), "bullpen@localhost".into()),
            };
            let time = std::env::var(date_var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .and_then(|v| {
                    gix::date::parse(&v, None)
                        .or_else(|_| gix::date::parse(&v, Some(gix::date::Zoned::now())))
                        .ok()
                })
                .unwrap_or_else(now);
            gix::actor::Signature { name, email, time }
        };
        let author = make(
            first(&["author.name", "user.name", "gitoxide.author.nameFallback"]),
            first(&[
                "author.email",
                "user.email",
                "gitoxide.user.emailFallback",
                "gitoxide.author.emailFallback",
            ]),
            "GIT_AUTHOR_DATE",
        );
        let committer = make(
            first(&[
                "committer.name",
                "user.name",
                "gitoxide.committer.nameFallback",
            ]),
            first(&[
                "committer.email",
                "user.email",
                "gitoxide.user.emailFallback",
                "gitoxide.committer.emailFallback",
            ]),
            "GIT_COMMITTER_DATE",
        );
        (author, committer)
    }

    pub(super) fn write_commit(
        &self,
        tree: gix::ObjectId,
        message: &str,
        parents: Vec<gix::ObjectId>,
    ) -> Result<Oid> {
        let (author, committer) = self.signatures();
        let commit = gix::objs::Commit {
            tree,
            parents: parents.into(),
            author,
            committer,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(&commit)
            .context("could not write a commit")?;
        Ok(oid(id.detach()))
    }

    /// Apply one ref edit with an explicit reflog committer, mapping lost
    /// preconditions to [`CasConflict`].
    fn apply_edit(
        &self,
        refname: &str,
        edit: gix::refs::transaction::RefEdit,
        must_exist: bool,
    ) -> Result<()> {
        let (_, committer) = self.signatures();
        let mut time_buf = gix::date::parse::TimeBuf::default();
        match self
            .repo
            .edit_references_as([edit], Some(committer.to_ref(&mut time_buf)))
        {
            Ok(_) => Ok(()),
            Err(err) => {
                // A lock file that exists (gix waited core.filesRefLockTimeout /
                // core.packedRefsTimeout for it, as git does) is not a lost race:
                // another git process holds it, or one crashed and left it. Say
                // which file, with git's advice; re-reading and retrying cannot help.
                // (gix's own words repeat the path three times: ours replace them.)
                if lock_exists(&err) {
                    return Err(anyhow::Error::new(self.held_lock(refname)));
                }
                // A lost precondition is a conflict: "re-read and retry".
                let conflict = err.is_conflict()
                    || (must_exist
                        && err.is_not_found()
                        && matches!(self.ref_target(refname), Ok(None)));
                if conflict {
                    Err(anyhow::Error::new(CasConflict {
                        refname: refname.to_string(),
                    }))
                } else {
                    Err(anyhow::Error::new(err))
                }
            }
        }
    }

    /// The error for a ref update that found a lock file in its way: the
    /// packed-refs lock (gix takes it first, when it exists) or the ref's own.
    pub(super) fn held_lock(&self, refname: &str) -> crate::model::Error {
        let packed = self.common_dir.join("packed-refs.lock");
        let own = self.common_dir.join(format!("{refname}.lock"));
        let path = if packed.symlink_metadata().is_ok() {
            packed
        } else {
            own
        };
        crate::model::Error::failed(format!("cannot lock {}: it exists", path.display()))
            .hints(GIT_LOCK_ADVICE.iter().map(|l| (*l).to_owned()))
    }
}

/// Now, with the local offset from UTC as the C library has it (`TZ`, else
/// /etc/localtime); UTC when it cannot tell.
fn now() -> gix::date::Time {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let offset = crate::sys::localtime::offset_at(seconds);
    gix::date::Time { seconds, offset }
}

/// git's advice for a lock file that exists (lockfile.c, `unable_to_lock_message`).
const GIT_LOCK_ADVICE: [&str; 5] = [
    "Another git process seems to be running in this repository, e.g.",
    "an editor opened by 'git commit'. Please make sure all processes",
    "are terminated then try again. If it still fails, a git process",
    "may have crashed in this repository earlier:",
    "remove the file manually to continue.",
];

/// Whether gix failed because a lock file exists: its lock acquisition marks
/// exactly that case retryable, with the `AlreadyExists` of the exclusive create
/// as the cause (gix-lock `lock_with_mode`).
pub(super) fn lock_exists(err: &gix::Error) -> bool {
    err.classify().any(|c| {
        c.class() == gix::error::Class::Retryable
            && c.io_kind() == Some(std::io::ErrorKind::AlreadyExists)
    })
}

fn full_name(refname: &str) -> Result<gix::refs::FullName> {
    gix::refs::FullName::try_from(refname)
        .with_context(|| format!("invalid ref name {}", quoted(refname)))
}

/// Reflog messages must be a single line.
pub(super) fn one_line(message: &str) -> String {
    message.lines().next().unwrap_or("").to_string()
}
