//! The operating system: `/proc` (read in one place), the repository lock,
//! atomic file writes, where bullpen puts things on disk, the attach socket,
//! the caller's terminal and how memory goes back to the system.

// The model, under the name the code has always used.
use bullpen_model as model;

pub mod atomic;
pub mod copy;
pub mod in_dir;
#[cfg(target_os = "linux")]
pub mod landlock;
/// Elsewhere there is no Landlock: `--sandbox` uses Seatbelt on macOS
/// (`run::sandbox`), and fails closed on other systems.
#[cfg(not(target_os = "linux"))]
pub mod landlock {
    use std::os::fd::{OwnedFd, RawFd};

    pub fn kernel_abi() -> i32 {
        0
    }

    pub fn prepare(
        _: &[crate::model::sandbox::Root],
        _: i32,
        _: &[(String, Option<String>)],
    ) -> anyhow::Result<OwnedFd> {
        anyhow::bail!("this system has no Landlock")
    }

    /// # Safety
    /// Never called: [`prepare`] makes no ruleset here.
    pub unsafe fn restrict_in_child(_: RawFd) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}
pub mod layout;
pub mod localtime;
pub mod lock;
pub mod memory;
pub mod pager;
pub mod paths;
pub mod procfs;
pub mod program;
pub mod regular;
pub mod remove;
pub mod root_hints;
pub mod small_files;
pub mod socket;
pub mod term;

#[cfg(test)]
mod signal_names;
