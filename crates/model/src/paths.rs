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
