//! A session's command as people read it.

/// A name from outside (a record, the command line) in a message: in single
/// quotes, as git quotes names (`'nosuch'`), with control characters written
/// as escapes (`\n`, `\t`, `\033`), so that a hand-edited record cannot move
/// the cursor or colour the terminal of whoever reads the message.
pub fn quoted(s: &str) -> String {
    format!("'{}'", escaped(s))
}

/// `s` with control characters written as escapes (see [`quoted`]), and the
/// characters that reorder or hide text without showing ([`is_unseen`]) as
/// `\u{202e}`, for a name shown in other marks (a command in backticks).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c if is_unseen(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether `c` changes how a line reads without showing itself: a control
/// character, or a bidirectional or zero-width format character (what
/// "Trojan Source" used to make a line read otherwise than it runs).
pub fn is_unseen(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Shell-like rendering of an argv for messages and notes.
pub fn render_command(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_with_control_characters_escaped() {
        assert_eq!(quoted("nosuch"), "'nosuch'");
        assert_eq!(quoted("a\nb\t\u{1b}[31m"), "'a\\nb\\t\\033[31m'");
        // A right-to-left override would make the rest of the line read backwards.
        assert_eq!(quoted("a\u{202e}b\u{200b}é"), "'a\\u{202e}b\\u{200b}é'");
        assert!(is_unseen('\u{2066}') && is_unseen('\u{7}') && !is_unseen('é'));
    }
}
