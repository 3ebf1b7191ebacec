//! `bullpen.notify`: the command run when a session starts to need a person.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use crate::model::activity::Activity;
use crate::model::{config, SessionId};

/// What to run, read once from git config (`None`: nothing configured).
#[derive(Clone, Debug)]
pub struct Notify {
    command: String,
    repository: String,
}

impl Notify {
    pub fn configured(repo: &crate::git::Repo) -> Option<Notify> {
        let command = repo
            .config_string(config::NOTIFY)
            .filter(|c| !c.trim().is_empty())?;
        Some(Notify {
            command,
            repository: repo.main_worktree().to_string_lossy().into_owned(),
        })
    }

    /// Start the command (`sh -c`, in `cwd`, stdin/stdout/stderr on /dev/null)
    /// with the session, repository and state in its environment. It is not
    /// waited for here: `reap` says what is done with it.
    pub fn run(&self, id: &SessionId, state: Activity, cwd: &Path) -> Result<std::process::Child> {
        Command::new("/bin/sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(cwd)
            .env(config::ENV_SESSION, id.as_str())
            .env(config::ENV_REPOSITORY, &self.repository)
            .env(config::ENV_STATE, state.as_str())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| {
                format!(
                    "cannot run git config {} ({})",
                    config::NOTIFY,
                    self.command
                )
            })
    }
}
