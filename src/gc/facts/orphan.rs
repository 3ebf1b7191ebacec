//! The facts of a directory in the worktree root that no session claims.

use super::*;

pub(crate) fn orphan_facts(ctx: &Ctx, path: &Path, scan: &Scan) -> OrphanFacts {
    let contents = match ctx.repo.dot_git(path) {
        DotGit::Directory => Contents::Repository,
        dot_git => match count_files(path) {
            Ok(0) => Contents::NoWork {
                dot_git: link(dot_git),
            },
            Ok(n) => Contents::Files(n),
            Err(e) => Contents::Unreadable(e),
        },
    };
    OrphanFacts {
        path: path.to_string_lossy().into_owned(),
        contents,
        busy: scan.busy(path),
    }
}

/// Files and symlinks under `dir` (never following symlinks), not counting a
/// top-level `.git` file. Stops counting at a cap: any count is "has work".
fn count_files(dir: &Path) -> std::result::Result<usize, String> {
    const CAP: usize = 10_000;
    let mut n = 0;
    let mut stack = vec![(dir.to_path_buf(), true)];
    while let Some((d, top)) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| format!("cannot list {}: {e}", d.display()))?;
        for entry in rd {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", d.display()))?;
            let ft = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", entry.path().display()))?;
            if ft.is_dir() {
                stack.push((entry.path(), false));
            } else if !(top && entry.file_name() == ".git" && ft.is_file()) {
                n += 1;
                if n >= CAP {
                    return Ok(n);
                }
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_files_but_not_the_top_dot_git_file() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join(".git"), "gitdir: /nowhere\n").unwrap();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        assert_eq!(count_files(d).unwrap(), 0);
        std::fs::write(d.join("a/b/.git"), "x").unwrap();
        assert_eq!(count_files(d).unwrap(), 1);
        std::os::unix::fs::symlink("/etc", d.join("l")).unwrap();
        assert_eq!(count_files(d).unwrap(), 2);
    }
}
