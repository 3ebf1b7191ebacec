//! `resume <remote>/<id>`: continue here a session pushed from another machine.
//!
//! It becomes a new local session, created the way spawn creates one (the
//! record first, the local proof, the worktree under this machine's root, made
//! ready with `.worktreeinclude` and setup, all undone on failure), on a local
//! `bullpen/<id>` that tracks the remote's branch. Its record's first commit has
//! the remote record's commit as parent, so its history (the other machine's
//! runs) comes along, and pushing it back is a fast-forward of the remote's
//! record. What runs is the command given, or what a plain resume would run for
//! a session this machine has recorded nothing of
//! (`resume::command::plain_command_from_elsewhere`): for an agent session, this
//! machine's profile of the agent the record names, with no extra arguments;
//! for any other, nothing. Nothing else of the remote record (its command, its
//! paths, its processes, its extra arguments) is used for anything but words.

use anyhow::{Context, Result};

use super::command::{plain_command_from_elsewhere, Plain};
use crate::context::Ctx;
use crate::git::store;
use crate::model::agent::{AgentName, Form};
use crate::model::command::{escaped, quoted, render_command};
use crate::model::local::Conversation;
use crate::model::record::ResumedFrom;
use crate::model::remote::{branch_destination, tracking_branch, RemoteSession};
use crate::model::{time, Error, Oid, Record, SessionId, State};
use crate::run;
use crate::spawn::{self, include::Include, Seed, Spec};
use crate::trust::decide::Runnable;

/// What to continue, and how.
pub struct RemoteRequest {
    pub from: RemoteSession,
    /// The id here (default: its id there).
    pub as_id: Option<SessionId>,
    /// The command to run, which becomes the new session's own; empty: what a
    /// plain resume runs for a session from elsewhere (see [`choose`]).
    pub command: Vec<String>,
    pub bg: bool,
    /// How the command is confined (`--sandbox`).
    pub sandbox: crate::model::sandbox::Mode,
    /// An agent session: its profile's start form, a new conversation (`--fresh`).
    pub fresh: bool,
    /// Run `bullpen.setup` in the new worktree (not `--no-setup`).
    pub setup: bool,
}

/// What the new session runs now, and what it records as its own.
struct Chosen {
    /// What runs now.
    run: Runnable,
    /// The session's own command (for an agent: its profile's start form).
    own: Vec<String>,
    /// The agent and the form that runs now.
    agent: Option<(AgentName, Form)>,
    /// The conversation it starts, to record as the new session's own.
    conversation: Option<Conversation>,
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
                    format!(" -- {}", escaped(&render_command(&req.command)))
                }
            ))
            .into());
    }
    let r = &remote.record;
    let chosen = choose(ctx, &req, &local_id, r)?;
    // What to copy into the worktree is read (and a pattern reaching outside it
    // refused) before anything is created.
    let include = Include::load(ctx)?;
    // The base the other machine recorded, when it is a commit here (it comes
    // with the branch); else the branch's tip.
    let base = r
        .base
        .parse::<Oid>()
        .ok()
        .filter(|b| ctx.repo.resolve_commit(&b.to_string()).is_ok())
        .unwrap_or(tip);
    let no_args: &[String] = &[];
    let spec = Spec {
        base: "",
        command: &chosen.own,
        agent: chosen.agent.as_ref().map(|(name, _)| (name, no_args)),
        setup: req.setup,
        conversation: None,
    };
    let mut record = spawn::new_record(ctx, &local_id, base, r.base_ref.clone(), &spec);
    record.resumed_from = Some(ResumedFrom {
        remote: from.remote.to_string(),
        id: from.id.clone(),
        record: remote.commit.to_string(),
        host: r.host.clone(),
        clone_id: r.clone_id.clone(),
    });
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
            include: &include,
            setup: req.setup,
            conversation: chosen.conversation.as_ref(),
        },
    )?;
    let stored = &created.stored.record;
    let running = match &chosen.agent {
        Some((name, Form::Resume)) => format!(": agent {name}, continuing its conversation"),
        Some((name, Form::Start)) => format!(": agent {name}, a new conversation"),
        None => String::new(),
    };
    ctx.ui.info(format!(
        "session {} continues {from} (last on {}) on {}, tracking {}, in {}{running}",
        stored.id,
        r.host,
        stored.branch,
        upstream.strip_prefix("refs/remotes/").unwrap_or(&upstream),
        stored.worktree
    ));
    let id = stored.id.clone();
    if req.bg {
        return spawn::start_background(ctx, created, &chosen.run, req.sandbox);
    }
    let record = created.stored.record.clone();
    let status = run::run_foreground(ctx, created.stored, &chosen.run, "resumed", req.sandbox)?;
    crate::agent::learn_after_run(ctx, &record);
    // As after a plain resume: the agent may have found no conversation to
    // continue here (it was saved on the other machine).
    if let (Some((name, Form::Resume)), true) = (&chosen.agent, status != 0 && status < 128) {
        if crate::resume::has_conversation(ctx, name, &record, None) != Some(true) {
            ctx.ui.hint(format!(
                "agent {name} exited {status}; if it had no conversation to continue in this \
                 worktree (the session ran on {}), start a new one: git bullpen resume {id} --fresh",
                r.host
            ));
        }
    }
    Ok(status)
}

/// What the new session runs: the command given (then its own, a plain
/// session), or what a plain resume runs for a session this machine has
/// recorded nothing of (`resume::command`, the one chooser), decided before the
/// session exists: for the agent the other machine's record names, this
/// machine's profile (its resume form when the session ran there, its start
/// form with `--fresh` or when it never ran), only with no extra arguments;
/// for a plain session, a refusal saying what to type.
fn choose(ctx: &Ctx, req: &RemoteRequest, local_id: &SessionId, r: &Record) -> Result<Chosen> {
    let from = &req.from;
    if !req.command.is_empty() {
        return Ok(Chosen {
            run: crate::trust::decide::typed(req.command.clone()),
            own: req.command.clone(),
            agent: None,
            conversation: None,
        });
    }
    // The other machine's record, as the session here would be: its agent, its
    // extra arguments and whether it ran, and nothing this machine recorded.
    let probe = Record {
        id: local_id.clone(),
        branch: local_id.branch(),
        ..r.clone()
    };
    let chosen = plain_command_from_elsewhere(ctx, &probe, req.fresh, &from.to_string());
    if r.agent.is_none() {
        // A plain session's command from elsewhere never runs: the chooser
        // refuses it (`may_run_recorded` with nothing recorded here); say so
        // as it applies to a session that does not exist here yet.
        if req.fresh {
            return Err(Error::usage(format!(
                "{from} runs no agent: --fresh starts an agent's new conversation"
            ))
            .hint(format!(
                "name the command: git bullpen resume {from} -- <command>"
            ))
            .into());
        }
        let mut e = Error::refused(format!(
            "nothing on this machine says what to run for {from}: a command from another \
             machine's record is never run unless you name it"
        ))
        .hint(format!(
            "name the command: git bullpen resume {from} -- <command>"
        ));
        let theirs = render_command(&r.command);
        // A line to type: never one that reads otherwise than it pastes.
        if !theirs.is_empty() && !theirs.chars().any(crate::model::command::is_unseen) {
            e = e.hint(format!(
                "the command recorded on {}: git bullpen resume {from} -- {theirs}",
                quoted(&r.host)
            ));
        }
        return Err(match chosen {
            Err(_) => e.into(),
            Ok(_) => anyhow::Error::from(e)
                .context("internal: a command from elsewhere was chosen to run"),
        });
    }
    let Plain {
        run, agent, record, ..
    } = chosen?;
    let Some((name, form)) = agent else {
        // The chooser runs an agent's profile for a record that names one.
        anyhow::bail!("internal: no agent profile chosen for {from}");
    };
    // The session's own command, as spawn --agent records it: the start form.
    let own = crate::agent::argv(ctx, &name, Form::Start, &[], local_id)
        .unwrap_or_else(|_| run.argv().to_vec());
    Ok(Chosen {
        run,
        own,
        agent: Some((name, form)),
        conversation: record,
    })
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

/// `, as of 5m ago` for an RFC 3339 time, or nothing.
fn as_of(at: &str) -> String {
    time::parse_rfc3339(at)
        .map(|t| format!(", as of {} ago", time::age(time::now_unix() - t)))
        .unwrap_or_default()
}
