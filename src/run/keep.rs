//! The supervisor's terminal model of a run (issue 24): everything the command
//! writes is fed through vt100, which keeps the screen and the modes the
//! program turned on, so that `attach` can draw the current screen at once and
//! `peek` can read it without attaching. The scrollback is kept beside it,
//! compact ([`super::back`]); a taller terminal gets its rows back on top.
//!
//! vt100 does not track focus reporting (`CSI ? 1004 h`), the kitty keyboard
//! protocol's flags (`CSI > flags u`, `CSI < n u`, `CSI = flags ; mode u`, one
//! stack per screen) or xterm's modifyOtherKeys (`CSI > 4 ; n m`); [`Extra`]
//! tracks them from the sequences vt100 hands back unhandled, so a redraw turns
//! them on again for the terminal that attaches.

use std::num::NonZeroU16;

use serde::{Deserialize, Serialize};

use super::back::{self, Back};
use super::unfed;

/// The modes vt100 leaves to its callbacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extra {
    pub focus: bool,
    /// The kitty keyboard flags' stacks of the main and the alternate screen:
    /// the first entry is the screen's base flags, the rest were pushed.
    pub kitty: [Vec<u16>; 2],
    /// modifyOtherKeys' level, when the program set one.
    pub modify_other_keys: Option<u16>,
}

impl Default for Extra {
    fn default() -> Extra {
        Extra {
            focus: false,
            kitty: [vec![0], vec![0]],
            modify_other_keys: None,
        }
    }
}

/// A parameter of a CSI sequence, or `default`.
fn param(params: &[&[u16]], i: usize, default: u16) -> u16 {
    params
        .get(i)
        .and_then(|p| p.first())
        .copied()
        .unwrap_or(default)
}

/// What vt100 tells its callbacks: the modes it leaves to them, the rows
/// that scroll off the main screen.
struct Model {
    extra: Extra,
    back: Back,
    /// The rows scrolling off now are not kept ([`unfed::unkept`]).
    unkept: bool,
    /// A row scrolled off the top of the screen since this was last unset.
    scrolled: bool,
}

impl vt100::Callbacks for Model {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        self.extra.csi(screen.alternate_screen(), i1, params, c);
    }

    fn on_scroll(&mut self, row: vt100::capture::RowContents<'_>, alternate: bool) {
        self.scrolled = true;
        // A terminal keeps no scrollback of its alternate screen.
        if !alternate && !self.unkept {
            self.back.push(row);
        }
    }
}

impl Extra {
    fn csi(&mut self, alternate: bool, i1: Option<u8>, params: &[&[u16]], c: char) {
        let stack = &mut self.kitty[usize::from(alternate)];
        match (i1, c) {
            (Some(b'?'), 'h' | 'l') if params.iter().any(|p| p.first() == Some(&1004)) => {
                self.focus = c == 'h';
            }
            (Some(b'>'), 'u') => {
                // A stack of at most 16 entries, as kitty's.
                if stack.len() > 16 {
                    stack.remove(1);
                }
                stack.push(param(params, 0, 0));
            }
            (Some(b'<'), 'u') => {
                let n = usize::from(param(params, 0, 1).max(1));
                if n >= stack.len() {
                    // Emptied: every flag is reset.
                    stack.truncate(1);
                    stack[0] = 0;
                } else {
                    stack.truncate(stack.len() - n);
                }
            }
            (Some(b'='), 'u') => {
                let flags = param(params, 0, 0);
                if let Some(top) = stack.last_mut() {
                    *top = match param(params, 1, 1) {
                        2 => *top | flags,
                        3 => *top & !flags,
                        _ => flags,
                    };
                }
            }
            (Some(b'>'), 'm') if param(params, 0, 0) == 4 => {
                self.modify_other_keys = match param(params, 1, 0) {
                    0 => None,
                    n => Some(n),
                };
            }
            (Some(b'>'), 'n') if param(params, 0, 0) == 4 => self.modify_other_keys = None,
            _ => {}
        }
    }
}

/// The default scrollback of a run's terminal, in lines (git config
/// `bullpen.scrollback`): a row costs its text and colour changes, so 1,000
/// lines of 200 columns of text are about 240 KiB.
pub const DEFAULT_SCROLLBACK: usize = 1000;

/// Output kept unfed at most, in bytes: what a client that attaches, a `peek` or
/// a resize waits for the model to take in first (a few milliseconds).
pub const UNFED: usize = 256 * 1024;

/// A run's terminal as the supervisor sees it.
///
/// Output is fed to the model in batches of up to [`UNFED`] bytes, and at once
/// whenever the model is read: the rows of a batch that the scrollback would
/// push out again before its end are not captured (vt100's row capture was most
/// of the supervisor's time under a burst of output), and of those, the lines
/// that would scroll off the screen before the batch ends are not fed at all
/// ([`Keep::skim`]).
pub struct Keep {
    parser: vt100::Parser<Model>,
    unfed: Vec<u8>,
}

/// What `peek` is sent: the screen as text, and where its cursor is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shot {
    pub rows: u16,
    pub cols: u16,
    /// Each row of the screen as text, without trailing spaces.
    pub lines: Vec<String>,
    /// (row, column), from 0.
    pub cursor: (u16, u16),
    pub cursor_visible: bool,
    pub alternate_screen: bool,
    /// The screen with its colours and attributes (SGR sequences only, a newline
    /// after each row that does not wrap), when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formatted: Option<String>,
}

fn size(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Keep {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Keep {
        Keep {
            // No scrollback in vt100 itself: it would allocate a whole row
            // for each line that scrolls; `Back` keeps them compact.
            parser: vt100::Parser::new_with_callbacks(
                size(rows),
                size(cols),
                0,
                Model {
                    extra: Extra::default(),
                    back: Back::new(scrollback),
                    unkept: false,
                    scrolled: false,
                },
            ),
            unfed: Vec::new(),
        }
    }

    /// What the command wrote.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.unfed.extend_from_slice(bytes);
        if self.unfed.len() >= UNFED {
            self.catch_up();
        }
    }

    /// Feed the model what it has not taken in yet.
    pub fn catch_up(&mut self) {
        let unfed = std::mem::take(&mut self.unfed);
        let lines = self.parser.callbacks().back.capacity();
        let unkept = unfed::unkept(&unfed, lines);
        self.parser.process(&unfed[..unkept.start]);
        let part = &unfed[unkept.clone()];
        self.parser.callbacks_mut().unkept = true;
        let from = self.skim(part);
        self.parser.process(&part[from..]);
        self.parser.callbacks_mut().unkept = false;
        self.parser.process(&unfed[unkept.end..]);
        self.unfed = unfed;
        self.unfed.clear();
    }

    /// Feed the start of `part` (plain output whose rows are not kept), and say
    /// from where the rest is to be fed: past the lines that would scroll off
    /// the screen unseen, when the model shows it is safe to leave them out.
    ///
    /// That is when, after a screenful of `part`, a row has scrolled off the
    /// top (the cursor is at the bottom of a scroll region that starts there,
    /// and plain output keeps it there, each LF scrolling the region), and the
    /// next [`unfed::telltale_line`] shows on the row above the cursor (the
    /// parser is in its ground state, where plain output keeps it). Then the
    /// cursor is at the start of a blank row, as it is after any later CR LF,
    /// and what follows the last CR LF before the last screenful of `part`
    /// scrolls every row of the region above the cursor's off.
    fn skim(&mut self, part: &[u8]) -> usize {
        let (rows, cols) = self.parser.screen().size();
        let (rows, cols) = (rows.get(), cols.get());
        let mut lfs = part.iter().enumerate().filter(|(_, &b)| b == b'\n');
        let Some((lf, _)) = lfs.nth(usize::from(rows)) else {
            return 0;
        };
        self.parser.callbacks_mut().scrolled = false;
        self.parser.process(&part[..=lf]);
        let fed = lf + 1;
        if !self.parser.callbacks().scrolled {
            return fed;
        }
        let Some((start, end)) = unfed::telltale_line(part, fed, cols) else {
            return fed;
        };
        self.parser.process(&part[fed..end]);
        let screen = self.parser.screen();
        let above = screen.cursor_position().0.checked_sub(1);
        let shown = above.and_then(|r| screen.rows(0, cols).nth(usize::from(r)));
        if shown.as_deref().map(str::as_bytes) != Some(&part[start..end - 2]) {
            return end;
        }
        match unfed::last_screen(part, rows) {
            Some(last) if last > end => last,
            _ => end,
        }
    }

    /// The terminal's new size (what the command's pty was given). Taller, the
    /// main screen gets back on top the rows that scrolled off it, as a
    /// terminal does (vt100 makes room for them, blank; they are drawn from
    /// the scrollback, without their wrap marks).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        // All output first, at the size it was written at.
        let (old, _) = self.screen().size();
        let (rows, cols) = (size(rows), size(cols));
        if rows <= old {
            self.parser.set_size(rows, cols);
            return;
        }
        // The main screen's cursor tells how many rows vt100 made room for.
        let alternate = self.screen().alternate_screen();
        if alternate {
            aside(&mut self.parser, b"\x1b[?47l");
        }
        let before = self.screen().cursor_position().0;
        self.parser.set_size(rows, cols);
        let (row, col) = self.screen().cursor_position();
        let room = row.saturating_sub(before);
        let lines = self
            .parser
            .callbacks_mut()
            .back
            .take_last(usize::from(room));
        if !lines.is_empty() {
            let top = room - u16::try_from(lines.len()).unwrap_or(room);
            let attrs = self.screen().attributes_formatted();
            let bytes = back::draw(&lines, top, cols.get(), &attrs, (row, col));
            aside(&mut self.parser, bytes.as_bytes());
        }
        if alternate {
            aside(&mut self.parser, b"\x1b[?47h");
        }
    }

    /// The screen as it is now, all output taken in.
    pub fn screen(&mut self) -> &vt100::Screen {
        self.catch_up();
        self.parser.screen()
    }

    pub fn extra(&mut self) -> &Extra {
        self.catch_up();
        &self.parser.callbacks().extra
    }

    /// The rows that scrolled off the main screen, oldest first.
    pub fn scrollback(&mut self) -> impl Iterator<Item = &back::Line> {
        self.catch_up();
        self.parser.callbacks().back.iter()
    }

    /// The bytes that bring a terminal in its default state to this one: the
    /// screen that is current (the alternate one entered first when the program
    /// is on it; else what that terminal showed is scrolled up into its own
    /// scrollback first, not erased), its cursor, and every mode the program
    /// turned on.
    pub fn redraw(&mut self) -> Vec<u8> {
        self.catch_up();
        let screen = self.parser.screen();
        let extra = &self.parser.callbacks().extra;
        let mut out = String::new();
        kitty_state(&extra.kitty[0], &mut out);
        if screen.alternate_screen() {
            out.push_str("\x1b[?1049h");
            kitty_state(&extra.kitty[1], &mut out);
        } else {
            let rows = screen.size().0.get();
            out.push_str(&format!("\x1b[{rows};1H"));
            out.push_str(&"\n".repeat(usize::from(rows)));
        }
        out.push_str(&screen.contents_formatted());
        out.push_str(&screen.input_mode_formatted());
        if extra.focus {
            out.push_str("\x1b[?1004h");
        }
        if let Some(level) = extra.modify_other_keys {
            out.push_str(&format!("\x1b[>4;{level}m"));
        }
        // The cursor last: the input modes above may not move it, but be sure.
        out.push_str(&screen.cursor_state_formatted());
        out.into_bytes()
    }

    /// The screen for `peek`.
    pub fn shot(&mut self, formatted: bool) -> Shot {
        let screen = self.screen();
        let (rows, cols) = screen.size();
        Shot {
            rows: rows.get(),
            cols: cols.get(),
            lines: screen
                .rows(0, cols.get())
                .map(|l| l.trim_end().to_owned())
                .collect(),
            cursor: screen.cursor_position(),
            cursor_visible: !screen.hide_cursor(),
            alternate_screen: screen.alternate_screen(),
            formatted: formatted.then(|| screen.contents_formatted_basic()),
        }
    }
}

/// Feed `bytes` to `parser`'s screen through a parser of their own: a sequence
/// the program left unfinished (a read may end anywhere) stays unfinished in
/// `parser`, not mixed with these.
pub fn aside<CB: vt100::Callbacks>(parser: &mut vt100::Parser<CB>, bytes: &[u8]) {
    let mut other = vt100::Parser::new(NonZeroU16::MIN, NonZeroU16::MIN, 0);
    std::mem::swap(other.screen_mut(), parser.screen_mut());
    other.process(bytes);
    std::mem::swap(other.screen_mut(), parser.screen_mut());
}

/// The sequences that set a screen's kitty keyboard stack from empty.
fn kitty_state(stack: &[u16], out: &mut String) {
    if let Some((base, pushed)) = stack.split_first() {
        if *base != 0 {
            out.push_str(&format!("\x1b[={base};1u"));
        }
        for flags in pushed {
            out.push_str(&format!("\x1b[>{flags}u"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(bytes: &[u8]) -> Keep {
        let mut k = Keep::new(5, 20, 10);
        k.feed(bytes);
        k
    }

    #[test]
    fn a_redraw_gives_a_fresh_terminal_the_same_screen_and_modes() {
        let mut k = fed(
            b"\x1b[?1049h\x1b[2;3Hhello\x1b[31mred\x1b[m\x1b[4;1Hbottom\x1b[?1h\x1b=\
              \x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?25l\x1b[3;5H",
        );
        let mut fresh = vt100::Parser::new(size(5), size(20), 0);
        fresh.process(&k.redraw());
        let (a, b) = (k.screen(), fresh.screen());
        assert_eq!(a.contents_formatted(), b.contents_formatted());
        assert_eq!(b.cursor_position(), (2, 4));
        assert!(b.alternate_screen() && b.application_cursor() && b.application_keypad());
        assert!(b.bracketed_paste() && b.hide_cursor());
        assert_eq!(
            b.mouse_protocol_mode(),
            vt100::MouseProtocolMode::PressRelease
        );
        assert_eq!(
            b.mouse_protocol_encoding(),
            vt100::MouseProtocolEncoding::Sgr
        );
    }

    #[test]
    fn on_the_main_screen_what_the_terminal_showed_goes_to_its_scrollback() {
        let mut k = fed(b"\x1b[2;1Hprogram");
        let mut outer = vt100::Parser::new(size(5), size(20), 10);
        outer.process(b"mine 1\r\nmine 2");
        outer.process(&k.redraw());
        assert_eq!(outer.screen().contents(), "\nprogram");
        outer.screen_mut().set_scrollback(5);
        assert_eq!(outer.screen().contents(), "mine 1\nmine 2");
    }

    #[test]
    fn focus_kitty_flags_and_modify_other_keys_are_kept_and_replayed() {
        let mut k = fed(b"\x1b[?1004h\x1b[>1u\x1b[>4;2m");
        assert_eq!(
            k.extra(),
            &Extra {
                focus: true,
                kitty: [vec![0, 1], vec![0]],
                modify_other_keys: Some(2),
            }
        );
        let redraw = String::from_utf8(k.redraw()).unwrap();
        for want in ["\x1b[?1004h", "\x1b[>1u", "\x1b[>4;2m"] {
            assert!(redraw.contains(want), "{want:?} not in {redraw:?}");
        }
        // Turned off again: nothing replayed.
        k.feed(b"\x1b[?1004l\x1b[<u\x1b[>4m");
        assert_eq!(k.extra(), &Extra::default());
        let redraw = String::from_utf8(k.redraw()).unwrap();
        assert!(!redraw.contains("1004") && !redraw.contains("u\x1b") && !redraw.contains(">4"));
        // A stack per screen; popping more than was pushed resets the flags.
        k.feed(b"\x1b[=5;1u\x1b[?1049h\x1b[>3u\x1b[=4;2u");
        assert_eq!(k.extra().kitty, [vec![5], vec![0, 7]]);
        k.feed(b"\x1b[<9u");
        assert_eq!(k.extra().kitty, [vec![5], vec![0]]);
    }

    /// Each row of the screen: its text, and each cell's colours and attributes.
    fn cells(screen: &vt100::Screen) -> Vec<(String, Vec<String>)> {
        let (rows, cols) = screen.size();
        (0..rows.get())
            .map(|r| {
                let attrs = (0..cols.get())
                    .map(|c| {
                        format!(
                            "{:?}",
                            screen
                                .cell(r, c)
                                .map(|c| (c.contents(), c.fgcolor(), c.bold()))
                        )
                    })
                    .collect();
                let text = screen
                    .rows(0, cols.get())
                    .nth(usize::from(r))
                    .unwrap_or_default();
                (text, attrs)
            })
            .collect()
    }

    #[test]
    fn a_taller_terminal_gets_the_rows_that_scrolled_off_as_vt100_would_give_them() {
        let mut lines = String::new();
        for i in 0..40 {
            lines.push_str(&format!(
                "\x1b[3{}mline {i}\x1b[m \u{4e16}\u{754c} end\r\n",
                i % 8
            ));
        }
        type Size = (u16, u16);
        let cases: Vec<(String, Size, Size)> = vec![
            // More rows scrolled off than the terminal grows, and fewer.
            (lines.clone(), (10, 30), (25, 30)),
            (lines[..lines.len() / 8].to_owned(), (10, 30), (40, 30)),
            // Narrower: the rows are cut at the new width, as vt100 cuts its own.
            (lines.clone(), (10, 30), (20, 12)),
            (lines.clone(), (10, 30), (20, 50)),
            // The cursor in the middle of the screen, with colours on.
            (format!("{lines}\x1b[5;7H\x1b[1;32m"), (10, 30), (16, 30)),
            // On the alternate screen: the main one underneath gets its rows.
            (
                format!("{lines}\x1b[?1049h\x1b[3;3Halt"),
                (10, 30),
                (16, 30),
            ),
        ];
        for (bytes, (r0, c0), (r1, c1)) in cases {
            let mut keep = Keep::new(r0, c0, 100);
            let mut vt = vt100::Parser::new(size(r0), size(c0), 100);
            keep.feed(bytes.as_bytes());
            vt.process(bytes.as_bytes());
            keep.resize(r1, c1);
            vt.set_size(size(r1), size(c1));
            let (k, v) = (keep.screen(), vt.screen());
            assert_eq!(cells(k), cells(v), "{bytes:?} at {r1}x{c1}");
            assert_eq!(k.cursor_position(), v.cursor_position());
            assert_eq!(k.attributes_formatted(), v.attributes_formatted());
            assert_eq!(k.alternate_screen(), v.alternate_screen());
            // And the main screen under the alternate one.
            let (mut k, mut v) = (keep, vt);
            k.feed(b"\x1b[?1049lback");
            v.process(b"\x1b[?1049lback");
            assert_eq!(
                cells(k.screen()),
                cells(v.screen()),
                "{bytes:?}: the main screen"
            );
            assert_eq!(k.screen().cursor_position(), v.screen().cursor_position());
        }
    }

    #[test]
    fn a_resize_between_two_halves_of_a_sequence_leaves_it_whole() {
        let mut k = Keep::new(3, 20, 10);
        k.feed(b"1\r\n2\r\n3\r\n4\r\n\x1b[3");
        k.resize(6, 20);
        k.feed(b"1mred");
        let shot = k.shot(false);
        assert_eq!(shot.lines, ["1", "2", "3", "4", "red", ""]);
        assert_eq!(
            k.screen().cell(4, 0).map(|c| c.fgcolor()),
            Some(vt100::Color::Idx(1))
        );
    }

    #[test]
    fn the_scrollback_keeps_its_lines_compact_and_no_more_than_asked() {
        let mut k = Keep::new(50, 200, 10_000);
        let line = format!("{}\r\n", "7".repeat(200));
        for _ in 0..12_000 {
            k.feed(line.as_bytes());
        }
        assert_eq!(k.scrollback().count(), 10_000);
        let bytes: usize = k.scrollback().map(|l| l.text.len()).sum();
        assert_eq!(bytes, 10_000 * 200);
        assert!(k.scrollback().all(|l| !l.wrapped));
        // A row the terminal wrapped says so.
        let mut k = Keep::new(2, 5, 10);
        k.feed(b"abcdefgh\r\nx\r\ny\r\n");
        let kept: Vec<_> = k
            .scrollback()
            .map(|l| (l.text.to_string(), l.wrapped))
            .collect();
        assert_eq!(
            kept,
            [
                ("abcde".into(), true),
                ("fgh".into(), false),
                ("x".into(), false)
            ]
        );
        let mut none = Keep::new(2, 5, 0);
        none.feed(b"a\r\nb\r\nc\r\n");
        assert_eq!(none.scrollback().count(), 0);
    }

    /// The screen, cursor and scrollback of `k`, to compare.
    fn state(k: &mut Keep) -> (String, (u16, u16), Vec<(String, bool)>) {
        let back = k
            .scrollback()
            .map(|l| (l.text.to_string(), l.wrapped))
            .collect();
        let screen = k.screen();
        (screen.contents_formatted(), screen.cursor_position(), back)
    }

    #[test]
    fn output_fed_in_one_batch_leaves_what_fed_line_by_line_leaves() {
        let lines = |n: usize| -> String { (0..n).map(|i| format!("line {i}\r\n")).collect() };
        let digits = |n: usize| -> String { (0..n).map(|i| format!("{i}\r\n")).collect() };
        let one = |s: String| vec![s];
        let cases: Vec<Vec<String>> = vec![
            // Plain lines: most rows are never captured, most lines never fed.
            one(lines(300)),
            one(digits(300)),
            one(format!("{}{}", lines(30), "x".repeat(700))),
            // A LF inside an ESC's sequence, then the ESC's end restores the
            // cursor to the top: the rows after it do not scroll.
            one(format!("\x1b[H\x1b7{}\x1b\x07\n8{}", lines(30), digits(51))),
            // A LF inside a CSI's parameters, then the CSI moves the cursor up.
            one(format!("{}\x1b[\x075\nA{}", lines(30), lines(51))),
            // A LF after the `[` of an ESC, then the CSI enters the alternate screen.
            one(format!("{}\x1b[\n?1049h{}", lines(30), lines(60))),
            // The cursor moved up now and then, colours, a scroll region.
            one((0..200)
                .map(|i| match i % 10 {
                    0 => format!("\x1b[3{}mline {i}\x1b[m\r\n\x1b[3A", i % 8),
                    5 => format!("\x1b[2;8r{i}\r\n\x1b[r"),
                    _ => format!("line {i}\r\n"),
                })
                .collect()),
            // Wide characters, rows that wrap, lines wider than the screen.
            one((0..200)
                .map(|i| format!("{i} \u{4e16}\u{754c} {}\r\n", "w".repeat(i % 45)))
                .collect()),
            one((0..300)
                .map(|i| match i % 7 {
                    0 => format!("{}\r\n", "7".repeat(i % 45)),
                    3 => format!("{i}\n"),
                    _ => format!("{i}\r\n"),
                })
                .collect()),
            // Lines ended by a bare LF: the next one starts where it ended.
            one((0..300)
                .map(|i| match i % 10 {
                    0 if i > 20 => format!("{i}\n"),
                    _ => format!("{i}\r\n"),
                })
                .collect()),
            // A scroll region at the top, one below the cursor, one lower down.
            one(format!("\x1b[1;5r{}", digits(300))),
            one(format!(
                "\x1b[1;5r\x1b[8;1H{}{}\r\n{}",
                "x\r\n".repeat(30),
                "w".repeat(15),
                digits(300)
            )),
            one(format!("\x1b[3;8r{}", digits(300))),
            // The alternate screen.
            one(format!("{}\x1b[?1049h{}", digits(30), digits(300))),
            // A sequence that lasts the whole batch: nothing is shown; one
            // line moves it into what ends it without effect, unless left out.
            vec![
                format!(
                    "{}\x1b[{}?\r\n{}",
                    digits(30),
                    "1\r\n".repeat(20),
                    "2\r\n".repeat(300)
                ),
                "Az".into(),
            ],
            vec![
                format!(
                    "{}\x1b[{}?\r\n{}",
                    digits(30),
                    "\r\n".repeat(20),
                    "\r\n".repeat(300)
                ),
                "Az".into(),
            ],
        ];
        for (scrollback, batches) in [0, 5, 50]
            .into_iter()
            .flat_map(|n| cases.iter().map(move |c| (n, c)))
        {
            let mut batch = Keep::new(10, 20, scrollback);
            let mut each = Keep::new(10, 20, scrollback);
            for bytes in batches {
                batch.feed(bytes.as_bytes());
                batch.catch_up();
                for line in bytes.as_bytes().split_inclusive(|&b| b == b'\n') {
                    each.feed(line);
                    each.catch_up();
                }
            }
            assert_eq!(
                state(&mut batch),
                state(&mut each),
                "{scrollback}: {batches:?}"
            );
        }
    }

    #[test]
    fn of_a_burst_of_plain_lines_only_the_last_screen_is_fed() {
        let digits =
            |r: std::ops::Range<usize>| -> String { r.map(|i| format!("{i}\r\n")).collect() };
        let mut k = Keep::new(10, 20, 50);
        k.feed(digits(0..30).as_bytes());
        k.catch_up();
        let burst = digits(30..1000);
        let from = k.skim(burst.as_bytes());
        assert_eq!(&burst[from..from + 5], "991\r\n");
        // From the top of the screen, after a line wider than it.
        let wide = format!(
            "{}{}\r\n{}",
            digits(30..41),
            "w".repeat(30),
            digits(41..1000)
        );
        let from = Keep::new(10, 20, 50).skim(wide.as_bytes());
        assert_eq!(&wide[from..from + 5], "991\r\n");
        // In a sequence, the lines do not show: all of them are fed.
        let mut k = Keep::new(10, 20, 50);
        k.feed(format!("{}\x1b[", digits(0..30)).as_bytes());
        k.catch_up();
        let from = k.skim(burst.as_bytes());
        assert!(from < 100, "{from}");
    }

    #[test]
    fn no_more_than_a_batch_of_output_waits_for_the_model() {
        let mut k = Keep::new(24, 80, 1000);
        let (mut i, mut bytes) = (0, 0);
        while bytes < 4 * UNFED {
            i += 1;
            let line = format!("{i}\r\n");
            bytes += line.len();
            k.feed(line.as_bytes());
            assert!(k.unfed.len() < UNFED);
        }
        let shot = k.shot(false);
        assert_eq!(shot.lines[22], i.to_string());
        assert_eq!(
            k.scrollback().last().map(|l| l.text.to_string()),
            Some((i - 23).to_string())
        );
    }

    #[test]
    fn a_shot_is_the_screen_as_text_with_its_cursor() {
        let mut k = fed(b"word1\x1b[3Cword2\x1b[20Gx\r\nspin 1\rspin 2\x1b[?25l");
        let shot = k.shot(false);
        assert_eq!(shot.lines, ["word1   word2      x", "spin 2", "", "", ""]);
        assert_eq!((shot.cursor, shot.cursor_visible), ((1, 6), false));
        assert_eq!(shot.formatted, None);
        let colored = fed(b"\x1b[1;31mred\x1b[m").shot(true);
        assert_eq!(colored.formatted.as_deref(), Some("\x1b[31;1mred\n\n\n\n"));
    }
}
