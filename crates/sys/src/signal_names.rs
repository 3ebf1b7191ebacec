//! The model's signal names (it has no libc) are this system's numbers.

use crate::model::ending::signal_name;

#[test]
fn signal_names_are_the_systems() {
    for (n, name) in [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGSYS, "SIGSYS"),
    ] {
        assert_eq!(signal_name(n), name);
    }
}
