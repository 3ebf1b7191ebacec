//! Trees as the proof of content reads them: parsed once per proof, compared
//! path by path.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use anyhow::{Context, Result};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryMode;
use gix::ObjectId;

/// A tree entry as the proof compares it; `None` is "no such path".
pub(super) type Entry = Option<(EntryMode, ObjectId)>;

/// A tree's entries: name, mode, object.
type Entries = Rc<Vec<(BString, EntryMode, ObjectId)>>;

/// A path that changes between two trees, and its two versions.
#[derive(Clone, Debug)]
pub(super) struct Change {
    pub path: BString,
    pub base: Entry,
    pub tip: Entry,
}

/// How a tree holds a set of changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Holds {
    /// Every changed path holds the tip's version: merging changes nothing.
    All,
    /// Some path still holds the base's version: merging would bring it in.
    Missing,
    /// Both sides changed a path: git's merge decides.
    Merge,
}

pub(super) struct Trees<'r> {
    repo: &'r gix::Repository,
    cache: HashMap<ObjectId, Entries>,
}

impl<'r> Trees<'r> {
    pub fn new(repo: &'r gix::Repository) -> Trees<'r> {
        Trees {
            repo,
            cache: HashMap::new(),
        }
    }

    /// The entries of a tree, parsed once per proof (a few hundred at most are
    /// kept: the walk needs each tree only briefly).
    fn entries(&mut self, tree: ObjectId) -> Result<Entries> {
        if let Some(e) = self.cache.get(&tree) {
            return Ok(e.clone());
        }
        let t = self
            .repo
            .find_tree(tree)
            .with_context(|| format!("could not read tree {tree}"))?;
        let decoded = t
            .decode()
            .with_context(|| format!("could not read tree {tree}"))?;
        let entries: Vec<(BString, EntryMode, ObjectId)> = decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_owned(), e.mode, e.oid.to_owned()))
            .collect();
        if self.cache.len() >= 512 {
            self.cache.clear();
        }
        let entries = Rc::new(entries);
        self.cache.insert(tree, entries.clone());
        Ok(entries)
    }

    /// The entry at `path` (slash-separated) in `tree`.
    pub fn lookup(&mut self, tree: ObjectId, path: &BStr) -> Result<Entry> {
        let mut current = tree;
        let mut parts = path.split(|b| *b == b'/').peekable();
        while let Some(name) = parts.next() {
            let entries = self.entries(current)?;
            let Some((_, mode, id)) = entries.iter().find(|(n, _, _)| n.as_slice() == name) else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                // A directory is no file: what the diff calls an entry is a leaf.
                return Ok((!mode.is_tree()).then_some((*mode, *id)));
            }
            if !mode.is_tree() {
                return Ok(None);
            }
            current = *id;
        }
        Ok(None)
    }

    /// How `tree` holds `changes`. A path deleted there too is git's to
    /// decide: it may have been renamed there, and git's merge then says
    /// rename/delete, not "nothing to change".
    pub fn holds(&mut self, tree: ObjectId, changes: &[Change]) -> Result<Holds> {
        let mut all = true;
        for c in changes {
            let here = self.lookup(tree, c.path.as_bstr())?;
            if here == c.tip {
                if c.tip.is_none() {
                    all = false;
                }
                continue;
            }
            all = false;
            if here == c.base {
                return Ok(Holds::Missing);
            }
        }
        Ok(if all { Holds::All } else { Holds::Merge })
    }

    /// Every changed path holds the base's version in `tree`.
    pub fn all_at_base(&mut self, tree: ObjectId, changes: &[Change]) -> Result<bool> {
        for c in changes {
            if self.lookup(tree, c.path.as_bstr())? != c.base {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The paths (not directories) whose entry differs between trees `a` and
    /// `b`; `a` `None` is the empty tree.
    pub fn diff(&mut self, a: Option<ObjectId>, b: ObjectId) -> Result<Vec<Change>> {
        let mut out = Vec::new();
        self.diff_into(a, Some(b), &mut BString::default(), &mut out)?;
        Ok(out)
    }

    fn diff_into(
        &mut self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
        prefix: &mut BString,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        if a == b {
            return Ok(());
        }
        let ea = match a {
            Some(t) => self.entries(t)?,
            None => Rc::new(Vec::new()),
        };
        let eb = match b {
            Some(t) => self.entries(t)?,
            None => Rc::new(Vec::new()),
        };
        let mut names: BTreeMap<&BStr, (Entry, Entry)> = BTreeMap::new();
        for (n, m, id) in ea.iter() {
            names.entry(n.as_bstr()).or_default().0 = Some((*m, *id));
        }
        for (n, m, id) in eb.iter() {
            names.entry(n.as_bstr()).or_default().1 = Some((*m, *id));
        }
        for (name, (x, y)) in names {
            if x == y {
                continue;
            }
            let len = prefix.len();
            if !prefix.is_empty() {
                prefix.push(b'/');
            }
            prefix.extend_from_slice(name);
            let tree_of = |e: Entry| e.filter(|(m, _)| m.is_tree()).map(|(_, id)| id);
            let leaf_of = |e: Entry| e.filter(|(m, _)| !m.is_tree());
            let (tx, ty) = (tree_of(x), tree_of(y));
            if tx.is_some() || ty.is_some() {
                self.diff_into(tx, ty, prefix, out)?;
            }
            let (lx, ly) = (leaf_of(x), leaf_of(y));
            if lx != ly {
                out.push(Change {
                    path: prefix.clone(),
                    base: lx,
                    tip: ly,
                });
            }
            prefix.truncate(len);
        }
        Ok(())
    }
}
