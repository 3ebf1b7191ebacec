//! The attach socket of a background run: a Unix stream socket per run, in a
//! directory only the user can enter, and the peer credentials of whoever is
//! on the other end.
//!
//! Where: `$XDG_RUNTIME_DIR/bullpen/` when that is set, absolute, and short
//! enough for the 108-byte limit of a socket's path; else `/tmp/bullpen-<uid>/`.
//! The directory is made mode 0700 and must be a real directory (not a symlink)
//! owned by the user with no access for anyone else, or no socket goes there.
//! Each run's socket is named after its supervisor, `s<pid>-<start time>.sock`:
//! no two living supervisors share a name, so a socket a killed supervisor left
//! behind can never block a later run (`stop`, or the next run of the session,
//! removes it with that run's local proof, `run-<pid>.json`, which names it).

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::model::Error;

/// The longest socket path the kernel takes (`sun_path` is 108 bytes, NUL included).
const MAX_PATH: usize = 107;

/// This process's effective uid.
pub fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The socket of the run whose supervisor is `pid` (started at `start`), in
/// the user's socket directory (created if need be).
pub fn path_for(pid: u32, start: u64) -> Result<PathBuf> {
    let name = format!("s{pid}-{start}.sock");
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty());
    let dir = choose_dir(runtime, my_uid(), name.len());
    ensure_private_dir(&dir)?;
    Ok(dir.join(name))
}

/// Pure: `$XDG_RUNTIME_DIR/bullpen` if it is absolute and a socket named with
/// `name_len` bytes fits in it, else `/tmp/bullpen-<uid>`.
fn choose_dir(runtime: Option<OsString>, uid: u32, name_len: usize) -> PathBuf {
    if let Some(dir) = runtime.map(PathBuf::from).filter(|d| d.is_absolute()) {
        let dir = dir.join("bullpen");
        if dir.as_os_str().len() + 1 + name_len <= MAX_PATH {
            return dir;
        }
    }
    PathBuf::from(format!("/tmp/bullpen-{uid}"))
}

/// Make `dir` (mode 0700) if it is missing, then check that it is a directory
/// of the user's that nobody else can enter. Its parent must exist.
fn ensure_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot create the socket directory {}", dir.display()))
        }
    }
    let meta = std::fs::symlink_metadata(dir)
        .with_context(|| format!("cannot inspect the socket directory {}", dir.display()))?;
    let why = if !meta.file_type().is_dir() {
        Some("it is not a directory".to_owned())
    } else if meta.uid() != my_uid() {
        Some(format!("it belongs to uid {}", meta.uid()))
    } else if meta.mode() & 0o077 != 0 {
        // Ours, but open to others (made by hand?): close it.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot restrict {} to its owner", dir.display()))?;
        None
    } else {
        None
    };
    if let Some(why) = why {
        return Err(Error::failed(format!(
            "will not put a terminal's socket in {}: {why}",
            dir.display()
        ))
        .hint(
            "bullpen needs a directory only you can enter: remove that one, or set XDG_RUNTIME_DIR",
        )
        .into());
    }
    Ok(())
}

/// Listen on `path`. A file already there can only be a socket that a killed
/// supervisor of the same pid left (no living process shares our pid): it is
/// removed first. The socket is made readable and writable by its owner only.
pub fn listen(path: &Path) -> Result<UnixListener> {
    remove_socket(path)?;
    let listener =
        UnixListener::bind(path).with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {} to its owner", path.display()))?;
    listener
        .set_nonblocking(true)
        .context("cannot make the socket non-blocking")?;
    Ok(listener)
}

/// Remove the socket at `path`, if there is one. Anything that is not a
/// socket is left alone (and named).
pub fn remove_socket(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot inspect {}", path.display())),
        Ok(m) if m.file_type().is_socket() => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove the socket {}", path.display()))
            }
            _ => Ok(()),
        },
        Ok(_) => bail!(
            "{} is in the way of a socket and is not one",
            path.display()
        ),
    }
}

/// Who is on the other end of a connected socket: (pid, uid), from the kernel
/// (`SO_PEERCRED`: for a client, the process that called `listen`; for the
/// supervisor, the process that called `connect`).
///
/// Read with libc rather than rustix: rustix's `UCred` holds a non-zero `Pid`,
/// and the kernel reports pid 0 for a peer outside our pid namespace.
pub fn peer(stream: &UnixStream) -> Result<(u32, u32)> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given, and the
    // descriptor is a socket we own for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 || len as usize != std::mem::size_of::<libc::ucred>() {
        return Err(std::io::Error::last_os_error())
            .context("cannot read the peer credentials of a connection");
    }
    Ok((u32::try_from(cred.pid).unwrap_or(0), cred.uid))
}

/// Pure: the supervisor's rule for an incoming connection: the same user only.
pub fn same_user(peer_uid: u32, my_uid: u32) -> bool {
    peer_uid == my_uid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_dir_is_used_only_when_the_path_fits() {
        let name = "s4194304-18446744073709551615.sock".len();
        assert_eq!(
            choose_dir(Some("/run/user/1000".into()), 1000, name),
            Path::new("/run/user/1000/bullpen")
        );
        assert_eq!(
            choose_dir(Some("relative".into()), 7, name),
            Path::new("/tmp/bullpen-7")
        );
        assert_eq!(choose_dir(None, 7, name), Path::new("/tmp/bullpen-7"));
        let long = format!("/{}", "x".repeat(80));
        assert_eq!(
            choose_dir(Some(long.into()), 7, name),
            Path::new("/tmp/bullpen-7")
        );
        assert!("/tmp/bullpen-4294967295/s4194304-18446744073709551615.sock".len() <= MAX_PATH);
    }

    #[test]
    fn only_the_same_user_may_connect() {
        assert!(same_user(1000, 1000));
        assert!(!same_user(0, 1000), "not even root");
        assert!(!same_user(65534, 1000));
    }

    #[test]
    fn a_directory_open_to_others_is_closed_and_a_symlink_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        ensure_private_dir(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let link = tmp.path().join("l");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let err = ensure_private_dir(&link).unwrap_err();
        assert!(format!("{err:#}").contains("not a directory"), "{err:#}");
    }

    #[test]
    fn a_directory_of_another_user_is_refused() {
        if my_uid() != 0 {
            return; // only root can give a directory away
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("d");
        ensure_private_dir(&dir).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        let err = ensure_private_dir(&dir).unwrap_err();
        assert!(
            format!("{err:#}").contains("belongs to uid 65534"),
            "{err:#}"
        );
    }

    #[test]
    fn a_stale_socket_is_replaced_and_anything_else_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s1-1.sock");
        let stale = UnixListener::bind(&path).unwrap();
        drop(stale); // the file stays, as when a supervisor is killed
        let l = listen(&path).unwrap();
        assert!(UnixStream::connect(&path).is_ok());
        drop(l);
        remove_socket(&path).unwrap();
        assert!(!path.exists());
        std::fs::write(&path, "not a socket").unwrap();
        assert!(listen(&path).is_err());
        assert!(
            path.exists(),
            "a file that is not a socket is never removed"
        );
    }
}
