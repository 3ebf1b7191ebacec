//! What every command needs: the repository, where things go, how to print.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Result;

use crate::git::Repo;
use crate::layout::Layout;

pub struct Ctx {
    pub repo: Repo,
    pub layout: Layout,
}

impl Ctx {
    pub fn discover(cwd: &Path) -> Result<Ctx> {
        let repo = Repo::discover(cwd)?;
        let layout = Layout::for_repo(&repo)?;
        Ok(Ctx { repo, layout })
    }
}

/// Colour only on a terminal, and never with `NO_COLOR` set (to anything non-empty).
pub fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A warning on stderr, git-style.
pub fn warn(msg: impl std::fmt::Display) {
    eprintln!("warning: {msg}");
}

/// A progress/info line on stderr.
pub fn info(msg: impl std::fmt::Display) {
    eprintln!("bullpen: {msg}");
}

/// Write `value` as pretty JSON and a newline to `out`. serde_json's error hides
/// the underlying `io::Error`; it is turned back into one so that a closed pipe
/// (`... --json | head`) is recognised by `main` and exits quietly.
pub fn write_json(out: &mut dyn std::io::Write, value: &impl serde::Serialize) -> Result<()> {
    use anyhow::Context;
    serde_json::to_writer_pretty(&mut *out, value)
        .map_err(std::io::Error::from)
        .context("cannot write JSON")?;
    writeln!(out).context("cannot write to stdout")
}
