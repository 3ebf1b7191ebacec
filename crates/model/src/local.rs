//! What this machine knows about a session that no fetch can bring: the local
//! proof behind every act bullpen takes on a session's behalf. Written by
//! bullpen here, under `<git common dir>/bullpen/local/<id>/`, which git never
//! transfers (see `trust::local` for the files, ARCHITECTURE.md "Trust model").

use serde::{Deserialize, Serialize};

use super::process::ProcessRef;

/// The schema of the files under `local/<id>/`.
pub const LOCAL_SCHEMA: u32 = 1;

/// `created.json`: bullpen created this session's worktree here, at this path,
/// under this worktree root. The authority to delete the worktree and the branch.
/// Written once, by spawn, with the session's command; never rewritten.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    pub schema: u32,
    /// Absolute worktree path, as spawn created it.
    pub worktree: String,
    /// The worktree root in effect when it was created.
    pub worktree_root: String,
    pub created_at: String,
    /// The `git bullpen spawn` that created it.
    pub spawner: ProcessRef,
    /// The command spawn recorded for the session: one file per spawn, not two.
    /// A `command.json` beside it takes its place (`resume --save`, or an older
    /// bullpen, whose `created.json` has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<LocalCommand>,
}

/// The command this machine recorded for the session: spawn's in `created.json`,
/// a later one in `command.json`. A plain `resume` runs the record's command only
/// when it is this one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalCommand {
    pub schema: u32,
    pub argv: Vec<String>,
    /// The agent this machine recorded for the session, and its extra
    /// arguments: a plain `resume` runs this machine's profile of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_args: Vec<String>,
    pub recorded_at: String,
}

/// `conversation.json`: the agent conversation that is the session's own, so
/// that a plain `resume` continues exactly that one. Only ever local: a record
/// (shared, forgeable) never chooses which conversation runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub schema: u32,
    /// The agent it belongs to (used only while the session still runs it).
    pub agent: String,
    /// Its id: chosen by bullpen before the agent started (Claude Code), or
    /// learned from the agent's store after a run (Codex); `None`: not learned yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// When bullpen started the agent on it (RFC 3339): the agent's own session
    /// of the worktree is the first one since.
    pub since: String,
}

/// `included.json`: the files bullpen copied into the session's worktree
/// (`.worktreeinclude`), as it copied them. A copy that changed since is work;
/// one that did not is as disposable as any ignored file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Included {
    pub schema: u32,
    pub files: Vec<IncludedFile>,
}

/// One copied file: its path in the worktree, its content (the git blob id),
/// and its stat right after the copy: unchanged, it spares reading the file
/// again. As git's index, the change time and inode too, which no one can set
/// back: a size and modification time alone are put back by `touch -r`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncludedFile {
    pub path: String,
    pub blob: String,
    pub size: u64,
    pub mtime: i64,
    pub mtime_nsec: i64,
    /// Absent in what an older bullpen wrote: the file is then always read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctime: Option<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ino: Option<u64>,
}

impl IncludedFile {
    /// Pure: is a file with this stat (size, mtime, ctime as seconds and
    /// nanoseconds, inode) the copy as it was made, unread?
    pub fn unchanged(&self, size: u64, mtime: (i64, i64), ctime: (i64, i64), ino: u64) -> bool {
        size == self.size
            && mtime == (self.mtime, self.mtime_nsec)
            && self.ctime == Some(ctime)
            && self.ino == Some(ino)
    }
}

/// `run-<pid>.json`: a run this machine started, written while its command is
/// held at the gate, before the claim lands in the record. The authority to signal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalRun {
    pub schema: u32,
    /// The command; in a background run also the leader of its process group
    /// (and, with `terminal`, of its session).
    pub command: ProcessRef,
    /// The supervisor (background runs). Without `terminal` its pid is also the
    /// session id of the command's process group (it called `setsid`).
    pub supervisor: Option<ProcessRef>,
    pub background: bool,
    pub started_at: String,
    /// The command runs on a pseudo-terminal held by the supervisor, and leads
    /// its own session: the group's session id is the command's pid, and the
    /// supervisor is a child subreaper, so every process of the run descends
    /// from it while it lives. Absent (false) in runs of an older bullpen.
    #[serde(default)]
    pub terminal: bool,
    /// The supervisor's Unix socket (`git bullpen attach` connects to it),
    /// chosen by the supervisor on this machine (`sys::socket`). Never taken
    /// from a record: only this file names it.
    #[serde(default)]
    pub socket: Option<String>,
}

/// `attached.json`: the terminal attached to a run right now, written by the
/// run's supervisor when a client attaches and removed when it detaches (or
/// the run ends). Status, not proof: `ls` believes it only while the run's
/// supervisor (`supervisor_pid`) and the client both live as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    pub schema: u32,
    /// The supervisor that accepted the client.
    pub supervisor_pid: u32,
    /// The `git bullpen attach` process.
    pub client: ProcessRef,
    pub since: String,
}

/// `leftovers.json`: the run's command has ended, and processes it left behind
/// (an agent's daemon that left its process group) still live. Written by the
/// run's supervisor, a child subreaper that lingers until the last of them has
/// ended, and removed then. The authority for `stop` to end them: what descends
/// from this supervisor while it lives exactly as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leftovers {
    pub schema: u32,
    pub supervisor: ProcessRef,
    pub since: String,
}

#[cfg(test)]
mod included_tests {
    use super::IncludedFile;

    fn copied(ctime: Option<(i64, i64)>, ino: Option<u64>) -> IncludedFile {
        IncludedFile {
            path: ".env".into(),
            blob: "0".repeat(40),
            size: 6,
            mtime: 10,
            mtime_nsec: 5,
            ctime,
            ino,
        }
    }

    #[test]
    fn only_the_whole_stat_spares_reading_a_copy() {
        let f = copied(Some((10, 5)), Some(7));
        assert!(f.unchanged(6, (10, 5), (10, 5), 7));
        // Size and modification time put back, the change time moved on.
        assert!(!f.unchanged(6, (10, 5), (11, 0), 7));
        // Another file renamed over it.
        assert!(!f.unchanged(6, (10, 5), (10, 5), 8));
        // An older bullpen's record: always read.
        assert!(!copied(None, None).unchanged(6, (10, 5), (10, 5), 7));
    }
}
