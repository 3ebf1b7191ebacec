//! Shipping like a git command: `install.sh` into a temp prefix, then `man`,
//! `git help bullpen`, completion in bash (through git's own completion), zsh
//! (under zsh's own `_git`) and fish, and `--uninstall` restoring the prefix.
//!
//! The tests install the binary `cargo test` built (`BULLPEN_INSTALL_BINARY`), so
//! no release build happens here. A test whose shell or tool is missing is skipped
//! with a message, except under CI (`CI` set), where it fails: `.ci/run` installs them.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::docs::which;
use crate::support::{assert_contains, Env, Run, BIN};

/// A tool these tests need is missing: skip with a clear message on a developer's
/// machine, fail under CI (`CI` set), where `.ci/run` installs it.
pub fn skip_or_fail(what: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{what}; .ci/run should have installed it");
    }
    eprintln!("SKIPPED: {what} (install it, or run .ci/run, to run this test)");
}

fn install_sh() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("install.sh")
}

const BASH_COMPLETION: &str = "/usr/share/bash-completion/bash_completion";
const GIT_BASH_COMPLETION: &str = "/usr/share/bash-completion/completions/git";

/// Subcommands whose positional arguments are any session of the repository.
const ID_COMMANDS: &[&str] = &["ls", "resume", "path", "rm"];

/// What completing `<sub> ` must offer, and must not, in the repository that
/// [`Installed::new`] sets up: `stop` and `wait` only running sessions, `logs`
/// only those with a log, `spawn --base` revisions as git offers them, and no
/// option before a `-` is typed.
const EXPECTED: &[(&str, &[&str], &[&str])] = &[
    (
        "ls ",
        &["alpha", "beta", "gamma"],
        &["--json", "--all", "-h"],
    ),
    ("resume ", &["alpha", "beta"], &["--bg", "--save"]),
    ("stop ", &["gamma"], &["alpha", "beta", "--timeout"]),
    ("wait ", &["gamma"], &["alpha", "beta"]),
    ("logs ", &["beta"], &["alpha", "gamma", "--follow"]),
    ("ls --", &["--json", "--all", "--status"], &["alpha"]),
    (
        "spawn --base ",
        &["HEAD", "main", "v1.0", "origin/feature", "bullpen/alpha"],
        &["README", "--bg"],
    ),
];

/// `got` has every one of `want` and none of `unwanted`.
#[track_caller]
fn assert_completes(got: &[String], want: &[&str], unwanted: &[&str], what: &str) {
    assert_offers(got, want, what);
    for u in unwanted {
        assert!(
            !got.iter().any(|g| g == u),
            "{what}: {u:?} offered in {got:?}"
        );
    }
}

fn subcommands() -> Vec<String> {
    bullpen::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect()
}

pub(crate) struct Installed {
    env: Env,
    prefix: PathBuf,
}

impl Installed {
    /// A test repository with sessions `alpha` and `beta`, and git-bullpen
    /// installed into `<tmp>/prefix` with its `bin` first on PATH.
    pub(crate) fn new() -> Installed {
        let mut env = Env::new();
        let prefix = env.root().join("prefix");
        install(&env, &prefix, &[]).ok();
        env.path_prefix.insert(0, prefix.join("bin"));
        for id in ["alpha", "beta", "gamma"] {
            env.bullpen(&["spawn", id, "--", "true"]).ok();
        }
        // gamma is recorded running; only beta has a log; revisions of each kind.
        env.edit_record("gamma", |r| r["state"] = "running".into());
        let logs = env.repo.join(".git/bullpen/logs");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("beta.log"), "output\n").unwrap();
        env.git_out(&["tag", "v1.0"]);
        env.git_out(&["update-ref", "refs/remotes/origin/feature", "HEAD"]);
        Installed { env, prefix }
    }

    fn share(&self) -> PathBuf {
        self.prefix.join("share")
    }
}

/// `install.sh --prefix <prefix> <extra>` with the test binary.
fn install(env: &Env, prefix: &Path, extra: &[&str]) -> Run {
    let mut cmd = env.cmd("bash", &env.root());
    cmd.arg(install_sh())
        .arg("--prefix")
        .arg(prefix)
        .args(extra)
        .env("BULLPEN_INSTALL_BINARY", BIN);
    cmd.output().expect("run install.sh").into()
}

/// Every path under `dir` with its kind, mode and content: what "as it was" means.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                out.insert(rel, format!("dir {mode:o}"));
                walk(root, &p, out);
            } else {
                // Length and a hash keep a failure's diff readable (the binary is large).
                let content = std::fs::read(&p).unwrap_or_default();
                let hash = content.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
                });
                out.insert(rel, format!("file {mode:o} {} {hash:016x}", content.len()));
            }
        }
    }
    let mut out = BTreeMap::new();
    out.insert(".".into(), format!("exists {}", dir.exists()));
    walk(dir, dir, &mut out);
    out
}

#[test]
fn install_is_idempotent_and_uninstall_restores_the_prefix() {
    let env = Env::new();
    let prefix = env.root().join("prefix");
    // Things that were there before and must survive: files beside ours, and
    // directories we must not remove even when they end up empty.
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::write(prefix.join("bin/other-tool"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(prefix.join("share/man/man1")).unwrap();
    std::fs::create_dir_all(prefix.join("share/zsh")).unwrap();
    let before = tree(&prefix);

    let first = install(&env, &prefix, &[]).ok();
    let manifest = prefix.join("share/git-bullpen/install-manifest");
    let installed = tree(&prefix);
    for f in [
        "bin/git-bullpen",
        "share/man/man1/git-bullpen.1",
        "share/bash-completion/completions/git-bullpen",
        "share/zsh/site-functions/_git-bullpen",
        "share/fish/vendor_completions.d/git-bullpen.fish",
        "share/fish/vendor_conf.d/git-bullpen.fish",
    ] {
        assert!(prefix.join(f).is_file(), "{f} not installed");
    }
    for sub in subcommands() {
        let page = format!("share/man/man1/git-bullpen-{sub}.1");
        assert!(prefix.join(&page).is_file(), "{page} not installed");
    }
    let mode = std::fs::metadata(prefix.join("bin/git-bullpen"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // The prefix's bin is not on PATH here: install.sh says what to do.
    assert!(
        first
            .stderr
            .contains(&format!("add {}/bin to PATH", prefix.display())),
        "{}",
        first.stderr
    );

    // Again: same files, same manifest (it still knows which directories it made).
    install(&env, &prefix, &[]).ok();
    assert_eq!(tree(&prefix), installed);

    // A file an earlier version installed and this one no longer ships goes away.
    let stale = prefix.join("share/man/man1/git-bullpen-old.1");
    std::fs::write(&stale, "old").unwrap();
    let mut m = std::fs::read_to_string(&manifest).unwrap();
    m.push_str("f share/man/man1/git-bullpen-old.1\n");
    std::fs::write(&manifest, m).unwrap();
    install(&env, &prefix, &[]).ok();
    assert!(
        !stale.exists(),
        "a stale file of an earlier install was kept"
    );
    assert_eq!(tree(&prefix), installed);

    let run = install(&env, &prefix, &["--uninstall"]).ok();
    assert_contains(&run.stderr, "uninstalled");
    assert_eq!(
        tree(&prefix),
        before,
        "uninstall did not restore the prefix"
    );

    // Uninstalling twice is harmless.
    install(&env, &prefix, &["--uninstall"]).ok();
    assert_eq!(tree(&prefix), before);
}

#[test]
fn install_into_a_new_prefix_and_uninstall_removes_it() {
    let env = Env::new();
    let prefix = env.root().join("new-prefix");
    install(&env, &prefix, &[]).ok();
    assert!(prefix.join("bin/git-bullpen").is_file());
    install(&env, &prefix, &["--uninstall"]).ok();
    assert!(
        !prefix.exists(),
        "left behind: {:?}",
        tree(&prefix).keys().collect::<Vec<_>>()
    );
}

#[test]
fn uninstall_refuses_a_manifest_pointing_outside_the_prefix() {
    let env = Env::new();
    let prefix = env.root().join("prefix");
    install(&env, &prefix, &[]).ok();
    let victim = env.root().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let manifest = prefix.join("share/git-bullpen/install-manifest");
    for entry in ["f ../victim", "f /victim", "f bin/../../victim"] {
        std::fs::write(&manifest, format!("{entry}\n")).unwrap();
        let run = install(&env, &prefix, &["--uninstall"]).fails();
        assert!(
            run.stderr.contains("not a plain path inside the prefix"),
            "{entry}: {}",
            run.stderr
        );
        assert!(
            victim.exists(),
            "{entry}: uninstall removed a file outside the prefix"
        );
    }
}

/// A PATH directory holding every program of `dirs` except those named in `drop`.
fn path_without(env: &Env, dirs: &[&str], drop: &[&str]) -> PathBuf {
    let bin = env.root().join(format!("path-without-{}", drop.join("-")));
    std::fs::create_dir_all(&bin).unwrap();
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if drop
                .iter()
                .any(|d| name == *d || name.starts_with(&format!("{d}-")))
            {
                continue;
            }
            let _ = std::os::unix::fs::symlink(e.path(), bin.join(&*name));
        }
    }
    bin
}

#[test]
fn install_without_cargo_or_git_fails_clearly_and_creates_nothing() {
    let env = Env::new();
    let prefix = env.root().join("prefix");
    let cases = [
        ("cargo", "cargo not found on PATH"),
        ("git", "git not found on PATH"),
    ];
    for (missing, message) in cases {
        let path = path_without(&env, &["/usr/local/bin", "/usr/bin", "/bin"], &[missing]);
        let mut cmd = env.cmd("/bin/bash", &env.root());
        cmd.arg(install_sh())
            .arg("--prefix")
            .arg(&prefix)
            .env("PATH", &path);
        let run: Run = cmd.output().unwrap().into();
        assert_eq!(run.code(), 1, "without {missing}: {}", run.stderr);
        assert!(
            run.stderr.contains(message),
            "without {missing}: {}",
            run.stderr
        );
        assert!(
            !prefix.exists(),
            "without {missing}: the prefix was created"
        );
    }
}

#[test]
fn man_and_git_help_show_the_installed_pages() {
    if which("man").is_none() {
        return skip_or_fail("man (man-db) is not installed");
    }
    let inst = Installed::new();
    let env = &inst.env;
    let man1 = inst.share().join("man/man1");

    env.bullpen(&["ls"]).ok();
    let mut cmd = env.cmd("man", &env.repo);
    cmd.args(["-w", "git-bullpen"]);
    let found: Run = cmd.output().unwrap().into();
    let found = found.ok();
    assert!(
        Path::new(found.stdout.trim()).starts_with(&man1),
        "man -w git-bullpen: {} (expected under {})",
        found.stdout,
        man1.display()
    );

    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut pages = vec![
        (argv(&["help", "bullpen"]), "git-bullpen".to_owned()),
        (argv(&["bullpen", "--help"]), "git-bullpen".to_owned()),
    ];
    for sub in subcommands() {
        // git turns only `git bullpen --help` into man; a subcommand's page is
        // `git help git-bullpen-<sub>` (`git help bullpen-<sub>` looks for
        // gitbullpen-<sub>, as git-bullpen-<sub> is no executable), and
        // `git bullpen <sub> --help` prints clap's long help.
        let page = format!("git-bullpen-{sub}");
        pages.push((argv(&["help", &page]), page));
    }
    for (args, page) in pages {
        let mut cmd = env.cmd("git", &env.repo);
        cmd.args(&args)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100");
        let run: Run = cmd.output().unwrap().into();
        let run = run.ok();
        let text = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&format!("NAME {page} - ")),
            "git {}: no NAME line for {page}:\n{}",
            args.join(" "),
            run.stdout
        );
    }
}

/// Drives bash completion as bash would on <TAB>: loads bash-completion, finds the
/// completion function of the line's command (git's for `git`, ours for
/// `git-bullpen`, both loaded on demand), calls it with COMP_WORDS/COMP_CWORD, and
/// prints COMPREPLY one per line.
const BASH_HARNESS: &str = r#"
source /usr/share/bash-completion/bash_completion
line=$1
read -ra COMP_WORDS <<<"$line"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=9 COMP_KEY=9
cmd=${COMP_WORDS[0]}
_completion_loader "$cmd"
spec=$(complete -p "$cmd") || { echo "no completion for $cmd" >&2; exit 3; }
fn=$(sed -E 's/.* -F ([^ ]+) .*/\1/' <<<"$spec")
"$fn" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;

fn bash_complete(inst: &Installed, line: &str) -> Vec<String> {
    bash_complete_in(inst, &inst.env.repo, line)
}

fn bash_complete_in(inst: &Installed, cwd: &Path, line: &str) -> Vec<String> {
    let script = inst.env.root().join("bash-harness.sh");
    std::fs::write(&script, BASH_HARNESS).unwrap();
    let mut cmd = inst.env.cmd("bash", cwd);
    cmd.arg(&script).arg(line).env(
        "XDG_DATA_DIRS",
        format!("{}:/usr/local/share:/usr/share", inst.share().display()),
    );
    let run: Run = cmd.output().unwrap().into();
    let run = run.ok();
    assert!(run.stderr.is_empty(), "{line:?}: stderr: {}", run.stderr);
    words(&run.stdout)
}

fn words(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    v.sort();
    v.dedup();
    v
}

#[track_caller]
fn assert_offers(got: &[String], want: &[&str], what: &str) {
    for w in want {
        assert!(
            got.iter().any(|g| g == w),
            "{what}: {w:?} not offered in {got:?}"
        );
    }
}

#[test]
fn bash_completes_git_bullpen_through_gits_completion() {
    if !Path::new(BASH_COMPLETION).is_file() || !Path::new(GIT_BASH_COMPLETION).is_file() {
        return skip_or_fail("bash-completion (with git's completion) is not installed");
    }
    let inst = Installed::new();
    let subs = subcommands();
    let subs: Vec<&str> = subs.iter().map(String::as_str).collect();
    assert_offers(
        &bash_complete(&inst, "git bullp"),
        &["bullpen"],
        "git bullp",
    );
    for line in ["git bullpen ", "git-bullpen ", "git -c x.y=z bullpen "] {
        assert_offers(&bash_complete(&inst, line), &subs, line);
    }
    for sub in &subs {
        let line = format!("git bullpen {}", &sub[..sub.len().min(3)]);
        assert_offers(&bash_complete(&inst, &line), &[sub], &line);
    }
    for sub in subs.iter().filter(|s| ID_COMMANDS.contains(s)) {
        for line in [
            format!("git bullpen {sub} "),
            format!("git-bullpen {sub} "),
            format!("git -c x.y=z bullpen {sub} "),
        ] {
            assert_offers(&bash_complete(&inst, &line), &["alpha", "beta"], &line);
        }
        let line = format!("git bullpen {sub} al");
        assert_eq!(bash_complete(&inst, &line), ["alpha"], "{line}");
    }
    for (rest, want, unwanted) in EXPECTED {
        for line in [format!("git bullpen {rest}"), format!("git-bullpen {rest}")] {
            assert_completes(&bash_complete(&inst, &line), want, unwanted, &line);
        }
    }
    // `git -C <dir>`: the sessions of the repository there, from anywhere.
    let repo = inst.env.repo.display().to_string();
    for line in [
        format!("git -C {repo} bullpen resume "),
        format!("git -C {repo} bullpen stop "),
    ] {
        let got = bash_complete_in(&inst, &inst.env.root(), &line);
        let want: &[&str] = if line.ends_with("stop ") {
            &["gamma"]
        } else {
            &["alpha", "beta"]
        };
        assert_offers(&got, want, &line);
    }
}

/// Drives zsh's completion in a pseudo-terminal (zpty) under `zsh -f` with
/// compinit and zsh's own `_git`: types the line and <TAB>, and records every
/// match offered (a `compadd` wrapper appends them to a file), then a key bound
/// to a widget marks the end.
const ZSH_HARNESS: &str = r#"
zmodload zsh/zpty || exit 2
fdir=$1 out=$2 line=$3
: >| $out
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=(${(q)fdir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() { if [[ \${(j: :)@} == *' -'[OAD]' '* ]]; then builtin compadd \"\$@\"; return; fi; local -a __m; builtin compadd -O __m \"\$@\"; builtin compadd \"\$@\"; print -rl -- \$__m >> ${(q)out}; }"
zpty -w z "finished() { print -r -- '--done--' >> ${(q)out}; }; zle -N finished; bindkey '^X^F' finished; bindkey '^I' complete-word"
zpty -n -w z "$line"$'\t\C-x\C-f'
# Poll with a generous deadline (60 s); a loaded machine is slow, not wrong.
for i in {1..1200}; do
  grep -q -- '--done--' $out 2>/dev/null && break
  sleep 0.05
done
zpty -d z
grep -q -- '--done--' $out || { echo "zsh did not finish completing" >&2; exit 4; }
grep -v -- '--done--' $out
"#;

fn zsh_complete(inst: &Installed, line: &str) -> Vec<String> {
    zsh_complete_in(inst, &inst.env.repo, line)
}

fn zsh_complete_in(inst: &Installed, cwd: &Path, line: &str) -> Vec<String> {
    let root = inst.env.root();
    let script = root.join("zsh-harness.zsh");
    std::fs::write(&script, ZSH_HARNESS).unwrap();
    let out = root.join("zsh-matches");
    let mut cmd = inst.env.cmd("zsh", cwd);
    cmd.arg("-f")
        .arg(&script)
        .arg(inst.share().join("zsh/site-functions"))
        .arg(&out)
        .arg(line);
    let run: Run = cmd.output().unwrap().into();
    let run = run.ok();
    words(&run.stdout)
}

#[test]
fn zsh_completes_git_bullpen_under_zshs_own_git_completion() {
    if which("zsh").is_none() {
        return skip_or_fail("zsh is not installed");
    }
    let inst = Installed::new();
    let subs = subcommands();
    let subs: Vec<&str> = subs.iter().map(String::as_str).collect();
    assert_offers(&zsh_complete(&inst, "git bullp"), &["bullpen"], "git bullp");
    for line in ["git bullpen ", "git-bullpen "] {
        assert_offers(&zsh_complete(&inst, line), &subs, line);
    }
    for sub in subs.iter().filter(|s| ID_COMMANDS.contains(s)) {
        let line = format!("git bullpen {sub} ");
        assert_offers(&zsh_complete(&inst, &line), &["alpha", "beta"], &line);
    }
    for (rest, want, unwanted) in EXPECTED {
        let line = format!("git bullpen {rest}");
        assert_completes(&zsh_complete(&inst, &line), want, unwanted, &line);
    }
    let line = format!("git -C {} bullpen resume ", inst.env.repo.display());
    assert_offers(
        &zsh_complete_in(&inst, &inst.env.root(), &line),
        &["alpha", "beta"],
        &line,
    );
}

fn fish_complete(inst: &Installed, line: &str) -> Vec<String> {
    fish_complete_in(inst, &inst.env.repo, line)
}

/// `fish -c <script>` in the repository, with the installed completions; stdout.
pub(crate) fn fish_run(inst: &Installed, script: &str) -> String {
    let mut cmd = inst.env.cmd("fish", &inst.env.repo);
    cmd.arg("-c").arg(script).env(
        "XDG_DATA_DIRS",
        format!("{}:/usr/local/share:/usr/share", inst.share().display()),
    );
    let run: Run = cmd.output().unwrap().into();
    run.ok().stdout
}

fn fish_complete_in(inst: &Installed, cwd: &Path, line: &str) -> Vec<String> {
    let mut cmd = inst.env.cmd("fish", cwd);
    cmd.arg("-c").arg("complete -C $argv[1]").arg(line).env(
        "XDG_DATA_DIRS",
        format!("{}:/usr/local/share:/usr/share", inst.share().display()),
    );
    let run: Run = cmd.output().unwrap().into();
    let run = run.ok();
    assert!(run.stderr.is_empty(), "{line:?}: stderr: {}", run.stderr);
    words(
        &run.stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[test]
fn fish_completes_git_bullpen_and_git_dash_bullpen() {
    if which("fish").is_none() {
        return skip_or_fail("fish is not installed");
    }
    let inst = Installed::new();
    let subs = subcommands();
    let subs: Vec<&str> = subs.iter().map(String::as_str).collect();
    assert_offers(
        &fish_complete(&inst, "git bullp"),
        &["bullpen"],
        "git bullp",
    );
    for line in ["git bullpen ", "git-bullpen ", "git -C . bullpen "] {
        assert_offers(&fish_complete(&inst, line), &subs, line);
    }
    for sub in subs.iter().filter(|s| ID_COMMANDS.contains(s)) {
        for line in [format!("git bullpen {sub} "), format!("git-bullpen {sub} ")] {
            assert_offers(&fish_complete(&inst, &line), &["alpha", "beta"], &line);
        }
    }
    for (rest, want, unwanted) in EXPECTED {
        for line in [format!("git bullpen {rest}"), format!("git-bullpen {rest}")] {
            assert_completes(&fish_complete(&inst, &line), want, unwanted, &line);
        }
    }
    let line = format!("git -C {} bullpen resume ", inst.env.repo.display());
    assert_offers(
        &fish_complete_in(&inst, &inst.env.root(), &line),
        &["alpha", "beta"],
        &line,
    );
    // Only for `git bullpen`: not for other git commands.
    for line in ["git log ", "git log bullpen "] {
        let got = fish_complete(&inst, line);
        let leaked: Vec<_> = got
            .iter()
            .filter(|w| subs.contains(&w.as_str()) || *w == "alpha")
            .collect();
        assert!(leaked.is_empty(), "{line:?} offers {leaked:?}");
    }
}

/// The completion protocol itself: what the scripts call on <TAB>.
fn complete_raw(env: &Env, cwd: &Path, words: &[&str]) -> Run {
    let mut cmd = env.cmd(BIN, cwd);
    cmd.env("GIT_BULLPEN_COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .arg("--")
        .args(words);
    cmd.output().unwrap().into()
}

#[test]
fn session_ids_complete_in_process_and_errors_stay_silent() {
    let env = Env::new();
    env.bullpen(&["spawn", "alpha", "--", "true"]).ok();
    env.bullpen(&["spawn", "beta", "--", "true"]).ok();
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "ls", "a"]).ok();
    assert_eq!(words(&run.stdout), ["alpha"]);
    assert_eq!(run.stderr, "");

    // From inside a session's worktree: the same repository's sessions.
    let wt = env.worktree_of("beta");
    let run = complete_raw(&env, &wt, &["git-bullpen", "ls", ""]).ok();
    assert_offers(&words(&run.stdout), &["alpha", "beta"], "from a worktree");

    // Outside any repository: no ids, no error, exit 0.
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let run = complete_raw(&env, &outside, &["git-bullpen", "ls", ""]).ok();
    assert_eq!(run.stderr, "");
    assert_eq!(run.stdout, "", "no ids, and no options before a `-`");
    let run = complete_raw(&env, &outside, &["git-bullpen", "ls", "--"]).ok();
    assert!(
        run.stdout.contains("--json"),
        "options still complete: {}",
        run.stdout
    );

    // A broken record: the others still complete, silently.
    let tree = env.git_out(&["mktree"]);
    let commit = env.git_out(&["commit-tree", &tree, "-m", "broken"]);
    env.git_out(&["update-ref", "refs/bullpen/sessions/broken", &commit]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "ls", ""]).ok();
    assert_eq!(run.stderr, "");
    assert_offers(
        &words(&run.stdout),
        &["alpha", "beta"],
        "with a broken record",
    );
}

#[test]
fn completion_script_is_printed_on_request() {
    let env = Env::new();
    for (shell, file) in [
        ("bash", "git-bullpen"),
        ("zsh", "_git-bullpen"),
        ("fish", "git-bullpen.fish"),
    ] {
        let mut cmd = env.cmd(BIN, &env.repo);
        cmd.env("GIT_BULLPEN_COMPLETE", shell);
        let run: Run = cmd.output().unwrap().into();
        let run = run.ok();
        let committed = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("completions")
                .join(file),
        )
        .unwrap();
        assert!(
            run.stdout.starts_with(&committed),
            "GIT_BULLPEN_COMPLETE={shell} git-bullpen does not print completions/{file}"
        );
    }
}

#[test]
fn help_version_and_usage_errors_read_like_git() {
    let env = Env::new();
    let short = env.bullpen(&["-h"]);
    assert_eq!(short.code(), 129, "-h exits as git's -h");
    assert_contains(&short.stdout, "Usage: git bullpen");
    let long = env.bullpen(&["--help"]).ok();
    assert!(long.stdout.len() > short.stdout.len());
    let spawn_long = env.bullpen(&["spawn", "--help"]).ok();
    assert_contains(&spawn_long.stdout, "Examples:");
    let spawn_short = env.bullpen(&["spawn", "-h"]);
    assert!(
        !spawn_short.stdout.contains("Examples:"),
        "{}",
        spawn_short.stdout
    );
    let version = env.bullpen(&["--version"]).ok();
    assert_eq!(
        version.stdout.trim(),
        format!("git-bullpen {}", env!("CARGO_PKG_VERSION"))
    );
    for args in [
        &["no-such-command"][..],
        &["ls", "--no-such-option"],
        &["spawn", "NOT AN ID"],
        &[],
    ] {
        let run = env.bullpen(args);
        // spawn exits with its command's status, so its own usage error is 125.
        let usage = if args.first() == Some(&"spawn") {
            125
        } else {
            129
        };
        assert_eq!(run.code(), usage, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: usage errors go to stderr");
    }
}

/// A fake `id` first on PATH, answering `id -u` with `uid`.
fn fake_uid(env: &Env, uid: u32) -> PathBuf {
    let dir = env.root().join(format!("fake-id-{uid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let id = dir.join("id");
    std::fs::write(
        &id,
        format!(
            "#!/bin/sh\n[ \"$1\" = -u ] && {{ echo {uid}; exit 0; }}\nexec /usr/bin/id \"$@\"\n"
        ),
    )
    .unwrap();
    crate::support::make_executable(&id);
    dir
}

#[test]
fn without_a_prefix_install_says_which_it_chose() {
    let env = Env::new();
    let path = |first: &Path| format!("{}:{}", first.display(), std::env::var("PATH").unwrap());
    // As a user: into ~/.local, and it says so.
    let run: Run = env
        .cmd("bash", &env.root())
        .arg(install_sh())
        .env("BULLPEN_INSTALL_BINARY", BIN)
        .env("PATH", path(&fake_uid(&env, 1000)))
        .output()
        .unwrap()
        .into();
    let run = run.ok();
    let local = env.home.join(".local");
    assert_contains(
        &run.stderr,
        &format!(
            "install.sh: no --prefix: using {}, the default (/usr/local when run as root)",
            local.display()
        ),
    );
    assert!(local.join("bin/git-bullpen").is_file());

    // As root: into /usr/local, and it says so. Run as root of a user namespace
    // of its own, with an empty tmpfs over /usr/local in a mount namespace of its
    // own, so that nothing outside the test is written.
    if which("unshare").is_none() {
        return skip_or_fail("unshare (util-linux) is not installed");
    }
    let script = format!(
        "mount -t tmpfs tmpfs /usr/local && exec bash '{}'",
        install_sh().display()
    );
    let out = env
        .cmd("unshare", &env.root())
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env("BULLPEN_INSTALL_BINARY", BIN)
        .output()
        .unwrap();
    let run: Run = out.into();
    if !run.status.success() && run.stderr.contains("unshare: ") {
        return skip_or_fail(&format!("no user namespaces here: {}", run.stderr.trim()));
    }
    let run = run.ok();
    assert_contains(
        &run.stderr,
        "install.sh: no --prefix: using /usr/local, the default when run as root (~/.local otherwise)",
    );
    assert_contains(&run.stderr, "installed git-bullpen");
}

#[test]
fn the_release_build_ships_without_debug_info() {
    // Debug info was 40 of the installed binary's 50 MB; the symbol table stays,
    // so that a backtrace still names functions.
    let toml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let start = toml.find("[profile.release]").expect("a release profile");
    let section = &toml[start + 1..];
    let section = &section[..section.find("\n[").unwrap_or(section.len())];
    let keys: Vec<&str> = section
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .collect();
    assert!(keys.contains(&"debug = false"), "{keys:?}");
    assert!(keys.contains(&"strip = \"debuginfo\""), "{keys:?}");
}

#[test]
fn agents_complete_from_the_built_ins_and_git_config() {
    let env = Env::new();
    env.git_out(&["config", "bullpen.agent.aider.command", "aider"]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "spawn", "--agent", ""]).ok();
    assert_eq!(words(&run.stdout), ["aider", "claude", "codex"]);
    assert_eq!(run.stderr, "");
}

/// Completion of ids reads no record (issue 17): a session is offered while it
/// has its record and its branch, so what gc or rm collected (its branch
/// deleted) is offered only where collected sessions are named (`ls`).
#[test]
fn collected_sessions_complete_only_for_ls() {
    let env = Env::new();
    env.bullpen(&["spawn", "alpha", "--", "true"]).ok();
    env.bullpen(&["spawn", "beta", "--", "true"]).ok();
    env.bullpen(&["rm", "--force", "beta"]).ok();
    assert_eq!(env.record("beta")["state"], "collected");
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "path", ""]).ok();
    assert_eq!(words(&run.stdout), ["alpha"]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "ls", ""]).ok();
    assert_eq!(words(&run.stdout), ["alpha", "beta"]);
}

/// `push <remote> <TAB>` offers what push can send: never a collected session.
#[test]
fn push_completes_live_sessions_only() {
    let env = Env::new();
    env.bullpen(&["spawn", "alpha", "--", "true"]).ok();
    env.bullpen(&["spawn", "beta", "--", "true"]).ok();
    env.bullpen(&["rm", "--force", "beta"]).ok();
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "push", "origin", ""]).ok();
    assert_eq!(words(&run.stdout), ["alpha"]);
}

/// A session named once on the line is not offered again, for the commands
/// that take several (`wait a <TAB>`, `rm a <TAB>`).
#[test]
fn a_session_already_typed_is_not_offered_again() {
    let env = Env::new();
    for id in ["alpha", "beta"] {
        env.bullpen(&["spawn", id, "--", "true"]).ok();
        env.edit_record(id, |r| r["state"] = "running".into());
    }
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "wait", "alpha", ""]).ok();
    assert_eq!(words(&run.stdout), ["beta"]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "rm", "beta", ""]).ok();
    assert_eq!(words(&run.stdout), ["alpha"]);
    // A session named like a subcommand is still offered after it.
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "wait", ""]).ok();
    assert_eq!(words(&run.stdout), ["alpha", "beta"]);
}

/// `ls --remote=<TAB>` offers the remotes; commands and ids come sorted, as
/// git lists its commands and branches.
#[test]
fn remotes_complete_for_ls_remote_and_candidates_come_sorted() {
    let env = Env::new();
    env.git_out(&["remote", "add", "origin", "/nowhere"]);
    env.git_out(&["remote", "add", "laptop", "/nowhere-else"]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "ls", "--remote="]).ok();
    assert_eq!(words(&run.stdout), ["--remote=laptop", "--remote=origin"]);
    let run = complete_raw(&env, &env.repo, &["git-bullpen", ""]).ok();
    let got: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(got, sorted, "unsorted: {got:?}");
    assert!(got.len() > 10, "{got:?}");
}

/// zsh and fish show what a session is next to its id while there are at most
/// a few dozen (`exited 0: true`); beyond that the ids alone, read from ref names.
#[test]
fn session_ids_are_described_for_zsh_and_fish_while_few() {
    let env = Env::new();
    env.bullpen(&["spawn", "alpha", "--", "true"]).ok();
    let fish = |words: &[&str]| {
        let mut cmd = env.cmd(BIN, &env.repo);
        cmd.env("GIT_BULLPEN_COMPLETE", "fish")
            .arg("--")
            .args(words);
        let run: Run = cmd.output().unwrap().into();
        run.ok().stdout
    };
    assert_eq!(
        fish(&["git-bullpen", "resume", ""]),
        "alpha\texited 0: true\n"
    );
    assert_eq!(fish(&["git-bullpen", "rm", ""]), "alpha\texited 0: true\n");
    // bash shows no descriptions: nothing is read for them.
    let run = complete_raw(&env, &env.repo, &["git-bullpen", "resume", ""]).ok();
    assert_eq!(run.stdout.trim_end(), "alpha");
    // More than bullpen::complete::DESCRIBED_AT_MOST: ids alone.
    let head = env.git_out(&["rev-parse", "HEAD"]);
    let record = env.git_out(&["rev-parse", "refs/bullpen/sessions/alpha"]);
    for i in 0..bullpen::complete::DESCRIBED_AT_MOST {
        env.git_out(&["update-ref", &format!("refs/heads/bullpen/s{i:02}"), &head]);
        env.git_out(&[
            "update-ref",
            &format!("refs/bullpen/sessions/s{i:02}"),
            &record,
        ]);
    }
    let out = fish(&["git-bullpen", "resume", ""]);
    assert_eq!(
        out.lines().count(),
        bullpen::complete::DESCRIBED_AT_MOST + 1
    );
    assert!(!out.contains('\t'), "{out}");
}

/// bash as bash really calls it: the line split at `COMP_WORDBREAKS` (`=`, `:`
/// are words of their own), and every `compopt` the function runs recorded.
const BASH_SPLIT_HARNESS: &str = r#"
source /usr/share/bash-completion/bash_completion
line=$1
spaced=$(sed -E 's/([=:])/ \1 /g' <<<"$line")
read -ra COMP_WORDS <<<"$spaced"
[[ $line == *" " || $line == *"=" || $line == *":" ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE=$line COMP_POINT=${#line} COMP_TYPE=9 COMP_KEY=9
cmd=${COMP_WORDS[0]}
_completion_loader "$cmd"
spec=$(complete -p "$cmd") || { echo "no completion for $cmd" >&2; exit 3; }
fn=$(sed -E 's/.* -F ([^ ]+) .*/\1/' <<<"$spec")
compopt() { local IFS=' '; printf 'compopt %s\n' "$*"; }
"$fn" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" >"$2"
for r in "${COMPREPLY[@]}"; do printf 'reply %s\n' "$r"; done
cat "$2"
"#;

fn bash_split_complete(inst: &Installed, line: &str) -> Vec<String> {
    let script = inst.env.root().join("bash-split-harness.sh");
    std::fs::write(&script, BASH_SPLIT_HARNESS).unwrap();
    let mut cmd = inst.env.cmd("bash", &inst.env.repo);
    cmd.arg(&script)
        .arg(line)
        .arg(inst.env.root().join("compopt.out"))
        .env(
            "XDG_DATA_DIRS",
            format!("{}:/usr/local/share:/usr/share", inst.share().display()),
        );
    let run: Run = cmd.output().unwrap().into();
    let run = run.ok();
    assert!(run.stderr.is_empty(), "{line:?}: stderr: {}", run.stderr);
    words(&run.stdout)
}

/// `--agent=<TAB>` completes the value after bash's own word break (not
/// `--agent=--agent=claude`), and where nothing is offered bash does not fall
/// back to file names, except in the command after `--`.
#[test]
fn bash_completes_values_after_an_equals_sign_and_offers_no_file_names() {
    if !Path::new(BASH_COMPLETION).is_file() || !Path::new(GIT_BASH_COMPLETION).is_file() {
        return skip_or_fail("bash-completion (with git's completion) is not installed");
    }
    let inst = Installed::new();
    for line in ["git bullpen spawn --agent=c", "git-bullpen spawn --agent=c"] {
        let got = bash_split_complete(&inst, line);
        assert!(got.contains(&"reply claude".to_owned()), "{line}: {got:?}");
        assert!(
            !got.iter().any(|w| w.contains("--agent")),
            "{line}: {got:?}"
        );
    }
    let off = "compopt +o default +o bashdefault".to_owned();
    for line in [
        "git bullpen stop gamma ",
        "git-bullpen stop gamma ",
        "git bullpen wait gamma ",
        "git bullpen fetch origin ",
    ] {
        let got = bash_split_complete(&inst, line);
        assert!(
            got.contains(&off),
            "{line}: file names not turned off: {got:?}"
        );
        assert!(
            !got.iter().any(|w| w.starts_with("reply")),
            "{line}: {got:?}"
        );
    }
    for line in ["git bullpen spawn x -- ", "git-bullpen resume alpha -- ma"] {
        let got = bash_split_complete(&inst, line);
        assert!(
            !got.contains(&off),
            "{line}: the command's file names: {got:?}"
        );
    }
}
