//! What `push` may send (pure): which sessions a push is about (`choose`), and
//! of those what goes (`decide`): only what loses nothing on the remote, its
//! record and its branch each a fast-forward of the remote's (or new there), or
//! a record joined with the remote's when both moved on from a common event.
//! How the remote answered (`outcome`). Tested as tables.

use crate::model::Oid;

/// Where a ref here stands against its copy on the remote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Nothing here to push (a collected session's branch is gone).
    NoneHere,
    /// The remote has none.
    New,
    /// The same commit.
    Same,
    /// Ours contains theirs: pushing is a fast-forward.
    Ahead,
    /// Theirs contains ours: the remote has more (another machine went on).
    Behind,
    /// Each has commits the other lacks: pushing would lose the remote's.
    Diverged,
    /// The remote's copy is not known here (no fetch refspec brings the
    /// remote's `bullpen/*` branches): git decides at the push, which takes
    /// nothing but a fast-forward.
    Unknown,
}

/// What is known about one ref: ours, theirs (as last fetched), and how their
/// histories relate (each `false` also when it could not be told).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefFacts {
    pub ours: Option<Oid>,
    /// `None` inside `Some`: the remote has none; `None`: not known here.
    pub theirs: Option<Option<Oid>>,
    pub ours_contains_theirs: bool,
    pub theirs_contains_ours: bool,
}

/// Pure: where `f`'s ref stands.
pub fn standing(f: &RefFacts) -> Standing {
    match (f.ours, f.theirs) {
        (None, _) => Standing::NoneHere,
        (Some(_), None) => Standing::Unknown,
        (Some(_), Some(None)) => Standing::New,
        (Some(a), Some(Some(b))) if a == b => Standing::Same,
        (Some(_), Some(Some(_))) if f.ours_contains_theirs => Standing::Ahead,
        (Some(_), Some(Some(_))) if f.theirs_contains_ours => Standing::Behind,
        _ => Standing::Diverged,
    }
}

/// What is known of a session when choosing whether a push is about it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wanted {
    /// Named on the command line.
    pub named: bool,
    /// `--all`: every live session.
    pub all: bool,
    /// The remote has its record or its branch.
    pub tracked: bool,
    pub collected: bool,
    /// Its branch has commits its base lacks.
    pub own_commits: bool,
    /// The remote has its record but not its branch (deleted there, as a forge
    /// deletes the branch of a closed or merged pull request).
    pub branch_gone_there: bool,
}

/// Whether a push is about a session, and whether its branch may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    Skip(Skipped),
    /// Its record goes (as `decide` says); its branch too unless held.
    Send {
        held: Option<Held>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// Not named, and the remote has nothing of it (`--all` sends it).
    NotThere,
    /// Collected, and not named.
    Collected,
}

/// Why a session's branch stays here though its record goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// The branch has no commits of its own.
    NoCommits,
    /// The remote deleted it: sending it again would bring it back.
    GoneThere,
}

/// Pure: a plain push is about the sessions the remote already has, `--all`
/// about every live one, and a named session always; a collected session, a
/// branch with no commits of its own and a branch the remote deleted go only
/// when named.
pub fn choose(w: &Wanted) -> Chosen {
    if w.named {
        return Chosen::Send { held: None };
    }
    if w.collected {
        return Chosen::Skip(Skipped::Collected);
    }
    if !w.all && !w.tracked {
        return Chosen::Skip(Skipped::NotThere);
    }
    let held = match (w.own_commits, w.branch_gone_there) {
        (false, _) => Some(Held::NoCommits),
        (true, true) => Some(Held::GoneThere),
        (true, false) => None,
    };
    Chosen::Send { held }
}

/// What push does with one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Push what is new; `record_behind`: the remote's record has events this
    /// one lacks (it is left as it is, and said so).
    Push {
        record: bool,
        branch: bool,
        record_behind: bool,
    },
    /// Both records moved on from a common event: a record commit with both as
    /// parents goes (and `branch`, a fast-forward, when it differs).
    Join { branch: bool },
    /// Nothing of it goes: pushing would lose what the remote has.
    Refuse(Refusal),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The remote's record and ours each have events the other lacks (another
    /// machine went on with the session, or it is another session of that id).
    RecordDiverged,
    /// The remote's branch and ours each have commits the other lacks.
    BranchDiverged,
    /// The records could be joined, but the branch here is not the remote's
    /// or a fast-forward of it (its standing).
    JoinNeedsBranch(Standing),
}

/// Pure: what to push of a session whose record stands `record` and whose
/// branch stands `branch` against the remote; `common`: the two records share
/// an event (a diverged record is joined only then, and only when the branch
/// is the remote's or a fast-forward of it). A session goes whole or not at
/// all when anything of it has diverged; otherwise each ref that is new or
/// ahead goes (a branch the remote does not show here goes too, and git takes
/// it only as a fast-forward).
pub fn decide(record: Standing, branch: Standing, common: bool) -> Decision {
    if branch == Standing::Diverged {
        return Decision::Refuse(Refusal::BranchDiverged);
    }
    if record == Standing::Diverged {
        return match (common, branch) {
            (false, _) => Decision::Refuse(Refusal::RecordDiverged),
            (true, Standing::Ahead) => Decision::Join { branch: true },
            (true, Standing::Same) => Decision::Join { branch: false },
            (true, other) => Decision::Refuse(Refusal::JoinNeedsBranch(other)),
        };
    }
    let goes = |s: Standing| matches!(s, Standing::New | Standing::Ahead | Standing::Unknown);
    Decision::Push {
        record: goes(record),
        branch: goes(branch),
        record_behind: record == Standing::Behind,
    }
}

/// How the remote answered for one ref.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Landed,
    /// Not a fast-forward of what the remote has now: another push landed in
    /// between (running it again can help).
    Race,
    /// The remote refused it (`[remote rejected]`: a hook, a rule of the
    /// forge): final.
    Refused,
    /// Not taken because another ref of the same atomic push was not.
    WithTheRest,
    /// The remote did not say (`[remote failure]`): it may have taken it.
    Unknown,
}

/// Pure: the outcome of a ref `git push --porcelain` reported with `ok` and `summary`.
pub fn outcome(ok: bool, summary: &str) -> Outcome {
    if ok {
        Outcome::Landed
    } else if summary.starts_with("[remote failure]") {
        Outcome::Unknown
    } else if summary.contains("(atomic push fail") {
        Outcome::WithTheRest
    } else if summary.starts_with("[rejected]") {
        Outcome::Race
    } else {
        Outcome::Refused
    }
}

/// How far ahead of this machine's clock a remote record's time may be and
/// still count (clocks of two machines differ a little; a record "updated"
/// in 2099 would win every join after it, pinning what the remote shows).
pub const MAX_AHEAD_SECS: i64 = 3600;

/// Pure: which record wins a join: this clone's unless the remote's was
/// updated later (`None`: a time that does not parse, which never wins, nor
/// does one more than [`MAX_AHEAD_SECS`] after `now`).
pub fn ours_is_later(ours: Option<i64>, theirs: Option<i64>, now: i64) -> bool {
    let theirs = theirs.filter(|t| *t <= now.saturating_add(MAX_AHEAD_SECS));
    match (ours, theirs) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(a), Some(b)) => a >= b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_bytes(&[n; 20]).unwrap()
    }

    #[test]
    fn standings() {
        let f = |ours, theirs, oc, tc| RefFacts {
            ours,
            theirs,
            ours_contains_theirs: oc,
            theirs_contains_ours: tc,
        };
        use Standing::*;
        let table = [
            (f(None, Some(Some(oid(1))), false, false), NoneHere),
            (f(Some(oid(1)), None, false, false), Unknown),
            (f(Some(oid(1)), Some(None), false, false), New),
            (f(Some(oid(1)), Some(Some(oid(1))), true, true), Same),
            (f(Some(oid(2)), Some(Some(oid(1))), true, false), Ahead),
            (f(Some(oid(1)), Some(Some(oid(2))), false, true), Behind),
            (f(Some(oid(1)), Some(Some(oid(2))), false, false), Diverged),
        ];
        for (facts, want) in table {
            assert_eq!(standing(&facts), want, "{facts:?}");
        }
    }

    #[test]
    fn nothing_on_the_remote_is_ever_lost() {
        use Standing::*;
        let push = |record, branch| Decision::Push {
            record,
            branch,
            record_behind: false,
        };
        let table = [
            // (record, branch, decision)
            (New, New, push(true, true)),
            (Ahead, Ahead, push(true, true)),
            (Ahead, Same, push(true, false)),
            (Same, Same, push(false, false)),
            (New, NoneHere, push(true, false)),
            (Ahead, Unknown, push(true, true)),
            (
                Behind,
                Ahead,
                Decision::Push {
                    record: false,
                    branch: true,
                    record_behind: true,
                },
            ),
            (
                Behind,
                Behind,
                Decision::Push {
                    record: false,
                    branch: false,
                    record_behind: true,
                },
            ),
            (Diverged, Ahead, Decision::Refuse(Refusal::RecordDiverged)),
            (Diverged, Same, Decision::Refuse(Refusal::RecordDiverged)),
            (Ahead, Diverged, Decision::Refuse(Refusal::BranchDiverged)),
            (New, Diverged, Decision::Refuse(Refusal::BranchDiverged)),
        ];
        for (record, branch, want) in table {
            assert_eq!(decide(record, branch, false), want, "{record:?} {branch:?}");
        }
    }

    #[test]
    fn diverged_records_join_only_over_a_fast_forward_branch() {
        use Standing::*;
        let table = [
            // (record, branch, common, decision)
            (Diverged, Ahead, true, Decision::Join { branch: true }),
            (Diverged, Same, true, Decision::Join { branch: false }),
            (
                Diverged,
                Ahead,
                false,
                Decision::Refuse(Refusal::RecordDiverged),
            ),
            (
                Diverged,
                Diverged,
                true,
                Decision::Refuse(Refusal::BranchDiverged),
            ),
            (
                Diverged,
                Behind,
                true,
                Decision::Refuse(Refusal::JoinNeedsBranch(Behind)),
            ),
            (
                Diverged,
                New,
                true,
                Decision::Refuse(Refusal::JoinNeedsBranch(New)),
            ),
            (
                Diverged,
                Unknown,
                true,
                Decision::Refuse(Refusal::JoinNeedsBranch(Unknown)),
            ),
            (
                Diverged,
                NoneHere,
                true,
                Decision::Refuse(Refusal::JoinNeedsBranch(NoneHere)),
            ),
        ];
        for (record, branch, common, want) in table {
            assert_eq!(
                decide(record, branch, common),
                want,
                "{record:?} {branch:?}"
            );
        }
    }

    #[test]
    fn a_plain_push_is_about_what_the_remote_has() {
        let w = |named, all, tracked, collected, own_commits, gone| Wanted {
            named,
            all,
            tracked,
            collected,
            own_commits,
            branch_gone_there: gone,
        };
        let send = |held| Chosen::Send { held };
        let table = [
            // named always goes, whole
            (w(true, false, false, true, false, true), send(None)),
            (w(false, false, true, false, true, false), send(None)),
            (
                w(false, false, false, false, true, false),
                Chosen::Skip(Skipped::NotThere),
            ),
            (w(false, true, false, false, true, false), send(None)),
            (
                w(false, true, true, true, true, false),
                Chosen::Skip(Skipped::Collected),
            ),
            (
                w(false, true, false, false, false, false),
                send(Some(Held::NoCommits)),
            ),
            (
                w(false, false, true, false, true, true),
                send(Some(Held::GoneThere)),
            ),
            (
                w(false, true, true, false, true, true),
                send(Some(Held::GoneThere)),
            ),
        ];
        for (wanted, want) in table {
            assert_eq!(choose(&wanted), want, "{wanted:?}");
        }
    }

    #[test]
    fn a_refusal_is_told_from_a_race() {
        let table = [
            (true, "[new reference]", Outcome::Landed),
            (false, "[rejected] (fetch first)", Outcome::Race),
            (false, "[rejected] (non-fast-forward)", Outcome::Race),
            (
                false,
                "[remote rejected] (pre-receive hook declined)",
                Outcome::Refused,
            ),
            (false, "[remote rejected] (hook declined)", Outcome::Refused),
            (
                false,
                "[remote failure] (remote failed to report status)",
                Outcome::Unknown,
            ),
            (
                false,
                "[remote rejected] (atomic push failure)",
                Outcome::WithTheRest,
            ),
            (
                false,
                "[rejected] (atomic push failed)",
                Outcome::WithTheRest,
            ),
        ];
        for (ok, summary, want) in table {
            assert_eq!(outcome(ok, summary), want, "{summary}");
        }
    }

    #[test]
    fn the_later_record_wins_a_join() {
        let now = 1_000_000;
        assert!(ours_is_later(Some(2), Some(1), now));
        assert!(ours_is_later(Some(1), Some(1), now));
        assert!(!ours_is_later(Some(1), Some(2), now));
        assert!(ours_is_later(None, None, now));
        assert!(!ours_is_later(None, Some(1), now));
        assert!(ours_is_later(Some(1), None, now));
        // A little ahead of this clock still counts; the far future never wins.
        assert!(!ours_is_later(Some(now), Some(now + MAX_AHEAD_SECS), now));
        assert!(ours_is_later(
            Some(now),
            Some(now + MAX_AHEAD_SECS + 1),
            now
        ));
        assert!(ours_is_later(None, Some(i64::MAX), now));
    }
}
