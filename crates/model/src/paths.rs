//! Path arithmetic without the file system: normalisation and confinement.

use std::path::{Component, Path, PathBuf};

/// Lexical normalisation: drops `.`, resolves `..` against the preceding component.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Pure: `path` is absolute, contains no `.`/`..` components, and is strictly
/// inside `root` (the root itself does not count).
pub fn is_strictly_inside(path: &Path, root: &Path) -> bool {
    path.is_absolute()
        && !path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        && path != root
        && path.starts_with(root)
}

/// Why a path is not confined to its root (`trust::confined::ConfinedPath`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unconfined {
    /// Relative, or with `.` or `..` in it (the root too).
    NotNormal,
    /// Not strictly inside the root as written (the root itself included).
    Outside,
    /// This directory on the way, or the path itself, is a symlink.
    Symlink(PathBuf),
    /// Resolved, it is here: outside the resolved root.
    Resolves(PathBuf),
    /// The file system could not be read.
    Unreadable(String),
}

impl Unconfined {
    /// In words, for `path` and `root`.
    pub fn describe(&self, path: &Path, root: &Path) -> String {
        let (p, r) = (path.display(), root.display());
        match self {
            Unconfined::NotNormal => format!("{p} is not an absolute, normalised path"),
            Unconfined::Outside => format!("{p} is not strictly inside the worktree root {r}"),
            Unconfined::Symlink(at) if at == path => format!("{p} is a symlink"),
            Unconfined::Symlink(at) => {
                format!("{p} is reached through the symlink {}", at.display())
            }
            Unconfined::Resolves(to) => {
                format!(
                    "{p} resolves to {}, outside the worktree root {r}",
                    to.display()
                )
            }
            Unconfined::Unreadable(why) => format!("cannot resolve {p}: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement() {
        let root = Path::new("/data/bullpen/worktrees/app-1234");
        assert!(is_strictly_inside(&root.join("x"), root));
        assert!(is_strictly_inside(&root.join("x/y"), root));
        assert!(!is_strictly_inside(root, root));
        assert!(!is_strictly_inside(Path::new("/"), root));
        assert!(!is_strictly_inside(
            Path::new("/data/bullpen/worktrees/app-12345"),
            root
        ));
        assert!(!is_strictly_inside(&root.join("../app-1234/x"), root));
        assert!(!is_strictly_inside(&root.join("x/../../y"), root));
        assert!(!is_strictly_inside(Path::new("x"), root));
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
