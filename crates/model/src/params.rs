//! The configuration `git -c <key>=<value>` hands to the commands it runs, in
//! `GIT_CONFIG_PARAMETERS`, parsed the way git's `config.c` reads it back
//! (`parse_config_env_list`, with `quote.c`'s `sq_dequote_step`).
//!
//! git writes each entry as `'<key>'='<value>'` (since 2.31; `'<key>'=` for
//! `git -c <key>`, a boolean true), separated by spaces, every part in
//! single quotes with `'` and `!` written as `'\''` and `'\!'`. Older gits
//! wrote `'<key>=<value>'`, split at the first `=`; both forms are read.

use std::fmt;

/// One `git -c` entry: the key as given, and its value (`None`: the key alone,
/// which git reads as boolean true).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameter {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

/// Why `GIT_CONFIG_PARAMETERS` could not be read, in git's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadParameters(String);

impl fmt::Display for BadParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadParameters {}

const VAR: &str = "GIT_CONFIG_PARAMETERS";

fn bogus() -> BadParameters {
    BadParameters(format!("bogus format in {VAR}"))
}

/// C's `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// git's `sq_dequote_step`: `s` must start with `'`. Returns the unquoted text
/// and what follows it (`None` at the end of the input); `None` when the
/// quoting is broken.
fn sq_dequote_step(s: &[u8]) -> Option<(Vec<u8>, Option<&[u8]>)> {
    if s.first() != Some(&b'\'') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let c = *s.get(i)?;
        if c != b'\'' {
            out.push(c);
            i += 1;
            continue;
        }
        // Out of the quotes: the end, `'\''`/`'\!'` (a quote or a `!` between
        // two quoted parts), or the rest of the input.
        i += 1;
        match s.get(i) {
            None => return Some((out, None)),
            Some(b'\\')
                if matches!(s.get(i + 1), Some(b'\'' | b'!')) && s.get(i + 2) == Some(&b'\'') =>
            {
                out.push(s[i + 1]);
                i += 3;
            }
            Some(_) => return Some((out, Some(&s[i..]))),
        }
    }
}

/// Check a key as git's `git_config_parse_key` does: a section and a name
/// around the dots, each of letters, digits and `-`, the name starting with a
/// letter (a subsection between them may hold anything but a newline).
fn check_key(key: &[u8]) -> Result<(), BadParameters> {
    let shown = String::from_utf8_lossy(key);
    let (Some(first_dot), Some(last_dot)) = (
        key.iter().position(|b| *b == b'.'),
        key.iter().rposition(|b| *b == b'.'),
    ) else {
        return Err(BadParameters(format!(
            "key does not contain a section: {shown}"
        )));
    };
    if last_dot == 0 {
        return Err(BadParameters(format!(
            "key does not contain a section: {shown}"
        )));
    }
    let name = &key[last_dot + 1..];
    if name.is_empty() {
        return Err(BadParameters(format!(
            "key does not contain variable name: {shown}"
        )));
    }
    let is_key_char = |b: &u8| b.is_ascii_alphanumeric() || *b == b'-';
    let subsection_ok = !key[first_dot..last_dot].contains(&b'\n');
    if !key[..first_dot].iter().all(is_key_char)
        || !name.iter().all(is_key_char)
        || !name[0].is_ascii_alphabetic()
        || !subsection_ok
    {
        return Err(BadParameters(format!("invalid key: {shown}")));
    }
    Ok(())
}

fn parameter(key: Vec<u8>, value: Option<Vec<u8>>) -> Result<Parameter, BadParameters> {
    if key.is_empty() {
        return Err(BadParameters("empty config key".into()));
    }
    check_key(&key)?;
    Ok(Parameter { key, value })
}

/// The entries of `GIT_CONFIG_PARAMETERS`, in order (a later one wins, as in git).
pub fn parse(text: &[u8]) -> Result<Vec<Parameter>, BadParameters> {
    let mut out = Vec::new();
    let mut cur: Option<&[u8]> = Some(text);
    while let Some(rest) = cur.filter(|r| !r.is_empty()) {
        let (key, after) = sq_dequote_step(rest).ok_or_else(bogus)?;
        cur = match after {
            // Old style: 'key=value', split at the first `=`.
            None => None,
            Some(a) if is_space(a[0]) => Some(a),
            Some(a) if a[0] == b'=' => {
                // New style: 'key'='value', or 'key'= for a boolean.
                let a = &a[1..];
                let (value, next) = match a.first() {
                    Some(b'\'') => {
                        let (value, next) = sq_dequote_step(a).ok_or_else(bogus)?;
                        if next.is_some_and(|n| !is_space(n[0])) {
                            return Err(bogus());
                        }
                        (Some(value), next)
                    }
                    None => (None, None),
                    Some(b) if is_space(*b) => (None, Some(a)),
                    Some(_) => return Err(bogus()),
                };
                out.push(parameter(key, value)?);
                cur = next.map(trim_start);
                continue;
            }
            Some(_) => return Err(bogus()),
        };
        match key.iter().position(|b| *b == b'=') {
            Some(eq) => out.push(parameter(key[..eq].to_vec(), Some(key[eq + 1..].to_vec()))?),
            None => out.push(parameter(key, None)?),
        }
        cur = cur.map(trim_start);
    }
    Ok(out)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| is_space(**b)).count();
    &s[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: &str, value: Option<&str>) -> Parameter {
        Parameter {
            key: key.into(),
            value: value.map(Into::into),
        }
    }

    #[test]
    fn what_git_writes_for_dash_c() {
        // What git 2.47 sets for `git -c a.b=1 -c "c.d=it's" -c e.f -c g.h= -c 'x.y=a!b'`.
        let text = r#"'a.b'='1' 'c.d'='it'\''s' 'e.f'= 'g.h'='' 'x.y'='a'\!'b'"#;
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            [
                p("a.b", Some("1")),
                p("c.d", Some("it's")),
                p("e.f", None),
                p("g.h", Some("")),
                p("x.y", Some("a!b")),
            ]
        );
    }

    #[test]
    fn values_keep_spaces_equals_and_newlines() {
        let text = "'bullpen.command'='sh -c \"echo a=b\"\n' 'url.x=y.insteadOf'='z'";
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            [
                p("bullpen.command", Some("sh -c \"echo a=b\"\n")),
                p("url.x=y.insteadOf", Some("z")),
            ]
        );
    }

    #[test]
    fn the_old_form_splits_at_the_first_equals() {
        let text = "'a.b=c=d'  'e.f'\t'g.h'=";
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            [p("a.b", Some("c=d")), p("e.f", None), p("g.h", None)]
        );
        assert_eq!(parse(b"").unwrap(), []);
        assert_eq!(parse(b"   ").unwrap_err(), bogus());
    }

    #[test]
    fn broken_quoting_and_bad_keys_are_refused_as_git_does() {
        for bad in [
            "a.b=1",
            "'a.b",
            "'a.b'x",
            "'a.b'='1'x",
            "'a.b'=1",
            "'a.b'\\'",
        ] {
            assert_eq!(parse(bad.as_bytes()), Err(bogus()), "{bad}");
        }
        let err = |t: &str| parse(t.as_bytes()).unwrap_err().to_string();
        assert_eq!(err("'ab'='1'"), "key does not contain a section: ab");
        assert_eq!(err("'.ab'='1'"), "key does not contain a section: .ab");
        assert_eq!(err("'a.'='1'"), "key does not contain variable name: a.");
        assert_eq!(err("'a.1b'='1'"), "invalid key: a.1b");
        assert_eq!(err("'a_b.c'='1'"), "invalid key: a_b.c");
        assert_eq!(err("'=x'"), "empty config key");
        // A subsection may hold anything but a newline.
        assert!(parse(b"'a.B C_!.d'='1'").is_ok());
        assert_eq!(err("'a.b\nc.d'='1'"), "invalid key: a.b\nc.d");
    }
}
