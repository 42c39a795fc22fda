#!/bin/bash
# Packs this checkout's built tools for a lent device machine (the workplace's
# `device` tool), which has no LLVM of its own: the CLI and the development
# benches with every shared library they load but glibc's and the C++
# runtime's, xz-compressed under .dev/ (ignored through .git/info/exclude),
# to be named in the run's `carry`. There:
#   mkdir -p /tmp/tj && tar xJf .dev/pkg.tar.xz -C /tmp/tj
#   LD_LIBRARY_PATH=/tmp/tj/pkg/lib /tmp/tj/pkg/tensorjit bench ...
# The static kernels of `tensorjit bench` need a C compiler there (gcc is).
# libtensorjit.so.0 travels too (pkg/lib), so that the Python package can be
# built there against it: TENSORJIT_PREFIX=P with P/include this tree's
# include/ and P/lib holding pkg/lib's libtensorjit.so*.
# docs/performance.md's device sections were measured this way;
# bench/device_bags.sh runs the bag measurements there in one call.
set -euo pipefail
build=${1:-build}
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.dev/' >>.git/info/exclude; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/pkg/lib" .dev
bins=("$build/tensorjit")
for b in tensorjit-validate-parts tensorjit-split-trace tensorjit-ab-bags tensorjit-compile-cost; do
    [ -x "$build/bench/$b" ] && bins+=("$build/bench/$b")
done
cp "${bins[@]}" "$stage/pkg/"
lib="$build/runtime/libtensorjit.so.0"
cp -L "$lib" "$stage/pkg/lib/"
ln -s libtensorjit.so.0 "$stage/pkg/lib/libtensorjit.so"
ldd "${bins[@]}" "$lib" | awk '/=>/ {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/pkg/lib/"; done
tar cf - -C "$stage" pkg | xz -6 -T0 >.dev/pkg.tar.xz
ls -l .dev/pkg.tar.xz
