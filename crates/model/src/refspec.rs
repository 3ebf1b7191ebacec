//! What a remote's fetch refspecs do with bullpen's refs (pure): where they put
//! the session branches, and whether a push would make git write this clone's
//! own branches or records.

use super::id::SessionId;

/// Where a remote's configured fetch refspecs put its `bullpen/*` branches, as
/// bullpen fetches them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BranchMap {
    /// Under `refs/remotes/`: the destination pattern
    /// (`refs/remotes/origin/bullpen/*` for git's default) and whether the
    /// refspec forces (`+`).
    Tracked(String, bool),
    /// No refspec maps them (a `--single-branch` clone, a negative refspec):
    /// bullpen fetches no branches, as `git fetch` would not.
    NotMapped,
    /// The only refspecs that map them put them outside `refs/remotes/` (a
    /// mirror's `+refs/*:refs/*` puts them on this clone's own
    /// `refs/heads/bullpen/*`, which `--prune` would then delete): the first
    /// such refspec, and where it puts them.
    Refused {
        refspec: String,
        destination: String,
    },
}

/// Pure: where `refspecs` (a remote's `remote.<name>.fetch`) put its
/// `bullpen/*` branches. A negative refspec (`^...`, anywhere in the list)
/// that excludes them all means none. Of the refspecs whose glob holds the
/// whole `bullpen/*` family, the first that puts them under `refs/remotes/`
/// wins; one that puts them anywhere else (`refs/heads/`, `refs/tags/`,
/// `refs/notes/`, bullpen's own `refs/bullpen/`) is never used, so that a
/// fetch never writes or prunes this clone's own refs. Exact refspecs, and
/// refspecs with no destination, map no session branch.
pub fn branch_map(refspecs: &[String]) -> BranchMap {
    const BRANCHES: &str = "refs/heads/bullpen/";
    let excluded = refspecs.iter().any(|spec| {
        spec.trim()
            .strip_prefix('^')
            .is_some_and(|negative| glob_capture(negative, &format!("{BRANCHES}x")).is_some())
    });
    if excluded {
        return BranchMap::NotMapped;
    }
    let mut refused = None;
    for spec in refspecs {
        let spec = spec.trim();
        if spec.starts_with('^') {
            continue;
        }
        let (force, body) = match spec.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, spec),
        };
        let Some((src, dst)) = body.split_once(':') else {
            continue;
        };
        let (Some((src_pre, src_post)), Some((dst_pre, dst_post))) =
            (src.split_once('*'), dst.split_once('*'))
        else {
            continue;
        };
        // The whole `bullpen/*` family must fall inside the glob: its prefix is
        // a prefix of `refs/heads/bullpen/`, and nothing follows the `*`.
        if !(src_post.is_empty() && BRANCHES.starts_with(src_pre)) {
            continue;
        }
        let middle = &BRANCHES[src_pre.len()..];
        let destination = format!("{dst_pre}{middle}*{dst_post}");
        if tracking_destination(&destination) {
            return BranchMap::Tracked(destination, force);
        }
        refused.get_or_insert_with(|| BranchMap::Refused {
            refspec: spec.to_owned(),
            destination,
        });
    }
    refused.unwrap_or(BranchMap::NotMapped)
}

/// A destination pattern bullpen fetches branches into: one `*`, under
/// `refs/remotes/<something>/`, nothing that could climb out of it.
fn tracking_destination(pattern: &str) -> bool {
    pattern.strip_prefix("refs/remotes/").is_some_and(|rest| {
        !rest.starts_with('*')
            && rest.matches('*').count() == 1
            && rest
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..")
    })
}

/// Pure: a refspec of `refspecs` (a remote's `remote.<name>.fetch`) that would
/// make `git push` write one of this clone's own refs: for each ref it pushes,
/// git sets the local ref the remote's fetch refspecs map it to ("update by
/// push", expecting nothing of what it held), so a mirror's `+refs/*:refs/*`
/// would set this clone's own `refs/heads/bullpen/<id>` and
/// `refs/bullpen/sessions/<id>` back to what was pushed, losing a commit or an
/// event that landed meanwhile. The refspec, and where it maps them. A
/// refspec mapping a whole family under `refs/remotes/` shadows those after it.
pub fn push_overwrite(refspecs: &[String]) -> Option<(String, String)> {
    for family in ["refs/heads/bullpen/", "refs/bullpen/sessions/"] {
        for spec in refspecs {
            let spec = spec.trim();
            let body = spec.strip_prefix('+').unwrap_or(spec);
            if body.starts_with('^') {
                continue;
            }
            let Some((src, dst)) = body.split_once(':') else {
                continue;
            };
            if dst.is_empty() {
                continue;
            }
            let (overlaps, whole, destination) = match (src.split_once('*'), dst.split_once('*')) {
                (Some((pre, post)), Some((dst_pre, dst_post))) => {
                    let whole = post.is_empty() && family.starts_with(pre);
                    let overlaps = family.starts_with(pre) || pre.starts_with(family);
                    let destination = match whole {
                        true => format!("{dst_pre}{}*{dst_post}", &family[pre.len()..]),
                        false => dst.to_owned(),
                    };
                    (overlaps, whole, destination)
                }
                (None, _) => (src.starts_with(family), false, dst.to_owned()),
                (Some(_), None) => continue,
            };
            if !overlaps {
                continue;
            }
            let tracked = destination
                .strip_prefix("refs/remotes/")
                .is_some_and(|rest| rest.contains('/') && !rest.split('/').any(|c| c == ".."));
            if !tracked {
                return Some((spec.to_owned(), destination));
            }
            if whole {
                break;
            }
        }
    }
    None
}

/// Pure: the negative refspecs of `refspecs` that bullpen passes on with the
/// branches it fetches, so that a branch the remote's config leaves out
/// (`^refs/heads/bullpen/big`, `^refs/heads/*-wip`) stays out: those under
/// `refs/heads/`, which no other refspec of bullpen's fetch can match.
pub fn branch_exclusions(refspecs: &[String]) -> Vec<String> {
    refspecs
        .iter()
        .map(|s| s.trim())
        .filter(|s| s.starts_with("^refs/heads/"))
        .map(str::to_owned)
        .collect()
}

/// [`branch_map`]'s destination when the branches are fetched (under
/// `refs/remotes/`), and whether the refspec forces; `None` otherwise.
pub fn branch_destination(refspecs: &[String]) -> Option<(String, bool)> {
    match branch_map(refspecs) {
        BranchMap::Tracked(pattern, force) => Some((pattern, force)),
        BranchMap::NotMapped | BranchMap::Refused { .. } => None,
    }
}

/// What `*` in `pattern` stands for in `name`, if `name` matches.
fn glob_capture<'a>(pattern: &str, name: &'a str) -> Option<&'a str> {
    match pattern.split_once('*') {
        None => (pattern == name).then_some(""),
        Some((pre, post)) => name
            .strip_prefix(pre)
            .and_then(|rest| rest.strip_suffix(post)),
    }
}

/// Pure: the remote-tracking branch of session `id` under `pattern` (see
/// [`branch_destination`]).
pub fn tracking_branch(pattern: &str, id: &SessionId) -> String {
    pattern.replacen('*', id.as_str(), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> SessionId {
        s.parse().unwrap()
    }

    #[test]
    fn session_branches_are_mapped_through_the_remotes_fetch_refspecs() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            branch_destination(&s(&["+refs/heads/*:refs/remotes/origin/*"])),
            Some(("refs/remotes/origin/bullpen/*".to_owned(), true))
        );
        assert_eq!(
            branch_destination(&s(&["refs/heads/bullpen/*:refs/remotes/o/b/*"])),
            Some(("refs/remotes/o/b/*".to_owned(), false))
        );
        // A single-branch clone maps none of them.
        assert_eq!(
            branch_destination(&s(&["+refs/heads/main:refs/remotes/origin/main"])),
            None
        );
        assert_eq!(
            branch_destination(&s(&[
                "^refs/heads/bullpen/*",
                "+refs/heads/*:refs/remotes/origin/*"
            ])),
            None
        );
        assert_eq!(
            branch_destination(&s(&["+refs/heads/*-x:refs/remotes/origin/*"])),
            None
        );
        assert_eq!(
            tracking_branch("refs/remotes/origin/bullpen/*", &id("x")),
            "refs/remotes/origin/bullpen/x"
        );
    }

    #[test]
    fn session_branches_are_fetched_only_into_remote_tracking_refs() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let refused = |spec: &str, dst: &str| BranchMap::Refused {
            refspec: spec.to_owned(),
            destination: dst.to_owned(),
        };
        let table: Vec<(Vec<&str>, BranchMap)> = vec![
            // A mirror (`git remote add --mirror=fetch`) and its kin.
            (
                vec!["+refs/*:refs/*"],
                refused("+refs/*:refs/*", "refs/heads/bullpen/*"),
            ),
            (
                vec!["refs/heads/*:refs/heads/*"],
                refused("refs/heads/*:refs/heads/*", "refs/heads/bullpen/*"),
            ),
            (
                vec!["+refs/heads/bullpen/*:refs/bullpen/sessions/*"],
                refused(
                    "+refs/heads/bullpen/*:refs/bullpen/sessions/*",
                    "refs/bullpen/sessions/*",
                ),
            ),
            (
                vec!["+refs/heads/*:refs/notes/*"],
                refused("+refs/heads/*:refs/notes/*", "refs/notes/bullpen/*"),
            ),
            (
                vec!["+refs/heads/*:refs/tags/*"],
                refused("+refs/heads/*:refs/tags/*", "refs/tags/bullpen/*"),
            ),
            // Every other remote's tracking refs would be pruned.
            (
                vec!["+refs/heads/bullpen/*:refs/remotes/*"],
                refused("+refs/heads/bullpen/*:refs/remotes/*", "refs/remotes/*"),
            ),
            (
                vec!["+refs/heads/*:refs/remotes/../heads/*"],
                refused(
                    "+refs/heads/*:refs/remotes/../heads/*",
                    "refs/remotes/../heads/bullpen/*",
                ),
            ),
            // A tracking mapping anywhere in the list is the one used.
            (
                vec![
                    "+refs/*:refs/*",
                    "+refs/heads/bullpen/*:refs/remotes/b/bullpen/*",
                ],
                BranchMap::Tracked("refs/remotes/b/bullpen/*".to_owned(), true),
            ),
            (
                vec!["+refs/*:refs/remotes/b/*"],
                BranchMap::Tracked("refs/remotes/b/heads/bullpen/*".to_owned(), true),
            ),
            // A negative refspec excludes them wherever it stands.
            (
                vec![
                    "+refs/heads/*:refs/remotes/origin/*",
                    "^refs/heads/bullpen/*",
                ],
                BranchMap::NotMapped,
            ),
            (
                vec!["^refs/heads/*", "+refs/*:refs/*"],
                BranchMap::NotMapped,
            ),
            // No destination, an exact refspec, an empty list: none.
            (vec!["refs/heads/*"], BranchMap::NotMapped),
            (vec!["+refs/heads/*:"], BranchMap::NotMapped),
            (
                vec!["refs/heads/bullpen/x:refs/heads/bullpen/x"],
                BranchMap::NotMapped,
            ),
            (vec![], BranchMap::NotMapped),
        ];
        for (specs, want) in table {
            assert_eq!(branch_map(&s(&specs)), want, "{specs:?}");
        }
        assert_eq!(branch_destination(&s(&["+refs/*:refs/*"])), None);
        assert_eq!(
            branch_exclusions(&s(&[
                "+refs/heads/*:refs/remotes/origin/*",
                "^refs/heads/bullpen/big",
                " ^refs/heads/*-wip",
                "^refs/tags/*",
            ])),
            ["^refs/heads/bullpen/big", "^refs/heads/*-wip"]
        );
    }

    #[test]
    fn a_push_never_makes_git_write_this_clones_branches_or_records() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let hit = |spec: &str, dst: &str| Some((spec.to_owned(), dst.to_owned()));
        type Case<'a> = (Vec<&'a str>, Option<(String, String)>);
        let table: Vec<Case> = vec![
            (vec!["+refs/heads/*:refs/remotes/origin/*"], None),
            (
                vec![
                    "+refs/heads/*:refs/remotes/origin/*",
                    "+refs/notes/*:refs/notes/*",
                ],
                None,
            ),
            (
                vec!["+refs/*:refs/*"],
                hit("+refs/*:refs/*", "refs/heads/bullpen/*"),
            ),
            // The first mapping decides, as in git: a mirror before bullpen's own.
            (
                vec![
                    "+refs/*:refs/*",
                    "+refs/heads/bullpen/*:refs/remotes/b/bullpen/*",
                ],
                hit("+refs/*:refs/*", "refs/heads/bullpen/*"),
            ),
            (
                vec!["+refs/heads/*:refs/remotes/o/*", "+refs/*:refs/*"],
                hit("+refs/*:refs/*", "refs/bullpen/sessions/*"),
            ),
            (
                vec!["+refs/bullpen/*:refs/bullpen/*"],
                hit("+refs/bullpen/*:refs/bullpen/*", "refs/bullpen/sessions/*"),
            ),
            (
                vec!["refs/heads/bullpen/x:refs/heads/bullpen/x"],
                hit(
                    "refs/heads/bullpen/x:refs/heads/bullpen/x",
                    "refs/heads/bullpen/x",
                ),
            ),
            (
                vec!["+refs/heads/bullpen/a*:refs/heads/a*"],
                hit("+refs/heads/bullpen/a*:refs/heads/a*", "refs/heads/a*"),
            ),
            (vec!["refs/heads/*", "^refs/heads/bullpen/*"], None),
        ];
        for (specs, want) in table {
            assert_eq!(push_overwrite(&s(&specs)), want, "{specs:?}");
        }
    }
}
