//! Merging two machines' provenance notes on one commit (pure): a union that
//! never drops a text either side wrote.
//!
//! A note is a sequence of paragraphs separated by blank lines: every session
//! that ended on a commit appended one (`bullpen-session: ...`, three lines, no
//! blank line inside), as `git notes append` does. Two machines that annotated
//! the same commit each hold their own paragraphs; the union keeps both, like
//! `git notes merge -s cat_sort_uniq`, but by paragraph rather than by line, so a
//! paragraph stays whole and in the order it was written.

use super::id::SessionId;

/// Pure: whether `refname` is session `id`'s own when telling the commits a
/// run made from others' (`Repo::commits_only_on`): its branch, and a
/// remote-tracking copy of it (`refs/remotes/<remote>/bullpen/<id>`), which a
/// push of the session during the run moves onto the run's own commits.
pub fn session_own_ref(id: &SessionId, refname: &str) -> bool {
    refname == id.branch_ref()
        || refname
            .strip_prefix("refs/remotes/")
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(remote, branch)| !remote.is_empty() && branch == id.branch())
}

/// The union of two texts of the note on one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Union {
    /// `ours` already holds every paragraph of `theirs`: keep it as it is.
    Ours,
    /// `theirs` holds every paragraph of `ours`: take it as it is (so two
    /// machines that merged each other's notes agree byte for byte).
    Theirs,
    /// Each holds paragraphs the other lacks: `ours`, then what only `theirs` has.
    Both(Vec<u8>),
}

/// Pure: the union of `ours` and `theirs`, paragraph by paragraph.
pub fn union(ours: &[u8], theirs: &[u8]) -> Union {
    let mine = paragraphs(ours);
    let other = paragraphs(theirs);
    let missing: Vec<&[u8]> = other
        .iter()
        .filter(|p| !mine.contains(p))
        .copied()
        .collect();
    if missing.is_empty() {
        return Union::Ours;
    }
    if mine.iter().all(|p| other.contains(p)) {
        return Union::Theirs;
    }
    let mut out = Vec::with_capacity(ours.len() + theirs.len() + 2);
    for (i, p) in mine.iter().chain(&missing).enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\n\n");
        }
        out.extend_from_slice(p);
    }
    out.push(b'\n');
    Union::Both(out)
}

/// The paragraphs of a note: runs of lines that are not blank, each without
/// the newline that ends its last line.
fn paragraphs(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut pos = 0;
    for line in text.split_inclusive(|b| *b == b'\n') {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        let blank = content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        if blank {
            if let Some(s) = start.take() {
                out.push(&text[s..end]);
            }
        } else {
            start.get_or_insert(pos);
            end = pos + content.len();
        }
        pos += line.len();
    }
    if let Some(s) = start {
        out.push(&text[s..end]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &[u8] = b"bullpen-session: a\nbullpen-command: claude\nbullpen-exit: exit 0\n";
    const B: &[u8] = b"bullpen-session: b\nbullpen-command: make\nbullpen-exit: exit 1\n";

    #[test]
    fn a_sessions_own_refs_are_its_branch_and_its_remote_tracking_copies() {
        let id: SessionId = "x".parse().unwrap();
        for own in [
            "refs/heads/bullpen/x",
            "refs/remotes/origin/bullpen/x",
            "refs/remotes/build-box/bullpen/x",
        ] {
            assert!(session_own_ref(&id, own), "{own}");
        }
        for other in [
            "refs/heads/main",
            "refs/heads/bullpen/y",
            "refs/heads/bullpen/x-2",
            "refs/heads/feature/bullpen/x",
            "refs/remotes/origin/main",
            "refs/remotes/origin/feature/bullpen/x",
            "refs/remotes/bullpen/x",
            "refs/tags/bullpen/x",
        ] {
            assert!(!session_own_ref(&id, other), "{other}");
        }
    }

    #[test]
    fn both_texts_survive_whole() {
        let Union::Both(merged) = union(A, B) else {
            panic!("expected a union");
        };
        let text = String::from_utf8(merged.clone()).unwrap();
        assert_eq!(
            text,
            "bullpen-session: a\nbullpen-command: claude\nbullpen-exit: exit 0\n\n\
             bullpen-session: b\nbullpen-command: make\nbullpen-exit: exit 1\n"
        );
        // Merging again changes nothing, from either side.
        assert_eq!(union(&merged, B), Union::Ours);
        assert_eq!(union(&merged, A), Union::Ours);
        assert_eq!(union(B, &merged), Union::Theirs);
    }

    #[test]
    fn a_note_that_only_grew_is_taken_as_it_is() {
        let grown = [A, b"\n", B].concat();
        assert_eq!(union(A, &grown), Union::Theirs);
        assert_eq!(union(&grown, A), Union::Ours);
        assert_eq!(union(A, A), Union::Ours);
        // Blank lines and a trailing newline are no new text...
        assert_eq!(union(b"x\n", b"\n\nx"), Union::Ours);
        // ...but a paragraph that differs is, and both stay.
        assert_eq!(
            union(b"x\n\n\ny", b"x\ny"),
            Union::Both(b"x\n\ny\n\nx\ny\n".to_vec())
        );
        assert_eq!(union(b"", A), Union::Theirs);
    }

    #[test]
    fn paragraphs_are_split_on_blank_lines() {
        assert_eq!(paragraphs(b"a\nb\n\n \nc\n"), vec![&b"a\nb"[..], &b"c"[..]]);
        assert_eq!(paragraphs(b"\n\n"), Vec::<&[u8]>::new());
        assert_eq!(paragraphs(b"a"), vec![&b"a"[..]]);
    }
}
