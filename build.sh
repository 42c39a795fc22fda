#!/usr/bin/env bash
# tensorjit's one entry point, on a fresh Debian 12 machine:
#   ./build.sh        install what is missing, build, run the demo
#   ./build.sh test   install what is missing, then the whole suite three
#                     times: LLVM 19 with -Werror, LLVM 19 under
#                     AddressSanitizer + UndefinedBehaviorSanitizer, and
#                     LLVM 14 (the oldest supported) with -Werror; the
#                     suites of generated code on LLVM 22 (the newest); the
#                     thread stress test under ThreadSanitizer, each libFuzzer
#                     harness for TENSORJIT_FUZZ_SECONDS (20; longer runs: set it), valgrind,
#                     the install check below, and line and branch coverage
#                     of the suite (gcovr)
#   ./build.sh install-check   a Release build installed to a temporary
#                     prefix: only jit_* exported, the SONAME, the example
#                     built against it (find_package, pkg-config, static),
#                     the Python package installed offline and its tests,
#                     and the .deb of cpack -G DEB holding the same files
#   ./build.sh python-asan   the Python suite on the extension and the
#                     library built with ASan + UBSan (not part of `test`)
#   ./build.sh coverage   only the coverage step
#   ./build.sh tools-check   only the check that build.sh installs every
#                     command the test run calls (the first step of `test`)
# TENSORJIT_LLVM=N picks the main LLVM (default 19; 14..22 build);
# TENSORJIT_LLVM_OLD=N the second one of `test` (default 14, "none" skips it);
# TENSORJIT_LLVM_NEW=N the newest (default 22, "none" skips it): the library
# and the suites of generated code only (test_conformance, test_bags,
# test_bag_ir, test_vgather, test_split, test_kernels), a quarter of their
# random signatures: an intrinsic whose operands changed (LLVM 22's
# masked gather) fails IR verification and leaves every such kernel to the
# reference, which those suites refuse.
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-demo}
llvm=${TENSORJIT_LLVM:-19}
llvm_old=${TENSORJIT_LLVM_OLD:-14}
jobs=$(nproc 2>/dev/null || echo 2)
packages=(gcc make libc6-dev cmake pkg-config "llvm-${llvm}-dev" libffi-dev libcmocka-dev
          libcjson-dev libxml2-dev libssl-dev
          protobuf-c-compiler libprotobuf-c-dev libonnx-dev) # the ONNX reader
llvm_new=${TENSORJIT_LLVM_NEW:-22}
if [[ $mode == test && $llvm_old != none ]]; then
    packages+=("llvm-${llvm_old}-dev")
fi
if [[ $mode == test && $llvm_new != none ]]; then
    packages+=("llvm-${llvm_new}-dev")
fi
if [[ $mode == test ]]; then
    packages+=(clang-14 libclang-rt-14-dev valgrind)
fi
if [[ $mode == test || $mode == install-check || $mode == python-asan ]]; then
    # file: cpack -G DEB's dpkg-shlibdeps step runs it on every installed file
    packages+=(python3-numpy python3-pytest python3-pytest-xdist python3-setuptools python3-venv
               python3-pip python3-dev python3-torch
               groff-base dpkg-dev file
               python3-onnx) # test_onnx's models, written by ONNX's own package
fi
if [[ $mode == test || $mode == coverage ]]; then
    packages+=(gcovr)
fi
if [[ $mode == tools-check ]]; then # the packages of `test`
    exec env TENSORJIT_TOOLS_CHECK_ONLY=1 "$0" test
fi
fuzz_seconds=${TENSORJIT_FUZZ_SECONDS:-20}
# each race of test_release_race under ASan and under TSan (2 s elsewhere)
stress_seconds=${TENSORJIT_STRESS_SECONDS:-10}
# The random-signature suites at a quarter of their counts (and a quarter of
# test_cli's dynamic conformance vectors). The full counts run once, in the
# first build (LLVM 19 by default); the steps that run the suites again look for what their
# build adds (a memory error, a race, another LLVM's IR, a line not yet run),
# on the same code paths, which a quarter of the signatures already takes.
quarter_counts=(TENSORJIT_REDUCE_N=1000 TENSORJIT_DIFF_N=750 TENSORJIT_TORCH_N=60 TJ_BAG_RUNS=100
                TJ_BAG_IR_RUNS=50 TENSORJIT_SPLIT_N=15 TJ_CLI_DYNAMIC_STRIDE=12)
# The instrumented runs (ASan + UBSan, TSan, coverage) look at tensorjit's
# own C code, and most of their time went to LLVM's code generator, which
# no instrumentation sees (ASan's allocator slows its mallocs): at the code
# generator's level 0 the same IR, plans, caches and threads run, only the
# kernels' machine code is simpler, and those steps took 40-60% less time
# (test_conformance under ASan 38 -> 11 s, test_split under TSan 24 -> 11)
# with the same coverage to a branch. The kernels as shipped (level 2) run
# in every other step: LLVM 19 in full, LLVM 14 and 22, the disk cache's.
instrumented_env=(TENSORJIT_CODEGEN=0)

# Every command `./build.sh test` and its test binaries run (their system()
# and popen() calls included). tools_check fails unless each comes from a
# package that build.sh installs (or one it depends on) or from one that every
# Debian root has (Essential, or Priority required: debootstrap's minbase).
# A missing one passes on a developer's machine and fails on a fresh one, as
# `file` did for cpack. Add a command here when a test starts to run one.
test_commands=(bash cmake ctest cpack gcc cc clang-14 nm readelf ld valgrind gcovr
               /usr/bin/python3 groff pkg-config dpkg-deb dpkg-shlibdeps dpkg-architecture file
               objdump strip sh ls rm mv cp mkdir rmdir test grep sed awk sort comm diff
               find xargs mktemp wc tail head cat tr cut id nproc dirname readlink protoc-c)

tools_check() {
    echo "== every command of the test run comes from a package build.sh installs"
    local deps ok=1 cmd path pkg
    deps=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "${packages[@]}" 2>/dev/null |
        grep -v '^ ' | tr -d '<>' | sort -u)
    deps+=$'\n'$(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' |
        awk '$2 == "yes" || $3 == "required" {print $1}')
    for cmd in "${test_commands[@]}"; do
        if ! path=$(command -v "$cmd"); then
            echo "the test run needs '$cmd', which is not installed" >&2
            ok=0
            continue
        fi
        [[ $path == /* ]] || continue # a shell builtin
        path=$(readlink -f "$path")
        # usrmerge: dpkg may know the file under /bin rather than /usr/bin
        pkg=$(dpkg-query -S "$path" 2>/dev/null || dpkg-query -S "${path#/usr}" 2>/dev/null) ||
            { echo "'$cmd' ($path) belongs to no Debian package" >&2; ok=0; continue; }
        pkg=${pkg%%:*}
        if ! grep -qx "$pkg" <<<"$deps"; then
            echo "'$cmd' comes from $pkg, which build.sh does not install" >&2
            ok=0
        fi
    done
    ((ok)) || return 1
    echo "${#test_commands[@]} commands, all from installed packages or the base system"
}

install_missing() {
    local missing=() p
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    if [[ $(id -u) -ne 0 ]]; then
        echo "tensorjit needs these Debian packages; as root, run:" >&2
        echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
    echo "== installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# configure_and_build DIR LLVM_VERSION [cmake args...]
configure_and_build() {
    local dir=$1 version=$2
    shift 2
    cmake -S . -B "$dir" -DLLVM_DIR="/usr/lib/llvm-${version}/lib/cmake/llvm" \
        -DTENSORJIT_WERROR=ON "$@" | grep -E "tensorjit:|Error|error" || true
    cmake --build "$dir" -j"$jobs"
}

thread_sanitizer() {
    echo "== ThreadSanitizer: threads compiling and calling (test_stress, test_jit, test_diskcache, test_tiered, test_limits, test_dynamic, test_split, test_bag_split, test_pool, test_release_race ${stress_seconds} s a test; test_bench_bags, whose CLI runs the bench's probe x2 thread; code generation at level 0)"
    cmake -S . -B build-tsan -DLLVM_DIR="/usr/lib/llvm-${llvm}/lib/cmake/llvm" \
        -DCMAKE_BUILD_TYPE=Debug -DTENSORJIT_TSAN=ON -DTENSORJIT_WERROR=ON >/dev/null
    cmake --build build-tsan -j"$jobs" --target test_stress test_jit test_diskcache test_tiered test_limits test_dynamic \
        test_split test_bag_split test_pool test_release_race test_bench_bags >/dev/null
    local t
    for t in test_stress test_jit test_diskcache test_tiered test_limits test_dynamic test_split \
        test_bag_split test_pool test_release_race test_bench_bags; do
        env "${quarter_counts[@]}" "${instrumented_env[@]}" TENSORJIT_STRESS_SECONDS="$stress_seconds" \
            TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" "build-tsan/tests/$t"
    done
}

# Each harness for $fuzz_seconds on a copy of its corpus and of its
# regression inputs (replayed first: only this clang build has every UBSan
# check), all at once.
fuzz() {
    echo "== libFuzzer: each harness for ${fuzz_seconds} s"
    CC=clang-14 cmake -S . -B build-fuzz -DLLVM_DIR="/usr/lib/llvm-${llvm}/lib/cmake/llvm" \
        -DTENSORJIT_FUZZ=ON >/dev/null
    cmake --build build-fuzz -j"$jobs" --target fuzz_signature fuzz_npy fuzz_model \
        fuzz_differential fuzz_bags fuzz_onnx >/dev/null
    local work name pids=() failed=0
    work=$(mktemp -d)
    for name in signature npy model differential bags onnx; do
        mkdir -p "$work/$name"
        cp tests/fuzz/corpus/"$name"/* "$work/$name/"
        if compgen -G "tests/fuzz/regressions/$name/*" >/dev/null; then
            cp tests/fuzz/regressions/"$name"/* "$work/$name/"
        fi
        # the readers' op, attribute and tag names, where a harness has them
        local dict=()
        [[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
        "build-fuzz/tests/fuzz/fuzz_$name" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
            "${dict[@]}" -artifact_prefix="$work/crash-$name-" "$work/$name" \
            >"$work/$name.log" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=1
    done
    for name in signature npy model differential bags onnx; do
        echo "fuzz_$name: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$name.log" |
            awk '{print $2}') executions"
    done
    if ((failed)); then
        grep -h -A30 "ERROR\|SUMMARY" "$work"/*.log | head -60
        echo "a fuzzer failed; its input is in $work (crash-*)" >&2
        return 1
    fi
    rm -rf "$work"
}

# The kernel suites twice over one disk cache folder, under the sanitizers:
# the second pass runs every kernel as tensorjit's own loader mapped it
# from disk (jit/objload.c), the first as LLJIT loaded it after compiling.
from_disk_cache() {
    echo "== the kernel suites again, every kernel from the disk cache (ASan + UBSan)"
    local cache pass suites="test_conformance|test_kernels|test_differential|test_guard|test_limits|test_dynamic"
    cache=$(mktemp -d)
    for pass in fill load; do
        if ! env "${quarter_counts[@]}" TENSORJIT_CACHE_DIR="$cache" \
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
            ctest --test-dir build-asan -R "$suites" --output-on-failure -j"$jobs" \
            >"$cache.log" 2>&1; then
            cat "$cache.log"
            return 1
        fi
        echo "$pass: $(grep "tests passed" "$cache.log")"
    done
    echo "$(find "$cache" -name '*.tjk' | wc -l) kernels in the cache"
    rm -rf "$cache" "$cache.log"
}

memcheck() {
    echo "== valgrind memcheck: the CLI and a test binary"
    local vg=(valgrind --quiet --error-exitcode=9 --leak-check=full
        --errors-for-leak-kinds=definite,indirect,possible)
    # the two at once: valgrind runs each program's threads on one core
    local demo failed=0
    "${vg[@]}" build/tensorjit demo >/dev/null &
    demo=$!
    "${vg[@]}" build/tests/test_kernels >/dev/null || failed=1
    wait "$demo" || failed=1
    ((failed == 0)) || return 1
    echo "valgrind: no errors, no leaks"
}

# The installed tree as its users see it (SPEC.md section 7).
install_check() {
    echo "== install check: cmake --install, exported symbols, the example, the Python package"
    local work prefix lib so
    work=$(mktemp -d)
    prefix=$work/prefix
    cmake -S . -B build-release -DLLVM_DIR="/usr/lib/llvm-${llvm}/lib/cmake/llvm" \
        -DCMAKE_BUILD_TYPE=Release -DTENSORJIT_WERROR=ON -DTENSORJIT_BUILD_TESTS=OFF >/dev/null
    cmake --build build-release -j"$jobs" >/dev/null
    cmake --install build-release --prefix "$prefix" >/dev/null
    lib=$prefix/lib
    so=$lib/libtensorjit.so.0

    local exported others missing soname
    exported=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
    others=$(grep -v '^jit_' <<<"$exported" || true)
    if [[ -n $others ]]; then
        echo "libtensorjit.so exports symbols other than jit_*:" >&2
        echo "$others" >&2
        return 1
    fi
    missing=$(comm -23 <(grep -o '\bjit_[a-z0-9_]*(' include/tensorjit.h | tr -d '(' | sort -u) \
        <(echo "$exported"))
    if [[ -n $missing ]]; then
        echo "libtensorjit.so does not export these functions of tensorjit.h: ${missing//$'\n'/ }" >&2
        return 1
    fi
    soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    if [[ $soname != libtensorjit.so.0 ]]; then
        echo "libtensorjit.so's SONAME is '$soname', not libtensorjit.so.0" >&2
        return 1
    fi
    echo "libtensorjit.so.0: SONAME $soname, $(wc -l <<<"$exported") symbols exported, all jit_*"
    for f in include/tensorjit.h lib/libtensorjit.a lib/pkgconfig/tensorjit.pc \
        lib/cmake/tensorjit/tensorjitConfig.cmake lib/cmake/tensorjit/tensorjitConfigVersion.cmake \
        bin/tensorjit share/man/man1/tensorjit.1; do
        [[ -f $prefix/$f ]] || { echo "cmake --install did not install $f" >&2; return 1; }
    done
    "$prefix/bin/tensorjit" --version
    groff -man -ww -z "$prefix/share/man/man1/tensorjit.1"

    echo "-- examples/gather_embedding.c: find_package(tensorjit), pkg-config, pkg-config --static"
    cmake -S examples -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
    cmake --build "$work/example" >/dev/null
    "$work/example/gather_embedding" | tail -1
    local cflags libs static_libs
    export PKG_CONFIG_PATH=$lib/pkgconfig
    cflags=$(pkg-config --cflags tensorjit)
    libs=$(pkg-config --libs tensorjit)
    static_libs=$(pkg-config --static --libs tensorjit)
    # shellcheck disable=SC2086 # word splitting of the flags is meant
    cc -std=c11 -Wall -Wextra -Werror examples/gather_embedding.c $cflags $libs \
        -Wl,-rpath,"$lib" -o "$work/example-pc"
    "$work/example-pc" | tail -1
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror examples/gather_embedding.c $cflags \
        ${static_libs//-ltensorjit/-l:libtensorjit.a} -o "$work/example-static"
    if readelf -d "$work/example-static" | grep -q libtensorjit; then
        echo "the static link still needs libtensorjit.so" >&2
        return 1
    fi
    "$work/example-static" | tail -1
    unset PKG_CONFIG_PATH

    echo "-- cpack -G DEB: the same files under /usr"
    local deb
    if ! (cd build-release && cpack -G DEB >"$work/cpack.log" 2>&1); then
        cat "$work/cpack.log" >&2
        return 1
    fi
    deb=build-release/tensorjit_$(sed -n 's/^project(tensorjit VERSION \([0-9.]*\).*/\1/p' \
        CMakeLists.txt)_$(dpkg --print-architecture).deb
    if ! diff <(dpkg-deb -c "$deb" | awk '$6 !~ /\/$/ {print $6}' | sed 's|^\./usr/||' | sort) \
        <(cd "$prefix" && find . ! -type d | sed 's|^\./||' | sort); then
        echo "$deb does not hold the files cmake --install puts in place" >&2
        return 1
    fi
    echo "$deb: $(dpkg-deb -f "$deb" Depends)"

    echo "-- python/: pip install offline into a fresh venv (the C extension built against"
    echo "   this tree's library), then its tests with no environment variable set"
    /usr/bin/python3 -m venv --system-site-packages "$work/venv"
    rm -rf python/build python/*.egg-info
    "$work/venv/bin/pip" install --quiet --no-build-isolation --no-index ./python
    rm -rf python/build python/*.egg-info
    # the installed package (not python/), run from elsewhere, nothing set
    local tests=$PWD/python/tests
    local clean=(env -u TENSORJIT_LIBRARY -u TENSORJIT_PREFIX -u LD_LIBRARY_PATH -u PYTHONPATH)
    # a process a core (pytest-xdist): the suites are mostly compiles, 89 s
    # on one of two cores against 52 on both
    local workers=()
    "$work/venv/bin/python" -c 'import xdist' 2>/dev/null && workers=(-n "$jobs")
    if ! (cd "$work" && "${clean[@]}" "$work/venv/bin/python" -c \
            'import sys, tensorjit; sys.exit(not tensorjit.__file__.startswith(sys.prefix))' &&
        "${clean[@]}" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
            "${workers[@]}" "$tests"); then
        echo "the Python package's tests failed (tree kept in $work)" >&2
        return 1
    fi
    rm -rf "$work"
}

# The Python package's extension and the library built with ASan + UBSan,
# the whole Python suite run on them (python/README.md, "Memory checks of
# the extension"). Not in `test` (about 1.5 minutes more, the library's
# ASan build included): run it when the extension changes. The package is
# a copy in a temporary folder, imported from there; the tests are the
# tree's, so that test_docs and the conformance vectors find their files.
python_asan() {
    echo "== the Python suite on the extension and the library under ASan + UBSan"
    configure_and_build build-asan "$llvm" -DCMAKE_BUILD_TYPE=Debug -DTENSORJIT_SANITIZE=ON
    local work py=/usr/bin/python3 include numpy_include suffix
    work=$(mktemp -d)
    cp -r python/tensorjit "$work/"
    rm -f "$work"/tensorjit/*.so
    include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    numpy_include=$("$py" -c 'import numpy; print(numpy.get_include())')
    suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    gcc -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
        -fPIC -shared \
        -Iinclude -I"$include" -I"$numpy_include" \
        python/tensorjit/_tensorjit.c python/tensorjit/_torch_tensor.c \
        -Lbuild-asan/runtime -ltensorjit -Wl,-rpath,"$PWD/build-asan/runtime" \
        -o "$work/tensorjit/_tensorjit$suffix"
    local workers=()
    "$py" -c 'import xdist' 2>/dev/null && workers=(-n "$jobs")
    # detect_leaks=0: CPython, numpy and torch keep memory until exit;
    # allocator_may_return_null=1: the tests of results too large to
    # allocate ask for terabytes; halt_on_error=1: a UBSan report in a test
    # that passes would only reach pytest's captured output
    if ! (cd "$work" && env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
            ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            TENSORJIT_CLI="$OLDPWD/build-asan/tensorjit" "${instrumented_env[@]}" \
            "$py" -m pytest -q -p no:cacheprovider "${workers[@]}" "$OLDPWD/python/tests"); then
        echo "the Python suite failed under ASan + UBSan (package in $work)" >&2
        return 1
    fi
    rm -rf "$work"
}

# Line and branch coverage of the whole ctest suite (gcc --coverage, Debug,
# -O0, atomic counters: see TENSORJIT_COVERAGE in CMakeLists.txt), printed
# for the library (runtime/ ir/ jit/) and for models/ + tools/. The step
# fails if the library's line or branch coverage falls below the ratchet:
# the figures measured when it was last raised, rounded down to a whole
# percent (thread timing moves them by up to 0.3% run to run). Raise it
# when tests add coverage; never lower it to pass. What stays uncovered
# and why: docs/coverage.md.
# --exclude-unreachable-branches drops the branches gcc attaches to lines
# with no code of their own (a closing brace), which are no decision of the
# source (it changed nothing when measured). --exclude-throw-branches is not
# used: C has no exceptions, so there is nothing for it to exclude.
coverage_min_lines=96
coverage_min_branches=86
coverage() {
    echo "== coverage (gcovr): the whole suite, Debug -O0 --coverage, code generation at level 0"
    cmake -S . -B build-coverage -DLLVM_DIR="/usr/lib/llvm-${llvm}/lib/cmake/llvm" \
        -DTENSORJIT_COVERAGE=ON -DTENSORJIT_WERROR=ON >/dev/null
    cmake --build build-coverage -j"$jobs" >/dev/null
    find build-coverage -name '*.gcda' -delete # counts of this run only
    # test_differential at its full count: its dynamic signatures split
    # over the pool reach lines that a quarter of them does not
    env "${quarter_counts[@]}" "${instrumented_env[@]}" TENSORJIT_DIFF_N=3000 \
        ctest --test-dir build-coverage --output-on-failure -j"$jobs" >build-coverage/ctest.log ||
        { cat build-coverage/ctest.log; return 1; }
    # The per-file reports go to files: never `-o /dev/null`, since gcovr 5.2
    # checks an output path by creating and then deleting it (as root, that
    # deleted the device).
    local gcovr=(gcovr -r . build-coverage -j"$jobs" --exclude-unreachable-branches)
    echo "library (runtime/ ir/ jit/):"
    "${gcovr[@]}" -f runtime/ -f ir/ -f jit/ --print-summary -o build-coverage/library.txt \
        --fail-under-line "$coverage_min_lines" --fail-under-branch "$coverage_min_branches" ||
        { echo "library coverage fell below ${coverage_min_lines}% of lines or" \
            "${coverage_min_branches}% of branches (per file: build-coverage/library.txt)" >&2
          return 1; }
    echo "models/ + tools/:"
    "${gcovr[@]}" -f models/ -f tools/ --print-summary -o build-coverage/models-tools.txt
}

# step NAME COMMAND...: runs it, then one line with its wall time, so that
# CI's log says where the time of a run goes
step() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    echo "== step $name took $((SECONDS - start)) s"
}

main_suite() {
    echo "== build and test (LLVM ${llvm}, -Werror)"
    configure_and_build build "$llvm"
    ctest --test-dir build --output-on-failure -j"$jobs"
}

sanitized_suite() {
    echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer (LLVM ${llvm}; a quarter of the random signatures, code generation at level 0)"
    configure_and_build build-asan "$llvm" -DCMAKE_BUILD_TYPE=Debug -DTENSORJIT_SANITIZE=ON
    env "${quarter_counts[@]}" "${instrumented_env[@]}" TENSORJIT_STRESS_SECONDS="$stress_seconds" \
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build-asan --output-on-failure -j"$jobs"
}

old_llvm_suite() {
    echo "== build and test (LLVM ${llvm_old}, -Werror; a quarter of the random signatures)"
    configure_and_build "build-llvm${llvm_old}" "$llvm_old"
    # here what an older LLVM could change (its IR, its passes) meets every suite
    env "${quarter_counts[@]}" \
        ctest --test-dir "build-llvm${llvm_old}" --output-on-failure -j"$jobs"
}

new_llvm_suites=(test_conformance test_bags test_bag_ir test_vgather test_split test_kernels)
# their ctest names: test_bag_ir runs a second time with prefetch, streaming
# stores and splits forced, intrinsics and IR a new LLVM can change as well
new_llvm_tests=("${new_llvm_suites[@]}" test_bag_ir_forced)

new_llvm_suite() {
    echo "== build and test (LLVM ${llvm_new}, -Werror; the suites of generated code, a quarter of the random signatures)"
    cmake -S . -B "build-llvm${llvm_new}" -DLLVM_DIR="/usr/lib/llvm-${llvm_new}/lib/cmake/llvm" \
        -DTENSORJIT_WERROR=ON | grep -E "tensorjit:|Error|error" || true
    cmake --build "build-llvm${llvm_new}" -j"$jobs" --target "${new_llvm_suites[@]}"
    local pattern
    pattern="^($(IFS='|'; echo "${new_llvm_tests[*]}"))\$"
    # --no-tests=error: a suite renamed out of the pattern fails the step
    # instead of leaving it to pass with nothing run
    env "${quarter_counts[@]}" \
        ctest --test-dir "build-llvm${llvm_new}" --output-on-failure -j"$jobs" -R "$pattern" \
        --no-tests=error
}

install_missing
case "$mode" in
demo)
    configure_and_build build "$llvm"
    ./build/tensorjit demo
    ;;
test)
    step tools tools_check
    [[ -n ${TENSORJIT_TOOLS_CHECK_ONLY:-} ]] && exit 0
    step "LLVM ${llvm}" main_suite
    step install install_check
    step "ASan+UBSan" sanitized_suite
    step "disk cache" from_disk_cache
    if [[ $llvm_old != none ]]; then
        step "LLVM ${llvm_old}" old_llvm_suite
    fi
    if [[ $llvm_new != none ]]; then
        step "LLVM ${llvm_new}" new_llvm_suite
    fi
    step TSan thread_sanitizer
    step fuzz fuzz
    step memcheck memcheck
    step coverage coverage
    echo "== ./build.sh test took $SECONDS s"
    ;;
coverage)
    coverage
    ;;
install-check)
    install_check
    ;;
python-asan)
    python_asan
    ;;
*)
    echo "usage: ./build.sh [test|install-check|python-asan|coverage|tools-check]" >&2
    exit 2
    ;;
esac
