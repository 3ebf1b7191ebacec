//! What the environment says about the repository: `GIT_DIR` (`git --git-dir`),
//! `GIT_COMMON_DIR`, `GIT_WORK_TREE` (`git --work-tree`) and the configuration of
//! `git -c` (`GIT_CONFIG_PARAMETERS`).
//!
//! One repository for everything: `main` captures these once, at the start,
//! and removes git's repository-local variables (`model::config::REPOSITORY_ENV`)
//! from the process's environment. bullpen itself opens the repository they
//! name; every git command it runs (always with `-C <a directory of that
//! repository>`), the supervisor and the session's command then find their
//! repository from the directory they run in, as git's own subprocesses do
//! when git enters another repository. So an exported `GIT_DIR` (a dotfiles
//! setup, a hook) can never make bullpen read one repository while the git it
//! runs acts on another, nor make an agent commit into the caller's repository.
//! The configuration variables stay: `git -c` applies to every git bullpen runs.

use std::ffi::OsString;
use std::sync::OnceLock;

use crate::model::config;

/// The variables as they were when bullpen started.
#[derive(Clone, Debug, Default)]
pub struct GitEnv {
    /// `GIT_DIR`: the repository to use instead of discovering one.
    pub git_dir: Option<OsString>,
    /// `GIT_COMMON_DIR`.
    pub common_dir: Option<OsString>,
    /// `GIT_WORK_TREE`: the current working tree. bullpen never works in the
    /// current working tree (a session has its own), so it changes nothing here.
    pub work_tree: Option<OsString>,
    /// `GIT_CONFIG_PARAMETERS`, raw (see `model::params`). `GIT_CONFIG_COUNT`
    /// is read by gix itself.
    pub config_parameters: Option<OsString>,
}

static CAPTURED: OnceLock<GitEnv> = OnceLock::new();

impl GitEnv {
    /// The variables of this process's environment.
    pub fn read() -> GitEnv {
        GitEnv {
            git_dir: std::env::var_os(config::ENV_GIT_DIR),
            common_dir: std::env::var_os(config::ENV_COMMON_DIR),
            work_tree: std::env::var_os(config::ENV_WORK_TREE),
            config_parameters: std::env::var_os(config::ENV_CONFIG_PARAMETERS),
        }
    }

    /// Read the variables, keep them for [`GitEnv::current`], and remove git's
    /// repository-local variables from this process's environment (see the
    /// module's documentation). Call once, first thing in `main`, while the
    /// process has one thread.
    pub fn capture() {
        let env = GitEnv::read();
        if CAPTURED.set(env).is_ok() {
            for var in config::REPOSITORY_ENV {
                std::env::remove_var(var);
            }
        }
    }

    /// What [`GitEnv::capture`] kept, or (in a process that never captured: a
    /// unit test, a library user) the environment as it is.
    pub fn current() -> GitEnv {
        CAPTURED.get().cloned().unwrap_or_else(GitEnv::read)
    }
}
