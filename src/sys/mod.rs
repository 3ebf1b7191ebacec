//! The operating system: `/proc` (read in one place), the repository lock, and
//! where bullpen puts things on disk.

pub mod layout;
pub mod lock;
pub mod procfs;
