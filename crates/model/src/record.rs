//! The record (`session.json`) and its states: the compatibility surface, and the
//! pure reading of what a stored state means given what is observed.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::id::SessionId;
use super::process::ProcessRef;

/// The record schema this build writes and understands.
pub const SCHEMA: u32 = 1;

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
    /// `true` when the command runs on a pseudo-terminal the supervisor holds
    /// (every `--bg` run since `attach` exists): the command then leads its own
    /// session (its process group's session id is its own pid, not the
    /// supervisor's), and `git bullpen attach` can connect to it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminal: bool,
    /// The command this run runs (argv): the session's own `command`, or what
    /// `resume <id> -- <cmd>` named for this run only. Absent in records from
    /// before runs recorded it (their run ran `command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub at: String,
}

impl Exit {
    /// An end observed now: its exit code or signal (both `None`: not known,
    /// e.g. a run whose supervisor died).
    pub fn now(code: Option<i32>, signal: Option<i32>) -> Exit {
        Exit {
            code,
            signal,
            at: super::time::now_rfc3339(),
        }
    }

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
    /// The ref `--base` named when the session was created (`refs/heads/main`
    /// for `--base HEAD` on main, `refs/remotes/origin/main`, ...); `None` for a
    /// commit, a detached HEAD, or a record older than this key. `ls --status`
    /// counts the commits it gained since that the session lacks (`behind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    /// The session's own command (argv): what spawn ran and a plain `resume`
    /// runs again. A one-off `resume <id> -- <cmd>` leaves it as it is (its argv
    /// is the run's, in `process.command`); `resume --save` replaces it.
    pub command: Vec<String>,
    /// The agent the session runs (`spawn --agent`, or `bullpen.agent`): a name
    /// only. What it runs comes from this machine's profile of that name (see
    /// `model::agent`); absent for a plain session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The extra arguments given after `--` to `spawn --agent`, passed to both
    /// forms of the profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_args: Vec<String>,
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
    /// The `git bullpen spawn` that created the session (while `provisioning`,
    /// resume, stop and gc leave it alone as long as this process lives).
    #[serde(default)]
    pub spawner: Option<ProcessRef>,
    /// The clone that created this record (`<common>/bullpen/clone-id` there): two
    /// machines may share a host name, never a clone id. Absent in records from
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_id: Option<String>,
    /// For a session continued here from a remote (`resume <remote>/<id>`): the
    /// record it continues. Its first commit here has that record's commit as
    /// parent, so the session's history travels with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<ResumedFrom>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Where a session continued here came from (`Record::resumed_from`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumedFrom {
    /// The remote it was fetched from, and its id there.
    pub remote: String,
    pub id: SessionId,
    /// The remote record's commit (full hex oid): the parent of this record.
    pub record: String,
    /// Where the remote record says the session ran.
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_id: Option<String>,
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
            // serde quotes what it could not read: a record's text, as text.
            ParseRecordError::Invalid(why) => {
                write!(
                    f,
                    "malformed session.json: {}",
                    super::command::escaped(why)
                )
            }
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

    /// The command of the current (or last) run: what it really ran.
    pub fn run_command(&self) -> &[String] {
        self.process
            .as_ref()
            .and_then(|p| p.command.as_deref())
            .unwrap_or(&self.command)
    }

    pub fn to_json(&self) -> serde_json::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(self)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// A record commit's message (the commit is over the empty tree): `head` (its
/// subject and lines, ending in a newline), a blank line, then the record as
/// [`Record::to_json`] wrote it. One object per event, where a tree holding
/// `session.json` took three; `git log` of the ref shows each event's record.
pub fn message(head: &str, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + 1 + json.len());
    out.extend_from_slice(head.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(json);
    out
}

/// The record in a record commit's message ([`message`]): everything from its
/// first line that is `{` alone (no line of the head is, and pretty JSON starts
/// with one); `None` when no line is.
pub fn in_message(message: &[u8]) -> Option<&[u8]> {
    if message.starts_with(b"{\n") {
        return Some(message);
    }
    let at = message.windows(3).position(|w| w == b"\n{\n")?;
    Some(&message[at + 1..])
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

    #[test]
    fn a_record_message_holds_the_record_after_its_head() {
        let json = b"{\n  \"schema\": 1\n}\n";
        let m = message("bullpen: a running\n\nstate: running\npid: 7\n", json);
        assert_eq!(in_message(&m), Some(&json[..]));
        assert_eq!(in_message(json), Some(&json[..]));
        // No line that is `{` alone: no record (an empty tree's plain commit).
        assert_eq!(in_message(b"bullpen: a running\n\nstate: running\n"), None);
        assert_eq!(in_message(b"subject {\"schema\": 1}\n"), None);
        assert_eq!(in_message(b""), None);
    }
    use super::*;

    fn sample() -> Record {
        Record {
            schema: SCHEMA,
            id: "demo".parse().unwrap(),
            branch: "bullpen/demo".into(),
            worktree: "/tmp/wt/demo".into(),
            base: "0".repeat(40),
            base_ref: None,
            command: vec!["sh".into()],
            agent: None,
            agent_args: Vec::new(),
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
            spawner: None,
            clone_id: None,
            resumed_from: None,
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
