//! What makes a worktree not clean, as counts; and the repositories nested in it.

/// What makes a worktree not clean. Ignored files never count, except those
/// hidden by a `.gitignore` that is itself not in the index (see [`Hiding`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirt {
    /// Tracked files whose content or type differs (conflicts too).
    pub modified: usize,
    pub staged: usize,
    pub untracked: usize,
    /// Tracked files missing from the directory.
    pub deleted: usize,
    /// Tracked files marked skip-worktree or assume-unchanged whose content
    /// differs from the index: `git status` does not show them.
    pub unseen: usize,
    /// `.gitignore` files that are not in the index (untracked, or ignoring
    /// themselves) and hide files that would otherwise be untracked.
    pub hiding: Vec<Hiding>,
    /// Directories whose untracked `.gitignore` hides their files but that
    /// announce themselves as caches ([`is_cache`] said so): not work, not in
    /// `hiding`. Relative, with a trailing `/`, sorted.
    pub caches: Vec<String>,
    /// Ignored entries, relative to the worktree, each with whether it is a
    /// directory (one entry, not entered): not work, never counted as dirt, but
    /// they go with the worktree.
    pub ignored: Vec<(std::path::PathBuf, bool)>,
    /// Untracked directories that are repositories (a clone, a linked worktree:
    /// a `.git` directory or file), relative to the worktree: status counts each
    /// as one untracked entry and never looks inside.
    pub repositories: Vec<std::path::PathBuf>,
    /// Directories holding untracked files (or their ancestors) on another
    /// device than the directory holding them: mount points status walked into.
    pub mounts: Vec<std::path::PathBuf>,
}

/// An untracked or ignored `.gitignore` and how many files it hides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hiding {
    /// The directory holding it, relative to the worktree, with a trailing
    /// `/` (`secret/`); empty for the top.
    pub dir: String,
    /// Files it hides, itself not counted.
    pub files: usize,
}

impl Dirt {
    pub fn is_clean(&self) -> bool {
        self.deleted == 0 && self.holds_nothing_new()
    }

    /// Nothing in it that the tree it is compared with lacks: at most deletions.
    /// What an interrupted teardown leaves behind.
    pub fn holds_nothing_new(&self) -> bool {
        self.modified == 0
            && self.staged == 0
            && self.untracked == 0
            && self.unseen == 0
            && self.hiding.is_empty()
    }
}

/// What of a worktree is ignored: not work, but it goes with the worktree, so
/// a removal says so.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ignored {
    /// Files and symlinks.
    pub files: usize,
    pub bytes: u64,
    /// The caches among them ([`Dirt::caches`]).
    pub caches: Vec<String>,
}

impl Ignored {
    /// "3 ignored files, 80 KiB", with "and .venv/, .pytest_cache/: caches"
    /// when there are; `None` when there is nothing.
    pub fn words(&self) -> Option<String> {
        let files = (self.files > 0).then(|| {
            format!(
                "{}, {}",
                plural(self.files, "ignored file", "ignored files"),
                size_words(self.bytes)
            )
        });
        let caches =
            (!self.caches.is_empty()).then(|| format!("{}: caches", self.caches.join(", ")));
        match (files, caches) {
            (Some(f), Some(c)) => Some(format!("{f}, and {c}")),
            (f, c) => f.or(c),
        }
    }
}

/// The signature a cache directory's `CACHEDIR.TAG` begins with (the Cache
/// Directory Tagging Specification, <https://bford.info/cachedir/>).
pub const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// What is known of a directory a `.gitignore` of its own hides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSigns<'a> {
    /// The start of its `CACHEDIR.TAG`, when it has one.
    pub tag: Option<&'a [u8]>,
    /// It has a `pyvenv.cfg` at its top: a Python virtual environment.
    pub pyvenv: bool,
    /// A `bullpen.gc.disposable` pattern matches it.
    pub configured: bool,
}

/// Pure: is the directory a cache, disposable with the worktree? A valid
/// `CACHEDIR.TAG`, a virtual environment, or what the user's configuration names.
pub fn is_cache(signs: CacheSigns) -> bool {
    signs.configured || signs.pyvenv || signs.tag.is_some_and(|t| t.starts_with(CACHEDIR_SIGNATURE))
}

/// "80 KiB", "1.5 MiB", "512 bytes": as people read sizes (1 KiB = 1,024 bytes).
pub fn size_words(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return if bytes == 1 {
            "1 byte".to_owned()
        } else {
            format!("{bytes} bytes")
        };
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// What kind of nested repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NestedKind {
    /// Its `.git` is a file (a submodule's checkout, typically).
    Submodule,
    /// Its `.git` is a directory: a repository of its own (`git init`, a clone).
    Repository,
    /// A git dir under the worktree's admin entry (`modules/<name>`) with no
    /// checkout in the worktree: a deinitialised or removed submodule's only copy.
    SubmoduleGitDir,
    /// Its `.git` is a file into some repository's `worktrees/` (the user's own
    /// included): its branches live there; its checkout and a detached HEAD do
    /// not. Locked, its owner asked to keep it.
    Worktree { locked: bool },
    /// Not a repository: a file system mounted there. bullpen never deletes
    /// across a file system boundary, nor judges what another one holds.
    Mount,
    /// The worktree's own refs (`refs/worktree/*`, `refs/bisect/*`,
    /// `refs/rewritten/*`: in its admin entry, never packed), named in
    /// `unpublished`: removing the worktree deletes them.
    WorktreeRefs,
}

/// In [`Nested::unpublished`]: commits that only its reflogs hold (amended,
/// reset away), on none of its branches and none of its remotes.
pub const REFLOG: &str = "its reflog";

/// A git repository inside a worktree, or a submodule git dir under its admin
/// entry. Deleting the worktree (and its admin entry) deletes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nested {
    /// For people: relative to the worktree, or the git dir's absolute path.
    pub path: String,
    pub kind: NestedKind,
    /// Its local branches, stash and a detached `HEAD` that none of its own
    /// remote-tracking refs reach (`main`, `HEAD`, `refs/stash`).
    pub unpublished: Vec<String>,
    /// What is not clean in its checkout; `None` without one.
    pub dirt: Option<Dirt>,
}

impl Nested {
    /// Deleting it would lose something.
    pub fn holds_work(&self) -> bool {
        matches!(
            self.kind,
            NestedKind::Mount | NestedKind::Worktree { locked: true }
        ) || !self.unpublished.is_empty()
            || self.dirt.as_ref().is_some_and(|d| !d.is_clean())
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// "1 modified file, 2 untracked files", for people.
pub fn dirt_words(d: &Dirt) -> String {
    let mut parts = Vec::new();
    if d.modified > 0 {
        parts.push(plural(d.modified, "modified file", "modified files"));
    }
    if d.deleted > 0 {
        parts.push(plural(d.deleted, "deleted file", "deleted files"));
    }
    if d.unseen > 0 {
        parts.push(format!(
            "{} marked skip-worktree or assume-unchanged (git status does not show {})",
            plural(d.unseen, "modified file", "modified files"),
            if d.unseen == 1 { "it" } else { "them" }
        ));
    }
    if d.staged > 0 {
        parts.push(plural(d.staged, "staged change", "staged changes"));
    }
    if d.untracked > 0 {
        parts.push(plural(d.untracked, "untracked file", "untracked files"));
    }
    for h in &d.hiding {
        let place = if h.dir.is_empty() {
            "at the top".to_owned()
        } else {
            format!("in {}", h.dir)
        };
        parts.push(format!(
            "an untracked .gitignore {place} hides {}",
            plural(h.files, "file", "files")
        ));
    }
    parts.join(", ")
}

/// Those of `nested` that hold work, in words ("submodule lib holds work: ...; ..."),
/// `None` when none does.
pub fn nested_work(nested: &[Nested]) -> Option<String> {
    let work: Vec<String> = nested
        .iter()
        .filter(|n| n.holds_work())
        .map(nested_words)
        .collect();
    (!work.is_empty()).then(|| work.join("; "))
}

/// "submodule lib: HEAD and main are on none of its remotes; 1 untracked file".
pub fn nested_words(n: &Nested) -> String {
    let what = match n.kind {
        NestedKind::Submodule => format!("submodule {}", n.path),
        NestedKind::Repository => format!("nested repository {}", n.path),
        NestedKind::SubmoduleGitDir => format!("submodule git dir {}", n.path),
        NestedKind::Worktree { .. } => format!("linked worktree {}", n.path),
        NestedKind::Mount if n.path.is_empty() => {
            return "the worktree is itself a mount point (bullpen never removes across file \
                    systems: unmount it first)"
                .to_owned()
        }
        NestedKind::Mount => {
            return format!(
                "a file system is mounted at {}/ (bullpen never removes across file systems: \
                 unmount it first)",
                n.path
            )
        }
        NestedKind::WorktreeRefs => {
            return format!(
                "the worktree's own refs {} go with it (git worktree remove deletes them)",
                n.unpublished.join(", ")
            )
        }
    };
    let mut parts = Vec::new();
    if matches!(n.kind, NestedKind::Worktree { locked: true }) {
        parts.push("locked (git worktree unlock)".to_owned());
    }
    let (reflog, names): (Vec<&String>, Vec<&String>) =
        n.unpublished.iter().partition(|u| *u == REFLOG);
    if !names.is_empty() {
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        parts.push(format!("{} not on any of its remotes", names.join(", ")));
    }
    if !reflog.is_empty() {
        parts.push("commits only its reflog holds (on no branch, no remote)".to_owned());
    }
    if let Some(d) = n.dirt.as_ref().filter(|d| !d.is_clean()) {
        parts.push(dirt_words(d));
    }
    format!("{what} holds work: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletions_are_dirt_but_nothing_new() {
        let d = Dirt {
            deleted: 2,
            ..Dirt::default()
        };
        assert!(!d.is_clean());
        assert!(d.holds_nothing_new());
        for d in [
            Dirt {
                unseen: 1,
                ..Dirt::default()
            },
            Dirt {
                hiding: vec![Hiding {
                    dir: "s/".into(),
                    files: 1,
                }],
                ..Dirt::default()
            },
        ] {
            assert!(!d.is_clean() && !d.holds_nothing_new(), "{d:?}");
        }
    }

    #[test]
    fn words() {
        let d = Dirt {
            modified: 1,
            unseen: 2,
            untracked: 3,
            hiding: vec![Hiding {
                dir: "secret/".into(),
                files: 3,
            }],
            ..Dirt::default()
        };
        assert_eq!(
            dirt_words(&d),
            "1 modified file, 2 modified files marked skip-worktree or assume-unchanged \
             (git status does not show them), 3 untracked files, an untracked .gitignore in \
             secret/ hides 3 files"
        );
        let n = Nested {
            path: "lib".into(),
            kind: NestedKind::Submodule,
            unpublished: vec!["HEAD".into(), "main".into()],
            dirt: Some(Dirt::default()),
        };
        assert!(n.holds_work());
        assert_eq!(
            nested_words(&n),
            "submodule lib holds work: HEAD, main not on any of its remotes"
        );
        let clean = Nested {
            unpublished: vec![],
            ..n
        };
        assert!(!clean.holds_work());
    }

    #[test]
    fn caches_announce_themselves() {
        let tag = [CACHEDIR_SIGNATURE, b"\n# made by pytest\n"].concat();
        assert!(is_cache(CacheSigns {
            tag: Some(&tag),
            ..CacheSigns::default()
        }));
        for bad in [
            &b"Signature: 8a477f"[..],
            b"",
            b" Signature: 8a477f597d28d172789f06886806bc55",
        ] {
            assert!(!is_cache(CacheSigns {
                tag: Some(bad),
                ..CacheSigns::default()
            }));
        }
        assert!(!is_cache(CacheSigns::default()));
        assert!(is_cache(CacheSigns {
            pyvenv: true,
            ..CacheSigns::default()
        }));
        assert!(is_cache(CacheSigns {
            configured: true,
            ..CacheSigns::default()
        }));
        let i = Ignored {
            files: 3,
            bytes: 80 * 1024,
            caches: vec![".pytest_cache/".into(), ".venv/".into()],
        };
        assert_eq!(
            i.words().as_deref(),
            Some("3 ignored files, 80 KiB, and .pytest_cache/, .venv/: caches")
        );
    }

    #[test]
    fn sizes_and_ignored_words() {
        assert_eq!(size_words(0), "0 bytes");
        assert_eq!(size_words(1), "1 byte");
        assert_eq!(size_words(1023), "1023 bytes");
        assert_eq!(size_words(80 * 1024), "80 KiB");
        assert_eq!(size_words(1536), "1.5 KiB");
        assert_eq!(size_words(3 * 1024 * 1024 / 2), "1.5 MiB");
        assert_eq!(Ignored::default().words(), None);
        assert_eq!(
            Ignored {
                files: 3,
                bytes: 80 * 1024,
                caches: Vec::new(),
            }
            .words()
            .as_deref(),
            Some("3 ignored files, 80 KiB")
        );
    }
}
