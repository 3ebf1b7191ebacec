//! One proof of content for many sessions: what it has read (trees, chains,
//! merge bases, git's merges) is shared by all of them.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use anyhow::{Context, Result};
use gix::ObjectId;

use super::chain::{Chain, Link};
use super::trees::{Change, Holds, Trees};
use super::{Content, ContentQuery, IntegrationRef};
use crate::model::{Evidence, Landing, Since, Unmerged};
use crate::{gid, oid, Repo};

/// git's answer for one merge.
#[derive(Clone, Copy, Debug)]
enum Merged {
    Clean(ObjectId),
    Conflicts,
}

/// One of a session's commits that changes something, and its change.
struct Own {
    id: ObjectId,
    /// The first parent; `None` for a root commit (its change is against the
    /// empty tree, and git is never asked to merge it).
    parent: Option<ObjectId>,
    changes: Vec<Change>,
}

/// How the ref's tip holds the session tip's change since the fork.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AtTip {
    Holds,
    Conflicts,
    Reverted,
    Changed,
}

pub(super) struct Proof<'r> {
    repo: &'r Repo,
    trees: Trees<'r>,
    chains: HashMap<ObjectId, Chain>,
    bases: HashMap<(ObjectId, ObjectId), Option<ObjectId>>,
    /// (ref tip, fork) → how many links of its chain are newer than the fork.
    segments: HashMap<(ObjectId, ObjectId), usize>,
    /// Commit → its change (`None`: it changes nothing).
    own: HashMap<ObjectId, Option<Rc<Own>>>,
    /// (base, ours, theirs) → git's merge.
    merges: HashMap<(ObjectId, ObjectId, ObjectId), Merged>,
    wanted: HashSet<(ObjectId, ObjectId, ObjectId)>,
    graph: gix::revwalk::Graph<
        'r,
        'r,
        gix::revwalk::graph::Commit<gix::revision::plumbing::merge_base::Flags>,
    >,
}

impl<'r> Proof<'r> {
    pub fn new(repo: &'r Repo) -> Proof<'r> {
        Proof {
            repo,
            trees: Trees::new(&repo.repo),
            chains: HashMap::new(),
            bases: HashMap::new(),
            segments: HashMap::new(),
            own: HashMap::new(),
            merges: HashMap::new(),
            wanted: HashSet::new(),
            graph: repo.repo.revision_graph(None),
        }
    }

    /// Where one session's changes are. `None`: git must be asked for merges first.
    ///
    /// Published into a ref when each of its commits that changes something
    /// (a merge: against its first parent) has a landing there: a commit of
    /// the ref's first-parent history, newer than the fork and descending
    /// from it, where merging that commit changes nothing.
    pub fn session(
        &mut self,
        q: &ContentQuery,
        refs: &[IntegrationRef],
    ) -> Result<Option<Content>> {
        let tip = gid(q.tip)?;
        let mut own = Vec::new();
        for c in &q.commits {
            if let Some(o) = self.own_change(gid(c)?)? {
                own.push(o);
            }
        }
        if own.is_empty() {
            // Merging it changes nothing, and proves nothing either (its commits
            // would be lost).
            return Ok(Some(Content::Unmerged(Some(Unmerged::NoChanges))));
        }
        let mut best: Option<Unmerged> = None;
        let mut undecided = false;
        for r in refs {
            let head = gid(r.tip)?;
            let Some(base) = self.merge_base(tip, head)? else {
                continue;
            };
            let seg = self.segment(head, base)?;
            let mut landings = Vec::new();
            let mut missing = 0;
            let mut unknown = false;
            for o in &own {
                match self.landing(head, seg, o)? {
                    None => unknown = true,
                    Some(Some(k)) => landings.push((o.id, k)),
                    Some(None) => missing += 1,
                }
            }
            if unknown {
                undecided = true;
                continue;
            }
            if missing == 0 {
                let Some(at_tip) = self.at_tip(head, base, tip)? else {
                    undecided = true;
                    continue;
                };
                if let Some(e) = self.evidence(r, head, &landings, at_tip) {
                    return Ok(Some(Content::Published(e)));
                }
            }
            let found = if !landings.is_empty() {
                Some(Unmerged::Partly {
                    into: r.name.clone(),
                    merged: landings.len(),
                    of: own.len(),
                })
            } else {
                match self.at_tip(head, base, tip)? {
                    None => {
                        undecided = true;
                        continue;
                    }
                    Some(AtTip::Conflicts) => Some(Unmerged::Conflicts {
                        into: r.name.clone(),
                    }),
                    Some(_) => None,
                }
            };
            best = match (best, found) {
                (
                    Some(Unmerged::Partly { merged: a, .. }),
                    Some(f @ Unmerged::Partly { merged: b, .. }),
                ) if b > a => Some(f),
                (Some(b @ Unmerged::Partly { .. }), _) => Some(b),
                (_, Some(f @ Unmerged::Partly { .. })) => Some(f),
                (b @ Some(_), _) => b,
                (None, f) => f,
            };
        }
        if undecided {
            return Ok(None);
        }
        Ok(Some(Content::Unmerged(best)))
    }

    /// The evidence for landings (session commit, index into `head`'s chain),
    /// newest session commit first; `None` for none (nothing proven).
    fn evidence(
        &self,
        r: &IntegrationRef,
        head: ObjectId,
        landings: &[(ObjectId, usize)],
        at_tip: AtTip,
    ) -> Option<Evidence> {
        let links = &self.chains[&head].links;
        let mut distinct: Vec<usize> = landings.iter().map(|(_, k)| *k).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let newest = links[*distinct.first()?].id;
        let since = match at_tip {
            AtTip::Holds => Since::Unchanged,
            AtTip::Reverted => Since::Reverted,
            AtTip::Changed | AtTip::Conflicts => Since::Changed,
        };
        let landings = landings
            .iter()
            .map(|(c, k)| Landing {
                commit: oid(c),
                on: oid(links[*k].id),
            })
            .collect();
        let short = self.short(newest);
        Some(if distinct.len() >= 2 {
            Evidence::Rebased {
                into: r.name.clone(),
                commits: distinct.len(),
                last: oid(newest),
                short,
                since,
                landings,
            }
        } else {
            Evidence::Squashed {
                into: r.name.clone(),
                commit: oid(newest),
                short,
                since,
                landings,
            }
        })
    }

    /// A commit's own change: against its first parent (the empty tree for a
    /// root commit); `None` when it changes nothing.
    fn own_change(&mut self, id: ObjectId) -> Result<Option<Rc<Own>>> {
        if let Some(o) = self.own.get(&id) {
            return Ok(o.clone());
        }
        let commit = self
            .repo
            .repo
            .find_commit(id)
            .with_context(|| format!("could not read commit {id}"))?;
        let parent = commit.parent_ids().next().map(|p| p.detach());
        let tree = self.commit_tree(id)?;
        let parent_tree = match parent {
            Some(p) => Some(self.commit_tree(p)?),
            None => None,
        };
        let changes = self.trees.diff(parent_tree, tree)?;
        let own = (!changes.is_empty()).then(|| {
            Rc::new(Own {
                id,
                parent,
                changes,
            })
        });
        self.own.insert(id, own.clone());
        Ok(own)
    }

    /// Where along `head`'s chain (indices `0..seg`) `o`'s change landed: the
    /// oldest commit where merging it changes nothing. `Some(None)`: nowhere;
    /// `None`: git must be asked first.
    fn landing(&mut self, head: ObjectId, seg: usize, o: &Own) -> Result<Option<Option<usize>>> {
        let candidates = self.chains[&head].candidates(o.changes.iter().map(|c| &c.path), seg);
        let mut unknown = false;
        for k in candidates {
            let link = self.chains[&head].links[k];
            match self.contains(link, &o.changes, o.parent, o.id)? {
                // An older candidate may hold it too: git's answer first.
                Some(true) if unknown => break,
                Some(true) => return Ok(Some(Some(k))),
                Some(false) => {}
                None => unknown = true,
            }
        }
        Ok((!unknown).then_some(None))
    }

    /// Whether merging `theirs` (its change from `base`) into `link` changes
    /// nothing. `None`: git must be asked first.
    fn contains(
        &mut self,
        link: Link,
        changes: &[Change],
        base: Option<ObjectId>,
        theirs: ObjectId,
    ) -> Result<Option<bool>> {
        Ok(match self.trees.holds(link.tree, changes)? {
            Holds::All => Some(true),
            Holds::Missing => Some(false),
            // A root commit has no base git could merge from.
            Holds::Merge => match base {
                None => Some(false),
                Some(base) => self
                    .merged(base, link.id, theirs)
                    .map(|m| matches!(m, Merged::Clean(t) if t == link.tree)),
            },
        })
    }

    /// git's merge, if known; else it is asked for in the next round.
    fn merged(&mut self, base: ObjectId, ours: ObjectId, theirs: ObjectId) -> Option<Merged> {
        let key = (base, ours, theirs);
        let found = self.merges.get(&key).copied();
        if found.is_none() {
            self.wanted.insert(key);
        }
        found
    }

    /// How the ref's tip holds the session's change from the fork `base` to `tip`.
    fn at_tip(&mut self, head: ObjectId, base: ObjectId, tip: ObjectId) -> Result<Option<AtTip>> {
        let head_tree = self.chains[&head].links[0].tree;
        let base_tree = self.commit_tree(base)?;
        let tip_tree = self.commit_tree(tip)?;
        let changes = self.trees.diff(Some(base_tree), tip_tree)?;
        let holds = match self.trees.holds(head_tree, &changes)? {
            Holds::All => Some(true),
            Holds::Missing => Some(false),
            Holds::Merge => match self.merged(base, head, tip) {
                None => return Ok(None),
                Some(Merged::Conflicts) => return Ok(Some(AtTip::Conflicts)),
                Some(Merged::Clean(t)) => Some(t == head_tree),
            },
        };
        Ok(Some(match holds {
            Some(true) => AtTip::Holds,
            _ if self.trees.all_at_base(head_tree, &changes)? => AtTip::Reverted,
            _ => AtTip::Changed,
        }))
    }

    /// How many links of `head`'s chain are newer than the fork `base` and
    /// descend from it: the candidates for a landing. The chain is read back
    /// to `base`, or to the first commit older than it (a clock skewed
    /// backwards only makes the proof keep more), and as far as the cap allows.
    fn segment(&mut self, head: ObjectId, base: ObjectId) -> Result<usize> {
        if let Some(&s) = self.segments.get(&(head, base)) {
            return Ok(s);
        }
        if !self.chains.contains_key(&head) {
            let link = Link {
                id: head,
                tree: self.commit_tree(head)?,
                time: self.commit_time(head)?,
            };
            self.chains.insert(head, Chain::new(link));
        }
        let base_time = self.commit_time(base)?;
        let mut k = 0;
        let limit = loop {
            let link = self.chains[&head].links[k];
            if link.id == base || link.time < base_time {
                break k;
            }
            if k + 1 == self.chains[&head].links.len() {
                let chain = self.chains.get_mut(&head).context("the chain is there")?;
                if !chain.extend(&self.repo.repo, &mut self.trees)? {
                    break k + 1;
                }
            }
            k += 1;
        };
        // Those that descend from the fork are a prefix of the chain (a first
        // parent of one that does not, does not either): find its end.
        let (mut lo, mut hi) = (0, limit);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let id = self.chains[&head].links[mid].id;
            if self.merge_base(id, base)? == Some(base) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.segments.insert((head, base), lo);
        Ok(lo)
    }

    fn merge_base(&mut self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        if let Some(found) = self.bases.get(&(a, b)) {
            return Ok(*found);
        }
        let found = self
            .repo
            .repo
            .merge_base_with_graph(a, b, &mut self.graph)
            .with_context(|| format!("could not find the merge base of {a} and {b}"))?
            .map(|id| id.detach());
        self.bases.insert((a, b), found);
        Ok(found)
    }

    fn commit_tree(&self, id: ObjectId) -> Result<ObjectId> {
        let commit = self
            .repo
            .repo
            .find_commit(id)
            .with_context(|| format!("could not read commit {id}"))?;
        Ok(commit
            .tree_id()
            .with_context(|| format!("could not read the tree of commit {id}"))?
            .detach())
    }

    fn commit_time(&self, id: ObjectId) -> Result<i64> {
        let commit = self
            .repo
            .repo
            .find_commit(id)
            .with_context(|| format!("could not read commit {id}"))?;
        Ok(commit
            .time()
            .with_context(|| format!("could not read the time of commit {id}"))?
            .seconds)
    }

    fn short(&self, id: ObjectId) -> String {
        use gix::prelude::ObjectIdExt;
        id.attach(&self.repo.repo)
            .shorten()
            .map(|p| p.to_string())
            .unwrap_or_else(|_| id.to_hex_with_len(7).to_string())
    }

    /// Ask git for every merge the last round wanted, in one process.
    pub fn run_merges(&mut self) -> Result<()> {
        let wanted: Vec<(ObjectId, ObjectId, ObjectId)> = self.wanted.drain().collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let requests: Vec<_> = wanted
            .iter()
            .map(|(b, o, t)| (oid(b), oid(o), oid(t)))
            .collect();
        let results = self.repo.merge_trees(&requests)?;
        for (key, result) in wanted.into_iter().zip(results) {
            let merged = match result {
                Some(tree) => Merged::Clean(gid(tree)?),
                None => Merged::Conflicts,
            };
            self.merges.insert(key, merged);
        }
        Ok(())
    }
}
