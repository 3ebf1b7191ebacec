//! Colour, decided as git decides it: `--color` beats git config `color.bullpen`,
//! which beats `color.ui`; `auto` (the default) colours a terminal that is not
//! `TERM=dumb`, unless `NO_COLOR` is set. Terminals are real pseudo-terminals
//! (util-linux `script`); every run goes through `git`, with `git-bullpen` on PATH.

use crate::support::{assert_contains, Env, Run, BIN};

/// An `ls` table with a coloured row (a session that exited 1).
fn with_a_coloured_row() -> Env {
    let env = Env::new();
    env.bullpen(&["spawn", "c", "--", "false"]).fails();
    env
}

/// `git <args>` with `git-bullpen` on PATH and `vars` set: on a terminal (through
/// `script`) or into a pipe. Returns stdout.
fn run(env: &Env, terminal: bool, vars: &[(&str, &str)], args: &[&str]) -> String {
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let mut cmd = match terminal {
        true => {
            let mut c = env.cmd("script", &env.repo);
            c.args(["-qec", &format!("git {}", quoted.join(" ")), "/dev/null"]);
            c
        }
        false => {
            let mut c = env.cmd("git", &env.repo);
            c.args(args);
            c
        }
    };
    cmd.env("PATH", path).env("TERM", "xterm-256color");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let run: Run = cmd.output().unwrap().into();
    run.ok().stdout
}

#[track_caller]
fn assert_coloured(out: &str, want: bool, case: &str) {
    assert_contains(out, "exited 1");
    assert_eq!(out.contains("\x1b["), want, "{case}: {out:?}");
}

#[test]
fn color_ui_and_color_bullpen_from_git_dash_c() {
    let env = with_a_coloured_row();
    let tty = |args: &[&str]| run(&env, true, &[], args);
    let pipe = |args: &[&str]| run(&env, false, &[], args);
    assert_coloured(&tty(&["bullpen", "ls"]), true, "auto on a terminal");
    assert_coloured(&pipe(&["bullpen", "ls"]), false, "auto into a pipe");
    assert_coloured(
        &tty(&["-c", "color.ui=never", "bullpen", "ls"]),
        false,
        "color.ui=never",
    );
    assert_coloured(
        &pipe(&["-c", "color.ui=always", "bullpen", "ls"]),
        true,
        "color.ui=always",
    );
    assert_coloured(
        &pipe(&[
            "-c",
            "color.ui=always",
            "-c",
            "color.bullpen=auto",
            "bullpen",
            "ls",
        ]),
        false,
        "color.bullpen beats color.ui",
    );
    assert_coloured(
        &tty(&[
            "-c",
            "color.ui=always",
            "-c",
            "color.bullpen=false",
            "bullpen",
            "ls",
        ]),
        false,
        "color.bullpen=false is never",
    );
    assert_coloured(
        &tty(&[
            "-c",
            "color.ui=never",
            "-c",
            "color.bullpen",
            "bullpen",
            "ls",
        ]),
        true,
        "color.bullpen alone is true, which is auto",
    );
}

#[test]
fn color_ui_from_the_repository_config() {
    let env = with_a_coloured_row();
    env.git(&env.repo, &["config", "color.ui", "never"]).ok();
    assert_coloured(&run(&env, true, &[], &["bullpen", "ls"]), false, "config");
    // `git -c` beats the file, as everywhere in git.
    assert_coloured(
        &run(&env, true, &[], &["-c", "color.ui=auto", "bullpen", "ls"]),
        true,
        "git -c over the file",
    );
}

#[test]
fn the_color_option_beats_the_configuration() {
    let env = with_a_coloured_row();
    let never = ["-c", "color.ui=never", "-c", "color.bullpen=never"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = never.to_vec();
        args.extend(["bullpen", "ls"]);
        args.extend(extra);
        args
    };
    assert_coloured(
        &run(&env, false, &[], &with(&["--color=always"])),
        true,
        "--color=always",
    );
    assert_coloured(
        &run(&env, false, &[], &with(&["--color"])),
        true,
        "--color alone",
    );
    assert_coloured(
        &run(&env, true, &[], &with(&["--color=auto"])),
        true,
        "--color=auto",
    );
    assert_coloured(
        &run(&env, true, &[], &["bullpen", "ls", "--color=never"]),
        false,
        "--color=never",
    );
    assert_coloured(
        &run(&env, true, &[], &["bullpen", "--no-color", "ls"]),
        false,
        "--no-color",
    );
    assert_coloured(
        &run(
            &env,
            false,
            &[],
            &["bullpen", "ls", "--no-color", "--color=always"],
        ),
        true,
        "the last one given wins",
    );
}

#[test]
fn no_color_and_a_dumb_terminal_turn_off_only_what_is_automatic() {
    let env = with_a_coloured_row();
    let no_color = [("NO_COLOR", "1")];
    assert_coloured(
        &run(&env, true, &no_color, &["bullpen", "ls"]),
        false,
        "NO_COLOR",
    );
    assert_coloured(
        &run(&env, true, &[("NO_COLOR", "")], &["bullpen", "ls"]),
        true,
        "an empty NO_COLOR",
    );
    assert_coloured(
        &run(&env, false, &no_color, &["bullpen", "ls", "--color=always"]),
        true,
        "NO_COLOR and --color=always",
    );
    assert_coloured(
        &run(
            &env,
            false,
            &no_color,
            &["-c", "color.ui=always", "bullpen", "ls"],
        ),
        true,
        "NO_COLOR and color.ui=always",
    );
    assert_coloured(
        &run(&env, true, &[("TERM", "dumb")], &["bullpen", "ls"]),
        false,
        "TERM=dumb",
    );
}

#[test]
fn a_bad_colour_value_fails_as_in_git() {
    let env = with_a_coloured_row();
    let out: Run = env
        .cmd(BIN, &env.repo)
        .env("GIT_CONFIG_PARAMETERS", "'color.bullpen'='sometimes'")
        .arg("ls")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code(), 128, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "fatal: bad boolean config value 'sometimes' for 'color.bullpen'\n\
         hint: color.bullpen takes always, never, auto, or true/false (git config color.bullpen auto)\n"
    );
    let usage: Run = env
        .cmd(BIN, &env.repo)
        .args(["ls", "--color=sometimes"])
        .output()
        .unwrap()
        .into();
    assert_eq!(usage.code(), 129, "{}", usage.stderr);
    assert_contains(
        &usage.stderr,
        "invalid value 'sometimes' for '--color[=<WHEN>]'",
    );
}
