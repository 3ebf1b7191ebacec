//! Sessions that travel with git (pure): remote names, `<remote>/<id>`, the ref
//! namespaces a fetch fills, and the checks a record from another machine must
//! pass before bullpen reads it as one.
//!
//! On the remote, records live where they live locally,
//! `refs/bullpen/sessions/<id>`, and notes in `refs/notes/bullpen`. Here:
//!
//! - `refs/bullpen/incoming/<remote>/sessions/<id>` and `.../notes`: what the
//!   remote had at the last fetch, as git fetched it (never read as a record);
//! - `refs/bullpen/remotes/<remote>/sessions/<id>`: the records that passed the
//!   checks ([`check_shape`], [`check_record`]), which `ls --remote` and `resume
//!   <remote>/<id>` read (and check again: anyone can write a ref).
//!
//! gc, rm, stop and every other command read only `refs/bullpen/sessions/`.

use std::fmt;
use std::str::FromStr;

use super::command::quoted;
use super::id::SessionId;
use super::record::{ParseRecordError, Record};
pub use super::refspec::{
    branch_destination, branch_exclusions, branch_map, push_overwrite, tracking_branch, BranchMap,
};

/// The biggest `session.json` bullpen reads from a remote. Its own records are a
/// few KiB; a command with a long prompt stays far below this.
pub const MAX_RECORD_BYTES: u64 = 256 * 1024;
/// The biggest record commit bullpen reads from a remote: its record (in the
/// message of a commit over the empty tree) and room for its head, parents and
/// signatures.
pub const MAX_RECORD_COMMIT_BYTES: u64 = MAX_RECORD_BYTES + 64 * 1024;
/// The biggest note text bullpen reads to merge two notes on one commit.
pub const MAX_NOTE_BYTES: u64 = 1024 * 1024;
/// The longest host name a record may carry (a DNS name is at most 253).
pub const MAX_HOST_BYTES: usize = 255;

/// The longest base ref name a record may carry.
pub const MAX_REF_BYTES: usize = 1024;

/// The version of the checks below ([`check_shape`], [`check_record`]): change
/// it with them, so that what a cache remembers of their verdicts is not read
/// by a bullpen that checks otherwise.
pub const CHECKS: u32 = 3;

/// Where the checked copies of a remote's records live.
pub const REMOTES_PREFIX: &str = "refs/bullpen/remotes/";
/// Where a fetch puts what the remote has, unchecked.
pub const INCOMING_PREFIX: &str = "refs/bullpen/incoming/";
/// Where a push stages what it sends, for the length of the push.
pub const OUTGOING_PREFIX: &str = "refs/bullpen/outgoing/";

/// The name of a configured git remote, as bullpen accepts it: one ref name
/// component (`[A-Za-z0-9][A-Za-z0-9._-]*`, at most 100 bytes, no `..`, not
/// ending in `.lock` or `.`), so that `<remote>/<id>` and the namespaces above
/// are unambiguous.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RemoteName(String);

impl RemoteName {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `refs/bullpen/remotes/<remote>/sessions/`
    pub fn tracking_prefix(&self) -> String {
        format!("{REMOTES_PREFIX}{}/sessions/", self.0)
    }

    /// `refs/bullpen/remotes/<remote>/sessions/<id>`
    pub fn tracking_ref(&self, id: &SessionId) -> String {
        format!("{}{id}", self.tracking_prefix())
    }

    /// `refs/bullpen/incoming/<remote>/sessions/`
    pub fn incoming_prefix(&self) -> String {
        format!("{INCOMING_PREFIX}{}/sessions/", self.0)
    }

    /// `refs/bullpen/incoming/<remote>/sessions/<id>`
    pub fn incoming_ref(&self, id: &SessionId) -> String {
        format!("{}{id}", self.incoming_prefix())
    }

    /// `refs/bullpen/outgoing/<remote>/`: what a push to it sends, staged so that
    /// one glob refspec per kind sends it all (`<prefix>sessions/<id>`,
    /// `<prefix>heads/bullpen/<id>`).
    pub fn outgoing_prefix(&self) -> String {
        format!("{OUTGOING_PREFIX}{}/", self.0)
    }

    /// `refs/bullpen/incoming/<remote>/notes`: the remote's `refs/notes/bullpen`.
    pub fn incoming_notes_ref(&self) -> String {
        format!("{INCOMING_PREFIX}{}/notes", self.0)
    }
}

impl fmt::Display for RemoteName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct InvalidRemote(String);

impl fmt::Display for InvalidRemote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InvalidRemote {}

impl FromStr for RemoteName {
    type Err = InvalidRemote;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            Err(InvalidRemote(format!(
                "invalid remote name {}: {why} (bullpen takes the name of a configured remote \
                 made of letters, digits, '.', '_' and '-')",
                quoted(s)
            )))
        };
        match s.chars().next() {
            None => return bad("it is empty"),
            Some(c) if !c.is_ascii_alphanumeric() => {
                return bad("it must start with a letter or a digit")
            }
            _ => {}
        }
        if s.len() > 100 {
            return bad("it is longer than 100 characters");
        }
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return bad(&format!("{c:?} is not allowed"));
        }
        if s.contains("..") || s.ends_with(".lock") || s.ends_with('.') {
            return bad("it is not a valid ref name component");
        }
        Ok(RemoteName(s.to_owned()))
    }
}

/// `<remote>/<id>`: a session fetched from a remote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteSession {
    pub remote: RemoteName,
    pub id: SessionId,
}

impl fmt::Display for RemoteSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.remote, self.id)
    }
}

/// What `resume` is given: a local session id, or `<remote>/<id>` (a session
/// id never holds a `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Local(SessionId),
    Remote(RemoteSession),
}

impl FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.rsplit_once('/') {
            None => s.parse().map(Target::Local).map_err(|e| e.to_string()),
            Some((remote, id)) => {
                let remote = remote.parse::<RemoteName>().map_err(|e| e.to_string())?;
                let id = id.parse::<SessionId>().map_err(|e| e.to_string())?;
                Ok(Target::Remote(RemoteSession { remote, id }))
            }
        }
    }
}

/// What a record commit's tree holds, as read from the object database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeEntry {
    pub name: String,
    pub kind: EntryKind,
    /// The blob's size, for a blob.
    pub size: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (mode 100644).
    File,
    /// An executable, a symlink, a tree or a submodule.
    Other,
}

/// Why a record from a remote is not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// The ref's last component is not a session id.
    BadId(String),
    /// The ref does not point at a commit.
    NotACommit(String),
    /// The commit's tree is not exactly one regular file `session.json`, nor
    /// empty with the record in the message.
    Shape(String),
    /// `session.json` is larger than [`MAX_RECORD_BYTES`].
    TooBig(u64),
    /// The commit is larger than [`MAX_RECORD_COMMIT_BYTES`].
    CommitTooBig(u64),
    /// `session.json` does not parse, or has a schema newer than this bullpen's.
    Unreadable(String),
    /// A field says something no record of this session can say.
    Field(String),
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::BadId(why) => f.write_str(why),
            Invalid::NotACommit(what) => write!(f, "it points at {what}, not a record commit"),
            Invalid::Shape(why) => write!(
                f,
                "its tree {why}; a record is the message of a commit over the empty tree, \
                 or the one file of its tree, session.json"
            ),
            Invalid::TooBig(n) => write!(
                f,
                "its session.json is {n} bytes, more than the {MAX_RECORD_BYTES} bullpen reads"
            ),
            Invalid::CommitTooBig(n) => write!(
                f,
                "its commit is {n} bytes, more than the {MAX_RECORD_COMMIT_BYTES} bullpen reads"
            ),
            Invalid::Unreadable(why) => f.write_str(why),
            Invalid::Field(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Invalid {}

/// Pure: the id a ref under `prefix` names, checked.
pub fn ref_id(refname: &str, prefix: &str) -> Result<SessionId, Invalid> {
    let rest = refname.strip_prefix(prefix).unwrap_or(refname);
    rest.parse()
        .map_err(|e: super::id::InvalidId| Invalid::BadId(e.to_string()))
}

/// Pure: a record commit's tree must be exactly one regular file, `session.json`,
/// no bigger than [`MAX_RECORD_BYTES`].
pub fn check_shape(entries: &[TreeEntry]) -> Result<(), Invalid> {
    let names = || {
        entries
            .iter()
            .map(|e| quoted(&e.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match entries {
        [] => Err(Invalid::Shape("is empty".to_owned())),
        [e] if e.name == "session.json" && e.kind == EntryKind::File => match e.size {
            Some(n) if n > MAX_RECORD_BYTES => Err(Invalid::TooBig(n)),
            _ => Ok(()),
        },
        [e] if e.name == "session.json" => Err(Invalid::Shape(
            "holds session.json as something other than a plain file".to_owned(),
        )),
        [_] => Err(Invalid::Shape(format!("holds {} instead", names()))),
        _ => Err(Invalid::Shape(format!(
            "holds {} entries ({})",
            entries.len(),
            names()
        ))),
    }
}

/// Pure: the record in the message of a record commit over the empty tree
/// (`record::in_message`); a message that holds none is the empty tree it is.
pub fn check_message(message: &[u8]) -> Result<&[u8], Invalid> {
    super::record::in_message(message)
        .ok_or_else(|| Invalid::Shape("is empty and its message holds no record".to_owned()))
}

/// Pure: `session.json` of the session `id`, as a record from another machine
/// must read: it parses with a schema this bullpen understands, it is the record
/// of `id` on `bullpen/<id>`, and what `ls --remote` shows of it is plain text.
pub fn check_record(id: &SessionId, bytes: &[u8]) -> Result<Record, Invalid> {
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(Invalid::TooBig(bytes.len() as u64));
    }
    let record = Record::parse(bytes).map_err(|e| match e {
        ParseRecordError::TooNew(_) => Invalid::Unreadable(e.to_string()),
        ParseRecordError::Invalid(_) => Invalid::Unreadable(e.to_string()),
    })?;
    if &record.id != id {
        return Err(Invalid::Field(format!(
            "it holds the record of session {}, not of '{id}'",
            quoted(record.id.as_str())
        )));
    }
    if record.branch != id.branch() {
        return Err(Invalid::Field(format!(
            "it names the branch {}, not {}",
            quoted(&record.branch),
            id.branch()
        )));
    }
    if !plain_name(&record.host, MAX_HOST_BYTES) {
        return Err(Invalid::Field(format!(
            "its host {} is not a plain name of at most {MAX_HOST_BYTES} bytes",
            quoted(&record.host)
        )));
    }
    if let Some(agent) = &record.agent {
        if agent.parse::<super::agent::AgentName>().is_err() {
            return Err(Invalid::Field(format!(
                "its agent {} is not an agent name",
                quoted(agent)
            )));
        }
    }
    if record.base.parse::<super::Oid>().is_err() {
        return Err(Invalid::Field(format!(
            "its base {} is not a commit id",
            quoted(&record.base)
        )));
    }
    if let Some(base_ref) = &record.base_ref {
        let plain_ref = plain_name(base_ref, MAX_REF_BYTES)
            && base_ref.starts_with("refs/")
            && !base_ref.contains("..")
            && !base_ref
                .chars()
                .any(|c| c.is_whitespace() || "~^:?*[\\".contains(c));
        if !plain_ref {
            return Err(Invalid::Field(format!(
                "its base ref {} is not a ref name",
                quoted(base_ref)
            )));
        }
    }
    if let Some(clone) = &record.clone_id {
        if !is_clone_id(clone) {
            return Err(Invalid::Field(format!(
                "its clone id {} is not one bullpen writes",
                quoted(clone)
            )));
        }
    }
    Ok(record)
}

/// Text with no control or unseen characters (`command::is_unseen`), not
/// empty, at most `max` bytes.
fn plain_name(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max && !s.chars().any(super::command::is_unseen)
}

/// A clone id as bullpen writes it: 32 lowercase hex digits.
pub fn is_clone_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// How a record's host is shown: its name, with the clone told apart when
/// names alone would mislead (this clone's own record, or another clone with
/// this machine's host name). A record is `(this clone)` only when `own`: this
/// clone's local proof says it wrote it (see `ls::remote_rows`); one that only
/// carries this clone's id, which anyone can copy, `(claims this clone)`.
pub fn host_label(
    host: &str,
    clone_id: Option<&str>,
    my_host: &str,
    my_clone: Option<&str>,
    own: bool,
) -> String {
    match (clone_id, my_clone) {
        (Some(c), Some(mine)) if c == mine && own => format!("{host} (this clone)"),
        (Some(c), Some(mine)) if c == mine => format!("{host} (claims this clone)"),
        (Some(c), _) if host == my_host => format!("{host} (another clone, {})", &c[..8]),
        (None, _) if host == my_host => format!("{host} (clone not recorded)"),
        _ => host.to_owned(),
    }
}

/// Pure: the patterns of the refs a fetch from `remote` writes, for `git
/// pack-refs --include`: the records as fetched and as checked, and the
/// session branches where `branches` (the destination of the remote's fetch
/// refspec, `refs/remotes/origin/bullpen/*`) puts them, if it is a plain
/// prefix and `*` (git's own glob characters elsewhere would match more).
/// Nothing else of this clone's.
pub fn fetched_namespaces(remote: &RemoteName, branches: Option<&str>) -> Vec<String> {
    let mut patterns = vec![
        format!("{}*", remote.incoming_prefix()),
        format!("{}*", remote.tracking_prefix()),
    ];
    if let Some(prefix) = branches.and_then(|b| b.strip_suffix('*')) {
        if prefix.starts_with("refs/remotes/") && !prefix.contains(['*', '?', '[', '\\']) {
            patterns.push(format!("{prefix}*"));
        }
    }
    patterns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> SessionId {
        s.parse().unwrap()
    }

    #[test]
    fn a_fetch_packs_only_the_refs_it_writes() {
        let o: RemoteName = "origin".parse().unwrap();
        assert_eq!(
            fetched_namespaces(&o, Some("refs/remotes/origin/bullpen/*")),
            [
                "refs/bullpen/incoming/origin/sessions/*",
                "refs/bullpen/remotes/origin/sessions/*",
                "refs/remotes/origin/bullpen/*",
            ]
        );
        for odd in [
            "refs/remotes/origin/bullpen/*-x",
            "refs/remotes/o[r]/bullpen/*",
            "refs/remotes/o?/*",
            "refs/heads/bullpen/*",
        ] {
            assert_eq!(fetched_namespaces(&o, Some(odd)).len(), 2, "{odd}");
        }
        assert_eq!(fetched_namespaces(&o, None).len(), 2);
    }

    #[test]
    fn remote_names_are_one_ref_component() {
        for ok in ["origin", "build-box", "a.b_c", "0"] {
            assert!(ok.parse::<RemoteName>().is_ok(), "{ok}");
        }
        for bad in ["", "-x", ".x", "a/b", "a..b", "x.lock", "x.", "a b", "é"] {
            assert!(bad.parse::<RemoteName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn targets_split_at_the_last_slash() {
        assert_eq!("x".parse::<Target>(), Ok(Target::Local(id("x"))));
        assert_eq!(
            "origin/x".parse::<Target>(),
            Ok(Target::Remote(RemoteSession {
                remote: "origin".parse().unwrap(),
                id: id("x"),
            }))
        );
        assert!("team/alice/x".parse::<Target>().is_err());
        assert!("origin/".parse::<Target>().is_err());
        assert!("/x".parse::<Target>().is_err());
        assert!("origin/X".parse::<Target>().is_err());
    }

    fn file(name: &str, size: u64) -> TreeEntry {
        TreeEntry {
            name: name.into(),
            kind: EntryKind::File,
            size: Some(size),
        }
    }

    #[test]
    fn a_record_tree_holds_session_json_alone_and_small() {
        assert_eq!(check_shape(&[file("session.json", 900)]), Ok(()));
        assert_eq!(
            check_shape(&[file("session.json", MAX_RECORD_BYTES + 1)]),
            Err(Invalid::TooBig(MAX_RECORD_BYTES + 1))
        );
        assert!(matches!(
            check_shape(&[file("session.json", 9), file("payload", 9)]),
            Err(Invalid::Shape(_))
        ));
        assert!(matches!(check_shape(&[]), Err(Invalid::Shape(_))));
        assert!(matches!(
            check_shape(&[file("other.json", 9)]),
            Err(Invalid::Shape(_))
        ));
        let link = TreeEntry {
            kind: EntryKind::Other,
            ..file("session.json", 9)
        };
        assert!(matches!(check_shape(&[link]), Err(Invalid::Shape(_))));
    }

    fn json(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let mut v = serde_json::json!({
            "schema": 1, "id": "x", "branch": "bullpen/x", "worktree": "/w/x",
            "base": "0123456789abcdef0123456789abcdef01234567", "command": ["claude"], "state": "running", "host": "laptop",
            "created_at": "t", "updated_at": "t",
        });
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn a_record_must_be_the_sessions_own_and_plain() {
        assert!(check_record(&id("x"), &json(|_| {})).is_ok());
        assert!(check_record(
            &id("x"),
            &json(|v| {
                v["agent"] = "claude".into();
                v["base_ref"] = "refs/heads/main".into();
            })
        )
        .is_ok());
        type Edit = Box<dyn Fn(&mut serde_json::Value)>;
        let refused: Vec<(&str, Edit)> = vec![
            ("another id", Box::new(|v| v["id"] = "y".into())),
            ("an invalid id", Box::new(|v| v["id"] = "../y".into())),
            ("another branch", Box::new(|v| v["branch"] = "main".into())),
            ("a newer schema", Box::new(|v| v["schema"] = 99.into())),
            (
                "no state",
                Box::new(|v| v["state"] = serde_json::Value::Null),
            ),
            (
                "escapes in the host",
                Box::new(|v| v["host"] = "a\u{1b}[2J".into()),
            ),
            (
                "a right-to-left override in the host",
                Box::new(|v| v["host"] = "box\u{202e}lanimret".into()),
            ),
            ("an empty host", Box::new(|v| v["host"] = "".into())),
            (
                "a long host",
                Box::new(|v| v["host"] = "h".repeat(300).into()),
            ),
            ("no agent name", Box::new(|v| v["agent"] = "../x".into())),
            (
                "a base no commit id",
                Box::new(|v| v["base"] = "HEAD".into()),
            ),
            (
                "a base ref no ref name",
                Box::new(|v| v["base_ref"] = "refs/heads/a\u{1b}[2J".into()),
            ),
            (
                "a base ref outside refs/",
                Box::new(|v| v["base_ref"] = "main".into()),
            ),
            (
                "a forged clone id",
                Box::new(|v| v["clone_id"] = "x\ny".into()),
            ),
        ];
        for (what, edit) in refused {
            assert!(check_record(&id("x"), &json(edit)).is_err(), "{what}");
        }
        assert!(check_record(&id("x"), b"{").is_err());
        let big = vec![b' '; MAX_RECORD_BYTES as usize + 1];
        assert_eq!(
            check_record(&id("x"), &big),
            Err(Invalid::TooBig(MAX_RECORD_BYTES + 1))
        );
    }

    #[test]
    fn hosts_are_told_apart_by_clone_not_by_name() {
        let a = "0123456789abcdef0123456789abcdef";
        let b = "fedcba9876543210fedcba9876543210";
        assert_eq!(
            host_label("box", Some(a), "box", Some(a), true),
            "box (this clone)"
        );
        // This clone's id without this clone's proof: a copy, or a forgery.
        assert_eq!(
            host_label("box", Some(a), "box", Some(a), false),
            "box (claims this clone)"
        );
        assert_eq!(
            host_label("laptop", Some(a), "box", Some(a), false),
            "laptop (claims this clone)"
        );
        assert_eq!(
            host_label("box", Some(b), "box", Some(a), false),
            "box (another clone, fedcba98)"
        );
        assert_eq!(
            host_label("laptop", Some(b), "box", Some(a), false),
            "laptop"
        );
        assert_eq!(
            host_label("box", None, "box", Some(a), false),
            "box (clone not recorded)"
        );
        assert!(is_clone_id(a) && !is_clone_id("A123") && !is_clone_id(&a[1..]));
    }
}
