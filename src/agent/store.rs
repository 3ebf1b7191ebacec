//! The agents' own stores of conversations, read (never written): to learn a
//! Codex session's id, and to tell whether an agent has a conversation of a
//! session to continue (`resume`'s `--fresh` hint).

use std::path::{Path, PathBuf};

use crate::model::agent::Store;
use crate::model::config;
use crate::model::conversation::{claude_project_name, codex_own, codex_session, CodexSession};
use crate::sys::regular;

/// A session file's first line is its metadata; Codex writes its base
/// instructions there (about 100 KB in 0.171.0).
const FIRST_LINE_MAX: u64 = 8 << 20;

/// The directory the store is under: `$CLAUDE_CONFIG_DIR` or `~/.claude`,
/// `$CODEX_HOME` or `~/.codex`.
fn home_of(store: Store) -> Option<PathBuf> {
    let (var, dir) = match store {
        Store::Claude => (config::ENV_CLAUDE_CONFIG_DIR, ".claude"),
        Store::Codex => (config::ENV_CODEX_HOME, ".codex"),
    };
    if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(v));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(dir))
}

/// The worktree as the agents record it: its real path.
fn real(worktree: &Path) -> String {
    std::fs::canonicalize(worktree)
        .unwrap_or_else(|_| worktree.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Does the agent's store hold a conversation of `worktree` (the one with `id`,
/// or any)? `None`: the store cannot be read (no home).
pub fn has_conversation(store: Store, worktree: &Path, id: Option<&str>) -> Option<bool> {
    let home = home_of(store)?;
    let cwd = real(worktree);
    Some(match store {
        Store::Claude => claude_dirs(&home, &cwd).iter().any(|dir| match id {
            Some(id) => non_empty(&dir.join(format!("{id}.jsonl"))),
            None => std::fs::read_dir(dir).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    e.file_name().to_string_lossy().ends_with(".jsonl") && non_empty(&e.path())
                })
            }),
        }),
        Store::Codex => codex_sessions(&home, None)
            .iter()
            .any(|s| s.cwd == cwd && id.is_none_or(|id| s.id == id)),
    })
}

/// The id of the session's own Codex conversation: the first started in
/// `worktree` since `since` (unix milliseconds), as Codex's store records them.
pub fn learn_codex(worktree: &Path, since: i64) -> Option<String> {
    let home = home_of(Store::Codex)?;
    let sessions = codex_sessions(&home, Some(since));
    codex_own(&sessions, &real(worktree), since).map(str::to_owned)
}

fn non_empty(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Claude Code's project directories of `cwd`: the one named for it, or for a
/// long path any whose name starts with the cut name (its hash suffix varies).
fn claude_dirs(home: &Path, cwd: &str) -> Vec<PathBuf> {
    let projects = home.join("projects");
    let (name, cut) = claude_project_name(cwd);
    if !cut {
        return vec![projects.join(name)];
    }
    let Ok(entries) = std::fs::read_dir(&projects) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&name))
        .map(|e| e.path())
        .collect()
}

/// The sessions in Codex's store (`sessions/YYYY/MM/DD/rollout-*.jsonl`), of
/// the days from the day before `since` on (the directories are named in
/// local time), or of every day.
fn codex_sessions(home: &Path, since: Option<i64>) -> Vec<CodexSession> {
    let first_day = since.map(|t| t.div_euclid(86_400_000) - 1);
    let mut out = Vec::new();
    let root = home.join("sessions");
    for (year, y) in numbered(&root) {
        for (month, m) in numbered(&year) {
            for (day, d) in numbered(&month) {
                let days = crate::model::time::days_from_civil(y, m, d);
                if first_day.is_some_and(|first| days < first) {
                    continue;
                }
                let Ok(entries) = std::fs::read_dir(&day) else {
                    continue;
                };
                for e in entries.flatten() {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if !(name.starts_with("rollout-") && name.ends_with(".jsonl")) {
                        continue;
                    }
                    if let Ok(Some(line)) = regular::first_line(&e.path(), FIRST_LINE_MAX) {
                        out.extend(codex_session(&line));
                    }
                }
            }
        }
    }
    out
}

/// The subdirectories of `dir` named by a number.
fn numbered(dir: &Path) -> Vec<(PathBuf, i64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let n: i64 = e.file_name().to_str()?.parse().ok()?;
            Some((e.path(), n))
        })
        .collect()
}
