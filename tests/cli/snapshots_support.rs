//! The pinned world of the `snapshots_*` modules: every command runs with the
//! test clock (`BULLPEN_TEST_EPOCH`) and a table width (`COLUMNS`), so that what
//! people read, ages and alignment included, is the same on every run. Only
//! what differs between machines is replaced (`normalise_but_ages`).

use std::path::Path;

use crate::snapshots::normalise_but_ages;
use crate::support::{Env, Run, BIN};

/// 2026-01-01T00:00:00Z, the tests' commit date: the clock starts there.
pub(crate) const START: i64 = 1_767_225_600;

/// Where and when commands run: the clock and the table's width.
#[derive(Clone, Copy)]
pub(crate) struct World<'a> {
    pub env: &'a Env,
    pub now: i64,
    pub columns: u16,
}

impl<'a> World<'a> {
    pub(crate) fn new(env: &'a Env) -> World<'a> {
        World {
            env,
            now: START,
            columns: 100,
        }
    }

    /// The same world `secs` later.
    pub(crate) fn after(self, secs: i64) -> World<'a> {
        World {
            now: self.now + secs,
            ..self
        }
    }

    /// The same world on a table `columns` wide.
    pub(crate) fn width(self, columns: u16) -> World<'a> {
        World { columns, ..self }
    }

    /// `git bullpen <args>` in `cwd`, now.
    pub(crate) fn run_in(&self, cwd: &Path, args: &[&str]) -> Run {
        self.env
            .cmd(BIN, cwd)
            .args(args)
            .env("BULLPEN_TEST_EPOCH", self.now.to_string())
            .env("COLUMNS", self.columns.to_string())
            .env("BULLPEN_HOSTNAME", "host")
            .output()
            .expect("run git-bullpen")
            .into()
    }

    /// `git bullpen <args>` in the main worktree, now.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.env.repo, args)
    }

    /// `git bullpen <args>` as a reader sees it: the command line, how it
    /// ended, and each stream that printed something.
    pub(crate) fn show(&self, args: &[&str]) -> String {
        self.show_in(&self.env.repo, args)
    }

    /// [`World::show`] in `cwd`.
    pub(crate) fn show_in(&self, cwd: &Path, args: &[&str]) -> String {
        let run = self.run_in(cwd, args);
        let root = self.env.root().display().to_string();
        let mut text = format!(
            "{}\nexit {}\n",
            typed(args).replace(&root, "[ROOT]"),
            run.code()
        );
        for (name, stream) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !stream.is_empty() {
                let stream = pinned(self.env, stream.trim_end());
                text.push_str(&format!("--- {name}\n{stream}\n"));
            }
        }
        text
    }
}

/// What a command printed, with what differs between machines replaced: the
/// words `normalise_but_ages` replaces, pids in JSON (`"pid": [PID]`), the
/// `worktree root:` line when the width cut it (where depends on the temp
/// dir's length), and escape characters shown as `\e`.
pub(crate) fn pinned(env: &Env, text: &str) -> String {
    normalise_but_ages(env, text)
        .lines()
        .map(|line| {
            if line.starts_with("worktree root: ") && line.ends_with('…') {
                return "worktree root: [cut to the width]".to_owned();
            }
            let mut line = line.replace('\x1b', "\\e");
            for key in ["\"pid\": ", "\"supervisor_pid\": "] {
                if let Some(at) = line.find(key) {
                    let start = at + key.len();
                    let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
                    if digits > 0 {
                        line.replace_range(start..start + digits, "[PID]");
                    }
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `git bullpen <args>` as typed (an argument with spaces in quotes).
fn typed(args: &[&str]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| match a.contains(' ') || a.is_empty() {
            true => format!("'{a}'"),
            false => a.to_string(),
        })
        .collect();
    format!("$ git bullpen {}", words.join(" "))
}
