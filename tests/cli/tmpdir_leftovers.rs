//! A sandboxed run killed with its bullpen leaves its private TMPDIR for the next
//! command to sweep. One that fails the check (replaced by a symlink, owned by
//! another user, not the one bullpen named) is never removed: gc names it in its
//! report and `--json`, with why and what to do, until it is gone.
//! `--sandbox=best-effort`, so the private TMPDIR is made on any kernel.

use std::path::{Path, PathBuf};

use crate::support::{assert_contains, Env, BIN};

/// Poll `cond` until it holds, failing after a generous deadline (a failure
/// bound only: the wait is for an event).
fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// Ends a process group when dropped (a failed test leaves no run behind).
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this test made.
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

/// Session `s`'s sandboxed foreground run, killed with its bullpen (SIGKILL to
/// both) once it has written into its private TMPDIR; that TMPDIR's path.
fn killed_run(env: &Env, tmpdir: Option<&Path>) -> PathBuf {
    use std::os::unix::process::CommandExt;
    let script = "echo kept > \"$TMPDIR/x\"\necho \"$TMPDIR\" > tmpdir\necho $$ > pid\ntouch ready\nexec sleep 1000\n";
    let mut cmd = env.cmd(BIN, &env.repo);
    if let Some(dir) = tmpdir {
        cmd.env("TMPDIR", dir);
    }
    let mut child = cmd
        .args([
            "spawn",
            "--sandbox=best-effort",
            "s",
            "--",
            "sh",
            "-c",
            script,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("run git-bullpen");
    let group = Group(child.id() as i32);
    // Under the default root, `<BULLPEN_HOME>/worktrees/<repo-key>/s`.
    let ready = || {
        let roots = std::fs::read_dir(env.root().join("bullpen-home/worktrees")).ok()?;
        roots
            .flatten()
            .map(|r| r.path().join("s"))
            .find(|wt| wt.join("ready").exists())
    };
    until("the run to start", || ready().is_some());
    drop(group);
    let wt = ready().expect("its worktree");
    child.wait().expect("wait");
    let pid = read(&wt.join("pid")).trim().to_owned();
    until("the command to be gone", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    let tmp = PathBuf::from(read(&wt.join("tmpdir")).trim());
    assert!(tmp.join("x").exists(), "nothing swept it yet");
    tmp
}

/// gc's `--json` entries of kind tmpdir.
fn tmpdir_entries(env: &Env, args: &[&str]) -> (Vec<serde_json::Value>, String) {
    let mut all = vec!["gc", "--json"];
    all.extend_from_slice(args);
    let run = env.bullpen(&all).ok();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let kept = entries
        .into_iter()
        .filter(|e| e["kind"] == "tmpdir")
        .collect();
    (kept, run.stderr)
}

#[test]
fn a_private_tmpdir_replaced_by_a_symlink_is_reported_and_kept() {
    let env = Env::new();
    let tmp = killed_run(&env, None);
    // What the symlink leads to is someone's work.
    let precious = env.root().join("precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("notes"), "mine\n").unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    std::os::unix::fs::symlink(&precious, &tmp).unwrap();

    // gc settles the killed run first (the sweep), then reports what it kept.
    let (kept, stderr) = tmpdir_entries(&env, &[]);
    assert_contains(
        &stderr,
        &format!(
            "warning: left {} alone: it is not the private TMPDIR bullpen made for session s (it \
             is a symlink to {}, not the directory bullpen made); git bullpen gc names it until \
             it is gone",
            tmp.display(),
            precious.display()
        ),
    );
    assert_eq!(kept.len(), 1, "{kept:?}");
    let e = &kept[0];
    assert_eq!(e["id"], "s");
    assert_eq!(e["action"], "kept");
    assert_eq!(e["path"], tmp.to_str().unwrap());
    assert_eq!(
        e["reason"],
        format!(
            "session s's private TMPDIR, left alone: it is a symlink to {}, not the directory \
             bullpen made",
            precious.display()
        )
    );
    assert_eq!(
        e["hint"],
        "remove the symlink (not what it points to) if you do not need it (bullpen never \
         removes it; gc names it until it is gone)"
    );
    assert!(tmp.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(read(&precious.join("notes")), "mine\n");

    // Every gc names it again, for people too (the line and the hint).
    let run = env.bullpen(&["gc"]).ok();
    assert_contains(
        &run.stdout,
        &format!(
            "kept  {}: session s's private TMPDIR, left alone: it is a symlink to {}",
            tmp.display(),
            precious.display()
        ),
    );
    assert_contains(
        &run.stderr,
        &format!(
            "hint: {}: remove the symlink (not what it points to)",
            tmp.display()
        ),
    );
    assert_eq!(read(&precious.join("notes")), "mine\n");

    // Once it is gone, gc forgets it (a dry run only says nothing of it).
    std::fs::remove_file(&tmp).unwrap();
    let (kept, _) = tmpdir_entries(&env, &["--dry-run"]);
    assert!(kept.is_empty(), "{kept:?}");
    let (kept, _) = tmpdir_entries(&env, &[]);
    assert!(kept.is_empty(), "{kept:?}");
    // A directory there again later is not brought back by the forgotten note.
    std::fs::create_dir(&tmp).unwrap();
    let (kept, _) = tmpdir_entries(&env, &[]);
    assert!(kept.is_empty(), "{kept:?}");
    assert!(tmp.is_dir(), "and never removed");
    std::fs::remove_dir(&tmp).unwrap();
}

#[test]
fn a_private_tmpdir_owned_by_another_user_is_reported_and_kept() {
    if !rustix::process::getuid().is_root() {
        eprintln!("SKIPPED: giving a directory to another user needs root");
        return;
    }
    let env = Env::new();
    let tmp = killed_run(&env, None);
    std::os::unix::fs::chown(&tmp, Some(65534), Some(65534)).unwrap();

    let (kept, _) = tmpdir_entries(&env, &[]);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0]["reason"],
        "session s's private TMPDIR, left alone: it is owned by uid 65534, not by you (uid 0)"
    );
    assert_contains(
        kept[0]["hint"].as_str().unwrap(),
        "it may be another user's: ask its owner",
    );
    assert_eq!(read(&tmp.join("x")), "kept\n", "never removed");
    // Still there, still named; given back, it is still left to a person.
    std::os::unix::fs::chown(&tmp, Some(0), Some(0)).unwrap();
    let (kept, _) = tmpdir_entries(&env, &[]);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_contains(
        kept[0]["reason"].as_str().unwrap(),
        "left alone: when its run ended, it is owned by uid 65534",
    );
    assert_eq!(read(&tmp.join("x")), "kept\n");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_forged_guard_naming_a_users_directory_never_removes_it() {
    let env = Env::new();
    let tmp = killed_run(&env, None);
    let precious = env.root().join("precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("notes"), "mine\n").unwrap();
    // The guard (local state) edited to name another directory.
    let guard = env.repo.join(".git/bullpen/local/s/sandbox.json");
    let mut g: serde_json::Value = serde_json::from_str(&read(&guard)).unwrap();
    g["tmp"] = serde_json::json!(precious);
    g["tmp_made"] = serde_json::Value::Null;
    std::fs::write(&guard, serde_json::to_vec(&g).unwrap()).unwrap();

    let (kept, _) = tmpdir_entries(&env, &[]);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0]["reason"],
        "session s's private TMPDIR, left alone: its name is not bullpen-s-…, as bullpen names \
         the one it makes"
    );
    assert_eq!(read(&precious.join("notes")), "mine\n");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_private_tmpdir_whose_path_now_leads_elsewhere_is_reported_and_kept() {
    let env = Env::new();
    let t = env.root().join("t");
    std::fs::create_dir(&t).unwrap();
    let tmp = killed_run(&env, Some(&t));
    assert_eq!(tmp.parent(), Some(t.as_path()));
    // The directory above it becomes a symlink to one holding a directory of
    // the same name, with someone's work in it.
    std::fs::rename(&t, env.root().join("t-was")).unwrap();
    let u = env.root().join("u");
    let there = u.join(tmp.file_name().unwrap());
    std::fs::create_dir_all(&there).unwrap();
    std::fs::write(there.join("notes"), "mine\n").unwrap();
    std::os::unix::fs::symlink(&u, &t).unwrap();

    let (kept, _) = tmpdir_entries(&env, &[]);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0]["reason"],
        "session s's private TMPDIR, left alone: it is another directory than the one bullpen \
         made (the path leads elsewhere now: a symlink on the way, or a directory put in its \
         place)"
    );
    assert_eq!(read(&there.join("notes")), "mine\n");
}
