//! File-system helpers: the per-repository lock.

use std::fs::{File, OpenOptions};
use std::path::Path;

use anyhow::{Context, Result};

/// An exclusive advisory lock (flock) held for as long as the value lives. The
/// kernel releases it when the process dies, so a crash never strands it.
pub struct Lock {
    _file: File,
}

impl Lock {
    pub fn acquire(path: &Path) -> Result<Lock> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open lock file {}", path.display()))?;
        file.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(Lock { _file: file })
    }
}
