//! Worktrees as git registers them: the admin dirs, their HEADs, what a path or a
//! `.git` entry is from this repository's point of view.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{canonical_or_self, common_dir_of, DotGit, PathRepo, Repo, Worktree};

impl Repo {
    /// All registered worktrees, the main one first (in a bare repository, the
    /// repository itself, as `git worktree list` shows it).
    pub fn worktrees(&self) -> Result<Vec<Worktree>> {
        let mut out = vec![Worktree {
            path: self.main_worktree().to_path_buf(),
            admin_id: None,
            head_ref: read_head_ref(&self.common_dir),
            locked: false,
            exists: self.main_worktree().is_dir(),
        }];
        let admin_root = self.common_dir.join("worktrees");
        let entries = match std::fs::read_dir(&admin_root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(err) => {
                return Err(anyhow::Error::new(err)
                    .context(format!("could not list {}", admin_root.display())))
            }
        };
        let mut linked = Vec::new();
        for entry in entries {
            let entry =
                entry.with_context(|| format!("could not list {}", admin_root.display()))?;
            let admin_dir = entry.path();
            if !admin_dir.is_dir() {
                continue;
            }
            let Some(path) = registered_path(&admin_dir)? else {
                continue; // not a worktree admin entry (no `gitdir` file), like git
            };
            let id = entry.file_name().to_string_lossy().into_owned();
            linked.push(Worktree {
                exists: path.is_dir(),
                path,
                admin_id: Some(id),
                head_ref: read_head_ref(&admin_dir),
                locked: admin_dir.join("locked").exists(),
            });
        }
        linked.sort_by(|a, b| a.admin_id.cmp(&b.admin_id));
        out.extend(linked);
        Ok(out)
    }

    /// The one linked worktree registered as `<common>/worktrees/<admin_id>`,
    /// read without listing the others; `None` when there is no such entry.
    pub fn worktree_entry(&self, admin_id: &str) -> Result<Option<Worktree>> {
        if admin_id.is_empty() || admin_id.contains('/') || admin_id == "." || admin_id == ".." {
            return Ok(None);
        }
        let admin_dir = self.common_dir.join("worktrees").join(admin_id);
        if !admin_dir.is_dir() {
            return Ok(None);
        }
        let Some(path) = registered_path(&admin_dir)? else {
            return Ok(None);
        };
        Ok(Some(Worktree {
            exists: path.is_dir(),
            path,
            admin_id: Some(admin_id.to_owned()),
            head_ref: read_head_ref(&admin_dir),
            locked: admin_dir.join("locked").exists(),
        }))
    }

    /// What is at `path`: the top level of one of our worktrees, another repo, or none.
    pub fn inspect_path(&self, path: &Path) -> Result<PathRepo> {
        let canonical = std::fs::canonicalize(path)
            .with_context(|| format!("could not resolve {}", path.display()))?;
        if self.main_worktree.as_deref() == Some(canonical.as_path()) {
            return Ok(PathRepo::OurWorktree {
                head_ref: read_head_ref(&self.common_dir),
            });
        }
        for wt in self.worktrees()?.into_iter().skip(1) {
            let Ok(wt_canonical) = std::fs::canonicalize(&wt.path) else {
                continue;
            };
            if wt_canonical != canonical {
                continue;
            }
            // Registered here; make sure its `.git` file really points into our common dir.
            if let DotGit::Ours {
                admin_id,
                admin_exists: true,
            } = self.dot_git(&canonical)
            {
                return Ok(PathRepo::OurWorktree {
                    head_ref: read_head_ref(&self.common_dir.join("worktrees").join(admin_id)),
                });
            }
        }

        let (found, _trust) = match gix::discover::upwards(&canonical) {
            Ok(found) => found,
            Err(err) => {
                if let Some(err) = err.downcast_any_ref::<gix::discover::upwards::Error>() {
                    return Ok(match err {
                        gix::discover::upwards::Error::NoTrustedGitRepository {
                            candidate, ..
                        } => PathRepo::Other {
                            description: format!(
                                "inside an untrusted git repository ({})",
                                candidate.display()
                            ),
                        },
                        _ => PathRepo::None,
                    });
                }
                if err.is_not_found() {
                    return Ok(PathRepo::None);
                }
                return Err(anyhow::Error::new(err).context(format!(
                    "could not look for a git repository at {}",
                    canonical.display()
                )));
            }
        };
        let (git_dir, work_dir) = found.into_repository_and_work_tree_directories();
        let common = canonical_or_self(&common_dir_of(&git_dir));
        let top = work_dir.map(|w| canonical_or_self(&w));
        let ours = common == self.common_dir;
        let description = match (&top, ours) {
            (Some(top), true) if *top == canonical => {
                format!(
                    "a worktree of this repository that is not registered ({})",
                    common.display()
                )
            }
            (Some(top), true) => format!("a subdirectory of {}", top.display()),
            (Some(top), false) if *top == canonical => {
                format!("a worktree of another repository ({})", common.display())
            }
            (Some(top), false) => format!(
                "a subdirectory of {} (a worktree of another repository, {})",
                top.display(),
                common.display()
            ),
            (None, true) => format!(
                "inside the git directory of this repository ({})",
                common.display()
            ),
            (None, false) => format!(
                "a git repository without a working tree ({})",
                common.display()
            ),
        };
        Ok(PathRepo::Other { description })
    }

    /// Read the `.git` entry at the top of `dir` (without following a `.git` symlink).
    pub fn dot_git(&self, dir: &Path) -> DotGit {
        let dot_git = dir.join(".git");
        let meta = match dot_git.symlink_metadata() {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return DotGit::Absent,
            Err(err) => {
                return DotGit::Foreign {
                    description: format!("cannot read {}: {err}", dot_git.display()),
                }
            }
        };
        if meta.is_dir() {
            return DotGit::Directory;
        }
        if !meta.is_file() {
            return DotGit::Foreign {
                description: format!("{} is not a file", dot_git.display()),
            };
        }
        let Some(target) = dot_git_file_target(dir) else {
            return DotGit::Foreign {
                description: format!("{} is not a `gitdir:` file", dot_git.display()),
            };
        };
        let target = crate::model::paths::normalize(&target);
        let admin_root = self.common_dir.join("worktrees");
        // The common dir is canonical; the target's parent may be spelled through a
        // symlink, so compare canonical parents when they exist.
        let parent = target.parent().map(canonical_or_self);
        match (parent, target.file_name()) {
            (Some(parent), Some(name)) if parent == admin_root => DotGit::Ours {
                admin_id: name.to_string_lossy().into_owned(),
                admin_exists: target.is_dir(),
            },
            _ => DotGit::Foreign {
                description: format!("its .git file points at {}", target.display()),
            },
        }
    }
}

/// Where the `.git` file at the top of a (linked) worktree points, if it is one.
pub(super) fn dot_git_file_target(worktree: &Path) -> Option<PathBuf> {
    let content = crate::sys::regular::read(&worktree.join(".git")).ok()??;
    let target = path_from_bytes(gitfile_target(&content)?);
    Some(if target.is_absolute() {
        target
    } else {
        worktree.join(target)
    })
}

/// The path a `.git` file names, read as git reads it (`read_gitfile_gently` in
/// git's setup.c): the whole content must start with `gitdir: `, trailing `\n` and
/// `\r` are stripped, and everything else, a newline inside a path included, is
/// the path. `None` when it is not such a file.
pub(super) fn gitfile_target(content: &[u8]) -> Option<&[u8]> {
    let rest = content.strip_prefix(b"gitdir: ")?;
    let end = rest
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r'))
        .map_or(0, |i| i + 1);
    let target = &rest[..end];
    (!target.is_empty()).then_some(target)
}

/// The path in an admin entry's `gitdir` file, read as git reads it
/// (`get_linked_worktree` in git's worktree.c): the whole content with trailing
/// whitespace (git's `isspace`: space, tab, `\n`, `\r`) trimmed. `None` when
/// nothing is left.
pub(super) fn plain_path_file(content: &[u8]) -> Option<&[u8]> {
    let end = content
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .map_or(0, |i| i + 1);
    let path = &content[..end];
    (!path.is_empty()).then_some(path)
}

/// Bytes from a git file as a path (paths are bytes on unix, not UTF-8).
pub(super) fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// The worktree path registered in a `<common>/worktrees/<id>` admin dir, from
/// its `gitdir` file (which names the worktree's `.git` file); `None` without one
/// (or with an empty one: git does not count that as a worktree either).
pub(super) fn registered_path(admin_dir: &Path) -> Result<Option<PathBuf>> {
    let gitdir_file = admin_dir.join("gitdir");
    // Never blocking on a FIFO there: what is no regular file is no gitdir.
    let content = match crate::sys::regular::read(&gitdir_file) {
        Ok(Some(content)) => content,
        Ok(None) => return Ok(None),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(anyhow::Error::new(err)
                .context(format!("could not read {}", gitdir_file.display())))
        }
    };
    let Some(dot_git) = plain_path_file(&content).map(path_from_bytes) else {
        return Ok(None);
    };
    let dot_git = if dot_git.is_absolute() {
        dot_git
    } else {
        admin_dir.join(dot_git)
    };
    let path = if dot_git.file_name() == Some(std::ffi::OsStr::new(".git")) {
        dot_git.parent().map(Path::to_path_buf).unwrap_or(dot_git)
    } else {
        dot_git
    };
    Ok(Some(path))
}

/// The branch a HEAD file (in a git dir or worktree admin dir) points at:
/// `Some("refs/heads/x")` for `ref: refs/heads/x`, `None` when detached or unreadable.
fn read_head_ref(git_dir: &Path) -> Option<String> {
    let content = crate::sys::regular::read(&git_dir.join("HEAD")).ok()??;
    let content = String::from_utf8(content).ok()?;
    let target = content.trim_end().strip_prefix("ref:")?.trim();
    (!target.is_empty()).then(|| target.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gitfile_is_read_whole_as_git_reads_it() {
        let t = |c: &[u8]| gitfile_target(c).map(<[u8]>::to_vec);
        assert_eq!(t(b"gitdir: /a/b\n"), Some(b"/a/b".to_vec()));
        assert_eq!(t(b"gitdir: /a/b\r\n\n"), Some(b"/a/b".to_vec()));
        // A newline inside the path is part of it.
        assert_eq!(
            t(b"gitdir: /tmp/re\npo/.git/worktrees/x\n"),
            Some(b"/tmp/re\npo/.git/worktrees/x".to_vec())
        );
        // Trailing spaces are the path's own (git strips only \n and \r).
        assert_eq!(t(b"gitdir: /a/b \n"), Some(b"/a/b ".to_vec()));
        assert_eq!(t(b"gitdir:/a/b\n"), None);
        assert_eq!(t(b" gitdir: /a/b\n"), None);
        assert_eq!(t(b"gitdir: \n"), None);
        assert_eq!(t(b""), None);
    }

    #[test]
    fn an_admin_gitdir_file_is_read_whole_with_trailing_whitespace_trimmed() {
        let t = |c: &[u8]| plain_path_file(c).map(<[u8]>::to_vec);
        assert_eq!(t(b"/w/x/.git\n"), Some(b"/w/x/.git".to_vec()));
        assert_eq!(t(b"/w/x/.git \t\r\n"), Some(b"/w/x/.git".to_vec()));
        assert_eq!(t(b"/w/a\nb/.git\n"), Some(b"/w/a\nb/.git".to_vec()));
        assert_eq!(t(b" \n"), None);
        assert_eq!(t(b""), None);
    }
}
