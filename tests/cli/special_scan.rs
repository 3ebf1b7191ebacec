//! spawn's `.worktreeinclude` scan of the main worktree never opens a FIFO
//! (or device, socket) named `.gitignore` or `.gitattributes`: git's own
//! scan (`ls-files --others --ignored --directory`, `check-ignore`) opens
//! every `.gitignore` it meets blocking, so one in an untracked directory
//! held spawn forever. The copy itself never waits on a file swapped for a
//! FIFO: `sys::copy`'s unit test calls it on one directly.
//!
//! Each run is watched on an event: once a process of the run sleeps opening
//! a FIFO (`wait_for_partner`, the kernel's wait in `fifo_open`), it is stuck
//! for good, so its process group is killed and the test fails at once. The
//! one timer is a generous bound (60 s) on a hang of another kind.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::special_files::mkfifo;
use crate::support::{assert_contains, Env, Run, BIN};

/// The bound on a run that hangs other than on a FIFO.
const BOUND: Duration = Duration::from_secs(60);

/// The processes of process group `pgid` (from `/proc/<pid>/stat`).
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // After the command's name (in parentheses): state, ppid, pgrp.
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            rest.split_whitespace().nth(2) == Some(pgid.to_string().as_str())
        })
        .collect()
}

/// The command line of the first member of group `pgid` sleeping in a
/// FIFO's open, if one is.
fn opening_a_fifo(pgid: u32) -> Option<String> {
    group_members(pgid).into_iter().find_map(|pid| {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let blocked = tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("wchan"))
                .is_ok_and(|w| w.trim() == "wait_for_partner")
        });
        blocked.then(|| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default()
        })
    })
}

/// `git-bullpen <args>` in `cwd`, in a process group of its own (the git it
/// runs too), watched as the module says. Output goes to files, so a full
/// pipe can never be what holds it.
fn bullpen_watched(env: &Env, cwd: &Path, args: &[&str]) -> Run {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir_in(env.root()).expect("tempdir");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = env
        .cmd(BIN, cwd)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("out"))
        .stderr(std::fs::File::create(&err).expect("err"))
        .spawn()
        .expect("run git-bullpen");
    let pgid = child.id();
    let bound = Instant::now() + BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        let stuck = opening_a_fifo(pgid);
        if stuck.is_some() || Instant::now() > bound {
            if let Some(pid) = rustix::process::Pid::from_raw(pgid as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.wait();
            panic!(
                "git-bullpen {args:?} {}\nstderr:\n{}",
                match stuck {
                    Some(cmd) => format!("is stuck opening a FIFO, in: {cmd}"),
                    None => format!("did not end within {BOUND:?}"),
                },
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        // Polling: no answer depends on how soon this looks again.
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        status,
        stdout: std::fs::read_to_string(&out).expect("read out"),
        stderr: std::fs::read_to_string(&err).expect("read err"),
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn a_fifo_gitignore_in_an_untracked_directory_hangs_no_spawn_with_worktreeinclude() {
    let env = Env::new();
    // `conf/` holds only ignored files (its FIFO `.gitignore` too), so it is
    // one entry, looked into for `conf/local.yml`.
    write(&env.repo, ".gitignore", ".env\n*.yml\nconf/.gitignore\n");
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore"]).ok();
    write(&env.repo, ".worktreeinclude", ".env\nconf/local.yml\n");
    write(&env.repo, ".env", "SECRET=1\n");
    write(&env.repo, "conf/local.yml", "local: true\n");
    mkfifo(&env.repo.join("conf/.gitignore"));
    write(&env.repo, "scratch/notes.txt", "notes\n");
    mkfifo(&env.repo.join("scratch/.gitignore"));
    write(&env.repo, "scratch/deeper/x", "x\n");
    mkfifo(&env.repo.join("scratch/deeper/.gitignore"));
    mkfifo(&env.repo.join("scratch/deeper/.gitattributes"));
    let run = bullpen_watched(&env, &env.repo, &["spawn", "a", "--", "true"]).ok();
    assert_contains(
        &run.stderr,
        "copied from the main worktree (.worktreeinclude)",
    );
    let wt = env.worktree_of("a");
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).expect(".env copied"),
        "SECRET=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("conf/local.yml")).expect("conf/local.yml copied"),
        "local: true\n"
    );
    assert!(wt.join("conf/.gitignore").symlink_metadata().is_err());
    assert!(!wt.join("scratch").exists());
    for fifo in [
        "conf/.gitignore",
        "scratch/.gitignore",
        "scratch/deeper/.gitattributes",
    ] {
        let meta = env.repo.join(fifo).symlink_metadata().expect("still there");
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
            "{fifo}"
        );
    }
}

#[test]
fn the_scan_answers_as_git_for_a_spawn_from_a_linked_worktree() {
    let env = Env::new();
    write(&env.repo, ".gitignore", "*.local\nbuild/\n");
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore"]).ok();
    write(&env.repo, ".worktreeinclude", "*.local\nbuild/\n");
    write(&env.repo, "app.local", "a\n");
    write(&env.repo, "build/out/bin", "b\n");
    // An ignored file in an untracked directory: git's `--directory` lists
    // the directory (untracked), not the file, so it is no candidate.
    write(&env.repo, "notes/todo.txt", "t\n");
    write(&env.repo, "notes/draft.local", "d\n");
    mkfifo(&env.repo.join("notes/.gitignore"));
    let other = env.root().join("other");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            other.to_str().unwrap(),
            "-b",
            "other",
        ],
    )
    .ok();
    let run = bullpen_watched(&env, &other, &["spawn", "a", "--", "true"]).ok();
    assert_contains(&run.stderr, "app.local, build (2 files)");
    let wt = env.worktree_of("a");
    assert!(wt.join("app.local").is_file());
    assert!(wt.join("build/out/bin").is_file());
    assert!(!wt.join("notes").exists());
}
