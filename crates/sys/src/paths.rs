//! Comparing paths as the file system sees them, also paths that are gone.

use std::path::{Path, PathBuf};

use crate::model::paths::normalize;

/// The form two paths are compared in: canonical when the path exists, else its
/// canonical parent joined with its name (a deleted worktree is still compared
/// the way git recorded it), else lexically normalised.
pub fn comparable(path: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(path) {
        return c;
    }
    if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
        if let Ok(c) = std::fs::canonicalize(parent) {
            return c.join(name);
        }
    }
    normalize(path)
}

/// Whether two paths name the same place ([`comparable`]).
pub fn same(a: &Path, b: &Path) -> bool {
    a == b || comparable(a) == comparable(b)
}

/// The canonical path, or the path itself when it cannot be resolved.
pub fn canonical_or_self(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_path_compares_through_its_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        let link = real.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(same(&link.join("gone"), &real.join("gone")));
        assert!(!same(&real.join("a"), &real.join("b")));
        assert_eq!(
            comparable(Path::new("/nowhere/x/../y")),
            Path::new("/nowhere/y")
        );
    }
}
