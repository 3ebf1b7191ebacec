//! A session's command as people read it.

/// A name from outside (a record, the command line) in a message: in single
/// quotes, as git quotes names (`'nosuch'`), with control characters written
/// as escapes (`\n`, `\t`, `\033`), so that a hand-edited record cannot move
/// the cursor or colour the terminal of whoever reads the message.
pub fn quoted(s: &str) -> String {
    format!("'{}'", escaped(s))
}

/// `s` with control characters written as escapes (see [`quoted`]), for a
/// name shown in other marks (a command in backticks).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
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
    }
}
