//! `.worktreeinclude`: the ignored files of the main worktree that a new
//! worktree gets a copy of (`.env`, `.envrc`, local config). gitignore syntax
//! (the `ignore` crate's matcher), read from the top of the main worktree.
//!
//! Only what git calls ignored there is a candidate (what `git ls-files
//! --others --ignored --exclude-standard --directory` lists, found in-process
//! by `git::Repo::ignored_entries`, which never opens a FIFO named
//! `.gitignore`: never a tracked file; a directory git ignores itself is one
//! entry, copied whole when it matches; see `candidates`). Nothing outside the
//! worktrees: a pattern with a `..` component is refused before anything is
//! created, a path through a symbolic link (in the main worktree or the new
//! one) is not followed, a symbolic link is not copied, and an existing file
//! in the new worktree is never overwritten.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::context::Ctx;
use crate::model::command::quoted;
use crate::model::local::{Included, IncludedFile, LOCAL_SCHEMA};
use crate::model::{config, Error, SessionId};
use crate::sys::copy::{self, Skipped};
use crate::trust::local::Local;

/// The patterns of the main worktree's `.worktreeinclude`.
pub struct Include {
    matcher: Gitignore,
    /// The main worktree: where the files come from.
    main: PathBuf,
}

impl Include {
    /// Read the main worktree's `.worktreeinclude` (`None` without one). A
    /// pattern that would reach outside the worktree, or one that is not valid
    /// gitignore syntax, is refused, naming its line.
    pub fn load(ctx: &Ctx) -> Result<Option<Include>> {
        let main = ctx.repo.main_worktree().to_path_buf();
        let path = main.join(config::WORKTREE_INCLUDE);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
            Ok(m) if !m.is_file() => {
                return Err(Error::refused(format!(
                    "{} is not a regular file (a symbolic link?); bullpen reads it only as one",
                    path.display()
                ))
                .into())
            }
            Ok(_) => {}
        }
        // Read without blocking: what took its place since is not read.
        let text = crate::sys::regular::read(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .map(String::from_utf8)
            .transpose()
            .with_context(|| format!("cannot read {}: not UTF-8", path.display()))?
            .unwrap_or_default();
        let mut builder = GitignoreBuilder::new(&main);
        for (i, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", path.display(), i + 1);
            if reaches_outside(line) {
                return Err(Error::refused(format!(
                    "{}: the pattern {} reaches outside the worktree; nothing was created",
                    at(),
                    quoted(line)
                ))
                .hint(
                    "patterns in .worktreeinclude name files inside the main worktree \
                     (gitignore syntax, relative to its top); remove the `..`",
                )
                .into());
            }
            builder.add_line(None, line).map_err(|e| {
                Error::failed(format!("{}: invalid pattern {}: {e}", at(), quoted(line)))
            })?;
        }
        let matcher = builder
            .build()
            .with_context(|| format!("cannot read the patterns of {}", path.display()))?;
        Ok(Some(Include { matcher, main }))
    }

    /// Copy what it names, of the main worktree's ignored files, into the new
    /// worktree `worktree` of session `id`, and remember each file copied
    /// (`included.json` of its local state: gc keeps a copy edited since).
    /// Says what was copied and what was left out.
    pub fn copy_into(&self, ctx: &Ctx, id: &SessionId, worktree: &Path) -> Result<()> {
        let entries = self.candidates(ctx)?;
        let mut copied = Vec::new();
        let mut copied_files = Vec::new();
        let mut files = 0;
        let mut skipped = Vec::new();
        for (rel, _) in entries {
            let skip = |why| Skipped {
                path: rel.clone(),
                why,
            };
            if !copy::is_plain_relative(&rel) {
                skipped.push(skip("its path is not inside the worktree"));
                continue;
            }
            let src = self.main.join(&rel);
            let dst = worktree.join(&rel);
            if !copy::real_dirs_to(&self.main, &rel, false)
                .with_context(|| format!("cannot inspect {}", src.display()))?
            {
                skipped.push(skip("a directory on its way is a symbolic link"));
                continue;
            }
            if !copy::real_dirs_to(worktree, &rel, true)
                .with_context(|| format!("cannot create the directories of {}", dst.display()))?
            {
                skipped.push(skip(
                    "a directory on its way in the new worktree is not one",
                ));
                continue;
            }
            let n = copy::copy_entry(&src, &dst, &rel, &mut skipped, &mut copied_files)
                .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
            if n > 0 {
                files += n;
                copied.push(rel.display().to_string());
            }
        }
        remember(ctx, id, worktree, &copied_files)?;
        for s in &skipped {
            ctx.ui.warn(format!(
                "{}: not copying {}: {}",
                config::WORKTREE_INCLUDE,
                quoted(&s.path.display().to_string()),
                s.why
            ));
        }
        if !copied.is_empty() {
            let mut shown = copied
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if copied.len() > 5 {
                shown.push_str(&format!(" and {} more", copied.len() - 5));
            }
            ctx.ui.info(format!(
                "copied from the main worktree ({}): {shown} ({files} file{})",
                config::WORKTREE_INCLUDE,
                if files == 1 { "" } else { "s" }
            ));
        }
        Ok(())
    }
}

impl Include {
    fn matches(&self, rel: &Path, is_dir: bool) -> bool {
        self.matcher
            .matched_path_or_any_parents(rel, is_dir)
            .is_ignore()
    }

    /// The ignored entries of the main worktree that match. git lists an
    /// ignored directory as one entry, and so also a directory whose contents
    /// alone are all ignored (`conf/` holding only an ignored `conf/local.yml`):
    /// a directory that does not match is looked into unless git's rules
    /// ignore it itself (`target/`, `node_modules/`: one entry, as in git).
    fn candidates(&self, ctx: &Ctx) -> Result<Vec<(PathBuf, bool)>> {
        let mut unreadable = Vec::new();
        let mut todo = ctx
            .repo
            .ignored_entries(&mut unreadable)
            .context("cannot list the ignored files of the main worktree")?;
        for dir in unreadable {
            ctx.ui.warn(format!(
                "{}: not copying {}: could not open the directory (permission denied)",
                config::WORKTREE_INCLUDE,
                quoted(&dir.display().to_string())
            ));
        }
        let mut found = Vec::new();
        while !todo.is_empty() {
            let mut look_into = Vec::new();
            for (rel, is_dir) in todo.drain(..) {
                if self.matches(&rel, is_dir) {
                    found.push((rel, is_dir));
                } else if is_dir && copy::is_plain_relative(&rel) {
                    look_into.push(rel);
                }
            }
            let ignored = ctx
                .repo
                .ignored_among(&look_into)
                .context("cannot ask which directories the ignore rules ignore")?;
            for dir in look_into.into_iter().filter(|d| !ignored.contains(d)) {
                let full = self.main.join(&dir);
                if !copy::real_dirs_to(&self.main, &dir.join("x"), false)
                    .with_context(|| format!("cannot inspect {}", full.display()))?
                {
                    continue;
                }
                let children = std::fs::read_dir(&full)
                    .with_context(|| format!("cannot read {}", full.display()))?;
                for child in children {
                    let child = child.with_context(|| format!("cannot read {}", full.display()))?;
                    let is_dir = child.file_type().is_ok_and(|t| t.is_dir());
                    todo.push((dir.join(child.file_name()), is_dir));
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

/// Write down what was copied, as it is in the new worktree now. A file that
/// cannot be read back, or a path that is not UTF-8, is left out (it counts as
/// any ignored file).
fn remember(ctx: &Ctx, id: &SessionId, worktree: &Path, copied: &[PathBuf]) -> Result<()> {
    if copied.is_empty() {
        return Ok(());
    }
    let mut files = Vec::with_capacity(copied.len());
    for rel in copied {
        let Some(path) = rel.to_str() else { continue };
        let full = worktree.join(rel);
        let meta = std::fs::symlink_metadata(&full)
            .with_context(|| format!("cannot inspect {}", full.display()))?;
        let Some(blob) = ctx.repo.hash_file(&full)? else {
            continue;
        };
        files.push(IncludedFile {
            path: path.to_owned(),
            blob: blob.to_string(),
            size: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            ctime: Some((meta.ctime(), meta.ctime_nsec())),
            ino: Some(meta.ino()),
        });
    }
    Local::of(&ctx.layout, id)
        .write_included(&Included {
            schema: LOCAL_SCHEMA,
            files,
        })
        .with_context(|| {
            format!(
                "cannot remember what was copied into {}",
                worktree.display()
            )
        })
}

/// Pure: whether a line of `.worktreeinclude` names a path outside the
/// worktree: a pattern (negated or not) with a `..` component.
pub fn reaches_outside(line: &str) -> bool {
    let pattern = line.trim();
    if pattern.is_empty() || pattern.starts_with('#') {
        return false;
    }
    let pattern = pattern.strip_prefix('!').unwrap_or(pattern);
    pattern.split('/').any(|c| c == "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_with_a_parent_component_reaches_outside() {
        for outside in [
            "../secrets",
            "a/../../b",
            "!../x",
            "  ../x  ",
            "/..",
            "x/..",
        ] {
            assert!(reaches_outside(outside), "{outside}");
        }
        for inside in [
            ".env",
            "/.env",
            "config/*.local",
            "**/.envrc",
            "# ../comment",
            "",
            "..x",
            "a..b",
        ] {
            assert!(!reaches_outside(inside), "{inside}");
        }
    }
}
