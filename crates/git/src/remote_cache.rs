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

use foldhash::HashMap;
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

/// An entry of the file as read: its key, and where its remote, id and row
/// are in the file's text. Kept sorted by key (the file is written so), and
/// found by a binary search: no map is built of a file of a thousand lines.
#[derive(Clone, Copy)]
struct FileRow {
    commit: Oid,
    slot: u64,
    remote: (u32, u32),
    id: (u32, u32),
    row: (u32, u32),
}

/// An entry's key: its record commit and a hash of its remote and id.
type Key = (Oid, u64);

/// An entry's remote, id and row, as written.
type Entry<'a> = (&'a str, &'a str, &'a str);

/// An entry added since the file was read: the remote and id its record was
/// checked for, and its row.
struct AddedRow {
    remote: String,
    id: String,
    row: String,
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
    /// The rows of the file, sorted by (record commit, a hash of the remote
    /// and id), and whether this listing used each.
    file_rows: Vec<FileRow>,
    used_file_rows: Vec<bool>,
    /// Rows added since (all of them used).
    added_rows: HashMap<(Oid, u64), AddedRow>,
    /// (tip, base, commits on tip that base lacks) of the file, sorted, and
    /// whether this listing used each; then those added since.
    file_ahead: Vec<(Oid, Oid, usize)>,
    used_file_ahead: Vec<bool>,
    added_ahead: HashMap<(Oid, Oid), usize>,
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
        if let Some(added) = self.added_rows.get(&key) {
            return (added.remote == remote && added.id == id.as_str()).then_some(&added.row);
        }
        let i = self
            .file_rows
            .binary_search_by(|e| row_order(e.commit, e.slot, key))
            .ok()?;
        let e = self.file_rows[i];
        if self.at(e.remote) != remote || self.at(e.id) != id.as_str() {
            return None;
        }
        self.used_file_rows[i] = true;
        Some(self.at(e.row))
    }

    /// Remember `row` for record commit `commit`, which passed the checks for
    /// session `id` fetched from `remote`. A row is one line.
    pub fn put_row(&mut self, remote: &str, id: &SessionId, commit: Oid, row: String) {
        if self.key.is_none() || row.contains('\n') || remote.contains(' ') {
            return;
        }
        let key = (commit, slot(remote, id.as_str()));
        // An entry of the file under the same key gives way to this one.
        if let Ok(i) = self
            .file_rows
            .binary_search_by(|e| row_order(e.commit, e.slot, key))
        {
            self.used_file_rows[i] = false;
        }
        let entry = AddedRow {
            remote: remote.to_owned(),
            id: id.to_string(),
            row,
        };
        self.added_rows.insert(key, entry);
    }

    fn at(&self, (from, to): (u32, u32)) -> &str {
        self.text
            .get(from as usize..to as usize)
            .unwrap_or_default()
    }

    pub fn ahead(&mut self, tip: Oid, base: Oid) -> Option<usize> {
        if let Some(n) = self.added_ahead.get(&(tip, base)) {
            return Some(*n);
        }
        let i = self
            .file_ahead
            .binary_search_by(|(t, b, _)| ahead_order((*t, *b), (tip, base)))
            .ok()?;
        self.used_file_ahead[i] = true;
        Some(self.file_ahead[i].2)
    }

    pub fn put_ahead(&mut self, tip: Oid, base: Oid, n: usize) {
        if self.key.is_none() {
            return;
        }
        if let Ok(i) = self
            .file_ahead
            .binary_search_by(|(t, b, _)| ahead_order((*t, *b), (tip, base)))
        {
            self.used_file_ahead[i] = false;
        }
        self.added_ahead.insert((tip, base), n);
    }

    /// Write the file when it changed: what was added, and with `prune` (a
    /// listing of every fetched session) only what this listing used, else
    /// all it holds. Atomic, not synced: a cache lost in a crash is only
    /// derived again.
    pub fn save(&self, prune: bool) -> Result<()> {
        let (Some(path), Some(key)) = (&self.path, &self.key) else {
            return Ok(());
        };
        let added = !self.added_rows.is_empty() || !self.added_ahead.is_empty();
        let unused = self.used_file_rows.contains(&false) || self.used_file_ahead.contains(&false);
        if !(added || prune && unused) {
            return Ok(());
        }
        // The file's entries that stay (all, or the used ones; never one an
        // added entry replaced), and the added ones.
        let keep_rows = |i: usize| -> bool {
            let e = &self.file_rows[i];
            (!prune || self.used_file_rows[i]) && !self.added_rows.contains_key(&(e.commit, e.slot))
        };
        let mut rows: Vec<(Key, Entry<'_>)> = (0..self.file_rows.len())
            .filter(|&i| keep_rows(i))
            .map(|i| {
                let e = &self.file_rows[i];
                (
                    (e.commit, e.slot),
                    (self.at(e.remote), self.at(e.id), self.at(e.row)),
                )
            })
            .chain(
                self.added_rows
                    .iter()
                    .map(|(k, e)| (*k, (e.remote.as_str(), e.id.as_str(), e.row.as_str()))),
            )
            .collect();
        rows.sort_by(|(a, _), (b, _)| row_order(a.0, a.1, *b));
        let mut ahead: Vec<(Oid, Oid, usize)> = (0..self.file_ahead.len())
            .filter(|&i| {
                let (t, b, _) = self.file_ahead[i];
                (!prune || self.used_file_ahead[i]) && !self.added_ahead.contains_key(&(t, b))
            })
            .map(|i| self.file_ahead[i])
            .chain(self.added_ahead.iter().map(|((t, b), n)| (*t, *b, *n)))
            .collect();
        ahead.sort_by(|(t, b, _), (t2, b2, _)| ahead_order((*t, *b), (*t2, *b2)));
        let mut out = String::with_capacity(
            64 + rows
                .iter()
                .map(|(_, (r, i, row))| r.len() + i.len() + row.len() + 46)
                .sum::<usize>()
                + ahead.len() * 100,
        );
        out.push_str(&header(&self.name));
        out.push('\n');
        for ((commit, _), (remote, id, row)) in rows {
            let _ = writeln!(out, "r {commit} {remote} {id} {row}");
        }
        for (tip, base, n) in ahead {
            let _ = writeln!(out, "a {tip} {base} {n}");
        }
        let mac = mac(key, out.as_bytes());
        let _ = writeln!(out, "mac {mac:032x}");
        crate::sys::atomic::write(path, out.as_bytes())
            .with_context(|| format!("cannot write the cache {}", path.display()))
    }
}

/// SipHash-2-4 (128 bits) of `bytes` under `key`.
/// The order the file's entries are written and found in: by record commit
/// (its first eight bytes as one integer first, which settles nearly every
/// step of a search without a byte-by-byte compare), then the remote and id.
fn row_order(commit: Oid, slot: u64, (key_commit, key_slot): Key) -> std::cmp::Ordering {
    by_lead(&commit, &key_commit).then(slot.cmp(&key_slot))
}

/// [`row_order`] for the commits ahead: by tip, then base.
fn ahead_order(a: (Oid, Oid), b: (Oid, Oid)) -> std::cmp::Ordering {
    by_lead(&a.0, &b.0).then_with(|| by_lead(&a.1, &b.1))
}

/// Object ids by their first eight bytes, then whole.
fn by_lead(a: &Oid, b: &Oid) -> std::cmp::Ordering {
    let lead = |o: &Oid| {
        o.as_bytes()
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, u64::from_be_bytes)
    };
    lead(a).cmp(&lead(b)).then_with(|| a.cmp(b))
}

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
/// version whose MAC under `key` is right, its entries in order.
fn parse(key: &[u8; 16], name: &str, bytes: Vec<u8>) -> Option<RemoteCache> {
    // Offsets are kept in 32 bits.
    if bytes.len() >= u32::MAX as usize {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    let body_end = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let (body, last) = text.split_at(body_end);
    let tag = u128::from_str_radix(last.strip_prefix("mac ")?.strip_suffix('\n')?, 16).ok()?;
    if tag != mac(key, body.as_bytes()) {
        return None;
    }
    let (first, mut rest) = body.split_once('\n')?;
    if first != header(name) {
        return None;
    }
    let mut cache = RemoteCache::default();
    // Where a part of the body is in the file (the body starts it).
    let range = |part: &str| -> (u32, u32) {
        let from = part.as_ptr() as usize - body.as_ptr() as usize;
        (from as u32, (from + part.len()) as u32)
    };
    while let Some((line, next)) = rest.split_once('\n') {
        rest = next;
        let (kind, line) = line.split_once(' ')?;
        let (a, line) = line.split_once(' ')?;
        let (b, line) = line.split_once(' ')?;
        match kind {
            "r" => {
                let (id, row) = line.split_once(' ')?;
                let entry = FileRow {
                    commit: a.parse().ok()?,
                    slot: slot(b, id),
                    remote: range(b),
                    id: range(id),
                    row: range(row),
                };
                if cache.file_rows.last().is_some_and(|p| {
                    row_order(p.commit, p.slot, (entry.commit, entry.slot)).is_ge()
                }) {
                    return None;
                }
                cache.file_rows.push(entry);
            }
            "a" if !line.contains(' ') => {
                let entry = (a.parse().ok()?, b.parse().ok()?, line.parse().ok()?);
                if cache
                    .file_ahead
                    .last()
                    .is_some_and(|(t, b, _)| ahead_order((*t, *b), (entry.0, entry.1)).is_ge())
                {
                    return None;
                }
                cache.file_ahead.push(entry);
            }
            _ => return None,
        }
    }
    if !rest.is_empty() {
        return None;
    }
    cache.used_file_rows = vec![false; cache.file_rows.len()];
    cache.used_file_ahead = vec![false; cache.file_ahead.len()];
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
        assert_eq!(back.ahead(oid('a'), oid('b')), Some(3));
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
