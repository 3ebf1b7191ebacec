//! What every command needs: the repository, where things go, and where to print.

use std::path::Path;

use anyhow::Result;

use crate::git::Repo;
use crate::sys::layout::Layout;
use crate::ui::Ui;

pub struct Ctx<'ui> {
    pub repo: Repo,
    pub layout: Layout,
    pub ui: &'ui Ui,
}

impl<'ui> Ctx<'ui> {
    /// The repository of `cwd`, for a command that creates, runs or removes
    /// worktrees: a repository without a main working tree is refused.
    pub fn discover(cwd: &Path, ui: &'ui Ui) -> Result<Ctx<'ui>> {
        let ctx = Ctx::discover_records(cwd, ui)?;
        ctx.repo.require_worktree()?;
        Ok(ctx)
    }

    /// The repository of `cwd`, for a command that only reads records (`ls`,
    /// `logs`, `path`): a bare repository is fine (say, a remote that sessions
    /// were pushed to).
    pub fn discover_records(cwd: &Path, ui: &'ui Ui) -> Result<Ctx<'ui>> {
        let repo = Repo::discover(cwd)?;
        ui.configure_color(|key| repo.config_value(key))?;
        let layout = Layout::for_repo(&repo)?;
        Ok(Ctx { repo, layout, ui })
    }
}
