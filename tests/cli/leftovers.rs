//! Work that is not a commit, and the smaller leftovers: an agent's
//! conversation, a copied-in file edited since, the `ls` cache, a failed
//! `--bg` start's log, an admin entry git left half-removed.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::bg::Bg;
use crate::support::{assert_contains, Env};

/// Make a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().expect("utf-8")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[test]
fn ls_does_not_block_on_a_fifo_where_its_cache_goes() {
    let env = Env::new();
    env.spawn_sh("a", "true");
    let cache = env.repo.join(".git/bullpen/cache/ls");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&cache);
    mkfifo(&cache);
    let mut child = env
        .cmd(crate::support::BIN, &env.repo)
        .args(["ls", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Only a bound on a failure: `ls` answers at once, or hangs forever.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ls blocked on the FIFO where its cache goes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_contains(&String::from_utf8_lossy(&out.stdout), "a ");
}

#[test]
fn a_failed_bg_spawn_leaves_no_log_for_a_later_session_of_that_id() {
    let env = Bg::new();
    // A file where the supervisor's socket directory goes: it writes why to
    // its log, reports the error and ends before it claims the run.
    let sockets = crate::hermetic::runtime_dir(&env.home).join("bullpen");
    std::fs::create_dir_all(sockets.parent().unwrap()).unwrap();
    std::fs::write(&sockets, "not a directory\n").unwrap();
    let run = env
        .bullpen(&["spawn", "--bg", "a", "--", "echo", "first"])
        .fails();
    assert_contains(
        &run.stderr,
        "session a did not start; nothing of it is left",
    );
    let log = env.repo.join(".git/bullpen/logs/a.log");
    assert!(!log.exists(), "the failed start's log is gone");

    std::fs::remove_file(&sockets).unwrap();
    env.spawn_bg("a", &["echo", "second"]);
    env.wait_state("a", "exited");
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    assert!(
        !logs.contains("socket") && !logs.contains("fatal"),
        "the new session shows only its own output:\n{logs}"
    );
    assert_contains(&logs, "second");
}
