//! `git bullpen ls`.

use crate::support::Env;
