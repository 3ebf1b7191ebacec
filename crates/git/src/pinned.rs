//! What git and gix would run from a repository's own configuration, pinned
//! off for bullpen's own reads. A session's worktree, and any repository an
//! agent made inside one, is the agent's to configure (`config.worktree`, a
//! repointed `.git`, a nested repository's `config`; under `--sandbox` too, as
//! Landlock grants the worktree whole): bullpen looking at it must run none of
//! it, outside any sandbox.
//!
//! - The git CLI (`cli.rs`, every call): `core.fsmonitor=false`, and in a
//!   directory other than the main worktree `core.hooksPath=/dev/null` (git
//!   runs `post-index-change` when it writes an index, as `status` and
//!   `read-tree` do). As `-c`, they reach every git that git starts. The calls
//!   bullpen makes run no diff (`diff.external`, textconv), no merge driver, no
//!   transport and no git in a submodule in a session worktree (a submodule's
//!   own `status` would take its filters from its config: `submodules.rs`).
//! - gix, opened on a worktree or a repository in one (`status.rs`): no
//!   program from a repository's own configuration files (gix runs only filter
//!   drivers there: `filter.<driver>.clean`/`process`), while what the user's
//!   own configuration and `git -c` say stays. gix runs no fsmonitor, hook,
//!   diff driver or textconv in a status, and opens submodules with the same
//!   options.

/// `git -c` for every git bullpen runs.
pub(super) const ALWAYS: &[&str] = &["core.fsmonitor=false"];

/// `git -c` for a git that runs in a directory other than the main worktree.
pub(super) const ELSEWHERE: &[&str] = &["core.hooksPath=/dev/null"];

/// The options to open a worktree (or a repository inside one) with gix,
/// `overrides` being `git -c`'s configuration and bullpen's own.
pub(super) fn gix_options(overrides: Vec<gix::bstr::BString>) -> gix::open::Options {
    gix::open::Options::default()
        .cli_overrides(overrides)
        .filter_config_section(no_repository_programs)
}

/// gix's test of a configuration section it may take a program from: none
/// from the repository's own files (`config`, `config.worktree`).
fn no_repository_programs(meta: &gix::config::file::Metadata) -> bool {
    meta.source.kind() != gix::config::source::Kind::Repository
}
