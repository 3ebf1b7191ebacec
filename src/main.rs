//! Parse, dispatch, and map errors to exit statuses in one place.

use std::process::ExitCode;

use bullpen::cli::Cli;
use bullpen::model::Kind;
use bullpen::ui::Ui;
use clap::{CommandFactory, Parser};

fn main() -> ExitCode {
    // First, while this is the only thread: what the environment says about the
    // repository is kept, and git's repository variables leave the environment,
    // so that every git bullpen runs acts on the repository bullpen reads.
    bullpen::git::GitEnv::capture();
    bullpen::sys::memory::return_large_frees();
    // With GIT_BULLPEN_COMPLETE set, answer the shell's completion request and exit.
    bullpen::complete::complete_from_env(Cli::command);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Kind::Usage.status()
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let ui = Ui::stdio(cli.color());
    let result = std::env::current_dir()
        .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))
        .and_then(|cwd| cli.command.run(&cwd, &ui));
    match result.and_then(|status| ui.flush().map(|()| status)) {
        Ok(status) => ExitCode::from(status.clamp(0, 255) as u8),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Whatever was printed before the error goes out first.
            let _ = ui.flush();
            ExitCode::from(ui.error(&e).status())
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
