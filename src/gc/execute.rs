//! gc's executor: decide for every session and leftover, then act on what may
//! go. Right before each removal it takes the worktree lock, gathers that one
//! session's facts again and asks the same plan again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::act::idle_note;
use super::facts::{Depth, Gatherer};
use super::plan::{self, Decision, SessionFacts};
use super::report::{
    self, collected_reason, discarded_reason, removed_reason, rm_hint, Action, Entry,
};
use super::teardown;
use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::model::config::GC_EXPIRE;
use crate::model::id::RECORD_PREFIX;
use crate::model::usage::Busy;
use crate::model::{time, Error, Oid, Record, SessionId, State};
use crate::sys::procfs;

/// The hint for an entry left for the next gc because of `e`: what the error
/// itself says to do (a stale lock: git's advice), else to run gc again.
pub(super) fn again(e: &anyhow::Error) -> String {
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
        gather: Gatherer::new(ctx, mode.planner())?.quiet(),
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

pub(super) struct Gc<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) gather: Gatherer<'a>,
    pub(super) dry_run: bool,
    pub(super) deadline: Instant,
    /// `--wait` given (and not a dry run).
    pub(super) waiting: bool,
    pub(super) mode: Mode,
    /// Sessions whose directory a `/proc` scan of this gc found in use: only
    /// there is a removal watched for a late writer.
    pub(super) seen_busy: HashSet<SessionId>,
    /// Branch tips whose notes (evidence, provenance) this gc has written.
    pub(super) noted: HashSet<Oid>,
    /// Worktrees git removed that nobody was seen using: looked at once more
    /// after all removals (one wait for a late writer, not one per removal).
    pub(super) unwatched: Vec<(SessionId, PathBuf)>,
    /// `bullpen.gc.expire`, read and as written.
    pub(super) expire: time::Expire,
    pub(super) expire_value: String,
}

/// Who runs the executor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
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
pub(super) enum Step {
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
                path: None,
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
        entries.extend(self.kept_tmpdirs());
        entries.extend(self.sessions(live)?);
        entries.extend(self.expired(&collected)?);
        Ok(entries)
    }

    pub(super) fn entry(
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
            path: None,
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

    /// A session left for the next gc: what happened, and what to do.
    pub(super) fn degraded(
        &self,
        r: &Record,
        what: impl Into<String>,
        hint: impl Into<String>,
    ) -> Step {
        let mut e = self.entry("session", Some(r), Action::Degraded, what.into());
        e.hint = Some(hint.into());
        Step::Done(Box::new(e))
    }

    /// A session kept, and why.
    pub(super) fn kept(&self, r: &Record, reason: impl Into<String>) -> Step {
        Step::Done(Box::new(self.entry(
            "session",
            Some(r),
            Action::Kept,
            reason.into(),
        )))
    }

    pub(super) fn decide(&self, f: &SessionFacts) -> Decision {
        self.mode.planner()(f)
    }

    /// `rm --force`: what the removal discards (work gc would have kept).
    pub(super) fn discarded(&self, f: &SessionFacts, reason: String) -> String {
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
        let reason = discarded_reason(
            reason,
            &f.branch_state,
            dirt.as_ref(),
            &f.branch,
            self.dry_run,
        );
        let away: Vec<String> = plan::forced_away(f)
            .iter()
            .map(|r| r.describe(&f.branch))
            .collect();
        let forced = report::forced(self.dry_run);
        match (away.is_empty(), reason.starts_with(forced)) {
            (true, _) => reason,
            (false, true) => format!("{reason}, {}", away.join(", ")),
            (false, false) => format!("{forced}{}", away.join(", ")),
        }
    }

    /// The entry for a decision as planned (dry run, or a kept session).
    pub(super) fn planned(&self, r: &Record, f: &SessionFacts, d: &Decision) -> Entry {
        let evidence = f.branch_state.evidence();
        let mut e = match d {
            Decision::Remove { via, .. } => self.entry(
                "session",
                Some(r),
                Action::Removed,
                self.discarded(
                    f,
                    removed_reason(*via, evidence, f.ignored.as_ref(), self.dry_run),
                ),
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
}
