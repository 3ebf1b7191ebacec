//! `git bullpen push`: this clone's sessions (branch, record) and the provenance
//! notes, to a remote, losing nothing there.
//!
//! It fetches first (as `fetch` does, under the same lock), so it knows what the
//! remote has and has merged the remote's notes into ours. Then `plan::decide`
//! says, per session, what may go: only what is new on the remote or a
//! fast-forward of it; a session whose record or branch has diverged from the
//! remote's is refused whole, with the reason. One `git push` sends the rest,
//! never forced, so git itself refuses anything that stopped being a
//! fast-forward meanwhile (another machine pushed in between). The notes, a
//! fast-forward of the remote's after the merge, are pushed the same way; a
//! lost race there is fetched, merged and pushed again.

use std::collections::HashMap;

use anyhow::{Context, Result};

use super::plan::{decide, standing, Decision, RefFacts, Refusal, Standing};
use super::{fetch_locked, merge_notes, Fetched};
use crate::context::Ctx;
use crate::git::remote::RefChange;
use crate::git::store::{self, Stored};
use crate::git::{Expect, Oid};
use crate::model::id::NOTES_REF;
use crate::model::remote::{push_overwrite, RemoteName};
use crate::model::{time, Error, SessionId, State};
use crate::sys::lock::Lock;

/// How often the notes are fetched, merged and pushed again after a lost race.
const NOTES_PUSH_ATTEMPTS: usize = 5;

/// What a push did.
#[derive(Debug)]
pub struct Pushed {
    /// The fetch that came first.
    pub fetched: Fetched,
    /// Sessions sent: (id, record sent, branch sent).
    pub sent: Vec<(SessionId, bool, bool)>,
    /// Sessions the remote already had as they are here.
    pub up_to_date: Vec<SessionId>,
    /// Sessions whose record on the remote has events this one lacks (another
    /// machine went on): left as they are there; what the remote says of them.
    pub remote_newer: Vec<(SessionId, String)>,
    /// Sessions not sent, with why (nothing of them was pushed).
    pub refused: Vec<(SessionId, String)>,
    /// Refs git did not take (a race with another push), with git's words.
    pub rejected: Vec<(String, String)>,
    pub notes: NotesPushed,
}

#[derive(Debug, PartialEq, Eq)]
pub enum NotesPushed {
    /// There are no notes here, or the remote has them all.
    UpToDate,
    Sent,
    /// Not pushed, and why.
    Failed(String),
}

impl Pushed {
    /// Whether something was left behind that the user should look at.
    pub fn incomplete(&self) -> bool {
        !self.refused.is_empty()
            || !self.rejected.is_empty()
            || matches!(self.notes, NotesPushed::Failed(_))
    }
}

/// Push the sessions named (all of this clone's but those still being created,
/// when none is named) to `remote`.
pub fn push(ctx: &Ctx, remote: &RemoteName, ids: &[SessionId]) -> Result<Pushed> {
    if let Some((refspec, destination)) = push_overwrite(&ctx.repo.fetch_refspecs(remote.as_str()))
    {
        let what = format!(
            "maps what bullpen pushes to {destination} here, which git would set to what it \
             pushed, losing what landed there meanwhile"
        );
        return Err(super::refused_remote(remote, "pushing to", &refspec, &what).into());
    }
    let _lock = Lock::acquire(&ctx.layout.remote_lock_path())?;
    let fetched = fetch_locked(ctx, remote)?;
    let sessions = sessions(ctx, ids)?;
    let mut out = Pushed {
        fetched,
        sent: Vec::new(),
        up_to_date: Vec::new(),
        remote_newer: Vec::new(),
        refused: Vec::new(),
        rejected: Vec::new(),
        notes: NotesPushed::UpToDate,
    };
    // What goes, staged under refs/bullpen/outgoing/<remote>/ (see `stage`).
    let mut staged: Vec<(String, Oid)> = Vec::new();
    let outgoing = remote.outgoing_prefix();
    // Every ref the decisions read, listed once (a lookup by name per session
    // costs several failed opens each: git's rev-parse rules).
    let theirs_records = listed(ctx, &remote.incoming_prefix())?;
    // What each pushed record replaces in the incoming namespace (`None`: absent).
    let mut pushed_records: Vec<(SessionId, Oid, Option<Oid>)> = Vec::new();
    let ours_branches = listed(ctx, "refs/heads/bullpen/")?;
    let theirs_branches = match out
        .fetched
        .branches
        .as_deref()
        .and_then(|p| p.split_once('*'))
    {
        Some((prefix, suffix)) => Some(
            listed(ctx, prefix)?
                .into_iter()
                .filter_map(|(rest, target)| Some((rest.strip_suffix(suffix)?.to_owned(), target)))
                .collect::<HashMap<_, _>>(),
        ),
        None => None,
    };
    for s in &sessions {
        let id = &s.record.id;
        let theirs = theirs_records.get(id.as_str()).copied().flatten();
        let record = standing(&facts(ctx, Some(s.commit), Some(theirs)));
        let ours_branch = ours_branches.get(id.as_str()).copied().flatten();
        let theirs_branch = theirs_branches
            .as_ref()
            .map(|b| b.get(id.as_str()).copied().flatten());
        let branch = facts(ctx, ours_branch, theirs_branch);
        match decide(record, standing(&branch)) {
            Decision::Refuse(why) => out
                .refused
                .push((id.clone(), refusal(ctx, remote, id, why))),
            Decision::Push {
                record: send_record,
                branch: send_branch,
                record_behind,
            } => {
                if record_behind {
                    out.remote_newer
                        .push((id.clone(), remote_says(ctx, remote, id)));
                }
                if let (true, Some(tip)) = (send_branch, branch.ours) {
                    staged.push((format!("{outgoing}heads/{}", id.branch()), tip));
                }
                if send_record {
                    staged.push((format!("{outgoing}sessions/{id}"), s.commit));
                    pushed_records.push((id.clone(), s.commit, theirs));
                }
                if send_record || send_branch {
                    out.sent.push((id.clone(), send_record, send_branch));
                } else if !record_behind {
                    out.up_to_date.push(id.clone());
                }
            }
        }
    }
    let notes_ref = match notes_to_send(ctx, remote, &out.fetched) {
        Ok(send) => send,
        Err(why) => {
            out.notes = NotesPushed::Failed(why);
            false
        }
    };
    if staged.is_empty() && !notes_ref {
        return Ok(out);
    }
    let mut refspecs = vec![
        format!("{outgoing}sessions/*:refs/bullpen/sessions/*"),
        format!("{outgoing}heads/bullpen/*:refs/heads/bullpen/*"),
    ];
    if notes_ref {
        refspecs.push(format!("{NOTES_REF}:{NOTES_REF}"));
    }
    stage(ctx, remote, &staged)?;
    let results = ctx.repo.push_refspecs(remote.as_str(), &refspecs);
    unstage(ctx, remote, &staged);
    let results = results.with_context(|| format!("cannot push sessions to {remote}"))?;
    let rejected: HashMap<&str, &str> = results
        .iter()
        .filter(|r| !r.ok)
        .map(|r| (r.remote_ref.as_str(), r.summary.as_str()))
        .collect();
    for (name, summary) in &rejected {
        if *name != NOTES_REF {
            out.rejected
                .push(((*name).to_owned(), (*summary).to_owned()));
        }
    }
    out.rejected.sort();
    // A session git did not take whole is not counted as sent.
    out.sent.retain(|(id, _, _)| {
        !rejected.contains_key(id.record_ref().as_str())
            && !rejected.contains_key(id.branch_ref().as_str())
    });
    pushed_records.retain(|(id, _, _)| !rejected.contains_key(id.record_ref().as_str()));
    record_pushed(ctx, remote, &pushed_records);
    if notes_ref {
        out.notes = match rejected.get(NOTES_REF) {
            None => {
                note_notes_pushed(ctx, remote);
                NotesPushed::Sent
            }
            Some(_) => push_notes_again(ctx, remote),
        };
    }
    Ok(out)
}

/// Put what goes under `refs/bullpen/outgoing/<remote>/`, so that two glob
/// refspecs send it all: git matches every explicit refspec against every ref
/// through its rev-parse rules, which at a thousand sessions costs seconds
/// (measured: most of a `git push` of 2,000 explicit refspecs), while a glob is
/// one pass. What an interrupted push left there is cleared first.
fn stage(ctx: &Ctx, remote: &RemoteName, staged: &[(String, Oid)]) -> Result<()> {
    let mut changes: Vec<RefChange> = ctx
        .repo
        .ref_ids_with_prefix(&remote.outgoing_prefix())?
        .into_iter()
        .filter_map(|(name, target)| {
            Some(RefChange {
                name,
                new: None,
                expect: Expect::At(target?),
            })
        })
        .collect();
    ctx.repo
        .edit_refs(&changes, &format!("bullpen: push {remote}"))
        .with_context(|| format!("cannot clear {}", remote.outgoing_prefix()))?;
    changes = staged
        .iter()
        .map(|(name, oid)| RefChange {
            name: name.clone(),
            new: Some(*oid),
            expect: Expect::Absent,
        })
        .collect();
    ctx.repo
        .edit_refs(&changes, &format!("bullpen: push {remote}"))
        .with_context(|| format!("cannot stage the push to {remote}"))
}

/// Remove what [`stage`] put there (best effort: the next push clears it too).
fn unstage(ctx: &Ctx, remote: &RemoteName, staged: &[(String, Oid)]) {
    let changes: Vec<RefChange> = staged
        .iter()
        .map(|(name, oid)| RefChange {
            name: name.clone(),
            new: None,
            expect: Expect::At(*oid),
        })
        .collect();
    if let Err(e) = ctx
        .repo
        .edit_refs(&changes, &format!("bullpen: push {remote}"))
    {
        ctx.ui.warn(format!(
            "could not clear {}: {e:#}",
            remote.outgoing_prefix()
        ));
    }
}

/// The sessions to push: those named (each must exist and not be still being
/// created), or all of them but those being created.
fn sessions(ctx: &Ctx, ids: &[SessionId]) -> Result<Vec<Stored>> {
    if ids.is_empty() {
        let (all, unreadable) = store::load_all(&ctx.repo)?;
        for u in &unreadable {
            ctx.ui
                .warn(format!("not pushing {}: {:#}", u.refname, u.error));
        }
        return Ok(all
            .into_iter()
            .filter(|s| s.record.state != State::Provisioning)
            .collect());
    }
    ids.iter()
        .map(|id| {
            let s = store::require(&ctx.repo, id)?;
            if s.record.state == State::Provisioning {
                return Err(Error::refused(format!(
                    "session {id} is still being created (provisioning); not pushing it"
                ))
                .into());
            }
            Ok(s)
        })
        .collect()
}

/// The refs under `prefix`, by the rest of their name, with what each points at
/// (`None`: a symbolic ref).
fn listed(ctx: &Ctx, prefix: &str) -> Result<HashMap<String, Option<Oid>>> {
    Ok(ctx
        .repo
        .ref_ids_with_prefix(prefix)?
        .into_iter()
        .filter_map(|(name, target)| Some((name.strip_prefix(prefix)?.to_owned(), target)))
        .collect())
}

/// How `ours` and the remote's `theirs` relate. A history that cannot be read
/// relates to nothing (which refuses: nothing is pushed over what cannot be told).
fn facts(ctx: &Ctx, ours: Option<Oid>, theirs: Option<Option<Oid>>) -> RefFacts {
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

/// Why a session is not pushed, in words.
fn refusal(ctx: &Ctx, remote: &RemoteName, id: &SessionId, why: Refusal) -> String {
    match why {
        Refusal::RecordDiverged => format!(
            "its record on {remote} has events this one lacks, and this one has events it lacks \
             ({}); pushing would lose them",
            remote_says(ctx, remote, id)
        ),
        Refusal::BranchDiverged => format!(
            "{remote}'s {} has commits that this clone's lacks, and this clone's has commits it \
             lacks; pushing would lose them",
            id.branch()
        ),
    }
}

/// What the remote's record of `id` says of where and when it last changed:
/// `last recorded exited on build-box, 5m ago`.
fn remote_says(ctx: &Ctx, remote: &RemoteName, id: &SessionId) -> String {
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

/// Whether the notes go: ours must contain the remote's (the fetch merged them).
fn notes_to_send(ctx: &Ctx, remote: &RemoteName, fetched: &Fetched) -> Result<bool, String> {
    if let Err(why) = &fetched.notes {
        return Err(format!("the notes of {remote} could not be merged: {why}"));
    }
    let ours = ctx
        .repo
        .ref_target(NOTES_REF)
        .map_err(|e| format!("{e:#}"))?;
    let theirs = ctx
        .repo
        .ref_target(&remote.incoming_notes_ref())
        .map_err(|e| format!("{e:#}"))?;
    match standing(&facts(ctx, ours, Some(theirs))) {
        Standing::New | Standing::Ahead => Ok(true),
        Standing::Same | Standing::NoneHere | Standing::Behind | Standing::Unknown => Ok(false),
        Standing::Diverged => Err(format!(
            "{NOTES_REF} here does not contain {remote}'s (they could not be merged)"
        )),
    }
}

/// The notes lost a race (another machine pushed notes after the fetch): fetch
/// theirs again, merge, push again.
fn push_notes_again(ctx: &Ctx, remote: &RemoteName) -> NotesPushed {
    let mut last = String::new();
    for _ in 0..NOTES_PUSH_ATTEMPTS {
        let refspec = format!("+{NOTES_REF}*:{}*", remote.incoming_notes_ref());
        if let Err(e) = ctx.repo.fetch_refspecs_from(remote.as_str(), &[refspec]) {
            return NotesPushed::Failed(format!("{e:#}"));
        }
        if let Err(why) = merge_notes(ctx, remote) {
            return NotesPushed::Failed(why);
        }
        let refspec = format!("{NOTES_REF}:{NOTES_REF}");
        match ctx.repo.push_refspecs(remote.as_str(), &[refspec]) {
            Err(e) => return NotesPushed::Failed(format!("{e:#}")),
            Ok(results) => match results.iter().find(|r| r.remote_ref == NOTES_REF) {
                Some(r) if !r.ok => last = r.summary.clone(),
                _ => {
                    note_notes_pushed(ctx, remote);
                    return NotesPushed::Sent;
                }
            },
        }
    }
    NotesPushed::Failed(format!(
        "{remote} kept changing its notes ({NOTES_PUSH_ATTEMPTS} tries; git said: {last})"
    ))
}

/// After the push, as git does for remote-tracking branches: what the remote now
/// has of each record pushed is what was pushed, in the incoming namespace and in
/// the checked one (it is this clone's own record), so `ls --remote` shows it.
/// Best effort: the next fetch sets it right anyway.
fn record_pushed(ctx: &Ctx, remote: &RemoteName, pushed: &[(SessionId, Oid, Option<Oid>)]) {
    let Ok(tracking) = listed(ctx, &remote.tracking_prefix()) else {
        return;
    };
    let mut changes = Vec::new();
    for (id, commit, old_incoming) in pushed {
        changes.push(RefChange {
            name: remote.incoming_ref(id),
            new: Some(*commit),
            expect: old_incoming.map_or(Expect::Absent, Expect::At),
        });
        let old_tracking = tracking.get(id.as_str()).copied().flatten();
        changes.push(RefChange {
            name: remote.tracking_ref(id),
            new: Some(*commit),
            expect: old_tracking.map_or(Expect::Absent, Expect::At),
        });
    }
    if let Err(e) = ctx
        .repo
        .edit_refs(&changes, &format!("bullpen: push {remote}"))
    {
        ctx.ui.warn(format!(
            "pushed, but could not note it here ({e:#}); `git bullpen fetch {remote}` will"
        ));
    }
}

/// After the notes were pushed: the remote's notes are ours now.
fn note_notes_pushed(ctx: &Ctx, remote: &RemoteName) {
    let Ok(Some(ours)) = ctx.repo.ref_target(NOTES_REF) else {
        return;
    };
    let old = ctx
        .repo
        .ref_target(&remote.incoming_notes_ref())
        .ok()
        .flatten();
    let change = RefChange {
        name: remote.incoming_notes_ref(),
        new: Some(ours),
        expect: old.map_or(Expect::Absent, Expect::At),
    };
    let _ = ctx
        .repo
        .edit_refs(&[change], &format!("bullpen: push {remote}"));
}
