"""Builds tensorjit._tensorjit, the C extension, against libtensorjit.

Where the library is, in order (the first that has both the header and the
shared library wins):
  1. TENSORJIT_PREFIX, an install prefix (PREFIX/include, PREFIX/lib);
  2. this source tree: ../include and the newer of ../build-release/runtime
     and ../build/runtime (what ./build.sh and cmake --build made), so that
     `pip install --no-build-isolation --no-index ./python` needs nothing;
  3. pkg-config tensorjit (a `cmake --install` prefix on PKG_CONFIG_PATH);
  4. /usr/local and /usr.
The extension is linked with an RPATH to that library folder, so that the
installed package imports with no environment variable set.
"""

import os
import shutil
import subprocess
import sys

import numpy
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libtensorjit.so.0"


def _prefix(prefix):
    for libdir in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu")):
        lib = os.path.join(prefix, libdir)
        if os.path.exists(os.path.join(lib, SONAME)):
            return os.path.join(prefix, "include"), lib
    return None


def _source_tree():
    include = os.path.join(HERE, os.pardir, "include")
    # build (./build.sh, docs/library.md's cmake line) and build-release (the
    # install check); never build-asan & co., whose library needs a sanitizer
    # runtime loaded first
    libs = [p for p in (os.path.join(HERE, os.pardir, d, "runtime", SONAME)
                        for d in ("build-release", "build")) if os.path.exists(p)]
    if not os.path.exists(os.path.join(include, "tensorjit.h")) or not libs:
        return None
    newest = max(libs, key=os.path.getmtime)
    return os.path.normpath(include), os.path.dirname(os.path.realpath(newest))


def _pkg_config():
    if not shutil.which("pkg-config"):
        return None
    try:
        inc = subprocess.run(["pkg-config", "--variable=includedir", "tensorjit"],
                             capture_output=True, text=True, check=True).stdout.strip()
        lib = subprocess.run(["pkg-config", "--variable=libdir", "tensorjit"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        return None
    return (inc, lib) if os.path.exists(os.path.join(lib, SONAME)) else None


def find_library():
    prefix = os.environ.get("TENSORJIT_PREFIX")
    tries = [("TENSORJIT_PREFIX", lambda: _prefix(prefix))] if prefix else []
    tries += [("the source tree", _source_tree), ("pkg-config", _pkg_config),
              ("/usr/local", lambda: _prefix("/usr/local")), ("/usr", lambda: _prefix("/usr"))]
    for how, find in tries:
        found = find()
        if found and os.path.exists(os.path.join(found[0], "tensorjit.h")):
            print(f"tensorjit: building against {found[1]}/{SONAME} (from {how})",
                  file=sys.stderr)
            return found + (how,)
    sys.exit("tensorjit: cannot find libtensorjit (tensorjit.h and libtensorjit.so.0): run "
             "./build.sh (or cmake --build build) in the source tree first, or set "
             "TENSORJIT_PREFIX to a `cmake --install` prefix")


include_dir, lib_dir, found_by = find_library()
# Warnings fail the build in the source tree (CI's); a user's compiler and
# numpy may warn about things this tree cannot know of.
werror = ["-Werror"] if found_by == "the source tree" else []

setup(
    ext_modules=[Extension(
        "tensorjit._tensorjit",
        sources=["tensorjit/_tensorjit.c", "tensorjit/_torch_tensor.c"],
        depends=["tensorjit/_dlpack.h", "tensorjit/_torch_tensor.h"],
        include_dirs=[include_dir, numpy.get_include()],
        library_dirs=[lib_dir],
        runtime_library_dirs=[lib_dir],
        libraries=["tensorjit"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-O2"] + werror,
    )],
)
