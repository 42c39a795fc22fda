"""The tensorjit CLI the Python suites run, for the ones that also check
the command line: TENSORJIT_CLI, else the newest of the source tree's
build/tensorjit and build-release/tensorjit, else None (those parts are
skipped); and the environment to run it in."""

import os
from typing import Optional


def find_cli() -> Optional[str]:
    if os.environ.get("TENSORJIT_CLI"):
        return os.environ["TENSORJIT_CLI"]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
    found = [p for p in (os.path.join(root, d, "tensorjit") for d in ("build", "build-release"))
             if os.access(p, os.X_OK)]
    return max(found, key=os.path.getmtime) if found else None


# no disk cache: nothing written under the user's home by a test run
CLI_ENV = dict(os.environ, TENSORJIT_CACHE_DIR="off")
