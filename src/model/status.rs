//! What makes a worktree not clean, as counts.

/// Counts of what makes a worktree not clean. Ignored files never count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirt {
    pub modified: usize,
    pub staged: usize,
    pub untracked: usize,
}

impl Dirt {
    pub fn is_clean(&self) -> bool {
        self.modified == 0 && self.staged == 0 && self.untracked == 0
    }
}
