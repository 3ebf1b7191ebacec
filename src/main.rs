//! Parse, dispatch, and map errors to exit statuses in one place (the
//! convention is `model::exit`'s).

use std::process::ExitCode;

use bullpen::cli::Cli;
use bullpen::model::{config, exit, Kind};
use bullpen::ui::Ui;
use clap::{CommandFactory, Parser};

fn main() -> ExitCode {
    // The test clock, read here once: the model reads no environment.
    if let Some(epoch) = std::env::var(bullpen::model::config::ENV_TEST_EPOCH)
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        bullpen::model::time::pin_test_epoch(epoch);
    }
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let subcommand = exit::subcommand_of(args.iter().map(String::as_str)).map(str::to_owned);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("fatal: internal error: this is a bug in git-bullpen; please report it");
    }));
    let long_help = bullpen::cli::long_help_asked(args.iter().map(String::as_str));
    match std::panic::catch_unwind(|| run(subcommand.as_deref(), long_help)) {
        Ok(code) => code,
        Err(_) => ExitCode::from(exit::INTERNAL),
    }
}

fn run(subcommand: Option<&str>, long_help: bool) -> ExitCode {
    if std::env::var_os(config::ENV_TEST_PANIC).is_some() {
        panic!("{} is set", config::ENV_TEST_PANIC);
    }
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
            // `-h` is the short usage and exits as a usage error, as git's;
            // `--help` is the whole help, and `--version` is no error.
            let short_help = e.kind() == clap::error::ErrorKind::DisplayHelp && !long_help;
            let code = if e.use_stderr() || short_help {
                exit::of_error(Kind::Usage, subcommand)
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let ui = Ui::stdio(cli.color());
    if cli.command.quiet() {
        ui.set_quiet();
    }
    if let Some(command) = cli.command.pages().filter(|_| !cli.no_pager) {
        ui.want_pager(command);
    }
    let result = std::env::current_dir()
        .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))
        .and_then(|cwd| cli.command.run(&cwd, &ui));
    let code = match result.and_then(|status| ui.flush().map(|()| status)) {
        Ok(status) => ExitCode::from(status.clamp(0, 255) as u8),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Whatever was printed before the error goes out first.
            let _ = ui.flush();
            ExitCode::from(exit::of_error(ui.error(&e), subcommand))
        }
    };
    ui.finish_pager();
    code
}

/// `git bullpen ls | head` closes our stdout early: exit quietly with 0.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
