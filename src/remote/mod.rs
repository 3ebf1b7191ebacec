//! Sessions that travel with git: `fetch` (this file) brings a remote's records
//! into their own namespace, checked, and merges its notes; `push` sends this
//! clone's sessions without losing anything on the remote; `plan` (pure) says
//! what a push may send; `join` merges records that moved on on both sides.
//! See `model::remote` for the namespaces.
//!
//! Nothing read from a remote authorises an act: fetched records are only ever
//! listed (`ls --remote`) or continued as a new local session whose command
//! the user names (`resume <remote>/<id>`).

pub mod join;
pub mod plan;
pub mod push;
mod refusal;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::remote::RefChange;
use crate::git::store;
use crate::git::Expect;
use crate::git::NotesMerge;
use crate::model::id::NOTES_REF;
use crate::model::remote::{branch_exclusions, branch_map, ref_id, BranchMap, RemoteName};
use crate::model::{Error, SessionId};
use crate::sys::lock::Lock;

/// What a fetch brought.
#[derive(Debug)]
pub struct Fetched {
    pub remote: RemoteName,
    /// Records that arrived, changed, or went from the remote.
    pub new: Vec<SessionId>,
    pub updated: Vec<SessionId>,
    pub gone: Vec<SessionId>,
    pub unchanged: usize,
    /// Sessions whose record here was joined with the remote's (this clone's
    /// the later: see `join`).
    pub joined: Vec<SessionId>,
    /// Records refused, with why: the ref (as the remote names it) and the reason.
    pub refused: Vec<(String, String)>,
    /// How the remote's notes were merged (`Ok(None)`: it has none), or why not.
    pub notes: Result<Option<NotesMerge>, String>,
    /// Where the remote's `bullpen/*` branches are tracked here
    /// (`refs/remotes/<remote>/bullpen/*`); `None`: the remote's fetch refspecs
    /// do not bring them, so they were not fetched.
    pub branches: Option<String>,
}

/// The remote named, which must be configured, or the one git would use
/// (`remote.pushDefault` for a push; else the only remote, or `origin`).
pub fn resolve(ctx: &Ctx, name: Option<&RemoteName>, push: bool) -> Result<RemoteName> {
    let name = match name {
        Some(n) => n.clone(),
        None => {
            let Some(default) = ctx.repo.default_remote(push) else {
                let what = if push { "push to" } else { "fetch from" };
                return Err(Error::failed(format!("no remote to {what}"))
                    .hint(match ctx.repo.remote_names().is_empty() {
                        true => "add one: git remote add origin <url>".to_owned(),
                        false => format!(
                            "name one of {}: git bullpen {} <remote>",
                            ctx.repo.remote_names().join(", "),
                            if push { "push" } else { "fetch" }
                        ),
                    })
                    .into());
            };
            default
                .parse::<RemoteName>()
                .map_err(|e| Error::failed(e.to_string()))?
        }
    };
    if !ctx.repo.has_remote(name.as_str()) {
        return Err(
            Error::failed(format!("'{name}' is not a remote of this repository"))
                .hint("`git remote -v` lists the remotes; bullpen takes a remote's name, not a URL")
                .into(),
        );
    }
    Ok(name)
}

/// `git bullpen fetch`: the remote's records, notes and session branches.
pub fn fetch(ctx: &Ctx, remote: &RemoteName) -> Result<Fetched> {
    let _lock = Lock::acquire(&ctx.layout.remote_lock_path())?;
    fetch_locked(ctx, remote)
}

/// [`fetch`], the remote lock held (push fetches first, under the same lock).
///
/// One `git fetch`: the remote's `refs/bullpen/sessions/*` into
/// `refs/bullpen/incoming/<remote>/sessions/*` and its `refs/notes/bullpen` into
/// `refs/bullpen/incoming/<remote>/notes`, as they are (pruned of what the remote
/// no longer has), and its `bullpen/*` branches where its own fetch refspecs put
/// them. Then each record that changed is checked (`store::read_fetched`) and
/// only one that passes is copied to `refs/bullpen/remotes/<remote>/sessions/`;
/// one that fails is reported and skipped, and the copy fetched before it (if
/// any) stays. Records here that qualify are joined with what arrived
/// (`join::join_fetched`). Then the notes are merged into `refs/notes/bullpen` (a union).
fn fetch_locked(ctx: &Ctx, remote: &RemoteName) -> Result<Fetched> {
    let configured = ctx.repo.fetch_refspecs(remote.as_str());
    let branches = match branch_map(&configured) {
        BranchMap::Tracked(dst, force) => Some((dst, force)),
        BranchMap::NotMapped => None,
        BranchMap::Refused {
            refspec,
            destination,
        } => {
            let what = format!(
                "puts its bullpen/* branches on {destination}, where a fetch would replace and \
                 prune this clone's own refs"
            );
            return Err(refused_remote(remote, "fetching from", &refspec, &what).into());
        }
    };
    let mut refspecs = vec![
        format!("+refs/bullpen/sessions/*:{}*", remote.incoming_prefix()),
        // A glob, so that a remote without notes is no error (git refuses a
        // plain refspec whose source does not exist).
        format!("+{NOTES_REF}*:{}*", remote.incoming_notes_ref()),
    ];
    if let Some((dst, force)) = &branches {
        let plus = if *force { "+" } else { "" };
        refspecs.push(format!("{plus}refs/heads/bullpen/*:{dst}"));
        refspecs.extend(branch_exclusions(&configured));
    }
    ctx.repo
        .fetch_refspecs_from(remote.as_str(), &refspecs)
        .with_context(|| format!("cannot fetch sessions from {remote}"))?;
    let mut fetched = Fetched {
        remote: remote.clone(),
        new: Vec::new(),
        updated: Vec::new(),
        gone: Vec::new(),
        joined: Vec::new(),
        unchanged: 0,
        refused: Vec::new(),
        notes: Ok(None),
        branches: branches.map(|(dst, _)| dst),
    };
    sync_records(ctx, &mut fetched)?;
    let changed: Vec<SessionId> = fetched
        .updated
        .iter()
        .chain(&fetched.new)
        .cloned()
        .collect();
    fetched.joined = join::join_fetched(ctx, remote, &changed, fetched.branches.as_deref());
    fetched.notes = merge_notes(ctx, remote);
    Ok(fetched)
}

/// The refusal of a remote whose fetch refspecs would have git write this
/// clone's own refs (nothing has been fetched or pushed): `doing` is what was
/// refused (`fetching from`), `what` what the refspec does.
fn refused_remote(remote: &RemoteName, doing: &str, refspec: &str, what: &str) -> Error {
    Error::refused(format!(
        "not {doing} {remote}: its fetch refspec '{refspec}' (remote.{remote}.fetch) {what}"
    ))
    .hint(format!(
        "use a remote with git's default refspecs for bullpen: \
         git remote add bullpen-{remote} \"$(git remote get-url {remote})\""
    ))
}

/// Copy the records that pass the checks from the incoming namespace to the
/// checked one, and drop from it what the remote no longer has; in one ref
/// transaction, each change expecting what was read.
fn sync_records(ctx: &Ctx, f: &mut Fetched) -> Result<()> {
    let repo = &ctx.repo;
    let incoming_prefix = f.remote.incoming_prefix();
    let tracking_prefix = f.remote.tracking_prefix();
    let incoming = repo.ref_ids_with_prefix(&incoming_prefix)?;
    let tracking: std::collections::HashMap<String, Option<crate::model::Oid>> = repo
        .ref_ids_with_prefix(&tracking_prefix)?
        .into_iter()
        .filter_map(|(name, target)| {
            Some((name.strip_prefix(&tracking_prefix)?.to_owned(), target))
        })
        .collect();
    let mut changes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (refname, target) in incoming {
        let shown = format!(
            "refs/bullpen/sessions/{}",
            refname.strip_prefix(&incoming_prefix).unwrap_or(&refname)
        );
        let id = match ref_id(&refname, &incoming_prefix) {
            Ok(id) => id,
            Err(why) => {
                f.refused.push((shown, why.to_string()));
                continue;
            }
        };
        seen.insert(id.to_string());
        let old = tracking.get(id.as_str()).copied();
        if old.is_some() && old == Some(target) {
            f.unchanged += 1;
            continue;
        }
        match store::read_fetched(repo, &id, target) {
            Ok(stored) => {
                changes.push(RefChange {
                    name: f.remote.tracking_ref(&id),
                    new: Some(stored.commit),
                    expect: expect(old),
                });
                match old {
                    Some(_) => f.updated.push(id),
                    None => f.new.push(id),
                }
            }
            Err(e) => f.refused.push((shown, format!("{e:#}"))),
        }
    }
    for (name, target) in &tracking {
        if seen.contains(name) {
            continue;
        }
        // The remote no longer has it.
        if let (Ok(id), Some(target)) = (name.parse::<SessionId>(), target) {
            changes.push(RefChange {
                name: f.remote.tracking_ref(&id),
                new: None,
                expect: Expect::At(*target),
            });
            f.gone.push(id);
        }
    }
    f.new.sort();
    f.updated.sort();
    f.gone.sort();
    repo.edit_refs(&changes, &format!("bullpen: fetch {}", f.remote))
        .with_context(|| format!("cannot record the sessions fetched from {}", f.remote))
}

/// The expected old value of a ref known to be at `old` (`None`: absent).
fn expect(old: Option<Option<crate::model::Oid>>) -> Expect {
    match old.flatten() {
        Some(oid) => Expect::At(oid),
        None => Expect::Absent,
    }
}

/// Merge the remote's notes (as fetched) into `refs/notes/bullpen`.
fn merge_notes(ctx: &Ctx, remote: &RemoteName) -> Result<Option<NotesMerge>, String> {
    let theirs = ctx
        .repo
        .ref_target(&remote.incoming_notes_ref())
        .map_err(|e| format!("{e:#}"))?;
    let Some(theirs) = theirs else {
        return Ok(None);
    };
    ctx.repo
        .merge_notes(
            NOTES_REF,
            theirs,
            &format!("bullpen: notes merged from {remote}"),
        )
        .map(Some)
        .map_err(|e| format!("{e:#}"))
}
