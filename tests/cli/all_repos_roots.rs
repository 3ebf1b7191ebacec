//! `ls --all-repos` and `wait --all-repos` from a repository in the default root
//! find a repository whose own `bullpen.worktreeRoot` is elsewhere: its spawn left
//! a hint (`$BULLPEN_HOME/roots/`), only a place to look; `--root <dir>` names a
//! root no spawn left a hint for. A forged or stale hint finds nothing that is
//! not there.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{assert_contains, Env};

/// A second repository `name` (one commit) whose worktree root is `root`, set
/// in its own config only.
fn repo_with_root(env: &Env, name: &str, root: &Path) -> PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    env.git(&dir, &["init", "-q", "-b", "main"]).ok();
    env.git(&dir, &["commit", "-q", "--allow-empty", "-m", "initial"])
        .ok();
    env.git(
        &dir,
        &["config", "bullpen.worktreeRoot", root.to_str().unwrap()],
    )
    .ok();
    dir
}

/// (repository's directory name, id) of each row of `ls --all-repos --json`
/// run in `cwd` with `extra` arguments.
fn listed(env: &Env, cwd: &Path, extra: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["ls", "--all-repos", "--json"];
    args.extend_from_slice(extra);
    let out = env.bullpen_in(cwd, &args).ok().stdout;
    let json: Value = serde_json::from_str(&out).unwrap();
    let mut seen: Vec<(String, String)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let repo = PathBuf::from(r["repository"].as_str().unwrap());
            let name = repo.file_name().unwrap().to_string_lossy().into_owned();
            (name, r["id"].as_str().unwrap().to_owned())
        })
        .collect();
    seen.sort();
    seen
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn a_repository_with_its_own_root_is_found_from_one_in_the_default_root() {
    let env = Env::new();
    let elsewhere = env.root().join("elsewhere");
    let other = repo_with_root(&env, "other", &elsewhere);
    env.bullpen(&["spawn", "here", "--", "true"]).ok();
    env.bullpen_in(&other, &["spawn", "there", "--", "true"])
        .ok();
    assert!(elsewhere.join("there").is_dir());

    let both = pairs(&[("other", "there"), ("repo", "here")]);
    assert_eq!(listed(&env, &env.repo, &[]), both);
    // Also from outside any repository.
    assert_eq!(listed(&env, &env.root(), &[]), both);
    let table = env.bullpen(&["ls", "--all-repos"]).ok().stdout;
    assert_contains(&table, &format!("repository: {}", other.display()));

    // A second spawn there leaves nothing new; the hint is a path, nothing more.
    env.bullpen_in(&other, &["spawn", "again", "--", "true"])
        .ok();
    let hints: Vec<_> = std::fs::read_dir(env.root().join("bullpen-home/roots"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(hints.len(), 1);
    assert_eq!(
        std::fs::read_to_string(hints[0].path()).unwrap(),
        elsewhere.to_str().unwrap()
    );

    // wait --all-repos from here sees a run there (it asks, and stays asking).
    env.bullpen_in(
        &other,
        &[
            "spawn",
            "--bg",
            "asks",
            "--",
            "sh",
            "-c",
            "printf 'allow? '; read x",
        ],
    )
    .ok();
    // (--timeout only bounds a failure.)
    let out = env.bullpen(&[
        "wait",
        "--for",
        "input",
        "--any",
        "--all-repos",
        "--timeout",
        "120",
    ]);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("asks\t{}\n", other.display()));
    env.bullpen_in(&other, &["stop", "asks"]).ok();
}

#[test]
fn root_names_a_root_no_spawn_left_a_hint_for() {
    let env = Env::new();
    let elsewhere = env.root().join("elsewhere");
    let other = repo_with_root(&env, "other", &elsewhere);
    env.bullpen(&["spawn", "here", "--", "true"]).ok();
    env.bullpen_in(&other, &["spawn", "there", "--", "true"])
        .ok();
    // As a session made before spawn left hints.
    std::fs::remove_dir_all(env.root().join("bullpen-home/roots")).unwrap();
    assert_eq!(listed(&env, &env.repo, &[]), pairs(&[("repo", "here")]));

    let root = elsewhere.to_str().unwrap();
    let both = pairs(&[("other", "there"), ("repo", "here")]);
    assert_eq!(listed(&env, &env.repo, &["--root", root]), both);
    // Relative to the current directory, and twice is once.
    assert_eq!(
        listed(&env, &env.root(), &["--root", "elsewhere", "--root", root]),
        both
    );

    // A root that is not there is an error, not an empty answer.
    let missing = env.root().join("nowhere");
    let run = env
        .bullpen(&["ls", "--all-repos", "--root", missing.to_str().unwrap()])
        .fails();
    assert_eq!(run.code(), 128, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "fatal: --root {}: No such file or directory (os error 2)\n\
             hint: name a worktree root: a directory whose entries are worktrees\n",
            missing.display()
        )
    );
    // Only with --all-repos.
    let run = env.bullpen(&["ls", "--root", root]).fails();
    assert_eq!(run.code(), 129, "{}", run.stderr);
    assert_contains(&run.stderr, "--all-repos");
    let run = env
        .bullpen(&["wait", "--for", "exit", "--any", "--root", root])
        .fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
}

#[test]
fn forged_and_stale_hints_find_only_what_is_there() {
    let env = Env::new();
    let elsewhere = env.root().join("elsewhere");
    let other = repo_with_root(&env, "other", &elsewhere);
    env.bullpen(&["spawn", "here", "--", "true"]).ok();
    env.bullpen_in(&other, &["spawn", "there", "--", "true"])
        .ok();
    let hints = env.root().join("bullpen-home/roots");
    std::fs::remove_dir_all(&hints).unwrap();
    std::fs::create_dir_all(&hints).unwrap();
    // Stale; relative (it would name `elsewhere` from where ls runs below); a
    // symlink; one naming a directory of plain folders and a `.git` file that
    // points nowhere.
    std::fs::write(hints.join("stale"), "/nonexistent/root").unwrap();
    std::fs::write(hints.join("relative"), "elsewhere").unwrap();
    std::os::unix::fs::symlink(hints.join("stale"), hints.join("link")).unwrap();
    let decoy = env.root().join("decoy");
    std::fs::create_dir_all(decoy.join("a")).unwrap();
    std::fs::create_dir_all(decoy.join("b")).unwrap();
    std::fs::write(
        decoy.join("b/.git"),
        "gitdir: /nonexistent/.git/worktrees/b\n",
    )
    .unwrap();
    std::fs::write(hints.join("decoy"), decoy.to_str().unwrap()).unwrap();

    let run = env
        .bullpen_in(&env.root(), &["ls", "--all-repos", "--json"])
        .ok();
    assert_eq!(run.stderr, "");
    assert_eq!(listed(&env, &env.root(), &[]), pairs(&[("repo", "here")]));
    assert!(decoy.join("a").is_dir() && decoy.join("b/.git").is_file());
}
