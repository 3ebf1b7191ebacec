//! Undoing a failed `git worktree add` (spawn, and resume's recreation).

use std::path::Path;

use crate::context::Ctx;
use crate::git::EntryRemoval;

/// After a failed `git worktree add`: remove what git may have left at `path` —
/// only inside the worktree root, and only because the caller checked under the
/// worktree lock that nothing was there before — and git's entry for that path
/// (the session's own, `<worktree root>/<id>`; no other entry is touched).
/// Best effort: problems are warnings, the caller reports the failure that
/// brought it here.
pub fn undo_failed_add(ctx: &Ctx, path: &Path) {
    if ctx.layout.is_confined(path) && path.symlink_metadata().is_ok() {
        if let Err(e) = std::fs::remove_dir_all(path) {
            ctx.ui
                .warn(format!("could not remove {}: {e}", path.display()));
        }
    }
    let entries = match ctx.repo.admin_entries_for(path) {
        Ok(e) => e,
        Err(e) => {
            ctx.ui.warn(format!("{e:#}"));
            return;
        }
    };
    for admin_id in entries {
        match ctx.repo.remove_admin_entry(&admin_id, path) {
            Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
            Ok(EntryRemoval::Refused(why)) => ctx.ui.warn(format!(
                "left git's worktree entry {admin_id} for {} in place: {why}",
                path.display()
            )),
            Err(e) => ctx.ui.warn(format!("{e:#}")),
        }
    }
}
