//! The supervisor's side of a run's terminal, until the command ends: what the
//! command writes on the pseudo-terminal goes to the session's log and to the
//! attached client; what the client types goes to the command; clients that
//! `git bullpen attach` connects are let in one at a time (same user only).
//!
//! One thread, one `poll` loop, every descriptor non-blocking. While a client
//! is attached and slower than the command, the master side is not read until
//! the client catches up (the command then waits, as on any slow terminal);
//! detached, the run goes at full speed into the log.
//!
//! Every byte of output is also fed to the run's terminal model ([`Keep`]): a
//! client let in is sent the current screen first, drawn at its size, and a
//! `Peek` is answered with the screen as text, whoever is attached.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{Pid, WaitOptions, WaitStatus};

use super::attention::{self, Watch};
use super::keep::Keep;
use super::pty;
use super::sizes::Recorder;
use super::wire::{self, Decoder, Msg};
use crate::model::Exit;
use crate::sys::socket;

/// Output queued for a client beyond which the master side waits.
const CLIENT_BACKLOG: usize = 1 << 20;
/// Input queued for the command beyond which the client is not read.
const INPUT_BACKLOG: usize = 256 * 1024;
/// How long a new connection has to say `Hello`.
const HELLO_TIME: Duration = Duration::from_secs(5);
/// Connections still saying hello, at most (more are closed at once).
const MAX_PENDING: usize = 8;
/// After the command ends, how long output still arriving is copied (other
/// processes of the run may hold the terminal open and keep writing).
const DRAIN_QUIET: Duration = Duration::from_millis(50);
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Told when a client attaches (its pid and since when) or detaches (`None`).
pub type OnAttach<'a> = Box<dyn FnMut(Option<(u32, &str)>) + 'a>;

/// A connected `git bullpen attach`.
pub struct Client {
    stream: UnixStream,
    out: Vec<u8>,
    sent: usize,
    dec: Decoder,
    pid: u32,
    since: String,
}

impl Client {
    fn new(stream: UnixStream, pid: u32) -> Client {
        Client {
            stream,
            out: Vec::new(),
            sent: 0,
            dec: Decoder::default(),
            pid,
            since: crate::model::time::now_rfc3339(),
        }
    }

    fn queue(&mut self, m: &Msg) {
        wire::encode(m, &mut self.out);
    }

    fn backlog(&self) -> usize {
        self.out.len() - self.sent
    }

    /// Write what the socket takes now. `Err`: the client is gone.
    fn flush_some(&mut self) -> std::io::Result<()> {
        while self.sent < self.out.len() {
            match (&self.stream).write(&self.out[self.sent..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        } else if self.sent >= CLIENT_BACKLOG {
            self.out.drain(..self.sent);
            self.sent = 0;
        }
        Ok(())
    }

    /// Read what has arrived. `Ok(false)`: the client closed the connection.
    fn read_some(&mut self) -> std::io::Result<bool> {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match (&self.stream).read(&mut buf) {
                Ok(0) => return Ok(false),
                Ok(n) => self.dec.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Send `msg` and close, waiting a little for the socket to take it.
    fn last_word(mut self, msg: &Msg) {
        self.queue(msg);
        let _ = self.stream.set_nonblocking(false);
        let _ = self.stream.set_write_timeout(Some(Duration::from_secs(2)));
        let _ = self.stream.write_all(&self.out[self.sent..]);
    }
}

/// The run's terminal and socket while its command runs.
pub struct Relay<'a> {
    master: OwnedFd,
    listener: std::os::unix::net::UnixListener,
    log: File,
    pid: u32,
    pidfd: Option<OwnedFd>,
    client: Option<Client>,
    pending: Vec<(Client, Instant)>,
    to_pty: Vec<u8>,
    master_done: bool,
    log_failed: bool,
    uid: u32,
    keep: Keep,
    on_attach: OnAttach<'a>,
    watch: Option<Watch>,
    sizes: Recorder,
}

/// How the command ended, and the client attached at the end (it is told
/// with [`farewell`], once the end is recorded).
pub struct Ended {
    /// `None` when the status could not be had.
    pub status: Option<(Option<i32>, Option<i32>)>,
    pub client: Option<Client>,
}

impl<'a> Relay<'a> {
    pub fn new(
        master: OwnedFd,
        listener: std::os::unix::net::UnixListener,
        log: File,
        pid: u32,
        keep: Keep,
        on_attach: OnAttach<'a>,
        sizes: Recorder,
    ) -> std::io::Result<Relay<'a>> {
        rustix::io::ioctl_fionbio(&master, true)?;
        // A pollable handle on the command's end (Linux 5.3); without one the
        // loop looks every 50 ms.
        let pidfd = Pid::from_raw(pid as i32).and_then(|p| {
            rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
        });
        Ok(Relay {
            master,
            listener,
            log,
            pid,
            pidfd,
            client: None,
            pending: Vec::new(),
            to_pty: Vec::new(),
            master_done: false,
            log_failed: false,
            uid: socket::my_uid(),
            keep,
            on_attach,
            watch: None,
            sizes,
        })
    }

    /// Also keep the run's activity, as its terminal shows it.
    pub fn watching(mut self, watch: Watch) -> Relay<'a> {
        self.watch = Some(watch);
        self
    }

    /// Relay until the command has ended and its last output is copied.
    pub fn run(mut self) -> Ended {
        let tick = match self.pidfd {
            Some(_) => Duration::from_secs(1),
            None => Duration::from_millis(50),
        };
        let tick = match self.watch {
            Some(_) => tick.min(attention::LOOK_EVERY),
            None => tick,
        };
        let status = loop {
            if let Some(s) = self.reap() {
                break Some(s);
            }
            if let Err(e) = self.turn(tick) {
                // poll itself failed: nothing to relay with; wait for the end.
                let _ = writeln!(self.log, "bullpen: the terminal relay failed: {e}");
                break self.wait_blocking();
            }
            if let Some(w) = self.watch.as_mut() {
                use std::os::fd::AsFd;
                w.look(self.master.as_fd());
                if let Some(why) = w.take_failure() {
                    let _ = writeln!(
                        self.log,
                        "bullpen: cannot keep the session's activity: {why}"
                    );
                }
            }
        };
        self.drain();
        if self.client.is_none() {
            (self.on_attach)(None);
        }
        Ended {
            status: status.map(|s| (s.exit_status(), s.terminating_signal())),
            client: self.client.take(),
        }
    }

    /// Collect every child that ended (orphans of the run are re-parented to
    /// the supervisor, a subreaper); the command's status when it is one.
    fn reap(&mut self) -> Option<WaitStatus> {
        let mut mine = None;
        loop {
            // Any child (-1): orphans of the run are in other process groups.
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some((pid, status))) => {
                    if pid.as_raw_nonzero().get() as u32 == self.pid {
                        mine = Some(status);
                    }
                }
                Ok(None) => break,
                Err(Errno::INTR) => {}
                Err(_) => break, // ECHILD: nothing left to wait for
            }
        }
        mine
    }

    fn wait_blocking(&mut self) -> Option<WaitStatus> {
        let pid = Pid::from_raw(self.pid as i32)?;
        loop {
            match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
                Ok(Some((_, s))) => return Some(s),
                Err(Errno::INTR) => {}
                _ => return None,
            }
        }
    }

    /// One round of the loop: wait for something to do, then do it.
    fn turn(&mut self, tick: Duration) -> std::io::Result<()> {
        let now = Instant::now();
        let timeout = self
            .pending
            .iter()
            .map(|(_, deadline)| deadline.saturating_duration_since(now))
            .min()
            .map_or(tick, |d| d.min(tick));
        let client_busy = self
            .client
            .as_ref()
            .is_some_and(|c| c.backlog() >= CLIENT_BACKLOG);
        let mut master_ev = PollFlags::empty();
        if !self.master_done && !client_busy {
            master_ev |= PollFlags::IN;
        }
        if !self.master_done && !self.to_pty.is_empty() {
            master_ev |= PollFlags::OUT;
        }
        let (m, l, p, c);
        let revents: Vec<PollFlags> = {
            let mut fds = Vec::with_capacity(4 + self.pending.len());
            // Left out when there is nothing to do with it (and once no process
            // holds the terminal any more): it would only report a hang-up,
            // again and again.
            m = (!master_ev.is_empty()).then(|| {
                fds.push(PollFd::new(&self.master, master_ev));
                fds.len() - 1
            });
            l = fds.len();
            fds.push(PollFd::new(&self.listener, PollFlags::IN));
            p = self.pidfd.as_ref().map(|fd| {
                fds.push(PollFd::new(fd, PollFlags::IN));
                fds.len() - 1
            });
            c = self.client.as_ref().map(|cl| {
                let mut ev = PollFlags::empty();
                if self.to_pty.len() < INPUT_BACKLOG {
                    ev |= PollFlags::IN;
                }
                if cl.backlog() > 0 {
                    ev |= PollFlags::OUT;
                }
                fds.push(PollFd::new(&cl.stream, ev));
                fds.len() - 1
            });
            for (cl, _) in &self.pending {
                fds.push(PollFd::new(&cl.stream, PollFlags::IN));
            }
            let ts = rustix::event::Timespec {
                tv_sec: timeout.as_secs() as _,
                tv_nsec: timeout.subsec_nanos() as _,
            };
            match poll(&mut fds, Some(&ts)) {
                Ok(_) => {}
                Err(Errno::INTR) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
            fds.iter().map(PollFd::revents).collect()
        };
        let _ = p; // the pidfd only wakes the loop; `reap` collects the status
        let ready =
            |i: usize, f: PollFlags| revents[i].intersects(f | PollFlags::ERR | PollFlags::HUP);
        if let Some(m) = m {
            if ready(m, PollFlags::OUT) && !self.to_pty.is_empty() {
                self.write_master();
            }
            if ready(m, PollFlags::IN) && master_ev.contains(PollFlags::IN) {
                self.read_master();
            }
        }
        if ready(l, PollFlags::IN) {
            self.accept();
        }
        if let Some(c) = c {
            if ready(c, PollFlags::IN | PollFlags::OUT) {
                self.serve_client();
            }
        }
        let first_pending = revents.len() - self.pending.len();
        let woke: Vec<bool> = (0..self.pending.len())
            .map(|i| ready(first_pending + i, PollFlags::IN))
            .collect();
        self.hello(&woke);
        Ok(())
    }

    fn write_master(&mut self) {
        match rustix::io::write(&self.master, &self.to_pty) {
            Ok(n) => {
                self.to_pty.drain(..n);
            }
            Err(Errno::AGAIN) | Err(Errno::INTR) => {}
            Err(_) => {
                // The terminal is gone (the command closed it): drop the input.
                self.to_pty.clear();
            }
        }
    }

    /// Copy what the command wrote to the log and the client.
    fn read_master(&mut self) {
        let mut buf = vec![0u8; wire::CHUNK];
        for _ in 0..16 {
            match rustix::io::read(&self.master, &mut buf) {
                Ok(0) => {
                    self.master_done = true;
                    break;
                }
                Ok(n) => {
                    if let Some(w) = self.watch.as_mut() {
                        w.output();
                    }
                    self.log_output(&buf[..n]);
                    self.keep.feed(&buf[..n]);
                    if let Some(c) = self.client.as_mut() {
                        c.queue(&Msg::Output(buf[..n].to_vec()));
                        if c.backlog() >= CLIENT_BACKLOG {
                            break;
                        }
                    }
                }
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => {}
                // EIO: no process has the slave side open any more.
                Err(_) => {
                    self.master_done = true;
                    break;
                }
            }
        }
        if let Some(c) = self.client.as_mut() {
            if c.flush_some().is_err() {
                self.detach();
            }
        }
    }

    fn log_output(&mut self, bytes: &[u8]) {
        if let Err(e) = self.log.write_all(bytes) {
            if !self.log_failed {
                self.log_failed = true;
                // The supervisor's stderr is the same log: say it once, to the
                // client too, where there is one.
                let note = format!("\r\nbullpen: cannot write the session's log: {e}\r\n");
                if let Some(c) = self.client.as_mut() {
                    c.queue(&Msg::Output(note.into_bytes()));
                }
            }
        }
    }

    fn detach(&mut self) {
        self.client = None;
        (self.on_attach)(None);
    }

    fn serve_client(&mut self) {
        let Some(c) = self.client.as_mut() else {
            return;
        };
        let open = c.read_some().unwrap_or(false);
        let mut resize = None;
        loop {
            match c.dec.next_msg() {
                Ok(Some(Msg::Input(bytes))) => self.to_pty.extend_from_slice(&bytes),
                Ok(Some(Msg::Resize { rows, cols })) => resize = Some((rows, cols)),
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => {
                    self.detach();
                    return;
                }
            }
        }
        let flushed = c.flush_some().is_ok();
        if let Some((rows, cols)) = resize {
            self.resize(rows, cols);
        }
        if !open || !flushed {
            self.detach();
        } else if !self.to_pty.is_empty() {
            self.write_master();
        }
    }

    /// The terminal's new size: the model's, the log's record of it, the
    /// command's terminal (the kernel sends it SIGWINCH).
    fn resize(&mut self, rows: u16, cols: u16) {
        self.keep.resize(rows, cols);
        // Before any output at the new size reaches the log. A size that
        // cannot be recorded only leaves `logs` at the last one it knows.
        let _ = self.sizes.record(&self.log, rows, cols);
        let _ = pty::resize(&self.master, rows, cols);
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let Ok((pid, uid)) = socket::peer(&stream) else {
                        continue;
                    };
                    if !socket::same_user(uid, self.uid) {
                        // Another user's process: one word, and closed.
                        let _ = (&stream).write_all(&wire::frame(&Msg::Refused(
                            "this session belongs to another user".into(),
                        )));
                        continue;
                    }
                    if self.pending.len() >= MAX_PENDING || stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    self.pending
                        .push((Client::new(stream, pid), Instant::now() + HELLO_TIME));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break, // WouldBlock: all taken
            }
        }
    }

    /// Connections saying hello: let one in, refuse it, or drop it.
    fn hello(&mut self, woke: &[bool]) {
        let now = Instant::now();
        let pending = std::mem::take(&mut self.pending);
        for (i, (mut cl, deadline)) in pending.into_iter().enumerate() {
            if !woke.get(i).copied().unwrap_or(false) {
                if now < deadline {
                    self.pending.push((cl, deadline));
                }
                continue;
            }
            let open = cl.read_some().unwrap_or(false);
            match cl.dec.next_msg() {
                Ok(Some(Msg::Hello { steal, rows, cols })) => self.admit(cl, steal, rows, cols),
                Ok(Some(Msg::Peek { color })) => self.peek(cl, color),
                Ok(None) if open && now < deadline => self.pending.push((cl, deadline)),
                _ => {} // closed, timed out, or not our protocol
            }
        }
    }

    fn admit(&mut self, mut new: Client, steal: bool, rows: u16, cols: u16) {
        if let Some(current) = self.client.take() {
            if !steal {
                let busy = Msg::Busy {
                    pid: current.pid,
                    since: current.since.clone(),
                };
                self.client = Some(current);
                new.last_word(&busy);
                return;
            }
            current.last_word(&Msg::Stolen { pid: new.pid });
        }
        new.queue(&Msg::Welcome);
        // The screen as it is, at the client's size, before anything live
        // (the log's record and the command's terminal follow below).
        self.keep.resize(rows, cols);
        for chunk in self.keep.redraw().chunks(wire::CHUNK) {
            new.queue(&Msg::Output(chunk.to_vec()));
        }
        if new.flush_some().is_err() {
            (self.on_attach)(None);
            return;
        }
        self.resize(rows, cols);
        (self.on_attach)(Some((new.pid, &new.since)));
        self.client = Some(new);
    }

    /// Answer a `Peek` with the screen, and close: the attached client, if
    /// any, stays as it is.
    fn peek(&mut self, cl: Client, color: bool) {
        let shot = Msg::Screen(self.keep.shot(color));
        let answer = match wire::frame(&shot).len() - 5 > wire::MAX_FRAME {
            true => Msg::Refused("the screen is too large to send".into()),
            false => shot,
        };
        cl.last_word(&answer);
    }

    /// After the command ended: copy what is still coming, for a little while.
    fn drain(&mut self) {
        let limit = Instant::now() + DRAIN_LIMIT;
        while !self.master_done && Instant::now() < limit {
            let quiet = rustix::event::Timespec {
                tv_sec: 0,
                tv_nsec: DRAIN_QUIET.as_nanos() as _,
            };
            let mut fds = [PollFd::new(&self.master, PollFlags::IN)];
            match poll(&mut fds, Some(&quiet)) {
                Ok(0) => break,
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(_) => break,
            }
            self.read_master();
        }
    }
}

/// Tell the client attached at the end how the run ended (once the end is
/// recorded, so that `ls` right after its `attach` returns says so).
pub fn farewell(client: Option<Client>, exit: &Exit) {
    if let Some(c) = client {
        c.last_word(&Msg::Exit {
            code: exit.code,
            signal: exit.signal,
        });
    }
}

impl AsFd for Client {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.stream.as_fd()
    }
}
