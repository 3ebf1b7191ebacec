//! Many files of one tree, each opened relative to its directory (`openat`:
//! one path component looked up, not the whole path), the last directory kept
//! open, for a walk in path order. The settle of a new worktree's index opens
//! every file git wrote in the index's second this way: at 20,000 files the
//! kernel's walk of their long absolute paths was a tenth of it.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// Opens files under `root` for reading: see [`Opener::open`].
pub struct Opener {
    root: PathBuf,
    /// The directory (relative to `root`) the last file was in, and its fd.
    dir: Option<(PathBuf, OwnedFd)>,
    /// Whether `O_NOATIME` is still tried (the kernel allows it only to the
    /// file's owner).
    noatime: bool,
}

impl Opener {
    pub fn new(root: &Path) -> Opener {
        Opener {
            root: root.to_path_buf(),
            dir: None,
            noatime: true,
        }
    }

    /// The file at `rel` (relative to the root), opened for reading without
    /// following a symbolic link in its last component, without blocking (a
    /// FIFO there never waits for a writer) and, where the kernel lets its
    /// owner, without touching its access time (a read then dirties no inode).
    /// `None` when nothing can be opened there so: no such file or directory, a
    /// symbolic link, a component that is no directory.
    pub fn open(&mut self, rel: &Path) -> std::io::Result<Option<std::fs::File>> {
        let (parent, name) = match (rel.parent(), rel.file_name()) {
            (Some(parent), Some(name)) => (parent, name),
            _ => return Ok(None),
        };
        if self.dir.as_ref().is_none_or(|(at, _)| at != parent) {
            self.dir = None;
            let fd = match rustix::fs::open(
                self.root.join(parent),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            self.dir = Some((parent.to_path_buf(), fd));
        }
        let Some((_, dir)) = &self.dir else {
            return Ok(None);
        };
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let mut opened = Err(Errno::PERM);
        if self.noatime {
            opened = rustix::fs::openat(dir, name, flags | OFlags::NOATIME, Mode::empty());
            if matches!(opened, Err(Errno::PERM)) {
                self.noatime = false;
            }
        }
        if matches!(opened, Err(Errno::PERM)) {
            opened = rustix::fs::openat(dir, name, flags, Mode::empty());
        }
        match opened {
            Ok(fd) => Ok(Some(fd.into())),
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::path::Path;

    #[test]
    fn files_open_relative_to_their_directory_and_links_do_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/f"), "one").unwrap();
        std::fs::write(dir.path().join("a/g"), "two").unwrap();
        std::os::unix::fs::symlink("g", dir.path().join("a/link")).unwrap();
        let mut opener = super::Opener::new(dir.path());
        let mut text = String::new();
        let mut f = opener.open(Path::new("a/b/f")).unwrap().unwrap();
        f.read_to_string(&mut text).unwrap();
        let mut g = opener.open(Path::new("a/g")).unwrap().unwrap();
        g.read_to_string(&mut text).unwrap();
        assert_eq!(text, "onetwo");
        assert!(opener.open(Path::new("a/link")).unwrap().is_none());
        assert!(opener.open(Path::new("a/none")).unwrap().is_none());
        assert!(opener.open(Path::new("a/g/x")).unwrap().is_none());
        assert!(opener.open(Path::new("none/x")).unwrap().is_none());
    }
}
