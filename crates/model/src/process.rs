//! Process identity as plain data: what bullpen recorded about a process, what
//! `/proc` shows now, and the pure decisions that compare them. Pid reuse and
//! reboots must never make a dead session look alive, or make an unrelated
//! process look like one of ours. The reading itself is in `sys::procfs`.

use super::record::Process;

/// The identity of a live process: start time (clock ticks since boot) and boot id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub start_time: Option<u64>,
    pub boot_id: Option<String>,
}

/// A process as bullpen notes it down: pid, start time and boot id. Equal start
/// time and boot id make it the same process; anything less proves nothing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessRef {
    pub pid: u32,
    #[serde(default)]
    pub start_time: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
}

impl ProcessRef {
    /// Pure: is this the process observed now (`now`: what `/proc` shows for `pid`)?
    pub fn is(&self, now: &Identity) -> bool {
        matches!(
            (self.start_time, now.start_time, &self.boot_id, &now.boot_id),
            (Some(a), Some(b), Some(x), Some(y)) if a == b && x == y
        )
    }
}

/// Pure: is the recorded process the one observed now? A recorded process without
/// a start time or boot id can't be proven alive, so it is not.
pub fn same_process(recorded: &Process, now: &Identity) -> bool {
    match (
        recorded.start_time,
        now.start_time,
        &recorded.boot_id,
        &now.boot_id,
    ) {
        (Some(a), Some(b), Some(x), Some(y)) => a == b && x == y,
        _ => false,
    }
}

/// Pure: is a session's recorded run alive, given what `/proc` shows now for its
/// command (`child_now`) and its supervisor (`supervisor_now`)? A background run
/// is alive exactly while its supervisor is: the supervisor is what records the
/// outcome, so a run whose supervisor is gone is lost even if its command lingers.
/// A record from before supervisors recorded their start time falls back to the
/// command. A foreground run is alive while its command is.
pub fn session_alive(
    recorded: &Process,
    child_now: &Identity,
    supervisor_now: Option<&Identity>,
) -> bool {
    match (recorded.supervisor_start_time, supervisor_now) {
        (Some(start), Some(now)) => same_process(
            &Process {
                start_time: Some(start),
                ..recorded.clone()
            },
            now,
        ),
        (Some(_), None) => false,
        _ => same_process(recorded, child_now),
    }
}

/// A process as `/proc/<pid>/stat` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// The parent's pid (field 4).
    pub ppid: u32,
    pub pgrp: u32,
    pub session: u32,
    pub start_time: u64,
}

impl Stat {
    /// A zombie has ended; only its parent has not collected it yet.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Pure: parse `/proc/<pid>/stat`. The command name (field 2) may contain spaces
/// and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(pid: u32, text: &str) -> Option<Stat> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state), f[1] field 4 (ppid), f[2] field 5 (pgrp), f[3]
    // field 6 (session), f[19] field 22 (starttime).
    Some(Stat {
        pid,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        start_time: f.get(19)?.parse().ok()?,
    })
}

/// The process group of a background run, identified so that a reused pid can
/// never be mistaken for it: members have the recorded group id (the command's
/// pid), live in the run's session, and started no earlier than the command did.
///
/// The session: a run on a pseudo-terminal (`Process::terminal`) has its command
/// lead a session of its own, so the session id is the command's pid too; an
/// older run's command stayed in its supervisor's session (the supervisor called
/// `setsid`), so the session id is the supervisor's pid.
///
/// `ancestor`: when set, a member must also descend from that process (the
/// run's supervisor, a child subreaper: every orphan of the command is
/// re-parented to it, so the run's processes all descend from it while it
/// lives). Group and session ids alone are not proof enough once the command
/// that leads them is gone: its pid may then be reused by an unrelated process
/// that starts a session (and so a group) of the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub pgid: u32,
    pub session: u32,
    pub not_before: u64,
    pub ancestor: Option<u32>,
}

impl Group {
    /// The group of a recorded background run, if the record says enough.
    /// (For refusals only: this is the record's word.)
    pub fn of(recorded: &Process) -> Option<Group> {
        match (
            recorded.background,
            recorded.supervisor_pid,
            recorded.start_time,
        ) {
            (true, Some(supervisor), Some(not_before)) => Some(Group {
                pgid: recorded.pid,
                session: if recorded.terminal {
                    recorded.pid
                } else {
                    supervisor
                },
                not_before,
                ancestor: None,
            }),
            _ => None,
        }
    }

    /// Pure: could `p` be a living member (ids, start time and state; the
    /// ancestry, when required, is checked by [`Group::members`])?
    pub fn has_member(&self, p: &Stat) -> bool {
        p.pgrp == self.pgid
            && p.session == self.session
            && p.start_time >= self.not_before
            && !p.is_dead()
    }

    /// Pure: the living members among `all` (every process visible now), in
    /// the order given. With an `ancestor`, only those that descend from it.
    ///
    /// None when another process holds the group's id: the kernel gives the id
    /// of a group (its leader's pid) to no new process while a member remains, so
    /// a process with that pid that did not start when the leader did means the
    /// run's group is gone, and what shares the id now is a stranger's.
    pub fn members(&self, all: &[Stat]) -> Vec<u32> {
        if all
            .iter()
            .any(|p| p.pid == self.pgid && p.start_time != self.not_before)
        {
            return Vec::new();
        }
        let parents: std::collections::HashMap<u32, u32> =
            all.iter().map(|p| (p.pid, p.ppid)).collect();
        all.iter()
            .filter(|p| self.has_member(p))
            .filter(|p| match self.ancestor {
                None => true,
                Some(a) => descends_from(p.pid, a, &parents),
            })
            .map(|p| p.pid)
            .collect()
    }
}

/// Pure: is `pid` a descendant of `ancestor`, following `parents` (pid → ppid)?
/// A chain that breaks, loops or reaches pid 0 or 1 first is not.
pub fn descends_from(
    pid: u32,
    ancestor: u32,
    parents: &std::collections::HashMap<u32, u32>,
) -> bool {
    let mut at = pid;
    for _ in 0..parents.len() + 1 {
        let Some(&parent) = parents.get(&at) else {
            return false;
        };
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        at = parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(start: Option<u64>, boot: Option<&str>) -> Process {
        Process {
            pid: 1,
            start_time: start,
            boot_id: boot.map(str::to_owned),
            background: false,
            supervisor_pid: None,
            started_at: String::new(),
            supervisor_start_time: None,
            stop_requested_at: None,
            terminal: false,
            command: None,
        }
    }

    #[test]
    fn same_process_needs_matching_start_time_and_boot() {
        let now = Identity {
            start_time: Some(10),
            boot_id: Some("b".into()),
        };
        assert!(same_process(&rec(Some(10), Some("b")), &now));
        assert!(!same_process(&rec(Some(11), Some("b")), &now), "pid reused");
        assert!(
            !same_process(&rec(Some(10), Some("other")), &now),
            "rebooted"
        );
        assert!(!same_process(&rec(None, Some("b")), &now));
        let gone = Identity {
            start_time: None,
            boot_id: Some("b".into()),
        };
        assert!(!same_process(&rec(Some(10), Some("b")), &gone));
    }

    #[test]
    fn group_membership_resists_pid_reuse() {
        let g = Group {
            pgid: 100,
            session: 99,
            not_before: 50,
            ancestor: None,
        };
        let p = |pgrp, session, start_time, state| Stat {
            pid: 7,
            state,
            ppid: 1,
            pgrp,
            session,
            start_time,
        };
        assert!(g.has_member(&p(100, 99, 50, 'S')));
        assert!(g.has_member(&p(100, 99, 80, 'R')), "a child started later");
        assert!(
            !g.has_member(&p(100, 99, 49, 'S')),
            "older than the run: reused ids"
        );
        assert!(!g.has_member(&p(100, 5, 80, 'S')), "another session");
        assert!(!g.has_member(&p(101, 99, 80, 'S')), "another group");
        assert!(!g.has_member(&p(100, 99, 80, 'Z')), "a zombie has ended");
    }

    #[test]
    fn members_of_a_terminal_run_must_descend_from_its_supervisor() {
        // The command 100 leads session and group 100; its supervisor is 99.
        let g = Group {
            pgid: 100,
            session: 100,
            not_before: 50,
            ancestor: Some(99),
        };
        let p = |pid, ppid| Stat {
            pid,
            state: 'S',
            ppid,
            pgrp: 100,
            session: 100,
            start_time: 60,
        };
        let supervisor = Stat {
            pgrp: 99,
            session: 99,
            ..p(99, 1)
        };
        let all = [
            supervisor,
            Stat {
                start_time: 50,
                ..p(100, 99) // the command
            },
            p(101, 100), // its child
            p(102, 99),  // an orphan, re-parented to the supervisor (subreaper)
            p(103, 101), // a grandchild
            p(200, 1),   // pid 100 reused: a new session 100 of an unrelated process
            p(201, 200), // and its child
            p(300, 301), // a parent loop
            p(301, 300),
        ];
        assert_eq!(g.members(&all), [100, 101, 102, 103]);
        let any = Group {
            ancestor: None,
            ..g
        };
        assert_eq!(any.members(&all), [100, 101, 102, 103, 200, 201, 300, 301]);
    }

    #[test]
    fn a_group_whose_id_another_process_holds_has_no_members() {
        // The command 100 (started at 50) is gone; a stranger took pid 100 and
        // started a session (and group) 100 of its own, with a child.
        let g = Group {
            pgid: 100,
            session: 100,
            not_before: 50,
            ancestor: None,
        };
        let p = |pid, start_time| Stat {
            pid,
            state: 'S',
            ppid: 1,
            pgrp: 100,
            session: 100,
            start_time,
        };
        assert_eq!(g.members(&[p(100, 70), p(101, 71)]), Vec::<u32>::new());
        // The leader itself as started (a zombie too) proves the id is the run's.
        assert_eq!(g.members(&[p(100, 50), p(101, 71)]), [100, 101]);
        let zombie = Stat {
            state: 'Z',
            ..p(100, 50)
        };
        assert_eq!(g.members(&[zombie, p(101, 71)]), [101]);
        // The leader gone and its pid free: the run's leftovers.
        assert_eq!(g.members(&[p(101, 71)]), [101]);
    }

    #[test]
    fn a_terminal_runs_group_is_in_the_commands_own_session() {
        let mut r = rec(Some(10), Some("b"));
        r.pid = 100;
        r.background = true;
        r.supervisor_pid = Some(99);
        assert_eq!(Group::of(&r).map(|g| g.session), Some(99));
        r.terminal = true;
        assert_eq!(Group::of(&r).map(|g| g.session), Some(100));
    }

    #[test]
    fn parses_stat_with_awkward_names() {
        let line = "42 (a) b (c) S 1 40 39 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0";
        let s = parse_stat(42, line).unwrap();
        assert_eq!(
            (s.state, s.ppid, s.pgrp, s.session, s.start_time),
            ('S', 1, 40, 39, 777)
        );
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn background_liveness_follows_the_supervisor() {
        let mut bg = rec(Some(10), Some("b"));
        bg.background = true;
        bg.supervisor_pid = Some(2);
        bg.supervisor_start_time = Some(9);
        let id = |start| Identity {
            start_time: start,
            boot_id: Some("b".into()),
        };
        assert!(session_alive(&bg, &id(Some(10)), Some(&id(Some(9)))));
        assert!(
            session_alive(&bg, &id(None), Some(&id(Some(9)))),
            "command ended, end not recorded yet"
        );
        assert!(
            !session_alive(&bg, &id(Some(10)), Some(&id(None))),
            "supervisor gone: lost"
        );
        assert!(
            !session_alive(&bg, &id(Some(10)), Some(&id(Some(8)))),
            "supervisor pid reused"
        );
        let fg = rec(Some(10), Some("b"));
        assert!(session_alive(&fg, &id(Some(10)), None));
        assert!(!session_alive(&fg, &id(Some(11)), None));
    }
}
