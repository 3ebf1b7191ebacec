//! The pseudo-terminal of a background run (rustix's pty and termios): the
//! supervisor holds the master side; the command gets the slave side as its
//! stdin, stdout, stderr and controlling terminal, in a session of its own.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use anyhow::{Context, Result};
use rustix::pty::{self, OpenptFlags};
use rustix::termios;

/// The window size a run starts with when nobody has told it one.
pub const DEFAULT_SIZE: (u16, u16) = (24, 80);

/// Both sides of a new pseudo-terminal (both close-on-exec).
pub struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

/// Open a pseudo-terminal of `rows` x `cols`.
pub fn open(rows: u16, cols: u16) -> Result<Pty> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let master = pty::openpt(flags).context("cannot open a pseudo-terminal")?;
    pty::grantpt(&master).context("cannot grant access to the pseudo-terminal")?;
    pty::unlockpt(&master).context("cannot unlock the pseudo-terminal")?;
    let slave = match pty::ioctl_tiocgptpeer(&master, flags) {
        Ok(fd) => fd,
        // Before Linux 4.13: open it by name.
        Err(_) => {
            let name = pty::ptsname(&master, Vec::new())
                .context("cannot name the pseudo-terminal's slave side")?;
            rustix::fs::open(
                name.as_c_str(),
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .context("cannot open the pseudo-terminal's slave side")?
        }
    };
    termios::tcsetwinsize(&slave, crate::sys::term::winsize(rows, cols))
        .context("cannot set the pseudo-terminal's window size")?;
    Ok(Pty { master, slave })
}

/// Give the program on `master` the window size `rows` x `cols`. The kernel
/// sends SIGWINCH to its foreground process group when the size changes; when
/// it does not (a client attaches with the size the run already has), send it
/// anyway, as the kernel would, so that a full-screen program redraws.
pub fn resize(master: impl AsFd, rows: u16, cols: u16) -> Result<()> {
    let master = master.as_fd();
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let now = termios::tcgetwinsize(master).ok();
    if now.is_some_and(|ws| ws.ws_row == rows && ws.ws_col == cols) {
        nudge(master);
        return Ok(());
    }
    termios::tcsetwinsize(master, crate::sys::term::winsize(rows, cols))
        .context("cannot set the pseudo-terminal's window size")
}

/// SIGWINCH to the terminal's foreground process group, through the terminal
/// itself (`TIOCSIG` on the master: the kernel picks the group, as for a
/// Ctrl-C typed there). Best effort: a program that has gone needs no redraw.
fn nudge(master: BorrowedFd<'_>) {
    use std::os::fd::AsRawFd;
    // SAFETY: TIOCSIG takes the signal number as its integer argument and
    // touches no memory of ours.
    unsafe {
        libc::ioctl(
            master.as_raw_fd(),
            libc::TIOCSIG as _,
            libc::SIGWINCH as libc::c_long,
        );
    }
}

/// In the forked command, before exec, with the slave already on fd 0: lead a
/// session of its own and take the pseudo-terminal as its controlling terminal.
/// Only raw system calls: async-signal-safe.
pub fn take_as_controlling_terminal() -> std::io::Result<()> {
    rustix::process::setsid()?;
    // SAFETY: fd 0 is open (the slave, put there by Command's stdio set-up)
    // for the rest of this process's life.
    let stdin = unsafe { BorrowedFd::borrow_raw(0) };
    rustix::process::ioctl_tiocsctty(stdin)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_pty_has_the_size_asked_and_can_be_resized() {
        let p = open(30, 100).unwrap();
        let ws = termios::tcgetwinsize(&p.master).unwrap();
        assert_eq!((ws.ws_row, ws.ws_col), (30, 100));
        resize(&p.master, 40, 120).unwrap();
        let ws = termios::tcgetwinsize(&p.slave).unwrap();
        assert_eq!((ws.ws_row, ws.ws_col), (40, 120));
        assert!(termios::isatty(&p.slave));
    }
}
