//! Session ids: the validated slug every ref, branch and path of a session is
//! derived from, and the ref namespaces bullpen owns.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A validated session id: `[a-z0-9][a-z0-9._-]{0,62}`, no `..`, not ending in
/// `.lock` or `.`. Valid ids are valid ref name components and file names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `refs/heads/bullpen/<id>`
    pub fn branch_ref(&self) -> String {
        format!("refs/heads/{}", self.branch())
    }

    /// `bullpen/<id>`, the short branch name.
    pub fn branch(&self) -> String {
        format!("bullpen/{}", self.0)
    }

    /// `refs/bullpen/sessions/<id>`
    pub fn record_ref(&self) -> String {
        format!("{RECORD_PREFIX}{}", self.0)
    }
}

/// Where session branches live (`refs/heads/bullpen/<id>`).
pub const BRANCH_PREFIX: &str = "refs/heads/bullpen/";

/// Where records live.
pub const RECORD_PREFIX: &str = "refs/bullpen/sessions/";
/// The key gc adds to `session.json` while it tears the worktree down (so a later
/// gc can finish an interrupted teardown, and no run starts meanwhile).
pub const GC_TEARDOWN_KEY: &str = "gc_teardown";
/// The key gc adds to `session.json` when it collects a session whose work is
/// published: how (the evidence), for `git log -p refs/bullpen/sessions/<id>`.
pub const PUBLISHED_KEY: &str = "published";
/// The key gc adds to `session.json` when it collects a session: the branch
/// tip it deleted, from which `resume` recreates the worktree.
pub const LAST_TIP_KEY: &str = "last_tip";
/// Where provenance notes live.
pub const NOTES_REF: &str = "refs/notes/bullpen";

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct InvalidId(String);

impl fmt::Display for InvalidId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InvalidId {}

impl FromStr for SessionId {
    type Err = InvalidId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            Err(InvalidId(format!(
                "invalid session id {}: {why} (ids match [a-z0-9][a-z0-9._-]{{0,62}}, \
                 with no '..', not ending in '.lock' or '.')",
                crate::command::quoted(s)
            )))
        };
        let bytes = s.as_bytes();
        match bytes.first() {
            None => return bad("it is empty"),
            Some(c) if !(c.is_ascii_lowercase() || c.is_ascii_digit()) => {
                return bad("it must start with a lowercase letter or a digit")
            }
            _ => {}
        }
        if bytes.len() > 63 {
            return bad("it is longer than 63 characters");
        }
        if let Some(c) = s.chars().find(|c| {
            !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        }) {
            return bad(&format!("{c:?} is not allowed"));
        }
        if s.contains("..") {
            return bad("it contains \"..\"");
        }
        if s.ends_with(".lock") {
            return bad("it ends in \".lock\"");
        }
        if s.ends_with('.') {
            return bad("it ends in \".\"");
        }
        Ok(SessionId(s.to_owned()))
    }
}

impl Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids() {
        for ok in ["a", "0", "fix-login", "a.b_c-d", "x1", &"a".repeat(63)] {
            assert!(ok.parse::<SessionId>().is_ok(), "{ok}");
        }
    }

    #[test]
    fn invalid_ids() {
        for bad in [
            "",
            "-a",
            ".a",
            "_a",
            "A",
            "a b",
            "a/b",
            "a..b",
            "a.lock",
            "a.",
            "é",
            &"a".repeat(64),
            "a~",
            "a:b",
            "a^",
            "a@{1}",
        ] {
            assert!(bad.parse::<SessionId>().is_err(), "{bad:?}");
        }
    }
}
