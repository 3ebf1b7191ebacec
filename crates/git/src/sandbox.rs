//! The parts of the git directory a sandboxed session's command writes to
//! commit on its own branch (`model::sandbox::roots` says why each).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{DotGit, Repo};
use crate::model::SessionId;

/// The session's own places in the git directory.
pub struct SessionGitDirs {
    /// `<common>/worktrees/<name>`, the worktree's admin directory.
    pub admin: PathBuf,
}

impl Repo {
    /// The admin directory `git worktree add` makes for a new worktree whose
    /// directory is named `name` (while no entry has that name).
    pub fn planned_admin_dir(&self, name: &str) -> PathBuf {
        self.common_dir().join("worktrees").join(name)
    }

    /// The admin directory of the session's worktree `worktree` (its `.git`
    /// file must point into this repository's `worktrees/`), after making sure
    /// that the directory of its loose ref and its reflog exist: a commit then
    /// needs to create no directory outside the sandbox (a branch git packed
    /// has no loose file, and an empty reflog is one git appends to).
    pub fn sandbox_dirs(&self, id: &SessionId, worktree: &Path) -> Result<SessionGitDirs> {
        let admin = match self.dot_git(worktree) {
            DotGit::Ours {
                admin_id,
                admin_exists: true,
            } => self.common_dir().join("worktrees").join(admin_id),
            other => bail!(
                "cannot sandbox session {id}: its worktree {} is not one of this repository's \
                 ({})",
                worktree.display(),
                other.describe()
            ),
        };
        let refs = self.common_dir().join("refs/heads/bullpen");
        std::fs::create_dir_all(&refs)
            .with_context(|| format!("cannot create {}", refs.display()))?;
        let logs = self.common_dir().join("logs/refs/heads/bullpen");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
        let reflog = logs.join(id.as_str());
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&reflog)
            .with_context(|| format!("cannot create the reflog {}", reflog.display()))?;
        Ok(SessionGitDirs { admin })
    }
}
