//! `git bullpen logs`: the output of a session's background runs.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::{Error, SessionId, State};
use crate::run::screen::Render;
use crate::run::sizes;
use crate::sys::procfs;
use crate::ui::Ui;

const AFTER_LONG_HELP: &str = "\
Examples:
  git bullpen logs fix-login
  git bullpen logs --follow fix-login

Background runs (spawn --bg) run on a terminal of their own; everything their command \
writes there (and anything their supervisor has to say) is appended to one log per \
session: <git common dir>/bullpen/logs/<id>.log, outside every working tree (`git \
bullpen ls --json` shows the path). Foreground runs write no log: their output went \
to the terminal.

logs prints the log as a terminal shows it: the bytes go through a terminal model \
of the size the run's terminal had (its supervisor records each size, and where in \
the log it began; 24x80 for a run that recorded none), so \
cursor motions leave spaces, a carriage return overwrites, erasing erases and a \
progress bar shows its last state; a line the terminal wrapped stays one line; a \
program that ended on the alternate screen (a full-screen program) shows its main \
screen, then that last screen. Each run's end line (`bullpen: session <id> exited 0 \
after 1.2s`) is a line of its own. --raw prints the bytes as recorded.

--follow keeps printing new output until the session's run ends, also while a \
terminal is attached to it (git bullpen attach). A line is printed once the cursor \
has left it (a progress bar on the last line shows when it is done); a program that \
goes back up to redraw lines shows them again.";

/// How often --follow looks for new output and for the end of the run.
const POLL: Duration = Duration::from_millis(100);

/// Print the output of a session's background runs.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The session whose output to print.
    #[arg(value_name = "ID", add = clap_complete::ArgValueCandidates::new(crate::complete::logged_session_id_candidates))]
    pub id: SessionId,

    /// Keep printing new output until the session's run ends.
    #[arg(long, short)]
    pub follow: bool,

    /// Print the log as recorded, terminal control sequences included.
    #[arg(long)]
    pub raw: bool,
}

pub fn run(args: Args, cwd: &Path, ui: &Ui) -> Result<i32> {
    let ctx = Ctx::discover_records(cwd, ui)?;
    let id = &args.id;
    store::require(&ctx.repo, id)?;
    // The path comes from the id, never from the record (which may have been
    // fetched or edited): logs only ever reads bullpen's own log directory.
    let path = ctx.layout.log_path(id);
    // Never blocking on a FIFO in its place.
    let mut file = match crate::sys::regular::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let e = Error::failed(format!(
                "session {id} has no log (it would be {})",
                path.display()
            ));
            return Err(match ctx.repo.is_bare() {
                true => e.hint(
                    "logs stay in the repository that ran the session: push and fetch carry \
                     records, not logs",
                ),
                false => e.hint("only background runs (`git bullpen spawn --bg`) write one"),
            }
            .into());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    let mut out = ui.out();
    let mut sink = match args.raw {
        true => Sink::Raw(&mut **out),
        false => Sink::Screen(Box::new(Render::new(&mut **out, args.follow))),
    };
    let sizes_path = sizes::path(&ctx.layout, id);
    let mut copy = |file: &mut File| -> Result<()> {
        // The sizes first: each one is recorded before any byte written at it.
        if let Sink::Screen(render) = &mut sink {
            render.sizes(&sizes::read(&sizes_path, file)?);
        }
        std::io::copy(file, &mut sink)
            .with_context(|| format!("cannot copy {} to stdout", path.display()))?;
        sink.flush().context("cannot write to stdout")
    };
    copy(&mut file)?;
    if args.follow {
        // Read what is new, then check whether the run is still going: output
        // written just before the end is always printed by the last copy.
        while still_running(&ctx, id)? {
            std::thread::sleep(POLL);
            copy(&mut file)?;
        }
        copy(&mut file)?;
    }
    if let Sink::Screen(render) = &mut sink {
        render.finish().context("cannot write to stdout")?;
    }
    Ok(0)
}

/// Where the log's bytes go: stdout as they are, or through the terminal model.
enum Sink<'a> {
    Raw(&'a mut dyn Write),
    Screen(Box<Render<&'a mut dyn Write>>),
}

impl Write for Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Raw(w) => w.write(bytes),
            Sink::Screen(r) => r.write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Raw(w) => w.flush(),
            Sink::Screen(r) => r.flush(),
        }
    }
}

/// Whether the session's run is still going (recorded running, and alive).
fn still_running(ctx: &Ctx, id: &SessionId) -> Result<bool> {
    let stored = store::load(&ctx.repo, id)?
        .ok_or_else(|| anyhow!("the record of session {id} was deleted"))?;
    let r = &stored.record;
    Ok(r.state == State::Running && r.process.as_ref().is_some_and(procfs::is_session_alive))
}
