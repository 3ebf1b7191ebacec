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
}

/// `command.json`: the command this machine recorded for the session. A plain
/// `resume` runs the record's command only when it is this one.
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

/// `run-<pid>.json`: a run this machine started, written while its command is
/// held at the gate, before the claim lands in the record. The authority to signal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalRun {
    pub schema: u32,
    /// The command; in a background run also the leader of its process group.
    pub command: ProcessRef,
    /// The supervisor (background runs), whose pid is also the session id of
    /// the command's process group (it called `setsid`).
    pub supervisor: Option<ProcessRef>,
    pub background: bool,
    pub started_at: String,
}
