//! Every git config key and environment variable bullpen reads, in one place.

/// Where worktrees go, overriding `$BULLPEN_HOME/worktrees/<repo-key>`.
pub const WORKTREE_ROOT: &str = "bullpen.worktreeRoot";
/// The default command of a new session.
pub const COMMAND: &str = "bullpen.command";
/// Remote-tracking refs (globs allowed, multi-valued) gc looks for a session's
/// changes in, besides each remote's default branch; an empty value drops the
/// ones before it, the defaults included.
pub const GC_INTEGRATION_REF: &str = "bullpen.gc.integrationRef";
/// How long gc keeps the records (and logs, local state) of collected sessions:
/// `90.days`, `2.weeks.ago`, `never`, `now`... as `gc.reflogExpire` takes them.
pub const GC_EXPIRE: &str = "bullpen.gc.expire";
/// How long gc keeps an agent session whose branch holds no commit of its own
/// after its last activity (its conversation may be all its work): parsed as
/// `bullpen.gc.expire` (`2.weeks`, `never`, `now`, a date).
pub const GC_AGENT_GRACE: &str = "bullpen.gc.agentGrace";
pub const DEFAULT_AGENT_GRACE: &str = "2.weeks.ago";
/// Directories (multi-valued patterns, glob syntax; one without a `/` matches
/// a directory's name, one with a `/` its path in the worktree) that gc counts
/// as caches when a `.gitignore` of their own hides them, besides those that
/// announce themselves (a `CACHEDIR.TAG`, a `pyvenv.cfg`).
pub const GC_DISPOSABLE: &str = "bullpen.gc.disposable";
/// The agent a new session runs when no command is given (before `bullpen.command`).
pub const AGENT: &str = "bullpen.agent";
/// `bullpen.agent.<name>.command` and `.resume`: an agent's profile.
pub fn agent_key(name: &str, form: super::agent::Form) -> String {
    format!("{AGENT}.{name}.{}", form.key())
}
/// The rest of an agent's profile: `bullpen.agent.<name>.program` (the
/// program looked for on PATH), `.prompt` (`positional` or `none`: which words
/// after `--` are the task prompt) and `.valueOptions` (the options that take
/// values).
pub fn agent_setting(name: &str, setting: &str) -> String {
    format!("{AGENT}.{name}.{setting}")
}
pub const AGENT_PROGRAM: &str = "program";
pub const AGENT_PROMPT: &str = "prompt";
pub const AGENT_VALUE_OPTIONS: &str = "valueOptions";
/// Where the agents keep their conversations (read, never written): Claude
/// Code's configuration directory (default `~/.claude`), Codex's home
/// (default `~/.codex`).
pub const ENV_CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
pub const ENV_CODEX_HOME: &str = "CODEX_HOME";
/// Commands run in a new worktree before the session's command (multi-valued,
/// in order; an empty value clears the ones before it). Only from git config.
pub const SETUP: &str = "bullpen.setup";
/// The file at the top of the main worktree naming the ignored files to copy
/// into a new worktree (gitignore syntax).
pub const WORKTREE_INCLUDE: &str = ".worktreeinclude";
/// The key that detaches `git bullpen attach` (default Ctrl-\\).
pub const DETACH_KEY: &str = "bullpen.detachKey";
/// Lines of scrollback a background run's terminal model keeps (read when the
/// run starts).
pub const SCROLLBACK: &str = "bullpen.scrollback";
/// A command (`sh -c`) run on each transition of a session into `needs input`,
/// by whoever sees it (the run's supervisor, or the agent's hook), once.
pub const NOTIFY: &str = "bullpen.notify";
/// Set for the `bullpen.notify` command: the repository (its main worktree)
/// and the state entered (`needs input`), beside `BULLPEN_SESSION`.
pub const ENV_REPOSITORY: &str = "BULLPEN_REPOSITORY";
pub const ENV_STATE: &str = "BULLPEN_STATE";
/// Whether a session's command runs confined (`--sandbox`): a boolean, or
/// `strict` (true) or `best-effort`.
pub const SANDBOX: &str = "bullpen.sandbox";
/// Paths (multi-valued; `~/` is the home directory) a sandboxed command may
/// write besides its session's own.
pub const SANDBOX_ALLOW_WRITE: &str = "bullpen.sandbox.allowWrite";
/// Test-only: the Landlock ABI bullpen takes the kernel to have, at most (`0`:
/// none), so that the tests can play a kernel without Landlock. Read only in
/// `sys::landlock`.
pub const ENV_TEST_LANDLOCK_ABI: &str = "BULLPEN_TEST_LANDLOCK_ABI";
/// Test-only: rules to leave out of a sandbox, comma-separated: a root's key
/// (`refs`), or one right of it (`refs:make-reg`), so that the tests can show
/// each rule is needed. It only ever takes rights away. Read only in
/// `run::sandbox`.
pub const ENV_TEST_SANDBOX_DROP: &str = "BULLPEN_TEST_SANDBOX_DROP";
/// A sandboxed command's private temporary directory.
pub const ENV_TMPDIR: &str = "TMPDIR";

/// Pure: a git integer (`git config --type=int`: digits with an optional `k`,
/// `m` or `g`), not negative; git's reason when it is not one.
pub fn parse_count(value: &str) -> Result<usize, &'static str> {
    let v = value.trim();
    let (digits, unit) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], Some(c.to_ascii_lowercase())),
        _ => (v, None),
    };
    let factor: usize = match unit {
        None => 1,
        Some('k') => 1 << 10,
        Some('m') => 1 << 20,
        Some('g') => 1 << 30,
        Some(_) => return Err("invalid unit"),
    };
    let n: usize = digits.parse().map_err(|_| {
        match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            true => "out of range",
            false => "invalid unit",
        }
    })?;
    n.checked_mul(factor).ok_or("out of range")
}

/// Overrides the platform data dir (e.g. `~/.local/share/bullpen`).
pub const ENV_HOME: &str = "BULLPEN_HOME";
/// The host name bullpen records (`host` in session.json), instead of the
/// kernel's: for tests that play two machines on one, and for machines whose
/// host name says nothing. Which clone wrote a record is told by its clone id,
/// never by this name.
pub const ENV_HOSTNAME: &str = "BULLPEN_HOSTNAME";
/// Set for the session's command: its id, branch and worktree.
pub const ENV_SESSION: &str = "BULLPEN_SESSION";
pub const ENV_BRANCH: &str = "BULLPEN_BRANCH";
pub const ENV_WORKTREE: &str = "BULLPEN_WORKTREE";
/// Set for the session's command and setup: the repository's main worktree,
/// and the commit the session started from.
pub const ENV_MAIN_WORKTREE: &str = "BULLPEN_MAIN_WORKTREE";
pub const ENV_BASE: &str = "BULLPEN_BASE";

/// How wide `ls`'s table may be (as git reads it), before the terminal's width.
pub const ENV_COLUMNS: &str = "COLUMNS";

/// Tests only: "now", in seconds since the epoch, for everything people read
/// (ages in `ls`, `wait`, `logs`), so that snapshots hold them (see `time.rs`).
pub const ENV_TEST_EPOCH: &str = "BULLPEN_TEST_EPOCH";
/// Tests only: set, bullpen panics before it does anything, to show how a bug
/// in bullpen exits (see `main.rs`).
pub const ENV_TEST_PANIC: &str = "BULLPEN_TEST_PANIC";

/// Set to a shell's name (bash, zsh, fish) by the completion scripts: `git-bullpen`
/// then prints completions instead of running (see `complete.rs`).
pub const ENV_COMPLETE: &str = "GIT_BULLPEN_COMPLETE";

/// Whether stdout gets colour, as git decides it: `color.bullpen` first, then
/// `color.ui` (`always`, `never`, `auto`, or a boolean: true means `auto`).
pub const COLOR_BULLPEN: &str = "color.bullpen";
pub const COLOR_UI: &str = "color.ui";
/// Whether `auto` colours output that goes to a pager (true unless set false).
pub const COLOR_PAGER: &str = "color.pager";
/// Set and not empty: no colour where it would be automatic (`auto`); an
/// explicit `always` (option or config) still colours.
pub const ENV_NO_COLOR: &str = "NO_COLOR";

/// The pager of `ls` and `logs` (`model::pager`): `pager.bullpen.<command>`,
/// else `pager.bullpen` (a boolean, or a pager of its own), then `GIT_PAGER`,
/// `core.pager`, `PAGER`, as git reads them.
pub const PAGER_BULLPEN: &str = "pager.bullpen";
pub const CORE_PAGER: &str = "core.pager";
pub const ENV_GIT_PAGER: &str = "GIT_PAGER";
pub const ENV_PAGER: &str = "PAGER";
/// Set to `true` by git when it pages a command itself (`pager.bullpen`).
pub const ENV_GIT_PAGER_IN_USE: &str = "GIT_PAGER_IN_USE";
/// `git bullpen help`'s viewer, as `git help` reads it.
pub const HELP_FORMAT: &str = "help.format";
pub const MAN_VIEWER: &str = "man.viewer";
pub const ENV_MAN_VIEWER: &str = "GIT_MAN_VIEWER";
pub const ENV_MANPATH: &str = "MANPATH";

/// What `git -c <key>=<value>` passes to the commands it runs (see `params`).
pub const ENV_CONFIG_PARAMETERS: &str = "GIT_CONFIG_PARAMETERS";
/// The repository to use instead of discovering one (`git --git-dir` sets it).
pub const ENV_GIT_DIR: &str = "GIT_DIR";
/// The common directory of the repository at `GIT_DIR` (normally read from its
/// `commondir` file).
pub const ENV_COMMON_DIR: &str = "GIT_COMMON_DIR";
/// The working tree of the current directory's repository (`git --work-tree`).
pub const ENV_WORK_TREE: &str = "GIT_WORK_TREE";

/// The variables that tie a git process to one repository and one working tree:
/// git's own `local_repo_env` (`environment.c`), which git clears whenever it
/// runs a command in another repository, without the ones that carry
/// configuration (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`), which apply to
/// every repository. bullpen reads them once and removes them from its own
/// environment, so every git command it runs, and every session command,
/// finds its repository from the directory it runs in.
pub const REPOSITORY_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_OBJECT_DIRECTORY",
    ENV_GIT_DIR,
    ENV_WORK_TREE,
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    ENV_COMMON_DIR,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_git_reads_integers() {
        assert_eq!(parse_count("1000"), Ok(1000));
        assert_eq!(parse_count("2k"), Ok(2048));
        assert_eq!(parse_count(" 1M "), Ok(1 << 20));
        assert_eq!(parse_count("0"), Ok(0));
        assert_eq!(parse_count("ten"), Err("invalid unit"));
        assert_eq!(parse_count("-1"), Err("invalid unit"));
        assert_eq!(parse_count("1x"), Err("invalid unit"));
        assert_eq!(parse_count("99999999999999999999"), Err("out of range"));
    }
}
