//! Who uses a directory, as plain data: the answer of one `/proc` scan
//! (`sys::procfs::scan`) for one directory, which gc's plan consumes.

use std::fmt;

/// How a process uses a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    Cwd,
    OpenFile,
    Root,
    Exe,
}

impl Use {
    fn describe(self) -> &'static str {
        match self {
            Use::Cwd => "has its current directory in it",
            Use::OpenFile => "has a file open in it",
            Use::Root => "has its root in it",
            Use::Exe => "runs a program from it",
        }
    }
}

/// One process using a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub pid: u32,
    /// `/proc/<pid>/comm`, empty when unknown.
    pub name: String,
    pub how: Use,
}

impl fmt::Display for User {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            write!(f, "pid {} {}", self.pid, self.how.describe())
        } else {
            write!(
                f,
                "pid {} ({}) {}",
                self.pid,
                self.name,
                self.how.describe()
            )
        }
    }
}

/// The answer for one directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Busy {
    Idle,
    /// At least one process uses it (one entry per process, the first use found).
    InUse(Vec<User>),
    /// Processes could not be inspected at all; the reason.
    CannotTell(String),
}

/// "pid 7 (sleep) has its current directory in it, pid 9 ..."
pub fn describe_users(users: &[User]) -> String {
    users
        .iter()
        .map(|u| u.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
