//! Reading a file bullpen expects to be a regular one, without ever blocking on
//! what stands in its place (a FIFO, a device) or following a symbolic link.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The bytes of the regular file at `path`; `Ok(None)` when nothing is there
/// or something else is (a FIFO, a device, a directory, a symbolic link). The
/// open never blocks (`O_NONBLOCK`) and the type is that of the opened file.
pub fn read(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW on a symbolic link.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    (&file).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// The regular file at `path` (through a symbolic link), open for reading; an
/// `InvalidInput` error naming it when it is something else (a FIFO, a
/// device): the open never blocks, and the type is that of the opened file.
pub fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// The first line of the regular file at `path` (without its newline), read
/// as [`read`] reads, and no further than `cap` bytes: `Ok(None)` as there,
/// and when the first line is longer than that.
pub fn first_line(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::BufRead;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut line = Vec::new();
    std::io::BufReader::new(file.take(cap)).read_until(b'\n', &mut line)?;
    match line.pop() {
        Some(b'\n') => Ok(Some(line)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("f"), "x").unwrap();
        assert_eq!(read(&d.join("f")).unwrap(), Some(b"x".to_vec()));
        assert_eq!(read(&d.join("none")).unwrap(), None);
        std::os::unix::fs::symlink(d.join("f"), d.join("l")).unwrap();
        assert_eq!(read(&d.join("l")).unwrap(), None);
        assert_eq!(read(d).unwrap(), None);
        let fifo = d.join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert_eq!(read(&fifo).unwrap(), None, "never blocks on a FIFO");
        assert_eq!(
            open(&fifo).unwrap_err().kind(),
            std::io::ErrorKind::InvalidInput
        );
        assert!(open(&d.join("f")).is_ok());
        assert_eq!(first_line(&fifo, 10).unwrap(), None);
        std::fs::write(d.join("lines"), "one\ntwo\n").unwrap();
        assert_eq!(
            first_line(&d.join("lines"), 10).unwrap(),
            Some(b"one".to_vec())
        );
        assert_eq!(
            first_line(&d.join("lines"), 3).unwrap(),
            None,
            "longer than the cap"
        );
        assert_eq!(first_line(&d.join("l"), 10).unwrap(), None);
    }
}
