//! What every command needs: the repository, where things go, and where to print;
//! and which session a directory is in.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::git::store::{self, Stored};
use crate::git::Repo;
use crate::model::{Error, SessionId, State};
use crate::sys::layout::Layout;
use crate::ui::Ui;

pub struct Ctx<'ui> {
    pub repo: Repo,
    pub layout: Layout,
    pub ui: &'ui Ui,
}

impl<'ui> Ctx<'ui> {
    /// The repository of `cwd`, for a command that creates, runs or removes
    /// worktrees: a repository without a main working tree is refused.
    pub fn discover(cwd: &Path, ui: &'ui Ui) -> Result<Ctx<'ui>> {
        let ctx = Ctx::discover_records(cwd, ui)?;
        ctx.repo.require_worktree()?;
        // A sandboxed run killed with its bullpen is settled by the next
        // command that works in the repository (`run::sandbox_guard`).
        crate::run::sandbox_guard::sweep(&ctx);
        Ok(ctx)
    }

    /// The repository of `cwd`, for a command that only reads records (`ls`,
    /// `logs`, `path`): a bare repository is fine (say, a remote that sessions
    /// were pushed to).
    pub fn discover_records(cwd: &Path, ui: &'ui Ui) -> Result<Ctx<'ui>> {
        let repo = Repo::discover(cwd)?;
        ui.configure_color(|key| repo.config_value(key))?;
        ui.start_pager(|key| repo.config_value(key));
        let layout = Layout::for_repo(&repo)?;
        Ok(Ctx { repo, layout, ui })
    }

    /// The session named, or else the one whose worktree `cwd` is in (for
    /// `path` and `resume` without an id); a usage error when there is none.
    pub fn session_or_here(
        &self,
        id: Option<SessionId>,
        cwd: &Path,
        what: &str,
    ) -> Result<SessionId> {
        if let Some(id) = id {
            return Ok(id);
        }
        let (sessions, _unreadable) = store::load_all(&self.repo)?;
        match session_at(&sessions, cwd) {
            Some(i) => Ok(sessions[i].record.id.clone()),
            None => Err(Error::usage(format!(
                "no session id given, and {} is not inside any session's worktree",
                cwd.display()
            ))
            .hint(format!(
                "name one: git bullpen {what} <id> (`git bullpen ls` lists them)"
            ))
            .into()),
        }
    }
}

/// The session (index into `sessions`) whose worktree holds `cwd`, collected
/// ones aside; the innermost should two recorded worktrees nest. Paths are
/// compared resolved (symlinks, `..`), so `cd` through a link still counts.
/// Only a hint for people (`ls` marks it, `path` and `resume` default to it):
/// everything done with the session checks its worktree as usual.
pub fn session_at(sessions: &[Stored], cwd: &Path) -> Option<usize> {
    use std::os::unix::fs::MetadataExt;
    let cwd = resolved(cwd);
    // The directories holding `cwd`, innermost first, by identity (device and
    // inode): one stat per session then says whether its worktree is one of
    // them, where resolving each worktree's path would read every component's
    // link (11 calls per session at 1,000 sessions). `/` is left out: a record
    // naming it (or a relative path) holds nothing.
    let holders: Vec<(u64, u64)> = cwd
        .ancestors()
        .filter(|a| a.parent().is_some())
        .filter_map(|a| std::fs::metadata(a).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.record.state != State::Collected)
        .filter_map(|(i, s)| {
            let wt = Path::new(&s.record.worktree);
            if !wt.is_absolute() {
                return None;
            }
            let m = std::fs::metadata(wt).ok()?;
            let depth = holders.iter().position(|h| *h == (m.dev(), m.ino()))?;
            Some((i, depth))
        })
        .min_by_key(|(_, depth)| *depth)
        .map(|(i, _)| i)
}

fn resolved(path: &Path) -> PathBuf {
    crate::sys::paths::comparable(path)
}
