#!/usr/bin/env bash
# The instructions one compile of a workload's kernel executes, counted by
# callgrind: the same on any host however loaded, so two builds compare
# where the hosts' wall times drift by 2x. Runs tensorjit-compile-cost twice
# (1 compile, then 1 + N) and prints the difference over N, in millions.
#   bench/compile_cost.sh [--build DIR] [--compiles N] ID[:dynamic] ...
#   bench/compile_cost.sh E1 E1:dynamic G6 S2
# Needs valgrind. Each workload takes about 20 s plus 0.5 s a compile.
# Valgrind's CPU has no AVX-512, so the kernel counted is a 256-bit host's
# on every host; bench/codegen_cost.sh counts an AVX-512 kernel's code
# generation for a CPU by name.
set -euo pipefail
build=build n=4
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --compiles) n=$2; shift 2 ;;
    *) break ;;
    esac
done
tool=$build/bench/tensorjit-compile-cost
if [ $# -eq 0 ] || [ ! -x "$tool" ] || ! command -v valgrind >/dev/null; then
    echo "usage: bench/compile_cost.sh [--build DIR] [--compiles N] ID[:dynamic] ..." >&2
    echo "(needs $tool, built with the tree, and valgrind)" >&2
    exit 2
fi
case $n in '' | *[!0-9]* | 0) echo "--compiles wants a count of 1 to 255" >&2; exit 2 ;; esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
count() { # workload, dynamic flag, compiles: the instructions of the whole run (no disk cache)
    env -u TENSORJIT_CACHE_DIR valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$tool" --workload "$1" $2 --compiles "$3" >/dev/null 2>"$log" || true
    sed -n 's/.*Collected : //p' "$log"
}
for w in "$@"; do
    id=${w%:dynamic} flag=
    [ "$id" != "$w" ] && flag=--dynamic
    one=$(count "$id" "$flag" 1)
    more=$(count "$id" "$flag" $((1 + n)))
    if [ -z "$one" ] || [ -z "$more" ] || grep -q '^tensorjit-compile-cost\|^usage' "$log"; then
        echo "$w: tensorjit-compile-cost failed:" >&2
        grep -v '^==' "$log" >&2 || true
        exit 1
    fi
    awk -v w="$w" -v a="$one" -v b="$more" -v n="$n" \
        'BEGIN { printf "%-12s %8.2f M instructions a compile (%d compiles)\n", w, (b - a) / n / 1e6, n }'
done
