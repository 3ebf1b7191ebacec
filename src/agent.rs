//! Agent profiles as this machine has them: the built-ins (`model::agent`)
//! under this repository's git config, `bullpen.agent.<name>.command` and
//! `.resume`. Never read from a record.

use crate::context::Ctx;
use crate::model::agent::{self, AgentName, Form, Profile};
use crate::model::{config, Error, SessionId};

/// The profile of `name` on this machine, if it has one.
pub fn profile(ctx: &Ctx, name: &AgentName) -> Option<Profile> {
    let get = |form| {
        ctx.repo
            .config_string(&config::agent_key(name.as_str(), form))
    };
    agent::profile(name, get(Form::Start), get(Form::Resume))
}

/// Every agent this machine has a profile of: the built-ins, then those git
/// config names (`bullpen.agent.<name>.*`), each once.
pub fn names(repo: &crate::git::Repo) -> Vec<AgentName> {
    let mut out: Vec<AgentName> = agent::BUILTINS
        .iter()
        .filter_map(|(n, _, _)| n.parse().ok())
        .collect();
    for sub in repo.config_subsections("bullpen") {
        let Some(name) = sub.strip_prefix("agent.") else {
            continue;
        };
        if let Ok(name) = name.parse::<AgentName>() {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The agent `spawn` runs when no command is given: git config `bullpen.agent`,
/// if set (and valid).
pub fn default_agent(ctx: &Ctx) -> anyhow::Result<Option<AgentName>> {
    let Some(value) = ctx
        .repo
        .config_string(config::AGENT)
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(None);
    };
    value
        .trim()
        .parse()
        .map(Some)
        .map_err(|e| Error::failed(format!("bad git config {}: {e}", config::AGENT)).into())
}

/// The argv of `form` of this machine's profile of `name`, with the extra
/// arguments; why not, as an error people can act on, when there is none.
/// `session`: the session a resume would run it for (a record naming an agent
/// this machine has no profile for is refused, exit 3); `None` for a new
/// session (`spawn --agent` of an agent with no profile fails, 128).
pub fn argv(
    ctx: &Ctx,
    name: &AgentName,
    form: Form,
    args: &[String],
    session: Option<&SessionId>,
) -> anyhow::Result<Vec<String>> {
    let make = |msg: String| match session {
        Some(_) => Error::refused(msg),
        None => Error::failed(msg),
    };
    let Some(profile) = profile(ctx, name) else {
        return Err(
            make(format!("no agent profile named '{name}' on this machine"))
                .hint(format!(
                    "define one: git config {} '<how to start it>' and git config {} '<how to \
                 continue its conversation>' (built in: {})",
                    config::agent_key(name.as_str(), Form::Start),
                    config::agent_key(name.as_str(), Form::Resume),
                    builtin_names()
                ))
                .into(),
        );
    };
    let Some(line) = profile.line(form) else {
        let what = match form {
            Form::Start => "how to start it",
            Form::Resume => "how to continue its conversation",
        };
        let mut e = make(format!(
            "agent '{name}' has no {} form on this machine: git config {} is not set",
            form.key(),
            config::agent_key(name.as_str(), form)
        ))
        .hint(format!(
            "set it to {what}: git config {} '...'",
            config::agent_key(name.as_str(), form)
        ));
        if let (Form::Resume, Some(id)) = (form, session) {
            e = e.hint(format!(
                "or start a new conversation: git bullpen resume {id} --fresh"
            ));
        }
        return Err(e.into());
    };
    // The agent's hooks first, then the session's own arguments.
    let mut all = crate::hook::wire::extra_args(ctx, name, line)?;
    all.extend(args.iter().cloned());
    Ok(agent::argv(line, name, &all))
}

fn builtin_names() -> String {
    agent::BUILTINS
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}
