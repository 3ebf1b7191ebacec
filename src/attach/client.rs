//! The attached terminal's loop: keys to the run, its output to the screen,
//! window sizes as they change; in raw mode, restored on every way out, with
//! every mode the program turned on turned off again (`modes`).

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;

use super::modes::Scan;
use crate::context::Ctx;
use crate::model::{time, Exit};
use crate::run::wire::{self, Decoder, Msg};
use crate::sys::term::{self, RawMode};

/// How an attached session ended for this terminal.
pub enum Ending {
    /// The detach key.
    Detached,
    /// Another terminal attached with --steal (its pid).
    Stolen(u32),
    /// The run ended while attached.
    Ended(Exit),
    /// The connection closed without a word (the supervisor was killed).
    Lost,
    /// This terminal went away.
    HungUp,
    /// This process was asked to end (SIGTERM, SIGINT, SIGQUIT).
    Signal(i32),
}

/// The signals the loop hears about, through a pipe (the self-pipe trick,
/// signal-hook's): a resize, a continue after a stop, and the ones that end it.
struct Signals {
    read: UnixStream,
    ids: Vec<signal_hook::SigId>,
    winch: Arc<AtomicBool>,
    cont: Arc<AtomicBool>,
    end: Vec<(i32, Arc<AtomicBool>)>,
}

impl Signals {
    fn new() -> Result<Signals> {
        let (read, write) = UnixStream::pair().context("cannot create a socket pair")?;
        read.set_nonblocking(true)
            .and_then(|()| write.set_nonblocking(true))
            .context("cannot make the signal pipe non-blocking")?;
        let flag = || Arc::new(AtomicBool::new(false));
        let mut s = Signals {
            read,
            ids: Vec::new(),
            winch: flag(),
            cont: flag(),
            end: [libc::SIGTERM, libc::SIGINT, libc::SIGQUIT, libc::SIGHUP]
                .into_iter()
                .map(|sig| (sig, flag()))
                .collect(),
        };
        let mut plan = vec![
            (libc::SIGWINCH, s.winch.clone()),
            (libc::SIGCONT, s.cont.clone()),
        ];
        plan.extend(s.end.iter().map(|(sig, f)| (*sig, f.clone())));
        for (sig, f) in plan {
            let flag = signal_hook::flag::register(sig, f).context("cannot handle a signal")?;
            // Each registration owns (and on unregistration closes) its end.
            let end = write
                .try_clone()
                .context("cannot duplicate the signal pipe")?;
            let wake = signal_hook::low_level::pipe::register(sig, end)
                .context("cannot handle a signal")?;
            s.ids.extend([flag, wake]);
        }
        Ok(s)
    }

    fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.read).read(&mut buf), Ok(n) if n > 0) {}
    }

    fn take(flag: &AtomicBool) -> bool {
        flag.swap(false, Ordering::SeqCst)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Relay between this terminal (`tty`, stdin; output on the Ui's stdout) and
/// the run, in raw mode, until something ends it. The terminal's settings are
/// put back exactly on the way out, whatever the way.
pub fn relay(
    ctx: &Ctx,
    stream: &UnixStream,
    dec: Decoder,
    key: u8,
    tty: BorrowedFd,
    hello: &str,
) -> Result<Ending> {
    let signals = Signals::new()?;
    let raw = RawMode::enter(tty)?;
    // Said once the terminal is raw, so that every key typed after it goes to
    // the run as typed (raw: the line ends with an explicit carriage return).
    ctx.ui.info(format!("{hello}\r"));
    let mut incoming = Incoming {
        dec,
        scan: Scan::default(),
    };
    let ending = pump(ctx, stream, &mut incoming, key, tty, &signals, &raw);
    let scan = incoming.scan;
    // Whatever the way out: the modes the program turned on, off again.
    let mut out = ctx.ui.out();
    let _ = out.write_all(&scan.restore());
    if !matches!(ending, Ok(Ending::Ended(_))) {
        // A program on the main screen (Claude Code's input box) may have
        // drawn below its cursor: go under the last row, so that the words
        // and the shell's prompt that follow do not land in its drawing.
        if scan.on_main_screen() {
            let _ = out.write_all(b"\x1b[999;1H");
        }
        let _ = out.write_all(b"\r\n");
    }
    let _ = out.flush();
    drop(raw);
    ending
}

fn send(stream: &UnixStream, msg: &Msg) -> Result<()> {
    let mut s = stream;
    s.write_all(&wire::frame(msg))
        .context("cannot send to the session's terminal")
}

fn resize(stream: &UnixStream, tty: BorrowedFd) -> Result<()> {
    match term::window_size(tty) {
        Some((rows, cols)) => send(stream, &Msg::Resize { rows, cols }),
        None => Ok(()),
    }
}

fn pump(
    ctx: &Ctx,
    stream: &UnixStream,
    incoming: &mut Incoming,
    key: u8,
    tty: BorrowedFd,
    signals: &Signals,
    raw: &RawMode,
) -> Result<Ending> {
    let mut buf = vec![0u8; wire::CHUNK];
    // Frames that arrived with the welcome.
    if let Some(end) = incoming.show(ctx)? {
        return Ok(end);
    }
    loop {
        let (keys, socket, sig) = {
            let mut fds = [
                PollFd::new(&tty, PollFlags::IN),
                PollFd::new(stream, PollFlags::IN),
                PollFd::new(&signals.read, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e).context("cannot wait for the terminal"),
            }
            let r = |i: usize| fds[i].revents();
            (r(0), r(1), r(2))
        };
        if !sig.is_empty() {
            signals.drain();
            for (sig, flag) in &signals.end {
                if Signals::take(flag) {
                    return Ok(match *sig {
                        libc::SIGHUP => Ending::HungUp,
                        s => Ending::Signal(s),
                    });
                }
            }
            if Signals::take(&signals.cont) {
                raw.apply()?;
                resize(stream, tty)?;
            }
            if Signals::take(&signals.winch) {
                resize(stream, tty)?;
            }
        }
        if !socket.is_empty() {
            let n = match (&mut &*stream).read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => 0,
            };
            if n == 0 {
                return Ok(Ending::Lost);
            }
            incoming.dec.push(&buf[..n]);
            if let Some(end) = incoming.show(ctx)? {
                return Ok(end);
            }
        }
        if !keys.is_empty() {
            let n = match rustix::io::read(tty, &mut buf) {
                Ok(n) => n,
                Err(Errno::INTR) | Err(Errno::AGAIN) => continue,
                Err(_) => 0,
            };
            if n == 0 {
                return Ok(Ending::HungUp);
            }
            let typed = &buf[..n];
            match typed.iter().position(|b| *b == key) {
                Some(at) => {
                    if at > 0 {
                        send(stream, &Msg::Input(typed[..at].to_vec()))?;
                    }
                    return Ok(Ending::Detached);
                }
                None => send(stream, &Msg::Input(typed.to_vec()))?,
            }
        }
    }
}

/// What comes from the run: its frames, and the modes what it wrote turned on.
struct Incoming {
    dec: Decoder,
    scan: Scan,
}

impl Incoming {
    /// Put the run's output on the screen; the ending, if a frame says so.
    fn show(&mut self, ctx: &Ctx) -> Result<Option<Ending>> {
        let mut out = ctx.ui.out();
        let mut ending = None;
        while let Some(msg) = self.dec.next_msg()? {
            match msg {
                Msg::Output(bytes) => {
                    self.scan.feed(&bytes);
                    out.write_all(&bytes)
                        .context("cannot write to the terminal")?
                }
                Msg::Exit { code, signal } => {
                    ending = Some(Ending::Ended(Exit {
                        code,
                        signal,
                        at: time::now_rfc3339(),
                    }));
                    break;
                }
                Msg::Stolen { pid } => {
                    ending = Some(Ending::Stolen(pid));
                    break;
                }
                _ => {}
            }
        }
        out.flush().context("cannot write to the terminal")?;
        Ok(ending)
    }
}

impl AsFd for Signals {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }
}
