//! peek: the current screen of a background run, read from its supervisor's
//! terminal model without attaching (a terminal may be attached meanwhile).
//! The same checks as attach before anything is sent: the record, this
//! machine's local proof of the run (which alone names the socket), and the
//! supervisor's own pid and our uid answering on it.

use std::io::{Read, Write};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{connect, target};
use crate::context::Ctx;
use crate::git::store;
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
