//! What `git status` does not show: `.gitignore` files outside the index that
//! hide files, caches among the ignored directories, and skip-worktree or
//! assume-unchanged entries whose file differs from the index.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::Hiding;

/// Of `ignored` (worktree-relative paths, with whether each is a directory), those
/// whose ignoring comes from one of `gitignores` (`.gitignore` files that are not
/// in the index), counted per `.gitignore`, the file itself not counted.
pub(super) fn hidden_by(
    repo: &gix::Repository,
    index: &gix::index::State,
    gitignores: &[gix::bstr::BString],
    ignored: &[(gix::bstr::BString, bool)],
) -> Result<Vec<Hiding>> {
    use gix::bstr::ByteSlice;
    let Some(workdir) = repo.workdir() else {
        return Ok(Vec::new());
    };
    let mut stack = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .context("could not load the ignore rules")?;
    let mut counts = vec![0usize; gitignores.len()];
    for (path, is_dir) in ignored {
        let mode = is_dir.then_some(gix::index::entry::Mode::DIR);
        let platform = stack
            .at_entry(path.as_bstr(), mode)
            .with_context(|| format!("could not match {path} against the ignore rules"))?;
        let Some(source) = platform
            .matching_exclude_pattern()
            .and_then(|m| m.source)
            .and_then(|src| src.strip_prefix(workdir).ok())
            .map(|src| src.as_os_str().as_bytes())
        else {
            continue;
        };
        let Some(i) = gitignores.iter().position(|g| g.as_slice() == source) else {
            continue;
        };
        if gitignores[i] == *path {
            continue;
        }
        counts[i] += if *is_dir {
            let dir = workdir.join(std::ffi::OsStr::from_bytes(path));
            count_files(&dir)?
        } else {
            1
        };
    }
    let gitignores: Vec<&[u8]> = gitignores.iter().map(|g| g.as_slice()).collect();
    Ok(hidings(&gitignores, counts))
}

/// A `.gitignore` by its path (relative to the worktree).
pub(super) fn is_gitignore(path: &[u8]) -> bool {
    path == b".gitignore" || path.ends_with(b"/.gitignore")
}

/// `bullpen.gc.disposable`: every value, an empty one clearing those before it.
pub(super) fn disposable_patterns(repo: &gix::Repository) -> Vec<gix::bstr::BString> {
    let values = repo
        .config_snapshot()
        .plumbing()
        .strings(crate::model::config::GC_DISPOSABLE)
        .unwrap_or_default();
    let mut out = Vec::new();
    for v in values {
        if v.is_empty() {
            out.clear();
        } else {
            out.push(v);
        }
    }
    out
}

/// Of `hiding` (in the worktree `top`), what stays work, and the directories
/// that announce themselves as caches (sorted): a `CACHEDIR.TAG` beginning with
/// its signature, a `pyvenv.cfg` at its top, or a `bullpen.gc.disposable`
/// pattern (`patterns`) matching it. A `.gitignore` at the top is never a cache's.
pub(super) fn split_caches(
    top: &Path,
    hiding: Vec<Hiding>,
    patterns: &[gix::bstr::BString],
) -> (Vec<Hiding>, Vec<String>) {
    use crate::model::status::{is_cache, CacheSigns, CACHEDIR_SIGNATURE};
    let mut work = Vec::new();
    let mut caches = Vec::new();
    for h in hiding {
        let rel = h.dir.trim_end_matches('/');
        if rel.is_empty() {
            work.push(h);
            continue;
        }
        let dir = top.join(rel);
        let tag = read_start(&dir.join("CACHEDIR.TAG"), CACHEDIR_SIGNATURE.len());
        let signs = CacheSigns {
            tag: tag.as_deref(),
            pyvenv: dir
                .join("pyvenv.cfg")
                .symlink_metadata()
                .is_ok_and(|m| m.is_file()),
            configured: patterns.iter().any(|p| pattern_matches(p, rel)),
        };
        if is_cache(signs) {
            caches.push(h.dir);
        } else {
            work.push(h);
        }
    }
    caches.sort();
    (work, caches)
}

/// The first `n` bytes (or fewer) of the regular file at `path`; `None` when
/// it is not one or cannot be read (then it says nothing).
fn read_start(path: &Path, n: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    if !path.symlink_metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::with_capacity(n);
    std::fs::File::open(path)
        .ok()?
        .take(n as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// A `bullpen.gc.disposable` pattern against a directory's worktree-relative
/// path (`rel`, no trailing `/`): one without a `/` matches its name, one
/// with a `/` its whole path (`*` not crossing a `/`, `**` crossing them).
fn pattern_matches(pattern: &gix::bstr::BString, rel: &str) -> bool {
    use gix::bstr::ByteSlice;
    use gix::glob::wildmatch::Mode;
    let pattern = pattern.trim_with(|c| c == '/' || c.is_whitespace());
    if pattern.contains(&b'/') {
        gix::glob::wildmatch(
            pattern.as_bstr(),
            rel.as_bytes().as_bstr(),
            Mode::NO_MATCH_SLASH_LITERAL,
        )
    } else {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        gix::glob::wildmatch(pattern.as_bstr(), name.as_bytes().as_bstr(), Mode::empty())
    }
}

/// The `.gitignore` files (worktree-relative) that hide files, with how many.
pub(super) fn hidings(gitignores: &[&[u8]], counts: Vec<usize>) -> Vec<Hiding> {
    gitignores
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(g, files)| {
            let g = String::from_utf8_lossy(g);
            let dir = g.strip_suffix(".gitignore").unwrap_or(&g).to_owned();
            Hiding { dir, files }
        })
        .collect()
}

/// Files and symlinks under `dir`, never following symlinks; stops at a cap.
pub(super) fn count_files(dir: &Path) -> Result<usize> {
    const CAP: usize = 10_000;
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd =
            std::fs::read_dir(&d).with_context(|| format!("could not list {}", d.display()))?;
        for entry in rd {
            let entry = entry.with_context(|| format!("could not list {}", d.display()))?;
            let ft = entry
                .file_type()
                .with_context(|| format!("could not read {}", entry.path().display()))?;
            if ft.is_dir() {
                stack.push(entry.path());
            } else {
                n += 1;
                if n >= CAP {
                    return Ok(n);
                }
            }
        }
    }
    Ok(n)
}

/// Index entries marked skip-worktree or assume-unchanged (which status does not
/// look at) whose file is there and differs from the index: its blob id, after
/// the clean filters, is not the entry's (or its type changed). A missing file is
/// no change of content (sparse checkouts leave them out).
pub(super) fn unseen_changes(repo: &gix::Repository, index: &gix::index::State) -> Result<usize> {
    use gix::index::entry::{Flags, Mode};
    use std::io::Read;
    use std::os::unix::ffi::OsStringExt;
    let flagged: Vec<&gix::index::Entry> = index
        .entries()
        .iter()
        .filter(|e| {
            e.flags
                .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
        })
        .filter(|e| e.mode != Mode::COMMIT)
        .collect();
    let Some(workdir) = repo.workdir().filter(|_| !flagged.is_empty()) else {
        return Ok(0);
    };
    let (mut pipeline, _) = repo
        .filter_pipeline(None)
        .context("could not set up the clean filters")?;
    let mut changed = 0;
    for e in flagged {
        let rela = e.path(index);
        let rela_path = Path::new(std::ffi::OsStr::from_bytes(rela));
        let path = workdir.join(rela_path);
        let meta = match path.symlink_metadata() {
            Ok(m) => m,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => {
                return Err(anyhow::Error::new(err)
                    .context(format!("could not look at {}", path.display())))
            }
        };
        let data = if meta.file_type().is_symlink() && e.mode == Mode::SYMLINK {
            let target = std::fs::read_link(&path)
                .with_context(|| format!("could not read the symlink {}", path.display()))?;
            target.into_os_string().into_vec()
        } else if meta.is_file() && e.mode != Mode::SYMLINK {
            let file = std::fs::File::open(&path)
                .with_context(|| format!("could not open {}", path.display()))?;
            let mut buf = Vec::new();
            use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
            match pipeline
                .convert_to_git(file, rela_path, index)
                .with_context(|| format!("could not clean {}", path.display()))?
            {
                ToGitOutcome::Unchanged(mut r) => {
                    r.read_to_end(&mut buf)
                        .with_context(|| format!("could not read {}", path.display()))?;
                }
                ToGitOutcome::Process(mut r) => {
                    r.read_to_end(&mut buf)
                        .with_context(|| format!("could not clean {}", path.display()))?;
                }
                ToGitOutcome::Buffer(b) => buf.extend_from_slice(b),
            }
            buf
        } else {
            changed += 1; // a file became a directory, a symlink a file, ...
            continue;
        };
        let id = gix::objs::compute_hash(repo.object_hash(), gix::object::Kind::Blob, &data)
            .with_context(|| format!("could not hash {}", path.display()))?;
        if id != e.id {
            changed += 1;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::pattern_matches;

    #[test]
    fn disposable_patterns_match_names_or_paths() {
        let m = |p: &str, rel: &str| pattern_matches(&p.into(), rel);
        assert!(m("tool", "tool"));
        assert!(m("tool", "a/b/tool"));
        assert!(m(".tox/", "x/.tox"));
        assert!(m("*_cache", "a/.mypy_cache"));
        assert!(!m("tool", "tools"));
        assert!(m("build/out", "build/out"));
        assert!(!m("build/out", "a/build/out"));
        assert!(!m("a/*", "a/b/c"));
        assert!(m("**/out", "a/b/out"));
    }
}
