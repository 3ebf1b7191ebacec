//! The repository as `sys::layout` sees it (where bullpen puts things).

use std::path::Path;

use crate::sys::layout::RepoDirs;
use crate::Repo;

impl RepoDirs for Repo {
    fn config_string(&self, key: &str) -> Option<String> {
        Repo::config_string(self, key)
    }

    fn main_worktree(&self) -> &Path {
        Repo::main_worktree(self)
    }

    fn common_dir(&self) -> &Path {
        Repo::common_dir(self)
    }
}
