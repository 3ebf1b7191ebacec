//! Whether the main worktree holds uncommitted changes to tracked files, asked
//! on a thread of its own while spawn makes the new worktree (spawn says that
//! they stay behind).

use std::thread::JoinHandle;

use super::Repo;

impl Repo {
    /// When bullpen runs in the main worktree: a thread that answers whether
    /// its tracked files differ from HEAD (staged or not; untracked files
    /// aside, as `git stash` leaves them); `None` in any other worktree.
    pub fn main_worktree_changes(&self) -> Option<JoinHandle<bool>> {
        let main = self.main_worktree.clone()?;
        let here = self.repo.workdir().and_then(|w| w.canonicalize().ok())?;
        if here != main {
            return None;
        }
        let config = self.cli_config.clone();
        Some(std::thread::spawn(move || {
            let options = gix::open::Options::default().cli_overrides(config);
            gix::open_opts(&main, options)
                .ok()
                .and_then(|repo| repo.is_dirty().ok())
                .unwrap_or(false)
        }))
    }
}
