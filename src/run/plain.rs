//! A run's terminal output as plain text, for `logs`: what a program writes on
//! a terminal carries control sequences (colours, cursor moves, screen
//! clears, titles) and `\r\n` line ends. vte's parser (the one alacritty uses)
//! takes them apart; only printable text, newlines and tabs come out.

use std::io::Write;

/// Strips what it is given and writes the text to `W`; keeps the parser's
/// state between writes, so a sequence split across two reads is still
/// recognised (`logs --follow`).
pub struct Plain<W: Write> {
    parser: vte::Parser,
    text: Text<W>,
}

struct Text<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Plain<W> {
    pub fn new(out: W) -> Plain<W> {
        Plain {
            parser: vte::Parser::new(),
            text: Text {
                out,
                buf: Vec::new(),
            },
        }
    }
}

impl<W: Write> vte::Perform for Text<W> {
    fn print(&mut self, c: char) {
        let mut b = [0u8; 4];
        self.buf.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }

    fn execute(&mut self, byte: u8) {
        if matches!(byte, b'\n' | b'\t') {
            self.buf.push(byte);
        }
    }
}

impl<W: Write> Write for Plain<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.parser.advance(&mut self.text, bytes);
        self.text.out.write_all(&self.text.buf)?;
        self.text.buf.clear();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.text.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(chunks: &[&[u8]]) -> String {
        let mut p = Plain::new(Vec::new());
        for c in chunks {
            p.write_all(c).unwrap();
        }
        String::from_utf8(p.text.out).unwrap()
    }

    #[test]
    fn control_sequences_go_and_text_stays() {
        assert_eq!(plain(&[b"hi\r\n"]), "hi\n");
        assert_eq!(plain(&[b"\x1b[1;32mgreen\x1b[0m\tx\r\n"]), "green\tx\n");
        assert_eq!(plain(&[b"\x1b]0;a title\x07after\n"]), "after\n");
        assert_eq!(plain(&[b"\x1b[2J\x1b[H\x1b[?1049hscreen\n"]), "screen\n");
        assert_eq!(
            plain(&["caf\u{e9} \u{2713}\n".as_bytes()]),
            "caf\u{e9} \u{2713}\n"
        );
        // A sequence split between two reads.
        assert_eq!(plain(&[b"a\x1b[3", b"1mb\n"]), "ab\n");
    }
}
