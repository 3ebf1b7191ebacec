//! Where bullpen puts things on disk: the worktree root, logs, the lock file.
//! Pure path arithmetic plus the one environment/config lookup that feeds it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::command::quoted;
use crate::model::config;
use crate::model::paths::normalize;
use crate::model::{Error, SessionId};

/// What a layout is computed from: the repository's directories and its
/// `bullpen.worktreeRoot`. The git crate implements it for its `Repo`, so this
/// crate needs no git.
pub trait RepoDirs {
    /// A git config value, if set.
    fn config_string(&self, key: &str) -> Option<String>;
    /// The main working tree.
    fn main_worktree(&self) -> &Path;
    /// The common git directory.
    fn common_dir(&self) -> &Path;
}

#[derive(Clone, Debug)]
pub struct Layout {
    /// Every session's worktree lies strictly inside this directory.
    pub worktree_root: PathBuf,
    /// `BULLPEN_HOME` (or the platform data dir).
    pub home: PathBuf,
    /// `<common git dir>/bullpen`: bullpen's private files that belong to the repo.
    pub state_dir: PathBuf,
}

impl Layout {
    pub fn for_repo(repo: &impl RepoDirs) -> Result<Layout> {
        let home = bullpen_home()?;
        let worktree_root = match repo.config_string(config::WORKTREE_ROOT) {
            Some(dir) if !dir.trim().is_empty() => {
                let dir = expand_tilde(dir.trim());
                if !dir.is_absolute() {
                    return Err(Error::failed(format!(
                        "git config {} is {}, which is not an absolute path",
                        config::WORKTREE_ROOT,
                        quoted(&dir.to_string_lossy())
                    ))
                    .hint(format!(
                        "set it to an absolute directory (a leading ~/ is expanded), e.g. \
                         `git config {} ~/worktrees/<repo>`, or unset it",
                        config::WORKTREE_ROOT
                    ))
                    .into());
                }
                normalize(&dir)
            }
            _ => home
                .join("worktrees")
                .join(repo_key(repo.main_worktree(), repo.common_dir())),
        };
        Ok(Layout {
            worktree_root,
            home,
            state_dir: repo.common_dir().join("bullpen"),
        })
    }

    pub fn worktree_path(&self, id: &SessionId) -> PathBuf {
        self.worktree_root.join(id.as_str())
    }

    /// The background log of a session.
    pub fn log_path(&self, id: &SessionId) -> PathBuf {
        self.state_dir.join("logs").join(format!("{id}.log"))
    }

    /// What this machine knows about a session (`trust::local`): never fetched.
    pub fn local_dir(&self, id: &SessionId) -> PathBuf {
        self.state_dir.join("local").join(id.as_str())
    }

    /// This clone's id (`trust::local::clone_id`): never fetched, never pushed.
    pub fn clone_id_path(&self) -> PathBuf {
        self.state_dir.join("clone-id")
    }

    /// The lock `fetch` and `push` hold while they move a remote's refs.
    pub fn remote_lock_path(&self) -> PathBuf {
        self.state_dir.join("remote.lock")
    }

    /// The per-repository lock held around `git worktree add`.
    pub fn lock_path(&self) -> PathBuf {
        self.state_dir.join("worktree.lock")
    }
}

/// The default worktree roots of every repository on this machine: the
/// directories under `$BULLPEN_HOME/worktrees/` (`ls --all-repos`).
pub fn default_roots() -> Result<Vec<PathBuf>> {
    let dir = bullpen_home()?.join("worktrees");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut roots: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();
    Ok(roots)
}

pub(crate) fn bullpen_home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os(config::ENV_HOME).filter(|h| !h.is_empty()) {
        let h = PathBuf::from(h);
        if !h.is_absolute() {
            return Err(Error::failed(format!(
                "{} is {}, which is not an absolute path",
                config::ENV_HOME,
                quoted(&h.to_string_lossy())
            ))
            .hint(format!(
                "set {} to an absolute directory, or unset it for {}",
                config::ENV_HOME,
                "the default (~/.local/share/bullpen on Linux)"
            ))
            .into());
        }
        return Ok(normalize(&h));
    }
    let dirs = directories::ProjectDirs::from("", "", "bullpen").context(
        "cannot find a home directory for bullpen's data; set BULLPEN_HOME to an absolute path",
    )?;
    Ok(dirs.data_dir().to_path_buf())
}

fn expand_tilde(s: &str) -> PathBuf {
    match (s.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(s),
    }
}

/// `<main worktree dir name>-<8 hex of a stable hash of the common dir>`, so two
/// clones named `app` never share a folder.
pub fn repo_key(main_worktree: &Path, common_dir: &Path) -> String {
    let name = main_worktree
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_owned());
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{name}-{:08x}",
        fnv1a(common_dir.as_os_str().as_encoded_bytes()) as u32
    )
}

/// FNV-1a: stable across Rust versions, unlike `DefaultHasher`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_keys_differ_by_common_dir() {
        let a = repo_key(Path::new("/a/app"), Path::new("/a/app/.git"));
        let b = repo_key(Path::new("/b/app"), Path::new("/b/app/.git"));
        assert!(a.starts_with("app-") && b.starts_with("app-"));
        assert_ne!(a, b);
        assert_eq!(a, repo_key(Path::new("/a/app"), Path::new("/a/app/.git")));
    }
}
