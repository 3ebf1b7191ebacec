//! A real pseudo-terminal for a test to drive a program on, as a person at a
//! terminal would: type into it, read what it shows, resize it. The terminal
//! work is rustix's (openpt, TIOCSCTTY, window sizes); the program runs as the
//! leader of its own session with the terminal as its controlling terminal.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{self, OpenptFlags};
use rustix::termios;

/// Generous: machines under load are slow; every wait ends as soon as it can.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// What the terminal has shown so far, filled by a reader thread.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    closed: bool,
}

pub struct Term {
    master: OwnedFd,
    child: Option<Child>,
    screen: Arc<(Mutex<Screen>, Condvar)>,
    /// How far `expect` has read.
    seen: usize,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Term {
    /// Run `cmd` on a new terminal of `rows` x `cols`.
    pub fn spawn(mut cmd: Command, rows: u16, cols: u16) -> Term {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = pty::openpt(flags).expect("openpt");
        pty::grantpt(&master).expect("grantpt");
        pty::unlockpt(&master).expect("unlockpt");
        let slave = pty::ioctl_tiocgptpeer(&master, flags).expect("the slave side");
        termios::tcsetwinsize(&slave, winsize(rows, cols)).expect("window size");
        let dup = || std::process::Stdio::from(slave.try_clone().expect("dup"));
        cmd.stdin(dup()).stdout(dup()).stderr(dup());
        // SAFETY: only raw system calls (setsid, ioctl) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(std::os::fd::BorrowedFd::borrow_raw(0))?;
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn on the terminal");
        // Only the program holds the slave side: reading the master ends (EIO)
        // once it and everything it started have closed it.
        drop(slave);
        let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
        let reader = {
            let screen = screen.clone();
            let master = master.try_clone().expect("dup master");
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                loop {
                    match rustix::io::read(&master, &mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            let (lock, cv) = &*screen;
                            lock.lock().unwrap().bytes.extend_from_slice(&buf[..n]);
                            cv.notify_all();
                        }
                        Err(rustix::io::Errno::INTR) => {}
                        // EIO: nothing holds the terminal any more.
                        Err(_) => break,
                    }
                }
                let (lock, cv) = &*screen;
                lock.lock().unwrap().closed = true;
                cv.notify_all();
            })
        };
        Term {
            master,
            child: Some(child),
            screen,
            seen: 0,
            reader: Some(reader),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Everything shown so far, as text.
    pub fn shown(&self) -> String {
        String::from_utf8_lossy(&self.screen.0.lock().unwrap().bytes).into_owned()
    }

    /// Wait until `needle` is shown (after what earlier `expect`s matched);
    /// returns what was shown up to and including it.
    #[track_caller]
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        let (lock, cv) = &*self.screen;
        let mut s = lock.lock().unwrap();
        loop {
            let hay = &s.bytes[self.seen..];
            if let Some(at) = find(hay, needle.as_bytes()) {
                let end = self.seen + at + needle.len();
                let got = String::from_utf8_lossy(&s.bytes[self.seen..end]).into_owned();
                self.seen = end;
                return got;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || s.closed {
                let shown = String::from_utf8_lossy(&s.bytes).into_owned();
                drop(s);
                std::thread::sleep(Duration::from_millis(100));
                let status = self.child.as_mut().map(|c| c.try_wait());
                panic!("{needle:?} never shown (the program: {status:?}); the terminal shows:\n{shown}");
            }
            s = cv
                .wait_timeout(s, left.min(Duration::from_millis(200)))
                .unwrap()
                .0;
        }
    }

    /// Type `bytes`.
    pub fn send(&self, bytes: &[u8]) {
        let mut f = std::fs::File::from(self.master.try_clone().expect("dup master"));
        f.write_all(bytes).expect("type into the terminal");
    }

    /// Resize the terminal (its foreground process group gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        termios::tcsetwinsize(&self.master, winsize(rows, cols)).expect("resize");
    }

    /// Wait for the program to end (killing it after the deadline).
    #[track_caller]
    pub fn wait(&mut self) -> ExitStatus {
        let child = self.child.as_mut().expect("running");
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
                return status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                panic!(
                    "the program on the terminal never ended; it shows:\n{}",
                    self.shown()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn winsize(rows: u16, cols: u16) -> termios::Winsize {
    termios::Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}
