//! `git bullpen push`: this clone's sessions (branch, record) and the provenance
//! notes, to a remote, losing nothing there.
//!
//! It fetches first (as `fetch` does, under the same lock), so it knows what the
//! remote has and has merged the remote's notes into ours. `plan::choose` says
//! which sessions the push is about, `plan::decide` what of each may go: only
//! what is new on the remote or a fast-forward of it, or a record joined with
//! the remote's (`join`); a session whose branch diverged, or whose record
//! shares no event with the remote's, is refused whole, with the reason. One
//! atomic `git push` sends the rest with the notes, never forced, so git itself
//! refuses anything that stopped being a fast-forward meanwhile (another
//! machine pushed in between). A refusal by the remote is final; notes that
//! lost a race are fetched, merged and the push made again.

use std::collections::HashMap;

use anyhow::{Context, Result};

use super::join::relate;
use super::plan::{
    choose, decide, outcome, standing, Chosen, Decision, Held, Outcome, Skipped, Standing, Wanted,
};
use super::refusal::{refusal, remote_says};
use super::{fetch_locked, merge_notes, Fetched};
use crate::context::Ctx;
use crate::git::remote::{PushReport, RefChange};
use crate::git::store::{self, Stored};
use crate::git::{Expect, Oid};
use crate::model::id::NOTES_REF;
use crate::model::remote::{push_overwrite, RemoteName};
use crate::model::{Error, SessionId, State};
use crate::sys::lock::Lock;

/// How often the whole push is made again after its notes lost a race.
const NOTES_PUSH_ATTEMPTS: usize = 5;

/// What a push did.
#[derive(Debug)]
pub struct Pushed {
    /// The fetch that came first.
    pub fetched: Fetched,
    /// Sessions sent whole: (id, record sent, branch sent).
    pub sent: Vec<(SessionId, bool, bool)>,
    /// Sessions whose record was joined with the remote's (both histories).
    pub joined: Vec<SessionId>,
    /// Sessions the remote already had as they are here.
    pub up_to_date: Vec<SessionId>,
    /// Sessions whose record on the remote has events this one lacks (another
    /// machine went on): left as they are there; what the remote says of them.
    pub remote_newer: Vec<(SessionId, String)>,
    /// Sessions not sent, with why (nothing of them was pushed).
    pub refused: Vec<(SessionId, String)>,
    /// Sessions whose record went but whose branch stayed here, and why.
    pub held: Vec<(SessionId, Held)>,
    /// Sessions left out: not named, and the remote has nothing of them.
    pub not_there: Vec<SessionId>,
    /// Sessions of which a part landed and a part did not: (id, what landed).
    pub half: Vec<(SessionId, &'static str)>,
    /// Refs the remote did not take, with git's words.
    pub rejected: Vec<(String, String)>,
    /// Refs of which git could not say whether the remote took them, with its
    /// words: neither sent nor refused (a push made again sees).
    pub unsure: Vec<(String, String)>,
    /// Whether a ref was not taken because another push landed in between.
    pub raced: bool,
    /// The remote's own words (its hooks'), when it refused something.
    pub remote_said: Vec<String>,
    /// Whether the push was atomic (the remote took all or nothing).
    pub atomic: bool,
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
            || !self.unsure.is_empty()
            || matches!(self.notes, NotesPushed::Failed(_))
    }
}

/// One session's refs staged for the push.
struct Going {
    id: SessionId,
    record: Option<Oid>,
    branch: Option<Oid>,
    /// What the incoming namespace had of its record (`None`: absent).
    theirs: Option<Oid>,
}

/// Push to `remote` the sessions named, or (none named) those it already has,
/// or with `all` every live one (never those still being created).
pub fn push(ctx: &Ctx, remote: &RemoteName, ids: &[SessionId], all: bool) -> Result<Pushed> {
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
        joined: Vec::new(),
        up_to_date: Vec::new(),
        remote_newer: Vec::new(),
        refused: Vec::new(),
        held: Vec::new(),
        not_there: Vec::new(),
        half: Vec::new(),
        rejected: Vec::new(),
        unsure: Vec::new(),
        raced: false,
        remote_said: Vec::new(),
        atomic: true,
        notes: NotesPushed::UpToDate,
    };
    let outgoing = remote.outgoing_prefix();
    // Every ref the decisions read, listed once (a lookup by name per session
    // costs several failed opens each: git's rev-parse rules).
    let theirs_records = listed(ctx, &remote.incoming_prefix())?;
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
    let mut going: Vec<Going> = Vec::new();
    for s in &sessions {
        let id = &s.record.id;
        let theirs_ref = theirs_records.get(id.as_str()).copied();
        let theirs = theirs_ref.flatten();
        let ours_branch = ours_branches.get(id.as_str()).copied().flatten();
        let theirs_branch = theirs_branches
            .as_ref()
            .map(|b| b.get(id.as_str()).copied().flatten());
        let mut wanted = Wanted {
            named: !ids.is_empty(),
            all,
            tracked: theirs_ref.is_some() || matches!(theirs_branch, Some(Some(_))),
            collected: s.record.state == State::Collected,
            own_commits: true,
            branch_gone_there: theirs_ref.is_some() && theirs_branch == Some(None),
        };
        // Read only where it decides (an ancestry walk per session).
        if matches!(choose(&wanted), Chosen::Send { .. }) {
            wanted.own_commits =
                ours_branch.is_some_and(|tip| own_commits(ctx, &s.record.base, tip));
        }
        let held = match choose(&wanted) {
            Chosen::Skip(Skipped::NotThere) => {
                out.not_there.push(id.clone());
                continue;
            }
            Chosen::Skip(Skipped::Collected) => continue,
            Chosen::Send { held } => held,
        };
        let record = relate(ctx, Some(s.commit), Some(theirs));
        let common = match (standing(&record), theirs) {
            (Standing::Diverged, Some(b)) => {
                ctx.repo.merge_base(s.commit, b).ok().flatten().is_some()
            }
            _ => false,
        };
        let branch = relate(ctx, ours_branch, theirs_branch);
        let (send_record, send_branch) = match decide(standing(&record), standing(&branch), common)
        {
            Decision::Refuse(why) => {
                out.refused
                    .push((id.clone(), refusal(ctx, remote, id, why)));
                continue;
            }
            Decision::Join {
                branch: send_branch,
            } => {
                match super::join::join(ctx, remote, s, theirs) {
                    Ok(joined) => {
                        out.joined.push(id.clone());
                        going.push(Going {
                            id: id.clone(),
                            record: Some(joined),
                            branch: send_branch.then_some(branch.ours).flatten(),
                            theirs,
                        });
                    }
                    Err(why) => out.refused.push((id.clone(), why)),
                }
                continue;
            }
            Decision::Push {
                record: send_record,
                branch: send_branch,
                record_behind,
            } => {
                if record_behind {
                    out.remote_newer
                        .push((id.clone(), remote_says(ctx, remote, id)));
                }
                if !send_record && !send_branch && !record_behind {
                    out.up_to_date.push(id.clone());
                }
                (send_record, send_branch)
            }
        };
        let mut send_branch = send_branch.then_some(branch.ours).flatten();
        if let (Some(why), Some(_)) = (held, send_branch) {
            send_branch = None;
            out.held.push((id.clone(), why));
        }
        if send_record || send_branch.is_some() {
            going.push(Going {
                id: id.clone(),
                record: send_record.then_some(s.commit),
                branch: send_branch,
                theirs,
            });
        }
    }
    out.not_there.sort();
    // What a push killed part-way left staged goes, also when nothing is sent.
    clear_outgoing(ctx, remote)?;
    // What the remote will have after the push: the notes of those commits go,
    // and no other (`Repo::notes_for_push`). Its remote-tracking refs count
    // (a session's commit merged into main and pushed with plain git): it has
    // those commits already, so their notes tell it of no unpushed work.
    let tracked = listed(ctx, &format!("refs/remotes/{remote}/"))?;
    let tips: Vec<Oid> = going
        .iter()
        .filter_map(|g| g.branch)
        .chain(
            theirs_branches
                .iter()
                .flat_map(|b| b.values().copied().flatten()),
        )
        .chain(tracked.into_values().flatten())
        .collect();
    let notes_commit = match notes_to_send(ctx, remote, &out.fetched) {
        Ok(true) => build_notes(ctx, remote, &tips).unwrap_or_else(|why| {
            out.notes = NotesPushed::Failed(why);
            None
        }),
        Ok(false) => None,
        Err(why) => {
            out.notes = NotesPushed::Failed(why);
            None
        }
    };
    let notes_ref = notes_commit.is_some();
    if going.is_empty() && !notes_ref {
        return Ok(out);
    }
    let staged: Vec<(String, Oid)> = going
        .iter()
        .flat_map(|g| {
            let record = g
                .record
                .map(|c| (format!("{outgoing}sessions/{}", g.id), c));
            let branch = g
                .branch
                .map(|c| (format!("{outgoing}heads/{}", g.id.branch()), c));
            record.into_iter().chain(branch)
        })
        .collect();
    let mut refspecs = vec![
        format!("{outgoing}sessions/*:refs/bullpen/sessions/*"),
        format!("{outgoing}heads/bullpen/*:refs/heads/bullpen/*"),
    ];
    let notes_staged = format!("{outgoing}notes");
    if notes_ref {
        refspecs.push(format!("{notes_staged}:{NOTES_REF}"));
    }
    let mut staged = staged;
    staged.extend(notes_commit.map(|c| (notes_staged.clone(), c)));
    stage(ctx, remote, &staged)?;
    let report = push_until_notes_settle(ctx, remote, &refspecs, &tips, &mut staged);
    unstage(ctx, remote, &staged);
    let (report, notes_failed) = report?;
    let notes_commit = staged
        .iter()
        .find(|(name, _)| *name == notes_staged)
        .map(|(_, c)| *c);
    out.atomic = report.atomic;
    let outcomes: HashMap<&str, (Outcome, &str)> = report
        .refs
        .iter()
        .map(|r| {
            (
                r.remote_ref.as_str(),
                (outcome(r.ok, &r.summary), r.summary.as_str()),
            )
        })
        .collect();
    let landed = |refname: &str| matches!(outcomes.get(refname), Some((Outcome::Landed, _)));
    // What git did not say of a ref it was given: it may have landed.
    let untold =
        |refname: &str| matches!(outcomes.get(refname), None | Some((Outcome::Unknown, _)));
    for (name, (what, summary)) in &outcomes {
        match what {
            Outcome::Landed => {}
            Outcome::Race => out.raced = true,
            Outcome::Refused | Outcome::WithTheRest | Outcome::Unknown => {}
        }
        if *what == Outcome::Unknown {
            out.unsure.push(((*name).to_owned(), (*summary).to_owned()));
        } else if *what != Outcome::Landed && *name != NOTES_REF {
            out.rejected
                .push(((*name).to_owned(), (*summary).to_owned()));
        }
    }
    out.rejected.sort();
    if outcomes.values().any(|(what, _)| *what == Outcome::Refused) {
        out.remote_said = report.remote_said.clone();
    }
    let mut pushed_records: Vec<(SessionId, Oid, Option<Oid>)> = Vec::new();
    for g in &going {
        let record = g.record.map(|_| landed(&g.id.record_ref()));
        let branch = g.branch.map(|_| landed(&g.id.branch_ref()));
        if let (Some(true), Some(commit)) = (record, g.record) {
            pushed_records.push((g.id.clone(), commit, g.theirs));
        }
        let refs = [(g.record, g.id.record_ref()), (g.branch, g.id.branch_ref())];
        let untold: Vec<String> = refs
            .into_iter()
            .filter(|(goes, name)| goes.is_some() && untold(name))
            .map(|(_, name)| name)
            .collect();
        if !untold.is_empty() {
            for name in untold {
                if !outcomes.contains_key(name.as_str()) {
                    out.unsure.push((name, "not in git's report".to_owned()));
                }
            }
            continue;
        }
        match (record, branch) {
            (Some(false), Some(true)) => out.half.push((g.id.clone(), "branch")),
            (Some(true), Some(false)) => out.half.push((g.id.clone(), "record")),
            (Some(false), _) | (_, Some(false)) => {}
            _ => out
                .sent
                .push((g.id.clone(), g.record.is_some(), g.branch.is_some())),
        }
    }
    out.joined
        .retain(|id| pushed_records.iter().any(|(p, _, _)| p == id));
    out.sent.sort();
    out.unsure.sort();
    record_pushed(ctx, remote, &pushed_records);
    if notes_ref {
        out.notes = match (landed(NOTES_REF), notes_failed) {
            (_, Some(why)) => NotesPushed::Failed(why),
            (true, None) => match notes_commit.map(|c| note_notes_pushed(ctx, remote, c)) {
                Some(Err(why)) => NotesPushed::Failed(why),
                _ => NotesPushed::Sent,
            },
            (false, None) => NotesPushed::Failed(
                outcomes
                    .get(NOTES_REF)
                    .map_or("not in git's report", |(_, s)| s)
                    .to_owned(),
            ),
        };
    }
    Ok(out)
}

/// One push of `refspecs`; made again (the remote's notes fetched and merged
/// first) only when the notes alone lost a race, at most
/// [`NOTES_PUSH_ATTEMPTS`] times. A refusal by the remote is final. The last
/// report, and why the notes could not be merged again, if they could not.
fn push_until_notes_settle(
    ctx: &Ctx,
    remote: &RemoteName,
    refspecs: &[String],
    tips: &[Oid],
    staged: &mut [(String, Oid)],
) -> Result<(PushReport, Option<String>)> {
    let notes_staged = format!("{}notes", remote.outgoing_prefix());
    let notes_ref = staged.iter().any(|(name, _)| *name == notes_staged);
    let mut attempts = 1;
    loop {
        // git could not tell what the remote did (it hung up, it was killed):
        // some refs may have landed. A push made again fetches first.
        let report = ctx
            .repo
            .push_refspecs(remote.as_str(), refspecs)
            .with_context(|| {
                Error::failed(format!("cannot push sessions to {remote}")).hint(format!(
                    "{remote} may have taken some of them before the push failed; \
                     `git bullpen push {remote}` again sees what landed and sends the rest"
                ))
            })?;
        let notes_raced = notes_ref
            && report
                .refs
                .iter()
                .any(|r| r.remote_ref == NOTES_REF && outcome(r.ok, &r.summary) == Outcome::Race);
        let others_blocked = report.refs.iter().any(|r| {
            r.remote_ref != NOTES_REF
                && matches!(outcome(r.ok, &r.summary), Outcome::Race | Outcome::Refused)
        });
        if !notes_raced || others_blocked {
            return Ok((report, None));
        }
        if attempts >= NOTES_PUSH_ATTEMPTS {
            let why = format!("{remote} kept changing its notes ({attempts} tries)");
            return Ok((report, Some(why)));
        }
        attempts += 1;
        let refspec = format!("+{NOTES_REF}*:{}*", remote.incoming_notes_ref());
        if let Err(e) = ctx.repo.fetch_refspecs_from(remote.as_str(), &[refspec]) {
            return Ok((report, Some(format!("{e:#}"))));
        }
        if let Err(why) = merge_notes(ctx, remote) {
            return Ok((report, Some(why)));
        }
        // What goes is built again on the remote's new tip.
        let Some(slot) = staged.iter_mut().find(|(name, _)| *name == notes_staged) else {
            return Ok((report, None));
        };
        let rebuilt = match build_notes(ctx, remote, tips) {
            Ok(Some(c)) => c,
            // The remote now has all of it: nothing of the notes goes.
            Ok(None) => match ctx.repo.ref_target(&remote.incoming_notes_ref()) {
                Ok(Some(theirs)) => theirs,
                Ok(None) => return Ok((report, Some("the remote's notes vanished".to_owned()))),
                Err(e) => return Ok((report, Some(format!("{e:#}")))),
            },
            Err(why) => return Ok((report, Some(why))),
        };
        let change = RefChange {
            name: notes_staged.clone(),
            new: Some(rebuilt),
            expect: Expect::At(slot.1),
        };
        if let Err(e) = ctx
            .repo
            .edit_refs_packed(&[change], &format!("bullpen: push {remote}"))
        {
            return Ok((report, Some(format!("{e:#}"))));
        }
        slot.1 = rebuilt;
    }
}

/// The notes commit that goes to `remote` (`Repo::notes_for_push`): on the
/// remote's notes tip, with ours on the commits `tips` reach. `None`: the
/// remote has them all.
fn build_notes(ctx: &Ctx, remote: &RemoteName, tips: &[Oid]) -> Result<Option<Oid>, String> {
    let theirs = ctx
        .repo
        .ref_target(&remote.incoming_notes_ref())
        .map_err(|e| format!("{e:#}"))?;
    ctx.repo
        .notes_for_push(
            NOTES_REF,
            theirs,
            tips,
            &format!("bullpen: notes of the sessions pushed to {remote}"),
        )
        .map_err(|e| format!("{e:#}"))
}

/// Whether the branch at `tip` has commits that `base` (the record's) lacks; a
/// base that cannot be read counts as none (the branch is then its own).
fn own_commits(ctx: &Ctx, base: &str, tip: Oid) -> bool {
    match base.parse::<Oid>() {
        Ok(base) => !ctx.repo.is_ancestor(tip, base).unwrap_or(false),
        Err(_) => true,
    }
}

/// Remove what an interrupted push left under `refs/bullpen/outgoing/<remote>/`
/// (the remote lock is held: no other push is staging there).
fn clear_outgoing(ctx: &Ctx, remote: &RemoteName) -> Result<()> {
    let changes: Vec<RefChange> = ctx
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
        .edit_refs_packed(&changes, &format!("bullpen: push {remote}"))
        .with_context(|| format!("cannot clear {}", remote.outgoing_prefix()))
}

/// Put what goes under `refs/bullpen/outgoing/<remote>/` (cleared before), so
/// that two glob refspecs send it all: git matches every explicit refspec
/// against every ref through its rev-parse rules, which at a thousand sessions
/// costs seconds (measured: most of a `git push` of 2,000 explicit refspecs;
/// naming the objects, `<oid>:refs/...`, is as slow: 11-14 s against 0.2-1 s
/// for the globs), while a glob is one pass. Written into `packed-refs` in one
/// go (`Repo::edit_refs_packed`: the remote lock keeps every other writer of
/// the namespace out), as are [`unstage`] and [`record_pushed`].
fn stage(ctx: &Ctx, remote: &RemoteName, staged: &[(String, Oid)]) -> Result<()> {
    let changes: Vec<RefChange> = staged
        .iter()
        .map(|(name, oid)| RefChange {
            name: name.clone(),
            new: Some(*oid),
            expect: Expect::Absent,
        })
        .collect();
    ctx.repo
        .edit_refs_packed(&changes, &format!("bullpen: push {remote}"))
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
        .edit_refs_packed(&changes, &format!("bullpen: push {remote}"))
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
    match standing(&relate(ctx, ours, Some(theirs))) {
        Standing::New | Standing::Ahead => Ok(true),
        Standing::Same | Standing::NoneHere | Standing::Behind | Standing::Unknown => Ok(false),
        Standing::Diverged => Err(format!(
            "{NOTES_REF} here does not contain {remote}'s (they could not be merged)"
        )),
    }
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
        .edit_refs_packed(&changes, &format!("bullpen: push {remote}"))
    {
        ctx.ui.warn(format!(
            "pushed, but could not note it here ({e:#}); `git bullpen fetch {remote}` will"
        ));
    }
}

/// After the notes commit `pushed` landed: ours becomes a merge of ours and
/// it (so ours contains the remote's), and it is what the remote has.
fn note_notes_pushed(ctx: &Ctx, remote: &RemoteName, pushed: Oid) -> Result<(), String> {
    ctx.repo
        .adopt_pushed_notes(
            NOTES_REF,
            pushed,
            &format!("bullpen: notes pushed to {remote}"),
        )
        .map_err(|e| format!("landed, but could not be merged here: {e:#}"))?;
    let old = ctx
        .repo
        .ref_target(&remote.incoming_notes_ref())
        .ok()
        .flatten();
    let change = RefChange {
        name: remote.incoming_notes_ref(),
        new: Some(pushed),
        expect: old.map_or(Expect::Absent, Expect::At),
    };
    let _ = ctx
        .repo
        .edit_refs(&[change], &format!("bullpen: push {remote}"));
    Ok(())
}
