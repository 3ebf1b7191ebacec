//! `--sandbox`'s guard, the pure part: what a sandboxed run found at its start
//! that Landlock cannot keep it from changing (it grants by directory), and
//! what of it to put back at its end. The run's own worktree `.git` file, its
//! admin directory's `commondir`, `gitdir`, `config.worktree` and `HEAD` (each
//! could make git run a program of the agent's later, outside the sandbox, or
//! commit elsewhere), and the other sessions' branches (the files of
//! `refs/heads/bullpen/` are all writable to it). `run::sandbox_guard` keeps
//! the guard in the session's local state (`sandbox.json`), which the sandbox
//! cannot write; `git::sandbox_guard` gathers and acts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::process::ProcessRef;

/// The schema of `sandbox.json`.
pub const GUARD_SCHEMA: u32 = 1;

/// `local/<id>/sandbox.json`: a sandboxed run that has not been settled yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guard {
    pub schema: u32,
    /// The bullpen process that runs the command and settles its end (the
    /// foreground bullpen, or the supervisor).
    pub owner: ProcessRef,
    /// The command, once it is forked (before it runs).
    #[serde(default)]
    pub command: Option<ProcessRef>,
    /// The run's private `TMPDIR`, made by bullpen for this run.
    pub tmp: PathBuf,
    /// Its device and inode when it was made (`None` in a guard from before):
    /// only that directory is removed, wherever the path leads now.
    #[serde(default)]
    pub tmp_made: Option<(u64, u64)>,
    pub made: Made,
}

/// What git's files of the session were when the run started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Made {
    /// The worktree's `.git`, the admin directory's `commondir`, `gitdir` and
    /// `config.worktree`: their content (`None`: there was none).
    pub files: Vec<MadeFile>,
    /// The admin directory (`<common>/worktrees/<name>`).
    pub admin: PathBuf,
    /// The admin directory's `HEAD` must name this ref when it is symbolic.
    pub head: String,
    /// Every other branch under `refs/heads/bullpen/` (full name) and its commit.
    pub branches: BTreeMap<String, String>,
    /// The lock files in `refs/heads/bullpen/` (file names).
    pub locks: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeFile {
    pub path: PathBuf,
    pub content: Option<Vec<u8>>,
}

/// A file as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Now {
    Absent,
    File(Vec<u8>),
    /// A directory, a symlink, anything but a regular file.
    Other,
}

/// Pure: does `now` differ from what the run started with?
pub fn changed(made: Option<&[u8]>, now: &Now) -> bool {
    match (made, now) {
        (None, Now::Absent) => false,
        (Some(m), Now::File(n)) => m != n.as_slice(),
        _ => true,
    }
}

/// Pure: does the admin directory's `HEAD` point away from the session's
/// branch `own` (`refs/heads/bullpen/<id>`)? A detached `HEAD` does not: git
/// detaches it during a rebase, a bisect, a checkout of a commit, and nothing
/// runs from it. A symbolic one naming another ref does (the next commit there
/// would move that ref), and so does anything but a file, or none (git would
/// no longer take the directory for a worktree).
pub fn head_points_away(own: &str, head: &Now) -> bool {
    match head {
        Now::Absent | Now::Other => true,
        Now::File(text) => {
            let text = String::from_utf8_lossy(text);
            match text.trim_end().strip_prefix("ref:") {
                Some(target) => target.trim() != own,
                None => false,
            }
        }
    }
}

/// The content of a `HEAD` on the session's branch.
pub fn head_content(own: &str) -> Vec<u8> {
    format!("ref: {own}\n").into_bytes()
}

/// Names git keeps in a repository's own directory and never in a worktree's
/// admin directory (its `config`, `hooks`, ...): inert there while `commondir`
/// points at the repository, and what a repointed `commondir` or `.git` would
/// make git read. git's per-worktree state (`HEAD`, `ORIG_HEAD`, `index`,
/// `logs/`, `rebase-merge/`, `refs/bisect`, `info/sparse-checkout`, ...) is
/// the agent's to change and stays.
pub const FOREIGN_IN_ADMIN: &[&str] = &[
    "config",
    "hooks",
    "objects",
    "packed-refs",
    "branches",
    "remotes",
    "worktrees",
    "shallow",
    "description",
];

/// One branch under `refs/heads/bullpen/` at the run's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchNow {
    /// Its full name.
    pub name: String,
    /// Its commit now (`None`: no such ref).
    pub target: Option<String>,
    /// The new value of its reflog's last entry (`None`: no entry).
    pub reflog_last: Option<String>,
    /// Whether its reflog file is there (bullpen makes an empty one for each
    /// at the run's start, so that every update git makes leaves an entry,
    /// whatever `core.logAllRefUpdates` says).
    pub reflog: bool,
    /// Whether a session record names it (a session spawned meanwhile).
    pub recorded: bool,
}

/// What to do about one other session's branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BranchVerdict {
    /// Written from inside the sandbox (a real git update writes the reflog,
    /// which the sandbox cannot): put it back at `to`, its reflog's last value
    /// (`reflog`) or else its value at the run's start. `found` is what it held.
    PutBack {
        name: String,
        to: String,
        found: Option<String>,
        reflog: bool,
    },
    /// Changed with no reflog to tell by whom: kept, and said.
    Unexplained { name: String, found: String },
}

/// Pure: the verdict on each other branch, `own` the session's own (full
/// name), `before` the branches at the run's start.
///
/// - Its value is its reflog's last: a real git update made it (another
///   session's run, the user, bullpen), whenever it happened.
/// - It differs from its reflog's last, or it is gone while its reflog
///   remains (git deletes the reflog with the branch): written from inside;
///   put back at the reflog's last value.
/// - No entry in its reflog: changed since the start while its (empty) reflog
///   is there, it was written from inside (put back at its start value); with
///   no reflog file, or a new branch no record names, nobody can tell: kept.
pub fn branch_verdicts(
    own: &str,
    before: &BTreeMap<String, String>,
    now: &[BranchNow],
) -> Vec<BranchVerdict> {
    let mut out = Vec::new();
    for b in now.iter().filter(|b| b.name != own) {
        let start = before.get(&b.name);
        let verdict = match (&b.reflog_last, &b.target, start) {
            (Some(last), target, _) if target.as_ref() != Some(last) => {
                Some(BranchVerdict::PutBack {
                    name: b.name.clone(),
                    to: last.clone(),
                    found: target.clone(),
                    reflog: true,
                })
            }
            (Some(_), _, _) => None,
            (None, target, Some(start)) if target.as_ref() != Some(start) => match b.reflog {
                true => Some(BranchVerdict::PutBack {
                    name: b.name.clone(),
                    to: start.clone(),
                    found: target.clone(),
                    reflog: false,
                }),
                false => target.as_ref().map(|t| BranchVerdict::Unexplained {
                    name: b.name.clone(),
                    found: t.clone(),
                }),
            },
            (None, Some(target), None) if !b.recorded => Some(BranchVerdict::Unexplained {
                name: b.name.clone(),
                found: target.clone(),
            }),
            _ => None,
        };
        out.extend(verdict);
    }
    out
}

/// Pure: the lock files of `refs/heads/bullpen/` to remove at a run's end:
/// those seen in both looks (`first`, `second`: name and inode) as the same
/// file and not there at its start. A git that holds a lock holds it for a
/// moment; one still there, unchanged, after the run is a stale lock that
/// would make every update of that branch fail.
pub fn stale_locks(
    before: &[String],
    first: &[(String, u64)],
    second: &[(String, u64)],
) -> Vec<String> {
    first
        .iter()
        .filter(|l| second.contains(l) && !before.contains(&l.0))
        .map(|(name, _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "refs/heads/bullpen/a";

    fn now(name: &str, target: Option<&str>, last: Option<&str>, reflog: bool) -> BranchNow {
        BranchNow {
            name: format!("refs/heads/bullpen/{name}"),
            target: target.map(str::to_owned),
            reflog_last: last.map(str::to_owned),
            reflog,
            recorded: false,
        }
    }

    fn before(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(n, o)| (format!("refs/heads/bullpen/{n}"), (*o).to_owned()))
            .collect()
    }

    #[test]
    fn a_branch_is_put_back_only_when_no_real_update_explains_it() {
        let start = before(&[("b", "1"), ("c", "1"), ("d", "1"), ("e", "1"), ("f", "1")]);
        let mut fresh = now("new", Some("9"), None, false);
        fresh.recorded = true;
        let v = branch_verdicts(
            OWN,
            &start,
            &[
                now("a", Some("7"), Some("6"), true), // its own: the agent's to move
                now("b", Some("2"), Some("2"), true), // another run committed
                now("c", Some("3"), Some("1"), true), // written from inside
                now("d", None, Some("1"), true),      // deleted from inside
                now("e", Some("4"), None, true),      // empty reflog, moved
                now("f", Some("4"), None, false),     // no reflog at all: cannot tell
                now("g", Some("5"), None, false),     // new, no record: cannot tell
                fresh,                                // new, its session's
                now("h", None, None, false),          // deleted for real
            ],
        );
        let put = |n: &str, to: &str, found: Option<&str>, reflog| BranchVerdict::PutBack {
            name: format!("refs/heads/bullpen/{n}"),
            to: to.to_owned(),
            found: found.map(str::to_owned),
            reflog,
        };
        let kept = |n: &str, found: &str| BranchVerdict::Unexplained {
            name: format!("refs/heads/bullpen/{n}"),
            found: found.to_owned(),
        };
        assert_eq!(
            v,
            vec![
                put("c", "1", Some("3"), true),
                put("d", "1", None, true),
                put("e", "1", Some("4"), false),
                kept("f", "4"),
                kept("g", "5"),
            ]
        );
    }

    #[test]
    fn head_detached_is_git_s_own_and_a_symbolic_one_elsewhere_is_not() {
        let file = |s: &str| Now::File(s.as_bytes().to_vec());
        assert!(!head_points_away(OWN, &file("ref: refs/heads/bullpen/a\n")));
        assert!(!head_points_away(
            OWN,
            &file("0123456789abcdef0123456789abcdef01234567\n")
        ));
        assert!(head_points_away(OWN, &file("ref: refs/heads/main\n")));
        assert!(head_points_away(OWN, &file("ref: refs/heads/bullpen/b\n")));
        assert!(head_points_away(OWN, &Now::Other));
        assert!(head_points_away(OWN, &Now::Absent));
        assert_eq!(head_content(OWN), b"ref: refs/heads/bullpen/a\n");
    }

    #[test]
    fn a_file_changed_when_its_content_or_kind_did() {
        assert!(!changed(None, &Now::Absent));
        assert!(!changed(Some(b"x"), &Now::File(b"x".to_vec())));
        assert!(changed(Some(b"x"), &Now::File(b"y".to_vec())));
        assert!(changed(Some(b"x"), &Now::Absent));
        assert!(changed(None, &Now::File(Vec::new())));
        assert!(changed(Some(b"x"), &Now::Other));
    }

    #[test]
    fn only_a_lock_seen_twice_and_new_is_stale() {
        let first = vec![
            ("b.lock".to_owned(), 1),
            ("c.lock".to_owned(), 2),
            ("d.lock".to_owned(), 3),
        ];
        let second = vec![
            ("b.lock".to_owned(), 1),
            ("c.lock".to_owned(), 9),
            ("d.lock".to_owned(), 3),
        ];
        assert_eq!(
            stale_locks(&["d.lock".to_owned()], &first, &second),
            vec!["b.lock"]
        );
    }
}
