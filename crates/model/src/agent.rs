//! Agent profiles: how to start a coding agent, and how to continue its
//! conversation. Plain data and pure helpers: the built-in profiles, the rules
//! of an agent's name, which of a session's words follow it (options) and
//! which are the task prompt (said once, to the start form), the argv a form
//! runs, and which form a plain `resume` runs.
//!
//! A profile comes from this machine's git config (`bullpen.agent.<name>.*`,
//! over the built-ins), never from a record: a record only names the agent
//! (see `trust::decide::may_run_agent`).

use std::fmt;
use std::str::FromStr;

use super::id::SessionId;

/// How a built-in agent's conversation is named, so that a resume continues
/// exactly the session's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ids {
    /// bullpen chooses the id (a UUID) and gives it to the start form
    /// (`start_id`), then names it to the resume form (Claude Code).
    Chosen,
    /// The agent chooses; bullpen learns it from the agent's store after the
    /// first run (Codex).
    Learned,
}

/// Where a built-in agent keeps its conversations (read to learn an id, and to
/// tell whether there is one to continue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// `$CLAUDE_CONFIG_DIR` or `~/.claude`: `projects/<the directory, every
    /// character but ASCII letters and digits a '-'>/<uuid>.jsonl`.
    Claude,
    /// `$CODEX_HOME` or `~/.codex`: `sessions/YYYY/MM/DD/rollout-*.jsonl`, each
    /// file's first line a `session_meta` with the session's `id` and `cwd`.
    Codex,
}

/// A built-in profile. Checked against the agents' real `--help` (Claude Code
/// 2.1.197, codex-cli 0.171.0; README, "Agents").
#[derive(Debug, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    /// The program the forms run, looked for on PATH before anything is made.
    pub program: &'static str,
    /// A new conversation.
    pub start: &'static str,
    /// The most recent conversation in the current directory: the fallback
    /// when no conversation id is known.
    pub resume: &'static str,
    /// Continue the conversation with a known id: this line, then the id.
    pub resume_id: &'static str,
    /// The start form's option that takes the chosen id (`Ids::Chosen`).
    pub start_id: Option<&'static str>,
    /// The start form's option that names the conversation after the session.
    pub start_name: Option<&'static str>,
    pub ids: Ids,
    pub store: Store,
    /// The options that take values (`--x` one, `--x...` every word up to the
    /// next option, `--x?` an optional one), so that no value is taken for the
    /// prompt: the words of neither an option nor its value are the prompt.
    pub value_options: &'static str,
}

/// The built-in profiles.
///
/// - Claude Code: `claude [options] [prompt]`; `--session-id <uuid>` starts a
///   conversation of that id, `--name` names it, `--resume <id>` continues it;
///   `--continue` continues the most recent one in the current directory.
/// - Codex: `codex [OPTIONS] [PROMPT]`; `codex resume [SESSION_ID]` continues
///   that session, `codex resume --last` the most recent one of the current
///   directory (with none, it starts a new one).
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "claude",
        program: "claude",
        start: "claude",
        resume: "claude --continue",
        resume_id: "claude --resume",
        start_id: Some("--session-id"),
        start_name: Some("--name"),
        ids: Ids::Chosen,
        store: Store::Claude,
        value_options: "--add-dir... --agent --agents --allowedTools... --allowed-tools... \
            --append-system-prompt --betas... --debug? -d? --debug-file \
            --disallowedTools... --disallowed-tools... --effort --fallback-model --file... \
            --from-pr? --input-format --json-schema --max-budget-usd --mcp-config... --model \
            --name -n --output-format --permission-mode --plugin-dir --plugin-url \
            --prompt-suggestions? --remote-control? --remote-control-session-name-prefix \
            --resume? -r? --session-id --setting-sources --settings --system-prompt --tools... \
            --worktree? -w?",
    },
    Builtin {
        name: "codex",
        program: "codex",
        start: "codex",
        resume: "codex resume --last",
        resume_id: "codex resume",
        start_id: None,
        start_name: None,
        ids: Ids::Learned,
        store: Store::Codex,
        value_options: "--config -c --enable --disable --remote --remote-auth-token-env \
            --image... -i... --model -m --local-provider --profile -p --sandbox -s --cd -C \
            --add-dir --ask-for-approval -a",
    },
];

/// The built-in profile of that name.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// What a built-in agent writes outside its worktree (relative to the home
/// directory): writable under `--sandbox` when they exist. Claude Code keeps
/// its settings and conversations in `~/.claude` and `~/.claude.json`, Codex in
/// `~/.codex`.
pub fn state_paths(name: &str) -> &'static [&'static str] {
    match name {
        "claude" => &[".claude", ".claude.json"],
        "codex" => &[".codex"],
        _ => &[],
    }
}

/// A validated agent name: `[A-Za-z0-9][A-Za-z0-9_-]{0,62}`, so that it is one
/// git config subsection that needs no quoting and reads the same in a record,
/// a table and a message.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentName(String);

impl AgentName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct InvalidAgentName(String);

impl fmt::Display for InvalidAgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InvalidAgentName {}

impl FromStr for AgentName {
    type Err = InvalidAgentName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = s.len() <= 63
            && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if ok {
            Ok(AgentName(s.to_owned()))
        } else {
            Err(InvalidAgentName(format!(
                "invalid agent name {}: agent names match [A-Za-z0-9][A-Za-z0-9_-]{{0,62}}",
                super::command::quoted(s)
            )))
        }
    }
}

/// A profile as this machine has it: each form a shell line, `None` when
/// neither built in nor configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub name: AgentName,
    /// How to start the agent (a new conversation).
    pub command: Option<String>,
    /// How to continue its most recent conversation in the current directory.
    pub resume: Option<String>,
    /// The built-in of this name (its store, how its conversations are named).
    pub builtin: Option<&'static Builtin>,
    /// Whether each form is the built-in's: bullpen adds a conversation id
    /// only to those; a configured line runs as written.
    pub command_builtin: bool,
    pub resume_builtin: bool,
    /// The words after `--` that are neither options nor their values are the
    /// task prompt, given to the start form only (else every word follows the
    /// session).
    pub prompt: bool,
    /// The options that take values (see [`Builtin::value_options`]).
    pub value_options: String,
    /// The program looked for on PATH before anything is made (`None`: the
    /// line does not say plainly).
    pub program: Option<String>,
    /// The built-in's line that continues a conversation by id (its program
    /// as configured).
    pub resume_id: Option<String>,
}

/// What this machine's git config says of a profile (`bullpen.agent.<name>.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Configured {
    pub command: Option<String>,
    pub resume: Option<String>,
    pub program: Option<String>,
    /// `.prompt`: `positional` or `none`, parsed ([`parse_prompt`]).
    pub prompt: Option<bool>,
    pub value_options: Option<String>,
}

/// Pure: `bullpen.agent.<name>.prompt`: `positional` (the words that are no
/// option or value are the task prompt) or `none` (every word follows the session).
pub fn parse_prompt(value: &str) -> Result<bool, String> {
    match value.trim() {
        "positional" => Ok(true),
        "none" => Ok(false),
        other => Err(format!(
            "{} is neither positional nor none",
            super::command::quoted(other)
        )),
    }
}

/// Pure: the profile of `name` from the built-ins and the configured values
/// (each configured one that is not blank overrides the built-in's); `None`
/// when the agent is neither built in nor configured.
pub fn profile(name: &AgentName, configured: Configured) -> Option<Profile> {
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let builtin = builtin(name.as_str());
    let (command, resume) = (set(configured.command), set(configured.resume));
    let (command_builtin, resume_builtin) = (command.is_none(), resume.is_none());
    let configured_program = set(configured.program).map(|p| p.trim().to_owned());
    // A built-in's line, with the program git config names in place of its own.
    let own = |line: &str| match (&configured_program, builtin) {
        (Some(p), Some(b)) => line.replacen(b.program, &shell_quoted(p), 1),
        _ => line.to_owned(),
    };
    let command = command.or_else(|| builtin.map(|b| own(b.start)));
    let resume = resume.or_else(|| builtin.map(|b| own(b.resume)));
    if command.is_none() && resume.is_none() {
        return None;
    }
    let program = configured_program
        .clone()
        .or_else(|| command.as_deref().and_then(program_of))
        .or_else(|| resume.as_deref().and_then(program_of));
    Some(Profile {
        name: name.clone(),
        command_builtin: command_builtin && builtin.is_some(),
        resume_builtin: resume_builtin && builtin.is_some(),
        command,
        resume,
        builtin,
        prompt: configured.prompt.unwrap_or(builtin.is_some()),
        value_options: set(configured.value_options)
            .or_else(|| builtin.map(|b| b.value_options.to_owned()))
            .unwrap_or_default(),
        program,
        resume_id: builtin.map(|b| own(b.resume_id)),
    })
}

/// Pure: `s` as one word of a shell line.
fn shell_quoted(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._+-@%,:".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Pure: the program a shell line runs, when its first word says it plainly
/// (after `NAME=value` assignments): no quoting, no expansion, not a shell
/// keyword or a command that runs another (`exec`, `env`, ...).
pub fn program_of(line: &str) -> Option<String> {
    let word = line
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('='))?;
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._+-@%,:".contains(c));
    let runs_another = [
        "exec", "env", "command", "nice", "nohup", "time", "sudo", "doas", "builtin", "eval", "if",
        "for", "while", "until", "case", "!", ".", "source",
    ];
    (plain && !runs_another.contains(&word)).then(|| word.to_owned())
}

/// The two forms of a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A new conversation (`bullpen.agent.<name>.command`).
    Start,
    /// The session's conversation (`bullpen.agent.<name>.resume`).
    Resume,
}

impl Form {
    /// The config key's last part, for messages.
    pub fn key(self) -> &'static str {
        match self {
            Form::Start => "command",
            Form::Resume => "resume",
        }
    }
}

impl Profile {
    /// The shell line of `form`, if this profile has one.
    pub fn line(&self, form: Form) -> Option<&str> {
        match form {
            Form::Start => self.command.as_deref(),
            Form::Resume => self.resume.as_deref(),
        }
    }

    /// How the built-in names its conversations, where bullpen may add an id to
    /// the form (the built-in's own line).
    pub fn ids(&self, form: Form) -> Option<Ids> {
        let own = match form {
            Form::Start => self.command_builtin,
            Form::Resume => self.resume_builtin,
        };
        self.builtin.filter(|_| own).map(|b| b.ids)
    }

    /// Pure: the session's words after `--` split into what follows the
    /// session (options and their values) and the task prompt.
    pub fn split(&self, words: &[String]) -> Words {
        split_words(words, &self.value_options, self.prompt)
    }
}

/// A session's words after `--`, split.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words {
    /// Options and their values: every form gets them.
    pub options: Vec<String>,
    /// The task prompt: only the start form that spawn runs.
    pub prompt: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arity {
    One,
    Many,
    Optional,
}

/// Pure: split `words` as the agent's own parser would: an option named in
/// `value_options` takes its value(s); any other word starting with `-` is an
/// option by itself (`--model=o3` too); the rest, and everything from a bare
/// `--` on, is the prompt. With `prompt` false every word is an option.
pub fn split_words(words: &[String], value_options: &str, prompt: bool) -> Words {
    if !prompt {
        return Words {
            options: words.to_vec(),
            prompt: Vec::new(),
        };
    }
    let arity = |w: &str| {
        value_options.split_whitespace().find_map(|o| {
            let (n, a) = match (o.strip_suffix("..."), o.strip_suffix('?')) {
                (Some(n), _) => (n, Arity::Many),
                (None, Some(n)) => (n, Arity::Optional),
                (None, None) => (o, Arity::One),
            };
            (n == w).then_some(a)
        })
    };
    let is_option = |w: &str| w.starts_with('-') && w.len() > 1;
    let mut out = Words::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "--" {
            out.prompt.extend(words[i - 1..].iter().cloned());
            break;
        }
        if !is_option(w) {
            out.prompt.push(w.clone());
            continue;
        }
        out.options.push(w.clone());
        match arity(w) {
            Some(Arity::One) if i < words.len() => {
                out.options.push(words[i].clone());
                i += 1;
            }
            Some(Arity::Many) => {
                while i < words.len() && !is_option(&words[i]) && words[i] != "--" {
                    out.options.push(words[i].clone());
                    i += 1;
                }
            }
            Some(Arity::Optional)
                if i < words.len() && !is_option(&words[i]) && words[i] != "--" =>
            {
                out.options.push(words[i].clone());
                i += 1;
            }
            _ => {}
        }
    }
    out
}

/// One run of a form, as bullpen builds it from parts: the profile's line,
/// bullpen's own words (the conversation's id and name), then the session's
/// options, then (start only) the task prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub line: String,
    /// bullpen's own words, after the line.
    pub own: Vec<String>,
    /// The conversation id went into the form: it starts or continues exactly
    /// that one (else the agent's most recent one in the directory).
    pub exact: bool,
}

/// Pure: the line of `form` and bullpen's own words for it, given the
/// session's conversation id (`conversation`: the chosen one to start, or the
/// one to continue); `None` when the profile has no such form.
pub fn build(
    profile: &Profile,
    form: Form,
    session: &SessionId,
    conversation: Option<&str>,
) -> Option<Built> {
    let b = profile.builtin;
    match (form, profile.ids(form), conversation, b) {
        (Form::Start, Some(Ids::Chosen), Some(id), Some(b)) => {
            let mut own = Vec::new();
            if let Some(opt) = b.start_id {
                own.extend([opt.to_owned(), id.to_owned()]);
            }
            if let Some(opt) = b.start_name {
                own.extend([opt.to_owned(), session.to_string()]);
            }
            Some(Built {
                line: profile.command.clone()?,
                own,
                exact: true,
            })
        }
        (Form::Resume, Some(_), Some(id), Some(_)) => Some(Built {
            line: profile.resume_id.clone()?,
            own: vec![id.to_owned()],
            exact: true,
        }),
        _ => Some(Built {
            line: profile.line(form)?.to_owned(),
            own: Vec::new(),
            exact: false,
        }),
    }
}

/// Pure: the argv that runs `line` with the session's extra arguments, as git
/// runs a `!` alias: `sh -c <line>` alone, or `sh -c '<line> "$@"' <name>
/// <args>...`, so the arguments reach the agent as they were given, unquoted
/// by nobody.
pub fn argv(line: &str, name: &AgentName, args: &[String]) -> Vec<String> {
    let mut argv = vec!["/bin/sh".to_owned(), "-c".to_owned()];
    if args.is_empty() {
        argv.push(line.to_owned());
    } else {
        argv.push(format!("{line} \"$@\""));
        argv.push(name.to_string());
        argv.extend(args.iter().cloned());
    }
    argv
}

/// Pure: the form a plain `resume` (no command after `--`) runs: the start form
/// with `--fresh`, or when the session never ran (no conversation can have been
/// saved in its worktree); else the resume form, after a normal end, a `stop`,
/// a lost run or a reboot alike.
pub fn plain_form(fresh: bool, ever_ran: bool) -> Form {
    if fresh || !ever_ran {
        Form::Start
    } else {
        Form::Resume
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
