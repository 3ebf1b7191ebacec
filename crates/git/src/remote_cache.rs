//! A cache of what `ls --remote` derives from fetched records: what a listing
//! prints of a record commit once it has passed the checks of
//! [`store::read_fetched`] for a session id fetched from a remote (its row, as
//! the caller made it: opaque here), and how many commits a fetched branch has
//! past its base. Keyed by object ids (and the remote and id the checks were
//! made for), so an entry is never stale: a record that changed is a new
//! commit, whatever wrote the ref.
//!
//! Why: the checks read three objects per record (a commit, a tree, a blob
//! deep in a delta chain) and parse the JSON twice; at 1,000 fetched sessions
//! that was most of `ls --remote`, and a record parsed from the cache was
//! still the most of the rest.
//!
//! A fetched record is untrusted input, so the cache must not be a way around
//! its checks: an entry is only ever written by this code, after the checks
//! passed, and the file is read only if it is whole, of this version of
//! bullpen (whose checks made the entries) and carries the MAC of its content
//! under this clone's key (`<common>/bullpen/cache/key`, random, never
//! transferred). A file bullpen did not write here (edited, forged, copied,
//! cut short, another version's) counts as empty: every record is checked
//! again, so it changes no verdict. Refused records are never cached, and an
//! entry answers only for the remote and the id it was checked for.
//!
//! The files are `<common>/bullpen/cache/remote` (what the table shows, and
//! commits ahead) and `remote-rows` (whole rows, for `--json`): local,
//! derived, never transferred. Each holds what the last listing that read it
//! used.
//!
//! [`store::read_fetched`]: super::store::read_fetched

use foldhash::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use siphasher::sip128::{Hasher128 as _, SipHasher24};

use super::Repo;
use crate::model::{Oid, SessionId};

/// The first line: the file, the format, and the version of the checks that
/// made the entries.
fn header(name: &str) -> String {
    format!(
        "bullpen {name} cache 2 {} checks {}",
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

/// An entry: the remote and id its record was checked for, and its row.
#[derive(Clone)]
struct Row {
    remote: Text,
    id: Text,
    row: Text,
}

/// The part of an entry's key that is no object id: the remote and the id,
/// hashed (a collision is only a miss: both are compared).
fn slot(remote: &str, id: &str) -> u64 {
    std::hash::BuildHasher::hash_one(&foldhash::fast::FixedState::default(), (remote, id))
}

#[derive(Default)]
pub struct RemoteCache {
    /// Where it is written; `None`: never (a bare repository, no key).
    path: Option<PathBuf>,
    /// Its name (`remote`, `remote-rows`), in its first line.
    name: String,
    key: Option<[u8; 16]>,
    /// The file as read: the entries below point into it.
    text: String,
    /// (record commit, a hash of the remote and id) -> the remote and the
    /// session id it was checked for, and its row.
    rows: HashMap<(Oid, u64), Row>,
    /// (tip, base) -> commits on tip that base lacks.
    ahead: HashMap<(Oid, Oid), usize>,
    used_rows: HashSet<(Oid, u64)>,
    used_ahead: HashSet<(Oid, Oid)>,
    added: bool,
}

impl RemoteCache {
    /// The repository's cache file `name` (`<common>/bullpen/cache/<name>`) as
    /// it holds it: empty when there is none, or it is not one this bullpen
    /// wrote here under that name. The key is made on first use.
    pub fn open(repo: &Repo, name: &str) -> RemoteCache {
        let dir = repo.common_dir().join("bullpen").join("cache");
        let Some(key) = (!repo.is_bare()).then(|| key(&dir).ok()).flatten() else {
            return RemoteCache::none();
        };
        let file = dir.join(name);
        // Never blocks: a FIFO (or anything but a regular file) there is no cache.
        let mut cache = crate::sys::regular::read(&file)
            .ok()
            .flatten()
            .and_then(|bytes| parse(&key, name, bytes))
            .unwrap_or_default();
        cache.path = Some(file);
        cache.name = name.to_owned();
        cache.key = Some(key);
        cache
    }

    /// A cache that holds nothing and is never written.
    pub fn none() -> RemoteCache {
        RemoteCache::default()
    }

    /// The row cached for record commit `commit` of session `id` fetched from
    /// `remote`, if it passed the checks for exactly that remote and id.
    pub fn row(&mut self, remote: &str, id: &SessionId, commit: Oid) -> Option<&str> {
        let key = (commit, slot(remote, id.as_str()));
        let entry = self.rows.get(&key)?;
        if self.text(&entry.remote) != remote || self.text(&entry.id) != id.as_str() {
            return None;
        }
        self.used_rows.insert(key);
        let entry = self.rows.get(&key)?;
        Some(self.text(&entry.row))
    }

    /// Remember `row` for record commit `commit`, which passed the checks for
    /// session `id` fetched from `remote`. A row is one line.
    pub fn put_row(&mut self, remote: &str, id: &SessionId, commit: Oid, row: String) {
        if self.key.is_none() || row.contains('\n') || remote.contains(' ') {
            return;
        }
        let key = (commit, slot(remote, id.as_str()));
        let entry = Row {
            remote: Text::Added(remote.to_owned()),
            id: Text::Added(id.to_string()),
            row: Text::Added(row),
        };
        self.rows.insert(key, entry);
        self.used_rows.insert(key);
        self.added = true;
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
        let unused =
            self.rows.len() != self.used_rows.len() || self.ahead.len() != self.used_ahead.len();
        if !(self.added || prune && unused) {
            return Ok(());
        }
        let mut out = String::with_capacity(
            64 + self
                .rows
                .values()
                .map(|e| {
                    self.text(&e.remote).len()
                        + self.text(&e.id).len()
                        + self.text(&e.row).len()
                        + 46
                })
                .sum::<usize>()
                + self.ahead.len() * 100,
        );
        out.push_str(&header(&self.name));
        out.push('\n');
        let mut rows: Vec<(&(Oid, u64), &Row)> = self
            .rows
            .iter()
            .filter(|(k, _)| !prune || self.used_rows.contains(k))
            .collect();
        rows.sort_by_key(|(k, _)| **k);
        for ((commit, _), e) in rows {
            let (remote, id, row) = (self.text(&e.remote), self.text(&e.id), self.text(&e.row));
            let _ = writeln!(out, "r {commit} {remote} {id} {row}");
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
fn parse(key: &[u8; 16], name: &str, bytes: Vec<u8>) -> Option<RemoteCache> {
    let text = String::from_utf8(bytes).ok()?;
    let body_end = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let (body, last) = text.split_at(body_end);
    let tag = u128::from_str_radix(last.strip_prefix("mac ")?.strip_suffix('\n')?, 16).ok()?;
    if tag != mac(key, body.as_bytes()) {
        return None;
    }
    let mut lines = body.split_inclusive('\n');
    if lines.next()?.strip_suffix('\n')? != header(name) {
        return None;
    }
    let mut cache = RemoteCache::default();
    let mut at = header(name).len() + 1;
    for line in lines {
        let start = at;
        at += line.len();
        let line = line.strip_suffix('\n')?;
        // Where a part of `line` is in the file.
        let range = |part: &str| {
            let from = start + (part.as_ptr() as usize - line.as_ptr() as usize);
            from..from + part.len()
        };
        let mut parts = line.splitn(5, ' ');
        match (
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next(),
            parts.next(),
        ) {
            ("r", commit, remote, Some(id), Some(row)) => {
                let key = (commit.parse().ok()?, slot(remote, id));
                let entry = Row {
                    remote: Text::InFile(range(remote)),
                    id: Text::InFile(range(id)),
                    row: Text::InFile(range(row)),
                };
                cache.rows.insert(key, entry);
            }
            ("a", tip, base, Some(n), None) => {
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
            name: "remote".into(),
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
        let id: SessionId = "x".parse().unwrap();
        c.put_row("origin", &id, oid('c'), "{\"id\":\"x\"} and more".into());
        let text = saved(c, dir.path());
        let mut back = parse(&key, "remote", text.clone().into_bytes()).unwrap();
        assert_eq!(back.ahead.get(&(oid('a'), oid('b'))), Some(&3));
        assert_eq!(
            back.row("origin", &id, oid('c')),
            Some("{\"id\":\"x\"} and more")
        );
        // Only for the remote and the id it was checked for.
        assert_eq!(back.row("upstream", &id, oid('c')), None);
        assert_eq!(back.row("origin", &"y".parse().unwrap(), oid('c')), None);
        assert_eq!(back.row("origin", &id, oid('d')), None);
        for cut in 1..text.len() {
            assert!(
                parse(&key, "remote", text.as_bytes()[..cut].to_vec()).is_none(),
                "cut at {cut}"
            );
        }
        // Any edit, or another key, and none of it is read.
        assert!(parse(&key, "remote", text.replace(" 3\n", " 4\n").into_bytes()).is_none());
        assert!(parse(&key, "remote", text.replace(" x ", " y ").into_bytes()).is_none());
        assert!(parse(&key, "remote", text.replace("origin", "upstr").into_bytes()).is_none());
        assert!(parse(&[8u8; 16], "remote", text.clone().into_bytes()).is_none());
        assert!(parse(
            &key,
            "remote",
            text.replace("cache 2", "cache 3").into_bytes()
        )
        .is_none());
    }

    /// A file of another version (whose checks made its entries), its MAC
    /// right under this key, is not read.
    #[test]
    fn a_file_of_another_version_is_not_read() {
        let key = [7u8; 16];
        let commit = oid('c');
        let ours = format!("{}\nr {commit} origin x {{}}\n", header("remote"));
        let theirs = ours.replace(env!("CARGO_PKG_VERSION"), "0.0.0-other");
        let with_mac = |body: &str| format!("{body}mac {:032x}\n", mac(&key, body.as_bytes()));
        assert!(parse(&key, "remote", with_mac(&ours).into_bytes()).is_some());
        assert!(parse(&key, "remote", with_mac(&theirs).into_bytes()).is_none());
        // Nor one of another name.
        assert!(parse(&key, "remote-rows", with_mac(&ours).into_bytes()).is_none());
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
