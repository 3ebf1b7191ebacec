//! What the attached terminal was put in: a small scan (vte's parser) of every
//! byte attach wrote to it, the current screen sent at attach included, so
//! that detaching turns off exactly the modes the program turned on and the
//! user's shell gets its terminal back as it was (pure).
//!
//! Tracked: the alternate screen (47, 1047, 1049), the DEC private modes in
//! [`DEC_MODES`] (cursor keys, the mouse modes and encodings, focus reporting,
//! bracketed paste, synchronized output, cursor visibility, autowrap...), the
//! keypad (`ESC =`), insert and newline modes, the scroll region, the cursor's
//! shape, the kitty keyboard protocol's flags (a stack per screen) and xterm's
//! modifyOtherKeys. SGR is always reset.

use vte::{Params, Parser, Perform};

/// DEC private modes and their default state; any other is left alone.
const DEC_MODES: &[(u16, bool)] = &[
    (1, false),    // application cursor keys
    (5, false),    // reverse video
    (6, false),    // origin mode
    (7, true),     // autowrap
    (9, false),    // X10 mouse
    (25, true),    // cursor visible
    (66, false),   // application keypad
    (1000, false), // mouse: press and release
    (1001, false), // mouse: highlight
    (1002, false), // mouse: button motion
    (1003, false), // mouse: any motion
    (1004, false), // focus reporting
    (1005, false), // mouse: UTF-8 encoding
    (1006, false), // mouse: SGR encoding
    (1007, false), // alternate scroll
    (1015, false), // mouse: urxvt encoding
    (1016, false), // mouse: SGR pixels
    (2004, false), // bracketed paste
    (2026, false), // synchronized output
];

const ALT_SCREENS: [u16; 3] = [47, 1047, 1049];

/// The modes of the terminal attach writes to, as far as they changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Modes {
    /// The alternate screen entered, and by which mode.
    alt: Option<u16>,
    /// DEC private modes away from their default, in the order first changed.
    dec: Vec<u16>,
    keypad: bool,
    insert: bool,
    newline: bool,
    region: bool,
    cursor_style: bool,
    /// Kitty flags pushed on the main and the alternate screen, and whether
    /// a screen's own (base) flags were set.
    pushed: [usize; 2],
    base_set: [bool; 2],
    modify_other_keys: bool,
}

/// The scanner: feed it what is written, ask it for the way back.
#[derive(Default)]
pub struct Scan {
    parser: Parser,
    modes: Modes,
}

impl Scan {
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.modes, bytes);
    }

    /// The bytes that turn off what was turned on.
    pub fn restore(&self) -> Vec<u8> {
        self.modes.restore().into_bytes()
    }

    /// Whether the program left the terminal on its main screen, where what
    /// it drew stays when attach lets go.
    pub fn on_main_screen(&self) -> bool {
        self.modes.alt.is_none()
    }
}

fn first(params: &Params, default: u16) -> u16 {
    params
        .iter()
        .next()
        .and_then(|p| p.first())
        .copied()
        .unwrap_or(default)
}

impl Modes {
    fn screen(&self) -> usize {
        usize::from(self.alt.is_some())
    }

    fn dec_mode(&mut self, mode: u16, on: bool) {
        if ALT_SCREENS.contains(&mode) {
            self.alt = match on {
                true => Some(mode),
                false => None,
            };
            return;
        }
        let Some(&(_, default)) = DEC_MODES.iter().find(|(m, _)| *m == mode) else {
            return;
        };
        self.dec.retain(|m| *m != mode);
        if on != default {
            self.dec.push(mode);
        }
    }

    /// The way back, in an order that undoes each thing where it was done:
    /// the alternate screen's kitty flags before leaving it, the main screen's
    /// after.
    pub fn restore(&self) -> String {
        let mut out = String::new();
        let kitty = |screen: usize, out: &mut String| {
            if self.pushed[screen] > 0 {
                out.push_str(&format!("\x1b[<{}u", self.pushed[screen]));
            }
            if self.base_set[screen] {
                out.push_str("\x1b[=0;1u");
            }
        };
        if let Some(mode) = self.alt {
            kitty(1, &mut out);
            out.push_str(&format!("\x1b[?{mode}l"));
        }
        kitty(0, &mut out);
        if self.region {
            // Setting the margins homes the cursor: keep it where it is.
            out.push_str("\x1b7\x1b[r\x1b8");
        }
        for mode in &self.dec {
            let default = DEC_MODES
                .iter()
                .find(|(m, _)| m == mode)
                .is_some_and(|(_, d)| *d);
            out.push_str(&format!("\x1b[?{mode}{}", if default { 'h' } else { 'l' }));
        }
        if self.keypad {
            out.push_str("\x1b>");
        }
        if self.insert {
            out.push_str("\x1b[4l");
        }
        if self.newline {
            out.push_str("\x1b[20l");
        }
        if self.cursor_style {
            out.push_str("\x1b[0 q");
        }
        if self.modify_other_keys {
            out.push_str("\x1b[>4m");
        }
        out.push_str("\x1b[0m");
        out
    }
}

impl Perform for Modes {
    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, c: char) {
        let screen = self.screen();
        match (intermediates, c) {
            ([b'?'], 'h' | 'l') => {
                for p in params.iter() {
                    if let Some(&mode) = p.first() {
                        self.dec_mode(mode, c == 'h');
                    }
                }
            }
            ([], 'h' | 'l') => {
                for p in params.iter() {
                    match p.first() {
                        Some(4) => self.insert = c == 'h',
                        Some(20) => self.newline = c == 'h',
                        _ => {}
                    }
                }
            }
            ([], 'r') => {
                // Without parameters: the whole screen again.
                self.region = params.iter().any(|p| p.first().is_some_and(|v| *v != 0));
            }
            ([b' '], 'q') => self.cursor_style = first(params, 0) != 0,
            ([b'>'], 'u') => self.pushed[screen] += 1,
            ([b'<'], 'u') => {
                let n = usize::from(first(params, 1).max(1));
                if n > self.pushed[screen] {
                    // Emptied: the terminal resets the flags.
                    self.base_set[screen] = false;
                }
                self.pushed[screen] = self.pushed[screen].saturating_sub(n);
            }
            ([b'='], 'u') if self.pushed[screen] == 0 => self.base_set[screen] = true,
            ([b'>'], 'm') if first(params, 0) == 4 => {
                let level = params.iter().nth(1).and_then(|p| p.first()).copied();
                self.modify_other_keys = level.is_some_and(|l| l != 0);
            }
            ([b'>'], 'n') if first(params, 0) == 4 => self.modify_other_keys = false,
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        match (intermediates, byte) {
            ([], b'=') => self.keypad = true,
            ([], b'>') => self.keypad = false,
            // RIS: the terminal is back to its defaults.
            ([], b'c') => *self = Modes::default(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restore(bytes: &[u8]) -> String {
        let mut s = Scan::default();
        s.feed(bytes);
        String::from_utf8(s.restore()).unwrap()
    }

    #[test]
    fn nothing_turned_on_means_only_attributes_are_reset() {
        assert_eq!(restore(b"hello\x1b[31mworld\r\n\x1b[2J"), "\x1b[0m");
        // Turned on and off again.
        assert_eq!(
            restore(b"\x1b[?1049h\x1b[?2004h\x1b[?2004l\x1b[?1049l"),
            "\x1b[0m"
        );
        assert_eq!(restore(b"\x1b[?25l\x1b[?25h\x1b=\x1b>"), "\x1b[0m");
    }

    #[test]
    fn every_mode_turned_on_is_turned_off_in_order() {
        let got = restore(
            b"\x1b[>1u\x1b[?1049h\x1b[?1h\x1b=\x1b[?1000;1006h\x1b[?2004h\x1b[?1004h\
              \x1b[>5u\x1b[>4;2m\x1b[?25l\x1b[2;10r\x1b[5 q\x1b[4h",
        );
        assert_eq!(
            got,
            "\x1b[<1u\x1b[?1049l\x1b[<1u\x1b7\x1b[r\x1b8\x1b[?1l\x1b[?1000l\x1b[?1006l\
             \x1b[?2004l\x1b[?1004l\x1b[?25h\x1b>\x1b[4l\x1b[0 q\x1b[>4m\x1b[0m"
        );
    }

    #[test]
    fn kitty_pops_and_sets_and_modify_other_keys_resets_are_followed() {
        assert_eq!(restore(b"\x1b[>1u\x1b[>3u\x1b[<u"), "\x1b[<1u\x1b[0m");
        assert_eq!(restore(b"\x1b[>1u\x1b[<5u"), "\x1b[0m");
        assert_eq!(restore(b"\x1b[=5;1u"), "\x1b[=0;1u\x1b[0m");
        assert_eq!(restore(b"\x1b[>4;2m\x1b[>4m"), "\x1b[0m");
        assert_eq!(restore(b"\x1b[>4;1m\x1b[>4n"), "\x1b[0m");
        assert_eq!(restore(b"\x1b[?1047h"), "\x1b[?1047l\x1b[0m");
        assert_eq!(
            restore(b"\x1b[?7l\x1b[?2026h"),
            "\x1b[?7h\x1b[?2026l\x1b[0m"
        );
        // A sequence split across writes is still seen.
        let mut s = Scan::default();
        s.feed(b"\x1b[?10");
        s.feed(b"49h");
        assert_eq!(s.restore(), b"\x1b[?1049l\x1b[0m");
        assert_eq!(restore(b"\x1b[?1049h\x1b[?2004h\x1bc"), "\x1b[0m");
    }
}
