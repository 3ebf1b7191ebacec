//! The main worktree's ignored entries, for `.worktreeinclude`: what `git
//! ls-files --others --ignored --exclude-standard --directory
//! --no-empty-directory` lists, and which directories the rules ignore
//! themselves (`git check-ignore`), both in-process (gix's directory walk and
//! excludes). git opens every `.gitignore` it meets blocking, so a FIFO of
//! that name in an untracked directory held spawn forever; gix skips a
//! pattern file that is not a regular file (`vendor/gix-glob`), as it does
//! for status.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use gix::dir::entry::{Kind, Status};
use gix::dir::walk::{Action, Delegate, EmissionMode};
use gix::dir::EntryRef;

impl super::Repo {
    /// The main worktree's ignored entries: files, and directories as one
    /// entry (`true`) when the rules ignore them or every file in them, never
    /// an empty one. Relative paths, sorted. A directory that cannot be
    /// listed (no permission) holds nothing, as git warns and takes it: it is
    /// in `unreadable` (absolute).
    pub fn ignored_entries(&self, unreadable: &mut Vec<PathBuf>) -> Result<Vec<(PathBuf, bool)>> {
        let repo = self.main_repo()?;
        let index = repo
            .index_or_empty()
            .context("could not read the index of the main worktree")?;
        let options = repo
            .dirwalk_options()
            .context("could not read the options of the main worktree")?
            .emit_ignored(Some(EmissionMode::CollapseDirectory))
            // An untracked directory is one entry, not ignored: git's
            // `--directory` lists none of the ignored files in it.
            .emit_untracked(EmissionMode::CollapseDirectory)
            .emit_collapsed(None)
            .emit_empty_directories(false);
        let mut found = Ignored::default();
        repo.dirwalk(
            &index,
            None::<&str>,
            &AtomicBool::new(false),
            options,
            &mut found,
        )
        .context("could not list the ignored files of the main worktree")?;
        let main = self.main_worktree();
        let mut entries = Vec::with_capacity(found.0.len());
        for (rel, is_dir) in found.0 {
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(&rel));
            // gix does not enter an ignored directory: git lists no empty one.
            if is_dir && !holds_a_file(&main.join(&path), unreadable)? {
                continue;
            }
            entries.push((path, is_dir));
        }
        entries.sort();
        Ok(entries)
    }

    /// Which of the directories `dirs` (relative to the main worktree) its
    /// ignore rules ignore themselves (as `git check-ignore` answers, directory
    /// patterns included), as opposed to a directory whose contents alone are
    /// ignored.
    pub fn ignored_among(&self, dirs: &[PathBuf]) -> Result<HashSet<PathBuf>> {
        if dirs.is_empty() {
            return Ok(HashSet::new());
        }
        let repo = self.main_repo()?;
        let index = repo
            .index_or_empty()
            .context("could not read the index of the main worktree")?;
        let mut excludes = repo
            .excludes(
                &index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .context("could not load the ignore rules of the main worktree")?;
        let mut ignored = HashSet::new();
        for dir in dirs {
            let rela = gix::bstr::BStr::new(dir.as_os_str().as_bytes());
            let excluded = excludes
                .at_entry(rela, Some(gix::index::entry::Mode::DIR))
                .with_context(|| {
                    format!("could not match {} against the ignore rules", dir.display())
                })?
                .is_excluded();
            if excluded {
                ignored.insert(dir.clone());
            }
        }
        Ok(ignored)
    }

    /// The main worktree as gix opens it: the repository bullpen opened when
    /// that is where it runs, else its main repository, opened as it was.
    fn main_repo(&self) -> Result<std::borrow::Cow<'_, gix::Repository>> {
        let main = self.main_worktree();
        let here = self.repo.workdir().and_then(|w| w.canonicalize().ok());
        if here.as_deref() == Some(main) {
            return Ok(std::borrow::Cow::Borrowed(&self.repo));
        }
        super::special::refuse_special_git_files(main)?;
        let repo = self
            .repo
            .main_repo()
            .with_context(|| format!("could not open the main worktree {}", main.display()))?;
        Ok(std::borrow::Cow::Owned(repo))
    }
}

/// Whether the directory `dir` holds a file (of any kind but a directory) at
/// any depth, as git's `--no-empty-directory` asks.
/// A directory that cannot be listed for want of permission holds none, as
/// git's walk takes it (with a warning): it goes in `unreadable`.
fn holds_a_file(dir: &std::path::Path, unreadable: &mut Vec<PathBuf>) -> Result<bool> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let rd = match std::fs::read_dir(&at) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                unreadable.push(at);
                continue;
            }
            other => other.with_context(|| format!("could not list {}", at.display()))?,
        };
        for entry in rd {
            let entry = entry.with_context(|| format!("could not list {}", at.display()))?;
            let ft = entry
                .file_type()
                .with_context(|| format!("could not read {}", entry.path().display()))?;
            if !ft.is_dir() {
                return Ok(true);
            }
            stack.push(entry.path());
        }
    }
    Ok(false)
}

/// The walk's ignored entries: path, and whether a directory.
#[derive(Default)]
struct Ignored(Vec<(gix::bstr::BString, bool)>);

impl Delegate for Ignored {
    fn emit(&mut self, entry: EntryRef<'_>, _collapsed: Option<Status>) -> Action {
        if matches!(entry.status, Status::Ignored(_)) {
            let is_dir = matches!(entry.disk_kind, Some(Kind::Directory | Kind::Repository));
            self.0.push((entry.rela_path.into_owned(), is_dir));
        }
        std::ops::ControlFlow::Continue(())
    }
}
