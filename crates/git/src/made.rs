//! The commits a run made: what its branch reaches that neither where the run
//! started nor any other branch, remote-tracking ref or tag reaches (so that
//! a colleague's commits merged or fast-forwarded into the run are not its own).

use std::collections::HashSet;

use anyhow::{Context, Result};

use super::history::unreached;
use super::{gid, gids, oid, Oid, Repo};

/// The refs whose commits are someone's: branches, remote-tracking refs, tags.
/// (Not `refs/stash`, whose commits sit on a worktree's own; not bullpen's or
/// notes refs, which hold no commits of the code.)
const OTHER_REFS: [&str; 3] = ["refs/heads/", "refs/remotes/", "refs/tags/"];

impl Repo {
    /// The commits `tip` reaches that none of `floor` reaches, nor any ref under
    /// [`OTHER_REFS`] except those `own` accepts; newest first.
    pub fn commits_only_on(
        &self,
        tip: Oid,
        floor: &[Oid],
        own: impl Fn(&str) -> bool,
    ) -> Result<Vec<Oid>> {
        let mut hidden: HashSet<gix::ObjectId> = gids(floor)?.into_iter().collect();
        let tip = gid(tip)?;
        // A run that made no commit: nothing to walk, no ref to list.
        if hidden.contains(&tip) {
            return Ok(Vec::new());
        }
        let platform = self.repo.references().context("could not read refs")?;
        for prefix in OTHER_REFS {
            let iter = platform
                .prefixed(prefix)
                .with_context(|| format!("could not list refs under {prefix}"))?;
            for reference in iter {
                let mut reference = reference
                    .map_err(|err| anyhow::anyhow!("{err}"))
                    .with_context(|| format!("could not read a ref under {prefix}"))?;
                if own(&reference.name().as_bstr().to_string()) {
                    continue;
                }
                let Ok(id) = reference.peel_to_id() else {
                    continue;
                };
                let Ok(object) = id.object() else { continue };
                if let Ok(commit) = object.peel_to_commit() {
                    hidden.insert(commit.id);
                }
            }
        }
        let hidden: Vec<gix::ObjectId> = hidden.into_iter().collect();
        let mut found = unreached(&self.repo, &[tip], &hidden)
            .with_context(|| format!("could not walk the history of {tip}"))?;
        Ok(found
            .remove(&tip)
            .unwrap_or_default()
            .into_iter()
            .map(oid)
            .collect())
    }
}
