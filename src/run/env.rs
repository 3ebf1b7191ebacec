//! What a session's command is given: its environment, and the command to run
//! when none is named.

use std::ffi::OsString;

use crate::context::Ctx;
use crate::model::{config, Record};

/// The environment a session's command (and its setup) gets: where it is,
/// where the repository's main worktree is, and what it started from.
pub fn session_env(ctx: &Ctx, record: &Record) -> Vec<(&'static str, OsString)> {
    vec![
        (config::ENV_SESSION, record.id.as_str().into()),
        (config::ENV_BRANCH, record.branch.clone().into()),
        (config::ENV_WORKTREE, record.worktree.clone().into()),
        (
            config::ENV_MAIN_WORKTREE,
            ctx.repo.main_worktree().as_os_str().to_owned(),
        ),
        (config::ENV_BASE, record.base.clone().into()),
    ]
}

/// The command to run when none is given: `bullpen.command` (run with `sh -c`),
/// else `$SHELL`, else `/bin/sh`.
pub fn default_command(ctx: &Ctx) -> Vec<String> {
    if let Some(c) = configured_command(ctx) {
        return vec!["/bin/sh".into(), "-c".into(), c];
    }
    match std::env::var("SHELL") {
        Ok(s) if !s.is_empty() => vec![s],
        _ => vec!["/bin/sh".into()],
    }
}

/// git config `bullpen.command`, when it names a command.
fn configured_command(ctx: &Ctx) -> Option<String> {
    ctx.repo
        .config_string(config::COMMAND)
        .filter(|c| !c.trim().is_empty())
}
