//! A spawn under a worktree root outside `$BULLPEN_HOME/worktrees/` leaves a
//! hint there for `ls --all-repos` (`sys::root_hints`); one that cannot be
//! left is said, never a failure of the spawn.

use crate::context::Ctx;

pub fn leave(ctx: &Ctx) {
    if let Err(e) = crate::sys::root_hints::record(&ctx.layout) {
        ctx.ui.warn(format!("{e:#}"));
    }
}
