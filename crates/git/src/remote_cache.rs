//! A cache of what `ls --remote` derives from fetched records: the record a
//! fetched commit holds once it has passed the checks of [`store::read_fetched`]
//! for a session id, and how many commits a fetched branch has past its base.
//! Keyed by object ids (and the id the checks were made for), so an entry is
//! never stale: a record that changed is a new commit, whatever wrote the ref.
//!
//! Why: the checks read three objects per record (a commit, a tree, a blob
//! deep in a delta chain) and parse the JSON twice; at 1,000 fetched sessions
//! that was most of `ls --remote`.
//!
//! A fetched record is untrusted input, so the cache must not be a way around
//! its checks: an entry is only ever written by this code, after the checks
//! passed, and the file is read only if it is whole, of this version of
//! bullpen (whose checks made the entries) and carries the MAC of its content
//! under this clone's key (`<common>/bullpen/cache/key`, random, never
//! transferred). A file bullpen did not write here (edited, forged, copied,
//! cut short, another version's) counts as empty: every record is checked
//! again, so it changes no verdict. Refused records are never cached.
//!
//! The file is `<common>/bullpen/cache/remote`: local, derived, never
//! transferred. It holds what the last listing used.
//!
//! [`store::read_fetched`]: super::store::read_fetched

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use siphasher::sip128::{Hasher128 as _, SipHasher24};

use super::Repo;
use crate::model::{Oid, Record, SessionId};

/// The first line: the format, and the version of the checks that made the entries.
fn header() -> String {
    format!(
        "bullpen remote cache 1 {} checks {}",
        env!("CARGO_PKG_VERSION"),
        crate::model::remote::CHECKS
    )
}

/// Where an entry's text is: a range of the file as read, or one added since.
#[derive(Clone)]
enum Text {
    InFile(std::ops::Range<usize>),
    Added(String),
}

#[derive(Default)]
pub struct RemoteCache {
    /// Where it is written; `None`: never (a bare repository, no key).
    path: Option<PathBuf>,
    key: Option<[u8; 16]>,
    /// The file as read: the entries below point into it.
    text: String,
    /// Record commit -> the session id it was checked for and its record as JSON.
    records: HashMap<Oid, (Text, Text)>,
    /// (tip, base) -> commits on tip that base lacks.
    ahead: HashMap<(Oid, Oid), usize>,
    used_records: HashSet<Oid>,
    used_ahead: HashSet<(Oid, Oid)>,
    added: bool,
}

impl RemoteCache {
    /// The repository's cache as its file holds it: empty when there is none,
    /// or it is not one this bullpen wrote here. The key is made on first use.
    pub fn open(repo: &Repo) -> RemoteCache {
        let dir = repo.common_dir().join("bullpen").join("cache");
        let Some(key) = (!repo.is_bare()).then(|| key(&dir).ok()).flatten() else {
            return RemoteCache::none();
        };
        let file = dir.join("remote");
        // Never blocks: a FIFO (or anything but a regular file) there is no cache.
        let mut cache = crate::sys::regular::read(&file)
            .ok()
            .flatten()
            .and_then(|bytes| parse(&key, bytes))
            .unwrap_or_default();
        cache.path = Some(file);
        cache.key = Some(key);
        cache
    }

    /// A cache that holds nothing and is never written.
    pub fn none() -> RemoteCache {
        RemoteCache::default()
    }

    /// The record `commit` holds, if it passed the checks for session `id`
    /// before. A record of a newer schema than this build reads counts as absent.
    pub fn checked(&mut self, id: &SessionId, commit: Oid) -> Option<Record> {
        let (for_id, json) = self.records.get(&commit)?;
        if self.text(for_id) != id.as_str() {
            return None;
        }
        let record: Record = serde_json::from_str(self.text(json)).ok()?;
        if record.schema > crate::model::record::SCHEMA || &record.id != id {
            return None;
        }
        self.used_records.insert(commit);
        Some(record)
    }

    /// Remember that `commit` passed the checks for `id`, holding `record`.
    pub fn put_checked(&mut self, id: &SessionId, commit: Oid, record: &Record) {
        if self.key.is_none() {
            return;
        }
        if let Ok(json) = serde_json::to_string(record) {
            self.records
                .insert(commit, (Text::Added(id.to_string()), Text::Added(json)));
            self.used_records.insert(commit);
            self.added = true;
        }
    }

    fn text<'a>(&'a self, t: &'a Text) -> &'a str {
        match t {
            Text::InFile(range) => self.text.get(range.clone()).unwrap_or_default(),
            Text::Added(s) => s,
        }
    }

    pub fn ahead(&mut self, tip: Oid, base: Oid) -> Option<usize> {
        let n = *self.ahead.get(&(tip, base))?;
        self.used_ahead.insert((tip, base));
        Some(n)
    }

    pub fn put_ahead(&mut self, tip: Oid, base: Oid, n: usize) {
        if self.key.is_none() {
            return;
        }
        self.ahead.insert((tip, base), n);
        self.used_ahead.insert((tip, base));
        self.added = true;
    }

    /// Write the file when it changed: what was added, and with `prune` (a
    /// listing of every fetched session) only what this listing used, else
    /// all it holds. Atomic, not synced: a cache lost in a crash is only
    /// derived again.
    pub fn save(&self, prune: bool) -> Result<()> {
        let (Some(path), Some(key)) = (&self.path, &self.key) else {
            return Ok(());
        };
        let unused = self.records.len() != self.used_records.len()
            || self.ahead.len() != self.used_ahead.len();
        if !(self.added || prune && unused) {
            return Ok(());
        }
        let mut out = String::with_capacity(
            64 + self
                .records
                .values()
                .map(|(id, json)| self.text(id).len() + self.text(json).len() + 46)
                .sum::<usize>()
                + self.ahead.len() * 100,
        );
        out.push_str(&header());
        out.push('\n');
        let mut records: Vec<(&Oid, &(Text, Text))> = self
            .records
            .iter()
            .filter(|(c, _)| !prune || self.used_records.contains(c))
            .collect();
        records.sort_by_key(|(c, _)| **c);
        for (commit, (id, json)) in records {
            let _ = writeln!(out, "f {commit} {} {}", self.text(id), self.text(json));
        }
        let mut ahead: Vec<(&(Oid, Oid), &usize)> = self
            .ahead
            .iter()
            .filter(|(k, _)| !prune || self.used_ahead.contains(k))
            .collect();
        ahead.sort_by_key(|(k, _)| **k);
        for ((tip, base), n) in ahead {
            let _ = writeln!(out, "a {tip} {base} {n}");
        }
        let mac = mac(key, out.as_bytes());
        let _ = writeln!(out, "mac {mac:032x}");
        crate::sys::atomic::write(path, out.as_bytes())
            .with_context(|| format!("cannot write the cache {}", path.display()))
    }
}

/// SipHash-2-4 (128 bits) of `bytes` under `key`.
fn mac(key: &[u8; 16], bytes: &[u8]) -> u128 {
    let mut h = SipHasher24::new_with_key(key);
    h.write(bytes);
    h.finish128().as_u128()
}

/// This clone's cache key, made on first use (of two racing first uses, one
/// wins and both read it).
fn key(dir: &Path) -> Result<[u8; 16]> {
    let path = dir.join("key");
    let read = |path: &Path| -> Result<Option<[u8; 16]>> {
        let Some(bytes) = crate::sys::regular::read(path)
            .with_context(|| format!("cannot read {}", path.display()))?
        else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).unwrap_or_default();
        let value = u128::from_str_radix(text.trim(), 16)
            .ok()
            .filter(|_| text.trim().len() == 32)
            .with_context(|| format!("{} does not hold a key", path.display()))?;
        Ok(Some(value.to_be_bytes()))
    };
    if let Some(key) = read(&path)? {
        return Ok(key);
    }
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read random bytes from /dev/urandom for the cache key")?;
    let hex = format!("{:032x}\n", u128::from_be_bytes(bytes));
    crate::sys::atomic::create_new(&path, hex.as_bytes())?;
    read(&path)?.with_context(|| format!("{} vanished as it was made", path.display()))
}

/// The entries of a cache file; `None` unless it is one whole file of this
/// version whose MAC under `key` is right.
fn parse(key: &[u8; 16], bytes: Vec<u8>) -> Option<RemoteCache> {
    let text = String::from_utf8(bytes).ok()?;
    let body_end = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let (body, last) = text.split_at(body_end);
    let tag = u128::from_str_radix(last.strip_prefix("mac ")?.strip_suffix('\n')?, 16).ok()?;
    if tag != mac(key, body.as_bytes()) {
        return None;
    }
    let mut lines = body.split_inclusive('\n');
    if lines.next()?.strip_suffix('\n')? != header() {
        return None;
    }
    let mut cache = RemoteCache::default();
    let mut at = header().len() + 1;
    for line in lines {
        let start = at;
        at += line.len();
        let line = line.strip_suffix('\n')?;
        // Where a part of `line` is in the file.
        let range = |part: &str| {
            let from = start + (part.as_ptr() as usize - line.as_ptr() as usize);
            from..from + part.len()
        };
        let mut parts = line.splitn(4, ' ');
        match (parts.next()?, parts.next()?, parts.next()?, parts.next()) {
            ("f", commit, id, Some(json)) => {
                let entry = (Text::InFile(range(id)), Text::InFile(range(json)));
                cache.records.insert(commit.parse().ok()?, entry);
            }
            ("a", tip, base, Some(n)) => {
                cache
                    .ahead
                    .insert((tip.parse().ok()?, base.parse().ok()?), n.parse().ok()?);
            }
            _ => return None,
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

    fn saved(cache: RemoteCache, dir: &Path) -> String {
        let path = dir.join("remote");
        RemoteCache {
            path: Some(path.clone()),
            ..cache
        }
        .save(true)
        .unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn only_a_whole_file_with_its_mac_under_this_key_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let key = [7u8; 16];
        let mut c = RemoteCache {
            key: Some(key),
            ..RemoteCache::default()
        };
        c.put_ahead(oid('a'), oid('b'), 3);
        c.records.insert(
            oid('c'),
            (
                Text::Added("x".into()),
                Text::Added("{\"schema\":1}".into()),
            ),
        );
        c.used_records.insert(oid('c'));
        let text = saved(c, dir.path());
        let back = parse(&key, text.clone().into_bytes()).unwrap();
        assert_eq!(back.ahead.get(&(oid('a'), oid('b'))), Some(&3));
        assert_eq!(back.text(&back.records[&oid('c')].0), "x");
        assert_eq!(back.text(&back.records[&oid('c')].1), "{\"schema\":1}");
        for cut in 1..text.len() {
            assert!(
                parse(&key, text.as_bytes()[..cut].to_vec()).is_none(),
                "cut at {cut}"
            );
        }
        // Any edit, or another key, and none of it is read.
        assert!(parse(&key, text.replace(" 3\n", " 4\n").into_bytes()).is_none());
        assert!(parse(&key, text.replace(" x ", " y ").into_bytes()).is_none());
        assert!(parse(&[8u8; 16], text.clone().into_bytes()).is_none());
        assert!(parse(&key, text.replace("cache 1", "cache 2").into_bytes()).is_none());
    }

    #[test]
    fn a_key_is_made_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let first = key(dir.path()).unwrap();
        assert_eq!(key(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("key"), "not a key\n").unwrap();
        assert!(key(dir.path()).is_err());
    }
}
