//! Unit tests of `decide.rs`.
use super::*;

const ROOT: &str = "/data/bullpen/worktrees/app-1234";

/// The error as `main` prints it (without the `error: ` prefix).
fn shown(e: Error) -> String {
    let mut s = e.message().to_owned();
    for h in e.hint_lines() {
        s.push_str(&format!("\nhint: {h}"));
    }
    s
}

/// A session whose worktree is intact: the "use it" row.
fn facts() -> Facts {
    Facts {
        id: "x".into(),
        path: PathBuf::from(ROOT).join("x"),
        worktree_root: PathBuf::from(ROOT),
        place: Place::Expected,
        branch: "bullpen/x".into(),
        recorded_branch: "bullpen/x".into(),
        at_path: AtPath::Dir(DirKind::OurWorktree {
            head_ref: Some("refs/heads/bullpen/x".into()),
        }),
        branch_exists: true,
        branch_checked_out_at: None,
        stale_entries_here: vec![],
        branch_in_missing_worktree: None,
        remote_branches: vec![],
    }
}

fn with(change: impl FnOnce(&mut Facts)) -> Facts {
    let mut f = facts();
    change(&mut f);
    f
}

fn occupied(o: Occupant) -> Placement {
    Placement::Refuse(Refusal::Occupied(o))
}

#[test]
fn our_worktree_on_the_branch_is_used() {
    assert_eq!(decide(&facts()), Placement::Use);
}

#[test]
fn nothing_there_and_branch_exists_recreates() {
    let f = with(|f| f.at_path = AtPath::Nothing);
    assert_eq!(
        decide(&f),
        Placement::Recreate {
            stale_entries: vec![]
        }
    );
}

#[test]
fn a_stale_admin_entry_of_the_path_is_removed_first() {
    let f = with(|f| {
        f.at_path = AtPath::Nothing;
        f.stale_entries_here = vec!["x".into()];
    });
    assert_eq!(
        decide(&f),
        Placement::Recreate {
            stale_entries: vec!["x".into()]
        }
    );
}

#[test]
fn the_branch_in_a_missing_worktree_elsewhere_is_refused_not_unregistered() {
    let f = with(|f| {
        f.at_path = AtPath::Nothing;
        f.branch_in_missing_worktree = Some(("/mnt/usb/x".into(), true));
    });
    let d = decide(&f);
    assert_eq!(
        d,
        Placement::Refuse(Refusal::BranchInMissingWorktree("/mnt/usb/x".into(), true))
    );
    let Placement::Refuse(why) = d else {
        unreachable!()
    };
    let text = shown(explain(&why, &f));
    assert!(
        text.contains("registered at /mnt/usb/x, whose directory is missing")
            && text.contains(
                "`git worktree unlock /mnt/usb/x`, then `git worktree remove /mnt/usb/x`"
            ),
        "{text}"
    );
}

#[test]
fn nothing_there_and_no_branch_fails() {
    let f = with(|f| {
        f.at_path = AtPath::Nothing;
        f.branch_exists = false;
    });
    assert_eq!(decide(&f), Placement::Refuse(Refusal::Gone));
    let msg = shown(explain(&Refusal::Gone, &f));
    assert!(msg.contains(&format!("{ROOT}/x")), "{msg}");
    assert!(msg.contains("bullpen/x"), "{msg}");
}

#[test]
fn branch_checked_out_elsewhere_is_refused() {
    let f = with(|f| {
        f.at_path = AtPath::Nothing;
        f.branch_checked_out_at = Some("/elsewhere".into());
    });
    assert_eq!(
        decide(&f),
        Placement::Refuse(Refusal::BranchCheckedOutElsewhere("/elsewhere".into()))
    );
}

#[test]
fn every_occupant_is_refused() {
    let table: Vec<(AtPath, Occupant)> = vec![
        (AtPath::File, Occupant::File),
        (
            AtPath::Symlink {
                target: "/gone".into(),
                dangling: true,
            },
            Occupant::Symlink {
                target: "/gone".into(),
                dangling: true,
            },
        ),
        (
            AtPath::Symlink {
                target: "/tmp".into(),
                dangling: false,
            },
            Occupant::Symlink {
                target: "/tmp".into(),
                dangling: false,
            },
        ),
        (AtPath::Special, Occupant::Special),
        (
            AtPath::Dir(DirKind::Plain { empty: true }),
            Occupant::EmptyDir,
        ),
        (
            AtPath::Dir(DirKind::Plain { empty: false }),
            Occupant::PlainDir,
        ),
        (
            AtPath::Dir(DirKind::OtherRepo {
                description: "a worktree of another repository (/o/.git)".into(),
            }),
            Occupant::OtherRepo {
                description: "a worktree of another repository (/o/.git)".into(),
            },
        ),
        (
            AtPath::Dir(DirKind::OurWorktree {
                head_ref: Some("refs/heads/main".into()),
            }),
            Occupant::OtherBranch {
                head_ref: "refs/heads/main".into(),
            },
        ),
        (
            AtPath::Dir(DirKind::OurWorktree { head_ref: None }),
            Occupant::DetachedHead,
        ),
    ];
    for (at, want) in table {
        // Occupied whether or not the branch exists.
        for branch_exists in [true, false] {
            let f = with(|f| {
                f.at_path = at.clone();
                f.branch_exists = branch_exists;
            });
            assert_eq!(decide(&f), occupied(want.clone()), "{at:?}");
        }
    }
}

#[test]
fn a_branch_whose_name_merely_ends_like_ours_is_another_branch() {
    let f = with(|f| {
        f.at_path = AtPath::Dir(DirKind::OurWorktree {
            head_ref: Some("refs/heads/other/bullpen/x".into()),
        })
    });
    assert!(matches!(
        decide(&f),
        Placement::Refuse(Refusal::Occupied(Occupant::OtherBranch { .. }))
    ));
}

#[test]
fn untrusted_paths_are_refused_whatever_is_there() {
    for at in [
        facts().at_path,
        AtPath::Nothing,
        AtPath::File,
        AtPath::Dir(DirKind::Plain { empty: true }),
    ] {
        let f = with(|f| {
            f.place = Place::OutsideRoot;
            f.at_path = at.clone();
        });
        assert_eq!(decide(&f), Placement::Refuse(Refusal::OutsideRoot));
        let f = with(|f| {
            f.place = Place::ElsewhereInRoot;
            f.at_path = at.clone();
        });
        assert_eq!(decide(&f), Placement::Refuse(Refusal::ElsewhereInRoot));
    }
}

#[test]
fn a_record_naming_another_branch_is_refused() {
    let f = with(|f| {
        f.recorded_branch = "main".into();
        f.at_path = AtPath::Dir(DirKind::OurWorktree {
            head_ref: Some("refs/heads/main".into()),
        });
    });
    assert_eq!(decide(&f), Placement::Refuse(Refusal::ForeignBranch));
    let f = with(|f| f.recorded_branch = "main".into());
    assert_eq!(decide(&f), Placement::Refuse(Refusal::ForeignBranch));
}

#[test]
fn outside_root_message_says_how_to_proceed() {
    let f = with(|f| {
        f.place = Place::OutsideRoot;
        f.path = "/somewhere/else".into();
    });
    let msg = shown(explain(&Refusal::OutsideRoot, &f));
    assert!(msg.contains("/somewhere/else"), "{msg}");
    assert!(msg.contains(ROOT), "{msg}");
    assert!(msg.contains("bullpen.worktreeRoot"), "{msg}");
    assert!(
        msg.contains("git bullpen spawn <new-id> --base bullpen/x"),
        "{msg}"
    );
}

#[test]
fn occupied_messages_name_what_is_there() {
    let cases = [
        (Occupant::File, "a regular file"),
        (
            Occupant::Symlink {
                target: "/gone".into(),
                dangling: true,
            },
            "a dangling symlink (to /gone)",
        ),
        (Occupant::EmptyDir, "an empty directory"),
        (Occupant::PlainDir, "a plain directory"),
        (
            Occupant::OtherBranch {
                head_ref: "refs/heads/main".into(),
            },
            "on another branch (main)",
        ),
        (Occupant::DetachedHead, "detached HEAD"),
    ];
    for (o, want) in cases {
        let msg = shown(explain(&Refusal::Occupied(o), &facts()));
        assert!(msg.contains(want), "{msg}");
        assert!(msg.contains(&format!("{ROOT}/x")), "{msg}");
    }
    let msg = shown(explain(&Refusal::Occupied(Occupant::EmptyDir), &facts()));
    assert!(msg.contains(&format!("hint: `rmdir {ROOT}/x`")), "{msg}");
}

#[test]
fn a_collected_session_is_revived_only_with_proof_a_free_path_and_a_tip() {
    let gone = with(|f| {
        f.at_path = AtPath::Nothing;
        f.branch_exists = false;
    });
    assert_eq!(
        revive(&gone, Ok(()), true),
        Revival::Recreate {
            stale_entries: vec![],
            new_branch: true
        }
    );
    assert!(matches!(revive(&gone, Ok(()), false), Revival::Refuse(_)));
    assert!(matches!(
        revive(&gone, Err("no proof".into()), true),
        Revival::Refuse(w) if w == "no proof"
    ));
    let occupied = with(|f| {
        f.at_path = AtPath::File;
        f.branch_exists = false;
    });
    assert_eq!(
        revive(&occupied, Ok(()), true),
        Revival::Placement(Refusal::Occupied(Occupant::File))
    );
    let elsewhere = with(|f| {
        f.at_path = AtPath::Nothing;
        f.place = Place::ElsewhereInRoot;
    });
    assert_eq!(
        revive(&elsewhere, Ok(()), true),
        Revival::Placement(Refusal::ElsewhereInRoot)
    );
    let with_branch = with(|f| f.at_path = AtPath::Nothing);
    assert_eq!(
        revive(&with_branch, Ok(()), false),
        Revival::Recreate {
            stale_entries: vec![],
            new_branch: false
        }
    );
}

#[test]
fn start_again_prefers_the_local_branch_then_a_remote_one() {
    let remotes = vec!["origin/bullpen/x".to_owned()];
    assert!(start_again_hint("x", true, &remotes).contains("--base bullpen/x`"));
    assert!(start_again_hint("x", false, &remotes).contains("--base origin/bullpen/x`"));
    assert!(start_again_hint("x", false, &[]).contains("is gone"));
}
