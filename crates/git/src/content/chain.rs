//! An integration ref's first-parent history, newest first, read as far as
//! the proof needs, with the paths each commit changed against its first parent.

use std::collections::{BTreeSet, HashMap};

use anyhow::{Context, Result};
use gix::bstr::BString;
use gix::ObjectId;

use super::trees::Trees;

/// How far back along an integration ref's first-parent history gc looks.
const MAX_CHAIN: usize = 10_000;

/// One step of the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Link {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub time: i64,
}

pub(super) struct Chain {
    /// Newest first: `links[0]` is the ref's tip, `links[k + 1]` the first
    /// parent of `links[k]`.
    pub links: Vec<Link>,
    /// Path → indices `k` whose link changed it against `links[k + 1]`.
    touched: HashMap<BString, Vec<usize>>,
    /// The oldest link has no parent (or the cap is reached).
    complete: bool,
}

impl Chain {
    pub fn new(tip: Link) -> Chain {
        Chain {
            links: vec![tip],
            touched: HashMap::new(),
            complete: false,
        }
    }

    /// One more link at the old end; `false` at the root (or the cap).
    pub fn extend(&mut self, repo: &gix::Repository, trees: &mut Trees<'_>) -> Result<bool> {
        let last = self.links[self.links.len() - 1];
        if self.complete || self.links.len() >= MAX_CHAIN {
            return Ok(false);
        }
        let commit = repo
            .find_commit(last.id)
            .with_context(|| format!("could not read commit {}", last.id))?;
        let Some(parent) = commit.parent_ids().next().map(|p| p.detach()) else {
            self.complete = true;
            return Ok(false);
        };
        let parent = repo
            .find_commit(parent)
            .with_context(|| format!("could not read commit {parent}"))?;
        let link = Link {
            id: parent.id,
            tree: parent
                .tree_id()
                .with_context(|| format!("could not read the tree of commit {}", parent.id))?
                .detach(),
            time: parent
                .time()
                .with_context(|| format!("could not read the time of commit {}", parent.id))?
                .seconds,
        };
        let index = self.links.len() - 1;
        for c in trees.diff(Some(link.tree), last.tree)? {
            self.touched.entry(c.path).or_default().push(index);
        }
        self.links.push(link);
        Ok(true)
    }

    /// The links among `0..seg` worth asking whether they hold a change of
    /// `paths`, oldest first: for each run of links that agree on every one of
    /// those paths, its oldest (the one that brought that state in) and its
    /// newest (where git's merge decides, its rename detection also sees the
    /// other paths, which may differ along the run).
    pub fn candidates<'p>(
        &self,
        paths: impl IntoIterator<Item = &'p BString>,
        seg: usize,
    ) -> Vec<usize> {
        if seg == 0 {
            return Vec::new();
        }
        let mut at: BTreeSet<usize> = BTreeSet::new();
        for k in paths
            .into_iter()
            .filter_map(|p| self.touched.get(p))
            .flatten()
            .copied()
            .filter(|&k| k < seg)
        {
            at.insert(k);
            if k + 1 < seg {
                at.insert(k + 1);
            }
        }
        at.insert(0);
        at.insert(seg - 1);
        at.into_iter().rev().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(n: u8) -> Link {
        Link {
            id: ObjectId::from_bytes_or_panic(&[n; 20]),
            tree: ObjectId::from_bytes_or_panic(&[n; 20]),
            time: 0,
        }
    }

    /// Links 0..6; "a" changed by links 1 and 4, "b" by link 2.
    fn chain() -> Chain {
        let mut c = Chain::new(link(0));
        c.links.extend((1..6).map(link));
        c.touched.insert("a".into(), vec![1, 4]);
        c.touched.insert("b".into(), vec![2]);
        c
    }

    #[test]
    fn candidates_are_the_oldest_link_of_each_run_newer_than_the_fork() {
        let c = chain();
        let a: BString = "a".into();
        let b: BString = "b".into();
        let none: BString = "none".into();
        // The fork at 5: runs 0..=1, 2..=4, each by its ends; the fork itself
        // is never one.
        assert_eq!(c.candidates([&a], 5), vec![4, 2, 1, 0]);
        assert_eq!(c.candidates([&a, &b], 5), vec![4, 3, 2, 1, 0]);
        // The fork at 3: link 4 is older, link 2 ends the last run.
        assert_eq!(c.candidates([&a], 3), vec![2, 1, 0]);
        assert_eq!(c.candidates([&none], 3), vec![2, 0]);
        // Forked at the tip: nothing is newer.
        assert_eq!(c.candidates([&a], 0), Vec::<usize>::new());
        assert_eq!(c.candidates([&a], 1), vec![0]);
    }
}
