//! Agent profiles: how to start a coding agent, and how to continue its
//! conversation in the same directory. Plain data and pure helpers: the
//! built-in profiles, the rules of an agent's name, the argv a form runs with
//! its extra arguments, and which form a plain `resume` runs.
//!
//! A profile comes from this machine's git config (`bullpen.agent.<name>.command`
//! and `.resume`, over the built-ins), never from a record: a record only names
//! the agent (see `trust::decide::may_run_agent`).

use std::fmt;
use std::str::FromStr;

/// The built-in profiles: name, start form, resume form. Each is a shell line
/// (run through `sh -c`, as `bullpen.command` is). Checked against the agents'
/// own documentation and source (README, "Agents").
///
/// - Claude Code: `claude` starts a conversation; `claude --continue` continues
///   the most recent one in the current directory (and fails, "No conversation
///   found to continue", exit 1, where there is none).
/// - Codex: `codex` starts one; `codex resume --last` continues the most recent
///   session whose directory is the current one (since openai/codex#9245; with
///   none, it starts a new session).
pub const BUILTINS: &[(&str, &str, &str)] = &[
    ("claude", "claude", "claude --continue"),
    ("codex", "codex", "codex resume --last"),
];

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
}

/// Pure: the profile of `name` from the built-ins and the configured values
/// (each configured one that is not blank overrides the built-in's); `None`
/// when the agent is neither built in nor configured.
pub fn profile(
    name: &AgentName,
    command: Option<String>,
    resume: Option<String>,
) -> Option<Profile> {
    let set = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let builtin = BUILTINS.iter().find(|(n, _, _)| *n == name.as_str());
    let command = set(command).or_else(|| builtin.map(|b| b.1.to_owned()));
    let resume = set(resume).or_else(|| builtin.map(|b| b.2.to_owned()));
    if command.is_none() && resume.is_none() {
        return None;
    }
    Some(Profile {
        name: name.clone(),
        command,
        resume,
    })
}

/// The two forms of a profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A new conversation (`bullpen.agent.<name>.command`).
    Start,
    /// The most recent conversation in the worktree (`bullpen.agent.<name>.resume`).
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
mod tests {
    use super::*;

    fn name(s: &str) -> AgentName {
        s.parse().unwrap()
    }

    #[test]
    fn names_are_one_plain_config_subsection() {
        for good in ["claude", "codex", "Claude-2", "my_agent", "a"] {
            assert!(good.parse::<AgentName>().is_ok(), "{good}");
        }
        for bad in ["", "-x", "a.b", "a b", "a/b", "ä", &"a".repeat(64), "a\n"] {
            assert!(bad.parse::<AgentName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn built_ins_are_overridden_key_by_key_and_blank_counts_as_unset() {
        let claude = profile(&name("claude"), None, None).unwrap();
        assert_eq!(claude.command.as_deref(), Some("claude"));
        assert_eq!(claude.resume.as_deref(), Some("claude --continue"));
        let codex = profile(&name("codex"), None, None).unwrap();
        assert_eq!(codex.resume.as_deref(), Some("codex resume --last"));
        let mine = profile(&name("claude"), Some("my-claude".into()), Some("  ".into())).unwrap();
        assert_eq!(mine.command.as_deref(), Some("my-claude"));
        assert_eq!(mine.resume.as_deref(), Some("claude --continue"));
        assert_eq!(profile(&name("aider"), None, None), None);
        let aider = profile(&name("aider"), Some("aider".into()), None).unwrap();
        assert_eq!(aider.line(Form::Start), Some("aider"));
        assert_eq!(aider.line(Form::Resume), None);
    }

    #[test]
    fn extra_arguments_reach_the_agent_as_given() {
        let n = name("claude");
        assert_eq!(argv("claude", &n, &[]), ["/bin/sh", "-c", "claude"]);
        assert_eq!(
            argv("claude --continue", &n, &["--model".into(), "a b".into()]),
            [
                "/bin/sh",
                "-c",
                "claude --continue \"$@\"",
                "claude",
                "--model",
                "a b"
            ]
        );
    }

    #[test]
    fn a_plain_resume_continues_unless_fresh_or_never_ran() {
        assert_eq!(plain_form(false, true), Form::Resume);
        assert_eq!(plain_form(true, true), Form::Start);
        assert_eq!(plain_form(false, false), Form::Start);
    }
}
