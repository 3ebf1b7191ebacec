//! Copying files into a new worktree: copy-on-write clones where the file
//! system supports them (`reflink-copy`), plain copies elsewhere; never over
//! an existing file, never through a symbolic link, permissions kept.

use std::fs;
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// What a copy left out, and why (for a warning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: &'static str,
}

/// Copy the regular file `src` to `dst`, which must not exist (`AlreadyExists`
/// otherwise): a clone (`FICLONE`) where the file system can, else a plain
/// copy; the permission bits are `src`'s. A failed copy leaves no `dst`. `src`
/// is opened once, without blocking and without following a symbolic link,
/// and both copies read that descriptor: what took its place since it was
/// looked at (a FIFO, a device, a symbolic link) is refused (`InvalidInput`),
/// never waited on.
pub fn copy_new(src: &Path, dst: &Path) -> io::Result<()> {
    let mut from = open_regular(src)?;
    match reflink_copy::reflink_file_to_path(&from, dst) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
        // Not supported here (another file system, ext4, tmpfs, ...): copy.
        Err(_) => {}
    }
    let mode = from.metadata()?.permissions().mode() & 0o7777;
    let mut to = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(dst)?;
    let copied = io::copy(&mut from, &mut to)
        // The umask applied at creation: set exactly the source's bits.
        .and_then(|_| to.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|()| to.sync_all());
    if let Err(e) = copied {
        drop(to);
        let _ = fs::remove_file(dst);
        return Err(e);
    }
    Ok(())
}

/// `path` open for reading, when it is a regular file: opened with
/// `O_NONBLOCK` (a FIFO does not wait for a writer) and `O_NOFOLLOW`, its
/// type that of the descriptor, then `O_NONBLOCK` cleared for the reads.
/// Anything else is `InvalidInput`.
fn open_regular(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        )
    };
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) => return Err(not_regular()),
        Err(e) => return Err(e.into()),
    };
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(not_regular());
    }
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK)?;
    Ok(fs::File::from(fd))
}

/// Copy `src` (a file, or a directory with everything in it) to `dst`. Existing
/// files are left as they are, symbolic links and special files are not
/// copied: each is reported in `skipped` (paths relative to `rel`). Directories
/// get `src`'s permission bits.
pub fn copy_entry(
    src: &Path,
    dst: &Path,
    rel: &Path,
    skipped: &mut Vec<Skipped>,
    copied: &mut Vec<PathBuf>,
) -> io::Result<usize> {
    let meta = fs::symlink_metadata(src)?;
    let kind = meta.file_type();
    let skip = |why| Skipped {
        path: rel.to_path_buf(),
        why,
    };
    if kind.is_symlink() {
        skipped.push(skip("it is a symbolic link"));
        return Ok(0);
    }
    if kind.is_file() {
        return match copy_new(src, dst) {
            Ok(()) => {
                copied.push(rel.to_path_buf());
                Ok(1)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                skipped.push(skip("the new worktree has it already"));
                Ok(0)
            }
            // Replaced since it was looked at (a FIFO, a symbolic link).
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                skipped.push(skip("it is not a regular file"));
                Ok(0)
            }
            Err(e) => Err(e),
        };
    }
    if !kind.is_dir() {
        skipped.push(skip("it is not a regular file"));
        return Ok(0);
    }
    match fs::symlink_metadata(dst) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            skipped.push(skip("the new worktree has something else there"));
            return Ok(0);
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir(dst)?;
            fs::set_permissions(dst, fs::Permissions::from_mode(meta.permissions().mode()))?;
        }
        Err(e) => return Err(e),
    }
    let mut n = 0;
    let mut names: Vec<_> = fs::read_dir(src)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort();
    for name in names {
        n += copy_entry(
            &src.join(&name),
            &dst.join(&name),
            &rel.join(&name),
            skipped,
            copied,
        )?;
    }
    Ok(n)
}

/// Pure: `rel` is a plain relative path (only normal components: no `..`, no
/// root, no `.`), so that `root.join(rel)` stays below `root`.
pub fn is_plain_relative(rel: &Path) -> bool {
    rel.components().next().is_some() && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Whether every directory between `root` and `root/rel` (`root/rel` itself
/// excluded) is a real directory: nothing on the way is a symbolic link (one
/// could lead outside `root`). A missing directory on the way is created
/// when `create` (with mode 0755 under the umask), else the answer is false.
pub fn real_dirs_to(root: &Path, rel: &Path, create: bool) -> io::Result<bool> {
    let Some(parent) = rel.parent() else {
        return Ok(true);
    };
    let mut dir = root.to_path_buf();
    for c in parent.components() {
        dir.push(c);
        match fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => fs::create_dir(&dir)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_stay_below_the_root() {
        assert!(is_plain_relative(Path::new(".env")));
        assert!(is_plain_relative(Path::new("config/local.yml")));
        assert!(!is_plain_relative(Path::new("../x")));
        assert!(!is_plain_relative(Path::new("a/../../x")));
        assert!(!is_plain_relative(Path::new("/etc/passwd")));
        assert!(!is_plain_relative(Path::new("")));
    }

    #[test]
    fn a_copy_keeps_the_mode_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("run.sh");
        fs::write(&src, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&src, fs::Permissions::from_mode(0o751)).unwrap();
        let dst = dir.path().join("copy.sh");
        copy_new(&src, &dst).unwrap();
        assert_eq!(fs::read_to_string(&dst).unwrap(), "#!/bin/sh\n");
        let mode = fs::metadata(&dst).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o751);
        fs::write(&dst, "mine\n").unwrap();
        let err = copy_new(&src, &dst).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&dst).unwrap(), "mine\n");
    }

    /// `copy_new(src, dst)` on a thread of its own, watched: its result, or a
    /// panic once that thread sleeps opening a FIFO (`wait_for_partner`, the
    /// kernel's wait in `fifo_open`), the FIFO then opened for writing so that
    /// it wakes and ends. The only timer is a bound on a failure of another
    /// kind (60 s); the answer comes on an event either way.
    fn copy_new_watched(src: &Path, dst: &Path) -> io::Result<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (from, to) = (src.to_path_buf(), dst.to_path_buf());
        let thread = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            let _ = tx.send(Err(unsafe { libc::gettid() }));
            let _ = tx.send(Ok(copy_new(&from, &to)));
        });
        let tid = match rx.recv() {
            Ok(Err(tid)) => tid,
            _ => panic!("the copying thread said nothing"),
        };
        let wchan = format!("/proc/self/task/{tid}/wchan");
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(10)) {
                Ok(Ok(result)) => {
                    thread.join().unwrap();
                    return result;
                }
                Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the copying thread ended without an answer")
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            let blocked = fs::read_to_string(&wchan).is_ok_and(|w| w.trim() == "wait_for_partner");
            if blocked || std::time::Instant::now() > bound {
                // Wake it: a writer arrives and leaves, the read sees the end.
                drop(fs::OpenOptions::new().write(true).open(src));
                let _ = thread.join();
                panic!(
                    "copy_new {}: {}",
                    src.display(),
                    if blocked {
                        "blocked opening a FIFO"
                    } else {
                        "no answer within 60 s"
                    }
                );
            }
        }
    }

    #[test]
    fn a_fifo_or_a_symbolic_link_as_the_source_is_refused_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        // As if it had replaced the file after copy_entry looked at its type.
        let fifo = dir.path().join("swapped");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let dst = dir.path().join("copy");
        let err = copy_new_watched(&fifo, &dst).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(fs::symlink_metadata(&dst).is_err(), "no copy is made");
        // Nor is a symbolic link followed.
        let target = dir.path().join("target");
        fs::write(&target, "secret\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = copy_new_watched(&link, &dst).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(fs::symlink_metadata(&dst).is_err(), "no copy is made");
    }

    #[test]
    fn a_tree_is_copied_without_its_symbolic_links() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("sub/a"), "a").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.join("link")).unwrap();
        let dst = dir.path().join("dst");
        let mut skipped = Vec::new();
        let n = copy_entry(&src, &dst, Path::new("src"), &mut skipped, &mut Vec::new()).unwrap();
        assert_eq!(n, 1);
        assert_eq!(fs::read_to_string(dst.join("sub/a")).unwrap(), "a");
        assert!(fs::symlink_metadata(dst.join("link")).is_err());
        assert_eq!(skipped[0].path, Path::new("src/link"));
    }
}
