//! `git bullpen ls`.

#[allow(unused_imports)] // until this module has tests
use crate::support::Env;
