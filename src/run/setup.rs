//! `bullpen.setup`: the commands that make a new worktree ready (`npm ci`, `uv
//! sync`), run in it in order before the session's command, with the
//! session's environment. Only from git config, never from a committed file,
//! so that cloning a repository never runs its code.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use super::env::session_env;
use super::gate::IgnoreInterrupts;
use crate::context::Ctx;
use crate::model::command::escaped;
use crate::model::{config, Error, Record};

/// Run every `bullpen.setup` command in the session's worktree, in order,
/// through `sh -c`; the first that fails ends it with an error naming it (its
/// output, on stderr, came first). stdin is /dev/null and its stdout goes to
/// stderr, so that `spawn --bg`'s stdout stays the session id alone.
///
/// Ctrl-C (and Ctrl-\) reach the command, whose dispositions are the
/// defaults; bullpen ignores them meanwhile, so that it lives to undo the
/// spawn: an interrupted setup is a failed one.
pub fn run_setup(ctx: &Ctx, record: &Record) -> Result<()> {
    let commands = ctx.repo.config_strings(config::SETUP);
    if commands.is_empty() {
        return Ok(());
    }
    ctx.ui.flush()?;
    let worktree = Path::new(&record.worktree);
    let env = session_env(ctx, record);
    for (i, line) in commands.iter().enumerate() {
        ctx.ui
            .info(format!("setup {}/{}: {line}", i + 1, commands.len()));
        // What bullpen says must reach the terminal before the command does.
        ctx.ui.flush()?;
        let stdout = stderr_dup().context("cannot hand stderr to the setup command")?;
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(line)
            .current_dir(worktree)
            .stdin(Stdio::null())
            .stdout(stdout)
            .envs(env.iter().map(|(k, v)| (k, v)));
        // SAFETY: only `signal`, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        let status = {
            let _interrupts = IgnoreInterrupts::new();
            cmd.status()
                .with_context(|| format!("cannot run the setup command `{}`", escaped(line)))?
        };
        if !status.success() {
            let how = match (status.code(), status.signal()) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(s)) => format!("signal {s}"),
                (None, None) => "unknown".to_owned(),
            };
            return Err(Error::failed(format!(
                "setup command `{}` failed ({how}) in {}",
                escaped(line),
                worktree.display()
            ))
            .hint(format!(
                "fix it (git config --get-all {}), or spawn with --no-setup to skip setup",
                config::SETUP
            ))
            .into());
        }
    }
    Ok(())
}

/// A duplicate of this process's stderr, for a child's stdout.
fn stderr_dup() -> std::io::Result<std::os::fd::OwnedFd> {
    // SAFETY: fd 2 is open for the life of the process (main keeps it).
    unsafe { std::os::fd::BorrowedFd::borrow_raw(2) }.try_clone_to_owned()
}
