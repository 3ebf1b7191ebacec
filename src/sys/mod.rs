//! The operating system: `/proc` (read in one place), the repository lock,
//! atomic file writes, and where bullpen puts things on disk.

pub mod atomic;
pub mod copy;
pub mod layout;
pub mod lock;
pub mod paths;
pub mod procfs;
