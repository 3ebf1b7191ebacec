//! A run's log read as a terminal would show it, for `logs`: the raw bytes go
//! through vt100's terminal model, so cursor motions leave spaces, `\r`
//! overwrites, erase sequences erase and a progress bar leaves its last state.
//! Rows the model scrolls off the top come out as they go (vt100's
//! `on_scroll`); the rest of the screen when the run ends. Rows the terminal
//! wrapped are joined, so a long line stays one line.
//!
//! The log also holds bullpen's own lines (the supervisor's stdout and stderr:
//! its end line `bullpen: session <id> exited 0 after 1.2s`, warnings), written
//! beside the terminal, not through it: a line that starts after a `\n` with
//! one of [`OWN`]'s prefixes and ends in a bare `\n` (a terminal's lines end in
//! `\r\n`). Such a line ends the screen before it (everything on it is printed),
//! is printed as it is, and the next run starts on a fresh terminal.
//!
//! The model has the size the run's terminal had ([`super::sizes`]: where in
//! the log each size began), 24x80 where none was recorded.

use std::collections::VecDeque;
use std::io::Write;
use std::num::NonZeroU16;

use vt100::capture::{basic_formatted_to_plain, BasicFormattedCaptureState, RowContents};

use super::keep::aside;
use super::sizes::Size;

/// The prefixes of bullpen's own lines (`Ui`'s).
const OWN: [&[u8]; 5] = [
    b"bullpen: ",
    b"warning: ",
    b"error: ",
    b"fatal: ",
    b"hint: ",
];
/// Longer than any line of bullpen's own: held back no further.
const OWN_MAX: usize = 64 * 1024;

/// The run's terminal size when nothing else is known: the supervisor's
/// default (`__supervise` without `--size`).
pub const ROWS: u16 = 24;
pub const COLS: u16 = 80;

/// Renders what it is given and writes text lines to `W`. Keeps the model's
/// state between writes (`logs --follow` hands it what each read got).
pub struct Render<W: Write> {
    parser: vt100::Parser<Rows>,
    out: W,
    /// Bytes of a line that may be one of bullpen's own; `None`: not at the
    /// start of a line.
    held: Option<Vec<u8>>,
    /// Print a line as soon as the cursor has left it downwards (`--follow`),
    /// not only once it scrolls off or the run ends.
    follow: bool,
    /// Bytes of the log taken so far.
    at: u64,
    /// The sizes recorded from `at` on, and how many were given in all.
    sizes: VecDeque<Size>,
    given: usize,
    /// The size of the run's terminal (what a fresh model gets).
    size: (u16, u16),
}

/// What vt100 scrolls off the top of the screen, as text lines.
#[derive(Default)]
struct Rows {
    lines: Lines,
    /// How many of the screen's top rows were printed already (`follow`).
    printed: u16,
}

impl vt100::Callbacks for Rows {
    fn on_scroll(&mut self, row: RowContents<'_>, alternate: bool) {
        // A terminal keeps no scrollback of its alternate screen.
        if alternate {
            return;
        }
        if self.printed > 0 {
            self.printed -= 1;
            return;
        }
        let (text, wrapped) = row_text(&row);
        self.lines.push(&text, wrapped);
    }
}

/// A scrolled-off row's text and whether the terminal wrapped it into the
/// next one. vt100 says the latter only through the newline its capture
/// writes before the next row when the row was not wrapped: the row is
/// written twice with one state, and the byte after the first copy tells.
fn row_text(row: &RowContents<'_>) -> (String, bool) {
    let mut formatted = String::new();
    let mut state = BasicFormattedCaptureState::new();
    let _ = row.write_formatted_basic(&mut formatted, &mut state);
    let first = formatted.len();
    let _ = row.write_formatted_basic(&mut formatted, &mut state);
    let wrapped = formatted.as_bytes().get(first) != Some(&b'\n');
    (
        basic_formatted_to_plain(&formatted[..first]).collect(),
        wrapped,
    )
}

/// Rows joined into lines: a wrapped row continues on the next.
#[derive(Default)]
struct Lines {
    current: String,
    done: String,
}

impl Lines {
    fn push(&mut self, row: &str, wrapped: bool) {
        self.current.push_str(row);
        if !wrapped {
            self.end_line();
        }
    }

    fn end_line(&mut self) {
        self.done.push_str(self.current.trim_end_matches(' '));
        self.done.push('\n');
        self.current.clear();
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

fn parser((rows, cols): (u16, u16)) -> vt100::Parser<Rows> {
    // No scrollback: each row leaves through `on_scroll` as it goes.
    vt100::Parser::new_with_callbacks(nonzero(rows), nonzero(cols), 0, Rows::default())
}

/// Whether `held` (from a line's start) is one of bullpen's own lines: `Some`
/// once it can tell, `None` while it may still be.
fn own_line(held: &[u8]) -> Option<bool> {
    let complete = held.last() == Some(&b'\n');
    let body = if complete {
        &held[..held.len() - 1]
    } else {
        held
    };
    if body.iter().any(|&b| b == b'\r' || b == 0x1b) || held.len() > OWN_MAX {
        return Some(false);
    }
    let started = OWN.iter().any(|p| body.starts_with(p));
    if complete {
        return Some(started);
    }
    let may = started || OWN.iter().any(|p| p.starts_with(body));
    if may {
        None
    } else {
        Some(false)
    }
}

impl<W: Write> Render<W> {
    pub fn new(out: W, follow: bool) -> Render<W> {
        Render {
            parser: parser((ROWS, COLS)),
            out,
            held: Some(Vec::new()),
            follow,
            at: 0,
            sizes: VecDeque::new(),
            given: 0,
            size: (ROWS, COLS),
        }
    }

    /// The sizes recorded for this log so far, all of them (`--follow` gives
    /// them again as the file grows: only the new ones are taken).
    pub fn sizes(&mut self, all: &[Size]) {
        if let Some(new) = all.get(self.given..) {
            self.sizes.extend(new.iter().copied());
            self.given = all.len();
        }
    }

    /// Take on every size that began at or before the log's byte `at`.
    fn resize_to_date(&mut self) {
        while let Some(size) = self.sizes.front().filter(|s| s.offset <= self.at).copied() {
            self.sizes.pop_front();
            self.size = (size.rows, size.cols);
            // The rows the cursor has left are printed as they were: a
            // narrower terminal would cut them.
            self.catch_up();
            // Rows that scrolled off were printed: a taller screen does not get
            // them back on top (vt100 would make room for them, blank).
            match self.parser.screen().alternate_screen() {
                true => aside(&mut self.parser, b"\x1b[?47l\x1b[3J\x1b[?47h"),
                false => aside(&mut self.parser, b"\x1b[3J"),
            }
            self.parser.set_size(nonzero(size.rows), nonzero(size.cols));
        }
    }

    /// The end of the log: whatever is still held goes through the model, and
    /// the rest of the screen is printed.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(held) = self.held.take() {
            self.parser.process(&held);
        }
        self.held = Some(Vec::new());
        self.end_screen();
        self.drain()?;
        self.out.flush()
    }

    /// Print what the screen still holds (a program that ended on the
    /// alternate screen: the main screen, then that last screen), and start
    /// a fresh terminal.
    fn end_screen(&mut self) {
        let alternate = self.parser.screen().alternate_screen().then(|| {
            let rows = visible(self.parser.screen(), 0);
            self.parser.process(b"\x1b[?1049l");
            rows
        });
        let printed = self.parser.callbacks().printed;
        let main = visible(self.parser.screen(), printed);
        let lines = &mut self.parser.callbacks_mut().lines;
        for rows in [Some(main), alternate].into_iter().flatten() {
            for (text, wrapped) in trim_blank_rows(rows) {
                lines.push(&text, wrapped);
            }
            if !lines.current.is_empty() {
                lines.end_line();
            }
        }
        let done = std::mem::take(&mut lines.done);
        self.parser = parser(self.size);
        self.parser.callbacks_mut().lines.done = done;
    }

    /// `follow`: print the rows above the cursor (it has left them). A cursor
    /// that went back up (a redraw, a cleared screen) is followed: the rows
    /// from there are printed again once it leaves them.
    fn catch_up(&mut self) {
        let screen = self.parser.screen();
        if screen.alternate_screen() {
            return;
        }
        let (cursor, _) = screen.cursor_position();
        let printed = self.parser.callbacks().printed;
        if cursor <= printed {
            self.parser.callbacks_mut().printed = cursor;
            return;
        }
        let rows: Vec<(String, bool)> = visible(screen, printed)
            .into_iter()
            .take(usize::from(cursor - printed))
            .collect();
        let cb = self.parser.callbacks_mut();
        for (text, wrapped) in rows {
            cb.lines.push(&text, wrapped);
        }
        cb.printed = cursor;
    }

    fn drain(&mut self) -> std::io::Result<()> {
        let done = std::mem::take(&mut self.parser.callbacks_mut().lines.done);
        self.out.write_all(done.as_bytes())
    }

    /// One line (or the start of one) of the log.
    fn line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let ends = line.last() == Some(&b'\n');
        let Some(held) = self.held.as_mut() else {
            self.parser.process(line);
            if ends {
                self.held = Some(Vec::new());
            }
            return Ok(());
        };
        held.extend_from_slice(line);
        match own_line(held) {
            None => Ok(()),
            Some(false) => {
                let held = std::mem::take(held);
                self.parser.process(&held);
                self.held = ends.then(Vec::new);
                Ok(())
            }
            Some(true) => {
                let held = std::mem::take(held);
                self.end_screen();
                self.drain()?;
                self.out.write_all(&held)
            }
        }
    }
}

/// The screen's rows from `from` on: text, and whether each wraps.
fn visible(screen: &vt100::Screen, from: u16) -> Vec<(String, bool)> {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols.get())
        .enumerate()
        .skip(usize::from(from))
        .map(|(i, text)| {
            let wrapped = u16::try_from(i).is_ok_and(|i| screen.row_wrapped(i));
            (text, wrapped)
        })
        .collect()
}

/// Without the blank rows below the last one written.
fn trim_blank_rows(mut rows: Vec<(String, bool)>) -> Vec<(String, bool)> {
    while rows.last().is_some_and(|(t, w)| t.is_empty() && !w) {
        rows.pop();
    }
    rows
}

impl<W: Write> Write for Render<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut rest = bytes;
        while !rest.is_empty() {
            self.resize_to_date();
            // Up to where the next size began.
            let n = self.sizes.front().map_or(rest.len(), |s| {
                usize::try_from(s.offset - self.at).map_or(rest.len(), |n| n.min(rest.len()))
            });
            let (now, later) = rest.split_at(n);
            for line in now.split_inclusive(|&b| b == b'\n') {
                self.line(line)?;
            }
            self.at += n as u64;
            rest = later;
        }
        if self.follow {
            self.catch_up();
        }
        self.drain()?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_with(chunks: &[&[u8]], follow: bool) -> String {
        let mut r = Render::new(Vec::new(), follow);
        for c in chunks {
            r.write_all(c).unwrap();
        }
        r.finish().unwrap();
        String::from_utf8(r.out).unwrap()
    }

    fn render(chunks: &[&[u8]]) -> String {
        render_with(chunks, false)
    }

    #[test]
    fn cursor_motions_leave_spaces_and_returns_overwrite() {
        assert_eq!(
            render(&[b"word1\x1b[3Cword2\x1b[20Gword3\r\n"]),
            "word1   word2      word3\n"
        );
        // `CSI 20 G`: column 20, as a terminal counts.
        assert_eq!(
            render(&[b"\x1b[20Gx\r\n"]),
            format!("{}x\n", " ".repeat(19))
        );
        assert_eq!(
            render(&[b"progress 10%\rprogress 100%\r\n"]),
            "progress 100%\n"
        );
        // A spinner: each state overwrites the last, then the line is erased.
        assert_eq!(
            render(&[b"| working\r/ working\r- working\r\x1b[2Kdone\r\n"]),
            "done\n"
        );
        assert_eq!(render(&[b"abcdef\x1b[3D\x1b[K\r\n"]), "abc\n");
    }

    #[test]
    fn colours_titles_and_tabs_leave_the_text() {
        assert_eq!(render(&[b"\x1b[1;32mgreen\x1b[0m\tx\r\n"]), "green   x\n");
        assert_eq!(render(&[b"\x1b]0;a title\x07after\r\n"]), "after\n");
        assert_eq!(
            render(&["caf\u{e9} \u{2713}\r\n".as_bytes()]),
            "caf\u{e9} \u{2713}\n"
        );
        // A sequence split between two writes.
        assert_eq!(render(&[b"a\x1b[3", b"1mb\r\n"]), "ab\n");
    }

    #[test]
    fn a_long_line_stays_one_line_and_scrolled_rows_are_kept() {
        let long = "x".repeat(200);
        assert_eq!(
            render(&[format!("{long}\r\nend\r\n").as_bytes()]),
            format!("{long}\nend\n")
        );
        let many: String = (0..100).map(|i| format!("line {i}\r\n")).collect();
        let want: String = (0..100).map(|i| format!("line {i}\n")).collect();
        assert_eq!(render(&[many.as_bytes()]), want);
        // Through a long line that scrolls off, wrapped rows and all.
        let text = format!("{many}{long}\r\n{many}");
        let want = format!("{want}{long}\n{want}");
        assert_eq!(render(&[text.as_bytes()]), want);
    }

    #[test]
    fn the_alternate_screen_a_program_ended_on_is_printed_after_the_main_one() {
        assert_eq!(
            render(&[b"before\r\n\x1b[?1049h\x1b[H\x1b[2J\x1b[5;3Hdrawn"]),
            "before\n\n\n\n\n  drawn\n"
        );
        // Left before the end: gone, as from a terminal's screen.
        assert_eq!(
            render(&[b"before\r\n\x1b[?1049hdrawn\x1b[?1049lafter\r\n"]),
            "before\nafter\n"
        );
    }

    #[test]
    fn bullpen_lines_stand_alone_and_start_a_fresh_terminal() {
        assert_eq!(
            render(&[b"no newline\nbullpen: session a exited 5 after 0.1s\nsecond\r\n"]),
            "no newline\nbullpen: session a exited 5 after 0.1s\nsecond\n"
        );
        // Split anywhere; two of bullpen's lines in a row.
        assert_eq!(
            render(&[b"x\r\nbull", b"pen: one\nwarn", b"ing: two\n", b"y\r\n"]),
            "x\nbullpen: one\nwarning: two\ny\n"
        );
        // A drawn screen ends before the end line, whole.
        assert_eq!(
            render(&[b"\x1b[2;1Hbottom\x1b[1;1Htop\nbullpen: session a exited 0 after 1s\n"]),
            "top\nbottom\nbullpen: session a exited 0 after 1s\n"
        );
        // The program's own look-alike (a terminal's `\r\n`) is the program's.
        assert_eq!(render(&[b"bullpen: x\r\n"]), "bullpen: x\n");
        assert_eq!(own_line(b"bullpen: x\r\n"), Some(false));
        assert_eq!(own_line(b"bull"), None);
        assert_eq!(own_line(b"bulb"), Some(false));
        assert_eq!(own_line(b"bullpen: x\n"), Some(true));
    }

    #[test]
    fn the_model_has_the_size_the_run_had_from_where_it_began() {
        let at = |offset: u64, rows: u16, cols: u16| Size { offset, rows, cols };
        let render_sized = |chunks: &[&[u8]], sizes: &[Size]| {
            let mut r = Render::new(Vec::new(), false);
            r.sizes(sizes);
            for c in chunks {
                r.write_all(c).unwrap();
            }
            r.finish().unwrap();
            String::from_utf8(r.out).unwrap()
        };
        let right = |col: usize, what: &str| format!("{}{what}\n", " ".repeat(col - 1));
        // Unknown: 24x80, so column 150 is the last one.
        assert_eq!(render(&[b"\x1b[150Gx\r\n"]), right(80, "x"));
        assert_eq!(
            render_sized(&[b"\x1b[150Gx\r\n"], &[at(0, 50, 200)]),
            right(150, "x")
        );
        // Resized half-way: each part at its own size, wherever the log's
        // bytes are cut into writes.
        let log =
            b"\x1b[150Ga\r\n\x1b[150Gb\r\nbullpen: session a exited 0 after 1s\n\x1b[150Gc\r\n";
        // Cut in the middle of the second line's sequence: a read may end anywhere.
        let sizes = [at(0, 24, 80), at(12, 50, 200)];
        let want = format!(
            "{}{}bullpen: session a exited 0 after 1s\n{}",
            right(80, "a"),
            right(150, "b"),
            right(150, "c")
        );
        assert_eq!(render_sized(&[log], &sizes), want);
        let bytes: Vec<&[u8]> = log.chunks(5).collect();
        assert_eq!(render_sized(&bytes, &sizes), want);
        // Taller: the rows printed do not come back; narrower: the rows the
        // shrink pushes off are printed once.
        let many: String = (0..30).map(|i| format!("{i}\r\n")).collect();
        let want: String = (0..30).map(|i| format!("{i}\n")).collect();
        let n = many.len() as u64;
        assert_eq!(
            render_sized(&[many.as_bytes()], &[at(0, 10, 80), at(n / 2, 40, 80)]),
            want
        );
        assert_eq!(
            render_sized(&[many.as_bytes()], &[at(0, 40, 80), at(n / 2, 5, 20)]),
            want
        );
        // Given again with more (`--follow`): only the new ones are taken.
        let mut r = Render::new(Vec::new(), false);
        r.sizes(&[at(0, 24, 80)]);
        r.write_all(b"\x1b[150Ga\r\n").unwrap();
        r.sizes(&[at(0, 24, 80), at(9, 50, 200)]);
        r.write_all(b"\x1b[150Gb\r\n").unwrap();
        r.finish().unwrap();
        assert_eq!(
            String::from_utf8(r.out).unwrap(),
            format!("{}{}", right(80, "a"), right(150, "b"))
        );
    }

    #[test]
    fn follow_prints_a_line_once_the_cursor_leaves_it() {
        let mut r = Render::new(Vec::new(), true);
        r.write_all(b"one\r\ntw").unwrap();
        assert_eq!(String::from_utf8_lossy(&r.out), "one\n");
        r.write_all(b"o\r\n").unwrap();
        assert_eq!(String::from_utf8_lossy(&r.out), "one\ntwo\n");
        // A spinner on the cursor's line: only its last state.
        r.write_all(b"1%\r50%").unwrap();
        r.write_all(b"\r100%\r\n").unwrap();
        assert_eq!(String::from_utf8_lossy(&r.out), "one\ntwo\n100%\n");
        r.finish().unwrap();
        assert_eq!(String::from_utf8_lossy(&r.out), "one\ntwo\n100%\n");
        // Scrolling never prints a row twice, nor skips one.
        let many: String = (0..60).map(|i| format!("line {i}\r\n")).collect();
        let want: String = (0..60).map(|i| format!("line {i}\n")).collect();
        let chunks: Vec<&[u8]> = many.as_bytes().chunks(7).collect();
        assert_eq!(render_with(&chunks, true), want);
        assert_eq!(render_with(&[many.as_bytes()], true), want);
    }
}
