//! What of a batch of output the terminal model ([`super::keep`]) need not
//! capture, or need not be fed at all (pure): under a burst of output, the
//! rows that scroll off only to be pushed out of the scrollback again, and the
//! lines that scroll off the screen before the batch ends.

use std::ops::Range;

/// A byte that neither moves the cursor up, nor changes a mode, nor leaves the
/// parser's ground state: printable ASCII, CR, LF, HT and BS.
fn plain(b: u8) -> bool {
    matches!(b, 0x20..=0x7e | b'\r' | b'\n' | b'\t' | 0x08)
}

/// Pure: the part of `bytes`, output about to be fed to the model, from which no
/// row the scrollback keeps (its last `lines` rows) can come, so that the rows
/// scrolling off while it is fed need not be captured.
///
/// It lies in the plain run that ends `bytes` (see [`plain`]), after the last
/// byte where a sequence begun before the run could still end (an ESC's final
/// byte, `0x30..=0x7e`, is the first of them; a CSI's, `0x40..=0x7e`, the first
/// of those, or the next one when that is the `[` of an ESC; after them the
/// parser is in its ground state, in a string, or still in a CSI's parameters,
/// none of which moves the cursor), and it ends where `lines` LFs are still to
/// come. There, a row scrolls off the main screen only with the cursor at the
/// bottom of a scroll region that starts at the top, and plain bytes keep it
/// there: each of those LFs scrolls one more row off, so a row that scrolls off
/// before them is pushed out of the scrollback by them.
pub fn unkept(bytes: &[u8], lines: usize) -> Range<usize> {
    let run = bytes.iter().rposition(|&b| !plain(b)).map_or(0, |i| i + 1);
    let tail = &bytes[run..];
    let after = |from: usize, range: std::ops::RangeInclusive<u8>| {
        tail[from..]
            .iter()
            .position(|b| range.contains(b))
            .map(|i| from + i + 1)
    };
    let mut from = after(0, 0x30..=0x7e).unwrap_or(0);
    if let Some(e) = after(0, 0x40..=0x7e) {
        from = from.max(e);
        if tail[e - 1] == b'[' {
            from = from.max(after(e, 0x40..=0x7e).unwrap_or(0));
        }
    }
    let from = run + from;
    // The LF after which `lines` are left: the one `lines + 1` from the end.
    let mut seen = 0;
    match bytes[from..].iter().rposition(|&b| {
        seen += usize::from(b == b'\n');
        seen > lines
    }) {
        Some(i) => from..from + i + 1,
        None => 0..0,
    }
}

/// Pure: in `part`, plain output (see [`unkept`]), the first line at or after
/// `from` that tells whether the parser is in its ground state: `(start, end)`
/// of a line ended by CR LF (`end` after the LF), with a character that is
/// not a space, no wider than the screen. Written in the ground state from
/// the start of a blank row, such a line is on the row above the cursor after
/// its CR LF; not written (the parser in a sequence), it is not.
pub fn telltale_line(part: &[u8], from: usize, cols: u16) -> Option<(usize, usize)> {
    let mut start = from;
    while start < part.len() {
        let lf = start + part[start..].iter().position(|&b| b == b'\n')?;
        if let Some(line) = part[start..lf].strip_suffix(b"\r") {
            if line.len() <= usize::from(cols) && line.iter().any(u8::is_ascii_graphic) {
                return Some((start, lf + 1));
            }
        }
        start = lf + 1;
    }
    None
}

/// Pure: where the last lines of `part` that fill a screen of `rows` begin:
/// after a CR LF with at least `rows - 1` LFs after it (the cursor's row after
/// that CR LF is blank; the LFs scroll every row above it off).
pub fn last_screen(part: &[u8], rows: u16) -> Option<usize> {
    let mut seen = 0;
    for (i, &b) in part.iter().enumerate().rev() {
        if b == b'\n' {
            if seen + 1 >= usize::from(rows) && i >= 1 && part[i - 1] == b'\r' {
                return Some(i + 1);
            }
            seen += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unkept_is_the_plain_end_of_the_output_but_its_last_lines() {
        let seq: String = (1..=100).map(|i| format!("{i}\r\n")).collect();
        let at = |needle: &str| seq.find(needle).unwrap();
        // After the first byte that could end an ESC's sequence, up to the LF
        // after which 10 are left.
        assert_eq!(unkept(seq.as_bytes(), 10), 1..at("91\r\n"));
        assert_eq!(unkept(seq.as_bytes(), 100), 0..0);
        assert_eq!(unkept(b"", 10), 0..0);
        // After the last byte that is not plain, and a sequence's end.
        let colored = format!("\x1b[31m{seq}");
        assert_eq!(unkept(colored.as_bytes(), 10).start, 5);
        // Still in a CSI's parameters at the end: nothing in the run ends it.
        let split = format!("\x1b[3{seq}");
        assert_eq!(unkept(split.as_bytes(), 10).start, 2);
        let ended = format!("\x1b[3{seq}A{seq}");
        assert_eq!(
            unkept(ended.as_bytes(), 10).start,
            ended.find('A').unwrap() + 1
        );
        // `[`, then a CSI's end.
        let csi = format!("\x1b[\n?25h{seq}");
        assert_eq!(unkept(csi.as_bytes(), 10).start, csi.find('h').unwrap() + 1);
        // Output that ends on a sequence keeps every row.
        assert_eq!(unkept(format!("{seq}\x1b[m").as_bytes(), 10), 0..0);
    }

    #[test]
    fn a_telltale_line_is_a_line_with_something_to_show_ended_by_crlf() {
        let part = b"\r\n  \r\nx\nab cd\r\nnext\r\n";
        let at = |n: &[u8]| part.windows(n.len()).position(|w| w == n).unwrap();
        // Not the empty line, not the spaces, not `x` (a bare LF).
        assert_eq!(telltale_line(part, 0, 80), Some((at(b"ab"), at(b"next"))));
        assert_eq!(
            telltale_line(part, at(b"next"), 80),
            Some((at(b"next"), part.len()))
        );
        // Wider than the screen.
        assert_eq!(telltale_line(b"abcdef\r\n", 0, 5), None);
        assert_eq!(telltale_line(b"abcde\r\n", 0, 5), Some((0, 7)));
    }

    #[test]
    fn the_last_screen_begins_after_a_crlf_with_enough_lines_after_it() {
        let part = b"a\r\nb\r\nc\nd\r\ne\r\n";
        assert_eq!(last_screen(part, 1), Some(part.len()));
        assert_eq!(last_screen(part, 2), Some(part.len() - 3));
        // `c` ends with a bare LF: the line before it begins there.
        assert_eq!(last_screen(part, 3), Some(6));
        assert_eq!(last_screen(part, 4), Some(6));
        assert_eq!(last_screen(part, 5), Some(3));
        assert_eq!(last_screen(part, 6), None);
    }
}
