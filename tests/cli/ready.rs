//! New worktrees that are ready to work in: the ignored files `.worktreeinclude`
//! names, copied from the main worktree, and the `bullpen.setup` commands.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{assert_contains, Env};

/// A repository that ignores `.env`, `*.log` and `cache/`, with an ignored
/// `.env` (mode 0600), an ignored `debug.log`, and `.worktreeinclude` (tracked)
/// naming `lines`.
fn repo_with_include(lines: &str) -> Env {
    let env = Env::new();
    std::fs::write(env.repo.join(".gitignore"), ".env\n*.log\ncache/\n").unwrap();
    std::fs::write(env.repo.join(".worktreeinclude"), lines).unwrap();
    env.git(&env.repo, &["add", ".gitignore", ".worktreeinclude"])
        .ok();
    env.git(&env.repo, &["commit", "-qm", "ignore and include"])
        .ok();
    let dotenv = env.repo.join(".env");
    std::fs::write(&dotenv, "SECRET=1\n").unwrap();
    std::fs::set_permissions(&dotenv, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(env.repo.join("debug.log"), "noise\n").unwrap();
    env
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn an_ignored_file_it_names_is_copied_and_one_it_does_not_name_is_not() {
    let env = repo_with_include(".env\ncache/\nlogs/keep.log\n");
    // A directory holding only ignored files, which git lists as one entry.
    std::fs::create_dir_all(env.repo.join("logs")).unwrap();
    std::fs::write(env.repo.join("logs/keep.log"), "keep\n").unwrap();
    std::fs::write(env.repo.join("logs/other.log"), "other\n").unwrap();
    std::fs::create_dir_all(env.repo.join("cache/deep")).unwrap();
    std::fs::write(env.repo.join("cache/deep/blob"), "b").unwrap();
    let run = env
        .bullpen(&["spawn", "a", "--", "test", "-f", ".env"])
        .ok();
    let wt = env.worktree_of("a");
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(mode(&wt.join(".env")), 0o600, "permissions kept");
    // An ignored directory it names comes whole.
    assert_eq!(
        std::fs::read_to_string(wt.join("cache/deep/blob")).unwrap(),
        "b"
    );
    // Ignored, but not named: not copied.
    assert!(!wt.join("debug.log").exists());
    assert_contains(
        &run.stderr,
        "copied from the main worktree (.worktreeinclude): .env, cache",
    );
    // The copies are ignored there too: the worktree is clean for gc.
    assert_eq!(
        env.git_out(&["-C", wt.to_str().unwrap(), "status", "--porcelain"]),
        ""
    );
}

#[test]
fn a_tracked_file_is_never_copied_over() {
    let env = repo_with_include(".env\nsettings.json\n");
    // Tracked (and, in the main worktree, changed but not committed).
    std::fs::write(env.repo.join("settings.json"), "{\"committed\": true}\n").unwrap();
    env.git(&env.repo, &["add", "settings.json"]).ok();
    env.git(&env.repo, &["commit", "-qm", "settings"]).ok();
    std::fs::write(env.repo.join("settings.json"), "{\"local\": true}\n").unwrap();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let wt = env.worktree_of("a");
    assert_eq!(
        std::fs::read_to_string(wt.join("settings.json")).unwrap(),
        "{\"committed\": true}\n"
    );
    assert!(wt.join(".env").exists());
    // Ignored in the main worktree, tracked on the branch the session starts
    // from: the checked-out file stays.
    env.git(&env.repo, &["checkout", "-qb", "with-env"]).ok();
    std::fs::write(env.repo.join(".env"), "TRACKED=1\n").unwrap();
    env.git(&env.repo, &["add", "-f", ".env"]).ok();
    env.git(&env.repo, &["commit", "-qm", "env on a branch"])
        .ok();
    env.git(&env.repo, &["checkout", "-q", "main"]).ok();
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    let run = env
        .bullpen(&["spawn", "b", "--base", "with-env", "--", "true"])
        .ok();
    let wt_b = env.worktree_of("b");
    assert_eq!(
        std::fs::read_to_string(wt_b.join(".env")).unwrap(),
        "TRACKED=1\n"
    );
    assert_contains(
        &run.stderr,
        "not copying '.env': the new worktree has it already",
    );
}

#[test]
fn a_pattern_reaching_outside_the_worktree_is_refused_before_anything_is_created() {
    let env = repo_with_include(".env\n../outside/*\n");
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "a", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        ".worktreeinclude:2: the pattern '../outside/*' reaches outside the worktree",
    );
    assert_eq!(env.snapshot(), before);
}

#[test]
fn symbolic_links_are_not_followed_out_of_the_worktree() {
    let env = repo_with_include(".env\nlinked/\n");
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("key"), "private\n").unwrap();
    // An ignored `.env` that is a link to a file outside, and an ignored
    // directory that is a link to a directory outside.
    std::fs::remove_file(env.repo.join(".env")).unwrap();
    std::os::unix::fs::symlink(outside.join("key"), env.repo.join(".env")).unwrap();
    std::fs::write(env.repo.join(".gitignore"), ".env\n*.log\ncache/\nlinked\n").unwrap();
    std::os::unix::fs::symlink(&outside, env.repo.join("linked")).unwrap();
    let run = env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let wt = env.worktree_of("a");
    assert!(
        std::fs::symlink_metadata(wt.join(".env")).is_err(),
        "{}",
        run.stderr
    );
    assert!(std::fs::symlink_metadata(wt.join("linked")).is_err());
    assert_contains(&run.stderr, "not copying '.env': it is a symbolic link");
}

#[test]
fn setup_runs_in_order_in_the_worktree_before_the_command_with_the_sessions_environment() {
    let env = Env::new();
    let log = env.root().join("setup.log");
    let log = log.display();
    env.git_out(&[
        "config",
        "--add",
        "bullpen.setup",
        &format!("echo \"one $PWD $BULLPEN_MAIN_WORKTREE $BULLPEN_SESSION\" >> '{log}'"),
    ]);
    env.git_out(&[
        "config",
        "--add",
        "bullpen.setup",
        &format!("echo two >> '{log}'; echo ready > .setup-done; echo 'to stdout'"),
    ]);
    let run = env
        .bullpen(&[
            "spawn",
            "a",
            "--",
            "sh",
            "-c",
            &format!("cat .setup-done >> '{log}'"),
        ])
        .ok();
    let wt = env.worktree_of("a");
    let main = std::fs::canonicalize(&env.repo).unwrap();
    assert_eq!(
        std::fs::read_to_string(env.root().join("setup.log")).unwrap(),
        format!("one {} {} a\ntwo\nready\n", wt.display(), main.display())
    );
    // Its output goes to stderr: stdout stays bullpen's (and the command's).
    assert_eq!(run.stdout, "");
    assert_contains(&run.stderr, "to stdout");
    assert_contains(&run.stderr, "bullpen: setup 2/2: ");
    // --no-setup skips it.
    env.bullpen(&["spawn", "b", "--no-setup", "--", "true"])
        .ok();
    let text = std::fs::read_to_string(env.root().join("setup.log")).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    // In the background, before the dispatcher returns: stdout is the id alone.
    let run = env.bullpen(&["spawn", "--bg", "c", "--", "true"]).ok();
    assert_eq!(run.stdout, "c\n");
    assert_contains(&run.stderr, "to stdout");
    env.bullpen(&["wait", "c"]).ok();
}

#[test]
fn a_failing_setup_leaves_the_repository_exactly_as_it_was() {
    let env = repo_with_include(".env\n");
    let ran = env.root().join("command-ran");
    env.git_out(&["config", "--add", "bullpen.setup", "echo fine"]);
    env.git_out(&[
        "config",
        "--add",
        "bullpen.setup",
        "echo 'npm ERR! missing script: ci' >&2; exit 7",
    ]);
    env.git_out(&["config", "--add", "bullpen.setup", "echo never"]);
    let before = env.snapshot();
    for bg in [false, true] {
        let mut args = vec!["spawn"];
        if bg {
            args.push("--bg");
        }
        let touch = format!("touch '{}'", ran.display());
        args.extend(["a", "--", "sh", "-c", &touch]);
        let run = env.bullpen(&args);
        assert_eq!(run.code(), 125, "{}", run.stderr);
        assert_contains(&run.stderr, "npm ERR! missing script: ci");
        assert_contains(&run.stderr, "failed (exit 7)");
        assert_contains(
            &run.stderr,
            "session a was not created; nothing of it is left",
        );
        assert_contains(&run.stderr, "--no-setup");
        assert!(!run.stderr.contains("never"), "{}", run.stderr);
        assert!(!ran.exists(), "the command must not run");
        // Refs, worktrees, and every file under BULLPEN_HOME (worktree root,
        // local state) as they were.
        assert_eq!(env.snapshot(), before, "bg: {bg}");
        // And what this machine knows of sessions, under the git dir.
        let ours = env.repo.join(".git/bullpen");
        assert!(!ours.join("local/a").exists(), "bg: {bg}");
        assert!(!ours.join("logs/a.log").exists(), "bg: {bg}");
    }
    // The same spawn without setup works: nothing was left in the way.
    env.bullpen(&["spawn", "a", "--no-setup", "--", "true"])
        .ok();
}

#[test]
fn setup_comes_only_from_git_config() {
    // A committed file of that name is no setup: cloning never runs its code.
    let env = Env::new();
    let ran = env.root().join("ran");
    std::fs::write(
        env.repo.join(".bullpen-setup"),
        format!("touch '{}'\n", ran.display()),
    )
    .unwrap();
    std::fs::write(
        env.repo.join(".gitconfig"),
        format!("[bullpen]\n\tsetup = touch '{}'\n", ran.display()),
    )
    .unwrap();
    env.git(&env.repo, &["add", "."]).ok();
    env.git(&env.repo, &["commit", "-qm", "setup files"]).ok();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    assert!(!ran.exists());
}

#[test]
fn nothing_is_written_through_a_symbolic_link_of_the_new_worktree() {
    // In the main worktree `conf/` is a directory with an ignored file; on the
    // branch the session starts from, `conf` is a (tracked) link out of the
    // worktree. The copy must not land at the link's target.
    let env = repo_with_include("conf/local.yml\n");
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    env.git(&env.repo, &["checkout", "-qb", "linked"]).ok();
    std::os::unix::fs::symlink(&outside, env.repo.join("conf")).unwrap();
    env.git(&env.repo, &["add", "conf"]).ok();
    env.git(&env.repo, &["commit", "-qm", "conf is a link"])
        .ok();
    env.git(&env.repo, &["checkout", "-q", "main"]).ok();
    std::fs::create_dir_all(env.repo.join("conf")).unwrap();
    std::fs::write(env.repo.join("conf/local.yml"), "local\n").unwrap();
    std::fs::write(env.repo.join(".git/info/exclude"), "conf/local.yml\n").unwrap();
    let run = env
        .bullpen(&["spawn", "a", "--base", "linked", "--", "true"])
        .ok();
    assert!(!outside.join("local.yml").exists(), "{}", run.stderr);
    assert_contains(&run.stderr, "not copying 'conf/local.yml'");
}

#[test]
fn a_worktree_that_resume_recreates_is_made_ready_too() {
    let env = repo_with_include(".env\n");
    let log = env.root().join("setup.log");
    env.git_out(&[
        "config",
        "--add",
        "bullpen.setup",
        &format!("echo \"$BULLPEN_SESSION\" >> '{}'", log.display()),
    ]);
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let wt = env.worktree_of("a");
    std::fs::remove_dir_all(&wt).unwrap();
    let run = env
        .bullpen(&["resume", "a", "--", "test", "-f", ".env"])
        .ok();
    assert_contains(&run.stderr, "recreating it from bullpen/a");
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\na\n");
    // --no-setup skips setup there too.
    std::fs::remove_dir_all(&wt).unwrap();
    env.bullpen(&["resume", "a", "--no-setup", "--", "true"])
        .ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\na\n");
    // A failing setup takes the recreated worktree away again; the branch and
    // the record stay, and nothing runs.
    env.git_out(&["config", "--add", "bullpen.setup", "exit 3"]);
    std::fs::remove_dir_all(&wt).unwrap();
    let ran = env.root().join("ran");
    let touch = format!("touch '{}'", ran.display());
    let run = env.bullpen(&["resume", "a", "--", "sh", "-c", &touch]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "the recreated worktree of session a was removed again",
    );
    assert!(!ran.exists());
    assert!(!wt.exists());
    env.git_out(&["rev-parse", "--verify", "bullpen/a"]);
    assert!(!env
        .git_out(&["worktree", "list", "--porcelain"])
        .contains("/a\n"));
    // And it can be recreated once setup is fixed.
    env.git_out(&["config", "--unset-all", "bullpen.setup"]);
    env.bullpen(&["resume", "a", "--", "true"]).ok();
    assert!(wt.join(".env").exists());
}
