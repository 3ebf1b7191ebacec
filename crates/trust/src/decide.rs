//! The trust model's decisions, pure: whether local proof authorises an act.
//!
//! Refs are shared and untrusted: a record may have been fetched from another
//! machine, edited by hand or forged with plumbing. So a record alone never
//! authorises signalling a process, running a command or deleting a directory.
//! Each needs local proof (`model::local`, written by bullpen on this machine
//! under the common git dir, which no fetch brings), checked against what the
//! live system shows now.

use std::path::{Path, PathBuf};

use crate::model::local::{Created, Leftovers, LocalCommand, LocalRun};
use crate::model::paths::is_strictly_inside;
use crate::model::process::{Group, Identity, ProcessRef};
use crate::model::Process;

/// Why bullpen does not act on a record. Each says so in words people can check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Distrust {
    /// No run of this session was started on this machine (or its proof is unreadable).
    NoLocalRun(Option<String>),
    /// The record's process is not the run this machine started.
    RunMismatch,
    /// The run's group would be one that must never be signalled.
    UnsafeGroup(u32),
    /// No command was recorded for the session on this machine.
    NoLocalCommand(Option<String>),
    /// The record's command is not the one this machine recorded.
    CommandDiffers { local: Vec<String> },
    /// The record's agent (or its extra arguments) is not what this machine
    /// recorded for the session (`local`: the agent it recorded, if any).
    AgentDiffers { local: Option<String> },
    /// The record gives the agent extra arguments, and nothing on this machine
    /// recorded them.
    NoLocalAgentArgs,
    /// Nothing on this machine shows bullpen created the session's worktree.
    NotCreatedHere(Option<String>),
    /// bullpen created the session's worktree here, but at another path.
    CreatedElsewhere { path: String },
    /// The run has no terminal to attach to (started by an older bullpen).
    NoTerminal,
}

impl Distrust {
    pub fn describe(&self) -> String {
        let unreadable = |why: &Option<String>| match why {
            Some(w) => format!(" (its local state is unreadable: {w})"),
            None => String::new(),
        };
        match self {
            Distrust::NoLocalRun(why) => format!(
                "recorded running, but nothing on this machine proves it is ours: no run of it \
                 was started here{}",
                unreadable(why)
            ),
            Distrust::RunMismatch => "recorded running, but nothing on this machine proves it \
                                      is ours: the recorded process is not the run started here"
                .to_owned(),
            Distrust::UnsafeGroup(pgid) => {
                format!("its process group {pgid} is one bullpen never signals")
            }
            Distrust::NoLocalCommand(why) => format!(
                "its recorded command was not recorded on this machine (the record may come \
                 from a fetch or a hand edit){}",
                unreadable(why)
            ),
            Distrust::CommandDiffers { .. } => "its recorded command is not the one this \
                                                machine recorded (the record may come from a \
                                                fetch or a hand edit)"
                .to_owned(),
            Distrust::AgentDiffers { local: Some(local) } => format!(
                "its recorded agent or arguments are not what this machine recorded (agent \
                 {}; the record may come from a fetch or a hand edit)",
                crate::model::command::quoted(local)
            ),
            Distrust::AgentDiffers { local: None } => "this machine recorded it as a session \
                                                       with no agent (the record may come from \
                                                       a fetch or a hand edit)"
                .to_owned(),
            Distrust::NoLocalAgentArgs => "its agent's extra arguments were not recorded on this \
                                           machine (the record may come from a fetch or a hand \
                                           edit)"
                .to_owned(),
            Distrust::NotCreatedHere(why) => format!(
                "nothing on this machine shows bullpen created its worktree (no local state: \
                 created elsewhere, by an older bullpen, or forged){}",
                unreadable(why)
            ),
            Distrust::CreatedElsewhere { path } => format!(
                "bullpen created its worktree on this machine at {path}, not where the record says"
            ),
            Distrust::NoTerminal => "its run has no terminal to attach to (it was started \
                                     by an older bullpen)"
                .to_owned(),
        }
    }
}

/// What the live system shows, for [`signal_authority`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalFacts {
    /// This boot's id.
    pub boot_id: Option<String>,
    /// `/proc` now for the run's command pid.
    pub command_now: Identity,
    /// `/proc` now for the run's supervisor pid, if it had one.
    pub supervisor_now: Option<Identity>,
    /// bullpen's own process group.
    pub own_pgrp: u32,
}

/// The authority to signal a run: what bullpen may signal for it. Only
/// [`signal_authority`] makes one that reaches a process (its field is
/// private), and `run::group::signal` takes nothing else, so no signal is sent
/// without the decision.
///
/// ```compile_fail
/// use bullpen::trust::decide::{Authority, Reach};
/// let forged = Authority(Reach::Nothing);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Authority(Reach);

impl Authority {
    /// Nothing may be signalled (a run this machine cannot reach, a foreground
    /// run of another terminal): the one authority anyone may hold.
    pub fn nothing() -> Authority {
        Authority(Reach::Nothing)
    }

    /// What it reaches.
    pub fn reach(&self) -> Reach {
        self.0
    }
}

/// What an [`Authority`] reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The whole group (`kill(-pgid)`): its leader, the command, lives exactly as
    /// started, so the group id is still the run's.
    Group(Group),
    /// The leader is gone but the supervisor lives exactly as started: only the
    /// processes still in the group *and* in the supervisor's session, one by one.
    Members(Group),
    /// Neither lives: whatever is still in the group cannot be proven to be the
    /// run's any more (its ids may have been reused), so nothing is signalled.
    Unproven(Group),
    /// The run was started before the last reboot: nothing of it lives.
    Nothing,
}

/// Pure: what bullpen may signal for the recorded background run `recorded`,
/// given the run this machine started (`local`) and the live facts. The record
/// must describe exactly the local run; the group must not be 0, 1 or bullpen's
/// own; its leader or supervisor must be alive with exactly the start time
/// written when it started, in this boot.
pub fn signal_authority(
    recorded: &Process,
    local: Option<&LocalRun>,
    f: &SignalFacts,
) -> Result<Authority, Distrust> {
    let Some(local) = local else {
        return Err(Distrust::NoLocalRun(None));
    };
    if !is_local_run(recorded, local) {
        return Err(Distrust::RunMismatch);
    }
    if local.command.boot_id != f.boot_id {
        return Ok(Authority(Reach::Nothing));
    }
    let pgid = local.command.pid;
    if pgid <= 1 || pgid == f.own_pgrp {
        return Err(Distrust::UnsafeGroup(pgid));
    }
    let (Some(supervisor), Some(not_before)) = (&local.supervisor, local.command.start_time) else {
        return Err(Distrust::RunMismatch);
    };
    if supervisor.pid <= 1 {
        return Err(Distrust::UnsafeGroup(supervisor.pid));
    }
    // On a terminal the command leads its own session; before, it stayed in the
    // supervisor's (which called setsid).
    let session = if local.terminal { pgid } else { supervisor.pid };
    let group = Group {
        pgid,
        session,
        not_before,
        ancestor: None,
    };
    if local.command.is(&f.command_now) {
        Ok(Authority(Reach::Group(group)))
    } else if f
        .supervisor_now
        .as_ref()
        .is_some_and(|now| supervisor.is(now))
    {
        // One by one, each proven the run's. In the supervisor's session only
        // its descendants can be; in the command's own session, whose id is the
        // dead command's pid and so may be reused, a member must also descend
        // from the living supervisor (a subreaper: the run's orphans are its).
        Ok(Authority(Reach::Members(Group {
            ancestor: local.terminal.then_some(supervisor.pid),
            ..group
        })))
    } else {
        Ok(Authority(Reach::Unproven(group)))
    }
}

/// The authority to signal what a run left behind: the processes that descend
/// from its supervisor (a child subreaper, so every orphan of the run is its
/// own), listed again right before each signal. Only [`leftover_authority`]
/// makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeftoverAuthority {
    supervisor: u32,
}

impl LeftoverAuthority {
    /// The supervisor whose descendants are the run's.
    pub fn supervisor(&self) -> u32 {
        self.supervisor
    }
}

/// Pure: may bullpen signal what the run left behind? Only while the
/// supervisor that wrote `leftovers.json` on this machine lives exactly as it
/// recorded itself (`supervisor_now`: `/proc` for its pid now); pid 0 and 1 never.
pub fn leftover_authority(l: &Leftovers, supervisor_now: &Identity) -> Option<LeftoverAuthority> {
    (l.supervisor.pid > 1 && l.supervisor.is(supervisor_now)).then_some(LeftoverAuthority {
        supervisor: l.supervisor.pid,
    })
}

/// Pure: does the record's process describe exactly the background run this
/// machine started (`local`): same command pid and start time, same boot, same
/// supervisor and start time, both background, both on a terminal or neither?
fn is_local_run(recorded: &Process, local: &LocalRun) -> bool {
    let same = |r: &ProcessRef, pid: u32, start: Option<u64>| {
        r.pid == pid && r.start_time.is_some() && r.start_time == start
    };
    let supervisor_matches = match (&local.supervisor, recorded.supervisor_pid) {
        (Some(s), Some(pid)) => same(s, pid, recorded.supervisor_start_time),
        (None, None) => true,
        _ => false,
    };
    local.background
        && recorded.background
        && same(&local.command, recorded.pid, recorded.start_time)
        && local.command.boot_id.is_some()
        && local.command.boot_id == recorded.boot_id
        && supervisor_matches
        && local.terminal == recorded.terminal
}

/// Where `git bullpen attach` may connect: the supervisor's socket, and the
/// supervisor that must be serving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachTarget {
    pub supervisor: ProcessRef,
    pub socket: String,
}

/// Pure: the socket of the recorded run, if this machine started exactly that
/// run on a terminal (`local`). The socket's path comes from the local proof
/// only, never from the record; whoever answers on it must then be this
/// supervisor (its pid, checked with the socket's peer credentials).
pub fn attach_target(
    recorded: &Process,
    local: Option<&LocalRun>,
) -> Result<AttachTarget, Distrust> {
    let Some(local) = local else {
        return Err(Distrust::NoLocalRun(None));
    };
    if !recorded.terminal && !local.terminal && is_local_run(recorded, local) {
        return Err(Distrust::NoTerminal);
    }
    if !is_local_run(recorded, local) {
        return Err(Distrust::RunMismatch);
    }
    match (&local.supervisor, &local.socket) {
        (Some(supervisor), Some(socket)) if supervisor.pid > 1 => Ok(AttachTarget {
            supervisor: supervisor.clone(),
            socket: socket.clone(),
        }),
        _ => Err(Distrust::NoTerminal),
    }
}

/// The authority to run a command in a session's worktree: the command, with
/// the decision that it may run. Only the decisions here make one (its field
/// is private), and the run gate (`run::gate::Spec`) takes nothing else, so a
/// command is never run from a record without [`may_run_recorded`] or
/// [`may_run_agent`].
///
/// ```compile_fail
/// use bullpen::trust::decide::Runnable;
/// let forged = Runnable { argv: vec!["rm".to_owned()] };
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runnable {
    argv: Vec<String>,
}

impl Runnable {
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The same command, run by a confining wrapper (macOS's `sandbox-exec -p
    /// <profile>`): what may run is unchanged, only what it may touch narrows.
    pub fn wrapped(&self, wrapper: Vec<String>) -> Runnable {
        let mut argv = wrapper;
        argv.extend(self.argv.iter().cloned());
        Runnable { argv }
    }
}

/// A command this invocation chose itself: what the user typed (after `--`, or
/// spawn's), this machine's default command or an agent profile from this
/// machine's git config. Never a record's command.
pub fn typed(argv: Vec<String>) -> Runnable {
    Runnable { argv }
}

/// What a supervisor runs: the command on its own command line, which only
/// the bullpen that decided it writes (`run::background::dispatch`).
pub fn handed_over(argv: Vec<String>) -> Runnable {
    Runnable { argv }
}

/// Pure: may a plain `resume` (no command given) run the record's command? Only
/// when this machine recorded exactly that command.
pub fn may_run_recorded(
    recorded: &[String],
    local: Result<Option<&LocalCommand>, String>,
) -> Result<Runnable, Distrust> {
    match local {
        Err(why) => Err(Distrust::NoLocalCommand(Some(why))),
        Ok(None) => Err(Distrust::NoLocalCommand(None)),
        Ok(Some(l)) if l.argv == recorded => Ok(Runnable {
            argv: recorded.to_vec(),
        }),
        Ok(Some(l)) => Err(Distrust::CommandDiffers {
            local: l.argv.clone(),
        }),
    }
}

/// The authority to run this machine's profile of an agent a record names,
/// with the record's extra arguments: only [`may_run_agent`] makes one.
#[derive(Debug, PartialEq, Eq)]
pub struct AgentRun(());

impl AgentRun {
    /// The command of this machine's profile (`agent::argv`, from its git
    /// config), with the arguments [`may_run_agent`] allowed.
    pub fn with_profile(self, argv: Vec<String>) -> Runnable {
        Runnable { argv }
    }
}

/// Pure: may a plain `resume` of an agent session run this machine's profile of
/// `agent` with `args`? The profile comes from this machine's git config, so
/// the record only chooses which of them; extra arguments are part of what
/// runs and need this machine's word, as a command does. Where this machine
/// recorded the session (`Local::command`), the record must name the same agent
/// and arguments; where it did not (a session from elsewhere), only an agent
/// with no extra arguments runs.
pub fn may_run_agent(
    agent: &str,
    args: &[String],
    local: Result<Option<&LocalCommand>, String>,
) -> Result<AgentRun, Distrust> {
    match local {
        Err(why) => Err(Distrust::NoLocalCommand(Some(why))),
        Ok(Some(l)) if l.agent.as_deref() == Some(agent) && l.agent_args == args => {
            Ok(AgentRun(()))
        }
        Ok(Some(l)) => Err(Distrust::AgentDiffers {
            local: l.agent.clone(),
        }),
        Ok(None) if args.is_empty() => Ok(AgentRun(())),
        Ok(None) => Err(Distrust::NoLocalAgentArgs),
    }
}

/// The authority to delete a session's worktree (after every other gc rule):
/// local proof that bullpen created it here, at the recorded path. Only
/// [`created_here`] makes one, and gc's teardown takes it.
///
/// ```compile_fail
/// use bullpen::trust::decide::CreatedHere;
/// let forged = CreatedHere(());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedHere(());

/// Pure: did bullpen create the worktree the record names, here? The authority
/// to delete it (after every other gc rule) and the session's branch.
pub fn created_here(
    record_worktree: &str,
    created: Result<Option<&Created>, String>,
) -> Result<CreatedHere, Distrust> {
    match created {
        Err(why) => Err(Distrust::NotCreatedHere(Some(why))),
        Ok(None) => Err(Distrust::NotCreatedHere(None)),
        Ok(Some(c)) if c.worktree == record_worktree => Ok(CreatedHere(())),
        Ok(Some(c)) => Err(Distrust::CreatedElsewhere {
            path: c.worktree.clone(),
        }),
    }
}

/// Pure: the worktree root the session's recorded worktree is checked against
/// when it is not the repository's current one: the root this machine created
/// it under (`created.json`), when it created exactly the recorded worktree
/// there, strictly inside that root. So a session survives a change of
/// `bullpen.worktreeRoot` or `BULLPEN_HOME`, while a record that merely claims
/// another path gets `None` (and is checked against the current root).
pub fn created_root(record_worktree: &str, created: &Created) -> Option<PathBuf> {
    let root = Path::new(&created.worktree_root);
    let worktree = Path::new(record_worktree);
    let root_ok = root.is_absolute() && root.parent().is_some();
    (root_ok && created.worktree == record_worktree && is_strictly_inside(worktree, root))
        .then(|| root.to_path_buf())
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
