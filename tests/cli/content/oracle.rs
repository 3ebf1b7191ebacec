//! The proof by content against an independent oracle, over random histories.
//!
//! Each case is a history written with `git fast-import` (ten cases to a
//! repository, each under refs of its own): a main line that moves on, merges
//! with merge commits, squashes, cherry-picks, rebases and reverts, over the
//! same files as one or two sessions whose commits add, change, delete,
//! rename, chmod, revert and cancel each other (and merge main), some started
//! on a feature branch main later merges. gc answers in two ways: through the
//! library, with the calls gc's facts make (one publish walk, one proof of
//! content for every session: 300 cases, fast), and through the real binary,
//! the sessions spawned on their tips and `gc --dry-run --json` (60 cases:
//! the whole path, report included).
//!
//! The oracle knows the history from the generator's own model, not from gix:
//! which commits no remote-tracking ref reaches, the merge bases, and, for
//! each such commit that changes something, every candidate landing (a commit
//! of the integration ref newer than a merge base and descending from it: the
//! whole ancestry path, not only the first-parent line gc reads). A commit has
//! landed on a candidate when git cherry-picking it there (`git merge-tree
//! --write-tree` from its first parent) is clean and gives the candidate's
//! tree.
//!
//! Checked per session: gc never says published by content where the oracle
//! does not (gc may keep more, never less); every landing gc names is one the
//! oracle confirms, for exactly the commits the oracle asks about; published
//! by reachability exactly when no commit is unpublished; and, where the
//! first-parent line is all there is to look at (one merge base), gc finds
//! what the oracle finds on it but for at most one in fifty (a landing that
//! git's rename detection makes in the middle of a run of main commits), so
//! the test cannot pass by keeping everything.
//!
//! `BULLPEN_ORACLE_CASES` (default 300), `BULLPEN_ORACLE_GC_CASES` (default
//! 60) and `BULLPEN_ORACLE_SEED` choose the cases; a failure prints the seed of
//! its case, which `BULLPEN_ORACLE_CASE=<seed>` runs alone;
//! `BULLPEN_ORACLE_KEEP=1` keeps the repository of a failing batch.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::Value;

use crate::support::Env;

/// splitmix64: small, seeded, the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())].clone()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct File {
    exec: bool,
    lines: Vec<String>,
}

type Tree = BTreeMap<String, File>;

struct Commit {
    parents: Vec<usize>,
    tree: Tree,
    what: String,
}

const PATHS: &[&str] = &["a", "b", "c", "d/e", "d/f", "g/h/i", "j"];
const LINES: usize = 8;

/// One session as the generator builds it.
struct Session {
    id: String,
    /// Its commits in order, the fork first (not its own).
    line: Vec<usize>,
}

/// A history: commits in an order where parents come first, the refs.
struct History {
    commits: Vec<Commit>,
    main: Vec<usize>,
    sessions: Vec<Session>,
    /// refs/remotes/* → commit.
    remote: BTreeMap<String, usize>,
    /// All commits at one time, or one minute apart in order.
    same_time: bool,
    fresh: usize,
}

impl History {
    fn tree(&self, c: usize) -> &Tree {
        &self.commits[c].tree
    }

    fn add(&mut self, parents: Vec<usize>, tree: Tree, what: String) -> usize {
        self.commits.push(Commit {
            parents,
            tree,
            what,
        });
        self.commits.len() - 1
    }

    fn word(&mut self) -> String {
        self.fresh += 1;
        format!("v{}", self.fresh)
    }

    /// `from`'s change to `to`, applied onto `onto` path by path (line by line
    /// where `onto` changed the file too): how the generator squashes,
    /// cherry-picks, merges and reverts. Not git's merge: any result is a
    /// history worth asking about.
    fn apply(&self, rng: &mut Rng, onto: &Tree, from: &Tree, to: &Tree) -> Tree {
        let mut out = onto.clone();
        let paths: BTreeSet<&String> = from.keys().chain(to.keys()).collect();
        for p in paths {
            let (f, t) = (from.get(p), to.get(p));
            if f == t {
                continue;
            }
            if rng.chance(4) {
                // A forge that lost this part of the change.
                continue;
            }
            match (f, t, onto.get(p)) {
                (_, None, _) => {
                    out.remove(p);
                }
                (Some(f), Some(t), Some(o)) if o != f && o.lines.len() == t.lines.len() => {
                    let lines = (0..t.lines.len())
                        .map(|i| {
                            if f.lines.get(i) != Some(&t.lines[i]) {
                                t.lines[i].clone()
                            } else {
                                o.lines[i].clone()
                            }
                        })
                        .collect();
                    let exec = if f.exec != t.exec { t.exec } else { o.exec };
                    out.insert(p.clone(), File { exec, lines });
                }
                (_, Some(t), _) => {
                    out.insert(p.clone(), t.clone());
                }
            }
        }
        out
    }

    /// A random change of `tree`, described.
    fn edit(&mut self, rng: &mut Rng, tree: &Tree) -> (Tree, String) {
        let mut out = tree.clone();
        let present: Vec<String> = tree.keys().cloned().collect();
        let absent: Vec<String> = PATHS
            .iter()
            .map(|p| p.to_string())
            .filter(|p| {
                !tree.contains_key(p) && !tree.keys().any(|k| k.starts_with(&format!("{p}/")))
            })
            .filter(|p| !tree.keys().any(|k| p.starts_with(&format!("{k}/"))))
            .collect();
        let what = match rng.below(10) {
            0 | 1 if !absent.is_empty() => {
                let p = rng.pick(&absent);
                let w = self.word();
                let lines = (0..LINES).map(|i| format!("{p}:{i}:{w}")).collect();
                out.insert(p.clone(), File { exec: false, lines });
                format!("add {p}")
            }
            2 if !present.is_empty() => {
                let p = rng.pick(&present);
                out.remove(&p);
                format!("delete {p}")
            }
            3 if !present.is_empty() && !absent.is_empty() => {
                let p = rng.pick(&present);
                let q = rng.pick(&absent);
                let mut f = out.remove(&p).expect("present");
                if rng.chance(40) {
                    let w = self.word();
                    f.lines[0] = format!("{q}:0:{w}");
                }
                out.insert(q.clone(), f);
                format!("rename {p} {q}")
            }
            4 if !present.is_empty() => {
                let p = rng.pick(&present);
                let f = out.get_mut(&p).expect("present");
                f.exec = !f.exec;
                format!("chmod {p}")
            }
            _ if !present.is_empty() => {
                let p = rng.pick(&present);
                // Lines far apart merge cleanly; any line, now and then, conflicts.
                let i = if rng.chance(75) {
                    rng.pick(&[0, 3, 6])
                } else {
                    rng.below(LINES)
                };
                let w = self.word();
                let f = out.get_mut(&p).expect("present");
                f.lines[i] = format!("{p}:{i}:{w}");
                format!("edit {p}:{i}")
            }
            _ => {
                let w = self.word();
                let lines = (0..LINES).map(|i| format!("a:{i}:{w}")).collect();
                out.insert("a".into(), File { exec: false, lines });
                "add a".to_owned()
            }
        };
        (out, what)
    }

    fn main_tip(&self) -> usize {
        *self.main.last().expect("main has a root")
    }

    fn on_main(&mut self, parents: Vec<usize>, tree: Tree, what: String) {
        let c = self.add(parents, tree, format!("main: {what}"));
        self.main.push(c);
    }

    /// One step of a session.
    fn session_step(&mut self, rng: &mut Rng, s: usize) {
        let tip = *self.sessions[s].line.last().expect("a fork");
        let own = self.sessions[s].line.len() - 1;
        let tree = self.tree(tip).clone();
        let (parents, tree, what) = match rng.below(12) {
            0 if own >= 1 => {
                // Revert one of its own commits.
                let k = 1 + rng.below(own);
                let c = self.sessions[s].line[k];
                let p = self.commits[c].parents[0];
                let t = self.apply(rng, &tree, &self.tree(c).clone(), &self.tree(p).clone());
                (vec![tip], t, format!("revert its #{k}"))
            }
            1 if own >= 1 => {
                // Cancel the last commit: back to the tree before it.
                let p = self.commits[tip].parents[0];
                (
                    vec![tip],
                    self.tree(p).clone(),
                    "cancel the last".to_owned(),
                )
            }
            2 => (vec![tip], tree, "empty".to_owned()),
            3 => {
                // Merge main in.
                let m = self.main_tip();
                let fork = self.sessions[s].line[0];
                let t = self.apply(rng, &tree, &self.tree(fork).clone(), &self.tree(m).clone());
                (vec![tip, m], t, "merge main".to_owned())
            }
            _ => {
                let (t, what) = self.edit(rng, &tree);
                (vec![tip], t, what)
            }
        };
        let id = self.sessions[s].id.clone();
        let c = self.add(parents, tree, format!("{id}: {what}"));
        self.sessions[s].line.push(c);
    }

    /// One step of main: someone else's commit, or one of the ways a forge
    /// takes a session's work.
    fn main_step(&mut self, rng: &mut Rng) {
        let m = self.main_tip();
        let mt = self.tree(m).clone();
        let s = rng.below(self.sessions.len());
        let (line, id) = match self.sessions.get(s) {
            Some(s) => (s.line.clone(), s.id.clone()),
            None => (vec![m], String::new()),
        };
        let own = line.len() - 1;
        match rng.below(10) {
            0..=2 if own >= 1 => {
                // Squash the session up to one of its commits.
                let k = if rng.chance(70) {
                    own
                } else {
                    1 + rng.below(own)
                };
                let t = self.apply(
                    rng,
                    &mt,
                    &self.tree(line[0]).clone(),
                    &self.tree(line[k]).clone(),
                );
                self.on_main(vec![m], t, format!("squash {id} to #{k}"));
            }
            3 if own >= 1 => {
                // Rebase (or cherry-pick) a run of its commits.
                let a = 1 + rng.below(own);
                let b = a + rng.below(own - a + 1);
                for (k, &c) in line.iter().enumerate().take(b + 1).skip(a) {
                    let p = self.commits[c].parents[0];
                    let cur = self.tree(self.main_tip()).clone();
                    let t = self.apply(rng, &cur, &self.tree(p).clone(), &self.tree(c).clone());
                    let m = self.main_tip();
                    self.on_main(vec![m], t, format!("pick {id} #{k}"));
                }
            }
            4 if own >= 1 => {
                // A merge commit of one of its commits: reachable from then on.
                let k = 1 + rng.below(own);
                let c = line[k];
                let t = self.apply(rng, &mt, &self.tree(line[0]).clone(), &self.tree(c).clone());
                self.on_main(vec![m, c], t, format!("merge {id} #{k}"));
            }
            5 if self.main.len() >= 2 => {
                // Revert one of main's own commits.
                let k = 1 + rng.below(self.main.len() - 1);
                let c = self.main[k];
                let p = self.commits[c].parents[0];
                let t = self.apply(rng, &mt, &self.tree(c).clone(), &self.tree(p).clone());
                self.on_main(vec![m], t, format!("revert main #{k}"));
            }
            _ => {
                let (t, what) = self.edit(rng, &mt);
                self.on_main(vec![m], t, what);
            }
        }
    }

    fn generate(rng: &mut Rng) -> History {
        let mut h = History {
            commits: Vec::new(),
            main: Vec::new(),
            sessions: Vec::new(),
            remote: BTreeMap::new(),
            same_time: rng.chance(50),
            fresh: 0,
        };
        let mut root = Tree::new();
        for p in ["a", "b", "d/e", "j"] {
            let lines = (0..LINES).map(|i| format!("{p}:{i}:0")).collect();
            root.insert(p.to_owned(), File { exec: false, lines });
        }
        let r = h.add(Vec::new(), root, "root".into());
        h.main.push(r);
        for _ in 0..rng.below(3) {
            h.main_step(rng);
        }
        let sessions = 1 + rng.below(2);
        for n in 0..sessions {
            // From main, or from a feature branch main takes later with a
            // merge commit (the session's fork is then the feature's commit).
            let m = h.main_tip();
            let fork = if rng.chance(25) {
                let from = m;
                let (t, what) = h.edit(rng, &h.tree(m).clone());
                let f1 = h.add(vec![m], t, format!("feature: {what}"));
                let (t, what) = h.edit(rng, &h.tree(f1).clone());
                let f2 = h.add(vec![f1], t, format!("feature: {what}"));
                let f = if rng.chance(50) { f1 } else { f2 };
                // main moves on, then merges the feature.
                h.main_step(rng);
                let m = h.main_tip();
                let t = h.apply(
                    rng,
                    &h.tree(m).clone(),
                    &h.tree(from).clone(),
                    &h.tree(f2).clone(),
                );
                h.on_main(vec![m, f2], t, "merge feature".into());
                if rng.chance(30) {
                    h.remote.insert("refs/remotes/origin/feature".into(), f2);
                }
                f
            } else {
                m
            };
            h.sessions.push(Session {
                id: format!("s{n}"),
                line: vec![fork],
            });
            for _ in 0..1 + rng.below(3) {
                h.session_step(rng, n);
            }
        }
        for _ in 0..3 + rng.below(8) {
            if rng.chance(55) {
                let s = rng.below(h.sessions.len());
                h.session_step(rng, s);
            } else {
                h.main_step(rng);
            }
        }
        // Often the forge squashes the whole session last, and sometimes the
        // session goes on after that (the undo of part of it, say).
        for s in 0..h.sessions.len() {
            if rng.chance(45) {
                let line = h.sessions[s].line.clone();
                let m = h.main_tip();
                let t = h.apply(
                    rng,
                    &h.tree(m).clone(),
                    &h.tree(line[0]).clone(),
                    &h.tree(*line.last().expect("tip")).clone(),
                );
                let id = h.sessions[s].id.clone();
                h.on_main(vec![m], t, format!("squash {id} at last"));
                if rng.chance(40) {
                    h.session_step(rng, s);
                }
            }
        }
        h.remote
            .insert("refs/remotes/origin/main".into(), h.main_tip());
        for s in &h.sessions {
            if s.line.len() > 1 && rng.chance(30) {
                // Pushed up to one of its commits, and not deleted there.
                let k = 1 + rng.below(s.line.len() - 1);
                h.remote
                    .insert(format!("refs/remotes/origin/bullpen/{}", s.id), s.line[k]);
            }
        }
        h
    }

    /// The `git fast-import` stream of case `case`: every commit (mark =
    /// `offset` + index + 1) built on refs/heads/build, then the refs, under
    /// `refs/remotes/origin/c<case>/` (the case's name in every message, so no
    /// two cases share a commit).
    fn stream(&self, out: &mut Vec<u8>, case: usize, offset: usize) {
        out.extend_from_slice(b"reset refs/heads/build\n\n");
        for (i, c) in self.commits.iter().enumerate() {
            let time = 1_767_225_600 + if self.same_time { 0 } else { 60 * i as u64 };
            let msg = format!("c{case} {i} {}\n", c.what);
            write!(
                out,
                "commit refs/heads/build\nmark :{}\ncommitter T <t@example.com> {time} +0000\ndata {}\n{msg}",
                offset + i + 1,
                msg.len()
            )
            .expect("write");
            for (k, p) in c.parents.iter().enumerate() {
                let verb = if k == 0 { "from" } else { "merge" };
                writeln!(out, "{verb} :{}", offset + p + 1).expect("write");
            }
            out.extend_from_slice(b"deleteall\n");
            for (path, f) in &c.tree {
                let body: String = f.lines.iter().map(|l| format!("{l}\n")).collect();
                let mode = if f.exec { "100755" } else { "100644" };
                write!(out, "M {mode} inline {path}\ndata {}\n{body}\n", body.len())
                    .expect("write");
            }
            out.push(b'\n');
        }
        for (r, c) in &self.remote {
            let r = r.replacen(
                "refs/remotes/origin/",
                &format!("refs/remotes/origin/c{case}/"),
                1,
            );
            writeln!(out, "reset {r}\nfrom :{}\n", offset + c + 1).expect("write");
        }
    }

    /// `c` and every commit it reaches.
    fn ancestors(&self, c: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![c];
        while let Some(x) = todo.pop() {
            if seen.insert(x) {
                todo.extend(&self.commits[x].parents);
            }
        }
        seen
    }

    /// The best common ancestors of `a` and `b`.
    fn merge_bases(&self, a: usize, b: usize) -> Vec<usize> {
        let common: BTreeSet<usize> = self
            .ancestors(a)
            .intersection(&self.ancestors(b))
            .copied()
            .collect();
        common
            .iter()
            .copied()
            .filter(|&x| {
                !common
                    .iter()
                    .any(|&y| y != x && self.ancestors(y).contains(&x))
            })
            .collect()
    }

    fn description(&self) -> String {
        let mut s = String::new();
        for (i, c) in self.commits.iter().enumerate() {
            s.push_str(&format!("  {i}: {} <- {:?}\n", c.what, c.parents));
        }
        for (r, c) in &self.remote {
            s.push_str(&format!("  {r} = {c}\n"));
        }
        s
    }
}

/// What the oracle says about one session.
struct Verdict {
    unpublished: BTreeSet<usize>,
    /// The unpublished commits that change something (against their first parent).
    own: BTreeSet<usize>,
    bases: Vec<usize>,
    /// Candidate landings: newer than a merge base, descending from it.
    candidates: BTreeSet<usize>,
    first_parent: BTreeSet<usize>,
}

impl Verdict {
    fn of(h: &History, tip: usize) -> Verdict {
        let mut published = BTreeSet::new();
        for c in h.remote.values() {
            published.extend(h.ancestors(*c));
        }
        let unpublished: BTreeSet<usize> =
            h.ancestors(tip).difference(&published).copied().collect();
        let own = unpublished
            .iter()
            .copied()
            .filter(|&c| {
                let p = h.commits[c].parents.first().copied();
                p.is_none_or(|p| h.tree(p) != h.tree(c))
            })
            .collect();
        let head = h.main_tip();
        let bases = h.merge_bases(tip, head);
        let candidates = h
            .ancestors(head)
            .into_iter()
            .filter(|&x| bases.iter().any(|&b| x != b && h.ancestors(x).contains(&b)))
            .collect();
        let mut first_parent = BTreeSet::new();
        let mut x = Some(head);
        while let Some(c) = x {
            first_parent.insert(c);
            x = h.commits[c].parents.first().copied();
        }
        Verdict {
            unpublished,
            own,
            bases,
            candidates,
            first_parent,
        }
    }
}

/// Who answers for gc.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// The real binary: sessions spawned on the tips, `gc --dry-run --json`.
    Gc,
    /// The library, as gc's facts call it: one publish walk, one proof of
    /// content for every session (no worktree, no process: many cases fast).
    Library,
}

/// gc's answer for one session.
#[derive(Debug)]
struct Answer {
    /// `reachable`, `squash-merged`, `rebased`, or none (kept).
    how: Option<String>,
    commit: Option<String>,
    /// (session commit, integration commit).
    landings: Vec<(String, String)>,
}

/// One case of a batch: its history, and its commits' ids and trees (by index).
struct Case {
    seed: u64,
    /// Its place in the batch: refs under `refs/remotes/origin/c<n>/`, sessions
    /// `c<n>-<id>`.
    n: usize,
    h: History,
    oid: Vec<String>,
    tree: Vec<String>,
}

impl Case {
    fn session(&self, s: &Session) -> String {
        format!("c{}-{}", self.n, s.id)
    }

    fn tips(&self) -> impl Iterator<Item = (&Session, &str)> {
        self.h
            .sessions
            .iter()
            .map(|s| (s, self.oid[*s.line.last().expect("tip")].as_str()))
    }
}

fn ask_gc(env: &Env, cases: &[Case]) -> Result<Vec<Vec<Answer>>, String> {
    for c in cases {
        for (s, tip) in c.tips() {
            env.bullpen(&["spawn", &c.session(s), "--base", tip, "--", "true"])
                .ok();
        }
    }
    let run = env.bullpen(&["gc", "--dry-run", "--json"]);
    let entries: Vec<Value> = serde_json::from_str(&run.stdout)
        .map_err(|e| format!("gc --json: {e}\n{}\n{}", run.stdout, run.stderr))?;
    if run.stderr.contains("panicked") || run.stderr.contains("cannot tell") {
        return Err(format!("gc said:\n{}", run.stderr));
    }
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let answer = |id: &str| -> Result<Answer, String> {
        let e = entries
            .iter()
            .find(|e| e["kind"] == "session" && e["id"] == id)
            .ok_or_else(|| format!("no entry for {id}"))?;
        let p = &e["published"];
        // Each session is spawned with its tip as its base, so a tip a remote
        // reaches is a branch with no commit of its own, which gc never calls
        // published: for the oracle that is the reachable case.
        let no_own_commit = p.is_null()
            && e["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("holds no commit of its own"));
        Ok(Answer {
            how: if no_own_commit {
                Some("reachable".to_owned())
            } else {
                text(&p["how"])
            },
            commit: text(&p["commit"]),
            landings: p["landings"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| {
                    (
                        text(&l["commit"]).unwrap_or_default(),
                        text(&l["on"]).unwrap_or_default(),
                    )
                })
                .collect(),
        })
    };
    cases
        .iter()
        .map(|c| c.h.sessions.iter().map(|s| answer(&c.session(s))).collect())
        .collect()
}

fn ask_library(env: &Env, cases: &[Case]) -> Result<Vec<Vec<Answer>>, String> {
    use bullpen::git::{Content, ContentQuery, GitEnv, Repo};
    use bullpen::model::Oid;
    let err = |e: anyhow::Error| format!("{e:#}");
    let repo = Repo::discover_with(&env.repo, &GitEnv::default()).map_err(err)?;
    let tips: Vec<Oid> = cases
        .iter()
        .flat_map(|c| c.tips().map(|(_, t)| t.parse().expect("an oid")))
        .collect();
    let reach = repo.unpublished_commits(&tips).map_err(err)?;
    let (refs, _) = repo.integration_refs().map_err(err)?;
    let queries: Vec<ContentQuery> = tips
        .iter()
        .filter(|t| !reach[t].is_empty())
        .map(|t| ContentQuery {
            tip: *t,
            commits: reach[t].clone(),
        })
        .collect();
    let mut answers = repo.find_content(&queries, &refs).into_iter();
    let mut tips = tips.iter();
    let mut out = Vec::new();
    for c in cases {
        let mut mine = Vec::new();
        for _ in &c.h.sessions {
            let t = tips.next().expect("a tip per session");
            let kept = Answer {
                how: None,
                commit: None,
                landings: Vec::new(),
            };
            if reach[t].is_empty() {
                mine.push(Answer {
                    how: Some("reachable".into()),
                    ..kept
                });
                continue;
            }
            mine.push(
                match answers.next().expect("one answer per query").map_err(err)? {
                    Content::Published(e) => Answer {
                        how: Some(e.how().to_owned()),
                        commit: e.commit().map(|c| c.to_string()),
                        landings: e
                            .landings()
                            .iter()
                            .map(|l| (l.commit.to_string(), l.on.to_string()))
                            .collect(),
                    },
                    Content::Unmerged(_) => kept,
                },
            );
        }
        out.push(mine);
    }
    Ok(out)
}

/// One batch of cases in one repository: built with one `git fast-import`,
/// answered by gc at once, checked by the oracle with one `git merge-tree`.
/// The disagreements, each described (with `BULLPEN_ORACLE_KEEP` set, the
/// repository is kept and named).
fn batch(seeds: &[u64], ask: Ask, tally: &Mutex<Tally>) -> Vec<String> {
    let dirs = crate::hermetic::Dirs::new("bullpen-oracle-");
    let env = Env {
        repo: dirs.root.join("repo"),
        tmp: dirs.tmp,
        home: dirs.home,
        bullpen_home: dirs.bullpen_home,
        path_prefix: Vec::new(),
    };
    std::fs::create_dir_all(&env.repo).expect("mkdir");
    env.git(&env.repo, &["init", "-q", "--template=", "-b", "main"])
        .ok();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(env.repo.join(".git/config"))
        .expect("open config");
    config
        .write_all(
            b"[remote \"origin\"]\n\turl = /nonexistent\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
              [bullpen \"gc\"]\n\tintegrationRef = origin/*/main\n",
        )
        .expect("write config");
    let histories: Vec<History> = seeds
        .iter()
        .map(|s| History::generate(&mut Rng(*s)))
        .collect();
    let mut stream = Vec::new();
    let mut offset = 0;
    for (n, h) in histories.iter().enumerate() {
        h.stream(&mut stream, n, offset);
        offset += h.commits.len();
    }
    let first_main = histories[0].main_tip() + 1;
    writeln!(stream, "reset refs/heads/main\nfrom :{first_main}\n").expect("write");
    let marks = env.root().join("marks");
    run_stdin(
        &env,
        &[
            "fast-import",
            "--quiet",
            &format!("--export-marks={}", marks.display()),
        ],
        &stream,
    );
    let mut by_mark: HashMap<usize, String> = HashMap::new();
    for line in std::fs::read_to_string(&marks).expect("marks").lines() {
        let (mark, id) = line.split_once(' ').expect("a mark line");
        let mark: usize = mark.trim_start_matches(':').parse().expect("a mark");
        by_mark.insert(mark, id.to_owned());
    }
    let all: Vec<String> = (1..=offset).map(|m| by_mark[&m].clone()).collect();
    let trees: Vec<String> = {
        let mut args = vec!["rev-parse".to_owned()];
        args.extend(all.iter().map(|o| format!("{o}^{{tree}}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        env.git(&env.repo, &args)
            .ok()
            .stdout
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let mut cases = Vec::new();
    let mut offset = 0;
    for (n, (h, seed)) in histories.into_iter().zip(seeds).enumerate() {
        let len = h.commits.len();
        cases.push(Case {
            seed: *seed,
            n,
            oid: all[offset..offset + len].to_vec(),
            tree: trees[offset..offset + len].to_vec(),
            h,
        });
        offset += len;
    }

    let answers = match ask {
        Ask::Gc => ask_gc(&env, &cases),
        Ask::Library => ask_library(&env, &cases),
    };
    let mut failures = Vec::new();
    match answers {
        Err(e) => failures.push(format!("cases {seeds:?} ({ask:?}): {e}")),
        Ok(answers) => {
            let landed = oracle(&env, &cases);
            for (c, (a, landed)) in cases.iter().zip(answers.iter().zip(&landed)) {
                if let Err(e) = check(c, a, landed, ask, tally) {
                    failures.push(format!(
                        "case {} (alone: BULLPEN_ORACLE_CASE={}), as c{} of {seeds:?}:\n{e}\nhistory:\n{}",
                        c.seed,
                        c.seed,
                        c.n,
                        c.h.description()
                    ));
                }
            }
        }
    }
    if !failures.is_empty() && std::env::var_os("BULLPEN_ORACLE_KEEP").is_some() {
        let kept = format!("\nkept: {}", env.tmp.keep().display());
        if let Some(last) = failures.last_mut() {
            last.push_str(&kept);
        }
    }
    failures
}

/// For each case, the (session commit, candidate) pairs where git's
/// cherry-pick of the commit onto the candidate is clean and gives the
/// candidate's tree: every merge of the batch in one git process.
fn oracle(env: &Env, cases: &[Case]) -> Vec<BTreeSet<(usize, usize)>> {
    let mut asked: Vec<(usize, usize, usize)> = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let mut mine = BTreeSet::new();
        for s in &case.h.sessions {
            let v = Verdict::of(&case.h, *s.line.last().expect("tip"));
            for &c in &v.own {
                for &x in &v.candidates {
                    mine.insert((c, x));
                }
            }
        }
        asked.extend(mine.into_iter().map(|(c, x)| (n, c, x)));
    }
    let mut input = String::new();
    for (n, c, x) in &asked {
        let case = &cases[*n];
        let parent = case.h.commits[*c].parents[0];
        input.push_str(&format!(
            "{} -- {} {}\n",
            case.oid[parent], case.oid[*x], case.oid[*c]
        ));
    }
    let out = run_stdin(
        env,
        &[
            "merge-tree",
            "--stdin",
            "--write-tree",
            "--no-messages",
            "--name-only",
        ],
        input.as_bytes(),
    );
    let mut landed = vec![BTreeSet::new(); cases.len()];
    for ((n, c, x), tree) in asked.iter().zip(parse_merges(&out, asked.len())) {
        if tree.as_deref() == Some(cases[*n].tree[*x].as_str()) {
            landed[*n].insert((*c, *x));
        }
    }
    landed
}

/// One case: gc's answers against the oracle's.
fn check(
    case: &Case,
    answers: &[Answer],
    landed: &BTreeSet<(usize, usize)>,
    ask: Ask,
    tally: &Mutex<Tally>,
) -> Result<(), String> {
    let h = &case.h;
    let by_oid: HashMap<&str, usize> = case
        .oid
        .iter()
        .enumerate()
        .map(|(c, o)| (o.as_str(), c))
        .collect();
    let commit = |o: &str| by_oid.get(o).copied();
    let mut t = tally.lock().expect("tally");
    for (s, a) in h.sessions.iter().zip(answers) {
        let v = Verdict::of(h, *s.line.last().expect("tip"));
        let published_in = |set: &BTreeSet<usize>| {
            !v.own.is_empty()
                && v.own
                    .iter()
                    .all(|&c| set.iter().any(|&x| landed.contains(&(c, x))))
        };
        let oracle = published_in(&v.candidates);
        let first_parent: BTreeSet<usize> = v
            .candidates
            .intersection(&v.first_parent)
            .copied()
            .collect();
        let oracle_fp = published_in(&first_parent);
        let say = |what: &str| {
            format!(
                "{} ({ask:?}): {what}\ngc: {a:?}\noracle: unpublished {:?}, own {:?}, bases {:?}, \
                 candidates {:?}, landed {:?}",
                case.session(s),
                v.unpublished,
                v.own,
                v.bases,
                v.candidates,
                landed
            )
        };
        match a.how.as_deref() {
            Some("reachable") => {
                if !v.unpublished.is_empty() {
                    return Err(say("reachable, but commits are on no remote-tracking ref"));
                }
                t.reachable += 1;
                continue;
            }
            _ if v.unpublished.is_empty() => {
                return Err(say("every commit is on a remote ref, yet not reachable"))
            }
            Some(how @ ("squash-merged" | "rebased")) => {
                if !oracle {
                    return Err(say(
                        "published by content, but the oracle finds no landing for some commit",
                    ));
                }
                let mut covered = BTreeSet::new();
                let mut on_set = BTreeSet::new();
                for (c, x) in &a.landings {
                    let (Some(c), Some(x)) = (commit(c), commit(x)) else {
                        return Err(say("a landing of or on an unknown commit"));
                    };
                    if !v.candidates.contains(&x) || !landed.contains(&(c, x)) {
                        return Err(say(&format!(
                            "names {x} as the landing of {c}; the oracle does not"
                        )));
                    }
                    covered.insert(c);
                    on_set.insert(x);
                }
                if covered != v.own {
                    return Err(say(
                        "its landings are not exactly the commits that change something",
                    ));
                }
                if a.commit
                    .as_deref()
                    .and_then(commit)
                    .is_none_or(|n| !on_set.contains(&n))
                {
                    return Err(say("the commit it names is none of its landings"));
                }
                if (how == "squash-merged") != (on_set.len() == 1) {
                    return Err(say("squash-merged is one landing, rebased several"));
                }
                t.by_content += 1;
            }
            Some(other) => return Err(say(&format!("unknown evidence {other}"))),
            None => {
                if oracle_fp && v.bases.len() == 1 {
                    // Safe, but more than needed: counted, and bounded below.
                    t.missed.push(case.seed);
                } else if oracle {
                    t.kept_beyond_first_parent += 1;
                } else {
                    t.kept += 1;
                }
            }
        }
    }
    Ok(())
}

#[derive(Default, Debug)]
struct Tally {
    reachable: usize,
    by_content: usize,
    kept: usize,
    /// Kept; the oracle finds every commit only off main's first-parent line.
    kept_beyond_first_parent: usize,
    /// Kept although the oracle finds every commit on main's first-parent line
    /// (the cases' seeds): git's rename detection can make a landing of a
    /// commit in the middle of a run of main commits that agree on its paths,
    /// and gc asks only at each run's ends.
    missed: Vec<u64>,
}

fn run_stdin(env: &Env, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = env
        .cmd("git", &env.repo)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for git");
    writer.join().expect("writer").expect("write to git");
    assert!(
        out.status.success() || args[0] == "merge-tree",
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `git merge-tree --stdin --write-tree --name-only` output, written here
/// from git's documentation: per merge `<1|0>\0<tree>\0`, the conflicted
/// paths each followed by `\0`, then `\0`. The tree of each clean merge.
fn parse_merges(out: &[u8], n: usize) -> Vec<Option<String>> {
    let mut fields = out.split(|b| *b == 0);
    let mut results = Vec::new();
    for _ in 0..n {
        let status = fields.next().expect("a status");
        let tree = String::from_utf8_lossy(fields.next().expect("a tree")).into_owned();
        for f in fields.by_ref() {
            if f.is_empty() {
                break;
            }
        }
        results.push((status == b"1").then_some(tree));
    }
    results
}

/// Cases per repository.
const BATCH: usize = 10;

/// Run the cases `BULLPEN_ORACLE_CASE` (one seed) or `cases_var` (how many,
/// `default` unless set) ask for, two at a time; the tally.
fn run_cases(ask: Ask, cases_var: &str, default: usize) -> (usize, Tally) {
    let cases: usize = std::env::var(cases_var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let seed: u64 = std::env::var("BULLPEN_ORACLE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(22);
    let seeds: Vec<u64> = match std::env::var("BULLPEN_ORACLE_CASE")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(one) => vec![one],
        None => (0..cases as u64)
            .map(|i| seed.wrapping_mul(1_000_003).wrapping_add(i))
            .collect(),
    };
    let batches: Vec<&[u64]> = seeds.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(seeds) = batches.get(i) else {
                    break;
                };
                let found = batch(seeds, ask, &tally);
                failures.lock().expect("failures").extend(found);
            });
        }
    });
    let tally = tally.into_inner().expect("tally");
    let failures = failures.into_inner().expect("failures");
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree (seed {seed}):\n{}",
        failures.len(),
        seeds.len(),
        failures.join("\n\n")
    );
    eprintln!(
        "oracle ({ask:?}): {} cases, seed {seed}: {tally:?}",
        seeds.len()
    );
    // Keeping more than needed is safe, but a proof that keeps everything
    // would pass the rest: at most one in fifty of what gc could find.
    assert!(
        tally.missed.len() * 50 <= tally.by_content.max(1),
        "gc kept {} sessions the oracle finds on main's first-parent line (cases {:?}), \
         against {} it proved",
        tally.missed.len(),
        tally.missed,
        tally.by_content
    );
    (seeds.len(), tally)
}

#[test]
fn the_proof_by_content_never_claims_more_than_the_oracle_finds() {
    // The library runs in this process: gix reads git's global and system
    // config, and `git merge-tree` inherits this process's environment. So the
    // cases run in a copy of this test binary with the hermetic environment.
    if std::env::var_os(HERMETIC_CHILD).is_none() {
        return rerun_hermetic(
            "content::oracle::the_proof_by_content_never_claims_more_than_the_oracle_finds",
        );
    }
    let (cases, tally) = run_cases(Ask::Library, "BULLPEN_ORACLE_CASES", 300);
    // Not vacuous: it saw sessions proven by content, and sessions kept.
    if cases >= 300 {
        assert!(tally.by_content >= cases / 10, "{tally:?}");
        assert!(tally.kept >= cases / 10, "{tally:?}");
    }
}

#[test]
fn gc_dry_run_agrees_with_the_oracle() {
    let (cases, tally) = run_cases(Ask::Gc, "BULLPEN_ORACLE_GC_CASES", 60);
    if cases >= 60 {
        assert!(tally.by_content >= 1, "{tally:?}");
    }
}

/// Set in the copy of the test binary [`rerun_hermetic`] starts.
const HERMETIC_CHILD: &str = "BULLPEN_ORACLE_HERMETIC_CHILD";

/// Run the test `name` again in a child of this test binary whose environment
/// is the hermetic one (`hermetic::apply`), with the oracle's own variables
/// passed on; fail with its output unless exactly that test ran and passed.
fn rerun_hermetic(name: &str) {
    let dirs = crate::hermetic::Dirs::new("bullpen-oracle-child-");
    let exe = std::env::current_exe().expect("the test binary");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut cmd = std::process::Command::new(exe);
    crate::hermetic::apply(&mut cmd, &path, &dirs.home, &dirs.bullpen_home);
    for (k, v) in std::env::vars_os() {
        if k.to_str()
            .is_some_and(|k| k.starts_with("BULLPEN_ORACLE_") || k == "CI")
        {
            cmd.env(k, v);
        }
    }
    let out = cmd
        .env(HERMETIC_CHILD, "1")
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "the hermetic run of {name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
