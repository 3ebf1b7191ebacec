//! Proof of content: whether the commits of a session that no remote-tracking
//! ref reaches are already in an integration ref (`origin/main`), the way squash
//! merges, rebase merges and cherry-picks put them there.
//!
//! The rule, commit by commit: each such commit's own change (against its first
//! parent, as a cherry-pick sees it) is on the ref when merging that commit into
//! a commit of the ref's first-parent history changes nothing — at a commit
//! strictly newer than the session's fork from the ref (their merge base) and
//! descending from it. The fork point, and anything older, is never a landing:
//! what cancels out between the session's commits (a file added, then removed)
//! proves nothing. A revert or a later edit on the ref after the landing does
//! not make the work unpublished again: it was published.
//!
//! Most of it is decided in-process and costs a few tree reads (`trees`): the
//! paths a commit changes, and, along the ref's first-parent history (`chain`),
//! only the commits that touch one of those paths. Where every such path holds
//! the commit's version, merging changes nothing; where one still holds its
//! parent's, merging would bring it in. Only where both sides changed a path is
//! git asked: `git merge-tree --write-tree` (one process per round for all of
//! them, `--stdin`), into a temporary object directory so that nothing is left
//! in the repository (`proof`).

mod chain;
mod proof;
#[cfg(test)]
mod tests;
mod trees;

use std::collections::HashMap;

use anyhow::Result;
use gix::bstr::ByteSlice;

use super::{Oid, Repo};
use crate::model::{Evidence, Unmerged};
use proof::Proof;

/// A ref a session's changes may have been merged into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegrationRef {
    /// Short, as people say it: `origin/main`.
    pub name: String,
    /// Full: `refs/remotes/origin/main`.
    pub refname: String,
    pub tip: Oid,
    /// Why this ref: `origin/HEAD`, `origin/HEAD is not set` or `origin/HEAD
    /// points at the missing origin/master` (then `main`, else `master`),
    /// `bullpen.gc.integrationRef`.
    pub chosen: String,
}

/// One session's question: its tip, and its commits no remote-tracking ref reaches.
#[derive(Clone, Debug)]
pub struct ContentQuery {
    pub tip: Oid,
    /// Newest first.
    pub commits: Vec<Oid>,
}

/// What the proof of content found for one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    Published(Evidence),
    /// Not (all) there; what was found, if anything worth saying.
    Unmerged(Option<Unmerged>),
}

impl Repo {
    /// The integration refs: each remote's default branch (`refs/remotes/<remote>/HEAD`'s
    /// target; where that is not set, `<remote>/main`, then `<remote>/master`),
    /// then the remote-tracking refs `bullpen.gc.integrationRef` names (each value a
    /// short or full ref name, globs allowed; an empty value drops everything
    /// before it, the defaults included). Also what people should hear about
    /// (a value that matches nothing).
    pub fn integration_refs(&self) -> Result<(Vec<IntegrationRef>, Vec<String>)> {
        let remote_refs = self.remote_refs()?;
        let by_name: HashMap<&str, Oid> =
            remote_refs.iter().map(|(n, o)| (n.as_str(), *o)).collect();
        let mut out: Vec<IntegrationRef> = Vec::new();
        let mut notes = Vec::new();
        let short = |full: &str| {
            full.strip_prefix("refs/remotes/")
                .unwrap_or(full)
                .to_owned()
        };
        for remote in self.repo.remote_names() {
            let remote = remote.to_string();
            let head = format!("refs/remotes/{remote}/HEAD");
            let target = self
                .repo
                .try_find_reference(head.as_str())
                .ok()
                .flatten()
                .and_then(|r| match r.target() {
                    gix::refs::TargetRef::Symbolic(name) => Some(name.as_bstr().to_string()),
                    gix::refs::TargetRef::Object(_) => None,
                });
            // A renamed default branch leaves HEAD pointing at what is gone.
            let dangling = target
                .as_deref()
                .filter(|t| !by_name.contains_key(t))
                .map(short);
            if let Some(gone) = &dangling {
                notes.push(format!(
                    "{remote}/HEAD points at {gone}, which does not exist (a renamed default \
                     branch?); fix it: git remote set-head {remote} --auto"
                ));
            }
            let why = match &dangling {
                Some(gone) => format!("{remote}/HEAD points at the missing {gone}"),
                None => format!("{remote}/HEAD is not set"),
            };
            let chosen = match target {
                Some(t) if dangling.is_none() => Some((t, format!("{remote}/HEAD"))),
                _ => ["main", "master"].iter().find_map(|b| {
                    let full = format!("refs/remotes/{remote}/{b}");
                    by_name
                        .contains_key(full.as_str())
                        .then(|| (full, why.clone()))
                }),
            };
            if let Some((refname, chosen)) = chosen {
                out.push(IntegrationRef {
                    name: short(&refname),
                    tip: by_name[refname.as_str()],
                    refname,
                    chosen,
                });
            }
        }
        let configured = self
            .repo
            .config_snapshot()
            .plumbing()
            .strings(crate::model::config::GC_INTEGRATION_REF)
            .unwrap_or_default();
        for value in configured {
            let value = value.to_str_lossy().trim().to_owned();
            if value.is_empty() {
                out.clear();
                continue;
            }
            let mut matched = false;
            for (full, tip) in &remote_refs {
                if full.ends_with("/HEAD") {
                    continue;
                }
                let candidate = if value.starts_with("refs/") {
                    full.clone()
                } else {
                    short(full)
                };
                let hit = gix::glob::wildmatch(
                    value.as_bytes().as_bstr(),
                    candidate.as_bytes().as_bstr(),
                    gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
                );
                if hit {
                    matched = true;
                    if !out.iter().any(|r| &r.refname == full) {
                        out.push(IntegrationRef {
                            name: short(full),
                            refname: full.clone(),
                            tip: *tip,
                            chosen: crate::model::config::GC_INTEGRATION_REF.to_owned(),
                        });
                    }
                }
            }
            if !matched {
                notes.push(format!(
                    "{} {value:?} matches no remote-tracking ref (refs/remotes/*)",
                    crate::model::config::GC_INTEGRATION_REF
                ));
            }
        }
        Ok((out, notes))
    }

    /// For each query, where its changes are: published into one of `refs`
    /// (the first that has them all), or what was found of them. An error for
    /// one session is its own; the others are still answered.
    pub fn find_content(
        &self,
        queries: &[ContentQuery],
        refs: &[IntegrationRef],
    ) -> Vec<Result<Content>> {
        if queries.is_empty() {
            return Vec::new();
        }
        let mut proof = Proof::new(self);
        let mut answers: Vec<Option<Result<Content>>> = (0..queries.len()).map(|_| None).collect();
        // Rounds: each asks git for the merges the last one could not decide without.
        for _ in 0..4 {
            let mut undecided = false;
            for (i, q) in queries.iter().enumerate() {
                if answers[i].is_some() {
                    continue;
                }
                match proof.session(q, refs) {
                    Ok(Some(c)) => answers[i] = Some(Ok(c)),
                    Ok(None) => undecided = true,
                    Err(e) => answers[i] = Some(Err(e)),
                }
            }
            if !undecided {
                break;
            }
            if let Err(e) = proof.run_merges() {
                let msg = format!("{e:#}");
                for a in answers.iter_mut().filter(|a| a.is_none()) {
                    *a = Some(Err(anyhow::anyhow!("{msg}")));
                }
                break;
            }
        }
        answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| Err(anyhow::anyhow!("could not decide where its changes are")))
            })
            .collect()
    }
}
