//! `git bullpen push`: sessions (branches, records) and the provenance notes to a
//! remote, losing nothing there (see `crate::remote::push`).

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::model::remote::RemoteName;
use crate::model::SessionId;
use crate::remote::push::{push, NotesPushed};
use crate::remote::resolve;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # every session, to the remote git pushes to
  git bullpen push
  # one session
  git bullpen push origin fix-login
  git bullpen fetch
  git bullpen resume origin/fix-login -- claude --continue
                                        # then, on another machine
                                        

Pushes each session's branch (bullpen/<id>) and record (refs/bullpen/sessions/<id>, \
where the remote keeps them too, so that `git bullpen ls` in a bare remote lists them) \
and the provenance notes (refs/notes/bullpen). It fetches first, as `git bullpen fetch` \
does, and merges the remote's notes into this clone's (a union: a commit annotated on \
two machines keeps both texts), so the notes it pushes are a fast-forward of the \
remote's; if another push lands in between, it fetches, merges and pushes them again.

Nothing on the remote is ever replaced: nothing is forced, and a session goes only if \
its record and its branch are each new on the remote or a fast-forward of the remote's. \
A session whose record or branch on the remote has something this clone's lacks (another \
machine continued it, or it is another session of that id) is not pushed at all, and \
bullpen says which and why; one that the remote has more of than this clone (another \
machine went on with it) is left as it is there, said so. A session continued here \
with `git bullpen resume <remote>/<id>` pushes as a fast-forward: its record's history \
starts with the other machine's.

A remote whose fetch refspecs map session branches or records onto this clone's own \
refs (a mirror's +refs/*:refs/*) is refused: git would set them to what it pushed. \
Sessions still being created are left out. Exits 1 when a session or the notes were \
not pushed.";

/// Push sessions and their provenance notes, never replacing what the remote has.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The remote (default: the one `git push` uses: remote.pushDefault, the
    /// only remote, or origin).
    #[arg(value_name = "REMOTE", add = clap_complete::ArgValueCandidates::new(crate::complete::remote_candidates))]
    pub remote: Option<RemoteName>,

    /// Only these sessions (default: all of them).
    #[arg(value_name = "ID", requires = "remote", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub ids: Vec<SessionId>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let remote = resolve(&ctx, args.remote.as_ref(), true)?;
    let pushed = push(&ctx, &remote, &args.ids)?;
    // What the fetch refused is said, but is no failure of the push: it is
    // what another machine sent, not what this one sends.
    super::fetch::report(ui, &pushed.fetched, false);
    for (id, why) in &pushed.refused {
        ui.warn(format!("not pushing session {id}: {why}"));
    }
    for (refname, summary) in &pushed.rejected {
        ui.warn(format!("{remote} did not take {refname}: {summary}"));
    }
    if pushed.sent.len() > 8 {
        let (records, branches) = pushed
            .sent
            .iter()
            .fold((0, 0), |(r, b), (_, record, branch)| {
                (r + usize::from(*record), b + usize::from(*branch))
            });
        ui.info(format!(
            "pushed to {remote}: {} sessions ({records} records, {branches} branches)",
            pushed.sent.len()
        ));
    } else if !pushed.sent.is_empty() {
        let sent: Vec<String> = pushed
            .sent
            .iter()
            .map(|(id, record, branch)| {
                let what = match (record, branch) {
                    (true, true) => "record, branch",
                    (true, false) => "record",
                    _ => "branch",
                };
                format!("{id} ({what})")
            })
            .collect();
        ui.info(format!("pushed to {remote}: {}", sent.join(", ")));
    }
    for (id, says) in &pushed.remote_newer {
        ui.info(format!(
            "{remote} has more of session {id} than this clone ({says}); left as it is there"
        ));
    }
    match &pushed.notes {
        NotesPushed::Sent => ui.info(format!("notes pushed to {remote}")),
        NotesPushed::Failed(why) => ui.warn(format!("notes not pushed to {remote}: {why}")),
        NotesPushed::UpToDate => {}
    }
    if pushed.sent.is_empty()
        && pushed.notes != NotesPushed::Sent
        && !pushed.incomplete()
        && pushed.remote_newer.is_empty()
    {
        ui.info(format!("everything is up to date on {remote}"));
    }
    if !pushed.refused.is_empty() {
        ui.hint(format!(
            "compare them: git log refs/bullpen/sessions/<id> refs/bullpen/remotes/{remote}/sessions/<id>"
        ));
        ui.hint(format!(
            "to go on with the remote's here, under another id: git bullpen resume {remote}/<id> --as <new-id> -- <command>"
        ));
    }
    if !pushed.rejected.is_empty() {
        ui.hint(format!(
            "another push reached {remote} in between; run `git bullpen push {remote}` again"
        ));
    }
    Ok(i32::from(pushed.incomplete()))
}
