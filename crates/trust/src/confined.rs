//! The one confinement rule: a path strictly inside a worktree root, as
//! written and as resolved, reached through no symlink below the root. Made
//! once by [`ConfinedPath::new`] (which reads the file system) and carried to
//! what creates or removes there: spawn and resume's `Made`, gc's and `rm`'s
//! teardown. Right before a removal [`ConfinedPath::recheck`] reads again.

use std::path::{Component, Path, PathBuf};

use crate::model::paths::is_strictly_inside;
pub use crate::model::paths::Unconfined;

/// A path strictly inside a worktree root (lexically and resolved, no symlink
/// on the way below the root, the path itself included). Its fields are
/// private: only [`ConfinedPath::new`] makes one.
///
/// ```compile_fail
/// use bullpen::trust::confined::ConfinedPath;
/// let forged = ConfinedPath { root: "/".into(), path: "/home".into() };
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfinedPath {
    root: PathBuf,
    path: PathBuf,
}

impl ConfinedPath {
    /// Check `path` against `root`: absolute and normalised, strictly inside
    /// it as written; no entry below the root on the way to it, nor the path
    /// itself, is a symlink (one that leads out is named as where it resolves
    /// to); and the deepest of them that exists resolves strictly inside the
    /// resolved root. What does not exist yet is allowed (spawn checks before
    /// it creates).
    pub fn new(root: &Path, path: &Path) -> Result<ConfinedPath, Unconfined> {
        let normal = |p: &Path| {
            p.is_absolute()
                && !p
                    .components()
                    .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        };
        if !normal(root) || !normal(path) {
            return Err(Unconfined::NotNormal);
        }
        if root.parent().is_none() || !is_strictly_inside(path, root) {
            return Err(Unconfined::Outside);
        }
        let below = path.strip_prefix(root).map_err(|_| Unconfined::Outside)?;
        let unreadable =
            |at: &Path, e: std::io::Error| Unconfined::Unreadable(format!("{}: {e}", at.display()));
        let croot = || std::fs::canonicalize(root).map_err(|e| unreadable(root, e));
        let mut at = root.to_path_buf();
        let mut deepest = None;
        for part in below.components() {
            at.push(part);
            match at.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => {
                    if at != path {
                        if let Ok(to) = std::fs::canonicalize(&at) {
                            if !is_strictly_inside(&to, &croot()?) {
                                return Err(Unconfined::Resolves(to));
                            }
                        }
                    }
                    return Err(Unconfined::Symlink(at));
                }
                Ok(_) => deepest = Some(at.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(unreadable(&at, e)),
            }
        }
        if let Some(deepest) = deepest {
            let resolved = std::fs::canonicalize(&deepest).map_err(|e| unreadable(&deepest, e))?;
            if !is_strictly_inside(&resolved, &croot()?) {
                return Err(Unconfined::Resolves(resolved));
            }
        }
        Ok(ConfinedPath {
            root: root.to_path_buf(),
            path: path.to_path_buf(),
        })
    }

    /// The same check again, right before an act: a directory on the way may
    /// have become a symlink since.
    pub fn recheck(&self) -> Result<(), Unconfined> {
        ConfinedPath::new(&self.root, &self.path).map(|_| ())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("root");
        std::fs::create_dir(&root).expect("root");
        (tmp, root)
    }

    #[test]
    fn a_path_inside_the_root_is_confined_whether_or_not_it_exists() {
        let (_tmp, root) = root();
        let missing = root.join("x");
        assert_eq!(
            ConfinedPath::new(&root, &missing).map(|c| c.path().to_path_buf()),
            Ok(missing.clone())
        );
        std::fs::create_dir_all(root.join("a/b")).expect("dirs");
        let c = ConfinedPath::new(&root, &root.join("a/b")).expect("confined");
        assert_eq!(c.root(), root.as_path());
        assert_eq!(c.recheck(), Ok(()));
    }

    #[test]
    fn refuses_dot_dot_and_relative_paths() {
        let (_tmp, root) = root();
        for bad in [root.join("../x"), root.join("a/../../x"), root.join("a/..")] {
            assert_eq!(
                ConfinedPath::new(&root, &bad),
                Err(Unconfined::NotNormal),
                "{}",
                bad.display()
            );
        }
        assert_eq!(
            ConfinedPath::new(&root, Path::new("x")),
            Err(Unconfined::NotNormal)
        );
    }

    #[test]
    fn refuses_the_root_itself_and_paths_outside_it() {
        let (tmp, root) = root();
        assert_eq!(ConfinedPath::new(&root, &root), Err(Unconfined::Outside));
        assert_eq!(
            ConfinedPath::new(&root, tmp.path()),
            Err(Unconfined::Outside)
        );
        assert_eq!(
            ConfinedPath::new(&root, &tmp.path().join("rootx/a")),
            Err(Unconfined::Outside)
        );
        assert_eq!(
            ConfinedPath::new(&root, Path::new("/etc")),
            Err(Unconfined::Outside)
        );
        // A root of `/` confines nothing.
        assert_eq!(
            ConfinedPath::new(Path::new("/"), Path::new("/tmp")),
            Err(Unconfined::Outside)
        );
    }

    #[test]
    fn refuses_a_symlink_inside_the_root_pointing_out() {
        let (tmp, root) = root();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).expect("outside");
        symlink(&outside, root.join("link")).expect("symlink");
        // Through it (named as where it leads), and the link itself.
        let resolved = std::fs::canonicalize(&outside).expect("resolve");
        assert_eq!(
            ConfinedPath::new(&root, &root.join("link/x")),
            Err(Unconfined::Resolves(resolved))
        );
        assert_eq!(
            ConfinedPath::new(&root, &root.join("link")),
            Err(Unconfined::Symlink(root.join("link")))
        );
        // Even one pointing back inside: the path must be the directory itself,
        // reached through real directories.
        std::fs::create_dir_all(root.join("real/x")).expect("real");
        symlink(root.join("real"), root.join("inner")).expect("symlink");
        assert_eq!(
            ConfinedPath::new(&root, &root.join("inner")),
            Err(Unconfined::Symlink(root.join("inner")))
        );
        assert_eq!(
            ConfinedPath::new(&root, &root.join("inner/x")),
            Err(Unconfined::Symlink(root.join("inner")))
        );
        // A dangling one too.
        symlink("/nonexistent/bullpen", root.join("dangling")).expect("symlink");
        assert_eq!(
            ConfinedPath::new(&root, &root.join("dangling")),
            Err(Unconfined::Symlink(root.join("dangling")))
        );
    }

    #[test]
    fn the_recheck_sees_a_directory_that_became_a_symlink() {
        let (tmp, root) = root();
        let dir = root.join("x");
        std::fs::create_dir(&dir).expect("dir");
        let c = ConfinedPath::new(&root, &dir).expect("confined");
        std::fs::remove_dir(&dir).expect("rmdir");
        symlink(tmp.path(), &dir).expect("symlink");
        assert_eq!(c.recheck(), Err(Unconfined::Symlink(dir)));
    }

    #[test]
    fn a_root_reached_through_a_symlink_still_confines() {
        let (tmp, root) = root();
        let alias = tmp.path().join("alias");
        symlink(&root, &alias).expect("symlink");
        std::fs::create_dir(root.join("x")).expect("dir");
        assert!(ConfinedPath::new(&alias, &alias.join("x")).is_ok());
    }
}
