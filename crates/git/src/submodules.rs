//! The submodules of a directory compared with a commit's tree without git's
//! help: `git status --ignore-submodules=none` runs `git status` in each
//! submodule, and that git takes the submodule's own configuration (a clean
//! filter, `core.fsmonitor`, hooks: the agent's to write). bullpen asks git to
//! leave them alone (`--ignore-submodules=all`) and looks at each itself, with
//! gix opened as `pinned.rs` opens it: no program from a repository's files.

use std::path::Path;

use anyhow::{Context, Result};

use super::status::dirt_of;

/// What `git status --ignore-submodules=none` would have counted of the
/// submodules of `tip`'s tree in `dir`: one modified entry per submodule whose
/// checkout is at another commit or not clean, one deleted per submodule whose
/// directory is gone. A submodule that is not checked out (no `.git` in its
/// directory) counts nothing, as in git.
pub(super) fn submodule_changes(
    repo: &gix::Repository,
    tip: gix::ObjectId,
    dir: &Path,
    cli_config: &[gix::bstr::BString],
) -> Result<(usize, usize)> {
    use std::os::unix::ffi::OsStrExt;
    let tree = repo
        .find_commit(tip)
        .with_context(|| format!("could not read the commit {tip}"))?
        .tree()
        .with_context(|| format!("could not read the tree of {tip}"))?;
    let mut recorder = gix::traverse::tree::Recorder::default();
    tree.traverse()
        .breadthfirst(&mut recorder)
        .with_context(|| format!("could not list the tree of {tip}"))?;
    let (mut modified, mut deleted) = (0, 0);
    for entry in recorder.records.iter().filter(|e| e.mode.is_commit()) {
        let sub = dir.join(std::ffi::OsStr::from_bytes(&entry.filepath));
        match sub.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                deleted += 1;
                continue;
            }
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("could not read {}", sub.display()))
                )
            }
            Ok(_) => {}
        }
        if sub.join(".git").symlink_metadata().is_err() {
            continue; // not checked out
        }
        super::special::refuse_special_git_files(&sub)?;
        let options = super::pinned::gix_options(cli_config.to_vec());
        let head = gix::open_opts(&sub, options)
            .with_context(|| format!("could not open the submodule {}", sub.display()))?
            .head_id()
            .ok()
            .map(|id| id.detach());
        if head != Some(entry.oid) || !dirt_of(&sub, cli_config, None)?.is_clean() {
            modified += 1;
        }
    }
    Ok((modified, deleted))
}
