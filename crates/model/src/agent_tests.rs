//! Unit tests of `agent.rs`.
use super::*;

fn name(s: &str) -> AgentName {
    s.parse().unwrap()
}

fn words(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

fn configured(command: Option<&str>, resume: Option<&str>) -> Configured {
    Configured {
        command: command.map(Into::into),
        resume: resume.map(Into::into),
        ..Configured::default()
    }
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
    let claude = profile(&name("claude"), Configured::default()).unwrap();
    assert_eq!(claude.command.as_deref(), Some("claude"));
    assert_eq!(claude.resume.as_deref(), Some("claude --continue"));
    assert_eq!(claude.program.as_deref(), Some("claude"));
    assert!(claude.prompt);
    let codex = profile(&name("codex"), Configured::default()).unwrap();
    assert_eq!(codex.resume.as_deref(), Some("codex resume --last"));
    let mine = profile(&name("claude"), configured(Some("my-claude"), Some("  "))).unwrap();
    assert_eq!(mine.command.as_deref(), Some("my-claude"));
    assert_eq!(mine.program.as_deref(), Some("my-claude"));
    assert!(!mine.command_builtin && mine.resume_builtin);
    assert_eq!(mine.resume.as_deref(), Some("claude --continue"));
    assert_eq!(profile(&name("aider"), Configured::default()), None);
    let aider = profile(&name("aider"), configured(Some("aider"), None)).unwrap();
    assert_eq!(aider.line(Form::Start), Some("aider"));
    assert_eq!(aider.line(Form::Resume), None);
    assert!(
        !aider.prompt,
        "a configured profile's words all follow the session"
    );
    // A program elsewhere: the built-in forms run it.
    let there = Configured {
        program: Some("/opt/my tools/claude".into()),
        ..Configured::default()
    };
    let there = profile(&name("claude"), there).unwrap();
    assert_eq!(there.command.as_deref(), Some("'/opt/my tools/claude'"));
    assert_eq!(
        there.resume_id.as_deref(),
        Some("'/opt/my tools/claude' --resume")
    );
    assert_eq!(there.program.as_deref(), Some("/opt/my tools/claude"));
}

#[test]
fn the_program_is_the_lines_plain_first_word() {
    assert_eq!(program_of("claude --x").as_deref(), Some("claude"));
    assert_eq!(program_of("FOO=1 codex").as_deref(), Some("codex"));
    assert_eq!(
        program_of("/opt/bin/aider --yes").as_deref(),
        Some("/opt/bin/aider")
    );
    for unclear in [
        "exec claude",
        "env A=1 claude",
        "$HOME/bin/claude",
        "'claude'",
        "",
    ] {
        assert_eq!(program_of(unclear), None, "{unclear}");
    }
}

#[test]
fn options_follow_the_session_and_the_prompt_is_the_rest() {
    let claude = profile(&name("claude"), Configured::default()).unwrap();
    let w = claude.split(&words(&["--model", "opus", "fix the login bug"]));
    assert_eq!(w.options, words(&["--model", "opus"]));
    assert_eq!(w.prompt, words(&["fix the login bug"]));
    // Options anywhere, `--x=v` as one word, a variadic one up to the next option.
    let w = claude.split(&words(&[
        "fix",
        "--effort=high",
        "--add-dir",
        "a",
        "b",
        "--verbose",
        "it",
    ]));
    assert_eq!(
        w.options,
        words(&["--effort=high", "--add-dir", "a", "b", "--verbose"])
    );
    assert_eq!(w.prompt, words(&["fix", "it"]));
    // From a bare `--` on, all of it is the prompt.
    let w = claude.split(&words(&["--model", "x", "--", "-not an option"]));
    assert_eq!(w.prompt, words(&["--", "-not an option"]));
    let codex = profile(&name("codex"), Configured::default()).unwrap();
    let w = codex.split(&words(&["--model", "o3", "fix", "the", "\"login\"", "bug"]));
    assert_eq!(w.options, words(&["--model", "o3"]));
    assert_eq!(w.prompt.len(), 4);
    let w = codex.split(&words(&["-c", "model=o3", "--search"]));
    assert_eq!(w.options, words(&["-c", "model=o3", "--search"]));
    assert!(w.prompt.is_empty());
    // A configured profile can say which words are its prompt.
    let mine = Configured {
        command: Some("aider".into()),
        prompt: Some(true),
        value_options: Some("--model".into()),
        ..Configured::default()
    };
    let mine = profile(&name("aider"), mine).unwrap();
    let w = mine.split(&words(&["--model", "x", "go"]));
    assert_eq!(
        (w.options, w.prompt),
        (words(&["--model", "x"]), words(&["go"]))
    );
    assert_eq!(parse_prompt(" none "), Ok(false));
    assert!(parse_prompt("all").is_err());
}

#[test]
fn the_built_in_forms_name_the_sessions_conversation() {
    let id: SessionId = "fk2".parse().unwrap();
    let uuid = "3f2b8a1e-1111-4222-8333-444455556666";
    let claude = profile(&name("claude"), Configured::default()).unwrap();
    let start = build(&claude, Form::Start, &id, Some(uuid)).unwrap();
    assert_eq!(start.line, "claude");
    assert_eq!(start.own, words(&["--session-id", uuid, "--name", "fk2"]));
    assert!(start.exact);
    let resume = build(&claude, Form::Resume, &id, Some(uuid)).unwrap();
    assert_eq!(
        (resume.line.as_str(), resume.own),
        ("claude --resume", words(&[uuid]))
    );
    let guess = build(&claude, Form::Resume, &id, None).unwrap();
    assert_eq!(
        (guess.line.as_str(), guess.exact),
        ("claude --continue", false)
    );
    let codex = profile(&name("codex"), Configured::default()).unwrap();
    let resume = build(&codex, Form::Resume, &id, Some(uuid)).unwrap();
    assert_eq!(resume.line, "codex resume");
    // A configured line runs as written: no id is added to it.
    let mine = profile(
        &name("claude"),
        configured(None, Some("claude --continue --model opus")),
    )
    .unwrap();
    let resume = build(&mine, Form::Resume, &id, Some(uuid)).unwrap();
    assert_eq!(resume.line, "claude --continue --model opus");
    assert!(resume.own.is_empty() && !resume.exact);
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
