//! The hermetic environment of every process the tests (`tests/cli`) and the
//! performance suite (`benches/bullpen`) start: no variable of the machine's
//! own, no global or system git config, a home and a BULLPEN_HOME of their own.
//! Both include this file (`#[path = ...] mod hermetic;`), so the list lives once.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The temp dir one run works in, with an empty `home` and `bullpen-home`.
pub struct Dirs {
    pub tmp: tempfile::TempDir,
    /// `tmp`'s path, canonical, so the paths git and bullpen print compare equal.
    pub root: PathBuf,
    pub home: PathBuf,
    pub bullpen_home: PathBuf,
}

impl Dirs {
    pub fn new(prefix: &str) -> Dirs {
        let tmp = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let home = root.join("home");
        let bullpen_home = root.join("bullpen-home");
        for d in [&home, &bullpen_home] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        // XDG_RUNTIME_DIR, where background runs put their sockets: the
        // user's own (mode 0700), as a login session provides it.
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(runtime_dir(&home))
                .expect("mkdir");
        }
        Dirs {
            tmp,
            root,
            home,
            bullpen_home,
        }
    }
}

/// The hermetic XDG_RUNTIME_DIR: `<home>/.run`.
pub fn runtime_dir(home: &Path) -> PathBuf {
    home.join(".run")
}

/// Clear `cmd`'s environment and give it the hermetic one: `path` as PATH,
/// `home` as HOME (the XDG directories, the runtime directory and the global
/// git config inside it),
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
        .env("XDG_RUNTIME_DIR", runtime_dir(home))
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
