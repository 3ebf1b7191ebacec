//! A cache of what `ls` derives from objects that never change: the record a
//! metadata commit holds, and how many commits a branch tip has that a base
//! lacks. Keyed by object ids only, so an entry is never stale: a record that
//! changed is a new commit, a branch that moved is a new tip.
//!
//! Why: a repository with a few hundred sessions keeps its records as loose
//! objects for months (git packs at about 6,700), and every loose object read
//! is a file opened, mapped and inflated. Listing 1,000 sessions read 4,000 of
//! them; with the cache a listing reads the refs and this one file.
//!
//! The file is `<git common dir>/bullpen/cache/ls`: local, derived, never
//! transferred, never proof of anything (only `ls` and the completion of
//! `stop`/`wait`/`attach` read it, to show what the records say). Anything
//! wrong with it (missing, truncated, another version, a line that does not
//! parse) makes the entries it holds count as absent: they are read from the
//! objects again and the file is rewritten. It holds only what the last full
//! listing used, so it never grows past the sessions there are.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::Repo;
use crate::model::{Oid, Record};

const HEADER: &str = "bullpen ls cache 1";

/// Where an entry's JSON is: a range of the file as read, or one added since.
#[derive(Clone)]
enum Json {
    InFile(std::ops::Range<usize>),
    Added(String),
}

#[derive(Default)]
pub struct ObjectCache {
    /// `None`: not to be written (a bare repository, opened read-only).
    path: Option<PathBuf>,
    /// The file as read: the entries below point into it.
    text: String,
    /// Record commit -> its `session.json` (compact JSON, one line).
    records: HashMap<Oid, Json>,
    /// (tip, base) -> commits on tip that base lacks.
    ahead: HashMap<(Oid, Oid), usize>,
    /// (tip, base, [`refs_key`] of the remote-tracking refs) -> what `ls
    /// --status` showed of it: published, and the commits no remote reaches.
    published: HashMap<(Oid, Oid, Oid), (bool, usize)>,
    used_records: HashSet<Oid>,
    used_ahead: HashSet<(Oid, Oid)>,
    used_published: HashSet<(Oid, Oid, Oid)>,
    /// Entries were added since the file was read.
    added: bool,
}

impl ObjectCache {
    /// The repository's cache, as its file holds it (empty when there is none
    /// or it cannot be read).
    pub fn open(repo: &Repo) -> ObjectCache {
        let file = repo.common_dir().join("bullpen").join("cache").join("ls");
        // Never blocks: a FIFO (or anything but a regular file) there is no cache.
        let mut cache = crate::sys::regular::read(&file)
            .ok()
            .flatten()
            .and_then(parse)
            .unwrap_or_default();
        cache.path = (!repo.is_bare()).then_some(file);
        cache
    }

    /// A cache that holds nothing and is never written (for a single lookup).
    pub fn none() -> ObjectCache {
        ObjectCache::default()
    }

    /// The record `commit` holds, if cached.
    /// A record of a newer schema than this build reads (another bullpen
    /// wrote the cache) counts as absent, and is read from its objects (where
    /// it is refused as usual).
    pub fn record(&mut self, commit: Oid) -> Option<Record> {
        let json = self.json(self.records.get(&commit)?);
        let record: Record = serde_json::from_str(json).ok()?;
        if record.schema > crate::model::record::SCHEMA {
            return None;
        }
        self.used_records.insert(commit);
        Some(record)
    }

    fn json<'a>(&'a self, j: &'a Json) -> &'a str {
        match j {
            Json::InFile(range) => self.text.get(range.clone()).unwrap_or_default(),
            Json::Added(s) => s,
        }
    }

    pub fn put_record(&mut self, commit: Oid, record: &Record) {
        if let Ok(mut json) = serde_json::to_string(record) {
            json.shrink_to_fit();
            self.records.insert(commit, Json::Added(json));
            self.used_records.insert(commit);
            self.added = true;
        }
    }

    pub fn ahead(&mut self, tip: Oid, base: Oid) -> Option<usize> {
        let n = *self.ahead.get(&(tip, base))?;
        self.used_ahead.insert((tip, base));
        Some(n)
    }

    pub fn put_ahead(&mut self, tip: Oid, base: Oid, n: usize) {
        self.ahead.insert((tip, base), n);
        self.used_ahead.insert((tip, base));
        self.added = true;
    }

    /// Whether the session branch at `tip` (made from `base`) was published
    /// when the remote-tracking refs were `refs` ([`refs_key`]), and how many
    /// of its commits no remote-tracking ref reached: for `ls --status` only,
    /// never for gc's decisions.
    pub fn published(&mut self, tip: Oid, base: Oid, refs: Oid) -> Option<(bool, usize)> {
        let v = *self.published.get(&(tip, base, refs))?;
        self.used_published.insert((tip, base, refs));
        Some(v)
    }

    pub fn put_published(&mut self, tip: Oid, base: Oid, refs: Oid, verdict: (bool, usize)) {
        self.published.insert((tip, base, refs), verdict);
        self.used_published.insert((tip, base, refs));
        self.added = true;
    }

    /// Write what this listing used, when that differs from what the file
    /// holds. Atomic (a temporary file renamed over it, not synced): a cache
    /// lost in a crash is only read again from the objects.
    pub fn save(&self) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let unused = self.records.len() != self.used_records.len()
            || self.ahead.len() != self.used_ahead.len()
            // A plain `ls` keeps the verdicts of the last `ls --status`.
            || (!self.used_published.is_empty()
                && self.published.len() != self.used_published.len());
        if !self.added && !unused {
            return Ok(());
        }
        // Sized for all of it at once: a cache of 10,000 records is 10 MB.
        let mut out = String::with_capacity(
            64 + self
                .used_records
                .iter()
                .map(|c| self.records.get(c).map_or(0, |j| self.json(j).len() + 44))
                .sum::<usize>()
                + self.used_ahead.len() * 100
                + self.published.len() * 140,
        );
        out.push_str(HEADER);
        out.push('\n');
        let mut lines = 0usize;
        let mut records: Vec<&Oid> = self.used_records.iter().collect();
        records.sort();
        for commit in records {
            if let Some(json) = self.records.get(commit) {
                let _ = writeln!(out, "r {commit} {}", self.json(json));
                lines += 1;
            }
        }
        let mut ahead: Vec<&(Oid, Oid)> = self.used_ahead.iter().collect();
        ahead.sort();
        for key in ahead {
            if let Some(n) = self.ahead.get(key) {
                let _ = writeln!(out, "a {} {} {n}", key.0, key.1);
                lines += 1;
            }
        }
        // Those of the last `ls --status`, when this listing asked none.
        let mut published: Vec<&(Oid, Oid, Oid)> = match self.used_published.is_empty() {
            true => self.published.keys().collect(),
            false => self.used_published.iter().collect(),
        };
        published.sort();
        for key in published {
            if let Some((yes, n)) = self.published.get(key) {
                let _ = writeln!(
                    out,
                    "p {} {} {} {} {n}",
                    key.0,
                    key.1,
                    key.2,
                    u8::from(*yes)
                );
                lines += 1;
            }
        }
        // The last line says how many came before it: a file cut short is
        // recognised as such and ignored whole.
        out.push_str(&format!("end {lines}\n"));
        crate::sys::atomic::write(path, out.as_bytes())
            .with_context(|| format!("cannot write the cache {}", path.display()))
    }
}

/// One id for what publish verdicts depend on besides a session's tip and
/// base (each remote-tracking ref and integration ref, by name and commit):
/// the id of a blob listing them, so that any fetch or change of
/// `bullpen.gc.integrationRef` makes every cached verdict count as absent.
pub fn refs_key(refs: &[(String, Oid)]) -> Option<Oid> {
    let mut text = String::new();
    for (name, at) in refs {
        let _ = writeln!(text, "{at} {name}");
    }
    let id = gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    );
    // Only a detected collision attack fails: then nothing is cached.
    id.ok().map(crate::oid)
}

/// The entries of a cache file; `None` when it is not one whole file of this version.
fn parse(bytes: Vec<u8>) -> Option<ObjectCache> {
    let text = String::from_utf8(bytes).ok()?;
    let mut cache = ObjectCache::default();
    {
        let body = text.strip_prefix(HEADER)?.strip_prefix('\n')?;
        let body = body.strip_suffix('\n')?;
        let (entries, end) = match body.rsplit_once('\n') {
            Some((entries, end)) => (entries, end),
            None => ("", body),
        };
        let count: usize = end.strip_prefix("end ")?.parse().ok()?;
        let mut lines = 0;
        let mut at = HEADER.len() + 1;
        for line in entries.split('\n') {
            let start = at;
            at += line.len() + 1;
            if line.is_empty() {
                continue;
            }
            lines += 1;
            let mut parts = line.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("r"), Some(commit), Some(json)) => {
                    let from = start + line.len() - json.len();
                    cache
                        .records
                        .insert(commit.parse().ok()?, Json::InFile(from..from + json.len()));
                }
                (Some("a"), Some(tip), Some(rest)) => {
                    let (base, n) = rest.split_once(' ')?;
                    cache
                        .ahead
                        .insert((tip.parse().ok()?, base.parse().ok()?), n.parse().ok()?);
                }
                (Some("p"), Some(tip), Some(rest)) => {
                    let mut f = rest.split(' ');
                    let key = (
                        tip.parse().ok()?,
                        f.next()?.parse().ok()?,
                        f.next()?.parse().ok()?,
                    );
                    let yes = match f.next()? {
                        "1" => true,
                        "0" => false,
                        _ => return None,
                    };
                    let n = f.next()?.parse().ok()?;
                    if f.next().is_some() {
                        return None;
                    }
                    cache.published.insert(key, (yes, n));
                }
                _ => return None,
            }
        }
        if lines != count {
            return None;
        }
    }
    cache.text = text;
    Some(cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(c: char) -> Oid {
        c.to_string().repeat(40).parse().unwrap()
    }

    fn file(cache: &ObjectCache) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ls");
        let cache = ObjectCache {
            path: Some(path.clone()),
            ..clone(cache)
        };
        cache.save().unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    fn clone(c: &ObjectCache) -> ObjectCache {
        ObjectCache {
            path: None,
            text: c.text.clone(),
            records: c.records.clone(),
            ahead: c.ahead.clone(),
            published: c.published.clone(),
            used_records: c.used_records.clone(),
            used_ahead: c.used_ahead.clone(),
            used_published: c.used_published.clone(),
            added: c.added,
        }
    }

    #[test]
    fn what_is_saved_reads_back_and_a_damaged_file_reads_as_empty() {
        let mut c = ObjectCache::default();
        c.put_ahead(oid('a'), oid('b'), 3);
        c.records
            .insert(oid('c'), Json::Added("{\"schema\":1}".into()));
        c.used_records.insert(oid('c'));
        let text = file(&c);
        let back = parse(text.clone().into_bytes()).unwrap();
        assert_eq!(back.ahead.get(&(oid('a'), oid('b'))), Some(&3));
        assert_eq!(
            back.json(back.records.get(&oid('c')).unwrap()),
            "{\"schema\":1}"
        );
        // Cut anywhere, the file is not trusted at all.
        for cut in 1..text.len() {
            assert!(
                parse(text.as_bytes()[..cut].to_vec()).is_none(),
                "cut at {cut}"
            );
        }
        assert!(parse(text.replace(" 3\n", " x\n").into_bytes()).is_none());
        let mut p = ObjectCache::default();
        p.put_published(oid('a'), oid('b'), oid('c'), (true, 2));
        p.put_published(oid('d'), oid('b'), oid('c'), (false, 1));
        let mut back = parse(file(&p).into_bytes()).unwrap();
        assert_eq!(
            back.published(oid('a'), oid('b'), oid('c')),
            Some((true, 2))
        );
        assert_eq!(
            back.published(oid('d'), oid('b'), oid('c')),
            Some((false, 1))
        );
        assert_eq!(back.published(oid('a'), oid('b'), oid('d')), None);
        let text = file(&p);
        assert!(parse(text.replace(" 1 2\n", " 2 2\n").into_bytes()).is_none());
        assert!(parse(text.replace("cache 1", "cache 2").into_bytes()).is_none());
    }

    #[test]
    fn only_what_was_used_is_kept() {
        let mut c = ObjectCache::default();
        c.ahead.insert((oid('a'), oid('b')), 1);
        c.ahead.insert((oid('c'), oid('d')), 2);
        assert_eq!(c.ahead(oid('c'), oid('d')), Some(2));
        let back = parse(file(&c).into_bytes()).unwrap();
        assert_eq!(back.ahead.len(), 1);
        assert_eq!(back.ahead.get(&(oid('c'), oid('d'))), Some(&2));
    }
}
