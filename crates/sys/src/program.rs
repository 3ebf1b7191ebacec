//! Whether a program can be run: found on PATH as the shell would find it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Can `/bin/sh` run `program`? A name with a `/` is that file; any other is
/// looked for in the directories of `PATH`. An executable regular file either way.
pub fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return std::fs::metadata(Path::new(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    }
    which::which(program).is_ok()
}
