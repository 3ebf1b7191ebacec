//! What a plain `resume` (no command after `--`) runs: the one place that
//! chooses it, for a session of this machine or one that came from elsewhere.

use anyhow::Result;

use crate::context::Ctx;
use crate::model::agent::{plain_form, AgentName, Form};
use crate::model::command::{quoted, render_command};
use crate::model::{Error, Record};
use crate::trust::decide::{may_run_agent, may_run_recorded, Distrust};
use crate::trust::local::Local;

/// What a plain `resume` runs, and which form of which agent that is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plain {
    pub argv: Vec<String>,
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
    let id = &record.id;
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
        if let Err(why) = may_run_recorded(&record.command, local) {
            return Err(distrusted_command(record, &why).into());
        }
        return Ok(Plain {
            argv: record.command.clone(),
            agent: None,
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
    if let Err(why) = may_run_agent(agent, &record.agent_args, local) {
        let with = match record.agent_args.is_empty() {
            true => String::new(),
            false => format!(
                " with the arguments {}",
                quoted(&render_command(&record.agent_args))
            ),
        };
        return Err(Error::refused(format!(
            "not running agent '{name}'{with} for session {id}: {}",
            why.describe()
        ))
        .hint(format!(
            "name the command to run: git bullpen resume {id} -- <command>"
        ))
        .into());
    }
    let ever_ran = record.process.is_some() || record.exit.is_some();
    let form = plain_form(fresh, ever_ran);
    let argv = crate::agent::argv(ctx, &name, form, &record.agent_args, Some(id)).map_err(|e| {
        e.context(format!(
            "cannot resume session {id}, which runs agent '{name}'; nothing was run"
        ))
    })?;
    Ok(Plain {
        argv,
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
fn distrusted_command(record: &Record, why: &Distrust) -> Error {
    let id = &record.id;
    let shown = match render_command(&record.command) {
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
            render_command(local)
        ));
    }
    e
}
