//! The `--attention` order of `ls` (pure; the STATE cell's words are
//! `model::activity::cell`).

use super::table::Row;
use crate::model::activity::Activity;
use crate::model::time;

/// Pure: `--attention`: the sessions that need a person first (longest waiting
/// first), then the idle ones, then the rest in their order.
pub fn sort(rows: &mut [Row]) {
    let urgency = |r: &Row| match r.activity.as_deref() {
        Some("needs input") => Activity::NeedsInput.urgency(),
        Some("idle") => Activity::Idle.urgency(),
        Some("working") => Activity::Working.urgency(),
        _ => Activity::Exited.urgency() + 1,
    };
    rows.sort_by_cached_key(|r| {
        let u = urgency(r);
        let since = r.activity_since.as_deref().and_then(time::parse_rfc3339);
        // Who waits longest first; the others keep their order.
        (
            u,
            since.filter(|_| u <= Activity::Idle.urgency()).unwrap_or(0),
        )
    });
}
