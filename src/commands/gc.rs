//! `git bullpen gc`: remove the worktrees of sessions whose work is provably
//! safe elsewhere, repair leftovers, and report everything it kept and why.
//!
//! Gather facts (one publish walk for all sessions, one `/proc` scan), decide
//! with the pure [`crate::gc_plan`], then act: right before each removal the
//! facts are gathered again for that one session and the plan asked again.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::busy;
use crate::context::{info, warn, Ctx};
use crate::fsutil::Lock;
use crate::gc_facts::{gather_sessions, key, orphan_facts};
use crate::gc_plan::{
    self, AdminDecision, AdminFacts, Decision, Link, OrphanDecision, SessionFacts, Via,
};
use crate::git::{DotGit, Oid};
use crate::session::GC_TEARDOWN_KEY as MARKER_KEY;
use crate::session::{Record, SessionId, State};
use crate::store::{self, Stored};
use crate::teardown::{self, Target};

const AFTER_LONG_HELP: &str = "\
A session's worktree is removed only when all of these hold, each checked again \
right before removal:
  published  the tip of bullpen/<id> is reachable from a refs/remotes/* ref
  clean      no modified, staged or untracked files (ignored files do not count)
  idle       the session's process is not running, and no process has its current
             directory, root, executable or an open file inside the worktree
  unlocked   the worktree is not locked (git worktree lock)
  ours       a registered worktree of this repository, strictly inside the worktree
             root, with HEAD on bullpen/<id>
Then its local branch is deleted (its commits are on a remote) and the record becomes \
`collected` (see `git bullpen ls --all`); the notes stay.

gc also repairs leftovers: worktree entries whose directory vanished are pruned; \
directories bullpen left in the worktree root (a .git file into this repository's \
worktree entries, or where a collected session's worktree was) that belong to no \
worktree are removed when they hold no work (e.g. only a dangling .git file) and \
reported otherwise; sessions whose worktree is gone are collected when their branch \
is published, reported and kept otherwise. A teardown that a late writer interrupted \
is finished by a later gc. Last, a real run runs `git gc --auto`: bullpen's records \
are loose objects that nothing else packs, and many of them slow down `ls`.

Everything is reported: removed, collected, pruned, kept (with the reason) or \
degraded (with what to do). gc exits 1 when anything degraded, after handling \
everything else; 0 otherwise. Processes of other users, and protected ones, cannot \
be inspected without privileges and are not considered.

--dry-run changes nothing (with --fetch it still fetches) and prints what gc would do. \
--json prints an array of objects with the stable keys kind (session, worktree-entry, \
orphan, record), id, action (removed, collected, pruned, kept, degraded), reason, \
worktree, branch, hint, dry_run.

Examples:
  git bullpen gc --dry-run
  git bullpen gc --fetch --wait 30
  git bullpen gc --json | jq -r '.[] | select(.action == \"kept\") | .reason'";

/// How often busy sessions are looked at again under `--wait`.
const POLL: Duration = Duration::from_millis(250);

/// Remove worktrees of sessions that are published, clean and idle.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Change nothing; print what gc would do.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// Print JSON (an array of objects with stable keys).
    #[arg(long)]
    pub json: bool,

    /// Wait up to SECS for busy sessions to become idle.
    #[arg(long, value_name = "SECS")]
    pub wait: Option<u64>,

    /// Run `git fetch --all --prune` first.
    #[arg(long)]
    pub fetch: bool,
}

/// What happened to one thing gc looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Removed,
    Collected,
    Pruned,
    Kept,
    Degraded,
}

impl Action {
    fn words(self, dry_run: bool) -> &'static str {
        match (self, dry_run) {
            (Action::Removed, false) => "removed",
            (Action::Collected, false) => "collected",
            (Action::Pruned, false) => "pruned",
            (Action::Kept, false) => "kept",
            (Action::Degraded, false) => "degraded",
            (Action::Removed, true) => "would remove",
            (Action::Collected, true) => "would collect",
            (Action::Pruned, true) => "would prune",
            (Action::Kept, true) => "would keep",
            (Action::Degraded, true) => "would fail",
        }
    }
}

/// One line of the report, also the JSON object. Keys are a compatibility
/// surface: add, never rename or remove.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// `session`, `worktree-entry`, `orphan` or `record`.
    pub kind: &'static str,
    pub id: Option<String>,
    pub action: Action,
    pub reason: String,
    pub worktree: Option<String>,
    pub branch: Option<String>,
    pub hint: Option<String>,
    pub dry_run: bool,
}

pub fn run(args: Args, cwd: &Path) -> Result<i32> {
    let ctx = Ctx::discover(cwd)?;
    if args.fetch {
        info("fetching from all remotes (git fetch --all --prune)");
        ctx.repo.fetch_all().context(
            "cannot fetch (--fetch); run gc without --fetch to use the remote-tracking refs you have",
        )?;
    }
    let wait = Duration::from_secs(args.wait.unwrap_or(0));
    let mut gc = Gc {
        ctx: &ctx,
        dry_run: args.dry_run,
        deadline: Instant::now() + wait,
        waiting: wait > Duration::ZERO && !args.dry_run,
    };
    let entries = gc.all()?;
    if !args.dry_run {
        // Every record write adds loose objects that nothing else packs; with many
        // sessions they slow down reading the records (`ls`). A no-op below git's
        // gc.auto threshold.
        if let Err(e) = ctx.repo.gc_auto() {
            warn(format!(
                "git's housekeeping failed (bullpen's gc is done): {e:#}"
            ));
        }
    }

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        crate::context::write_json(&mut out, &entries)?;
    } else {
        render(&mut out, &entries, args.dry_run).context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    for e in entries.iter().filter(|e| e.hint.is_some()) {
        if let Some(h) = &e.hint {
            eprintln!("hint: {}: {h}", subject(e));
        }
    }
    summary(&entries, args.dry_run);
    let degraded = entries.iter().any(|e| e.action == Action::Degraded);
    Ok(if degraded { 1 } else { 0 })
}

fn subject(e: &Entry) -> String {
    match e.kind {
        "worktree-entry" => format!("worktree entry {}", e.id.as_deref().unwrap_or("?")),
        "orphan" => e.worktree.clone().unwrap_or_default(),
        _ => e.id.clone().unwrap_or_default(),
    }
}

/// The human report: one line per thing, `<action> <subject>: <reason>`.
pub fn render(out: &mut dyn Write, entries: &[Entry], dry_run: bool) -> std::io::Result<()> {
    let width = entries
        .iter()
        .map(|e| e.action.words(dry_run).len())
        .max()
        .unwrap_or(0);
    for e in entries {
        writeln!(
            out,
            "{:<width$}  {}: {}",
            e.action.words(dry_run),
            subject(e),
            e.reason
        )?;
    }
    Ok(())
}

fn summary(entries: &[Entry], dry_run: bool) {
    if entries.is_empty() {
        info("gc: nothing to do");
        return;
    }
    let mut parts = Vec::new();
    for action in [
        Action::Removed,
        Action::Collected,
        Action::Pruned,
        Action::Kept,
        Action::Degraded,
    ] {
        let n = entries.iter().filter(|e| e.action == action).count();
        if n > 0 {
            parts.push(format!("{n} {}", action.words(false)));
        }
    }
    let head = if dry_run {
        "gc --dry-run (nothing changed), would be"
    } else {
        "gc"
    };
    info(format!("{head}: {}", parts.join(", ")));
}

struct Gc<'a> {
    ctx: &'a Ctx,
    dry_run: bool,
    deadline: Instant,
    /// `--wait` given (and not a dry run).
    waiting: bool,
}

/// What handling one session came to.
enum Step {
    Done(Entry),
    /// Busy, and `--wait` still has time: look again later.
    Defer,
}

impl Gc<'_> {
    fn all(&mut self) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let (records, unreadable) = store::load_all(repo)?;
        let mut entries = Vec::new();
        for u in &unreadable {
            entries.push(Entry {
                kind: "record",
                id: u
                    .refname
                    .strip_prefix(crate::session::RECORD_PREFIX)
                    .map(str::to_owned),
                action: Action::Kept,
                reason: format!("cannot read the record {}: {:#}", u.refname, u.error),
                worktree: None,
                branch: None,
                hint: Some(format!("inspect it with `git log -p {}`", u.refname)),
                dry_run: self.dry_run,
            });
        }
        let (collected, live): (Vec<Stored>, Vec<Stored>) = records
            .into_iter()
            .partition(|s| s.record.state == State::Collected);
        let collected: Vec<PathBuf> = collected
            .iter()
            .map(|s| PathBuf::from(&s.record.worktree))
            .collect();

        entries.extend(self.admin_entries()?);
        entries.extend(self.orphans(&live, &collected)?);
        entries.extend(self.sessions(live)?);
        Ok(entries)
    }

    fn entry(
        &self,
        kind: &'static str,
        s: Option<&Record>,
        action: Action,
        reason: String,
    ) -> Entry {
        Entry {
            kind,
            id: s.map(|r| r.id.to_string()),
            action,
            reason,
            worktree: s.map(|r| r.worktree.clone()),
            branch: s.map(|r| r.id.branch()),
            hint: None,
            dry_run: self.dry_run,
        }
    }

    // ----- sessions -----

    fn sessions(&mut self, live: Vec<Stored>) -> Result<Vec<Entry>> {
        let order: Vec<SessionId> = live.iter().map(|s| s.record.id.clone()).collect();
        let mut done: HashMap<SessionId, Entry> = HashMap::new();
        let mut pending = live;
        let mut announced = false;
        while !pending.is_empty() {
            let waiting = self.waiting && Instant::now() < self.deadline;
            let facts = gather_sessions(self.ctx, &pending)?;
            let mut deferred = Vec::new();
            for (stored, facts) in pending.into_iter().zip(facts) {
                let step = match facts {
                    Err(e) => Step::Done(self.entry(
                        "session",
                        Some(&stored.record),
                        Action::Kept,
                        format!("cannot tell what state it is in: {e:#}"),
                    )),
                    Ok(f) => {
                        let decision = gc_plan::plan_session(&f);
                        if waiting && decision.is_waitable() {
                            Step::Defer
                        } else if self.dry_run {
                            Step::Done(self.planned(&stored.record, &decision))
                        } else {
                            match decision {
                                Decision::Keep(_) => {
                                    Step::Done(self.planned(&stored.record, &decision))
                                }
                                _ => self.execute(&stored, waiting),
                            }
                        }
                    }
                };
                match step {
                    Step::Done(e) => {
                        done.insert(stored.record.id.clone(), e);
                    }
                    Step::Defer => deferred.push(stored),
                }
            }
            if deferred.is_empty() {
                break;
            }
            if !announced {
                info(format!(
                    "waiting up to {}s for {} busy session(s) to become idle",
                    self.deadline
                        .saturating_duration_since(Instant::now())
                        .as_secs_f32()
                        .ceil(),
                    deferred.len()
                ));
                announced = true;
            }
            std::thread::sleep(POLL.min(self.deadline.saturating_duration_since(Instant::now())));
            pending = deferred;
        }
        Ok(order.iter().filter_map(|id| done.remove(id)).collect())
    }

    /// The entry for a decision as planned (dry run, or a kept session).
    fn planned(&self, r: &Record, d: &Decision) -> Entry {
        match d {
            Decision::Remove { via, .. } => {
                self.entry("session", Some(r), Action::Removed, removed_reason(*via))
            }
            Decision::Collect { tip } => self.entry(
                "session",
                Some(r),
                Action::Collected,
                collected_reason(*tip),
            ),
            Decision::Keep(reasons) => self.entry(
                "session",
                Some(r),
                Action::Kept,
                reasons
                    .iter()
                    .map(|x| x.describe(&r.id.branch()))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        }
    }

    /// Remove or collect one session: under the repository lock, with every fact
    /// gathered again and the plan asked again right before anything is removed.
    fn execute(&self, stored: &Stored, waiting: bool) -> Step {
        let repo = &self.ctx.repo;
        let id = &stored.record.id;
        let degraded = |what: String, hint: String| {
            let mut e = self.entry("session", Some(&stored.record), Action::Degraded, what);
            e.hint = Some(hint);
            Step::Done(e)
        };
        let _lock = match Lock::acquire(&self.ctx.layout.lock_path()) {
            Ok(l) => l,
            Err(e) => {
                return degraded(
                    format!("{e:#}"),
                    "check the permissions of the repository's git directory".to_owned(),
                )
            }
        };
        let fresh = match store::load(repo, id) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Step::Done(self.entry(
                    "session",
                    Some(&stored.record),
                    Action::Kept,
                    "its record was deleted during gc".to_owned(),
                ))
            }
            Err(e) => {
                return Step::Done(self.entry(
                    "session",
                    Some(&stored.record),
                    Action::Kept,
                    format!("cannot read its record again: {e:#}"),
                ))
            }
        };
        if fresh.record.state == State::Collected {
            return Step::Done(self.entry(
                "session",
                Some(&fresh.record),
                Action::Collected,
                "collected by another gc meanwhile".to_owned(),
            ));
        }
        let facts = match gather_sessions(self.ctx, std::slice::from_ref(&fresh)) {
            Ok(mut v) => match v.pop() {
                Some(Ok(f)) => f,
                Some(Err(e)) => {
                    return Step::Done(self.entry(
                        "session",
                        Some(&fresh.record),
                        Action::Kept,
                        format!("cannot tell what state it is in: {e:#}"),
                    ))
                }
                None => {
                    return Step::Done(self.entry(
                        "session",
                        Some(&fresh.record),
                        Action::Kept,
                        "no facts gathered".to_owned(),
                    ))
                }
            },
            Err(e) => {
                return Step::Done(self.entry(
                    "session",
                    Some(&fresh.record),
                    Action::Kept,
                    format!("cannot tell what state it is in: {e:#}"),
                ))
            }
        };
        let decision = gc_plan::plan_session(&facts);
        match decision {
            Decision::Keep(_) if waiting && decision.is_waitable() => Step::Defer,
            Decision::Keep(_) => Step::Done(self.planned(&fresh.record, &decision)),
            Decision::Collect { tip } => {
                if facts.registration.as_ref().is_some_and(|r| !r.locked) {
                    if let Err(e) = repo.worktree_prune() {
                        return degraded(
                            format!("its worktree entry could not be pruned: {e:#}"),
                            "run `git worktree prune`, then `git bullpen gc` again".to_owned(),
                        );
                    }
                }
                self.finish(fresh, tip, Action::Collected, collected_reason(tip))
            }
            Decision::Remove { via, tip } => self.remove(fresh, &facts, via, tip),
        }
    }

    fn remove(&self, fresh: Stored, facts: &SessionFacts, via: Via, tip: Oid) -> Step {
        let repo = &self.ctx.repo;
        let admin_id = match (via, &facts.registration, &facts.link, &facts.marker) {
            (Via::GitWorktreeRemove, Some(reg), _, _) => reg.admin_id.clone(),
            (Via::AdminEntryGone, _, Link::Ours { admin_id, .. }, _) => admin_id.clone(),
            (Via::FinishTeardown, _, _, Some(m)) => m.admin_id.clone(),
            _ => {
                return Step::Done(self.entry(
                    "session",
                    Some(&fresh.record),
                    Action::Kept,
                    "internal: no worktree entry to remove".to_owned(),
                ))
            }
        };
        // Note in the record that teardown starts, so that a later gc can finish a
        // teardown this one could not (see `gc_plan::Marker`).
        let (stored, wrote_marker) = if via == Via::FinishTeardown {
            (fresh, false)
        } else {
            let marker = serde_json::json!({
                "admin_id": admin_id,
                "tip": tip.to_string(),
                "started_at": crate::time::now_rfc3339(),
            });
            // One compare-and-swap against the record just checked: if a resume
            // or another gc changed it since, nothing is removed. Once the note is
            // in, `runner::ensure_not_running` refuses to start a run here.
            match store::try_update(repo, &fresh, "gc: removing the worktree", |r| {
                r.extra.insert(MARKER_KEY.to_owned(), marker.clone());
            }) {
                Ok(s) => (s, true),
                Err(e) if store::is_conflict(&e) => {
                    return Step::Done(
                        self.entry(
                            "session",
                            Some(&fresh.record),
                            Action::Kept,
                            "its record changed during gc (resumed or stopped meanwhile?); \
                         nothing removed"
                                .to_owned(),
                        ),
                    );
                }
                Err(e) => {
                    let mut entry = self.entry(
                        "session",
                        Some(&fresh.record),
                        Action::Degraded,
                        format!("nothing removed: cannot record that teardown starts: {e:#}"),
                    );
                    entry.hint = Some("run `git bullpen gc` again".to_owned());
                    return Step::Done(entry);
                }
            }
        };
        let path = PathBuf::from(&stored.record.worktree);
        let outcome = teardown::remove_worktree(
            repo,
            &self.ctx.layout,
            &Target {
                path: &path,
                admin_id: &admin_id,
                via,
            },
        );
        match outcome {
            teardown::Outcome::Removed { notes } => {
                for n in notes {
                    info(format!("{}: {n}", stored.record.id));
                }
                self.finish(stored, Some(tip), Action::Removed, removed_reason(via))
            }
            teardown::Outcome::Untouched(why) => {
                if wrote_marker {
                    if let Err(e) = store::update(repo, &stored, "gc: kept the worktree", |r| {
                        r.extra.remove(MARKER_KEY);
                    }) {
                        warn(format!(
                            "{}: could not clear the teardown note in its record: {e:#}",
                            stored.record.id
                        ));
                    }
                }
                Step::Done(self.entry("session", Some(&stored.record), Action::Kept, why))
            }
            teardown::Outcome::Degraded { what, hint } => {
                let mut e = self.entry("session", Some(&stored.record), Action::Degraded, what);
                e.hint = Some(hint);
                Step::Done(e)
            }
        }
    }

    /// After the worktree is gone: delete the branch if it still points at
    /// `tip` (compare-and-swap), then mark the record collected.
    fn finish(&self, stored: Stored, tip: Option<Oid>, action: Action, reason: String) -> Step {
        let repo = &self.ctx.repo;
        let r = &stored.record;
        let branch_ref = r.id.branch_ref();
        if let Some(tip) = tip {
            if let Err(e) = repo.delete_ref(&branch_ref, tip, "bullpen: gc") {
                match repo.ref_target(&branch_ref) {
                    Ok(None) => {} // already gone: nothing to keep
                    Ok(Some(now)) if store::is_conflict(&e) => {
                        // The worktree may be gone (Remove) but the session is not
                        // collected: clear the teardown note so nothing finishes it.
                        if let Err(e) = store::update(repo, &stored, "gc: branch moved", |rec| {
                            rec.extra.remove(MARKER_KEY);
                        }) {
                            warn(format!(
                                "{}: could not clear the teardown note in its record: {e:#}",
                                r.id
                            ));
                        }
                        let action = if action == Action::Collected {
                            Action::Kept
                        } else {
                            action
                        };
                        return Step::Done(self.entry(
                            "session",
                            Some(r),
                            action,
                            format!(
                                "{reason}; but {} moved to {now} during gc, so the branch and the record were kept",
                                r.id.branch()
                            ),
                        ));
                    }
                    _ => {
                        let mut entry = self.entry(
                            "session",
                            Some(r),
                            Action::Degraded,
                            format!(
                                "the worktree is gone, but {} could not be deleted: {e:#}",
                                r.id.branch()
                            ),
                        );
                        entry.hint = Some("run `git bullpen gc` again".to_owned());
                        return Step::Done(entry);
                    }
                }
            }
        }
        match store::update(repo, &stored, "collected", |rec| {
            rec.state = State::Collected;
            rec.extra.remove(MARKER_KEY);
        }) {
            Ok(_) => Step::Done(self.entry("session", Some(r), action, reason)),
            Err(e) => {
                let mut entry = self.entry(
                    "session",
                    Some(r),
                    Action::Degraded,
                    format!("the worktree and branch are gone, but the record could not be marked collected: {e:#}"),
                );
                entry.hint = Some("run `git bullpen gc` again".to_owned());
                Step::Done(entry)
            }
        }
    }

    // ----- leftovers -----

    /// Worktree entries whose directory vanished: pruned (one `git worktree prune`).
    fn admin_entries(&self) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let facts: Vec<AdminFacts> = repo
            .worktrees()?
            .into_iter()
            .filter(|w| !w.exists)
            .filter_map(|w| {
                Some(AdminFacts {
                    admin_id: w.admin_id?,
                    path: w.path.to_string_lossy().into_owned(),
                    locked: w.locked,
                })
            })
            .collect();
        let decisions: Vec<AdminDecision> = facts.iter().map(gc_plan::plan_admin_entry).collect();
        let to_prune = decisions.contains(&AdminDecision::Prune);
        let mut prune_error = None;
        let mut still_there = HashSet::new();
        if to_prune && !self.dry_run {
            let _lock = Lock::acquire(&self.ctx.layout.lock_path())?;
            if let Err(e) = repo.worktree_prune() {
                prune_error = Some(format!("{e:#}"));
            }
            still_there = repo
                .worktrees()?
                .into_iter()
                .filter_map(|w| w.admin_id)
                .collect();
        }
        let mut out = Vec::new();
        for (f, d) in facts.iter().zip(decisions) {
            let mut e = Entry {
                kind: "worktree-entry",
                id: Some(f.admin_id.clone()),
                action: Action::Pruned,
                reason: format!("its directory {} is gone", f.path),
                worktree: Some(f.path.clone()),
                branch: None,
                hint: None,
                dry_run: self.dry_run,
            };
            match d {
                AdminDecision::Keep(why) => {
                    e.action = Action::Kept;
                    e.reason = format!("its directory {} is gone, but it is {why}", f.path);
                    // Sessions report their own locked entries; this is for the rest.
                }
                AdminDecision::Prune if !self.dry_run && still_there.contains(&f.admin_id) => {
                    e.action = Action::Degraded;
                    e.reason = format!(
                        "git worktree prune left it in place{}",
                        prune_error
                            .as_deref()
                            .map(|x| format!(": {x}"))
                            .unwrap_or_default()
                    );
                    e.hint = Some("run `git worktree prune -v` to see why".to_owned());
                }
                AdminDecision::Prune => {}
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Directories in the worktree root that no worktree and no session claims,
    /// and that are bullpen's: their `.git` file points into this repository's
    /// worktree entries, or they sit where a collected session's worktree was.
    /// Anything else in the root is not gc's to judge (the root may be shared).
    fn orphans(&self, live: &[Stored], collected: &[PathBuf]) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let root = &self.ctx.layout.worktree_root;
        let mut claimed: HashSet<PathBuf> =
            repo.worktrees()?.iter().map(|w| key(&w.path)).collect();
        claimed.extend(live.iter().map(|s| key(Path::new(&s.record.worktree))));
        let remnants: HashSet<PathBuf> = collected.iter().map(|p| key(p)).collect();
        let candidates = match std::fs::read_dir(root) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .filter(|p| {
                    let k = key(p);
                    !claimed.contains(&k)
                        && (remnants.contains(&k) || matches!(repo.dot_git(p), DotGit::Ours { .. }))
                })
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                warn(format!(
                    "cannot look for leftovers in {}: {e}",
                    root.display()
                ));
                Vec::new()
            }
        };
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let scan = busy::scan(&candidates);
        let mut out = Vec::new();
        for path in candidates {
            let facts = orphan_facts(self.ctx, &path, &scan);
            let decision = gc_plan::plan_orphan(&facts);
            let mut e = Entry {
                kind: "orphan",
                id: None,
                action: Action::Kept,
                reason: String::new(),
                worktree: Some(path.to_string_lossy().into_owned()),
                branch: None,
                hint: None,
                dry_run: self.dry_run,
            };
            match decision {
                OrphanDecision::Keep(why) => e.reason = why,
                OrphanDecision::Remove(why) if self.dry_run => {
                    e.action = Action::Removed;
                    e.reason = why;
                }
                OrphanDecision::Remove(why) => match self.remove_orphan(&path) {
                    Ok(None) => {
                        e.action = Action::Removed;
                        e.reason = why;
                    }
                    Ok(Some(kept)) => e.reason = kept,
                    Err(what) => {
                        e.action = Action::Degraded;
                        e.reason = what;
                        e.hint = Some(format!(
                            "look at {} and remove it by hand if it holds nothing you need",
                            path.display()
                        ));
                    }
                },
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Under the lock, ask again (is it still unclaimed, still without work,
    /// still idle?) and remove it. `Ok(Some(why))`: kept after all.
    fn remove_orphan(&self, path: &Path) -> std::result::Result<Option<String>, String> {
        let repo = &self.ctx.repo;
        let _lock = Lock::acquire(&self.ctx.layout.lock_path()).map_err(|e| format!("{e:#}"))?;
        let k = key(path);
        let registered = repo
            .worktrees()
            .map_err(|e| format!("{e:#}"))?
            .iter()
            .any(|w| key(&w.path) == k);
        if registered {
            return Ok(Some("it became a registered worktree during gc".to_owned()));
        }
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if let Ok(id) = name.parse::<SessionId>() {
                if let Ok(Some(s)) = store::load(repo, &id) {
                    if s.record.state != State::Collected && key(Path::new(&s.record.worktree)) == k
                    {
                        return Ok(Some(format!("session {id} claims it")));
                    }
                }
            }
        }
        let scan = busy::scan(&[path.to_path_buf()]);
        match gc_plan::plan_orphan(&orphan_facts(self.ctx, path, &scan)) {
            OrphanDecision::Keep(why) => Ok(Some(why)),
            OrphanDecision::Remove(_) => {
                teardown::remove_dir_confined(&self.ctx.layout.worktree_root, path).map(|()| None)
            }
        }
    }
}

fn removed_reason(via: Via) -> String {
    match via {
        Via::GitWorktreeRemove => "published, clean and idle".to_owned(),
        Via::AdminEntryGone => {
            "published, clean and idle (its worktree entry was already gone)".to_owned()
        }
        Via::FinishTeardown => "finished the removal an earlier gc started".to_owned(),
    }
}

fn collected_reason(tip: Option<Oid>) -> String {
    match tip {
        Some(_) => "the worktree is gone and the branch is published".to_owned(),
        None => "the worktree and the branch are already gone".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(action: Action, id: &str, reason: &str) -> Entry {
        Entry {
            kind: "session",
            id: Some(id.into()),
            action,
            reason: reason.into(),
            worktree: None,
            branch: None,
            hint: None,
            dry_run: false,
        }
    }

    #[test]
    fn report_lines() {
        let entries = [
            e(Action::Removed, "a", "published, clean and idle"),
            e(Action::Kept, "bb", "2 commits not on any remote"),
        ];
        let mut out = Vec::new();
        render(&mut out, &entries, false).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "removed  a: published, clean and idle\nkept     bb: 2 commits not on any remote\n"
        );
        let mut out = Vec::new();
        render(&mut out, &entries, true).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .starts_with("would remove  a: published"));
    }
}
