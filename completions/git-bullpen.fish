# fish completion for git-bullpen (`git bullpen` and `git-bullpen`).
# Generated from the clap definitions; refresh with
#   BULLPEN_BLESS=1 cargo test --test cli docs
# Candidates come from `GIT_BULLPEN_COMPLETE=<shell> git-bullpen`, which
# completes subcommands, options and the current repository's session ids.
complete --keep-order --exclusive --command git-bullpen --arguments "(GIT_BULLPEN_COMPLETE=fish git-bullpen -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
