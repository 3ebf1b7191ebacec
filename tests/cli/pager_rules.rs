//! The pager by git's rules, on a real pseudo-terminal, with a pager that records
//! each start and what it read: `color.pager`, `pager.bullpen` (which git itself
//! reads for `git bullpen`, and then pages before bullpen starts: never twice),
//! `pager.bullpen.<command>`, `GIT_PAGER=cat`.

use std::path::{Path, PathBuf};

use crate::pty::Term;
use crate::support::{assert_contains, make_executable, Env, Run, BIN};

/// A repository whose `ls` has a coloured row (a session that exited 1), and a
/// pager that appends a line to `runs` when it starts and what it read to `paged`.
struct Paging {
    env: Env,
    pager: String,
    dir: PathBuf,
}

/// What one command did on the terminal.
struct Seen {
    /// How many times a pager started.
    runs: usize,
    /// What the pagers read.
    paged: String,
    /// What the terminal showed.
    shown: String,
}

impl Paging {
    fn new() -> Paging {
        let env = Env::new();
        env.bullpen(&["spawn", "c", "--", "false"]).fails();
        let dir = env.root().join("pager");
        std::fs::create_dir_all(&dir).unwrap();
        let script = format!(
            "#!/bin/sh\necho \"LESS=$LESS LV=$LV\" >> '{d}/runs'\ncat >> '{d}/paged'\n",
            d = dir.display()
        );
        let pager = dir.join("fake-pager");
        std::fs::write(&pager, script).unwrap();
        make_executable(&pager);
        let pager = pager.to_str().unwrap().to_owned();
        Paging { env, pager, dir }
    }

    /// `program args` on a terminal (`git` finds `git-bullpen` on PATH), with
    /// `vars` (`None` removes one); GIT_PAGER is the recording pager unless
    /// `vars` says otherwise.
    fn run(&self, program: &str, args: &[&str], vars: &[(&str, Option<&str>)]) -> Seen {
        for f in ["runs", "paged"] {
            let _ = std::fs::remove_file(self.dir.join(f));
        }
        let mut cmd = self.env.cmd(program, &self.env.repo);
        cmd.args(args)
            .env("TERM", "xterm-256color")
            .env("GIT_PAGER", &self.pager);
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
        let mut t = Term::spawn(cmd, 24, 120);
        let status = t.wait();
        assert!(
            status.success(),
            "{program} {args:?}: {status:?}\n{}",
            t.shown()
        );
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        Seen {
            runs: read("runs").lines().count(),
            paged: read("paged"),
            shown: t.shown(),
        }
    }

    fn config(&self, key: &str, value: Option<&str>) {
        match value {
            Some(v) => self.env.git_out(&["config", key, v]),
            None => self.env.git_out(&["config", "--unset", key]),
        };
    }
}

#[track_caller]
fn paged_once(seen: &Seen, coloured: bool, case: &str) {
    assert_eq!(seen.runs, 1, "{case}: one pager, started once");
    assert_contains(&seen.paged, "exited 1");
    assert_eq!(
        seen.paged.contains("\x1b["),
        coloured,
        "{case}: colour in the pager: {:?}",
        seen.paged
    );
}

#[track_caller]
fn not_paged(seen: &Seen, case: &str) {
    assert_eq!(seen.runs, 0, "{case}: no pager");
    assert_contains(&seen.shown, "exited 1");
}

#[test]
fn color_pager_false_means_no_colour_in_the_pager() {
    let p = Paging::new();
    paged_once(&p.run(BIN, &["ls"], &[]), true, "auto colours the pager");
    let runs = std::fs::read_to_string(p.dir.join("runs")).unwrap();
    assert_eq!(runs, "LESS=FRX LV=-c\n", "git's LESS and LV");

    p.config("color.pager", Some("false"));
    paged_once(&p.run(BIN, &["ls"], &[]), false, "color.pager=false");
    // Only what is automatic: always still colours.
    p.config("color.bullpen", Some("always"));
    paged_once(&p.run(BIN, &["ls"], &[]), true, "color.bullpen=always");
    p.config("color.bullpen", None);
    // No pager (GIT_PAGER=cat): a terminal, coloured whatever color.pager says.
    let seen = p.run(BIN, &["ls"], &[("GIT_PAGER", Some("cat"))]);
    not_paged(&seen, "GIT_PAGER=cat");
    assert!(seen.shown.contains("\x1b["), "a terminal is coloured");
    p.config("color.pager", None);
    paged_once(
        &p.run("git", &["-c", "color.pager=no", "bullpen", "ls"], &[]),
        false,
        "git -c color.pager=no",
    );
}

#[test]
fn git_pages_git_bullpen_for_pager_bullpen_and_bullpen_does_not_again() {
    let p = Paging::new();
    // git starts the pager itself: bullpen writes into its pipe, coloured (git
    // says GIT_PAGER_IN_USE), and starts none of its own.
    paged_once(
        &p.run("git", &["-c", "pager.bullpen=true", "bullpen", "ls"], &[]),
        true,
        "git -c pager.bullpen=true",
    );
    paged_once(
        &p.run(
            "git",
            &[
                "-c",
                "pager.bullpen=true",
                "-c",
                "color.pager=false",
                "bullpen",
                "ls",
            ],
            &[],
        ),
        false,
        "git's pager with color.pager=false",
    );
    // pager.bullpen naming a pager: git runs that one (GIT_PAGER unset).
    let named = format!("pager.bullpen={}", p.pager);
    paged_once(
        &p.run(
            "git",
            &["-c", &named, "bullpen", "ls"],
            &[("GIT_PAGER", None)],
        ),
        true,
        "pager.bullpen=<pager>",
    );
    // Unset, git pages no external command: bullpen does, once.
    paged_once(
        &p.run("git", &["bullpen", "ls"], &[]),
        true,
        "git bullpen ls",
    );
    // The binary alone reads pager.bullpen as git would.
    p.config("pager.bullpen", Some("true"));
    paged_once(&p.run(BIN, &["ls"], &[]), true, "pager.bullpen=true");
    p.config("pager.bullpen", Some("false"));
    not_paged(&p.run(BIN, &["ls"], &[]), "pager.bullpen=false");
    not_paged(
        &p.run("git", &["bullpen", "ls"], &[]),
        "git, pager.bullpen=false",
    );
    p.config("pager.bullpen", None);
}

#[test]
fn pager_bullpen_command_keys_win_over_pager_bullpen() {
    let p = Paging::new();
    // A pager of its own for ls (GIT_PAGER, core.pager and PAGER unset).
    let none = [("GIT_PAGER", None), ("PAGER", None)];
    p.config("pager.bullpen.ls", Some(&p.pager));
    paged_once(
        &p.run(BIN, &["ls"], &none),
        true,
        "pager.bullpen.ls=<pager>",
    );
    // ls's key beats pager.bullpen either way.
    p.config("pager.bullpen", Some("false"));
    paged_once(
        &p.run(BIN, &["ls"], &none),
        true,
        "pager.bullpen.ls over false",
    );
    p.config("pager.bullpen.ls", Some("false"));
    p.config("pager.bullpen", Some("true"));
    not_paged(
        &p.run(BIN, &["ls"], &[]),
        "pager.bullpen.ls=false over true",
    );
    // Through git, pager.bullpen=false is git's GIT_PAGER=cat: ls's key cannot
    // undo it.
    p.config("pager.bullpen.ls", Some("true"));
    p.config("pager.bullpen", Some("false"));
    not_paged(
        &p.run("git", &["bullpen", "ls"], &[]),
        "git, pager.bullpen=false over pager.bullpen.ls",
    );
    // GIT_PAGER=cat: no pager, whatever the keys name.
    p.config("pager.bullpen.ls", Some(&p.pager));
    p.config("core.pager", Some(&p.pager));
    not_paged(
        &p.run(BIN, &["ls"], &[("GIT_PAGER", Some("cat"))]),
        "GIT_PAGER=cat",
    );
}

#[test]
fn a_bad_color_pager_is_an_error_as_in_git() {
    let env = Env::new();
    let out: Run = env
        .cmd(BIN, &env.repo)
        .env("GIT_CONFIG_PARAMETERS", "'color.pager'='sometimes'")
        .arg("ls")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code(), 128, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "fatal: bad boolean config value 'sometimes' for 'color.pager'\n\
         hint: color.pager takes true or false (git config color.pager false)\n"
    );
}
