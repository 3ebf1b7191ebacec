//! A sandboxed run's guard, its git side: what the session's `.git`, admin
//! files and the other session branches were at the run's start, and putting
//! back what the run changed that it must not have (`model::sandbox_guard`
//! decides; `run::sandbox_guard` keeps the guard and says what was done).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{Expect, Oid, Repo};
use crate::model::sandbox_guard::{self as guard, BranchNow, BranchVerdict, Made, MadeFile, Now};
use crate::model::SessionId;

/// The admin directory's files a sandboxed run could repoint, besides `HEAD`.
const ADMIN_FILES: [&str; 3] = ["commondir", "gitdir", "config.worktree"];

/// Where the session branches are.
const BRANCHES: &str = "refs/heads/bullpen/";

/// One thing put back at a sandboxed run's end, for the warning and the
/// record's event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PutBack {
    /// The file or ref.
    pub what: String,
    /// What was done, in words (`put back as it was; the run's version is at ...`).
    pub how: String,
}

impl Repo {
    /// At the start of a sandboxed run of session `id`: its worktree's `.git`,
    /// its admin directory's files, and the other session branches. Each of
    /// those branches gets an (empty) reflog if it has none, so that any real
    /// git update of it during the run leaves an entry, whatever
    /// `core.logAllRefUpdates` says (git appends to a reflog that exists).
    pub fn sandbox_made(&self, id: &SessionId, worktree: &Path, admin: &Path) -> Result<Made> {
        let mut files = vec![MadeFile {
            path: worktree.join(".git"),
            content: read_if_file(&worktree.join(".git"))?,
        }];
        for name in ADMIN_FILES {
            let path = admin.join(name);
            files.push(MadeFile {
                content: read_if_file(&path)?,
                path,
            });
        }
        let own = id.branch_ref();
        let mut branches = std::collections::BTreeMap::new();
        for (name, target) in self.ref_targets_with_prefix(BRANCHES)? {
            if name == own {
                continue;
            }
            let log = self.common_dir().join("logs").join(&name);
            if !log.exists() {
                // One that cannot be made is judged without it (kept when it changes).
                let _ = log.parent().map(std::fs::create_dir_all);
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log);
            }
            branches.insert(name, target.to_string());
        }
        Ok(Made {
            files,
            admin: admin.to_path_buf(),
            head: own,
            branches,
            locks: self.branch_locks()?.into_iter().map(|(n, _)| n).collect(),
        })
    }

    /// At the end of a sandboxed run of session `id` (nothing of it running):
    /// put back what [`Repo::sandbox_made`] found and the run could change
    /// though it must not (`model::sandbox_guard` decides), moving what the run
    /// left there into `aside` (or, across file systems, beside it): nothing is
    /// lost. `recorded`: whether a session record names a branch. Returns what
    /// was put back; what cannot be told, or failed, is said as a `PutBack`
    /// too (one failure stops none of the others).
    pub fn sandbox_put_back(
        &self,
        id: &SessionId,
        made: &Made,
        aside: &Path,
        recorded: &dyn Fn(&str) -> bool,
    ) -> Vec<PutBack> {
        let mut out = Vec::new();
        let mut aside = Aside::new(aside);
        for f in &made.files {
            attempt(&mut out, &f.path.display().to_string(), || {
                let now = look(&f.path)?;
                if !guard::changed(f.content.as_deref(), &now) {
                    return Ok(None);
                }
                let kept = aside.take(&f.path, &now)?;
                if let Some(content) = &f.content {
                    crate::sys::atomic::write(&f.path, content)?;
                }
                Ok(Some(put_back_words(f.content.is_some(), kept.as_deref())))
            });
        }
        let head = made.admin.join("HEAD");
        attempt(&mut out, &head.display().to_string(), || {
            let now = look(&head)?;
            if !guard::head_points_away(&made.head, &now) {
                return Ok(None);
            }
            let kept = aside.take(&head, &now)?;
            crate::sys::atomic::write(&head, &guard::head_content(&made.head))?;
            Ok(Some(format!(
                "put back on {}{}",
                made.head,
                kept_words(kept.as_deref())
            )))
        });
        for name in guard::FOREIGN_IN_ADMIN {
            let path = made.admin.join(name);
            attempt(&mut out, &path.display().to_string(), || {
                let now = look(&path)?;
                if now == Now::Absent {
                    return Ok(None);
                }
                let kept = aside.take(&path, &now)?;
                Ok(Some(format!(
                    "moved away (git never keeps a {name} there){}",
                    kept_words(kept.as_deref())
                )))
            });
        }
        match self.branches_put_back(id, made, recorded) {
            Ok(branches) => out.extend(branches),
            Err(e) => out.push(PutBack {
                what: BRANCHES.to_owned(),
                how: format!("NOT checked: {e:#}"),
            }),
        }
        out
    }

    /// The other session branches: each written from inside the run is put
    /// back, and each stale lock it left removed.
    fn branches_put_back(
        &self,
        id: &SessionId,
        made: &Made,
        recorded: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<PutBack>> {
        let first = self.branch_locks()?;
        let mut names: std::collections::BTreeSet<String> = made.branches.keys().cloned().collect();
        // Read as files, not through gix: what the run wrote may be no ref at
        // all (a symbolic one, garbage), and is put back all the same.
        let targets = self.branch_values()?;
        names.extend(targets.keys().cloned());
        let mut now = Vec::new();
        for name in names {
            let (reflog, reflog_last) = self.reflog_last(&name)?;
            now.push(BranchNow {
                target: targets.get(&name).cloned(),
                reflog_last,
                reflog,
                // Asked only of a branch that is new since the start.
                recorded: !made.branches.contains_key(&name)
                    && targets.contains_key(&name)
                    && recorded(name.strip_prefix(BRANCHES).unwrap_or(&name)),
                name,
            });
        }
        let verdicts = guard::branch_verdicts(&id.branch_ref(), &made.branches, &now);
        let second = self.branch_locks()?;
        let mut out = Vec::new();
        for lock in guard::stale_locks(&made.locks, &first, &second) {
            let path = self.common_dir().join(BRANCHES).join(&lock);
            attempt(
                &mut out,
                &path.display().to_string(),
                || match std::fs::remove_file(&path) {
                    Ok(()) => Ok(Some("removed (a stale lock left by the run)".to_owned())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
                },
            );
        }
        for v in verdicts {
            match v {
                BranchVerdict::PutBack {
                    name,
                    to,
                    found,
                    reflog,
                } => attempt(&mut out, &name, || {
                    let to_oid: Oid = to
                        .parse()
                        .with_context(|| format!("{name}'s reflog names {to}, not a commit"))?;
                    let expect = match found.as_deref().map(str::parse::<Oid>) {
                        Some(Ok(f)) => Expect::At(f),
                        Some(Err(_)) => {
                            // Not a commit id (a symbolic ref, garbage): its
                            // loose file goes; what is packed, if any, is the ref.
                            let loose = self.common_dir().join(&name);
                            std::fs::remove_file(&loose)
                                .with_context(|| format!("cannot remove {}", loose.display()))?;
                            match self.ref_target(&name)? {
                                Some(packed) => Expect::At(packed),
                                None => Expect::Absent,
                            }
                        }
                        None => Expect::Absent,
                    };
                    self.update_ref(
                        &name,
                        to_oid,
                        expect,
                        &format!("bullpen: put back after session {id}'s sandboxed run"),
                    )?;
                    let basis = match reflog {
                        true => "its reflog's last",
                        false => "where it was when the run started; its reflog is empty",
                    };
                    let done = match &found {
                        Some(f) => format!("moved it to {f} without a reflog entry"),
                        None => "deleted it".to_owned(),
                    };
                    Ok(Some(format!(
                        "put back at {} ({basis}); the run had {done}",
                        to_oid.short(12)
                    )))
                }),
                BranchVerdict::Unexplained { name, found } => out.push(PutBack {
                    how: format!(
                        "kept at {found}: it changed during the run and has no reflog to tell \
                         whether the run did it"
                    ),
                    what: name,
                }),
            }
        }
        Ok(out)
    }

    /// Every branch under `refs/heads/bullpen/` and what it holds: its loose
    /// file's content, trimmed (a commit id, or whatever else is there), else
    /// its value in `packed-refs`.
    fn branch_values(&self) -> Result<std::collections::BTreeMap<String, String>> {
        let mut out = std::collections::BTreeMap::new();
        let packed = self.common_dir().join("packed-refs");
        match std::fs::read(&packed) {
            Ok(text) => {
                for line in text.split(|b| *b == b'\n') {
                    let line = String::from_utf8_lossy(line);
                    if let Some((oid, name)) = line.split_once(' ') {
                        if name.starts_with(BRANCHES) && !oid.starts_with('#') {
                            out.insert(name.to_owned(), oid.to_owned());
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", packed.display())),
        }
        let mut dirs = vec![self.common_dir().join(BRANCHES)];
        while let Some(dir) = dirs.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
            };
            for entry in entries {
                let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
                let path = entry.path();
                let kind = entry
                    .file_type()
                    .with_context(|| format!("cannot look at {}", path.display()))?;
                if kind.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let name = path
                    .strip_prefix(self.common_dir())
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if name.ends_with(".lock") || !kind.is_file() {
                    continue;
                }
                let text = std::fs::read(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                out.insert(name, String::from_utf8_lossy(&text).trim().to_owned());
            }
        }
        Ok(out)
    }

    /// Whether `name`'s reflog file is there, and its last entry's new value.
    fn reflog_last(&self, name: &str) -> Result<(bool, Option<String>)> {
        let path = self.common_dir().join("logs").join(name);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((false, None)),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        // `<old> <new> <committer>\t<message>` a line.
        let last = text
            .split(|b| *b == b'\n')
            .rev()
            .find(|l| !l.is_empty())
            .and_then(|l| l.split(|b| *b == b' ').nth(1))
            .map(|new| String::from_utf8_lossy(new).into_owned());
        Ok((true, last))
    }

    /// The lock files in `refs/heads/bullpen/`, with their inodes.
    fn branch_locks(&self) -> Result<Vec<(String, u64)>> {
        use std::os::unix::fs::MetadataExt;
        let dir = self.common_dir().join(BRANCHES);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".lock") {
                continue;
            }
            if let Ok(meta) = entry.metadata() {
                out.push((name, meta.ino()));
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Run one put-back; a failure is said as what was not put back, and the
/// others still run.
fn attempt(out: &mut Vec<PutBack>, what: &str, f: impl FnOnce() -> Result<Option<String>>) {
    match f() {
        Ok(None) => {}
        Ok(Some(how)) => out.push(PutBack {
            what: what.to_owned(),
            how,
        }),
        Err(e) => out.push(PutBack {
            what: what.to_owned(),
            how: format!("NOT put back: {e:#}"),
        }),
    }
}

/// The content of `path` when it is a regular file (`None`: there is none).
fn read_if_file(path: &Path) -> Result<Option<Vec<u8>>> {
    match look(path)? {
        Now::File(bytes) => Ok(Some(bytes)),
        Now::Absent => Ok(None),
        Now::Other => bail!(
            "{} is not a file; bullpen cannot guard it for a sandboxed run",
            path.display()
        ),
    }
}

/// What `path` is now, not following a symlink.
fn look(path: &Path) -> Result<Now> {
    match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Now::Absent),
        Err(e) => Err(e).with_context(|| format!("cannot look at {}", path.display())),
        Ok(m) if m.is_file() => {
            Ok(Now::File(std::fs::read(path).with_context(|| {
                format!("cannot read {}", path.display())
            })?))
        }
        Ok(_) => Ok(Now::Other),
    }
}

fn put_back_words(had: bool, kept: Option<&Path>) -> String {
    let what = match had {
        true => "put back as it was when the run started",
        false => "removed (it was not there when the run started)",
    };
    format!("{what}{}", kept_words(kept))
}

fn kept_words(kept: Option<&Path>) -> String {
    kept.map(|k| format!("; the run's version is kept at {}", k.display()))
        .unwrap_or_default()
}

/// Where what a run left in place of its git files goes: a directory made on
/// first use.
struct Aside<'a> {
    dir: &'a Path,
    n: usize,
}

impl<'a> Aside<'a> {
    fn new(dir: &'a Path) -> Aside<'a> {
        Aside { dir, n: 0 }
    }

    /// Move `path` (as it is now: `now`) aside, returning where it went. A
    /// file's content is copied (a worktree may be on another file system);
    /// anything else is renamed, into the directory or, across file systems,
    /// beside itself.
    fn take(&mut self, path: &Path, now: &Now) -> Result<Option<PathBuf>> {
        if *now == Now::Absent {
            return Ok(None);
        }
        crate::sys::atomic::create_private_dir(self.dir)?;
        self.n += 1;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let to = self.dir.join(format!("{}-{name}", self.n));
        if let Now::File(bytes) = now {
            crate::sys::atomic::write(&to, bytes)?;
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            return Ok(Some(to));
        }
        match std::fs::rename(path, &to) {
            Ok(()) => Ok(Some(to)),
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                let beside = path.with_file_name(format!("{name}.put-aside-by-bullpen-{}", self.n));
                std::fs::rename(path, &beside).with_context(|| {
                    format!("cannot move {} to {}", path.display(), beside.display())
                })?;
                Ok(Some(beside))
            }
            Err(e) => Err(e)
                .with_context(|| format!("cannot move {} to {}", path.display(), to.display())),
        }
    }
}
