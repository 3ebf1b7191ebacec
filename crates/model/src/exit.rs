//! Exit statuses a script can trust, decided in one place (`main` applies them).
//!
//! `spawn`, `resume`, `attach` and `wait` exit with the status of the session's
//! command, so bullpen's own outcomes take `timeout(1)`'s reserved statuses
//! there: 125 for a refusal, a failure or a usage error of bullpen's, 126 and
//! 127 for a command that could not be executed or was not found. Every other
//! command exits 3 (refused), 128 (failed) or 129 (usage), as before. A bug in
//! bullpen (a panic) exits 70 everywhere (`EX_SOFTWARE`).

use super::Kind;

/// `wait --timeout` ran out with the run still going (as `timeout(1)`).
pub const TIMED_OUT: u8 = 124;
/// bullpen's own refusal, failure or usage error in a command that passes the
/// command's status through.
pub const OWN: u8 = 125;
/// The command was found but could not be executed.
pub const NOT_EXECUTABLE: u8 = 126;
/// The command was not found.
pub const NOT_FOUND: u8 = 127;
/// An internal error: a bug in bullpen.
pub const INTERNAL: u8 = 70;

/// The subcommands whose status is their session's command's status.
const PASS_THROUGH: [&str; 4] = ["spawn", "resume", "attach", "wait"];

/// Whether `subcommand` (as typed) exits with its session's command's status.
pub fn passes_through(subcommand: &str) -> bool {
    PASS_THROUGH.contains(&subcommand)
}

/// The subcommand named in `args` (the program's arguments after its name):
/// the first one that is not an option (the global options take no separate value).
pub fn subcommand_of<'a>(args: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    args.into_iter().find(|a| !a.starts_with('-'))
}

/// The exit status of bullpen's own failure of `kind` in `subcommand`.
pub fn of_error(kind: Kind, subcommand: Option<&str>) -> u8 {
    match subcommand.is_some_and(passes_through) {
        true => OWN,
        false => kind.status(),
    }
}

/// The status recorded (and given) for a command that could not be executed:
/// 127 when it was not found, 126 otherwise (permission denied, not an
/// executable, a directory), as a shell says.
pub fn of_exec_failure(err: &anyhow::Error) -> i32 {
    let not_found = err
        .chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::NotFound);
    i32::from(match not_found {
        true => NOT_FOUND,
        false => NOT_EXECUTABLE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_failures_of_a_pass_through_command_never_read_as_the_commands() {
        for sub in ["spawn", "resume", "attach", "wait"] {
            for kind in [Kind::Refused, Kind::Failed, Kind::Usage] {
                assert_eq!(of_error(kind, Some(sub)), 125, "{sub} {kind:?}");
            }
        }
        assert_eq!(of_error(Kind::Refused, Some("gc")), 3);
        assert_eq!(of_error(Kind::Failed, Some("ls")), 128);
        assert_eq!(of_error(Kind::Usage, None), 129);
    }

    #[test]
    fn the_subcommand_is_the_first_word_that_is_not_an_option() {
        assert_eq!(
            subcommand_of(["--no-color", "spawn", "x", "--", "ls"]),
            Some("spawn")
        );
        assert_eq!(subcommand_of(["--color=always", "ls"]), Some("ls"));
        assert_eq!(subcommand_of(["--help"]), None);
    }

    #[test]
    fn a_command_not_found_is_127_and_one_not_executable_126() {
        let io = |k| anyhow::Error::new(std::io::Error::from(k)).context("cannot run x");
        assert_eq!(of_exec_failure(&io(std::io::ErrorKind::NotFound)), 127);
        assert_eq!(
            of_exec_failure(&io(std::io::ErrorKind::PermissionDenied)),
            126
        );
    }
}
