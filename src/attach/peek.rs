//! peek: the current screen of a background run, read from its supervisor's
//! terminal model without attaching (a terminal may be attached meanwhile).
//! The same checks as attach before anything is sent: the record, this
//! machine's local proof of the run (which alone names the socket), and the
//! supervisor's own pid and our uid answering on it.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{connect, connect_with, target};
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::{Error, SessionId};
use crate::run::keep::Shot;
use crate::run::wire::{self, Decoder, Msg};

/// How long the supervisor has to answer.
const ANSWER_TIME: Duration = Duration::from_secs(10);

/// How `peek` prints the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Text,
    /// With its colours and attributes.
    Color,
    Json,
}

/// `git bullpen peek <id>`: the screen, printed on the Ui's stdout.
pub fn peek(ctx: &Ctx, id: &SessionId, form: Form) -> Result<i32> {
    let stored = store::require(&ctx.repo, id)?;
    let doing = "reading the screen of";
    let target = target(ctx, &stored, doing)?;
    let stream = connect(ctx, id, &target, doing)?;
    let shot = ask(&stream, id, form == Form::Color)?;
    let mut out = ctx.ui.out();
    let text = match form {
        Form::Json => {
            let v = serde_json::json!({
                "id": id.as_str(),
                "rows": shot.rows,
                "cols": shot.cols,
                "cursor": {
                    "row": shot.cursor.0,
                    "col": shot.cursor.1,
                    "visible": shot.cursor_visible,
                },
                "alternate_screen": shot.alternate_screen,
                "lines": shot.lines,
            });
            let mut s = serde_json::to_string_pretty(&v).context("cannot write JSON")?;
            s.push('\n');
            s
        }
        Form::Text => text(&shot.lines),
        Form::Color => colored(shot.formatted.as_deref().unwrap_or_default()),
    };
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(0)
}

/// Pure: the screen's rows as lines, without the blank ones at the bottom.
fn text(lines: &[String]) -> String {
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].iter().map(|l| format!("{l}\n")).collect()
}

/// Pure: the formatted screen without its blank rows at the bottom, the
/// attributes reset at the end.
fn colored(formatted: &str) -> String {
    let body = formatted.trim_end_matches('\n');
    match body.is_empty() {
        true => String::new(),
        false => format!("{body}\x1b[m\n"),
    }
}

/// What a supervisor answered a glance (`ls --screen`).
#[derive(Debug)]
pub enum Glance {
    Shot(Shot),
    /// Nothing by the deadline (a stopped or busy supervisor).
    NoAnswer,
    /// It could not be asked, or refused: why.
    Failed(String),
}

/// The screens of `sessions` at once, for `ls --screen`: each checked as
/// `peek` checks it and asked without waiting (a connection that would wait,
/// its supervisor taking none, is not made), the answers read as they come
/// until `deadline`. Never later: a supervisor that has not answered by then
/// is `NoAnswer`.
pub fn glance(ctx: &Ctx, sessions: &[&Stored], deadline: Instant) -> Vec<Glance> {
    let doing = "reading the screen of";
    let mut answers: Vec<Glance> = Vec::with_capacity(sessions.len());
    let mut asked: Vec<(usize, UnixStream, Decoder)> = Vec::new();
    for (i, stored) in sessions.iter().enumerate() {
        let id = &stored.record.id;
        let sent = target(ctx, stored, doing)
            .and_then(|t| connect_with(ctx, id, &t, doing, connect_now))
            .and_then(|stream| {
                // A fresh connection's buffer takes these few bytes at once.
                (&stream)
                    .write_all(&wire::frame(&Msg::Peek { color: false }))
                    .with_context(|| format!("cannot talk to the terminal of session {id}"))?;
                Ok(stream)
            });
        match sent {
            Ok(stream) => {
                asked.push((i, stream, Decoder::default()));
                answers.push(Glance::NoAnswer);
            }
            Err(e) => answers.push(Glance::Failed(crate::ui::one_line(&e))),
        }
    }
    let mut buf = vec![0u8; wire::CHUNK];
    while !asked.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let ready: Vec<bool> = {
            use rustix::event::{poll, PollFd, PollFlags, Timespec};
            let mut fds: Vec<PollFd> = asked
                .iter()
                .map(|(_, s, _)| PollFd::new(s, PollFlags::IN))
                .collect();
            let ts = Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: left.subsec_nanos() as _,
            };
            match poll(&mut fds, Some(&ts)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
            fds.iter().map(|f| !f.revents().is_empty()).collect()
        };
        let mut still = Vec::new();
        for ((i, stream, mut dec), ready) in asked.into_iter().zip(ready) {
            if !ready {
                still.push((i, stream, dec));
                continue;
            }
            match read_answer(&stream, &mut dec, &mut buf) {
                Ok(None) => still.push((i, stream, dec)),
                Ok(Some(Msg::Screen(shot))) => answers[i] = Glance::Shot(shot),
                Ok(Some(Msg::Refused(why))) => answers[i] = Glance::Failed(why),
                Ok(Some(_)) => answers[i] = Glance::Failed("an answer that is no screen".into()),
                Err(e) => answers[i] = Glance::Failed(crate::ui::one_line(&e)),
            }
        }
        asked = still;
    }
    answers
}

/// Connect without waiting: a supervisor whose queue of connections is full
/// (it takes none: stopped) refuses at once (`EAGAIN`) instead of holding us.
fn connect_now(path: &Path) -> std::io::Result<UnixStream> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )?;
    rustix::net::connect(&fd, &SocketAddrUnix::new(path)?)?;
    Ok(UnixStream::from(fd))
}

/// What has arrived on a non-blocking `stream`: a whole answer, or `None` yet.
fn read_answer(stream: &UnixStream, dec: &mut Decoder, buf: &mut [u8]) -> Result<Option<Msg>> {
    loop {
        if let Some(m) = dec.next_msg()? {
            return Ok(Some(m));
        }
        match (&*stream).read(buf) {
            Ok(0) => anyhow::bail!("the supervisor closed the connection without an answer"),
            Ok(n) => dec.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("cannot read the supervisor's answer"),
        }
    }
}

/// Send `Peek`, read the answer.
fn ask(stream: &std::os::unix::net::UnixStream, id: &SessionId, color: bool) -> Result<Shot> {
    let mut s = stream;
    s.write_all(&wire::frame(&Msg::Peek { color }))
        .with_context(|| format!("cannot talk to the terminal of session {id}"))?;
    stream
        .set_read_timeout(Some(ANSWER_TIME))
        .context("cannot set a timeout on the socket")?;
    let mut dec = Decoder::default();
    let mut buf = vec![0u8; wire::CHUNK];
    let answer = loop {
        if let Some(m) = dec.next_msg()? {
            break m;
        }
        let n = s
            .read(&mut buf)
            .with_context(|| format!("the supervisor of session {id} did not answer"))?;
        if n == 0 {
            return Err(Error::failed(format!(
                "the supervisor of session {id} closed the connection without showing its screen"
            ))
            .hint(format!(
                "a run started by an older bullpen cannot be peeked at; its output: git bullpen \
                 logs {id}"
            ))
            .into());
        }
        dec.push(&buf[..n]);
    };
    match answer {
        Msg::Screen(shot) => Ok(shot),
        Msg::Refused(why) => {
            Err(Error::refused(format!("session {id}'s supervisor refused: {why}")).into())
        }
        _ => Err(Error::failed(format!(
            "the supervisor of session {id} answered something other than its screen"
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_drops_the_blank_rows_at_the_bottom_only() {
        let lines: Vec<String> = ["", "a", "", "b  c", "", ""].map(String::from).to_vec();
        assert_eq!(text(&lines), "\na\n\nb  c\n");
        assert_eq!(text(&["".into(), "".into()]), "");
        assert_eq!(colored("\x1b[31mred\n\n\n"), "\x1b[31mred\x1b[m\n");
        assert_eq!(colored("\n\n"), "");
    }
}
