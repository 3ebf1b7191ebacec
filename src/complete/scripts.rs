//! The scripts that plug `git-bullpen` into bash, zsh and fish, and the
//! answers they get: clap_complete's own completers, options left out until a
//! `-` is typed, the candidates sorted.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use clap_complete::env::{Bash, EnvCompleter, Fish, Zsh};

use crate::model::config;

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
pub(super) struct GitBash;

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
pub(super) struct GitZsh;

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
pub(super) struct GitFish {
    pub(super) git_hook: bool,
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
    __git_bullpen_own_help
    set -l words (__git_bullpen_words)
    test (count $words) -eq 0
end
function __git_bullpen_using
    __git_bullpen_own_help
    set -l words (__git_bullpen_words)
    test "$words[1]" = bullpen
end
# fish's git completion, loaded at the first <TAB> after `git` (after this file),
# describes -h and --help as git's for every git command, and the completion
# registered last wins: bullpen's own go in once git's are there.
function __git_bullpen_own_help
    set -q __git_bullpen_help_done; and return
    set -g __git_bullpen_help_done 1
    complete --command git --no-files --condition __git_bullpen_using --long-option help --description "Print help (see a summary with '-h')"
    complete --command git --no-files --condition __git_bullpen_using --short-option h --description "Print help (see more with '--help')"
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
