//! Shell completion: session ids completed from the current repository, and the
//! scripts that plug `git-bullpen` into bash, zsh and fish (and, through them, into
//! git's own completion for `git bullpen <TAB>`).
//!
//! The scripts are thin: on every <TAB> they run `git-bullpen` with
//! [`config::ENV_COMPLETE`] set to the shell's name, and clap_complete's engine in
//! this process answers from the clap definitions, calling [`session_id_candidates`]
//! for arguments that take a session id. So new subcommands and options complete
//! without regenerating anything; the committed files in `completions/` are exactly
//! what `GIT_BULLPEN_COMPLETE=<shell> git-bullpen` prints.
//!
//! Completion never prints an error: when there is no repository, or a record cannot
//! be read, it offers nothing.

use std::path::Path;

use clap_complete::env::{EnvCompleter, Shells};
use clap_complete::{CompleteEnv, CompletionCandidate};

use crate::git::store;
use crate::git::Repo;
use crate::model::command::render_command;
use crate::model::config;
use crate::model::id::{BRANCH_PREFIX, RECORD_PREFIX};
use crate::model::{Process, Record, SessionId, State};
use crate::sys::layout::Layout;

/// The command line's definition, as [`complete_from_env`] was given it.
static CLI: std::sync::OnceLock<fn() -> clap::Command> = std::sync::OnceLock::new();

/// The shell being answered, as [`config::ENV_COMPLETE`] named it.
static SHELL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The program the scripts call, found on PATH (where git finds it too).
pub const PROGRAM: &str = "git-bullpen";

/// The committed files of `completions/`, by file name. `install.sh` installs
/// them as `share/bash-completion/completions/git-bullpen`,
/// `share/zsh/site-functions/_git-bullpen`,
/// `share/fish/vendor_completions.d/git-bullpen.fish` and
/// `share/fish/vendor_conf.d/git-bullpen.fish` (from `git-bullpen.conf.fish`).
pub fn files() -> Vec<(&'static str, Vec<u8>)> {
    let mut files = Vec::new();
    for (name, completer) in [
        ("git-bullpen", &GitBash as &dyn EnvCompleter),
        ("_git-bullpen", &GitZsh),
        ("git-bullpen.fish", &GitFish { git_hook: false }),
    ] {
        let mut buf = Vec::new();
        // Writing to a Vec cannot fail.
        let _ =
            completer.write_registration(config::ENV_COMPLETE, PROGRAM, PROGRAM, PROGRAM, &mut buf);
        files.push((name, buf));
    }
    files.push(("git-bullpen.conf.fish", fish_git_hook()));
    files
}

/// Call first thing in `main`: when [`config::ENV_COMPLETE`] is set, answer the
/// shell (or print its script) and exit; otherwise return and let main run.
/// `cli` is the whole command line's definition (`Cli::command`).
pub fn complete_from_env(cli: fn() -> clap::Command) {
    // clap_complete removes the variable before it calls the candidates.
    if let Ok(shell) = std::env::var(config::ENV_COMPLETE) {
        let _ = SHELL.set(shell);
    }
    let _ = CLI.set(cli);
    CompleteEnv::with_factory(cli)
        .var(config::ENV_COMPLETE)
        .bin(PROGRAM)
        .completer(PROGRAM)
        .shells(Shells(&[&GitBash, &GitZsh, &GitFish { git_hook: true }]))
        .complete();
}

/// Candidates for an argument naming an existing session that is not collected:
/// `resume`, `path`, `rm`. Hook it onto an id argument with
/// `#[arg(add = clap_complete::ArgValueCandidates::new(crate::complete::session_id_candidates))]`.
///
/// Only ref names are listed, no record is read (a <TAB> must answer in a few
/// milliseconds at thousands of sessions): a session is offered while it has
/// both its record and its branch, and gc deletes the branch of every session
/// it collects.
pub fn session_id_candidates() -> Vec<CompletionCandidate> {
    ids_here(false)
        .map(|(repo, ids)| described(&repo, not_typed(ids)))
        .unwrap_or_default()
}

/// Like [`session_id_candidates`], collected sessions included (`ls` shows them).
pub fn any_session_id_candidates() -> Vec<CompletionCandidate> {
    ids_here(true)
        .map(|(repo, ids)| described(&repo, not_typed(ids)))
        .unwrap_or_default()
}

/// What `resume` takes: the sessions here that are not collected, then the
/// sessions fetched from remotes (`origin/fix-login`, `ls --remote`'s), from
/// ref names alone, as [`session_id_candidates`].
pub fn resume_candidates() -> Vec<CompletionCandidate> {
    let Some((repo, ids)) = ids_here(false) else {
        return Vec::new();
    };
    let mut out = described(&repo, ids);
    for remote in store::fetched_remotes(&repo).unwrap_or_default() {
        for name in repo
            .ref_names_under(&remote.tracking_prefix())
            .unwrap_or_default()
        {
            if let Ok(id) = name.parse::<SessionId>() {
                out.push(CompletionCandidate::new(format!("{remote}/{id}")));
            }
        }
    }
    out
}

/// Names of the configured remotes: `push`, `fetch`.
pub fn remote_candidates() -> Vec<CompletionCandidate> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(repo) = Repo::discover(&cwd) else {
        return Vec::new();
    };
    repo.remote_names()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// Candidates for `attach`: only sessions whose background run is alive on a
/// terminal.
pub fn attachable_candidates() -> Vec<CompletionCandidate> {
    let records = attachable(records_here(), crate::sys::procfs::is_session_alive);
    candidates(&records, false)
}

/// Pure: the records whose run can be attached to: running in the background,
/// on a terminal, and alive (as `alive` says of its process).
pub fn attachable(records: Vec<Record>, alive: impl Fn(&Process) -> bool) -> Vec<Record> {
    records
        .into_iter()
        .filter(|r| {
            r.state == State::Running
                && r.process
                    .as_ref()
                    .is_some_and(|p| p.background && p.terminal && alive(p))
        })
        .collect()
}

/// Sessions recorded running (`lost` ones included: stop ends them): `stop`, `wait`.
pub fn running_session_id_candidates() -> Vec<CompletionCandidate> {
    let typed = typed_words();
    let running: Vec<Record> = records_here()
        .into_iter()
        .filter(|r| r.state == State::Running && !typed.iter().any(|w| w == r.id.as_str()))
        .collect();
    candidates(&running, false)
}

/// Sessions with a background log: `logs` (names only, as [`session_id_candidates`]).
pub fn logged_session_id_candidates() -> Vec<CompletionCandidate> {
    let Some((repo, ids)) = ids_here(true) else {
        return Vec::new();
    };
    let Ok(layout) = Layout::for_repo(&repo) else {
        return Vec::new();
    };
    let logged: Vec<SessionId> = ids
        .into_iter()
        .filter(|id| layout.log_path(id).is_file())
        .collect();
    described(&repo, logged)
}

/// The ids of the repository around the current directory, from ref names
/// alone (collected ones only with `collected`: see [`session_id_candidates`]);
/// `None` on any error.
fn ids_here(collected: bool) -> Option<(Repo, Vec<SessionId>)> {
    let repo = Repo::discover(&std::env::current_dir().ok()?).ok()?;
    let ids = session_ids(&repo, collected).ok()?;
    Some((repo, ids))
}

fn session_ids(repo: &Repo, collected: bool) -> anyhow::Result<Vec<SessionId>> {
    let records = repo.ref_names_under(RECORD_PREFIX)?;
    let branches = if collected {
        Vec::new()
    } else {
        repo.ref_names_under(BRANCH_PREFIX)?
    };
    Ok(with_branches(records, &branches, collected))
}

/// Pure: the valid ids among `records` (sorted names), only those also in
/// `branches` (sorted) unless `collected`.
pub fn with_branches(records: Vec<String>, branches: &[String], collected: bool) -> Vec<SessionId> {
    records
        .into_iter()
        .filter(|name| collected || branches.binary_search(name).is_ok())
        .filter_map(|name| name.parse().ok())
        .collect()
}

/// At most this many ids are described (`exited: make test`): reading their
/// records costs a few milliseconds at a few dozen, and a longer list is read
/// for its ids anyway. Beyond it the ids come alone, from ref names.
pub const DESCRIBED_AT_MOST: usize = 40;

/// The candidates for `ids`, each described by its recorded state and command
/// where the shell shows descriptions (zsh, fish) and there are at most
/// [`DESCRIBED_AT_MOST`]; else the ids alone (bash never shows them).
fn described(repo: &Repo, ids: Vec<SessionId>) -> Vec<CompletionCandidate> {
    let shows = SHELL.get().is_some_and(|shell| shell != "bash");
    if !shows || ids.is_empty() || ids.len() > DESCRIBED_AT_MOST {
        return plain(&ids);
    }
    let mut cache = crate::git::cache::ObjectCache::open(repo);
    let records: Vec<Record> = store::load_all_cached(repo, &mut cache)
        .map(|(stored, _)| stored.into_iter().map(|s| s.record).collect())
        .unwrap_or_default();
    describe(&ids, &records)
}

/// Pure: one candidate per id, described from its record when there is one.
pub fn describe(ids: &[SessionId], records: &[Record]) -> Vec<CompletionCandidate> {
    ids.iter()
        .map(|id| {
            let candidate = CompletionCandidate::new(id.as_str());
            match records.iter().find(|r| &r.id == id) {
                Some(r) => candidate.help(Some(description(r).into())),
                None => candidate,
            }
        })
        .collect()
}

/// What a session's candidate says of it: `exited 0: make test`, the end in
/// `model::ending`'s words.
fn description(r: &Record) -> String {
    let state = match (r.state, &r.exit) {
        (State::Exited | State::Stopped, Some(e)) => {
            crate::model::ending::brief(r.state, e.code, e.signal)
        }
        _ => r.state.as_str().to_owned(),
    };
    format!("{state}: {}", render_command(&r.command))
}

/// The words typed after the subcommand, before the one being completed: a
/// session named there once is not offered again (`wait a b <TAB>`).
fn typed_words() -> Vec<String> {
    let words: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    let current = std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or(words.len().saturating_sub(1));
    let commands: Vec<String> = match CLI.get() {
        Some(cli) => cli()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect(),
        None => Vec::new(),
    };
    after_subcommand(&words, current, &commands)
}

/// Pure: of `words` (the program first), those after the first that names one
/// of `commands` and before `current`.
pub fn after_subcommand(words: &[String], current: usize, commands: &[String]) -> Vec<String> {
    let end = current.min(words.len());
    let Some(sub) = words[..end].iter().position(|w| commands.contains(w)) else {
        return Vec::new();
    };
    words[sub + 1..end].to_vec()
}

/// `ids` without those already typed on the line.
fn not_typed(ids: Vec<SessionId>) -> Vec<SessionId> {
    let typed = typed_words();
    ids.into_iter()
        .filter(|id| !typed.iter().any(|w| w == id.as_str()))
        .collect()
}

/// Pure: one candidate per id, without a description (none is read).
pub fn plain(ids: &[SessionId]) -> Vec<CompletionCandidate> {
    ids.iter()
        .map(|id| CompletionCandidate::new(id.as_str()))
        .collect()
}

/// Revisions for `spawn --base`, as git's own completion offers them: HEAD,
/// local branches, remote-tracking branches and tags (short names).
pub fn revision_candidates() -> Vec<CompletionCandidate> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(repo) = Repo::discover(&cwd) else {
        return Vec::new();
    };
    let mut out = vec![CompletionCandidate::new("HEAD")];
    for (prefix, help) in [
        ("refs/heads/", "branch"),
        ("refs/remotes/", "remote branch"),
        ("refs/tags/", "tag"),
    ] {
        for name in repo.ref_names_with_prefix(prefix).unwrap_or_default() {
            let short = name.strip_prefix(prefix).unwrap_or(&name);
            // `origin/HEAD` is how git names the remote's default branch: offered too.
            out.push(CompletionCandidate::new(short).help(Some(help.into())));
        }
    }
    out
}

/// Agents for `spawn --agent`: the built-in profiles and those in git config.
pub fn agent_candidates() -> Vec<CompletionCandidate> {
    let Some(repo) = std::env::current_dir()
        .ok()
        .and_then(|cwd| Repo::discover(&cwd).ok())
    else {
        return Vec::new();
    };
    crate::agent::names(&repo)
        .into_iter()
        .map(|n| CompletionCandidate::new(n.as_str()))
        .collect()
}

/// The records of the repository around the current directory; none on any error.
fn records_here() -> Vec<Record> {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| records_in(&cwd).ok())
        .map(|(_, r)| r)
        .unwrap_or_default()
}

fn records_in(cwd: &Path) -> anyhow::Result<(Repo, Vec<Record>)> {
    let repo = Repo::discover(cwd)?;
    // `ls`'s cache of records, read (never written) here.
    let mut cache = crate::git::cache::ObjectCache::open(&repo);
    let (stored, _unreadable) = store::load_all_cached(&repo, &mut cache)?;
    Ok((repo, stored.into_iter().map(|s| s.record).collect()))
}

/// Pure: one candidate per session, described by its recorded state and command.
/// Collected sessions only with `include_collected`; the order is creation order.
pub fn candidates(records: &[Record], include_collected: bool) -> Vec<CompletionCandidate> {
    records
        .iter()
        .filter(|r| include_collected || r.state != State::Collected)
        .map(|r| CompletionCandidate::new(r.id.as_str()).help(Some(description(r).into())))
        .collect()
}

mod scripts;
pub use scripts::{fish_git_hook, sorted, without_options, FISH_GIT_HOOK};
use scripts::{GitBash, GitFish, GitZsh};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::SCHEMA;
    use crate::model::Record;

    fn record(id: &str, state: State) -> Record {
        Record {
            schema: SCHEMA,
            id: id.parse().unwrap(),
            branch: format!("bullpen/{id}"),
            worktree: format!("/wt/{id}"),
            base: "0".repeat(40),
            base_ref: None,
            command: vec!["sh".into(), "-c".into(), "make test".into()],
            agent: None,
            agent_args: Vec::new(),
            state,
            host: "h".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
            run_start: None,
            process: None,
            exit: None,
            log: None,
            spawner: None,
            clone_id: None,
            resumed_from: None,
            extra: Default::default(),
        }
    }

    fn values(c: &[CompletionCandidate]) -> Vec<String> {
        c.iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn candidates_skip_collected_unless_asked() {
        let rs = [
            record("a", State::Running),
            record("b", State::Collected),
            record("c", State::Exited),
        ];
        assert_eq!(values(&candidates(&rs, false)), ["a", "c"]);
        assert_eq!(values(&candidates(&rs, true)), ["a", "b", "c"]);
        assert_eq!(
            candidates(&rs, false)[0]
                .get_help()
                .map(|h| h.to_string())
                .as_deref(),
            Some("running: sh -c 'make test'")
        );
    }

    #[test]
    fn ids_without_a_branch_are_collected_and_invalid_names_never_offered() {
        let records = ["a", "b", "Bad", "c"].map(String::from).to_vec();
        let branches = ["a", "c", "z"].map(String::from).to_vec();
        let ids = |v: Vec<SessionId>| v.iter().map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ids(with_branches(records.clone(), &branches, false)),
            ["a", "c"]
        );
        assert_eq!(
            ids(with_branches(records, &branches, true)),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn attach_is_offered_only_runs_alive_on_a_terminal() {
        let run = |id: &str, background: bool, terminal: bool, pid: u32| {
            let mut r = record(id, State::Running);
            r.process = Some(Process {
                pid,
                start_time: Some(1),
                boot_id: None,
                background,
                supervisor_pid: Some(1),
                started_at: String::new(),
                supervisor_start_time: Some(1),
                stop_requested_at: None,
                terminal,
                command: None,
            });
            r
        };
        let rs = vec![
            run("tty", true, true, 10),
            run("old-bg", true, false, 11),
            run("fg", false, false, 12),
            run("lost", true, true, 13),
            record("done", State::Exited),
        ];
        let names: Vec<String> = attachable(rs, |p| p.pid != 13)
            .iter()
            .map(|r| r.id.to_string())
            .collect();
        assert_eq!(names, ["tty"]);
    }

    #[test]
    fn no_repository_means_no_candidates() {
        let dir = tempfile::tempdir().unwrap();
        assert!(records_in(dir.path()).is_err());
    }

    #[test]
    fn options_are_left_out_until_a_dash_is_typed() {
        assert_eq!(without_options("alpha,--json,beta,-h", ","), "alpha,beta");
        assert_eq!(without_options("--json,--all", ","), "");
        assert_eq!(
            without_options("alpha\tsession\n--json\tPrint JSON\n", "\n"),
            "alpha\tsession\n"
        );
        assert_eq!(without_options("", "\n"), "");
    }

    #[test]
    fn candidates_are_sorted_and_deduplicated() {
        assert_eq!(
            sorted("spawn\nls\nattach\nls\n", "\n"),
            "attach\nls\nspawn\n"
        );
        assert_eq!(sorted("b\x0ba", "\x0b"), "a\x0bb");
        assert_eq!(sorted("", "\n"), "");
    }

    #[test]
    fn only_words_after_the_subcommand_count_as_typed() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let commands = w(&["ls", "wait"]);
        let line = w(&["git-bullpen", "--no-color", "wait", "ls", "b", ""]);
        assert_eq!(after_subcommand(&line, 5, &commands), ["ls", "b"]);
        assert_eq!(after_subcommand(&line, 3, &commands), Vec::<String>::new());
        assert_eq!(
            after_subcommand(&w(&["git-bullpen", ""]), 1, &commands),
            Vec::<String>::new()
        );
    }

    #[test]
    fn ids_are_described_from_their_records() {
        let ids: Vec<SessionId> = vec!["a".parse().unwrap(), "gone".parse().unwrap()];
        let got = describe(&ids, &[record("a", State::Exited)]);
        assert_eq!(values(&got), ["a", "gone"]);
        assert_eq!(
            got[0].get_help().map(|h| h.to_string()).as_deref(),
            Some("exited: sh -c 'make test'")
        );
        assert!(got[1].get_help().is_none());
    }

    #[test]
    fn every_file_calls_back_with_our_variable() {
        for (name, bytes) in files() {
            let s = String::from_utf8(bytes).unwrap();
            assert!(s.contains(&format!("{}=", config::ENV_COMPLETE)), "{name}");
            assert!(!s.contains("VAR="), "{name}: placeholder left");
        }
    }
}
