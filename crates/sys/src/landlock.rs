//! Landlock (Linux): the ruleset of a sandboxed run, made before the fork from
//! `model::sandbox`'s roots, and applied by the gate in the forked child just
//! before exec (`restrict_in_child`: two system calls, async-signal-safe).
//!
//! Only write rights are handled (reads, execution and device ioctls stay
//! broad); with ABI 6 signals and abstract Unix sockets are scoped to the
//! sandbox.

use std::os::fd::{OwnedFd, RawFd};

use anyhow::{Context, Result};
use landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};

use crate::model::config::ENV_TEST_LANDLOCK_ABI;
use crate::model::sandbox::{Grant, Root};

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask the kernel for its ABI.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The kernel's Landlock ABI (0: none), at most what the test-only
/// `BULLPEN_TEST_LANDLOCK_ABI` says (tests play a kernel without Landlock).
pub fn kernel_abi() -> i32 {
    // SAFETY: with a null attribute and size 0 this call only returns the ABI
    // version (or fails); it touches no memory of ours.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    let real = i32::try_from(v).unwrap_or(0).max(0);
    match std::env::var(ENV_TEST_LANDLOCK_ABI)
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
    {
        Some(cap) => real.min(cap.max(0)),
        None => real,
    }
}

/// The rights a grant gives, of those handled.
fn rights(grant: &Grant, handled: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
    let wanted = match grant {
        Grant::Tree => handled,
        Grant::RefFiles { .. } => AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::RemoveFile,
        Grant::Write => AccessFs::WriteFile | AccessFs::Truncate,
    };
    wanted & handled
}

/// A right by its name in `BULLPEN_TEST_SANDBOX_DROP` (tests only).
fn right(name: &str) -> Option<AccessFs> {
    Some(match name {
        "write-file" => AccessFs::WriteFile,
        "make-reg" => AccessFs::MakeReg,
        "remove-file" => AccessFs::RemoveFile,
        "make-dir" => AccessFs::MakeDir,
        "remove-dir" => AccessFs::RemoveDir,
        "refer" => AccessFs::Refer,
        "truncate" => AccessFs::Truncate,
        _ => return None,
    })
}

/// The ruleset for `roots` on a kernel with ABI `abi` (at least 1), as a
/// descriptor for [`restrict_in_child`]. Every root must exist. `drop`:
/// `(key, right)` pairs taken away (tests only; `None` drops the root).
pub fn prepare(roots: &[Root], abi: i32, drop: &[(String, Option<String>)]) -> Result<OwnedFd> {
    let abi = ABI::from(abi);
    // Device ioctls (a terminal's) stay allowed, as every read does.
    let handled = AccessFs::from_write(abi) & !AccessFs::IoctlDev;
    let file_rights = AccessFs::from_file(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(handled)
        .context("cannot make a Landlock ruleset")?;
    if !Scope::from_all(abi).is_empty() {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .context("cannot make a Landlock ruleset")?;
    }
    let mut created = ruleset.create().context("cannot make a Landlock ruleset")?;
    for root in roots {
        let mut access = rights(&root.grant, handled);
        for (key, name) in drop.iter().filter(|(k, _)| k == root.key) {
            match name.as_deref().map(|n| (n, right(n))) {
                None => access = BitFlags::EMPTY,
                Some((_, Some(r))) => access &= !r,
                Some((n, None)) => anyhow::bail!("{key}: no right named {n} to drop"),
            }
        }
        if access.is_empty() {
            continue;
        }
        if !root.path.is_dir() {
            access &= file_rights;
        }
        let fd = PathFd::new(&root.path)
            .with_context(|| format!("cannot open {} for the sandbox", root.path.display()))?;
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .with_context(|| format!("cannot add {} to the sandbox", root.path.display()))?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.context("the kernel made no Landlock ruleset")
}

/// In the forked child, before exec: no new privileges, then the ruleset.
/// Only async-signal-safe calls (two system calls).
///
/// # Safety
/// `fd` must be the open descriptor [`prepare`] returned.
pub unsafe fn restrict_in_child(fd: RawFd) -> std::io::Result<()> {
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
