//! Plain data and pure helpers, no I/O: session ids, records and states, object
//! ids, the facts the plans consume (status counts, process identity, who uses a
//! directory), config keys, time, errors with hints. Every plan and decision in
//! the crate imports only this module (enforced by `tests/cli/layout.rs`).

pub mod activity;
pub mod agent;
pub mod command;
pub mod config;
pub mod conversation;
pub mod ending;
pub mod error;
pub mod evidence;
pub mod exit;
pub mod id;
pub mod keys;
pub mod local;
pub mod names;
pub mod notes;
pub mod oid;
pub mod pager;
pub mod params;
pub mod paths;
pub mod private_tmp;
pub mod process;
pub mod record;
pub mod refspec;
pub mod remote;
pub mod sandbox;
pub mod sandbox_guard;
pub mod status;
pub mod suggest;
pub mod time;
pub mod usage;

pub use error::{Error, Kind};
pub use evidence::{Evidence, Landing, Since, Unmerged};
pub use id::SessionId;
pub use oid::Oid;
pub use record::{Exit, Observed, Process, Record, State};
pub use status::{Dirt, Hiding, Ignored, Nested, NestedKind};
