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

/// Overrides the platform data dir (e.g. `~/.local/share/bullpen`).
pub const ENV_HOME: &str = "BULLPEN_HOME";
/// Set for the session's command: its id, branch and worktree.
pub const ENV_SESSION: &str = "BULLPEN_SESSION";
pub const ENV_BRANCH: &str = "BULLPEN_BRANCH";
pub const ENV_WORKTREE: &str = "BULLPEN_WORKTREE";

/// Set to a shell's name (bash, zsh, fish) by the completion scripts: `git-bullpen`
/// then prints completions instead of running (see `complete.rs`).
pub const ENV_COMPLETE: &str = "GIT_BULLPEN_COMPLETE";
