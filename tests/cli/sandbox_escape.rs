//! `--sandbox`'s escapes (issue 26): what Landlock cannot deny inside a
//! directory it allows. Each test attacks from inside a real sandboxed run (a
//! script as the command) and shows that after the run nothing outside the
//! rules took effect: the session's `.git` file and admin directory are put
//! back, other sessions' branches are put back, a stale lock is removed, the
//! private TMPDIR of a killed run is swept, and bullpen's own reads of a
//! worktree run no program the agent configured. Skipped, saying so on stderr,
//! where the kernel lacks Landlock ABI 6.

use std::path::{Path, PathBuf};

use crate::support::{assert_contains, Env, Run, BIN};

/// Whether the kernel can enforce `--sandbox`; if not, says why on stderr.
fn kernel_has_landlock(env: &Env) -> bool {
    let run = env
        .cmd(BIN, &env.repo)
        .args(["spawn", "--sandbox=best-effort", "--dry-run", "probe"])
        .output()
        .expect("run git-bullpen");
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    let abi: i32 = out
        .lines()
        .find_map(|l| l.split("(Landlock ABI ").nth(1))
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if abi < 6 {
        eprintln!("SKIPPED: this kernel has Landlock ABI {abi}, --sandbox needs 6");
        return false;
    }
    true
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The events of a session's record, newest first.
fn events(env: &Env, id: &str) -> String {
    env.git_out(&["log", "--format=%s", &format!("refs/bullpen/sessions/{id}")])
}

/// The attack on the session's own git files: its `.git` and its admin
/// directory's `commondir`, `gitdir`, `config.worktree`, `HEAD`, and a
/// `config` and `hooks/` there, all naming a program (`fsmonitor`, a hook)
/// that would run at the user's next git command in the worktree, outside the
/// sandbox.
struct OwnFiles {
    admin: PathBuf,
    mark: PathBuf,
    dot_git: String,
    commondir: String,
    gitdir: String,
}

impl OwnFiles {
    /// Session `id` spawned (plain), and `extensions.worktreeConfig` on, so
    /// that git reads a worktree's `config.worktree`.
    fn new(env: &Env, id: &str) -> OwnFiles {
        env.bullpen(&["spawn", id, "--", "true"]).ok();
        env.git(&env.repo, &["config", "extensions.worktreeConfig", "true"])
            .ok();
        let wt = env.worktree_of(id);
        let admin = env.repo.join(".git/worktrees").join(id);
        OwnFiles {
            mark: env.root().join("ran-outside"),
            dot_git: read(&wt.join(".git")),
            commondir: read(&admin.join("commondir")),
            gitdir: read(&admin.join("gitdir")),
            admin,
        }
    }

    fn script(&self) -> String {
        format!(
            r#"set -e
git init -q .evilrepo
mv .evilrepo/.git .evil
rmdir .evilrepo
printf '#!/bin/sh\ntouch %s\n' {mark} > .evil/program
chmod +x .evil/program
git --git-dir=.evil config core.fsmonitor "$PWD/.evil/program"
printf 'gitdir: %s/.evil\n' "$PWD" > .git
printf '%s/.evil\n' "$PWD" > {admin}/commondir
printf '/nowhere/.git\n' > {admin}/gitdir
printf '[core]\n\tfsmonitor = %s/.evil/program\n' "$PWD" > {admin}/config.worktree
printf 'ref: refs/heads/main\n' > {admin}/HEAD
cp .evil/config {admin}/config
mkdir {admin}/hooks
cp .evil/program {admin}/hooks/post-commit
echo attacked
"#,
            mark = q(&self.mark),
            admin = q(&self.admin),
        )
    }

    /// After the run: everything spawn made is back, the run's versions are
    /// kept aside, and the user's git in the worktree runs nothing of theirs.
    fn check(&self, env: &Env, id: &str, said: &str) {
        let wt = env.worktree_of(id);
        // The user's own git in the worktree, outside any sandbox.
        env.git(&wt, &["status", "--short"]);
        env.git(&wt, &["commit", "-q", "--allow-empty", "-m", "after"]);
        assert!(
            !self.mark.exists(),
            "the run's program ran outside the sandbox"
        );
        assert_eq!(
            env.git_out(&["log", "-1", "--format=%s", &format!("bullpen/{id}")]),
            "after"
        );
        assert_eq!(
            env.git_out(&["log", "-1", "--format=%s", "main"]),
            "initial"
        );
        for (what, file) in [
            (".git", "put back as it was when the run started"),
            ("commondir", "put back as it was when the run started"),
            ("gitdir", "put back as it was when the run started"),
            (
                "config.worktree",
                "removed (it was not there when the run started)",
            ),
            ("HEAD", "put back on refs/heads/bullpen/"),
            ("config", "moved away (git never keeps a config there)"),
            ("hooks", "moved away (git never keeps a hooks there)"),
        ] {
            assert_contains(said, &format!("/{what}: {file}"));
        }
        assert_contains(said, "the run's version is kept at ");
        assert_eq!(read(&wt.join(".git")), self.dot_git);
        assert_eq!(read(&self.admin.join("commondir")), self.commondir);
        assert_eq!(read(&self.admin.join("gitdir")), self.gitdir);
        assert_eq!(
            read(&self.admin.join("HEAD")),
            format!("ref: refs/heads/bullpen/{id}\n")
        );
        for gone in ["config.worktree", "config", "hooks"] {
            assert!(!self.admin.join(gone).exists(), "{gone} is still there");
        }
        assert_eq!(
            events(env, id).lines().find(|l| l.contains("sandbox")),
            Some(
                format!(
                    "bullpen: {id} sandbox: put back .git, commondir, gitdir, config.worktree, \
                     HEAD, config, hooks"
                )
                .as_str()
            )
        );
        // The run's own git dir is still in the worktree: its work, not bullpen's.
        assert!(wt.join(".evil/config").exists());
    }
}

#[test]
fn a_foreground_run_s_git_files_are_put_back() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let own = OwnFiles::new(&env, "a");
    let run = env
        .bullpen(&["resume", "--sandbox", "a", "--", "sh", "-c", &own.script()])
        .ok();
    assert_eq!(run.stdout, "attacked\n", "{}", run.stderr);
    own.check(&env, "a", &run.stderr);
}

#[test]
fn a_background_run_s_git_files_are_put_back_by_its_supervisor() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let own = OwnFiles::new(&env, "a");
    env.bullpen(&[
        "resume",
        "--bg",
        "--sandbox",
        "a",
        "--",
        "sh",
        "-c",
        &own.script(),
    ])
    .ok();
    env.bullpen(&["wait", "a"]).ok();
    let log = env.bullpen(&["logs", "a", "--raw"]).ok().stdout;
    own.check(&env, "a", &log);
}

/// Poll `cond` until it holds, failing after a generous deadline (a failure
/// bound only: every wait here is for an event).
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

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
}

/// Sessions whose branches hold a commit of their own, spawned plainly.
fn sessions_with_commits(env: &Env, ids: &[&str]) {
    for id in ids {
        env.spawn_sh(
            id,
            "echo $BULLPEN_SESSION > f && git add f && git commit -qm $BULLPEN_SESSION",
        );
    }
}

fn tip(env: &Env, id: &str) -> String {
    env.git_out(&["rev-parse", &format!("refs/heads/bullpen/{id}")])
}

#[test]
fn other_sessions_branches_written_from_inside_are_put_back_and_real_updates_kept() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    // b and c have reflogs from their spawn; d to g none (git writes none
    // with core.logAllRefUpdates=false): the run's start makes them empty ones.
    sessions_with_commits(&env, &["b", "c"]);
    env.git(&env.repo, &["config", "core.logAllRefUpdates", "false"])
        .ok();
    sessions_with_commits(&env, &["d", "e", "f", "g", "h", "i"]);
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let before: Vec<String> = ["b", "c", "d", "e", "f", "h", "i"]
        .iter()
        .map(|id| tip(&env, id))
        .collect();
    let main = env.git_out(&["rev-parse", "main"]);
    let git = env.repo.join(".git");
    let go = env.root().join("go");
    mkfifo(&go);
    let script = format!(
        r#"refs={refs}
printf '%s\n' {main} | dd of="$refs/b" conv=notrunc 2>/dev/null && echo b-written
printf '%s\n' {main} > "$refs/c.new" && mv "$refs/c.new" "$refs/c" && echo c-renamed
rm "$refs/d" && echo d-deleted
: > "$refs/e.lock" && echo e-locked
printf 'ref: refs/heads/main\n' > "$refs/h.new" && mv "$refs/h.new" "$refs/h" && echo h-symbolic
printf 'garbage\n' > "$refs/i.new" && mv "$refs/i.new" "$refs/i" && echo i-garbage
git -c core.logAllRefUpdates=false update-ref refs/heads/bullpen/f {main} 2>/dev/null && echo f-UPDATED || echo f-denied
(: > {guard}) 2>/dev/null && echo guard-WRITTEN || echo guard-denied
rm -f {marker} 2>/dev/null; test -e {marker} && echo marker-kept || echo marker-REMOVED
touch ready
read x < {go}
"#,
        refs = q(&git.join("refs/heads/bullpen")),
        guard = q(&git.join("bullpen/local/a/sandbox.json")),
        marker = q(&git.join("bullpen/sandboxed/a")),
        go = q(&go),
    );
    let child = env
        .cmd(BIN, &env.repo)
        .args(["resume", "--sandbox", "a", "--", "sh", "-c", &script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run git-bullpen");
    let wt = env.worktree_of("a");
    until("the run's attack", || wt.join("ready").exists());
    // Meanwhile the user commits in g's worktree, outside the sandbox.
    let g = env.worktree_of("g");
    env.git(&g, &["commit", "-q", "--allow-empty", "-m", "g2"])
        .ok();
    let g_after = tip(&env, "g");
    std::fs::write(&go, "go\n").unwrap();
    let run: Run = child.wait_with_output().expect("wait").into();
    assert_eq!(
        run.stdout,
        "b-written\nc-renamed\nd-deleted\ne-locked\nh-symbolic\ni-garbage\nf-denied\nguard-denied\n\
         marker-kept\n",
        "{}",
        run.stderr
    );
    assert!(run.status.success(), "{}", run.stderr);
    let after: Vec<String> = ["b", "c", "d", "e", "f", "h", "i"]
        .iter()
        .map(|id| tip(&env, id))
        .collect();
    assert_eq!(after, before, "{}", run.stderr);
    assert_eq!(tip(&env, "g"), g_after, "a real update stays");
    env.git(&env.repo, &["symbolic-ref", "-q", "refs/heads/bullpen/h"])
        .fails();
    assert!(!git.join("refs/heads/bullpen/e.lock").exists());
    for (branch, how) in [
        ("b", "put back at "),
        ("c", "put back at "),
        ("d", "put back at "),
        ("h", "put back at "),
        ("i", "put back at "),
    ] {
        assert_contains(
            &run.stderr,
            &format!("session a's sandboxed run changed refs/heads/bullpen/{branch}: {how}"),
        );
    }
    assert_contains(
        &run.stderr,
        "e.lock: removed (a stale lock left by the run)",
    );
    assert!(!run.stderr.contains("bullpen/g"), "{}", run.stderr);
    // e commits again: no lock in its way.
    let e = env.worktree_of("e");
    env.git(&e, &["commit", "-q", "--allow-empty", "-m", "e2"])
        .ok();
}

#[test]
fn a_run_killed_with_its_bullpen_is_settled_by_the_next_command() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let own = OwnFiles::new(&env, "a");
    let wt = env.worktree_of("a");
    // The attack, then the private TMPDIR used and named, then held until killed.
    let script = format!(
        "{}echo kept > \"$TMPDIR/x\"\necho \"$TMPDIR\" > tmpdir\necho $$ > pid\ntouch ready\nexec sleep 1000\n",
        own.script()
    );
    let mut child = {
        use std::os::unix::process::CommandExt;
        env.cmd(BIN, &env.repo)
            .args(["resume", "--sandbox", "a", "--", "sh", "-c", &script])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("run git-bullpen")
    };
    until("the run's attack", || wt.join("ready").exists());
    // SIGKILL to bullpen and its command at once (one process group).
    // SAFETY: kill(2) on the group this test made.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    child.wait().expect("wait");
    let pid = read(&wt.join("pid")).trim().to_owned();
    until("the command to be gone", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    let tmp = PathBuf::from(read(&wt.join("tmpdir")).trim());
    assert!(tmp.join("x").exists(), "nothing settled it yet");
    assert_ne!(read(&wt.join(".git")), own.dot_git);
    // The next command that reads the worktrees settles it.
    let run = env.bullpen(&["ls", "--status"]).ok();
    assert_contains(
        &run.stderr,
        "warning: session a's sandboxed run ended without its bullpen (killed); checking what \
         it changed",
    );
    assert!(!tmp.exists(), "its private TMPDIR is swept");
    own.check(&env, "a", &run.stderr);
    // Settled once: the next command says nothing of it.
    let again = env.bullpen(&["ls", "--status"]).ok();
    assert!(!again.stderr.contains("sandbox"), "{}", again.stderr);
}

#[test]
fn gc_looking_into_a_repository_the_run_made_runs_none_of_its_filters() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    // Published and clean but for an ignored directory: gc looks inside it.
    std::fs::write(env.repo.join(".gitignore"), "build/\n").unwrap();
    env.git(&env.repo, &["add", ".gitignore"]).ok();
    env.git(&env.repo, &["commit", "-qm", "ignore build"]).ok();
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env.git(&env.repo, &["fetch", "-q", "origin"]).ok();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let mark = env.root().join("ran-outside");
    // A repository of the run's, whose clean filter would run at the next
    // status that hashes its file (its modification time no longer the index's).
    let script = format!(
        r#"set -e
mkdir build
git init -q build/nested
cd build/nested
printf '#!/bin/sh\ntouch %s 2>/dev/null\ncat\n' {mark} > ../program
chmod +x ../program
git config filter.evil.clean "$(cd .. && pwd)/program"
echo '* filter=evil' > .gitattributes
echo data > file
git add file .gitattributes
touch -d 2000-01-01 file
echo made
"#,
        mark = q(&mark)
    );
    let run = env
        .bullpen(&["resume", "--sandbox", "a", "--", "sh", "-c", &script])
        .ok();
    assert_eq!(run.stdout, "made\n", "{}", run.stderr);
    assert!(!mark.exists(), "the filter is confined in the run");
    let gc = env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(!mark.exists(), "gc ran the run's filter: {}", gc.stdout);
    // What the walk found is still reported as work.
    assert_contains(&gc.stdout, "build/nested");
    // And the user's own git, for comparison, does run it there.
    env.git(
        &env.worktree_of("a").join("build/nested"),
        &["status", "--short"],
    );
    assert!(mark.exists(), "the attack is real");
}

#[test]
fn gc_s_git_status_of_a_worktree_without_its_admin_entry_runs_no_hook_of_a_submodule() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let mark = env.root().join("ran-outside");
    // A submodule of the run's, with a hook git runs when it writes its index
    // (as a `git status` there does once a file's stat has changed).
    let script = format!(
        r#"set -e
git init -q sub
cd sub
echo x > f
git add f
git commit -qm sub
printf '#!/bin/sh\ntouch %s 2>/dev/null\n' {mark} > .git/hooks/post-index-change
chmod +x .git/hooks/post-index-change
cd ..
git add sub 2>/dev/null
git commit -qm 'with sub'
touch -d 2000-01-01 sub/f
echo made
"#,
        mark = q(&mark)
    );
    let run = env
        .bullpen(&["resume", "--sandbox", "a", "--", "sh", "-c", &script])
        .ok();
    assert_eq!(run.stdout, "made\n", "{}", run.stderr);
    assert!(!mark.exists());
    // Its admin entry lost (fault injection): gc compares the directory with
    // the branch through a temporary index, with git.
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/a")).unwrap();
    let gc = env.bullpen(&["gc", "--dry-run"]).ok();
    assert!(!mark.exists(), "gc ran the run's hook: {}", gc.stdout);
    assert_contains(&gc.stdout, "a:");
}

#[test]
fn git_s_own_state_of_a_worktree_survives_a_run_that_ends_mid_rebase() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    // Two commits, then a rebase that stops to edit the first: HEAD detached,
    // ORIG_HEAD, rebase-merge/, the index, logs/HEAD. And git stash, refused
    // (refs/stash is every worktree's), in git's own words.
    let script = r#"set -e
echo one > one && git add one && git commit -qm one
echo two > two && git add two && git commit -qm two
echo change >> two
git stash 2>&1 || echo refused
grep -q change two && echo kept
git checkout -q -- two
GIT_SEQUENCE_EDITOR='sed -i 1s/^pick/edit/' git rebase -qi HEAD~2 >/dev/null 2>&1
echo change >> one
echo stopped
"#;
    let run = env
        .bullpen(&["resume", "--sandbox", "a", "--", "sh", "-c", script])
        .ok();
    assert_eq!(
        run.stdout, "Cannot save the current status\nrefused\nkept\nstopped\n",
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("sandboxed run changed"),
        "{}",
        run.stderr
    );
    let admin = env.repo.join(".git/worktrees/a");
    assert!(admin.join("rebase-merge").is_dir());
    assert!(admin.join("ORIG_HEAD").exists());
    assert!(!read(&admin.join("HEAD")).starts_with("ref:"), "detached");
    // The user finishes the rebase: the branch has both commits, and the change.
    let wt = env.worktree_of("a");
    env.git(&wt, &["commit", "-q", "--amend", "-am", "one, edited"])
        .ok();
    env.git(&wt, &["rebase", "--continue"]).ok();
    assert_eq!(
        env.git_out(&["log", "--format=%s", "main..bullpen/a"]),
        "two\none, edited"
    );
}
