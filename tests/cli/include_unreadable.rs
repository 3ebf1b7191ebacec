//! `.worktreeinclude` with a directory the user cannot list in the main
//! worktree: git's own walk warns and takes it as empty; spawn does the same
//! (it said "Permission denied" and made no session). Root lists every
//! directory, so as root the spawn runs as nobody (`setpriv`), on a tree made
//! nobody's.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::support::{Env, Run, BIN};

fn chown_tree(dir: &Path, uid: u32) {
    for entry in walk(dir) {
        std::os::unix::fs::lchown(&entry, Some(uid), Some(uid)).expect("chown");
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while let Some(at) = out.get(i).cloned() {
        i += 1;
        if at.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            for e in std::fs::read_dir(&at).expect("read_dir") {
                out.push(e.expect("entry").path());
            }
        }
    }
    out
}

#[test]
fn an_unreadable_ignored_directory_is_skipped_and_said() {
    let root = rustix::process::geteuid().is_root();
    if root && crate::docs::which("setpriv").is_none() {
        return crate::ship::skip_or_fail("setpriv is not installed");
    }
    let env = Env::new();
    std::fs::write(env.repo.join(".gitignore"), "build/\nlocal.env\n").unwrap();
    std::fs::write(env.repo.join(".worktreeinclude"), "build/\nlocal.env\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore", ".worktreeinclude"])
        .ok();
    env.git(&env.repo, &["commit", "-q", "-m", "include"]).ok();
    std::fs::write(env.repo.join("local.env"), "KEY=1\n").unwrap();
    let locked = env.repo.join("build/locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("secret"), "x\n").unwrap();
    if root {
        chown_tree(env.tmp.path(), 65534);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();

    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    env.apply(&mut cmd);
    let run: Run = cmd
        .args(["spawn", "s", "--", "true"])
        .current_dir(&env.repo)
        .output()
        .expect("run git-bullpen")
        .into();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = run.ok();
    crate::support::assert_contains(&run.stderr, "build/locked");
    crate::support::assert_contains(&run.stderr, "permission denied");
    let wt = env.worktree_of("s");
    assert_eq!(
        std::fs::read_to_string(wt.join("local.env")).unwrap(),
        "KEY=1\n"
    );
    assert!(!wt.join("build/locked").exists());
}
