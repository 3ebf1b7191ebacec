//! The git boundary. Nothing outside this module imports `gix` or spawns `git`.
//!
//! In-process (gix): discovery, worktree listing, records (objects + CAS ref
//! transactions with forced reflogs), notes, reachability, status.
//! Subprocess (git CLI, `LC_ALL=C`, argv in every error): `worktree add/remove`,
//! `fetch`, and `read-tree`/`status` against a temporary index for a worktree whose
//! admin entry is gone.
//!
//! Files: `records` (refs + objects), `store` (session records and provenance
//! notes on top of them), `history` (reachability), `notes`, `worktrees`
//! (registered worktrees, `.git` entries), `admin` (removing one session's admin
//! entry, never `git worktree prune`), `nested` (repositories inside a worktree),
//! `status` (dirt), and `cli` (the one runner every `git` subprocess goes through).

mod admin;
mod cli;
mod content;
mod history;
mod nested;
mod notes;
mod records;
mod status;
pub mod store;
#[cfg(test)]
mod tests;
mod worktrees;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub use crate::model::{Dirt, Oid};
pub use admin::EntryRemoval;
pub use cli::WorktreeRemoval;
pub use content::{Content, ContentQuery, IntegrationRef};
pub use status::{NestedTarget, StatusMap};

use worktrees::dot_git_file_target;

/// gix's id as ours. gix ids are always 20 or 32 bytes, which [`Oid`] holds.
pub(crate) fn oid(id: impl AsRef<gix::oid>) -> Oid {
    let bytes = id.as_ref().as_bytes();
    Oid::from_bytes(bytes)
        .unwrap_or_else(|| unreachable!("gix object ids are 20 or 32 bytes, not {}", bytes.len()))
}

/// Ours as gix's id. Fails for an id of a hash this build does not support
/// (a SHA-256 id from a forged record, say): never a panic on untrusted input.
pub(crate) fn gid(id: impl std::borrow::Borrow<Oid>) -> Result<gix::ObjectId> {
    let id = id.borrow();
    gix::ObjectId::try_from(id.as_bytes())
        .map_err(|_| anyhow::anyhow!("{id} is not a SHA-1 object id, the only kind bullpen reads"))
}

/// [`gid`] for many ids.
pub(crate) fn gids<'a>(ids: impl IntoIterator<Item = &'a Oid>) -> Result<Vec<gix::ObjectId>> {
    ids.into_iter().map(gid).collect()
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

/// The repository bullpen works on, discovered from a directory.
pub struct Repo {
    repo: gix::Repository,
    git: PathBuf,
    common_dir: PathBuf,
    main_worktree: PathBuf,
}

impl Repo {
    /// Discover the repository containing `cwd` (also from inside a linked worktree).
    /// Fails with a clear message outside a repository, in a bare repository, in a
    /// reftable or SHA-256 repository, with `core.worktree` set elsewhere, or when
    /// no `git` executable is on PATH.
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
        // What this build cannot work with is refused here, before gix opens the
        // repository (and fails in its own words) and before anything is created.
        refuse_unsupported(&canonical_or_self(&common_guess))?;

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
        Ok(oid(commit.id))
    }
}

fn canonical_or_self(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The common dir of a git dir: what its `commondir` file says (read whole, as
/// git does, trailing `\n`/`\r` stripped), or itself.
fn common_dir_of(git_dir: &Path) -> PathBuf {
    match std::fs::read(git_dir.join("commondir")) {
        Ok(content) => {
            let end = content
                .iter()
                .rposition(|b| !matches!(b, b'\n' | b'\r'))
                .map_or(0, |i| i + 1);
            if end == 0 {
                return git_dir.to_path_buf();
            }
            let p = worktrees::path_from_bytes(&content[..end]);
            if p.is_absolute() {
                p
            } else {
                git_dir.join(p)
            }
        }
        Err(_) => git_dir.to_path_buf(),
    }
}

/// The repository's own config file (`<common>/config`), parsed by gix's config
/// parser without includes (git reads the repository format from that file
/// alone); `None` when it cannot be read, and gix will say why when it opens it.
fn repository_config(common: &Path) -> Option<gix::config::File> {
    gix::config::File::from_path_no_includes(common.join("config"), gix::config::Source::Local).ok()
}

/// Whether the repository with this common dir stores its refs in reftable format.
fn is_reftable(common: &Path) -> bool {
    common.join("reftable").is_dir()
        || repository_config(common)
            .and_then(|c| c.string("extensions.refStorage"))
            .is_some_and(|v| v.eq_ignore_ascii_case(b"reftable"))
}

/// Refuse, with the cause and what to do, a repository this build cannot work in:
/// one whose objects are not SHA-1 (gix is built here with SHA-1 only), and one
/// with `core.worktree` (the main working tree is not where its git directory
/// is, so `git worktree` run there fails late, after the record was written).
fn refuse_unsupported(common: &Path) -> Result<()> {
    let Some(config) = repository_config(common) else {
        return Ok(());
    };
    let config_path = common.join("config");
    if let Some(format) = config.string("extensions.objectFormat") {
        if !format.eq_ignore_ascii_case(b"sha1") {
            return Err(crate::model::Error::failed(format!(
                "{} uses {} object ids (extensions.objectFormat in {}); this build of bullpen \
                 works in SHA-1 repositories only",
                common.display(),
                if format.eq_ignore_ascii_case(b"sha256") {
                    "SHA-256".into()
                } else {
                    String::from_utf8_lossy(&format)
                },
                config_path.display()
            ))
            .hint("nothing was changed; run bullpen in a SHA-1 repository (git's default object format)")
            .into());
        }
    }
    let worktree_config = config
        .boolean("extensions.worktreeConfig")
        .ok()
        .flatten()
        .unwrap_or(false);
    let main_worktree_config = worktree_config
        .then(|| {
            let path = common.join("config.worktree");
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Worktree)
                .ok()
                .map(|c| (c, path))
        })
        .flatten();
    for (file, path) in std::iter::once((config, config_path)).chain(main_worktree_config) {
        let Some(value) = file.string("core.worktree") else {
            continue;
        };
        let value = worktrees::path_from_bytes(&value);
        let work_tree = crate::model::paths::normalize(&common.join(&value));
        // Set to where the git directory is anyway (`<dir>/.git` → `<dir>`): harmless.
        if common.file_name() == Some(std::ffi::OsStr::new(".git"))
            && common.parent().map(canonical_or_self) == Some(canonical_or_self(&work_tree))
        {
            continue;
        }
        return Err(crate::model::Error::failed(format!(
            "{} sets core.worktree ({}, the working tree {}): bullpen works only where the \
             main working tree holds the git directory, or a `.git` file pointing at it",
            path.display(),
            value.display(),
            work_tree.display()
        ))
        .hint(format!(
            "nothing was changed; run bullpen in a clone (`git clone {} <new dir>`), whose \
             git directory is inside its working tree",
            common.display()
        ))
        .into());
    }
    Ok(())
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
