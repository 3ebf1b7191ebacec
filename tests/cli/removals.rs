//! The removals bullpen makes outside gc's teardown never cross a mount point
//! and never follow a symlink (`sys::remove`): the undo of a failed spawn
//! removes the worktree it made, but what a file system mounted in it holds,
//! and what a symlink in it points at, survive; what is left is named.
//!
//! Mounts are made in a private mount namespace (`unshare -m`, root) that only
//! the scenario's shell and the bullpen it runs see. Where that cannot be done
//! the test is skipped, except under CI, where it fails.

use std::process::Command;

use crate::ship::skip_or_fail;
use crate::support::{assert_contains, Env, BIN};

#[test]
fn the_undo_of_a_failed_spawn_stops_at_a_mount_and_never_follows_a_symlink() {
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_or_fail("cannot make a private mount namespace (`unshare -m` needs root)");
        return;
    }
    let env = Env::new();
    let r = env.root();
    let outside = r.join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("f"), "keep").expect("write");
    // Setup, in the worktree git made: a tmpfs holding a file, a symlink to a
    // directory outside, then a failure, so that spawn undoes what it made.
    let setup = format!(
        "pwd > '{r}/wt' && ln -s '{out}' link && mkdir m && mount -t tmpfs none m && \
         echo keep > m/kept && exit 1",
        r = r.display(),
        out = outside.display(),
    );
    env.git(&env.repo, &["config", "bullpen.setup", &setup])
        .ok();
    let script = format!(
        "if '{BIN}' spawn x -- true 2> '{r}/err'; then echo SPAWN_SUCCEEDED; fi; \
         w=$(cat '{r}/wt'); \
         if [ -f \"$w/m/kept\" ]; then echo KEPT_MOUNTED; fi; \
         umount \"$w/m\" || true",
        r = r.display(),
    );
    let out = env
        .cmd("unshare", &env.repo)
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .expect("run unshare");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = std::fs::read_to_string(r.join("err")).unwrap_or_default();
    assert!(!stdout.contains("SPAWN_SUCCEEDED"), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("KEPT_MOUNTED"),
        "the file on the mounted file system was removed:\n{stdout}\n{stderr}"
    );
    let wt = std::fs::read_to_string(r.join("wt")).expect("setup ran");
    let wt = wt.trim_end();
    assert_contains(
        &stderr,
        &format!("left {wt} in place: a file system is mounted at {wt}/m"),
    );
    assert_contains(&stderr, "unmount it, then remove the directory");
    assert_eq!(
        std::fs::read_to_string(outside.join("f")).expect("the file outside survives"),
        "keep"
    );
}
