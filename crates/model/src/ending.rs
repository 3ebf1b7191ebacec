//! How a run ended, worded one way wherever it is said (the log's end line,
//! `attach`, `stop`, `wait`, the record's event): `exited 0`, `stopped by
//! SIGHUP`, `killed by SIGSEGV`, with the run's duration where it is known.

use std::time::Duration;

use super::record::{Exit, Record, State};
use super::time;

/// Linux's signal numbers (the record stores the number), by name.
const SIGNALS: [(i32, &str); 31] = [
    (1, "SIGHUP"),
    (2, "SIGINT"),
    (3, "SIGQUIT"),
    (4, "SIGILL"),
    (5, "SIGTRAP"),
    (6, "SIGABRT"),
    (7, "SIGBUS"),
    (8, "SIGFPE"),
    (9, "SIGKILL"),
    (10, "SIGUSR1"),
    (11, "SIGSEGV"),
    (12, "SIGUSR2"),
    (13, "SIGPIPE"),
    (14, "SIGALRM"),
    (15, "SIGTERM"),
    (16, "SIGSTKFLT"),
    (17, "SIGCHLD"),
    (18, "SIGCONT"),
    (19, "SIGSTOP"),
    (20, "SIGTSTP"),
    (21, "SIGTTIN"),
    (22, "SIGTTOU"),
    (23, "SIGURG"),
    (24, "SIGXCPU"),
    (25, "SIGXFSZ"),
    (26, "SIGVTALRM"),
    (27, "SIGPROF"),
    (28, "SIGWINCH"),
    (29, "SIGIO"),
    (30, "SIGPWR"),
    (31, "SIGSYS"),
];

/// `SIGHUP`, or `signal 40` for one without a name here.
pub fn signal_name(signal: i32) -> String {
    match SIGNALS.iter().find(|(n, _)| *n == signal) {
        Some((_, name)) => (*name).to_owned(),
        None => format!("signal {signal}"),
    }
}

/// `exited 7`, `killed by SIGKILL` (a signal nobody asked bullpen for),
/// `stopped by SIGHUP` (stop asked), `stopped, exited 0` (it caught stop's
/// signal and exited), or what is unknown of it (a lost run).
pub fn how(state: State, exit: &Exit) -> String {
    words(state, exit.code, exit.signal)
}

/// [`how`] from the code and signal alone.
pub fn words(state: State, code: Option<i32>, signal: Option<i32>) -> String {
    let stopped = state == State::Stopped;
    match (code, signal, stopped) {
        (Some(c), _, false) => format!("exited {c}"),
        (Some(c), _, true) => format!("stopped, exited {c}"),
        (None, Some(s), false) => format!("killed by {}", signal_name(s)),
        (None, Some(s), true) => format!("stopped by {}", signal_name(s)),
        (None, None, false) => "ended; how is unknown".to_owned(),
        // A lost run: stop's own words say what it sent, or that nothing was left.
        (None, None, true) => "stopped".to_owned(),
    }
}

/// [`words`] as a table cell says it: what is unknown left out (`stopped`).
pub fn brief(state: State, code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (None, None) => state.as_str().to_owned(),
        _ => words(state, code, signal),
    }
}

/// [`how`] with the duration when known: `exited 7 after 2m 33s`, `ended
/// after 5s; how is unknown`.
pub fn how_long(state: State, exit: &Exit, took: Option<Duration>) -> String {
    let how = how(state, exit);
    match (took, how.split_once("; ")) {
        (Some(d), Some((what, rest))) => format!("{what} after {}; {rest}", time::duration(d)),
        (Some(d), None) => format!("{how} after {}", time::duration(d)),
        (None, _) => how,
    }
}

/// How the record's last run ended (`None`: it has not), with its duration
/// from the record's times (whole seconds).
pub fn of_record(r: &Record) -> Option<String> {
    let exit = r.exit.as_ref()?;
    let took = r.process.as_ref().and_then(|p| {
        let start = time::parse_rfc3339(&p.started_at)?;
        let end = time::parse_rfc3339(&exit.at)?;
        u64::try_from(end - start).ok().map(Duration::from_secs)
    });
    Some(how_long(r.state, exit, took))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: Option<i32>, signal: Option<i32>) -> Exit {
        Exit {
            code,
            signal,
            at: "2026-01-02T03:04:40Z".into(),
        }
    }

    #[test]
    fn one_wording() {
        let table = [
            (State::Exited, exit(Some(7), None), "exited 7"),
            (State::Exited, exit(None, Some(9)), "killed by SIGKILL"),
            (State::Stopped, exit(None, Some(1)), "stopped by SIGHUP"),
            (State::Stopped, exit(Some(0), None), "stopped, exited 0"),
            (State::Stopped, exit(None, None), "stopped"),
            (State::Exited, exit(None, None), "ended; how is unknown"),
            (State::Exited, exit(None, Some(64)), "killed by signal 64"),
        ];
        for (state, e, want) in table {
            assert_eq!(how(state, &e), want);
        }
        assert_eq!(brief(State::Exited, None, None), "exited");
        assert_eq!(
            how_long(
                State::Exited,
                &exit(None, None),
                Some(Duration::from_secs(5))
            ),
            "ended after 5.0s; how is unknown"
        );
        assert_eq!(brief(State::Exited, None, Some(15)), "killed by SIGTERM");
        assert_eq!(
            how_long(
                State::Exited,
                &exit(Some(7), None),
                Some(Duration::from_secs(153))
            ),
            "exited 7 after 2m 33s"
        );
    }

    #[test]
    fn a_records_duration_comes_from_its_times() {
        let mut r: Record = serde_json::from_value(serde_json::json!({
            "schema": 1, "id": "x", "branch": "bullpen/x", "worktree": "/w/x",
            "base": "0", "command": [], "state": "stopped", "host": "h",
            "created_at": "t", "updated_at": "t",
            "process": {"pid": 1, "started_at": "2026-01-02T03:04:05Z"},
            "exit": {"code": null, "signal": 1, "at": "2026-01-02T03:04:40Z"},
        }))
        .unwrap();
        assert_eq!(
            of_record(&r).as_deref(),
            Some("stopped by SIGHUP after 35s")
        );
        r.exit = None;
        assert_eq!(of_record(&r), None);
    }
}
