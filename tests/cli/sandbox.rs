//! `--sandbox` (issue 26): under Landlock the session's command commits on its
//! own branch and writes nowhere that could run later outside the sandbox.
//! Needs a kernel with Landlock ABI 6; where it lacks it, each test says so on
//! stderr and passes without checking (a kernel without Landlock is played with
//! the test-only `BULLPEN_TEST_LANDLOCK_ABI`).

use std::path::{Path, PathBuf};

use crate::support::{assert_contains, make_executable, Env, Run, BIN};

/// The kernel's Landlock ABI, as the binary sees it (`spawn --dry-run`'s last lines).
fn landlock_abi(env: &Env) -> i32 {
    let run = env
        .cmd(BIN, &env.repo)
        .args(["spawn", "--sandbox=best-effort", "--dry-run", "probe"])
        .output()
        .expect("run git-bullpen");
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    out.lines()
        .find_map(|l| l.split("(Landlock ABI ").nth(1))
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Whether the kernel can enforce `--sandbox`; if not, says why on stderr.
fn kernel_has_landlock(env: &Env) -> bool {
    let abi = landlock_abi(env);
    if abi < 6 {
        eprintln!("SKIPPED: this kernel has Landlock ABI {abi}, --sandbox needs 6");
        return false;
    }
    true
}

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// What a sandboxed run tries, and what it must not leave behind.
struct Probe {
    other_worktree: PathBuf,
    outside_tmp: PathBuf,
    config_before: String,
    main_before: String,
}

impl Probe {
    fn new(env: &Env) -> Probe {
        let other_worktree = env.spawn_sh("other", "true");
        let outside_tmp = std::env::temp_dir().join(format!(
            "bullpen-sandbox-probe-{}-{}",
            std::process::id(),
            env.root().file_name().unwrap().to_string_lossy()
        ));
        Probe {
            other_worktree,
            outside_tmp,
            config_before: std::fs::read_to_string(env.repo.join(".git/config")).unwrap(),
            main_before: env.git_out(&["rev-parse", "refs/heads/main"]),
        }
    }

    /// The shell script: git's everyday work, then each write that must fail.
    fn script(&self, env: &Env) -> String {
        let git = env.repo.join(".git");
        let q = |p: &Path| sh_quote(p);
        format!(
            r#"
op() {{ n=$1; shift; if "$@" >/dev/null 2>"$TMPDIR/err"; then echo "$n: ok"; else echo "$n: FAILED $(cat "$TMPDIR/err")"; fi; }}
must_fail() {{ n=$1; shift; if out=$("$@" 2>&1); then echo "$n: WRITTEN"; else case "$out" in *"Permission denied"*) echo "$n: denied";; *) echo "$n: failed otherwise: $out";; esac; fi; }}
w() {{ printf 'x\n' >> "$1"; }}
echo one > a
op add git add a
op commit git commit -qm one
echo two > b
op commit2 sh -c 'git add b && git commit -qm two'
op status git status --short
op log git log --oneline
op diff git diff HEAD~1
op amend git commit --amend -qm two-amended
op rebase env GIT_SEQUENCE_EDITOR='sed -i 2s/^pick/squash/' git rebase -qi HEAD~2
echo three >> a
if git stash >/dev/null 2>&1; then echo "stash: STASHED"; else echo "stash: refused"; fi
must_fail main-checkout w {main}
must_fail main-new w {main_new}
must_fail other-worktree w {other}
must_fail config w {config}
must_fail hook w {hook}
must_fail packed-refs w {packed}
must_fail refs-main w {refs_main}
must_fail update-ref git update-ref refs/heads/main HEAD
must_fail home w "$HOME/x"
must_fail tmp w {tmp}
op private-tmp w "$TMPDIR/x"
"#,
            main = q(&env.repo.join("README")),
            main_new = q(&env.repo.join("new")),
            other = q(&self.other_worktree.join("README")),
            config = q(&git.join("config")),
            hook = q(&git.join("hooks/post-checkout")),
            packed = q(&git.join("packed-refs")),
            refs_main = q(&git.join("refs/heads/main")),
            tmp = q(&self.outside_tmp),
        )
    }

    const EXPECTED: &'static str = "\
add: ok
commit: ok
commit2: ok
status: ok
log: ok
diff: ok
amend: ok
rebase: ok
stash: refused
main-checkout: denied
main-new: denied
other-worktree: denied
config: denied
hook: denied
packed-refs: denied
refs-main: denied
update-ref: denied
home: denied
tmp: denied
private-tmp: ok
";

    /// Nothing of what was denied was written; the work is on the branch, and
    /// what `git stash` could not take is still in the worktree.
    fn check_nothing_written(&self, env: &Env, id: &str) {
        let git = env.repo.join(".git");
        let readme = std::fs::read_to_string(env.repo.join("README")).unwrap();
        assert_eq!(readme, "hello\n");
        assert!(!env.repo.join("new").exists());
        let other = std::fs::read_to_string(self.other_worktree.join("README")).unwrap();
        assert_eq!(other, "hello\n");
        assert_eq!(
            std::fs::read_to_string(git.join("config")).unwrap(),
            self.config_before
        );
        assert!(!git.join("hooks/post-checkout").exists());
        assert!(!git.join("packed-refs").exists());
        assert_eq!(
            env.git_out(&["rev-parse", "refs/heads/main"]),
            self.main_before
        );
        assert!(!env.home.join("x").exists());
        assert!(!self.outside_tmp.exists());
        let _ = std::fs::remove_file(&self.outside_tmp);
        // one and two, squashed by the rebase into one commit on the branch.
        let branch = format!("bullpen/{id}");
        assert_eq!(
            env.git_out(&["rev-list", "--count", &format!("main..{branch}")]),
            "1"
        );
        assert_eq!(
            env.git_out(&["log", "-1", "--format=%B", &branch]),
            "one\n\ntwo-amended"
        );
        let a = std::fs::read_to_string(env.worktree_of(id).join("a")).unwrap();
        assert_eq!(a, "one\nthree\n", "the change git stash refused is kept");
    }
}

#[test]
fn a_sandboxed_run_commits_on_its_branch_and_writes_nothing_else() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let probe = Probe::new(&env);
    let run = env
        .bullpen(&[
            "spawn",
            "--sandbox",
            "a",
            "--",
            "sh",
            "-c",
            &probe.script(&env),
        ])
        .ok();
    assert_eq!(run.stdout, Probe::EXPECTED, "stderr:\n{}", run.stderr);
    probe.check_nothing_written(&env, "a");
    let json = env.ls_json();
    let row = json
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "a")
        .unwrap();
    assert_eq!(row["sandbox"]["enforcement"], "landlock", "{row}");
    assert_eq!(row["sandbox"]["mode"], "strict");
    assert!(row["sandbox"]["writable"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!(env.worktree_of("a"))));
}

#[test]
fn a_sandboxed_background_run_is_confined_the_same() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let probe = Probe::new(&env);
    // Its report through the worktree (the log is a terminal's, with its line ends).
    let script = format!(
        "( {} ) > \"$TMPDIR/out\"; cp \"$TMPDIR/out\" .out",
        probe.script(&env)
    );
    env.bullpen(&["spawn", "--bg", "--sandbox", "a", "--", "sh", "-c", &script])
        .ok();
    env.bullpen(&["wait", "a"]).ok();
    let wt = env.worktree_of("a");
    let out = std::fs::read_to_string(wt.join(".out")).unwrap();
    assert_eq!(out, Probe::EXPECTED);
    probe.check_nothing_written(&env, "a");
    assert_eq!(env.record("a")["sandbox"]["enforcement"], "landlock");
}

/// The script of one commit, reporting whether it landed.
/// (Each session's own content: with the tests' fixed dates, the same commit
/// would already be in the object store.)
const COMMIT: &str = "echo $BULLPEN_SESSION > f 2>/dev/null; git add f 2>/dev/null; git commit -qm f >/dev/null 2>&1 && echo committed || echo refused";

fn commit_without(env: &Env, id: &str, drop: &str) -> Run {
    env.cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_SANDBOX_DROP", drop)
        .args(["spawn", "--sandbox", id, "--", "sh", "-c", COMMIT])
        .output()
        .expect("run git-bullpen")
        .into()
}

#[test]
fn each_writable_root_is_needed_for_a_commit() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    assert_eq!(commit_without(&env, "all", "").stdout, "committed\n");
    // The rights on refs/heads/bullpen/ are the smallest set: the lock is
    // created (make-reg) and written (write-file), then renamed onto the ref
    // in the same directory (remove-file; no refer, no make-dir).
    for drop in [
        "worktree",
        "admin",
        "objects",
        "refs",
        "refs:write-file",
        "refs:make-reg",
        "refs:remove-file",
        "reflog",
    ] {
        let id = format!("without-{}", drop.replace(':', "-"));
        let run = commit_without(&env, &id, drop);
        assert_eq!(run.stdout, "refused\n", "without {drop}: {}", run.stderr);
        assert_eq!(
            env.git_out(&["rev-parse", &format!("bullpen/{id}")]),
            env.git_out(&["rev-parse", "main"]),
            "without {drop}"
        );
    }
}

#[test]
fn without_landlock_sandbox_fails_closed_and_best_effort_says_what_is_not_enforced() {
    let env = Env::new();
    let before = env.snapshot();
    let marker = env.root().join("ran");
    let touch = format!("touch {}", sh_quote(&marker));
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_LANDLOCK_ABI", "0")
        .args(["spawn", "--sandbox", "a", "--", "sh", "-c", &touch])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: --sandbox needs Landlock ABI 6 (Linux 6.12 or newer); this kernel has no \
         Landlock: nothing was run\nhint: --sandbox=best-effort",
    );
    assert!(!marker.exists());
    assert_eq!(env.snapshot(), before, "nothing was made");
    // The same for --bg, and for a config default.
    env.git(&env.repo, &["config", "bullpen.sandbox", "true"])
        .ok();
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_LANDLOCK_ABI", "0")
        .args(["spawn", "--bg", "a", "--", "sh", "-c", &touch])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(!marker.exists());
    // --no-sandbox overrides the config.
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_LANDLOCK_ABI", "0")
        .args(["spawn", "--no-sandbox", "b", "--", "sh", "-c", &touch])
        .output()
        .unwrap()
        .into();
    assert!(run.status.success(), "{}", run.stderr);
    assert!(marker.exists());
    assert!(env.record("b").get("sandbox").is_none());
    std::fs::remove_file(&marker).unwrap();
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_LANDLOCK_ABI", "0")
        .args([
            "spawn",
            "--sandbox=best-effort",
            "c",
            "--",
            "sh",
            "-c",
            &touch,
        ])
        .output()
        .unwrap()
        .into();
    assert!(run.status.success(), "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: --sandbox=best-effort: not enforced here: any write rule: the kernel has no \
         Landlock",
    );
    assert!(marker.exists(), "best-effort runs");
    let rec = env.record("c");
    assert_eq!(rec["sandbox"]["enforcement"], "none");
    assert_eq!(rec["sandbox"]["mode"], "best-effort");
}

#[test]
fn signals_and_truncation_outside_are_denied_and_best_effort_names_what_an_older_abi_lacks() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    // A process outside the sandbox, and the repository's config.
    let mut outside = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .expect("sleep");
    let config = env.repo.join(".git/config");
    let before = std::fs::read_to_string(&config).unwrap();
    let script = format!(
        "kill -0 {pid} 2>/dev/null && echo kill-allowed || echo kill-denied; \
         perl -e 'truncate($ARGV[0], 0) or exit 1' {config} && echo truncated || echo \
         truncate-denied",
        pid = outside.id(),
        config = sh_quote(&config)
    );
    let strict = env
        .bullpen(&["spawn", "--sandbox", "a", "--", "sh", "-c", &script])
        .ok();
    assert_eq!(
        strict.stdout, "kill-denied\ntruncate-denied\n",
        "{}",
        strict.stderr
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    // Landlock ABI 2 handles neither: best-effort runs, and says so.
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("BULLPEN_TEST_LANDLOCK_ABI", "2")
        .args([
            "spawn",
            "--sandbox=best-effort",
            "b",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap()
        .into();
    let _ = outside.kill();
    let _ = outside.wait();
    assert!(run.status.success(), "{}", run.stderr);
    assert_eq!(run.stdout, "kill-allowed\ntruncated\n", "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "warning: --sandbox=best-effort: not enforced here: truncating files outside the \
         writable paths (needs Landlock ABI 3); signals and abstract Unix sockets to processes \
         outside the sandbox (needs Landlock ABI 6)",
    );
    assert_eq!(
        env.record("b")["sandbox"]["not_enforced"][0],
        "truncating files outside the writable paths (needs Landlock ABI 3)"
    );
    let ls = env.bullpen(&["ls"]).ok();
    assert_contains(&ls.stdout, "(sandboxed, best-effort)");
    assert_contains(&ls.stdout, "ago (sandboxed)");
}

#[test]
fn the_command_s_git_runs_without_automatic_gc_keeping_the_caller_s_dash_c() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let run = env
        .git_bullpen(
            &env.repo,
            &[
                "-c",
                "my.key=it's",
                "bullpen",
                "spawn",
                "--sandbox",
                "a",
                "--",
                "sh",
                "-c",
                "for k in my.key gc.auto gc.autoPackLimit gc.packRefs maintenance.auto; do \
                 printf '%s=%s\\n' $k \"$(git config $k)\"; done; echo \"tmp=$TMPDIR\"",
            ],
        )
        .ok();
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.by_ref().take(5).collect::<Vec<_>>(),
        [
            "my.key=it's",
            "gc.auto=0",
            "gc.autoPackLimit=0",
            "gc.packRefs=false",
            "maintenance.auto=false"
        ]
    );
    // The private temporary directory is gone with the run.
    let tmp = lines
        .next()
        .unwrap()
        .strip_prefix("tmp=")
        .unwrap()
        .to_owned();
    assert!(tmp.contains("bullpen-a-"), "{tmp}");
    assert!(
        !Path::new(&tmp).exists(),
        "{tmp} removed at the end of the run"
    );
}

#[test]
fn resume_and_the_config_default_sandbox_and_allow_write_adds_a_path() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    let state = env.home.join("state");
    std::fs::create_dir(&state).unwrap();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let script = "echo x > f; git add f; git commit -qm f 2>/dev/null && echo committed; \
                  (echo s > ~/state/s) 2>/dev/null && echo state-written || echo state-denied";
    env.git(&env.repo, &["config", "bullpen.sandbox", "true"])
        .ok();
    let run = env.bullpen(&["resume", "a", "--", "sh", "-c", script]).ok();
    assert_eq!(run.stdout, "committed\nstate-denied\n", "{}", run.stderr);
    assert_eq!(env.record("a")["sandbox"]["mode"], "strict");
    env.git(
        &env.repo,
        &["config", "--add", "bullpen.sandbox.allowWrite", "~/state"],
    )
    .ok();
    let script = "(echo s > ~/state/s) 2>/dev/null && echo state-written || echo state-denied";
    let run = env.bullpen(&["resume", "a", "--", "sh", "-c", script]).ok();
    assert_eq!(run.stdout, "state-written\n", "{}", run.stderr);
    // --no-sandbox: the record says so (no sandbox key).
    env.bullpen(&["resume", "--no-sandbox", "a", "--", "true"])
        .ok();
    assert!(env.record("a").get("sandbox").is_none());
}

#[test]
fn claude_under_the_sandbox_commits_and_keeps_its_state() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    // A stand-in for Claude Code: it writes its state, commits, and tries a hook.
    let bin = env.root().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let hook = env.repo.join(".git/hooks/pre-commit");
    std::fs::write(
        bin.join("claude"),
        format!(
            "#!/bin/sh\necho conv > ~/.claude/conversation\necho fix > login\ngit add login\n\
             git commit -qm 'fix login' 2>/dev/null && echo committed\n\
             (echo evil > {}) 2>/dev/null || echo no-hook\n",
            sh_quote(&hook)
        ),
    )
    .unwrap();
    make_executable(&bin.join("claude"));
    std::fs::create_dir(env.home.join(".claude")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run: Run = env
        .cmd(BIN, &env.repo)
        .env("PATH", path)
        .args(["spawn", "--sandbox", "--agent", "claude", "fix-login"])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.stdout, "committed\nno-hook\n", "{}", run.stderr);
    assert_eq!(
        env.git_out(&["log", "-1", "--format=%s", "bullpen/fix-login"]),
        "fix login"
    );
    assert!(env.home.join(".claude/conversation").exists());
    assert!(!hook.exists());
}

#[test]
fn dry_run_prints_the_rules_and_makes_nothing() {
    let env = Env::new();
    let before = env.snapshot();
    let run = env
        .bullpen(&["spawn", "--sandbox=best-effort", "--dry-run", "fix-login"])
        .ok();
    let git = env.repo.join(".git");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("write ") && lines[0].contains("/fix-login  # the session's worktree")
    );
    assert_contains(
        &run.stdout,
        &format!(
            "write           {}/worktrees/fix-login  # its admin directory",
            git.display()
        ),
    );
    assert_contains(
        &run.stdout,
        &format!(
            "files           {}/refs/heads/bullpen  # refs/heads/bullpen/fix-login and its lock",
            git.display()
        ),
    );
    assert_eq!(env.snapshot(), before);
    let run = env.bullpen(&["spawn", "--dry-run", "x"]).fails();
    assert_contains(&run.stderr, "--dry-run prints the rules of --sandbox");
}

#[test]
fn a_branch_without_a_reflog_or_a_loose_ref_still_commits() {
    let env = Env::new();
    if !kernel_has_landlock(&env) {
        return;
    }
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    // Its reflog gone, and its ref packed: nothing left in either directory.
    let git = env.repo.join(".git");
    std::fs::remove_file(git.join("logs/refs/heads/bullpen/a")).unwrap();
    env.git(&env.repo, &["pack-refs", "--all"]).ok();
    std::fs::remove_dir(git.join("logs/refs/heads/bullpen")).unwrap();
    assert!(!git.join("refs/heads/bullpen").exists());
    let run = env
        .bullpen(&["resume", "--sandbox", "a", "--", "sh", "-c", COMMIT])
        .ok();
    assert_eq!(run.stdout, "committed\n", "{}", run.stderr);
    assert_eq!(env.git_out(&["log", "-1", "--format=%s", "bullpen/a"]), "f");
}
