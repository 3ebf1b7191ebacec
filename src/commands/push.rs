//! `git bullpen push`: sessions (branches, records) and the provenance notes to a
//! remote, losing nothing there (see `crate::remote::push`).

use std::path::Path;

use anyhow::Result;

use crate::context::Ctx;
use crate::model::command::escaped;
use crate::model::remote::RemoteName;
use crate::model::SessionId;
use crate::remote::plan::Held;
use crate::remote::push::{push, NotesPushed, Pushed};
use crate::remote::resolve;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  # one session (its first push)
  git bullpen push origin fix-login
  # the sessions the remote already has
  git bullpen push
  # every session but collected ones
  git bullpen push --all
  # then, on another machine
  git bullpen fetch && git bullpen resume origin/fix-login

Pushes each session's branch (bullpen/<id>) and record (refs/bullpen/sessions/<id>, \
where the remote keeps them too, so that `git bullpen ls` in a bare remote lists them) \
and the provenance notes of what it sends. It fetches first, as `git bullpen fetch` \
does, and merges the remote's notes into this clone's (a union: a commit annotated on \
two machines keeps both texts). The notes that go are a commit on the remote's notes \
tip (a fast-forward there) adding this clone's notes on the commits the remote will \
have: never the notes of a session not pushed, which hold its id and its command (an \
agent's prompt). refs/notes/bullpen here then joins that commit and keeps every note.

Which sessions: those named; with none named, those the remote already has (their \
record or their branch); with --all, every session but collected ones. Unless named, a \
collected session is not sent, nor a branch with no commits of its own, nor a branch \
the remote deleted (a forge deletes the branch of a merged pull request): its record \
goes, its branch stays here.

Nothing on the remote is ever replaced: nothing is forced, and a session goes only if \
its record and its branch are each new on the remote or a fast-forward of the remote's. \
When both this clone and the remote moved a session's record on from a common event \
(two machines continued it in turn), and its branch here is the remote's or a \
fast-forward of it, the two records are joined in a record commit with both as parents: \
the later one's state (a time over an hour ahead of this machine's clock is not later), \
both histories in `git log refs/bullpen/sessions/<id>`. A session \
whose branch diverged from the remote's, or whose record shares no event with the \
remote's, is not pushed at all, and bullpen says which and why; one that the remote has \
more of than this clone is left as it is there, said so.

One atomic push (where the remote supports it: then it takes all or nothing). A refusal \
by the remote (a hook, a rule of the forge) is final: shown with the remote's own words, \
never retried; only notes that lost a race with another push are fetched, merged and \
pushed again. A remote whose fetch refspecs map session branches or records onto this \
clone's own refs (a mirror's +refs/*:refs/*) is refused: git would set them to what it \
pushed. Sessions still being created are left out. Exits 1 when a session or the notes \
were not pushed.";

/// Push sessions and their provenance notes, never replacing what the remote has.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The remote (default: the one `git push` uses: remote.pushDefault, the
    /// only remote, or origin).
    #[arg(value_name = "REMOTE", add = clap_complete::ArgValueCandidates::new(crate::complete::remote_candidates))]
    pub remote: Option<RemoteName>,

    /// Only these sessions (default: those the remote already has).
    #[arg(value_name = "ID", requires = "remote", add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]
    pub ids: Vec<SessionId>,

    /// Every session but collected ones, also those the remote does not have yet.
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let remote = resolve(&ctx, args.remote.as_ref(), true)?;
    let pushed = push(&ctx, &remote, &args.ids, args.all)?;
    // What the fetch refused is said, but is no failure of the push: it is
    // what another machine sent, not what this one sends.
    super::fetch::report(ui, &pushed.fetched, false);
    for (id, why) in &pushed.refused {
        ui.warn(format!("not pushing session {id}: {why}"));
    }
    // The remote's words (its hooks', its reasons) as text: never what moves
    // the cursor, colours or reorders the terminal.
    for (refname, summary) in &pushed.rejected {
        ui.warn(format!(
            "{remote} did not take {refname}: {}",
            escaped(summary)
        ));
    }
    for (refname, summary) in &pushed.unsure {
        ui.warn(format!(
            "{remote} did not say whether it took {refname}: {}",
            escaped(summary)
        ));
    }
    for line in &pushed.remote_said {
        ui.warn(format!("{remote} says: {}", escaped(line)));
    }
    for (id, landed) in &pushed.half {
        ui.warn(format!(
            "session {id} is half pushed: its {landed} is on {remote}, the rest is not"
        ));
    }
    report_sent(ui, &remote, &pushed);
    for id in &pushed.joined {
        ui.info(format!(
            "joined session {id}'s record with {remote}'s: both histories are in \
             `git log {}`",
            id.record_ref()
        ));
    }
    for (id, why) in &pushed.held {
        let why = match why {
            Held::NoCommits => "it has no commits of its own".to_owned(),
            Held::GoneThere => {
                format!("{remote} has its record but not the branch (deleted there?)")
            }
        };
        ui.info(format!(
            "not pushing {}: {why}; `git bullpen push {remote} {id}` sends it",
            id.branch()
        ));
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
        && pushed.not_there.is_empty()
    {
        ui.info(format!("everything is up to date on {remote}"));
    }
    if !pushed.not_there.is_empty() {
        ui.hint(format!(
            "{} not on {remote} yet ({}): name {}, or push them all with \
             `git bullpen push --all {remote}`",
            match pushed.not_there.len() {
                1 => "1 session is".to_owned(),
                n => format!("{n} sessions are"),
            },
            few(&pushed.not_there),
            if pushed.not_there.len() == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    if !pushed.refused.is_empty() {
        let id = pushed.refused[0].0.as_str();
        ui.hint(format!(
            "compare them: git log refs/bullpen/sessions/{id} refs/bullpen/remotes/{remote}/sessions/{id}"
        ));
        ui.hint(format!(
            "to go on with the remote's here, under another id: git bullpen resume {remote}/{id} --as <new-id> -- <command>"
        ));
    }
    if !pushed.unsure.is_empty() {
        ui.hint(format!(
            "`git bullpen push {remote}` again sees what landed and sends the rest"
        ));
    }
    if !pushed.rejected.is_empty() {
        if pushed.atomic && pushed.unsure.is_empty() {
            ui.hint(format!("one atomic push: {remote} took none of its refs"));
        }
        if pushed.raced {
            ui.hint(format!(
                "another push reached {remote} in between; run `git bullpen push {remote}` again"
            ));
        }
    }
    Ok(i32::from(pushed.incomplete()))
}

/// Say what went.
fn report_sent(ui: &Ui, remote: &RemoteName, pushed: &Pushed) {
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
}

/// `a, b, c`, or the first three and how many more.
fn few(ids: &[SessionId]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(SessionId::as_str).collect();
    match ids.len() {
        n if n > 3 => format!("{}, and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}
