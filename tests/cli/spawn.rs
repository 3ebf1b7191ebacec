//! `git bullpen spawn`.

#[allow(unused_imports)] // until this module has tests
use crate::support::Env;
