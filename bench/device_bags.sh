#!/bin/bash
# The bag measurements of a lent device machine in one call (the workplace's
# `device` tool; docs/performance.md, 'FBGEMM beside the bags'). Run there
# from the repository's root, after `bash bench/device_bundle.sh` here and
# with `.dev` carried:
#   bash bench/device_bags.sh            (RUNS=5 BUDGET=420 PYTEST=0 by default)
# It unpacks .dev/pkg.tar.xz, builds the Python package against its
# libtensorjit.so.0 (the machine's own python3, numpy and torch), then runs
# `tensorjit bench --bags --threads 1,2 --rounds 5 --json` RUNS times; after
# runs 1, 3 and 5 python/bench_bags.py --c-json --tensorjit (torch's
# embedding_bag, FBGEMM's where torch has it, and tensorjit's kernel in one
# process, pinned to one CPU); after runs 2 and 4 each family's compile
# (tensorjit-compile-cost --dynamic --compiles 30); with PYTEST=1 the Python
# suite and python/bench.py (the package's targets) at the end. Steps that would start after BUDGET seconds are skipped,
# so that the call ends inside its limit. Its files under $OUT (at most 8
# come back): log.txt, machine.txt, c_runs.txt (each run's JSON after a
# "== run N" line), torch.txt, compile.txt, pybuild.txt, pytest.txt,
# pybench.txt.
# TJ_LOCAL=DIR uses an unpacked pkg at DIR instead (a trial here).
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 1
RUNS=${RUNS:-5}
BUDGET=${BUDGET:-420}
PY=${PY:-python3}
OUT=${OUT:?OUT must name the folder the results go to}
START=$(date +%s)
el() { echo "[$(( $(date +%s) - START )) s] $*" | tee -a "$OUT/log.txt"; }
late() { [ $(( $(date +%s) - START )) -gt "$1" ]; }
if [ -n "${TJ_LOCAL:-}" ]; then
    PKG=$TJ_LOCAL
else
    mkdir -p /tmp/tj && tar xJf .dev/pkg.tar.xz -C /tmp/tj
    PKG=/tmp/tj/pkg
fi
export LD_LIBRARY_PATH=$PKG/lib
{ lscpu; cat /sys/kernel/mm/transparent_hugepage/enabled; uptime
  "$PY" -c 'import numpy, torch; print("numpy", numpy.__version__, "torch", torch.__version__,
          torch.backends.quantized.supported_engines)'
} >"$OUT/machine.txt" 2>&1

# The package, built against the carried library into a folder of its own.
SITE=$(mktemp -d)
PREFIX=$(mktemp -d)
mkdir -p "$PREFIX/lib"
ln -s "$REPO/include" "$PREFIX/include"
cp -P "$PKG"/lib/libtensorjit.so* "$PREFIX/lib/"
TENSORJIT_PREFIX=$PREFIX timeout 180 "$PY" -m pip install -v --no-build-isolation --no-deps \
    --no-index --target "$SITE" ./python >"$OUT/pybuild.txt" 2>&1
el "python package build rc $?"
rm -rf python/build python/*.egg-info

torch_run() {
    late "$BUDGET" && { el "skip torch after run $1"; return; }
    el "torch and tensorjit in one process, after C run $1"
    echo "== after C run $1" >>"$OUT/torch.txt"
    # a copy outside python/: run in place, the tree's tensorjit (no extension) shadows the built one
    cp python/bench_bags.py "$SITE/../bench_bags_run.py"
    PYTHONPATH=$SITE PYTHONUNBUFFERED=1 timeout 200 "$PY" "$SITE/../bench_bags_run.py" \
        --c-json "$SITE/c$1.json" --tensorjit >>"$OUT/torch.txt" 2>&1
    el "rc $?"
}

compile_cost() {
    for w in E1 E2a E2b E3 E4 E5; do
        timeout 30 "$PKG/tensorjit-compile-cost" --workload $w --dynamic --compiles 30 |
            tail -1 >>"$OUT/compile.txt" 2>&1
    done
    el "compile cost done"
}

for i in $(seq 1 "$RUNS"); do
    late "$BUDGET" && { el "skip C run $i"; continue; }
    el "C run $i"
    timeout 150 "$PKG/tensorjit" bench --bags --threads 1,2 --rounds 5 --json \
        >"$SITE/c$i.json" 2>>"$OUT/log.txt"
    el "rc $?"
    { echo "== run $i"; cat "$SITE/c$i.json"; } >>"$OUT/c_runs.txt"
    case $i in
    1 | 3 | 5) torch_run "$i" ;;
    2 | 4) compile_cost ;;
    esac
done

if [ "${PYTEST:-0}" = 1 ] && ! late "$BUDGET"; then
    mkdir -p build
    # the suite's CLI tests look for build/tensorjit
    [ -e build/tensorjit ] || { printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib exec %s/tensorjit "$@"\n' \
        "$PKG" "$PKG" >build/tensorjit && chmod +x build/tensorjit; }
    (cd /tmp && PYTHONPATH=$SITE timeout 200 "$PY" -m pytest "$REPO/python/tests" -q \
        -p no:cacheprovider -n "$(nproc)" -rfE --tb=short >"$OUT/pytest.txt" 2>&1)
    el "pytest rc $?"
    # the package's own targets on this numpy and torch (numpy 2's *_at rule)
    cp python/bench.py "$SITE/../pybench_run.py"
    (cd /tmp && PYTHONPATH=$SITE timeout 120 "$PY" "$SITE/../pybench_run.py" \
        >"$OUT/pybench.txt" 2>&1)
    el "python bench rc $?"
fi
el end
