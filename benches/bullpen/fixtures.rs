//! Fixture repositories, built once per run inside the hermetic temp dir.
//!
//! Sessions are made by the real binary (`git bullpen spawn <id> -- git commit
//! --allow-empty ...`), not by plumbing: every record, branch, worktree and note
//! is exactly what a user's spawns would leave. The scale fixture grows in place
//! (10 -> 100 -> ... sessions) so that each spawn happens once per run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::env::{run_ok, Env};

/// A repository with one commit on `main`, pushed to a bare `origin`.
pub struct Repo {
    pub dir: PathBuf,
    /// Where this fixture's plain `git worktree add` baselines put their worktrees.
    pub git_wt_root: PathBuf,
}

impl Repo {
    /// `files` == 0: a small repository (one README). Otherwise `files` files in
    /// nested directories (20 x 20 x files/400), like a mid-sized source tree.
    pub fn create(env: &Env, name: &str, files: usize) -> Repo {
        let base = env.root.join(name);
        let dir = base.join("repo");
        let bare = base.join("origin.git");
        std::fs::create_dir_all(&dir).expect("mkdir");
        run_ok(&mut env.git(&dir, &["init", "-q", "-b", "main"]));
        std::fs::write(dir.join("README"), format!("fixture {name}\n")).expect("write");
        if files > 0 {
            write_tree(&dir, files);
        }
        run_ok(&mut env.git(&dir, &["add", "-A"]));
        run_ok(&mut env.git(&dir, &["commit", "-q", "-m", "initial"]));
        run_ok(&mut env.git(&base, &["init", "-q", "--bare", "origin.git"]));
        let bare_s = bare.to_str().expect("utf-8 temp path");
        run_ok(&mut env.git(&dir, &["remote", "add", "origin", bare_s]));
        run_ok(&mut env.git(&dir, &["push", "-q", "origin", "main"]));
        let git_wt_root = base.join("git-worktrees");
        std::fs::create_dir_all(&git_wt_root).expect("mkdir");
        Repo { dir, git_wt_root }
    }

    /// The worktree bullpen recorded for session `id` (from `ls --json`).
    pub fn worktree_of(&self, env: &Env, id: &str) -> PathBuf {
        let out = run_ok(&mut env.bullpen(&self.dir, &["ls", "--all", "--json", id]));
        let v: serde_json::Value = serde_json::from_str(&out).expect("ls --json parses");
        PathBuf::from(v[0]["worktree"].as_str().expect("worktree is a string"))
    }
}

fn write_tree(dir: &Path, files: usize) {
    let per_leaf = files.div_ceil(400).max(1);
    let mut written = 0;
    'outer: for a in 0..20 {
        for b in 0..20 {
            let leaf = dir.join(format!("src{a:02}/mod{b:02}"));
            std::fs::create_dir_all(&leaf).expect("mkdir");
            for c in 0..per_leaf {
                if written == files {
                    break 'outer;
                }
                let mut f =
                    std::fs::File::create(leaf.join(format!("file{c:03}.rs"))).expect("create");
                writeln!(f, "// {a}/{b}/{c}\npub fn f{c}() -> u32 {{ {written} }}").expect("write");
                written += 1;
            }
        }
    }
}

/// The N-scaling fixture: the small repository with sessions `s0000`, `s0001`, ...,
/// each with one commit of its own; the even-numbered ones pushed to `origin`
/// (published), the odd ones not.
pub struct Scale {
    pub repo: Repo,
    pub ids: Vec<String>,
    /// Whether `git gc` has packed objects and refs (else all loose, as spawned).
    pub packed: bool,
}

impl Scale {
    pub fn new(env: &Env) -> Scale {
        Scale {
            repo: Repo::create(env, "scale", 0),
            ids: Vec::new(),
            packed: false,
        }
    }

    pub fn published(&self) -> impl Iterator<Item = &String> {
        self.ids.iter().step_by(2)
    }

    /// Spawn sessions until there are `n`, then publish the new even ones.
    pub fn grow(&mut self, env: &Env, n: usize) {
        let from = self.ids.len();
        if n <= from {
            return;
        }
        let start = Instant::now();
        eprintln!("fixture: spawning sessions {from}..{n} in the small repository");
        for i in from..n {
            let id = format!("s{i:04}");
            let msg = format!("work of {id}");
            run_ok(&mut env.bullpen(
                &self.repo.dir,
                &[
                    "spawn",
                    &id,
                    "--",
                    "git",
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &msg,
                ],
            ));
            self.ids.push(id);
        }
        let new_published: Vec<String> = (from..n)
            .filter(|i| i % 2 == 0)
            .map(|i| format!("bullpen/s{i:04}"))
            .collect();
        for chunk in new_published.chunks(200) {
            let mut args = vec!["push", "-q", "origin"];
            args.extend(chunk.iter().map(String::as_str));
            run_ok(&mut env.git(&self.repo.dir, &args));
        }
        eprintln!(
            "fixture: {n} sessions ({} published) after {:.1} s",
            self.published().count(),
            start.elapsed().as_secs_f64()
        );
    }

    /// `git gc`: pack every object and ref, as a user's repository would be
    /// after git's own housekeeping.
    pub fn pack(&mut self, env: &Env) {
        run_ok(&mut env.git(&self.repo.dir, &["gc", "-q"]));
        self.packed = true;
    }

    /// How the figures name this fixture.
    pub fn label(&self) -> String {
        let state = if self.packed {
            "after `git gc`"
        } else {
            "loose, as spawned"
        };
        format!("N={}, {state}", self.ids.len())
    }

    /// The worktrees of published sessions, for the gc baseline.
    pub fn published_worktrees(&self, env: &Env) -> Vec<PathBuf> {
        let root = self
            .repo
            .worktree_of(env, &self.ids[0])
            .parent()
            .expect("worktree has a parent")
            .to_path_buf();
        self.published().map(|id| root.join(id)).collect()
    }
}
