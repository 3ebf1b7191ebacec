//! `ls --screen`: the last non-empty line on the screen of each running
//! background run, asked of all their supervisors at once (as `peek` asks,
//! with its checks) and waited for no longer than [`DEADLINE`]: a stopped or
//! stuck supervisor never holds `ls` up, its cell says it did not answer.

use std::time::{Duration, Instant};

use crate::attach::peek::{glance, Glance};
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::model::State;
use crate::sys::procfs;

use super::table::{Row, ScreenLine};

/// How long `ls` waits for all the answers together.
pub const DEADLINE: Duration = Duration::from_millis(1000);

/// Set each row's `screen`; `rows` are those of `sessions`, in their order.
pub fn fill(ctx: &Ctx, sessions: &[Stored], rows: &mut [Row]) {
    let asked: Vec<usize> = sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            let r = &s.record;
            r.state == State::Running
                && r.process
                    .as_ref()
                    .is_some_and(|p| p.background && p.terminal && procfs::is_session_alive(p))
        })
        .map(|(i, _)| i)
        .collect();
    let of: Vec<&Stored> = asked.iter().map(|&i| &sessions[i]).collect();
    let answers = glance(ctx, &of, Instant::now() + DEADLINE);
    for row in rows.iter_mut() {
        row.screen = Some(ScreenLine::NotRunning);
    }
    for (i, answer) in asked.into_iter().zip(answers) {
        if let Some(row) = rows.get_mut(i) {
            row.screen = Some(match answer {
                Glance::Shot(shot) => ScreenLine::Line(last_line(&shot.lines)),
                Glance::NoAnswer => ScreenLine::NoAnswer,
                Glance::Failed(_) => ScreenLine::Unreadable,
            });
        }
    }
}

/// Pure: the last line that is not blank, trimmed ("" when all are).
fn last_line(lines: &[String]) -> String {
    lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_is_the_last_that_is_not_blank() {
        let lines: Vec<String> = ["a", "  > ask me  ", "   ", ""].map(String::from).to_vec();
        assert_eq!(last_line(&lines), "> ask me");
        assert_eq!(last_line(&["".into(), " ".into()]), "");
        assert_eq!(last_line(&[]), "");
    }
}
