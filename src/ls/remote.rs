//! `ls --remote`: the rows of fetched sessions. A record is checked as it is
//! read (`store::read_fetched`); the row of a record commit that passed the
//! checks for its remote and id comes from the cache (`git::remote_cache`,
//! `ls::fetched`), so a listing where nothing changed reads the refs and one
//! file, and makes no record. Nothing a record names is looked at: not its
//! worktree, not its process. Only the fetched branch is read, to count its
//! commits.

use anyhow::Result;

use super::fetched;
use super::table::Row;
use crate::context::Ctx;
use crate::git::remote_cache::RemoteCache;
use crate::git::store;
use crate::model::remote::{branch_destination, host_label, tracking_branch, RemoteName};
use crate::model::{Observed, Oid, SessionId, State};
use crate::sys::procfs;
use crate::trust::local::Local;

/// The rows of the sessions fetched from `remote` (or from every remote
/// sessions were fetched from), the named ids only if any are named, collected
/// ones only with `all`; also how many collected ones were left out. A record
/// that fails the checks is reported and skipped.
/// With `whole`, each row whole (`--json`), else what the table shows. Each
/// row is boxed: a row is large, and a thousand of them are sorted and
/// filtered here (moved as pointers, made once).
pub fn remote_rows(
    ctx: &Ctx,
    remote: Option<&RemoteName>,
    ids: &[SessionId],
    all: bool,
    whole: bool,
) -> Result<(Vec<Box<Row>>, usize)> {
    let mut caches = Caches {
        shown: RemoteCache::open(&ctx.repo, "remote"),
        // The whole rows are read only for `--json`: the table reads a file a
        // fifth the size. A table listing that reads a record adds its whole
        // row too (opening the file then), so `--json` after it reads none.
        whole: whole.then(|| RemoteCache::open(&ctx.repo, "remote-rows")),
        want_whole: whole,
    };
    let fetched = store::fetched_refs(&ctx.repo, remote)?;
    let my_host = procfs::hostname();
    let my_clone = crate::trust::local::existing_clone_id(&ctx.layout);
    let mut rows = Vec::with_capacity(fetched.iter().map(|(_, refs)| refs.len()).sum());
    let mut hidden = 0;
    for (remote, refs) in fetched {
        // Each row with its record commit and the index of its ref.
        let mut listed: Vec<(Box<Row>, Oid, usize)> = Vec::with_capacity(refs.len());
        for (i, r) in refs.iter().enumerate() {
            match read_row(ctx, &mut caches, &remote, r) {
                Ok((row, commit)) => listed.push((row, commit, i)),
                Err(error) => ctx.ui.warn(format!("skipping {}: {:#}", r.refname, error)),
            }
        }
        listed.sort_by(|(a, ..), (b, ..)| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        let branches = branch_destination(&ctx.repo.fetch_refspecs(remote.as_str()));
        let tips = tracked_tips(
            ctx,
            branches.as_ref().map(|(p, _)| p.as_str()),
            listed.len(),
        );
        for (mut row, commit, i) in listed {
            // A row is only made for a ref whose name holds an id.
            let Ok(id) = &refs[i].id else {
                continue;
            };
            if !ids.is_empty() && !ids.contains(id) {
                continue;
            }
            if !all && row.observed == Some(Observed::Stored(State::Collected)) {
                hidden += 1;
                continue;
            }
            row.ahead = branches.as_ref().and_then(|(pattern, _)| {
                let branch = tracking_branch(pattern, id);
                let tip = match tips.get(&branch) {
                    Some(tip) => *tip,
                    None => ctx.repo.ref_target(&branch).ok()??,
                };
                let base = row.base.parse::<Oid>().ok()?;
                if let Some(n) = caches.shown.ahead(tip, base) {
                    return Some(n);
                }
                let n = ctx.repo.commits_between(tip, &[base]).ok()?.len();
                caches.shown.put_ahead(tip, base, n);
                Some(n)
            });
            let own =
                row.clone_id.is_some() && row.clone_id == my_clone && written_here(ctx, id, commit);
            row.host_label = Some(host_label(
                &row.host,
                row.clone_id.as_deref(),
                &my_host,
                my_clone.as_deref(),
                own,
            ));
            rows.push(row);
        }
    }
    // Only a listing of every fetched session says what is no longer needed
    // (of the whole rows, only one that read them: `--json`).
    // A cache that cannot be written (a read-only repository) is only read again.
    let every = remote.is_none() && ids.is_empty();
    let _ = caches.shown.save(every);
    if let Some(w) = &caches.whole {
        let _ = w.save(every && caches.want_whole);
    }
    Ok((rows, hidden))
}

/// The caches a listing reads: what the table shows, and the whole rows
/// (opened for `--json`, or when a record was read).
struct Caches {
    shown: RemoteCache,
    whole: Option<RemoteCache>,
    want_whole: bool,
}

/// The row of one fetched ref, and its record commit: from the cache when
/// its commit passed the checks for this remote and id before, else from its
/// record, checked.
fn read_row(
    ctx: &Ctx,
    caches: &mut Caches,
    remote: &RemoteName,
    r: &store::FetchedRef,
) -> Result<(Box<Row>, Oid)> {
    let id = match &r.id {
        Ok(id) => id,
        Err(e) => return Err(anyhow::Error::new(e.clone())),
    };
    let name = remote.as_str();
    let want_whole = caches.want_whole;
    let cached = r.target.and_then(|commit| {
        let shown = caches.shown.row(name, id, commit)?;
        let whole = match want_whole {
            true => Some(caches.whole.as_mut()?.row(name, id, commit)?),
            false => None,
        };
        let row = fetched::from_lines(shown, whole, id.as_str(), name)?;
        Some((Box::new(row), commit))
    });
    if let Some(hit) = cached {
        return Ok(hit);
    }
    let stored = r.read(&ctx.repo)?;
    let (shown, row) = fetched::to_lines(&stored.record, name)
        .ok_or_else(|| anyhow::anyhow!("cannot make its row"))?;
    let made = fetched::from_lines(
        &shown,
        want_whole.then_some(row.as_str()),
        id.as_str(),
        name,
    )
    .ok_or_else(|| anyhow::anyhow!("cannot read its row back"))?;
    caches.shown.put_row(name, id, stored.commit, shown);
    let whole = caches
        .whole
        .get_or_insert_with(|| RemoteCache::open(&ctx.repo, "remote-rows"));
    whole.put_row(name, id, stored.commit, row);
    Ok((Box::new(made), stored.commit))
}

/// Every tracked branch of `pattern` in one listing, rather than one lookup
/// each, when that is cheaper: sorted by name, for [`Tips::get`].
fn tracked_tips(ctx: &Ctx, pattern: Option<&str>, n: usize) -> Tips {
    let mut tips: Vec<(String, Oid)> =
        match pattern.filter(|_| n > 16).and_then(|p| p.split_once('*')) {
            Some((dir, _)) if dir.ends_with('/') => ctx
                .repo
                .ref_ids_under(dir)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(name, target)| Some((name, target?)))
                .collect(),
            Some((prefix, _)) => ctx.repo.ref_targets_with_prefix(prefix).unwrap_or_default(),
            None => Vec::new(),
        };
    tips.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Tips(tips)
}

/// Tracked branches and their tips, sorted by name (no map built of a
/// thousand names).
struct Tips(Vec<(String, Oid)>);

impl Tips {
    fn get(&self, name: &str) -> Option<&Oid> {
        let i = self
            .0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        self.0.get(i).map(|(_, tip)| tip)
    }
}

/// Whether the fetched record commit `commit` of session `id` is one this clone
/// wrote: bullpen created the session here (its local proof, `created.json`,
/// which no fetch brings) and this clone's own record of it holds that commit
/// among its own events (its first parents: a record joined with a remote's
/// holds the remote's events too, as second parents). A record's clone id is no
/// proof: anyone can copy it into a record of their own, but not make their
/// commit one of this clone's.
fn written_here(ctx: &Ctx, id: &SessionId, commit: Oid) -> bool {
    let created = matches!(Local::of(&ctx.layout, id).created(), Ok(Some(_)));
    created
        && match ctx.repo.ref_target(&id.record_ref()) {
            Ok(Some(ours)) => ctx
                .repo
                .on_first_parent_chain(commit, ours)
                .unwrap_or(false),
            _ => false,
        }
}
