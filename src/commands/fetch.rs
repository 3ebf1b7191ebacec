//! `git bullpen fetch`: a remote's sessions (records, notes, session branches),
//! checked, into their own namespace (see `crate::remote`).

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::git::NotesMerge;
use crate::model::command::escaped;
use crate::model::remote::{RemoteName, MAX_NOTE_BYTES};
use crate::model::SessionId;
use crate::remote::{fetch, resolve, Fetched};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # from the remote git would fetch from
  git bullpen fetch
  git bullpen fetch build-box && git bullpen ls --remote=build-box
  git bullpen resume origin/fix-login -- claude --continue

Fetches what `git bullpen push` sent to the remote from other machines: their records \
into refs/bullpen/remotes/<remote>/sessions/<id> (never over this repository's own \
refs/bullpen/sessions/, which only this clone writes), their provenance notes merged \
into refs/notes/bullpen (a union: a commit annotated on two machines keeps both texts), \
and the session branches where the remote's own fetch refspecs put them \
(refs/remotes/<remote>/bullpen/<id> with git's default), as `git fetch --prune` would. \
Nothing is configured. Nothing else is written: a remote whose refspecs would put the \
branches outside refs/remotes/ (a mirror's +refs/*:refs/* puts them on this clone's own \
branches, and --prune would delete them) is refused, naming the refspec. A note \
over 1 MiB is skipped with a warning.

Every record is checked before it is taken: its id, that its commit holds the record in \
its message over the empty tree, or session.json alone in its tree, at most 256 KiB (the \
commit at most 320 KiB), a schema this bullpen reads, the record of that session. One \
that fails is named with the reason and skipped (the copy fetched before, if any, \
stays); the others arrive. What the remote has, as git fetched it, stays under \
refs/bullpen/incoming/<remote>/. A fetch that wrote 64 refs or more leaves those it \
wrote packed (git pack-refs --include of these namespaces and the branches'; no other \
ref), so that later fetches and listings read one file.

When this clone's record of a session and the remote's both moved on from a common \
event, this clone's is the later and its branch is the remote's or a fast-forward of \
it, the two are joined in a record commit with both as parents (this clone's record, \
both histories in its log), as `git bullpen push` would.

Fetched sessions are only ever listed (`git bullpen ls --remote`) and continued as a \
new local session (`git bullpen resume <remote>/<id>`): nothing in them makes this \
machine signal a process, run a command or delete anything.

Exits 1 when a record was refused or the notes could not be merged.";

/// Fetch a remote's sessions, checked, and merge its notes.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The remote (default: the one `git fetch` uses: the only remote, or origin).
    #[arg(value_name = "REMOTE", add = clap_complete::ArgValueCandidates::new(crate::complete::remote_candidates))]
    pub remote: Option<RemoteName>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let remote = resolve(&ctx, args.remote.as_ref(), false)?;
    let fetched = fetch(&ctx, &remote)?;
    Ok(report(ui, &fetched, true))
}

/// Say what a fetch brought (`summary`: the counts too; push says only what
/// went wrong). The exit status: 1 when something was refused.
pub fn report(ui: &Ui, f: &Fetched, summary: bool) -> i32 {
    let remote = &f.remote;
    for (refname, why) in &f.refused {
        // The ref's name is the remote's: git allows what would reorder the line.
        ui.warn(format!("skipping {remote}'s {}: {why}", escaped(refname)));
    }
    if summary {
        let mut parts = Vec::new();
        for (what, ids) in [("new", &f.new), ("updated", &f.updated), ("gone", &f.gone)] {
            if !ids.is_empty() {
                parts.push(format!("{what} {}", names(ids)));
            }
        }
        if f.unchanged > 0 {
            parts.push(format!("{} unchanged", f.unchanged));
        }
        if parts.is_empty() {
            ui.info(format!("no sessions on {remote}"));
        } else {
            ui.info(format!("sessions from {remote}: {}", parts.join("; ")));
        }
    }
    for id in &f.joined {
        ui.info(format!(
            "joined session {id}'s record with {remote}'s: both histories are in `git log {}`",
            id.record_ref()
        ));
    }
    if let Ok(Some(NotesMerge::Merged { skipped, .. })) = &f.notes {
        for s in skipped {
            ui.warn(format!(
                "skipping {remote}'s note on {}: it is {} bytes, more than the \
                 {MAX_NOTE_BYTES} bullpen merges; this clone's notes keep what they had \
                 ({remote}'s stays in their history)",
                s.commit, s.bytes
            ));
        }
    }
    let notes_failed = match &f.notes {
        Err(why) => {
            ui.warn(format!("the notes of {remote} were not merged: {why}"));
            true
        }
        Ok(Some(NotesMerge::Merged { added, united, .. })) if summary => {
            ui.info(format!(
                "notes from {remote} merged into refs/notes/bullpen ({added} commits annotated \
                 only there, {united} annotated on both)"
            ));
            false
        }
        Ok(Some(NotesMerge::FastForward)) if summary => {
            ui.info(format!("notes from {remote} taken into refs/notes/bullpen"));
            false
        }
        Ok(_) => false,
    };
    if summary && f.branches.is_none() {
        ui.hint(format!(
            "{remote}'s fetch refspecs do not bring its bullpen/* branches (a single-branch \
             clone?): to continue its sessions here, `git config --add remote.{remote}.fetch \
             '+refs/heads/bullpen/*:refs/remotes/{remote}/bullpen/*'`"
        ));
    }
    i32::from(!f.refused.is_empty() || notes_failed)
}

/// `a, b, c`, or `1000` when there are many.
fn names(ids: &[SessionId]) -> String {
    if ids.len() > 8 {
        return ids.len().to_string();
    }
    ids.iter()
        .map(SessionId::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
