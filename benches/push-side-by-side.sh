#!/usr/bin/env bash
# `git bullpen push --all` of N new sessions, for several binaries side by side
# with `git push` of the same refs (the suite's `push` line, `bench_remote`).
#
#   benches/push-side-by-side.sh [-n N] [-r RUNS] [-k | -d DIR] NAME=BINARY...
#
# The fixture is the suite's: a repository with N sessions spawned by the FIRST
# binary (one commit and its note each; the even ones on `origin`), all pushed
# to `origin` once. Then RUNS rounds, each in rotation: `git push` of the
# same refs, then every binary's `push --all`, each to an empty bare remote made
# afresh (untimed), with the notes ref and what the last push left of that
# remote here reset first. Prints each sample (wall, CPU, load average) and the
# medians. Hermetic as the suite: env cleared, a HOME and config of its own.
# -k keeps the temp dir (for profiling, or for -d); -d DIR measures again in a
# kept one, without building the fixture anew.
set -euo pipefail

n=1000 runs=5 keep= reuse=
while getopts n:r:kd: opt; do
    case $opt in
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    k) keep=1 ;;
    d) reuse=$(realpath "$OPTARG") keep=1 ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n N] [-r RUNS] [-k | -d DIR] NAME=BINARY..." >&2; exit 2; }
names=() bins=()
for a in "$@"; do
    names+=("${a%%=*}")
    bins+=("$(realpath "${a#*=}")")
done

if [ -n "$reuse" ]; then
    root=$reuse
    rm -f "$root/samples"
else
    root=$(mktemp -d "${TMPDIR:-/tmp}/bullpen-push-bench.XXXXXX")
    [ -n "$keep" ] || trap 'rm -rf "$root"' EXIT
    mkdir -p "$root/home/.run" "$root/bullpen-home"
    chmod 700 "$root/home/.run"
    printf '[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n' >"$root/home/.gitconfig"
fi
h() {
    env -i PATH="$PATH" HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config" \
        XDG_DATA_HOME="$root/home/.local/share" XDG_CACHE_HOME="$root/home/.cache" \
        XDG_STATE_HOME="$root/home/.local/state" XDG_RUNTIME_DIR="$root/home/.run" \
        BULLPEN_HOME="$root/bullpen-home" GIT_CONFIG_GLOBAL="$root/home/.gitconfig" \
        GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Test Author" \
        GIT_AUTHOR_EMAIL=author@example.com GIT_COMMITTER_NAME="Test Committer" \
        GIT_COMMITTER_EMAIL=committer@example.com GIT_EDITOR=: GIT_PAGER=cat \
        LC_ALL=C TZ=UTC SHELL=/bin/sh "$@"
}
repo=$root/repo target=$root/push.git
if [ -z "$reuse" ]; then
    mkdir "$repo"
    cd "$repo"
    h git init -q -b main
    echo fixture >README
    h git add -A
    h git commit -q -m initial
    h git init -q --bare "$root/origin.git"
    h git remote add origin "$root/origin.git"
    h git push -q origin main
    echo "fixture: spawning $n sessions with ${names[0]}" >&2
    for ((i = 0; i < n; i++)); do
        id=$(printf 's%04d' "$i")
        h "${bins[0]}" spawn "$id" -- git commit -q --allow-empty -m "work of $id" </dev/null >/dev/null 2>&1
    done
    for ((i = 0; i < n; i += 400)); do
        branches=()
        for ((j = i; j < i + 400 && j < n; j += 2)); do branches+=("$(printf 'bullpen/s%04d' "$j")"); done
        h git push -q origin "${branches[@]}"
    done
    h "${bins[0]}" push --all </dev/null >/dev/null 2>&1
    h git remote add bench-push "$target"
    h git rev-parse refs/notes/bullpen >"$root/notes-tip"
fi
cd "$repo"
notes=$(cat "$root/notes-tip")
n=$(h git for-each-ref refs/bullpen/sessions/ | wc -l)

fresh_target() {
    rm -rf "$target"
    h git init -q --bare -b main "$target"
    h git push -q bench-push main
    h git for-each-ref --format='delete %(refname)' refs/remotes/bench-push/bullpen/ \
        refs/bullpen/incoming/bench-push/ refs/bullpen/remotes/bench-push/ |
        h git update-ref --stdin
    h git update-ref refs/notes/bullpen "$notes"
}

# One sample: wall and CPU seconds (children included), load average.
sample() {
    local label=$1 load out
    shift
    fresh_target
    load=$(cut -d' ' -f1 /proc/loadavg)
    if ! h /usr/bin/time -f '%e %U %S' -o "$root/time" "$@" </dev/null >/dev/null 2>"$root/err"; then
        cat "$root/err" >&2
        exit 1
    fi
    read -r wall user sys <"$root/time"
    printf '%s\t%s\t%.2f\t%s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$load" | tee -a "$root/samples"
}

printf 'what\twall s\tcpu s\tload\n'
for ((r = 0; r < runs; r++)); do
    sample "git push" git push -q --porcelain bench-push \
        'refs/bullpen/sessions/*:refs/bullpen/sessions/*' \
        'refs/heads/bullpen/*:refs/heads/bullpen/*' \
        refs/notes/bullpen:refs/notes/bullpen
    for ((b = 0; b < ${#bins[@]}; b++)); do
        sample "${names[b]}" "${bins[b]}" push --all bench-push
    done
done
[ "$(h git -C "$target" for-each-ref refs/bullpen/sessions/ | wc -l)" -eq "$n" ] ||
    { echo "the last push did not send every record" >&2; exit 1; }

echo
printf 'medians of %d runs, N=%d\nwhat\twall s\tcpu s\tratio to git push (wall)\tload\n' "$runs" "$n"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -F'\t' -v l="$1" -v c="$2" '$1 == l { print $c }' "$root/samples" | median; }
base=$(col "git push" 2)
for label in "git push" "${names[@]}"; do
    wall=$(col "$label" 2)
    printf '%s\t%s\t%s\t%.2fx\t%s\n' "$label" "$wall" "$(col "$label" 3)" \
        "$(echo "$wall / $base" | bc -l)" "$(col "$label" 4)"
done
if [ -n "$keep" ]; then
    echo "kept $root; one push there: cd $repo, reset as fresh_target does, then push --all bench-push" >&2
fi
