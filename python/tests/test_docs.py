"""The Python examples of README.md and python/README.md, run as a newcomer
runs them: each block in a fresh interpreter, verbatim but for the cache
directory, and what a print line's comment says it prints compared with
what it prints."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import tensorjit

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "python/README.md"]


def blocks():
    for doc in DOCS:
        if not (ROOT / doc).exists():  # the tests copied out of the tree (python/README's ASan run)
            continue
        text = (ROOT / doc).read_text()
        for n, code in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            yield pytest.param(code, id=f"{doc}#{n}")


def run(code, cwd):
    env = dict(os.environ)
    # the package under test, installed or built in place, for the child too
    package = str(pathlib.Path(tensorjit.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the example failed:\n{code}\n{done.stderr}"
    return done.stdout


@pytest.mark.parametrize("code", list(blocks()))
def test_example_runs_and_prints_what_it_says(code, tmp_path):
    if re.search(r"^\s*import torch|, torch\b", code, re.M):
        pytest.importorskip("torch")
    code = code.replace("/var/cache/tensorjit", str(tmp_path / "cache"))
    said = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s*#\s*(.*)$", code, re.M)]
    if "open_cache(" in code:  # the block says entries 1: a fresh directory, one kernel
        code += "\nassert tensorjit.cache_stats()['entries'] == 1, tensorjit.cache_stats()\n"
    printed = run(code, tmp_path).splitlines()
    assert [line.strip() for line in printed[:len(said)]] == said
