//! The table of gc's decisions: every rule of `plan.rs` as rows of facts and
//! the decision they must give.

use std::path::Path;

use super::*;
use crate::model::time;
use crate::model::usage::Use;
use crate::model::{NestedKind, Since};
use crate::trust::confined::{ConfinedPath, Unconfined};

fn tip() -> Oid {
    "1111111111111111111111111111111111111111".parse().unwrap()
}
fn other_tip() -> Oid {
    "2222222222222222222222222222222222222222".parse().unwrap()
}

/// A session that gc may remove: every guard passes.
fn removable() -> SessionFacts {
    SessionFacts {
        id: "s".into(),
        state: State::Exited,
        worktree: "/root/wt/s".into(),
        branch: "bullpen/s".into(),
        untrusted: None,
        on_disk: OnDisk::Directory,
        registration: Some(Registration {
            admin_id: "s".into(),
            head_ref: Some("refs/heads/bullpen/s".into()),
            locked: false,
        }),
        link: Link::Ours {
            admin_id: "s".into(),
            admin_exists: true,
        },
        branch_state: Branch::Published {
            tip: tip(),
            evidence: reachable(),
        },
        dirt: Some(Ok(Dirt::default())),
        nested: Some(Ok(Vec::new())),
        ignored: Some(Ignored::default()),
        liveness: Liveness::NotRunning,
        busy: Busy::Idle,
        left_behind: Vec::new(),
        marker: None,
        checked_out_elsewhere: Vec::new(),
        created_here: Ok(()),
        spawner_alive: None,
        conversation: None,
        edited_copies: Ok(Vec::new()),
    }
}

fn reachable() -> Evidence {
    Evidence::Reachable {
        from: Some("origin/bullpen/s".into()),
    }
}

fn squashed(since: Since) -> Evidence {
    Evidence::Squashed {
        into: "origin/main".into(),
        commit: other_tip(),
        short: "2222222".into(),
        since,
        landings: Vec::new(),
    }
}

fn partly() -> Unmerged {
    Unmerged::Partly {
        into: "origin/main".into(),
        merged: 1,
        of: 2,
    }
}

fn unmerged(found: Option<Unmerged>) -> Branch {
    Branch::Unpublished {
        tip: tip(),
        ahead: Some(2),
        found,
    }
}

fn untracked(n: usize) -> Dirt {
    Dirt {
        untracked: n,
        ..Dirt::default()
    }
}

/// A submodule `lib` with these unpublished refs and this dirt.
fn sub(unpublished: &[&str], dirt: Dirt) -> Nested {
    Nested {
        path: "lib".into(),
        kind: NestedKind::Submodule,
        unpublished: unpublished.iter().map(|s| s.to_string()).collect(),
        dirt: Some(dirt),
    }
}

fn user() -> User {
    User {
        pid: 4242,
        name: "pytest".into(),
        how: Use::OpenFile,
    }
}

fn keep(reasons: Vec<Reason>) -> Decision {
    Decision::Keep(reasons)
}

#[test]
fn session_table() {
    let remove = Decision::Remove {
        via: Via::GitWorktreeRemove,
        tip: tip(),
    };
    type Edit = fn(&mut SessionFacts);
    let table: Vec<(&str, Edit, Decision)> = vec![
        ("all guards pass", |_| {}, remove.clone()),
        (
            "untrusted",
            |f| f.untrusted = Some("x".into()),
            keep(vec![Reason::Untrusted("x".into())]),
        ),
        (
            "provisioning, its spawner alive",
            |f| {
                f.state = State::Provisioning;
                f.spawner_alive = Some(7);
            },
            keep(vec![Reason::Provisioning { pid: 7 }]),
        ),
        (
            "an interrupted spawn, its branch at the base",
            |f| {
                f.state = State::Provisioning;
                f.branch_state = Branch::AtBase { tip: tip() };
            },
            remove.clone(),
        ),
        (
            "an interrupted spawn with a dirty worktree",
            |f| {
                f.state = State::Provisioning;
                f.branch_state = Branch::AtBase { tip: tip() };
                f.dirt = Some(Ok(Dirt {
                    untracked: 1,
                    ..Dirt::default()
                }));
            },
            keep(vec![Reason::Dirty(Dirt {
                untracked: 1,
                ..Dirt::default()
            })]),
        ),
        (
            "not created on this machine",
            |f| f.created_here = Err("no local state".into()),
            keep(vec![Reason::NotCreatedHere("no local state".into())]),
        ),
        (
            "a file at the path",
            |f| f.on_disk = OnDisk::Other("a file".into()),
            keep(vec![Reason::NotADirectory("a file".into())]),
        ),
        (
            "unpublished",
            |f| {
                f.branch_state = Branch::Unpublished {
                    tip: tip(),
                    ahead: Some(2),
                    found: None,
                }
            },
            keep(vec![Reason::Unpublished {
                ahead: Some(2),
                found: None,
            }]),
        ),
        (
            "branch gone",
            |f| f.branch_state = Branch::Missing,
            keep(vec![Reason::BranchMissing]),
        ),
        (
            "squash-merged into an integration ref",
            |f| {
                f.branch_state = Branch::Published {
                    tip: tip(),
                    evidence: squashed(Since::Unchanged),
                }
            },
            remove.clone(),
        ),
        (
            "rebase-merged into an integration ref",
            |f| {
                f.branch_state = Branch::Published {
                    tip: tip(),
                    evidence: Evidence::Rebased {
                        into: "origin/main".into(),
                        commits: 2,
                        last: other_tip(),
                        short: "2222222".into(),
                        since: Since::Unchanged,
                        landings: Vec::new(),
                    },
                }
            },
            remove.clone(),
        ),
        (
            "squash-merged, then reverted there",
            |f| {
                f.branch_state = Branch::Published {
                    tip: tip(),
                    evidence: squashed(Since::Reverted),
                }
            },
            remove.clone(),
        ),
        (
            "partly merged",
            |f| f.branch_state = unmerged(Some(partly())),
            keep(vec![Reason::Unpublished {
                ahead: Some(2),
                found: Some(partly()),
            }]),
        ),
        (
            "conflicts with the integration ref",
            |f| {
                f.branch_state = unmerged(Some(Unmerged::Conflicts {
                    into: "origin/main".into(),
                }))
            },
            keep(vec![Reason::Unpublished {
                ahead: Some(2),
                found: Some(Unmerged::Conflicts {
                    into: "origin/main".into(),
                }),
            }]),
        ),
        (
            "commits that change no file",
            |f| f.branch_state = unmerged(Some(Unmerged::NoChanges)),
            keep(vec![Reason::Unpublished {
                ahead: Some(2),
                found: Some(Unmerged::NoChanges),
            }]),
        ),
        (
            "squash-merged, worktree gone",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.branch_state = Branch::Published {
                    tip: tip(),
                    evidence: squashed(Since::Changed),
                };
            },
            Decision::Collect { tip: Some(tip()) },
        ),
        (
            "partly merged, worktree gone",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.branch_state = unmerged(Some(partly()));
            },
            keep(vec![Reason::GoneUnpublished {
                ahead: Some(2),
                found: Some(partly()),
            }]),
        ),
        (
            "squash-merged but dirty and busy: every reason",
            |f| {
                f.branch_state = Branch::Published {
                    tip: tip(),
                    evidence: squashed(Since::Unchanged),
                };
                f.dirt = Some(Ok(untracked(1)));
                f.busy = Busy::InUse(vec![user()]);
            },
            keep(vec![Reason::Dirty(untracked(1)), Reason::Busy(vec![user()])]),
        ),
        (
            "untracked",
            |f| {
                f.dirt = Some(Ok(Dirt {
                    untracked: 3,
                    ..Dirt::default()
                }))
            },
            keep(vec![Reason::Dirty(Dirt {
                untracked: 3,
                ..Dirt::default()
            })]),
        ),
        (
            "staged",
            |f| {
                f.dirt = Some(Ok(Dirt {
                    staged: 1,
                    ..Dirt::default()
                }))
            },
            keep(vec![Reason::Dirty(Dirt {
                staged: 1,
                ..Dirt::default()
            })]),
        ),
        (
            "status failed",
            |f| f.dirt = Some(Err("boom".into())),
            keep(vec![Reason::DirtUnknown("boom".into())]),
        ),
        (
            "status not computed, nothing else in the way",
            |f| f.dirt = None,
            keep(vec![Reason::StatusNotChecked]),
        ),
        (
            "status not computed, unpublished anyway",
            |f| {
                f.dirt = None;
                f.branch_state = Branch::Unpublished {
                    tip: tip(),
                    ahead: Some(1),
                    found: None,
                };
            },
            keep(vec![Reason::Unpublished {
                ahead: Some(1),
                found: None,
            }]),
        ),
        (
            "locked",
            |f| {
                if let Some(r) = f.registration.as_mut() {
                    r.locked = true
                }
            },
            keep(vec![Reason::Locked]),
        ),
        (
            "HEAD elsewhere",
            |f| {
                if let Some(r) = f.registration.as_mut() {
                    r.head_ref = Some("refs/heads/main".into())
                }
            },
            keep(vec![Reason::HeadElsewhere(Some("refs/heads/main".into()))]),
        ),
        (
            "HEAD detached",
            |f| {
                if let Some(r) = f.registration.as_mut() {
                    r.head_ref = None
                }
            },
            keep(vec![Reason::HeadElsewhere(None)]),
        ),
        (
            "session process alive",
            |f| f.liveness = Liveness::Alive { pid: 7 },
            keep(vec![Reason::Alive { pid: 7 }]),
        ),
        (
            "session process unknowable",
            |f| f.liveness = Liveness::Unknown,
            keep(vec![Reason::AliveUnknown]),
        ),
        (
            "someone has a file open",
            |f| f.busy = Busy::InUse(vec![user()]),
            keep(vec![Reason::Busy(vec![user()])]),
        ),
        (
            "its run left a process behind, and someone else is in it too",
            |f| {
                let theirs = User {
                    pid: 7,
                    ..user()
                };
                f.busy = Busy::InUse(vec![user(), theirs]);
                f.left_behind = vec![user().pid];
            },
            keep(vec![
                Reason::LeftBehind {
                    users: vec![user()],
                    id: "s".into(),
                },
                Reason::Busy(vec![User {
                    pid: 7,
                    ..user()
                }]),
            ]),
        ),
        (
            "cannot tell who uses it",
            |f| f.busy = Busy::CannotTell("no /proc".into()),
            keep(vec![Reason::BusyUnknown("no /proc".into())]),
        ),
        (
            "not registered, no .git",
            |f| {
                f.registration = None;
                f.link = Link::Absent;
            },
            keep(vec![Reason::NotOurs(
                "not a registered worktree of this repository (it has no .git file)".into(),
            )]),
        ),
        (
            "not registered, another repository",
            |f| {
                f.registration = None;
                f.link = Link::Repository;
            },
            keep(vec![Reason::NotOurs(
                "not a registered worktree of this repository (it holds a repository of its own (.git directory))".into(),
            )]),
        ),
        (
            "registered, but .git points elsewhere",
            |f| f.link = Link::Foreign("its .git file points at /x".into()),
            keep(vec![Reason::NotOurs(
                "its .git does not match the worktree entry s registered for it (its .git file points at /x); run `git worktree repair`".into(),
            )]),
        ),
        (
            "registered, but a repository of its own is there",
            |f| f.link = Link::Repository,
            keep(vec![Reason::NotOurs(
                "git registers worktree entry s for it, but it holds a repository of its own (.git directory); not gc's to remove".into(),
            )]),
        ),
        (
            "registered, .git names another entry",
            |f| {
                f.link = Link::Ours {
                    admin_id: "t".into(),
                    admin_exists: true,
                }
            },
            keep(vec![Reason::NotOurs(
                "its .git does not match the worktree entry s registered for it (its .git file points at worktree entry t); run `git worktree repair`".into(),
            )]),
        ),
        (
            "admin entry gone, clean against the branch",
            |f| {
                f.registration = None;
                f.link = Link::Ours {
                    admin_id: "s".into(),
                    admin_exists: false,
                };
            },
            Decision::Remove {
                via: Via::AdminEntryGone,
                tip: tip(),
            },
        ),
        (
            "admin entry gone, files differ from the branch",
            |f| {
                f.registration = None;
                f.link = Link::Ours {
                    admin_id: "s".into(),
                    admin_exists: false,
                };
                f.dirt = Some(Ok(Dirt {
                    modified: 1,
                    ..Dirt::default()
                }));
            },
            keep(vec![Reason::Dirty(Dirt {
                modified: 1,
                ..Dirt::default()
            })]),
        ),
        (
            "interrupted teardown, remnant without .git, only deletions",
            |f| {
                f.registration = None;
                f.link = Link::Absent;
                f.dirt = Some(Ok(Dirt {
                    deleted: 2,
                    ..Dirt::default()
                }));
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
            },
            Decision::Remove {
                via: Via::FinishTeardown,
                tip: tip(),
            },
        ),
        (
            "interrupted teardown, branch moved since",
            |f| {
                f.registration = None;
                f.link = Link::Absent;
                f.dirt = None;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: other_tip(),
                });
            },
            keep(vec![Reason::MarkerStale]),
        ),
        (
            "interrupted teardown, but busy",
            |f| {
                f.registration = None;
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
                f.busy = Busy::InUse(vec![user()]);
            },
            keep(vec![Reason::Busy(vec![user()])]),
        ),
        (
            "interrupted teardown marker, but .git names another entry",
            |f| {
                f.registration = None;
                f.link = Link::Ours {
                    admin_id: "t".into(),
                    admin_exists: false,
                };
                f.dirt = Some(Err("no".into()));
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
            },
            keep(vec![Reason::DirtUnknown("no".into())]),
        ),
        (
            "git died in the teardown: entry left, .git gone, only deletions",
            |f| {
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
                f.dirt = Some(Ok(Dirt {
                    deleted: 3,
                    ..Dirt::default()
                }));
            },
            Decision::Remove {
                via: Via::FinishTeardown,
                tip: tip(),
            },
        ),
        (
            "git died in the teardown, and something new appeared",
            |f| {
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
                f.dirt = Some(Ok(Dirt {
                    deleted: 3,
                    untracked: 1,
                    ..Dirt::default()
                }));
            },
            keep(vec![Reason::RemnantHoldsNew(Dirt {
                deleted: 3,
                untracked: 1,
                ..Dirt::default()
            })]),
        ),
        (
            "git died in the teardown, the branch moved since",
            |f| {
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: other_tip(),
                });
            },
            keep(vec![Reason::MarkerStale]),
        ),
        (
            "git died in the teardown, its entry locked since",
            |f| {
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
                if let Some(r) = f.registration.as_mut() {
                    r.locked = true
                }
            },
            keep(vec![Reason::Locked]),
        ),
        (
            "no .git, registered, the note names another entry: not ours",
            |f| {
                f.link = Link::Absent;
                f.marker = Some(Marker {
                    admin_id: "t".into(),
                    tip: tip(),
                });
            },
            keep(vec![Reason::NotOurs(
                "its .git does not match the worktree entry s registered for it (it has no .git file); run `git worktree repair`".into(),
            )]),
        ),
        (
            "interrupted teardown marker, registered again: full checks",
            |f| {
                f.marker = Some(Marker {
                    admin_id: "s".into(),
                    tip: tip(),
                });
                f.dirt = Some(Ok(Dirt {
                    untracked: 1,
                    ..Dirt::default()
                }));
            },
            keep(vec![Reason::Dirty(Dirt {
                untracked: 1,
                ..Dirt::default()
            })]),
        ),
        (
            "a submodule with a commit on none of its remotes",
            |f| f.nested = Some(Ok(vec![sub(&["main"], Dirt::default())])),
            keep(vec![Reason::Nested(vec![sub(&["main"], Dirt::default())])]),
        ),
        (
            "a nested repository with untracked files",
            |f| f.nested = Some(Ok(vec![sub(&[], untracked(1))])),
            keep(vec![Reason::Nested(vec![sub(&[], untracked(1))])]),
        ),
        (
            "nested repositories all clean and published",
            |f| {
                f.nested = Some(Ok(vec![
                    sub(&[], Dirt::default()),
                    sub(&[], Dirt::default()),
                ]))
            },
            remove.clone(),
        ),
        (
            "cannot look for nested repositories",
            |f| f.nested = Some(Err("perm".into())),
            keep(vec![Reason::NestedUnknown("perm".into())]),
        ),
        (
            "nested repositories not looked for yet",
            |f| f.nested = None,
            keep(vec![Reason::NestedNotChecked]),
        ),
        (
            "status first, then nested repositories",
            |f| {
                f.dirt = None;
                f.nested = None;
            },
            keep(vec![Reason::StatusNotChecked]),
        ),
        (
            "worktree gone, a submodule git dir in its entry unpublished",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.nested = Some(Ok(vec![Nested {
                    kind: NestedKind::SubmoduleGitDir,
                    dirt: None,
                    ..sub(&["HEAD"], Dirt::default())
                }]));
            },
            keep(vec![Reason::Nested(vec![Nested {
                kind: NestedKind::SubmoduleGitDir,
                dirt: None,
                ..sub(&["HEAD"], Dirt::default())
            }])]),
        ),
        (
            "worktree gone, its entry's modules not looked at",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.nested = None;
            },
            keep(vec![Reason::NestedNotChecked]),
        ),
        (
            "worktree and entry gone: nothing nested to look at",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.registration = None;
                f.nested = None;
            },
            Decision::Collect { tip: Some(tip()) },
        ),
        (
            "branch checked out in another worktree",
            |f| f.checked_out_elsewhere = vec!["/else".into()],
            keep(vec![Reason::CheckedOutElsewhere(vec!["/else".into()])]),
        ),
        (
            "worktree gone, branch checked out in another worktree",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.checked_out_elsewhere = vec!["/else".into()];
            },
            keep(vec![Reason::CheckedOutElsewhere(vec!["/else".into()])]),
        ),
        (
            "worktree gone, published",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.link = Link::Absent;
                f.dirt = None;
            },
            Decision::Collect { tip: Some(tip()) },
        ),
        (
            "worktree and branch gone",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.registration = None;
                f.branch_state = Branch::Missing;
            },
            Decision::Collect { tip: None },
        ),
        (
            "worktree and branch gone, not created here: only the record changes",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.registration = None;
                f.branch_state = Branch::Missing;
                f.created_here = Err("no local state".into());
            },
            Decision::Collect { tip: None },
        ),
        (
            "worktree gone, branch published, not created here",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.registration = None;
                f.created_here = Err("no local state".into());
            },
            keep(vec![Reason::NotCreatedHere("no local state".into())]),
        ),
        (
            "an interrupted spawn that never made its worktree",
            |f| {
                f.state = State::Provisioning;
                f.on_disk = OnDisk::Missing;
                f.registration = None;
                f.branch_state = Branch::AtBase { tip: tip() };
            },
            Decision::Collect { tip: Some(tip()) },
        ),
        (
            "worktree gone, unpublished",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.branch_state = Branch::Unpublished {
                    tip: tip(),
                    ahead: Some(1),
                    found: None,
                };
            },
            keep(vec![Reason::GoneUnpublished {
                ahead: Some(1),
                found: None,
            }]),
        ),
        (
            "worktree gone, locked entry",
            |f| {
                f.on_disk = OnDisk::Missing;
                if let Some(r) = f.registration.as_mut() {
                    r.locked = true
                }
            },
            keep(vec![Reason::Locked]),
        ),
        (
            "worktree gone, process alive",
            |f| {
                f.on_disk = OnDisk::Missing;
                f.liveness = Liveness::Alive { pid: 9 };
            },
            keep(vec![Reason::Alive { pid: 9 }]),
        ),
    ];
    for (name, edit, want) in table {
        let mut f = removable();
        edit(&mut f);
        assert_eq!(plan_session(&f), want, "{name}");
    }
}

#[test]
fn all_reasons_are_reported_together() {
    let mut f = removable();
    f.branch_state = Branch::Unpublished {
        tip: tip(),
        ahead: Some(2),
        found: None,
    };
    f.dirt = Some(Ok(Dirt {
        untracked: 3,
        ..Dirt::default()
    }));
    f.busy = Busy::InUse(vec![user()]);
    let d = plan_session(&f);
    let Decision::Keep(reasons) = &d else {
        panic!("{d:?}")
    };
    let words: Vec<String> = reasons.iter().map(|r| r.describe("bullpen/s")).collect();
    assert_eq!(
        words,
        [
            "2 commits not on any remote",
            "3 untracked files",
            "busy: pid 4242 (pytest) has a file open in it"
        ]
    );
    assert!(!d.is_waitable(), "unpublished work is not waited for");
}

#[test]
fn status_is_asked_for_only_when_it_decides() {
    let mut f = removable();
    f.dirt = None;
    assert!(plan_session(&f).needs_status());
    f.busy = Busy::InUse(vec![user()]);
    assert!(!plan_session(&f).needs_status());
    assert!(!plan_session(&removable()).needs_status());
}

#[test]
fn status_is_wanted_wherever_the_directory_is_ours_so_every_reason_is_named() {
    let mut f = removable();
    f.dirt = None;
    f.busy = Busy::InUse(vec![user()]);
    f.branch_state = unmerged(None);
    assert!(wants_status(&f), "kept for other reasons: still looked at");
    assert!(!wants_status(&removable()), "computed already");
    for edit in [
        (|f: &mut SessionFacts| f.untrusted = Some("x".into())) as fn(&mut SessionFacts),
        |f| f.on_disk = OnDisk::Missing,
        |f| f.link = Link::Foreign("elsewhere".into()),
        |f| {
            f.state = State::Provisioning;
            f.spawner_alive = Some(7);
        },
    ] {
        let mut f = removable();
        f.dirt = None;
        edit(&mut f);
        assert!(!wants_status(&f), "{f:?}");
    }
}

#[test]
fn only_busy_is_waitable() {
    let mut f = removable();
    f.busy = Busy::InUse(vec![user()]);
    assert!(plan_session(&f).is_waitable());
    f.busy = Busy::CannotTell("x".into());
    assert!(!plan_session(&f).is_waitable());
    let mut f = removable();
    f.liveness = Liveness::Alive { pid: 3 };
    assert!(plan_session(&f).is_waitable());
    assert!(!plan_session(&removable()).is_waitable());
}

fn places<'a>(root: &'a Path, home: &'a Path, repo: &'a Path, git: &'a Path) -> Places<'a> {
    Places {
        worktree_root: root,
        home: Some(home),
        repo,
        git_dir: git,
    }
}

#[test]
fn untrusted_paths() {
    // A deliberately broad root, so that only the special-place checks stand
    // between these paths and removal.
    let root = Path::new("/");
    let p = places(
        root,
        Path::new("/home/u"),
        Path::new("/home/u/src/app"),
        Path::new("/home/u/src/app/.git"),
    );
    let cases = [
        ("/", Some("is the filesystem root")),
        ("/home/u", Some("is the home directory")),
        ("/home", Some("contains the home directory")),
        ("/home/u/src/app", Some("is the repository itself")),
        ("/home/u/src", Some("contains the repository")),
        ("/home/u/src/app/.git/worktrees/x", Some("git directory")),
        (
            "/home/u/src/app/../x",
            Some("not an absolute, normalised path"),
        ),
        ("relative/x", Some("not an absolute, normalised path")),
        ("/data/wt/x", None),
        ("/home/u/src/app/.worktrees/x", None),
    ];
    for (path, want) in cases {
        // Confined to this broad root (which `trust::confined` itself would
        // refuse) unless it is not normalised.
        let confined = match ConfinedPath::new(Path::new("/data"), Path::new(path)) {
            Err(Unconfined::NotNormal) => Err(Unconfined::NotNormal),
            _ => Ok(()),
        };
        let got = untrusted(Path::new(path), &p, None, confined.as_ref().copied());
        match (want, &got) {
            (None, None) => {}
            (Some(w), Some(g)) if g.contains(w) => {}
            _ => panic!("{path}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn untrusted_outside_root_and_through_symlinks() {
    let root = Path::new("/data/wt");
    let p = places(
        root,
        Path::new("/home/u"),
        Path::new("/src/app"),
        Path::new("/src/app/.git"),
    );
    // Nothing of these exists: confinement is lexical here.
    let confined = |path: &str| ConfinedPath::new(root, Path::new(path)).map(|_| ());
    let plain = |path: &str| untrusted(Path::new(path), &p, None, confined(path).as_ref().copied());
    assert_eq!(plain("/data/wt/x"), None);
    for outside in ["/data/wt", "/data/wtx/a", "/tmp/a"] {
        assert!(plain(outside)
            .unwrap()
            .contains("outside the worktree root"));
    }
    // Confined as written, but a symlink makes it resolve elsewhere.
    let escaped = untrusted(
        Path::new("/data/wt/x"),
        &p,
        Some((Path::new("/home/u"), &p)),
        Ok(()),
    );
    assert!(escaped.unwrap().contains("home directory"));
    let etc = Unconfined::Resolves("/etc".into());
    let escaped = untrusted(
        Path::new("/data/wt/x"),
        &p,
        Some((Path::new("/etc"), &p)),
        Err(&etc),
    );
    assert!(escaped.unwrap().contains("outside the worktree root"));
}

#[test]
fn admin_entries() {
    let f = AdminFacts {
        admin_id: "x".into(),
        path: "/root/wt/x".into(),
        locked: false,
        session: Some("x".into()),
        created_here: Ok(()),
        modules: Some(Ok(vec![])),
    };
    assert_eq!(plan_admin_entry(&f), AdminDecision::Prune);
    let published = Nested {
        path: "/git/worktrees/x/modules/lib".into(),
        kind: NestedKind::SubmoduleGitDir,
        unpublished: vec![],
        dirt: None,
    };
    let unpublished = Nested {
        unpublished: vec!["main".into()],
        ..published.clone()
    };
    type Edit = fn(&mut AdminFacts);
    let table: Vec<(&str, Edit, Option<&str>)> = vec![
        ("a session's, nothing under it", |_| {}, None),
        (
            "a user's (not a session's path)",
            |f| f.session = None,
            Some("not ours"),
        ),
        ("locked", |f| f.locked = true, Some("locked")),
        (
            "nothing here proves bullpen created it",
            |f| f.created_here = Err("no local state".into()),
            Some("no local state"),
        ),
        (
            "submodules not looked at",
            |f| f.modules = None,
            Some("not looked at"),
        ),
        (
            "cannot read its submodules",
            |f| f.modules = Some(Err("bad".into())),
            Some("cannot tell"),
        ),
    ];
    for (name, edit, want) in table {
        let mut g = f.clone();
        edit(&mut g);
        match (plan_admin_entry(&g), want) {
            (AdminDecision::Prune, None) => {}
            (AdminDecision::NotOurs, Some("not ours")) => {}
            (AdminDecision::Keep(why), Some(w)) if why.contains(w) => {}
            (got, _) => panic!("{name}: {got:?}"),
        }
    }
    let f2 = AdminFacts {
        modules: Some(Ok(vec![published.clone()])),
        ..f.clone()
    };
    assert_eq!(
        plan_admin_entry(&f2),
        AdminDecision::Prune,
        "published submodule"
    );
    let f3 = AdminFacts {
        modules: Some(Ok(vec![published, unpublished])),
        ..f
    };
    assert_eq!(
        plan_admin_entry(&f3),
        AdminDecision::Keep(
            "submodule git dir /git/worktrees/x/modules/lib holds work: main not on any of its remotes"
                .into()
        )
    );
}

#[test]
fn orphan_table() {
    let base = OrphanFacts {
        path: "/wt/x".into(),
        contents: Contents::NoWork {
            dot_git: Link::Ours {
                admin_id: "x".into(),
                admin_exists: false,
            },
        },
        busy: Busy::Idle,
    };
    assert!(matches!(plan_orphan(&base), OrphanDecision::Remove(w) if w.contains("dangling")));
    let empty = OrphanFacts {
        contents: Contents::NoWork {
            dot_git: Link::Absent,
        },
        ..base.clone()
    };
    assert!(matches!(plan_orphan(&empty), OrphanDecision::Remove(_)));
    for kept in [
        Contents::Files(2),
        Contents::Repository,
        Contents::Unreadable("perm".into()),
        Contents::NoWork {
            dot_git: Link::Foreign("points at /elsewhere".into()),
        },
        Contents::NoWork {
            dot_git: Link::Ours {
                admin_id: "x".into(),
                admin_exists: true,
            },
        },
    ] {
        let f = OrphanFacts {
            contents: kept.clone(),
            ..base.clone()
        };
        assert!(
            matches!(plan_orphan(&f), OrphanDecision::Keep(_)),
            "{kept:?}"
        );
    }
    let busy = OrphanFacts {
        busy: Busy::InUse(vec![user()]),
        ..base.clone()
    };
    assert!(matches!(plan_orphan(&busy), OrphanDecision::Keep(w) if w.contains("pid 4242")));
    let unknown = OrphanFacts {
        busy: Busy::CannotTell("x".into()),
        ..base
    };
    assert!(matches!(plan_orphan(&unknown), OrphanDecision::Keep(_)));
}

fn conversation(last_active: Option<i64>, grace: time::Expire) -> Conversation {
    Conversation {
        agent: "claude".into(),
        last_active,
        grace,
        grace_value: "2.weeks.ago".into(),
    }
}

#[test]
fn an_agents_conversation_and_edited_copies_are_work() {
    let remove = Decision::Remove {
        via: Via::GitWorktreeRemove,
        tip: tip(),
    };
    let at_base = |f: &mut SessionFacts| f.branch_state = Branch::AtBase { tip: tip() };
    let recent = conversation(Some(2_000), time::Expire::Before(1_000));
    let old = conversation(Some(500), time::Expire::Before(1_000));
    let table: Vec<(&str, SessionFacts, Decision)> = vec![
        (
            "no commit of its own, active within the grace",
            facts_with(|f| {
                at_base(f);
                f.conversation = Some(recent.clone());
            }),
            keep(vec![Reason::Conversation(recent.clone())]),
        ),
        (
            "active exactly at the cutoff: over",
            facts_with(|f| {
                at_base(f);
                f.conversation = Some(conversation(Some(1_000), time::Expire::Before(1_000)));
            }),
            remove.clone(),
        ),
        (
            "no commit of its own, its grace over",
            facts_with(|f| {
                at_base(f);
                f.conversation = Some(old.clone());
            }),
            remove.clone(),
        ),
        (
            "grace never ends",
            facts_with(|f| {
                at_base(f);
                f.conversation = Some(conversation(Some(500), time::Expire::Never));
            }),
            keep(vec![Reason::Conversation(conversation(
                Some(500),
                time::Expire::Never,
            ))]),
        ),
        (
            "when it was last active cannot be read: kept",
            facts_with(|f| {
                at_base(f);
                f.conversation = Some(conversation(None, time::Expire::Before(1_000)));
            }),
            keep(vec![Reason::Conversation(conversation(
                None,
                time::Expire::Before(1_000),
            ))]),
        ),
        (
            "published commits of its own: the grace does not apply",
            facts_with(|f| f.conversation = Some(recent.clone())),
            remove.clone(),
        ),
        (
            "an edited copy",
            facts_with(|f| f.edited_copies = Ok(vec![".env".into()])),
            keep(vec![Reason::EditedCopies(vec![".env".into()])]),
        ),
        (
            "cannot tell whether a copy was edited",
            facts_with(|f| f.edited_copies = Err("unreadable".into())),
            keep(vec![Reason::CopiesUnknown("unreadable".into())]),
        ),
    ];
    for (name, f, want) in table {
        assert_eq!(plan_session(&f), want, "{name}");
    }
    // `rm --force` lets both go.
    let f = facts_with(|f| {
        at_base(f);
        f.conversation = Some(recent.clone());
        f.edited_copies = Ok(vec![".env".into()]);
    });
    assert_eq!(plan_forced(&f), remove);
    assert_eq!(
        Reason::EditedCopies(vec![".env".into(), "a b".into()]).describe("bullpen/s"),
        "2 files copied in from the main worktree (.worktreeinclude) were edited since: \
         '.env', 'a b'"
    );
    assert_eq!(
        Reason::Conversation(conversation(Some(0), time::Expire::Never)).describe("bullpen/s"),
        "no commit of its own, but its agent 'claude' keeps its conversation by the worktree's \
         path (last active 1970-01-01T00:00:00Z, within bullpen.gc.agentGrace 2.weeks.ago)"
    );
}

fn facts_with(edit: impl FnOnce(&mut SessionFacts)) -> SessionFacts {
    let mut f = removable();
    edit(&mut f);
    f
}

#[test]
fn a_half_removed_entry_is_finished_only_when_it_is_a_sessions_made_here() {
    let f = HalfRemovedFacts {
        admin_id: "s".into(),
        session: Some("s".into()),
        head: Some("refs/heads/bullpen/s".into()),
        locked: false,
        created_here: Ok(()),
    };
    let e = |edit: fn(&mut HalfRemovedFacts)| {
        let mut g = f.clone();
        edit(&mut g);
        plan_half_removed(&g)
    };
    assert_eq!(plan_half_removed(&f), AdminDecision::Prune);
    assert_eq!(e(|g| g.head = None), AdminDecision::Prune);
    assert_eq!(e(|g| g.session = None), AdminDecision::NotOurs);
    assert_eq!(
        e(|g| g.head = Some("refs/heads/main".into())),
        AdminDecision::NotOurs
    );
    assert_eq!(e(|g| g.head = Some(String::new())), AdminDecision::NotOurs);
    assert!(matches!(
        e(|g| g.created_here = Err("no proof".into())),
        AdminDecision::Keep(_)
    ));
    assert!(matches!(e(|g| g.locked = true), AdminDecision::Keep(_)));
}
