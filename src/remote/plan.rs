//! What `push` may send (pure): a session goes only when nothing of it on the
//! remote would be lost, its record and its branch each a fast-forward of the
//! remote's (or new there). Tested as a table.

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
}

/// Pure: what to push of a session whose record stands `record` and whose
/// branch stands `branch` against the remote. A session goes whole or not at
/// all when anything of it has diverged; otherwise each ref that is new or
/// ahead goes (a branch the remote does not show here goes too, and git takes
/// it only as a fast-forward).
pub fn decide(record: Standing, branch: Standing) -> Decision {
    if record == Standing::Diverged {
        return Decision::Refuse(Refusal::RecordDiverged);
    }
    if branch == Standing::Diverged {
        return Decision::Refuse(Refusal::BranchDiverged);
    }
    let goes = |s: Standing| matches!(s, Standing::New | Standing::Ahead | Standing::Unknown);
    Decision::Push {
        record: goes(record),
        branch: goes(branch),
        record_behind: record == Standing::Behind,
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
            assert_eq!(decide(record, branch), want, "{record:?} {branch:?}");
        }
    }
}
