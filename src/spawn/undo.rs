//! Undoing a failed `git worktree add` (spawn, and resume's recreation).

use std::path::Path;

use crate::context::Ctx;

/// After a failed `git worktree add`: remove what git may have left at `path` —
/// only inside the worktree root, and only because the caller checked under the
/// worktree lock that nothing was there before — and prune git's entry for it.
/// Best effort: problems are warnings, the caller reports the failure that
/// brought it here.
pub fn undo_failed_add(ctx: &Ctx, path: &Path) {
    if ctx.layout.is_confined(path) && path.symlink_metadata().is_ok() {
        if let Err(e) = std::fs::remove_dir_all(path) {
            ctx.ui
                .warn(format!("could not remove {}: {e}", path.display()));
        }
    }
    if let Err(e) = ctx.repo.worktree_prune() {
        ctx.ui.warn(format!("{e:#}"));
    }
}
