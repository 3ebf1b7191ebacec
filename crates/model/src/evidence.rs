//! How a session's work is known to be on a remote (the evidence gc names, and
//! keeps in the record and the notes when it collects the session), and, for a
//! session that is not, how much of it is there.

use super::Oid;

/// Proof that deleting a session's branch loses nothing: its tip is reachable
/// from a remote-tracking ref, or each of its commits no remote-tracking ref
/// reaches has its own change in an integration ref (merging that commit into
/// it would change nothing, at a commit of its first-parent history newer than
/// the session's fork from it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// Its tip is reachable from this remote-tracking ref (`origin/bullpen/x`);
    /// `None`: from one gc did not name (the walk proved it, naming was not
    /// worth another).
    Reachable { from: Option<String> },
    /// One commit of `into` brought in all of its changes (a squash merge).
    Squashed {
        into: String,
        commit: Oid,
        /// `commit` as git abbreviates it in this repository.
        short: String,
        since: Since,
        /// Each of its commits and where it landed (all on `commit`).
        landings: Vec<Landing>,
    },
    /// Several commits of `into` brought its changes in, one or more of its
    /// commits each (a rebase merge, cherry-picks).
    Rebased {
        into: String,
        commits: usize,
        /// The newest commit of `into` that brought any of them in.
        last: Oid,
        short: String,
        since: Since,
        landings: Vec<Landing>,
    },
}

/// One commit of a session, no remote-tracking ref reaching it, and the commit
/// of the integration ref that holds its change: the oldest of its first-parent
/// history, newer than the session's fork, where merging the session commit
/// changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Landing {
    /// The session's commit.
    pub commit: Oid,
    /// The integration ref's commit.
    pub on: Oid,
}

/// What became of the changes on the integration ref after they landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    /// Merging the session tip into the ref's tip still changes nothing.
    Unchanged,
    /// Changed there since (merging the tip now would change something, or conflict).
    Changed,
    /// Reverted there since: the ref's tip has none of them.
    Reverted,
}

impl Since {
    pub fn as_str(self) -> &'static str {
        match self {
            Since::Unchanged => "unchanged",
            Since::Changed => "changed",
            Since::Reverted => "reverted",
        }
    }
}

impl Evidence {
    /// `reachable`, `squash-merged` or `rebased` (the JSON `how`).
    pub fn how(&self) -> &'static str {
        match self {
            Evidence::Reachable { .. } => "reachable",
            Evidence::Squashed { .. } => "squash-merged",
            Evidence::Rebased { .. } => "rebased",
        }
    }

    /// The remote-tracking ref it names (short), if any.
    pub fn on(&self) -> Option<&str> {
        match self {
            Evidence::Reachable { from } => from.as_deref(),
            Evidence::Squashed { into, .. } | Evidence::Rebased { into, .. } => Some(into),
        }
    }

    /// The commit of the integration ref it names, if any.
    pub fn commit(&self) -> Option<Oid> {
        match self {
            Evidence::Reachable { .. } => None,
            Evidence::Squashed { commit, .. } => Some(*commit),
            Evidence::Rebased { last, .. } => Some(*last),
        }
    }

    /// Where each of its commits landed (empty for reachable: nothing to say).
    pub fn landings(&self) -> &[Landing] {
        match self {
            Evidence::Reachable { .. } => &[],
            Evidence::Squashed { landings, .. } | Evidence::Rebased { landings, .. } => landings,
        }
    }

    /// Whether the proof is by content rather than by reachability.
    pub fn by_content(&self) -> bool {
        !matches!(self, Evidence::Reachable { .. })
    }

    /// "reachable from origin/bullpen/x", "squash-merged into origin/main as 1a2b3c4".
    pub fn words(&self) -> String {
        match self {
            Evidence::Reachable { from: Some(r) } => format!("reachable from {r}"),
            Evidence::Reachable { from: None } => "reachable from a remote-tracking ref".to_owned(),
            Evidence::Squashed {
                into, short, since, ..
            } => format!(
                "squash-merged into {into} as {short}{}",
                since_words(*since)
            ),
            Evidence::Rebased {
                into,
                commits,
                short,
                since,
                ..
            } => format!(
                "rebased onto {into} ({commits} commits, the last {short}){}",
                since_words(*since)
            ),
        }
    }

    /// The same with full object ids, for what stays in the repository (the
    /// record's last commit, the provenance note of the session tip).
    pub fn full_words(&self) -> String {
        match self {
            Evidence::Reachable { .. } => self.words(),
            Evidence::Squashed {
                into,
                commit,
                since,
                ..
            } => format!(
                "squash-merged into {into} as {commit}{}",
                since_words(*since)
            ),
            Evidence::Rebased {
                into,
                commits,
                last,
                since,
                ..
            } => format!(
                "rebased onto {into} ({commits} commits, the last {last}){}",
                since_words(*since)
            ),
        }
    }
}

impl Evidence {
    /// The provenance notes a proof by content leaves on the integration ref's
    /// commits it names, so that `git log --notes=bullpen origin/main` says
    /// which session each came from once the branch is gone: per landing
    /// commit, `bullpen-session: <id>` and `bullpen-squashed:` (or
    /// `bullpen-rebased:`) the session commits it holds.
    pub fn landing_notes(&self, session: &str) -> Vec<(Oid, String)> {
        let word = match self {
            Evidence::Reachable { .. } => return Vec::new(),
            Evidence::Squashed { .. } => "squashed",
            Evidence::Rebased { .. } => "rebased",
        };
        let mut out: Vec<(Oid, Vec<String>)> = Vec::new();
        for l in self.landings() {
            let c = l.commit.to_string();
            match out.iter_mut().find(|(on, _)| *on == l.on) {
                Some((_, commits)) => commits.push(c),
                None => out.push((l.on, vec![c])),
            }
        }
        out.into_iter()
            .map(|(on, commits)| {
                (
                    on,
                    format!(
                        "bullpen-session: {session}\nbullpen-{word}: {}\n",
                        commits.join(" ")
                    ),
                )
            })
            .collect()
    }
}

/// For a collected session's record (its `published` value): where its work
/// went, when a proof by content sent it there (a reachable one names its
/// remote branch already). The record is untrusted: its text is escaped.
pub fn collected_by_content(published: Option<&serde_json::Value>) -> Option<String> {
    let p = published?;
    let how = p.get("how")?.as_str()?;
    if how == "reachable" {
        return None;
    }
    // The record's words: control characters escaped, a hand edit cannot
    // write to the terminal.
    let on = super::command::escaped(p.get("ref")?.as_str()?);
    let words = super::command::escaped(p.get("description")?.as_str()?);
    Some(format!(
        "its work is on {on}: {words} (`git log --notes=bullpen {on}` names the session)"
    ))
}

fn since_words(since: Since) -> &'static str {
    match since {
        Since::Unchanged => "",
        Since::Changed => " (changed there since)",
        Since::Reverted => " (reverted there since)",
    }
}

/// For a session whose tip no remote-tracking ref reaches and whose changes
/// are not all in an integration ref: what gc found of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unmerged {
    /// `merged` of its `of` commits have their changes on `into`.
    Partly {
        into: String,
        merged: usize,
        of: usize,
    },
    /// Merging it into `into` conflicts.
    Conflicts { into: String },
    /// Its commits change no file: there is nothing to find on any ref.
    NoChanges,
}

impl Unmerged {
    /// "2 of 3 commits' changes are on origin/main".
    pub fn words(&self) -> String {
        match self {
            Unmerged::Partly { into, merged, of } => {
                format!("{merged} of {of} commits' changes are on {into}")
            }
            Unmerged::Conflicts { into } => format!("its changes conflict with {into}"),
            Unmerged::NoChanges => "they change no file".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_notes_name_the_session_and_its_commits_on_each_landing() {
        let id = |n: u8| -> Oid { format!("{:040x}", n).parse().unwrap() };
        let rebased = Evidence::Rebased {
            into: "origin/main".into(),
            commits: 2,
            last: id(9),
            short: "0000009".into(),
            since: Since::Unchanged,
            landings: vec![
                Landing {
                    commit: id(3),
                    on: id(9),
                },
                Landing {
                    commit: id(2),
                    on: id(8),
                },
                Landing {
                    commit: id(1),
                    on: id(8),
                },
            ],
        };
        assert_eq!(
            rebased.landing_notes("s"),
            vec![
                (
                    id(9),
                    format!("bullpen-session: s\nbullpen-rebased: {}\n", id(3))
                ),
                (
                    id(8),
                    format!("bullpen-session: s\nbullpen-rebased: {} {}\n", id(2), id(1))
                ),
            ]
        );
        assert!(Evidence::Reachable { from: None }
            .landing_notes("s")
            .is_empty());
        let published = serde_json::json!({
            "how": "squash-merged", "ref": "origin/main",
            "description": "squash-merged into origin/main as 1a2b"
        });
        assert_eq!(
            collected_by_content(Some(&published)).as_deref(),
            Some(
                "its work is on origin/main: squash-merged into origin/main as 1a2b \
                 (`git log --notes=bullpen origin/main` names the session)"
            )
        );
        let reachable = serde_json::json!({"how": "reachable", "ref": "origin/bullpen/s"});
        assert_eq!(collected_by_content(Some(&reachable)), None);
        assert_eq!(collected_by_content(None), None);
    }

    #[test]
    fn words() {
        let c: Oid = "1a2b3c4d5e6f1a2b3c4d5e6f1a2b3c4d5e6f1a2b".parse().unwrap();
        let squashed = Evidence::Squashed {
            into: "origin/main".into(),
            commit: c,
            short: "1a2b3c4".into(),
            since: Since::Unchanged,
            landings: Vec::new(),
        };
        assert_eq!(
            squashed.words(),
            "squash-merged into origin/main as 1a2b3c4"
        );
        assert_eq!(
            squashed.full_words(),
            format!("squash-merged into origin/main as {c}")
        );
        let rebased = Evidence::Rebased {
            into: "origin/main".into(),
            commits: 2,
            last: c,
            short: "1a2b3c4".into(),
            since: Since::Reverted,
            landings: Vec::new(),
        };
        assert_eq!(
            rebased.words(),
            "rebased onto origin/main (2 commits, the last 1a2b3c4) (reverted there since)"
        );
        assert_eq!(
            Evidence::Reachable {
                from: Some("origin/bullpen/x".into())
            }
            .words(),
            "reachable from origin/bullpen/x"
        );
        assert_eq!(
            Unmerged::Partly {
                into: "origin/main".into(),
                merged: 2,
                of: 3
            }
            .words(),
            "2 of 3 commits' changes are on origin/main"
        );
    }
}
