//! The local proof of a session: files under `<git common dir>/bullpen/local/<id>/`,
//! written only by bullpen on this machine (git never transfers anything there):
//!
//! - `created.json`: spawn created the worktree, at this path, under this root,
//!   and the session's command as spawn recorded it (one file per spawn);
//! - `command.json`: a command recorded after spawn (`resume --save`), which
//!   takes the place of spawn's; an older bullpen's spawn wrote its command
//!   here, beside a `created.json` without one. A plain `resume` runs it;
//! - `conversation.json`: the session's own agent conversation (its id, chosen
//!   or learned here), which a plain `resume` continues;
//! - `included.json`: the files `.worktreeinclude` made bullpen copy into the
//!   worktree, with their content's blob id (gc keeps a copy edited since);
//! - `run-<pid>.json`: a run this machine started, by its command's pid (`stop`
//!   may signal it; `attach` may connect to the socket it names, and only this
//!   file names it). Written before the run's claim (so that the proof exists as
//!   soon as the record says `running`), removed when the claim is lost or the
//!   run's end is recorded.
//!
//! Each file has one writer (spawn for `created`, written once and never
//! rewritten, so no later command can touch the authority to delete; `resume
//! --save` for `command`; the claimer of a run for its `run-<pid>`) and is
//! replaced atomically.
//!
//! Beside them, `attached.json` is status, not proof: the terminal attached to
//! the run right now, written and removed by the run's supervisor; so are
//! `activity-terminal.json` (what the supervisor reads from the run's terminal)
//! and `activity-agent.json` (what the agent's hooks said, `git bullpen hook`,
//! written under `activity.lock`), each naming the run it is of.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::model::activity::{Source, Stamped};
use crate::model::local::{
    Attached, Conversation, Created, Included, Leftovers, LocalCommand, LocalRun, LOCAL_SCHEMA,
};
use crate::model::{time, SessionId};
use crate::sys::atomic;
use crate::sys::layout::Layout;

const CREATED: &str = "created.json";
const COMMAND: &str = "command.json";
const ATTACHED: &str = "attached.json";
const LEFTOVERS: &str = "leftovers.json";
const CONVERSATION: &str = "conversation.json";
const ACTIVITY_LOCK: &str = "activity.lock";

/// This clone's id: 32 random hex digits in `<common>/bullpen/clone-id`, made on
/// first use (of two racing first uses, one wins and both read it). Records
/// carry it, so two machines with the same host name are never taken for one
/// another; git never transfers it.
pub fn clone_id(layout: &Layout) -> Result<String> {
    let path = layout.clone_id_path();
    if let Some(id) = read_clone_id(&path)? {
        return Ok(id);
    }
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read random bytes from /dev/urandom for this clone's id")?;
    let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    atomic::create_new(&path, format!("{id}\n").as_bytes())?;
    read_clone_id(&path)?.with_context(|| format!("{} vanished as it was made", path.display()))
}

/// This clone's id if it has one yet (nothing is created: for readers).
pub fn existing_clone_id(layout: &Layout) -> Option<String> {
    read_clone_id(&layout.clone_id_path()).ok().flatten()
}

fn read_clone_id(path: &Path) -> Result<Option<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let id = text.trim();
    if !crate::model::remote::is_clone_id(id) {
        return Err(crate::model::Error::failed(format!(
            "{} does not hold a clone id (32 hex digits)",
            path.display()
        ))
        .hint("remove it; bullpen makes a new one")
        .into());
    }
    Ok(Some(id.to_owned()))
}

/// The local proof files of one session.
pub struct Local {
    dir: PathBuf,
}

impl Local {
    pub fn of(layout: &Layout, id: &SessionId) -> Local {
        Local {
            dir: layout.local_dir(id),
        }
    }

    fn read<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let path = self.dir.join(name);
        // Never blocking on a FIFO in its place: what is no regular file is
        // refused, not taken for an absent one.
        let bytes = match crate::sys::regular::open(&path).and_then(|mut f| {
            let mut b = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut b).map(|_| b)
        }) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{} is malformed", path.display()))
    }

    fn write(&self, name: &str, value: &impl Serialize) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(value).context("cannot serialize local state")?;
        bytes.push(b'\n');
        atomic::write(&self.dir.join(name), &bytes)
    }

    pub fn created(&self) -> Result<Option<Created>> {
        self.read(CREATED)
    }

    /// Spawn's one write of the local proof: `created` holds the session's
    /// command too (see [`local_command`]).
    pub fn write_created(&self, created: &Created) -> Result<()> {
        self.write(CREATED, created)
    }

    /// The session's command as this machine recorded it: `command.json` when
    /// there is one (`resume --save`'s, or an older bullpen's spawn's), else
    /// spawn's in `created.json`. A `command.json` that cannot be read is that
    /// error, never spawn's command instead.
    pub fn command(&self) -> Result<Option<LocalCommand>> {
        match self.read(COMMAND)? {
            Some(saved) => Ok(Some(saved)),
            None => Ok(self.created()?.and_then(|c| c.command)),
        }
    }

    /// Record a new command for the session (`resume --save`), in `command.json`:
    /// `created.json` stays as spawn wrote it.
    pub fn write_command(&self, argv: &[String], agent: Option<(&str, &[String])>) -> Result<()> {
        self.write(COMMAND, &local_command(argv, agent))
    }

    /// The session's own agent conversation (see `model::local::Conversation`).
    pub fn conversation(&self) -> Result<Option<Conversation>> {
        self.read(CONVERSATION)
    }

    pub fn write_conversation(&self, conversation: &Conversation) -> Result<()> {
        self.write(CONVERSATION, conversation)
    }

    /// What bullpen copied into the session's worktree.
    pub fn included(&self) -> Result<Option<Included>> {
        self.read("included.json")
    }

    pub fn write_included(&self, included: &Included) -> Result<()> {
        self.write("included.json", included)
    }

    /// The run this machine started whose command has `pid`.
    pub fn run(&self, pid: u32) -> Result<Option<LocalRun>> {
        self.read(&format!("run-{pid}.json"))
    }

    pub fn write_run(&self, run: &LocalRun) -> Result<()> {
        self.write(&format!("run-{}.json", run.command.pid), run)
    }

    /// Forget a run (its claim was lost, or its end is recorded).
    pub fn remove_run(&self, pid: u32) -> Result<()> {
        self.remove_file(&format!("run-{pid}.json"))
    }

    pub fn attached(&self) -> Result<Option<Attached>> {
        self.read(ATTACHED)
    }

    pub fn write_attached(&self, attached: &Attached) -> Result<()> {
        self.write(ATTACHED, attached)
    }

    pub fn remove_attached(&self) -> Result<()> {
        self.remove_file(ATTACHED)
    }

    pub fn leftovers(&self) -> Result<Option<Leftovers>> {
        self.read(LEFTOVERS)
    }

    pub fn write_leftovers(&self, leftovers: &Leftovers) -> Result<()> {
        self.write(LEFTOVERS, leftovers)
    }

    pub fn remove_leftovers(&self) -> Result<()> {
        self.remove_file(LEFTOVERS)
    }

    /// What the run's terminal (`Source::Terminal`) or its agent said it is doing.
    pub fn activity(&self, source: Source) -> Result<Option<Stamped>> {
        self.read(activity_file(source))
    }

    pub fn write_activity(&self, stamped: &Stamped) -> Result<()> {
        self.write(activity_file(stamped.source), stamped)
    }

    /// The lock the hook holds from reading the agent's activity to writing it.
    pub fn activity_lock(&self) -> Result<crate::sys::lock::Lock> {
        atomic::create_private_dir(&self.dir)?;
        crate::sys::lock::Lock::acquire(&self.dir.join(ACTIVITY_LOCK))
    }

    /// Remove one file of the session's; one already gone is fine.
    fn remove_file(&self, name: &str) -> Result<()> {
        let path = self.dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        }
    }

    /// Forget the session (a failed spawn's undo).
    pub fn remove(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", self.dir.display()))
            }
            _ => Ok(()),
        }
    }
}

/// The session's command as this machine records it, and its agent (name and
/// extra arguments) when it runs one (`None`: a plain session).
pub fn local_command(argv: &[String], agent: Option<(&str, &[String])>) -> LocalCommand {
    LocalCommand {
        schema: LOCAL_SCHEMA,
        argv: argv.to_vec(),
        agent: agent.map(|(name, _)| name.to_owned()),
        agent_args: agent.map(|(_, args)| args.to_vec()).unwrap_or_default(),
        recorded_at: time::now_rfc3339(),
    }
}

fn activity_file(source: Source) -> &'static str {
    match source {
        Source::Terminal => "activity-terminal.json",
        Source::Agent => "activity-agent.json",
    }
}
