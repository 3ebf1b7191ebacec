#!/usr/bin/env bash
# Build and install git-bullpen: the binary, its man pages and its shell completions.
#
#   ./install.sh [--prefix DIR]              build (cargo build --release --locked) and install
#   ./install.sh [--prefix DIR] --uninstall  remove exactly what install.sh installed there
#
# Default prefix: ~/.local, or /usr/local when run as root. Installs
#   DIR/bin/git-bullpen
#   DIR/share/man/man1/git-bullpen*.1
#   DIR/share/bash-completion/completions/git-bullpen
#   DIR/share/zsh/site-functions/_git-bullpen
#   DIR/share/fish/vendor_completions.d/git-bullpen.fish
#   DIR/share/fish/vendor_conf.d/git-bullpen.fish
# and records them, with the directories it had to create, in
#   DIR/share/git-bullpen/install-manifest
# which --uninstall reads. Running it again updates in place.
#
# Environment: BULLPEN_INSTALL_BINARY=PATH installs that binary instead of building
# one (the tests use it to install the binary cargo test already built).
set -euo pipefail

MANIFEST_REL=share/git-bullpen/install-manifest
# The man pages are globbed from man/ so that new subcommands are picked up.
COMPLETIONS=(
    "completions/git-bullpen:share/bash-completion/completions/git-bullpen"
    "completions/_git-bullpen:share/zsh/site-functions/_git-bullpen"
    "completions/git-bullpen.fish:share/fish/vendor_completions.d/git-bullpen.fish"
    "completions/git-bullpen.conf.fish:share/fish/vendor_conf.d/git-bullpen.fish"
)

die() {
    echo "install.sh: error: $*" >&2
    exit 1
}
say() { echo "install.sh: $*" >&2; }

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

prefix=
uninstall=false
while (($#)); do
    case $1 in
        --prefix)
            (($# >= 2)) || die "--prefix needs a directory"
            prefix=$2
            shift 2
            ;;
        --prefix=*)
            prefix=${1#--prefix=}
            shift
            ;;
        --uninstall)
            uninstall=true
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            usage >&2
            die "unknown argument: $1"
            ;;
    esac
done

if [[ -z $prefix ]]; then
    # Said out loud: which directory depends on who runs this.
    if [[ $(id -u) == 0 ]]; then
        prefix=/usr/local
        say "no --prefix: using /usr/local, the default when run as root (~/.local otherwise)"
    else
        [[ -n ${HOME:-} ]] || die "HOME is not set; pass --prefix DIR"
        prefix=$HOME/.local
        say "no --prefix: using $prefix, the default (/usr/local when run as root)"
    fi
fi
[[ $prefix == /* ]] || prefix=$PWD/$prefix
while [[ $prefix == */ && $prefix != / ]]; do prefix=${prefix%/}; done
manifest=$prefix/$MANIFEST_REL

# A manifest line is "f <path>" (a file we installed) or "d <path>" (a directory we
# created), the path relative to the prefix. Refuse anything that could point
# outside the prefix: the manifest is a file anyone could have edited.
check_rel() {
    case /$1/ in
        //* | */../* | */./*) die "refusing the manifest entry '$1' in $manifest: not a plain path inside the prefix" ;;
    esac
}

# Read the manifest into the arrays old_files and old_dirs.
old_files=()
old_dirs=()
read_manifest() {
    [[ -f $manifest ]] || return 0
    local kind path
    while IFS=' ' read -r kind path; do
        [[ -n $kind ]] || continue
        [[ $path == . ]] || check_rel "$path"
        case $kind in
            f) old_files+=("$path") ;;
            d) old_dirs+=("$path") ;;
            *) die "unreadable manifest $manifest: line '$kind $path'" ;;
        esac
    done <"$manifest"
}

contains() {
    local needle=$1 x
    shift
    for x in "$@"; do [[ $x == "$needle" ]] && return 0; done
    return 1
}

# Remove directories we created, deepest first, when they are empty.
remove_dirs() {
    local i d
    for ((i = ${#old_dirs[@]} - 1; i >= 0; i--)); do
        d=${old_dirs[i]}
        if [[ $d == . ]]; then d=$prefix; else d=$prefix/$d; fi
        [[ -d $d ]] && rmdir "$d" 2>/dev/null || true
    done
}

if $uninstall; then
    if [[ ! -f $manifest ]]; then
        say "nothing to uninstall: no $manifest (was git-bullpen installed with --prefix $prefix?)"
        exit 0
    fi
    read_manifest
    for f in "${old_files[@]}"; do
        if [[ -e $prefix/$f || -L $prefix/$f ]]; then
            rm -f "$prefix/$f"
            say "removed $prefix/$f"
        fi
    done
    rm -f "$manifest"
    remove_dirs
    say "uninstalled git-bullpen from $prefix"
    exit 0
fi

# ---- install ----
case ${BASH_SOURCE[0]} in
    */*) src=${BASH_SOURCE[0]%/*} ;;
    *) src=. ;;
esac
src=$(cd "$src" && pwd)
command -v git >/dev/null 2>&1 ||
    die "git not found on PATH: git-bullpen is a git extension; install git first"
[[ -d $src/man && -d $src/completions ]] ||
    die "$src/man or $src/completions is missing: run install.sh from a git-bullpen checkout"
parent=${prefix%/*}
[[ -d ${parent:-/} ]] || die "$parent does not exist; create it or choose another --prefix"

if [[ -n ${BULLPEN_INSTALL_BINARY:-} ]]; then
    binary=$BULLPEN_INSTALL_BINARY
    [[ -x $binary ]] || die "BULLPEN_INSTALL_BINARY=$binary is not an executable file"
else
    command -v cargo >/dev/null 2>&1 ||
        die "cargo not found on PATH: install Rust (https://rustup.rs or your package manager), then re-run"
    say "building: cargo build --release --locked"
    (cd "$src" && cargo build --release --locked) || die "cargo build failed (see above)"
    binary=${CARGO_TARGET_DIR:-$src/target}/release/git-bullpen
    [[ $binary == /* ]] || binary=$src/$binary
    [[ -x $binary ]] || die "the build did not produce $binary"
fi

# What to install: "source:destination" (destination relative to the prefix).
items=("$binary:bin/git-bullpen")
shopt -s nullglob
pages=("$src"/man/*.1)
shopt -u nullglob
((${#pages[@]})) || die "no man pages in $src/man"
for p in "${pages[@]}"; do items+=("$p:share/man/man1/${p##*/}"); done
for c in "${COMPLETIONS[@]}"; do items+=("$src/${c%%:*}:${c#*:}"); done

read_manifest
new_files=()
new_dirs=("${old_dirs[@]}")

# Create the directories of a prefix-relative path, remembering those we made.
ensure_dir() {
    local rel=$1 path=$prefix part
    if [[ ! -d $prefix ]]; then
        mkdir "$prefix" || die "cannot create $prefix"
        contains . "${new_dirs[@]}" || new_dirs+=(.)
    fi
    local IFS=/
    local parts=()
    read -ra parts <<<"$rel"
    rel=
    for part in "${parts[@]}"; do
        path=$path/$part
        rel=${rel:+$rel/}$part
        if [[ ! -d $path ]]; then
            [[ -e $path || -L $path ]] && die "$path exists and is not a directory"
            mkdir "$path" || die "cannot create $path"
            contains "$rel" "${new_dirs[@]}" || new_dirs+=("$rel")
        fi
    done
}

write_manifest() {
    ensure_dir "${MANIFEST_REL%/*}"
    local tmp=$manifest.tmp.$$ f d
    {
        for d in "${new_dirs[@]}"; do echo "d $d"; done
        for f in "${new_files[@]}"; do echo "f $f"; done
    } >"$tmp" || {
        rm -f "$tmp"
        die "cannot write $manifest"
    }
    mv -f "$tmp" "$manifest"
}

# Copy to a temp file beside the destination, then rename: a running git-bullpen
# is never overwritten in place, and a failed copy leaves nothing behind.
install_file() {
    local from=$1 rel=$2 mode=$3 to=$prefix/$2
    ensure_dir "${rel%/*}"
    local tmp=${to%/*}/.${to##*/}.tmp.$$
    if cp "$from" "$tmp" && chmod "$mode" "$tmp" && mv -f "$tmp" "$to"; then
        contains "$rel" "${new_files[@]}" || new_files+=("$rel")
    else
        rm -f "$tmp"
        # Keep what an earlier install put here listed too: it is still on disk,
        # and --uninstall must still find it.
        local f
        for f in "${old_files[@]}"; do
            contains "$f" "${new_files[@]}" || new_files+=("$f")
        done
        write_manifest
        die "cannot install $to"
    fi
}

for item in "${items[@]}"; do
    from=${item%%:*}
    rel=${item#*:}
    mode=644
    [[ $rel == bin/* ]] && mode=755
    install_file "$from" "$rel" "$mode"
done

# Files an earlier install put there that this version no longer ships.
for f in "${old_files[@]}"; do
    if ! contains "$f" "${new_files[@]}"; then
        rm -f "$prefix/$f"
        say "removed $prefix/$f (no longer shipped)"
    fi
done
write_manifest
say "installed git-bullpen $("$prefix/bin/git-bullpen" --version 2>/dev/null | awk '{print $NF}') into $prefix"

# ---- what the user must still do ----
todo=()
on_path=false
case ":$PATH:" in *":$prefix/bin:"*) on_path=true ;; esac
$on_path || todo+=("add $prefix/bin to PATH (bash/zsh: export PATH=\"$prefix/bin:\$PATH\" in ~/.bashrc or ~/.zshrc; fish: fish_add_path $prefix/bin)")

if command -v man >/dev/null 2>&1; then
    found=$(PATH="$prefix/bin:$PATH" man -w git-bullpen 2>/dev/null || true)
    # -ef: the same file, also when found through a symlink (/usr/local/man -> share/man).
    if ! [[ -n $found && ${found%%$'\n'*} -ef $prefix/share/man/man1/git-bullpen.1 ]]; then
        todo+=("let man find the pages (git bullpen --help runs man git-bullpen): export MANPATH=\"$prefix/share/man:\$MANPATH\" (keep the trailing colon when MANPATH was empty: \"$prefix/share/man:\")")
    fi
else
    todo+=("install man (man-db) so that git bullpen --help can show the manual")
fi

bash_dirs=("${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-${HOME:-}/.local/share}/bash-completion}/completions")
IFS=: read -ra xdg <<<"${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
for d in "${xdg[@]}"; do bash_dirs+=("$d/bash-completion/completions"); done
if ! contains "$prefix/share/bash-completion/completions" "${bash_dirs[@]}"; then
    todo+=("bash: bash-completion does not look in $prefix/share; add to ~/.bashrc: source \"$prefix/share/bash-completion/completions/git-bullpen\"")
fi

if command -v zsh >/dev/null 2>&1; then
    if ! zsh -fc '(( ${fpath[(Ie)$1]} ))' zsh "$prefix/share/zsh/site-functions" 2>/dev/null; then
        todo+=("zsh: add to ~/.zshrc before compinit: fpath=(\"$prefix/share/zsh/site-functions\" \$fpath)")
    fi
fi

if command -v fish >/dev/null 2>&1; then
    if ! fish -c 'contains -- $argv[1] $fish_complete_path' "$prefix/share/fish/vendor_completions.d" 2>/dev/null; then
        todo+=("fish: add to ~/.config/fish/config.fish: GIT_BULLPEN_COMPLETE=fish git-bullpen | source")
    fi
fi

if ((${#todo[@]})); then
    say "to finish, you still need to:"
    for t in "${todo[@]}"; do echo "  - $t" >&2; done
fi
say "open a new shell, then try: git bullpen --help, and git bullpen <TAB>"
