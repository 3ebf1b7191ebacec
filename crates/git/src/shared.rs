//! One object store for a repository and the linked worktrees bullpen opens again.

use std::path::PathBuf;

use crate::Repo;

/// The object store of a repository, lent to its linked worktrees when bullpen
/// opens them again (for their status, on other threads). A worktree opened on
/// its own gets a store of its own, which maps and checks every pack index
/// anew at its first object read: on symfony/symfony (1.3 million objects) that
/// is 5 MiB of a 38 MB `.idx` touched per worktree, once per thread at a time.
/// Shared, the index is mapped and checked once.
pub(crate) struct SharedObjects {
    store: std::sync::Arc<gix::odb::Store>,
    /// Its objects directory, canonical.
    dir: PathBuf,
}

impl SharedObjects {
    /// Give `repo` this store, when its objects directory is this store's (a
    /// linked worktree of the same repository). Any other repository (one whose
    /// `.git` points elsewhere) keeps its own.
    pub(crate) fn lend_to(&self, repo: &mut gix::Repository) {
        let theirs = crate::sys::paths::canonical_or_self(repo.objects.store_ref().path());
        if theirs != self.dir {
            return;
        }
        let mut handle = gix::odb::Cache::from(self.store.to_handle());
        // As gix sets up a repository's own handle: a small cache of
        // delta bases (trees read for the index-against-HEAD comparison).
        handle
            .set_pack_cache(|| Box::<gix::odb::pack::cache::lru::StaticLinkedList<64>>::default());
        repo.objects = gix::odb::memory::Proxy::from(handle).with_write_passthrough();
    }
}

impl Repo {
    /// This repository's object store, for the worktrees it opens again (its
    /// directory resolved once, at discovery, for the loose reads).
    pub(crate) fn shared_objects(&self) -> SharedObjects {
        SharedObjects {
            store: self.repo.objects.store(),
            dir: self.loose.path().to_owned(),
        }
    }
}
