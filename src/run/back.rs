//! The scrollback of the supervisor's terminal model ([`super::keep`]): each
//! row that scrolls off the top of the main screen, kept as the text and SGR
//! sequences that draw it (vt100's "basic" format, from the default
//! attributes), a few bytes a cell instead of vt100's 32 bytes a cell and one
//! allocation a row. vt100 itself keeps no scrollback (capacity 0): it would
//! allocate a whole row for every line that scrolls.

use std::collections::VecDeque;
use std::fmt::Write as _;

use unicode_width::UnicodeWidthChar;

/// A row as it scrolled off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Text and SGR sequences, from the default attributes on.
    pub text: Box<str>,
    /// The terminal wrapped it into the next row.
    pub wrapped: bool,
}

/// The rows that scrolled off, oldest first, at most `capacity`.
pub struct Back {
    lines: VecDeque<Line>,
    capacity: usize,
    scratch: String,
}

/// A writer that keeps only the first character it is given, then stops
/// the writing (an error): how vt100 says whether a row wrapped.
struct First(Option<char>);

impl std::fmt::Write for First {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 = s.chars().next();
        Err(std::fmt::Error)
    }
}

impl Back {
    pub fn new(capacity: usize) -> Back {
        Back {
            lines: VecDeque::new(),
            capacity,
            scratch: String::new(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// A row that scrolled off the top of the main screen.
    pub fn push(&mut self, row: vt100::capture::RowContents<'_>) {
        if self.capacity == 0 {
            return;
        }
        let mut state = vt100::capture::BasicFormattedCaptureState::new();
        self.scratch.clear();
        // Writing to a String cannot fail.
        let _ = row.write_formatted_basic(&mut self.scratch, &mut state);
        // Written again with the same state, the row starts with a newline
        // unless it wrapped; only that first character is taken.
        let mut first = First(None);
        let _ = row.write_formatted_basic(&mut first, &mut state);
        if self.lines.len() >= self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(Line {
            text: self.scratch.as_str().into(),
            wrapped: first.0 != Some('\n'),
        });
    }

    /// The last `n` rows (fewer if fewer are kept), oldest first, taken out.
    pub fn take_last(&mut self, n: usize) -> Vec<Line> {
        let from = self.lines.len().saturating_sub(n);
        self.lines.drain(from..).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter()
    }
}

/// Pure: the bytes that draw `lines` on the rows `top..` of a screen `cols`
/// wide (each cut at that width, as a terminal cuts a row it narrows), then
/// put back the attributes `attrs` and the cursor at `cursor` (from 0).
pub fn draw(lines: &[Line], top: u16, cols: u16, attrs: &str, cursor: (u16, u16)) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let row = usize::from(top) + i + 1;
        let _ = write!(out, "\x1b[{row};1H\x1b[m{}", clip(&line.text, cols));
    }
    out.push_str(attrs);
    let _ = write!(out, "\x1b[{};{}H", cursor.0 + 1, cursor.1 + 1);
    out
}

/// Pure: `text` (vt100's basic format: text and SGR sequences) without what
/// lies beyond column `cols`.
pub fn clip(text: &str, cols: u16) -> &str {
    let mut width = 0usize;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\x1b' {
            // An SGR sequence: up to its `m`, no width.
            for (_, c) in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
            continue;
        }
        width += c.width().unwrap_or(0);
        if width > usize::from(cols) {
            return &text[..i];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_columns_not_bytes_nor_sequences() {
        assert_eq!(clip("abcdef", 4), "abcd");
        assert_eq!(clip("\x1b[31mab\x1b[mcd", 3), "\x1b[31mab\x1b[mc");
        assert_eq!(clip("caf\u{e9}!", 4), "caf\u{e9}");
        // A wide character that would cross the edge is left out whole.
        assert_eq!(clip("a\u{4e16}b", 2), "a");
        assert_eq!(clip("ab", 80), "ab");
    }
}
