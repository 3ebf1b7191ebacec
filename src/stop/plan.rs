//! What `stop` does, decided as a pure function of the record and what is
//! observed of its run.

use std::time::Duration;

use crate::model::{Record, State};

/// How long SIGHUP has before SIGTERM (at most half of `--timeout`): a shell
/// saves its history and ends its jobs in that time.
pub const HANGUP_GRACE: Duration = Duration::from_secs(2);

/// Pure: the waits after SIGHUP, SIGTERM and SIGKILL. SIGKILL comes `timeout`
/// after SIGHUP, then has `kill_grace` to take effect. A short `timeout` is
/// halved between SIGHUP and SIGTERM: a command that ignores SIGHUP still has
/// time to end on SIGTERM before SIGKILL, rather than none.
pub fn waits(timeout: Duration, kill_grace: Duration) -> [Duration; 3] {
    let hangup = HANGUP_GRACE.min(timeout / 2);
    [hangup, timeout - hangup, kill_grace]
}

/// What is observed about the recorded run right now.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// The run's supervisor is the recorded process (background runs).
    pub supervisor_alive: bool,
    /// The run's command is the recorded process.
    pub command_alive: bool,
}

/// What stop will do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Not running: say so, change nothing.
    NotRunning,
    /// A foreground run belongs to its terminal: refuse, naming its pid.
    Foreground { pid: u32 },
    /// Mark the record, signal the group (if this machine proves it is the
    /// run's: `trust::decide::signal_authority`), let the supervisor record
    /// `stopped`.
    Supervised,
    /// Nobody will record the end (lost): signal what is left of the group of a
    /// background run (with the same proof), and record `stopped` here.
    Orphaned { background: bool },
}

/// Pure: the plan for a record and the facts about its run.
pub fn plan(record: &Record, facts: &Facts) -> Plan {
    if record.state != State::Running {
        return Plan::NotRunning;
    }
    let Some(p) = record.process.as_ref() else {
        return Plan::Orphaned { background: false };
    };
    match (p.background, facts.supervisor_alive, facts.command_alive) {
        (false, _, true) => Plan::Foreground { pid: p.pid },
        (false, _, false) => Plan::Orphaned { background: false },
        (true, true, _) => Plan::Supervised,
        (true, false, _) => Plan::Orphaned { background: true },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::SCHEMA;
    use crate::model::Process;

    fn record(state: State, process: Option<Process>) -> Record {
        Record {
            schema: SCHEMA,
            id: "a".parse().unwrap(),
            branch: "bullpen/a".into(),
            worktree: "/w/a".into(),
            base: "0".repeat(40),
            base_ref: None,
            command: vec!["sleep".into()],
            agent: None,
            agent_args: Vec::new(),
            state,
            host: "h".into(),
            created_at: String::new(),
            updated_at: String::new(),
            run_start: None,
            process,
            exit: None,
            log: None,
            spawner: None,
            clone_id: None,
            resumed_from: None,
            extra: Default::default(),
        }
    }

    fn proc_(background: bool) -> Process {
        Process {
            pid: 100,
            start_time: Some(5),
            boot_id: Some("b".into()),
            background,
            supervisor_pid: background.then_some(99),
            started_at: String::new(),
            supervisor_start_time: background.then_some(4),
            stop_requested_at: None,
            terminal: false,
            command: None,
        }
    }

    fn facts(supervisor_alive: bool, command_alive: bool) -> Facts {
        Facts {
            supervisor_alive,
            command_alive,
        }
    }

    #[test]
    fn plans() {
        let bg = Some(proc_(true));
        let fg = Some(proc_(false));
        let table = [
            (
                State::Exited,
                bg.clone(),
                facts(true, true),
                Plan::NotRunning,
            ),
            (State::Ready, None, facts(false, false), Plan::NotRunning),
            (
                State::Stopped,
                bg.clone(),
                facts(false, false),
                Plan::NotRunning,
            ),
            (
                State::Running,
                bg.clone(),
                facts(true, true),
                Plan::Supervised,
            ),
            // The command ended, the supervisor is about to record it: still its job.
            (
                State::Running,
                bg.clone(),
                facts(true, false),
                Plan::Supervised,
            ),
            // Lost: the supervisor is gone, whether or not its command lingers.
            (
                State::Running,
                bg.clone(),
                facts(false, true),
                Plan::Orphaned { background: true },
            ),
            (
                State::Running,
                bg,
                facts(false, false),
                Plan::Orphaned { background: true },
            ),
            (
                State::Running,
                fg.clone(),
                facts(false, true),
                Plan::Foreground { pid: 100 },
            ),
            (
                State::Running,
                fg,
                facts(false, false),
                Plan::Orphaned { background: false },
            ),
            (
                State::Running,
                None,
                facts(false, false),
                Plan::Orphaned { background: false },
            ),
        ];
        for (state, process, f, want) in table {
            assert_eq!(
                plan(&record(state, process.clone()), &f),
                want,
                "{state:?} {process:?} {f:?}"
            );
        }
    }

    #[test]
    fn sigkill_comes_at_the_timeout() {
        let s = Duration::from_secs;
        assert_eq!(waits(s(10), s(1)), [s(2), s(8), s(1)]);
        assert_eq!(waits(s(4), s(1)), [s(2), s(2), s(1)]);
        let ms = Duration::from_millis;
        assert_eq!(waits(s(1), s(1)), [ms(500), ms(500), s(1)]);
        assert_eq!(waits(s(0), s(1)), [s(0), s(0), s(1)]);
    }

    #[test]
    fn a_run_is_identified_by_pid_and_start_time_while_running() {
        let r = record(State::Running, Some(proc_(true)));
        assert_eq!(r.run_key(), Some((100, Some(5))));
        assert_eq!(record(State::Exited, Some(proc_(true))).run_key(), None);
    }
}
