//! The caller's terminal, for `attach`: raw mode, restored exactly when the
//! guard goes (on every path out, errors and panics included), and its window
//! size. The termios work is rustix's.

use std::os::fd::{AsFd, BorrowedFd};

use anyhow::{Context, Result};
use rustix::termios::{self, OptionalActions, Termios, Winsize};

/// Whether `fd` is a terminal.
pub fn is_terminal(fd: impl AsFd) -> bool {
    termios::isatty(fd)
}

/// The window size of the terminal at `fd`, if it has one.
pub fn window_size(fd: impl AsFd) -> Option<(u16, u16)> {
    let ws = termios::tcgetwinsize(fd).ok()?;
    (ws.ws_row > 0 && ws.ws_col > 0).then_some((ws.ws_row, ws.ws_col))
}

/// A winsize of `rows` x `cols`.
pub fn winsize(rows: u16, cols: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// The terminal in raw mode (no echo, no line editing, no signals from keys,
/// no output processing) while this lives; the settings it had before are put
/// back exactly, byte for byte, when it is dropped.
pub struct RawMode<'fd> {
    fd: BorrowedFd<'fd>,
    saved: Termios,
}

impl<'fd> RawMode<'fd> {
    pub fn enter(fd: BorrowedFd<'fd>) -> Result<RawMode<'fd>> {
        let saved = termios::tcgetattr(fd).context("cannot read the terminal's settings")?;
        let guard = RawMode { fd, saved };
        guard.apply()?;
        Ok(guard)
    }

    /// Raw mode again (after the process was stopped and continued: a shell
    /// may have put its own settings back meanwhile).
    pub fn apply(&self) -> Result<()> {
        let mut raw = self.saved.clone();
        raw.make_raw();
        termios::tcsetattr(self.fd, OptionalActions::Now, &raw)
            .context("cannot put the terminal in raw mode")
    }
}

impl Drop for RawMode<'_> {
    fn drop(&mut self) {
        // Nothing to do about a failure here: the terminal is gone.
        let _ = termios::tcsetattr(self.fd, OptionalActions::Now, &self.saved);
    }
}
