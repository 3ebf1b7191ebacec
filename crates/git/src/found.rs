//! Repositories found from their worktrees (`ls --all-repos`): each linked
//! worktree's `.git` file names its admin entry, whose `commondir` names the
//! repository. Nothing is remembered between runs, so nothing goes stale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::worktrees::dot_git_file_target;

/// Pure enough: the repositories (by canonical common directory) that have a
/// linked worktree directly inside one of `roots`, each with one such worktree
/// to open it from. A root that cannot be read, a worktree whose entry is gone,
/// are skipped.
pub fn repositories_under(roots: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    let mut found: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for root in roots {
        let Ok(dir) = std::fs::read_dir(root) else {
            continue;
        };
        for entry in dir.flatten() {
            let worktree = entry.path();
            if let Some(common) = common_dir_of(&worktree) {
                found.entry(common).or_insert(worktree);
            }
        }
    }
    found.into_iter().collect()
}

/// The common directory of the repository `worktree` is a linked worktree of.
fn common_dir_of(worktree: &Path) -> Option<PathBuf> {
    let admin = dot_git_file_target(worktree)?;
    let text = std::fs::read_to_string(admin.join("commondir")).ok()?;
    let common = Path::new(text.trim_end_matches(['\n', '\r']));
    let common = if common.is_absolute() {
        common.to_path_buf()
    } else {
        admin.join(common)
    };
    std::fs::canonicalize(common).ok()
}
