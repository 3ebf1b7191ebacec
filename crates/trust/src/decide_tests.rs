//! Unit tests of `decide.rs`.
use super::*;

#[test]
fn leftovers_are_ours_only_while_their_supervisor_lives_as_recorded() {
    let l = Leftovers {
        schema: 1,
        supervisor: ProcessRef {
            pid: 50,
            start_time: Some(7),
            boot_id: Some("b".into()),
        },
        since: "t".into(),
    };
    let now = |start_time| Identity {
        start_time,
        boot_id: Some("b".into()),
    };
    assert_eq!(
        leftover_authority(&l, &now(Some(7))).map(|a| a.supervisor()),
        Some(50)
    );
    assert_eq!(leftover_authority(&l, &now(Some(8))), None, "pid reused");
    assert_eq!(leftover_authority(&l, &now(None)), None, "gone");
    let rebooted = Identity {
        start_time: Some(7),
        boot_id: Some("c".into()),
    };
    assert_eq!(leftover_authority(&l, &rebooted), None, "rebooted");
    let init = Leftovers {
        supervisor: ProcessRef {
            pid: 1,
            ..l.supervisor.clone()
        },
        ..l.clone()
    };
    assert_eq!(leftover_authority(&init, &now(Some(7))), None);
}

fn pref(pid: u32, start: u64) -> ProcessRef {
    ProcessRef {
        pid,
        start_time: Some(start),
        boot_id: Some("boot".into()),
    }
}

fn local() -> LocalRun {
    LocalRun {
        schema: 1,
        command: pref(100, 50),
        supervisor: Some(pref(99, 40)),
        background: true,
        started_at: String::new(),
        terminal: false,
        socket: None,
    }
}

fn recorded() -> Process {
    Process {
        pid: 100,
        start_time: Some(50),
        boot_id: Some("boot".into()),
        background: true,
        supervisor_pid: Some(99),
        started_at: String::new(),
        supervisor_start_time: Some(40),
        stop_requested_at: None,
        terminal: false,
        command: None,
    }
}

fn id(start: Option<u64>) -> Identity {
    Identity {
        start_time: start,
        boot_id: Some("boot".into()),
    }
}

fn facts(command: Option<u64>, supervisor: Option<u64>) -> SignalFacts {
    SignalFacts {
        boot_id: Some("boot".into()),
        command_now: id(command),
        supervisor_now: Some(id(supervisor)),
        own_pgrp: 7,
    }
}

const GROUP: Group = Group {
    pgid: 100,
    session: 99,
    not_before: 50,
    ancestor: None,
};

fn terminal_run() -> (LocalRun, Process) {
    let mut l = local();
    l.terminal = true;
    l.socket = Some("/run/user/1/bullpen/s99-40.sock".into());
    let mut r = recorded();
    r.terminal = true;
    (l, r)
}

#[test]
fn a_terminal_runs_group_is_the_commands_own_session() {
    let (l, r) = terminal_run();
    let own = Group {
        session: 100,
        ..GROUP
    };
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(Some(50), Some(40))).map(|a| a.reach()),
        Ok(Reach::Group(own))
    );
    // Leader gone: members one by one, each descending from the supervisor.
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(None, Some(40))).map(|a| a.reach()),
        Ok(Reach::Members(Group {
            ancestor: Some(99),
            ..own
        }))
    );
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(None, None)).map(|a| a.reach()),
        Ok(Reach::Unproven(own))
    );
    // The record and the local proof must agree on the terminal.
    let mut plain = r.clone();
    plain.terminal = false;
    assert_eq!(
        signal_authority(&plain, Some(&l), &facts(Some(50), Some(40))),
        Err(Distrust::RunMismatch)
    );
}

#[test]
fn attach_connects_only_to_the_socket_this_machine_recorded_for_the_run() {
    let (l, r) = terminal_run();
    assert_eq!(
        attach_target(&r, Some(&l)),
        Ok(AttachTarget {
            supervisor: pref(99, 40),
            socket: "/run/user/1/bullpen/s99-40.sock".into()
        })
    );
    assert_eq!(attach_target(&r, None), Err(Distrust::NoLocalRun(None)));
    let mut other = r.clone();
    other.supervisor_start_time = Some(41);
    assert_eq!(attach_target(&other, Some(&l)), Err(Distrust::RunMismatch));
    let mut no_socket = l.clone();
    no_socket.socket = None;
    assert_eq!(
        attach_target(&r, Some(&no_socket)),
        Err(Distrust::NoTerminal)
    );
    // A run of an older bullpen: no terminal at all.
    assert_eq!(
        attach_target(&recorded(), Some(&local())),
        Err(Distrust::NoTerminal)
    );
}

#[test]
fn a_run_started_here_may_be_signalled_while_it_lives_as_started() {
    let l = local();
    let r = recorded();
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(Some(50), Some(40))).map(|a| a.reach()),
        Ok(Reach::Group(GROUP))
    );
    // The leader is gone, the supervisor lives: members one by one.
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(None, Some(40))).map(|a| a.reach()),
        Ok(Reach::Members(GROUP))
    );
    // The leader's pid reused by another process, supervisor gone: nothing
    // can be proven.
    assert_eq!(
        signal_authority(&r, Some(&l), &facts(Some(51), None)).map(|a| a.reach()),
        Ok(Reach::Unproven(GROUP))
    );
    // After a reboot nothing of the run lives.
    let mut rebooted = facts(Some(50), Some(40));
    rebooted.boot_id = Some("other".into());
    assert_eq!(
        signal_authority(&r, Some(&l), &rebooted).map(|a| a.reach()),
        Ok(Reach::Nothing)
    );
}

#[test]
fn a_record_that_is_not_the_local_run_is_never_signalled() {
    let f = facts(Some(50), Some(40));
    assert_eq!(
        signal_authority(&recorded(), None, &f),
        Err(Distrust::NoLocalRun(None))
    );
    type Edit = fn(&mut Process);
    let table: Vec<(&str, Edit)> = vec![
        ("other pid", |p| p.pid = 1),
        ("start time 0", |p| p.start_time = Some(0)),
        ("no start time", |p| p.start_time = None),
        ("other boot", |p| p.boot_id = Some("x".into())),
        ("other supervisor", |p| p.supervisor_pid = Some(1)),
        ("supervisor start", |p| p.supervisor_start_time = Some(0)),
        ("no supervisor", |p| p.supervisor_pid = None),
        ("foreground", |p| p.background = false),
    ];
    for (what, change) in table {
        let mut r = recorded();
        change(&mut r);
        assert_eq!(
            signal_authority(&r, Some(&local()), &f),
            Err(Distrust::RunMismatch),
            "{what}"
        );
    }
}

#[test]
fn groups_0_1_and_our_own_are_never_signalled() {
    for pgid in [0, 1, 7] {
        let mut l = local();
        l.command.pid = pgid;
        let mut r = recorded();
        r.pid = pgid;
        assert_eq!(
            signal_authority(&r, Some(&l), &facts(Some(50), Some(40))),
            Err(Distrust::UnsafeGroup(pgid))
        );
    }
}

#[test]
fn only_the_command_recorded_here_runs_without_being_named() {
    let l = LocalCommand {
        schema: 1,
        argv: vec!["claude".into()],
        agent: None,
        agent_args: Vec::new(),
        recorded_at: String::new(),
    };
    assert_eq!(
        may_run_recorded(&["claude".into()], Ok(Some(&l))).map(|r| r.argv().to_vec()),
        Ok(vec!["claude".to_owned()])
    );
    assert_eq!(
        may_run_recorded(&["rm".into(), "-rf".into()], Ok(Some(&l))),
        Err(Distrust::CommandDiffers {
            local: vec!["claude".into()]
        })
    );
    assert_eq!(
        may_run_recorded(&["claude".into()], Ok(None)),
        Err(Distrust::NoLocalCommand(None))
    );
    assert!(may_run_recorded(&["claude".into()], Err("bad json".into())).is_err());
}

#[test]
fn an_agent_runs_this_machines_profile_and_only_arguments_recorded_here() {
    let here = |agent: Option<&str>, args: &[&str]| LocalCommand {
        schema: 1,
        argv: vec!["/bin/sh".into(), "-c".into(), "claude".into()],
        agent: agent.map(str::to_owned),
        agent_args: args.iter().map(|a| a.to_string()).collect(),
        recorded_at: String::new(),
    };
    let args = ["--model".to_owned(), "opus".to_owned()];
    let l = here(Some("claude"), &["--model", "opus"]);
    assert_eq!(
        may_run_agent("claude", &args, Ok(Some(&l))),
        Ok(AgentRun(()))
    );
    // Another agent, other arguments, no agent at all: not what was recorded.
    assert!(may_run_agent("codex", &args, Ok(Some(&l))).is_err());
    assert_eq!(
        may_run_agent("claude", &[], Ok(Some(&l))),
        Err(Distrust::AgentDiffers {
            local: Some("claude".into())
        })
    );
    assert_eq!(
        may_run_agent("claude", &[], Ok(Some(&here(None, &[])))),
        Err(Distrust::AgentDiffers { local: None })
    );
    // A session from elsewhere: the profile is this machine's, its name alone
    // is the record's; arguments would be the record's.
    assert_eq!(may_run_agent("claude", &[], Ok(None)), Ok(AgentRun(())));
    assert_eq!(
        may_run_agent("claude", &args, Ok(None)),
        Err(Distrust::NoLocalAgentArgs)
    );
    assert!(may_run_agent("claude", &[], Err("bad json".into())).is_err());
}

#[test]
fn only_a_worktree_created_here_at_that_path_is_ours() {
    let c = Created {
        schema: 1,
        worktree: "/r/x".into(),
        worktree_root: "/r".into(),
        created_at: String::new(),
        spawner: pref(5, 5),
        command: None,
    };
    assert_eq!(created_here("/r/x", Ok(Some(&c))), Ok(CreatedHere(())));
    assert_eq!(
        created_here("/r/y", Ok(Some(&c))),
        Err(Distrust::CreatedElsewhere {
            path: "/r/x".into()
        })
    );
    assert_eq!(
        created_here("/r/x", Ok(None)),
        Err(Distrust::NotCreatedHere(None))
    );
}

#[test]
fn a_session_keeps_the_root_it_was_created_under_only_at_its_own_path() {
    let c = Created {
        schema: 1,
        worktree: "/old/root/x".into(),
        worktree_root: "/old/root".into(),
        created_at: String::new(),
        spawner: pref(5, 5),
        command: None,
    };
    assert_eq!(
        created_root("/old/root/x", &c),
        Some(PathBuf::from("/old/root"))
    );
    // A record claiming another path (a fetch, a hand edit) gets nothing.
    assert_eq!(created_root("/old/root/y", &c), None);
    assert_eq!(created_root("/home/me", &c), None);
    // Local state that does not hold together (the worktree not strictly
    // inside its root) proves nothing either.
    for (worktree, root) in [
        ("/old/root", "/old/root"),
        ("/elsewhere/x", "/old/root"),
        ("/old/root/../x", "/old/root"),
        ("/old/root/x", ""),
        ("/x", "/"),
    ] {
        let bad = Created {
            worktree: worktree.into(),
            worktree_root: root.into(),
            ..c.clone()
        };
        assert_eq!(created_root(worktree, &bad), None, "{worktree} in {root:?}");
    }
}
