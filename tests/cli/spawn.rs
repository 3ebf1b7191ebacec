//! `git bullpen spawn`.

use crate::support::Env;
