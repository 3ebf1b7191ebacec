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

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use clap_complete::env::{Bash, EnvCompleter, Fish, Shells, Zsh};
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

/// What a session's candidate says of it: `exited: make test`.
fn description(r: &Record) -> String {
    format!("{}: {}", r.state.as_str(), render_command(&r.command))
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

/// The parts of an [`EnvCompleter`] that hand over to clap_complete's own
/// completer for the shell, options left out until a `-` is typed
/// ([`without_options`]); the registration script is ours.
macro_rules! delegate_to {
    ($shell:expr, $index:expr, $separator:expr) => {
        fn name(&self) -> &'static str {
            $shell.name()
        }
        fn is(&self, name: &str) -> bool {
            $shell.is(name)
        }
        fn write_complete(
            &self,
            cmd: &mut clap::Command,
            args: Vec<OsString>,
            current_dir: Option<&Path>,
            buf: &mut dyn Write,
        ) -> std::io::Result<()> {
            let index: fn(&[OsString]) -> usize = $index;
            let dash = args
                .get(index(&args))
                .is_some_and(|w| w.to_string_lossy().starts_with('-'));
            if dash {
                return $shell.write_complete(cmd, args, current_dir, buf);
            }
            let mut all = Vec::new();
            $shell.write_complete(cmd, args, current_dir, &mut all)?;
            let separator: fn() -> String = $separator;
            let kept = without_options(&String::from_utf8_lossy(&all), &separator());
            buf.write_all(sorted(&kept, &separator()).as_bytes())
        }
    };
}

/// The word being completed, for bash and zsh: where `_CLAP_COMPLETE_INDEX` says.
fn index_from_env(_args: &[OsString]) -> usize {
    std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse().ok())
        .unwrap_or_default()
}

/// The word being completed, for fish: the last one.
fn last_index(args: &[OsString]) -> usize {
    args.len().saturating_sub(1)
}

/// What separates candidates for bash and zsh: `_CLAP_IFS`, else a newline.
fn ifs() -> String {
    std::env::var("_CLAP_IFS").unwrap_or_else(|_| "\n".to_owned())
}

/// Fish reads one candidate a line.
fn newline() -> String {
    "\n".to_owned()
}

/// Pure: the shell's candidates (`separator` between them) without the options,
/// as git's own completion does: options are offered once the word being
/// completed starts with `-`, not mixed in with session ids, subcommands and
/// revisions (none of which can start with `-`).
pub fn without_options(candidates: &str, separator: &str) -> String {
    let kept: Vec<&str> = candidates
        .split(separator)
        .filter(|c| !c.is_empty() && !c.starts_with('-'))
        .collect();
    let mut out = kept.join(separator);
    if separator == "\n" && !out.is_empty() && candidates.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Pure: the candidates (`separator` between them) in sorted order, as git
/// lists its commands and branches (the scripts keep the order they are given:
/// clap's is declaration order).
pub fn sorted(candidates: &str, separator: &str) -> String {
    let mut all: Vec<&str> = candidates
        .split(separator)
        .filter(|c| !c.is_empty())
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut out = all.join(separator);
    if separator == "\n" && !out.is_empty() && candidates.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn header(out: &mut dyn Write, comment: &str, what: &str) -> std::io::Result<()> {
    writeln!(
        out,
        "{comment} {what} for git-bullpen (`git bullpen` and `git-bullpen`).\n\
         {comment} Generated from the clap definitions; refresh with\n\
         {comment}   BULLPEN_BLESS=1 cargo test --test cli docs\n\
         {comment} Candidates come from `{var}=<shell> git-bullpen`, which\n\
         {comment} completes subcommands, options and the current repository's session ids.",
        var = config::ENV_COMPLETE,
    )
}

/// bash: clap's dynamic completer for `git-bullpen`, plus `_git_bullpen`, which git's
/// own completion calls for `git bullpen` (loading this file on demand through
/// bash-completion's `_completion_loader git-bullpen`).
struct GitBash;

/// The bash function for `git-bullpen`: clap_complete's protocol (the words after
/// `--`, the index of the one being completed, the separator), with three things
/// clap's own script gets wrong for a git command:
/// - bash splits `--agent=c` at the `=` of `COMP_WORDBREAKS`; the words are joined
///   again (bash-completion's `_get_comp_words_by_ref -n =:`, or git's words under
///   `git bullpen`), and bash is given back only what follows its own word break,
///   so `--agent=<TAB>` becomes `--agent=claude`, not `--agent=--agent=claude`;
/// - where nothing is offered, nothing is: bash's fallback to file names is turned
///   off, except in the command after `--`;
/// - the program may be `git <global options> bullpen` (set by `_git_bullpen`).
const BASH_FUNCTION: &str = r#"
_clap_complete_git_bullpen() {
    local IFS=$'\013'
    local cur=$2 cword=$COMP_CWORD
    local -a words=("${COMP_WORDS[@]}")
    if [[ -n ${__git_bullpen_words+set} ]]; then
        words=("${__git_bullpen_words[@]}")
    elif declare -F _get_comp_words_by_ref >/dev/null; then
        _get_comp_words_by_ref -n =: -c cur -w words -i cword
    else
        words[cword]=$cur
    fi
    local space=true
    compopt +o nospace 2>/dev/null && space=false
    COMPREPLY=( $( \
        _CLAP_IFS="$IFS" \
        _CLAP_COMPLETE_INDEX="$cword" \
        _CLAP_COMPLETE_COMP_TYPE="${COMP_TYPE-}" \
        _CLAP_COMPLETE_SPACE="$space" \
        VAR="bash" \
        "${__git_bullpen_run[@]:-git-bullpen}" -- "${words[@]}" \
    ) ) || { unset COMPREPLY; return; }
    # Bash replaces only the part of the word after its last word break.
    local broken=${cur%"${cur##*[=:]}"}
    if [[ -n $broken && $COMP_WORDBREAKS == *"${broken: -1}"* ]]; then
        COMPREPLY=("${COMPREPLY[@]#"$broken"}")
    fi
    if (( ${#COMPREPLY[@]} == 0 )); then
        local i
        for (( i = 1; i < cword; i++ )); do
            [[ ${words[i]} == -- ]] && return
        done
        compopt +o default +o bashdefault 2>/dev/null
    elif [[ $space == false && ${COMPREPLY[0]} =~ [=/:]$ ]]; then
        compopt -o nospace
    fi
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -o nospace -o bashdefault -o nosort -F _clap_complete_git_bullpen git-bullpen
else
    complete -o nospace -o bashdefault -F _clap_complete_git_bullpen git-bullpen
fi
"#;

/// git's completion (git-completion.bash) calls `_git_bullpen` for `git bullpen
/// ...` with `words`/`cword`/`cur` set (joined at `=` and `:` already) and
/// `__git_cmd_idx` at `bullpen`: complete as if `git-bullpen ...` had been typed.
/// After `git -C <dir>` (or `--git-dir`), git itself runs the completer, so it
/// sees the repository the command would.
const BASH_GIT_GLUE: &str = r#"
_git_bullpen() {
    local i=${__git_cmd_idx:-1}
    local -a __git_bullpen_words=(git-bullpen "${words[@]:i+1}")
    local COMP_CWORD=$((cword - i))
    local -a __git_bullpen_run=()
    if [[ -n ${__git_C_args-} || -n ${__git_dir-} ]]; then
        __git_bullpen_run=(git ${__git_C_args:+"${__git_C_args[@]}"} ${__git_dir:+--git-dir="$__git_dir"} bullpen)
    fi
    _clap_complete_git_bullpen git-bullpen "$cur"
}"#;

impl EnvCompleter for GitBash {
    delegate_to!(Bash, index_from_env, ifs);
    fn write_registration(
        &self,
        var: &str,
        _name: &str,
        _bin: &str,
        _completer: &str,
        buf: &mut dyn Write,
    ) -> std::io::Result<()> {
        writeln!(buf, "# -*- shell-script -*-")?;
        header(buf, "#", "bash completion")?;
        write!(buf, "{}", BASH_FUNCTION.trim_start().replace("VAR", var))?;
        writeln!(buf, "{}", BASH_GIT_GLUE)
    }
}

/// zsh: an autoloadable `_git-bullpen` for `$fpath`. zsh's own `_git` lists it as a
/// third-party command (its `#description` line) and calls it for `git bullpen`;
/// `#compdef` makes compinit use it for `git-bullpen`. Sourced from a `.zshrc`
/// after compinit instead, it registers itself with `compdef`.
struct GitZsh;

const ZSH_BODY: &str = r#"
_git-bullpen() {
    local -a args completions dirs other run
    local completion value
    # words[1] is `bullpen` under `git bullpen`, `git-bullpen` on its own.
    args=(git-bullpen "${(@)words[2,-1]}")
    # Under zsh's _git, `git -C <dir>` is in opt_args (--git-dir is exported
    # as GIT_DIR already): git itself runs the completer there.
    run=(git-bullpen)
    if (( ${+opt_args} )) && (( ${+opt_args[-C]} )); then
        run=(git -C "${(Q)${~opt_args[-C]}}" bullpen)
    fi
    completions=("${(@f)$( \
        _CLAP_IFS=$'\n' \
        _CLAP_COMPLETE_INDEX=$(( CURRENT - 1 )) \
        VAR=zsh \
        "${run[@]}" -- "${args[@]}" 2>/dev/null \
    )}")
    for completion in $completions; do
        [[ -n $completion ]] || continue
        value=${completion%%:*}
        if [[ $value == */ ]]; then
            dirs+=("${value%/}${completion#$value}")
        else
            other+=("$completion")
        fi
    done
    (( $#dirs )) && _describe -V values dirs -S / -r /
    (( $#other )) && _describe -V values other
    return 0
}

if (( $+compstate )); then
    _git-bullpen "$@"
else
    compdef _git-bullpen git-bullpen
fi"#;

impl EnvCompleter for GitZsh {
    delegate_to!(Zsh, index_from_env, ifs);
    fn write_registration(
        &self,
        var: &str,
        _name: &str,
        _bin: &str,
        _completer: &str,
        buf: &mut dyn Write,
    ) -> std::io::Result<()> {
        writeln!(buf, "#compdef git-bullpen")?;
        writeln!(
            buf,
            "#description run commands side by side, each in its own worktree and branch"
        )?;
        header(buf, "#", "zsh completion")?;
        writeln!(
            buf,
            "# Install on $fpath (before compinit) as _git-bullpen, or source after compinit."
        )?;
        writeln!(buf, "{}", ZSH_BODY.replace("VAR", var))
    }
}

/// fish: clap's completer for `git-bullpen`; with `git_hook`, followed by
/// [`FISH_GIT_HOOK`] for `git bullpen` (what `GIT_BULLPEN_COMPLETE=fish
/// git-bullpen` prints, so that `... | source` sets up both). The committed
/// `git-bullpen.fish` is the first part only; the hook is installed apart.
struct GitFish {
    git_hook: bool,
}

/// `git bullpen ...` in fish: offers `bullpen` as a git subcommand and completes
/// the words after it as `git-bullpen ...`. fish autoloads completions by command
/// name, so a file named for `git-bullpen` is never read for `git`: this part is
/// installed in `vendor_conf.d/` (sourced at startup). fish's own git completion
/// means to forward `git foo` to `git-foo`, but fish 3.6 gets the name wrong.
pub const FISH_GIT_HOOK: &str = r#"
# The words after `git [global options]`: the git subcommand and its arguments.
function __git_bullpen_words
    set -l tokens (commandline --current-process --tokenize --cut-at-cursor)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case -C -c --git-dir --work-tree --namespace --exec-path --config-env
                set -e tokens[1..2]
            case '-*'
                set -e tokens[1]
            case '*'
                break
        end
    end
    string join \n -- $tokens
end
function __git_bullpen_needs_command
    set -l words (__git_bullpen_words)
    test (count $words) -eq 0
end
function __git_bullpen_using
    set -l words (__git_bullpen_words)
    test "$words[1]" = bullpen
end
# The global options typed before the git subcommand (`-C <dir>`, `-c <x=y>`, ...).
function __git_bullpen_globals
    set -l tokens (commandline --current-process --tokenize --cut-at-cursor)
    set -e tokens[1]
    set -l globals
    while set -q tokens[1]
        switch $tokens[1]
            case -C -c --git-dir --work-tree --namespace --exec-path --config-env
                set -a globals $tokens[1..2]
                set -e tokens[1..2]
            case '-*'
                set -a globals $tokens[1]
                set -e tokens[1]
            case '*'
                break
        end
    end
    string join \n -- $globals
end
function __git_bullpen_complete
    set -l words (__git_bullpen_words)
    set -l globals (__git_bullpen_globals)
    if set -q globals[1]
        # git itself runs the completer, so it sees the repository `git -C` names.
        VAR=fish git $globals bullpen -- git-bullpen $words[2..-1] (commandline --current-token)
    else
        VAR=fish git-bullpen -- git-bullpen $words[2..-1] (commandline --current-token)
    end
end
complete --command git --no-files --condition __git_bullpen_needs_command --arguments bullpen --description 'Run commands side by side, each in its own worktree'
complete --command git --no-files --keep-order --condition __git_bullpen_using --arguments '(__git_bullpen_complete)'"#;

/// The fish hook file's text, as installed in `vendor_conf.d/git-bullpen.fish`.
pub fn fish_git_hook() -> Vec<u8> {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = header(&mut buf, "#", "fish completion (the `git bullpen` part)");
    buf.extend_from_slice(
        FISH_GIT_HOOK
            .replace("VAR", config::ENV_COMPLETE)
            .trim_start()
            .as_bytes(),
    );
    buf.push(b'\n');
    buf
}

impl EnvCompleter for GitFish {
    delegate_to!(Fish, last_index, newline);
    fn write_registration(
        &self,
        var: &str,
        name: &str,
        bin: &str,
        completer: &str,
        buf: &mut dyn Write,
    ) -> std::io::Result<()> {
        header(buf, "#", "fish completion")?;
        Fish.write_registration(var, name, bin, completer, buf)?;
        if self.git_hook {
            writeln!(buf, "{}", FISH_GIT_HOOK.replace("VAR", var))?;
        }
        Ok(())
    }
}

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
