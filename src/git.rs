//! The git boundary. Nothing outside this module imports `gix` or spawns `git`.
//!
//! In-process (gix): discovery, worktree listing, records (objects + CAS ref
//! transactions with forced reflogs), notes, reachability, status.
//! Subprocess (git CLI, `LC_ALL=C`, argv in every error): `worktree add/remove/prune`,
//! `branch` deletion, `fetch`.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Context, Result};

/// A git object id, as our own type so that no gix type leaks out of this module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Oid(gix::ObjectId);

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Oid {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(Oid(gix::ObjectId::from_hex(s.as_bytes())
            .with_context(|| format!("not an object id: {s:?}"))?))
    }
}

/// What a ref update expects to find before it writes (compare-and-swap).
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// The ref must not exist yet (creation).
    Absent,
    /// The ref must exist and point at this commit.
    At(Oid),
}

/// A compare-and-swap that lost: the ref was not what we expected.
/// Callers find it with `err.downcast_ref::<CasConflict>()`.
#[derive(Debug)]
pub struct CasConflict {
    pub refname: String,
}

impl fmt::Display for CasConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} changed underneath us (another bullpen process updated it)",
            self.refname
        )
    }
}
impl std::error::Error for CasConflict {}

/// One registered worktree of the repository, as git sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worktree {
    /// The worktree's top-level directory, as registered (not canonicalized).
    pub path: PathBuf,
    /// The admin entry's name under `<common>/worktrees/`; `None` for the main worktree.
    pub admin_id: Option<String>,
    /// Full ref name HEAD points at (`refs/heads/...`), `None` when detached or unreadable.
    pub head_ref: Option<String>,
    pub locked: bool,
    /// Whether the registered directory exists on disk.
    pub exists: bool,
}

/// Counts of what makes a worktree not clean. Ignored files never count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirt {
    pub modified: usize,
    pub staged: usize,
    pub untracked: usize,
}

impl Dirt {
    pub fn is_clean(&self) -> bool {
        self.modified == 0 && self.staged == 0 && self.untracked == 0
    }
}

/// What sits at a path, from git's point of view, for resume placement and gc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathRepo {
    /// The path is the top level of a worktree of *this* repository.
    OurWorktree { head_ref: Option<String> },
    /// The path is (inside) some other repository, or a non-top-level dir of ours.
    Other { description: String },
    /// No repository there.
    None,
}

/// The repository bullpen works on, discovered from a directory.
pub struct Repo {
    repo: gix::Repository,
    git: PathBuf,
    common_dir: PathBuf,
    main_worktree: PathBuf,
}

/// How often a notes commit is retried from a fresh read after losing a race.
const NOTES_ATTEMPTS: usize = 5;

impl Repo {
    /// Discover the repository containing `cwd` (also from inside a linked worktree).
    /// Fails with a clear message outside a repository, in a bare repository, in a
    /// reftable repository, or when no `git` executable is on PATH.
    pub fn discover(cwd: &Path) -> Result<Repo> {
        let git =
            which::which("git").map_err(|_| anyhow::anyhow!("git executable not found on PATH"))?;

        // gix cannot read reftable repositories: find out ourselves before gix gets a chance to fail.
        if let Some(common) = find_reftable_upwards(cwd) {
            bail!(
                "reftable repositories are not supported yet (gix cannot read them): {}",
                common.display()
            );
        }

        let (path, _trust) = match gix::discover::upwards(cwd) {
            Ok(found) => found,
            Err(err) => {
                if let Some(gix::discover::upwards::Error::NoTrustedGitRepository {
                    candidate,
                    ..
                }) = err.downcast_any_ref::<gix::discover::upwards::Error>()
                {
                    bail!(
                        "the git repository at {} is not trusted (not owned by the current user): {}",
                        candidate.display(),
                        cwd.display()
                    );
                }
                if err
                    .downcast_any_ref::<gix::discover::upwards::Error>()
                    .is_some()
                    || err.is_not_found()
                {
                    bail!(
                        "not a git repository (or any parent up to /): {}",
                        cwd.display()
                    );
                }
                return Err(anyhow::Error::new(err).context(format!(
                    "could not look for a git repository from {}",
                    cwd.display()
                )));
            }
        };
        let (git_dir, _) = path.into_repository_and_work_tree_directories();
        let common_guess = common_dir_of(&git_dir);
        if is_reftable(&common_guess) {
            bail!(
                "reftable repositories are not supported yet (gix cannot read them): {}",
                canonical_or_self(&common_guess).display()
            );
        }

        let mut repo = gix::discover(cwd).with_context(|| {
            format!(
                "could not open the git repository containing {}",
                cwd.display()
            )
        })?;
        repo.make_paths_absolute()
            .context("could not make the repository's paths absolute")?;
        repo.object_cache_size_if_unset(4 * 1024 * 1024);

        let common_dir = std::fs::canonicalize(repo.common_dir()).with_context(|| {
            format!(
                "could not resolve the git directory {}",
                repo.common_dir().display()
            )
        })?;
        if repo.workdir().is_none() {
            bail!(
                "bullpen needs a working tree: {} is a bare repository",
                common_dir.display()
            );
        }
        let main_repo = repo
            .main_repo()
            .context("could not open the repository of the main worktree")?;
        let Some(main_workdir) = main_repo.workdir() else {
            bail!(
                "bullpen needs a main working tree: {} is a bare repository (only linked worktrees have files)",
                common_dir.display()
            );
        };
        let main_worktree = std::fs::canonicalize(main_workdir).with_context(|| {
            format!(
                "could not resolve the main worktree {}",
                main_workdir.display()
            )
        })?;

        Ok(Repo {
            repo,
            git,
            common_dir,
            main_worktree,
        })
    }

    /// The canonical common git dir (shared by all worktrees).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The main worktree's top-level directory (canonical).
    pub fn main_worktree(&self) -> &Path {
        &self.main_worktree
    }

    /// A git config value (any scope), `None` when unset.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Resolve a revision (e.g. `HEAD`, `main~2`, an oid) to a commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Oid> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .with_context(|| format!("could not resolve revision {rev:?}"))?;
        let commit = id
            .object()
            .with_context(|| format!("could not read the object {rev:?} names"))?
            .peel_to_commit()
            .with_context(|| format!("{rev:?} does not name a commit"))?;
        Ok(Oid(commit.id))
    }

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
        Ok(Some(Oid(commit.id)))
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
            out.push((name, Oid(commit.id)));
        }
        out.sort();
        Ok(out)
    }

    /// The content of file `path` in the tree of `commit`, `None` when absent.
    pub fn read_file_at(&self, commit: Oid, path: &str) -> Result<Option<Vec<u8>>> {
        let commit_obj = self
            .repo
            .find_commit(commit.0)
            .with_context(|| format!("could not read commit {commit}"))?;
        let tree = commit_obj
            .tree()
            .with_context(|| format!("could not read the tree of commit {commit}"))?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .with_context(|| format!("could not look up {path} in commit {commit}"))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_blob() {
            bail!("{path} in commit {commit} is not a file");
        }
        let blob = self
            .repo
            .find_blob(entry.object_id())
            .with_context(|| format!("could not read {path} in commit {commit}"))?;
        Ok(Some(blob.data.clone()))
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
        if file_name.is_empty() || file_name.contains('/') || file_name == "." || file_name == ".."
        {
            bail!("invalid record file name {file_name:?}");
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
        self.write_commit(tree_id, message, parent.map(|p| p.0))
    }

    /// Point `refname` at `new` if and only if it currently matches `expect`;
    /// a reflog entry with `message` is always written. A mismatch returns an
    /// error that downcasts to [`CasConflict`].
    pub fn update_ref(&self, refname: &str, new: Oid, expect: Expect, message: &str) -> Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let name = full_name(refname)?;
        let expected = match expect {
            Expect::Absent => PreviousValue::MustNotExist,
            Expect::At(old) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(old.0)),
        };
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: true,
                    message: one_line(message).into(),
                },
                expected,
                new: gix::refs::Target::Object(new.0),
            },
            name,
            deref: false,
        };
        self.apply_edit(refname, edit, matches!(expect, Expect::At(_)))
            .with_context(|| format!("could not update ref {refname} to {new}"))
    }

    /// Delete `refname` if and only if it points at `expected` (mismatch: [`CasConflict`]).
    pub fn delete_ref(&self, refname: &str, expected: Oid, message: &str) -> Result<()> {
        use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
        // gix has no reflog message for deletions (the reflog goes with the ref, as in git).
        let _ = message;
        let edit = RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(expected.0)),
                log: RefLog::AndReference,
            },
            name: full_name(refname)?,
            deref: false,
        };
        self.apply_edit(refname, edit, true)
            .with_context(|| format!("could not delete ref {refname}"))
    }

    /// Commits reachable from `tip` but not from any of `hidden`, newest first.
    pub fn commits_between(&self, tip: Oid, hidden: &[Oid]) -> Result<Vec<Oid>> {
        let walk = self
            .repo
            .rev_walk([tip.0])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            ))
            .with_hidden(hidden.iter().map(|o| o.0))
            // gix opens and maps the commit-graph file anew for every walk; `ls`
            // walks once per session (1,000 opens of a 350 KiB file at 1,000
            // sessions, ~15% of its time). These walks are a few commits long:
            // reading the commits themselves is cheaper than opening the graph.
            .use_commit_graph(false)
            .all()
            .with_context(|| format!("could not walk the history of {tip}"))?;
        let mut out = Vec::new();
        for info in walk {
            let info = info.with_context(|| format!("could not walk the history of {tip}"))?;
            out.push(Oid(info.id));
        }
        Ok(out)
    }

    /// Of `tips`, those NOT reachable from any `refs/remotes/*` ref, in one walk.
    pub fn unpublished(&self, tips: &[Oid]) -> Result<HashSet<Oid>> {
        if tips.is_empty() {
            return Ok(HashSet::new());
        }
        let mut remote_tips = Vec::new();
        {
            let platform = self.repo.references().context("could not read refs")?;
            let iter = platform
                .prefixed("refs/remotes/")
                .context("could not list remote-tracking refs")?;
            for reference in iter {
                let mut reference = reference
                    .map_err(|err| anyhow::anyhow!("{err}"))
                    .context("could not read a remote-tracking ref")?;
                // `refs/remotes/<r>/HEAD` is symbolic and peels like its target; non-commits are ignored.
                let Ok(id) = reference.peel_to_id() else {
                    continue;
                };
                let Ok(object) = id.object() else { continue };
                match object.peel_to_commit() {
                    Ok(commit) => remote_tips.push(commit.id),
                    Err(_) => continue,
                }
            }
        }
        let mut found = HashSet::new();
        // A tip whose commit is missing cannot be proven published: it counts as unpublished.
        let mut present = Vec::new();
        for tip in tips {
            if self.repo.has_object(tip.0) {
                present.push(*tip);
            } else {
                found.insert(*tip);
            }
        }
        let wanted: HashSet<Oid> = tips.iter().copied().collect();
        if present.is_empty() {
            return Ok(found);
        }
        let walk = self
            .repo
            .rev_walk(present.iter().map(|o| o.0))
            .with_hidden(remote_tips)
            .all()
            .context("could not walk the history of the session branches")?;
        for info in walk {
            let info = info.context("could not walk the history of the session branches")?;
            let id = Oid(info.id);
            if wanted.contains(&id) {
                found.insert(id);
                if found.len() == wanted.len() {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// Attach `text` as a note in `notes_ref` (e.g. `refs/notes/bullpen`) to each
    /// commit, in one notes commit (CAS on the notes ref, retried on a lost race).
    /// An existing note on a commit is kept and the new text appended after a blank
    /// line, like `git notes append`. Interoperates with `git notes`.
    pub fn add_notes(&self, notes_ref: &str, notes: &[(Oid, String)], message: &str) -> Result<()> {
        if notes.is_empty() {
            return Ok(());
        }
        let mut last_err = None;
        for _ in 0..NOTES_ATTEMPTS {
            match self.add_notes_once(notes_ref, notes, message) {
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

    /// The note on `commit` in `notes_ref`, if any.
    pub fn read_note(&self, notes_ref: &str, commit: Oid) -> Result<Option<String>> {
        let Some(notes_commit) = self.ref_target(notes_ref)? else {
            return Ok(None);
        };
        let mut state = self.notes_state(notes_ref, Some(notes_commit))?;
        let Some(blob_id) = state
            .get(&commit.0, &self.repo)
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

    /// All registered worktrees, the main one first.
    pub fn worktrees(&self) -> Result<Vec<Worktree>> {
        let mut out = vec![Worktree {
            path: self.main_worktree.clone(),
            admin_id: None,
            head_ref: read_head_ref(&self.common_dir),
            locked: false,
            exists: self.main_worktree.is_dir(),
        }];
        let admin_root = self.common_dir.join("worktrees");
        let entries = match std::fs::read_dir(&admin_root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(err) => {
                return Err(anyhow::Error::new(err)
                    .context(format!("could not list {}", admin_root.display())))
            }
        };
        let mut linked = Vec::new();
        for entry in entries {
            let entry =
                entry.with_context(|| format!("could not list {}", admin_root.display()))?;
            let admin_dir = entry.path();
            if !admin_dir.is_dir() {
                continue;
            }
            let Some(path) = registered_path(&admin_dir)? else {
                continue; // not a worktree admin entry (no `gitdir` file), like git
            };
            let id = entry.file_name().to_string_lossy().into_owned();
            linked.push(Worktree {
                exists: path.is_dir(),
                path,
                admin_id: Some(id),
                head_ref: read_head_ref(&admin_dir),
                locked: admin_dir.join("locked").exists(),
            });
        }
        linked.sort_by(|a, b| a.admin_id.cmp(&b.admin_id));
        out.extend(linked);
        Ok(out)
    }

    /// What is at `path`: the top level of one of our worktrees, another repo, or none.
    pub fn inspect_path(&self, path: &Path) -> Result<PathRepo> {
        let canonical = std::fs::canonicalize(path)
            .with_context(|| format!("could not resolve {}", path.display()))?;
        if canonical == self.main_worktree {
            return Ok(PathRepo::OurWorktree {
                head_ref: read_head_ref(&self.common_dir),
            });
        }
        for wt in self.worktrees()?.into_iter().skip(1) {
            let Ok(wt_canonical) = std::fs::canonicalize(&wt.path) else {
                continue;
            };
            if wt_canonical != canonical {
                continue;
            }
            // Registered here; make sure its `.git` file really points into our common dir.
            if let Some(admin_dir) = dot_git_file_target(&canonical) {
                if let Ok(admin_canonical) = std::fs::canonicalize(&admin_dir) {
                    let points_home = admin_canonical.parent().and_then(Path::parent)
                        == Some(self.common_dir.as_path())
                        && admin_canonical.parent().and_then(Path::file_name)
                            == Some(std::ffi::OsStr::new("worktrees"));
                    if points_home {
                        return Ok(PathRepo::OurWorktree {
                            head_ref: read_head_ref(&admin_canonical),
                        });
                    }
                }
            }
        }

        let (found, _trust) = match gix::discover::upwards(&canonical) {
            Ok(found) => found,
            Err(err) => {
                if let Some(err) = err.downcast_any_ref::<gix::discover::upwards::Error>() {
                    return Ok(match err {
                        gix::discover::upwards::Error::NoTrustedGitRepository {
                            candidate, ..
                        } => PathRepo::Other {
                            description: format!(
                                "inside an untrusted git repository ({})",
                                candidate.display()
                            ),
                        },
                        _ => PathRepo::None,
                    });
                }
                if err.is_not_found() {
                    return Ok(PathRepo::None);
                }
                return Err(anyhow::Error::new(err).context(format!(
                    "could not look for a git repository at {}",
                    canonical.display()
                )));
            }
        };
        let (git_dir, work_dir) = found.into_repository_and_work_tree_directories();
        let common = canonical_or_self(&common_dir_of(&git_dir));
        let top = work_dir.map(|w| canonical_or_self(&w));
        let ours = common == self.common_dir;
        let description = match (&top, ours) {
            (Some(top), true) if *top == canonical => {
                format!(
                    "a worktree of this repository that is not registered ({})",
                    common.display()
                )
            }
            (Some(top), true) => format!("a subdirectory of {}", top.display()),
            (Some(top), false) if *top == canonical => {
                format!("a worktree of another repository ({})", common.display())
            }
            (Some(top), false) => format!(
                "a subdirectory of {} (a worktree of another repository, {})",
                top.display(),
                common.display()
            ),
            (None, true) => format!(
                "inside the git directory of this repository ({})",
                common.display()
            ),
            (None, false) => format!(
                "a git repository without a working tree ({})",
                common.display()
            ),
        };
        Ok(PathRepo::Other { description })
    }

    /// Modified/staged/untracked counts of the worktree at `path` (ignored files excluded).
    ///
    /// Done in-process with the gix status iterator. Untracked files are listed
    /// one by one (`--untracked-files=all`), so an untracked directory with `n`
    /// files counts `n`. Ignored files never count. `modified` covers index vs.
    /// worktree changes (including deletions and conflicts), `staged` covers
    /// HEAD tree vs. index changes.
    pub fn dirt(&self, worktree: &Path) -> Result<Dirt> {
        dirt_of(worktree)
    }

    // ----- git CLI -----

    /// `git worktree add -b <branch> <path> <base>`: new branch and worktree at once.
    pub fn worktree_add_new_branch(&self, path: &Path, branch: &str, base: Oid) -> Result<()> {
        let base = base.to_string();
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                "-b".as_ref(),
                branch.as_ref(),
                path.as_os_str(),
                base.as_ref(),
            ],
        )
        .map(drop)
    }

    /// `git worktree add <path> <branch>`: a worktree for an existing branch.
    pub fn worktree_add_existing(&self, path: &Path, branch: &str) -> Result<()> {
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                path.as_os_str(),
                branch.as_ref(),
            ],
        )
        .map(drop)
    }

    /// `git worktree remove <path>` (no --force).
    pub fn worktree_remove(&self, path: &Path) -> Result<()> {
        self.run_git(
            None,
            &["worktree".as_ref(), "remove".as_ref(), path.as_os_str()],
        )
        .map(drop)
    }

    /// `git worktree prune`.
    pub fn worktree_prune(&self) -> Result<()> {
        self.run_git(None, &["worktree".as_ref(), "prune".as_ref()])
            .map(drop)
    }

    /// `git fetch --all --prune`.
    pub fn fetch_all(&self) -> Result<()> {
        self.run_git(
            None,
            &["fetch".as_ref(), "--all".as_ref(), "--prune".as_ref()],
        )
        .map(drop)
    }
}

// ----- private helpers -----

impl Repo {
    /// The one place that runs the git CLI: `git -C <dir> <args>` with `LC_ALL=C`,
    /// stdin from /dev/null and output captured. Returns stdout; a failure names
    /// the argv and carries git's stderr.
    fn run_git(&self, dir: Option<&Path>, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>> {
        let dir = dir.unwrap_or(&self.main_worktree);
        let argv = std::iter::once("git".to_string())
            .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        let output = std::process::Command::new(&self.git)
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("LC_ALL", "C")
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("could not run `{argv}` ({})", self.git.display()))?;
        if !output.status.success() {
            let status = match output.status.code() {
                Some(code) => format!("exit {code}"),
                None => "killed by a signal".to_string(),
            };
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!("`{argv}` failed ({status}): {}", stderr.trim_end());
        }
        Ok(output.stdout)
    }

    /// Author and committer for objects and reflogs: the repository's identity,
    /// or `bullpen <bullpen@localhost>`; the time is now unless
    /// `GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` say otherwise.
    fn signatures(&self) -> (gix::actor::Signature, gix::actor::Signature) {
        let make =
            |configured: Option<std::result::Result<gix::actor::SignatureRef<'_>, gix::Error>>,
             date_var: &str| {
                let (name, email) = match configured {
                    Some(Ok(sig)) => (sig.name.to_owned(), sig.email.to_owned()),
                    _ => ("bullpen".into(), "bullpen@localhost".into()),
                };
                let time = std::env::var(date_var)
                    .ok()
                    .filter(|v| !v.trim().is_empty())
                    .and_then(|v| gix::date::parse(&v, Some(gix::date::Zoned::now())).ok())
                    .unwrap_or_else(gix::date::Time::now_local_or_utc);
                gix::actor::Signature { name, email, time }
            };
        let author = make(self.repo.author(), "GIT_AUTHOR_DATE");
        let committer = make(self.repo.committer(), "GIT_COMMITTER_DATE");
        (author, committer)
    }

    fn write_commit(
        &self,
        tree: gix::ObjectId,
        message: &str,
        parent: Option<gix::ObjectId>,
    ) -> Result<Oid> {
        let (author, committer) = self.signatures();
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
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
        Ok(Oid(id.detach()))
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
                // A lost precondition is a conflict; so is a lock held by another writer
                // (gix classifies that as retryable): both mean "re-read and retry".
                let conflict = err.is_conflict()
                    || err.is_retryable()
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

    fn notes_state(
        &self,
        notes_ref: &str,
        notes_commit: Option<Oid>,
    ) -> Result<gix::note::plumbing::State> {
        let tree = match notes_commit {
            Some(c) => self
                .repo
                .find_commit(c.0)
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
    ) -> Result<()> {
        let previous = self.ref_target(notes_ref)?;
        let mut state = self.notes_state(notes_ref, previous)?;
        for (commit, text) in notes {
            let existing = state.get(&commit.0, &self.repo).with_context(|| {
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
                .edit(commit.0, Some(blob), &self.repo)
                .with_context(|| format!("could not add the note for {commit} to {notes_ref}"))?;
        }
        let tree = state
            .write(&self.repo)
            .with_context(|| format!("could not write the notes tree of {notes_ref}"))?;
        let new = self.write_commit(tree, message, previous.map(|p| p.0))?;
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

fn full_name(refname: &str) -> Result<gix::refs::FullName> {
    gix::refs::FullName::try_from(refname).with_context(|| format!("invalid ref name {refname:?}"))
}

/// Reflog messages must be a single line.
fn one_line(message: &str) -> String {
    message.lines().next().unwrap_or("").to_string()
}

fn canonical_or_self(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The common dir of a git dir: what its `commondir` file says, or itself.
fn common_dir_of(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(content) => {
            let p = PathBuf::from(content.trim_end_matches(['\n', '\r']));
            if p.is_absolute() {
                p
            } else {
                git_dir.join(p)
            }
        }
        Err(_) => git_dir.to_path_buf(),
    }
}

/// Whether the repository with this common dir stores its refs in reftable format.
fn is_reftable(common: &Path) -> bool {
    if common.join("reftable").is_dir() {
        return true;
    }
    let Ok(config) = std::fs::read_to_string(common.join("config")) else {
        return false;
    };
    config.lines().any(|line| {
        let compact: String = line
            .split(['#', ';'])
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        compact == "refstorage=reftable"
    })
}

/// Walk up from `start` to the first thing that looks like a repository and
/// return its common dir if that repository uses reftable.
fn find_reftable_upwards(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).ok()?;
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let git_dir = if dot_git.is_dir() {
            Some(dot_git)
        } else if dot_git.is_file() {
            dot_git_file_target(dir)
        } else if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
            Some(dir.to_path_buf())
        } else {
            None
        };
        if let Some(git_dir) = git_dir {
            let common = common_dir_of(&git_dir);
            return is_reftable(&common).then(|| canonical_or_self(&common));
        }
    }
    None
}

/// Where the `.git` file at the top of a (linked) worktree points, if it is one.
fn dot_git_file_target(worktree: &Path) -> Option<PathBuf> {
    let content = std::fs::read_to_string(worktree.join(".git")).ok()?;
    let target = content.lines().next()?.strip_prefix("gitdir:")?.trim();
    let target = PathBuf::from(target);
    Some(if target.is_absolute() {
        target
    } else {
        worktree.join(target)
    })
}

/// The worktree path registered in a `<common>/worktrees/<id>` admin dir, from
/// its `gitdir` file (which names the worktree's `.git` file); `None` without one.
fn registered_path(admin_dir: &Path) -> Result<Option<PathBuf>> {
    let gitdir_file = admin_dir.join("gitdir");
    let content = match std::fs::read_to_string(&gitdir_file) {
        Ok(content) => content,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("could not read {}", gitdir_file.display())))
        }
    };
    let dot_git = PathBuf::from(content.trim_end_matches(['\n', '\r']));
    let dot_git = if dot_git.is_absolute() {
        dot_git
    } else {
        admin_dir.join(dot_git)
    };
    let path = if dot_git.file_name() == Some(std::ffi::OsStr::new(".git")) {
        dot_git.parent().map(Path::to_path_buf).unwrap_or(dot_git)
    } else {
        dot_git
    };
    Ok(Some(path))
}

/// The branch a HEAD file (in a git dir or worktree admin dir) points at:
/// `Some("refs/heads/x")` for `ref: refs/heads/x`, `None` when detached or unreadable.
fn read_head_ref(git_dir: &Path) -> Option<String> {
    let content = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let target = content.trim_end().strip_prefix("ref:")?.trim();
    (!target.is_empty()).then(|| target.to_string())
}

// ----- gc support: what a directory's `.git` says, publish counts, status without an admin entry -----

/// What the `.git` entry at the top of a directory says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DotGit {
    /// No `.git` entry at all.
    Absent,
    /// A `.git` directory: the top of some repository (never one of our linked worktrees).
    Directory,
    /// A `.git` file pointing into this repository's `<common>/worktrees/<admin_id>`.
    Ours {
        admin_id: String,
        admin_exists: bool,
    },
    /// A `.git` file pointing anywhere else, or one that cannot be read.
    Foreign { description: String },
}

impl Repo {
    /// Read the `.git` entry at the top of `dir` (without following a `.git` symlink).
    pub fn dot_git(&self, dir: &Path) -> DotGit {
        let dot_git = dir.join(".git");
        let meta = match dot_git.symlink_metadata() {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return DotGit::Absent,
            Err(err) => {
                return DotGit::Foreign {
                    description: format!("cannot read {}: {err}", dot_git.display()),
                }
            }
        };
        if meta.is_dir() {
            return DotGit::Directory;
        }
        if !meta.is_file() {
            return DotGit::Foreign {
                description: format!("{} is not a file", dot_git.display()),
            };
        }
        let Some(target) = dot_git_file_target(dir) else {
            return DotGit::Foreign {
                description: format!("{} is not a `gitdir:` file", dot_git.display()),
            };
        };
        let target = crate::layout::normalize(&target);
        let admin_root = self.common_dir.join("worktrees");
        // The common dir is canonical; the target's parent may be spelled through a
        // symlink, so compare canonical parents when they exist.
        let parent = target.parent().map(canonical_or_self);
        match (parent, target.file_name()) {
            (Some(parent), Some(name)) if parent == admin_root => DotGit::Ours {
                admin_id: name.to_string_lossy().into_owned(),
                admin_exists: target.is_dir(),
            },
            _ => DotGit::Foreign {
                description: format!("its .git file points at {}", target.display()),
            },
        }
    }

    /// For each of `tips`, how many commits it has that no `refs/remotes/*` ref
    /// reaches (0 when published). One walk per tip, so call it only for the
    /// tips [`Repo::unpublished`] returned.
    pub fn commits_not_on_remotes(
        &self,
        tips: &[Oid],
    ) -> Result<std::collections::HashMap<Oid, usize>> {
        let hidden = self.remote_tip_commits()?;
        let mut out = std::collections::HashMap::new();
        for tip in tips {
            if out.contains_key(tip) {
                continue;
            }
            let walk = self
                .repo
                .rev_walk([tip.0])
                .with_hidden(hidden.iter().map(|o| o.0))
                .all()
                .with_context(|| format!("could not walk the history of {tip}"))?;
            let mut n = 0;
            for info in walk {
                info.with_context(|| format!("could not walk the history of {tip}"))?;
                n += 1;
            }
            out.insert(*tip, n);
        }
        Ok(out)
    }

    /// Dirt of a directory that was a linked worktree of this repository but has
    /// lost its admin entry (so neither git nor gix can open it as a worktree):
    /// its files are compared with the tree of `tip` through a temporary index, with
    /// the repository's ignore rules. `staged` is always 0: the index went with the
    /// admin entry.
    pub fn dirt_against(&self, dir: &Path, tip: Oid) -> Result<Dirt> {
        let tmp_dir = self.common_dir.join("bullpen").join("tmp");
        std::fs::create_dir_all(&tmp_dir)
            .with_context(|| format!("could not create {}", tmp_dir.display()))?;
        let index = tmp_dir.join(format!(
            "index-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let result = (|| -> Result<Dirt> {
            let mut git_dir = std::ffi::OsString::from("--git-dir=");
            git_dir.push(&self.common_dir);
            let mut work_tree = std::ffi::OsString::from("--work-tree=");
            work_tree.push(dir);
            let env = [("GIT_INDEX_FILE", index.as_os_str())];
            let tip = tip.to_string();
            self.run_git_env(
                Some(dir),
                &[
                    git_dir.as_os_str(),
                    work_tree.as_os_str(),
                    "read-tree".as_ref(),
                    tip.as_ref(),
                ],
                &env,
            )?;
            let out = self.run_git_env(
                Some(dir),
                &[
                    git_dir.as_os_str(),
                    work_tree.as_os_str(),
                    "-c".as_ref(),
                    "core.fsmonitor=false".as_ref(),
                    "status".as_ref(),
                    "--porcelain=v1".as_ref(),
                    "-z".as_ref(),
                    "--untracked-files=all".as_ref(),
                    "--no-renames".as_ref(),
                    "--ignore-submodules=none".as_ref(),
                ],
                &env,
            )?;
            let mut dirt = Dirt::default();
            for entry in out.split(|b| *b == 0).filter(|e| e.len() >= 3) {
                // `XY path`: X is index vs. the main worktree's HEAD (meaningless
                // here), Y is this directory vs. the tip's tree.
                match (entry[0], entry[1]) {
                    (b'?', b'?') => dirt.untracked += 1,
                    (_, b' ') => {}
                    _ => dirt.modified += 1,
                }
            }
            Ok(dirt)
        })();
        let _ = std::fs::remove_file(&index);
        let _ = std::fs::remove_file(index.with_extension("lock"));
        let _ = std::fs::remove_dir(&tmp_dir); // only when empty: leave no trace

        result.with_context(|| {
            format!(
                "could not compare {} with the session branch (its worktree admin entry is gone)",
                dir.display()
            )
        })
    }

    /// [`Repo::dirt`] of many worktrees, on a few threads: with hundreds of
    /// sessions the status walks dominate gc's time.
    pub fn dirt_many(&self, worktrees: &[PathBuf]) -> Vec<Result<Dirt>> {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(worktrees.len().max(1));
        if threads <= 1 {
            return worktrees.iter().map(|w| dirt_of(w)).collect();
        }
        let chunk = worktrees.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = worktrees
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || part.iter().map(|w| dirt_of(w)).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .zip(worktrees.chunks(chunk))
                .flat_map(|(h, part)| {
                    h.join().unwrap_or_else(|_| {
                        part.iter()
                            .map(|w| {
                                Err(anyhow::anyhow!(
                                    "the status of {} could not be computed (a thread failed)",
                                    w.display()
                                ))
                            })
                            .collect()
                    })
                })
                .collect()
        })
    }

    /// Every commit a `refs/remotes/*` ref points at (symbolic refs peeled,
    /// non-commits ignored).
    fn remote_tip_commits(&self) -> Result<Vec<Oid>> {
        let platform = self.repo.references().context("could not read refs")?;
        let iter = platform
            .prefixed("refs/remotes/")
            .context("could not list remote-tracking refs")?;
        let mut out = Vec::new();
        for reference in iter {
            let mut reference = reference
                .map_err(|err| anyhow::anyhow!("{err}"))
                .context("could not read a remote-tracking ref")?;
            let Ok(id) = reference.peel_to_id() else {
                continue;
            };
            let Ok(object) = id.object() else { continue };
            if let Ok(commit) = object.peel_to_commit() {
                out.push(Oid(commit.id));
            }
        }
        Ok(out)
    }

    /// Like `run_git`, with extra environment variables for the child.
    fn run_git_env(
        &self,
        dir: Option<&Path>,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<Vec<u8>> {
        let dir = dir.unwrap_or(&self.main_worktree);
        let argv = std::iter::once("git".to_string())
            .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        let mut cmd = std::process::Command::new(&self.git);
        cmd.arg("-C").arg(dir).args(args).env("LC_ALL", "C");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let output = cmd
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("could not run `{argv}` ({})", self.git.display()))?;
        if !output.status.success() {
            let status = match output.status.code() {
                Some(code) => format!("exit {code}"),
                None => "killed by a signal".to_string(),
            };
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!("`{argv}` failed ({status}): {}", stderr.trim_end());
        }
        Ok(output.stdout)
    }
}

/// The body of [`Repo::dirt`], free of `&Repo` so that threads can share it
/// (a gix repository is not `Sync`; each call opens its worktree anyway).
fn dirt_of(worktree: &Path) -> Result<Dirt> {
    use gix::status::index_worktree::iter::Summary;
    let repo = gix::open(worktree).with_context(|| {
        format!(
            "could not open the worktree {} with gix",
            worktree.display()
        )
    })?;
    let iter = repo
        .status(gix::progress::Discard)
        .with_context(|| format!("could not get the status of {}", worktree.display()))?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .dirwalk_options(|opts| opts.empty_patterns_match_prefix(false))
        .into_iter(Vec::new())
        .with_context(|| format!("could not get the status of {}", worktree.display()))?;
    let mut dirt = Dirt::default();
    for item in iter {
        let item =
            item.with_context(|| format!("could not get the status of {}", worktree.display()))?;
        match item {
            gix::status::Item::TreeIndex(_) => dirt.staged += 1,
            gix::status::Item::IndexWorktree(item) => match item.summary() {
                None => {}
                Some(Summary::Added) => dirt.untracked += 1,
                Some(_) => dirt.modified += 1,
            },
        }
    }
    Ok(dirt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A temporary directory removed on drop (no extra dev-dependency).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "bullpen-git-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create temp dir");
            TempDir(std::fs::canonicalize(&dir).expect("canonical temp dir"))
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Run real git hermetically in `dir`; panics with stderr on failure.
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A repository `repo` with one commit on `main` inside a fresh temp dir.
    fn init_repo() -> (TempDir, PathBuf) {
        let tmp = TempDir::new();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).expect("mkdir repo");
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("a.txt"), "a\n").expect("write a.txt");
        git(&repo, &["add", "a.txt"]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        (tmp, repo)
    }

    fn commit_file(dir: &Path, name: &str, content: &str) -> Oid {
        std::fs::write(dir.join(name), content).expect("write file");
        git(dir, &["add", name]);
        git(dir, &["commit", "-q", "-m", name]);
        git(dir, &["rev-parse", "HEAD"])
            .trim()
            .parse()
            .expect("oid")
    }

    #[test]
    fn discover_from_linked_worktree_subdir() {
        let (tmp, repo) = init_repo();
        let wt = tmp.path().join("wt");
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "feature",
                wt.to_str().unwrap(),
            ],
        );
        std::fs::create_dir_all(wt.join("sub/dir")).unwrap();

        let main = Repo::discover(&repo).unwrap();
        let linked = Repo::discover(&wt.join("sub/dir")).unwrap();
        assert_eq!(main.common_dir(), linked.common_dir());
        assert_eq!(main.main_worktree(), linked.main_worktree());
        assert_eq!(linked.main_worktree(), repo.as_path());
        assert_eq!(linked.common_dir(), repo.join(".git").as_path());
        // HEAD resolves in the worktree we were discovered from.
        assert_eq!(
            linked.resolve_commit("HEAD").unwrap(),
            main.resolve_commit("main").unwrap()
        );
    }

    #[test]
    fn discover_errors_are_clear() {
        let tmp = TempDir::new();
        let plain = tmp.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        // Only meaningful if no repository encloses the temp dir.
        if Command::new("git")
            .arg("-C")
            .arg(&plain)
            .args(["rev-parse", "--git-dir"])
            .output()
            .map(|o| !o.status.success())
            .unwrap_or(false)
        {
            let err = Repo::discover(&plain)
                .err()
                .expect("not a repo")
                .to_string();
            assert!(err.contains("not a git repository"), "{err}");
        }

        let bare = tmp.path().join("bare.git");
        git(
            tmp.path(),
            &["init", "-q", "--bare", bare.to_str().unwrap()],
        );
        let err = Repo::discover(&bare).err().expect("bare").to_string();
        assert!(err.contains("is a bare repository"), "{err}");

        let reftable = tmp.path().join("rt");
        git(
            tmp.path(),
            &[
                "init",
                "-q",
                "--ref-format=reftable",
                reftable.to_str().unwrap(),
            ],
        );
        std::fs::create_dir_all(reftable.join("sub")).unwrap();
        let err = Repo::discover(&reftable.join("sub"))
            .err()
            .expect("reftable")
            .to_string();
        assert!(
            err.contains("reftable repositories are not supported yet"),
            "{err}"
        );
    }

    #[test]
    fn records_cas_and_reflog() {
        let (_tmp, repo_dir) = init_repo();
        let repo = Repo::discover(&repo_dir).unwrap();
        let refname = "refs/bullpen/sessions/abc";

        let c1 = repo
            .write_file_commit("session.json", b"{\"schema\":1}\n", "create", None)
            .unwrap();
        repo.update_ref(refname, c1, Expect::Absent, "bullpen: create")
            .unwrap();
        assert_eq!(repo.ref_target(refname).unwrap(), Some(c1));
        assert_eq!(
            repo.read_file_at(c1, "session.json").unwrap().as_deref(),
            Some(&b"{\"schema\":1}\n"[..])
        );
        assert_eq!(repo.read_file_at(c1, "nope.json").unwrap(), None);

        // Creating again with a different commit loses.
        let other = repo
            .write_file_commit("session.json", b"{}\n", "other", None)
            .unwrap();
        let err = repo
            .update_ref(refname, other, Expect::Absent, "x")
            .unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");

        let c2 = repo
            .write_file_commit("session.json", b"{\"schema\":2}\n", "ready", Some(c1))
            .unwrap();
        repo.update_ref(refname, c2, Expect::At(c1), "bullpen: ready")
            .unwrap();
        // Stale expectation loses.
        let err = repo
            .update_ref(refname, other, Expect::At(c1), "x")
            .unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
        // Expecting a ref that does not exist loses too.
        let err = repo
            .update_ref("refs/bullpen/sessions/missing", other, Expect::At(c1), "x")
            .unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");

        // git agrees, and the reflog is there even though refs/bullpen/ gets none by default.
        assert_eq!(
            git(&repo_dir, &["rev-parse", refname]).trim(),
            c2.to_string()
        );
        let log = git(&repo_dir, &["reflog", "show", "--format=%H %gs", refname]);
        assert!(log.contains(&format!("{c2} bullpen: ready")), "{log}");
        assert!(log.contains(&format!("{c1} bullpen: create")), "{log}");
        assert_eq!(
            git(&repo_dir, &["rev-parse", &format!("{c2}^")]).trim(),
            c1.to_string()
        );
        let who = git(
            &repo_dir,
            &["log", "-1", "--format=%an <%ae>", &c2.to_string()],
        );
        assert!(!who.trim().is_empty());

        let listed = repo.refs_with_prefix("refs/bullpen/sessions/").unwrap();
        assert_eq!(listed, vec![(refname.to_string(), c2)]);
        assert_eq!(
            repo.refs_with_prefix("refs/bullpen/sessions/a")
                .unwrap()
                .len(),
            1
        );
        assert!(repo
            .refs_with_prefix("refs/bullpen/sessions/b")
            .unwrap()
            .is_empty());
        assert!(repo.refs_with_prefix("refs/nothing/").unwrap().is_empty());

        let err = repo.delete_ref(refname, c1, "gone").unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
        repo.delete_ref(refname, c2, "gone").unwrap();
        assert_eq!(repo.ref_target(refname).unwrap(), None);
        let err = repo.delete_ref(refname, c2, "gone").unwrap_err();
        assert!(err.downcast_ref::<CasConflict>().is_some(), "{err:#}");
    }

    #[test]
    fn notes_interoperate_with_git() {
        let (_tmp, repo_dir) = init_repo();
        let a = commit_file(&repo_dir, "b.txt", "b\n");
        let b = commit_file(&repo_dir, "c.txt", "c\n");
        let repo = Repo::discover(&repo_dir).unwrap();
        let notes_ref = "refs/notes/bullpen";

        // git writes a note first; ours must append to it.
        git(
            &repo_dir,
            &[
                "notes",
                "--ref=bullpen",
                "add",
                "-m",
                "from git",
                &a.to_string(),
            ],
        );
        repo.add_notes(
            notes_ref,
            &[
                (a, "session: s1".to_string()),
                (b, "session: s1\nexit: 0".to_string()),
            ],
            "bullpen: notes for s1",
        )
        .unwrap();
        assert_eq!(
            git(
                &repo_dir,
                &["notes", "--ref=bullpen", "show", &a.to_string()]
            ),
            "from git\n\nsession: s1\n"
        );
        assert_eq!(
            git(
                &repo_dir,
                &["notes", "--ref=bullpen", "show", &b.to_string()]
            ),
            "session: s1\nexit: 0\n"
        );
        assert_eq!(
            repo.read_note(notes_ref, b).unwrap().as_deref(),
            Some("session: s1\nexit: 0\n")
        );
        let log = git(&repo_dir, &["log", "--notes=bullpen", "-1", &b.to_string()]);
        assert!(log.contains("exit: 0"), "{log}");
        // One notes commit on top of git's.
        let count = git(&repo_dir, &["rev-list", "--count", notes_ref]);
        assert_eq!(count.trim(), "2");

        // Append again, then git appends on top of ours.
        repo.add_notes(notes_ref, &[(b, "again".to_string())], "more")
            .unwrap();
        git(
            &repo_dir,
            &[
                "notes",
                "--ref=bullpen",
                "append",
                "-m",
                "git again",
                &b.to_string(),
            ],
        );
        assert_eq!(
            repo.read_note(notes_ref, b).unwrap().as_deref(),
            Some("session: s1\nexit: 0\n\nagain\n\ngit again\n")
        );
        let first = repo.resolve_commit("main~2").unwrap();
        assert_eq!(repo.read_note(notes_ref, first).unwrap(), None);
        assert_eq!(repo.read_note("refs/notes/none", first).unwrap(), None);
    }

    #[test]
    fn notes_in_fanout_tree() {
        let (_tmp, repo_dir) = init_repo();
        let mut commits = Vec::new();
        for i in 0..3 {
            commits.push(commit_file(&repo_dir, &format!("f{i}"), "x\n"));
        }
        let repo = Repo::discover(&repo_dir).unwrap();
        // Build a notes tree with fanout by hand: git reads notes at `ab/cdef...`.
        let c = commits[0].to_string();
        let blob = {
            let mut child = Command::new("git")
                .arg("-C")
                .arg(&repo_dir)
                .args(["hash-object", "-w", "--stdin"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"fanned\n").unwrap();
            let out = child.wait_with_output().unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let sub = {
            let mut child = Command::new("git")
                .arg("-C")
                .arg(&repo_dir)
                .arg("mktree")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            writeln!(
                child.stdin.take().unwrap(),
                "100644 blob {blob}\t{}",
                &c[2..]
            )
            .unwrap();
            let out = child.wait_with_output().unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let root = {
            let mut child = Command::new("git")
                .arg("-C")
                .arg(&repo_dir)
                .arg("mktree")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            writeln!(
                child.stdin.take().unwrap(),
                "040000 tree {sub}\t{}",
                &c[..2]
            )
            .unwrap();
            let out = child.wait_with_output().unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let nc = git(&repo_dir, &["commit-tree", "-m", "fanout notes", &root]);
        git(&repo_dir, &["update-ref", "refs/notes/bullpen", nc.trim()]);
        assert_eq!(
            git(&repo_dir, &["notes", "--ref=bullpen", "show", &c]),
            "fanned\n"
        );

        repo.add_notes(
            "refs/notes/bullpen",
            &[(commits[0], "more".into()), (commits[1], "new".into())],
            "m",
        )
        .unwrap();
        assert_eq!(
            git(&repo_dir, &["notes", "--ref=bullpen", "show", &c]),
            "fanned\n\nmore\n"
        );
        assert_eq!(
            git(
                &repo_dir,
                &["notes", "--ref=bullpen", "show", &commits[1].to_string()]
            ),
            "new\n"
        );
        let listed = git(&repo_dir, &["notes", "--ref=bullpen", "list"]);
        assert_eq!(listed.lines().count(), 2, "{listed}");
    }

    #[test]
    fn unpublished_with_bare_remote() {
        let (tmp, repo_dir) = init_repo();
        let repo = Repo::discover(&repo_dir).unwrap();
        let base = repo.resolve_commit("HEAD").unwrap();
        // No remotes: everything is unpublished.
        let all = repo.unpublished(&[base]).unwrap();
        assert!(all.contains(&base));

        let remote = tmp.path().join("remote.git");
        git(
            tmp.path(),
            &["init", "-q", "--bare", remote.to_str().unwrap()],
        );
        git(
            &repo_dir,
            &["remote", "add", "origin", remote.to_str().unwrap()],
        );
        git(&repo_dir, &["push", "-q", "origin", "main"]);
        let local = commit_file(&repo_dir, "local.txt", "l\n");

        // A fresh Repo sees the new remote-tracking refs.
        let repo = Repo::discover(&repo_dir).unwrap();
        let un = repo.unpublished(&[base, local]).unwrap();
        assert!(!un.contains(&base), "{un:?}");
        assert!(un.contains(&local), "{un:?}");
        assert_eq!(repo.commits_between(local, &[base]).unwrap(), vec![local]);

        git(&repo_dir, &["push", "-q", "origin", "main"]);
        repo.fetch_all().unwrap();
        let un = repo.unpublished(&[base, local]).unwrap();
        assert!(un.is_empty(), "{un:?}");
        let missing: Oid = "1111111111111111111111111111111111111111".parse().unwrap();
        let un = repo.unpublished(&[base, missing]).unwrap();
        assert_eq!(un, HashSet::from([missing]));
    }

    #[test]
    fn worktrees_and_inspect_path() {
        let (tmp, repo_dir) = init_repo();
        let repo = Repo::discover(&repo_dir).unwrap();
        let base = repo.resolve_commit("HEAD").unwrap();
        let wt1 = tmp.path().join("wt1");
        let wt2 = tmp.path().join("wt2");
        repo.worktree_add_new_branch(&wt1, "bullpen/one", base)
            .unwrap();
        git(&repo_dir, &["branch", "existing"]);
        repo.worktree_add_existing(&wt2, "existing").unwrap();
        git(&repo_dir, &["worktree", "lock", wt2.to_str().unwrap()]);

        let wts = repo.worktrees().unwrap();
        assert_eq!(wts.len(), 3, "{wts:?}");
        assert_eq!(wts[0].path, repo_dir);
        assert_eq!(wts[0].admin_id, None);
        assert_eq!(wts[0].head_ref.as_deref(), Some("refs/heads/main"));
        let one = wts.iter().find(|w| w.path == wt1).expect("wt1 listed");
        assert_eq!(one.head_ref.as_deref(), Some("refs/heads/bullpen/one"));
        assert!(!one.locked && one.exists);
        let two = wts.iter().find(|w| w.path == wt2).expect("wt2 listed");
        assert!(two.locked);
        assert_eq!(two.head_ref.as_deref(), Some("refs/heads/existing"));

        assert_eq!(
            repo.inspect_path(&wt1).unwrap(),
            PathRepo::OurWorktree {
                head_ref: Some("refs/heads/bullpen/one".into())
            }
        );
        assert_eq!(
            repo.inspect_path(&repo_dir).unwrap(),
            PathRepo::OurWorktree {
                head_ref: Some("refs/heads/main".into())
            }
        );
        std::fs::create_dir_all(wt1.join("sub")).unwrap();
        match repo.inspect_path(&wt1.join("sub")).unwrap() {
            PathRepo::Other { description } => {
                assert!(description.contains("subdirectory"), "{description}")
            }
            other => panic!("{other:?}"),
        }
        let (_tmp2, other_repo) = init_repo();
        match repo.inspect_path(&other_repo).unwrap() {
            PathRepo::Other { description } => {
                assert!(description.contains("another repository"), "{description}")
            }
            other => panic!("{other:?}"),
        }
        let plain = tmp.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        if Command::new("git")
            .arg("-C")
            .arg(&plain)
            .args(["rev-parse", "--git-dir"])
            .output()
            .map(|o| !o.status.success())
            .unwrap_or(false)
        {
            assert_eq!(repo.inspect_path(&plain).unwrap(), PathRepo::None);
        }

        // Detached HEAD reads as None.
        git(&wt1, &["checkout", "-q", "--detach"]);
        assert_eq!(
            repo.inspect_path(&wt1).unwrap(),
            PathRepo::OurWorktree { head_ref: None }
        );

        // Removal goes through the CLI; locked ones refuse with git's message.
        let err = repo.worktree_remove(&wt2).unwrap_err().to_string();
        assert!(
            err.contains("`git worktree remove") && err.contains("failed (exit"),
            "{err}"
        );
        repo.worktree_remove(&wt1).unwrap();
        assert!(!wt1.exists());
        repo.worktree_prune().unwrap();
        assert_eq!(repo.worktrees().unwrap().len(), 2);
        // A failing add names argv and stderr.
        let err = repo
            .worktree_add_existing(&wt1, "no-such-branch")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("git worktree add") && err.contains("no-such-branch"),
            "{err}"
        );
    }

    #[test]
    fn dirt_counts_untracked_not_ignored() {
        let (tmp, repo_dir) = init_repo();
        std::fs::write(repo_dir.join(".gitignore"), "target/\n*.log\n").unwrap();
        git(&repo_dir, &["add", ".gitignore"]);
        git(&repo_dir, &["commit", "-q", "-m", "ignore"]);
        let repo = Repo::discover(&repo_dir).unwrap();
        let base = repo.resolve_commit("HEAD").unwrap();
        let wt = tmp.path().join("wt");
        repo.worktree_add_new_branch(&wt, "bullpen/dirt", base)
            .unwrap();

        assert_eq!(repo.dirt(&wt).unwrap(), Dirt::default());
        std::fs::create_dir_all(wt.join("target/debug")).unwrap();
        std::fs::write(wt.join("target/debug/x"), "x").unwrap();
        std::fs::write(wt.join("build.log"), "x").unwrap();
        assert!(repo.dirt(&wt).unwrap().is_clean());

        std::fs::write(wt.join("new.txt"), "n").unwrap();
        assert_eq!(
            repo.dirt(&wt).unwrap(),
            Dirt {
                modified: 0,
                staged: 0,
                untracked: 1
            }
        );
        std::fs::write(wt.join("a.txt"), "changed\n").unwrap();
        std::fs::write(wt.join("staged.txt"), "s").unwrap();
        git(&wt, &["add", "staged.txt"]);
        let d = repo.dirt(&wt).unwrap();
        assert_eq!(
            d,
            Dirt {
                modified: 1,
                staged: 1,
                untracked: 1
            }
        );
        // The main worktree is untouched.
        assert!(repo.dirt(&repo_dir).unwrap().is_clean());
    }

    #[test]
    fn config_string_reads_repo_config() {
        let (_tmp, repo_dir) = init_repo();
        git(&repo_dir, &["config", "bullpen.root", "/x/y"]);
        let repo = Repo::discover(&repo_dir).unwrap();
        assert_eq!(repo.config_string("bullpen.root").as_deref(), Some("/x/y"));
        assert_eq!(repo.config_string("bullpen.nothing"), None);
    }
}
