//! Special files where bullpen (or gix, or git) would read a file: a FIFO, a
//! socket or a device named `.gitignore`, `.gitattributes`, `info/exclude`,
//! `core.excludesFile`. Opening a FIFO for reading waits for a writer, so each
//! would hang `ls --status` and `gc` (git 2.47's own `status` hangs on a FIFO
//! `.gitignore`). bullpen skips a pattern file that is not a regular file, as
//! if it were missing, and never waits: every run here has a deadline, as the
//! bound of a failure only (a hang fails the test, it never blocks the suite).
//! A special file is untracked work all the same.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::gc::{session, setup, spawn_pushed};
use crate::support::{Env, Run, BIN};

/// How long any one run here may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(90);

/// A FIFO at `path`.
pub(crate) fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        0,
    )
    .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
}

/// `git-bullpen <args>` in the main worktree, killed (and the test failed)
/// when it has not ended by [`DEADLINE`]. Its output goes to files, so a full
/// pipe can never be what holds it.
pub(crate) fn bullpen_within(env: &Env, args: &[&str]) -> Run {
    let dir = tempfile::tempdir_in(env.root()).expect("tempdir");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = env
        .cmd(BIN, &env.repo)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("out"))
        .stderr(std::fs::File::create(&err).expect("err"))
        .spawn()
        .expect("run git-bullpen");
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "git-bullpen {args:?} hung (killed after {DEADLINE:?})\nstderr:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: std::fs::read_to_string(&out).expect("read out"),
        stderr: std::fs::read_to_string(&err).expect("read err"),
    }
}

fn ls_status(env: &Env) -> Vec<Value> {
    let run = bullpen_within(env, &["ls", "--status", "--json"]).ok();
    serde_json::from_str(&run.stdout).expect("ls --status --json parses")
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {rows:#?}"))
}

/// `gc --json` (with `extra`), within the deadline; its entry for `id`.
fn gc_entry(env: &Env, id: &str, extra: &[&str]) -> Value {
    let mut args = vec!["gc", "--json"];
    args.extend_from_slice(extra);
    let run = bullpen_within(env, &args);
    let entries: Vec<Value> = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "gc --json did not print JSON ({e})\nstdout:\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        )
    });
    session(&entries, id).clone()
}

/// A pushed session whose worktree has `sub/tracked.txt` committed.
fn pushed_with_subdir(env: &Env, id: &str) -> PathBuf {
    spawn_pushed(
        env,
        id,
        "mkdir sub && echo t > sub/tracked.txt && git add sub && git commit -q -m sub",
    )
}

#[test]
fn a_fifo_named_gitignore_in_a_worktree_hangs_neither_ls_status_nor_gc() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    // The tracked `.gitignore` (`.cache/`) gives way to a FIFO: a changed type.
    std::fs::remove_file(wt.join(".gitignore")).unwrap();
    mkfifo(&wt.join(".gitignore"));
    std::fs::create_dir(wt.join(".cache")).unwrap();
    std::fs::write(wt.join(".cache/c"), "c\n").unwrap();
    let rows = ls_status(&env);
    let r = row(&rows, "a");
    assert_eq!(r["modified"], 1, "{r}");
    // Its rules are not read: `.cache/c` is no longer ignored.
    assert_eq!(r["untracked"], 1, "{r}");
    let table = bullpen_within(&env, &["ls", "--status"]).ok().stdout;
    assert!(table.contains("  a "), "{table}");
    let e = gc_entry(&env, "a", &["--dry-run"]);
    assert_eq!(e["action"], "kept", "{e}");
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.join(".gitignore").symlink_metadata().is_ok());
}

#[test]
fn a_fifo_gitignore_in_a_subdirectory_is_no_ignore_file_and_is_work() {
    let env = setup();
    let wt = pushed_with_subdir(&env, "a");
    mkfifo(&wt.join("sub/.gitignore"));
    let rows = ls_status(&env);
    assert_eq!(row(&rows, "a")["untracked"], 1, "{}", row(&rows, "a"));
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.join("sub/.gitignore").symlink_metadata().is_ok());
}

#[test]
fn a_fifo_named_gitattributes_hangs_no_status_of_a_modified_file() {
    let env = setup();
    let wt = pushed_with_subdir(&env, "a");
    mkfifo(&wt.join(".gitattributes"));
    mkfifo(&wt.join("sub/.gitattributes"));
    // A tracked file whose stat changed but not its size: status reads its
    // attributes (for the clean filter) to hash it.
    std::fs::write(wt.join("sub/tracked.txt"), "u\n").unwrap();
    let rows = ls_status(&env);
    let r = row(&rows, "a");
    assert_eq!(r["modified"], 1, "{r}");
    assert_eq!(r["untracked"], 2, "{r}");
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
}

#[test]
fn a_fifo_as_info_exclude_or_core_excludes_file_hangs_nothing() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    std::fs::write(wt.join("draft.txt"), "draft\n").unwrap();
    let info = env.repo.join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    let _ = std::fs::remove_file(info.join("exclude"));
    mkfifo(&info.join("exclude"));
    mkfifo(&info.join("attributes"));
    let global = env.root().join("excludes-fifo");
    mkfifo(&global);
    env.git(
        &env.repo,
        &[
            "config",
            "--global",
            "core.excludesFile",
            global.to_str().unwrap(),
        ],
    )
    .ok();
    let rows = ls_status(&env);
    assert_eq!(row(&rows, "a")["untracked"], 1, "{}", row(&rows, "a"));
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.join("draft.txt").exists());
}

#[test]
fn special_files_among_the_untracked_files_are_work_and_never_opened() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    mkfifo(&wt.join("pipe"));
    std::fs::create_dir(wt.join("only")).unwrap();
    mkfifo(&wt.join("only/pipe"));
    let _socket = std::os::unix::net::UnixListener::bind(wt.join("sock")).expect("bind");
    let rows = ls_status(&env);
    assert_eq!(row(&rows, "a")["untracked"], 3, "{}", row(&rows, "a"));
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.join("only/pipe").symlink_metadata().is_ok());
}

/// `path` (a file git keeps) replaced by a FIFO, for the time of `f`.
fn with_fifo_at(path: &Path, f: impl FnOnce()) {
    let aside = path.with_extension("aside");
    let had = std::fs::rename(path, &aside).is_ok();
    mkfifo(path);
    f();
    std::fs::remove_file(path).unwrap();
    if had {
        std::fs::rename(&aside, path).unwrap();
    }
}

#[test]
fn a_fifo_where_git_keeps_a_file_is_refused_by_name_and_the_session_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let admin = env.repo.join(".git/worktrees/a");
    for path in [
        admin.join("index"),
        admin.join("HEAD"),
        wt.join(".gitmodules"),
    ] {
        with_fifo_at(&path, || {
            let run = bullpen_within(&env, &["ls", "--status"]).ok();
            assert!(run.stdout.contains("  a "), "{}", run.stdout);
            let e = gc_entry(&env, "a", &[]);
            assert_eq!(e["action"], "kept", "{}: {e}", path.display());
        });
    }
    with_fifo_at(&admin.join("index"), || {
        let e = gc_entry(&env, "a", &["--dry-run"]);
        let reason = e["reason"].as_str().unwrap();
        assert!(
            reason.contains("index is not a regular file (a FIFO, a socket or a device)"),
            "{reason}"
        );
    });
    with_fifo_at(&admin.join("gitdir"), || {
        bullpen_within(&env, &["ls"]).ok();
        let e = gc_entry(&env, "a", &[]);
        assert_eq!(e["action"], "kept", "{e}");
    });
    assert!(wt.is_dir());
}

#[test]
fn logs_and_local_state_that_are_fifos_hang_nothing() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let logs = env.repo.join(".git/bullpen/logs");
    std::fs::create_dir_all(&logs).unwrap();
    mkfifo(&logs.join("a.log"));
    let run = bullpen_within(&env, &["logs", "a"]).fails();
    assert!(
        run.stderr.contains("a.log is not a regular file"),
        "{}",
        run.stderr
    );
    let local = env.repo.join(".git/bullpen/local/a");
    mkfifo(&local.join("included.json"));
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.is_dir());
}

#[test]
fn spawn_copies_no_special_file_named_by_worktreeinclude_and_reads_none() {
    let env = setup();
    // `.cache/` is ignored (`setup`), so copied whole: but not its FIFO.
    std::fs::write(env.repo.join(".worktreeinclude"), ".cache/\n").unwrap();
    std::fs::create_dir(env.repo.join(".cache")).unwrap();
    std::fs::write(env.repo.join(".cache/ok"), "ok\n").unwrap();
    mkfifo(&env.repo.join(".cache/pipe"));
    let run = bullpen_within(&env, &["spawn", "a", "--", "true"]).ok();
    assert!(
        run.stderr.contains("not copying '.cache/pipe'"),
        "{}",
        run.stderr
    );
    let wt = env.worktree_of("a");
    assert!(wt.join(".cache/ok").is_file());
    assert!(wt.join(".cache/pipe").symlink_metadata().is_err());
    // A FIFO as `.worktreeinclude` itself: refused, never read.
    std::fs::remove_file(env.repo.join(".worktreeinclude")).unwrap();
    mkfifo(&env.repo.join(".worktreeinclude"));
    let run = bullpen_within(&env, &["spawn", "b", "--", "true"]).fails();
    assert!(
        run.stderr
            .contains(".worktreeinclude is not a regular file"),
        "{}",
        run.stderr
    );
}

#[test]
fn gcs_git_status_of_a_directory_without_its_entry_never_opens_a_fifo() {
    let env = setup();
    let wt = pushed_with_subdir(&env, "a");
    // The admin entry gone: gc compares the directory with the tip through
    // `git status`, which would open each `.gitignore` blocking.
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    mkfifo(&wt.join("sub/.gitignore"));
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains("sub/.gitignore is not a regular file (a FIFO, a socket or a device)"),
        "{reason}"
    );
    std::fs::remove_file(wt.join("sub/.gitignore")).unwrap();
    // Nor `core.excludesFile`.
    let global = env.root().join("excludes-fifo");
    mkfifo(&global);
    env.git(
        &env.repo,
        &[
            "config",
            "--global",
            "core.excludesFile",
            global.to_str().unwrap(),
        ],
    )
    .ok();
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.join("sub/tracked.txt").exists());
}

#[test]
fn spawn_never_opens_a_fifo_info_exclude_and_leaves_nothing() {
    let env = setup();
    let info = env.repo.join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    let _ = std::fs::remove_file(info.join("exclude"));
    mkfifo(&info.join("exclude"));
    let before = env.snapshot();
    // `git worktree add` reads it (its checkout), before anything else would.
    for include in [false, true] {
        if include {
            std::fs::write(env.repo.join(".worktreeinclude"), ".env\n").unwrap();
        }
        let run = bullpen_within(&env, &["spawn", "a", "--", "true"]).fails();
        assert!(
            run.stderr.contains("info/exclude is not a regular file"),
            "{}",
            run.stderr
        );
        assert_eq!(env.snapshot(), before);
    }
}

#[test]
fn resume_recreating_a_worktree_never_opens_a_fifo_info_exclude() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    env.git(
        &env.repo,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    )
    .ok();
    let info = env.repo.join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    let _ = std::fs::remove_file(info.join("exclude"));
    mkfifo(&info.join("exclude"));
    let run = bullpen_within(&env, &["resume", "a"]).fails();
    assert!(
        run.stderr.contains("info/exclude is not a regular file"),
        "{}",
        run.stderr
    );
    assert!(!wt.exists());
}

#[test]
fn a_fifo_in_a_nested_repositorys_git_dir_hangs_no_gc() {
    let env = setup();
    // A repository made in a directory of tracked files (status enters it).
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir lib && echo x > lib/x && git add lib && git commit -q -m lib && git init -q lib",
    );
    let head = wt.join("lib/.git/HEAD");
    std::fs::remove_file(&head).unwrap();
    mkfifo(&head);
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.contains("HEAD is not a regular file"), "{reason}");
    assert!(wt.join("lib/.git").is_dir());
}

#[test]
fn an_untracked_repository_whose_head_is_a_fifo_hangs_nothing_and_is_kept() {
    let env = setup();
    // A repository with a commit and no files checked out (status would list
    // none), in an untracked directory; its HEAD then a FIFO.
    let wt = spawn_pushed(
        &env,
        "a",
        "git init -q scratch/tool && cd scratch/tool && echo x > x && git add x && \
         git -c core.hooksPath=/dev/null commit -q -m x && rm x && git rm -q --cached x",
    );
    let head = wt.join("scratch/tool/.git/HEAD");
    std::fs::remove_file(&head).unwrap();
    mkfifo(&head);
    bullpen_within(&env, &["ls", "--status"]).ok();
    let e = gc_entry(&env, "a", &[]);
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.contains("HEAD is not a regular file"), "{reason}");
    assert!(wt.join("scratch/tool/.git").is_dir());
}

#[test]
fn a_fifo_as_a_sessions_branch_hangs_no_ls_and_gc_keeps_the_session() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    with_fifo_at(&env.repo.join(".git/refs/heads/bullpen/a"), || {
        bullpen_within(&env, &["ls"]).ok();
        bullpen_within(&env, &["ls", "--status"]).ok();
        let e = gc_entry(&env, "a", &[]);
        assert_eq!(e["action"], "kept", "{e}");
    });
    assert!(wt.is_dir());
}
