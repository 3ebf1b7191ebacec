//! A sandboxed run's private `TMPDIR` that failed the check when its run ended
//! (`model::private_tmp`): the facts, read without following a symlink, and the
//! notes under `<common>/bullpen/kept-tmp/` (local state, never fetched) that
//! gc reports until the directory is gone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::model::private_tmp::{Facts, Found, Note, NOTE_SCHEMA};
use crate::model::SessionId;
use crate::sys::atomic;
use crate::trust::confined::ConfinedPath;

const DIR: &str = "kept-tmp";

/// What is at `tmp`, the private `TMPDIR` of session `id`'s run (`made`: its
/// device and inode when bullpen made it, where known).
pub fn facts(id: &SessionId, tmp: &Path, made: Option<(u64, u64)>) -> Facts {
    use std::os::unix::fs::MetadataExt;
    let found = match tmp.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Found::Gone,
        Err(e) => Found::Unreadable(e.to_string()),
        Ok(m) if m.file_type().is_symlink() => Found::Symlink {
            to: std::fs::read_link(tmp)
                .ok()
                .map(|t| t.display().to_string()),
        },
        Ok(m) if m.is_dir() => Found::Dir {
            uid: m.uid(),
            made: made.map(|made| made == (m.dev(), m.ino())),
        },
        Ok(_) => Found::Other,
    };
    let parent = tmp.parent().unwrap_or(Path::new("/"));
    Facts {
        session: id.to_string(),
        found,
        named: tmp
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&format!("bullpen-{id}-"))),
        confined: ConfinedPath::new(parent, tmp)
            .map(|_| ())
            .map_err(|why| why.describe(tmp, parent)),
        uid: rustix::process::getuid().as_raw(),
    }
}

/// Note that `tmp` was left alone, and why (once per path), in the local
/// state under `state_dir` (`Layout::state_dir`).
pub fn note(
    state_dir: &Path,
    id: &SessionId,
    tmp: &Path,
    made: Option<(u64, u64)>,
    reason: &str,
) -> Result<()> {
    if in_dir(state_dir).iter().any(|(_, n)| n.path == tmp) {
        return Ok(());
    }
    let note = Note {
        schema: NOTE_SCHEMA,
        session: id.to_string(),
        path: tmp.to_path_buf(),
        reason: reason.to_owned(),
        made,
    };
    let mut bytes = serde_json::to_vec_pretty(&note).context("cannot serialize the note")?;
    bytes.push(b'\n');
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let file = state_dir.join(DIR).join(format!("{id}.{stamp}.json"));
    atomic::write(&file, &bytes).with_context(|| format!("cannot note {} for gc", tmp.display()))
}

/// Every note, with its file; an unreadable one is skipped.
pub fn all(ctx: &Ctx) -> Vec<(PathBuf, Note)> {
    in_dir(&ctx.layout.state_dir)
}

fn in_dir(state_dir: &Path) -> Vec<(PathBuf, Note)> {
    let Ok(entries) = std::fs::read_dir(state_dir.join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Note)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let note: Note = serde_json::from_slice(&bytes).ok()?;
            Some((p, note))
        })
        .collect();
    out.sort_by(|a, b| a.1.path.cmp(&b.1.path));
    out
}

/// The directory a note names is gone: forget it.
pub fn forget(file: &Path) -> Result<()> {
    match std::fs::remove_file(file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", file.display()))
        }
        _ => Ok(()),
    }
}
