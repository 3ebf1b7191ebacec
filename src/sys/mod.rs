//! The operating system: `/proc` (read in one place), the repository lock,
//! atomic file writes, where bullpen puts things on disk, the attach socket
//! and the caller's terminal.

pub mod atomic;
pub mod copy;
pub mod layout;
pub mod lock;
pub mod paths;
pub mod procfs;
pub mod socket;
pub mod term;
