//! Work that hides in a worktree: repositories nested in untracked directories
//! (a clone, the user's own linked worktree), a file system mounted below it, a
//! submodule commit only its reflog holds. gc and `rm --force` keep the session
//! and name what keeps it.
//!
//! Mounts are made in a private mount namespace (`unshare -m`, root) that only
//! the scenario's shell and the bullpen it runs see: the host never does. Where
//! that cannot be done the test is skipped, except under CI, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::gc::{gc, session, setup, spawn_pushed};
use crate::ship::skip_or_fail;
use crate::support::{assert_contains, Env, Run, BIN};

/// A session whose branch is pushed and whose worktree holds a clone with a
/// commit of its own in the untracked directory `vendor/tool`.
fn with_clone_in_untracked_dir(env: &Env, id: &str) -> PathBuf {
    spawn_pushed(
        env,
        id,
        "mkdir -p vendor && git init -q -b main vendor/tool && cd vendor/tool && \
         echo mine > f && git add f && git commit -q -m mine",
    )
}

#[test]
fn rm_force_keeps_a_clone_with_a_commit_of_its_own_in_an_untracked_directory() {
    let env = setup();
    let wt = with_clone_in_untracked_dir(&env, "a");
    let before = env.snapshot();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "kept  a: nested repository vendor/tool holds work: main not on any of its remotes\n"
    );
    assert!(
        !run.stderr.contains("--force"),
        "--force cannot help: {}",
        run.stderr
    );
    assert_eq!(env.snapshot(), before);
    assert!(wt.join("vendor/tool/f").exists());
    // gc keeps it too, naming it beside the untracked entry.
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "a")["action"], "kept");
    assert!(wt.join("vendor/tool/f").exists());
}

#[test]
fn rm_force_keeps_an_untracked_directory_whose_git_file_points_nowhere() {
    // What was it? A worktree whose repository moved, a submodule whose git
    // dir went: not bullpen's to guess, so it stays.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir old && echo 'gitdir: /nowhere/.git/worktrees/old' > old/.git && \
         echo draft > old/draft.txt",
    );
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_contains(
        &run.stdout,
        "kept  a: cannot tell whether the repositories nested in it hold work: could not open \
         the repository at ",
    );
    assert!(wt.join("old/draft.txt").exists());
}

#[test]
fn rm_force_keeps_the_users_own_locked_linked_worktree_in_an_untracked_directory() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let mine = wt.join("scratch/mine");
    std::fs::create_dir_all(wt.join("scratch")).unwrap();
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "user",
            mine.to_str().unwrap(),
        ],
    )
    .ok();
    env.git(&env.repo, &["worktree", "lock", mine.to_str().unwrap()])
        .ok();
    // Its branch holds a commit on no remote: that lives in the repository.
    std::fs::write(mine.join("mine.txt"), "mine\n").unwrap();
    env.git(&mine, &["add", "mine.txt"]).ok();
    env.git(&mine, &["commit", "-q", "-m", "mine"]).ok();
    std::fs::write(mine.join("README"), "the user's edit\n").unwrap();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "kept  a: linked worktree scratch/mine holds work: locked (git worktree unlock); \
         1 modified file\n"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("README")).unwrap(),
        "the user's edit\n"
    );

    // Clean, it is still locked: its owner asked to keep it.
    env.git(&mine, &["checkout", "-q", "README"]).ok();
    let run = env.bullpen(&["rm", "--force", "a"]);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "kept  a: linked worktree scratch/mine holds work: locked (git worktree unlock)\n"
    );

    // Unlocked and clean, it holds nothing its repository does not: its
    // branch lives in the repository, not in the directory.
    env.git(&env.repo, &["worktree", "unlock", mine.to_str().unwrap()])
        .ok();
    env.bullpen(&["rm", "--force", "a"]).ok();
    assert!(!wt.exists());
    assert!(env
        .git_out(&["rev-parse", "--verify", "-q", "refs/heads/user"])
        .starts_with(|c: char| c.is_ascii_hexdigit()));
}

#[test]
fn a_submodule_commit_only_its_reflog_holds_keeps_the_worktree() {
    let env = setup();
    let up = crate::gc::lib_upstream(&env);
    // The agent commits in the submodule, then resets it back: the commit is
    // on no branch and no remote, only in the submodule's reflog.
    let wt = spawn_pushed(
        &env,
        "sub",
        &format!(
            "git -c protocol.file.allow=always submodule add -q {} lib && \
             git commit -q -m 'add lib' && \
             (cd lib && echo local > local.txt && git add local.txt && git commit -q -m local && \
              git reset -q --hard HEAD~1)",
            up.display()
        ),
    );
    let (run, entries) = gc(&env, &[]);
    let run = run.ok();
    let e = session(&entries, "sub");
    assert_eq!(e["action"], "kept", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "submodule lib holds work: commits only its reflog holds (on no branch, no remote)"
    );
    assert!(wt.join("lib").is_dir());
    let run = env.bullpen(&["rm", "--force", "sub"]);
    assert_eq!(run.code(), 3, "{}", run.stdout);
    assert!(wt.join("lib").is_dir());
}

// ----- mounts -----

/// Run `script` (sh) in a private mount namespace with `$WT` set to `wt`, `$BP`
/// to the tested binary, `$R` to the test's temp dir, and the test's environment; `None` when a mount
/// namespace cannot be made here (skipped, or failed under CI).
fn in_mount_namespace(env: &Env, wt: &Path, script: &str) -> Option<Run> {
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip_or_fail("cannot make a private mount namespace (`unshare -m` needs root)");
        return None;
    }
    let out = env
        .cmd("unshare", &env.repo)
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("WT", wt)
        .env("BP", BIN)
        .env("R", env.root())
        .output()
        .expect("run unshare");
    Some(Run {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The JSON entry of session `id` in what `gc --json` printed.
fn entry(stdout: &str, id: &str) -> Value {
    let entries: Vec<Value> =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"));
    session(&entries, id).clone()
}

/// Shell: from here on, `/proc/self/mountinfo` lists only `/` (a tmpfs over
/// `/proc`, holding links into a second procfs for everything else): what
/// bullpen then finds of a mount, it finds by the device of the directory.
const HIDE_MOUNTS: &str = "mkdir -p \"$R/realproc\" && mount -t proc proc \"$R/realproc\" && \
     mount -t tmpfs none /proc && for e in \"$R\"/realproc/*; do ln -s \"$e\" /proc/; done && \
     rm /proc/self && mkdir /proc/self && \
     echo '1 0 8:1 / / rw - ext4 /dev/root rw' > /proc/self/mountinfo";

const MOUNTED: &str = "a file system is mounted at .cache/ (bullpen never removes across file \
                       systems: unmount it first)";

#[test]
fn a_tmpfs_mounted_on_an_ignored_directory_keeps_the_worktree_and_its_files() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "mkdir .cache");
    // gc, then rm --force, with a tmpfs on .cache holding a file: both keep it,
    // and the file on the tmpfs is still there after each.
    let Some(run) = in_mount_namespace(
        &env,
        &wt,
        "mount -t tmpfs none \"$WT/.cache\" && echo precious > \"$WT/.cache/f\" && \
         \"$BP\" gc --json > ../gc.json && \
         { \"$BP\" rm --force a > ../rm.out 2> ../rm.err || echo $? > ../rm.code; } && \
         cat \"$WT/.cache/f\"",
    ) else {
        return;
    };
    let run = run.ok();
    assert_eq!(run.stdout, "precious\n", "{}", run.stderr);
    let gc_out = std::fs::read_to_string(env.root().join("gc.json")).unwrap();
    let e = entry(&gc_out, "a");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], MOUNTED);
    let rm_code = std::fs::read_to_string(env.root().join("rm.code")).unwrap();
    assert_eq!(rm_code.trim(), "3");
    assert_eq!(
        std::fs::read_to_string(env.root().join("rm.out")).unwrap(),
        format!("kept  a: {MOUNTED}\n")
    );
    assert!(wt.join(".cache").is_dir() && wt.join("README").exists());
    // Outside the namespace nothing is mounted: gc removes it.
    for f in ["gc.json", "rm.out", "rm.err", "rm.code"] {
        let _ = std::fs::remove_file(env.root().join(f));
    }
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "a")["action"], "removed");
}

#[test]
fn a_bind_mount_from_the_same_device_keeps_the_worktree() {
    // Same device, same st_dev: only mountinfo tells.
    let env = setup();
    let wt = spawn_pushed(&env, "a", "mkdir .cache");
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f"), "precious\n").unwrap();
    let script = format!(
        "mount --bind {} \"$WT/.cache\" && \"$BP\" gc --json && \
         {{ \"$BP\" rm --force a >&2 || echo \"rm: $?\" >&2; }}",
        outside.display()
    );
    let Some(run) = in_mount_namespace(&env, &wt, &script) else {
        return;
    };
    let run = run.ok();
    let e = entry(&run.stdout, "a");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(e["reason"], MOUNTED);
    assert_contains(&run.stderr, &format!("kept  a: {MOUNTED}"));
    assert_contains(&run.stderr, "rm: 3");
    assert_eq!(
        std::fs::read_to_string(outside.join("f")).unwrap(),
        "precious\n"
    );
}

#[test]
fn a_directory_on_another_device_that_mountinfo_does_not_list_keeps_the_worktree() {
    // Two mounts mountinfo will not show: on an ignored directory itself
    // (`build`), and deeper inside one (`.cache/deep`).
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "echo build/ >> .gitignore && git add .gitignore && git commit -q -m ignore && \
         mkdir -p build .cache/deep",
    );
    let script = format!(
        "for d in build .cache/deep; do mount -t tmpfs none \"$WT/$d\" && \
           echo precious > \"$WT/$d/f\"; done && \
         {HIDE_MOUNTS} && \"$BP\" gc --json && cat \"$WT/build/f\" \"$WT/.cache/deep/f\" >&2"
    );
    let Some(run) = in_mount_namespace(&env, &wt, &script) else {
        return;
    };
    let run = run.ok();
    let e = entry(&run.stdout, "a");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "a file system is mounted at .cache/deep/ (bullpen never removes across file systems: \
         unmount it first); a file system is mounted at build/ (bullpen never removes across \
         file systems: unmount it first)"
    );
    assert!(
        run.stderr.ends_with("\nprecious\nprecious\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn rm_force_keeps_a_tracked_directory_or_a_repository_on_another_file_system() {
    // mountinfo hidden: a tmpfs over the tracked `src`, and an (empty,
    // clean) repository on a tmpfs at the untracked `clone`.
    let env = setup();
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir src clone && echo a > src/a.rs && git add src && git commit -q -m src",
    );
    let script = format!(
        "mount -t tmpfs none \"$WT/src\" && echo precious > \"$WT/src/f\" && \
         mount -t tmpfs none \"$WT/clone\" && git init -q \"$WT/clone\" && {HIDE_MOUNTS} && \
         {{ \"$BP\" rm --force a || echo \"rm: $?\"; }} && cat \"$WT/src/f\" >&2 && \
         test -d \"$WT/clone/.git\""
    );
    let Some(run) = in_mount_namespace(&env, &wt, &script) else {
        return;
    };
    let run = run.ok();
    assert_eq!(
        run.stdout,
        "kept  a: a file system is mounted at clone/ (bullpen never removes across file \
         systems: unmount it first); a file system is mounted at src/ (bullpen never removes \
         across file systems: unmount it first)\nrm: 3\n",
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with("precious\n"), "{}", run.stderr);
}

/// What gc did with an orphaned directory (a dangling `.git` file, nothing
/// else of its own) that has an empty tmpfs mounted at `mnt`: its entry, and
/// whether the mount point was still there, mounted, after gc. With
/// `fake_mountinfo`, bullpen reads a mountinfo that lists only `/`.
fn gc_orphan_with_a_mount(env: &Env, fake_mountinfo: bool) -> Option<(Value, bool)> {
    let anchor = env.spawn_sh("anchor", "echo keep > keep.txt");
    let root = anchor.parent().unwrap().to_path_buf();
    let orphan = crate::gc::orphan_dir(env, &root, "crashed");
    std::fs::create_dir_all(orphan.join("mnt")).unwrap();
    let hide = if fake_mountinfo {
        format!("{HIDE_MOUNTS} && ")
    } else {
        String::new()
    };
    let script = format!(
        "mount -t tmpfs none \"$WT/mnt\" && {hide}{{ \"$BP\" gc --json || true; }} && \
         {{ [ \"$(stat -c %d \"$WT/mnt\")\" = \"$(stat -c %d \"$WT\")\" ] || \
            echo still-mounted >&2; }}"
    );
    let run = in_mount_namespace(env, &orphan, &script)?;
    let entries: Vec<Value> = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    let e = entries
        .iter()
        .find(|e| e["kind"] == "orphan")
        .unwrap_or_else(|| panic!("no orphan in {entries:#?}\n{}", run.stderr))
        .clone();
    Some((e, run.stderr.contains("still-mounted")))
}

#[test]
fn gc_never_removes_an_orphan_across_a_mount_point_listed_in_mountinfo() {
    let env = setup();
    let Some((e, mounted)) = gc_orphan_with_a_mount(&env, false) else {
        return;
    };
    assert_ne!(e["action"], "removed", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains("a file system is mounted at ") && reason.ends_with("/crashed/mnt"),
        "{e}"
    );
    assert!(mounted, "{e}");
}

#[test]
fn gc_never_removes_an_orphan_across_a_device_boundary_mountinfo_does_not_list() {
    let env = setup();
    let Some((e, mounted)) = gc_orphan_with_a_mount(&env, true) else {
        return;
    };
    assert_ne!(e["action"], "removed", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.contains("/crashed/mnt is on another file system (a mount point)"),
        "{e}"
    );
    assert!(mounted, "{e}");
}

// ----- caches -----

/// The signature a `CACHEDIR.TAG` begins with (bford.info/cachedir).
const CACHEDIR_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

#[test]
fn tool_caches_that_ignore_themselves_are_disposable_and_named() {
    let env = setup();
    // What pytest, uv and ruff leave: each directory ignores itself (`*`); two
    // carry a CACHEDIR.TAG, the virtual environment its pyvenv.cfg.
    let script = format!(
        "mkdir -p .pytest_cache/v .venv/lib .ruff_cache && \
         for d in .pytest_cache .venv .ruff_cache; do echo '*' > $d/.gitignore; done && \
         printf '{CACHEDIR_SIGNATURE}\\n# pytest\\n' > .pytest_cache/CACHEDIR.TAG && \
         echo x > .pytest_cache/v/lastfailed && \
         printf 'home = /usr/bin\\n' > .venv/pyvenv.cfg && echo x > .venv/lib/site.py && \
         printf '{CACHEDIR_SIGNATURE}' > .ruff_cache/CACHEDIR.TAG && echo x > .ruff_cache/0"
    );
    let wt = spawn_pushed(&env, "a", &script);
    let (run, entries) = gc(&env, &["--dry-run"]);
    let run = run.ok();
    let e = session(&entries, "a");
    assert_eq!(e["action"], "removed", "{e}\n{}", run.stderr);
    assert_eq!(
        e["reason"],
        "holds no commit of its own, clean and idle; and 9 ignored files, \
         124 bytes, and .pytest_cache/, .ruff_cache/, .venv/: caches"
    );
    assert_eq!(
        e["ignored"]["caches"],
        serde_json::json!([".pytest_cache/", ".ruff_cache/", ".venv/"])
    );
    let (run, entries) = gc(&env, &[]);
    run.ok();
    assert_eq!(session(&entries, "a")["action"], "removed");
    assert!(!wt.exists());
}

#[test]
fn a_self_ignoring_directory_that_is_no_cache_keeps_the_worktree() {
    let env = setup();
    // A tag without the signature is no tag; `bullpen.gc.disposable` adds
    // what the user knows to be a cache.
    let wt = spawn_pushed(
        &env,
        "a",
        "mkdir notes tool && echo '*' > notes/.gitignore && echo plan > notes/plan.md && \
         echo 'not a tag' > notes/CACHEDIR.TAG && \
         echo '*' > tool/.gitignore && echo x > tool/state",
    );
    let e = session(&gc(&env, &["--dry-run"]).1, "a").clone();
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "an untracked .gitignore in notes/ hides 2 files, an untracked .gitignore in tool/ \
         hides 1 file"
    );
    env.git(
        &env.repo,
        &["config", "--add", "bullpen.gc.disposable", "tool"],
    )
    .ok();
    let e = session(&gc(&env, &["--dry-run"]).1, "a").clone();
    assert_eq!(
        e["reason"],
        "an untracked .gitignore in notes/ hides 2 files"
    );
    env.git(
        &env.repo,
        &["config", "--add", "bullpen.gc.disposable", "no*s"],
    )
    .ok();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "a");
    assert_eq!(e["action"], "removed", "{e}");
    assert_contains(e["reason"].as_str().unwrap(), "and notes/, tool/: caches");
    assert!(!wt.exists());
}

#[test]
fn a_cache_is_disposable_where_the_worktree_entry_is_gone_too() {
    // Compared with the branch tip through a temporary index (git's own
    // check-ignore), not through its worktree entry: the same rule.
    let env = setup();
    let script = format!(
        "mkdir .pytest_cache && echo '*' > .pytest_cache/.gitignore && \
         printf '{CACHEDIR_SIGNATURE}' > .pytest_cache/CACHEDIR.TAG && echo x > .pytest_cache/v"
    );
    let wt = spawn_pushed(&env, "a", &script);
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    let (run, entries) = gc(&env, &[]);
    run.ok();
    let e = session(&entries, "a");
    assert_eq!(e["action"], "removed", "{e}");
    assert_contains(e["reason"].as_str().unwrap(), "and .pytest_cache/: caches");
    assert!(!wt.exists());
}

#[test]
fn a_worktree_that_is_itself_a_mount_point_is_kept() {
    // Bound onto itself: the same files, now a mount point.
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let Some(run) = in_mount_namespace(
        &env,
        &wt,
        "mount --bind \"$WT\" \"$WT\" && \"$BP\" gc --json && test -e \"$WT/README\"",
    ) else {
        return;
    };
    let run = run.ok();
    let e = entry(&run.stdout, "a");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "the worktree is itself a mount point (bullpen never removes across file systems: \
         unmount it first)"
    );
}

/// Shell: `$WT` becomes a mount point of a tmpfs holding a copy of what it held.
const WT_ON_TMPFS: &str = "mkdir \"$R/copy\" && mount -t tmpfs none \"$R/copy\" && \
     cp -a \"$WT/.\" \"$R/copy/\" && mount --bind \"$R/copy\" \"$WT\"";

#[test]
fn a_worktree_on_a_file_system_of_its_own_is_kept_with_mountinfo_hidden() {
    let env = setup();
    let wt = spawn_pushed(&env, "a", "true");
    let script = format!("{WT_ON_TMPFS} && {HIDE_MOUNTS} && \"$BP\" gc --json");
    let Some(run) = in_mount_namespace(&env, &wt, &script) else {
        return;
    };
    let run = run.ok();
    let e = entry(&run.stdout, "a");
    assert_eq!(e["action"], "kept", "{e}");
    assert_eq!(
        e["reason"],
        "the worktree is itself a mount point (bullpen never removes across file systems: \
         unmount it first)"
    );
}

/// gc's entry for an orphaned directory (a dangling `.git` file, nothing else)
/// after `script` made it a mount point, and whether its `.git` file survived.
fn gc_orphan_that_is_a_mount_point(env: &Env, script: &str) -> Option<(Value, bool)> {
    let anchor = env.spawn_sh("anchor", "echo keep > keep.txt");
    let root = anchor.parent().unwrap().to_path_buf();
    let orphan = crate::gc::orphan_dir(env, &root, "crashed");
    let script = format!(
        "{script} && {{ \"$BP\" gc --json || true; }} && \
         {{ test -e \"$WT/.git\" && echo kept-git >&2 || true; }}"
    );
    let run = in_mount_namespace(env, &orphan, &script)?;
    let entries: Vec<Value> = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    let e = entries
        .iter()
        .find(|e| e["kind"] == "orphan")
        .unwrap_or_else(|| panic!("no orphan in {entries:#?}\n{}", run.stderr))
        .clone();
    Some((e, run.stderr.contains("kept-git")))
}

#[test]
fn gc_never_removes_an_orphan_that_is_itself_a_mount_point() {
    let env = setup();
    let Some((e, kept)) = gc_orphan_that_is_a_mount_point(&env, "mount --bind \"$WT\" \"$WT\"")
    else {
        return;
    };
    assert_ne!(e["action"], "removed", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("a file system is mounted at ") && reason.ends_with("/crashed"),
        "{e}"
    );
    assert!(kept, "{e}");
    // With mountinfo hidden, its device tells.
    let env = setup();
    let Some((e, kept)) =
        gc_orphan_that_is_a_mount_point(&env, &format!("{WT_ON_TMPFS} && {HIDE_MOUNTS}"))
    else {
        return;
    };
    assert_ne!(e["action"], "removed", "{e}");
    let reason = e["reason"].as_str().unwrap();
    assert!(
        reason.ends_with("/crashed is a mount point (another file system than its parent's)"),
        "{e}"
    );
    assert!(kept, "{e}");
}

#[test]
fn rm_force_keeps_an_untracked_directory_on_another_file_system() {
    // mountinfo hidden: status walks into the tmpfs at `data/mnt` and counts
    // its file as untracked; --force must not discard it.
    let env = setup();
    let wt = spawn_pushed(&env, "a", "mkdir -p data/mnt");
    let script = format!(
        "mount -t tmpfs none \"$WT/data/mnt\" && mkdir \"$WT/data/mnt/x\" && \
         echo precious > \"$WT/data/mnt/x/f\" && {HIDE_MOUNTS} && \
         {{ \"$BP\" rm --force a || echo \"rm: $?\"; }} && cat \"$WT/data/mnt/x/f\" >&2"
    );
    let Some(run) = in_mount_namespace(&env, &wt, &script) else {
        return;
    };
    let run = run.ok();
    assert_eq!(
        run.stdout,
        "kept  a: a file system is mounted at data/mnt/ (bullpen never removes across file \
         systems: unmount it first)\nrm: 3\n",
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with("precious\n"), "{}", run.stderr);
}
