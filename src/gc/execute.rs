//! gc's executor: decide for every session and leftover, then act on what may
//! go. Right before each removal it takes the worktree lock, gathers that one
//! session's facts again and asks the same plan again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::facts::{created_here_at, key, orphan_facts, AtAct, Depth, Gatherer};
use super::plan::{
    self, AdminDecision, AdminFacts, Decision, Link, OnDisk, OrphanDecision, Reason, SessionFacts,
    Via,
};
use super::report::{collected_reason, discarded_reason, removed_reason, rm_hint, Action, Entry};
use super::teardown::{self, Target};
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::git::{DotGit, EntryRemoval};
use crate::model::config::GC_EXPIRE;
use crate::model::id::{
    GC_TEARDOWN_KEY as MARKER_KEY, LAST_TIP_KEY, NOTES_REF, PUBLISHED_KEY, RECORD_PREFIX,
};
use crate::model::usage::Busy;
use crate::model::{time, Error, Evidence, Oid, Record, SessionId, State};
use crate::sys::lock::Lock;
use crate::sys::procfs;
use crate::trust::confined::ConfinedPath;
use crate::trust::local::Local;

/// The hint for an entry left for the next gc because of `e`: what the error
/// itself says to do (a stale lock: git's advice), else to run gc again.
fn again(e: &anyhow::Error) -> String {
    let (_, hints) = crate::model::error::classify(e);
    match hints.is_empty() {
        true => "run `git bullpen gc` again".to_owned(),
        false => hints.join(" "),
    }
}

/// How often busy sessions are looked at again under `--wait`.
const POLL: Duration = Duration::from_millis(250);

/// What gc is asked to do.
pub struct Options {
    pub dry_run: bool,
    /// How long to wait for busy sessions (`--wait`).
    pub wait: Duration,
}

/// `rm`: gc's rules, executor and teardown for these sessions only (no
/// leftovers, no sweep, no expiry); with `force`, unpublished commits and
/// uncommitted changes do not keep a session (`plan::plan_forced`), everything
/// else does. The report, in the order given.
pub fn remove_sessions(
    ctx: &Ctx,
    sessions: Vec<Stored>,
    dry_run: bool,
    force: bool,
) -> Result<Vec<Entry>> {
    let mode = Mode::Rm { force };
    let mut gc = Gc {
        ctx,
        gather: Gatherer::new(ctx, mode.planner())?,
        dry_run,
        deadline: Instant::now(),
        waiting: false,
        mode,
        seen_busy: HashSet::new(),
        noted: HashSet::new(),
        unwatched: Vec::new(),
        expire: time::Expire::Never,
        expire_value: String::new(),
    };
    gc.sessions(sessions)
}

/// Decide and act for every session and leftover; the report, in order.
pub fn run(ctx: &Ctx, opts: &Options) -> Result<Vec<Entry>> {
    let expire_value = ctx
        .repo
        .config_string(GC_EXPIRE)
        .unwrap_or_else(|| time::DEFAULT_EXPIRE.to_owned());
    let expire = time::parse_expire(&expire_value, time::now_unix()).map_err(|why| {
        Error::failed(format!("{GC_EXPIRE}: {why}")).hint(format!(
            "set it with `git config {GC_EXPIRE} 90.days.ago` (or never)"
        ))
    })?;
    if !opts.dry_run {
        // Temporary indexes of gcs that were killed (each file names its gc's pid).
        if let Err(e) = ctx.repo.sweep_temp_indexes(procfs::pid_exists) {
            ctx.ui.warn(format!(
                "could not sweep the temporary indexes of earlier gcs: {e:#}"
            ));
        }
    }
    let mut gc = Gc {
        ctx,
        gather: Gatherer::new(ctx, Mode::Gc.planner())?,
        dry_run: opts.dry_run,
        deadline: Instant::now() + opts.wait,
        waiting: opts.wait > Duration::ZERO && !opts.dry_run,
        mode: Mode::Gc,
        seen_busy: HashSet::new(),
        noted: HashSet::new(),
        unwatched: Vec::new(),
        expire,
        expire_value,
    };
    gc.all()
}

struct Gc<'a> {
    ctx: &'a Ctx<'a>,
    gather: Gatherer<'a>,
    dry_run: bool,
    deadline: Instant,
    /// `--wait` given (and not a dry run).
    waiting: bool,
    mode: Mode,
    /// Sessions whose directory a `/proc` scan of this gc found in use: only
    /// there is a removal watched for a late writer.
    seen_busy: HashSet<SessionId>,
    /// Branch tips whose notes (evidence, provenance) this gc has written.
    noted: HashSet<Oid>,
    /// Worktrees git removed that nobody was seen using: looked at once more
    /// after all removals (one wait for a late writer, not one per removal).
    unwatched: Vec<(SessionId, PathBuf)>,
    /// `bullpen.gc.expire`, read and as written.
    expire: time::Expire,
    expire_value: String,
}

/// Who runs the executor.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Gc,
    /// `git bullpen rm [--force]`.
    Rm {
        force: bool,
    },
}

impl Mode {
    /// The plan for one session: gc's, or what `rm --force` may discard.
    fn planner(self) -> fn(&SessionFacts) -> Decision {
        match self {
            Mode::Rm { force: true } => plan::plan_forced,
            _ => plan::plan_session,
        }
    }
}

/// What handling one session came to.
enum Step {
    Done(Box<Entry>),
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
                id: u.refname.strip_prefix(RECORD_PREFIX).map(str::to_owned),
                action: Action::Kept,
                reason: format!("cannot read the record {}: {:#}", u.refname, u.error),
                worktree: None,
                branch: None,
                hint: Some(format!("inspect it with `git log -p {}`", u.refname)),
                dry_run: self.dry_run,
                published: None,
                ignored: None,
            });
        }
        let (collected, live): (Vec<Stored>, Vec<Stored>) = records
            .into_iter()
            .partition(|s| s.record.state == State::Collected);
        let ids: HashSet<SessionId> = collected
            .iter()
            .chain(&live)
            .map(|s| s.record.id.clone())
            .collect();
        let collected_paths: Vec<PathBuf> = collected
            .iter()
            .map(|s| PathBuf::from(&s.record.worktree))
            .collect();

        entries.extend(self.admin_entries(&ids)?);
        entries.extend(self.orphans(&live, &collected_paths)?);
        entries.extend(self.sessions(live)?);
        entries.extend(self.expired(&collected)?);
        Ok(entries)
    }

    // ----- bounded history -----

    /// Collected records older than `bullpen.gc.expire` go, with their logs and
    /// local state; their provenance notes stay. Only where the branch and the
    /// worktree are gone (a record marked collected by hand over live work is
    /// left alone). Under the lock: the local state goes before the record, so
    /// that a spawn reusing the id (refused while the record exists) never
    /// loses the local state it writes.
    fn expired(&self, collected: &[Stored]) -> Result<Vec<Entry>> {
        let time::Expire::Before(horizon) = self.expire else {
            return Ok(Vec::new());
        };
        let repo = &self.ctx.repo;
        let mut due = Vec::new();
        for s in collected {
            let r = &s.record;
            let Some(at) = time::parse_rfc3339(&r.updated_at) else {
                continue;
            };
            if at >= horizon
                || repo.ref_target(&r.id.branch_ref())?.is_some()
                || Path::new(&r.worktree).symlink_metadata().is_ok()
            {
                continue;
            }
            due.push((s, at));
        }
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let _lock = if self.dry_run {
            None
        } else {
            Some(Lock::acquire(&self.ctx.layout.lock_path())?)
        };
        let mut out = Vec::new();
        for (s, at) in due {
            let r = &s.record;
            let date = time::rfc3339(at).get(..10).unwrap_or_default().to_owned();
            let mut e = self.entry(
                "record",
                Some(r),
                Action::Expired,
                format!(
                    "collected {date}, before {GC_EXPIRE} ({}): its record, log and local state \
                     go; its notes stay",
                    self.expire_value
                ),
            );
            if !self.dry_run {
                if let Err(why) = self.expire_one(s) {
                    e.action = Action::Degraded;
                    e.reason = format!("could not expire its record: {why}");
                    e.hint = Some("run `git bullpen gc` again".to_owned());
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    fn expire_one(&self, s: &Stored) -> std::result::Result<(), String> {
        let id = &s.record.id;
        let log = self.ctx.layout.log_path(id);
        match std::fs::remove_file(&log) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", log.display())),
        }
        Local::of(&self.ctx.layout, id)
            .remove()
            .map_err(|e| format!("{e:#}"))?;
        store::delete(&self.ctx.repo, s, "bullpen: gc: expired").map_err(|e| format!("{e:#}"))
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
            published: None,
            ignored: None,
        }
    }

    // ----- sessions -----

    fn sessions(&mut self, live: Vec<Stored>) -> Result<Vec<Entry>> {
        let order: Vec<SessionId> = live.iter().map(|s| s.record.id.clone()).collect();
        let mut done: HashMap<SessionId, Entry> = HashMap::new();
        let mut pending = live;
        let mut announced = false;
        // A real gc leaves the status of what it may remove to the re-check
        // under the lock right before the removal: computed once, there.
        let depth = if self.dry_run {
            Depth::Whole
        } else {
            Depth::LeaveRemovable
        };
        let progress = self.ctx.ui.progress(pending.len() as u64, "gc");
        while !pending.is_empty() {
            let waiting = self.waiting && Instant::now() < self.deadline;
            let facts = self.gather.all(&pending, depth)?;
            for (stored, f) in pending.iter().zip(&facts) {
                if let Ok(f) = f {
                    if matches!(f.busy, Busy::InUse(_)) {
                        self.seen_busy.insert(stored.record.id.clone());
                    }
                }
            }
            // One notes commit for all that gc may remove. Not for `rm`: the
            // few it names get theirs right before removal (`finish`), so a
            // refusal changes nothing.
            if !self.dry_run && self.mode == Mode::Gc {
                self.note_where_work_went(&pending, &facts);
            }
            let mut deferred = Vec::new();
            for (stored, facts) in pending.into_iter().zip(facts) {
                progress.working_on(stored.record.id.as_str());
                let step = match facts {
                    Err(e) => self.kept(
                        &stored.record,
                        format!("cannot tell what state it is in: {e:#}"),
                    ),
                    Ok(f) => {
                        let decision = self.decide(&f);
                        if waiting && decision.is_waitable() {
                            Step::Defer
                        } else if self.dry_run {
                            Step::Done(Box::new(self.planned(&stored.record, &f, &decision)))
                        } else {
                            match decision {
                                Decision::Keep(_)
                                    if !idle_note(&f, &decision)
                                        && !decision.needs_status()
                                        && !decision.needs_nested() =>
                                {
                                    Step::Done(Box::new(self.planned(
                                        &stored.record,
                                        &f,
                                        &decision,
                                    )))
                                }
                                _ => self.execute(&stored, &f, waiting),
                            }
                        }
                    }
                };
                match step {
                    Step::Done(e) => {
                        progress.done();
                        done.insert(stored.record.id.clone(), *e);
                    }
                    Step::Defer => deferred.push(stored),
                }
            }
            if deferred.is_empty() {
                break;
            }
            if !announced {
                progress.suspend(|| {
                    self.ctx.ui.info(format!(
                        "waiting up to {}s for {} busy session(s) to become idle",
                        self.deadline
                            .saturating_duration_since(Instant::now())
                            .as_secs_f32()
                            .ceil(),
                        deferred.len()
                    ))
                });
                announced = true;
            }
            std::thread::sleep(POLL.min(self.deadline.saturating_duration_since(Instant::now())));
            pending = deferred;
        }
        progress.finish();
        self.look_again(&mut done);
        Ok(order.iter().filter_map(|id| done.remove(id)).collect())
    }

    /// A late writer (a watcher, a test runner left behind) can bring a removed
    /// directory back right after git deleted it. Removals nobody was seen
    /// near are not watched one by one: once they are all done, gc waits a
    /// moment and looks at them all. One that came back holds what the writer
    /// wrote, not the worktree (git removed its `.git` and its entry): it is
    /// reported degraded and left where it is, and a later gc removes it when
    /// it holds nothing (as any leftover in the worktree root) and reports it
    /// otherwise.
    fn look_again(&mut self, done: &mut HashMap<SessionId, Entry>) {
        if self.unwatched.is_empty() {
            return;
        }
        std::thread::sleep(teardown::SETTLE);
        for (id, path) in std::mem::take(&mut self.unwatched) {
            if path.symlink_metadata().is_err() {
                continue;
            }
            if let Some(e) = done.get_mut(&id) {
                e.action = Action::Degraded;
                e.reason = format!(
                    "{}; but its directory came back right after git removed it (a process \
                     writes into it)",
                    e.reason
                );
                e.hint = Some(teardown::hint(&path));
            }
        }
    }

    /// Before anything is removed: in the notes of each branch gc is about to
    /// delete (or may, once its status is known), where the work went (the
    /// evidence, on its tip) and, on each commit of the branch that has no
    /// provenance note yet (made by a process the command left behind), one. In
    /// one notes commit; a text a note already holds is not added again. A
    /// failure is a warning: the evidence also goes into the record.
    fn note_where_work_went(&mut self, sessions: &[Stored], facts: &[Result<SessionFacts>]) {
        let mut notes: Vec<(Oid, String)> = Vec::new();
        let mut tips = Vec::new();
        for (s, f) in sessions.iter().zip(facts) {
            let Ok(f) = f else { continue };
            let d = self.decide(f);
            let likely = matches!(d, Decision::Remove { .. } | Decision::Collect { .. })
                || d.needs_status()
                || d.needs_nested();
            let Some(tip) = f
                .branch_state
                .tip()
                .filter(|t| likely && !self.noted.contains(t))
            else {
                continue;
            };
            match self.notes_for(&s.record, tip, f.branch_state.evidence()) {
                Ok(n) => {
                    notes.extend(n);
                    tips.push(tip);
                }
                Err(e) => self
                    .ctx
                    .ui
                    .warn(format!("{}: cannot read its notes: {e:#}", s.record.id)),
            }
        }
        if notes.is_empty() {
            self.noted.extend(tips);
            return;
        }
        let n = tips.len();
        match self.ctx.repo.add_notes_unless_there(
            NOTES_REF,
            &notes,
            &format!("bullpen: gc notes where the work of {n} session(s) went"),
        ) {
            Ok(()) => self.noted.extend(tips),
            Err(e) => self.ctx.ui.warn(format!(
                "could not write the notes on where the work went ({NOTES_REF}): {e:#}"
            )),
        }
    }

    /// The notes for one session about to be collected: a provenance note on
    /// each commit of its branch (since its base) that has none, and the
    /// evidence on its tip. One text per commit.
    fn notes_for(
        &self,
        r: &Record,
        tip: Oid,
        evidence: Option<&Evidence>,
    ) -> Result<Vec<(Oid, String)>> {
        let repo = &self.ctx.repo;
        let mut hidden = Vec::new();
        if let Ok(base) = r.base.parse::<Oid>() {
            hidden.push(base);
        }
        let commits = repo.commits_between(tip, &hidden)?;
        let bare = repo.without_note(NOTES_REF, &commits)?;
        let mut out: Vec<(Oid, String)> = bare
            .iter()
            .map(|c| {
                (
                    *c,
                    format!(
                        "bullpen-session: {}\nbullpen-found-by: gc (on the branch, but no run of the \
                         session recorded it: made by a process the command left behind?)\n",
                        r.id
                    ),
                )
            })
            .collect();
        if let Some(e) = evidence {
            // The integration commits it landed on name the session too.
            out.extend(e.landing_notes(r.id.as_str()));
            let line = format!("bullpen-published: {}\n", e.full_words());
            match out.iter_mut().find(|(c, _)| *c == tip) {
                Some((_, text)) => {
                    text.push('\n');
                    text.push_str(&line);
                }
                None => out.push((tip, line)),
            }
        }
        Ok(out)
    }

    /// A session left for the next gc: what happened, and what to do.
    fn degraded(&self, r: &Record, what: impl Into<String>, hint: impl Into<String>) -> Step {
        let mut e = self.entry("session", Some(r), Action::Degraded, what.into());
        e.hint = Some(hint.into());
        Step::Done(Box::new(e))
    }

    /// A session kept, and why.
    fn kept(&self, r: &Record, reason: impl Into<String>) -> Step {
        Step::Done(Box::new(self.entry(
            "session",
            Some(r),
            Action::Kept,
            reason.into(),
        )))
    }

    fn decide(&self, f: &SessionFacts) -> Decision {
        self.mode.planner()(f)
    }

    /// `rm --force`: what the removal discards (work gc would have kept).
    fn discarded(&self, f: &SessionFacts, reason: String) -> String {
        if self.mode != (Mode::Rm { force: true }) {
            return reason;
        }
        let dirt = match &f.dirt {
            Some(Ok(d)) => Some(d.clone()),
            _ if f.on_disk == plan::OnDisk::Directory => {
                self.ctx.repo.dirt(Path::new(&f.worktree)).ok()
            }
            _ => None,
        };
        let reason = discarded_reason(reason, &f.branch_state, dirt.as_ref(), &f.branch);
        let away: Vec<String> = plan::forced_away(f)
            .iter()
            .map(|r| r.describe(&f.branch))
            .collect();
        match (away.is_empty(), reason.starts_with("forced: discarded ")) {
            (true, _) => reason,
            (false, true) => format!("{reason}, {}", away.join(", ")),
            (false, false) => format!("forced: discarded {}", away.join(", ")),
        }
    }

    /// The entry for a decision as planned (dry run, or a kept session).
    fn planned(&self, r: &Record, f: &SessionFacts, d: &Decision) -> Entry {
        let evidence = f.branch_state.evidence();
        let mut e = match d {
            Decision::Remove { via, .. } => self.entry(
                "session",
                Some(r),
                Action::Removed,
                self.discarded(f, removed_reason(*via, evidence, f.ignored.as_ref())),
            ),
            Decision::Collect { tip } => self.entry(
                "session",
                Some(r),
                Action::Collected,
                self.discarded(f, collected_reason(*tip, evidence)),
            ),
            Decision::Keep(reasons) => {
                let mut e = self.entry(
                    "session",
                    Some(r),
                    Action::Kept,
                    reasons
                        .iter()
                        .map(|x| x.describe(&r.id.branch()))
                        .collect::<Vec<_>>()
                        .join("; "),
                );
                if let Mode::Rm { force } = self.mode {
                    e.hint = rm_hint(&r.id, reasons, force, &plan::plan_forced(f));
                }
                e
            }
        };
        e.published = evidence.cloned();
        if e.action != Action::Kept {
            e.ignored = f.ignored.clone().filter(|i| i.words().is_some());
        }
        e
    }

    /// Remove or collect one session: under the repository lock, with every fact
    /// gathered again and the plan asked again right before anything is removed.
    fn execute(&mut self, stored: &Stored, before: &SessionFacts, waiting: bool) -> Step {
        let repo = &self.ctx.repo;
        let id = &stored.record.id;
        let _lock = match Lock::acquire(&self.ctx.layout.lock_path()) {
            Ok(l) => l,
            Err(e) => {
                return self.degraded(
                    &stored.record,
                    format!("{e:#}"),
                    "check the permissions of the repository's git directory",
                )
            }
        };
        let fresh = match store::load(repo, id) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return self.kept(
                    &stored.record,
                    "its record was deleted during gc".to_owned(),
                )
            }
            Err(e) => {
                return self.kept(
                    &stored.record,
                    format!("cannot read its record again: {e:#}"),
                )
            }
        };
        if fresh.record.state == State::Collected {
            return Step::Done(Box::new(self.entry(
                "session",
                Some(&fresh.record),
                Action::Collected,
                "collected by another gc meanwhile".to_owned(),
            )));
        }
        let mut facts = match self.gather.recheck(&fresh, before) {
            Ok(f) => f,
            Err(e) => {
                return self.kept(
                    &fresh.record,
                    format!("cannot tell what state it is in: {e:#}"),
                )
            }
        };
        self.gather.complete(&mut facts);
        let decision = self.decide(&facts);
        match decision {
            Decision::Keep(_) if waiting && decision.is_waitable() => Step::Defer,
            Decision::Keep(_) if idle_note(&facts, &decision) => {
                // An earlier gc noted a teardown that no gc can finish (see
                // `idle_note`). The note would only keep the session from running
                // again, and `resume`'s hint ("run gc to finish it") from working.
                let r = &fresh.record;
                if let Err(e) = store::try_update(repo, &fresh, "gc: nothing to finish", |r| {
                    r.extra.remove(MARKER_KEY);
                }) {
                    self.ctx.ui.warn(format!(
                        "{}: could not clear the teardown note in its record: {e:#}",
                        r.id
                    ));
                }
                Step::Done(Box::new(self.planned(r, &facts, &decision)))
            }
            Decision::Keep(_) => {
                Step::Done(Box::new(self.planned(&fresh.record, &facts, &decision)))
            }
            Decision::Collect { tip } => {
                if let Some(reg) = facts.registration.as_ref().filter(|r| !r.locked) {
                    // Exactly the session's own entry, registered for its path
                    // (under the root it was created in: `trust::session_layout`).
                    let path = crate::trust::session_layout(&self.ctx.layout, &fresh.record)
                        .worktree_path(&fresh.record.id);
                    match repo.remove_admin_entry(&reg.admin_id, &path) {
                        Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
                        Ok(EntryRemoval::Refused(why)) => {
                            return self.kept(
                                &fresh.record,
                                format!(
                                    "the worktree is gone, but its worktree entry {} stays: {why}",
                                    reg.admin_id
                                ),
                            )
                        }
                        Err(e) => {
                            return self.degraded(
                                &fresh.record,
                                format!("its worktree entry could not be removed: {e:#}"),
                                again(&e),
                            )
                        }
                    }
                }
                if fresh.record.state == State::Provisioning {
                    // What a spawn killed before its `git worktree add` left: the
                    // empty directory it made (only an empty one goes).
                    let path = crate::trust::session_layout(&self.ctx.layout, &fresh.record)
                        .worktree_path(&fresh.record.id);
                    let _ = std::fs::remove_dir(path);
                }
                let reason =
                    self.discarded(&facts, collected_reason(tip, facts.branch_state.evidence()));
                self.finish(fresh, &facts, tip, Action::Collected, reason)
            }
            Decision::Remove { via, tip } => self.remove(fresh, &facts, via, tip),
        }
    }

    fn remove(&mut self, fresh: Stored, facts: &AtAct, via: Via, tip: Oid) -> Step {
        let repo = &self.ctx.repo;
        // The plan removes only what is not untrusted, so it is confined.
        let Some(confined) = facts.confined() else {
            return self.kept(
                &fresh.record,
                "internal: its worktree path is not confined to the worktree root".to_owned(),
            );
        };
        let admin_id = match (via, &facts.registration, &facts.link, &facts.marker) {
            (Via::GitWorktreeRemove, Some(reg), _, _) => reg.admin_id.clone(),
            (Via::AdminEntryGone, _, Link::Ours { admin_id, .. }, _) => admin_id.clone(),
            (Via::FinishTeardown, _, _, Some(m)) => m.admin_id.clone(),
            _ => {
                return self.kept(
                    &fresh.record,
                    "internal: no worktree entry to remove".to_owned(),
                )
            }
        };
        // Note in the record that teardown starts, so that a later gc can finish a
        // teardown this one could not (see `plan::Marker`).
        let (stored, wrote_marker) = if via == Via::FinishTeardown {
            (fresh, false)
        } else {
            let marker = serde_json::json!({
                "admin_id": admin_id,
                "tip": tip.to_string(),
                "started_at": time::now_rfc3339(),
            });
            // One compare-and-swap against the record just checked: if a resume
            // or another gc changed it since, nothing is removed. Once the note is
            // in, `runner::ensure_not_running` refuses to start a run here.
            match store::try_update(repo, &fresh, "gc: removing the worktree", |r| {
                r.extra.insert(MARKER_KEY.to_owned(), marker.clone());
            }) {
                Ok(s) => (s, true),
                Err(e) if store::is_conflict(&e) => {
                    return self.kept(
                        &fresh.record,
                        "its record changed during gc (resumed or stopped meanwhile?); \
                         nothing removed"
                            .to_owned(),
                    );
                }
                Err(e) => {
                    return self.degraded(
                        &fresh.record,
                        format!("nothing removed: cannot record that teardown starts: {e:#}"),
                        again(&e),
                    );
                }
            }
        };
        let path = confined.path().to_path_buf();
        let watch = self.seen_busy.contains(&stored.record.id);
        // `rm --force` too: the teardown removes with `git worktree remove
        // --force` once the plan (here, the forced one) let it.
        let outcome = teardown::remove_worktree(
            repo,
            &Target {
                confined,
                admin_id: &admin_id,
                via,
                tip,
                watch,
            },
        );
        match outcome {
            teardown::Outcome::Removed { notes } => {
                if notes.is_empty() && !watch && via == Via::GitWorktreeRemove {
                    self.unwatched
                        .push((stored.record.id.clone(), path.clone()));
                }
                for n in notes {
                    self.ctx.ui.info(format!("{}: {n}", stored.record.id));
                }
                let reason = self.discarded(
                    facts,
                    removed_reason(via, facts.branch_state.evidence(), facts.ignored.as_ref()),
                );
                let mut step = self.finish(stored, facts, Some(tip), Action::Removed, reason);
                if let Step::Done(e) = &mut step {
                    e.ignored = facts.ignored.clone().filter(|i| i.words().is_some());
                }
                step
            }
            teardown::Outcome::Kept(why) => {
                // The worktree is whole: nothing for a later gc to finish, and the
                // session may run again.
                if wrote_marker || stored.record.extra.contains_key(MARKER_KEY) {
                    if let Err(e) = store::update(repo, &stored, "gc: kept the worktree", |r| {
                        r.extra.remove(MARKER_KEY);
                    }) {
                        self.ctx.ui.warn(format!(
                            "{}: could not clear the teardown note in its record: {e:#}",
                            stored.record.id
                        ));
                    }
                }
                self.kept(&stored.record, why)
            }
            teardown::Outcome::Degraded { what, hint } => self.degraded(&stored.record, what, hint),
        }
    }

    /// After the worktree is gone: delete the branch if it still points at
    /// `tip` (compare-and-swap), then mark the record collected.
    fn finish(
        &mut self,
        stored: Stored,
        facts: &SessionFacts,
        tip: Option<Oid>,
        action: Action,
        reason: String,
    ) -> Step {
        let repo = &self.ctx.repo;
        let r = &stored.record;
        let branch_ref = r.id.branch_ref();
        let evidence = facts.branch_state.evidence().cloned();
        if let Some(tip) = tip.filter(|t| !self.noted.contains(t)) {
            // The branch moved since the notes were written (or they could not be).
            match self.notes_for(r, tip, evidence.as_ref()).and_then(|n| {
                repo.add_notes_unless_there(
                    NOTES_REF,
                    &n,
                    &format!("bullpen: gc notes where the work of session {} went", r.id),
                )
            }) {
                Ok(()) => {
                    self.noted.insert(tip);
                }
                Err(e) => self.ctx.ui.warn(format!(
                    "{}: could not note where its work went ({NOTES_REF}): {e:#}",
                    r.id
                )),
            }
        }
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
                            self.ctx.ui.warn(format!(
                                "{}: could not clear the teardown note in its record: {e:#}",
                                r.id
                            ));
                        }
                        let action = if action == Action::Collected {
                            Action::Kept
                        } else {
                            action
                        };
                        return Step::Done(Box::new(self.entry(
                            "session",
                            Some(r),
                            action,
                            format!(
                                "{reason}; but {} moved to {now} during gc, so the branch and the record were kept",
                                r.id.branch()
                            ),
                        )));
                    }
                    _ => {
                        return self.degraded(
                            r,
                            format!(
                                "the worktree is gone, but {} could not be deleted: {e:#}",
                                r.id.branch()
                            ),
                            again(&e),
                        );
                    }
                }
            }
            // As `git branch -d`: the branch's configuration goes with it (the
            // upstream of a session continued from a remote's).
            if let Err(e) = repo.remove_branch_config_if_any(&r.id.branch()) {
                self.ctx.ui.warn(format!(
                    "{}: could not remove the configuration of {}: {e:#}",
                    r.id,
                    r.id.branch()
                ));
            }
        }
        // The evidence stays in the record's last commit: its subject, and
        // `published` in its session.json.
        let event = match &evidence {
            Some(e) => format!("collected: {}", e.full_words()),
            None => "collected".to_owned(),
        };
        let published = evidence.as_ref().map(|e| {
            serde_json::json!({
                "how": e.how(),
                "ref": e.on(),
                "commit": e.commit().map(|c| c.to_string()),
                "tip": tip.map(|t| t.to_string()),
                "description": e.full_words(),
                "landings": super::report::landings_json(e),
                "at": time::now_rfc3339(),
            })
        });
        match store::update(repo, &stored, &event, |rec| {
            rec.state = State::Collected;
            rec.extra.remove(MARKER_KEY);
            // Where `resume` recreates the worktree from.
            if let Some(t) = tip {
                rec.extra
                    .insert(LAST_TIP_KEY.to_owned(), serde_json::json!(t.to_string()));
            }
            if let Some(p) = &published {
                rec.extra.insert(PUBLISHED_KEY.to_owned(), p.clone());
            }
        }) {
            Ok(_) => {
                let mut e = self.entry("session", Some(r), action, reason);
                e.published = evidence;
                Step::Done(Box::new(e))
            }
            Err(e) => self.degraded(
                r,
                format!(
                    "the worktree and branch are gone, but the record could not be marked \
                     collected: {e:#}"
                ),
                again(&e),
            ),
        }
    }

    // ----- leftovers -----

    /// Admin entries of sessions' worktrees whose directory vanished: each removed
    /// by itself (never `git worktree prune`). Entries registered anywhere else
    /// than `<worktree root>/<id>` of a session are not gc's: a user's worktree
    /// on a disk that is not mounted keeps its registration.
    fn admin_entries(&self, sessions: &HashSet<SessionId>) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let layout = &self.ctx.layout;
        let session_of = |path: &Path| -> Option<SessionId> {
            let id: SessionId = path.file_name()?.to_str()?.parse().ok()?;
            (sessions.contains(&id) && key(&layout.worktree_path(&id)) == key(path)).then_some(id)
        };
        let facts: Vec<(AdminFacts, Option<SessionId>)> = repo
            .worktrees()?
            .into_iter()
            .filter(|w| !w.exists)
            .filter_map(|w| {
                let admin_id = w.admin_id?;
                let session = session_of(&w.path);
                let modules = session.as_ref().map(|_| {
                    repo.nested_repositories(None, Some(&admin_id))
                        .map_err(|e| format!("{e:#}"))
                });
                let created_here = match &session {
                    Some(id) => {
                        created_here_at(self.ctx, id, &layout.worktree_path(id).to_string_lossy())
                    }
                    None => Err("not a session's".to_owned()),
                };
                Some((
                    AdminFacts {
                        admin_id,
                        path: w.path.to_string_lossy().into_owned(),
                        locked: w.locked,
                        session: session.as_ref().map(|s| s.to_string()),
                        created_here,
                        modules,
                    },
                    session,
                ))
            })
            .collect();
        let mut out = Vec::new();
        let mut lock = None;
        out.extend(self.half_removed_entries(sessions, &mut lock)?);
        for (f, session) in &facts {
            let mut e = Entry {
                kind: "worktree-entry",
                id: Some(f.admin_id.clone()),
                action: Action::Pruned,
                reason: format!("its directory {} is gone", f.path),
                worktree: Some(f.path.clone()),
                branch: session.as_ref().map(|s| s.branch()),
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
            };
            match (plan::plan_admin_entry(f), session) {
                (AdminDecision::NotOurs, _) => continue,
                (AdminDecision::Keep(why), _) => {
                    e.action = Action::Kept;
                    e.reason = format!("its directory {} is gone, but it is {why}", f.path);
                    // Sessions report their own locked entries; this is for the rest.
                }
                (AdminDecision::Prune, _) if self.dry_run => {}
                (AdminDecision::Prune, None) => continue,
                (AdminDecision::Prune, Some(id)) => {
                    if lock.is_none() {
                        lock = Some(Lock::acquire(&layout.lock_path())?);
                    }
                    let removal = repo.remove_admin_entry(&f.admin_id, &layout.worktree_path(id));
                    report_entry_removal(&mut e, removal, |why| {
                        format!("its directory {} is gone, but {why}", f.path)
                    });
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Admin entries git left half-removed (no `gitdir` file) of sessions'
    /// vanished worktrees, proven created here: removed, each by itself.
    fn half_removed_entries(
        &self,
        sessions: &HashSet<SessionId>,
        lock: &mut Option<Lock>,
    ) -> Result<Vec<Entry>> {
        let repo = &self.ctx.repo;
        let layout = &self.ctx.layout;
        let half = repo.half_removed_entries()?;
        if half.is_empty() {
            return Ok(Vec::new());
        }
        let registered: HashSet<PathBuf> = repo.worktrees()?.iter().map(|w| key(&w.path)).collect();
        let mut out = Vec::new();
        for h in half {
            let id = h
                .admin_id
                .parse::<SessionId>()
                .ok()
                .filter(|id| sessions.contains(id));
            let path = id.as_ref().map(|id| layout.worktree_path(id));
            let session = match (&id, &path) {
                (Some(id), Some(p))
                    if p.symlink_metadata().is_err() && !registered.contains(&key(p)) =>
                {
                    Some(id.clone())
                }
                _ => None,
            };
            let created_here = match (&session, &path) {
                (Some(id), Some(p)) => created_here_at(self.ctx, id, &p.to_string_lossy()),
                _ => Err("not a session's".to_owned()),
            };
            let f = plan::HalfRemovedFacts {
                admin_id: h.admin_id.clone(),
                session: session.as_ref().map(|s| s.to_string()),
                head: h.head,
                locked: h.locked,
                created_here,
            };
            let (Some(id), Some(path)) = (session, path) else {
                continue;
            };
            let shown = path.display().to_string();
            let mut e = Entry {
                kind: "worktree-entry",
                id: Some(h.admin_id.clone()),
                action: Action::Pruned,
                reason: format!(
                    "git left it half-removed (no gitdir file) and its directory {shown} is gone"
                ),
                worktree: Some(shown.clone()),
                branch: Some(id.branch()),
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
            };
            match plan::plan_half_removed(&f) {
                AdminDecision::NotOurs => continue,
                AdminDecision::Keep(why) => {
                    e.action = Action::Kept;
                    e.reason =
                        format!("git left it half-removed (no gitdir file), but it is {why}");
                }
                AdminDecision::Prune if self.dry_run => {}
                AdminDecision::Prune => {
                    if lock.is_none() {
                        *lock = Some(Lock::acquire(&layout.lock_path())?);
                    }
                    let removal = repo.remove_half_removed_entry(&h.admin_id, &path);
                    report_entry_removal(&mut e, removal, |why| {
                        format!("git left it half-removed (no gitdir file), but {why}")
                    });
                }
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
                self.ctx.ui.warn(format!(
                    "cannot look for leftovers in {}: {e}",
                    root.display()
                ));
                Vec::new()
            }
        };
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let scan = procfs::scan(&candidates);
        let mut out = Vec::new();
        for path in candidates {
            let facts = orphan_facts(self.ctx, &path, &scan);
            let decision = plan::plan_orphan(&facts);
            let mut e = Entry {
                kind: "orphan",
                id: None,
                action: Action::Kept,
                reason: String::new(),
                worktree: Some(path.to_string_lossy().into_owned()),
                branch: None,
                hint: None,
                dry_run: self.dry_run,
                published: None,
                ignored: None,
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
        let scan = procfs::scan(&[path.to_path_buf()]);
        match plan::plan_orphan(&orphan_facts(self.ctx, path, &scan)) {
            OrphanDecision::Keep(why) => Ok(Some(why)),
            OrphanDecision::Remove(_) => {
                let root = &self.ctx.layout.worktree_root;
                let confined =
                    ConfinedPath::new(root, path).map_err(|why| why.describe(path, root))?;
                teardown::remove_dir_confined(&confined).map(|()| None)
            }
        }
    }
}

/// A teardown note that no gc can act on, on a session gc keeps: cleared (under
/// the lock). The worktree is whole (its `.git` and admin entry point at each
/// other: gc died before git ran, or git refused), or its directory is gone, or
/// the branch moved since the note (its proof no longer holds).
fn idle_note(f: &SessionFacts, decision: &Decision) -> bool {
    let stale = matches!(decision, Decision::Keep(r) if r.contains(&Reason::MarkerStale));
    f.marker.is_some()
        && (stale || f.on_disk == OnDisk::Missing || plan::via(f) == Some(Via::GitWorktreeRemove))
}

/// A leftover entry's removal in its report line: kept with `refused`'s words
/// for git's reason, degraded (to be run again) when it could not be done.
fn report_entry_removal(
    e: &mut Entry,
    removal: Result<EntryRemoval>,
    refused: impl FnOnce(String) -> String,
) {
    match removal {
        Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
        Ok(EntryRemoval::Refused(why)) => {
            e.action = Action::Kept;
            e.reason = refused(why);
        }
        Err(err) => {
            e.action = Action::Degraded;
            e.reason = format!("{err:#}");
            e.hint = Some("run `git bullpen gc` again".to_owned());
        }
    }
}
