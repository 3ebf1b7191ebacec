//! Reachability: commits between tips, and what `refs/remotes/*` does not reach.

use std::collections::HashSet;

use anyhow::{Context, Result};

use super::{gid, gids, oid, Oid, Repo};

impl Repo {
    /// Commits reachable from `tip` but not from any of `hidden`, newest first.
    pub fn commits_between(&self, tip: Oid, hidden: &[Oid]) -> Result<Vec<Oid>> {
        // A session with no commits of its own (tip == base) needs no object read.
        if hidden.contains(&tip) {
            return Ok(Vec::new());
        }
        let walk = self
            .repo
            .rev_walk([gid(tip)?])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
            ))
            .with_hidden(gids(hidden)?)
            // gix opens and maps the commit-graph file anew for every walk; `ls`
            // walks once per session (1,000 opens of a 350 KiB file at 1,000
            // sessions, ~15% of its time). These walks are a few commits long:
            // reading the commits themselves is cheaper than opening the graph.
            .use_commit_graph(false)
            .all()
            .with_context(|| format!("could not walk the history of {tip}"))?;
        let mut out = Vec::new();
        for info in walk {
            let info = info.with_context(|| format!("could not walk the history of {tip}"))?;
            out.push(oid(info.id));
        }
        Ok(out)
    }

    /// Of `tips`, those NOT reachable from any `refs/remotes/*` ref, in one walk.
    pub fn unpublished(&self, tips: &[Oid]) -> Result<HashSet<Oid>> {
        if tips.is_empty() {
            return Ok(HashSet::new());
        }
        let remote_tips = self.remote_tip_commits()?;
        let mut found = HashSet::new();
        // A tip whose commit is missing cannot be proven published: it counts as unpublished.
        let mut present = Vec::new();
        for tip in tips {
            if self.repo.has_object(gid(tip)?) {
                present.push(*tip);
            } else {
                found.insert(*tip);
            }
        }
        let wanted: HashSet<Oid> = tips.iter().copied().collect();
        if present.is_empty() {
            return Ok(found);
        }
        let walk = self
            .repo
            .rev_walk(gids(&present)?)
            .with_hidden(gids(&remote_tips)?)
            .all()
            .context("could not walk the history of the session branches")?;
        for info in walk {
            let info = info.context("could not walk the history of the session branches")?;
            let id = oid(info.id);
            if wanted.contains(&id) {
                found.insert(id);
                if found.len() == wanted.len() {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// For each of `tips`, how many commits it has that no `refs/remotes/*` ref
    /// reaches (0 when published). One walk per tip, so call it only for the
    /// tips [`Repo::unpublished`] returned.
    pub fn commits_not_on_remotes(
        &self,
        tips: &[Oid],
    ) -> Result<std::collections::HashMap<Oid, usize>> {
        let hidden = self.remote_tip_commits()?;
        let mut out = std::collections::HashMap::new();
        for tip in tips {
            if out.contains_key(tip) {
                continue;
            }
            let n = self.commits_between(*tip, &hidden)?.len();
            out.insert(*tip, n);
        }
        Ok(out)
    }

    /// Every commit a `refs/remotes/*` ref points at (symbolic refs peeled,
    /// non-commits ignored).
    fn remote_tip_commits(&self) -> Result<Vec<Oid>> {
        Ok(remote_tips(&self.repo)?.into_iter().map(oid).collect())
    }
}

/// Every commit a `refs/remotes/*` ref of `repo` points at (symbolic refs
/// peeled, non-commits ignored). Also for repositories nested in a worktree.
pub(super) fn remote_tips(repo: &gix::Repository) -> Result<Vec<gix::ObjectId>> {
    let platform = repo.references().context("could not read refs")?;
    let iter = platform
        .prefixed("refs/remotes/")
        .context("could not list remote-tracking refs")?;
    let mut out = Vec::new();
    for reference in iter {
        let mut reference = reference
            .map_err(|err| anyhow::anyhow!("{err}"))
            .context("could not read a remote-tracking ref")?;
        let Ok(id) = reference.peel_to_id() else {
            continue;
        };
        let Ok(object) = id.object() else { continue };
        if let Ok(commit) = object.peel_to_commit() {
            out.push(commit.id);
        }
    }
    Ok(out)
}
