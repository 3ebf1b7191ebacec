//! Discovery: the repository of a directory, as git finds it (`GIT_DIR`,
//! `GIT_COMMON_DIR`, `git -c`), and what this build refuses (reftable,
//! SHA-256, `core.worktree` elsewhere) before anything is opened or created.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::Error;
use crate::worktrees::{self, dot_git_file_target};
use crate::{GitEnv, Repo};

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
            // The main repository itself: its worktree is the main one (no
            // second open of the same repository).
            Some(dir) if repo.git_dir() == repo.common_dir() => {
                Some(std::fs::canonicalize(dir).with_context(|| {
                    format!("could not resolve the main worktree {}", dir.display())
                })?)
            }
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

pub(crate) fn canonical_or_self(path: &Path) -> PathBuf {
    crate::sys::paths::canonical_or_self(path)
}

/// The common dir of a git dir: what its `commondir` file says (read whole, as
/// git does, trailing `\n`/`\r` stripped), or itself.
pub(crate) fn common_dir_of(git_dir: &Path) -> PathBuf {
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
