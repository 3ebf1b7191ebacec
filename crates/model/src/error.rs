//! Errors people act on: a kind that decides the exit status, the message, and
//! hints as data, printed the way git prints them (`hint: ...` lines after the
//! error). Library code returns `anyhow::Result` as before; where it knows the
//! kind or has a hint, it returns (or wraps) an [`Error`], and `main` finds it
//! anywhere in the chain with [`classify`].

use std::fmt;

/// What kind of failure it is; decides the exit status (see [`Kind::status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bad input that the argument parser could not catch: 129, like git's usage errors.
    Usage,
    /// bullpen could not do what was asked: 128, like git's `fatal:`.
    Failed,
    /// bullpen refused, to keep work or processes that may not be its own safe
    /// (an occupied path, an untrusted record, unpublished work): nothing was
    /// changed. Exit 3.
    Refused,
}

impl Kind {
    /// The process exit status for this kind of failure.
    pub fn status(self) -> u8 {
        match self {
            Kind::Usage => 129,
            Kind::Failed => 128,
            Kind::Refused => 3,
        }
    }
}

/// A failure with a kind and hints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: Kind,
    message: String,
    hints: Vec<String>,
}

impl Error {
    pub fn new(kind: Kind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    pub fn failed(message: impl Into<String>) -> Error {
        Error::new(Kind::Failed, message)
    }

    pub fn refused(message: impl Into<String>) -> Error {
        Error::new(Kind::Refused, message)
    }

    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(Kind::Usage, message)
    }

    /// Add a `hint:` line (without the prefix).
    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hints.push(hint.into());
        self
    }

    /// Add several hints.
    pub fn hints(mut self, hints: impl IntoIterator<Item = String>) -> Error {
        self.hints.extend(hints);
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn hint_lines(&self) -> &[String] {
        &self.hints
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A git command that failed: what ran, how it ended, and what git said on
/// stderr. Shown whole in reports (its `Display`); at the top of an error,
/// `Ui::error` (in the binary) prints git's own words first, as they came, and
/// then bullpen's line with the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitFailed {
    /// `git <args>` as run.
    pub argv: String,
    /// Its exit code; `None`: killed by a signal.
    pub code: Option<i32>,
    /// git's stderr, trimmed at the end.
    pub stderr: String,
}

impl GitFailed {
    /// `exit 128`, `killed by a signal`.
    pub fn status(&self) -> String {
        match self.code {
            Some(code) => format!("exit {code}"),
            None => "killed by a signal".to_owned(),
        }
    }

    /// The line without git's stderr: "`git ...` failed (exit 1)".
    pub fn summary(&self) -> String {
        format!("`{}` failed ({})", self.argv, self.status())
    }

    /// Exit 1 without a word: how `git check-ignore` says "none of these".
    pub fn none_matched(&self) -> bool {
        self.code == Some(1) && self.stderr.is_empty()
    }
}

impl fmt::Display for GitFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stderr.is_empty() {
            true => f.write_str(&self.summary()),
            false => write!(f, "{}: {}", self.summary(), self.stderr),
        }
    }
}

impl std::error::Error for GitFailed {}

/// The kind of an error and its hints: the innermost [`Error`] in the chain
/// decides the kind (an untyped error is [`Kind::Failed`]); hints come from
/// every [`Error`] in the chain, outermost first, without repeats.
pub fn classify(err: &anyhow::Error) -> (Kind, Vec<String>) {
    // The chain yields the root error as itself; a typed error given as
    // `.context(..)` is found only by anyhow's own downcast (the outermost one).
    let mut typed: Vec<&Error> = err
        .chain()
        .filter_map(|e| e.downcast_ref::<Error>())
        .collect();
    if let Some(outer) = err.downcast_ref::<Error>() {
        if !typed.iter().any(|t| std::ptr::eq(*t, outer)) {
            typed.insert(0, outer);
        }
    }
    let kind = typed.last().map_or(Kind::Failed, |e| e.kind);
    let mut hints: Vec<String> = Vec::new();
    for h in typed.iter().flat_map(|e| &e.hints) {
        if !hints.contains(h) {
            hints.push(h.clone());
        }
    }
    (kind, hints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_kind_decides_and_hints_are_gathered() {
        let inner = Error::refused("occupied").hint("move it aside");
        let err = anyhow::Error::new(inner)
            .context(Error::failed("cannot resume").hint("see ls"))
            .context("plain context");
        let (kind, hints) = classify(&err);
        assert_eq!(kind, Kind::Refused);
        assert_eq!(hints, ["see ls", "move it aside"]);
        assert_eq!(format!("{err:#}"), "plain context: cannot resume: occupied");
    }

    #[test]
    fn untyped_errors_are_failures() {
        let (kind, hints) = classify(&anyhow::anyhow!("boom"));
        assert_eq!((kind, hints.len()), (Kind::Failed, 0));
        assert_eq!(Kind::Usage.status(), 129);
        assert_eq!(Kind::Failed.status(), 128);
        assert_eq!(Kind::Refused.status(), 3);
    }
}
