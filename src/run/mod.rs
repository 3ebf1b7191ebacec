//! Running a session's command: in the foreground on the caller's terminal, or
//! in the background under a detached supervisor; the gate that holds a command
//! between fork and exec until its run is recorded; the end of a run and its
//! provenance notes; what of a run still lives; signalling a run's group.

pub mod attention;
pub mod back;
pub mod background;
pub mod claim;
pub mod env;
pub mod finish;
pub mod foreground;
pub mod gate;
pub mod group;
pub mod keep;
pub mod kept_tmp;
pub mod liveness;
pub mod notify;
pub mod pty;
pub mod relay;
pub mod sandbox;
pub mod sandbox_guard;
pub mod screen;
pub mod setup;
pub mod sizes;
pub mod supervisor;
pub mod unfed;
pub mod wire;

pub use background::run_background;
pub use foreground::run_foreground;
