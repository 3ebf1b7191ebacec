//! `git bullpen help [<command>]`: the command's man page, as `git help` opens
//! git's (`man git-bullpen-<command>`); where no page is installed, the help
//! that is its source.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::engine::CompletionCandidate;

use crate::model::{config, suggest, Error};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen help
  git bullpen help spawn
  # without the page: the same text, printed
  git bullpen spawn --help

Opens git-bullpen(1), or git-bullpen-<command>(1), with man(1), as git help does for \
git's own commands. The directory share/man next to the installed binary's bin/ is \
looked in first (MANPATH). git config man.viewer names another viewer when \
man.<tool>.cmd says how to run it (the page's name is added to that line, run with \
/bin/sh -c); GIT_MAN_VIEWER overrides man.viewer. help.format other than man is \
answered with the man page: git-bullpen has no info or HTML pages. Where man is \
missing or the page is not installed, the command's help is printed instead, with a \
warning that says so.";

/// Open a command's manual page (git-bullpen-<command>(1)).
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The command whose page to open (default: git-bullpen(1) itself).
    #[arg(value_name = "COMMAND", add = clap_complete::ArgValueCandidates::new(command_candidates))]
    pub command: Option<String>,
}

/// The commands a page exists for, to complete `help <TAB>`.
pub fn command_candidates() -> Vec<CompletionCandidate> {
    crate::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| {
            CompletionCandidate::new(s.get_name().to_owned())
                .help(s.get_about().map(|a| a.to_owned()))
        })
        .collect()
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let mut top = crate::cli::Cli::command();
    top.build();
    let names: Vec<String> = top
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect();
    let page = match &args.command {
        None => "git-bullpen".to_owned(),
        Some(name) if names.contains(name) => format!("git-bullpen-{name}"),
        Some(name) => {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut e = Error::usage(format!("'{name}' is not a git bullpen command"));
            if let Some(hint) = suggest::did_you_mean(name, &refs) {
                e = e.hint(hint);
            }
            return Err(e.hint("git bullpen --help lists them").into());
        }
    };
    let config = Config::read(cwd);
    if let Some(format) = config.format.as_deref().filter(|f| *f != "man") {
        ui.warn(format!(
            "help.format {format}: git-bullpen has man pages only; opening the man page"
        ));
    }
    ui.flush()?;
    let manpath = man_path();
    if let Some(tool) = config
        .viewer
        .as_deref()
        .filter(|v| !v.is_empty() && *v != "man")
    {
        match &config.tool_cmd {
            Some(line) => {
                let status = Command::new("/bin/sh")
                    .arg("-c")
                    .arg(format!("{line} {page}"))
                    .envs(manpath.iter().map(|m| (config::ENV_MANPATH, m)))
                    .status()
                    .with_context(|| format!("cannot run man.{tool}.cmd"))?;
                return Ok(status.code().unwrap_or(128));
            }
            None => ui.warn(format!(
                "man.viewer {tool}: git-bullpen runs a viewer only through man.{tool}.cmd; \
                 opening the page with man"
            )),
        }
    }
    let man = |args: &[&str]| {
        let mut cmd = Command::new("man");
        cmd.args(args)
            .envs(manpath.iter().map(|m| (config::ENV_MANPATH, m)));
        cmd
    };
    let found = man(&["-w", &page])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        ui.warn(format!(
            "no man page {page} is installed (install.sh installs them); its text follows"
        ));
        let help = match &args.command {
            Some(name) => match top.find_subcommand_mut(name) {
                Some(sub) => sub.render_long_help(),
                None => top.render_long_help(),
            },
            None => top.render_long_help(),
        };
        let text = match ui.color() {
            true => help.ansi().to_string(),
            false => help.to_string(),
        };
        write!(ui.out(), "{text}").context("cannot write to stdout")?;
        return Ok(0);
    }
    let status = man(&[&page])
        .status()
        .with_context(|| format!("cannot run man {page}"))?;
    Ok(status.code().unwrap_or(128))
}

/// What `git help` reads of the configuration: `help.format`, `man.viewer`,
/// and the viewer's `man.<tool>.cmd`. Outside a repository there is none.
#[derive(Default)]
struct Config {
    format: Option<String>,
    viewer: Option<String>,
    tool_cmd: Option<String>,
}

impl Config {
    fn read(cwd: &Path) -> Config {
        let Ok(repo) = crate::git::Repo::discover(cwd) else {
            return Config {
                viewer: std::env::var(config::ENV_MAN_VIEWER).ok(),
                ..Config::default()
            };
        };
        let viewer = std::env::var(config::ENV_MAN_VIEWER)
            .ok()
            .or_else(|| repo.config_string(config::MAN_VIEWER));
        let tool_cmd = viewer
            .as_ref()
            .and_then(|tool| repo.config_string(&format!("man.{tool}.cmd")));
        Config {
            format: repo.config_string(config::HELP_FORMAT),
            viewer,
            tool_cmd,
        }
    }
}

/// `<prefix>/share/man` of the installed binary (`<prefix>/bin/git-bullpen`),
/// first on MANPATH, as git puts its own man path first.
fn man_path() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let dir: PathBuf = exe.parent()?.parent()?.join("share/man");
    if !dir.is_dir() {
        return None;
    }
    let old = std::env::var(config::ENV_MANPATH).unwrap_or_default();
    Some(format!("{}:{old}", dir.display()))
}
