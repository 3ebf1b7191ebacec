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

// The floor below, under the names the code has always used.
use bullpen_model as model;
use bullpen_sys as sys;

mod admin;
pub mod cache;
mod cli;
mod content;
mod dirs;
mod env;
mod hash;
mod history;
mod made;
mod nested;
mod notes;
mod records;
pub mod remote;
mod status;
pub mod store;
#[cfg(test)]
mod tests;
mod worktrees;

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use crate::model::{Dirt, Oid};
pub use admin::{EntryRemoval, HalfRemoved};
pub use cli::WorktreeRemoval;
pub use content::{Content, ContentQuery, IntegrationRef};
pub use env::GitEnv;
pub use notes::NotesMerge;
pub use status::{NestedTarget, StatusMap};

use crate::model::Error;

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
    /// The repository of `cwd`, as git finds it: the one `GIT_DIR` names (`git
    /// --git-dir`), else the one containing `cwd` (also from inside a linked
    /// worktree, honouring `GIT_CEILING_DIRECTORIES`), with the configuration
    /// of `git -c` (`GIT_CONFIG_PARAMETERS`; gix reads `GIT_CONFIG_COUNT`). See
    /// `env.rs` for how bullpen keeps every git it runs on the same repository.
    ///
    /// Fails with the cause and what to do outside a repository, in a reftable
    /// or SHA-256 repository, with `core.worktree` set elsewhere, with a
    /// `GIT_COMMON_DIR` that disagrees with the repository, or when no `git`
    /// executable is on PATH. A bare repository opens (records can be read
    /// there); [`Repo::require_worktree`] refuses it for commands that need one.
    pub fn discover(cwd: &Path) -> Result<Repo> {
        Repo::discover_with(cwd, &GitEnv::current())
    }

    /// [`Repo::discover`] with the environment given.
    pub fn discover_with(cwd: &Path, env: &GitEnv) -> Result<Repo> {
        let git = which::which("git").map_err(|_| {
            Error::failed("git not found on PATH")
                .hint("bullpen is a git extension: install git, or put it on PATH")
        })?;
        let cli_config = cli_config(env)?;

        let git_dir = match &env.git_dir {
            Some(value) => explicit_git_dir(cwd, value)?,
            None => discover_git_dir(cwd)?,
        };
        let common_guess = common_dir_of(&git_dir);
        if let Some(value) = &env.common_dir {
            check_common_dir(cwd, value, &git_dir, &common_guess)?;
        }
        if is_reftable(&common_guess) {
            return Err(reftable(&canonical_or_self(&common_guess)));
        }
        // What this build cannot work with is refused here, before gix opens the
        // repository (and fails in its own words) and before anything is created.
        refuse_unsupported(&canonical_or_self(&common_guess))?;

        let trust = gix::sec::Trust::from_path_ownership(&git_dir)
            .with_context(|| format!("cannot read the owner of {}", git_dir.display()))?;
        let options =
            <gix::open::Options as gix::sec::trust::DefaultForLevel>::default_for_level(trust)
                .cli_overrides(cli_config.clone())
                .open_path_as_is(true);
        let mut repo = gix::open_opts(&git_dir, options).map_err(|e| {
            let common = canonical_or_self(&common_guess);
            match e.downcast_any_ref::<gix::config::parse::Error>() {
                Some(bad) => bad_config_line(&common, bad.line_number()),
                None => anyhow::Error::new(e).context(format!(
                    "cannot open the git repository {}",
                    git_dir.display()
                )),
            }
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
        let main_worktree = match repo.workdir() {
            None => None,
            Some(_) => {
                let main_repo = repo
                    .main_repo()
                    .context("could not open the repository of the main worktree")?;
                match main_repo.workdir() {
                    None => None,
                    Some(dir) => Some(std::fs::canonicalize(dir).with_context(|| {
                        format!("could not resolve the main worktree {}", dir.display())
                    })?),
                }
            }
        };

        // The loose objects of the very object database gix reads.
        let loose = gix::odb::loose::Store::at(
            crate::sys::paths::canonical_or_self(repo.objects.store_ref().path()),
            repo.object_hash(),
        );
        Ok(Repo {
            repo,
            git,
            common_dir,
            main_worktree,
            git_dir_env: env.git_dir.clone(),
            cli_config,
            loose,
        })
    }

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

    /// Resolve a revision (e.g. `HEAD`, `main~2`, an oid) to a commit; when it
    /// does not name one, why, in git's terms (see [`Unresolved`]).
    pub fn resolve_commit(&self, rev: &str) -> std::result::Result<Oid, Unresolved> {
        let id = match self.repo.rev_parse_single(rev) {
            Ok(id) => id,
            Err(_) => {
                // `HEAD` on a branch with no commit yet: from `HEAD`, or by the
                // branch's name, there is nothing to start from.
                let unborn = self.repo.head().ok().filter(|h| h.is_unborn());
                let branch = unborn
                    .as_ref()
                    .and_then(|h| h.referent_name())
                    .map(|n| n.shorten().to_string());
                if unborn.is_some() && (names_head(rev) || branch.as_deref() == Some(rev)) {
                    return Err(Unresolved::NoCommitYet { branch });
                }
                return Err(Unresolved::Unknown);
            }
        };
        let object = id.object().map_err(|e| {
            Unresolved::Unreadable(
                anyhow::Error::new(e).context(format!("could not read the object '{rev}' names")),
            )
        })?;
        let kind = object.kind;
        object
            .peel_to_commit()
            .map(|commit| oid(commit.id))
            .map_err(|_| Unresolved::NotACommit {
                kind: String::from_utf8_lossy(kind.as_bytes()).into_owned(),
            })
    }
}

/// Why a revision names no commit.
#[derive(Debug)]
pub enum Unresolved {
    /// It starts from `HEAD`, and `HEAD` is on a branch with no commit yet.
    NoCommitYet { branch: Option<String> },
    /// No such revision (an unknown name, `main~5` past the first commit, ...).
    Unknown,
    /// It names an object of another kind (`tree`, `blob`, a `tag` of one).
    NotACommit { kind: String },
    /// The object could not be read.
    Unreadable(anyhow::Error),
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::NoCommitYet { branch: Some(b) } => {
                write!(f, "there is no commit yet (branch {b} has none)")
            }
            Unresolved::NoCommitYet { branch: None } => f.write_str("there is no commit yet"),
            Unresolved::Unknown => f.write_str("unknown revision"),
            Unresolved::NotACommit { kind } => write!(f, "a {kind}, not a commit"),
            Unresolved::Unreadable(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for Unresolved {}

/// Whether a revision starts from `HEAD` (`HEAD`, `@`, `HEAD~2`, `@^`, ...).
fn names_head(rev: &str) -> bool {
    let rest = rev
        .strip_prefix("HEAD")
        .or_else(|| rev.strip_prefix('@'))
        .unwrap_or("x");
    rest.is_empty() || rest.starts_with(['~', '^', '@', ':'])
}

/// The configuration of `git -c` (`GIT_CONFIG_PARAMETERS`) as gix takes it:
/// `key=value`, or `key` alone for a boolean true. gix splits at the first `=`,
/// as `git -c` does, so a key holding `=` (which only a hand-written
/// `GIT_CONFIG_PARAMETERS` can give, in a subsection bullpen never reads) is
/// left to the git commands, which get the variable as it is.
fn cli_config(env: &GitEnv) -> Result<Vec<gix::bstr::BString>> {
    use std::os::unix::ffi::OsStrExt;
    let Some(text) = &env.config_parameters else {
        return Ok(Vec::new());
    };
    let parameters = crate::model::params::parse(text.as_bytes()).map_err(|e| {
        Error::failed(format!("unable to parse command-line config: {e}")).hint(
            "GIT_CONFIG_PARAMETERS is what `git -c <key>=<value>` passes to the commands it runs; \
             correct or unset it",
        )
    })?;
    Ok(parameters
        .into_iter()
        .filter(|p| !p.key.contains(&b'='))
        .map(|p| {
            let mut entry = p.key;
            if let Some(value) = p.value {
                entry.push(b'=');
                entry.extend(value);
            }
            entry.into()
        })
        .collect())
}

/// The git dir `GIT_DIR` names (relative to `cwd`, as git takes it; a `.git`
/// file is followed), or why it is not one, in git's words.
fn explicit_git_dir(cwd: &Path, value: &std::ffi::OsStr) -> Result<PathBuf> {
    let shown = Path::new(value).display().to_string();
    let not_a_repository = || -> anyhow::Error {
        Error::failed(format!("not a git repository: '{shown}'"))
            .hint(format!(
                "GIT_DIR (set by `git --git-dir` too) is {shown}; point it at a repository's \
                 git directory, or unset it to use the repository of the current directory"
            ))
            .into()
    };
    if value.is_empty() {
        return Err(not_a_repository());
    }
    let path = cwd.join(value);
    let path = match path.metadata() {
        Ok(m) if m.is_file() => {
            gix::discover::path::from_gitdir_file(&path).map_err(|_| not_a_repository())?
        }
        Ok(_) => path,
        Err(_) => return Err(not_a_repository()),
    };
    // gix cannot read reftable repositories: say so before it fails in its words.
    let common = common_dir_of(&path);
    if is_reftable(&common) {
        return Err(reftable(&canonical_or_self(&common)));
    }
    gix::discover::is_git(&path).map_err(|_| not_a_repository())?;
    Ok(path)
}

/// The git dir of the repository containing `cwd`, found as git finds it.
fn discover_git_dir(cwd: &Path) -> Result<PathBuf> {
    // gix cannot read reftable repositories: find out ourselves before gix gets a chance to fail.
    if let Some(common) = find_reftable_upwards(cwd) {
        return Err(reftable(&common));
    }
    let mut options = gix::discover::upwards::Options {
        // Like git: a GIT_CEILING_DIRECTORIES that does not contain `cwd` is no error.
        match_ceiling_dir_or_error: false,
        ..Default::default()
    }
    .apply_environment();
    if let Some(value) = std::env::var_os("GIT_DISCOVERY_ACROSS_FILESYSTEM") {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(b) = gix::config::Boolean::try_from(gix::bstr::BString::from(value.as_bytes())) {
            options.cross_fs = b.0;
        }
    }
    match gix::discover::upwards_opts(cwd, options) {
        Ok((path, _trust)) => Ok(path.into_repository_and_work_tree_directories().0),
        Err(err) => {
            if let Some(gix::discover::upwards::Error::NoTrustedGitRepository {
                candidate, ..
            }) = err.downcast_any_ref::<gix::discover::upwards::Error>()
            {
                return Err(Error::failed(format!(
                    "the git repository at {} is not trusted (not owned by the current user)",
                    candidate.display()
                ))
                .hint(format!(
                    "if it is yours to use: git config --global --add safe.directory {}",
                    candidate.display()
                ))
                .into());
            }
            if err
                .downcast_any_ref::<gix::discover::upwards::Error>()
                .is_some()
                || err.is_not_found()
            {
                return Err(Error::failed(format!(
                    "not a git repository (or any parent up to /): {}",
                    cwd.display()
                ))
                .hint("run bullpen inside a git repository (or name one with `git --git-dir`)")
                .into());
            }
            Err(anyhow::Error::new(err).context(format!(
                "could not look for a git repository from {}",
                cwd.display()
            )))
        }
    }
}

/// `GIT_COMMON_DIR` is honoured when it names the common dir the repository at
/// `git_dir` has anyway. gix opens a git dir with the common dir its
/// `commondir` file names and no other, so one that disagrees is refused
/// rather than followed by git alone.
fn check_common_dir(
    cwd: &Path,
    value: &std::ffi::OsStr,
    git_dir: &Path,
    common: &Path,
) -> Result<()> {
    let given = cwd.join(value);
    if canonical_or_self(&given) == canonical_or_self(common) {
        return Ok(());
    }
    Err(Error::failed(format!(
        "GIT_COMMON_DIR names {}, but the common directory of {} is {}; bullpen follows \
         GIT_COMMON_DIR only where it agrees",
        Path::new(value).display(),
        git_dir.display(),
        canonical_or_self(common).display()
    ))
    .hint("unset GIT_COMMON_DIR")
    .into())
}

fn reftable(common: &Path) -> anyhow::Error {
    Error::failed(format!(
        "{} stores its refs in the reftable format, which bullpen cannot read yet",
        common.display()
    ))
    .hint(
        "nothing was changed; convert the repository with `git refs migrate --ref-format=files` \
         (git 2.46 or later), or work in a clone made with `git clone --ref-format=files`",
    )
    .into()
}

fn canonical_or_self(path: &Path) -> PathBuf {
    crate::sys::paths::canonical_or_self(path)
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

/// A config file git cannot parse either, as git words it (`bad config line 6 in
/// file .git/config`). gix names the line but not the file: it is the
/// repository's own when that one does not parse, else one of the others.
fn bad_config_line(common: &Path, line: usize) -> anyhow::Error {
    let own = common.join("config");
    let own_is_bad = matches!(
        gix::config::File::from_path_no_includes(own.clone(), gix::config::Source::Local),
        Err(e) if e.downcast_any_ref::<gix::config::parse::Error>().is_some()
    );
    match own_is_bad {
        true => Error::failed(format!("bad config line {line} in file {}", own.display()))
            .hint("correct it, or see what git says: git config --list --show-origin"),
        false => Error::failed(format!("bad config line {line} in a git config file")).hint(
            "`git config --list --show-origin` names the file (a global, system or included one)",
        ),
    }
    .into()
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
