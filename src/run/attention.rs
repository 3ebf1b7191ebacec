//! The supervisor's view of what its run is doing on the terminal
//! (`model::activity::from_terminal`): told of each output, it looks at the
//! terminal's foreground process group while the program is quiet, writes
//! `activity-terminal.json` on each change and runs `bullpen.notify` on each
//! move into `needs input`, unless the agent reports for this run (its hooks
//! then say, and notify, themselves; Codex's notify alone only until the
//! program works again).

use std::os::fd::BorrowedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::notify::Notify;
use crate::model::activity::{self, Activity, Source, Stamped};
use crate::model::local::LOCAL_SCHEMA;
use crate::model::{time, SessionId};
use crate::sys::procfs;
use crate::trust::local::Local;

/// How often a quiet terminal is looked at.
pub const LOOK_EVERY: Duration = Duration::from_millis(200);
/// How often the look goes past the group's leader, to its other members (a
/// scan of every process).
const MEMBERS_EVERY: Duration = Duration::from_secs(1);

pub struct Watch {
    id: SessionId,
    local: Local,
    /// The run's command.
    pid: u32,
    /// The terminal's device number (its slave side).
    tty: u64,
    cwd: PathBuf,
    notify: Option<Notify>,
    last_output: Instant,
    last_members: Option<Instant>,
    /// A member other than the leader was waiting on the terminal, at the last look.
    member_waits: bool,
    now: Option<Activity>,
    /// How many times this run has entered `working`.
    workings: u64,
    /// What went wrong writing the state, said once.
    failed: Option<String>,
}

impl Watch {
    pub fn new(
        id: SessionId,
        local: Local,
        pid: u32,
        tty: u64,
        cwd: PathBuf,
        notify: Option<Notify>,
    ) -> Watch {
        let mut w = Watch {
            id,
            local,
            pid,
            tty,
            cwd,
            notify,
            last_output: Instant::now(),
            last_members: None,
            member_waits: false,
            now: None,
            workings: 0,
            failed: None,
        };
        w.enter(Activity::Working);
        w
    }

    /// The program wrote to the terminal.
    pub fn output(&mut self) {
        self.last_output = Instant::now();
        self.member_waits = false;
        self.last_members = None;
        if self.now != Some(Activity::Working) {
            self.enter(Activity::Working);
        }
    }

    /// Look again (the relay calls this every [`LOOK_EVERY`] or so).
    pub fn look(&mut self, master: BorrowedFd<'_>) {
        let quiet = self.last_output.elapsed();
        if quiet < activity::QUIET {
            return;
        }
        let Ok(pgrp) = rustix::termios::tcgetpgrp(master) else {
            return;
        };
        let pgrp = pgrp.as_raw_nonzero().get() as u32;
        let raw = rustix::termios::tcgetattr(master)
            .is_ok_and(|t| !t.local_modes.contains(rustix::termios::LocalModes::ICANON));
        let mut waiting = procfs::waits_on_terminal(pgrp, self.tty, raw, false);
        if !waiting {
            // The other members, at most every MEMBERS_EVERY; what they were
            // doing holds in between (until the program writes again).
            if self
                .last_members
                .is_none_or(|t| t.elapsed() >= MEMBERS_EVERY)
            {
                self.last_members = Some(Instant::now());
                self.member_waits = procfs::waits_on_terminal(pgrp, self.tty, raw, true);
            }
            waiting = self.member_waits;
        }
        let a = activity::from_terminal(quiet, waiting);
        if self.now != Some(a) {
            self.enter(a);
        }
    }

    /// What went wrong keeping the state, if anything (said once by the caller).
    pub fn take_failure(&mut self) -> Option<String> {
        self.failed.take()
    }

    fn enter(&mut self, a: Activity) {
        let from = self.now.replace(a);
        if a == Activity::Working {
            self.workings += 1;
        }
        let stamped = Stamped {
            schema: LOCAL_SCHEMA,
            activity: a,
            since: time::now_rfc3339(),
            source: Source::Terminal,
            pid: self.pid,
            workings: self.workings,
            until_working: None,
        };
        if let Err(e) = self.local.write_activity(&stamped) {
            self.failed.get_or_insert(format!("{e:#}"));
        }
        if activity::calls_for_attention(from, a) && !self.agent_reports(&stamped) {
            if let Some(n) = &self.notify {
                match n.run(&self.id, a, &self.cwd) {
                    // Reaped by the relay (it collects every child).
                    Ok(_child) => {}
                    Err(e) => {
                        self.failed.get_or_insert(format!("{e:#}"));
                    }
                }
            }
        }
    }

    /// The agent has reported for this run, and its word holds against the
    /// terminal's (`model::activity::holds`): theirs is the word.
    fn agent_reports(&self, terminal: &Stamped) -> bool {
        matches!(self.local.activity(Source::Agent),
            Ok(Some(s)) if s.pid == self.pid && activity::holds(&s, Some(terminal)))
    }
}
