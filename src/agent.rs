//! Agent profiles as this machine has them: the built-ins (`model::agent`)
//! under this repository's git config, `bullpen.agent.<name>.command`,
//! `.resume`, `.program`, `.prompt` and `.valueOptions`. Never read from a
//! record. `store` reads the agents' own stores of conversations.

pub mod store;

use std::io::Read;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::model::agent::{self, AgentName, Configured, Form, Ids, Profile, Words};
use crate::model::local::{Conversation, LOCAL_SCHEMA};
use crate::model::{config, conversation, Error, Record, SessionId};
use crate::trust::local::Local;

/// The profile of `name` on this machine, if it has one.
pub fn profile(ctx: &Ctx, name: &AgentName) -> Result<Option<Profile>> {
    let get = |key: String| ctx.repo.config_string(&key);
    let setting = |s: &str| get(config::agent_setting(name.as_str(), s));
    let prompt = match setting(config::AGENT_PROMPT).filter(|v| !v.trim().is_empty()) {
        None => None,
        Some(v) => Some(agent::parse_prompt(&v).map_err(|why| {
            Error::failed(format!(
                "bad git config {}: {why}",
                config::agent_setting(name.as_str(), config::AGENT_PROMPT)
            ))
        })?),
    };
    Ok(agent::profile(
        name,
        Configured {
            command: get(config::agent_key(name.as_str(), Form::Start)),
            resume: get(config::agent_key(name.as_str(), Form::Resume)),
            program: setting(config::AGENT_PROGRAM),
            prompt,
            value_options: setting(config::AGENT_VALUE_OPTIONS),
        },
    ))
}

/// Every agent this machine has a profile of: the built-ins, then those git
/// config names (`bullpen.agent.<name>.*`), each once.
pub fn names(repo: &crate::git::Repo) -> Vec<AgentName> {
    let mut out: Vec<AgentName> = agent::BUILTINS
        .iter()
        .filter_map(|b| b.name.parse().ok())
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

/// An error about agent `name` for `session` (a resume: refused, exit 3) or for
/// a new session (`None`: failed, 128).
fn make(session: Option<&SessionId>, msg: String) -> Error {
    match session {
        Some(_) => Error::refused(msg),
        None => Error::failed(msg),
    }
}

/// This machine's profile of `name`; why not, as an error people can act on.
pub fn require(ctx: &Ctx, name: &AgentName, session: Option<&SessionId>) -> Result<Profile> {
    let Some(profile) = profile(ctx, name)? else {
        let known = names(&ctx.repo);
        let known: Vec<&str> = known.iter().map(AgentName::as_str).collect();
        let mut err = make(
            session,
            format!("no agent profile named '{name}' on this machine"),
        );
        if let Some(near) = crate::model::suggest::did_you_mean(name.as_str(), &known) {
            err = err.hint(near);
        }
        return Err(err
            .hint(format!(
                "define one: git config {} '<how to start it>' and git config {} '<how to \
                 continue its conversation>' (built in: {})",
                config::agent_key(name.as_str(), Form::Start),
                config::agent_key(name.as_str(), Form::Resume),
                builtin_names()
            ))
            .into());
    };
    Ok(profile)
}

/// One run of a form of a profile for a session.
pub struct Invoke<'a> {
    pub form: Form,
    /// The session it runs for (the conversation is named after it).
    pub session: &'a SessionId,
    /// `true` for an existing session (a resume), `false` for a new one.
    pub existing: bool,
    pub words: &'a Words,
    /// The conversation id: the one the start form starts, or the resume form continues.
    pub conversation: Option<&'a str>,
}

/// What a form runs, and whether it names the conversation exactly.
pub struct Invocation {
    pub argv: Vec<String>,
    pub exact: bool,
}

/// The argv of a form of `profile`, built from its parts: the form's line,
/// bullpen's own words (the conversation), the session's options, and (start
/// only) the task prompt. Fails, naming the program and the profile, when the
/// program is not on PATH, before anything is made or run.
pub fn invoke(ctx: &Ctx, profile: &Profile, how: &Invoke) -> Result<Invocation> {
    let name = &profile.name;
    let session = how.existing.then_some(how.session);
    let Some(built) = agent::build(profile, how.form, how.session, how.conversation) else {
        return Err(no_form(name, how.form, session).into());
    };
    if let Some(program) = &profile.program {
        if !crate::sys::program::on_path(program) {
            return Err(missing_program(profile, program, session).into());
        }
    }
    let mut args = built.own;
    // The agent's hooks (`git bullpen hook`), then the session's own options.
    args.extend(crate::hook::wire::extra_args(ctx, name, &built.line)?);
    args.extend(how.words.options.iter().cloned());
    if how.form == Form::Start {
        args.extend(how.words.prompt.iter().cloned());
    }
    Ok(Invocation {
        argv: agent::argv(&built.line, name, &args),
        exact: built.exact,
    })
}

/// The argv of `form` of this machine's profile of `name`, with `args` as the
/// session's options and no conversation id.
pub fn argv(
    ctx: &Ctx,
    name: &AgentName,
    form: Form,
    args: &[String],
    session: &SessionId,
) -> Result<Vec<String>> {
    let profile = require(ctx, name, Some(session))?;
    let words = Words {
        options: args.to_vec(),
        prompt: Vec::new(),
    };
    let how = Invoke {
        form,
        session,
        existing: true,
        words: &words,
        conversation: None,
    };
    Ok(invoke(ctx, &profile, &how)?.argv)
}

fn no_form(name: &AgentName, form: Form, session: Option<&SessionId>) -> Error {
    let what = match form {
        Form::Start => "how to start it",
        Form::Resume => "how to continue its conversation",
    };
    let mut e = make(
        session,
        format!(
            "agent '{name}' has no {} form on this machine: git config {} is not set",
            form.key(),
            config::agent_key(name.as_str(), form)
        ),
    )
    .hint(format!(
        "set it to {what}: git config {} '...'",
        config::agent_key(name.as_str(), form)
    ));
    if let (Form::Resume, Some(id)) = (form, session) {
        e = e.hint(format!(
            "or start a new conversation: git bullpen resume {id} --fresh"
        ));
    }
    e
}

/// The program of a profile is not there: say which, of which profile, and
/// what was (not) done.
fn missing_program(profile: &Profile, program: &str, session: Option<&SessionId>) -> Error {
    let name = &profile.name;
    let whose = match profile.builtin.is_some() && profile.command_builtin {
        true => format!("the built-in profile bullpen.agent.{name}"),
        false => format!("the profile bullpen.agent.{name}"),
    };
    let done = match session {
        Some(_) => "nothing was run",
        None => "nothing was created",
    };
    Error::failed(format!(
        "cannot run agent '{name}': its program {} ({whose}) is not on PATH; {done}",
        crate::model::command::quoted(program)
    ))
    .hint(format!(
        "install it or put its directory on PATH; or say where it is: git config {} \
         /path/to/{}",
        config::agent_setting(name.as_str(), config::AGENT_PROGRAM),
        program.rsplit('/').next().unwrap_or(program)
    ))
}

fn builtin_names() -> String {
    agent::BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The session's own conversation as this machine recorded it, when it is of
/// the agent the session runs (an unreadable file counts as none).
pub fn recorded_conversation(ctx: &Ctx, record: &Record, name: &AgentName) -> Option<Conversation> {
    let c = Local::of(&ctx.layout, &record.id).conversation().ok()??;
    (c.agent == name.as_str() && c.id.as_deref().is_none_or(conversation::is_uuid)).then_some(c)
}

/// A new conversation of `profile`'s start form, to be the session's own:
/// with an id bullpen chooses now (Claude Code), or one to learn after the
/// run (Codex); `None` for an agent whose conversations bullpen cannot name.
pub fn new_conversation(profile: &Profile) -> Result<Option<Conversation>> {
    let id = match profile.ids(Form::Start) {
        Some(Ids::Chosen) => Some(conversation::uuid_v4(random_bytes()?)),
        Some(Ids::Learned) => None,
        None => return Ok(None),
    };
    Ok(Some(Conversation {
        schema: LOCAL_SCHEMA,
        agent: profile.name.to_string(),
        id,
        since: now_millis(),
    }))
}

/// Now, to the millisecond: two conversations begun in one second are told apart.
fn now_millis() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    conversation::instant(millis)
}

fn random_bytes() -> Result<[u8; 16]> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read random bytes from /dev/urandom for a conversation id")?;
    Ok(bytes)
}

/// The id of a conversation bullpen learns from the agent's store (Codex):
/// the first one in the worktree since the conversation's start, if found.
pub fn learn(profile: &Profile, record: &Record, c: &Conversation) -> Option<String> {
    if c.id.is_some() || profile.builtin.map(|b| b.ids) != Some(Ids::Learned) {
        return c.id.clone();
    }
    let since = conversation::parse_instant(&c.since)?;
    store::learn_codex(std::path::Path::new(&record.worktree), since)
}

/// After a run of an agent that names its conversation itself (Codex): learn
/// the id of the session's own and record it locally, so that every later
/// resume continues exactly that one. Silent when there is nothing to learn.
pub fn learn_after_run(ctx: &Ctx, record: &Record) {
    let Some(name) = record.agent.as_deref().and_then(|a| a.parse().ok()) else {
        return;
    };
    let Ok(Some(profile)) = profile(ctx, &name) else {
        return;
    };
    let Some(c) = recorded_conversation(ctx, record, &name).filter(|c| c.id.is_none()) else {
        return;
    };
    if let Some(id) = learn(&profile, record, &c) {
        let learned = Conversation { id: Some(id), ..c };
        if let Err(e) = Local::of(&ctx.layout, &record.id).write_conversation(&learned) {
            ctx.ui.warn(format!("{e:#}"));
        }
    }
}
