//! What a plain `resume` (no command after `--`) runs: the one place that
//! chooses it, for a session of this machine or one that came from elsewhere.

use anyhow::Result;

use crate::context::Ctx;
use crate::model::agent::{plain_form, AgentName, Form};
use crate::model::command::{escaped, quoted, render_command};
use crate::model::local::LocalCommand;
use crate::model::{Error, Record};
use crate::trust::decide::{may_run_agent, may_run_recorded, Distrust, Runnable};
use crate::trust::local::Local;

/// What a plain `resume` runs, and which form of which agent that is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plain {
    pub run: Runnable,
    /// The agent and the form of its profile (`None`: a plain session's own command).
    pub agent: Option<(AgentName, Form)>,
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
/// new local session (and its `command.json`) exists, so that nothing of the
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

/// The choice itself, given this machine's `command.json` for the session
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
        return Ok(Plain { run, agent: None });
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
    let ever_ran = record.process.is_some() || record.exit.is_some();
    let form = plain_form(fresh, ever_ran);
    let argv = crate::agent::argv(ctx, &name, form, &record.agent_args, Some(&record.id)).map_err(
        |e| {
            e.context(format!(
                "cannot resume session {id}, which runs agent '{name}'; nothing was run"
            ))
        },
    )?;
    Ok(Plain {
        run: allowed.with_profile(argv),
        agent: Some((name, form)),
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
    let ever_ran = record.process.is_some() || record.exit.is_some();
    crate::agent::argv(
        ctx,
        &name,
        plain_form(false, ever_ran),
        &record.agent_args,
        Some(&record.id),
    )
    .unwrap_or_else(|_| record.command.clone())
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
