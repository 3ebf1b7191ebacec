//! Where a recorded worktree path must never be: outside its root
//! (`trust::confined`), or at a place of the user's (`/`, `$HOME`, the
//! repository, its git dir).

use std::path::Path;

use crate::model::paths::Unconfined;

/// Places a recorded worktree path must never be, besides outside the root.
pub struct Places<'a> {
    pub worktree_root: &'a Path,
    pub home: Option<&'a Path>,
    /// The main worktree.
    pub repo: &'a Path,
    /// The common git dir.
    pub git_dir: &'a Path,
}

/// Pure: why a recorded worktree path must never be acted on, or `None`:
/// its confinement to the worktree root (`trust::confined::ConfinedPath`,
/// `confined`), and the places it must never be, as recorded and, when it
/// exists, as resolved (`canonical`, against the canonical places).
pub fn untrusted(
    path: &Path,
    places: &Places,
    canonical: Option<(&Path, &Places)>,
    confined: Result<(), &Unconfined>,
) -> Option<String> {
    let shown = path.display();
    if let Err(Unconfined::NotNormal) = confined {
        return Some(format!("{shown} is not an absolute, normalised path"));
    }
    if let Some(why) = special(path, places) {
        return Some(why);
    }
    let root = places.worktree_root;
    if let Err(Unconfined::Outside) = confined {
        return Some(format!(
            "{shown} is outside the worktree root {} (did bullpen.worktreeRoot change?)",
            root.display()
        ));
    }
    if let Some((resolved, cplaces)) = canonical {
        if resolved != path {
            if let Some(why) = special(resolved, cplaces) {
                return Some(format!("{shown} resolves to {}: {why}", resolved.display()));
            }
        }
    }
    match confined {
        Ok(()) => None,
        Err(Unconfined::Resolves(to)) => {
            let croot = canonical.map_or(root, |(_, c)| c.worktree_root);
            Some(format!(
                "{shown} resolves to {}, outside the worktree root {}",
                to.display(),
                croot.display()
            ))
        }
        Err(why) => Some(why.describe(path, root)),
    }
}

fn special(path: &Path, places: &Places) -> Option<String> {
    let shown = path.display();
    if path.parent().is_none() {
        return Some(format!("{shown} is the filesystem root"));
    }
    if let Some(home) = places.home {
        if path == home {
            return Some(format!("{shown} is the home directory"));
        }
        if home.starts_with(path) {
            return Some(format!("{shown} contains the home directory"));
        }
    }
    if path == places.repo {
        return Some(format!("{shown} is the repository itself"));
    }
    if places.repo.starts_with(path) {
        return Some(format!("{shown} contains the repository"));
    }
    if path.starts_with(places.git_dir) || places.git_dir.starts_with(path) {
        return Some(format!("{shown} is (in) the repository's git directory"));
    }
    None
}
