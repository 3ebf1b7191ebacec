//! Records that merge: when this clone's record of a session and a remote's
//! both moved on from a common event (two machines continued it in turn), a
//! record commit with both as parents joins them, so both histories stay in
//! its log. `push` joins before it sends; `fetch` joins this clone's record
//! when this clone's is the later (the local view), so the next push is a
//! fast-forward. Nothing of the remote's record becomes local proof: the join
//! holds only a record, and this clone's own fields stay its own (a join whose
//! later side is the remote's is only ever pushed).

use anyhow::Result;

use super::plan::{decide, ours_is_later, standing, Decision, RefFacts};
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::git::Oid;
use crate::model::remote::RemoteName;
use crate::model::{time, SessionId};

/// The record commit that joins this clone's record of a session with the
/// remote's (`theirs`, which must pass the checks of a fetched record): the
/// later of the two (a time far ahead of this clock is not later), both as
/// parents. When this clone's is the later, the join
/// becomes this clone's record too (compare-and-swap); otherwise it only goes
/// to the remote, and this clone's stays as it is (the remote's then has more).
pub fn join(
    ctx: &Ctx,
    remote: &RemoteName,
    ours: &Stored,
    theirs: Option<Oid>,
) -> Result<Oid, String> {
    let id = &ours.record.id;
    let theirs = store::read_fetched(&ctx.repo, id, theirs)
        .map_err(|e| format!("its record on {remote} cannot be joined: {e:#}"))?;
    let ours_later = ours_is_later(
        time::parse_rfc3339(&ours.record.updated_at),
        time::parse_rfc3339(&theirs.record.updated_at),
        time::now_unix(),
    );
    let keep = if ours_later { ours } else { &theirs };
    let joined =
        store::join(&ctx.repo, ours, &theirs, keep, remote).map_err(|e| format!("{e:#}"))?;
    if ours_later {
        store::take_join(&ctx.repo, ours, &joined).map_err(|e| match store::is_conflict(&e) {
            true => "its record changed here during the push; push again".to_owned(),
            false => format!("{e:#}"),
        })?;
    }
    Ok(joined.commit)
}

/// After a fetch: join this clone's record of each session in `ids` with the
/// checked copy fetched from `remote` where both moved on from a common event,
/// this clone's is the later, and its branch is the remote's or a fast-forward
/// of it (as push would). The sessions joined.
pub fn join_fetched(
    ctx: &Ctx,
    remote: &RemoteName,
    ids: &[SessionId],
    tracked: Option<&str>,
) -> Vec<SessionId> {
    let mut joined = Vec::new();
    for id in ids {
        let Ok(Some(ours)) = store::load(&ctx.repo, id) else {
            continue;
        };
        let Ok(Some(theirs)) = ctx.repo.ref_target(&remote.tracking_ref(id)) else {
            continue;
        };
        let Ok(Some(_)) = ctx.repo.merge_base(ours.commit, theirs) else {
            continue;
        };
        let record = relate(ctx, Some(ours.commit), Some(Some(theirs)));
        let branch = match tracked.and_then(|p| p.split_once('*')) {
            Some((prefix, suffix)) => {
                let theirs = ctx
                    .repo
                    .ref_target(&format!("{prefix}{}{suffix}", id.as_str()))
                    .ok()
                    .flatten();
                let ours = ctx.repo.ref_target(&id.branch_ref()).ok().flatten();
                relate(ctx, ours, Some(theirs))
            }
            None => RefFacts::default(),
        };
        if !matches!(
            decide(standing(&record), standing(&branch), true),
            Decision::Join { .. }
        ) {
            continue;
        }
        let Ok(fetched) = store::read_fetched(&ctx.repo, id, Some(theirs)) else {
            continue;
        };
        let ours_later = ours_is_later(
            time::parse_rfc3339(&ours.record.updated_at),
            time::parse_rfc3339(&fetched.record.updated_at),
            time::now_unix(),
        );
        if ours_later && join(ctx, remote, &ours, Some(theirs)).is_ok() {
            joined.push(id.clone());
        }
    }
    joined
}

/// How `ours` and the remote's `theirs` relate. A history that cannot be read
/// relates to nothing (which refuses: nothing is pushed over what cannot be told).
pub fn relate(ctx: &Ctx, ours: Option<Oid>, theirs: Option<Option<Oid>>) -> RefFacts {
    let (mut ours_contains_theirs, mut theirs_contains_ours) = (false, false);
    if let (Some(a), Some(Some(b))) = (ours, theirs) {
        ours_contains_theirs = ctx.repo.is_ancestor(b, a).unwrap_or(false);
        theirs_contains_ours = !ours_contains_theirs && ctx.repo.is_ancestor(a, b).unwrap_or(false);
    }
    RefFacts {
        ours,
        theirs,
        ours_contains_theirs,
        theirs_contains_ours,
    }
}
