# fish completion (the `git bullpen` part) for git-bullpen (`git bullpen` and `git-bullpen`).
# Generated from the clap definitions; refresh with
#   BULLPEN_BLESS=1 cargo test --test cli docs
# Candidates come from `GIT_BULLPEN_COMPLETE=<shell> git-bullpen`, which
# completes subcommands, options and the current repository's session ids.
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
        GIT_BULLPEN_COMPLETE=fish git $globals bullpen -- git-bullpen $words[2..-1] (commandline --current-token)
    else
        GIT_BULLPEN_COMPLETE=fish git-bullpen -- git-bullpen $words[2..-1] (commandline --current-token)
    end
end
complete --command git --no-files --condition __git_bullpen_needs_command --arguments bullpen --description 'Run commands side by side, each in its own worktree'
complete --command git --no-files --keep-order --condition __git_bullpen_using --arguments '(__git_bullpen_complete)'
