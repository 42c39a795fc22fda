#!/usr/bin/env bash
# tensorjit's one entry point, on a fresh Debian 12 machine:
#   ./build.sh        install what is missing, build, run the demo
#   ./build.sh test   install what is missing, then the whole suite three
#                     times: LLVM 19 with -Werror, LLVM 19 under
#                     AddressSanitizer + UndefinedBehaviorSanitizer, and
#                     LLVM 14 (the oldest supported) with -Werror
# TENSORJIT_LLVM=N picks the main LLVM (default 19; 14..22 build);
# TENSORJIT_LLVM_OLD=N the second one of `test` (default 14, "none" skips it).
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-demo}
llvm=${TENSORJIT_LLVM:-19}
llvm_old=${TENSORJIT_LLVM_OLD:-14}
jobs=$(nproc 2>/dev/null || echo 2)
packages=(gcc make libc6-dev cmake pkg-config "llvm-${llvm}-dev" libffi-dev libcmocka-dev
          libcjson-dev libxml2-dev)
if [[ $mode == test && $llvm_old != none ]]; then
    packages+=("llvm-${llvm_old}-dev")
fi

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

install_missing
case "$mode" in
demo)
    configure_and_build build "$llvm"
    ./build/tensorjit demo
    ;;
test)
    echo "== build and test (LLVM ${llvm}, -Werror)"
    configure_and_build build "$llvm"
    ctest --test-dir build --output-on-failure -j"$jobs"
    echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer (LLVM ${llvm})"
    configure_and_build build-asan "$llvm" -DCMAKE_BUILD_TYPE=Debug -DTENSORJIT_SANITIZE=ON
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build-asan --output-on-failure -j"$jobs"
    if [[ $llvm_old != none ]]; then
        echo "== build and test (LLVM ${llvm_old}, -Werror)"
        configure_and_build "build-llvm${llvm_old}" "$llvm_old"
        ctest --test-dir "build-llvm${llvm_old}" --output-on-failure -j"$jobs"
    fi
    ;;
*)
    echo "usage: ./build.sh [test]" >&2
    exit 2
    ;;
esac
