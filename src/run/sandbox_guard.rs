//! `--sandbox`'s guard: what Landlock cannot keep a sandboxed run from
//! changing (`model::sandbox_guard` says what and why), recorded before the
//! command is forked in the session's local state (`local/<id>/sandbox.json`,
//! with a marker `sandboxed/<id>` beside `local/` so that finding the runs to
//! settle is one directory read), and put back when the run has ended: by the
//! foreground bullpen after the command exits, by the supervisor when the run
//! ends, and, for a run killed with its bullpen, by the next command that
//! opens the repository for work (`Ctx::discover`: resume, attach, gc, rm,
//! stop, spawn, wait) or `ls --status` ([`sweep`]). Settling also removes the
//! run's private `TMPDIR`, which only the guard names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::git::store;
use crate::model::process::ProcessRef;
use crate::model::sandbox_guard::{Guard, Made, GUARD_SCHEMA};
use crate::model::SessionId;
use crate::sys::{atomic, procfs};

const FILE: &str = "sandbox.json";
const MARKERS: &str = "sandboxed";
const ASIDE: &str = "put-aside";

fn guard_path(ctx: &Ctx, id: &SessionId) -> PathBuf {
    ctx.layout.local_dir(id).join(FILE)
}

fn marker_path(ctx: &Ctx, id: &SessionId) -> PathBuf {
    ctx.layout.state_dir.join(MARKERS).join(id.as_str())
}

/// The guard's two files (`sandbox.json`, the marker).
pub fn files(ctx: &Ctx, id: &SessionId) -> [PathBuf; 2] {
    [guard_path(ctx, id), marker_path(ctx, id)]
}

/// Record the guard of `id`'s next run (its command not forked yet): the
/// marker first, so that a guard is never there without one.
pub fn start(ctx: &Ctx, id: &SessionId, tmp: &Path, made: Made) -> Result<Guard> {
    use std::os::unix::fs::MetadataExt;
    let tmp_made =
        std::fs::symlink_metadata(tmp).with_context(|| format!("cannot stat {}", tmp.display()))?;
    let guard = Guard {
        schema: GUARD_SCHEMA,
        owner: procfs::process_ref(std::process::id()),
        command: None,
        tmp: tmp.to_path_buf(),
        tmp_made: Some((tmp_made.dev(), tmp_made.ino())),
        made,
    };
    atomic::write(&marker_path(ctx, id), b"")?;
    write(ctx, id, &guard)?;
    Ok(guard)
}

fn write(ctx: &Ctx, id: &SessionId, guard: &Guard) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(guard).context("cannot serialize the guard")?;
    bytes.push(b'\n');
    atomic::write(&guard_path(ctx, id), &bytes)
        .with_context(|| format!("cannot record what session {id}'s sandboxed run must not change"))
}

/// The command has been forked as `pid` (held at the gate): the guard names
/// it, so that a later command settles the run only once it is gone too.
pub fn forked(ctx: &Ctx, id: &SessionId, guard: &Guard, pid: u32) -> Result<()> {
    let mut guard = guard.clone();
    guard.command = Some(procfs::process_ref(pid));
    write(ctx, id, &guard)
}

/// Put back what the run changed that it must not have, saying so on stderr
/// and in the record's history. Failures are said, never fatal: the run's end
/// is still recorded.
pub fn settle(ctx: &Ctx, id: &SessionId, guard: &Guard) {
    let aside = ctx.layout.local_dir(id).join(ASIDE).join(stamp());
    let recorded = |name: &str| {
        name.parse::<SessionId>()
            .ok()
            .is_some_and(|s| store::load(&ctx.repo, &s).ok().flatten().is_some())
    };
    let put_back = ctx
        .repo
        .sandbox_put_back(id, &guard.made, &aside, &recorded);
    if put_back.is_empty() {
        return;
    }
    for p in &put_back {
        ctx.ui.warn(format!(
            "session {id}'s sandboxed run changed {}: {}",
            p.what, p.how
        ));
    }
    let names: Vec<String> = put_back.iter().map(|p| short(&p.what)).collect();
    let event = format!("sandbox: put back {}", names.join(", "));
    let recorded = store::load(&ctx.repo, id)
        .and_then(|s| s.context("its record is gone"))
        .and_then(|s| store::update(&ctx.repo, &s, &event, |_| {}));
    if let Err(e) = recorded {
        ctx.ui.warn(format!(
            "cannot record in session {id}'s history what was put back: {e:#}"
        ));
    }
}

/// A ref by its name, a file by its own name.
fn short(what: &str) -> String {
    if what.starts_with("refs/") {
        return what.to_owned();
    }
    Path::new(what)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| what.to_owned())
}

fn stamp() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos().to_string())
        .unwrap_or_default()
}

/// The run has ended for good: settle it, remove its private `TMPDIR`, and
/// forget the guard.
pub fn end(ctx: &Ctx, id: &SessionId, guard: &Guard) {
    settle(ctx, id, guard);
    remove_tmp(ctx, id, &guard.tmp, guard.tmp_made);
    forget(ctx, id);
}

/// Forget the guard (its run never started, or it is settled).
pub fn forget(ctx: &Ctx, id: &SessionId) {
    for path in files(ctx, id) {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => ctx
                .ui
                .warn(format!("cannot remove {}: {e}", path.display())),
            _ => {}
        }
    }
}

/// Remove the run's private `TMPDIR`: only a directory (no symlink on the way)
/// named as bullpen names it for this session, owned by this user, the one it
/// made (`made`: its device and inode; `model::private_tmp`). Anything else is
/// left alone and noted for gc's report (`run::kept_tmp`).
pub fn remove_tmp(ctx: &Ctx, id: &SessionId, tmp: &Path, made: Option<(u64, u64)>) {
    use crate::model::private_tmp::{decide, Verdict};
    match decide(&super::kept_tmp::facts(id, tmp, made)) {
        Verdict::Gone => {}
        Verdict::Keep { reason, .. } => {
            ctx.ui.warn(format!(
                "left {} alone: it is not the private TMPDIR bullpen made for session {id} \
                 ({reason}); git bullpen gc names it until it is gone",
                tmp.display()
            ));
            if let Err(e) = super::kept_tmp::note(&ctx.layout.state_dir, id, tmp, made, &reason) {
                ctx.ui.warn(format!("{e:#}"));
            }
        }
        Verdict::Remove => remove_made_tmp(ctx.ui, &ctx.layout.state_dir, id, tmp, made),
    }
}

/// Remove the private `TMPDIR` `tmp` bullpen made for session `id`'s run,
/// never following a symlink and never across a file system boundary: what
/// the run or the user mounted in it (a bind mount, a tmpfs) is not bullpen's
/// to delete. Stopped at a mount point, the rest is kept, said on stderr, and
/// noted under `state_dir` for gc to name until it is gone (`run::kept_tmp`).
pub fn remove_made_tmp(
    ui: &crate::ui::Ui,
    state_dir: &Path,
    id: &SessionId,
    tmp: &Path,
    made: Option<(u64, u64)>,
) {
    use crate::sys::remove::{remove_tree, Stopped};
    match remove_tree(tmp) {
        Ok(()) => {}
        Err(Stopped::OtherDevice(at)) => {
            let reason = format!(
                "a file system is mounted at {} (bullpen never removes across file systems)",
                at.display()
            );
            ui.warn(format!(
                "left session {id}'s private TMPDIR {} in place: {reason}; unmount it, then \
                 remove the directory (git bullpen gc names it until it is gone)",
                tmp.display()
            ));
            if let Err(e) = super::kept_tmp::note(state_dir, id, tmp, made, &reason) {
                ui.warn(format!("{e:#}"));
            }
        }
        Err(Stopped::Io(e)) => ui.warn(format!(
            "cannot remove session {id}'s private TMPDIR {}: {e}",
            tmp.display()
        )),
    }
}

/// Settle every sandboxed run whose bullpen and command are both gone (killed:
/// nobody else will). One directory read when there is none.
pub fn sweep(ctx: &Ctx) {
    let dir = ctx.layout.state_dir.join(MARKERS);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(id) = entry.file_name().to_string_lossy().parse::<SessionId>() else {
            continue;
        };
        let guard = match read(ctx, &id) {
            Ok(Some(g)) => g,
            Ok(None) => {
                forget(ctx, &id);
                continue;
            }
            Err(e) => {
                ctx.ui.warn(format!("{e:#}"));
                continue;
            }
        };
        if alive(&guard.owner) || guard.command.as_ref().is_some_and(alive) {
            continue;
        }
        ctx.ui.warn(format!(
            "session {id}'s sandboxed run ended without its bullpen (killed); checking what it \
             changed"
        ));
        end(ctx, &id, &guard);
    }
}

fn alive(p: &ProcessRef) -> bool {
    p.is(&procfs::identity(p.pid))
}

fn read(ctx: &Ctx, id: &SessionId) -> Result<Option<Guard>> {
    let path = guard_path(ctx, id);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .with_context(|| format!("{} is malformed", path.display()))
}
