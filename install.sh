#!/bin/sh
# Build and install git-bullpen. Usage: ./install.sh [--prefix DIR]
set -eu
prefix=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        *) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
if [ -z "$prefix" ]; then
    if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
fi
command -v cargo >/dev/null || { echo "install.sh: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
command -v git >/dev/null || { echo "install.sh: git not found; install git first" >&2; exit 1; }
cd "$(dirname "$0")"
cargo build --release --locked
mkdir -p "$prefix/bin"
install -m 755 target/release/git-bullpen "$prefix/bin/git-bullpen"
echo "installed $prefix/bin/git-bullpen"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to your PATH" ;; esac
