//! A new worktree made ready to work in, before the session's command runs:
//! the ignored files `.worktreeinclude` names, copied from the main worktree,
//! then the `bullpen.setup` commands (`run::setup`).

use std::path::Path;

use anyhow::Result;

use super::include::Include;
use crate::context::Ctx;
use crate::model::Record;

/// Copy what `include` names into the session's new worktree, then run setup
/// (unless `setup` is false: `--no-setup`). The first failure is returned; the
/// caller removes the worktree.
pub fn make_ready(
    ctx: &Ctx,
    record: &Record,
    include: &Option<Include>,
    setup: bool,
) -> Result<()> {
    if let Some(include) = include {
        include.copy_into(ctx, &record.id, Path::new(&record.worktree))?;
    }
    if setup {
        crate::run::setup::run_setup(ctx, record)?;
    }
    Ok(())
}
