//! The git boundary. Nothing outside this module imports `gix` or spawns `git`.
//!
//! In-process (gix): discovery, worktree listing, records (objects + CAS ref
//! transactions, reflogs as git writes them), notes, reachability, status.
//! Subprocess (git CLI, `LC_ALL=C`, argv in every error): `worktree add/remove`,
//! `fetch`, and `read-tree`/`status` against a temporary index for a worktree whose
//! admin entry is gone.
//!
//! Files: `records` (refs + objects), `store` (session records and provenance
//! notes on top of them), `history` (reachability), `notes`, `worktrees`
//! (registered worktrees, `.git` entries), `admin` (removing one session's admin
//! entry, never `git worktree prune`), `nested` (repositories inside a worktree),
//! `status` (dirt), and `cli` (the one runner every `git` subprocess goes through).

// The floor below, under the names the code has always used.
use bullpen_model as model;
use bullpen_sys as sys;

mod admin;
pub mod cache;
mod cli;
mod content;
mod dirs;
mod discover;
mod env;
pub mod found;
mod fresh_index;
mod hash;
mod hidden;
mod history;
mod ignored;
mod made;
mod nested;
mod notes;
mod notes_push;
mod pinned;
mod records;
pub mod remote;
pub mod remote_cache;
mod resolve;
mod sandbox;
mod sandbox_guard;
mod shared;
mod special;
mod status;
pub mod store;
mod submodules;
#[cfg(test)]
mod tests;
mod threads;
mod uncommitted;
mod worktrees;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;

pub use crate::model::{Dirt, Oid};
pub use admin::{EntryRemoval, HalfRemoved};
pub use cli::WorktreeRemoval;
pub use content::{Content, ContentQuery, IntegrationRef};
pub use env::GitEnv;
pub use notes::NotesMerge;
pub use resolve::Unresolved;
pub use sandbox_guard::PutBack;
pub use status::{NestedTarget, StatusMap};

use discover::{canonical_or_self, common_dir_of};

use crate::model::Error;

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

impl DotGit {
    /// What the entry is, for a message.
    pub fn describe(&self) -> String {
        match self {
            DotGit::Absent => "no .git entry".to_string(),
            DotGit::Directory => "a .git directory: the top of a repository".to_string(),
            DotGit::Ours { admin_id, .. } => {
                format!("a .git file for this repository's worktree entry {admin_id}")
            }
            DotGit::Foreign { description } => description.clone(),
        }
    }
}

/// The repository bullpen works on, discovered from a directory (or named by
/// `GIT_DIR`).
pub struct Repo {
    repo: gix::Repository,
    git: PathBuf,
    common_dir: PathBuf,
    /// The main worktree (canonical); `None` for a repository without one (bare,
    /// or a linked worktree of a bare repository).
    main_worktree: Option<PathBuf>,
    /// `GIT_DIR` as given, when it named the repository.
    git_dir_env: Option<std::ffi::OsString>,
    /// The configuration of `git -c`, as gix takes it, for every repository
    /// bullpen opens in-process (the session worktrees too).
    cli_config: Vec<gix::bstr::BString>,
    /// The loose objects of the repository's object database, read first for
    /// what bullpen itself wrote (records: see [`Repo::read_file_at`]).
    loose: gix::odb::loose::Store,
}

impl Repo {
    /// Refuse a repository without a main working tree, for the commands that
    /// create, run or remove worktrees: with the cause, and what to do.
    pub fn require_worktree(&self) -> Result<()> {
        if self.main_worktree.is_some() {
            return Ok(());
        }
        let what = match self.repo.workdir() {
            None => format!("{} is a bare repository", self.common_dir.display()),
            Some(dir) => format!(
                "{} is a worktree of the bare repository {}",
                dir.display(),
                self.common_dir.display()
            ),
        };
        let mut e = Error::failed(format!(
            "{what}; bullpen runs sessions only in a repository with a main working tree"
        ))
        .hint(
            "in a repository without a main working tree bullpen only reads records: \
             `git bullpen ls`, `logs` and `path` work here; run this in a clone with a working tree",
        );
        if let Some(value) = &self.git_dir_env {
            e = e.hint(format!(
                "GIT_DIR is set (to {}); unset it to use the repository of the current directory",
                Path::new(value).display()
            ));
        }
        Err(e.into())
    }

    /// The canonical common git dir (shared by all worktrees).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The main worktree's top-level directory (canonical). For a repository
    /// without one (see [`Repo::require_worktree`]), the common dir, which is
    /// what git lists first in `git worktree list` there too.
    pub fn main_worktree(&self) -> &Path {
        self.main_worktree.as_deref().unwrap_or(&self.common_dir)
    }

    /// Whether the repository has no main working tree (a bare repository).
    pub fn is_bare(&self) -> bool {
        self.main_worktree.is_none()
    }

    /// A git config value (any scope, `git -c` included), `None` when unset.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Every value of a multi-valued git config key, in git's order (files from
    /// system to local, then `git -c`); an empty value clears the ones before
    /// it, as for git's own lists (`credential.helper`).
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        let values = self.repo.config_snapshot().strings(key).unwrap_or_default();
        let mut out = Vec::new();
        for v in values {
            if v.is_empty() {
                out.clear();
            } else {
                out.push(v.to_string());
            }
        }
        out
    }

    /// The subsection names of every `[<section> "<subsection>"]` in git config
    /// (`git -c` included), each once, in the order git reads them.
    pub fn config_subsections(&self, section: &str) -> Vec<String> {
        let snapshot = self.repo.config_snapshot();
        let mut out: Vec<String> = Vec::new();
        for s in snapshot
            .plumbing()
            .sections_by_name(section)
            .into_iter()
            .flatten()
        {
            if let Some(sub) = s.header().subsection_name() {
                let sub = sub.to_string();
                if !out.contains(&sub) {
                    out.push(sub);
                }
            }
        }
        out
    }

    /// A git config value with the key alone told apart: `None` when unset,
    /// `Some(None)` for a key given without `=` (git reads that as true).
    pub fn config_value(&self, key: &str) -> Option<Option<String>> {
        self.repo
            .config_snapshot()
            .plumbing()
            .string_implicit(key)
            .map(|v| v.map(|v| v.to_string()))
    }
}
