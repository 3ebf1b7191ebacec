//! `man/` and `completions/` are generated from the clap definitions
//! (`bullpen::cli::Cli::command()`) and committed. `docs_are_fresh` regenerates
//! them and fails when the committed files differ; refresh them with
//!
//!     BULLPEN_BLESS=1 cargo test --test cli docs
//!
//! Man pages: `git-bullpen.1` plus one page per visible subcommand. Each page has
//! NAME, SYNOPSIS, DESCRIPTION (the about text, then the prose paragraphs of
//! `after_long_help`), OPTIONS, EXAMPLES (the `Examples:` paragraph of
//! `after_long_help`), ENVIRONMENT, GIT CONFIGURATION, EXIT STATUS, SEE ALSO.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

use bullpen::model::config;

/// The one command that rewrites `man/` and `completions/`.
pub const REFRESH: &str = "BULLPEN_BLESS=1 cargo test --test cli docs";
const MANUAL: &str = "Git Bullpen Manual";
const DIRS: &[&str] = &["man", "completions"];

/// Every generated file, by path relative to the project root.
pub fn generated() -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut top = bullpen::cli::Cli::command();
    top.build();
    let top_name = top.get_name().to_owned();
    files.insert(
        PathBuf::from(format!("man/{top_name}.1")),
        man_page(&top, &top_name, None),
    );
    for sub in top.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{top_name}-{}", sub.get_name());
        files.insert(
            PathBuf::from(format!("man/{name}.1")),
            man_page(sub, &name, Some(sub.get_name())),
        );
    }
    for (file, script) in bullpen::complete::files() {
        files.insert(PathBuf::from(format!("completions/{file}")), script);
    }
    files
}

fn man_page(cmd: &clap::Command, name: &str, sub: Option<&str>) -> Vec<u8> {
    let version = cmd.get_version().unwrap_or(env!("CARGO_PKG_VERSION"));
    let man = Man::new(cmd.clone());
    let (prose, examples) = split_after_help(cmd);
    let mut body = Vec::new();

    let mut roff = Roff::new();
    roff.control("SH", ["NAME"]);
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    roff.text([roman(format!("{name} - {about}"))]);
    roff.control("SH", ["SYNOPSIS"]);
    let usage = cmd.clone().render_usage().to_string();
    for line in usage.lines() {
        let line = line.trim().trim_start_matches("Usage:").trim();
        let bin = cmd.get_bin_name().unwrap_or(name);
        match line.strip_prefix(bin) {
            Some(rest) => roff.text([bold(bin), roman(rest)]),
            None => roff.text([roman(line)]),
        };
        roff.control("br", []);
    }
    roff.to_writer(&mut body).unwrap();
    man.render_description_section(&mut body).unwrap();

    let mut roff = Roff::new();
    for p in &prose {
        roff.control("PP", []);
        roff.text([roman(p.join(" "))]);
    }
    roff.to_writer(&mut body).unwrap();
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut body).unwrap();
    }

    let mut roff = Roff::new();
    let subs: Vec<_> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if !subs.is_empty() {
        roff.control("SH", ["COMMANDS"]);
        for s in subs {
            roff.control("TP", []);
            roff.text([bold(format!("{name}-{}", s.get_name())), roman("(1)")]);
            roff.text([roman(
                s.get_about().map(|a| a.to_string()).unwrap_or_default(),
            )]);
        }
    }
    if !examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        roff.control("PP", []);
        roff.control("nf", []);
        roff.control("RS", ["4"]);
        for line in &examples {
            roff.text([roman(line.trim_start())]);
        }
        roff.control("RE", []);
        roff.control("fi", []);
    }
    environment(&mut roff);
    git_configuration(&mut roff);
    exit_status(&mut roff, sub);
    see_also(&mut roff, cmd, sub);
    roff.to_writer(&mut body).unwrap();

    // Each roff writer starts with the same two-line preamble: keep it once, on top.
    let body = String::from_utf8(body).unwrap();
    let preamble: Vec<&str> = body.lines().take(2).collect();
    assert!(
        preamble[0].starts_with(".ie "),
        "unexpected roff preamble: {preamble:?}"
    );
    let mut out = format!(
        "{}\n.TH {} 1 \"\" \"git-bullpen {version}\" \"{MANUAL}\"\n.nh\n.ad l\n",
        preamble.join("\n"),
        name.to_uppercase()
    );
    for line in body.lines().filter(|l| !preamble.contains(l)) {
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

/// `after_long_help` split into prose paragraphs (for DESCRIPTION) and the lines
/// of its `Examples:` paragraph (for EXAMPLES).
fn split_after_help(cmd: &clap::Command) -> (Vec<Vec<String>>, Vec<String>) {
    let text = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut prose = Vec::new();
    let mut examples = Vec::new();
    for para in text.split("\n\n") {
        let lines: Vec<String> = para
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        match lines.split_first() {
            Some((head, rest)) if head.trim() == "Examples:" => examples.extend_from_slice(rest),
            Some(_) => prose.push(lines),
            None => {}
        }
    }
    (prose, examples)
}

fn tagged(roff: &mut Roff, tag: &str, body: &str) {
    roff.control("TP", []);
    roff.text([bold(tag)]);
    roff.text([roman(body)]);
}

fn environment(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    tagged(
        roff,
        config::ENV_HOME,
        "Where bullpen keeps its data: session worktrees go to \
         $BULLPEN_HOME/worktrees/<repo-key>/<id> unless git config bullpen.worktreeRoot \
         says otherwise. Must be an absolute path. Default: the platform data directory, \
         e.g. ~/.local/share/bullpen.",
    );
    tagged(
        roff,
        &format!(
            "{}, {}, {}",
            config::ENV_SESSION,
            config::ENV_BRANCH,
            config::ENV_WORKTREE
        ),
        "Set for a session's command: the session id, its branch (bullpen/<id>) and \
         its worktree, so agents and scripts can tell where they are. bullpen does not \
         read them.",
    );
    tagged(
        roff,
        "SHELL",
        "The command of a new session when none is given and git config bullpen.command \
         is unset (then /bin/sh).",
    );
    tagged(
        roff,
        "XDG_RUNTIME_DIR",
        "Where background runs put the sockets that git bullpen attach connects to: \
         $XDG_RUNTIME_DIR/bullpen/ (a directory only you can enter), else \
         /tmp/bullpen-<uid>/.",
    );
    tagged(
        roff,
        "NO_COLOR",
        "When set to a non-empty value, output is never coloured. Colour is only used \
         on a terminal anyway.",
    );
    tagged(
        roff,
        config::ENV_COMPLETE,
        "Used by the shell completion scripts. Set to bash, zsh or fish with no \
         arguments, git-bullpen prints that shell's completion script instead of running.",
    );
}

fn git_configuration(roff: &mut Roff) {
    roff.control("SH", ["GIT CONFIGURATION"]);
    tagged(
        roff,
        config::WORKTREE_ROOT,
        "Where this repository's session worktrees go, instead of \
         $BULLPEN_HOME/worktrees/<repo-key>. An absolute path (a leading ~/ is \
         expanded); every session worktree lies strictly inside it.",
    );
    tagged(
        roff,
        config::COMMAND,
        "The command of a new session when spawn is given none, run with /bin/sh -c \
         (default: $SHELL, else /bin/sh).",
    );
    tagged(
        roff,
        config::DETACH_KEY,
        "The key that detaches git bullpen attach from a session: ctrl-<key> or ^<key> \
         (default: ctrl-\\).",
    );
}

/// Exit statuses, per subcommand (`None`: the main page, which lists them all).
fn exit_status(roff: &mut Roff, sub: Option<&str>) {
    roff.control("SH", ["EXIT STATUS"]);
    let passthrough = "The exit status of the session's command (128+N when it was killed \
                       by signal N).";
    match sub {
        None => {
            tagged(roff, "0", "Success.");
            tagged(
                roff,
                "1",
                "gc: some worktrees could not be removed (degraded; run gc again later).",
            );
            tagged(roff, "spawn, resume", passthrough);
            tagged(
                roff,
                "attach",
                "0 when detached; the run's status when it ended while attached.",
            );
        }
        Some("spawn" | "resume") => tagged(roff, "0 ... 255", passthrough),
        Some("attach") => {
            tagged(
                roff,
                "0",
                "Detached (the detach key, or another terminal took over).",
            );
            tagged(
                roff,
                "0 ... 255",
                "The run ended while attached: its exit status (128+N when it was killed \
                 by signal N).",
            );
        }
        Some("gc") => {
            tagged(roff, "0", "Success: everything eligible was collected.");
            tagged(
                roff,
                "1",
                "Degraded: some worktrees could not be removed and are left for the next gc.",
            );
        }
        Some(_) => tagged(roff, "0", "Success."),
    }
    tagged(
        roff,
        "3",
        "Refused: bullpen left something alone to keep work safe (an occupied path, a \
         running session, an id in use, a record it does not trust); nothing was changed \
         or run. The reason and what to do are printed on stderr.",
    );
    tagged(
        roff,
        "128",
        "bullpen itself failed (not a repository, git missing, a record that cannot be \
         written, ...); the reason is printed on stderr after \"error:\".",
    );
    tagged(
        roff,
        "129",
        "Usage error: an unknown option, a missing or invalid argument (as git's own \
         commands do).",
    );
}

fn see_also(roff: &mut Roff, cmd: &clap::Command, sub: Option<&str>) {
    roff.control("SH", ["SEE ALSO"]);
    let mut refs = vec!["git-bullpen(1)".to_owned()];
    if sub.is_none() {
        refs.clear();
        let mut subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| format!("git-bullpen-{}(1)", s.get_name()))
            .collect();
        subs.sort();
        refs.extend(subs);
    }
    refs.extend(["git-worktree(1)", "git-notes(1)"].map(str::to_owned));
    let mut line = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        let (page, section) = r.split_once('(').unwrap();
        line.push(bold(page));
        line.push(roman(format!("({section}")));
    }
    roff.text(line);
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files currently committed under the generated directories.
fn existing() -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for dir in DIRS {
        let Ok(rd) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let rel = Path::new(dir).join(e.file_name());
            files.insert(rel, std::fs::read(e.path()).expect("read generated file"));
        }
    }
    files
}

#[test]
fn docs_are_fresh() {
    let want = generated();
    let have = existing();
    if std::env::var_os("BULLPEN_BLESS").is_some_and(|v| !v.is_empty()) {
        for dir in DIRS {
            std::fs::create_dir_all(root().join(dir)).unwrap();
        }
        for (rel, bytes) in &want {
            if have.get(rel) != Some(bytes) {
                std::fs::write(root().join(rel), bytes).unwrap();
                eprintln!("wrote {}", rel.display());
            }
        }
        for rel in have.keys().filter(|r| !want.contains_key(*r)) {
            std::fs::remove_file(root().join(rel)).unwrap();
            eprintln!("removed {}", rel.display());
        }
        return;
    }
    let mut problems = Vec::new();
    for (rel, bytes) in &want {
        match have.get(rel) {
            None => problems.push(format!("missing: {}", rel.display())),
            Some(b) if b != bytes => problems.push(format!("out of date: {}", rel.display())),
            Some(_) => {}
        }
    }
    for rel in have.keys().filter(|r| !want.contains_key(*r)) {
        problems.push(format!("not generated any more: {}", rel.display()));
    }
    assert!(
        problems.is_empty(),
        "man/ and completions/ do not match the clap definitions:\n  {}\nrefresh them with:\n  {REFRESH}\nand commit the result.",
        problems.join("\n  ")
    );
}

#[test]
fn docs_man_pages_render_with_man() {
    // Every page is valid roff that man(1) renders with its NAME line.
    if which("man").is_none() {
        crate::ship::skip_or_fail("man (man-db) is not installed");
        return;
    }
    // man(1) in the hermetic environment: no ~/.manpath or MANPATH of the machine.
    let env = crate::support::Env::new();
    for (rel, bytes) in generated().iter().filter(|(r, _)| r.starts_with("man")) {
        let path = env.root().join(rel.file_name().unwrap());
        std::fs::write(&path, bytes).unwrap();
        let out = env
            .cmd("man", &env.root())
            .arg("-l")
            .arg(&path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let stem = rel.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(out.status.success(), "man -l {}: {:?}", rel.display(), out);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&format!("{stem} - ")),
            "{} has no NAME line:\n{text}",
            rel.display()
        );
        for section in [
            "SYNOPSIS",
            "ENVIRONMENT",
            "GIT CONFIGURATION",
            "EXIT STATUS",
        ] {
            assert!(text.contains(section), "{}: no {section}", rel.display());
        }
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            warnings.trim().is_empty(),
            "man warns about {}: {warnings}",
            rel.display()
        );
    }
}

pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}
