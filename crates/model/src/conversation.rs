//! An agent's conversation as bullpen names it: a UUID bullpen chose (Claude
//! Code) or learned from the agent's store (Codex). Pure: the id's shape, how
//! the stores name a directory, what a Codex session file's first line says,
//! and which of them is the session's.

use serde::Deserialize;

/// Pure: is `s` a UUID as the agents write them (8-4-4-4-12 hex digits)? An id
/// read from anywhere is given to an agent only when it is one, so that it can
/// never be taken for an option.
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Pure: a version 4 (random) UUID from 16 random bytes.
pub fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Longer names are cut by Claude Code and given a hash of the path.
pub const CLAUDE_NAME_MAX: usize = 200;

/// Pure: the name of Claude Code's project directory for a working directory
/// (its real path): every UTF-16 unit that is not an ASCII letter or digit
/// becomes `-` (Claude Code 2.1.197: `replace(/[^a-zA-Z0-9]/g, "-")`). A name
/// longer than [`CLAUDE_NAME_MAX`] is cut there and gets `-<hash>`: the second
/// value says so, and then the directory is any that starts with the cut
/// name and a `-`.
pub fn claude_project_name(path: &str) -> (String, bool) {
    let mut name = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else {
            name.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    if name.len() <= CLAUDE_NAME_MAX {
        (name, false)
    } else {
        name.truncate(CLAUDE_NAME_MAX);
        name.push('-');
        (name, true)
    }
}

/// What the first line of a Codex session file says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodexSession {
    pub id: String,
    pub cwd: String,
    /// When it started (unix milliseconds).
    pub started: Option<i64>,
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    payload: Payload,
}

#[derive(Deserialize)]
struct Payload {
    id: String,
    cwd: String,
    #[serde(default)]
    timestamp: Option<String>,
}

/// Pure: the session a Codex session file's first line describes
/// (`{"type":"session_meta","payload":{"id":..,"cwd":..,"timestamp":..}}`, as
/// codex-cli 0.171.0 writes it); `None` for anything else, or an id that is
/// no UUID.
pub fn codex_session(first_line: &[u8]) -> Option<CodexSession> {
    let line: Line = serde_json::from_slice(first_line).ok()?;
    if line.kind != "session_meta" || !is_uuid(&line.payload.id) {
        return None;
    }
    let started = line
        .payload
        .timestamp
        .as_deref()
        .or(line.timestamp.as_deref())
        .and_then(parse_instant);
    Some(CodexSession {
        id: line.payload.id,
        cwd: line.payload.cwd,
        started,
    })
}

/// Pure: an RFC 3339 UTC instant with or without fractions of a second
/// (`2026-12-01T23:23:17.303Z`), in unix milliseconds.
pub fn parse_instant(s: &str) -> Option<i64> {
    let (whole, millis) = match s.find('.') {
        Some(dot) if s.ends_with('Z') => {
            let frac = &s[dot + 1..s.len() - 1];
            if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let ms: String = frac.chars().chain("00".chars()).take(3).collect();
            (format!("{}Z", &s[..dot]), ms.parse::<i64>().ok()?)
        }
        _ => (s.to_owned(), 0),
    };
    Some(super::time::parse_rfc3339(&whole)? * 1000 + millis)
}

/// Pure: unix milliseconds as RFC 3339 UTC with milliseconds.
pub fn instant(millis: i64) -> String {
    let text = super::time::rfc3339(millis.div_euclid(1000));
    match text.strip_suffix('Z') {
        Some(whole) => format!("{whole}.{:03}Z", millis.rem_euclid(1000)),
        None => text,
    }
}

/// Pure: the session's own Codex conversation among those found: the first one
/// started in its worktree (`cwd`) since bullpen started the agent there
/// (`since`, unix milliseconds). A later one there (started by hand) is not it.
pub fn codex_own<'a>(sessions: &'a [CodexSession], cwd: &str, since: i64) -> Option<&'a str> {
    sessions
        .iter()
        .filter(|s| s.cwd == cwd && s.started.is_some_and(|t| t >= since))
        .min_by_key(|s| (s.started, s.id.clone()))
        .map(|s| s.id.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uuids_are_ids() {
        assert!(is_uuid("01a233eb-6fb1-7ba1-baa5-1daf83ba898b"));
        for bad in [
            "",
            "--dangerously-bypass-approvals-and-sandbox",
            "01a233eb-6fb1-7ba1-baa5-1daf83ba898",
            "01a233eb-6fb1-7ba1-baa5-1daf83ba898bx",
            "01a233eb_6fb1-7ba1-baa5-1daf83ba898b",
            "g1a233eb-6fb1-7ba1-baa5-1daf83ba898b",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
        let id = uuid_v4([0xff; 16]);
        assert!(is_uuid(&id), "{id}");
        assert_eq!(&id[14..15], "4");
        assert_eq!(id, "ffffffff-ffff-4fff-bfff-ffffffffffff");
    }

    #[test]
    fn claude_names_a_directory_as_claude_code_does() {
        assert_eq!(
            claude_project_name("/tmp/agents/try/cwt/sub.dir"),
            ("-tmp-agents-try-cwt-sub-dir".to_owned(), false)
        );
        // One unit per UTF-16 unit, as JavaScript counts: é is one, 😀 two.
        assert_eq!(claude_project_name("/é/😀").0, "-----");
        let long = format!("/{}", "a".repeat(300));
        let (name, cut) = claude_project_name(&long);
        assert!(cut);
        assert_eq!(name.len(), CLAUDE_NAME_MAX + 1);
        assert!(name.ends_with("aa-"));
    }

    #[test]
    fn a_codex_session_file_says_its_id_directory_and_start() {
        let line = br#"{"timestamp":"2026-12-01T23:23:17.330Z","ordinal":0,"type":"session_meta","payload":{"session_id":"01a233eb-6fb1-7ba1-baa5-1daf83ba898b","id":"01a233eb-6fb1-7ba1-baa5-1daf83ba898b","timestamp":"2026-12-01T23:23:17.303Z","cwd":"/w/x","originator":"codex_exec","cli_version":"0.171.0"}}"#;
        let s = codex_session(line).unwrap();
        assert_eq!(s.id, "01a233eb-6fb1-7ba1-baa5-1daf83ba898b");
        assert_eq!(s.cwd, "/w/x");
        assert_eq!(
            s.started,
            parse_instant("2026-12-01T23:23:17Z").map(|t| t + 303)
        );
        assert_eq!(
            parse_instant(&instant(1_796_167_397_303)),
            Some(1_796_167_397_303)
        );
        assert_eq!(
            parse_instant("2026-12-01T23:23:17.3Z"),
            parse_instant("2026-12-01T23:23:17.300Z")
        );
        assert!(
            codex_session(br#"{"type":"turn_context","payload":{"id":"x","cwd":"/"}}"#).is_none()
        );
        let forged = br#"{"type":"session_meta","payload":{"id":"--yolo","cwd":"/w/x"}}"#;
        assert!(codex_session(forged).is_none());
        assert!(codex_session(b"not json").is_none());
    }

    #[test]
    fn the_sessions_own_is_the_first_there_since_it_started() {
        let s = |id: &str, cwd: &str, t: i64| CodexSession {
            id: id.into(),
            cwd: cwd.into(),
            started: Some(t),
        };
        let all = [
            s("b", "/w", 20),
            s("a", "/w", 5),
            s("c", "/other", 12),
            s("d", "/w", 15),
        ];
        assert_eq!(codex_own(&all, "/w", 10), Some("d"));
        assert_eq!(codex_own(&all, "/w", 21), None);
        assert_eq!(codex_own(&all, "/nowhere", 0), None);
    }
}
