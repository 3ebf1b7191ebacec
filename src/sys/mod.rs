//! The operating system: `/proc` (read in one place), the repository lock,
//! atomic file writes, where bullpen puts things on disk, the attach socket,
//! the caller's terminal and how memory goes back to the system.

pub mod atomic;
pub mod copy;
pub mod landlock;
pub mod layout;
pub mod lock;
pub mod memory;
pub mod paths;
pub mod procfs;
pub mod regular;
pub mod remove;
pub mod socket;
pub mod term;
