//! The removals bullpen makes outside gc's teardown never cross a mount point
//! and never follow a symlink (`sys::remove`): the undo of a failed spawn
//! removes the worktree it made, and a sandboxed run's end its private
//! TMPDIR, but what a file system mounted in them holds, and what a symlink
//! in them points at, survive; what is left is named.
//!
//! Mounts are made in a private mount namespace (`unshare -m`, root) that only
//! the scenario's shell and the bullpen it runs see. Where that cannot be done
//! the test is skipped, except under CI, where it fails.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ship::skip_or_fail;
use crate::support::{assert_contains, Env, BIN};

#[test]
fn the_undo_of_a_failed_spawn_stops_at_a_mount_and_never_follows_a_symlink() {
    if !can_unshare() {
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

/// Whether a private mount namespace can be made here (else skipped, or
/// failed under CI).
fn can_unshare() -> bool {
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_or_fail("cannot make a private mount namespace (`unshare -m` needs root)");
        return false;
    }
    true
}

#[test]
fn a_sandboxed_runs_tmpdir_removal_stops_at_a_mount_and_never_follows_a_symlink() {
    use std::os::unix::process::CommandExt;
    if !can_unshare() {
        return;
    }
    let env = Env::new();
    let r = env.root();
    let outside = r.join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("f"), "keep").expect("write");
    crate::special_files::mkfifo(&r.join("gate"));
    // The run leaves a symlink out of its TMPDIR, says where that is (in its
    // worktree) and waits on the gate; meanwhile a tmpfs is mounted there
    // (Landlock lets no sandboxed run mount). The gate's writer opens once
    // the run reads it: then `tmpdir` is written.
    let run = format!(
        "ln -s '{out}' \"$TMPDIR/link\" && echo \"$TMPDIR\" > tmpdir && read _ < '{r}/gate'",
        out = outside.display(),
        r = r.display(),
    );
    let script = format!(
        "'{BIN}' spawn --sandbox=best-effort x -- sh -c \"$RUN\" 2> '{r}/err' & bp=$!\n\
         exec 3> '{r}/gate'\n\
         t=$(cat '{bh}'/worktrees/*/x/tmpdir); echo \"$t\" > '{r}/tmp'\n\
         mkdir \"$t/m\" && mount -t tmpfs none \"$t/m\" && echo keep > \"$t/m/kept\"\n\
         echo go >&3; exec 3>&-\n\
         wait $bp; echo \"spawn exited $?\"\n\
         if [ -f \"$t/m/kept\" ]; then echo KEPT_MOUNTED; fi\n\
         '{BIN}' gc --json > '{r}/gc.json' 2> '{r}/gc.err'\n\
         umount \"$t/m\" || true\n",
        r = r.display(),
        bh = env.bullpen_home.display(),
    );
    let out = std::fs::File::create(r.join("out")).expect("out");
    let mut child = env
        .cmd("unshare", &env.repo)
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env("RUN", &run)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .spawn()
        .expect("run unshare");
    // A bound on a failure only (the run ended early and the gate has no
    // reader): the scenario itself waits on events.
    let bound = Instant::now() + Duration::from_secs(120);
    let finished = loop {
        if child.try_wait().expect("wait").is_some() {
            break true;
        }
        if Instant::now() > bound {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.wait();
    let read = |name: &str| std::fs::read_to_string(r.join(name)).unwrap_or_default();
    let (stdout, stderr) = (read("out"), read("err"));
    assert!(finished, "the scenario did not end:\n{stdout}\n{stderr}");
    assert_contains(&stdout, "spawn exited 0");
    assert!(
        stdout.contains("KEPT_MOUNTED"),
        "the file on the mounted file system was removed:\n{stdout}\n{stderr}"
    );
    let tmp = read("tmp");
    let tmp = tmp.trim_end();
    assert!(
        !tmp.is_empty(),
        "the run said where its TMPDIR is:\n{stderr}"
    );
    assert_contains(
        &stderr,
        &format!(
            "left session x's private TMPDIR {tmp} in place: a file system is mounted at {tmp}/m"
        ),
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("f")).expect("the file outside survives"),
        "keep"
    );
    // gc is told, while the mount is there.
    let entries: Vec<serde_json::Value> = serde_json::from_str(&read("gc.json"))
        .unwrap_or_else(|e| panic!("gc --json: {e}\n{}\n{}", read("gc.json"), read("gc.err")));
    let kept: Vec<_> = entries.iter().filter(|e| e["kind"] == "tmpdir").collect();
    assert_eq!(kept.len(), 1, "{entries:?}");
    assert_eq!(kept[0]["action"], "kept");
    assert_eq!(kept[0]["path"], tmp);
    assert_contains(
        kept[0]["reason"].as_str().unwrap_or(""),
        &format!("a file system is mounted at {tmp}/m"),
    );
}
