//! "Did you mean": the names closest to one that matched nothing, as git
//! suggests commands for a mistyped one (`help.autocorrect`'s list).

/// Pure: the candidates nearest to `word` by edit distance (a swap of two
/// neighbours counts once), all those at the least distance, provided it is
/// small for the word's length (at most a third of it, and at least one); none
/// when `word` is itself a candidate.
pub fn similar<'a>(word: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    if candidates.contains(&word) {
        return Vec::new();
    }
    let limit = (word.chars().count() / 3).max(1);
    let scored: Vec<(usize, &str)> = candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    let Some(best) = scored.iter().map(|(d, _)| *d).min() else {
        return Vec::new();
    };
    let mut out: Vec<&str> = scored
        .into_iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, c)| c)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Pure: the hint for what [`similar`] found: `did you mean 'fix-login'?`, or
/// `did you mean one of 'a', 'b'?`; `None` when nothing is near.
pub fn did_you_mean(word: &str, candidates: &[&str]) -> Option<String> {
    let near = similar(word, candidates);
    let quoted: Vec<String> = near.iter().map(|c| format!("'{c}'")).collect();
    match quoted.as_slice() {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        many => Some(format!("did you mean one of {}?", many.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested_far_ones_never() {
        let ids = ["fix-login", "fix-logout", "tests"];
        assert_eq!(
            did_you_mean("fix-logn", &ids).as_deref(),
            Some("did you mean 'fix-login'?")
        );
        assert_eq!(
            did_you_mean("fix-logon", &ids).as_deref(),
            Some("did you mean 'fix-login'?")
        );
        assert_eq!(
            did_you_mean("run-c", &["run-a", "run-b"]).as_deref(),
            Some("did you mean one of 'run-a', 'run-b'?")
        );
        assert_eq!(
            did_you_mean("tsets", &ids).as_deref(),
            Some("did you mean 'tests'?")
        );
        assert_eq!(did_you_mean("docs", &ids), None);
        assert_eq!(did_you_mean("tests", &ids), None);
        assert_eq!(
            did_you_mean("cluade", &["claude", "codex"]).as_deref(),
            Some("did you mean 'claude'?")
        );
        assert_eq!(did_you_mean("x", &[]), None);
    }
}
