//! What a plain `resume` (no command after `--`) runs: the one place that
//! chooses it, for a session of this machine or one that came from elsewhere.

use anyhow::Result;

use crate::agent::{invoke, learn, new_conversation, recorded_conversation, Invoke};
use crate::context::Ctx;
use crate::model::agent::{plain_form, AgentName, Form, Ids, Words};
use crate::model::command::{escaped, quoted, render_command};
use crate::model::local::{Conversation, LocalCommand};
use crate::model::{Error, Record};
use crate::trust::decide::{may_run_agent, may_run_recorded, AgentRun, Distrust, Runnable};
use crate::trust::local::Local;

/// What a plain `resume` runs, and which form of which agent that is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plain {
    /// What runs, with the trust decision that it may.
    pub run: Runnable,
    /// The agent and the form of its profile (`None`: a plain session's own command).
    pub agent: Option<(AgentName, Form)>,
    /// The conversation to record as the session's own before the run: a new
    /// one (`--fresh`), or the id of its own just learned from the agent's store.
    pub record: Option<Conversation>,
    /// The conversation the run starts or continues (`None`: the agent's most
    /// recent one in the worktree, or one bullpen cannot name).
    pub conversation: Option<String>,
    /// Said on stderr before the run: why it is not exactly the session's own
    /// conversation that continues.
    pub note: Option<String>,
}

/// The choice of what a plain `resume <id>` runs, with the authority for it:
///
/// - a plain session (no agent): the session's own command, only if this
///   machine recorded exactly that command (`trust::decide::may_run_recorded`);
///   `fresh` is a usage error there;
/// - an agent session: this machine's profile of the agent the record names,
///   with the session's extra arguments (which must be the ones this machine
///   recorded: `trust::decide::may_run_agent`): its start form with `fresh` or
///   when the session never ran, else its resume form (after a normal end, a
///   stop, a lost run or a reboot). A record naming an agent this machine has
///   no profile for is refused (exit 3).
///
/// The profile always comes from this machine's git config, never from the
/// record. Refusals change nothing.
pub fn plain_command(ctx: &Ctx, record: &Record, fresh: bool) -> Result<Plain> {
    let local = Local::of(&ctx.layout, &record.id).command();
    let local = local
        .as_ref()
        .map(Option::as_ref)
        .map_err(|e| format!("{e:#}"));
    choose(ctx, record, local, fresh, record.id.as_str())
}

/// [`plain_command`] for a session this machine has recorded nothing of, named
/// `shown` (`origin/fix-login`) in messages and in the lines they say to type:
/// what `resume <remote>/<id>` runs with nothing after `--`, decided before the
/// new local session (and its local proof) exists, so that nothing of the
/// other machine's record becomes local proof. `record` is what the other
/// machine recorded: its agent, extra arguments and whether it ran choose among
/// this machine's forms, under the rules for a session from elsewhere (a plain
/// session's command never runs; an agent only with no extra arguments).
pub fn plain_command_from_elsewhere(
    ctx: &Ctx,
    record: &Record,
    fresh: bool,
    shown: &str,
) -> Result<Plain> {
    choose(ctx, record, Ok(None), fresh, shown)
}

/// The choice itself, given the command this machine recorded for the session
/// (`local`); `id` names the session in messages.
fn choose(
    ctx: &Ctx,
    record: &Record,
    local: Result<Option<&LocalCommand>, String>,
    fresh: bool,
    id: &str,
) -> Result<Plain> {
    let Some(agent) = &record.agent else {
        if fresh {
            return Err(Error::usage(format!(
                "session {id} runs no agent: --fresh starts an agent's new conversation"
            ))
            .hint(format!(
                "run its command again with `git bullpen resume {id}`, or another one after `--`"
            ))
            .into());
        }
        let run = may_run_recorded(&record.command, local)
            .map_err(|why| distrusted_command(record, &why, id))?;
        return Ok(Plain {
            run,
            agent: None,
            record: None,
            conversation: None,
            note: None,
        });
    };
    let name: AgentName = agent.parse().map_err(|_| {
        Error::refused(format!(
            "session {id} names the agent {}, which is no agent name; nothing was run",
            quoted(agent)
        ))
        .hint(format!(
            "name the command to run: git bullpen resume {id} -- <command>"
        ))
    })?;
    let allowed = may_run_agent(agent, &record.agent_args, local).map_err(|why| {
        let with = match record.agent_args.is_empty() {
            true => String::new(),
            false => format!(
                " with the arguments {}",
                quoted(&render_command(&record.agent_args))
            ),
        };
        Error::refused(format!(
            "not running agent '{name}'{with} for session {id}: {}",
            why.describe()
        ))
        .hint(format!(
            "name the command to run: git bullpen resume {id} -- <command>"
        ))
    })?;
    Ok(agent_plain(ctx, record, &name, fresh, id)?.allowed(allowed))
}

/// What [`agent_plain`] chose, before the trust check: its argv and the rest of
/// a [`Plain`].
struct AgentPlain {
    argv: Vec<String>,
    agent: (AgentName, Form),
    record: Option<Conversation>,
    conversation: Option<String>,
    note: Option<String>,
}

impl AgentPlain {
    /// The [`Plain`] it is, with the trust decision that it may run.
    fn allowed(self, allowed: AgentRun) -> Plain {
        Plain {
            run: allowed.with_profile(self.argv),
            agent: Some(self.agent),
            record: self.record,
            conversation: self.conversation,
            note: self.note,
        }
    }
}

/// What a plain `resume` runs for an agent session, without the trust checks:
/// this machine's profile of `name`, the record's extra arguments as its
/// options (the task prompt was the start's alone), and the session's own
/// conversation as this machine recorded it.
fn agent_plain(
    ctx: &Ctx,
    record: &Record,
    name: &AgentName,
    fresh: bool,
    id: &str,
) -> Result<AgentPlain> {
    let cannot = |e: anyhow::Error| {
        e.context(format!(
            "cannot resume session {id}, which runs agent '{name}'; nothing was run"
        ))
    };
    let profile = crate::agent::require(ctx, name, Some(&record.id)).map_err(cannot)?;
    let ever_ran = record.process.is_some() || record.exit.is_some();
    let form = plain_form(fresh, ever_ran);
    let recorded = recorded_conversation(ctx, record, name);
    let (conversation, to_record, note) = match (form, recorded) {
        // Never ran: the conversation spawn chose was never started; start it.
        (Form::Start, Some(c)) if !fresh => (c.id, None, None),
        (Form::Start, _) => {
            let c = new_conversation(&profile)?;
            (c.as_ref().and_then(|c| c.id.clone()), c, None)
        }
        (Form::Resume, recorded) => match recorded
            .as_ref()
            .and_then(|c| Some((c, learn(&profile, record, c)?)))
        {
            Some((c, id)) => {
                let learned = c.id.is_none().then(|| Conversation {
                    id: Some(id.clone()),
                    ..c.clone()
                });
                (Some(id), learned, None)
            }
            None => (
                None,
                None,
                not_exact(&profile, record, recorded.as_ref(), id),
            ),
        },
    };
    let words = Words {
        options: record.agent_args.clone(),
        prompt: Vec::new(),
    };
    let how = Invoke {
        form,
        session: &record.id,
        existing: true,
        words: &words,
        conversation: conversation.as_deref(),
    };
    let invoked = invoke(ctx, &profile, &how).map_err(cannot)?;
    Ok(AgentPlain {
        argv: invoked.argv,
        agent: (name.clone(), form),
        record: to_record,
        conversation: conversation.filter(|_| invoked.exact),
        note: note.filter(|_| !invoked.exact),
    })
}

/// Why a resume form continues the agent's most recent conversation in the
/// worktree rather than one bullpen names, for an agent whose conversations it
/// can name (`None` for any other).
fn not_exact(
    profile: &crate::model::agent::Profile,
    record: &Record,
    recorded: Option<&Conversation>,
    id: &str,
) -> Option<String> {
    let ids = profile.ids(Form::Resume)?;
    Some(match (ids, recorded) {
        (Ids::Learned, Some(c)) => format!(
            "no {} session of {} since {} was found in its store; continuing its most \
             recent one there",
            profile.name, record.worktree, c.since
        ),
        _ => format!(
            "this machine recorded no conversation id for session {id}; continuing agent {}'s \
             most recent conversation in {}",
            profile.name, record.worktree
        ),
    })
}

/// What `ls --json` shows as the session's own command (`session_command`):
/// what a plain `resume` would run, with this machine's profile for an agent
/// session (the record's command when this machine has none), without the
/// trust checks (which decide whether it may run, not what it is).
pub fn shown_command(ctx: &Ctx, record: &Record) -> Vec<String> {
    let Some(name) = record.agent.as_deref().and_then(|a| a.parse().ok()) else {
        return record.command.clone();
    };
    agent_plain(ctx, record, &name, false, record.id.as_str())
        .map(|p| p.argv)
        .unwrap_or_else(|_| record.command.clone())
}

/// What a plain `resume <id>` runs now, exactly, trust checks included
/// (`ls --json`'s `resume_command`); `None` where it would refuse or fail.
pub fn resume_command(ctx: &Ctx, record: &Record) -> Option<Vec<String>> {
    plain_command(ctx, record, false)
        .ok()
        .map(|p| p.run.argv().to_vec())
}

/// A plain session's recorded command that this machine did not record: say
/// so, with the line to type to run it anyway.
fn distrusted_command(record: &Record, why: &Distrust, id: &str) -> Error {
    // Escaped: a record from elsewhere (or edited by hand) cannot write to the terminal.
    let shown = match escaped(&render_command(&record.command)) {
        s if s.is_empty() => "(none)".to_owned(),
        s => s,
    };
    let mut e = Error::refused(format!(
        "not running the recorded command of session {id}, `{shown}`: {}",
        why.describe()
    ))
    .hint(format!(
        "if you mean to run it, name it: git bullpen resume {id} -- {shown}"
    ));
    if let Distrust::CommandDiffers { local } = why {
        e = e.hint(format!(
            "the command this machine recorded for it: git bullpen resume {id} -- {}",
            escaped(&render_command(local))
        ));
    }
    e
}
