//! The git blob id of a file's content: how bullpen remembers what it copied
//! into a worktree, and tells later whether the copy changed.

use std::path::Path;

use anyhow::{Context, Result};

use super::{oid, Repo};
use crate::model::Oid;

impl Repo {
    /// The blob id of the regular file at `path` (as `git hash-object` gives
    /// it, without filters); `None` when it is not a regular file (never
    /// blocking on a FIFO, never following a symbolic link).
    pub fn hash_file(&self, path: &Path) -> Result<Option<Oid>> {
        let Some(bytes) = crate::sys::regular::read(path)
            .with_context(|| format!("cannot read {}", path.display()))?
        else {
            return Ok(None);
        };
        let id = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &bytes)
            .with_context(|| format!("cannot hash {}", path.display()))?;
        Ok(Some(oid(id)))
    }
}
