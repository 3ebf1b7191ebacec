//! Where `ls --all-repos` and `wait --all-repos` look besides the default roots:
//! each worktree root outside `$BULLPEN_HOME/worktrees/` that a spawn used (a
//! `bullpen.worktreeRoot` from any config file: the repository's own, the
//! user's, one an `includeIf` brings in), left by spawn as a hint,
//! `$BULLPEN_HOME/roots/<hash of the root>`, holding the root's path. Only a
//! place to look: each repository found there is verified from its worktrees
//! as any other, so a forged or stale hint costs one directory read.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::atomic;
use crate::layout::{bullpen_home, fnv1a, Layout};

const DIR: &str = "roots";
/// Longer than any path a hint holds.
const MAX: u64 = 64 * 1024;

/// Leave a hint for `layout`'s root unless the default roots cover it; nothing
/// when an equal hint is there already.
pub fn record(layout: &Layout) -> Result<()> {
    let root = &layout.worktree_root;
    if root.parent() == Some(layout.home.join("worktrees").as_path()) {
        return Ok(());
    }
    let bytes = root.as_os_str().as_encoded_bytes();
    let file = layout.home.join(DIR).join(format!("{:016x}", fnv1a(bytes)));
    if std::fs::read(&file).is_ok_and(|b| b == bytes) {
        return Ok(());
    }
    atomic::write(&file, bytes).with_context(|| {
        format!(
            "cannot leave {} for ls --all-repos to find worktrees under {}",
            file.display(),
            root.display()
        )
    })
}

/// The roots the hints name (absolute paths only), sorted; none when there
/// is no hint.
pub fn hinted() -> Result<Vec<PathBuf>> {
    let dir = bullpen_home()?.join(DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut roots: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| read_hint(&e.path()))
        .collect();
    roots.sort();
    roots.dedup();
    Ok(roots)
}

fn read_hint(file: &Path) -> Option<PathBuf> {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    let meta = file.symlink_metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX)
        .read_to_end(&mut bytes)
        .ok()?;
    let root = PathBuf::from(std::ffi::OsStr::from_bytes(&bytes));
    root.is_absolute().then_some(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_is_only_a_path_to_look_at() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let file = tmp.path().join("h");
        std::fs::write(&file, "/srv/wt").expect("write");
        assert_eq!(read_hint(&file), Some(PathBuf::from("/srv/wt")));
        std::fs::write(&file, "relative/wt").expect("write");
        assert_eq!(read_hint(&file), None);
        std::fs::remove_file(&file).expect("rm");
        std::os::unix::fs::symlink("/srv/wt", &file).expect("symlink");
        assert_eq!(read_hint(&file), None, "a symlink is not a hint");
    }
}
