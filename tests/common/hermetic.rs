//! The hermetic environment of every process the tests (`tests/cli`) and the
//! performance suite (`benches/bullpen`) start: no variable of the machine's
//! own, no global or system git config, a home and a BULLPEN_HOME of their own.
//! Both include this file (`#[path = ...] mod hermetic;`), so the list lives once.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// Clear `cmd`'s environment and give it the hermetic one: `path` as PATH,
/// `home` as HOME (the XDG directories and the global git config inside it),
/// `bullpen_home` as BULLPEN_HOME, fixed git identities, the C locale, UTC,
/// `/bin/sh` as SHELL, no editor or pager, and stdin from /dev/null.
pub fn apply<'c>(
    cmd: &'c mut Command,
    path: &OsStr,
    home: &Path,
    bullpen_home: &Path,
) -> &'c mut Command {
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("BULLPEN_HOME", bullpen_home)
        .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_EDITOR", ":")
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::null())
}
