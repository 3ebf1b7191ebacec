//! `--sandbox`: gathering a run's writable paths (`model::sandbox::roots`), its
//! private temporary directory, and the Landlock ruleset the gate applies
//! before exec (`sys::landlock`).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::context::Ctx;
use crate::model::agent::AgentName;
use crate::model::sandbox::{self, Applied, Mode, Places, Root, REQUIRED_ABI};
use crate::model::sandbox_guard::Guard;
use crate::model::{config, Error, Record, SessionId};
use crate::sys::landlock;
use crate::trust::decide::Runnable;

/// The mode a run uses: `--sandbox[=<mode>]`, `--no-sandbox`, else git config
/// `bullpen.sandbox`.
pub fn mode(ctx: &Ctx, flag: Option<Mode>, no: bool) -> Result<Mode> {
    let config = match ctx.repo.config_string(config::SANDBOX) {
        None => None,
        Some(v) => Some(Mode::parse(&v).ok_or_else(|| {
            Error::failed(format!(
                "bad git config {}: {} is neither a boolean nor best-effort",
                config::SANDBOX,
                crate::model::command::quoted(&v)
            ))
        })?),
    };
    Ok(Mode::choose(flag, no, config))
}

/// Before anything is made: a strict sandbox on a kernel that cannot enforce
/// it fails here, running and creating nothing.
pub fn check(mode: Mode) -> Result<()> {
    let abi = landlock::kernel_abi();
    if mode == Mode::Strict && abi < REQUIRED_ABI && !seatbelt() {
        let has = match abi {
            0 => "no Landlock".to_owned(),
            n => format!("Landlock ABI {n}"),
        };
        return Err(Error::failed(format!(
            "--sandbox needs Landlock ABI {REQUIRED_ABI} (Linux 6.12 or newer); this kernel has \
             {has}: nothing was run"
        ))
        .hint("--sandbox=best-effort runs with what the kernel enforces, and says what it does not")
        .hint("--no-sandbox (or git config bullpen.sandbox false) runs unconfined")
        .into());
    }
    Ok(())
}

/// macOS: Seatbelt's `sandbox-exec` runs the command (untested on real macOS).
fn seatbelt() -> bool {
    cfg!(target_os = "macos") && Path::new(SANDBOX_EXEC).exists()
}

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Best-effort: say what this kernel does not enforce.
pub fn warn_unenforced(ctx: &Ctx, mode: Mode) {
    if seatbelt() {
        return;
    }
    let not_enforced = sandbox::not_enforced(landlock::kernel_abi());
    if mode == Mode::BestEffort && !not_enforced.is_empty() {
        ctx.ui.warn(format!(
            "--sandbox=best-effort: not enforced here: {}",
            not_enforced.join("; ")
        ));
    }
}

/// A run's sandbox, ready for the gate, with its guard (`run::sandbox_guard`).
/// [`Sandbox::end`] settles the run and removes its private temporary
/// directory; dropped without it before the command was forked, it removes
/// both (nothing ran); after, they are left for the next command to settle.
pub struct Sandbox<'ui> {
    pub roots: Vec<Root>,
    pub applied: Applied,
    landlock: Option<OwnedFd>,
    tmp: PathBuf,
    id: SessionId,
    guard: Guard,
    /// Paths to remove when dropped before the command was forked.
    unused: std::cell::Cell<Option<[PathBuf; 3]>>,
    /// Where a drop says what it could not remove, and notes it for gc.
    ui: &'ui crate::ui::Ui,
    state_dir: PathBuf,
}

impl Drop for Sandbox<'_> {
    fn drop(&mut self) {
        if let Some([tmp, guard, marker]) = self.unused.take() {
            // As after a run: never across a mount made in it meanwhile.
            let made = self.guard.tmp_made;
            super::sandbox_guard::remove_made_tmp(self.ui, &self.state_dir, &self.id, &tmp, made);
            let _ = std::fs::remove_file(guard);
            let _ = std::fs::remove_file(marker);
        }
    }
}

impl Sandbox<'_> {
    /// The command is forked as `pid`, held at the gate: the guard names it
    /// (a failure here runs nothing).
    pub fn forked(&self, ctx: &Ctx, pid: u32) -> Result<()> {
        super::sandbox_guard::forked(ctx, &self.id, &self.guard, pid)
    }

    /// The command runs (its claim landed): from here on the guard stays
    /// until the run is settled.
    pub fn running(&self) {
        self.unused.set(None);
    }

    /// Put back what the run changed that it must not have (again at [`Sandbox::end`]).
    pub fn settle(&self, ctx: &Ctx) {
        super::sandbox_guard::settle(ctx, &self.id, &self.guard);
    }

    /// The run and what it left are over: settle, remove the private
    /// temporary directory, forget the guard.
    pub fn end(self, ctx: &Ctx) {
        self.unused.set(None);
        super::sandbox_guard::end(ctx, &self.id, &self.guard);
    }

    /// The ruleset descriptor the gate applies (none: best-effort without Landlock).
    pub fn landlock_fd(&self) -> Option<RawFd> {
        self.landlock.as_ref().map(|fd| fd.as_raw_fd())
    }

    /// What the command's environment gets: `TMPDIR`, and git configuration
    /// without automatic gc or ref packing.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let existing = std::env::var(config::ENV_CONFIG_PARAMETERS).ok();
        vec![
            (config::ENV_TMPDIR, self.tmp.as_os_str().to_owned()),
            (
                config::ENV_CONFIG_PARAMETERS,
                sandbox::config_parameters(existing.as_deref()).into(),
            ),
        ]
    }

    /// The argv the gate executes: on macOS through `sandbox-exec` with the
    /// Seatbelt profile of the roots; elsewhere `argv` itself.
    pub fn runnable(&self, run: &Runnable) -> Runnable {
        if self.applied.enforcement != "seatbelt" {
            return run.clone();
        }
        run.wrapped(vec![
            SANDBOX_EXEC.to_owned(),
            "-p".to_owned(),
            sandbox::seatbelt_profile(&self.roots),
        ])
    }

    /// The record's `sandbox` value.
    pub fn record_value(&self) -> serde_json::Value {
        serde_json::to_value(&self.applied).unwrap_or(serde_json::Value::Null)
    }
}

/// The sandbox of `record`'s next run in `mode` (`None`: off).
pub fn prepare<'ui>(ctx: &Ctx<'ui>, record: &Record, mode: Mode) -> Result<Option<Sandbox<'ui>>> {
    if mode == Mode::Off {
        return Ok(None);
    }
    check(mode)?;
    let abi = landlock::kernel_abi();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("bullpen-{}-", record.id))
        .tempdir()
        .context("cannot create the sandbox's private temporary directory")?;
    let places = places(ctx, record, tmp.path())?;
    let roots = sandbox::roots(&places);
    let seatbelt = seatbelt();
    let not_enforced = match seatbelt {
        true => Vec::new(),
        false => sandbox::not_enforced(abi),
    };
    let landlock = match abi {
        0 => None,
        abi => Some(landlock::prepare(&roots, abi, &test_drops())?),
    };
    let made = ctx
        .repo
        .sandbox_made(&record.id, &places.worktree, &places.admin)?;
    let guard = super::sandbox_guard::start(ctx, &record.id, tmp.path(), made)?;
    let tmp = tmp.keep();
    let [guard_file, marker] = super::sandbox_guard::files(ctx, &record.id);
    let unused = [tmp.clone(), guard_file, marker];
    warn_unenforced(ctx, mode);
    let applied = Applied {
        enforcement: match (&landlock, seatbelt) {
            (Some(_), _) => "landlock",
            (None, true) => "seatbelt",
            (None, false) => "none",
        }
        .to_owned(),
        mode,
        not_enforced,
        writable: roots.iter().map(|r| r.path.clone()).collect(),
    };
    Ok(Some(Sandbox {
        roots,
        applied,
        landlock,
        tmp,
        id: record.id.clone(),
        guard,
        unused: std::cell::Cell::new(Some(unused)),
        ui: ctx.ui,
        state_dir: ctx.layout.state_dir.clone(),
    }))
}

/// `BULLPEN_TEST_SANDBOX_DROP` (tests only): the rules to leave out.
fn test_drops() -> Vec<(String, Option<String>)> {
    std::env::var(config::ENV_TEST_SANDBOX_DROP)
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once(':') {
            Some((k, r)) => (k.to_owned(), Some(r.to_owned())),
            None => (s.to_owned(), None),
        })
        .collect()
}

/// The paths of `record`'s run, `tmp` its private temporary directory.
pub fn places(ctx: &Ctx, record: &Record, tmp: &Path) -> Result<Places> {
    let worktree = PathBuf::from(&record.worktree);
    let dirs = ctx.repo.sandbox_dirs(&record.id, &worktree)?;
    let (allow_write, agent_state) = extra_paths(ctx, record.agent.as_deref())?;
    Ok(Places {
        worktree,
        admin: dirs.admin,
        common: ctx.repo.common_dir().to_path_buf(),
        id: record.id.to_string(),
        tmp: tmp.to_path_buf(),
        allow_write,
        agent_state,
    })
}

/// What `spawn --sandbox --dry-run` prints: the rules of a new session's run,
/// with the paths spawn would make (git names the admin directory after the
/// worktree's; `<id>` when the id is generated).
pub fn planned(
    ctx: &Ctx,
    id: Option<&SessionId>,
    agent: Option<&AgentName>,
    mode: Mode,
) -> Result<String> {
    let name = id.map_or_else(|| "<id>".to_owned(), |id| id.to_string());
    let (allow_write, agent_state) = extra_paths(ctx, agent.map(AgentName::as_str))?;
    let places = Places {
        worktree: ctx.layout.worktree_root.join(&name),
        admin: ctx.repo.planned_admin_dir(&name),
        common: ctx.repo.common_dir().to_path_buf(),
        id: name.clone(),
        tmp: std::env::temp_dir().join(format!("bullpen-{name}-XXXXXX")),
        allow_write,
        agent_state,
    };
    let mut out = sandbox::describe(&sandbox::roots(&places));
    let abi = landlock::kernel_abi();
    let _ = std::fmt::Write::write_fmt(
        &mut out,
        format_args!(
            "# {} (Landlock ABI {abi}); everything else is read-only\n",
            mode.as_str()
        ),
    );
    for missing in sandbox::not_enforced(abi) {
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("# not enforced: {missing}\n"));
    }
    Ok(out)
}

/// git config `bullpen.sandbox.allowWrite` (those that exist), and the state
/// paths of `agent`'s profile that exist.
fn extra_paths(ctx: &Ctx, agent: Option<&str>) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    let mut allow_write = Vec::new();
    for value in ctx.repo.config_strings(config::SANDBOX_ALLOW_WRITE) {
        let path = expand(&value, home.as_deref()).ok_or_else(|| {
            Error::failed(format!(
                "bad git config {}: {} is not an absolute path (or ~/...)",
                config::SANDBOX_ALLOW_WRITE,
                crate::model::command::quoted(&value)
            ))
        })?;
        if path.symlink_metadata().is_ok() {
            allow_write.push(path);
        } else {
            ctx.ui.warn(format!(
                "{} names {}, which does not exist: not writable",
                config::SANDBOX_ALLOW_WRITE,
                path.display()
            ));
        }
    }
    let agent_state = match (agent, &home) {
        (Some(agent), Some(home)) => crate::model::agent::state_paths(agent)
            .iter()
            .map(|p| home.join(p))
            .filter(|p| p.symlink_metadata().is_ok())
            .collect(),
        _ => Vec::new(),
    };
    Ok((allow_write, agent_state))
}

/// `~/x` under the home directory; an absolute path as it is; else `None`.
fn expand(value: &str, home: Option<&Path>) -> Option<PathBuf> {
    let path = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (Some(_), None) => return None,
        (None, _) => PathBuf::from(value),
    };
    path.is_absolute().then_some(path)
}
