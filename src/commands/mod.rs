//! One file per subcommand: its clap `Args` and its `run` function.

use std::path::Path;

use anyhow::Result;

use crate::cli::Command;

pub mod gc;
pub mod logs;
pub mod ls;
pub mod path;
pub mod resume;
pub mod spawn;
pub mod stop;
pub mod supervise;

/// Dispatch; returns the process exit status.
pub fn run(command: Command, cwd: &Path) -> Result<i32> {
    match command {
        Command::Spawn(args) => spawn::run(args, cwd),
        Command::Ls(args) => ls::run(args, cwd),
        Command::Resume(args) => resume::run(args, cwd),
        Command::Path(args) => path::run(args, cwd),
        Command::Stop(args) => stop::run(args, cwd),
        Command::Logs(args) => logs::run(args, cwd),
        Command::Supervise(args) => supervise::run(args, cwd),
        Command::Gc(args) => gc::run(args, cwd),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        crate::cli::Cli::command().debug_assert();
    }
}
