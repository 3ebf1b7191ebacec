//! `ls --all-repos`: the repositories that have worktrees under the roots
//! bullpen knows (every default root under `$BULLPEN_HOME/worktrees/`, and the
//! current repository's), found from the worktrees themselves.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::context::Ctx;
use crate::ui::Ui;

/// A context for each repository found (the current one, if any, first),
/// each once. One that cannot be opened is reported and skipped.
pub fn repositories<'ui>(cwd: &Path, ui: &'ui Ui) -> Result<Vec<Ctx<'ui>>> {
    let here = Ctx::discover_records(cwd, ui).ok();
    let mut roots = crate::sys::layout::default_roots()?;
    if let Some(h) = &here {
        roots.push(h.layout.worktree_root.clone());
    }
    let mut out: Vec<Ctx<'ui>> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    if let Some(h) = here {
        seen.push(canonical(h.repo.common_dir()));
        out.push(h);
    }
    for (common, worktree) in crate::git::found::repositories_under(&roots) {
        if seen.contains(&common) {
            continue;
        }
        match Ctx::discover_records(&worktree, ui) {
            Ok(ctx) => {
                seen.push(common);
                out.push(ctx);
            }
            Err(e) => ui.warn(format!(
                "skipping the repository of {}: {e:#}",
                worktree.display()
            )),
        }
    }
    Ok(out)
}

fn canonical(p: &Path) -> PathBuf {
    crate::sys::paths::canonical_or_self(p)
}
