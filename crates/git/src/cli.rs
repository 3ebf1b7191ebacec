//! The git CLI: the one runner every `git` subprocess goes through, and the
//! commands bullpen leaves to git itself (`worktree add/remove`, `fetch`; never
//! `worktree prune`, see `admin.rs`).

use std::path::Path;

use anyhow::{Context, Result};

use crate::model::error::GitFailed;

use super::{Oid, Repo};

/// How `git worktree remove` ended, classified by git's own words (its
/// messages in `builtin/worktree.c`, with `LC_ALL=C`). Each failure carries
/// the whole message, argv and git's stderr, to quote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorktreeRemoval {
    Removed,
    /// "'<path>' is not a working tree": its admin entry is already gone; git
    /// deleted nothing.
    NotAWorktree(String),
    /// "failed to delete '<path>'": git had checked the tree clean and begun
    /// deleting, and something (a late writer) stood in its way.
    Incomplete(String),
    /// "working trees containing submodules cannot be moved or removed": git
    /// never removes such a worktree; it deleted nothing.
    Submodules(String),
    /// git was killed part-way (after deleting `.git`, perhaps more).
    Died(String),
    /// Any other refusal (modified or untracked files, locked, validation
    /// failed, ...), or git could not be run: nothing was deleted.
    Refused(String),
}

/// `git <args>` as a message names it.
fn argv_of(args: &[&std::ffi::OsStr]) -> String {
    std::iter::once("git".to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Pure: the class of a failed `git worktree remove`, from its exit and stderr.
fn classify_remove(code: Option<i32>, stderr: &str, message: String) -> WorktreeRemoval {
    if code.is_none() {
        WorktreeRemoval::Died(message)
    } else if stderr.contains("working trees containing submodules cannot be moved or removed") {
        WorktreeRemoval::Submodules(message)
    } else if stderr.contains("' is not a working tree") {
        WorktreeRemoval::NotAWorktree(message)
    } else if stderr.contains("failed to delete '") {
        WorktreeRemoval::Incomplete(message)
    } else {
        WorktreeRemoval::Refused(message)
    }
}

impl Repo {
    /// `git -C <dir> <args>` through [`Repo::run_git_env`], with no extra environment.
    fn run_git(&self, dir: Option<&Path>, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>> {
        self.run_git_env(dir, args, &[])
    }

    /// `git -C <dir> <args>` through [`Repo::run_git_input`], stdin from /dev/null.
    pub(super) fn run_git_env(
        &self,
        dir: Option<&Path>,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<Vec<u8>> {
        self.run_git_input(dir, args, env, None)
    }

    /// The one place that runs the git CLI: `git -C <dir> <args>` with `LC_ALL=C`,
    /// plus `env` for the child, `input` on its stdin (else /dev/null) and output
    /// captured. Returns stdout; a failure names the argv and carries git's
    /// stderr. `dir` defaults to the main worktree. The repository git finds from
    /// `dir` is the one bullpen opened: git's repository variables (`GIT_DIR`,
    /// ...) left the environment when bullpen started (see `env.rs`).
    pub(super) fn run_git_input(
        &self,
        dir: Option<&Path>,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &std::ffi::OsStr)],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>> {
        let output = self.run_git_output(dir, args, env, input)?;
        if !output.status.success() {
            return Err(GitFailed {
                argv: argv_of(args),
                code: output.status.code(),
                stderr: String::from_utf8_lossy(&output.stderr)
                    .trim_end()
                    .to_owned(),
            }
            .into());
        }
        Ok(output.stdout)
    }

    /// The runner itself: `git -C <dir> <args>` with `LC_ALL=C`, plus `env` for
    /// the child, `input` on its stdin (else /dev/null), output captured, and
    /// how it ended, whatever it was (for `git push`, whose stdout says what
    /// happened to each ref also when it fails). An error only when git could
    /// not be run. `dir` defaults to the main worktree. The repository git finds
    /// from `dir` is the one bullpen opened: git's repository variables
    /// (`GIT_DIR`, ...) left the environment when bullpen started (see `env.rs`).
    pub(super) fn run_git_output(
        &self,
        dir: Option<&Path>,
        args: &[&std::ffi::OsStr],
        env: &[(&str, &std::ffi::OsStr)],
        input: Option<&[u8]>,
    ) -> Result<std::process::Output> {
        use std::io::Write;
        use std::process::Stdio;
        let dir = dir.unwrap_or(self.main_worktree());
        let argv = argv_of(args);
        let mut cmd = std::process::Command::new(&self.git);
        cmd.arg("-C").arg(dir);
        // What git would run from the configuration of where it runs (`pinned.rs`).
        let elsewhere = dir != self.main_worktree();
        for pin in super::pinned::ALWAYS
            .iter()
            .chain(super::pinned::ELSEWHERE.iter().filter(|_| elsewhere))
        {
            cmd.arg("-c").arg(pin);
        }
        cmd.args(args).env("LC_ALL", "C");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let cant_run = || format!("could not run `{argv}` ({})", self.git.display());
        let output = match input {
            None => cmd.stdin(Stdio::null()).output().with_context(cant_run)?,
            Some(input) => {
                let mut child = cmd
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .with_context(cant_run)?;
                let stdin = child.stdin.take();
                // Written on a thread: git may fill its stdout before it has read all.
                let written = std::thread::scope(|scope| {
                    let writer = scope.spawn(move || match stdin {
                        Some(mut stdin) => stdin.write_all(input),
                        None => Ok(()),
                    });
                    let output = child.wait_with_output();
                    (writer.join(), output)
                });
                match written {
                    (_, Err(e)) => return Err(anyhow::Error::new(e).context(cant_run())),
                    (Ok(Err(e)), _) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                        return Err(
                            anyhow::Error::new(e).context(format!("could not write to `{argv}`"))
                        )
                    }
                    (_, Ok(output)) => output,
                }
            }
        };
        Ok(output)
    }

    /// `git worktree add -b <branch> <path> <base>`: new branch and worktree at once.
    pub fn worktree_add_new_branch(&self, path: &Path, branch: &str, base: Oid) -> Result<()> {
        // Its checkout reads the ignore rules, blocking on a FIFO.
        self.refuse_special_rule_files(None)?;
        let base = base.to_string();
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                "-b".as_ref(),
                branch.as_ref(),
                path.as_os_str(),
                base.as_ref(),
            ],
        )
        .map(drop)
    }

    /// What [`Repo::worktree_add_new_branch`] makes, with one git process
    /// fewer: `-b` has git run `git branch <branch> <base>` in a process of its
    /// own, where here the branch is created in-process ([`Repo::create_branch`])
    /// and `git worktree add <path> <branch>` checks it out (hooks, sparse
    /// checkout, filters as ever). A repository with a `reference-transaction`
    /// hook, which would see `git branch` create the ref, gets `-b` itself. On
    /// a failure the branch may be left at `base`: the caller's undo removes it.
    pub fn worktree_add_branch_made_here(
        &self,
        path: &Path,
        branch: &str,
        base: Oid,
    ) -> Result<()> {
        if self.may_have_hook("reference-transaction") {
            return self.worktree_add_new_branch(path, branch, base);
        }
        self.create_branch(branch, base)?;
        self.worktree_add_existing(path, branch)
    }

    /// Whether git, run in the main worktree, may find the hook `name`
    /// (`core.hooksPath`, else `<common dir>/hooks`); `true` when it cannot tell.
    fn may_have_hook(&self, name: &str) -> bool {
        let config = self.repo.config_snapshot();
        let dir = match config.string("core.hooksPath") {
            None => self.common_dir.join("hooks"),
            Some(_) => match config.trusted_path("core.hooksPath") {
                Ok(Some(dir)) => self.main_worktree().join(dir),
                _ => return true,
            },
        };
        dir.join(name).symlink_metadata().is_ok()
    }

    /// `git worktree add --track -b <branch> <path> <upstream>`: a new branch at a
    /// remote-tracking branch, set up to track it (git writes the branch's
    /// `remote` and `merge` config), and its worktree.
    pub fn worktree_add_tracking(&self, path: &Path, branch: &str, upstream: &str) -> Result<()> {
        // Its checkout reads the ignore rules, blocking on a FIFO.
        self.refuse_special_rule_files(None)?;
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                "--track".as_ref(),
                "-b".as_ref(),
                branch.as_ref(),
                path.as_os_str(),
                upstream.as_ref(),
            ],
        )
        .map(drop)
    }

    /// [`Repo::remove_branch_config`] when the configuration read at start
    /// has a `branch.<branch>` section: no git runs for a branch without one
    /// (gc deletes hundreds; `git branch -d` takes the section too).
    pub fn remove_branch_config_if_any(&self, branch: &str) -> Result<()> {
        let config = self.repo.config_snapshot();
        let has = config
            .plumbing()
            .section("branch", Some(branch.into()))
            .is_ok();
        if has {
            self.remove_branch_config(branch)
        } else {
            Ok(())
        }
    }

    /// Remove the configuration of `branch` (`branch.<branch>.*` in the
    /// repository's own config: the upstream `git worktree add --track` wrote),
    /// for a branch that was just deleted; nothing when it has none.
    pub fn remove_branch_config(&self, branch: &str) -> Result<()> {
        let section = format!("branch.{branch}");
        let args: Vec<&std::ffi::OsStr> = ["config", "--local", "--remove-section", &section]
            .into_iter()
            .map(std::ffi::OsStr::new)
            .collect();
        let output = self.run_git_output(None, &args, &[], None)?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() || stderr.contains("no such section") {
            return Ok(());
        }
        Err(GitFailed {
            argv: argv_of(&args),
            code: output.status.code(),
            stderr: stderr.trim_end().to_owned(),
        }
        .into())
    }

    /// `git worktree add <path> <branch>`: a worktree for an existing branch.
    pub fn worktree_add_existing(&self, path: &Path, branch: &str) -> Result<()> {
        // Its checkout reads the ignore rules, blocking on a FIFO.
        self.refuse_special_rule_files(None)?;
        self.run_git(
            None,
            &[
                "worktree".as_ref(),
                "add".as_ref(),
                path.as_os_str(),
                branch.as_ref(),
            ],
        )
        .map(drop)
    }

    /// `git worktree remove <path>`, and how it ended. With `checked`,
    /// `--force` (once: a locked worktree is still refused): for a caller that
    /// has just, under its lock, checked the tree at least as strictly as git's
    /// own check would (`git status --porcelain --ignore-submodules=none`, the
    /// submodules), so that git does not run that status a second time.
    pub fn worktree_remove(&self, path: &Path, checked: bool) -> WorktreeRemoval {
        let mut args: Vec<&std::ffi::OsStr> = vec!["worktree".as_ref(), "remove".as_ref()];
        if checked {
            args.push("--force".as_ref());
        }
        args.push(path.as_os_str());
        match self.run_git(None, &args) {
            Ok(_) => WorktreeRemoval::Removed,
            Err(e) => {
                let message = format!("{e:#}");
                match e.downcast_ref::<GitFailed>() {
                    Some(f) => classify_remove(f.code, &f.stderr, message),
                    None => WorktreeRemoval::Refused(message),
                }
            }
        }
    }

    /// `git fetch --all --prune`.
    pub fn fetch_all(&self) -> Result<()> {
        self.run_git(
            None,
            &["fetch".as_ref(), "--all".as_ref(), "--prune".as_ref()],
        )
        .map(drop)
    }

    /// `git merge-tree --write-tree` for each `(base, ours, theirs)`, in one
    /// process (`--stdin`): the merged tree when the merge is clean, `None` when
    /// it conflicts. git writes what it merges into a temporary object directory
    /// (the repository's objects as its alternate), removed afterwards: a gc, dry
    /// run or not, leaves no object behind.
    pub fn merge_trees(&self, merges: &[(Oid, Oid, Oid)]) -> Result<Vec<Option<Oid>>> {
        if merges.is_empty() {
            return Ok(Vec::new());
        }
        let tmp = self.temp_dir_named("objects")?;
        let objects = self.common_dir.join("objects");
        let env = [
            ("GIT_OBJECT_DIRECTORY", tmp.as_os_str()),
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects.as_os_str()),
        ];
        let mut input = String::new();
        for (base, ours, theirs) in merges {
            input.push_str(&format!("{base} -- {ours} {theirs}\n"));
        }
        let result = self.run_git_input(
            None,
            &[
                "merge-tree".as_ref(),
                "--stdin".as_ref(),
                "--write-tree".as_ref(),
                "--no-messages".as_ref(),
                "--name-only".as_ref(),
            ],
            &env,
            Some(input.as_bytes()),
        );
        let _ = std::fs::remove_dir_all(&tmp);
        self.remove_temp_root();
        let out = result.context("could not ask git whether merging changes anything")?;
        parse_merge_tree(&out, merges.len())
    }

    /// `git gc --auto --quiet`: git's own housekeeping (packs loose objects once
    /// there are many). git runs it after commits and fetches; bullpen's record
    /// writes are in-process and never trigger it.
    pub fn gc_auto(&self) -> Result<()> {
        self.run_git(
            None,
            &["gc".as_ref(), "--auto".as_ref(), "--quiet".as_ref()],
        )
        .map(drop)
    }
}

/// `git merge-tree --stdin --write-tree --no-messages --name-only` output: per
/// merge, `<1 clean | 0 conflicts>\0<tree>\0`, the conflicted paths each
/// followed by `\0`, then `\0`.
fn parse_merge_tree(out: &[u8], n: usize) -> Result<Vec<Option<Oid>>> {
    let mut fields = out.split(|b| *b == 0);
    let mut results = Vec::with_capacity(n);
    let bad = || anyhow::anyhow!("git merge-tree printed what bullpen cannot read");
    for _ in 0..n {
        let status = fields.next().ok_or_else(bad)?;
        let tree = fields.next().ok_or_else(bad)?;
        let tree: Oid = std::str::from_utf8(tree)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(bad)?;
        // The conflicted paths, up to the empty field that ends them.
        for f in fields.by_ref() {
            if f.is_empty() {
                break;
            }
        }
        results.push(match status {
            b"1" => Some(tree),
            b"0" => None,
            _ => return Err(bad()),
        });
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_merge_tree_output() {
        let t1 = "1111111111111111111111111111111111111111";
        let t2 = "2222222222222222222222222222222222222222";
        let out = format!("1\0{t1}\0\00\0{t2}\0f\0g/h\0\0");
        let got = parse_merge_tree(out.as_bytes(), 2).unwrap();
        assert_eq!(got, vec![Some(t1.parse().unwrap()), None]);
        assert!(parse_merge_tree(b"1\0xyz\0\0", 1).is_err());
    }

    /// git's own messages (builtin/worktree.c), as `git worktree remove` prints them.
    #[test]
    fn classifies_git_worktree_remove_by_its_words() {
        let cases = [
            (Some(128), "fatal: '/w/x' is not a working tree", "NotAWorktree"),
            (
                Some(128),
                "fatal: working trees containing submodules cannot be moved or removed",
                "Submodules",
            ),
            (
                Some(255),
                "error: failed to delete '/w/x': Directory not empty",
                "Incomplete",
            ),
            (
                Some(128),
                "fatal: '/w/x' contains modified or untracked files, use --force to delete it",
                "Refused",
            ),
            (
                Some(128),
                "fatal: cannot remove a locked working tree;\nuse 'remove -f -f' to override or unlock first",
                "Refused",
            ),
            (
                Some(128),
                "fatal: validation failed, cannot remove working tree: '/w/x/.git' does not exist",
                "Refused",
            ),
            (Some(128), "fatal: injected", "Refused"),
            (None, "", "Died"),
        ];
        for (code, stderr, want) in cases {
            let got = classify_remove(code, stderr, stderr.to_owned());
            let name = match got {
                WorktreeRemoval::Removed => "Removed",
                WorktreeRemoval::NotAWorktree(_) => "NotAWorktree",
                WorktreeRemoval::Incomplete(_) => "Incomplete",
                WorktreeRemoval::Submodules(_) => "Submodules",
                WorktreeRemoval::Died(_) => "Died",
                WorktreeRemoval::Refused(_) => "Refused",
            };
            assert_eq!(name, want, "{stderr}");
        }
    }
}
