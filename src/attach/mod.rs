//! attach: connect the caller's terminal to a background run's terminal, both
//! ways, until the detach key, the run's end, or another terminal taking over.
//!
//! Before anything is sent: the record must say running, in the background, on
//! a terminal, with its supervisor alive; this machine's local proof must
//! describe exactly that run (`trust::decide::attach_target`), and it alone
//! names the socket; and whoever answers on the socket must be that supervisor
//! (its pid and our uid, from the kernel's peer credentials).

mod client;
mod modes;
pub mod peek;

use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::command::quoted;
use crate::model::keys::{describe_key, parse_detach_key, DEFAULT_DETACH};
use crate::model::{config, time, Error, Record, SessionId, State};
use crate::run::wire::{self, Decoder, Msg};
use crate::sys::{procfs, socket, term};
use crate::trust::decide::{attach_target, AttachTarget};
use crate::trust::local::Local;
use client::Ending;

/// How long the supervisor has to answer `Hello`.
const ANSWER_TIME: Duration = Duration::from_secs(10);

/// `git bullpen attach <id>`: returns the exit status (0 when detached, the
/// run's status when it ended while attached).
pub fn attach(ctx: &Ctx, id: &SessionId, steal: bool) -> Result<i32> {
    let stored = store::require(&ctx.repo, id)?;
    let target = target(ctx, &stored, "attaching to")?;
    let key = detach_key(ctx)?;
    let tty = std::io::stdin();
    if !term::is_terminal(&tty) {
        return Err(
            Error::failed("attach needs a terminal, and its standard input is not one")
                .hint(format!(
                    "to read the session's output: git bullpen logs {id}"
                ))
                .into(),
        );
    }
    let stream = connect(ctx, id, &target, "attaching to")?;
    let (rows, cols) = term::window_size(&tty).unwrap_or(crate::run::pty::DEFAULT_SIZE);
    let mut dec = Decoder::default();
    hello(&stream, &mut dec, id, steal, rows, cols, key)?;
    let hello = format!(
        "attached to session {id}; detach with {}",
        describe_key(key)
    );
    let ending = client::relay(ctx, &stream, dec, key, tty.as_fd(), &hello)?;
    match ending {
        Ending::Detached => {
            ctx.ui.info(format!(
                "detached from session {id}; it keeps running (back to it: git bullpen attach {id})"
            ));
            Ok(0)
        }
        Ending::Stolen(pid) => {
            ctx.ui.info(format!(
                "detached from session {id}: the terminal of pid {pid} took it over"
            ));
            Ok(0)
        }
        Ending::HungUp => Ok(0),
        Ending::Signal(sig) => Ok(128 + sig),
        Ending::Ended(exit) => {
            ctx.ui
                .info(crate::run::finish::describe_end(ctx, id, &exit));
            Ok(exit.shell_status())
        }
        Ending::Lost => Err(Error::failed(format!(
            "lost the connection to session {id}: its supervisor went away without saying how \
             the run ended"
        ))
        .hint(format!(
            "see `git bullpen ls {id}` and `git bullpen logs {id}`"
        ))
        .into()),
    }
}

/// The run to connect to (`doing`: "attaching to", in the refusal), or why not.
fn target(ctx: &Ctx, stored: &Stored, doing: &str) -> Result<AttachTarget> {
    let r = &stored.record;
    let id = &r.id;
    let Some(p) = r.process.as_ref().filter(|_| r.state == State::Running) else {
        return Err(not_running(r).into());
    };
    if !p.background {
        return Err(Error::refused(format!(
            "session {id} runs in the foreground of another terminal (pid {}); only background \
             runs can be attached",
            p.pid
        ))
        .hint(format!("next time: git bullpen resume --bg {id}"))
        .into());
    }
    if !procfs::is_session_alive(p) {
        return Err(Error::failed(format!(
            "session {id} is lost: its supervisor is gone, and its terminal with it"
        ))
        .hint(format!(
            "end what is left with `git bullpen stop {id}`; its output so far: git bullpen logs {id}"
        ))
        .into());
    }
    let local = Local::of(&ctx.layout, id).run(p.pid);
    let decided = match &local {
        Ok(run) => attach_target(p, run.as_ref()),
        Err(e) => Err(crate::trust::decide::Distrust::NoLocalRun(Some(format!(
            "{e:#}"
        )))),
    };
    decided.map_err(|why| {
        Error::refused(format!("not {doing} session {id}: {}", why.describe())).into()
    })
}

fn not_running(r: &Record) -> Error {
    let id = &r.id;
    let state = match (&r.exit, r.state) {
        (Some(e), State::Exited | State::Stopped) => crate::model::ending::how(r.state, e),
        _ => r.state.as_str().to_owned(),
    };
    Error::failed(format!(
        "session {id} is not running ({state}); there is nothing to attach to"
    ))
    .hint(format!(
        "start it again in the background: git bullpen resume --bg {id}; its output so far: \
         git bullpen logs {id}"
    ))
}

/// The detach key: git config `bullpen.detachKey`, else Ctrl-\.
fn detach_key(ctx: &Ctx) -> Result<u8> {
    match ctx.repo.config_string(config::DETACH_KEY) {
        None => Ok(DEFAULT_DETACH),
        Some(spec) if spec.trim().is_empty() => Ok(DEFAULT_DETACH),
        Some(spec) => parse_detach_key(&spec).map_err(|what| {
            Error::failed(format!(
                "bad config value {} for '{}'",
                quoted(&spec),
                config::DETACH_KEY
            ))
            .hint(what)
            .into()
        }),
    }
}

/// Connect to the run's socket, and make sure its supervisor is the one
/// answering (nothing is sent before).
fn connect(ctx: &Ctx, id: &SessionId, target: &AttachTarget, doing: &str) -> Result<UnixStream> {
    connect_with(ctx, id, target, doing, |p: &Path| UnixStream::connect(p))
}

/// [`connect`], through `open`.
fn connect_with(
    ctx: &Ctx,
    id: &SessionId,
    target: &AttachTarget,
    doing: &str,
    open: impl FnOnce(&Path) -> std::io::Result<UnixStream>,
) -> Result<UnixStream> {
    let path = Path::new(&target.socket);
    let stream = match open(path) {
        Ok(s) => s,
        Err(e) => {
            // The run may have ended just now.
            if let Some(now) = store::load(&ctx.repo, id)? {
                if now.record.state != State::Running {
                    return Err(not_running(&now.record).into());
                }
            }
            return Err(e).with_context(|| {
                format!(
                    "cannot connect to the terminal of session {id} ({})",
                    path.display()
                )
            });
        }
    };
    let (pid, uid) = socket::peer(&stream)?;
    let supervisor = &target.supervisor;
    if !answered_by_supervisor(pid, uid, supervisor.pid, socket::my_uid())
        || !supervisor.is(&procfs::identity(supervisor.pid))
    {
        return Err(Error::refused(format!(
            "not {doing} session {id}: its socket {} is answered by pid {pid} (uid {uid}), \
             not by the session's supervisor (pid {})",
            path.display(),
            supervisor.pid
        ))
        .hint("nothing was sent to it; see `git bullpen ls` and who owns that socket")
        .into());
    }
    Ok(stream)
}

/// Pure: the answer on the socket comes from the run's supervisor, running as us.
fn answered_by_supervisor(peer_pid: u32, peer_uid: u32, supervisor: u32, me: u32) -> bool {
    peer_pid == supervisor && peer_uid == me
}

/// Say hello; `Ok` once let in.
fn hello(
    stream: &UnixStream,
    dec: &mut Decoder,
    id: &SessionId,
    steal: bool,
    rows: u16,
    cols: u16,
    key: u8,
) -> Result<()> {
    use std::io::{Read, Write};
    let mut s = stream;
    s.write_all(&wire::frame(&Msg::Hello { steal, rows, cols }))
        .with_context(|| format!("cannot talk to the terminal of session {id}"))?;
    stream
        .set_read_timeout(Some(ANSWER_TIME))
        .context("cannot set a timeout on the socket")?;
    let mut buf = [0u8; 4096];
    let answer = loop {
        if let Some(m) = dec.next_msg()? {
            break m;
        }
        let n = s
            .read(&mut buf)
            .with_context(|| format!("the supervisor of session {id} did not answer"))?;
        if n == 0 {
            return Err(Error::failed(format!(
                "the supervisor of session {id} closed the connection without letting us in"
            ))
            .hint(format!("see `git bullpen ls {id}`"))
            .into());
        }
        dec.push(&buf[..n]);
    };
    stream
        .set_read_timeout(None)
        .context("cannot clear the socket's timeout")?;
    match answer {
        Msg::Welcome => Ok(()),
        Msg::Busy { pid, since } => Err(Error::refused(format!(
            "session {id} is attached to another terminal (pid {pid}, since {}); one terminal at \
             a time",
            match time::parse_rfc3339(&since) {
                Some(t) => time::age(time::now_unix() - t),
                None => since,
            }
        ))
        .hint(format!(
            "detach it there ({}), or take it over: git bullpen attach --steal {id}",
            describe_key(key)
        ))
        .into()),
        Msg::Refused(why) => {
            Err(Error::refused(format!("session {id}'s supervisor refused: {why}")).into())
        }
        _ => Err(Error::failed(format!(
            "the supervisor of session {id} answered something other than letting us in"
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_supervisor_running_as_us_may_answer() {
        assert!(answered_by_supervisor(10, 1000, 10, 1000));
        assert!(
            !answered_by_supervisor(11, 1000, 10, 1000),
            "another process"
        );
        assert!(!answered_by_supervisor(10, 0, 10, 1000), "another user");
    }
}
