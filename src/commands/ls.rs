//! `git bullpen ls`: every session with its observed state (see `crate::ls`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::cache::ObjectCache;
use crate::ls::table::{render_remote_table, render_table, View};
use crate::ls::{remote_rows, rows, sessions};
use crate::model::remote::RemoteName;
use crate::model::{time, SessionId};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen ls
  git bullpen ls --status            # what gc and rm would decide on
  git bullpen ls --all --json | jq -r '.[] | select(.state == \"exited\") | .id'
  git bullpen fetch && git bullpen ls --remote   # sessions pushed from elsewhere

The columns, and what their cells say:
  *          the session whose worktree the current directory is in
  ID         the session id
  STATE      the state, and when its last event was: running 5m (running for
             5 minutes); exited 0 2h ago (its exit code, or sigN: ended by
             signal N); stopped 1d ago (ended by stop); ready 3d ago (created,
             never run); lost 5m ago (recorded running since then, but what
             records its end is gone); missing 2h ago (its worktree directory
             is gone); collected 1d ago (removed by gc or rm; with --all);
             provisioning 2s ago (being created). A background run then
             says what it is doing on its terminal: running 5m (attached,
             idle 3m) while a terminal is attached (git bullpen attach),
             running 5m (idle 12s) otherwise; idle: since it last wrote
             output
  BRANCH     +N: commits on bullpen/<id> since its base; -M (with --status):
             commits its base branch gained since, which bullpen/<id> lacks;
             gone: the branch does not exist
  CHANGES    with --status: uncommitted work in the worktree, as gc counts
             it: NM modified files, ND deleted files, NS staged changes, N?
             untracked files (ignored files do not count, except those an
             untracked .gitignore hides); clean; - when there is no worktree
             to look into
  PUBLISHED  with --status: yes when the branch tip is on a remote-tracking
             ref (refs/remotes/*), no when it is not, - when the branch is gone
  WORKTREE   relative to the worktree root, which the line under the table
             names; a worktree elsewhere (created under an earlier root) in
             full, with ~ for $HOME

On a terminal the table fits its width (or $COLUMNS): the ID and WORKTREE cells are \
cut first (their ends marked with an ellipsis), then whole lines; a line never wraps. Into a pipe nothing is \
cut unless COLUMNS is set. With no sessions, ls prints nothing and says so on stderr.

Plain ls reads the records and counts each branch's commits; --status also reads the \
status of every worktree (the costly part, in parallel) and which branches are on a \
remote: the facts gc and rm decide on.

--screen adds a SCREEN column: the last non-empty line on the screen of each running \
background session, asked of its supervisor as `git bullpen peek` asks (cut, as ID and \
WORKTREE are, to fit the width); all are asked at once and waited for at most a second: (no answer) \
for a supervisor that did not answer by then (stopped, or stuck), (unreadable) for \
one that could not be asked, - for a session that is not running in the background. \
With --json it is the key screen (null when not read).

--json prints an array of objects with the stable keys id, state, branch, base, \
worktree, command (of the latest run), created_at, exit_code, signal, pid, host, ahead, \
log (the background log's path), session_command (what a plain resume runs), current, \
run_started_at, run_ended_at, base_ref, attached (whether a terminal is attached to a \
running background run), last_output_at (when its log was last written), and, with \
--status, behind, modified, deleted, staged, untracked, published, unpublished (null \
where unknown or not asked for), updated_at, clone_id, remote; see the README for the \
contract.

--remote (or --remote=<remote>) lists instead the sessions fetched from remotes \
(`git bullpen fetch`), as <remote>/<id>, with what their record says and when it said \
it: `running on build-box, as of 5m ago` is what the record said 5 minutes ago, not \
what is running now. Nothing of them is looked at here: not their worktree, not their \
process. A host is marked `(this clone)` for a record this clone wrote (its own record \
of the session holds it), `(claims this clone)` for one that only carries this clone's \
id, and `(another clone, <id>)` when another clone has this machine's host name. With \
--json, each object has the same keys, with remote set.";

/// List sessions.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Print JSON (an array of objects with stable keys).
    #[arg(long)]
    pub json: bool,

    /// Include collected sessions.
    #[arg(long, short)]
    pub all: bool,

    /// Also show uncommitted work, commits behind the base, and whether the
    /// work is published (reads every worktree's status).
    #[arg(long, short)]
    pub status: bool,

    /// List the sessions fetched from remotes (or from REMOTE) instead, as
    /// their records say, as of when they said it.
    #[arg(
        long,
        value_name = "REMOTE",
        num_args = 0..=1,
        require_equals = true,
        conflicts_with = "status"
    )]
    pub remote: Option<Option<RemoteName>>,

    /// Also show the last non-empty line on the screen of each running
    /// background session (asked of its supervisor, as peek does).
    #[arg(long, conflicts_with = "remote")]
    pub screen: bool,

    /// Only these sessions.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::any_session_id_candidates))]
    pub ids: Vec<SessionId>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    if let Some(remote) = &args.remote {
        return run_remote(&ctx, remote.as_ref(), &args);
    }
    // What the records and branches say, kept between listings (see
    // `git::cache`); only a full listing rewrites it, with what it used.
    let mut cache = if args.ids.is_empty() {
        ObjectCache::open(&ctx.repo)
    } else {
        ObjectCache::none()
    };
    let (sessions, hidden) = sessions(&ctx, &args.ids, args.all, &mut cache)?;
    let mut rows = rows(&ctx, &sessions, cwd, args.status, &mut cache);
    if args.screen {
        crate::ls::screen_line::fill(&ctx, &sessions, &mut rows);
    }
    // A cache that cannot be written is only read from the objects next time.
    let _ = cache.save();
    if args.json {
        ui.write_json(&rows)?;
    } else {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let view = View {
            now: time::now_unix(),
            color: ui.color(),
            width: ui.width(),
            root: &ctx.layout.worktree_root,
            home: home.as_deref(),
        };
        render_table(&mut *ui.out(), &rows, &view).context("cannot write to stdout")?;
    }
    ui.flush()?;
    if rows.is_empty() && !args.json {
        match hidden {
            0 => ui.hint("no sessions yet; start one with `git bullpen spawn <id> -- <command>`"),
            n => ui.hint(format!(
                "no sessions but {n} collected; `git bullpen ls --all` shows them"
            )),
        }
    }
    Ok(0)
}

/// `ls --remote[=<remote>]`.
fn run_remote(ctx: &Ctx, remote: Option<&RemoteName>, args: &Args) -> Result<i32> {
    let ui = ctx.ui;
    let (rows, hidden) = remote_rows(ctx, remote, &args.ids, args.all)?;
    if args.json {
        ui.write_json(&rows)?;
    } else {
        let view = View {
            now: time::now_unix(),
            color: ui.color(),
            width: ui.width(),
            root: &ctx.layout.worktree_root,
            home: None,
        };
        render_remote_table(&mut *ui.out(), &rows, &view).context("cannot write to stdout")?;
    }
    ui.flush()?;
    if rows.is_empty() && !args.json {
        let from = remote.map_or("any remote".to_owned(), |r| r.to_string());
        match hidden {
            0 => ui.hint(format!(
                "no sessions fetched from {from}; `git bullpen fetch` brings those pushed there"
            )),
            n => ui.hint(format!(
                "no sessions from {from} but {n} collected; `git bullpen ls --remote --all` shows them"
            )),
        }
    }
    Ok(0)
}
