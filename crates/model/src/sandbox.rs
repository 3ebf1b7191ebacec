//! `--sandbox` (issue 26), the pure part: which paths a session's command may
//! write (everything else it may only read), the macOS Seatbelt profile made
//! from them, and the git configuration its git runs with. `sys::landlock`
//! applies the roots on Linux; `run::sandbox` gathers the paths.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How a run is confined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Off,
    /// Every rule enforced, or nothing runs.
    Strict,
    /// What the kernel supports, saying what is not enforced.
    BestEffort,
}

impl Mode {
    /// `--sandbox[=<mode>]`'s and `bullpen.sandbox`'s words: a git boolean, or
    /// `strict`, `best-effort`.
    pub fn parse(value: &str) -> Option<Mode> {
        match value.trim().to_ascii_lowercase().as_str() {
            "strict" | "true" | "yes" | "on" | "1" | "" => Some(Mode::Strict),
            "best-effort" => Some(Mode::BestEffort),
            "false" | "no" | "off" | "0" => Some(Mode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Strict => "strict",
            Mode::BestEffort => "best-effort",
        }
    }

    /// `--sandbox[=<mode>]` (`Some`), `--no-sandbox` (`no`), else the config's word.
    pub fn choose(flag: Option<Mode>, no: bool, config: Option<Mode>) -> Mode {
        match (flag, no) {
            (_, true) => Mode::Off,
            (Some(m), false) => m,
            (None, false) => config.unwrap_or(Mode::Off),
        }
    }
}

/// What a root lets the command do beneath it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grant {
    /// Everything: create, write, truncate, remove, rename files and directories.
    Tree,
    /// Create, write, remove and rename regular files directly beneath it (no
    /// directories): what a loose ref's update through its lock needs. The
    /// kernel's rules are per directory, so this holds for every file there;
    /// `files` are the ones meant (a Seatbelt profile names just those).
    RefFiles { files: Vec<PathBuf> },
    /// Write an existing file (or device), or the files beneath a directory;
    /// create or remove nothing.
    Write,
}

/// One writable path and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Root {
    /// Which rule this is (`worktree`, `admin`, `objects`, `refs`, `reflog`,
    /// `tmp`, `device`, `agent`, `allow-write`).
    pub key: &'static str,
    pub path: PathBuf,
    pub grant: Grant,
    pub why: String,
}

/// The paths of one session's run.
#[derive(Clone, Debug, Default)]
pub struct Places {
    pub worktree: PathBuf,
    /// `<common>/worktrees/<name>`.
    pub admin: PathBuf,
    /// The git common directory.
    pub common: PathBuf,
    /// The session id (its branch is `bullpen/<id>`).
    pub id: String,
    /// The run's private temporary directory (`TMPDIR`).
    pub tmp: PathBuf,
    /// git config `bullpen.sandbox.allowWrite`.
    pub allow_write: Vec<PathBuf>,
    /// What the session's agent profile says it writes (`~/.claude`, ...).
    pub agent_state: Vec<PathBuf>,
}

/// The devices any program writes (`>/dev/null`) or opens as its terminal.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Pure: the writable roots of a run, in the order they are shown.
pub fn roots(p: &Places) -> Vec<Root> {
    let refs_dir = p.common.join("refs/heads/bullpen");
    let ref_file = refs_dir.join(&p.id);
    let lock = refs_dir.join(format!("{}.lock", p.id));
    let mut out = vec![
        root(
            "worktree",
            &p.worktree,
            Grant::Tree,
            "the session's worktree",
        ),
        root(
            "admin",
            &p.admin,
            Grant::Tree,
            "its admin directory (HEAD, index, logs/HEAD, rebase state)",
        ),
        root(
            "objects",
            &p.common.join("objects"),
            Grant::Tree,
            "the object store",
        ),
        root(
            "refs",
            &refs_dir,
            Grant::RefFiles {
                files: vec![ref_file, lock],
            },
            &format!(
                "refs/heads/bullpen/{0} and its lock refs/heads/bullpen/{0}.lock (Landlock: every \
                 file of refs/heads/bullpen/, other sessions' branches too)",
                p.id
            ),
        ),
        root(
            "reflog",
            &p.common.join("logs/refs/heads/bullpen").join(&p.id),
            Grant::Write,
            "the branch's reflog (appended)",
        ),
        root("tmp", &p.tmp, Grant::Tree, "the run's private TMPDIR"),
    ];
    for d in DEVICES {
        out.push(root("device", Path::new(d), Grant::Write, "a device"));
    }
    for a in &p.agent_state {
        out.push(root(
            "agent",
            a,
            Grant::Tree,
            "the agent's state (its profile)",
        ));
    }
    for a in &p.allow_write {
        out.push(root(
            "allow-write",
            a,
            Grant::Tree,
            "bullpen.sandbox.allowWrite",
        ));
    }
    out
}

fn root(key: &'static str, path: &Path, grant: Grant, why: &str) -> Root {
    Root {
        key,
        path: path.to_path_buf(),
        grant,
        why: why.to_owned(),
    }
}

/// Pure: the rules as `spawn --sandbox --dry-run` prints them, one a line.
pub fn describe(roots: &[Root]) -> String {
    let mut out = String::new();
    for r in roots {
        let what = match r.grant {
            Grant::Tree => "write",
            Grant::RefFiles { .. } => "files",
            Grant::Write => "write-existing",
        };
        let _ = writeln!(out, "{what:<15} {}  # {}", r.path.display(), r.why);
    }
    out
}

/// The git configuration a sandboxed command's git runs with, as `git -c`
/// passes it: no automatic gc or maintenance (they pack refs into
/// `packed-refs` and prune worktrees, outside what the sandbox lets it write),
/// and a `git gc` by hand that does not pack refs.
pub const GIT_CONFIG: &[(&str, &str)] = &[
    ("gc.auto", "0"),
    ("gc.autoPackLimit", "0"),
    ("gc.packRefs", "false"),
    ("maintenance.auto", "false"),
];

/// Pure: `GIT_CONFIG_PARAMETERS` with [`GIT_CONFIG`] after what it held (a
/// later entry wins in git), in git's own quoting (`'key'='value'`, spaces
/// between).
pub fn config_parameters(existing: Option<&str>) -> String {
    let mut out = existing.map(str::trim_end).unwrap_or_default().to_owned();
    for (k, v) in GIT_CONFIG {
        if !out.is_empty() {
            out.push(' ');
        }
        let _ = write!(out, "{}={}", sq(k), sq(v));
    }
    out
}

/// git's `sq_quote_buf`: in single quotes, `'` and `!` as `'\''` and `'\!'`.
fn sq(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            '!' => out.push_str("'\\!'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Pure: the Seatbelt profile (macOS `sandbox-exec -p`) of the same roots:
/// reads stay broad, writes only beneath the roots. Seatbelt matches paths, so
/// the ref directory's grant is only the session's ref and its lock.
pub fn seatbelt_profile(roots: &[Root]) -> String {
    let mut out =
        String::from("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n");
    for r in roots {
        match &r.grant {
            Grant::Tree => {
                let _ = writeln!(out, "  (subpath {})", sb_string(&r.path));
            }
            Grant::RefFiles { files } => {
                for f in files {
                    let _ = writeln!(out, "  (literal {})", sb_string(f));
                }
            }
            // The one directory among them: the terminals' devices.
            Grant::Write if r.path == Path::new("/dev/pts") => {
                let _ = writeln!(out, "  (subpath {})", sb_string(&r.path));
            }
            Grant::Write => {
                let _ = writeln!(out, "  (literal {})", sb_string(&r.path));
            }
        }
    }
    out.push_str(")\n");
    out
}

/// A Seatbelt (TinyScheme) string literal.
fn sb_string(p: &Path) -> String {
    let mut out = String::from("\"");
    for c in p.to_string_lossy().chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Landlock ABI every rule needs: write rights with renames across
/// directories (2), truncation (3), signals and abstract Unix sockets scoped to
/// the sandbox (6, Linux 6.12).
pub const REQUIRED_ABI: i32 = 6;

/// Pure: what a kernel with Landlock ABI `abi` (0: none) cannot enforce.
pub fn not_enforced(abi: i32) -> Vec<String> {
    let mut out = Vec::new();
    if abi < 1 {
        out.push("any write rule: the kernel has no Landlock".to_owned());
        return out;
    }
    if abi < 3 {
        out.push("truncating files outside the writable paths (needs Landlock ABI 3)".to_owned());
    }
    if abi < 6 {
        out.push(
            "signals and abstract Unix sockets to processes outside the sandbox (needs Landlock \
             ABI 6)"
                .to_owned(),
        );
    }
    out
}

/// The key of the record (and `ls --json`) that says how the latest run was
/// confined (absent: not at all).
pub const RECORD_KEY: &str = "sandbox";

/// What the record says of a sandboxed run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// `landlock`, `seatbelt`, or `none` (best-effort on a kernel without it).
    pub enforcement: String,
    pub mode: Mode,
    /// What the kernel could not enforce (best-effort).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_enforced: Vec<String>,
    /// The writable paths.
    pub writable: Vec<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            worktree: "/wt/repo-1a2b/fix-login".into(),
            admin: "/src/app/.git/worktrees/fix-login".into(),
            common: "/src/app/.git".into(),
            id: "fix-login".into(),
            tmp: "/tmp/bullpen-fix-login-XyZ".into(),
            allow_write: vec!["/home/u/.cache/my \"tool\"".into()],
            agent_state: vec!["/home/u/.claude".into(), "/home/u/.claude.json".into()],
        }
    }

    #[test]
    fn modes_read_as_git_booleans_or_words() {
        assert_eq!(Mode::parse("true"), Some(Mode::Strict));
        assert_eq!(Mode::parse("Yes"), Some(Mode::Strict));
        assert_eq!(Mode::parse("best-effort"), Some(Mode::BestEffort));
        assert_eq!(Mode::parse("off"), Some(Mode::Off));
        assert_eq!(Mode::parse("maybe"), None);
        assert_eq!(Mode::choose(None, false, Some(Mode::Strict)), Mode::Strict);
        assert_eq!(Mode::choose(None, true, Some(Mode::Strict)), Mode::Off);
        assert_eq!(
            Mode::choose(Some(Mode::BestEffort), false, None),
            Mode::BestEffort
        );
        assert_eq!(Mode::choose(None, false, None), Mode::Off);
    }

    #[test]
    fn the_roots_are_the_session_s_own_and_nothing_of_config_or_hooks() {
        let r = roots(&places());
        let paths: Vec<_> = r.iter().map(|r| r.path.display().to_string()).collect();
        assert!(paths.contains(&"/src/app/.git/objects".to_owned()));
        assert!(paths.contains(&"/src/app/.git/refs/heads/bullpen".to_owned()));
        assert!(paths.contains(&"/src/app/.git/logs/refs/heads/bullpen/fix-login".to_owned()));
        for p in &paths {
            assert!(p != "/src/app/.git" && p != "/src/app" && p != "/src/app/.git/refs");
            assert!(!p.contains("hooks") && !p.ends_with("config") && !p.contains("packed-refs"));
        }
    }

    #[test]
    fn git_config_parameters_are_appended_in_git_s_quoting() {
        assert_eq!(
            config_parameters(None),
            "'gc.auto'='0' 'gc.autoPackLimit'='0' 'gc.packRefs'='false' 'maintenance.auto'='false'"
        );
        let with = config_parameters(Some("'user.name'='it'\\''s'"));
        let parsed = crate::params::parse(with.as_bytes()).unwrap();
        assert_eq!(parsed[0].key, b"user.name");
        assert_eq!(parsed[0].value.as_deref(), Some(&b"it's"[..]));
        assert_eq!(parsed.len(), 5);
        assert_eq!(parsed[1].key, b"gc.auto");
        assert_eq!(sq("a'b!c"), "'a'\\''b'\\!'c'");
    }

    #[test]
    fn the_seatbelt_profile() {
        insta::assert_snapshot!(seatbelt_profile(&roots(&places())), @r#"
        (version 1)
        (allow default)
        (deny file-write*)
        (allow file-write*
          (subpath "/wt/repo-1a2b/fix-login")
          (subpath "/src/app/.git/worktrees/fix-login")
          (subpath "/src/app/.git/objects")
          (literal "/src/app/.git/refs/heads/bullpen/fix-login")
          (literal "/src/app/.git/refs/heads/bullpen/fix-login.lock")
          (literal "/src/app/.git/logs/refs/heads/bullpen/fix-login")
          (subpath "/tmp/bullpen-fix-login-XyZ")
          (literal "/dev/null")
          (literal "/dev/zero")
          (literal "/dev/full")
          (literal "/dev/tty")
          (literal "/dev/ptmx")
          (subpath "/dev/pts")
          (subpath "/home/u/.claude")
          (subpath "/home/u/.claude.json")
          (subpath "/home/u/.cache/my \"tool\"")
        )
        "#);
    }
}
