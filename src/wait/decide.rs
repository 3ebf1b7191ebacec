//! What `wait` makes of a record, as a pure function of the record and one fact.

use crate::model::{Record, State};

/// Where a session's run stands for `wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Still going (or still being created): look again.
    Going,
    /// Ended: the status a shell would give (exit code, 128+signal).
    Ended(i32),
    /// Never ran (`ready`), or nothing recorded how it ended (a collected
    /// session from before runs were recorded): nothing to wait for.
    NeverRan,
    /// Recorded running, but what would record its end is gone.
    Lost,
    /// A spawn that was interrupted before the session was ready.
    Interrupted,
}

/// Pure: `alive` is whether what the record waits on lives: the run's
/// supervisor (`running`), the spawn creating it (`provisioning`).
pub fn waiting(r: &Record, alive: bool) -> Wait {
    match r.state {
        State::Running if alive => Wait::Going,
        State::Running => Wait::Lost,
        State::Provisioning if alive => Wait::Going,
        State::Provisioning => Wait::Interrupted,
        State::Ready => Wait::NeverRan,
        State::Exited | State::Stopped | State::Collected => match &r.exit {
            Some(e) => Wait::Ended(e.shell_status()),
            None => Wait::NeverRan,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Exit;

    fn record(state: State, exit: Option<(Option<i32>, Option<i32>)>) -> Record {
        let mut r: Record = serde_json::from_value(serde_json::json!({
            "schema": 1, "id": "x", "branch": "bullpen/x", "worktree": "/w/x",
            "base": "0", "command": [], "state": "ready", "host": "h",
            "created_at": "t", "updated_at": "t",
        }))
        .unwrap();
        r.state = state;
        r.exit = exit.map(|(code, signal)| Exit {
            code,
            signal,
            at: "t".into(),
        });
        r
    }

    #[test]
    fn what_wait_makes_of_a_record() {
        use State::*;
        let table = [
            (record(Running, None), true, Wait::Going),
            (record(Running, None), false, Wait::Lost),
            (record(Provisioning, None), true, Wait::Going),
            (record(Provisioning, None), false, Wait::Interrupted),
            (record(Ready, None), false, Wait::NeverRan),
            (record(Exited, Some((Some(0), None))), false, Wait::Ended(0)),
            (record(Exited, Some((Some(5), None))), false, Wait::Ended(5)),
            (
                record(Stopped, Some((None, Some(15)))),
                false,
                Wait::Ended(143),
            ),
            // A lost run that stop recorded: nothing says how it ended.
            (record(Stopped, Some((None, None))), false, Wait::Ended(1)),
            (
                record(Collected, Some((Some(0), None))),
                false,
                Wait::Ended(0),
            ),
            (record(Collected, None), false, Wait::NeverRan),
            // What the record says of an ended run does not depend on `alive`.
            (record(Exited, Some((Some(3), None))), true, Wait::Ended(3)),
        ];
        for (r, alive, want) in table {
            assert_eq!(waiting(&r, alive), want, "{:?} alive={alive}", r.state);
        }
    }
}
