//! Removing a directory tree without ever leaving it: every directory is opened
//! relative to its parent's descriptor with `O_NOFOLLOW` (a directory swapped
//! for a symlink mid-way is never followed, as std's `remove_dir_all` does it),
//! and a directory on another device than the top (a mount point) stops the
//! removal there: what another file system holds is never bullpen's to delete.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

/// Why a removal stopped.
#[derive(Debug)]
pub enum Stopped {
    /// A directory on another device than the tree's top: a mount point.
    OtherDevice(PathBuf),
    Io(std::io::Error),
}

impl From<Errno> for Stopped {
    fn from(e: Errno) -> Stopped {
        Stopped::Io(e.into())
    }
}

/// Remove `top` and everything below it, never following a symlink and never
/// entering a directory on another device than `top`. A `top` that is gone is
/// no error; one that is a symlink is not followed (`ENOTDIR`/`ELOOP`).
pub fn remove_tree(top: &Path) -> Result<(), Stopped> {
    let fd = match open_dir(&CWD, top) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let dev = rustix::fs::fstat(&fd)?.st_dev;
    empty(&fd, top, dev)?;
    drop(fd);
    match std::fs::remove_dir(top) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Stopped::Io(e)),
    }
}

fn open_dir<Fd: std::os::fd::AsFd>(at: &Fd, name: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Remove everything in the directory open as `fd` (at `path`, for messages).
fn empty(fd: &OwnedFd, path: &Path, dev: u64) -> Result<(), Stopped> {
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    for entry in rustix::fs::Dir::read_from(fd)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(std::ffi::OsStr::from_bytes(name).to_owned());
        }
    }
    for name in names {
        let name = Path::new(&name);
        let st = match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            match rustix::fs::unlinkat(fd, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        let child = match open_dir(fd, name) {
            Ok(child) => child,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        // Its device as opened, not as listed: a mount made in between counts.
        if rustix::fs::fstat(&child)?.st_dev != dev || st.st_dev != dev {
            return Err(Stopped::OtherDevice(path.join(name)));
        }
        empty(&child, &path.join(name), dev)?;
        drop(child);
        match rustix::fs::unlinkat(fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_a_tree_but_never_what_a_symlink_points_at() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        std::fs::write(top.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a/link")).unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert!(outside.join("keep").exists());
        // Gone already: nothing to do.
        remove_tree(&top).unwrap();
        // A symlink as the top is not followed.
        let link = tmp.path().join("l");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(matches!(remove_tree(&link), Err(Stopped::Io(_))));
        assert!(outside.join("keep").exists());
    }
}
