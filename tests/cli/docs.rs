//! `man/` and `completions/` are generated from the clap definitions
//! (`bullpen::cli::Cli::command()`) and committed. `docs_are_fresh` regenerates
//! them and fails when the committed files differ; refresh them with
//!
//!     BULLPEN_BLESS=1 cargo test --test cli docs
//!
//! Man pages: `git-bullpen.1` plus one page per visible subcommand. Each page has
//! NAME, SYNOPSIS, DESCRIPTION (the about text, then the paragraphs of
//! `after_long_help`: prose, and definition lists as `.TP` lists), OPTIONS,
//! EXAMPLES (the `Examples:` paragraph of `after_long_help`), ENVIRONMENT and GIT
//! CONFIGURATION (what applies to that command, when anything does), FILES (on
//! `git-bullpen.1`), EXIT STATUS, SEE ALSO.
//!
//! A definition list in `after_long_help` is written as clap prints it on a
//! terminal: each item a line indented two spaces, its term, two or more
//! spaces, its definition; continuation lines indented further.

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

    // DESCRIPTION: what NAME says is not said again; the long about, when it says
    // more, then the prose of after_long_help.
    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"]);
    let long: Vec<Vec<String>> = cmd
        .get_long_about()
        .map(|t| t.to_string())
        .unwrap_or_default()
        .split("\n\n")
        .map(|p| p.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|p| !p.is_empty() && p.join(" ").trim() != about.trim())
        .collect();
    if long.is_empty() && prose.is_empty() {
        paragraph(&mut roff, std::slice::from_ref(&about));
    }
    for p in long.iter().chain(&prose) {
        paragraph(&mut roff, p);
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
        for line in &examples {
            // The help text indents examples by two; a continuation line keeps
            // its own indentation beyond that.
            roff.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
        }
        roff.control("fi", []);
    }
    environment(&mut roff, sub);
    git_configuration(&mut roff, sub);
    if sub.is_none() {
        files(&mut roff);
    }
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
    let mut literal = false;
    for line in body.lines().filter(|l| !preamble.contains(l)) {
        match line {
            ".nf" => literal = true,
            ".fi" => literal = false,
            _ => {}
        }
        if literal || line.starts_with('.') {
            out.push_str(line);
        } else {
            out.push_str(&emphasis(line));
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// Pure: a roff text line with each `code` span (Markdown's backticks, as the
/// help text writes commands, keys and values) set in bold, as git's pages set
/// commands; an unpaired backtick stays (the render test finds it).
fn emphasis(line: &str) -> String {
    let spans: Vec<&str> = line.split('`').collect();
    if spans.len().is_multiple_of(2) {
        return line.to_owned();
    }
    let mut out = String::new();
    for (i, span) in spans.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str("\\fB");
            out.push_str(span);
            out.push_str("\\fR");
        } else {
            out.push_str(span);
        }
    }
    out
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

/// One piece of a paragraph of `after_long_help`.
#[derive(Debug, PartialEq)]
enum Piece {
    Prose(String),
    /// A definition list: (term, definition) items.
    List(Vec<(String, String)>),
}

/// A paragraph's lines as prose and definition lists (see the module comment).
fn pieces(lines: &[String]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let item = (indent == 2)
            .then(|| line.trim_start().split_once("  "))
            .flatten()
            .map(|(term, def)| (term.to_owned(), def.trim().to_owned()))
            .filter(|(term, def)| !term.contains(' ') && !def.is_empty());
        match (item, out.last_mut()) {
            (Some(item), Some(Piece::List(items))) => items.push(item),
            (Some(item), _) => out.push(Piece::List(vec![item])),
            (None, Some(Piece::List(items))) if indent > 2 => {
                if let Some((_, def)) = items.last_mut() {
                    def.push(' ');
                    def.push_str(line.trim());
                }
            }
            (None, Some(Piece::Prose(text))) => {
                text.push(' ');
                text.push_str(line.trim());
            }
            (None, _) => out.push(Piece::Prose(line.trim().to_owned())),
        }
    }
    out
}

/// A paragraph of `after_long_help`: `.PP` prose, definition lists as `.TP`
/// items (the term in bold), and `.PP` again for prose after a list.
fn paragraph(roff: &mut Roff, lines: &[String]) {
    for piece in pieces(lines) {
        match piece {
            Piece::Prose(text) => {
                roff.control("PP", []);
                roff.text([roman(text)]);
            }
            Piece::List(items) => {
                for (term, def) in items {
                    roff.control("TP", []);
                    roff.text([bold(term)]);
                    roff.text([roman(def)]);
                }
            }
        }
    }
}

fn tagged(roff: &mut Roff, tag: &str, body: &str) {
    roff.control("TP", []);
    roff.text([bold(tag)]);
    roff.text([roman(body)]);
}

/// Commands whose output may be coloured (`--color`, color.bullpen, color.ui).
fn colours(sub: Option<&str>) -> bool {
    matches!(sub, None | Some("ls" | "peek"))
}

fn all_or(sub: Option<&str>, this: bool) -> bool {
    sub.is_none() || this
}

/// Commands whose output may go through a pager.
fn pages(sub: Option<&str>) -> bool {
    matches!(sub, None | Some("ls" | "logs"))
}

/// The colour keys, as one tag.
const COLOR_KEYS: &str = "color.bullpen, color.ui";

/// Commands whose paths depend on the worktree root.
fn uses_the_root(sub: Option<&str>) -> bool {
    matches!(
        sub,
        None | Some("spawn" | "ls" | "resume" | "path" | "gc" | "rm")
    )
}

/// What of the environment applies to a command (`None`: the main page, all).
fn environment(roff: &mut Roff, sub: Option<&str>) {
    let all = sub.is_none();
    let runs = all || matches!(sub, Some("spawn" | "resume"));
    let mut entries: Vec<(String, &str)> = Vec::new();
    if uses_the_root(sub) {
        entries.push((
            config::ENV_HOME.to_owned(),
            "Where bullpen keeps its data: session worktrees go to \
             $BULLPEN_HOME/worktrees/<repo-key>/<id> unless git config bullpen.worktreeRoot \
             says otherwise. Must be an absolute path. Default: the platform data directory, \
             e.g. ~/.local/share/bullpen. A session created under an earlier value keeps its \
             worktree where it was.",
        ));
    }
    if runs {
        entries.push((
            format!(
                "{}, {}, {}, {}, {}",
                config::ENV_SESSION,
                config::ENV_BRANCH,
                config::ENV_WORKTREE,
                config::ENV_MAIN_WORKTREE,
                config::ENV_BASE
            ),
            "Set for a session's command and its setup commands: the session id, its branch \
             (bullpen/<id>), its worktree, the repository's main worktree and the commit the \
             session started from (full object id), so agents and scripts can tell where \
             they are. bullpen reads them only in git bullpen hook.",
        ));
    }
    if all || sub == Some("hook") {
        entries.push((
            format!("{}, {}", config::ENV_SESSION, config::ENV_WORKTREE),
            "The session the hook reports for, and where its repository is found (else the \
             current directory). Taken only from a process that descends from that \
             session's running command.",
        ));
    }
    if all || matches!(sub, Some("spawn" | "resume" | "ls")) {
        entries.push((
            config::ENV_HOSTNAME.to_owned(),
            "The host name bullpen records in a new session's record (and compares with in \
             ls --remote), instead of the kernel's: for machines whose name says nothing, and \
             for tests that play two machines on one. Which clone wrote a record is told by \
             its clone id (<git common dir>/bullpen/clone-id), never by this name.",
        ));
    }
    if all || sub == Some("spawn") {
        entries.push((
            "SHELL".to_owned(),
            "The command of a new session when none is given and git config bullpen.agent \
             and bullpen.command are unset (then /bin/sh).",
        ));
    }
    if all || matches!(sub, Some("spawn" | "resume" | "attach" | "peek")) {
        entries.push((
            "XDG_RUNTIME_DIR".to_owned(),
            "Where background runs put the sockets that git bullpen attach and peek connect to: \
             $XDG_RUNTIME_DIR/bullpen/ (a directory only you can enter), else \
             /tmp/bullpen-<uid>/.",
        ));
    }
    if all || sub == Some("ls") {
        entries.push((
            config::ENV_COLUMNS.to_owned(),
            "How wide the table of ls may be; else the terminal's width. Into a pipe without \
             it, lines are not cut.",
        ));
    }
    if all || pages(sub) {
        entries.push((
            format!("{}, {}", config::ENV_GIT_PAGER, config::ENV_PAGER),
            "The pager of ls and logs when stdout is a terminal (never for --json, logs \
             --follow or --raw): GIT_PAGER, else git config pager.bullpen.<command> or \
             pager.bullpen when it names a pager, else core.pager, else PAGER, else less. \
             cat or an empty value: no pager. git --no-pager bullpen sets GIT_PAGER=cat.",
        ));
        entries.push((
            "LESS, LV".to_owned(),
            "Set to FRX and -c for the pager when they are unset, as git does.",
        ));
    }
    if all || sub == Some("help") {
        entries.push((
            config::ENV_MAN_VIEWER.to_owned(),
            "The viewer of git bullpen help, instead of git config man.viewer.",
        ));
        entries.push((
            config::ENV_MANPATH.to_owned(),
            "Where man looks for the pages; git bullpen help puts the share/man next to the \
             binary's bin/ first, when there is one.",
        ));
    }
    if all || colours(sub) {
        entries.push((
            "NO_COLOR".to_owned(),
            "When set to a non-empty value, no colour where it would be automatic (a \
             terminal, no --color, color.bullpen or color.ui saying always). git itself \
             ignores it.",
        ));
    }
    if all {
        entries.push((
            "GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE".to_owned(),
            "As in git (git --git-dir and --work-tree set the first and the last): GIT_DIR \
             names the repository instead of the one containing the current directory; a \
             GIT_COMMON_DIR is followed only when it is that repository's own. bullpen never \
             works in the current working tree, so GIT_WORK_TREE changes nothing. These and \
             git's other repository variables (GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, ...) are \
             removed from the environment of the git commands bullpen runs and of sessions' \
             commands, which find their repository from the directory they run in.",
        ));
        entries.push((
            "GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT".to_owned(),
            "Configuration given with git -c (and GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>), \
             as in git: it applies to bullpen's keys, to the git commands bullpen runs and to \
             sessions' commands.",
        ));
    }
    if all {
        entries.push((
            config::ENV_COMPLETE.to_owned(),
            "Used by the shell completion scripts. Set to bash, zsh or fish with no \
             arguments, git-bullpen prints that shell's completion script instead of running.",
        ));
    }
    if entries.is_empty() {
        return;
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (tag, body) in entries {
        tagged(roff, &tag, body);
    }
}

/// What of git's configuration applies to a command (`None`: the main page, all).
fn git_configuration(roff: &mut Roff, sub: Option<&str>) {
    let mut entries = Vec::new();
    if uses_the_root(sub) {
        entries.push((
            config::WORKTREE_ROOT,
            "Where this repository's session worktrees go, instead of \
             $BULLPEN_HOME/worktrees/<repo-key>. An absolute path (a leading ~/ is \
             expanded); every session worktree lies strictly inside it, or inside the root \
             in effect when this machine created it.",
        ));
    }
    if matches!(sub, None | Some("spawn")) {
        entries.push((
            config::AGENT,
            "The agent a new session runs when spawn is given no command and no --agent: \
             the name of a profile (claude, codex, or one of bullpen.agent.<name>.*).",
        ));
        entries.push((
            config::COMMAND,
            "The command of a new session when spawn is given none and bullpen.agent is \
             unset, run with /bin/sh -c (default: $SHELL, else /bin/sh).",
        ));
    }
    if matches!(sub, None | Some("spawn" | "resume")) {
        entries.push((
            "bullpen.agent.<name>.command, bullpen.agent.<name>.resume",
            "An agent's profile: how to start it, and how to continue its most recent \
             conversation in the current directory; each run with /bin/sh -c, with the \
             session's extra arguments after it (as \"$@\"). They override the built-in \
             profiles key by key: claude (claude, claude --continue) and codex (codex, codex \
             resume --last). Read only from this machine's git config, never from a record.",
        ));
        entries.push((
            config::SETUP,
            "Commands run in a new worktree (and one resume recreates), in order, with \
             /bin/sh -c, before the session's command, with its environment; multi-valued \
             (git config --add), an empty value clears the ones before it. If one fails, \
             nothing of the new session is left. Only from git config, never from a file in \
             the repository. --no-setup skips them.",
        ));
    }
    if matches!(sub, None | Some("gc" | "rm")) {
        entries.push((
            config::GC_INTEGRATION_REF,
            "Remote-tracking refs (multi-valued; short or full names, globs allowed) that \
             the proof by content looks in, besides each remote's default branch; an empty \
             value drops the refs before it, the defaults included.",
        ));
        entries.push((
            config::GC_AGENT_GRACE,
            "How long an agent session with no commit of its own is kept after its last \
             activity, for its conversation (default 2.weeks.ago; never, now, a date, as \
             gc.reflogExpire).",
        ));
        entries.push((
            config::GC_DISPOSABLE,
            "Directories (multi-valued glob patterns: without a /, a directory's name; with \
             one, its path in the worktree) that count as caches when a .gitignore of their \
             own hides them, besides those with a CACHEDIR.TAG or a pyvenv.cfg; an empty \
             value clears the ones before it.",
        ));
    }
    if matches!(sub, None | Some("gc")) {
        entries.push((
            config::GC_EXPIRE,
            "How long the records of collected sessions are kept, with their logs and local \
             state (default 90.days.ago; never, now, 2.weeks, a date, as gc.reflogExpire); \
             the provenance notes always stay.",
        ));
    }
    if matches!(sub, None | Some("spawn" | "resume")) {
        entries.push((
            config::SCROLLBACK,
            "How many lines of scrollback the supervisor of a background run keeps in its \
             model of the run's terminal (default 1000; 10k and 1m as in git). About 32 bytes \
             a cell: 1,000 lines of 200 columns are about 6 MiB. Read when the run starts.",
        ));
    }
    if matches!(sub, None | Some("spawn" | "resume")) {
        entries.push((
            config::NOTIFY,
            "A command run (with /bin/sh -c) each time a session moves into needs input \
             (a permission prompt, a question), once, by whoever sees it: the agent's hook, \
             or the supervisor of a background run; with BULLPEN_SESSION, \
             BULLPEN_REPOSITORY (the main worktree) and BULLPEN_STATE in its environment.",
        ));
    }
    if matches!(sub, None | Some("spawn" | "resume")) {
        entries.push((
            "bullpen.agent.<name>.hooks",
            "false: start the agent without wiring its hooks to git bullpen hook (Claude \
             Code's --settings, Codex's -c notify); its activity is then read from its \
             terminal only.",
        ));
        entries.push((
            config::SANDBOX,
            "Whether a session's command runs confined, as with --sandbox (true or strict), \
             --sandbox=best-effort (best-effort), or not (false, the default); --sandbox and \
             --no-sandbox override it.",
        ));
        entries.push((
            config::SANDBOX_ALLOW_WRITE,
            "Paths (multi-valued; a leading ~/ is the home directory) a sandboxed command may \
             write besides its session's own: an agent's state directory is the typical \
             entry (the built-in profiles add ~/.claude, ~/.claude.json and ~/.codex \
             themselves where they exist). One that does not exist is skipped, with a \
             warning.",
        ));
    }
    if matches!(sub, None | Some("attach")) {
        entries.push((
            config::DETACH_KEY,
            "The key that detaches git bullpen attach from a session: ctrl-<key> or ^<key> \
             (default: ctrl-\\).",
        ));
    }
    if matches!(sub, None | Some("push" | "fetch" | "resume" | "ls")) {
        entries.push((
            "remote.<name>.fetch",
            "Where the remote's bullpen/<id> branches are fetched to (with git's default, \
             refs/remotes/<name>/bullpen/<id>): fetch and push fetch them there, resume \
             <remote>/<id> starts from there, ls --remote counts their commits. A remote \
             whose refspecs do not map them (a single-branch clone) has its sessions' \
             records fetched, but not their branches.",
        ));
    }
    if matches!(sub, None | Some("push" | "fetch")) {
        entries.push((
            "remote.pushDefault",
            "The remote push uses when none is named, as git push does; else, as for fetch, \
             the only remote, or origin.",
        ));
    }
    if all_or(sub, pages(sub)) {
        entries.push((
            "pager.bullpen.<command>, pager.bullpen",
            "For ls and logs: false, no pager; true, the usual one; any other value, the \
             pager itself (after GIT_PAGER). pager.bullpen.ls and pager.bullpen.logs win over \
             pager.bullpen, which git itself also reads for every git bullpen command: true or \
             a pager, git pages it (bullpen then starts none of its own); false, git sets \
             GIT_PAGER=cat, which no pager.bullpen.<command> overrides.",
        ));
        entries.push((
            config::CORE_PAGER,
            "The pager, after GIT_PAGER and pager.bullpen.<command>, before PAGER, as in git.",
        ));
    }
    if matches!(sub, None | Some("help")) {
        entries.push((
            config::HELP_FORMAT,
            "Only man: git-bullpen has no info or HTML pages; another value opens the man \
             page with a warning.",
        ));
        entries.push((
            "man.viewer, man.<tool>.cmd",
            "The viewer of git bullpen help, as git help's: man, or a tool whose \
             man.<tool>.cmd is run with /bin/sh -c and the page's name.",
        ));
    }
    if all_or(sub, colours(sub)) {
        entries.push((
            COLOR_KEYS,
            "Whether output is coloured: always, never, or auto (the default: only on a \
             terminal that is not TERM=dumb, and not with NO_COLOR), or a boolean (true means \
             auto). color.bullpen wins over color.ui, and --color over both, as in git.",
        ));
    }
    if all_or(sub, colours(sub) && pages(sub)) {
        entries.push((
            config::COLOR_PAGER,
            "false: auto colours nothing that goes to a pager (bullpen's, or git's when \
             pager.bullpen makes git page git bullpen itself), as in git; default true.",
        ));
    }
    if entries.is_empty() {
        return;
    }
    roff.control("SH", ["GIT CONFIGURATION"]);
    for (tag, body) in entries {
        tagged(roff, tag, body);
    }
}

/// Where bullpen keeps what it knows (the main page).
fn files(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    for (tag, body) in [
        (
            "refs/bullpen/sessions/<id>",
            "The session's record: a chain of commits, one per event, each with the record \
             (session.json) at the end of its message; `git log -p \
             refs/bullpen/sessions/<id>` is its history. Shared: it travels with git push and \
             git fetch, and is never trusted to authorise anything by itself.",
        ),
        (
            "refs/notes/bullpen",
            "Provenance notes on the commits sessions made (`git log --notes=bullpen`); \
             push and fetch merge another machine's into them (a union).",
        ),
        (
            "refs/bullpen/remotes/<remote>/sessions/<id>",
            "The records fetched from a remote that passed bullpen's checks (ls --remote, \
             resume <remote>/<id>). Never read by gc, rm, stop or any other command.",
        ),
        (
            "refs/bullpen/incoming/<remote>/",
            "What the remote had at the last fetch (sessions/<id>, notes), as git fetched it, \
             before any check.",
        ),
        (
            "$BULLPEN_HOME/worktrees/<repo-key>/<id>",
            "The session's worktree (or <bullpen.worktreeRoot>/<id>), made by git worktree add.",
        ),
        (
            "$BULLPEN_HOME/roots/<hash>",
            "The path of a bullpen.worktreeRoot outside $BULLPEN_HOME/worktrees/ that a spawn \
             used: where ls --all-repos and wait --all-repos also look. Only a place to look; \
             removing it costs only that.",
        ),
        (
            ".worktreeinclude",
            "At the top of the main worktree, in gitignore syntax: the ignored files of the \
             main worktree that spawn copies into a new worktree (a copy-on-write clone where \
             the file system can). Never a tracked file, never through a symbolic link; a \
             pattern with a .. component is refused.",
        ),
        (
            "<git common dir>/bullpen/logs/<id>.log",
            "The output of the session's background runs, appended, each ending with a line \
             saying how the run ended and after how long. Removed by rm.",
        ),
        (
            "<git common dir>/bullpen/local/<id>/",
            "What this machine knows about the session, which no fetch brings: created.json \
             (spawn created its worktree here, under this root: the authority to delete it; \
             and the command it recorded here: a plain resume runs only it), command.json (a \
             command saved later by resume --save, which takes the place of spawn's), \
             run-<pid>.json (a run started here, by its command's pid: the authority to signal \
             it, and the only word for where its terminal's socket is), attached.json (the \
             terminal attached to the run now, as its supervisor says).",
        ),
        (
            "$XDG_RUNTIME_DIR/bullpen/s<pid>-<start>.sock",
            "A background run's socket (or under /tmp/bullpen-<uid>/), which git bullpen \
             attach and peek connect to: in a directory only you can enter, removed when the run \
             ends, and that of a killed run by stop or by the session's next run.",
        ),
        (
            "<git common dir>/bullpen/clone-id",
            "This clone's id (random, made on first use, never fetched), recorded in every \
             record it creates: two machines may share a host name, never a clone id.",
        ),
        (
            "<git common dir>/bullpen/remote.lock",
            "Held (flock) while fetch or push move a remote's refs.",
        ),
        (
            "<git common dir>/bullpen/worktree.lock",
            "Held (flock) around creating and removing worktrees; never stranded: the \
             kernel drops it with the process.",
        ),
        (
            "<git common dir>/bullpen/tmp/",
            "gc's temporary index files (index-<pid>-<nanos>), for a worktree whose entry is \
             gone; removed on every path, and those of a gc that was killed by the next one.",
        ),
    ] {
        tagged(roff, tag, body);
    }
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
                "gc, rm: some worktrees could not be removed yet (degraded; run it again later).",
            );
            tagged(
                roff,
                "1",
                "push: a session or the notes were not pushed (the reason is on stderr); \
                 fetch: a record was refused or the notes could not be merged.",
            );
            tagged(roff, "spawn, resume", passthrough);
            tagged(
                roff,
                "wait",
                "The exit status of the last session's run; 124 when --timeout ran out. With \
                 --for: 0 when a session got there, 1 when every run ended first.",
            );
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
        Some("wait") => {
            tagged(
                roff,
                "0 ... 255",
                "The exit status of the last session's run (128+N when a signal N ended it); \
                 0 for a session that never ran.",
            );
            tagged(
                roff,
                "0, 1",
                "With --for: a session got there (its id is on stdout); every run ended \
                 before one did.",
            );
            tagged(
                roff,
                "124",
                "--timeout ran out with a run still going; it goes on.",
            );
        }
        Some("rm") => {
            tagged(
                roff,
                "0",
                "Every session named was removed (or was collected already).",
            );
            tagged(
                roff,
                "1",
                "Degraded: a removal was left half-done (a late writer); run rm or gc again.",
            );
        }
        Some("push") => {
            tagged(
                roff,
                "0",
                "Every session asked for, and the notes, are on the remote.",
            );
            tagged(
                roff,
                "1",
                "A session or the notes were not pushed: it would have lost something on the \
                 remote, or another push got there first; each is named on stderr with why.",
            );
        }
        Some("fetch") => {
            tagged(
                roff,
                "0",
                "Every record the remote has was taken, and its notes merged.",
            );
            tagged(
                roff,
                "1",
                "A record was refused (each is named on stderr with why; the others \
                 arrived), or the notes could not be merged.",
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
    let passes_through = matches!(sub, Some("spawn" | "resume" | "attach" | "wait"));
    if sub.is_none() {
        paragraph(
            roff,
            &[
                "bullpen's own outcomes, in the commands that exit with their command's \
               status (spawn, resume, attach, wait), as timeout(1) gives them:"
                    .to_owned(),
            ],
        );
    }
    if passes_through || sub.is_none() {
        tagged(
            roff,
            "125",
            &format!(
                "bullpen itself refused, failed or was used wrongly ({}not a repository, an \
                 unknown option, ...): the command's status is not known. The reason is \
                 printed on stderr after \"fatal:\" or \"error:\", with what to do on \
                 \"hint:\" lines.",
                own_outcomes(sub)
            ),
        );
    }
    // Only spawn and resume execute a command themselves.
    if matches!(sub, None | Some("spawn" | "resume")) {
        tagged(
            roff,
            "126",
            "The command was found but could not be executed (recorded as exit 126).",
        );
        tagged(
            roff,
            "127",
            "The command was not found (recorded as exit 127).",
        );
    }
    if sub.is_none() {
        paragraph(roff, &["In every other command:".to_owned()]);
    }
    if let Some(cases) = refusals(sub).filter(|_| !passes_through) {
        tagged(
            roff,
            "3",
            &format!(
                "Refused: bullpen left something alone to keep work safe ({cases}); nothing \
                 was changed or run. The reason and what to do are printed on stderr."
            ),
        );
    }
    if !passes_through {
        tagged(
            roff,
            "128",
            "bullpen itself failed (not a repository, git missing, a record that cannot be \
             written, ...); the reason is printed on stderr after \"fatal:\", with what to do on \
             \"hint:\" lines.",
        );
        tagged(
            roff,
            "129",
            "Usage error: an unknown option, a missing or invalid argument (as git's own \
             commands do), printed after \"error:\".",
        );
    }
    tagged(
        roff,
        "70",
        "Internal error: a bug in bullpen (it panicked). Please report it with what stderr says.",
    );
}

/// What makes a command that passes its command's status through give 125 of
/// its own, besides what every command can fail at (each ends with ", ").
fn own_outcomes(sub: Option<&str>) -> &'static str {
    match sub {
        Some("spawn") => {
            "an id, branch or directory already in use, a .worktreeinclude that is not a \
             plain file or reaches outside the worktree, an agent not on PATH, a setup command \
             that failed, "
        }
        Some("resume") => {
            "something else at the recorded path, a session already running or still being \
             created, a command this machine never recorded, "
        }
        Some("attach") => {
            "a run in the foreground of another terminal, a run or socket this machine cannot \
             prove is the session's, a session attached elsewhere, a lost run, "
        }
        Some("wait") => "no such session, a lost run, ",
        _ => {
            "an occupied path, a session already running, an id in use, a record it does not \
             trust, a lost run, "
        }
    }
}

/// What a command refuses (exit 3), in the commands that refuse anything and do
/// not pass a status through (`None` for the main page: all of them).
fn refusals(sub: Option<&str>) -> Option<&'static str> {
    match sub {
        None => Some(
            "a session that holds work, a run or record this machine cannot prove is the \
             session's, a remote whose refspecs would write bullpen's own refs",
        ),
        Some("stop") => Some(
            "a run this machine cannot prove it started, processes it cannot prove are the \
             session's, a run in the foreground of another terminal: nothing was signalled",
        ),
        Some("peek") => Some(
            "a run or socket this machine cannot prove is the session's, a supervisor that \
             refused",
        ),
        Some("hook") => Some("a caller that is not the session's running command"),
        Some("rm") => Some(
            "a session kept because it holds work (unpublished commits, uncommitted files; \
             --force discards those) or a process uses it",
        ),
        Some("push") => Some(
            "a remote whose fetch refspecs would write bullpen's own refs (a mirror's), a \
             session named while it is still being created",
        ),
        Some("fetch") => {
            Some("a remote whose fetch refspecs would write bullpen's own refs (a mirror's)")
        }
        _ => None,
    }
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
        for section in ["SYNOPSIS", "EXAMPLES", "EXIT STATUS", "SEE ALSO"] {
            assert!(text.contains(section), "{}: no {section}", rel.display());
        }
        let sub = stem.strip_prefix("git-bullpen-");
        let applies = [
            (
                "ENVIRONMENT",
                sub.is_none_or(|s| !matches!(s, "stop" | "wait" | "push" | "fetch")),
            ),
            (
                "GIT CONFIGURATION",
                uses_the_root(sub)
                    || matches!(
                        sub,
                        Some("push" | "fetch" | "attach" | "peek" | "logs" | "help")
                    ),
            ),
            ("FILES", sub.is_none()),
        ];
        for (section, expected) in applies {
            assert_eq!(
                text.contains(section),
                expected,
                "{}: {section} {}",
                rel.display(),
                if expected {
                    "missing"
                } else {
                    "where nothing of it applies"
                }
            );
        }
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            warnings.trim().is_empty(),
            "man warns about {}: {warnings}",
            rel.display()
        );
    }
}

/// A page as man(1) renders it for a terminal 80 columns wide.
fn rendered(env: &crate::support::Env, name: &str, bytes: &[u8]) -> String {
    let path = env.root().join(name);
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
    assert!(out.status.success(), "man -l {name}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn docs_definition_lists_render_as_lists() {
    if which("man").is_none() {
        crate::ship::skip_or_fail("man (man-db) is not installed");
        return;
    }
    let env = crate::support::Env::new();
    let pages = generated();
    let page = |name: &str| {
        let bytes = &pages[&PathBuf::from(format!("man/{name}.1"))];
        rendered(&env, name, bytes)
    };
    // gc's removal conditions, and ls's columns: one item each, the term at the
    // start of its line, its definition under or beside it, never run together.
    for (name, terms) in [
        (
            "git-bullpen-gc",
            &["published", "clean", "idle", "unlocked", "ours"][..],
        ),
        (
            "git-bullpen-ls",
            &[
                "*",
                "ID",
                "STATE",
                "BRANCH",
                "CHANGES",
                "PUBLISHED",
                "WORKTREE",
            ],
        ),
    ] {
        let text = page(name);
        let lines: Vec<&str> = text.lines().collect();
        for term in terms {
            let at = lines
                .iter()
                .position(|l| {
                    let t = l.trim_start();
                    t == *term || t.starts_with(&format!("{term} "))
                })
                .unwrap_or_else(|| panic!("{name}: {term:?} is not an item of a list:\n{text}"));
            let indent = |l: &str| l.len() - l.trim_start().len();
            let term_line = lines[at];
            let def_line = if term_line.trim() == *term {
                lines[at + 1]
            } else {
                term_line
            };
            assert!(
                indent(def_line) > indent(term_line) || def_line == term_line,
                "{name}: the definition of {term:?} is not under it:\n{text}"
            );
        }
        // The list is not one run-on paragraph: no line holds two terms' items.
        for l in &lines {
            let starts: Vec<_> = terms
                .iter()
                .filter(|t| t.len() > 2 && l.contains(&format!("   {t}   ")))
                .collect();
            assert!(starts.len() < 2, "{name}: run together: {l:?}");
        }
    }
    // The gc conditions read in order, each its own item.
    let gc = page("git-bullpen-gc");
    let order: Vec<usize> = ["published", "clean", "idle", "unlocked", "ours"]
        .iter()
        .map(|t| {
            gc.find(&format!("\n       {t}"))
                .unwrap_or_else(|| panic!("{t}:\n{gc}"))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{gc}");
}

#[test]
fn docs_split_paragraphs_into_prose_and_definition_lists() {
    let lines: Vec<String> = [
        "Removed only when:",
        "  published  on a remote",
        "  idle       nothing runs there,",
        "             nothing uses it",
        "Then the branch goes.",
    ]
    .map(str::to_owned)
    .to_vec();
    assert_eq!(
        pieces(&lines),
        [
            Piece::Prose("Removed only when:".into()),
            Piece::List(vec![
                ("published".into(), "on a remote".into()),
                ("idle".into(), "nothing runs there, nothing uses it".into()),
            ]),
            Piece::Prose("Then the branch goes.".into()),
        ]
    );
    // Indented prose (a wrapped sentence) is not a list.
    let prose = ["  a sentence with single spaces".to_owned()];
    assert_eq!(
        pieces(&prose),
        [Piece::Prose("a sentence with single spaces".into())]
    );
}

pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// Pure: `man`'s output as a person reads it: overstrikes (`x\bx`, `_\bx`) and
/// SGR sequences taken out.
fn plain_text(rendered: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    let mut chars = rendered.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{8}' => {
                out.pop();
            }
            '\u{1b}' => {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.into_iter().collect()
}

/// Every page reads at 80 columns: no line wider (EXAMPLES at most 78, so a
/// command can be copied whole), no Markdown backtick left in the text, and no
/// reference to a file `install.sh` does not install.
#[test]
fn docs_pages_read_at_80_columns() {
    if which("man").is_none() {
        crate::ship::skip_or_fail("man (man-db) is not installed");
        return;
    }
    let env = crate::support::Env::new();
    let mut faults = Vec::new();
    for (rel, bytes) in generated().iter().filter(|(r, _)| r.starts_with("man")) {
        let name = rel.file_name().unwrap().to_string_lossy().into_owned();
        let text = plain_text(&rendered(&env, &name, bytes));
        let mut section = String::new();
        for line in text.lines() {
            if !line.starts_with(' ') && !line.is_empty() {
                section = line.to_owned();
            }
            let width = line.chars().count();
            let limit = if section == "EXAMPLES" { 78 } else { 80 };
            if width > limit {
                faults.push(format!("{name}: {width} columns in {section}: {line}"));
            }
            if line.contains('`') {
                faults.push(format!("{name}: a literal backtick: {line}"));
            }
            for file in ["README", "ARCHITECTURE"] {
                if line.contains(file) {
                    faults.push(format!("{name}: refers to {file}, not installed: {line}"));
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn docs_emphasis_turns_backticks_into_bold() {
    assert_eq!(
        emphasis("run `git bullpen gc` now"),
        "run \\fBgit bullpen gc\\fR now"
    );
    assert_eq!(emphasis("no code"), "no code");
    assert_eq!(emphasis("odd ` one"), "odd ` one");
    assert_eq!(
        plain_text("N\u{8}NA\u{8}AM\u{8}ME\u{8}E \u{1b}[1mx\u{1b}[0m"),
        "NAME x"
    );
}
