//! Session records under `refs/bullpen/sessions/<id>` and provenance notes in
//! `refs/notes/bullpen`. Each record ref points at a chain of metadata commits,
//! each holding the record: the ref's history is the session's event log.
//!
//! A record commit is written as one object: a commit over the empty tree
//! whose message ends with the record (`model::record::message`). One written
//! before, or by hand, is a commit whose tree holds `session.json` alone (three
//! objects); both are read, here and from a remote, with the same checks.

use anyhow::{anyhow, bail, Context, Result};

use super::cache::ObjectCache;
use super::remote::RecordObject;
use super::{CasConflict, Expect, Oid, Repo};
use crate::model::command::quoted;
use crate::model::id::{NOTES_REF, RECORD_PREFIX};
use crate::model::remote::{
    check_message, check_record, check_shape, ref_id, Invalid, RemoteName, REMOTES_PREFIX,
};
use crate::model::{record, time, Record, SessionId};

const RECORD_FILE: &str = "session.json";
/// How often an update is re-applied from a fresh read after losing a race.
const CAS_RETRIES: usize = 8;

/// A record together with the metadata commit it was read from (the CAS token).
#[derive(Clone, Debug)]
pub struct Stored {
    pub record: Record,
    pub commit: Oid,
}

/// A record ref that could not be read; reported, never fatal to listing others.
#[derive(Debug)]
pub struct Unreadable {
    pub refname: String,
    pub error: anyhow::Error,
}

/// Whether `err` (anywhere in its chain) is a lost compare-and-swap.
pub fn is_conflict(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<CasConflict>().is_some())
}

fn read_commit(repo: &Repo, refname: &str, commit: Oid) -> Result<Record> {
    let bytes = match repo.empty_tree_message(commit)? {
        Some(message) => record::in_message(&message)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| anyhow!("{refname} ({commit}) holds no record in its message"))?,
        None => repo
            .read_file_at(commit, RECORD_FILE)?
            .ok_or_else(|| anyhow!("{refname} ({commit}) has no {RECORD_FILE}"))?,
    };
    Record::parse(&bytes).with_context(|| format!("cannot read {refname} ({commit})"))
}

pub fn load(repo: &Repo, id: &SessionId) -> Result<Option<Stored>> {
    let refname = id.record_ref();
    let Some(commit) = repo.ref_target(&refname)? else {
        return Ok(None);
    };
    let record = read_commit(repo, &refname, commit)?;
    if &record.id != id {
        return Err(crate::model::Error::failed(format!(
            "{refname} holds the record of session {}, not of '{id}' (edited by hand)",
            quoted(record.id.as_str())
        ))
        .hint(format!("see it with `git log -1 -p {refname}`"))
        .into());
    }
    Ok(Some(Stored { record, commit }))
}

/// Every record, read in-process (no process per session), sorted by creation time.
pub fn load_all(repo: &Repo) -> Result<(Vec<Stored>, Vec<Unreadable>)> {
    load_all_cached(repo, &mut ObjectCache::none())
}

/// [`load_all`], taking the records of commits `cache` holds from it (and
/// adding those it lacks) rather than reading them again (`ls`). The
/// refs are read as they are, without reading the commits they name.
pub fn load_all_cached(
    repo: &Repo,
    cache: &mut ObjectCache,
) -> Result<(Vec<Stored>, Vec<Unreadable>)> {
    let refs = repo.ref_targets_with_prefix(RECORD_PREFIX)?;
    let mut ok = Vec::with_capacity(refs.len());
    let mut bad = Vec::new();
    for (refname, commit) in refs {
        let expected = refname.strip_prefix(RECORD_PREFIX).unwrap_or_default();
        let read = match cache.record(commit) {
            Some(record) => Ok(record),
            None => read_commit(repo, &refname, commit).inspect(|r| cache.put_record(commit, r)),
        };
        match read {
            Ok(record) if record.id.as_str() == expected => ok.push(Stored { record, commit }),
            Ok(record) => bad.push(Unreadable {
                refname,
                error: anyhow!(
                    "it holds the record of session {} (edited by hand)",
                    quoted(record.id.as_str())
                ),
            }),
            Err(error) => bad.push(Unreadable { refname, error }),
        }
    }
    ok.sort_by(|a, b| {
        (&a.record.created_at, &a.record.id).cmp(&(&b.record.created_at, &b.record.id))
    });
    Ok((ok, bad))
}

fn write(repo: &Repo, record: &Record, parent: Option<Oid>, event: &str) -> Result<Oid> {
    write_parents(repo, record, parent.as_slice(), event)
}

fn write_parents(repo: &Repo, record: &Record, parents: &[Oid], event: &str) -> Result<Oid> {
    let json = record.to_json().context("cannot serialize session.json")?;
    // The pid and a nanosecond clock make every metadata commit unique, so that a
    // create (`Expect::Absent`) can never "succeed" twice with the same object.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let head = format!(
        "bullpen: {} {event}\n\nstate: {}\npid: {}\nnonce: {nonce}\n",
        record.id,
        record.state.as_str(),
        std::process::id()
    );
    repo.write_message_commit(&record::message(&head, &json), parents)
}

/// Create a record; fails with a [`CasConflict`] in the chain when the id is taken.
pub fn create(repo: &Repo, record: Record, event: &str) -> Result<Stored> {
    create_from(repo, record, None, event)
}

/// [`create`], the first commit having `parent` (the record of another machine
/// this session continues) as its parent.
pub fn create_from(
    repo: &Repo,
    record: Record,
    parent: Option<Oid>,
    event: &str,
) -> Result<Stored> {
    let refname = record.id.record_ref();
    let commit = write(repo, &record, parent, event)?;
    repo.update_ref(
        &refname,
        commit,
        Expect::Absent,
        &format!("bullpen: {event}"),
    )?;
    Ok(Stored { record, commit })
}

/// Apply `change` to the current record and write it with compare-and-swap. A lost
/// race re-reads the record and re-applies `change`; it never overwrites.
pub fn update(
    repo: &Repo,
    current: &Stored,
    event: &str,
    mut change: impl FnMut(&mut Record),
) -> Result<Stored> {
    let id = current.record.id.clone();
    let refname = id.record_ref();
    let mut base = current.clone();
    for _ in 0..CAS_RETRIES {
        let mut record = base.record.clone();
        change(&mut record);
        record.updated_at = time::now_rfc3339();
        let commit = write(repo, &record, Some(base.commit), event)?;
        match repo.update_ref(
            &refname,
            commit,
            Expect::At(base.commit),
            &format!("bullpen: {event}"),
        ) {
            Ok(()) => return Ok(Stored { record, commit }),
            Err(e) if is_conflict(&e) => {
                base = load(repo, &id)?.ok_or_else(|| {
                    anyhow!("the record of session {id} was deleted while updating it")
                })?;
            }
            Err(e) => return Err(e),
        }
    }
    bail!("could not update the record of session {id}: it kept changing underneath ({CAS_RETRIES} tries)")
}

/// The record commit that joins this clone's record `ours` and a remote's
/// `theirs` when both moved on from a common event: the record of `keep` (the
/// later of the two), with `ours` then `theirs` as parents, so that both
/// histories stay in the log. Only the object is written.
pub fn join(
    repo: &Repo,
    ours: &Stored,
    theirs: &Stored,
    keep: &Stored,
    remote: &RemoteName,
) -> Result<Stored> {
    let event = format!(
        "joined {remote}'s record (there: {} on {})",
        theirs.record.state.as_str(),
        theirs.record.host
    );
    let commit = write_parents(repo, &keep.record, &[ours.commit, theirs.commit], &event)
        .with_context(|| format!("cannot join the records of session {}", ours.record.id))?;
    Ok(Stored {
        record: keep.record.clone(),
        commit,
    })
}

/// Make `joined` (a [`join`] whose first parent is `ours`) this clone's record,
/// if the record is still at `ours`: one compare-and-swap.
pub fn take_join(repo: &Repo, ours: &Stored, joined: &Stored) -> Result<()> {
    repo.update_ref(
        &ours.record.id.record_ref(),
        joined.commit,
        Expect::At(ours.commit),
        "bullpen: joined a remote's record",
    )
}

/// Remove a record entirely (only to undo a failed spawn).
pub fn delete(repo: &Repo, stored: &Stored, why: &str) -> Result<()> {
    repo.delete_ref(&stored.record.id.record_ref(), stored.commit, why)
}

/// Write one provenance note per commit, in one notes commit.
pub fn add_provenance(repo: &Repo, commits: &[Oid], text: &str, id: &SessionId) -> Result<()> {
    if commits.is_empty() {
        return Ok(());
    }
    let notes: Vec<(Oid, String)> = commits.iter().map(|c| (*c, text.to_owned())).collect();
    repo.add_notes(
        NOTES_REF,
        &notes,
        &format!(
            "bullpen: provenance for session {id} ({} commits)",
            commits.len()
        ),
    )
    .with_context(|| format!("cannot write provenance notes to {NOTES_REF}"))
}

/// Apply `change` and write it only if the record is still at `current.commit`:
/// one compare-and-swap, no retry. A lost race returns an error with a
/// [`CasConflict`] in its chain, so the caller can decide again from a fresh read
/// (claiming a session for a run, asking a run to stop).
pub fn try_update(
    repo: &Repo,
    current: &Stored,
    event: &str,
    change: impl FnOnce(&mut Record),
) -> Result<Stored> {
    let mut record = current.record.clone();
    change(&mut record);
    record.updated_at = time::now_rfc3339();
    let commit = write(repo, &record, Some(current.commit), event)?;
    repo.update_ref(
        &record.id.record_ref(),
        commit,
        Expect::At(current.commit),
        &format!("bullpen: {event}"),
    )?;
    Ok(Stored { record, commit })
}

/// The record a ref from another machine points at, read only if it is what a
/// record is (`model::remote::check_shape` or `check_message`, `check_record`):
/// a commit over the empty tree whose message holds the record, or whose tree
/// holds `session.json` alone, no bigger than bullpen reads, the record of `id`
/// on `bullpen/<id>`, with a schema this bullpen understands. Otherwise an
/// error with the [`Invalid`] reason in its chain. `target` is what the ref
/// points at directly (`None`: a symbolic ref).
pub fn read_fetched(repo: &Repo, id: &SessionId, target: Option<Oid>) -> Result<Stored> {
    let commit = target.ok_or_else(|| Invalid::NotACommit("another ref".to_owned()))?;
    let bytes = match repo.record_object(commit)? {
        RecordObject::Other(what) => return Err(Invalid::NotACommit(what).into()),
        RecordObject::TooBig(n) => return Err(Invalid::CommitTooBig(n).into()),
        RecordObject::Message(message) => check_message(&message)?.to_vec(),
        RecordObject::Commit(entries, ids) => {
            check_shape(&entries)?;
            let blob = ids
                .first()
                .copied()
                .ok_or_else(|| Invalid::Shape("is empty".to_owned()))?;
            repo.read_blob(blob)?
        }
    };
    let record = check_record(id, &bytes)?;
    Ok(Stored { record, commit })
}

/// The records fetched from `remote` (`refs/bullpen/remotes/<remote>/sessions/`),
/// each checked again as [`read_fetched`] does (a ref there may have been written
/// by plain git, or by hand), sorted by creation time. One that fails is
/// reported, never fatal to the others.
pub fn load_remote(repo: &Repo, remote: &RemoteName) -> Result<(Vec<Stored>, Vec<Unreadable>)> {
    let mut all = load_remotes(repo, Some(remote))?;
    Ok(all
        .pop()
        .map_or_else(Default::default, |f| (f.records, f.unreadable)))
}

/// The records fetched from one remote.
#[derive(Debug)]
pub struct FetchedRecords {
    pub remote: RemoteName,
    pub records: Vec<Stored>,
    pub unreadable: Vec<Unreadable>,
}

/// [`load_remote`] for `only` or every remote records were fetched from (the
/// names under `refs/bullpen/remotes/`, also of a remote since removed from the
/// configuration), sorted by remote, in one listing of the refs.
pub fn load_remotes(repo: &Repo, only: Option<&RemoteName>) -> Result<Vec<FetchedRecords>> {
    let mut out = Vec::new();
    for (remote, refs) in fetched_refs(repo, only)? {
        let mut f = FetchedRecords {
            remote,
            records: Vec::new(),
            unreadable: Vec::new(),
        };
        for r in refs {
            match r.read(repo) {
                Ok(stored) => f.records.push(stored),
                Err(error) => f.unreadable.push(Unreadable {
                    refname: r.refname,
                    error,
                }),
            }
        }
        f.records.sort_by(|a, b| {
            (&a.record.created_at, &a.record.id).cmp(&(&b.record.created_at, &b.record.id))
        });
        out.push(f);
    }
    Ok(out)
}

/// A ref under `refs/bullpen/remotes/<remote>/sessions/`, listed, not read:
/// nothing of it is checked but its name.
#[derive(Debug)]
pub struct FetchedRef {
    pub refname: String,
    /// The session id its name says, or why it says none.
    pub id: std::result::Result<SessionId, Invalid>,
    /// What it points at directly (`None`: a symbolic ref).
    pub target: Option<Oid>,
}

impl FetchedRef {
    /// The record, checked as [`read_fetched`] checks it.
    pub fn read(&self, repo: &Repo) -> Result<Stored> {
        let id = self.id.clone().map_err(anyhow::Error::new)?;
        read_fetched(repo, &id, self.target)
    }
}

/// The record refs fetched from `only` or from every remote, grouped by
/// remote (sorted, also a remote whose records are all gone), in one listing
/// of the refs, as they are: no object is read.
pub fn fetched_refs(
    repo: &Repo,
    only: Option<&RemoteName>,
) -> Result<Vec<(RemoteName, Vec<FetchedRef>)>> {
    let prefix = only.map_or_else(|| REMOTES_PREFIX.to_owned(), RemoteName::tracking_prefix);
    let mut out: Vec<(RemoteName, Vec<FetchedRef>)> = Vec::new();
    // The tracking prefix of the remote of the refs last seen (they come sorted).
    let mut tracking = String::new();
    for (refname, target) in repo.ref_ids_under(&prefix)? {
        let Some((remote, rest)) = refname
            .strip_prefix(REMOTES_PREFIX)
            .and_then(|r| r.split_once('/'))
        else {
            continue;
        };
        if out.last().is_none_or(|(r, _)| r.as_str() != remote) {
            let Ok(remote) = remote.parse::<RemoteName>() else {
                continue;
            };
            tracking = remote.tracking_prefix();
            out.push((remote, Vec::new()));
        }
        let Some((_, refs)) = out.last_mut() else {
            continue;
        };
        if !rest.starts_with("sessions/") {
            continue;
        }
        let id = ref_id(&refname, &tracking);
        refs.push(FetchedRef {
            refname,
            id,
            target,
        });
    }
    Ok(out)
}

/// The remotes records were fetched from: the names under `refs/bullpen/remotes/`
/// (also of a remote since removed from the configuration), sorted, without
/// reading a ref (for completion).
pub fn fetched_remotes(repo: &Repo) -> Result<Vec<RemoteName>> {
    let mut names: Vec<RemoteName> = repo
        .ref_dirs_under(REMOTES_PREFIX)?
        .iter()
        .filter_map(|r| r.parse().ok())
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The record of an existing session, or an error that says how to find the
/// right id.
pub fn require(repo: &Repo, id: &SessionId) -> Result<Stored> {
    if let Some(stored) = load(repo, id)? {
        return Ok(stored);
    }
    let names = repo.ref_names_under(RECORD_PREFIX).unwrap_or_default();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut err = crate::model::Error::failed(format!("no session named '{id}'"));
    if let Some(near) = crate::model::suggest::did_you_mean(id.as_str(), &names) {
        err = err.hint(near);
    }
    Err(err
        .hint("see `git bullpen ls --all` for the sessions there are")
        .into())
}
