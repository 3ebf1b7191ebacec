//! The detach key of `git bullpen attach` (git config `bullpen.detachKey`), pure.

/// Ctrl-\ (0x1c), the default: rarely typed, and what dtach uses.
pub const DEFAULT_DETACH: u8 = 0x1c;

/// Pure: the byte a detach key spec stands for: `ctrl-<c>`, `C-<c>` or `^<c>`,
/// where `<c>` is a letter or one of `@ [ \ ] ^ _ ?` (any case); else what a
/// detach key looks like.
pub fn parse_detach_key(spec: &str) -> Result<u8, String> {
    let s = spec.trim();
    let lower = s.to_ascii_lowercase();
    let key = lower
        .strip_prefix("ctrl-")
        .or_else(|| lower.strip_prefix("c-"))
        .or_else(|| lower.strip_prefix('^'));
    let byte = match key.map(str::as_bytes) {
        Some([b'?']) => Some(0x7f),
        Some([c @ b'a'..=b'z']) => Some(c - b'a' + 1),
        Some([c @ (b'@' | b'[' | b'\\' | b']' | b'^' | b'_')]) => Some(c - b'@'),
        _ => None,
    };
    byte.ok_or_else(|| {
        "a detach key is ctrl-<key>, C-<key> or ^<key>, where <key> is a letter or one of \
         @ [ \\ ] ^ _ ?: e.g. ctrl-] or ^Q"
            .to_owned()
    })
}

/// Pure: how a detach byte is written for people: `Ctrl-\`.
pub fn describe_key(byte: u8) -> String {
    match byte {
        0x7f => "Ctrl-?".to_owned(),
        1..=26 => format!("Ctrl-{}", char::from(b'A' + byte - 1)),
        0 | 27..=31 => format!("Ctrl-{}", char::from(b'@' + byte)),
        b => format!("{:?}", char::from(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detach_keys() {
        assert_eq!(parse_detach_key("ctrl-\\"), Ok(0x1c));
        assert_eq!(parse_detach_key("Ctrl-]"), Ok(0x1d));
        assert_eq!(parse_detach_key("^Q"), Ok(0x11));
        assert_eq!(parse_detach_key("C-a"), Ok(0x01));
        assert_eq!(parse_detach_key(" ctrl-z "), Ok(0x1a));
        assert_eq!(parse_detach_key("^?"), Ok(0x7f));
        for bad in ["", "q", "ctrl-", "ctrl-ab", "ctrl-1", "alt-x", "^é"] {
            assert!(parse_detach_key(bad).is_err(), "{bad}");
        }
        assert_eq!(describe_key(DEFAULT_DETACH), "Ctrl-\\");
        assert_eq!(describe_key(0x11), "Ctrl-Q");
        assert_eq!(describe_key(0x1d), "Ctrl-]");
    }
}
