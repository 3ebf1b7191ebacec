//! `resume <remote>/<id>`: continue here a session pushed from another machine.
//!
//! It becomes a new local session, created the way spawn creates one (the
//! record first, the local proof, the worktree under this machine's root, all
//! undone on failure), on a local `bullpen/<id>` that tracks the remote's
//! branch. Its record's first commit has the remote record's commit as parent,
//! so its history (the other machine's runs) comes along, and pushing it back is
//! a fast-forward of the remote's record. What runs is the command given, or
//! what a plain resume would run for the new session, decided by this machine
//! alone: nothing from the remote record (its command, its paths, its
//! processes) is used for anything but words.

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::command::{quoted, render_command};
use crate::model::record::ResumedFrom;
use crate::model::remote::{branch_destination, tracking_branch, RemoteSession};
use crate::model::{time, Error, Oid, Record, SessionId, State};
use crate::run;
use crate::spawn::{self, Seed};

/// What to continue, and how.
pub struct RemoteRequest {
    pub from: RemoteSession,
    /// The id here (default: its id there).
    pub as_id: Option<SessionId>,
    /// The command to run; empty: what a plain resume runs (see [`plain_command`]).
    pub command: Vec<String>,
    pub bg: bool,
}

/// Continue a fetched session here; the shell-style status of its command.
pub fn resume_remote(ctx: &Ctx, req: RemoteRequest) -> Result<i32> {
    let from = &req.from;
    let local_id = req.as_id.clone().unwrap_or_else(|| from.id.clone());
    let remote = fetched_record(ctx, from)?;
    let (upstream, tip) = remote_branch(ctx, from)?;
    if let Some(taken) = spawn::taken(ctx, &local_id)? {
        return Err(taken
            .hint(format!(
                "continue it here under another id: git bullpen resume {from} --as <new-id>{}",
                if req.command.is_empty() {
                    String::new()
                } else {
                    format!(" -- {}", render_command(&req.command))
                }
            ))
            .into());
    }
    let r = &remote.record;
    let base = r.base.parse::<Oid>().unwrap_or(tip);
    let mut record = spawn::new_record(ctx, &local_id, base, r.base_ref.clone(), &req.command);
    record.resumed_from = Some(ResumedFrom {
        remote: from.remote.to_string(),
        id: from.id.clone(),
        record: remote.commit.to_string(),
        host: r.host.clone(),
        clone_id: r.clone_id.clone(),
    });
    let argv = match req.command.is_empty() {
        true => plain_command(ctx, &record, from, r)?,
        false => req.command.clone(),
    };
    record.command = argv.clone();
    if matches!(r.state, State::Running | State::Provisioning) {
        ctx.ui.warn(format!(
            "{from} was recorded {} on {}{}; continuing it here as well forks it: only one of \
             the two can push its record afterwards",
            r.state.as_str(),
            r.host,
            as_of(&r.updated_at)
        ));
    }
    let event = format!("provisioning (continues {from})");
    let created = spawn::create_seeded(
        ctx,
        Seed {
            record,
            parent: Some(remote.commit),
            start: tip,
            upstream: Some(&upstream),
            event: &event,
        },
    )?;
    let stored = &created.stored.record;
    ctx.ui.info(format!(
        "session {} continues {from} (last on {}) on {}, tracking {}, in {}",
        stored.id,
        r.host,
        stored.branch,
        upstream.strip_prefix("refs/remotes/").unwrap_or(&upstream),
        stored.worktree
    ));
    if req.bg {
        return spawn::start_background(ctx, created, &argv);
    }
    run::run_foreground(ctx, created.stored, &argv, "resumed")
}

/// The fetched record of `from`, checked again (any ref can be written by hand).
fn fetched_record(ctx: &Ctx, from: &RemoteSession) -> Result<store::Stored> {
    let refname = from.remote.tracking_ref(&from.id);
    let Some(target) = ctx.repo.direct_target(&refname)? else {
        return Err(Error::failed(format!("no session {from} was fetched here"))
            .hint(format!(
                "`git bullpen fetch {}` brings the sessions pushed there; `git bullpen ls \
                 --remote` lists them",
                from.remote
            ))
            .into());
    };
    store::read_fetched(&ctx.repo, &from.id, target)
        .with_context(|| format!("cannot continue {from}: {refname} is no record bullpen reads"))
}

/// The remote-tracking branch of `from`'s session branch, and its tip.
fn remote_branch(ctx: &Ctx, from: &RemoteSession) -> Result<(String, Oid)> {
    let remote = &from.remote;
    let Some((pattern, _)) = branch_destination(&ctx.repo.fetch_refspecs(remote.as_str())) else {
        return Err(Error::failed(format!(
            "{remote}'s fetch refspecs (remote.{remote}.fetch) do not bring its bullpen/* \
             branches, so {from}'s branch is not here"
        ))
        .hint(format!(
            "git config --add remote.{remote}.fetch '+refs/heads/bullpen/*:refs/remotes/{remote}/bullpen/*'"
        ))
        .hint(format!("then: git bullpen fetch {remote}"))
        .into());
    };
    let upstream = tracking_branch(&pattern, &from.id);
    match ctx.repo.ref_target(&upstream)? {
        Some(tip) => Ok((upstream, tip)),
        None => Err(Error::failed(format!(
            "{remote} has no branch {} (or it was not fetched): there is no work of {from} \
             to continue",
            from.id.branch()
        ))
        .hint(format!(
            "`git bullpen fetch {remote}` brings it, once the other machine has pushed it \
             (`git bullpen push`)"
        ))
        .into()),
    }
}

/// What `resume <remote>/<id>` runs with nothing after `--`: what a plain
/// resume runs for the local session it is about to create (`local`, whose
/// command is empty: nothing is taken from the remote record), asked of
/// resume's own choice, so that this machine alone decides. A new session has
/// no command recorded here, so today that is a refusal that says what to type.
fn plain_command(
    ctx: &Ctx,
    local: &Record,
    from: &RemoteSession,
    remote: &Record,
) -> Result<Vec<String>> {
    match super::plain_command(ctx, local) {
        Ok(argv) if !argv.is_empty() => Ok(argv),
        _ => {
            let mut e = Error::refused(format!(
                "nothing on this machine says what to run for {from}: a command from another \
                 machine's record is never run unless you name it"
            ))
            .hint(format!(
                "name the command: git bullpen resume {from} -- <command>"
            ));
            let theirs = render_command(&remote.command);
            if !theirs.is_empty() && !theirs.chars().any(char::is_control) {
                e = e.hint(format!(
                    "the command recorded on {}: git bullpen resume {from} -- {theirs}",
                    quoted(&remote.host)
                ));
            }
            Err(e.into())
        }
    }
}

/// `, as of 5m ago` for an RFC 3339 time, or nothing.
fn as_of(at: &str) -> String {
    time::parse_rfc3339(at)
        .map(|t| format!(", as of {} ago", time::age(time::now_unix() - t)))
        .unwrap_or_default()
}
