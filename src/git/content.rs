//! Proof of content: whether the changes of a session that no remote-tracking
//! ref reaches are already in an integration ref (`origin/main`), the way squash
//! merges, rebase merges and cherry-picks put them there.
//!
//! The rule: merging the session tip into the integration ref would change
//! nothing — git's three-way merge of the tip into a commit of the ref, from
//! their merge base, gives that commit's tree — at the ref's tip or at any commit
//! of its first-parent history since the session forked (a revert or a later
//! edit there does not make the work unpublished again: it was published).
//!
//! Most of it is decided in-process and costs a few tree reads: the paths the
//! session changes (its merge base's tree against its tip's), and, along the
//! ref's first-parent history, only the commits that touch one of those paths.
//! Where every such path holds the tip's version, merging changes nothing; where
//! one still holds the merge base's version, merging would bring it in. Only
//! where both sides changed a path is git asked: `git merge-tree --write-tree`
//! (one process for all of them, `--stdin`), into a temporary object directory
//! so that nothing is left in the repository.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use anyhow::{Context, Result};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::{gid, oid, Oid, Repo};
use crate::model::{Evidence, Since, Unmerged};

/// How far back along an integration ref's first-parent history gc looks.
const MAX_CHAIN: usize = 10_000;

/// A ref a session's changes may have been merged into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegrationRef {
    /// Short, as people say it: `origin/main`.
    pub name: String,
    /// Full: `refs/remotes/origin/main`.
    pub refname: String,
    pub tip: Oid,
    /// Why this ref: `origin/HEAD`, `origin/HEAD is not set` (then `main`, else
    /// `master`), `bullpen.gc.integrationRef`.
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
            let chosen = match target {
                Some(t) if by_name.contains_key(t.as_str()) => Some((t, format!("{remote}/HEAD"))),
                _ => ["main", "master"].iter().find_map(|b| {
                    let full = format!("refs/remotes/{remote}/{b}");
                    by_name
                        .contains_key(full.as_str())
                        .then(|| (full, format!("{remote}/HEAD is not set")))
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

/// A tree entry as the proof compares it; `None` is "no such path".
type Entry = Option<(EntryMode, ObjectId)>;

/// A tree's entries: name, mode, object.
type Entries = Rc<Vec<(BString, EntryMode, ObjectId)>>;

/// A path a session (or one of its commits) changes, and its two versions.
#[derive(Clone, Debug)]
struct Change {
    path: BString,
    base: Entry,
    tip: Entry,
}

/// One step of an integration ref's first-parent history.
#[derive(Clone, Copy, Debug)]
struct Link {
    id: ObjectId,
    tree: ObjectId,
    time: i64,
}

/// An integration ref's first-parent history, newest first, with the paths
/// each commit changed against its first parent.
struct Chain {
    links: Vec<Link>,
    /// Path → indices (into `links`) of the commits that changed it.
    touched: HashMap<BString, Vec<usize>>,
    /// The oldest link has no parent (or the cap is reached).
    complete: bool,
}

/// How a commit of an integration ref holds one session's changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holds {
    /// Every changed path holds the tip's version: merging changes nothing.
    All,
    /// Some path still holds the merge base's version: merging would bring it in.
    Missing,
    /// Both sides changed a path: git's merge decides.
    Merge,
}

/// git's answer for one merge.
#[derive(Clone, Copy, Debug)]
enum Merged {
    Clean(ObjectId),
    Conflicts,
}

struct Proof<'r> {
    repo: &'r Repo,
    chains: HashMap<ObjectId, Chain>,
    trees: HashMap<ObjectId, Entries>,
    bases: HashMap<(ObjectId, ObjectId), Option<ObjectId>>,
    /// (base, ours, theirs) → git's merge.
    merges: HashMap<(ObjectId, ObjectId, ObjectId), Merged>,
    wanted: HashSet<(ObjectId, ObjectId, ObjectId)>,
    graph: gix::revwalk::Graph<
        'r,
        'r,
        gix::revwalk::graph::Commit<gix::revision::plumbing::merge_base::Flags>,
    >,
}

/// What one (session, ref) came to.
enum Verdict {
    Landed { at: usize, since: Since },
    NotThere { present: bool, conflicts: bool },
}

impl<'r> Proof<'r> {
    fn new(repo: &'r Repo) -> Proof<'r> {
        Proof {
            repo,
            chains: HashMap::new(),
            trees: HashMap::new(),
            bases: HashMap::new(),
            merges: HashMap::new(),
            wanted: HashSet::new(),
            graph: repo.repo.revision_graph(None),
        }
    }

    /// `None`: git must be asked for merges first.
    fn session(&mut self, q: &ContentQuery, refs: &[IntegrationRef]) -> Result<Option<Content>> {
        let tip = gid(q.tip)?;
        let tip_tree = self.commit_tree(tip)?;
        let mut best: Option<Unmerged> = None;
        let mut changes_nothing = false;
        let mut undecided = false;
        for r in refs {
            let head = gid(r.tip)?;
            let Some(base) = self.merge_base(tip, head)? else {
                continue;
            };
            let base_tree = self.commit_tree(base)?;
            let changes = self.diff(base_tree, tip_tree)?;
            if changes.is_empty() {
                changes_nothing = true;
                continue;
            }
            let base_time = self.commit_time(base)?;
            let seg = self.segment(head, base, base_time)?;
            let Some(verdict) = self.verdict(head, seg, &changes, base, tip)? else {
                undecided = true;
                continue;
            };
            match verdict {
                Verdict::Landed { at, since } => {
                    // Which commits of the ref brought it in: one (a squash), or
                    // several, each with some of the session's commits.
                    let landings = if q.commits.len() < 2 {
                        Vec::new()
                    } else {
                        match self.per_commit(q, head, seg)? {
                            None => {
                                undecided = true;
                                continue;
                            }
                            Some(l) => l,
                        }
                    };
                    let chain = &self.chains[&head];
                    let at_id = chain.links[at].id;
                    let distinct: HashSet<usize> = landings.iter().flatten().copied().collect();
                    let short = self.short(at_id);
                    let evidence = if distinct.len() >= 2 {
                        Evidence::Rebased {
                            into: r.name.clone(),
                            commits: distinct.len(),
                            last: oid(at_id),
                            short,
                            since,
                        }
                    } else {
                        Evidence::Squashed {
                            into: r.name.clone(),
                            commit: oid(at_id),
                            short,
                            since,
                        }
                    };
                    return Ok(Some(Content::Published(evidence)));
                }
                Verdict::NotThere { present, conflicts } => {
                    let mut found = None;
                    if present {
                        match self.per_commit(q, head, seg)? {
                            None => {
                                undecided = true;
                                continue;
                            }
                            Some(landings) => {
                                let merged = landings.iter().filter(|l| l.is_some()).count();
                                if merged > 0 {
                                    found = Some(Unmerged::Partly {
                                        into: r.name.clone(),
                                        merged,
                                        of: landings.len(),
                                    });
                                }
                            }
                        }
                    }
                    if found.is_none() && conflicts {
                        found = Some(Unmerged::Conflicts {
                            into: r.name.clone(),
                        });
                    }
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
            }
        }
        if undecided {
            return Ok(None);
        }
        if best.is_none() && changes_nothing {
            // From where it forked, its commits change no file: merging it changes
            // nothing, and proves nothing either (its commits would be lost).
            return Ok(Some(Content::Unmerged(Some(Unmerged::NoChanges))));
        }
        Ok(Some(Content::Unmerged(best)))
    }

    /// For each of the session's own commits (merges and commits that change
    /// nothing left out): the index of the oldest commit of the ref's history
    /// (within `seg`) that holds its changes, if any. `None`: git must be asked.
    fn per_commit(
        &mut self,
        q: &ContentQuery,
        head: ObjectId,
        seg: usize,
    ) -> Result<Option<Vec<Option<usize>>>> {
        let mut out = Vec::new();
        let mut undecided = false;
        for c in &q.commits {
            let id = gid(c)?;
            let commit = self
                .repo
                .repo
                .find_commit(id)
                .with_context(|| format!("could not read commit {c}"))?;
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            let [parent] = parents.as_slice() else {
                continue;
            };
            let tree = self.commit_tree(id)?;
            let parent_tree = self.commit_tree(*parent)?;
            let changes = self.diff(parent_tree, tree)?;
            if changes.is_empty() {
                continue;
            }
            match self.verdict(head, seg, &changes, *parent, id)? {
                None => undecided = true,
                Some(Verdict::Landed { at, .. }) => out.push(Some(at)),
                Some(Verdict::NotThere { .. }) => out.push(None),
            }
        }
        Ok((!undecided).then_some(out))
    }

    /// Where along the ref's history (indices `0..=seg`, `seg` being where the
    /// session forked) `changes` (from `base` to `theirs`) landed: the oldest
    /// commit that holds them all. `None`: git must be asked first.
    fn verdict(
        &mut self,
        head: ObjectId,
        seg: usize,
        changes: &[Change],
        base: ObjectId,
        theirs: ObjectId,
    ) -> Result<Option<Verdict>> {
        // The commits where any of these paths changed, and the two ends.
        let mut at: Vec<usize> = {
            let chain = &self.chains[&head];
            let mut v: Vec<usize> = changes
                .iter()
                .filter_map(|c| chain.touched.get(&c.path))
                .flatten()
                .copied()
                .filter(|&k| k < seg)
                .collect();
            v.push(0);
            v.push(seg);
            v
        };
        at.sort_unstable();
        at.dedup();
        let mut undecided = false;
        let mut landed = None;
        let mut present = false;
        let mut conflicts_at_tip = false;
        let mut tip_holds = None;
        // Oldest first: the first that holds everything is where it landed.
        for &k in at.iter().rev() {
            let link = self.chains[&head].links[k];
            let holds = self.holds(link.tree, changes)?;
            let contained = match holds {
                Holds::All => Some(true),
                Holds::Missing => Some(false),
                Holds::Merge => {
                    let key = (base, link.id, theirs);
                    match self.merges.get(&key) {
                        Some(Merged::Clean(tree)) => Some(*tree == link.tree),
                        Some(Merged::Conflicts) => {
                            if k == 0 {
                                conflicts_at_tip = true;
                            }
                            Some(false)
                        }
                        None => {
                            self.wanted.insert(key);
                            None
                        }
                    }
                }
            };
            if holds != Holds::Missing || self.any_present(link.tree, changes)? {
                present = true;
            }
            match contained {
                None => undecided = true,
                Some(true) if landed.is_none() => landed = Some(k),
                Some(_) => {}
            }
            if k == 0 {
                tip_holds = contained;
            }
        }
        if undecided {
            return Ok(None);
        }
        Ok(Some(match landed {
            Some(k) => {
                let since = match tip_holds {
                    Some(true) => Since::Unchanged,
                    _ if self.all_at_base(self.chains[&head].links[0].tree, changes)? => {
                        Since::Reverted
                    }
                    _ => Since::Changed,
                };
                Verdict::Landed { at: k, since }
            }
            None => Verdict::NotThere {
                present,
                conflicts: conflicts_at_tip,
            },
        }))
    }

    fn holds(&mut self, tree: ObjectId, changes: &[Change]) -> Result<Holds> {
        let mut all = true;
        for c in changes {
            let here = self.lookup(tree, c.path.as_bstr())?;
            if here == c.tip {
                continue;
            }
            all = false;
            if here == c.base {
                return Ok(Holds::Missing);
            }
        }
        Ok(if all { Holds::All } else { Holds::Merge })
    }

    /// Some changed path holds the tip's version.
    fn any_present(&mut self, tree: ObjectId, changes: &[Change]) -> Result<bool> {
        for c in changes {
            if self.lookup(tree, c.path.as_bstr())? == c.tip {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn all_at_base(&mut self, tree: ObjectId, changes: &[Change]) -> Result<bool> {
        for c in changes {
            if self.lookup(tree, c.path.as_bstr())? != c.base {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// How many links of `head`'s chain are newer than the fork point `base`:
    /// the index of the first link that is `base` or older than it. The chain
    /// is extended as far as needed (and as `MAX_CHAIN` allows).
    fn segment(&mut self, head: ObjectId, base: ObjectId, base_time: i64) -> Result<usize> {
        if !self.chains.contains_key(&head) {
            let tree = self.commit_tree(head)?;
            let time = self.commit_time(head)?;
            self.chains.insert(
                head,
                Chain {
                    links: vec![Link {
                        id: head,
                        tree,
                        time,
                    }],
                    touched: HashMap::new(),
                    complete: false,
                },
            );
        }
        let mut k = 0;
        loop {
            let link = self.chains[&head].links[k];
            if link.id == base || link.time < base_time {
                return Ok(k);
            }
            if k + 1 == self.chains[&head].links.len() && !self.extend(head)? {
                return Ok(k);
            }
            k += 1;
        }
    }

    /// One more link at the old end of `head`'s chain; `false` at its root (or the cap).
    fn extend(&mut self, head: ObjectId) -> Result<bool> {
        let (last, len, complete) = {
            let c = &self.chains[&head];
            (c.links[c.links.len() - 1], c.links.len(), c.complete)
        };
        if complete || len >= MAX_CHAIN {
            return Ok(false);
        }
        let commit = self
            .repo
            .repo
            .find_commit(last.id)
            .with_context(|| format!("could not read commit {}", last.id))?;
        let Some(parent) = commit.parent_ids().next().map(|p| p.detach()) else {
            if let Some(c) = self.chains.get_mut(&head) {
                c.complete = true;
            }
            return Ok(false);
        };
        let tree = self.commit_tree(parent)?;
        let time = self.commit_time(parent)?;
        let changed = self.diff(tree, last.tree)?;
        let chain = self.chains.get_mut(&head).expect("the chain exists");
        let index = chain.links.len() - 1;
        for c in changed {
            chain.touched.entry(c.path).or_default().push(index);
        }
        chain.links.push(Link {
            id: parent,
            tree,
            time,
        });
        Ok(true)
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

    /// The entries of a tree, parsed once per proof (a few hundred at most are
    /// kept: the walk needs each tree only briefly).
    fn entries(&mut self, tree: ObjectId) -> Result<Entries> {
        if let Some(e) = self.trees.get(&tree) {
            return Ok(e.clone());
        }
        let t = self
            .repo
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
        if self.trees.len() >= 512 {
            self.trees.clear();
        }
        let entries = Rc::new(entries);
        self.trees.insert(tree, entries.clone());
        Ok(entries)
    }

    /// The entry at `path` (slash-separated) in `tree`.
    fn lookup(&mut self, tree: ObjectId, path: &BStr) -> Result<Entry> {
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

    /// The paths (not directories) whose entry differs between trees `a` and `b`.
    fn diff(&mut self, a: ObjectId, b: ObjectId) -> Result<Vec<Change>> {
        let mut out = Vec::new();
        self.diff_into(Some(a), Some(b), &mut BString::default(), &mut out)?;
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

    /// Ask git for every merge the last round wanted, in one process.
    fn run_merges(&mut self) -> Result<()> {
        let wanted: Vec<(ObjectId, ObjectId, ObjectId)> = self.wanted.drain().collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let requests: Vec<(Oid, Oid, Oid)> = wanted
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
