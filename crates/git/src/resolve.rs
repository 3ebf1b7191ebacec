//! Revisions to commits, and why one names none.

use std::fmt;

use crate::{oid, Oid, Repo};

impl Repo {
    /// Resolve a revision (e.g. `HEAD`, `main~2`, an oid) to a commit; when it
    /// does not name one, why, in git's terms (see [`Unresolved`]).
    pub fn resolve_commit(&self, rev: &str) -> std::result::Result<Oid, Unresolved> {
        let id = match self.repo.rev_parse_single(rev) {
            Ok(id) => id,
            Err(_) => {
                // `HEAD` on a branch with no commit yet: from `HEAD`, or by the
                // branch's name, there is nothing to start from.
                let unborn = self.repo.head().ok().filter(|h| h.is_unborn());
                let branch = unborn
                    .as_ref()
                    .and_then(|h| h.referent_name())
                    .map(|n| n.shorten().to_string());
                if unborn.is_some() && (names_head(rev) || branch.as_deref() == Some(rev)) {
                    return Err(Unresolved::NoCommitYet { branch });
                }
                return Err(Unresolved::Unknown);
            }
        };
        let object = id.object().map_err(|e| {
            Unresolved::Unreadable(
                anyhow::Error::new(e).context(format!("could not read the object '{rev}' names")),
            )
        })?;
        let kind = object.kind;
        object
            .peel_to_commit()
            .map(|commit| oid(commit.id))
            .map_err(|_| Unresolved::NotACommit {
                kind: String::from_utf8_lossy(kind.as_bytes()).into_owned(),
            })
    }
}

/// Why a revision names no commit.
#[derive(Debug)]
pub enum Unresolved {
    /// It starts from `HEAD`, and `HEAD` is on a branch with no commit yet.
    NoCommitYet { branch: Option<String> },
    /// No such revision (an unknown name, `main~5` past the first commit, ...).
    Unknown,
    /// It names an object of another kind (`tree`, `blob`, a `tag` of one).
    NotACommit { kind: String },
    /// The object could not be read.
    Unreadable(anyhow::Error),
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::NoCommitYet { branch: Some(b) } => {
                write!(f, "there is no commit yet (branch {b} has none)")
            }
            Unresolved::NoCommitYet { branch: None } => f.write_str("there is no commit yet"),
            Unresolved::Unknown => f.write_str("unknown revision"),
            Unresolved::NotACommit { kind } => write!(f, "a {kind}, not a commit"),
            Unresolved::Unreadable(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for Unresolved {}

/// Whether a revision starts from `HEAD` (`HEAD`, `@`, `HEAD~2`, `@^`, ...).
fn names_head(rev: &str) -> bool {
    let rest = rev
        .strip_prefix("HEAD")
        .or_else(|| rev.strip_prefix('@'))
        .unwrap_or("x");
    rest.is_empty() || rest.starts_with(['~', '^', '@', ':'])
}
