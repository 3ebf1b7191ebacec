//! `git bullpen ls`: every session with its observed state (see `crate::ls`).

use std::path::{Path, PathBuf};

use std::io::Write;

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::cache::ObjectCache;
use crate::git::store;
use crate::ls::fit::{render_remote_table, render_table};
use crate::ls::remote::remote_rows;
use crate::ls::table::View;
use crate::ls::{rows, sessions};
use crate::model::remote::RemoteName;
use crate::model::{time, SessionId, State};
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen ls
  # what gc and rm would decide on
  git bullpen ls --status
  git bullpen ls --all --json |
    jq -r '.[] | select(.state == \"exited\") | .id'
  # sessions pushed from elsewhere
  git bullpen fetch && git bullpen ls --remote
  # who needs you, in every repository
  git bullpen ls --attention --all-repos

The columns, and what their cells say:
  *          the session whose worktree the current directory is in
  ID         the session id
  STATE      the state, and when its last event was: running 5m (running for
             5 minutes); exited 0 2h ago (its exit code); killed by SIGSEGV
             1h ago (a signal ended it); stopped by SIGHUP 1d ago (ended by
             stop); ready 3d ago (created, never run); lost 5m ago
             (recorded running since then, but what records its end is
             gone); missing 2h ago (its worktree directory is gone);
             collected 1d ago (removed by gc or rm; with --all);
             provisioning 2s ago (being created). A running session then
             says what it is doing: running 5m (needs input 2m), (idle 5m),
             (working), after attached, while a terminal is attached
             (git bullpen attach): from its agent's hooks where it reports,
             else from its terminal (quiet and waiting on a read: needs
             input); a run with neither says (idle 12s): since it last
             wrote output
  AGENT      the agent the session runs (spawn --agent, bullpen.agent); the
             column is there when some session has one
  BRANCH     +N: commits on bullpen/<id> since its base; -M (with --status):
             commits its base branch gained since, which bullpen/<id> lacks;
             gone: the branch does not exist
  CHANGES    with --status: uncommitted work in the worktree, as gc counts
             it: NM modified files, ND deleted files, NS staged changes, N?
             untracked files (ignored files do not count, except those an
             untracked .gitignore hides); clean; - when there is no worktree
             to look into
  PUBLISHED  with --status: yes when gc would call the work published: the
             branch tip is on a remote-tracking ref (refs/remotes/*), or each
             of its commits' changes is on an integration ref (squash- and
             rebase-merged: see git-bullpen-gc(1)); no when not; - when the
             branch is gone
  WORKTREE   relative to the worktree root, which the line under the table
             names, and left out where it is just the id; a worktree elsewhere
             (created under an earlier root) in full, with ~ for $HOME

On a terminal the table fits its width (or $COLUMNS): a WORKTREE cell that only \
repeats the id is left out; then STATE drops what a run is doing, WORKTREE is cut \
from its start and the ID down to what tells it apart from the others (with an \
ellipsis); then whole columns are hidden (WORKTREE, PUBLISHED, CHANGES, AGENT, \
BRANCH), and a line under the table says how many. A line never wraps. Into a pipe \
nothing is cut unless COLUMNS is set. With no sessions, ls prints nothing and says so on stderr.

Plain ls reads the records and counts each branch's commits; --status also reads the \
status of every worktree (the costly part, in parallel) and which branches are \
published: the facts gc and rm decide on. Its table prints each row as soon as its \
status (and those above it) is read; CHANGES and PUBLISHED have fixed widths, and a \
longer CHANGES cell pushes the rest of its line.

--screen adds a SCREEN column: the last non-empty line on the screen of each running \
background session, asked of its supervisor as `git bullpen peek` asks (cut, as ID and \
WORKTREE are, to fit the width); all are asked at once and waited for at most a second: (no answer) \
for a supervisor that did not answer by then (stopped, or stuck), (unreadable) for \
one that could not be asked, - for a session that is not running in the background. \
With --json it is the key screen (null when not read).

--json prints an array of objects with the stable keys id, state, branch, base, \
worktree, command (of the latest run), created_at, exit_code, signal, pid, host, ahead, \
log (the background log's path), session_command (what a plain resume runs), \
resume_command (exactly what a plain resume runs now, null where it would refuse), agent \
(the agent it runs, or null), current, \
run_started_at, run_ended_at, ended (how the latest run ended, in stop's and wait's \
words: exited 7, killed by SIGSEGV, stopped by SIGHUP), base_ref, attached (whether a \
terminal is attached to a running background run), last_output_at (when its log was last written), activity and \
activity_since (what a running session is doing, since when), repository (with \
--all-repos), and, with \
--status, behind, modified, deleted, staged, untracked, published, unpublished (null \
where unknown or not asked for), updated_at, clone_id, remote. The keys are stable: \
new ones may be added, none is renamed, removed or given another meaning; null means \
unknown or not applicable.

--attention lists the sessions that need input first (who waits longest first), then \
the idle ones, then the rest. --all-repos lists every repository with worktrees under the \
worktree roots bullpen knows, found from the worktrees' own .git files, each table under \
its repository's name. The roots: each default one under $BULLPEN_HOME/worktrees/; each \
other one a spawn used (a bullpen.worktreeRoot from any config file: spawn leaves its path \
in $BULLPEN_HOME/roots/, only a place to look); the current repository's; and each \
--root <dir> (repeatable), for a root no spawn of this bullpen has used.

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
        conflicts_with = "status",
        add = clap_complete::ArgValueCandidates::new(crate::complete::remote_candidates)
    )]
    pub remote: Option<Option<RemoteName>>,

    /// The sessions that need you first: needs input (longest waiting first),
    /// then idle, then the rest.
    #[arg(long)]
    pub attention: bool,

    /// List the sessions of every repository with worktrees under the worktree
    /// roots bullpen knows, each with its repository.
    #[arg(long, conflicts_with_all = ["remote", "ids"])]
    pub all_repos: bool,

    #[command(flatten)]
    pub roots: crate::ls::repos::Roots,

    /// Also show the last non-empty line on the screen of each running
    /// background session (asked of its supervisor, as peek does).
    #[arg(long, conflicts_with = "remote")]
    pub screen: bool,

    /// Only these sessions.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::any_session_id_candidates))]
    pub ids: Vec<SessionId>,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    if args.all_repos {
        return run_all_repos(&args, cwd, ui);
    }
    let ctx = Ctx::discover_records(cwd, ui)?;
    if let Some(remote) = &args.remote {
        return run_remote(&ctx, remote.as_ref(), &args);
    }
    if args.status {
        // Status reads the worktrees: a killed sandboxed run is settled first.
        crate::run::sandbox_guard::sweep(&ctx);
    }
    // What the records and branches say, kept between listings (see
    // `git::cache`); only a full listing rewrites it, with what it used.
    let mut cache = if args.ids.is_empty() {
        ObjectCache::open(&ctx.repo)
    } else {
        ObjectCache::none()
    };
    let (sessions, hidden) = sessions(&ctx, &args.ids, args.all, &mut cache)?;
    // The table of `--status` shows each row as its status is read (see
    // `ls::status::stream`); `--json` is one value, printed whole.
    let streamed = args.status && !args.json;
    let mut rows = rows(&ctx, &sessions, cwd, args.status && !streamed, &mut cache);
    // The screen lines are matched to the rows by position: before any sort.
    if args.screen {
        crate::ls::screen_line::fill(&ctx, &sessions, &mut rows);
    }
    if args.attention {
        crate::ls::attention::sort(&mut rows);
    }
    if args.json {
        // A cache that cannot be written is only read from the objects next time.
        let _ = cache.save();
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
        if streamed {
            let shown = crate::ls::status::stream(&ctx, &sessions, &mut rows, &mut cache, &view);
            let _ = cache.save();
            shown.context("cannot write to stdout")?;
        } else {
            let _ = cache.save();
            render_table(&mut *ui.out(), &rows, &view).context("cannot write to stdout")?;
        }
    }
    ui.flush()?;
    if rows.is_empty() && !args.json {
        ui.hint(nothing_listed(&ctx, hidden));
    }
    Ok(0)
}

/// What an empty `ls` says: what there is elsewhere (collected, fetched), and
/// in a bare repository, that spawn cannot run there.
fn nothing_listed(ctx: &Ctx, hidden: usize) -> String {
    // Only when nothing is listed: the records fetched from remotes, read.
    let fetched: usize = store::fetched_remotes(&ctx.repo)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| store::load_remote(&ctx.repo, r).ok())
        .map(|(s, _)| {
            s.iter()
                .filter(|s| s.record.state != State::Collected)
                .count()
        })
        .sum();
    let bare = ctx.repo.is_bare();
    let here = match bare {
        true => "no sessions in this bare repository",
        false => "no sessions here",
    };
    match (hidden, fetched) {
        (0, 0) if bare => format!(
            "{here}: spawn needs a worktree (run it in a clone); `git bullpen ls --remote` lists \
             what `git bullpen fetch` brings"
        ),
        (0, 0) => {
            "no sessions yet; start one with `git bullpen spawn <id> -- <command>`".to_owned()
        }
        (0, 1) => {
            format!("{here}, but 1 fetched from a remote; `git bullpen ls --remote` shows it")
        }
        (0, n) => {
            format!("{here}, but {n} fetched from remotes; `git bullpen ls --remote` shows them")
        }
        (n, 0) => format!("no sessions but {n} collected; `git bullpen ls --all` shows them"),
        (n, f) => format!(
            "no sessions but {n} collected (`git bullpen ls --all`) and {f} fetched from remotes \
             (`git bullpen ls --remote`)"
        ),
    }
}

/// `ls --all-repos`: each repository's sessions, under its name.
fn run_all_repos(args: &Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let mut all = Vec::new();
    let mut tables = Vec::new();
    for ctx in crate::ls::repos::repositories(cwd, &args.roots, ui)? {
        let mut cache = ObjectCache::open(&ctx.repo);
        let (sessions, _hidden) = sessions(&ctx, &[], args.all, &mut cache)?;
        let mut rows = rows(&ctx, &sessions, cwd, args.status, &mut cache);
        let _ = cache.save();
        if rows.is_empty() {
            continue;
        }
        let repository = ctx.repo.main_worktree().to_string_lossy().into_owned();
        for r in &mut rows {
            r.repository = Some(repository.clone());
        }
        if args.attention {
            crate::ls::attention::sort(&mut rows);
        }
        if args.json {
            all.extend(rows);
        } else {
            tables.push((repository, ctx.layout.worktree_root.clone(), rows));
        }
    }
    if args.json {
        if args.attention {
            crate::ls::attention::sort(&mut all);
        }
        ui.write_json(&all)?;
    } else {
        for (i, (repository, root, rows)) in tables.iter().enumerate() {
            let view = View {
                now: time::now_unix(),
                color: ui.color(),
                width: ui.width(),
                root,
                home: home.as_deref(),
            };
            let mut out = ui.out();
            let gap = if i == 0 { "" } else { "\n" };
            writeln!(
                out,
                "{gap}repository: {}",
                crate::model::command::escaped(repository)
            )
            .context("cannot write to stdout")?;
            render_table(&mut *out, rows, &view).context("cannot write to stdout")?;
        }
    }
    ui.flush()?;
    if tables.is_empty() && all.is_empty() && !args.json {
        ui.hint("no sessions in any repository under the worktree roots bullpen knows");
    }
    Ok(0)
}

/// `ls --remote[=<remote>]`.
fn run_remote(ctx: &Ctx, remote: Option<&RemoteName>, args: &Args) -> Result<i32> {
    let ui = ctx.ui;
    let (rows, hidden) = remote_rows(ctx, remote, &args.ids, args.all, args.json)?;
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
