//! git's conventions for a command (issue 27 item 3): `-h` is the short usage
//! and exits as a usage error, `help [<command>]` opens the man page, `-q`
//! silences progress and banners only, and `ls` and `logs` page through git's
//! pager settings on a terminal, never elsewhere.

use clap::CommandFactory;
use std::path::{Path, PathBuf};

use crate::pty::Term;
use crate::support::{assert_contains, make_executable, Env, Run, BIN};

/// The visible subcommands.
fn subcommands() -> Vec<String> {
    bullpen::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect()
}

#[test]
fn dash_h_is_the_short_usage_and_exits_as_a_usage_error() {
    let env = Env::new();
    let top = env.bullpen(&["-h"]);
    assert_eq!(top.code(), 129, "{}", top.stderr);
    assert_contains(&top.stdout, "Usage: git bullpen");
    assert_eq!(top.stderr, "");
    assert_eq!(env.bullpen(&["--help"]).ok().code(), 0);
    for sub in subcommands() {
        // The commands that exit with their command's status give their own
        // usage errors as 125, so that 129 can only be the command's SIGHUP.
        let usage = match sub.as_str() {
            "spawn" | "resume" | "attach" | "wait" => 125,
            _ => 129,
        };
        let short = env.bullpen(&[&sub, "-h"]);
        assert_eq!(short.code(), usage, "{sub} -h: {}", short.stderr);
        assert_contains(&short.stdout, &format!("Usage: git bullpen {sub}"));
        assert_eq!(short.stderr, "", "{sub} -h");
        let long = env.bullpen(&[&sub, "--help"]).ok();
        assert!(
            long.stdout.len() >= short.stdout.len(),
            "{sub} --help is the whole help"
        );
    }
    // A usage error is still one.
    assert_eq!(env.bullpen(&["ls", "--nope"]).code(), 129);
}

/// A fake `man` first on PATH: it records each argv in `man.log`; `-w <page>`
/// finds the page unless `man-missing` exists.
fn fake_man(env: &mut Env) -> PathBuf {
    let dir = env.root().join("fake-man");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("man.log");
    let missing = dir.join("man-missing");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nif [ \"$1\" = -w ]; then\n  [ -e '{}' ] && exit 16\n  echo \"/usr/share/man/man1/$2.1\"\nfi\nexit 0\n",
        log.display(),
        missing.display()
    );
    let man = dir.join("man");
    std::fs::write(&man, script).unwrap();
    make_executable(&man);
    env.path_prefix.insert(0, dir.clone());
    dir
}

fn man_log(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("man.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_opens_the_commands_page_as_git_help_does() {
    let mut env = Env::new();
    let dir = fake_man(&mut env);
    let run = env.bullpen(&["help"]).ok();
    assert_eq!(run.stdout, "");
    assert_eq!(man_log(&dir), ["-w git-bullpen", "git-bullpen"]);
    std::fs::remove_file(dir.join("man.log")).unwrap();
    env.bullpen(&["help", "spawn"]).ok();
    assert_eq!(man_log(&dir), ["-w git-bullpen-spawn", "git-bullpen-spawn"]);

    // man.viewer with its man.<tool>.cmd: that line, with the page.
    std::fs::remove_file(dir.join("man.log")).unwrap();
    let viewed = env.root().join("viewed");
    env.git_out(&["config", "man.viewer", "mine"]);
    env.git_out(&[
        "config",
        "man.mine.cmd",
        &format!("echo >'{}'", viewed.display()),
    ]);
    env.bullpen(&["help", "gc"]).ok();
    assert_eq!(
        std::fs::read_to_string(&viewed).unwrap(),
        "git-bullpen-gc\n"
    );
    assert!(man_log(&dir).is_empty(), "{:?}", man_log(&dir));
}

#[test]
fn help_without_the_page_prints_the_help_and_says_so() {
    let mut env = Env::new();
    let dir = fake_man(&mut env);
    std::fs::write(dir.join("man-missing"), "").unwrap();
    let run = env.bullpen(&["help", "logs"]).ok();
    assert_contains(&run.stdout, "Usage: git bullpen logs");
    assert_contains(
        &run.stderr,
        "warning: no man page git-bullpen-logs is installed",
    );
    assert_eq!(man_log(&dir), ["-w git-bullpen-logs"], "man is only asked");
}

#[test]
fn help_of_an_unknown_command_is_a_usage_error_with_a_guess() {
    let mut env = Env::new();
    let dir = fake_man(&mut env);
    let run = env.bullpen(&["help", "sapwn"]);
    assert_eq!(run.code(), 129, "{}", run.stderr);
    assert_contains(&run.stderr, "error: 'sapwn' is not a git bullpen command");
    assert_contains(&run.stderr, "hint: did you mean 'spawn'?");
    assert!(man_log(&dir).is_empty());
}

#[test]
fn help_is_listed_and_completes_the_commands() {
    let env = Env::new();
    let top = env.bullpen(&["--help"]).ok();
    assert!(
        top.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("help ")),
        "{}",
        top.stdout
    );
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.env("GIT_BULLPEN_COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", "2")
        .args(["--", "git-bullpen", "help", "sp"]);
    let run: Run = cmd.output().unwrap().into();
    assert_eq!(run.ok().stdout.trim(), "spawn");
}

fn bullpen_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("bullpen: "))
        .collect()
}

#[test]
fn quiet_silences_progress_and_banners_only() {
    let mut env = Env::new();
    let loud = env.bullpen(&["spawn", "loud", "--", "echo", "out"]).ok();
    assert!(!bullpen_lines(&loud.stderr).is_empty(), "{}", loud.stderr);
    for args in [
        &["spawn", "-q", "quiet", "--", "echo", "out"][..],
        &["resume", "--quiet", "quiet", "--", "echo", "out"],
    ] {
        let run = env.bullpen(args).ok();
        assert_eq!(run.stdout, "out\n", "{args:?}: the command's output stays");
        assert_eq!(run.stderr, "", "{args:?}");
    }
    // A warning stays; the summary goes; the report on stdout stays.
    env.git_out(&["push", "-q", ".", "bullpen/loud:refs/remotes/origin/loud"]);
    env.fail_git_when("gc --auto");
    let run = env.bullpen(&["gc", "-q"]).ok();
    assert_contains(&run.stderr, "warning: git's housekeeping failed");
    assert!(bullpen_lines(&run.stderr).is_empty(), "{}", run.stderr);
    assert_contains(&run.stdout, "loud");
    // An error stays.
    let run = env.bullpen(&["stop", "-q", "nope"]);
    assert_contains(&run.stderr, "fatal:");
    // Where there is progress or a banner to silence, and only there.
    let quiet = [
        "spawn", "resume", "stop", "attach", "wait", "rm", "gc", "push", "fetch",
    ];
    for sub in subcommands() {
        let help = env.bullpen(&[&sub, "--help"]).ok();
        assert_eq!(
            help.stdout.contains("-q, --quiet"),
            quiet.contains(&sub.as_str()),
            "{sub} -q"
        );
    }
    assert_eq!(env.bullpen(&["ls", "-q"]).code(), 129);
}

/// A fake pager: it records its LESS and LV and what it read, then says so on
/// the terminal.
fn fake_pager(env: &Env) -> (PathBuf, PathBuf) {
    let dir = env.root().join("pager");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"LESS=$LESS LV=$LV\" > '{d}/env'\ncat > '{d}/paged'\necho 'the pager read it all'\n",
        d = dir.display()
    );
    let pager = dir.join("fake-pager");
    std::fs::write(&pager, script).unwrap();
    make_executable(&pager);
    (pager, dir)
}

/// `git-bullpen <args>` on a terminal with `env` added (a value of `None`
/// removes the variable); its exit status.
fn on_terminal(env: &Env, program: &str, args: &[&str], vars: &[(&str, Option<&str>)]) -> i32 {
    let mut cmd = env.cmd(program, &env.repo);
    cmd.args(args);
    if program == "git" {
        let bin_dir = Path::new(BIN).parent().unwrap();
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", bin_dir.display()));
    }
    for (k, v) in vars {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut t = Term::spawn(cmd, 24, 100);
    t.wait().code().unwrap_or(-1)
}

#[test]
fn ls_and_logs_page_on_a_terminal_by_gits_rules() {
    let env = Env::new();
    let (pager, dir) = fake_pager(&env);
    let pager = pager.to_str().unwrap();
    env.bullpen(&["spawn", "--bg", "paged", "--", "echo", "from the log"])
        .ok();
    env.bullpen(&["wait", "paged"]).ok();
    let paged = dir.join("paged");
    let taken = || {
        let got = std::fs::read_to_string(&paged).ok();
        let _ = std::fs::remove_file(&paged);
        got
    };

    // GIT_PAGER, with git's LESS and LV.
    assert_eq!(
        on_terminal(&env, BIN, &["ls"], &[("GIT_PAGER", Some(pager))]),
        0
    );
    assert_contains(&taken().expect("ls was paged"), "paged");
    assert_eq!(
        std::fs::read_to_string(dir.join("env")).unwrap(),
        "LESS=FRX LV=-c\n"
    );
    assert_eq!(
        on_terminal(&env, BIN, &["logs", "paged"], &[("GIT_PAGER", Some(pager))]),
        0
    );
    assert_contains(&taken().expect("logs was paged"), "from the log");
    // LESS of one's own is kept.
    on_terminal(
        &env,
        BIN,
        &["ls"],
        &[("GIT_PAGER", Some(pager)), ("LESS", Some("S"))],
    );
    assert!(taken().is_some());
    assert_eq!(
        std::fs::read_to_string(dir.join("env")).unwrap(),
        "LESS=S LV=-c\n"
    );

    // core.pager, then PAGER, when GIT_PAGER is unset.
    env.git_out(&["config", "core.pager", pager]);
    on_terminal(
        &env,
        BIN,
        &["ls"],
        &[("GIT_PAGER", None), ("PAGER", Some("cat"))],
    );
    assert!(taken().is_some(), "core.pager beats PAGER");
    env.git_out(&["config", "--unset", "core.pager"]);
    on_terminal(
        &env,
        BIN,
        &["ls"],
        &[("GIT_PAGER", None), ("PAGER", Some(pager))],
    );
    assert!(taken().is_some(), "PAGER");

    // pager.bullpen.<command> false, pager.bullpen false, --no-pager, git
    // --no-pager, --json, logs --follow and --raw: none.
    let with = [("GIT_PAGER", Some(pager))];
    env.git_out(&["config", "pager.bullpen.ls", "false"]);
    on_terminal(&env, BIN, &["ls"], &with);
    assert_eq!(taken(), None, "pager.bullpen.ls=false");
    on_terminal(&env, BIN, &["logs", "paged"], &with);
    assert!(taken().is_some(), "pager.bullpen.ls is ls's alone");
    env.git_out(&["config", "pager.bullpen", "false"]);
    on_terminal(&env, BIN, &["logs", "paged"], &with);
    assert_eq!(taken(), None, "pager.bullpen=false");
    env.git_out(&["config", "--unset", "pager.bullpen"]);
    env.git_out(&["config", "--unset", "pager.bullpen.ls"]);
    for args in [
        &["--no-pager", "ls"][..],
        &["ls", "--json"],
        &["logs", "--follow", "paged"],
        &["logs", "--raw", "paged"],
    ] {
        assert_eq!(on_terminal(&env, BIN, args, &with), 0, "{args:?}");
        assert_eq!(taken(), None, "{args:?} is never paged");
    }
    // Through git: `git bullpen ls` pages, `git --no-pager bullpen ls` does not.
    on_terminal(&env, "git", &["bullpen", "ls"], &with);
    assert!(taken().is_some(), "git bullpen ls");
    on_terminal(&env, "git", &["--no-pager", "bullpen", "ls"], &with);
    assert_eq!(taken(), None, "git --no-pager bullpen ls");

    // Not a terminal: no pager, whatever the settings.
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.arg("ls").env("GIT_PAGER", pager);
    let run: Run = cmd.output().unwrap().into();
    assert_contains(&run.ok().stdout, "paged");
    assert_eq!(taken(), None, "a pipe is never paged");
}

/// A generated page's EXIT STATUS section, as roff, and its tags in order.
fn exit_status_of(page: &str) -> (String, Vec<String>) {
    let pages = crate::docs::generated();
    let bytes = &pages[&PathBuf::from(format!("man/{page}.1"))];
    let text = String::from_utf8_lossy(bytes);
    let start = text.find(".SH \"EXIT STATUS\"").expect("EXIT STATUS");
    let rest = &text[start + 4..];
    let section = &rest[..rest.find(".SH ").unwrap_or(rest.len())];
    let mut tags = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line == ".TP" {
            let tag = lines.next().unwrap_or_default();
            tags.push(tag.replace("\\fB", "").replace("\\fR", ""));
        }
    }
    (section.replace("\\*(Aq", "'"), tags)
}

/// A page, its exit statuses, words of its own cases, words of other pages' cases.
type Page<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);

#[test]
fn each_page_lists_only_its_own_exit_statuses_and_refusals() {
    let plain = ["0", "128", "129", "70"];
    let table: &[Page] = &[
        ("ls", &plain, &[], &["Refused", "occupied"]),
        ("path", &plain, &[], &["Refused", "occupied"]),
        ("logs", &plain, &[], &["Refused"]),
        ("help", &plain, &[], &["Refused"]),
        ("gc", &["0", "1", "128", "129", "70"], &[], &["Refused"]),
        (
            "stop",
            &["0", "3", "128", "129", "70"],
            &["nothing was signalled", "foreground of another terminal"],
            &["id in use", "holds work", "refspecs"],
        ),
        (
            "rm",
            &["0", "1", "3", "128", "129", "70"],
            &["holds work"],
            &["signalled", "refspecs", "id in use"],
        ),
        (
            "push",
            &["0", "1", "3", "128", "129", "70"],
            &["refspecs", "still being created"],
            &["signalled", "holds work"],
        ),
        (
            "fetch",
            &["0", "1", "3", "128", "129", "70"],
            &["refspecs"],
            &["signalled", "holds work", "still being created"],
        ),
        (
            "hook",
            &["0", "3", "128", "129", "70"],
            &["running command"],
            &["holds work", "refspecs"],
        ),
        (
            "peek",
            &["0", "3", "128", "129", "70"],
            &["supervisor"],
            &["holds work", "refspecs", "id in use"],
        ),
        (
            "spawn",
            &["0 ... 255", "125", "126", "127", "70"],
            &["already in use", ".worktreeinclude"],
            &["Refused", "attached elsewhere", "lost run", "occupied"],
        ),
        (
            "resume",
            &["0 ... 255", "125", "126", "127", "70"],
            &["already running", "never recorded"],
            &["Refused", "attached elsewhere", ".worktreeinclude"],
        ),
        (
            "attach",
            &["0", "0 ... 255", "125", "70"],
            &["attached elsewhere"],
            &["Refused", "already in use", "could not be executed"],
        ),
        (
            "wait",
            &["0 ... 255", "0, 1", "124", "125", "70"],
            &["lost run"],
            &[
                "Refused",
                "already in use",
                "could not be executed",
                "occupied",
            ],
        ),
    ];
    let mut seen: Vec<&str> = table.iter().map(|(p, ..)| *p).collect();
    seen.sort_unstable();
    let mut all = subcommands();
    all.sort_unstable();
    assert_eq!(seen, all, "every page is in the table");
    for (page, statuses, own, others) in table {
        let (text, tags) = exit_status_of(&format!("git-bullpen-{page}"));
        assert_eq!(&tags, statuses, "{page}(1)'s exit statuses");
        for word in *own {
            assert!(text.contains(word), "{page}(1) names {word:?}:\n{text}");
        }
        for word in *others {
            assert!(!text.contains(word), "{page}(1) names {word:?}:\n{text}");
        }
    }
}

#[test]
fn fish_describes_help_as_bullpens_own() {
    if crate::docs::which("fish").is_none() {
        return crate::ship::skip_or_fail("fish is not installed");
    }
    let inst = crate::ship::Installed::new();
    // As a person gets there: `git bullp<TAB>`, then the option.
    let out = crate::ship::fish_run(
        &inst,
        "complete -C 'git bullp'; complete -C 'git bullpen ls --h'; \
         complete -C 'git bullpen gc -'; complete -C 'git log --h'",
    );
    let described = |word: &str| -> Vec<&str> {
        out.lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(w, _)| *w == word)
            .map(|(_, d)| d)
            .collect()
    };
    let bullpens = "Print help (see a summary with '-h')";
    let gits = "Display manual of a Git command";
    // git log's --help stays git's; bullpen's --help and -h are its own.
    assert_eq!(described("--help"), [bullpens, bullpens, gits], "{out}");
    assert_eq!(
        described("-h"),
        ["Print help (see more with '--help')"],
        "{out}"
    );
}

/// `/proc/<pid>`'s state letter and wait channel.
fn proc_state(pid: u32) -> (char, String) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
        .unwrap_or('?');
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    (state, wchan)
}

/// `ls` on a terminal through a pager that, when `interrupt`, interrupts
/// bullpen as Ctrl-C would once it has written, reads to the end, then holds
/// until the gate opens: bullpen must be waiting for it meanwhile, never gone
/// (the shell's prompt would land in the pager's screen). Its exit status.
fn paged_and_held(interrupt: bool) -> std::process::ExitStatus {
    let env = Env::new();
    env.bullpen(&["spawn", "one", "--", "true"]).ok();
    let dir = env.root().join("pager");
    std::fs::create_dir_all(&dir).unwrap();
    let gate = dir.join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let kill = if interrupt { "kill -INT $PPID" } else { ":" };
    let script = format!(
        "#!/bin/sh\nIFS= read -r first\n{kill}\ncat >/dev/null\n: > '{d}/held'\nread x < '{d}/gate'\n",
        d = dir.display()
    );
    let pager = dir.join("fake-pager");
    std::fs::write(&pager, script).unwrap();
    make_executable(&pager);
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.arg("ls")
        .env("GIT_PAGER", format!("exec '{}'", pager.display()));
    let mut t = Term::spawn(cmd, 24, 100);
    let pid = t.pid();
    let deadline = std::time::Instant::now() + crate::pty::DEADLINE;
    while !dir.join("held").exists() {
        // Gone, bullpen would take the pager with it (the terminal's hang-up).
        assert_ne!(proc_state(pid).0, 'Z', "bullpen ended while its pager ran");
        assert!(
            std::time::Instant::now() < deadline,
            "the pager never got its end"
        );
        std::thread::yield_now();
    }
    loop {
        let (state, wchan) = proc_state(pid);
        assert_ne!(state, 'Z', "bullpen ended while its pager still ran");
        if wchan == "do_wait" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "bullpen: {state} {wchan}"
        );
        std::thread::yield_now();
    }
    std::fs::write(&gate, "go\n").unwrap();
    t.wait()
}

#[test]
fn bullpen_waits_for_its_pager() {
    assert_eq!(paged_and_held(false).code(), Some(0));
}

#[test]
fn a_signal_while_paging_waits_for_the_pager_then_ends_bullpen() {
    use std::os::unix::process::ExitStatusExt;
    let status = paged_and_held(true);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
}
