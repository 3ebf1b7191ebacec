//! Domain types and pure decisions: session ids, the record (`session.json`), states.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The record schema this build writes and understands.
pub const SCHEMA: u32 = 1;

/// A validated session id: `[a-z0-9][a-z0-9._-]{0,62}`, no `..`, not ending in
/// `.lock` or `.`. Valid ids are valid ref name components and file names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `refs/heads/bullpen/<id>`
    pub fn branch_ref(&self) -> String {
        format!("refs/heads/{}", self.branch())
    }

    /// `bullpen/<id>`, the short branch name.
    pub fn branch(&self) -> String {
        format!("bullpen/{}", self.0)
    }

    /// `refs/bullpen/sessions/<id>`
    pub fn record_ref(&self) -> String {
        format!("{RECORD_PREFIX}{}", self.0)
    }
}

/// Where records live.
pub const RECORD_PREFIX: &str = "refs/bullpen/sessions/";
/// The key gc adds to `session.json` while it tears the worktree down (so a later
/// gc can finish an interrupted teardown, and no run starts meanwhile).
pub const GC_TEARDOWN_KEY: &str = "gc_teardown";
/// Where provenance notes live.
pub const NOTES_REF: &str = "refs/notes/bullpen";

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct InvalidId(String);

impl fmt::Display for InvalidId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InvalidId {}

impl FromStr for SessionId {
    type Err = InvalidId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            Err(InvalidId(format!(
                "invalid session id {s:?}: {why} (ids match [a-z0-9][a-z0-9._-]{{0,62}}, \
                 with no \"..\", not ending in \".lock\" or \".\")"
            )))
        };
        let bytes = s.as_bytes();
        match bytes.first() {
            None => return bad("it is empty"),
            Some(c) if !(c.is_ascii_lowercase() || c.is_ascii_digit()) => {
                return bad("it must start with a lowercase letter or a digit")
            }
            _ => {}
        }
        if bytes.len() > 63 {
            return bad("it is longer than 63 characters");
        }
        if let Some(c) = s.chars().find(|c| {
            !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        }) {
            return bad(&format!("{c:?} is not allowed"));
        }
        if s.contains("..") {
            return bad("it contains \"..\"");
        }
        if s.ends_with(".lock") {
            return bad("it ends in \".lock\"");
        }
        if s.ends_with('.') {
            return bad("it ends in \".\"");
        }
        Ok(SessionId(s.to_owned()))
    }
}

impl Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The state a record stores. Derived states (`lost`, `missing`) are computed by
/// [`observed_state`] from facts, never stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Record created, worktree being made.
    Provisioning,
    /// Worktree exists, no command has run yet.
    Ready,
    /// A command is running (foreground or background).
    Running,
    /// The last command ended by itself.
    Exited,
    /// The last command was ended by `stop`.
    Stopped,
    /// `gc` removed the worktree (and the local branch); history kept.
    Collected,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Provisioning => "provisioning",
            State::Ready => "ready",
            State::Running => "running",
            State::Exited => "exited",
            State::Stopped => "stopped",
            State::Collected => "collected",
        }
    }
}

/// The process that runs (or ran) a session's command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    #[serde(default)]
    pub start_time: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id` when the process was recorded.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// `true` when run by a detached supervisor (`--bg`).
    #[serde(default)]
    pub background: bool,
    /// The supervisor's pid when `background`.
    #[serde(default)]
    pub supervisor_pid: Option<u32>,
    pub started_at: String,
    /// The supervisor's start time (clock ticks since boot) when `background`:
    /// a background session is alive exactly while its supervisor is.
    #[serde(default)]
    pub supervisor_start_time: Option<u64>,
    /// Set by `stop` (RFC 3339) before it signals the process group, so the
    /// supervisor records `stopped` rather than `exited`.
    #[serde(default)]
    pub stop_requested_at: Option<String>,
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub at: String,
}

impl Exit {
    /// The status a shell would report: the code, or 128 + signal.
    pub fn shell_status(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => 1,
        }
    }

    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            (None, None) => "unknown".to_owned(),
        }
    }
}

/// `session.json`: the compatibility surface. New keys are additive; unknown keys
/// are kept (round-tripped through `extra`) so an older bullpen never drops them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: u32,
    pub id: SessionId,
    /// Short branch name, `bullpen/<id>`.
    pub branch: String,
    /// Absolute worktree path.
    pub worktree: String,
    /// The base commit (full hex oid).
    pub base: String,
    /// The command the session runs (argv).
    pub command: Vec<String>,
    pub state: State,
    pub host: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub updated_at: String,
    /// The branch tip when the current (or last) run started: the provenance
    /// notes cover the commits made after it.
    #[serde(default)]
    pub run_start: Option<String>,
    #[serde(default)]
    pub process: Option<Process>,
    #[serde(default)]
    pub exit: Option<Exit>,
    /// Background log file, when the session ever ran with `--bg`.
    #[serde(default)]
    pub log: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug)]
pub enum ParseRecordError {
    TooNew(u32),
    Invalid(String),
}

impl fmt::Display for ParseRecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseRecordError::TooNew(v) => write!(
                f,
                "record schema {v} is newer than this bullpen understands (schema {SCHEMA}); \
                 upgrade git-bullpen"
            ),
            ParseRecordError::Invalid(why) => write!(f, "malformed session.json: {why}"),
        }
    }
}
impl std::error::Error for ParseRecordError {}

impl Record {
    pub fn parse(bytes: &[u8]) -> Result<Record, ParseRecordError> {
        #[derive(Deserialize)]
        struct Head {
            schema: u32,
        }
        let head: Head =
            serde_json::from_slice(bytes).map_err(|e| ParseRecordError::Invalid(e.to_string()))?;
        if head.schema > SCHEMA {
            return Err(ParseRecordError::TooNew(head.schema));
        }
        serde_json::from_slice(bytes).map_err(|e| ParseRecordError::Invalid(e.to_string()))
    }

    /// The identity of the current run: while it matches, a record describes the
    /// same run (`None` when not running).
    pub fn run_key(&self) -> Option<(u32, Option<u64>)> {
        match (self.state, self.process.as_ref()) {
            (State::Running, Some(p)) => Some((p.pid, p.start_time)),
            _ => None,
        }
    }

    pub fn to_json(&self) -> serde_json::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(self)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// What `ls` shows: the stored state corrected by what is observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    Stored(State),
    /// Recorded running, but the process is gone (or is a different process).
    Lost,
    /// The worktree directory is gone.
    Missing,
}

impl Observed {
    pub fn as_str(self) -> &'static str {
        match self {
            Observed::Stored(s) => s.as_str(),
            Observed::Lost => "lost",
            Observed::Missing => "missing",
        }
    }
}

/// Pure: the state to show, given the record and two facts.
pub fn observed_state(state: State, process_alive: bool, worktree_exists: bool) -> Observed {
    match state {
        State::Running if !process_alive => Observed::Lost,
        State::Running => Observed::Stored(State::Running),
        State::Collected => Observed::Stored(State::Collected),
        s if !worktree_exists && s != State::Provisioning => Observed::Missing,
        s => Observed::Stored(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids() {
        for ok in ["a", "0", "fix-login", "a.b_c-d", "x1", &"a".repeat(63)] {
            assert!(ok.parse::<SessionId>().is_ok(), "{ok}");
        }
    }

    #[test]
    fn invalid_ids() {
        for bad in [
            "",
            "-a",
            ".a",
            "_a",
            "A",
            "a b",
            "a/b",
            "a..b",
            "a.lock",
            "a.",
            "é",
            &"a".repeat(64),
            "a~",
            "a:b",
            "a^",
            "a@{1}",
        ] {
            assert!(bad.parse::<SessionId>().is_err(), "{bad:?}");
        }
    }

    fn sample() -> Record {
        Record {
            schema: SCHEMA,
            id: "demo".parse().unwrap(),
            branch: "bullpen/demo".into(),
            worktree: "/tmp/wt/demo".into(),
            base: "0".repeat(40),
            command: vec!["sh".into()],
            state: State::Exited,
            host: "h".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
            run_start: None,
            process: None,
            exit: Some(Exit {
                code: Some(0),
                signal: None,
                at: "2026-01-01T00:00:00Z".into(),
            }),
            log: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn record_round_trips_and_keeps_unknown_keys() {
        let mut json: serde_json::Value =
            serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        json["future_key"] = serde_json::json!({"x": 1});
        let bytes = serde_json::to_vec(&json).unwrap();
        let rec = Record::parse(&bytes).unwrap();
        assert_eq!(rec.state, State::Exited);
        let again: serde_json::Value = serde_json::from_slice(&rec.to_json().unwrap()).unwrap();
        assert_eq!(again["future_key"], serde_json::json!({"x": 1}));
    }

    #[test]
    fn newer_schema_is_refused() {
        let mut json: serde_json::Value =
            serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        json["schema"] = (SCHEMA + 1).into();
        let err = Record::parse(&serde_json::to_vec(&json).unwrap()).unwrap_err();
        assert!(matches!(err, ParseRecordError::TooNew(_)));
        assert!(err.to_string().contains("upgrade"));
    }

    #[test]
    fn record_with_invalid_id_is_refused() {
        let mut json: serde_json::Value =
            serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        json["id"] = "../etc".into();
        assert!(Record::parse(&serde_json::to_vec(&json).unwrap()).is_err());
    }

    #[test]
    fn observed_states() {
        use Observed::*;
        assert_eq!(observed_state(State::Running, false, true), Lost);
        assert_eq!(
            observed_state(State::Running, true, true),
            Stored(State::Running)
        );
        assert_eq!(observed_state(State::Exited, false, false), Missing);
        assert_eq!(
            observed_state(State::Collected, false, false),
            Stored(State::Collected)
        );
        assert_eq!(
            observed_state(State::Ready, false, true),
            Stored(State::Ready)
        );
    }
}
