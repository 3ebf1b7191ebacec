//! The test environment: a hermetic temp dir with a real git repository, a home,
//! a BULLPEN_HOME, and the real `git-bullpen` binary.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-bullpen");
pub const DATE: &str = "2026-01-01T00:00:00Z";

pub struct Env {
    pub tmp: tempfile::TempDir,
    /// The main worktree of the test repository.
    pub repo: PathBuf,
    pub home: PathBuf,
    pub bullpen_home: PathBuf,
    /// Directories put first on PATH (fault injection wrappers).
    pub path_prefix: Vec<PathBuf>,
}

/// What a command printed and how it ended.
pub struct Run {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    #[track_caller]
    pub fn ok(self) -> Run {
        assert!(
            self.status.success(),
            "expected success, got {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn fails(self) -> Run {
        assert!(
            !self.status.success(),
            "expected failure\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            status: o.status,
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Env {
    /// A fresh repository `repo` with one commit on `main`.
    pub fn new() -> Env {
        let dirs = crate::hermetic::Dirs::new("bullpen-test-");
        let repo = dirs.root.join("repo");
        std::fs::create_dir_all(&repo).expect("mkdir");
        let env = Env {
            tmp: dirs.tmp,
            repo,
            home: dirs.home,
            bullpen_home: dirs.bullpen_home,
            path_prefix: Vec::new(),
        };
        env.git(&env.repo, &["init", "-q", "-b", "main"]).ok();
        std::fs::write(env.repo.join("README"), "hello\n").expect("write");
        env.git(&env.repo, &["add", "README"]).ok();
        env.git(&env.repo, &["commit", "-q", "-m", "initial"]).ok();
        env
    }

    pub fn root(&self) -> PathBuf {
        self.repo.parent().expect("repo has a parent").to_path_buf()
    }

    /// The hermetic environment applied to every child (`tests/common/hermetic.rs`),
    /// with the fault-injection directories first on PATH and fixed commit dates.
    pub fn apply(&self, cmd: &mut Command) {
        let mut path = std::env::join_paths(&self.path_prefix).unwrap_or_default();
        let sys = std::env::var_os("PATH").unwrap_or_default();
        if !path.is_empty() {
            path.push(":");
        }
        path.push(&sys);
        crate::hermetic::apply(cmd, &path, &self.home, &self.bullpen_home)
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE);
    }

    pub fn cmd(&self, program: impl AsRef<OsStr>, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        self.apply(&mut c);
        c.current_dir(cwd);
        c
    }

    pub fn git(&self, cwd: &Path, args: &[&str]) -> Run {
        self.cmd("git", cwd)
            .args(args)
            .output()
            .expect("run git")
            .into()
    }

    /// `git <args>` in the main repository, asserting success; trimmed stdout.
    pub fn git_out(&self, args: &[&str]) -> String {
        self.git(&self.repo, args).ok().stdout.trim().to_owned()
    }

    /// `git <args>` in the main repository with `input` on stdin, asserting
    /// success; trimmed stdout.
    pub fn git_stdin(&self, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = self
            .cmd("git", &self.repo)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let out = child.wait_with_output().expect("wait git");
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The session's record (`session.json`) as stored.
    pub fn record(&self, id: &str) -> serde_json::Value {
        self.record_at(&record_ref(id))
    }

    /// The record a record commit holds, in either form (see
    /// [`record_in_commit`]).
    pub fn record_at(&self, rev: &str) -> serde_json::Value {
        serde_json::from_str(&record_json(|a| self.git_out(a), rev)).expect("the record parses")
    }

    /// Edit a session's record by hand, the way a fetched or hand-edited record
    /// arrives: a new commit on top of the record's chain, made with plumbing.
    pub fn edit_record(&self, id: &str, edit: impl FnOnce(&mut serde_json::Value)) {
        let refname = record_ref(id);
        let old = self.git_out(&["rev-parse", &refname]);
        let mut record = self.record(id);
        edit(&mut record);
        let json = serde_json::to_string_pretty(&record).expect("json");
        let blob = self.git_stdin(&["hash-object", "-w", "--stdin"], &json);
        let tree = self.git_stdin(&["mktree"], &format!("100644 blob {blob}\tsession.json\n"));
        let commit = self.git_out(&["commit-tree", &tree, "-p", &old, "-m", "edited by hand"]);
        self.git_out(&["update-ref", &refname, &commit, &old]);
    }

    pub fn bullpen_in(&self, cwd: &Path, args: &[&str]) -> Run {
        self.cmd(BIN, cwd)
            .args(args)
            .output()
            .expect("run git-bullpen")
            .into()
    }

    pub fn bullpen(&self, args: &[&str]) -> Run {
        self.bullpen_in(&self.repo, args)
    }

    /// `git <args>` in `cwd` with the tested `git-bullpen` on PATH, so that `git
    /// bullpen ...` (and `git -c ... bullpen`, `git --git-dir=... bullpen`) runs it
    /// the way git runs any external command.
    pub fn git_bullpen(&self, cwd: &Path, args: &[&str]) -> Run {
        let bin_dir = Path::new(BIN).parent().expect("the binary's directory");
        let mut cmd = self.cmd("git", cwd);
        let path = std::env::join_paths(
            std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(
                &cmd.get_envs()
                    .find(|(k, _)| *k == "PATH")
                    .and_then(|(_, v)| v.map(|v| v.to_os_string()))
                    .unwrap_or_default(),
            )),
        )
        .expect("PATH");
        cmd.env("PATH", path)
            .args(args)
            .output()
            .expect("run git")
            .into()
    }

    /// Session `id`, spawned to run `sh -c <script>` in its worktree, which must
    /// succeed; its worktree.
    pub fn spawn_sh(&self, id: &str, script: &str) -> PathBuf {
        self.bullpen(&["spawn", id, "--", "sh", "-c", script]).ok();
        self.worktree_of(id)
    }

    /// The worktree root bullpen uses for `self.repo`, found from a spawned session.
    pub fn worktree_of(&self, id: &str) -> PathBuf {
        let json = self.ls_json();
        let s = json
            .as_array()
            .and_then(|a| a.iter().find(|s| s["id"] == id))
            .unwrap_or_else(|| panic!("no session {id} in ls --json: {json}"));
        PathBuf::from(s["worktree"].as_str().expect("worktree is a string"))
    }

    pub fn ls_json(&self) -> serde_json::Value {
        let run = self.bullpen(&["ls", "--all", "--json"]).ok();
        serde_json::from_str(&run.stdout).expect("ls --json parses")
    }

    /// A snapshot of everything a failed command must leave unchanged:
    /// refs, registered worktrees, and the files under BULLPEN_HOME.
    pub fn snapshot(&self) -> String {
        let refs = self.git_out(&["for-each-ref", "--format=%(refname) %(objectname)"]);
        let wts = self.git_out(&["worktree", "list", "--porcelain"]);
        let mut files = Vec::new();
        walk(&self.bullpen_home, &mut files);
        files.sort();
        format!("{refs}\n--\n{wts}\n--\n{}", files.join("\n"))
    }

    /// A bare repository to act as `origin`, added as a remote of the test repo.
    pub fn add_bare_remote(&self) -> PathBuf {
        let bare = self.root().join("origin.git");
        self.git(
            &self.root(),
            &["init", "-q", "--bare", bare.to_str().expect("utf-8")],
        )
        .ok();
        self.git(
            &self.repo,
            &["remote", "add", "origin", bare.to_str().expect("utf-8")],
        )
        .ok();
        bare
    }

    /// Write an executable `git` wrapper, first on PATH, that fails when its
    /// arguments contain `needle` (e.g. "worktree add") and runs the real git otherwise.
    pub fn fail_git_when(&mut self, needle: &str) {
        let real = which_git();
        let dir = self.root().join("fault-bin");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let script = format!(
            "#!/bin/sh\ncase \" $* \" in *\" {needle} \"*) echo \"fatal: injected failure of '{needle}'\" >&2; exit 128;; esac\nexec {real} \"$@\"\n"
        );
        let path = dir.join("git");
        std::fs::write(&path, script).expect("write wrapper");
        make_executable(&path);
        self.path_prefix.insert(0, dir);
    }
    /// Run bullpen with its stdout already closed by the reader (as `| head` does
    /// once it has enough): returns the exit status and stderr.
    pub fn bullpen_into_closed_pipe(&self, args: &[&str]) -> (std::process::ExitStatus, String) {
        use std::io::Read;
        let mut child = self
            .cmd(BIN, &self.repo)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run git-bullpen");
        drop(child.stdout.take()); // close the read end before bullpen writes
        let status = child.wait().expect("wait");
        let mut err = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("read stderr");
        (status, err)
    }

    /// Install a post-checkout hook that fails: `git worktree add` then checks out
    /// the worktree, runs the hook, and exits non-zero with the branch and the
    /// worktree already created — a real partial failure to clean up after.
    pub fn failing_post_checkout_hook(&self) {
        let hooks = self.repo.join(".git/hooks");
        std::fs::create_dir_all(&hooks).expect("mkdir hooks");
        let hook = hooks.join("post-checkout");
        std::fs::write(
            &hook,
            "#!/bin/sh\necho 'post-checkout: refusing' >&2\nexit 1\n",
        )
        .expect("write hook");
        make_executable(&hook);
    }
}

/// The ref that holds session `id`'s record.
/// The record in a record commit (`git cat-file commit`) over the empty tree:
/// its message from the first line that is `{` alone. `None` for a commit whose
/// tree holds `session.json` (a record written before, or by hand).
pub fn record_in_commit(commit: &str) -> Option<String> {
    if !commit.starts_with(&format!("tree {EMPTY_TREE}\n")) {
        return None;
    }
    let (_, message) = commit.split_once("\n\n")?;
    let at = message.find("\n{\n")?;
    Some(message[at + 1..].to_owned())
}

/// The text of the record at `rev` (a record commit of either form), read
/// with `git_out` (a git that returns stdout).
pub fn record_json(git_out: impl Fn(&[&str]) -> String, rev: &str) -> String {
    let commit = git_out(&["cat-file", "commit", rev]);
    match record_in_commit(&commit) {
        Some(json) => json,
        None => git_out(&["cat-file", "blob", &format!("{rev}:session.json")]),
    }
}

/// git's empty tree (SHA-1).
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

pub fn record_ref(id: &str) -> String {
    format!("refs/bullpen/sessions/{id}")
}

fn walk(dir: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        out.push(p.display().to_string());
        if p.is_dir() && !p.is_symlink() {
            walk(&p, out);
        }
    }
}

/// Assert that `text` (what a command printed) contains `part`, showing it all if not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} not in:\n{text}");
}

pub fn which_git() -> String {
    let out = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("sh");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut p = std::fs::metadata(path).expect("stat").permissions();
    p.set_mode(0o755);
    std::fs::set_permissions(path, p).expect("chmod");
}

/// `{pid, start_time, boot_id}` of a live process, as bullpen records one, read
/// from `/proc` independently of the code under test.
pub fn process_ref(pid: u32) -> serde_json::Value {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
    let fields: Vec<&str> = text[text.rfind(')').expect("stat") + 1..]
        .split_whitespace()
        .collect();
    let start: u64 = fields[19].parse().expect("start time");
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id");
    serde_json::json!({"pid": pid, "start_time": start, "boot_id": boot.trim()})
}
