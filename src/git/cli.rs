//! The git CLI: the one runner every `git` subprocess goes through, and the
//! commands bullpen leaves to git itself (`worktree add/remove/prune`, `fetch`).

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::{Oid, Repo};

impl Repo {
    /// `git -C <dir> <args>` through [`Repo::run_git_env`], with no extra environment.
    fn run_git(&self, dir: Option<&Path>, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>> {
        self.run_git_env(dir, args, &[])
    }

    /// The one place that runs the git CLI: `git -C <dir> <args>` with `LC_ALL=C`,
    /// plus `env` for the child, stdin from /dev/null and output captured. Returns
    /// stdout; a failure names the argv and carries git's stderr. `dir` defaults
    /// to the main worktree.
    pub(super) fn run_git_env(
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

    /// `git worktree remove --force <path>`: the removal `rm --force` asks for,
    /// discarding modified and untracked files (once `--force`: a locked
    /// worktree is still refused, and git never removes one with submodules).
    pub fn worktree_remove_forced(&self, path: &Path) -> Result<()> {
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "remove".as_ref(),
                "--force".as_ref(),
                path.as_os_str(),
            ],
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

    /// `git gc --auto --quiet`: git's own housekeeping (packs loose objects once
    /// there are many). git runs it after commits and fetches; bullpen's record
    /// writes are in-process and never trigger it.
    pub fn gc_auto(&self) -> Result<()> {
        self.run_git(
            None,
            &["gc".as_ref(), "--auto".as_ref(), "--quiet".as_ref()],
        )
        .map(drop)
    }
}
