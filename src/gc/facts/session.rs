//! The facts of one session, except who uses its directory, status and
//! nested repositories: its path (confined or why not), what is on disk there,
//! its registration, liveness, local proof and teardown note.

use super::*;
use crate::trust::decide::CreatedHere;

/// The registered worktrees, indexed once per gathering (so 1,000 sessions do
/// not resolve 1,000 paths each).
/// What a removal needs besides the plan's word, as gathered with the facts:
/// the path confined to its root, and the local proof that bullpen created it.
pub(super) struct Acting {
    pub(super) confined: Option<ConfinedPath>,
    pub(super) created: Option<CreatedHere>,
}

pub(super) struct Known<'a> {
    /// Linked and main worktrees by [`key`] of their path.
    pub(super) by_key: HashMap<PathBuf, &'a Worktree>,
    /// Worktrees by the ref their HEAD is on, with their key.
    pub(super) by_head: HashMap<&'a str, Vec<(PathBuf, &'a Worktree)>>,
}

impl<'a> Known<'a> {
    pub(super) fn new(worktrees: &'a [Worktree]) -> Known<'a> {
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

/// The files bullpen copied into the session's worktree (its local state says
/// which, and what they held) that changed since: another content, or another
/// kind of file. One deleted loses nothing (the main worktree has it); one
/// whose stat is as copied (`IncludedFile::unchanged`) is not read again.
pub(super) fn edited_copies(ctx: &Ctx, r: &Record) -> std::result::Result<Vec<String>, String> {
    let included = Local::of(&ctx.layout, &r.id)
        .included()
        .map_err(|e| format!("{e:#}"))?;
    let Some(included) = included else {
        return Ok(Vec::new());
    };
    let worktree = Path::new(&r.worktree);
    let mut edited = Vec::new();
    for f in included.files {
        let rel = Path::new(&f.path);
        let through_real_dirs = copy::is_plain_relative(rel)
            && copy::real_dirs_to(worktree, rel, false)
                .map_err(|e| format!("cannot inspect {}: {e}", worktree.join(rel).display()))?;
        if !through_real_dirs {
            edited.push(f.path);
            continue;
        }
        let path = worktree.join(rel);
        let meta = match path.symlink_metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
        };
        if !meta.is_file() {
            edited.push(f.path);
            continue;
        }
        let mtime = (meta.mtime(), meta.mtime_nsec());
        if f.unchanged(
            meta.len(),
            mtime,
            (meta.ctime(), meta.ctime_nsec()),
            meta.ino(),
        ) {
            continue;
        }
        let now = ctx.repo.hash_file(&path).map_err(|e| format!("{e:#}"))?;
        if now.map(|o| o.to_string()).as_deref() != Some(f.blob.as_str()) {
            edited.push(f.path);
        }
    }
    Ok(edited)
}

/// When a session was last active, as its record says: the latest of its
/// creation, its run's start and its end (not `updated_at`: gc's own notes in
/// the record move that).
pub(super) fn last_active(r: &Record) -> Option<i64> {
    let p = r.process.as_ref();
    [
        Some(r.created_at.as_str()),
        p.map(|p| p.started_at.as_str()),
        r.exit.as_ref().map(|e| e.at.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter_map(time::parse_rfc3339)
    .max()
}

/// Who uses a session's directory, less the session's own processes while it
/// runs (its command, its supervisor, its process group): those are named once,
/// as "the session's process is running", never as strangers. Only when the run
/// is alive as recorded: a record naming a stranger's pid hides nobody otherwise.
pub(super) fn strangers(busy: Busy, r: &Record, liveness: Liveness) -> Busy {
    let (Busy::InUse(users), Liveness::Alive { .. }, Some(p)) = (&busy, liveness, &r.process)
    else {
        return busy;
    };
    let left: Vec<User> = users
        .iter()
        .filter(|u| !own_process(p, u.pid))
        .cloned()
        .collect();
    if left.is_empty() {
        Busy::Idle
    } else {
        Busy::InUse(left)
    }
}

/// Is `pid` the recorded run's command, its supervisor, or in its process group?
fn own_process(p: &Process, pid: u32) -> bool {
    let now = procfs::identity(pid);
    if pid == p.pid && same_process(p, &now) {
        return true;
    }
    if Some(pid) == p.supervisor_pid && p.supervisor_start_time.is_some() {
        let supervisor = Process {
            start_time: p.supervisor_start_time,
            ..p.clone()
        };
        if same_process(&supervisor, &now) {
            return true;
        }
    }
    match (Group::of(p), procfs::stat(pid)) {
        (Some(g), Some(stat)) => g.has_member(&stat),
        _ => false,
    }
}

/// Every fact about one session except who uses its directory; and its path,
/// confined to its root, if it is.
pub(super) fn session_facts(
    ctx: &Ctx,
    s: &Stored,
    branch_state: Branch,
    known: &Known,
    lexical: &PlacePaths,
    canonical: &PlacePaths,
) -> Result<(SessionFacts, Acting)> {
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
    let confined = ConfinedPath::new(&own.worktree_root, &path);
    let mut untrusted = plan::untrusted(
        &path,
        &lexical.places(),
        resolved.as_deref().map(|c| (c, &canonical_places)),
        confined.as_ref().map(|_| ()),
    );
    if untrusted.is_none() && r.branch != r.id.branch() {
        untrusted = Some(format!(
            "it names branch {}, but the session's branch is {}",
            quoted(&r.branch),
            r.id.branch()
        ));
    }
    let on_disk = match path.symlink_metadata() {
        Ok(m) if m.is_dir() && interrupted_before_add(ctx, r, &path) => OnDisk::Missing,
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
    let proof = created_here(ctx, r);
    let facts = SessionFacts {
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
        ignored: None,
        liveness: liveness(r),
        busy: Busy::Idle,
        left_behind: left_behind(ctx, r),
        marker,
        checked_out_elsewhere,
        created_here: proof.as_ref().map(|_| ()).map_err(Clone::clone),
        spawner_alive: live_spawner(ctx, r),
        conversation: None,
        edited_copies: Ok(Vec::new()),
    };
    let acting = Acting {
        confined: confined.ok().filter(|_| facts.untrusted.is_none()),
        created: proof.ok(),
    };
    Ok((facts, acting))
}

/// The empty directory a spawn made here, exclusively, just before its `git
/// worktree add`, when the spawn died there: nothing of a worktree, no work.
fn interrupted_before_add(ctx: &Ctx, r: &Record, path: &Path) -> bool {
    r.state == State::Provisioning
        && live_spawner(ctx, r).is_none()
        && created_here(ctx, r).is_ok()
        && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// What the session's ended run left behind, proven its own: what descends
/// from the supervisor that wrote `leftovers.json` here, while it lives as recorded.
fn left_behind(ctx: &Ctx, r: &Record) -> Vec<u32> {
    let Ok(Some(proof)) = Local::of(&ctx.layout, &r.id).leftovers() else {
        return Vec::new();
    };
    match trust::decide::leftover_authority(&proof, &procfs::identity(proof.supervisor.pid)) {
        Some(a) => procfs::descendants(a.supervisor()),
        None => Vec::new(),
    }
}

/// The local proof that bullpen created the session's worktree here.
fn created_here(ctx: &Ctx, r: &Record) -> std::result::Result<CreatedHere, String> {
    created_here_at(ctx, &r.id, &r.worktree)
}

/// The local proof that bullpen created session `id`'s worktree here, at `worktree`.
pub(crate) fn created_here_at(
    ctx: &Ctx,
    id: &SessionId,
    worktree: &str,
) -> std::result::Result<CreatedHere, String> {
    let created = Local::of(&ctx.layout, id).created();
    let created = created
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    trust::decide::created_here(worktree, created).map_err(|why| why.describe())
}

/// Is the session's own process alive? Only asked for records in `running`.
/// A recorded process whose identity cannot be verified (no start time or boot
/// id) is unknown while its pid exists: gc keeps what it cannot tell, and never
/// names that pid as the session's.
fn liveness(r: &Record) -> Liveness {
    if r.state != State::Running {
        return Liveness::NotRunning;
    }
    let Some(p) = &r.process else {
        return Liveness::Unknown;
    };
    let unverifiable = p.start_time.is_none() || p.boot_id.is_none();
    // Kept, but never named as the session's: whoever has that pid may be anyone.
    if unverifiable && procfs::pid_exists(p.pid) {
        return Liveness::Unknown;
    }
    // The command, its supervisor, or anything left in its process group.
    match live_process(r) {
        Some(pid) => Liveness::Alive { pid },
        None => Liveness::NotRunning,
    }
}

pub(super) fn marker(r: &Record) -> Option<Marker> {
    let m = r.extra.get(MARKER_KEY)?;
    Some(Marker {
        admin_id: m.get("admin_id")?.as_str()?.to_owned(),
        tip: m.get("tip")?.as_str()?.parse().ok()?,
    })
}

/// What a directory's `.git` entry says, in the plan's words.
pub(super) fn link(dot_git: DotGit) -> Link {
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
