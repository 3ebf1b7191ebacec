//! `ls --status`: for every session, its uncommitted work, how far its base ref
//! moved past it, and whether its work is published, from the facts gc uses.
//! [`prepare`] reads the cheap ones for all sessions first: whether each is
//! published (gc's own [`Publish`]: the publish walk and the proof of content,
//! its verdicts cached by object ids, see [`verdicts`]), and the commits behind.
//! The status of the worktrees, the costly fact, comes after, in parallel, in
//! the order the rows are shown ([`Pending::each`]): the table prints each row
//! as soon as it and those above it are done ([`stream`]; `--json` prints its
//! array when all are: it is one JSON value).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::gc::facts::Publish;
use crate::gc::plan::Branch;
use crate::git::cache::{refs_key, ObjectCache};
use crate::git::store::Stored;
use crate::model::{Oid, Record, SessionId, State};
use crate::sys::paths::canonical_or_self as canonical;

use super::fit::{render_table, Table};
use super::table::{set_status, Row, StatusFacts, View};

/// The facts of every session but its status, and where that is read.
pub struct Pending {
    /// Each session's, in order (`dirt` still unknown).
    facts: Vec<StatusFacts>,
    /// Each session's worktree, when it is looked into: a registered worktree
    /// of this repository on the session's branch (a record's path alone is
    /// not looked into).
    worktrees: Vec<Option<PathBuf>>,
    ids: Vec<SessionId>,
}

/// Everything but the status of the worktrees: what cannot be told is
/// reported once and left unknown.
pub fn prepare(ctx: &Ctx, sessions: &[Stored], cache: &mut ObjectCache) -> Pending {
    let repo = &ctx.repo;
    let tips: Vec<Option<Oid>> = sessions
        .iter()
        .map(|s| repo.ref_target(&s.record.id.branch_ref()).ok().flatten())
        .collect();
    let published = verdicts(ctx, sessions, &tips, cache);

    // Registered worktrees by resolved path, with the ref their HEAD is on.
    let registered: HashMap<PathBuf, Option<String>> = repo
        .worktrees()
        .map_err(|e| ctx.ui.warn(format!("cannot list the worktrees: {e:#}")))
        .unwrap_or_default()
        .into_iter()
        .filter(|w| w.exists && w.admin_id.is_some())
        .map(|w| (canonical(&w.path), w.head_ref))
        .collect();
    let worktrees = sessions
        .iter()
        .map(|s| {
            if s.record.state == State::Collected {
                return None;
            }
            let path = canonical(Path::new(&s.record.worktree));
            let head = registered.get(&path)?;
            (head.as_deref() == Some(s.record.id.branch_ref().as_str())).then_some(path)
        })
        .collect();
    let facts = sessions
        .iter()
        .zip(tips)
        .zip(published)
        .map(|((s, tip), (published, unpublished))| StatusFacts {
            dirt: None,
            behind: tip.and_then(|t| behind(ctx, &s.record, t)),
            published,
            unpublished,
        })
        .collect();
    Pending {
        facts,
        worktrees,
        ids: sessions.iter().map(|s| s.record.id.clone()).collect(),
    }
}

impl Pending {
    /// Every session's facts, in order, once all statuses are read.
    pub fn gather(self, ctx: &Ctx) -> Vec<StatusFacts> {
        let n = self.facts.len();
        let mut out = Vec::with_capacity(n);
        self.each(ctx, &(0..n).collect::<Vec<_>>(), |_, f| {
            out.push(f);
            true
        });
        out
    }

    /// What is known of session `i` before its status.
    pub fn early(&self, i: usize) -> StatusFacts {
        self.facts.get(i).cloned().unwrap_or_default()
    }

    /// Each session's facts in `order` (indexes of the sessions), handed to
    /// `each` with the session's index as soon as its status and those of the
    /// sessions before it in `order` are read; `each` returning false stops.
    pub fn each(
        mut self,
        ctx: &Ctx,
        order: &[usize],
        mut each: impl FnMut(usize, StatusFacts) -> bool,
    ) {
        let looked: Vec<(usize, PathBuf)> = order
            .iter()
            .enumerate()
            .filter_map(|(k, &i)| Some((k, self.worktrees.get(i)?.clone()?)))
            .collect();
        let paths: Vec<PathBuf> = looked.iter().map(|(_, p)| p.clone()).collect();
        // How many of `order` were handed out.
        let mut next = 0;
        let mut hand_out = |upto: usize, facts: &mut Vec<StatusFacts>| -> bool {
            while next < upto {
                let i = order[next];
                next += 1;
                if !each(i, std::mem::take(&mut facts[i])) {
                    return false;
                }
            }
            true
        };
        let mut going = true;
        ctx.repo.dirt_each(&paths, |j, dirt| {
            let (k, _) = looked[j];
            let i = order[k];
            match dirt {
                Ok(d) => self.facts[i].dirt = Some(d),
                Err(e) => ctx.ui.warn(format!(
                    "{}: cannot tell whether its worktree is clean: {e:#}",
                    self.ids[i]
                )),
            }
            going = hand_out(k + 1, &mut self.facts);
            going
        });
        if going {
            hand_out(order.len(), &mut self.facts);
        }
    }
}

/// `ls --status` as a table: laid out when all but the statuses are known,
/// then each row printed as soon as its status (and those above it) is read.
/// `rows` are those of `sessions`, in the order they are shown.
pub fn stream(
    ctx: &Ctx,
    sessions: &[Stored],
    rows: &mut [Row],
    cache: &mut ObjectCache,
    view: &View,
) -> std::io::Result<()> {
    let pending = prepare(ctx, sessions, cache);
    let index: HashMap<&str, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.record.id.as_str(), i))
        .collect();
    let order: Vec<usize> = rows
        .iter()
        .filter_map(|r| index.get(r.id.as_str()).copied())
        .collect();
    if order.len() != rows.len() {
        // Every row is a session's: nothing else to do but show them whole.
        let facts = pending.gather(ctx);
        for r in rows.iter_mut() {
            if let Some(&i) = index.get(r.id.as_str()) {
                set_status(r, &facts[i]);
            }
        }
        return render_table(&mut *ctx.ui.out(), rows, view);
    }
    for (r, &i) in rows.iter_mut().zip(&order) {
        set_status(r, &pending.early(i));
    }
    if rows.is_empty() {
        return Ok(());
    }
    let table = Table::new(rows, view);
    let write = |f: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        let mut out = ctx.ui.out();
        f(&mut *out).and_then(|()| out.flush())
    };
    write(&|out| table.head(out))?;
    let mut k = 0;
    let mut result = Ok(());
    pending.each(ctx, &order, |_, facts| {
        set_status(&mut rows[k], &facts);
        result = write(&|out| table.line(out, k, &rows[k]));
        k += 1;
        result.is_ok()
    });
    result?;
    write(&|out| table.end(out))
}

/// Whether each session is published, and how many of its commits no
/// remote-tracking ref reaches: gc's verdict ([`Publish::counted`]: reachable
/// from a remote-tracking ref, or each of its commits' changes on an
/// integration ref), `None` where there is no branch or it cannot be told.
/// A verdict is cached (`git::cache`) under the branch tip, the session's
/// base and one key of every remote-tracking and integration ref, so an entry
/// is never stale; the cache is never read by gc, which proves again.
fn verdicts(
    ctx: &Ctx,
    sessions: &[Stored],
    tips: &[Option<Oid>],
    cache: &mut ObjectCache,
) -> Vec<(Option<bool>, Option<usize>)> {
    let mut out = vec![(None, None); sessions.len()];
    let publish = match Publish::new(ctx, false) {
        Ok(p) => p,
        Err(e) => {
            ctx.ui.warn(format!("cannot tell what is published: {e:#}"));
            return out;
        }
    };
    let key = refs_key(&publish.refs_key());
    // The cache's key of a session's verdict: not while it is being made (its
    // tip at its base says nothing yet).
    let cache_key = |s: &Stored, tip: Option<Oid>| -> Option<(Oid, Oid, Oid)> {
        let base = s.record.base.parse::<Oid>().ok()?;
        (s.record.state != State::Provisioning).then_some((tip?, base, key?))
    };
    let mut walk: Vec<anyhow::Result<Option<Oid>>> = Vec::with_capacity(sessions.len());
    for (i, (s, &tip)) in sessions.iter().zip(tips).enumerate() {
        let cached = cache_key(s, tip).and_then(|(t, b, k)| cache.published(t, b, k));
        match cached {
            Some((yes, n)) => {
                out[i] = (Some(yes), Some(n));
                walk.push(Ok(None));
            }
            None => walk.push(Ok(tip)),
        }
    }
    if walk.iter().all(|t| matches!(t, Ok(None))) {
        return out;
    }
    let walked = match publish.counted(sessions, &walk) {
        Ok(w) => w,
        Err(e) => {
            ctx.ui.warn(format!("cannot tell what is published: {e:#}"));
            return out;
        }
    };
    for (i, branch) in walked.branches.iter().enumerate() {
        if !matches!(walk[i], Ok(Some(_))) {
            continue;
        }
        let count = |tip: &Oid| walked.counts.get(tip).copied();
        let verdict = match branch {
            Ok(Branch::Published { tip, .. }) => (Some(true), Some(count(tip).unwrap_or(0))),
            Ok(Branch::Unpublished { tip, ahead, .. }) => (Some(false), ahead.or(count(tip))),
            // No commit of its own: published when a remote reaches its tip.
            Ok(Branch::AtBase { tip }) => (count(tip).map(|n| n == 0), count(tip)),
            Ok(Branch::Missing) | Err(_) => (None, None),
        };
        out[i] = verdict;
        if let ((Some(yes), Some(n)), false) = (verdict, walked.undecided.contains(&i)) {
            if let Some((t, b, k)) = cache_key(&sessions[i], tips[i]) {
                cache.put_published(t, b, k, (yes, n));
            }
        }
    }
    out
}

/// Commits on the session's base ref (where it is now) that its tip lacks.
fn behind(ctx: &Ctx, r: &Record, tip: Oid) -> Option<usize> {
    let base_ref = r.base_ref.as_deref()?;
    let base_tip = ctx.repo.ref_target(base_ref).ok()??;
    ctx.repo
        .commits_between(base_tip, &[tip])
        .map(|c| c.len())
        .map_err(|e| {
            ctx.ui.warn(format!(
                "{}: cannot count the commits on {base_ref} it lacks: {e:#}",
                r.id
            ))
        })
        .ok()
}
