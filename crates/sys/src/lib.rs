//! The operating system: `/proc` (read in one place), the repository lock,
//! atomic file writes, where bullpen puts things on disk, the attach socket,
//! the caller's terminal and how memory goes back to the system.

// The model, under the name the code has always used.
use bullpen_model as model;

pub mod atomic;
pub mod copy;
pub mod layout;
pub mod localtime;
pub mod lock;
pub mod memory;
pub mod paths;
pub mod procfs;
pub mod regular;
pub mod remove;
pub mod socket;
pub mod term;

#[cfg(test)]
mod signal_names;
