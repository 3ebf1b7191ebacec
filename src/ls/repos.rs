//! `ls --all-repos` and `wait --all-repos`: the repositories that have
//! worktrees under the roots bullpen knows, found from the worktrees
//! themselves. The roots: every default one under `$BULLPEN_HOME/worktrees/`,
//! every other one a spawn used (`sys::root_hints`), the current repository's,
//! and each `--root`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::context::Ctx;
use crate::model::paths::normalize;
use crate::model::Error;
use crate::ui::Ui;

/// `--root <dir>` (repeatable): also look for worktrees directly inside `dir`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct Roots {
    /// With --all-repos: also a worktree root of your own (as
    /// bullpen.worktreeRoot names one); repeatable.
    #[arg(
        long = "root",
        value_name = "DIR",
        value_hint = clap::ValueHint::DirPath,
        requires = "all_repos"
    )]
    pub roots: Vec<PathBuf>,
}

/// A context for each repository found (the current one, if any, first),
/// each once. One that cannot be opened is reported and skipped; a `--root`
/// that cannot be read is an error.
pub fn repositories<'ui>(cwd: &Path, extra: &Roots, ui: &'ui Ui) -> Result<Vec<Ctx<'ui>>> {
    let mut roots = Vec::new();
    for dir in &extra.roots {
        let dir = normalize(&cwd.join(dir));
        if let Err(e) = std::fs::read_dir(&dir) {
            return Err(Error::failed(format!("--root {}: {e}", dir.display()))
                .hint("name a worktree root: a directory whose entries are worktrees")
                .into());
        }
        roots.push(dir);
    }
    let here = Ctx::discover_records(cwd, ui).ok();
    roots.extend(crate::sys::layout::default_roots()?);
    match crate::sys::root_hints::hinted() {
        Ok(hinted) => roots.extend(hinted),
        Err(e) => ui.warn(format!("{e:#}")),
    }
    if let Some(h) = &here {
        roots.push(h.layout.worktree_root.clone());
    }
    roots.sort();
    roots.dedup();
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
