//! bullpen as a git command: `git -c` (GIT_CONFIG_PARAMETERS), `GIT_DIR` and
//! `git --git-dir`, `GIT_COMMON_DIR`, `GIT_WORK_TREE`, and a bare repository
//! holding pushed records. Every run goes through the real `git` with
//! `git-bullpen` on PATH, as people type it.

use std::path::{Path, PathBuf};

use crate::support::{assert_contains, record_ref, Env, Run};

/// A second repository next to the test's, with one commit.
fn other_repo(env: &Env) -> PathBuf {
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    env.git(&other, &["init", "-q", "-b", "main"]).ok();
    env.git(&other, &["commit", "-q", "--allow-empty", "-m", "other"])
        .ok();
    other
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The ids `ls --json` lists, run in `cwd` through git with `args` before `bullpen`.
fn listed(env: &Env, cwd: &Path, git_args: &[&str]) -> Vec<String> {
    let mut args = git_args.to_vec();
    args.extend(["bullpen", "ls", "--all", "--json"]);
    let run = env.git_bullpen(cwd, &args).ok();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("ls --json");
    json.as_array()
        .expect("an array")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .collect()
}

#[test]
fn git_dash_c_sets_the_command_of_a_new_session() {
    let env = Env::new();
    // Quoting as git writes it: a value with spaces, quotes and a `!`.
    let command = "echo \"it's here!\" > from-config.txt";
    let run = env
        .git_bullpen(
            &env.repo,
            &[
                "-c",
                &format!("bullpen.command={command}"),
                "bullpen",
                "spawn",
                "c",
            ],
        )
        .ok();
    let wt = env.worktree_of("c");
    assert_eq!(
        std::fs::read_to_string(wt.join("from-config.txt")).unwrap(),
        "it's here!\n",
        "{}",
        run.stderr
    );
    assert_eq!(env.record("c")["command"][2], command);
}

#[test]
fn git_dash_c_sets_the_worktree_root() {
    let env = Env::new();
    let root = env.root().join("roots-from-c");
    env.git_bullpen(
        &env.repo,
        &[
            "-c",
            &format!("bullpen.worktreeRoot={}", s(&root)),
            "bullpen",
            "spawn",
            "w",
            "--",
            "true",
        ],
    )
    .ok();
    assert_eq!(env.record("w")["worktree"], s(&root.join("w")));
    assert!(root.join("w").join(".git").is_file());
}

#[test]
fn git_dash_c_reaches_the_git_commands_bullpen_runs() {
    // A hook path given with `git -c` is what `git worktree add` runs.
    let env = Env::new();
    let hooks = env.root().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("post-checkout");
    let marker = env.root().join("hook-ran");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", s(&marker))).unwrap();
    crate::support::make_executable(&hook);
    env.git_bullpen(
        &env.repo,
        &[
            "-c",
            &format!("core.hooksPath={}", s(&hooks)),
            "bullpen",
            "spawn",
            "h",
            "--",
            "true",
        ],
    )
    .ok();
    assert!(marker.exists(), "git worktree add ran the hook of `git -c`");
}

#[test]
fn a_bad_git_config_parameters_is_refused_as_git_does() {
    let env = Env::new();
    let run: Run = env
        .cmd(crate::support::BIN, &env.repo)
        .env("GIT_CONFIG_PARAMETERS", "'bullpen.command'=unquoted")
        .args(["ls"])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: unable to parse command-line config: bogus format in GIT_CONFIG_PARAMETERS",
    );
}

#[test]
fn git_dir_names_the_repository_from_another_one_and_from_outside_any() {
    let env = Env::new();
    env.bullpen(&["spawn", "mine", "--", "true"]).ok();
    let other = other_repo(&env);
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let git_dir = env.repo.join(".git");
    let git_dir_arg = format!("--git-dir={}", s(&git_dir));

    for cwd in [&other, &outside] {
        assert_eq!(listed(&env, cwd, &[&git_dir_arg]), ["mine"], "{cwd:?}");
        let run = env
            .cmd("git", cwd)
            .env("GIT_DIR", &git_dir)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    s(Path::new(crate::support::BIN).parent().unwrap()),
                    std::env::var("PATH").unwrap()
                ),
            )
            .args(["bullpen", "path", "mine"])
            .output()
            .unwrap();
        let run: Run = run.into();
        assert_eq!(run.ok().stdout.trim(), env.record("mine")["worktree"]);
    }
    // Relative, as git passes it on: to the directory git was started in.
    assert_eq!(
        listed(&env, &env.root(), &["--git-dir=repo/.git"]),
        ["mine"]
    );
    // And the other repository has no sessions of its own.
    assert!(listed(&env, &other, &[]).is_empty());
}

#[test]
fn git_dir_spawns_in_the_repository_it_names_and_nowhere_else() {
    // An exported GIT_DIR (say, a dotfiles setup) names `other`: bullpen reads
    // `other`, and so must every git command it runs, while the repository of
    // the current directory is left alone.
    let env = Env::new();
    let other = other_repo(&env);
    // Refs and worktrees of the current repository (the rest of the snapshot is
    // BULLPEN_HOME, where `other`'s worktree goes).
    let ours = || {
        env.snapshot()
            .split("\n--\n")
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let before = ours();
    let git_dir = other.join(".git");
    let run = env
        .git_bullpen(
            &env.repo,
            &[
                &format!("--git-dir={}", s(&git_dir)),
                "bullpen",
                "spawn",
                "x",
                "--",
                "git",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "in the session",
            ],
        )
        .ok();
    assert_eq!(ours(), before, "the current repository is untouched");
    let in_other = |args: &[&str]| env.git(&other, args).ok().stdout.trim().to_owned();
    let worktrees = in_other(&["worktree", "list", "--porcelain"]);
    assert_contains(&worktrees, "branch refs/heads/bullpen/x");
    assert!(
        env.git(&other, &["rev-parse", "--verify", &record_ref("x")])
            .status
            .success(),
        "the record is in the repository GIT_DIR names: {}",
        run.stderr
    );
    // The session's command committed on the session's branch, not on the
    // branch of the repository GIT_DIR named.
    assert_eq!(
        in_other(&["log", "-1", "--format=%s", "bullpen/x"]),
        "in the session"
    );
    assert_eq!(in_other(&["log", "-1", "--format=%s", "main"]), "other");
}

#[test]
fn the_session_command_does_not_inherit_the_callers_repository() {
    let env = Env::new();
    let git_dir = env.repo.join(".git");
    let script =
        "echo \"${GIT_DIR-unset} ${GIT_WORK_TREE-unset} ${GIT_INDEX_FILE-unset}\" > env.txt; \
                  git rev-parse --absolute-git-dir >> env.txt";
    let run: Run = env
        .cmd(crate::support::BIN, &env.root())
        .env("GIT_DIR", &git_dir)
        .env("GIT_WORK_TREE", &env.repo)
        .env("GIT_INDEX_FILE", git_dir.join("index"))
        .args(["spawn", "e", "--", "sh", "-c", script])
        .output()
        .unwrap()
        .into();
    let run = run.ok();
    let wt = env.worktree_of("e");
    let text = std::fs::read_to_string(wt.join("env.txt")).unwrap();
    assert_eq!(
        text,
        format!("unset unset unset\n{}\n", s(&git_dir.join("worktrees/e"))),
        "{}",
        run.stderr
    );
}

#[test]
fn an_exported_work_tree_and_index_do_not_change_what_gc_sees() {
    // gc checks each session's worktree for work: an exported GIT_WORK_TREE and
    // GIT_INDEX_FILE (of a clean checkout) must not make a dirty session look clean.
    let env = crate::gc::setup();
    let wt = crate::gc::spawn_pushed(&env, "dirty", "true");
    std::fs::write(wt.join("unsaved.txt"), "work\n").unwrap();
    let run: Run = env
        .cmd(crate::support::BIN, &env.repo)
        .env("GIT_WORK_TREE", &env.repo)
        .env("GIT_INDEX_FILE", env.repo.join(".git/index"))
        .args(["gc"])
        .output()
        .unwrap()
        .into();
    let run = run.ok();
    assert_contains(&run.stdout, "kept  dirty: 1 untracked file");
    assert!(wt.join("unsaved.txt").exists());
}

#[test]
fn git_common_dir_is_honoured_when_it_agrees_and_refused_when_not() {
    let env = Env::new();
    env.bullpen(&["spawn", "c", "--", "true"]).ok();
    let wt = env.worktree_of("c");
    let common = env.repo.join(".git");
    let with_common_dir = |value: &Path| -> Run {
        env.cmd(crate::support::BIN, &wt)
            .env("GIT_COMMON_DIR", value)
            .args(["ls", "--json"])
            .output()
            .unwrap()
            .into()
    };
    with_common_dir(&common).ok();
    let other = other_repo(&env);
    let run = with_common_dir(&other.join(".git"));
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_contains(&run.stderr, "fatal: GIT_COMMON_DIR names ");
    assert_contains(&run.stderr, "hint: unset GIT_COMMON_DIR");
}

/// A bare `origin` that the test repository pushed its sessions to.
fn pushed_to_bare(env: &Env) -> PathBuf {
    let bare = env.add_bare_remote();
    env.bullpen(&["spawn", "pushed", "--", "true"]).ok();
    env.git(
        &env.repo,
        &[
            "push",
            "-q",
            "origin",
            "refs/bullpen/*:refs/bullpen/*",
            "bullpen/pushed",
        ],
    )
    .ok();
    bare
}

#[test]
fn a_bare_repository_holding_pushed_records_can_be_read() {
    let env = Env::new();
    let bare = pushed_to_bare(&env);
    assert_eq!(listed(&env, &bare, &[]), ["pushed"]);
    let table = env.git_bullpen(&bare, &["bullpen", "ls"]).ok();
    assert_contains(&table.stdout, "pushed");
    let worktree = env.record("pushed")["worktree"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = env.git_bullpen(&bare, &["bullpen", "path", "pushed"]).ok();
    assert_eq!(path.stdout.trim(), worktree);
    assert_contains(&path.stderr, "is a bare repository");
    // Logs stay where the session ran.
    let logs = env.git_bullpen(&bare, &["bullpen", "logs", "pushed"]);
    assert_eq!(logs.code(), 128, "{}", logs.stderr);
    assert_contains(&logs.stderr, "push and fetch carry records, not logs");
}

#[test]
fn a_bare_repository_refuses_what_needs_a_worktree_and_changes_nothing() {
    let env = Env::new();
    let bare = pushed_to_bare(&env);
    let refs = || env.git(&bare, &["for-each-ref"]).ok().stdout;
    let before = refs();
    let marker = env.root().join("ran");
    let touch = ["--", "touch", s(&marker)];
    for args in [
        &["spawn", "new"][..],
        &["resume", "pushed"],
        &["stop", "pushed"],
        &["gc"],
    ] {
        let mut argv = vec!["bullpen"];
        argv.extend(args);
        if args[0] == "spawn" || args[0] == "resume" {
            argv.extend(touch);
        }
        let run = env.git_bullpen(&bare, &argv);
        // bullpen's own failure: 125 where the command's status passes through.
        let own = if args[0] == "spawn" || args[0] == "resume" {
            125
        } else {
            128
        };
        assert_eq!(run.code(), own, "{args:?}: {}", run.stderr);
        assert_contains(&run.stderr, "is a bare repository");
        assert_contains(&run.stderr, "`git bullpen ls`, `logs` and `path` work here");
    }
    assert!(!marker.exists());
    assert_eq!(refs(), before);
}

#[test]
fn an_exported_git_dir_of_a_bare_repository_is_named_in_the_refusal() {
    // The dotfiles setup: GIT_DIR and GIT_WORK_TREE exported for a bare repository.
    let env = Env::new();
    let dots = env.root().join("dots");
    env.git(&env.root(), &["init", "-q", "--bare", s(&dots)])
        .ok();
    let before = env.snapshot();
    let run: Run = env
        .cmd(crate::support::BIN, &env.repo)
        .env("GIT_DIR", &dots)
        .env("GIT_WORK_TREE", env.root())
        .args(["spawn", "d", "--", "true"])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        &format!("hint: GIT_DIR is set (to {}); unset it", s(&dots)),
    );
    assert_eq!(env.snapshot(), before);
}
