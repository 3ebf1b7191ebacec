//! The supervisor's terminal model of a run (issue 24): everything the command
//! writes is fed through vt100, which keeps the screen, the scrollback and the
//! modes the program turned on, so that `attach` can draw the current screen at
//! once and `peek` can read it without attaching.
//!
//! vt100 does not track focus reporting (`CSI ? 1004 h`), the kitty keyboard
//! protocol's flags (`CSI > flags u`, `CSI < n u`, `CSI = flags ; mode u`, one
//! stack per screen) or xterm's modifyOtherKeys (`CSI > 4 ; n m`); [`Extra`]
//! tracks them from the sequences vt100 hands back unhandled, so a redraw turns
//! them on again for the terminal that attaches.

use std::num::NonZeroU16;

use serde::{Deserialize, Serialize};

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

impl vt100::Callbacks for Extra {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let stack = &mut self.kitty[usize::from(screen.alternate_screen())];
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
/// `bullpen.scrollback`): vt100 keeps 32 bytes a cell, so 1,000 lines of 200
/// columns are about 6 MiB.
pub const DEFAULT_SCROLLBACK: usize = 1000;

/// A run's terminal as the supervisor sees it.
pub struct Keep {
    parser: vt100::Parser<Extra>,
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
            parser: vt100::Parser::new_with_callbacks(
                size(rows),
                size(cols),
                scrollback,
                Extra::default(),
            ),
        }
    }

    /// What the command wrote.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// The terminal's new size (what the command's pty was given).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(size(rows), size(cols));
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    pub fn extra(&self) -> &Extra {
        self.parser.callbacks()
    }

    /// The bytes that bring a terminal in its default state to this one: the
    /// screen that is current (the alternate one entered first when the program
    /// is on it; else what that terminal showed is scrolled up into its own
    /// scrollback first, not erased), its cursor, and every mode the program
    /// turned on.
    pub fn redraw(&self) -> Vec<u8> {
        let screen = self.screen();
        let extra = self.extra();
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
    pub fn shot(&self, formatted: bool) -> Shot {
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
        let k = fed(
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
        let k = fed(b"\x1b[2;1Hprogram");
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

    #[test]
    fn a_shot_is_the_screen_as_text_with_its_cursor() {
        let k = fed(b"word1\x1b[3Cword2\x1b[20Gx\r\nspin 1\rspin 2\x1b[?25l");
        let shot = k.shot(false);
        assert_eq!(shot.lines, ["word1   word2      x", "spin 2", "", "", ""]);
        assert_eq!((shot.cursor, shot.cursor_visible), ((1, 6), false));
        assert_eq!(shot.formatted, None);
        let colored = fed(b"\x1b[1;31mred\x1b[m").shot(true);
        assert_eq!(colored.formatted.as_deref(), Some("\x1b[31;1mred\n\n\n\n"));
    }
}
