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
use crate::model::id::{NOTES_REF, RECORD_PREFIX};
use crate::model::remote::{
    branch_exclusions, branch_map, fetched_namespaces, ref_id, BranchMap, RemoteName,
};
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
/// (`join::join_fetched`). Then the notes are merged into `refs/notes/bullpen` (a union),
/// and what the fetch wrote is packed if it was many refs ([`PACK_AFTER`]).
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
    // Whether the last fetch from this remote finished its checks, and what
    // it refused; gone until this one has finished them too.
    let state = FetchState::at(ctx, remote);
    let last = state.take();
    let changed = ctx
        .repo
        .fetch_refspecs_from(remote.as_str(), &refspecs)
        .with_context(|| format!("cannot fetch sessions from {remote}"))?;
    let written = changed.as_ref().map_or(0, Vec::len);
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
    match (last, changed) {
        // Only what git changed, and what was refused before (to say so again).
        (Some(refused), Some(changed)) => {
            let prefix = remote.incoming_prefix();
            let names = changed
                .iter()
                .filter_map(|r| r.name.strip_prefix(&prefix))
                .map(str::to_owned)
                .chain(refused);
            sync_names(ctx, &mut fetched, names.collect())?;
        }
        _ => sync_records(ctx, &mut fetched)?,
    }
    let changed: Vec<SessionId> = fetched
        .updated
        .iter()
        .chain(&fetched.new)
        .cloned()
        .collect();
    fetched.joined = join::join_fetched(ctx, remote, &changed, fetched.branches.as_deref());
    state.finished(&fetched);
    fetched.notes = merge_notes(ctx, remote);
    if written + fetched.new.len() + fetched.updated.len() + fetched.gone.len() >= PACK_AFTER {
        // Only quicker to read: a failure (a git before 2.42 has no
        // `--include`) leaves the refs loose, as they were.
        let _ = ctx
            .repo
            .pack_refs(&fetched_namespaces(remote, fetched.branches.as_deref()));
    }
    Ok(fetched)
}

/// A fetch that wrote at least this many refs leaves what it wrote packed.
/// As loose files, 1,000 fetched sessions are 3,000 refs that every later
/// `git fetch` and `ls --remote` opens one by one; packed, one file. A fetch
/// that wrote fewer (nothing new) runs nothing more.
const PACK_AFTER: usize = 64;

/// `<common>/bullpen/cache/fetched-<remote>`: that the last fetch from the
/// remote finished checking what git brought, and the names of the records it
/// refused. While it is there, a fetch checks only what git says it changed
/// (`git fetch --porcelain`) and those refused before (so that they are
/// reported again): at 1,000 sessions, listing the 2,000 refs to compare them
/// cost more than the fetch that changed nothing. It is removed before `git
/// fetch` runs and written once the checks are done, so a fetch stopped in
/// between (killed, failed) leaves the next one to compare everything. Only an
/// optimisation: whatever it says, every record taken is checked, and a record
/// it does not name is no less checked when git brings it.
struct FetchState {
    path: std::path::PathBuf,
}

const FETCH_STATE: &str = "bullpen fetch state 1";

impl FetchState {
    fn at(ctx: &Ctx, remote: &RemoteName) -> FetchState {
        FetchState {
            path: ctx
                .repo
                .common_dir()
                .join("bullpen")
                .join("cache")
                .join(format!("fetched-{remote}")),
        }
    }

    /// The names refused by the last fetch if it finished, and the file
    /// removed; `None` when there is none whole, or it cannot be removed.
    fn take(&self) -> Option<Vec<String>> {
        let bytes = crate::sys::regular::read(&self.path).ok().flatten();
        std::fs::remove_file(&self.path).ok()?;
        let text = String::from_utf8(bytes?).ok()?;
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != FETCH_STATE {
            return None;
        }
        let mut names = Vec::new();
        for line in lines {
            match line.strip_prefix("refused ") {
                Some(name) => names.push(name.to_owned()),
                None => return (line == format!("end {}", names.len())).then_some(names),
            }
        }
        None
    }

    /// Write that this fetch finished its checks. A failure only leaves the
    /// next fetch to compare everything.
    fn finished(&self, f: &Fetched) {
        let mut text = format!("{FETCH_STATE}\n");
        for (shown, _) in &f.refused {
            if let Some(name) = shown.strip_prefix(RECORD_PREFIX) {
                text.push_str(&format!("refused {name}\n"));
            }
        }
        text.push_str(&format!("end {}\n", text.lines().count() - 1));
        let _ = crate::sys::atomic::write(&self.path, text.as_bytes());
    }
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
    let mut pairs: std::collections::BTreeMap<String, Pair> = Default::default();
    for (refname, target) in repo.ref_ids_under(&incoming_prefix)? {
        let name = refname.strip_prefix(&incoming_prefix).unwrap_or(&refname);
        pairs.entry(name.to_owned()).or_default().incoming = Some(target);
    }
    for (refname, target) in repo.ref_ids_under(&tracking_prefix)? {
        if let Some(name) = refname.strip_prefix(&tracking_prefix) {
            pairs.entry(name.to_owned()).or_default().tracking = Some(target);
        }
    }
    apply(ctx, f, pairs)
}

/// [`sync_records`] for the records named only (the last components of their
/// refs), the others known to be as the last fetch left them.
fn sync_names(ctx: &Ctx, f: &mut Fetched, names: Vec<String>) -> Result<()> {
    let repo = &ctx.repo;
    let incoming_prefix = f.remote.incoming_prefix();
    let tracking_prefix = f.remote.tracking_prefix();
    let mut pairs: std::collections::BTreeMap<String, Pair> = Default::default();
    for name in names {
        if pairs.contains_key(&name) {
            continue;
        }
        // A name that is no ref name is no ref.
        let pair = Pair {
            incoming: repo
                .direct_target(&format!("{incoming_prefix}{name}"))
                .ok()
                .flatten(),
            tracking: repo
                .direct_target(&format!("{tracking_prefix}{name}"))
                .ok()
                .flatten(),
        };
        pairs.insert(name, pair);
    }
    // The others are unchanged: what came in and was not refused before.
    let present = pairs.values().filter(|p| p.incoming.is_some()).count();
    let all = repo.ref_names_under(&incoming_prefix)?.len();
    f.unchanged += all.saturating_sub(present);
    apply(ctx, f, pairs)
}

/// A record's incoming ref and its checked copy: `None` absent, `Some(None)` symbolic.
#[derive(Default)]
struct Pair {
    incoming: Option<Option<crate::model::Oid>>,
    tracking: Option<Option<crate::model::Oid>>,
}

/// Check each incoming record that differs from its checked copy, and take the
/// ones that pass; drop the copies of those the remote no longer has.
fn apply(
    ctx: &Ctx,
    f: &mut Fetched,
    pairs: std::collections::BTreeMap<String, Pair>,
) -> Result<()> {
    let repo = &ctx.repo;
    let incoming_prefix = f.remote.incoming_prefix();
    let mut changes = Vec::new();
    for (name, pair) in pairs {
        let old = pair.tracking;
        let Some(target) = pair.incoming else {
            // The remote no longer has it.
            if let (Ok(id), Some(Some(target))) = (name.parse::<SessionId>(), old) {
                changes.push(RefChange {
                    name: f.remote.tracking_ref(&id),
                    new: None,
                    expect: Expect::At(target),
                });
                f.gone.push(id);
            }
            continue;
        };
        let refname = format!("{incoming_prefix}{name}");
        let shown = format!("{RECORD_PREFIX}{name}");
        let id = match ref_id(&refname, &incoming_prefix) {
            Ok(id) => id,
            Err(why) => {
                f.refused.push((shown, why.to_string()));
                continue;
            }
        };
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
