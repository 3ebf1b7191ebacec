//! The hermetic environment the suite runs everything in: a temp dir holding the
//! fixture repositories, a HOME, a BULLPEN_HOME and a global git config, with the
//! tests' environment variables (`tests/common/hermetic.rs`), so nothing of the
//! machine's own git setup leaks in.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The release binary cargo built for this bench target.
pub const BIN: &str = env!("CARGO_BIN_EXE_git-bullpen");

pub struct Env {
    /// Dropped (and deleted) at the end unless `keep` was asked for.
    pub _tmp: Option<tempfile::TempDir>,
    pub root: PathBuf,
    pub home: PathBuf,
    pub bullpen_home: PathBuf,
}

impl Env {
    pub fn new(keep: bool) -> Env {
        let dirs = crate::hermetic::Dirs::new("bullpen-bench-");
        // No automatic gc or maintenance: git's `gc --auto` (run by `git commit`
        // in the fixture sessions) would pack at an arbitrary N and detach into
        // the background, over the measurements. The suite packs explicitly.
        std::fs::write(
            dirs.home.join(".gitconfig"),
            "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n",
        )
        .expect("write .gitconfig");
        let tmp = if keep {
            let _ = dirs.tmp.keep();
            None
        } else {
            Some(dirs.tmp)
        };
        Env {
            _tmp: tmp,
            root: dirs.root,
            home: dirs.home,
            bullpen_home: dirs.bullpen_home,
        }
    }

    /// A command with the hermetic environment (`tests/common/hermetic.rs`, the
    /// tests' own), run in `cwd`, with no stdin. Commit dates are the real ones.
    pub fn cmd(&self, program: impl AsRef<OsStr>, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        let path = std::env::var_os("PATH").unwrap_or_default();
        crate::hermetic::apply(&mut c, &path, &self.home, &self.bullpen_home).current_dir(cwd);
        c
    }

    pub fn git(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = self.cmd("git", cwd);
        c.args(args);
        c
    }

    pub fn bullpen(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = self.cmd(BIN, cwd);
        c.args(args);
        c
    }
}

/// Run to completion, panicking with the output when it fails; returns stdout.
#[track_caller]
pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({})\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the binary knows `args` (e.g. `["gc", "--help"]`): lets the suite
/// skip, with a note, commands that have not landed in this build yet.
pub fn bullpen_supports(env: &Env, args: &[&str]) -> bool {
    env.bullpen(&env.root, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// `program` on PATH, if it is there.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}
