//! What `git bullpen attach` and a run's supervisor say to each other on the
//! run's socket: frames of one type byte, a big-endian u32 length and the
//! payload. Encoding and decoding are pure.
//!
//! client → supervisor: `Hello` (first, once), then `Input` and `Resize`.
//! supervisor → client: `Welcome`, `Busy` or `Refused` (the answer to `Hello`),
//! then `Output` until `Exit` (the run ended), or `Stolen` (another terminal
//! attached with `--steal`); the first `Output` after `Welcome` is the current
//! screen, drawn for the client's size. A client detaches by closing the
//! connection.
//!
//! `git bullpen peek` sends `Peek` instead of `Hello` and is answered `Screen`
//! (or `Refused`), then closed: it never takes the one client's place.

use anyhow::{bail, Context, Result};

use super::keep::Shot;

/// The first bytes of a `Hello`: the protocol and its version.
const MAGIC: &[u8; 4] = b"BPA1";
/// A frame larger than this is a broken or hostile peer.
pub const MAX_FRAME: usize = 1 << 20;
/// How much output one `Output` frame carries at most.
pub const CHUNK: usize = 64 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    Hello {
        steal: bool,
        rows: u16,
        cols: u16,
    },
    Welcome,
    /// Instead of `Hello`: the screen, please (with colours and attributes
    /// when `color`).
    Peek {
        color: bool,
    },
    /// The answer to `Peek`.
    Screen(Shot),
    /// Someone else is attached: their pid, and since when (RFC 3339).
    Busy {
        pid: u32,
        since: String,
    },
    Refused(String),
    Input(Vec<u8>),
    Resize {
        rows: u16,
        cols: u16,
    },
    Output(Vec<u8>),
    Exit {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// Detached because the terminal of process `pid` attached with --steal.
    Stolen {
        pid: u32,
    },
}

const HELLO: u8 = b'H';
const WELCOME: u8 = b'W';
const BUSY: u8 = b'B';
const REFUSED: u8 = b'R';
const INPUT: u8 = b'i';
const RESIZE: u8 = b'z';
const OUTPUT: u8 = b'o';
const EXIT: u8 = b'x';
const STOLEN: u8 = b's';
const PEEK: u8 = b'P';
const SCREEN: u8 = b'S';

/// Append `msg`, framed, to `out`.
pub fn encode(msg: &Msg, out: &mut Vec<u8>) {
    let mut frame = |kind: u8, payload: &[u8]| {
        out.push(kind);
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(payload);
    };
    match msg {
        Msg::Hello { steal, rows, cols } => {
            let mut p = MAGIC.to_vec();
            p.push(u8::from(*steal));
            p.extend_from_slice(&rows.to_be_bytes());
            p.extend_from_slice(&cols.to_be_bytes());
            frame(HELLO, &p)
        }
        Msg::Welcome => frame(WELCOME, &[]),
        Msg::Peek { color } => {
            let mut p = MAGIC.to_vec();
            p.push(u8::from(*color));
            frame(PEEK, &p)
        }
        // Plain data: serialising it cannot fail.
        Msg::Screen(shot) => frame(SCREEN, &serde_json::to_vec(shot).unwrap_or_default()),
        Msg::Busy { pid, since } => {
            let mut p = pid.to_be_bytes().to_vec();
            p.extend_from_slice(since.as_bytes());
            frame(BUSY, &p)
        }
        Msg::Refused(why) => frame(REFUSED, why.as_bytes()),
        Msg::Input(bytes) => frame(INPUT, bytes),
        Msg::Resize { rows, cols } => {
            let mut p = rows.to_be_bytes().to_vec();
            p.extend_from_slice(&cols.to_be_bytes());
            frame(RESIZE, &p)
        }
        Msg::Output(bytes) => frame(OUTPUT, bytes),
        Msg::Exit { code, signal } => {
            let mut p = Vec::with_capacity(10);
            for v in [code, signal] {
                p.push(u8::from(v.is_some()));
                p.extend_from_slice(&v.unwrap_or(0).to_be_bytes());
            }
            frame(EXIT, &p)
        }
        Msg::Stolen { pid } => frame(STOLEN, &pid.to_be_bytes()),
    }
}

/// `msg` as one frame.
pub fn frame(msg: &Msg) -> Vec<u8> {
    let mut out = Vec::new();
    encode(msg, &mut out);
    out
}

/// Frames out of a byte stream, as it arrives.
#[derive(Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Where the next frame starts in `buf`.
    at: usize,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        if self.at > 0 && self.at == self.buf.len() {
            self.buf.clear();
            self.at = 0;
        } else if self.at > MAX_FRAME {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole message, if one has arrived.
    pub fn next_msg(&mut self) -> Result<Option<Msg>> {
        let rest = &self.buf[self.at..];
        if rest.len() < 5 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        if len > MAX_FRAME {
            bail!("a frame of {len} bytes is too large");
        }
        if rest.len() < 5 + len {
            return Ok(None);
        }
        let kind = rest[0];
        let payload: Vec<u8> = rest[5..5 + len].to_vec();
        self.at += 5 + len;
        decode(kind, payload).map(Some)
    }
}

fn decode(kind: u8, p: Vec<u8>) -> Result<Msg> {
    let u16_at = |i: usize| -> Result<u16> {
        match p.get(i..i + 2) {
            Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
            None => bail!("a frame is too short"),
        }
    };
    let u32_at = |i: usize| -> Result<u32> {
        match p.get(i..i + 4) {
            Some(b) => Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            None => bail!("a frame is too short"),
        }
    };
    Ok(match kind {
        HELLO => {
            if p.get(..4) != Some(&MAGIC[..]) {
                bail!("the peer speaks another version of bullpen's attach protocol");
            }
            Msg::Hello {
                steal: p.get(4).copied().unwrap_or(0) != 0,
                rows: u16_at(5)?,
                cols: u16_at(7)?,
            }
        }
        WELCOME => Msg::Welcome,
        PEEK => {
            if p.get(..4) != Some(&MAGIC[..]) {
                bail!("the peer speaks another version of bullpen's attach protocol");
            }
            Msg::Peek {
                color: p.get(4).copied().unwrap_or(0) != 0,
            }
        }
        SCREEN => Msg::Screen(serde_json::from_slice(&p).context("a screen frame is not one")?),
        BUSY => Msg::Busy {
            pid: u32_at(0)?,
            since: String::from_utf8_lossy(p.get(4..).unwrap_or_default()).into_owned(),
        },
        REFUSED => Msg::Refused(String::from_utf8_lossy(&p).into_owned()),
        INPUT => Msg::Input(p),
        RESIZE => Msg::Resize {
            rows: u16_at(0)?,
            cols: u16_at(2)?,
        },
        OUTPUT => Msg::Output(p),
        EXIT => {
            let opt = |i: usize| -> Result<Option<i32>> {
                let set = *p
                    .get(i)
                    .ok_or_else(|| anyhow::anyhow!("a frame is too short"))?;
                let v = u32_at(i + 1)? as i32;
                Ok((set != 0).then_some(v))
            };
            Msg::Exit {
                code: opt(0)?,
                signal: opt(5)?,
            }
        }
        STOLEN => Msg::Stolen { pid: u32_at(0)? },
        other => bail!("unknown frame type {other:#04x}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_survives_the_trip_even_byte_by_byte() {
        let msgs = [
            Msg::Hello {
                steal: true,
                rows: 50,
                cols: 132,
            },
            Msg::Welcome,
            Msg::Peek { color: true },
            Msg::Screen(Shot {
                rows: 2,
                cols: 3,
                lines: vec!["ab".into(), "".into()],
                cursor: (1, 0),
                cursor_visible: true,
                alternate_screen: false,
                formatted: Some("\x1b[1mab\n".into()),
            }),
            Msg::Busy {
                pid: 4242,
                since: "2026-01-01T00:00:00Z".into(),
            },
            Msg::Refused("no".into()),
            Msg::Input(b"hello\r".to_vec()),
            Msg::Resize { rows: 1, cols: 2 },
            Msg::Output(vec![0x1b, b'[', b'm', 0xff]),
            Msg::Exit {
                code: Some(3),
                signal: None,
            },
            Msg::Exit {
                code: None,
                signal: Some(15),
            },
            Msg::Stolen { pid: 7 },
        ];
        let mut bytes = Vec::new();
        for m in &msgs {
            encode(m, &mut bytes);
        }
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in bytes {
            d.push(&[b]);
            while let Some(m) = d.next_msg().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, msgs);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut d = Decoder::default();
        d.push(&[b'?', 0, 0, 0, 0]);
        assert!(d.next_msg().is_err());
        let mut d = Decoder::default();
        d.push(&[HELLO, 0, 0, 0, 4, b'X', b'X', b'X', b'X']);
        assert!(d.next_msg().is_err(), "wrong magic");
        let mut d = Decoder::default();
        d.push(&[OUTPUT, 0xff, 0xff, 0xff, 0xff]);
        assert!(d.next_msg().is_err(), "too large");
        let mut d = Decoder::default();
        d.push(&[RESIZE, 0, 0, 0, 1, 0]);
        assert!(d.next_msg().is_err(), "too short");
        let mut d = Decoder::default();
        d.push(&[SCREEN, 0, 0, 0, 1, b'{']);
        assert!(d.next_msg().is_err(), "not a screen");
    }
}
