//! `git bullpen gc`: real git, a bare repository as the remote, real processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{assert_contains, make_executable, which_git, Env, Run};

/// A process that is killed when the test ends, however it ends.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Guard {
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

/// A repository with a committed `.gitignore` (`.cache/`), `main` pushed to a
/// bare `origin`.
pub(crate) fn setup() -> Env {
    let env = Env::new();
    std::fs::write(env.repo.join(".gitignore"), ".cache/\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-q", "-m", "ignore caches"])
        .ok();
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env
}

/// A session that ran `script` and exited, its branch pushed to `origin`; its worktree.
pub(crate) fn spawn_pushed(env: &Env, id: &str, script: &str) -> PathBuf {
    let wt = env.spawn_sh(id, script);
    env.git(
        &env.repo,
        &["push", "-q", "origin", &format!("bullpen/{id}")],
    )
    .ok();
    wt
}

/// Push a session's branch to `origin`.
fn push(env: &Env, id: &str) {
    env.git(
        &env.repo,
        &["push", "-q", "origin", &format!("bullpen/{id}")],
    )
    .ok();
}

/// A script that commits a file of its own.
pub(crate) const COMMIT: &str =
    "echo \"$BULLPEN_SESSION\" > work.txt && git add work.txt && git commit -q -m work";

pub(crate) fn gc(env: &Env, args: &[&str]) -> (Run, Vec<Value>) {
    gc_in(env, &env.repo, args)
}

fn gc_in(env: &Env, cwd: &Path, args: &[&str]) -> (Run, Vec<Value>) {
    let mut all = vec!["gc", "--json"];
    all.extend_from_slice(args);
    let run = env.bullpen_in(cwd, &all);
    assert!(
        !run.stderr.contains("panicked"),
        "gc panicked:\n{}",
        run.stderr
    );
    let entries: Vec<Value> = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "gc --json did not print JSON ({e}), exit {:?}\nstdout:\n{}\nstderr:\n{}",
            run.status, run.stdout, run.stderr
        )
    });
    (run, entries)
}

/// Run `gc` and return its entry for session `id`.
#[track_caller]
fn gc_session(env: &Env, id: &str) -> Value {
    let (_, entries) = gc(env, &[]);
    session(&entries, id).clone()
}

/// Assert that gc kept the session `e` is the entry of, for exactly `reason`.
#[track_caller]
fn assert_kept(e: &Value, reason: impl AsRef<str>) {
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], reason.as_ref(), "{e}");
}

#[track_caller]
pub(crate) fn session<'a>(entries: &'a [Value], id: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["kind"] == "session" && e["id"] == id)
        .unwrap_or_else(|| panic!("no session {id} in {entries:#?}"))
}

pub(crate) fn branch_exists(env: &Env, id: &str) -> bool {
    env.git(
        &env.repo,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/bullpen/{id}"),
        ],
    )
    .status
    .success()
}

fn registered(env: &Env, path: &Path) -> bool {
    env.git_out(&["worktree", "list", "--porcelain"])
        .lines()
        .any(|l| l == format!("worktree {}", path.display()))
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start `sleep` with its current directory in `dir`, and wait until it is there.
fn sleeper_in(dir: &Path, secs: &str) -> Guard {
    let child = Command::new("sleep")
        .arg(secs)
        .current_dir(dir)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let g = Guard(child);
    let pid = g.pid();
    wait_until("sleep to start", || {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == dir)
    });
    g
}

// ----- published, clean, idle -----

#[test]
fn a_pushed_session_is_removed_its_branch_deleted_record_collected_notes_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "done", COMMIT);
    let commit = env.git_out(&["rev-parse", "bullpen/done"]);

    let (run, entries) = gc(&env, &[]);
    let run = run.ok();
    let e = session(&entries, "done");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(
        e["reason"],
        "published (reachable from origin/bullpen/done), clean and idle"
    );
    assert_eq!(e["published"]["how"], "reachable", "{e}");
    assert_eq!(e["published"]["ref"], "origin/bullpen/done", "{e}");
    assert_eq!(e["worktree"], wt.to_str().unwrap());
    assert!(!wt.exists(), "worktree directory removed");
    assert!(!registered(&env, &wt), "worktree deregistered");
    assert!(!branch_exists(&env, "done"), "local branch deleted");
    assert_eq!(env.record("done")["state"], "collected");
    assert!(env.record("done").get("gc_teardown").is_none());
    let note = env.git_out(&["notes", "--ref=bullpen", "show", &commit]);
    assert!(note.contains("bullpen-session: done"), "{note}");
    assert_contains(&run.stderr, "1 removed");

    // ls --all still shows it.
    let ls = env.ls_json();
    assert!(ls
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["id"] == "done" && s["state"] == "collected"));
    // A second gc has nothing to do and does not report collected sessions.
    let (_, again) = gc(&env, &[]);
    assert!(again.is_empty(), "{again:#?}");
}

#[test]
fn an_unpushed_session_is_kept() {
    let env = setup();
    let wt = env.spawn_sh("local", COMMIT);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_kept(session(&entries, "local"), "1 commit not on any remote");
    assert!(wt.join("work.txt").exists());
    assert!(branch_exists(&env, "local"));
    assert_eq!(env.record("local")["state"], "exited");
}

#[test]
fn pushed_then_one_more_local_commit_is_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "more", COMMIT);
    std::fs::write(wt.join("more.txt"), "more\n").unwrap();
    env.git(&wt, &["add", "more.txt"]).ok();
    env.git(&wt, &["commit", "-q", "-m", "more"]).ok();
    assert_kept(&gc_session(&env, "more"), "1 commit not on any remote");
    assert!(wt.join("more.txt").exists());
    assert!(branch_exists(&env, "more"));
}

#[test]
fn fetch_first_sees_what_was_pushed_from_elsewhere() {
    let env = setup();
    let wt = spawn_pushed(&env, "elsewhere", COMMIT);
    // Forget the remote-tracking ref, as if the push had happened from another clone.
    env.git_out(&["update-ref", "-d", "refs/remotes/origin/bullpen/elsewhere"]);
    assert_eq!(gc_session(&env, "elsewhere")["action"], "kept");
    let (run, entries) = gc(&env, &["--fetch"]);
    run.ok();
    assert_eq!(session(&entries, "elsewhere")["action"], "removed");
    assert!(!wt.exists());
}

// ----- clean -----

#[test]
fn an_untracked_file_keeps_the_worktree() {
    let env = setup();
    let wt = spawn_pushed(&env, "untracked", "echo notes > notes.txt");
    assert_kept(&gc_session(&env, "untracked"), "1 untracked file");
    assert!(wt.join("notes.txt").exists());
}

#[test]
fn only_ignored_files_do_not_count() {
    let env = setup();
    let wt = spawn_pushed(&env, "ignored", "mkdir -p .cache/v && echo x > .cache/v/f");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "ignored")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn an_untracked_gitignore_that_hides_files_keeps_the_worktree() {
    let env = setup();
    // `*` hides the .gitignore itself and everything beside it: git status is empty.
    let wt = env.spawn_sh(
        "hider",
        "mkdir -p secret/keys && printf '*\\n' > secret/.gitignore && \
         echo a > secret/a && echo b > secret/b && echo k > secret/keys/k",
    );
    push(&env, "hider");
    assert_eq!(
        env.git_out(&["-C", wt.to_str().unwrap(), "status", "--porcelain"]),
        ""
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "hider");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "an untracked .gitignore in secret/ hides 3 files"
    );
    assert!(wt.join("secret/keys/k").exists());

    std::fs::remove_dir_all(wt.join("secret")).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "hider")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn an_edit_under_skip_worktree_or_assume_unchanged_keeps_the_worktree() {
    let env = setup();
    let wt = env.spawn_sh(
        "unseen",
        "git update-index --skip-worktree README && echo edited >> README && \
         git update-index --assume-unchanged .gitignore && echo '*.tmp' >> .gitignore",
    );
    push(&env, "unseen");
    assert_eq!(
        env.git_out(&["-C", wt.to_str().unwrap(), "status", "--porcelain"]),
        ""
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "unseen");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "2 modified files marked skip-worktree or assume-unchanged (git status does not show them)"
    );
    assert!(std::fs::read_to_string(wt.join("README"))
        .unwrap()
        .contains("edited"));

    env.git(&wt, &["update-index", "--no-skip-worktree", "README"])
        .ok();
    env.git(
        &wt,
        &["update-index", "--no-assume-unchanged", ".gitignore"],
    )
    .ok();
    env.git(&wt, &["checkout", "--", "README", ".gitignore"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "unseen")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn a_staged_change_keeps_the_worktree() {
    let env = setup();
    let wt = spawn_pushed(&env, "staged", "echo changed > README && git add README");
    assert_kept(&gc_session(&env, "staged"), "1 staged change");
    assert_eq!(
        std::fs::read_to_string(wt.join("README")).unwrap(),
        "changed\n"
    );
}

#[test]
fn a_modified_file_keeps_the_worktree() {
    let env = setup();
    let wt = spawn_pushed(&env, "modified", "echo changed > README");
    assert_eq!(gc_session(&env, "modified")["reason"], "1 modified file");
    assert!(wt.exists());
}

// ----- unlocked, ours -----

#[test]
fn a_locked_worktree_is_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "locked", "true");
    env.git(&env.repo, &["worktree", "lock", wt.to_str().unwrap()])
        .ok();
    assert_kept(
        &gc_session(&env, "locked"),
        "the worktree is locked (git worktree unlock)",
    );
    assert!(wt.exists());
}

#[test]
fn a_worktree_switched_to_another_branch_is_kept() {
    let env = setup();
    let wt = spawn_pushed(&env, "switched", "git switch -q -c other");
    assert_kept(
        &gc_session(&env, "switched"),
        "HEAD is on refs/heads/other, not bullpen/switched",
    );
    assert!(wt.exists());
}

// ----- idle -----

#[test]
fn a_process_with_its_cwd_in_the_worktree_keeps_it_busy() {
    let env = setup();
    let wt = spawn_pushed(&env, "busy", "true");
    let sleeper = sleeper_in(&wt, "300");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_kept(
        session(&entries, "busy"),
        format!(
            "busy: pid {} (sleep) has its current directory in it",
            sleeper.pid()
        ),
    );
    assert!(wt.exists());
}

#[test]
fn a_kept_session_names_every_reason_that_keeps_it_once() {
    let env = setup();
    let wt = env.spawn_sh("many", COMMIT);
    std::fs::write(wt.join("draft.txt"), "x").unwrap();
    let sleeper = sleeper_in(&wt, "300");
    assert_kept(
        &gc_session(&env, "many"),
        format!(
            "1 commit not on any remote; 1 untracked file; busy: pid {} (sleep) has its \
             current directory in it",
            sleeper.pid()
        ),
    );
}

#[test]
fn a_process_with_a_file_open_in_the_worktree_keeps_it_busy() {
    let env = setup();
    let wt = spawn_pushed(&env, "open", "mkdir .cache && echo x > .cache/log");
    // cwd outside the worktree, a file inside it held open on fd 3.
    let child = Command::new("sh")
        .args(["-c", "exec 3<\"$1\"; exec sleep 300", "sh"])
        .arg(wt.join(".cache/log"))
        .current_dir(env.root())
        .spawn()
        .unwrap();
    let holder = Guard(child);
    let pid = holder.pid();
    wait_until("the file to be open", || {
        std::fs::read_link(format!("/proc/{pid}/fd/3")).is_ok_and(|t| t.starts_with(&wt))
    });
    let e = gc_session(&env, "open");
    assert_eq!(e["action"], "kept");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {pid} (sleep) has a file open in it")),
        "{e}"
    );
    assert!(wt.exists());
}

#[test]
fn wait_removes_a_busy_worktree_once_its_process_ends() {
    let env = setup();
    let wt = spawn_pushed(&env, "later", "true");
    let _sleeper = sleeper_in(&wt, "2");
    let (run, entries) = gc(&env, &["--wait", "120"]);
    let run = run.ok();
    assert_contains(&run.stderr, "waiting up to");
    assert_eq!(session(&entries, "later")["action"], "removed");
    assert!(!wt.exists());
}

/// /proc/<pid>/stat field 22, as bullpen records it.
fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

#[test]
fn a_session_whose_recorded_process_is_alive_is_kept_even_when_it_is_elsewhere() {
    let env = setup();
    let wt = spawn_pushed(&env, "alive", "true");
    // The session's own process, running outside its worktree.
    let proc_ = sleeper_in(&env.root(), "300");
    let pid = proc_.pid();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    env.edit_record("alive", |v| {
        v["state"] = "running".into();
        v["process"] = serde_json::json!({
            "pid": pid,
            "start_time": start_time(pid),
            "boot_id": boot.trim(),
            "background": true,
            "started_at": "2026-01-01T00:00:00Z",
        });
    });
    assert_kept(
        &gc_session(&env, "alive"),
        format!("busy: the session's process (pid {pid}) is running"),
    );
    assert!(wt.exists());

    // Once it is gone (the record still says running: lost), gc may remove it.
    drop(proc_);
    assert_eq!(gc_session(&env, "alive")["action"], "removed");
}

#[test]
fn a_recorded_process_that_cannot_be_verified_counts_as_alive_while_its_pid_exists() {
    let env = setup();
    let wt = spawn_pushed(&env, "unsure", "true");
    let proc_ = sleeper_in(&env.root(), "300");
    let pid = proc_.pid();
    env.edit_record("unsure", |v| {
        v["state"] = "running".into();
        v["process"] = serde_json::json!({
            "pid": pid,
            "start_time": null,
            "boot_id": null,
            "started_at": "2026-01-01T00:00:00Z",
        });
    });
    let e = gc_session(&env, "unsure");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(wt.exists());
}

// ----- teardown that cannot crash -----

/// A `git` first on PATH that removes worktrees as git does, then (for `wt`)
/// runs `late`: a late writer acting at that step and no other, so that the
/// test gates on an event rather than on a writer loop winning a race (a loop
/// lost it under load: it came back only after gc had looked, and gc rightly
/// said removed).
fn late_writer_after_worktree_remove(env: &mut Env, wt: &Path, late: &str) {
    let dir = env.root().join("late-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\nfor last; do :; done\ncase \" $* \" in *\" worktree remove \"*) \
         {git} \"$@\"; status=$?\n  if [ \"$last\" = '{wt}' ]; then {late}; fi\n  \
         exit $status;; esac\nexec {git} \"$@\"\n",
        git = which_git(),
        wt = wt.display(),
    );
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
}

/// A process the test did not start itself (a wrapper did), killed when the test ends.
struct Stray(u32);

impl Drop for Stray {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-9", &self.0.to_string()])
            .status();
    }
}

#[test]
fn a_late_writer_recreating_a_cache_dir_does_not_crash_gc_and_a_later_gc_finishes() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "late", "mkdir -p .cache/v");
    let wt2 = spawn_pushed(&env, "other", "true");
    // A test runner left behind writes its cache into the worktree after gc
    // removed it (git, then gc's own look): when gc goes on to the next session.
    let late = format!("mkdir -p '{}/.cache/v'", wt.display());
    late_writer_after_worktree_remove(&mut env, &wt2, &late);

    let (run, entries) = gc(&env, &[]);
    let e = session(&entries, "late");
    assert_eq!(e["action"], "degraded", "{e}");
    assert_eq!(run.code(), 1, "degraded exits 1\n{}", run.stderr);
    assert_contains(
        e["reason"].as_str().unwrap(),
        "came back right after git removed it",
    );
    assert_contains(e["hint"].as_str().unwrap(), "gc` again");
    // The other session was handled all the same.
    assert_eq!(session(&entries, "other")["action"], "removed");
    assert!(!wt2.exists());
    // git removed the worktree: what came back is the writer's.
    assert!(!registered(&env, &wt), "git removed the worktree");
    assert!(!branch_exists(&env, "late"));
    assert_eq!(env.record("late")["state"], "collected");

    env.path_prefix.clear();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let leftover = entries
        .iter()
        .find(|e| e["kind"] == "orphan")
        .unwrap_or_else(|| panic!("the leftover is not reported: {entries:#?}"));
    assert_eq!(leftover["action"], "removed", "{leftover}");
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert_eq!(env.record("late")["state"], "collected");
}

#[test]
fn a_late_writer_in_the_way_of_git_degrades_gc_and_a_later_gc_finishes() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "late", "true");
    // git deletes the files and its admin entry, but a writer came in: its cache
    // directory, its cwd in it; git fails as it does ("Directory not empty").
    let pid_file = env.root().join("writer.pid");
    let late = format!(
        "mkdir -p '{wt}/.cache/v' && (cd '{wt}/.cache/v' && exec sleep 600) \
         </dev/null >/dev/null 2>&1 & echo $! > '{pid}'; \
         echo \"error: failed to delete '{wt}': Directory not empty\" >&2; status=255",
        wt = wt.display(),
        pid = pid_file.display(),
    );
    late_writer_after_worktree_remove(&mut env, &wt, &late);

    let (run, entries) = gc(&env, &[]);
    let writer = Stray(
        std::fs::read_to_string(&pid_file)
            .expect("the writer started")
            .trim()
            .parse()
            .unwrap(),
    );
    let e = session(&entries, "late");
    assert_eq!(e["action"], "degraded", "{e}");
    assert_eq!(run.code(), 1, "degraded exits 1\n{}", run.stderr);
    assert_contains(e["reason"].as_str().unwrap(), "busy");
    assert_contains(e["hint"].as_str().unwrap(), "gc` again");
    assert!(
        branch_exists(&env, "late"),
        "branch kept until the worktree is gone"
    );
    assert_ne!(env.record("late")["state"], "collected");

    let pid = writer.0;
    drop(writer);
    wait_until("the writer to end", || {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_err()
    });
    env.path_prefix.clear();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(
        session(&entries, "late")["action"],
        "removed",
        "{entries:#?}"
    );
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert!(!branch_exists(&env, "late"));
    assert_eq!(env.record("late")["state"], "collected");
}

#[test]
fn a_writer_with_its_cwd_inside_keeps_the_worktree_busy() {
    let env = setup();
    let wt = spawn_pushed(&env, "runner", "true");
    let child = env
        .cmd("sh", &wt)
        .args(["-c", "while :; do mkdir -p .cache/v; sleep 0.01; done"])
        .spawn()
        .unwrap();
    let writer = Guard(child);
    let pid = writer.pid();
    wait_until("the writer to start", || wt.join(".cache/v").exists());
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "runner");
    assert_eq!(e["action"], "kept");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {pid} (sh) has its current directory in it")),
        "{e}"
    );
    assert!(wt.join(".git").exists(), "worktree untouched");
}

#[test]
fn the_admin_entry_already_gone_is_not_fatal() {
    let env = setup();
    let wt = spawn_pushed(&env, "noadmin", "mkdir -p .cache && echo x > .cache/x");
    let admin = env.repo.join(".git/worktrees/noadmin");
    assert!(admin.is_dir());
    std::fs::remove_dir_all(&admin).unwrap();

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "noadmin");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(
        e["reason"],
        "holds no commit of its own, clean and idle (its worktree entry \
         was already gone)"
    );
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert!(!branch_exists(&env, "noadmin"));
    assert_eq!(env.record("noadmin")["state"], "collected");
}

#[test]
fn the_admin_entry_gone_with_work_in_the_directory_keeps_it() {
    let env = setup();
    let wt = spawn_pushed(&env, "noadmin", "echo mine > mine.txt; echo edit >> README");
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/noadmin")).unwrap();
    assert_kept(
        &gc_session(&env, "noadmin"),
        "1 modified file, 1 untracked file",
    );
    assert!(wt.join("mine.txt").exists());
}

#[test]
fn worktree_remove_refusing_for_a_reason_of_its_own_keeps_it_and_quotes_git() {
    let mut env = setup();
    let wt = env.spawn_sh("refused", "true");
    push(&env, "refused");
    env.fail_git_when("worktree remove");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "refused");
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("git worktree remove refused: ")
            && reason.contains("fatal: injected failure of 'worktree remove'"),
        "{reason}"
    );
    assert!(wt.join("README").exists());
    assert!(registered(&env, &wt));
    assert!(branch_exists(&env, "refused"));
    assert!(env.record("refused").get("gc_teardown").is_none());
}

#[test]
fn worktree_remove_failing_half_way_takes_the_fallback() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "fallback", "true");
    on_worktree_remove(&mut env, "true");
    let (run, entries) = gc(&env, &[]);
    let run = run.ok();
    assert!(
        run.stderr.contains("failed to delete") && run.stderr.contains("took the fallback"),
        "{}",
        run.stderr
    );
    assert_eq!(session(&entries, "fallback")["action"], "removed");
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert!(!branch_exists(&env, "fallback"));
}

/// Put a `git` first on PATH that, asked to remove a worktree, does what git does
/// first (deletes `.git`, then some files) and is killed before it is done: no
/// message, the admin entry still there.
fn git_dies_during_worktree_remove(env: &mut Env) {
    let dir = env.root().join("dying-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\nfor wt; do :; done\ncase \" $* \" in *\" worktree remove \"*) \
         rm -f \"$wt/.git\" \"$wt/README\"; kill -9 $$;; esac\nexec {} \"$@\"\n",
        which_git()
    );
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
}

#[test]
fn a_teardown_git_died_in_is_finished_by_the_next_gc() {
    let mut env = setup();
    let wt = env.spawn_sh("dying", COMMIT);
    push(&env, "dying");
    git_dies_during_worktree_remove(&mut env);
    let (run, entries) = gc(&env, &[]);
    assert_eq!(run.code(), 1, "degraded exits 1\n{}", run.stderr);
    let e = session(&entries, "dying");
    assert_eq!(e["action"], "degraded", "{e}");
    assert!(
        e["reason"].as_str().unwrap().contains("killed by a signal"),
        "{e}"
    );
    assert_eq!(
        e["hint"],
        "run `git bullpen gc` again: it finishes the removal"
    );
    assert!(!wt.join(".git").exists() && !wt.join("README").exists());
    assert!(wt.join("work.txt").exists(), "git died half-way");
    assert!(
        registered(&env, &wt),
        "git died before it removed the entry"
    );
    assert!(env.record("dying").get("gc_teardown").is_some());
    // Until then, nothing runs there; the hint says what to do.
    let run = env.bullpen(&["resume", "dying", "--", "true"]).fails();
    assert!(
        run.stderr
            .contains("hint: run `git bullpen gc` to finish it"),
        "{}",
        run.stderr
    );

    // Following the hint finishes it: no `git worktree repair`, no prune.
    env.path_prefix.remove(0);
    let (_, planned) = gc(&env, &["--dry-run"]);
    assert_eq!(
        session(&planned, "dying")["reason"],
        "would finish the removal an earlier gc started"
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "dying");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(e["reason"], "finished the removal an earlier gc started");
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert!(!env.repo.join(".git/worktrees/dying").exists());
    assert!(!branch_exists(&env, "dying"));
    assert_eq!(env.record("dying")["state"], "collected");
}

#[test]
fn what_a_dead_teardown_left_is_not_finished_when_it_holds_something_new() {
    let mut env = setup();
    let wt = env.spawn_sh("revived", COMMIT);
    push(&env, "revived");
    git_dies_during_worktree_remove(&mut env);
    gc(&env, &[]).0.fails();
    env.path_prefix.remove(0);
    // Something writes into what is left before the next gc.
    std::fs::write(wt.join("notes.md"), "new\n").unwrap();
    std::fs::write(wt.join("work.txt"), "edited\n").unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "revived");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "an earlier gc started removing it, but what is left holds what bullpen/revived \
         does not: 1 modified file, 1 untracked file; look inside, and remove it by hand if \
         nothing there is needed"
    );
    assert!(wt.join("notes.md").exists() && wt.join("work.txt").exists());
    // As the reason says: once the new things are moved away, gc finishes it.
    std::fs::remove_file(wt.join("notes.md")).unwrap();
    std::fs::write(wt.join("work.txt"), "revived\n").unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "revived")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn a_dead_teardown_whose_branch_moved_since_is_kept_and_its_note_cleared() {
    let mut env = setup();
    let wt = env.spawn_sh("moved", COMMIT);
    push(&env, "moved");
    git_dies_during_worktree_remove(&mut env);
    gc(&env, &[]).0.fails();
    env.path_prefix.remove(0);
    // New work lands on the branch from elsewhere: the note's proof is void.
    let tree = env.git_out(&["rev-parse", "bullpen/moved^{tree}"]);
    let tip = env.git_out(&["rev-parse", "bullpen/moved"]);
    let newer = env.git_out(&["commit-tree", &tree, "-p", &tip, "-m", "newer"]);
    env.git_out(&["update-ref", "refs/heads/bullpen/moved", &newer]);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "moved");
    assert_eq!(e["action"], "kept", "{e}");
    assert_contains(e["reason"].as_str().unwrap(), "has moved since");
    assert!(wt.join("work.txt").exists());
    assert!(env.record("moved").get("gc_teardown").is_none());
    // resume no longer says "run gc to finish it" (which would loop); it names
    // what is at the path, with a hint of its own.
    let run = env.bullpen(&["resume", "moved", "--", "true"]).fails();
    assert!(!run.stderr.contains("to finish it"), "{}", run.stderr);
    assert_contains(&run.stderr, "move it aside, then resume again");
    let aside = env.root().join("moved-aside");
    std::fs::rename(&wt, &aside).unwrap();
    env.bullpen(&["resume", "moved", "--", "true"]).ok();
    assert!(wt.join("work.txt").exists() && aside.join("work.txt").exists());
}

#[test]
fn a_teardown_note_on_a_whole_worktree_is_cleared_so_the_session_can_run_again() {
    let env = setup();
    let wt = env.spawn_sh("whole", COMMIT);
    push(&env, "whole");
    let tip = env.git_out(&["rev-parse", "bullpen/whole"]);
    // A gc that died right after writing its note, before git ran; then the
    // session got new work.
    env.edit_record("whole", |v| {
        v["gc_teardown"] = serde_json::json!({"admin_id": "whole", "tip": tip});
    });
    std::fs::write(wt.join("more.txt"), "more\n").unwrap();
    let run = env.bullpen(&["resume", "whole", "--", "true"]).fails();
    assert!(run.stderr.contains("run `git bullpen gc` to finish it"));
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "whole");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], "1 untracked file");
    assert!(env.record("whole").get("gc_teardown").is_none());
    env.bullpen(&["resume", "whole", "--", "true"]).ok();
    assert!(wt.join("more.txt").exists());
}

/// Put a `git` first on PATH that, asked to remove a worktree, runs `snippet`
/// (in sh) and fails the way git does when something stands in the way of its
/// deleting ("failed to delete"), without removing anything: the world changing
/// between gc's checks and git's.
pub(crate) fn on_worktree_remove(env: &mut Env, snippet: &str) {
    let dir = env.root().join("race-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\nfor wt; do :; done\ncase \" $* \" in *\" worktree remove \"*) {snippet}; \
         echo \"error: failed to delete '$wt': Directory not empty\" >&2; exit 255;; esac\n\
         exec {} \"$@\"\n",
        which_git()
    );
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
}

#[test]
fn the_fallback_checks_again_that_the_worktree_is_clean() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "race", "true");
    // New work appears (an agent still writing) and git fails.
    on_worktree_remove(
        &mut env,
        &format!("echo new > {}/new-work.txt", wt.display()),
    );

    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_kept(
        session(&entries, "race"),
        "changed during gc: 1 untracked file",
    );
    assert!(wt.join("new-work.txt").exists(), "new work survives");
    assert!(registered(&env, &wt));
    assert!(branch_exists(&env, "race"));
    assert!(env.record("race").get("gc_teardown").is_none());
}

#[test]
fn the_fallback_checks_again_that_the_directory_is_still_ours() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "swapped", "true");
    // The directory stops being our worktree (its .git now names another
    // repository) and git fails.
    on_worktree_remove(
        &mut env,
        &format!("echo 'gitdir: /elsewhere/.git' > {}/.git", wt.display()),
    );
    let e = gc_session(&env, "swapped");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("no longer looks like the session's worktree"),
        "{e}"
    );
    assert!(wt.join("README").exists());
    assert!(branch_exists(&env, "swapped"));
}

#[test]
fn the_fallback_checks_again_that_the_worktree_is_not_locked() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "padlock", "true");
    // Someone locks the worktree just as gc removes it; git then refuses.
    let lock = format!(
        "{} -C {} worktree lock {}",
        which_git(),
        env.repo.display(),
        wt.display()
    );
    on_worktree_remove(&mut env, &lock);
    let e = gc_session(&env, "padlock");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("it was locked during gc"),
        "{e}"
    );
    assert!(wt.join("README").exists());
}

/// Kills a process known only by the pid it wrote to a file.
struct PidFileGuard(PathBuf);

impl Drop for PidFileGuard {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(&self.0) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

#[test]
fn the_fallback_checks_again_that_nobody_uses_the_directory() {
    let mut env = setup();
    let wt = spawn_pushed(&env, "entered", "true");
    let pidfile = env.root().join("entered.pid");
    let _guard = PidFileGuard(pidfile.clone());
    // Someone enters the worktree (and stays) just as git fails.
    on_worktree_remove(
        &mut env,
        &format!(
            "(cd {w} && exec sleep 300) </dev/null >/dev/null 2>&1 & echo $! > {p}; \
             while [ \"$(readlink /proc/$!/cwd)\" != {w} ]; do :; done",
            w = wt.display(),
            p = pidfile.display()
        ),
    );
    let e = gc_session(&env, "entered");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("(sleep) has its current directory in it"),
        "{e}"
    );
    assert!(wt.join("README").exists());
}

// ----- nested repositories -----

/// A bare repository with one commit on `main`: a submodule's upstream.
pub(crate) fn lib_upstream(env: &Env) -> PathBuf {
    let up = env.root().join("lib.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", "-b", "main", up.to_str().unwrap()],
    )
    .ok();
    let seed = env.root().join("lib-seed");
    env.git(
        &env.root(),
        &["init", "-q", "-b", "main", seed.to_str().unwrap()],
    )
    .ok();
    std::fs::write(seed.join("lib.txt"), "lib\n").unwrap();
    env.git(&seed, &["add", "lib.txt"]).ok();
    env.git(&seed, &["commit", "-q", "-m", "lib"]).ok();
    env.git(&seed, &["push", "-q", up.to_str().unwrap(), "main"])
        .ok();
    up
}

#[test]
fn a_submodule_with_an_unpushed_commit_keeps_the_worktree_until_it_is_pushed() {
    let env = setup();
    let up = lib_upstream(&env);
    // The agent adds a submodule, commits inside it, records that in the
    // worktree: the session branch is clean and pushed, the submodule's commit
    // exists only in the worktree's admin entry (modules/lib).
    let wt = env.spawn_sh(
        "sub",
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} lib && \
             git commit -q -m 'add lib' && \
             (cd lib && echo local > local.txt && git add local.txt && git commit -q -m local) && \
             git add lib && git commit -q -m 'bump lib'",
            up.display()
        ),
    );
    push(&env, "sub");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "sub");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "submodule lib holds work: main not on any of its remotes"
    );
    assert!(wt.join("lib/local.txt").exists());
    assert!(registered(&env, &wt));

    env.git(&wt.join("lib"), &["push", "-q", "origin", "main"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "sub");
    assert_eq!(e["action"], "removed", "{e}");
    assert!(!wt.exists());
    assert!(!registered(&env, &wt));
    assert!(!env.repo.join(".git/worktrees/sub").exists());
    assert!(!branch_exists(&env, "sub"));
    assert_eq!(env.record("sub")["state"], "collected");
}

#[test]
fn a_deinitialised_submodule_whose_git_dir_holds_a_commit_keeps_the_worktree() {
    let env = setup();
    let up = lib_upstream(&env);
    // `submodule deinit` empties lib/; its git dir, and the commit, stay in the
    // worktree's admin entry.
    let wt = env.spawn_sh(
        "deinit",
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} lib && \
             (cd lib && echo local > local.txt && git add local.txt && git commit -q -m local) && \
             git add lib && git commit -q -m 'add lib' && git submodule deinit -q -f lib",
            up.display()
        ),
    );
    push(&env, "deinit");
    assert!(!wt.join("lib/local.txt").exists());
    let modules = env.repo.join(".git/worktrees/deinit/modules/lib");
    assert!(modules.join("HEAD").is_file());
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "deinit");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        format!(
            "submodule git dir {} holds work: main not on any of its remotes",
            modules.display()
        )
    );
    assert!(modules.join("HEAD").is_file());
}

#[test]
fn a_worktree_whose_git_file_was_deleted_by_hand_is_kept_and_the_hint_works() {
    let env = setup();
    let wt = env.spawn_sh("nogit", "true");
    push(&env, "nogit");
    std::fs::remove_file(wt.join(".git")).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "nogit");
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.ends_with("run `git worktree repair`"), "{reason}");
    assert!(wt.join("README").exists());
    env.git(&env.repo, &["worktree", "repair"]).ok();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "nogit")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn the_admin_entry_vanishing_just_before_git_runs_takes_the_fallback() {
    let mut env = setup();
    let wt = env.spawn_sh("vanish", "true");
    push(&env, "vanish");
    let admin = env.repo.join(".git/worktrees/vanish");
    // Gone between gc's check and git's: git says "is not a working tree".
    let dir = env.root().join("vanish-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" worktree remove \"*) rm -rf {};; esac\nexec {} \"$@\"\n",
        admin.display(),
        which_git()
    );
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
    let (run, entries) = gc(&env, &[]);
    let run = run.ok();
    assert!(
        run.stderr.contains("is not a working tree") && run.stderr.contains("took the fallback"),
        "{}",
        run.stderr
    );
    assert_eq!(session(&entries, "vanish")["action"], "removed");
    assert!(!wt.exists());
    assert!(!branch_exists(&env, "vanish"));
}

#[test]
fn a_nested_repository_in_an_ignored_directory_with_an_unpushed_commit_keeps_the_worktree() {
    let env = setup();
    let wt = env.spawn_sh(
        "nest",
        "mkdir -p .cache/tool && cd .cache/tool && git init -q -b main && \
         echo x > f && git add f && git commit -q -m mine",
    );
    push(&env, "nest");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "nest");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "nested repository .cache/tool holds work: main not on any of its remotes"
    );
    assert!(wt.join(".cache/tool/f").exists());

    // Once it is no repository (only ignored files are left), gc removes it.
    std::fs::remove_dir_all(wt.join(".cache/tool/.git")).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "nest")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn an_ignored_directory_that_is_a_repository_keeps_the_worktree() {
    let env = setup();
    env.spawn_sh(
        "ig",
        "mkdir .cache && cd .cache && git init -q -b main && echo x > f && git add f && \
         git commit -q -m mine",
    );
    push(&env, "ig");
    let e = gc_session(&env, "ig");
    assert_kept(
        &e,
        "nested repository .cache holds work: main not on any of its remotes",
    );
}

#[test]
fn a_repository_initialised_in_a_tracked_directory_keeps_the_worktree() {
    // git status does not look into it (its files are tracked by the
    // worktree's index, its `.git` is skipped), and `git worktree remove` would
    // delete it: gc finds it.
    let env = setup();
    let wt = env.spawn_sh(
        "inner",
        "mkdir -p src/lib && echo a > src/lib/a.rs && git add src && git commit -q -m src && \
         cd src/lib && git init -q -b main && git add a.rs && git commit -q -m mine",
    );
    push(&env, "inner");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "inner");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "nested repository src/lib holds work: main not on any of its remotes"
    );
    assert!(wt.join("src/lib/.git").exists());
}

// ----- untrusted records -----

#[track_caller]
fn assert_untrusted(e: &Value, words: &str) {
    assert_eq!(e["action"], "kept", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("untrusted record: ") && reason.contains(words),
        "{e}"
    );
}

/// Move a worktree with git (it stays registered, on its branch).
fn move_worktree(env: &Env, from: &Path, to: &Path) {
    env.git_out(&[
        "worktree",
        "move",
        from.to_str().unwrap(),
        to.to_str().unwrap(),
    ]);
}

/// Point session `id`'s record at `path`, as a fetched or hand-edited record could.
fn point_record_at(env: &Env, id: &str, path: &Path) {
    let path = path.to_str().unwrap();
    env.edit_record(id, |v| v["worktree"] = path.into());
}

#[test]
fn a_record_pointing_at_the_repository_itself_is_never_acted_on() {
    let env = setup();
    spawn_pushed(&env, "repo", "true");
    point_record_at(&env, "repo", &env.repo);
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_untrusted(session(&entries, "repo"), "is the repository itself");
    assert!(env.repo.join(".git").is_dir() && env.repo.join("README").exists());
    assert!(branch_exists(&env, "repo"));
}

#[test]
fn a_record_pointing_at_the_filesystem_root_is_never_acted_on() {
    let env = setup();
    spawn_pushed(&env, "slash", "true");
    point_record_at(&env, "slash", Path::new("/"));
    assert_untrusted(&gc_session(&env, "slash"), "is the filesystem root");
    assert!(branch_exists(&env, "slash"));
}

/// With the worktree root set to a directory that contains $HOME, only the
/// home-directory guard stands between gc and removing $HOME, which is made a
/// real, clean, published worktree of the session branch.
#[test]
fn a_record_pointing_at_home_is_never_acted_on() {
    let env = setup();
    let root = env.root();
    env.git_out(&["config", "bullpen.worktreeRoot", root.to_str().unwrap()]);
    let wt = spawn_pushed(&env, "myhome", "true");
    std::fs::remove_dir_all(&env.home).unwrap();
    move_worktree(&env, &wt, &env.home);
    point_record_at(&env, "myhome", &env.home);
    assert_untrusted(&gc_session(&env, "myhome"), "is the home directory");
    assert!(env.home.join("README").exists(), "home untouched");
    assert!(registered(&env, &env.home));
    assert!(branch_exists(&env, "myhome"));
}

/// A real, clean, published worktree of the session branch, registered, but
/// outside the worktree root: only confinement stands in the way.
#[test]
fn a_record_pointing_outside_the_worktree_root_is_never_acted_on() {
    let env = setup();
    let wt = spawn_pushed(&env, "outside", "true");
    let outside = env.root().join("outside");
    move_worktree(&env, &wt, &outside);
    point_record_at(&env, "outside", &outside);
    assert_untrusted(&gc_session(&env, "outside"), "is outside the worktree root");
    assert!(outside.join("README").exists());
    assert!(registered(&env, &outside));
    assert!(branch_exists(&env, "outside"));
}

/// Confined as written, but a symlink in the worktree root leads out of it: a
/// real, clean, published, registered worktree of the branch sits at the end.
#[test]
fn a_record_whose_path_escapes_through_a_symlink_is_never_acted_on() {
    let env = setup();
    let wt = spawn_pushed(&env, "link", "true");
    let outside = env.root().join("outside");
    move_worktree(&env, &wt, &outside);
    let escape = wt.parent().unwrap().join("escape");
    std::os::unix::fs::symlink(env.root(), &escape).unwrap();
    point_record_at(&env, "link", &escape.join("outside"));
    assert_untrusted(&gc_session(&env, "link"), "outside the worktree root");
    assert!(outside.join("README").exists());
    assert!(registered(&env, &outside));
}

#[test]
fn a_record_naming_another_branch_is_never_acted_on() {
    let env = setup();
    let wt = spawn_pushed(&env, "renamed", "true");
    env.edit_record("renamed", |v| v["branch"] = "main".into());
    assert_untrusted(&gc_session(&env, "renamed"), "names branch 'main'");
    assert!(wt.exists());
}

#[test]
fn a_session_still_provisioning_is_kept_while_its_spawner_lives_then_finished() {
    let env = setup();
    let wt = spawn_pushed(&env, "young", "true");
    // A spawn still at work (any live process stands in for it): kept.
    let mut spawner = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pref = crate::support::process_ref(spawner.id());
    env.edit_record("young", |v| {
        v["state"] = "provisioning".into();
        v["spawner"] = pref;
    });
    let e = gc_session(&env, "young");
    assert_eq!(e["action"], "kept");
    assert!(
        e["reason"].as_str().unwrap().contains(&format!(
            "still being created (by `git bullpen spawn`, pid {})",
            spawner.id()
        )),
        "{e}"
    );
    assert!(wt.exists());
    // The spawn was interrupted: its clean worktree and its branch, still at the
    // base, hold nothing; gc finishes it.
    spawner.kill().unwrap();
    spawner.wait().unwrap();
    let e = gc_session(&env, "young");
    assert_eq!(e["action"], "removed", "{e}");
    assert!(!wt.exists());
    assert_eq!(
        env.git(&env.repo, &["rev-parse", "--verify", "-q", "bullpen/young"])
            .code(),
        1
    );
}

#[test]
fn a_branch_checked_out_in_another_worktree_is_not_deleted() {
    let env = setup();
    let wt = spawn_pushed(&env, "shared", "true");
    std::fs::remove_dir_all(&wt).unwrap();
    env.git_out(&["worktree", "prune"]);
    let other = env.root().join("by-hand");
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        other.to_str().unwrap(),
        "bullpen/shared",
    ]);
    assert_kept(
        &gc_session(&env, "shared"),
        format!("bullpen/shared is also checked out in {}", other.display()),
    );
    assert!(branch_exists(&env, "shared"));
}

// ----- leftovers -----

/// `<root>/<name>` holding only a `.git` file that names a worktree entry
/// `<name>` of the repository which does not exist: what a crashed teardown leaves.
pub(crate) fn orphan_dir(env: &Env, root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let admin = env.repo.join(".git/worktrees").join(name);
    std::fs::write(dir.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    dir
}

#[test]
fn an_orphaned_directory_with_a_dangling_git_file_is_reconciled() {
    let env = setup();
    let wt = env.spawn_sh("anchor", "echo keep > keep.txt");
    let root = wt.parent().unwrap().to_path_buf();
    // What the reported crash left: a directory holding only a `.git` file whose
    // worktree entry is gone.
    let orphan = orphan_dir(&env, &root, "crashed");
    std::fs::create_dir_all(orphan.join("empty/dirs")).unwrap();
    // And one that holds work: reported, never removed.
    let with_work = orphan_dir(&env, &root, "stray");
    std::fs::write(with_work.join("draft.md"), "draft\n").unwrap();
    // Not bullpen's (no .git file of ours): not gc's to judge, not even reported.
    let unrelated = root.join("unrelated");
    std::fs::create_dir_all(&unrelated).unwrap();

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let find = |p: &Path| {
        entries
            .iter()
            .find(|e| e["kind"] == "orphan" && e["worktree"] == p.to_str().unwrap())
            .unwrap_or_else(|| panic!("no orphan {p:?} in {entries:#?}"))
            .clone()
    };
    let o = find(&orphan);
    assert_eq!(o["action"], "removed");
    assert_eq!(o["reason"], "only a dangling .git file");
    assert!(!orphan.exists());
    let w = find(&with_work);
    assert_eq!(w["action"], "kept");
    assert!(
        w["reason"].as_str().unwrap().contains("holds 1 file"),
        "{w}"
    );
    assert!(with_work.join("draft.md").exists());
    assert!(unrelated.exists());
    assert!(!entries
        .iter()
        .any(|e| e["worktree"] == unrelated.to_str().unwrap()));
    // The session's own directory is not an orphan.
    assert!(wt.join("keep.txt").exists());
}

#[test]
fn vanished_worktrees_are_pruned_and_their_records_reconciled() {
    let env = setup();
    let published = spawn_pushed(&env, "gone-pub", COMMIT);
    let unpublished = env.spawn_sh("gone-local", COMMIT);
    std::fs::remove_dir_all(&published).unwrap();
    std::fs::remove_dir_all(&unpublished).unwrap();

    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "gone-pub");
    assert_eq!(e["action"], "collected");
    assert_eq!(
        e["reason"],
        "the worktree is gone and the branch is published (reachable from origin/bullpen/gone-pub)"
    );
    assert_eq!(env.record("gone-pub")["state"], "collected");
    assert!(!branch_exists(&env, "gone-pub"));

    let e = session(&entries, "gone-local");
    assert_eq!(e["action"], "kept");
    assert_eq!(
        e["reason"],
        "the worktree is gone but 1 commit is on bullpen/gone-local not on any remote"
    );
    assert!(branch_exists(&env, "gone-local"));
    assert_eq!(env.record("gone-local")["state"], "exited");

    for id in ["gone-pub", "gone-local"] {
        let pruned = entries
            .iter()
            .find(|e| e["kind"] == "worktree-entry" && e["id"] == id)
            .unwrap_or_else(|| panic!("no worktree entry {id} in {entries:#?}"));
        assert_eq!(pruned["action"], "pruned");
    }
    assert!(!env.repo.join(".git/worktrees/gone-pub").exists());
    assert!(!registered(&env, &published));
}

/// A user's own worktree (not bullpen's), its directory away as on a disk that is
/// not mounted: no bullpen command unregisters it. The old code ran a bare `git
/// worktree prune` in each of these four places, which would have.
#[test]
fn a_users_worktree_on_an_unmounted_disk_keeps_its_registration_through_every_command() {
    let mut env = setup();
    let disk = env.root().join("usb");
    let mine = disk.join("mine");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            mine.to_str().unwrap(),
        ],
    )
    .ok();
    let away = env.root().join("usb-unmounted");
    std::fs::rename(&disk, &away).unwrap();
    assert!(registered(&env, &mine));
    let still_mine = |env: &Env, after: &str| {
        assert!(
            registered(env, &mine),
            "the user's worktree lost its registration after {after}:\n{}",
            env.git_out(&["worktree", "list", "--porcelain"])
        );
    };

    // gc, with a session's vanished worktree for its leftovers pass to handle.
    let gone = env.spawn_sh("gone", "true");
    push(&env, "gone");
    std::fs::remove_dir_all(&gone).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    still_mine(&env, "gc");
    assert!(!registered(&env, &gone), "the session's own entry went");
    assert!(
        !entries
            .iter()
            .any(|e| e["worktree"] == mine.to_str().unwrap()),
        "not gc's to report: {entries:#?}"
    );

    // resume, recreating a worktree whose directory was deleted by hand.
    let back = env.spawn_sh("back", "true");
    std::fs::remove_dir_all(&back).unwrap();
    env.bullpen(&["resume", "back", "--", "true"]).ok();
    assert!(back.join("README").exists());
    still_mine(&env, "resume");

    // A spawn whose `git worktree add` fails.
    env.fail_git_when("worktree add");
    env.bullpen(&["spawn", "fails", "--", "true"]).fails();
    env.path_prefix.remove(0);
    still_mine(&env, "a failed spawn");

    // gc's teardown fallback (git fails half-way).
    let down = env.spawn_sh("down", "true");
    push(&env, "down");
    on_worktree_remove(&mut env, "true");
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "down")["action"], "removed");
    assert!(!down.exists());
    still_mine(&env, "gc's teardown fallback");

    // Plugged back in, it is a healthy worktree.
    std::fs::rename(&away, &disk).unwrap();
    env.git(&mine, &["status", "--porcelain"]).ok();
}

/// The leftovers pass removes a session's entry only with the local proof that
/// bullpen created that worktree here (records arrive by fetch).
#[test]
fn a_vanished_entry_of_a_session_not_created_here_stays_registered() {
    let env = setup();
    let gone = env.spawn_sh("elsewhere", "true");
    push(&env, "elsewhere");
    std::fs::remove_dir_all(&gone).unwrap();
    // As if the record had been fetched: no local state for it on this machine.
    std::fs::remove_dir_all(env.repo.join(".git/bullpen/local/elsewhere")).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = entries
        .iter()
        .find(|e| e["kind"] == "worktree-entry" && e["id"] == "elsewhere")
        .unwrap_or_else(|| panic!("no worktree entry in {entries:#?}"));
    assert_eq!(e["action"], "kept", "{e}");
    assert_contains(
        e["reason"].as_str().unwrap(),
        "nothing on this machine shows bullpen created its worktree",
    );
    assert!(registered(&env, &gone));
}

// ----- dry run -----

#[test]
fn dry_run_changes_nothing_and_matches_what_gc_then_does() {
    let env = setup();
    let removed = spawn_pushed(&env, "a-removed", COMMIT);
    env.spawn_sh("b-local", COMMIT);
    spawn_pushed(&env, "c-untracked", "echo x > x");
    let gone = spawn_pushed(&env, "d-gone", "true");
    std::fs::remove_dir_all(&gone).unwrap();
    let orphan = orphan_dir(&env, removed.parent().unwrap(), "orphan");
    let noadmin = spawn_pushed(&env, "e-noadmin", "true");
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/e-noadmin")).unwrap();

    let before = env.snapshot();
    let (dry, planned) = gc(&env, &["--dry-run"]);
    dry.ok();
    assert_eq!(env.snapshot(), before, "--dry-run changed something");
    assert!(orphan.exists() && removed.exists() && noadmin.exists());
    assert!(planned.iter().all(|e| e["dry_run"] == true));
    let human = env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(
        human.stdout.lines().any(|l| l.starts_with("would remove ")
            && l.ends_with(
                " a-removed: published (reachable from origin/bullpen/a-removed), clean and idle"
            )),
        "{}",
        human.stdout
    );

    let (real, done) = gc(&env, &[]);
    real.ok();
    let strip = |v: &[Value]| -> Vec<Value> {
        v.iter()
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().unwrap().remove("dry_run");
                e
            })
            .collect()
    };
    assert_eq!(strip(&planned), strip(&done));
    let actions: Vec<(String, String)> = done
        .iter()
        .map(|e| {
            (
                e["id"]
                    .as_str()
                    .or(e["worktree"].as_str())
                    .unwrap()
                    .to_owned(),
                e["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let orphan_s = orphan.to_str().unwrap().to_owned();
    for want in [
        ("d-gone", "pruned"),
        (orphan_s.as_str(), "removed"),
        ("a-removed", "removed"),
        ("b-local", "kept"),
        ("c-untracked", "kept"),
        ("d-gone", "collected"),
        ("e-noadmin", "removed"),
    ] {
        assert!(
            actions.contains(&(want.0.to_owned(), want.1.to_owned())),
            "{want:?} not in {actions:?}"
        );
    }
}

#[test]
fn gc_from_inside_a_session_worktree_keeps_that_one() {
    let env = setup();
    let wt = spawn_pushed(&env, "here", "true");
    // The shell that runs gc sits in the worktree.
    let run = env
        .cmd("sh", &wt)
        .args(["-c", "\"$0\" gc --json; echo done", crate::support::BIN])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let json = stdout.trim_end().strip_suffix("done").unwrap();
    let entries: Vec<Value> = serde_json::from_str(json).unwrap();
    let e = session(&entries, "here");
    assert_eq!(e["action"], "kept", "{e}");
    assert!(e["reason"]
        .as_str()
        .unwrap()
        .contains("(sh) has its current directory"));
    assert!(wt.exists());
}

#[test]
fn gc_json_into_a_closed_pipe_exits_quietly() {
    let env = Env::new();
    // Enough entries (long ids) that the JSON outgrows stdout's buffer, so the
    // failing write happens inside serde_json, not in the final flush.
    for i in 0..25 {
        let id = format!("{i:02}-{}", "x".repeat(55));
        env.bullpen(&["spawn", &id, "--", "true"]).ok();
    }
    let (status, err) = env.bullpen_into_closed_pipe(&["gc", "--dry-run", "--json"]);
    assert!(status.success(), "exit {status:?}, stderr: {err}");
    assert!(!err.contains("Broken pipe"), "{err}");
}

#[test]
fn gc_lets_git_pack_the_loose_objects_records_leave() {
    let env = Env::new();
    // Two packs already exceed gc.autoPackLimit = 1, so `git gc --auto` packs
    // everything (loose records included), before gc returns (no detaching).
    env.git_out(&["config", "gc.autoPackLimit", "1"]);
    env.git_out(&["config", "gc.autoDetach", "false"]);
    env.git_out(&["repack", "-q"]);
    env.git_out(&["commit", "-q", "--allow-empty", "-m", "second pack"]);
    env.git_out(&["repack", "-q"]);
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let loose = |env: &Env| {
        env.git_out(&["count-objects", "-v"])
            .lines()
            .find_map(|l| l.strip_prefix("count: ").map(|n| n.parse::<u64>().unwrap()))
            .unwrap()
    };
    assert!(loose(&env) > 0);
    let dry = env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(loose(&env) > 0, "--dry-run changes nothing: {}", dry.stderr);
    env.bullpen(&["gc"]).ok();
    assert_eq!(loose(&env), 0);
}

// ----- bounded history -----

#[test]
fn collected_records_expire_with_their_logs_and_local_state_and_the_notes_stay() {
    let env = setup();
    let wt = spawn_pushed(&env, "old", COMMIT);
    spawn_pushed(&env, "recent", COMMIT);
    let tip = env.git_out(&["rev-parse", "bullpen/old"]);
    let (run, _) = gc(&env, &[]);
    run.ok();
    assert!(!wt.exists());
    let common = env.repo.join(".git/bullpen");
    let log = common.join("logs/old.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, "a log\n").unwrap();
    assert!(common.join("local/old").is_dir());
    // Collected long ago (the default keeps 90 days).
    env.edit_record("old", |r| r["updated_at"] = "2020-01-01T00:00:00Z".into());

    let before = env.snapshot();
    let (dry, planned) = gc(&env, &["--dry-run"]);
    dry.ok();
    assert_eq!(env.snapshot(), before, "--dry-run changed something");
    let e = planned
        .iter()
        .find(|e| e["kind"] == "record" && e["id"] == "old")
        .unwrap_or_else(|| panic!("{planned:#?}"));
    assert_eq!(e["action"], "expired", "{e}");
    assert_eq!(
        e["reason"],
        "collected 2020-01-01, before bullpen.gc.expire (90.days.ago): its record, log and \
         local state go; its notes stay"
    );
    let human = env.bullpen(&["gc", "--dry-run"]).ok();
    assert_contains(&human.stdout, "would expire  old: collected 2020-01-01");

    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert!(entries
        .iter()
        .any(|e| e["kind"] == "record" && e["id"] == "old" && e["action"] == "expired"));
    assert!(!entries.iter().any(|e| e["id"] == "recent"), "{entries:#?}");
    let refs = env.git_out(&["for-each-ref", "refs/bullpen/"]);
    assert!(!refs.contains("sessions/old"), "{refs}");
    assert!(refs.contains("sessions/recent"), "{refs}");
    assert!(!log.exists() && !common.join("local/old").exists());
    assert!(common.join("local/recent").is_dir());
    assert_contains(
        &env.git_out(&["notes", "--ref=bullpen", "show", &tip]),
        "bullpen-session: old",
    );
    let listed = env.ls_json();
    assert!(
        !listed.as_array().unwrap().iter().any(|s| s["id"] == "old"),
        "{listed}"
    );
}

#[test]
fn bullpen_gc_expire_never_keeps_records_and_a_bad_value_changes_nothing() {
    let env = setup();
    spawn_pushed(&env, "old", COMMIT);
    gc(&env, &[]).0.ok();
    env.edit_record("old", |r| r["updated_at"] = "2020-01-01T00:00:00Z".into());
    env.git(&env.repo, &["config", "bullpen.gc.expire", "never"])
        .ok();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert!(entries.is_empty(), "{entries:#?}");
    assert_eq!(env.record("old")["state"], "collected");

    env.git(&env.repo, &["config", "bullpen.gc.expire", "soon"])
        .ok();
    let before = env.snapshot();
    let run = env.bullpen(&["gc"]);
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: bullpen.gc.expire: \"soon\" is not an expiry (as gc.reflogExpire: 90.days.ago",
    );
    assert_contains(
        &run.stderr,
        "hint: set it with `git config bullpen.gc.expire",
    );
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_record_marked_collected_over_a_live_branch_does_not_expire() {
    let env = setup();
    spawn_pushed(&env, "live", COMMIT);
    env.edit_record("live", |r| {
        r["state"] = "collected".into();
        r["updated_at"] = "2020-01-01T00:00:00Z".into();
    });
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert!(
        !entries.iter().any(|e| e["action"] == "expired"),
        "{entries:#?}"
    );
    assert_eq!(env.record("live")["state"], "collected");
}

// ----- what goes with a worktree, and what stays -----

#[test]
fn a_removal_says_what_ignored_files_went_with_it() {
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "cache",
        "mkdir -p .cache/a && printf 12345 > .cache/a/x && printf 123 > .cache/y",
    );
    let want = "holds no commit of its own, clean and idle; and 2 ignored \
                files, 8 bytes";
    let (_, planned) = gc(&env, &["--dry-run"]);
    let e = session(&planned, "cache");
    assert_eq!(e["reason"], want, "{e}");
    assert_eq!(
        e["ignored"],
        serde_json::json!({"files": 2, "bytes": 8, "caches": []}),
        "{e}"
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "cache");
    assert_eq!(e["action"], "removed", "{e}");
    assert_eq!(e["reason"], want, "{e}");
    assert!(!wt.exists());
}

#[test]
fn commits_no_run_recorded_get_a_provenance_note_before_the_branch_goes() {
    let env = setup();
    let wt = spawn_pushed(&env, "left", COMMIT);
    // A process the command left behind commits after the run was recorded.
    std::fs::write(wt.join("late.txt"), "late\n").unwrap();
    env.git(&wt, &["add", "late.txt"]).ok();
    env.git(&wt, &["commit", "-q", "-m", "late"]).ok();
    push(&env, "left");
    let late = env.git_out(&["rev-parse", "bullpen/left"]);
    let ran = env.git_out(&["rev-parse", "bullpen/left~1"]);
    assert!(env
        .git(&env.repo, &["notes", "--ref=bullpen", "show", &late])
        .status
        .code()
        .is_some_and(|c| c != 0));

    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "left")["action"], "removed");
    let note = |c: &str| env.git_out(&["notes", "--ref=bullpen", "show", c]);
    assert_eq!(
        note(&late),
        "bullpen-session: left\nbullpen-found-by: gc (on the branch, but no run of the session \
         recorded it: made by a process the command left behind?)\n\nbullpen-published: \
         reachable from origin/bullpen/left"
    );
    let first = note(&ran);
    assert!(first.contains("bullpen-command:"), "{first}");
    assert!(!first.contains("bullpen-found-by"), "{first}");
}

#[test]
fn a_process_the_record_claims_but_cannot_prove_is_still_named_as_a_user() {
    let env = setup();
    let wt = spawn_pushed(&env, "claim", "true");
    let sleeper = sleeper_in(&wt, "300");
    // A record (fetched, edited) that says the stranger is its running command,
    // with no start time to prove it: kept, the stranger never named as the
    // session's process, and still named as using the directory.
    env.edit_record("claim", |r| {
        r["state"] = "running".into();
        r["process"] =
            serde_json::json!({"pid": sleeper.pid(), "started_at": "2026-01-01T00:00:00Z"});
    });
    assert_kept(
        &gc_session(&env, "claim"),
        format!(
            "recorded running, with no process to check; busy: pid {p} (sleep) has its \
             current directory in it",
            p = sleeper.pid()
        ),
    );
}
