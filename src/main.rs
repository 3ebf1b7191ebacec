//! Parse, dispatch, and map errors to exit statuses in one place.

use std::process::ExitCode;

use bullpen::cli::Cli;
use clap::Parser;

/// Usage errors exit 129, like git's own commands.
const EXIT_USAGE: u8 = 129;
/// bullpen's own failures exit 128, like git's `fatal:`.
const EXIT_FATAL: u8 = 128;

fn main() -> ExitCode {
    // With GIT_BULLPEN_COMPLETE set, answer the shell's completion request and exit.
    bullpen::complete::complete_from_env();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return ExitCode::from(EXIT_FATAL);
        }
    };
    match bullpen::commands::run(cli.command, &cwd) {
        Ok(status) => ExitCode::from(status.clamp(0, 255) as u8),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

/// `git bullpen ls | head` closes our stdout early: exit quietly with 0.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
