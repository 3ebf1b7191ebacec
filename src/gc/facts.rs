//! The facts `gc` decides on, gathered from git, the file system and `/proc`
//! (see [`super::plan`] for the decisions). For many sessions at once: one
//! publish walk, one `/proc` scan, registered worktrees indexed once, and status
//! (the costly fact) only where it decides, on a few threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::plan::{
    self, Branch, Contents, Link, Liveness, Marker, OnDisk, OrphanFacts, Places, Registration,
    SessionFacts, Via,
};
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::git::{DotGit, Worktree};
use crate::model::command::quoted;
use crate::model::id::GC_TEARDOWN_KEY as MARKER_KEY;
use crate::model::paths::normalize;
use crate::model::usage::Busy;
use crate::model::{Oid, Record, SessionId, State};
use crate::run::liveness::{live_process, live_spawner};
use crate::sys::paths;
use crate::sys::procfs::{self, Scan};
use crate::trust::{self, local::Local};

/// The key paths are compared under ([`paths::comparable`]).
pub(crate) fn key(path: &Path) -> PathBuf {
    paths::comparable(path)
}

/// Owned versions of the places a recorded path must never be.
struct PlacePaths {
    root: PathBuf,
    home: Option<PathBuf>,
    repo: PathBuf,
    git_dir: PathBuf,
}

impl PlacePaths {
    fn places(&self) -> Places<'_> {
        Places {
            worktree_root: &self.root,
            home: self.home.as_deref(),
            repo: &self.repo,
            git_dir: &self.git_dir,
        }
    }
}

fn place_paths(ctx: &Ctx, root: &Path) -> (PlacePaths, PlacePaths) {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let lexical = PlacePaths {
        root: root.to_path_buf(),
        home: home.as_deref().map(normalize),
        repo: ctx.repo.main_worktree().to_path_buf(),
        git_dir: ctx.repo.common_dir().to_path_buf(),
    };
    let canon = |p: &Path| paths::canonical_or_self(p);
    let canonical = PlacePaths {
        root: canon(&lexical.root),
        home: lexical.home.as_deref().map(canon),
        repo: canon(&lexical.repo),
        git_dir: canon(&lexical.git_dir),
    };
    (lexical, canonical)
}

/// Gather the facts of these sessions: one publish walk for all of them, one
/// `/proc` scan for all their directories, a status per trusted worktree.
/// `plan` decides where the costly facts (status, nested repositories) are
/// needed: gc's plan, or `rm --force`'s.
pub(crate) fn gather_sessions(
    ctx: &Ctx,
    sessions: &[Stored],
    plan: fn(&SessionFacts) -> plan::Decision,
) -> Result<Vec<Result<SessionFacts>>> {
    let repo = &ctx.repo;
    let worktrees = repo.worktrees()?;
    let known = Known::new(&worktrees);
    let (lexical, canonical) = place_paths(ctx, &ctx.layout.worktree_root);
    let tips: Vec<Result<Option<Oid>>> = sessions
        .iter()
        .map(|s| repo.ref_target(&s.record.id.branch_ref()))
        .collect();
    let all_tips: Vec<Oid> = tips
        .iter()
        .filter_map(|t| t.as_ref().ok().copied().flatten())
        .collect();
    let unpublished = repo.unpublished(&all_tips)?;
    let unpublished_tips: Vec<Oid> = unpublished.iter().copied().collect();
    let ahead = match repo.commits_not_on_remotes(&unpublished_tips) {
        Ok(a) => a,
        Err(e) => {
            ctx.ui
                .warn(format!("cannot count unpublished commits: {e:#}"));
            HashMap::new()
        }
    };

    let mut partial = Vec::with_capacity(sessions.len());
    for (s, tip) in sessions.iter().zip(tips) {
        partial.push(tip.and_then(|tip| {
            let at_base = s.record.state == State::Provisioning
                && tip.is_some_and(|t| s.record.base.parse::<Oid>().ok() == Some(t));
            let branch = match tip {
                None => Branch::Missing,
                Some(tip) if at_base => Branch::AtBase { tip },
                Some(tip) if unpublished.contains(&tip) => Branch::Unpublished {
                    tip,
                    ahead: ahead.get(&tip).copied(),
                },
                Some(tip) => Branch::Published { tip },
            };
            session_facts(ctx, s, branch, &known, &lexical, &canonical)
        }));
    }
    let dirs: Vec<PathBuf> = partial
        .iter()
        .filter_map(|f| f.as_ref().ok())
        .filter(|f| f.untrusted.is_none() && f.on_disk == OnDisk::Directory)
        .map(|f| PathBuf::from(&f.worktree))
        .collect();
    let scan = procfs::scan(&dirs);
    for f in partial.iter_mut().flatten() {
        if f.untrusted.is_none() && f.on_disk == OnDisk::Directory {
            f.busy = scan.busy(Path::new(&f.worktree));
        }
    }
    // Status is the costly fact: computed only where it decides, registered
    // worktrees in parallel.
    let mut through_entry = Vec::new();
    for (i, f) in partial.iter_mut().enumerate() {
        let Ok(f) = f else { continue };
        if !plan(f).needs_status() {
            continue;
        }
        match status_via(f) {
            StatusVia::Entry => through_entry.push(i),
            StatusVia::AgainstTip(tip) => {
                f.dirt = Some(
                    repo.dirt_against(Path::new(&f.worktree), tip)
                        .map_err(|e| format!("{e:#}")),
                )
            }
            StatusVia::None => {
                f.dirt = Some(Err("there is no way to compute its status".to_owned()))
            }
        }
    }
    let paths: Vec<PathBuf> = through_entry
        .iter()
        .filter_map(|&i| partial[i].as_ref().ok())
        .map(|f| PathBuf::from(&f.worktree))
        .collect();
    for (i, dirt) in through_entry.into_iter().zip(repo.dirt_many(&paths)) {
        if let Ok(f) = &mut partial[i] {
            f.dirt = Some(dirt.map_err(|e| format!("{e:#}")));
        }
    }
    // Nested repositories: a walk of the whole tree, ignored directories too,
    // so only where nothing else keeps the session.
    let mut wanted = Vec::new();
    let mut targets = Vec::new();
    for (i, f) in partial.iter().enumerate() {
        let Ok(f) = f else { continue };
        if !plan(f).needs_nested() {
            continue;
        }
        let dir = (f.on_disk == OnDisk::Directory).then(|| PathBuf::from(&f.worktree));
        let admin = f.registration.as_ref().map(|r| r.admin_id.clone());
        wanted.push(i);
        targets.push((dir, admin));
    }
    for (i, nested) in wanted.into_iter().zip(repo.nested_many(&targets)) {
        if let Ok(f) = &mut partial[i] {
            f.nested = Some(nested.map_err(|e| format!("{e:#}")));
        }
    }
    Ok(partial)
}

enum StatusVia {
    /// Through its worktree entry (gix status).
    Entry,
    /// Its entry is gone: against the branch tip.
    AgainstTip(Oid),
    None,
}

fn status_via(f: &SessionFacts) -> StatusVia {
    match (plan::via(f), f.branch_state.tip()) {
        (Some(Via::GitWorktreeRemove), _) => StatusVia::Entry,
        // What is left of a teardown, or a tree whose entry is gone: compared with
        // the branch tip (its index may be gone).
        (Some(Via::AdminEntryGone | Via::FinishTeardown), Some(tip)) => StatusVia::AgainstTip(tip),
        _ => StatusVia::None,
    }
}

/// The registered worktrees, indexed once per gathering (so 1,000 sessions do
/// not resolve 1,000 paths each).
struct Known<'a> {
    /// Linked and main worktrees by [`key`] of their path.
    by_key: HashMap<PathBuf, &'a Worktree>,
    /// Worktrees by the ref their HEAD is on, with their key.
    by_head: HashMap<&'a str, Vec<(PathBuf, &'a Worktree)>>,
}

impl<'a> Known<'a> {
    fn new(worktrees: &'a [Worktree]) -> Known<'a> {
        let mut by_key = HashMap::new();
        let mut by_head: HashMap<&str, Vec<(PathBuf, &Worktree)>> = HashMap::new();
        for w in worktrees {
            let k = key(&w.path);
            if let Some(head) = w.head_ref.as_deref() {
                by_head.entry(head).or_default().push((k.clone(), w));
            }
            by_key.entry(k).or_insert(w);
        }
        Known { by_key, by_head }
    }
}

/// Every fact about one session except who uses its directory.
fn session_facts(
    ctx: &Ctx,
    s: &Stored,
    branch_state: Branch,
    known: &Known,
    lexical: &PlacePaths,
    canonical: &PlacePaths,
) -> Result<SessionFacts> {
    let repo = &ctx.repo;
    let r = &s.record;
    let path = PathBuf::from(&r.worktree);
    let branch_ref = r.id.branch_ref();
    let resolved = std::fs::canonicalize(&path).ok();
    // A session this machine created under an earlier worktree root is checked
    // against that root (`trust::session_layout`); any other record against the
    // current one.
    let own = crate::trust::session_layout(&ctx.layout, r);
    let own_places;
    let (lexical, canonical) = if own.worktree_root == ctx.layout.worktree_root {
        (lexical, canonical)
    } else {
        own_places = place_paths(ctx, &own.worktree_root);
        (&own_places.0, &own_places.1)
    };
    let canonical_places = canonical.places();
    let mut untrusted = plan::untrusted(
        &path,
        &lexical.places(),
        resolved.as_deref().map(|c| (c, &canonical_places)),
    );
    if untrusted.is_none() && r.branch != r.id.branch() {
        untrusted = Some(format!(
            "it names branch {}, but the session's branch is {}",
            quoted(&r.branch),
            r.id.branch()
        ));
    }
    let on_disk = match path.symlink_metadata() {
        Ok(m) if m.is_dir() => OnDisk::Directory,
        Ok(m) if m.file_type().is_symlink() => OnDisk::Other("a symlink".to_owned()),
        Ok(m) if m.is_file() => OnDisk::Other("a file".to_owned()),
        Ok(_) => OnDisk::Other("not a directory".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::Missing,
        Err(e) => OnDisk::Other(format!("unreadable ({e})")),
    };
    let k = key(&path);
    let registration = known
        .by_key
        .get(&k)
        .filter(|w| w.admin_id.is_some())
        .and_then(|w| {
            Some(Registration {
                admin_id: w.admin_id.clone()?,
                head_ref: w.head_ref.clone(),
                locked: w.locked,
            })
        });
    let checked_out_elsewhere = known
        .by_head
        .get(branch_ref.as_str())
        .into_iter()
        .flatten()
        .filter(|(wk, _)| *wk != k)
        .map(|(_, w)| w.path.to_string_lossy().into_owned())
        .collect();
    let link = if on_disk == OnDisk::Directory && untrusted.is_none() {
        link(repo.dot_git(&path))
    } else {
        Link::Absent
    };
    let marker = marker(r);
    Ok(SessionFacts {
        id: r.id.to_string(),
        state: r.state,
        worktree: r.worktree.clone(),
        branch: r.id.branch(),
        untrusted,
        on_disk,
        registration,
        link,
        branch_state,
        dirt: None,
        nested: None,
        liveness: liveness(r),
        busy: Busy::Idle,
        marker,
        checked_out_elsewhere,
        created_here: created_here(ctx, r),
        spawner_alive: live_spawner(ctx, r),
    })
}

/// The local proof that bullpen created the session's worktree here.
fn created_here(ctx: &Ctx, r: &Record) -> std::result::Result<(), String> {
    created_here_at(ctx, &r.id, &r.worktree)
}

/// The local proof that bullpen created session `id`'s worktree here, at `worktree`.
pub(crate) fn created_here_at(
    ctx: &Ctx,
    id: &SessionId,
    worktree: &str,
) -> std::result::Result<(), String> {
    let created = Local::of(&ctx.layout, id).created();
    let created = created
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    trust::decide::created_here(worktree, created).map_err(|why| why.describe())
}

/// Is the session's own process alive? Only asked for records in `running`.
/// A recorded process whose identity cannot be verified (no start time or boot
/// id) counts as alive while its pid exists: gc keeps what it cannot tell.
fn liveness(r: &Record) -> Liveness {
    if r.state != State::Running {
        return Liveness::NotRunning;
    }
    let Some(p) = &r.process else {
        return Liveness::Unknown;
    };
    let unverifiable = p.start_time.is_none() || p.boot_id.is_none();
    if unverifiable && procfs::pid_exists(p.pid) {
        return Liveness::Alive { pid: p.pid };
    }
    // The command, its supervisor, or anything left in its process group.
    match live_process(r) {
        Some(pid) => Liveness::Alive { pid },
        None => Liveness::NotRunning,
    }
}

fn marker(r: &Record) -> Option<Marker> {
    let m = r.extra.get(MARKER_KEY)?;
    Some(Marker {
        admin_id: m.get("admin_id")?.as_str()?.to_owned(),
        tip: m.get("tip")?.as_str()?.parse().ok()?,
    })
}

/// What a directory's `.git` entry says, in the plan's words.
fn link(dot_git: DotGit) -> Link {
    match dot_git {
        DotGit::Absent => Link::Absent,
        DotGit::Directory => Link::Repository,
        DotGit::Ours {
            admin_id,
            admin_exists,
        } => Link::Ours {
            admin_id,
            admin_exists,
        },
        DotGit::Foreign { description } => Link::Foreign(description),
    }
}

pub(crate) fn orphan_facts(ctx: &Ctx, path: &Path, scan: &Scan) -> OrphanFacts {
    let contents = match ctx.repo.dot_git(path) {
        DotGit::Directory => Contents::Repository,
        dot_git => match count_files(path) {
            Ok(0) => Contents::NoWork {
                dot_git: link(dot_git),
            },
            Ok(n) => Contents::Files(n),
            Err(e) => Contents::Unreadable(e),
        },
    };
    OrphanFacts {
        path: path.to_string_lossy().into_owned(),
        contents,
        busy: scan.busy(path),
    }
}

/// Files and symlinks under `dir` (never following symlinks), not counting a
/// top-level `.git` file. Stops counting at a cap: any count is "has work".
fn count_files(dir: &Path) -> std::result::Result<usize, String> {
    const CAP: usize = 10_000;
    let mut n = 0;
    let mut stack = vec![(dir.to_path_buf(), true)];
    while let Some((d, top)) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| format!("cannot list {}: {e}", d.display()))?;
        for entry in rd {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", d.display()))?;
            let ft = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", entry.path().display()))?;
            if ft.is_dir() {
                stack.push((entry.path(), false));
            } else if !(top && entry.file_name() == ".git" && ft.is_file()) {
                n += 1;
                if n >= CAP {
                    return Ok(n);
                }
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_files_but_not_the_top_dot_git_file() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join(".git"), "gitdir: /nowhere\n").unwrap();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        assert_eq!(count_files(d).unwrap(), 0);
        std::fs::write(d.join("a/b/.git"), "x").unwrap();
        assert_eq!(count_files(d).unwrap(), 1);
        std::os::unix::fs::symlink("/etc", d.join("l")).unwrap();
        assert_eq!(count_files(d).unwrap(), 2);
    }
}
