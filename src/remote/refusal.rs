//! How a push refusal reads: the session, why, and what the remote says of it.

use crate::context::Ctx;
use crate::git::store;
use crate::model::remote::RemoteName;
use crate::model::{time, SessionId};

use super::plan::{Refusal, Standing};

/// Why a session is not pushed, in words.
pub(super) fn refusal(ctx: &Ctx, remote: &RemoteName, id: &SessionId, why: Refusal) -> String {
    match why {
        Refusal::RecordDiverged => format!(
            "its record on {remote} shares no event with this one ({}): another session of that \
             id; pushing would lose it",
            remote_says(ctx, remote, id)
        ),
        Refusal::JoinNeedsBranch(branch) => {
            let what = match branch {
                Standing::Behind => format!("{remote}'s has commits this clone's lacks"),
                Standing::New => format!("{remote} has none"),
                Standing::NoneHere => "this clone has none".to_owned(),
                _ => format!("{remote}'s is not known here"),
            };
            format!(
                "its record on {remote} has events this one lacks, and this one has events it \
                 lacks ({}); the two would be joined, but {} is not a fast-forward of {remote}'s \
                 ({what})",
                remote_says(ctx, remote, id),
                id.branch()
            )
        }
        Refusal::BranchDiverged => format!(
            "{remote}'s {} has commits that this clone's lacks, and this clone's has commits it \
             lacks; pushing would lose them",
            id.branch()
        ),
    }
}

/// What the remote's record of `id` says of where and when it last changed:
/// `last recorded exited on build-box, 5m ago`.
pub(super) fn remote_says(ctx: &Ctx, remote: &RemoteName, id: &SessionId) -> String {
    let target = ctx
        .repo
        .direct_target(&remote.incoming_ref(id))
        .ok()
        .flatten()
        .flatten();
    match store::read_fetched(&ctx.repo, id, target) {
        Ok(s) => {
            let age = time::parse_rfc3339(&s.record.updated_at)
                .map(|t| format!(", {} ago", time::age(time::now_unix() - t)))
                .unwrap_or_default();
            format!(
                "last recorded {} on {}{age}",
                s.record.state.as_str(),
                s.record.host
            )
        }
        Err(e) => format!("its record there cannot be read: {e:#}"),
    }
}
