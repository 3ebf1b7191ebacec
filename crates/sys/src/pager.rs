//! Writing stdout through a pager, as git's `setup_pager` does: the pager runs
//! with `/bin/sh -c`, reading a pipe that becomes our stdout (and our stderr
//! when that is a terminal, so that what is said stays in order); at the end our
//! own streams come back and we wait for the pager, so the shell's prompt never
//! lands in its screen. A signal that ends us does the same first (git's
//! `wait_for_pager_signal`), then ends us as it would have.

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};

use anyhow::{Context, Result};

/// The pager's pid and our saved stdout and stderr, for the signal handler.
static PID: AtomicI32 = AtomicI32::new(0);
static SAVED_OUT: AtomicI32 = AtomicI32::new(-1);
static SAVED_ERR: AtomicI32 = AtomicI32::new(-1);

/// The signals after which we still wait for the pager (git's common ones but
/// SIGPIPE, which Rust ignores: a closed pager is an EPIPE, a quiet end).
const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGHUP, libc::SIGTERM, libc::SIGQUIT];

/// A running pager; [`Pager::finish`] ends our part.
pub struct Pager {
    child: Child,
    out: OwnedFd,
    err: Option<OwnedFd>,
}

/// Start `command` (run with `/bin/sh -c`) with `defaults` set in its
/// environment where they are unset, and make it our stdout, and our stderr
/// too when `stderr_too`.
pub fn start(command: &str, defaults: &[(&str, &str)], stderr_too: bool) -> Result<Pager> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command).stdin(Stdio::piped());
    for (key, value) in defaults {
        if std::env::var_os(key).is_none() {
            cmd.env(key, value);
        }
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start the pager `{command}`"))?;
    let pipe = child
        .stdin
        .take()
        .context("the pager was started without a pipe")?;
    let saved = || -> Result<(OwnedFd, Option<OwnedFd>)> {
        let out = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdout(), 3)
            .context("cannot keep stdout")?;
        let err = match stderr_too {
            true => Some(
                rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stderr(), 3)
                    .context("cannot keep stderr")?,
            ),
            false => None,
        };
        Ok((out, err))
    };
    let (out, err) = match saved() {
        Ok(s) => s,
        Err(e) => {
            drop(pipe);
            let _ = child.wait();
            return Err(e);
        }
    };
    let onto = || -> std::io::Result<()> {
        rustix::stdio::dup2_stdout(&pipe)?;
        if stderr_too {
            rustix::stdio::dup2_stderr(&pipe)?;
        }
        Ok(())
    };
    if let Err(e) = onto() {
        // Our own stdout back (stderr moves last) and the pager gone.
        let _ = rustix::stdio::dup2_stdout(&out);
        drop(pipe);
        let _ = child.wait();
        return Err(e).context("cannot write to the pager");
    }
    // The pager sees its end when our stdout (and stderr) let go of the pipe.
    drop(pipe);
    SAVED_OUT.store(out.as_raw_fd(), Ordering::SeqCst);
    SAVED_ERR.store(err.as_ref().map_or(-1, |e| e.as_raw_fd()), Ordering::SeqCst);
    PID.store(child.id() as i32, Ordering::SeqCst);
    for sig in SIGNALS {
        // SAFETY: the handler makes only async-signal-safe calls.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    Ok(Pager { child, out, err })
}

impl Pager {
    /// Our own streams back (the pager reads to its end), then wait for it.
    /// Whatever is buffered for stdout must be flushed before.
    pub fn finish(mut self) {
        let _ = rustix::stdio::dup2_stdout(&self.out);
        if let Some(err) = &self.err {
            let _ = rustix::stdio::dup2_stderr(err);
        }
        let _ = self.child.wait();
        PID.store(0, Ordering::SeqCst);
        SAVED_OUT.store(-1, Ordering::SeqCst);
        SAVED_ERR.store(-1, Ordering::SeqCst);
        for sig in SIGNALS {
            // SAFETY: restores the default disposition.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: dup2, waitpid, signal and raise are async-signal-safe.
    unsafe {
        let out = SAVED_OUT.load(Ordering::SeqCst);
        if out >= 0 {
            libc::dup2(out, 1);
        }
        let err = SAVED_ERR.load(Ordering::SeqCst);
        if err >= 0 {
            libc::dup2(err, 2);
        }
        let pid = PID.load(Ordering::SeqCst);
        if pid > 0 {
            while libc::waitpid(pid, std::ptr::null_mut(), 0) < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
