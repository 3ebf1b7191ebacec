//! gc's report: one entry per thing gc looked at, what happened to it and why;
//! rendered as lines for people or as JSON.

use std::io::Write;

use serde::Serialize;

use super::plan::{Branch, Decision, Reason, Via};
use crate::model::{Dirt, Evidence, Ignored, Oid, SessionId};
use crate::ui::Ui;

/// What happened to one thing gc looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Removed,
    Collected,
    Pruned,
    Kept,
    Degraded,
    /// A collected record older than `bullpen.gc.expire`, deleted.
    Expired,
}

impl Action {
    pub fn words(self, dry_run: bool) -> &'static str {
        match (self, dry_run) {
            (Action::Removed, false) => "removed",
            (Action::Collected, false) => "collected",
            (Action::Pruned, false) => "pruned",
            (Action::Kept, false) => "kept",
            (Action::Degraded, false) => "degraded",
            (Action::Expired, false) => "expired",
            (Action::Removed, true) => "would remove",
            (Action::Collected, true) => "would collect",
            (Action::Pruned, true) => "would prune",
            (Action::Kept, true) => "would keep",
            (Action::Degraded, true) => "would fail",
            (Action::Expired, true) => "would expire",
        }
    }
}

/// One line of the report, also the JSON object. Keys are a compatibility
/// surface: add, never rename or remove.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// `session`, `worktree-entry`, `orphan`, `tmpdir` or `record`.
    pub kind: &'static str,
    pub id: Option<String>,
    pub action: Action,
    pub reason: String,
    pub worktree: Option<String>,
    pub branch: Option<String>,
    pub hint: Option<String>,
    pub dry_run: bool,
    /// How the session's work is published, when it is: `{how, ref, commit,
    /// since, description, landings}` (`how`: `reachable`, `squash-merged`,
    /// `rebased`; `landings`: `[{commit, on}]`, each session commit and the
    /// commit of `ref` that holds its change).
    #[serde(serialize_with = "published_json")]
    pub published: Option<Evidence>,
    /// What went (or would go) with a removed worktree that was not work:
    /// `{files, bytes}`, when anything.
    #[serde(serialize_with = "ignored_json")]
    pub ignored: Option<Ignored>,
    /// The directory itself, for a `tmpdir` (a sandboxed run's private
    /// `TMPDIR` bullpen left alone).
    pub path: Option<String>,
}

fn published_json<S: serde::Serializer>(e: &Option<Evidence>, s: S) -> Result<S::Ok, S::Error> {
    match e {
        None => s.serialize_none(),
        Some(e) => {
            let since = match e {
                Evidence::Squashed { since, .. } | Evidence::Rebased { since, .. } => {
                    Some(since.as_str())
                }
                Evidence::Reachable { .. } => None,
            };
            serde_json::json!({
                "how": e.how(),
                "ref": e.on(),
                "commit": e.commit().map(|c| c.to_string()),
                "since": since,
                "description": e.words(),
                "landings": landings_json(e),
            })
            .serialize(s)
        }
    }
}

/// Each session commit the proof by content covers, and the commit of the
/// integration ref that holds its change.
pub fn landings_json(e: &Evidence) -> serde_json::Value {
    e.landings()
        .iter()
        .map(|l| serde_json::json!({"commit": l.commit.to_string(), "on": l.on.to_string()}))
        .collect()
}

fn ignored_json<S: serde::Serializer>(i: &Option<Ignored>, s: S) -> Result<S::Ok, S::Error> {
    match i {
        None => s.serialize_none(),
        Some(i) => {
            serde_json::json!({"files": i.files, "bytes": i.bytes, "caches": i.caches}).serialize(s)
        }
    }
}

pub fn subject(e: &Entry) -> String {
    match e.kind {
        "worktree-entry" => format!("worktree entry {}", e.id.as_deref().unwrap_or("?")),
        "orphan" => e.worktree.clone().unwrap_or_default(),
        "tmpdir" => e.path.clone().unwrap_or_default(),
        _ => e.id.clone().unwrap_or_default(),
    }
}

/// The human report: one line per thing, `<action> <subject>: <reason>`.
pub fn render(out: &mut dyn Write, entries: &[Entry], dry_run: bool) -> std::io::Result<()> {
    let width = entries
        .iter()
        .map(|e| e.action.words(dry_run).len())
        .max()
        .unwrap_or(0);
    for e in entries {
        writeln!(
            out,
            "{:<width$}  {}: {}",
            e.action.words(dry_run),
            subject(e),
            e.reason
        )?;
    }
    Ok(())
}

pub fn summary(ui: &Ui, entries: &[Entry], dry_run: bool) {
    if entries.is_empty() {
        ui.info("gc: nothing to do");
        return;
    }
    let mut parts = Vec::new();
    for action in [
        Action::Removed,
        Action::Collected,
        Action::Pruned,
        Action::Kept,
        Action::Degraded,
        Action::Expired,
    ] {
        let n = entries.iter().filter(|e| e.action == action).count();
        if n > 0 {
            parts.push(format!("{n} {}", action.words(false)));
        }
    }
    let head = if dry_run {
        "gc --dry-run (nothing changed), would be"
    } else {
        "gc"
    };
    ui.info(format!("{head}: {}", parts.join(", ")));
}

/// "published (reachable from origin/bullpen/x), clean and idle; and 3 ignored
/// files, 80 KiB".
/// (`dry_run`: in the words of what would happen.)
pub fn removed_reason(
    via: Via,
    evidence: Option<&Evidence>,
    ignored: Option<&Ignored>,
    dry_run: bool,
) -> String {
    let published = match evidence {
        Some(e) => format!("published ({})", e.words()),
        // Only a branch that holds no commit of its own (an interrupted
        // spawn's, at its base) goes without evidence.
        None => "holds no commit of its own".to_owned(),
    };
    let mut reason = match via {
        Via::GitWorktreeRemove => format!("{published}, clean and idle"),
        Via::AdminEntryGone => {
            format!("{published}, clean and idle (its worktree entry was already gone)")
        }
        Via::FinishTeardown if dry_run => {
            "would finish the removal an earlier gc started".to_owned()
        }
        Via::FinishTeardown => "finished the removal an earlier gc started".to_owned(),
    };
    if let Some(words) = ignored.and_then(Ignored::words) {
        reason.push_str("; and ");
        reason.push_str(&words);
    }
    reason
}

pub fn collected_reason(tip: Option<Oid>, evidence: Option<&Evidence>) -> String {
    match (tip, evidence) {
        (Some(_), Some(e)) => format!(
            "the worktree is gone and the branch is published ({})",
            e.words()
        ),
        (Some(_), None) => {
            "the worktree is gone and the branch holds no commit of its own".to_owned()
        }
        (None, _) => "the worktree and the branch are already gone".to_owned(),
    }
}

/// `forced: discarded `, or in a dry run `forced: would discard `.
pub fn forced(dry_run: bool) -> &'static str {
    match dry_run {
        true => "forced: would discard ",
        false => "forced: discarded ",
    }
}

/// `rm --force`: the entry's reason says what the removal discards (`reason`,
/// gc's own words, when it discards nothing).
pub fn discarded_reason(
    reason: String,
    branch: &Branch,
    dirt: Option<&Dirt>,
    branch_name: &str,
    dry_run: bool,
) -> String {
    let mut parts = Vec::new();
    if let Branch::Unpublished { ahead, found, .. } = branch {
        parts.push(
            Reason::Unpublished {
                ahead: *ahead,
                found: found.clone(),
            }
            .describe(branch_name),
        );
    }
    if let Some(d) = dirt.filter(|d| !d.is_clean()) {
        parts.push(Reason::Dirty(d.clone()).describe(branch_name));
    }
    if parts.is_empty() {
        reason
    } else {
        format!("{}{}", forced(dry_run), parts.join(", "))
    }
}

/// `rm`: what to do about a session it kept (`forced`: what `rm --force` would
/// decide).
pub fn rm_hint(
    id: &SessionId,
    reasons: &[Reason],
    force: bool,
    forced: &Decision,
) -> Option<String> {
    if reasons
        .iter()
        .any(|r| matches!(r, Reason::LeftBehind { .. }))
    {
        return Some(format!(
            "its run left processes behind: end them with `git bullpen stop {id}`, then rm it"
        ));
    }
    if reasons
        .iter()
        .any(|r| matches!(r, Reason::Alive { .. } | Reason::AliveUnknown))
    {
        return Some(format!(
            "it is running: stop it first (`git bullpen stop {id}`), then rm it"
        ));
    }
    // Kept under --force too, unless only for facts not gathered yet (what
    // nothing but --force would have asked for).
    let forced_keeps = matches!(forced, Decision::Keep(r) if !r.iter().all(|x| {
        matches!(x, Reason::StatusNotChecked | Reason::NestedNotChecked)
    }));
    match forced {
        _ if forced_keeps => None,
        _ if !force => Some(format!(
            "`git bullpen rm --force {id}` removes it anyway, discarding that work"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(action: Action, id: &str, reason: &str) -> Entry {
        Entry {
            kind: "session",
            id: Some(id.into()),
            action,
            reason: reason.into(),
            worktree: None,
            branch: None,
            hint: None,
            dry_run: false,
            published: None,
            ignored: None,
            path: None,
        }
    }

    #[test]
    fn report_lines() {
        let entries = [
            e(Action::Removed, "a", "published, clean and idle"),
            e(Action::Kept, "bb", "2 commits not on any remote"),
        ];
        let mut out = Vec::new();
        render(&mut out, &entries, false).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "removed  a: published, clean and idle\nkept     bb: 2 commits not on any remote\n"
        );
        let mut out = Vec::new();
        render(&mut out, &entries, true).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .starts_with("would remove  a: published"));
    }
}
