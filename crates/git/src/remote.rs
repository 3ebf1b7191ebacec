//! Remotes: their names and fetch refspecs (config, in-process), `git fetch` and
//! `git push` (the CLI: transports, credentials, hooks as git does them), what a
//! fetched record commit holds, ancestry, and ref edits in one transaction.

use anyhow::{anyhow, Context, Result};

use super::records::one_line;
use super::{gid, oid, CasConflict, Expect, Oid, Repo};
use crate::model::command::quoted;
use crate::model::error::GitFailed;
use crate::model::remote::{EntryKind, TreeEntry, MAX_RECORD_COMMIT_BYTES};

/// One ref of a `git push --porcelain`, as git reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushedRef {
    /// The remote ref (`refs/heads/bullpen/x`).
    pub remote_ref: String,
    /// Whether git updated it (or found it up to date).
    pub ok: bool,
    /// git's summary (`[rejected]`, `[new reference]`, `1a2b..3c4d`) and reason.
    pub summary: String,
}

/// What a `git push` did: each ref's outcome, and what the remote said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushReport {
    pub refs: Vec<PushedRef>,
    /// The remote's own words (its hooks'): git's `remote: ` lines, without the prefix.
    pub remote_said: Vec<String>,
    /// Whether the push was atomic (the remote took every ref or none).
    pub atomic: bool,
}

enum Pushing {
    Done(PushReport),
    /// The remote does not support `--atomic`; nothing was sent.
    NoAtomic,
}

/// A ref that `git fetch` changed, as its `--porcelain` output says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedRef {
    /// git's flag: ` ` fast-forward, `+` forced, `-` pruned, `*` new, `!` rejected.
    pub flag: char,
    /// The local ref (`refs/bullpen/incoming/origin/sessions/x`).
    pub name: String,
}

/// One change of a ref transaction: `new: None` deletes.
#[derive(Clone, Debug)]
pub struct RefChange {
    pub name: String,
    pub new: Option<Oid>,
    pub expect: Expect,
}

/// What a record ref points at, when it is no commit to read.
#[derive(Debug)]
pub enum RecordObject {
    /// A commit: its tree's entries, and each entry's object id.
    Commit(Vec<TreeEntry>, Vec<Oid>),
    /// A commit over the empty tree: its message (where a record of one
    /// object holds it).
    Message(Vec<u8>),
    /// A commit of this many bytes, more than `MAX_RECORD_COMMIT_BYTES`: not read.
    TooBig(u64),
    /// A tag, a tree, a blob (its kind), or a symbolic ref.
    Other(String),
}

impl Repo {
    /// The names of the configured remotes (`remote.<name>.*`), sorted.
    pub fn remote_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .repo
            .remote_names()
            .into_iter()
            .map(|n| n.to_string())
            .collect();
        names.sort();
        names
    }

    /// The remote git uses when none is named: for a push `remote.pushDefault`,
    /// else (as for a fetch) the only remote, or `origin` if there is one.
    pub fn default_remote(&self, push: bool) -> Option<String> {
        let direction = match push {
            true => gix::remote::Direction::Push,
            false => gix::remote::Direction::Fetch,
        };
        self.repo
            .remote_default_name(direction)
            .map(|n| n.to_string())
    }

    /// Whether `name` is a configured remote with somewhere to go (`url` or `pushurl`).
    pub fn has_remote(&self, name: &str) -> bool {
        let config = self.repo.config_snapshot();
        ["url", "pushurl"]
            .iter()
            .any(|key| config.string(&format!("remote.{name}.{key}")).is_some())
    }

    /// The remote's fetch refspecs (`remote.<name>.fetch`), as configured.
    pub fn fetch_refspecs(&self, name: &str) -> Vec<String> {
        self.repo
            .config_snapshot()
            .plumbing()
            .strings(format!("remote.{name}.fetch").as_str())
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// `git fetch --prune --no-tags <remote> <refspecs>`, git's own report on
    /// stdout (`--porcelain`; bullpen says what arrived), without touching
    /// `FETCH_HEAD` (the user's own) or submodules. `--refmap=` (empty): git
    /// writes only the destinations of `refspecs`; without it, it also maps
    /// every ref it fetches through the remote's configured
    /// `remote.<name>.fetch`, which for a mirror (`+refs/*:refs/*`) or
    /// `+refs/notes/*:refs/notes/*` would force the remote's records and notes
    /// over this clone's own. The refs git changed, or `None` from a git too
    /// old to say (before 2.41: then fetched again quietly, as before).
    pub fn fetch_refspecs_from(
        &self,
        remote: &str,
        refspecs: &[String],
    ) -> Result<Option<Vec<FetchedRef>>> {
        let run = |report: &str| {
            let mut args: Vec<&std::ffi::OsStr> = [
                "fetch",
                report,
                "--prune",
                "--no-tags",
                "--refmap=",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
                remote,
            ]
            .into_iter()
            .map(std::ffi::OsStr::new)
            .collect();
            args.extend(refspecs.iter().map(std::ffi::OsStr::new));
            self.run_git_env(None, &args, &[])
        };
        match run("--porcelain") {
            Ok(stdout) => Ok(Some(parse_fetch_porcelain(&String::from_utf8_lossy(
                &stdout,
            )))),
            Err(e)
                if e.downcast_ref::<GitFailed>().is_some_and(|f| {
                    f.code == Some(129) && f.stderr.contains("unknown option `porcelain'")
                }) =>
            {
                run("--quiet").map(|_| None)
            }
            Err(e) => Err(e),
        }
    }

    /// `git pack-refs --include <pattern>...`: the loose refs that match one
    /// of `patterns` (globs, `*` matching `/` too) moved into `packed-refs`
    /// by git itself, under its locks; no other ref is packed (with
    /// `--include` git packs no tags by default) and none changes its value.
    pub fn pack_refs(&self, patterns: &[String]) -> Result<()> {
        let mut args: Vec<&std::ffi::OsStr> = vec![std::ffi::OsStr::new("pack-refs")];
        for p in patterns {
            args.push(std::ffi::OsStr::new("--include"));
            args.push(std::ffi::OsStr::new(p));
        }
        self.run_git_env(None, &args, &[])
            .map(drop)
            .context("could not pack refs")
    }

    /// `git push --porcelain --atomic <remote> <refspecs>`, never forced (no
    /// `+`, no `--force`): git refuses whatever is not a fast-forward of what the
    /// remote has when it receives the push, so nothing on the remote is lost,
    /// races included. Atomic: the remote takes every ref or none. A remote
    /// that does not support atomic pushes (git refuses before sending
    /// anything) is pushed to again without it, and then each ref stands alone.
    /// Tags and submodules stay out of it. Each ref's outcome and the remote's
    /// own `remote:` lines; an error only when git could not push at all.
    pub fn push_refspecs(&self, remote: &str, refspecs: &[String]) -> Result<PushReport> {
        match self.push_once(remote, refspecs, true)? {
            Pushing::Done(report) => Ok(report),
            Pushing::NoAtomic => match self.push_once(remote, refspecs, false)? {
                Pushing::Done(report) => Ok(report),
                Pushing::NoAtomic => Err(anyhow!("git push without --atomic asked for it")),
            },
        }
    }

    fn push_once(&self, remote: &str, refspecs: &[String], atomic: bool) -> Result<Pushing> {
        let mut args: Vec<&std::ffi::OsStr> = [
            "push",
            "--porcelain",
            "--no-follow-tags",
            "--recurse-submodules=no",
        ]
        .into_iter()
        .map(std::ffi::OsStr::new)
        .collect();
        if atomic {
            args.push(std::ffi::OsStr::new("--atomic"));
        }
        args.push(std::ffi::OsStr::new(remote));
        args.extend(refspecs.iter().map(std::ffi::OsStr::new));
        let output = self.run_git_output(None, &args, &[], None)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let refs = parse_porcelain(&stdout);
        if !output.status.success() && refs.is_empty() {
            if atomic && stderr.contains("does not support --atomic push") {
                return Ok(Pushing::NoAtomic);
            }
            return Err(GitFailed {
                argv: format!(
                    "git {}",
                    args.iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                code: output.status.code(),
                stderr: stderr.trim_end().to_owned(),
            }
            .into());
        }
        Ok(Pushing::Done(PushReport {
            refs,
            remote_said: remote_lines(&stderr),
            atomic,
        }))
    }

    /// The newest commit both `a` and `b` descend from, if any (both must be present).
    pub fn merge_base(&self, a: Oid, b: Oid) -> Result<Option<Oid>> {
        let base = self
            .repo
            .merge_base(gid(a)?, gid(b)?)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("could not find how {a} and {b} relate"))?;
        Ok(base.map(|b| oid(b.detach())))
    }

    /// Whether `commit` is `tip` or on the chain of first parents below it
    /// (a record's own events, not those a join brought in).
    pub fn on_first_parent_chain(&self, commit: Oid, tip: Oid) -> Result<bool> {
        let mut at = Some(tip);
        while let Some(c) = at {
            if c == commit {
                return Ok(true);
            }
            let found = self
                .repo
                .find_commit(gid(c)?)
                .with_context(|| format!("could not read commit {c}"))?;
            at = found.parent_ids().next().map(|p| oid(p.detach()));
        }
        Ok(false)
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors. Both must be
    /// present (after a fetch they are).
    pub fn is_ancestor(&self, ancestor: Oid, descendant: Oid) -> Result<bool> {
        if ancestor == descendant {
            return Ok(true);
        }
        let base = self
            .repo
            .merge_base(gid(ancestor)?, gid(descendant)?)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("could not find how {ancestor} and {descendant} relate"))?;
        Ok(base.is_some_and(|b| oid(b.detach()) == ancestor))
    }

    /// The refs whose full name starts with `prefix`, with what each points at
    /// directly (not peeled: a fetched ref may point at anything; `None` for a
    /// symbolic ref).
    pub fn ref_ids_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Option<Oid>)>> {
        let platform = self.repo.references().context("could not read refs")?;
        let iter = platform
            .prefixed(prefix)
            .with_context(|| format!("could not list refs under {prefix}"))?;
        let mut out = Vec::new();
        for reference in iter {
            let reference = reference
                .map_err(|err| anyhow!("{err}"))
                .with_context(|| format!("could not read a ref under {prefix}"))?;
            let name = reference.name().as_bstr().to_string();
            let target = reference.target().try_id().map(oid);
            out.push((name, target));
        }
        out.sort();
        Ok(out)
    }

    /// [`Repo::ref_ids_with_prefix`] for the refs under the directory `prefix`
    /// (ending in `/`), read as git reads them but with fewer calls: each loose
    /// ref file opened relative to its directory and read once
    /// (`sys::small_files`; gix looks up its whole path, stats it, reads twice
    /// and re-checks `packed-refs` per ref: at 2,000 fetched refs that was most
    /// of a `fetch` with nothing new), then the packed ones no loose one shadows.
    /// A lock file is no ref; a loose ref that does not parse is an error, as in git.
    pub fn ref_ids_under(&self, prefix: &str) -> Result<Vec<(String, Option<Oid>)>> {
        let mut out: Vec<(String, Option<Oid>)> = Vec::new();
        let mut dirs = vec![prefix.to_owned()];
        while let Some(dir) = dirs.pop() {
            let path = self.common_dir.join(&dir);
            let Some(listed) = crate::sys::small_files::read(&path, 4096)
                .with_context(|| format!("could not list {}", path.display()))?
            else {
                continue;
            };
            dirs.extend(listed.dirs.iter().map(|d| format!("{dir}{d}/")));
            for (name, bytes) in listed.files {
                let full = format!("{dir}{name}");
                if name.ends_with(".lock") || gix::refs::FullName::try_from(full.as_str()).is_err()
                {
                    continue;
                }
                let text = std::str::from_utf8(&bytes).unwrap_or_default().trim_end();
                let target = match text.strip_prefix("ref:") {
                    Some(_) => None,
                    None => Some(
                        text.parse::<Oid>()
                            .map_err(|e| anyhow!("{e}"))
                            .with_context(|| format!("could not read ref {full}"))?,
                    ),
                };
                out.push((full, target));
            }
        }
        let packed = self
            .repo
            .refs
            .cached_packed_buffer()
            .map_err(|e| anyhow!("{e}"))
            .context("could not read packed-refs")?;
        if let Some(packed) = packed {
            let loose: std::collections::HashSet<String> =
                out.iter().map(|(name, _)| name.clone()).collect();
            let iter = packed
                .iter_prefixed(prefix.into())
                .map_err(|e| anyhow!("{e}"))
                .context("could not read packed-refs")?;
            for reference in iter {
                let reference = reference
                    .map_err(|e| anyhow!("{e}"))
                    .context("could not read packed-refs")?;
                // As `Display` would write it, without its formatting machinery.
                let name = String::from_utf8_lossy(reference.name.as_bstr()).into_owned();
                if !loose.contains(&name) {
                    out.push((name, Some(oid(reference.target()))));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// What `refname` points at directly (not peeled): `None` when there is no
    /// such ref, `Some(None)` for a symbolic ref.
    pub fn direct_target(&self, refname: &str) -> Result<Option<Option<Oid>>> {
        let reference = self
            .repo
            .try_find_reference(refname)
            .with_context(|| format!("could not read ref {refname}"))?;
        Ok(reference.map(|r| r.target().try_id().map(oid)))
    }

    /// What `id` is, for a record ref: a commit's tree entries (with the size of
    /// each blob, read from its header: no blob is read), a commit's message
    /// when its tree is empty, or what else it is. A commit bigger than a
    /// record's is not read (its size comes from its header).
    pub fn record_object(&self, id: Oid) -> Result<RecordObject> {
        let header = self
            .repo
            .find_header(gid(id)?)
            .with_context(|| format!("could not read object {id}"))?;
        let kind = header.kind();
        if kind != gix::object::Kind::Commit {
            return Ok(RecordObject::Other(format!("a {kind}")));
        }
        if header.size() > MAX_RECORD_COMMIT_BYTES {
            return Ok(RecordObject::TooBig(header.size()));
        }
        let object = self
            .repo
            .find_object(gid(id)?)
            .with_context(|| format!("could not read object {id}"))?;
        let commit = object.into_commit();
        let tree_id = commit
            .tree_id()
            .with_context(|| format!("could not read the tree of commit {id}"))?;
        if tree_id.is_empty_tree() {
            let message = commit
                .decode()
                .with_context(|| format!("could not read commit {id}"))?
                .message
                .to_vec();
            return Ok(RecordObject::Message(message));
        }
        let tree = commit
            .tree()
            .with_context(|| format!("could not read the tree of commit {id}"))?;
        let mut entries = Vec::new();
        let mut ids = Vec::new();
        for entry in tree.iter() {
            let entry = entry.with_context(|| format!("could not read the tree of commit {id}"))?;
            let is_file = entry.mode().kind() == gix::object::tree::EntryKind::Blob;
            let size = match is_file {
                true => Some(
                    self.repo
                        .find_header(entry.oid().to_owned())
                        .with_context(|| format!("could not read a blob of commit {id}"))?
                        .size(),
                ),
                false => None,
            };
            entries.push(TreeEntry {
                name: entry.filename().to_string(),
                kind: if is_file {
                    EntryKind::File
                } else {
                    EntryKind::Other
                },
                size,
            });
            ids.push(oid(entry.oid()));
        }
        Ok(RecordObject::Commit(entries, ids))
    }

    /// The content of blob `id`.
    pub fn read_blob(&self, id: Oid) -> Result<Vec<u8>> {
        Ok(self
            .repo
            .find_blob(gid(id)?)
            .with_context(|| format!("could not read blob {id}"))?
            .data
            .clone())
    }

    /// Apply `changes` in one ref transaction, each with its expected old value
    /// (a mismatch anywhere changes nothing and returns a [`CasConflict`]).
    /// No reflog is forced: these are copies of another repository's refs.
    /// Each ref is written as a loose file, as `git update-ref` writes it.
    pub fn edit_refs(&self, changes: &[RefChange], message: &str) -> Result<()> {
        self.edit_refs_into(changes, message, false)
    }

    /// [`Repo::edit_refs`] for many refs at once, written where `git clone`
    /// writes its first refs: into `packed-refs`, rewritten once under its
    /// lock, each change checked there against its expected value first
    /// (a mismatch changes nothing and returns a [`CasConflict`]). No loose
    /// file is locked, written, renamed or removed per ref: at 2,000 refs
    /// that was most of a push's own file calls, and every later listing
    /// (`git push`'s, `fetch`'s, `for-each-ref`'s) reads one file.
    ///
    /// Only for refs whose every writer holds a lock the caller holds (the
    /// namespaces of a remote under `remote.lock`), under `refs/bullpen/`
    /// (where git keeps no reflog unless `core.logAllRefUpdates` is
    /// `always`). When a name has a loose file (or anything else in its
    /// place), or reflogs are kept for every ref, the changes go through
    /// the per-ref transaction instead, packed too: each ref's lock taken,
    /// its loose file removed.
    pub fn edit_refs_packed(&self, changes: &[RefChange], message: &str) -> Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        if changes.is_empty() {
            return Ok(());
        }
        let logs_all = self
            .repo
            .config_snapshot()
            .string("core.logAllRefUpdates")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"always"));
        // A name is free when nothing is in its place; all under a directory
        // that is not there are (one call for a namespace packed or new).
        let absent = |path: &std::path::Path| matches!(path.symlink_metadata(), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        let mut gone_dirs: std::collections::HashMap<&str, bool> = Default::default();
        let nothing_loose = changes.iter().all(|c| {
            let dir = c.name.rsplit_once('/').map_or("", |(d, _)| d);
            let dir_gone = *gone_dirs
                .entry(dir)
                .or_insert_with(|| absent(&self.common_dir.join(dir)));
            c.name.starts_with("refs/bullpen/")
                && (dir_gone || absent(&self.common_dir.join(&c.name)))
        });
        if logs_all || !nothing_loose {
            return self.edit_refs_into(changes, message, true);
        }
        let transaction = self
            .repo
            .refs
            .packed_transaction(self.lock_wait("core.packedRefsTimeout", 1000))
            .map_err(|e| self.held_or(e, "packed-refs"))?;
        let mut edits = Vec::with_capacity(changes.len());
        for c in changes {
            let name = gix::refs::FullName::try_from(c.name.as_str())
                .with_context(|| format!("invalid ref name {}", quoted(&c.name)))?;
            let current = match transaction.buffer() {
                Some(packed) => packed
                    .try_find(name.as_ref())
                    .map_err(|e| anyhow!("{e}"))
                    .context("could not read packed-refs")?
                    .map(|r| oid(r.target())),
                None => None,
            };
            let matches = match c.expect {
                Expect::Absent => current.is_none(),
                Expect::At(old) => current == Some(old),
            };
            if !matches {
                return Err(anyhow::Error::new(CasConflict {
                    refname: c.name.clone(),
                }));
            }
            let expected = match current {
                Some(old) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(gid(old)?)),
                None => PreviousValue::MustNotExist,
            };
            let change = match c.new {
                Some(new) => Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: one_line(message).into(),
                    },
                    expected,
                    new: gix::refs::Target::Object(gid(new)?),
                },
                None => Change::Delete {
                    expected,
                    log: RefLog::AndReference,
                },
            };
            edits.push(RefEdit {
                change,
                name,
                deref: false,
            });
        }
        // The objects are read to peel a tag, as `git pack-refs` does.
        transaction
            .prepare(&mut edits.into_iter(), &self.repo.objects)
            .and_then(|t| t.commit())
            .map_err(|e| anyhow!("{e}"))
            .context("could not write packed-refs")?;
        let _ = self.repo.refs.force_refresh_packed_buffer();
        Ok(())
    }

    /// How long to wait for a ref lock: `key` (git's `core.filesRefLockTimeout`
    /// or `core.packedRefsTimeout`, in ms; negative: for ever), else git's default.
    fn lock_wait(&self, key: &str, default_ms: u64) -> gix::lock::acquire::Fail {
        let ms = self
            .repo
            .config_snapshot()
            .integer(key)
            .map_or(default_ms, |v| u64::try_from(v).unwrap_or(u64::MAX));
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_millis(ms))
    }

    /// A lock error named with git's advice (a killed git or bullpen left it).
    fn held_or(&self, err: gix::Error, what: &str) -> anyhow::Error {
        if super::records::lock_exists(&err) {
            return anyhow::Error::new(self.held_lock(what));
        }
        anyhow::Error::new(err).context(format!("could not lock {what}"))
    }

    fn edit_refs_into(&self, changes: &[RefChange], message: &str, packed: bool) -> Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        if changes.is_empty() {
            return Ok(());
        }
        let mut edits = Vec::with_capacity(changes.len());
        for c in changes {
            let expected = match c.expect {
                Expect::Absent => PreviousValue::MustNotExist,
                Expect::At(old) => {
                    PreviousValue::MustExistAndMatch(gix::refs::Target::Object(gid(old)?))
                }
            };
            let change = match c.new {
                Some(new) => Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: one_line(message).into(),
                    },
                    expected,
                    new: gix::refs::Target::Object(gid(new)?),
                },
                None => Change::Delete {
                    expected,
                    log: RefLog::AndReference,
                },
            };
            edits.push(RefEdit {
                change,
                name: gix::refs::FullName::try_from(c.name.as_str())
                    .with_context(|| format!("invalid ref name {}", quoted(&c.name)))?,
                deref: false,
            });
        }
        let (_, committer) = self.signatures();
        let mut time_buf = gix::date::parse::TimeBuf::default();
        let committer = Some(committer.to_ref(&mut time_buf));
        let done = match packed {
            false => self.repo.edit_references_as(edits, committer),
            true => {
                use gix::refs::file::transaction::PackedRefs;
                // The objects are read to peel a tag, as `git pack-refs` does.
                let objects = Box::new(self.repo.objects.clone());
                self.repo
                    .refs
                    .transaction()
                    .packed_refs(
                        PackedRefs::DeletionsAndNonSymbolicUpdatesRemoveLooseSourceReference(
                            objects,
                        ),
                    )
                    .prepare(
                        edits,
                        self.lock_wait("core.filesRefLockTimeout", 100),
                        self.lock_wait("core.packedRefsTimeout", 1000),
                    )
                    .and_then(|t| t.commit(committer))
            }
        };
        match done {
            Ok(_) => Ok(()),
            // A lock file in the way (a git or a bullpen killed part-way left
            // it, or one runs now): named with git's advice, as for a record.
            Err(err) if super::records::lock_exists(&err) => {
                let held = changes
                    .iter()
                    .find(|c| {
                        self.common_dir
                            .join(format!("{}.lock", c.name))
                            .symlink_metadata()
                            .is_ok()
                    })
                    .unwrap_or(&changes[0]);
                Err(anyhow::Error::new(self.held_lock(&held.name)))
            }
            Err(err) if err.is_conflict() || err.is_not_found() => {
                Err(anyhow::Error::new(CasConflict {
                    refname: format!("one of {} refs", changes.len()),
                }))
            }
            Err(err) => Err(anyhow::Error::new(err).context("could not update refs")),
        }
    }
}

/// Pure: the refs of `git fetch --porcelain`'s output: `<flag> <old> <new> <ref>`.
fn parse_fetch_porcelain(stdout: &str) -> Vec<FetchedRef> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut chars = line.chars();
            let flag = chars.next()?;
            let mut parts = chars.as_str().strip_prefix(' ')?.splitn(3, ' ');
            let (_old, _new, name) = (parts.next()?, parts.next()?, parts.next()?);
            Some(FetchedRef {
                flag,
                name: name.to_owned(),
            })
        })
        .collect()
}

/// Pure: the `remote: ` lines of git's stderr, without the prefix and git's padding.
fn remote_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote: "))
        .map(|l| l.trim_end().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Pure: the refs of `git push --porcelain`'s output: `<flag>\t<from>:<to>\t<summary>`,
/// `!` rejected, anything else (` `, `+`, `-`, `*`, `=`) done.
fn parse_porcelain(stdout: &str) -> Vec<PushedRef> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            let flag = parts.next()?;
            let refs = parts.next()?;
            let summary = parts.next().unwrap_or("").to_owned();
            if flag.chars().count() != 1 {
                return None;
            }
            let (_, to) = refs.rsplit_once(':')?;
            Some(PushedRef {
                remote_ref: to.to_owned(),
                ok: flag != "!",
                summary,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remotes_own_words_are_its_remote_lines() {
        let stderr = "remote: notes are not accepted here        \n\
                      remote: \n\
                      error: failed to push some refs to '../r.git'\n";
        assert_eq!(remote_lines(stderr), ["notes are not accepted here"]);
    }

    #[test]
    fn fetch_porcelain_is_read_per_ref() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let out = format!(
            "* {z} {a} refs/bullpen/incoming/o/sessions/x\n\
             - {a} {z} refs/bullpen/incoming/o/sessions/y\n\
             + {a} {a} refs/remotes/o/bullpen/x\n"
        );
        let got: Vec<(char, String)> = parse_fetch_porcelain(&out)
            .into_iter()
            .map(|r| (r.flag, r.name))
            .collect();
        assert_eq!(
            got,
            [
                ('*', "refs/bullpen/incoming/o/sessions/x".to_owned()),
                ('-', "refs/bullpen/incoming/o/sessions/y".to_owned()),
                ('+', "refs/remotes/o/bullpen/x".to_owned()),
            ]
        );
    }

    #[test]
    fn push_porcelain_is_read_per_ref() {
        let out = "To /tmp/r.git\n\
                   \x20\trefs/bullpen/sessions/x:refs/bullpen/sessions/x\t94fcdd9..f710901\n\
                   *\trefs/heads/bullpen/x:refs/heads/bullpen/x\t[new branch]\n\
                   =\trefs/notes/bullpen:refs/notes/bullpen\t[up to date]\n\
                   !\tHEAD:refs/bullpen/sessions/y\t[rejected] (fetch first)\n\
                   Done\n";
        let refs = parse_porcelain(out);
        let got: Vec<(&str, bool)> = refs.iter().map(|r| (r.remote_ref.as_str(), r.ok)).collect();
        assert_eq!(
            got,
            [
                ("refs/bullpen/sessions/x", true),
                ("refs/heads/bullpen/x", true),
                ("refs/notes/bullpen", true),
                ("refs/bullpen/sessions/y", false),
            ]
        );
        assert_eq!(refs[3].summary, "[rejected] (fetch first)");
    }
}
