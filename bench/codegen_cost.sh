#!/usr/bin/env bash
# The instructions LLVM's code generation of a dumped kernel executes,
# counted by callgrind for a CPU by name (tensorjit-codegen-cost: why a tool
# of its own). Runs the tool with 1 and with 1 + N runs and prints the
# difference over N, in millions: the same to 0.01 M on any host.
#   bench/codegen_cost.sh [--build DIR] [--runs N] [--cpu NAME] [--llvm-args "OPTS"] K.ll ...
#   build/tensorjit embedding-bag-offsets --table-shape 30522x128 --indices-shape '?' \
#       --offsets-shape '?' --reduction mean --dump-ir=opt > e3.ll
#   bench/codegen_cost.sh --cpu sapphirerapids e3.ll
# Needs valgrind. Each file takes about 10 s.
set -euo pipefail
build=build n=5 cpu=znver4 args=()
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --runs) n=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --llvm-args) args=(--llvm-args "$2"); shift 2 ;;
    *) break ;;
    esac
done
tool=$build/bench/tensorjit-codegen-cost
if [ $# -eq 0 ] || [ ! -x "$tool" ] || ! command -v valgrind >/dev/null; then
    echo "usage: bench/codegen_cost.sh [--build DIR] [--runs N] [--cpu NAME] [--llvm-args \"OPTS\"] K.ll ..." >&2
    echo "(needs $tool, built with the tree, and valgrind)" >&2
    exit 2
fi
case $n in '' | *[!0-9]* | 0) echo "--runs wants a count of 1 to 999" >&2; exit 2 ;; esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
count() { # file, runs: the instructions of the whole run
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$tool" --cpu "$cpu" "${args[@]}" --runs "$2" "$1" >/dev/null 2>"$log" || true
    sed -n 's/.*Collected : //p' "$log"
}
for f in "$@"; do
    one=$(count "$f" 1)
    more=$(count "$f" $((1 + n)))
    # a CPU name LLVM does not know is only warned about ("not a recognized
    # processor"): counted, it would be another CPU's code generation
    if [ -z "$one" ] || [ -z "$more" ] ||
        grep -q -e '^tensorjit-codegen-cost' -e 'not a recognized processor' "$log"; then
        echo "$f: tensorjit-codegen-cost failed:" >&2
        grep -v '^==' "$log" >&2 || true
        exit 1
    fi
    awk -v f="$f" -v a="$one" -v b="$more" -v n="$n" -v c="$cpu" \
        'BEGIN { printf "%-24s %8.2f M instructions a code generation for %s (%d runs)\n", f, (b - a) / n / 1e6, c, n }'
done
