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
    pub fn discover(cwd: &Path, ui: &'ui Ui) -> Result<Ctx<'ui>> {
        let repo = Repo::discover(cwd)?;
        let layout = Layout::for_repo(&repo)?;
        Ok(Ctx { repo, layout, ui })
    }
}
