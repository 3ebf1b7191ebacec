//! A sandboxed run's private `TMPDIR` (`bullpen-<id>-…`, which only the guard
//! names): whether bullpen may remove it when the run has ended, and, when it
//! may not, why and what to do. What is refused is noted in the repository's
//! local state (`kept-tmp/`) and gc names it, never removing it, until it is gone.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The schema of a `kept-tmp/` note.
pub const NOTE_SCHEMA: u32 = 1;

/// `<common>/bullpen/kept-tmp/<id>.<n>.json`: a private `TMPDIR` bullpen left alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub schema: u32,
    pub session: String,
    pub path: PathBuf,
    /// Why it was left alone, then.
    pub reason: String,
    /// The device and inode of the directory bullpen made, where known.
    #[serde(default)]
    pub made: Option<(u64, u64)>,
}

/// What is at the recorded path, read without following a symlink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    Gone,
    /// `made`: whether it is the very directory bullpen made (its device and
    /// inode), where that is known.
    Dir {
        uid: u32,
        made: Option<bool>,
    },
    /// Where it points, if that can be read.
    Symlink {
        to: Option<String>,
    },
    /// A file, a socket, anything but a directory.
    Other,
    Unreadable(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub session: String,
    pub found: Found,
    /// Named as bullpen names it for this session (`bullpen-<id>-…`).
    pub named: bool,
    /// Inside its parent, through no symlink (`ConfinedPath`), else why not.
    pub confined: Result<(), String>,
    /// This process's uid.
    pub uid: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing is there any more.
    Gone,
    /// The directory bullpen made for this run: remove it.
    Remove,
    Keep {
        reason: String,
        hint: String,
    },
}

const BY_HAND: &str = "bullpen never removes it; gc names it until it is gone";

/// Pure: only a real directory, named for this session, reached through no
/// symlink and owned by this user is removed; anything else is kept, with why.
pub fn decide(f: &Facts) -> Verdict {
    let keep = |reason: String, hint: String| Verdict::Keep { reason, hint };
    let look = format!("look at it and remove it by hand if it holds nothing you need ({BY_HAND})");
    let uid = match &f.found {
        Found::Gone => return Verdict::Gone,
        Found::Symlink { to } => {
            let to = to
                .as_deref()
                .map(|t| format!(" to {t}"))
                .unwrap_or_default();
            return keep(
                format!("it is a symlink{to}, not the directory bullpen made"),
                format!(
                    "remove the symlink (not what it points to) if you do not need it ({BY_HAND})"
                ),
            );
        }
        Found::Other => return keep("it is not a directory".to_owned(), look),
        Found::Unreadable(why) => return keep(format!("cannot look at it: {why}"), look),
        Found::Dir { uid, made } => {
            if *made == Some(false) {
                return keep(
                    "it is another directory than the one bullpen made (the path leads \
                     elsewhere now: a symlink on the way, or a directory put in its place)"
                        .to_owned(),
                    look,
                );
            }
            *uid
        }
    };
    if !f.named {
        return keep(
            format!(
                "its name is not bullpen-{}-…, as bullpen names the one it makes",
                f.session
            ),
            look,
        );
    }
    if let Err(why) = &f.confined {
        return keep(format!("it is not reached as bullpen made it: {why}"), look);
    }
    if uid != f.uid {
        return keep(
            format!("it is owned by uid {uid}, not by you (uid {})", f.uid),
            format!(
                "it may be another user's: ask its owner, or remove it yourself if it holds \
                 nothing anyone needs ({BY_HAND})"
            ),
        );
    }
    Verdict::Remove
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours() -> Facts {
        Facts {
            session: "s".to_owned(),
            found: Found::Dir {
                uid: 7,
                made: Some(true),
            },
            named: true,
            confined: Ok(()),
            uid: 7,
        }
    }

    #[test]
    fn only_our_own_named_directory_is_removed() {
        let kept = |f: Facts| match decide(&f) {
            Verdict::Keep { reason, .. } => reason,
            v => panic!("{f:?}: {v:?}"),
        };
        assert_eq!(decide(&ours()), Verdict::Remove);
        assert_eq!(
            decide(&Facts {
                found: Found::Gone,
                ..ours()
            }),
            Verdict::Gone
        );
        assert_eq!(
            kept(Facts {
                found: Found::Symlink {
                    to: Some("/home/u".into())
                },
                ..ours()
            }),
            "it is a symlink to /home/u, not the directory bullpen made"
        );
        assert_eq!(
            kept(Facts {
                found: Found::Dir {
                    uid: 65534,
                    made: None,
                },
                ..ours()
            }),
            "it is owned by uid 65534, not by you (uid 7)"
        );
        assert_eq!(
            kept(Facts {
                named: false,
                ..ours()
            }),
            "its name is not bullpen-s-…, as bullpen names the one it makes"
        );
        assert_eq!(
            kept(Facts {
                confined: Err("/t/x is a symlink".into()),
                ..ours()
            }),
            "it is not reached as bullpen made it: /t/x is a symlink"
        );
        assert_eq!(
            kept(Facts {
                found: Found::Dir {
                    uid: 7,
                    made: Some(false),
                },
                ..ours()
            }),
            "it is another directory than the one bullpen made (the path leads elsewhere now: a \
             symlink on the way, or a directory put in its place)"
        );
        assert_eq!(
            kept(Facts {
                found: Found::Other,
                ..ours()
            }),
            "it is not a directory"
        );
    }
}
