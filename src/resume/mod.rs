//! resume: run a session's command again, in its recorded worktree and nowhere
//! else. The worktree is recreated when that is provably safe (nothing at the
//! path, the branch exists; for a collected session also this machine's proof
//! that bullpen created it there, and its branch or last tip); anything else is
//! refused. `facts` gathers what is at
//! the recorded path, `decide` (pure) says where to run or why not.

pub mod command;
pub mod decide;
pub mod facts;
pub mod remote;

use std::path::Path;

use anyhow::{anyhow, Context, Result};

use crate::context::Ctx;
use crate::git::store::{self, Stored};
use crate::git::EntryRemoval;
use crate::model::agent::{AgentName, Form};
use crate::model::command::render_command;
use crate::model::evidence::collected_by_content;
use crate::model::id::{LAST_TIP_KEY, PUBLISHED_KEY};
use crate::model::{Error, Oid, Record, SessionId, State};
use crate::run;
use crate::spawn::undo::Made;
use crate::sys::lock::Lock;
use crate::trust::decide::created_here;
use crate::trust::local::Local;
use command::plain_command;
use decide::{decide, explain, start_again_hint, Placement, Revival};

/// What to resume, and how.
pub struct Request {
    pub id: SessionId,
    /// The command to run; empty: the recorded one.
    pub command: Vec<String>,
    pub bg: bool,
    /// How the command is confined (`--sandbox`).
    pub sandbox: crate::model::sandbox::Mode,
    /// Make `command` the session's own command (`--save`): recorded, and
    /// written to this machine's `command.json`, before it runs.
    pub save: bool,
    /// An agent session's new conversation: its profile's start form (`--fresh`).
    pub fresh: bool,
    /// Run `bullpen.setup` in a worktree that resume recreates (not `--no-setup`).
    pub setup: bool,
}

/// Resume a session; the shell-style status of its command.
pub fn resume(ctx: &Ctx, req: Request) -> Result<i32> {
    let stored = store::require(&ctx.repo, &req.id)?;
    run::liveness::ensure_provisioned(ctx, &stored.record)?;
    run::liveness::ensure_not_running(ctx, &stored)?;
    note_lost(ctx, &stored);
    let plain = match req.command.is_empty() {
        true => Some(plain_command(ctx, &stored.record, req.fresh)?),
        false => None,
    };
    let (run, agent) = match &plain {
        Some(p) => (p.run.clone(), p.agent.clone()),
        None => (crate::trust::decide::typed(req.command), None),
    };
    let mut stored = place(ctx, stored, req.setup)?;
    if req.save {
        stored = save_command(ctx, stored, run.argv())?;
    }
    let id = stored.record.id.clone();
    match &agent {
        Some((name, form)) => ctx.ui.info(format!(
            "resuming session {id} on {} in {}: agent {name}, {}",
            stored.record.branch,
            stored.record.worktree,
            match form {
                Form::Resume => "continuing its conversation",
                Form::Start => "a new conversation",
            }
        )),
        None => ctx.ui.info(format!(
            "resuming session {id} on {} in {}",
            stored.record.branch, stored.record.worktree
        )),
    }
    if let Some(p) = &plain {
        own_conversation(ctx, &id, p)?;
    }
    if req.bg {
        return run::run_background(ctx, stored, &run, "resumed", req.sandbox);
    }
    let status = run::run_foreground(ctx, stored.clone(), &run, "resumed", req.sandbox)?;
    crate::agent::learn_after_run(ctx, &stored.record);
    // Not after a signal (Ctrl-C ends the agent with 128 + 2): that is no failure to find.
    if let (Some((name, Form::Resume)), true) = (&agent, status != 0 && status < 128) {
        // The agent's own words are on the terminal. Only when its store holds
        // no conversation of the session is a new one the way on: a failure
        // with one there (the network, say) is not answered by starting anew.
        let conversation = plain.as_ref().and_then(|p| p.conversation.as_deref());
        if has_conversation(ctx, name, &stored.record, conversation) == Some(false) {
            ctx.ui.hint(format!(
                "agent {name} exited {status} and has no conversation of session {id} to \
                 continue; start a new one: git bullpen resume {id} --fresh"
            ));
        }
    }
    Ok(status)
}

/// Before the run: say why it is not exactly the session's own conversation
/// that continues, and record the conversation that now is its own (a new one,
/// an id just learned).
fn own_conversation(ctx: &Ctx, id: &SessionId, plain: &command::Plain) -> Result<()> {
    if let Some(note) = &plain.note {
        ctx.ui.info(note);
    }
    if let Some(c) = &plain.record {
        Local::of(&ctx.layout, id)
            .write_conversation(c)
            .with_context(|| format!("cannot record the conversation of session {id}"))?;
    }
    Ok(())
}

/// Does the agent's own store hold a conversation of the session (the one
/// named, or any in its worktree)? `None` when it cannot tell (an agent whose
/// store bullpen does not know).
pub fn has_conversation(
    ctx: &Ctx,
    name: &AgentName,
    record: &Record,
    conversation: Option<&str>,
) -> Option<bool> {
    let profile = crate::agent::profile(ctx, name).ok()??;
    crate::agent::store::has_conversation(
        profile.builtin?.store,
        Path::new(&record.worktree),
        conversation,
    )
}

/// A collected session that cannot be recreated: why, and how to start again
/// from what is left of its branch.
fn refuse_collected(stored: &Stored, f: &decide::Facts, why: &str) -> anyhow::Error {
    Error::refused(format!(
        "session {} was collected (`git bullpen gc` or `rm` removed its worktree) and cannot \
         be recreated: {why}",
        stored.record.id
    ))
    .hint(start_again_hint(&f.id, f.branch_exists, &f.remote_branches))
    .hints(collected_by_content(stored.record.extra.get(PUBLISHED_KEY)))
    .into()
}

/// The tip gc deleted when it collected the session (`last_tip`, or the tip its
/// evidence names), when it is a commit here.
fn last_tip(ctx: &Ctx, r: &Record) -> Option<Oid> {
    let named = r
        .extra
        .get(LAST_TIP_KEY)
        .or_else(|| r.extra.get(PUBLISHED_KEY)?.get("tip"))?
        .as_str()?;
    let tip: Oid = named.parse().ok()?;
    (ctx.repo.resolve_commit(&tip.to_string()).ok() == Some(tip)).then_some(tip)
}

/// Is the recorded worktree the one bullpen created here?
fn proof(ctx: &Ctx, r: &Record) -> std::result::Result<(), String> {
    let created = Local::of(&ctx.layout, &r.id).created();
    let created = created
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    created_here(&r.worktree, created)
        .map(|_| ())
        .map_err(|why| why.describe())
}

/// A collected session: its worktree recreated at its recorded path (so an
/// agent finds its conversation there again), from its branch or, on a new
/// branch, from the tip gc deleted; decided again under the lock. The record
/// goes back to the state of a session that can run.
fn revive(ctx: &Ctx, stored: Stored, setup: bool) -> Result<Stored> {
    let r = &stored.record;
    let tip = last_tip(ctx, r);
    let plan = || -> Result<(decide::Facts, Revival)> {
        let f = facts::inspect(ctx, r)?;
        let revival = decide::revive(&f, proof(ctx, r), tip.is_some());
        Ok((f, revival))
    };
    let refused = |f: &decide::Facts, revival: Revival| match revival {
        Revival::Refuse(why) => refuse_collected(&stored, f, &why),
        Revival::Placement(why) => explain(&why, f).into(),
        _ => anyhow!("internal: not a refusal"),
    };
    let (f, first) = plan()?;
    if matches!(first, Revival::Refuse(_) | Revival::Placement(_)) {
        return Err(refused(&f, first));
    }
    let include = crate::spawn::include::Include::load(ctx)?;
    let path = with_parent(&r.worktree)?;
    let lock = Lock::acquire(&ctx.layout.lock_path())?;
    let (f, again) = plan()?;
    let (stale_entries, new_branch) = match again {
        Revival::Use => return runnable(ctx, &stored),
        Revival::Recreate {
            stale_entries,
            new_branch,
        } => (stale_entries, new_branch),
        other => return Err(refused(&f, other)),
    };
    remove_stale_entries(ctx, r, &path, stale_entries)?;
    // Made here, exclusively (see `spawn::undo`): only that is the undo's to remove.
    let made = Made::create(ctx, &facts::confined(ctx, r)?)?;
    let added = match (new_branch, tip) {
        (true, Some(tip)) => {
            ctx.ui.info(format!(
                "session {} was collected; recreating its worktree {} from its last tip {tip}",
                r.id,
                path.display()
            ));
            ctx.repo.worktree_add_new_branch(&path, &f.branch, tip)
        }
        (true, None) => Err(anyhow!("internal: no tip to recreate from")),
        (false, _) => {
            ctx.ui.info(format!(
                "session {} was collected; recreating its worktree {} from {}",
                r.id,
                path.display(),
                f.branch
            ));
            ctx.repo.worktree_add_existing(&path, &f.branch)
        }
    };
    let made_branch = tip.filter(|_| new_branch);
    if let Err(e) = added {
        undo_revival(ctx, r, &made, made_branch);
        return Err(e.context(format!(
            "cannot recreate the worktree of session {} at {}",
            r.id,
            path.display()
        )));
    }
    drop(lock);
    if let Err(e) = crate::spawn::ready::make_ready(ctx, r, &include, setup) {
        match Lock::acquire(&ctx.layout.lock_path()) {
            Ok(_lock) => undo_revival(ctx, r, &made, made_branch),
            Err(undo) => ctx.ui.warn(format!("{undo:#}")),
        }
        return Err(e.context(format!(
            "the recreated worktree of session {} was removed again; nothing was run",
            r.id
        )));
    }
    runnable(ctx, &stored)
}

/// The record of a revived session: no longer collected.
fn runnable(ctx: &Ctx, stored: &Stored) -> Result<Stored> {
    store::update(&ctx.repo, stored, "worktree recreated after gc", |rec| {
        rec.state = if rec.exit.is_some() {
            State::Exited
        } else {
            State::Ready
        };
        rec.extra.remove(LAST_TIP_KEY);
        rec.extra.remove(PUBLISHED_KEY);
    })
    .context("the worktree was recreated but its record could not be updated")
}

/// A revival that failed: what git made at the path, and the branch it made
/// (while it is still at that tip).
fn undo_revival(ctx: &Ctx, r: &Record, made: &Made, made_branch: Option<Oid>) {
    crate::spawn::undo::undo_failed_add(ctx, made);
    let Some(tip) = made_branch else { return };
    let branch_ref = r.id.branch_ref();
    if let Ok(Some(now)) = ctx.repo.ref_target(&branch_ref) {
        if now == tip {
            if let Err(e) = ctx
                .repo
                .delete_ref(&branch_ref, tip, "bullpen: resume failed")
            {
                ctx.ui.warn(format!("could not delete {branch_ref}: {e:#}"));
            }
        }
    }
}

/// `resume --save`: the command becomes the session's own, in the record and in
/// this machine's local proof, so that a plain `resume` runs it from now on.
fn save_command(ctx: &Ctx, stored: Stored, argv: &[String]) -> Result<Stored> {
    let id = stored.record.id.clone();
    // A saved command replaces the agent: a plain resume runs it from now on.
    let saved = store::update(&ctx.repo, &stored, "command saved", |r| {
        r.command = argv.to_vec();
        r.agent = None;
        r.agent_args.clear();
    })
    .with_context(|| format!("cannot record the new command of session {id}"))?;
    Local::of(&ctx.layout, &id)
        .write_command(argv, None)
        .with_context(|| format!("cannot record the new command of session {id} locally"))?;
    ctx.ui.info(format!(
        "session {id}'s command is now `{}`",
        render_command(argv)
    ));
    Ok(saved)
}

/// A session recorded running whose process is gone (lost) may be resumed: say so.
fn note_lost(ctx: &Ctx, stored: &Stored) {
    let record = &stored.record;
    if let (State::Running, Some(p)) = (record.state, &record.process) {
        ctx.ui.info(format!(
            "session {} was recorded running (pid {}), but that process is gone",
            record.id, p.pid
        ));
    }
}

/// Decide where the session runs; recreate its worktree when that is the decision.
/// Refusals change nothing (not even the lock file).
fn place(ctx: &Ctx, stored: Stored, setup: bool) -> Result<Stored> {
    if stored.record.state == State::Collected {
        return revive(ctx, stored, setup);
    }
    let f = facts::inspect(ctx, &stored.record)?;
    match decide(&f) {
        Placement::Use => Ok(stored),
        Placement::Refuse(why) => Err(explain(&why, &f).into()),
        Placement::Recreate { .. } => recreate(ctx, stored, setup),
    }
}

/// `git worktree add <path> bullpen/<id>` under the per-repository lock, after
/// deciding again under it (another process may have got there first).
fn recreate(ctx: &Ctx, stored: Stored, setup: bool) -> Result<Stored> {
    // What to copy is read (and refused, when a pattern reaches outside the
    // worktree) before anything is made.
    let include = crate::spawn::include::Include::load(ctx)?;
    let path = with_parent(&stored.record.worktree)?;
    let lock = Lock::acquire(&ctx.layout.lock_path())?;
    let f = facts::inspect(ctx, &stored.record)?;
    let stale_entries = match decide(&f) {
        Placement::Recreate { stale_entries } => stale_entries,
        Placement::Use => return Ok(stored),
        Placement::Refuse(why) => return Err(explain(&why, &f).into()),
    };
    if !stale_entries.is_empty() {
        // Removing git's entry is a deletion: only for a worktree bullpen created here.
        if let Err(why) = proof(ctx, &stored.record) {
            return Err(Error::refused(format!(
                "cannot recreate the worktree of session {}: git still registers {} and {why}",
                stored.record.id,
                path.display(),
            ))
            .hint(format!(
                "if that entry is stale, `git worktree remove {}`, then resume again",
                path.display()
            ))
            .into());
        }
    }
    remove_stale_entries(ctx, &stored.record, &path, stale_entries)?;
    ctx.ui.info(format!(
        "worktree {} is gone; recreating it from {}",
        path.display(),
        f.branch
    ));
    // Made here, exclusively (see `spawn::undo`): only that is the undo's to remove.
    let made = Made::create(ctx, &facts::confined(ctx, &stored.record)?)?;
    if let Err(e) = ctx.repo.worktree_add_existing(&path, &f.branch) {
        crate::spawn::undo::undo_failed_add(ctx, &made);
        return Err(e.context(format!(
            "cannot recreate the worktree of session {} at {}",
            stored.record.id,
            path.display()
        )));
    }
    drop(lock);
    // A recreated worktree is a new one: the ignored files `.worktreeinclude`
    // names, and setup, as spawn does. If that fails the worktree goes again
    // (the branch and the record stay) and nothing runs.
    if let Err(e) = crate::spawn::ready::make_ready(ctx, &stored.record, &include, setup) {
        match Lock::acquire(&ctx.layout.lock_path()) {
            Ok(_lock) => crate::spawn::undo::undo_failed_add(ctx, &made),
            Err(undo) => ctx.ui.warn(format!("{undo:#}")),
        }
        return Err(e.context(format!(
            "the recreated worktree of session {} was removed again; nothing was run",
            stored.record.id
        )));
    }
    store::update(&ctx.repo, &stored, "worktree recreated", |_| {})
        .context("the worktree was recreated but its record could not be updated")
}

/// Git's stale entries for the recorded path (the session's own, of a worktree
/// bullpen created here: the caller checked), each removed by itself, under
/// the lock.
fn remove_stale_entries(
    ctx: &Ctx,
    r: &Record,
    path: &Path,
    stale_entries: Vec<String>,
) -> Result<()> {
    for admin_id in stale_entries {
        ctx.ui.info(format!(
            "git still registers the worktree {} (its directory is gone); removing that \
             entry ({admin_id}) first",
            path.display()
        ));
        match ctx.repo.remove_admin_entry(&admin_id, path) {
            Ok(EntryRemoval::Removed | EntryRemoval::AlreadyGone) => {}
            Ok(EntryRemoval::Refused(why)) => {
                return Err(Error::refused(format!(
                    "cannot recreate the worktree of session {}: git's entry {admin_id} for {} \
                     stays: {why}",
                    r.id,
                    path.display()
                ))
                .into())
            }
            Err(e) => {
                return Err(e.context(format!(
                    "cannot remove git's stale worktree entry {admin_id} for {}",
                    path.display()
                )))
            }
        }
    }
    Ok(())
}

/// The recorded worktree path, its parent directory made (the worktree root).
fn with_parent(worktree: &str) -> Result<std::path::PathBuf> {
    let path = Path::new(worktree).to_path_buf();
    let parent = path
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create the worktree root {}", parent.display()))?;
    Ok(path)
}
