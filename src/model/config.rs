//! Every git config key and environment variable bullpen reads, in one place.

/// Where worktrees go, overriding `$BULLPEN_HOME/worktrees/<repo-key>`.
pub const WORKTREE_ROOT: &str = "bullpen.worktreeRoot";
/// The default command of a new session.
pub const COMMAND: &str = "bullpen.command";
/// The key that detaches `git bullpen attach` (default Ctrl-\\).
pub const DETACH_KEY: &str = "bullpen.detachKey";

/// Overrides the platform data dir (e.g. `~/.local/share/bullpen`).
pub const ENV_HOME: &str = "BULLPEN_HOME";
/// Set for the session's command: its id, branch and worktree.
pub const ENV_SESSION: &str = "BULLPEN_SESSION";
pub const ENV_BRANCH: &str = "BULLPEN_BRANCH";
pub const ENV_WORKTREE: &str = "BULLPEN_WORKTREE";

/// Set to a shell's name (bash, zsh, fish) by the completion scripts: `git-bullpen`
/// then prints completions instead of running (see `complete.rs`).
pub const ENV_COMPLETE: &str = "GIT_BULLPEN_COMPLETE";
