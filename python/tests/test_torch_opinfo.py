"""torch's own OpInfo samples, run through tensorjit.torch and held to torch.

torch ships, in torch.testing._internal.common_methods_invocations, the
OpInfo database its own test suite runs every operator through: for each op,
the dtypes it supports on CPU, generators of sample inputs (shapes, dims,
0-D and empty tensors, duplicate-free indices, non-contiguous views,
keyword arguments) and of inputs it must refuse. None of it is written
here: the samples are collected at run time from the installed torch, for
every OpInfo that tensorjit.torch has a counterpart of (gather,
index_select, index_add, scatter, scatter_add, the five scatter_reduce
variants, nn.functional.embedding and embedding_bag), over a third of the
CPU dtypes each declares (drawn with a fixed seed per op; all of them with
TENSORJIT_OPINFO_ALL=1), with a fixed seed.

Each sample goes through tensorjit.torch with torch's own args and kwargs,
as tensors and, where numpy has the dtype, as numpy arrays; the result must
equal torch's bit for bit (NaN-aware, same dtype and shape). The
exceptions are the documented ones (python/README.md), each checked for
what is promised instead:

- complex dtypes are no element type of tensorjit: a TypeMismatch;
- embedding's and embedding_bag's max_norm rewrites the table: refused;
- embedding_bag's weighted sums and f16 means, where torch fuses
  multiply-adds and rounds twice: within torch's default tolerances, and
  bit for bit to SPEC section 10's arithmetic (f32 or f64 accumulator,
  each product rounded, in index order, one rounding at the end), computed
  here with numpy for every bag sample.

Of the error inputs, every one must raise a tensorjit.Error, except the
documented extensions (an int32 index where torch demands int64; an
embedding weight of rank >= 1 that is not 2-D), which must give what torch
gives for the int64 index or the weight's rows.

The OpInfo module is imported in a child process: common_utils, which it
imports, parses sys.argv, seeds torch, disables torch.backends' flag setters
and patches torch.jit's call paths at import, none of which the rest of the
suite should inherit (a torch crash there, such as 1.13's heap corruption
in some embedding_bag calls, fails this test, not the run). Its dependency
expecttest (not packaged by Debian) is only TestCase's base class and an
--accept flag, which the samples never use: where it is missing, a stand-in
with those two names lets the module import. Skipped where torch or its
testing module is absent, and per op where the OpInfo is.
"""

import functools
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorjit  # noqa: E402
import tensorjit.torch as tt  # noqa: E402

SEED = 1234

# OpInfo name (and variant) -> tensorjit.torch's call, with the OpInfo's own
# signature (its embedding ops take the weight first: lambda weight, idx).
OPS = {
    "gather": tt.gather,
    "index_select": tt.index_select,
    "index_add": tt.index_add,
    "scatter": tt.scatter,
    "scatter_add": tt.scatter_add,
    **{f"scatter_reduce.{r}": tt.scatter_reduce for r in ("sum", "prod", "mean", "amin", "amax")},
    "nn.functional.embedding": lambda weight, idx, **kw: tt.embedding(idx, weight, **kw),
    "nn.functional.embedding_bag": lambda weight, idx, **kw: tt.embedding_bag(idx, weight, **kw),
}

# The child: collects the samples and torch's results into a torch.save file.
CHILD = r"""
import sys, types, warnings
out_path, names = sys.argv[1], sys.argv[2].split(",")
sys.argv = sys.argv[:1]  # common_utils parses the command line at import
warnings.filterwarnings("ignore")
try:
    import expecttest
except ImportError:  # not packaged by Debian: TestCase's base and the --accept flag only
    import unittest
    expecttest = types.ModuleType("expecttest")
    expecttest.TestCase, expecttest.ACCEPT = unittest.TestCase, False
    sys.modules["expecttest"] = expecttest
import torch
try:
    from torch.testing._internal import common_methods_invocations as cmi
except Exception as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(3)

def clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    if isinstance(x, dict):
        return {k: clone(v) for k, v in x.items()}
    return x

records = []
for op in cmi.op_db:
    key = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
    if key not in names:
        continue
    for dtype in sorted(op.supported_dtypes("cpu"), key=str):
        if dtype == torch.complex32:  # torch.save cannot write it; complex64 stands for it
            continue
        torch.manual_seed(SEED)
        for k, s in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
            args, kwargs = (s.input,) + tuple(s.args), dict(s.kwargs)
            try:  # on copies: max_norm renormalizes the weight in place
                want, error = op.op(*clone(args), **clone(kwargs)), None
            except Exception as e:
                want, error = None, f"{type(e).__name__}: {e}"
            records.append(dict(key=key, kind="sample", dtype=str(dtype), n=k, args=args,
                                kwargs=kwargs, want=want, error=error))
    if op.error_inputs_func is not None:
        for k, ei in enumerate(op.error_inputs("cpu")):
            s = ei.sample_input
            records.append(dict(key=key, kind="error", dtype=None, n=k,
                                args=(s.input,) + tuple(s.args), kwargs=dict(s.kwargs),
                                want=None, error=ei.error_regex))
torch.save(records, out_path)
""".replace("SEED", str(SEED))


@functools.lru_cache(maxsize=None)
def collect():
    """The OpInfo records, by op key; pytest.skip where torch's testing
    module does not import."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "samples.pt")
        done = subprocess.run([sys.executable, "-c", CHILD, path, ",".join(OPS)],
                              capture_output=True, text=True, timeout=300)
        if done.returncode == 3:
            pytest.skip(f"torch's OpInfo database does not import: {done.stdout.strip()}")
        assert done.returncode == 0, done.stderr[-3000:]
        records = torch.load(path)
    by_key = {}
    for r in records:
        by_key.setdefault(r["key"], []).append(r)
    return by_key


def records_of(key):
    """key's records: its error inputs, and its samples of a third of its
    dtypes (two at least), drawn with a fixed seed per op, so that the ops
    together still cover every dtype (every dtype of every op where
    TENSORJIT_OPINFO_ALL is set). Each new dtype, rank or attribute is a
    kernel family, which compiles once (20 to 30 ms): all of them take
    some 11 s here, besides the 3 s of the child."""
    records = collect().get(key)
    if not records:
        pytest.skip(f"this torch has no OpInfo {key}")
    dtypes = sorted({r["dtype"] for r in records if r["kind"] == "sample"})
    if not os.environ.get("TENSORJIT_OPINFO_ALL"):
        count = min(len(dtypes), max(2, math.ceil(len(dtypes) / 3)))
        dtypes = random.Random(f"{SEED} {key}").sample(dtypes, count)
    return [r for r in records if r["kind"] == "error" or r["dtype"] in dtypes]


def as_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(as_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: as_numpy(v) for k, v in x.items()}
    return x


def assert_same(got, want, what):
    """Bit for bit, NaN in the same places, same dtype and shape."""
    if not isinstance(got, torch.Tensor):
        got = torch.from_numpy(np.asarray(got))
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
    if want.is_floating_point():
        assert torch.equal(got.isnan(), want.isnan()), (what, got, want)
        got, want = got.nan_to_num(0.0, 1.0, -1.0), want.nan_to_num(0.0, 1.0, -1.0)
    assert torch.equal(got, want), (what, got, want)


def spec_bag(weight, idx, offsets=None, mode="mean", per_sample_weights=None,
             include_last_offset=False, padding_idx=None, **_):
    """SPEC section 10's arithmetic, in numpy: each bag in index order, in an
    f32 accumulator (f64 for f64), each weighted row rounded to it before it
    is added, a mean a division by the count of non-padding lookups, one
    rounding to the table's type at the end; an empty bag is zeros."""
    table = weight.numpy()
    acc = np.float64 if table.dtype == np.float64 else np.float32
    rows = table.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += rows
    ids = idx.numpy()
    scale = None if per_sample_weights is None else per_sample_weights.numpy().reshape(-1)
    if ids.ndim == 2:
        if include_last_offset:
            ids = ids[:-1]
        width = ids.shape[1]
        bags = [range(b * width, (b + 1) * width) for b in range(ids.shape[0])]
        ids = ids.reshape(-1)
    else:
        starts = offsets.numpy().tolist()
        ends = starts[1:] + [len(ids)]
        if include_last_offset:
            starts, ends = starts[:-1], starts[1:]
        bags = [range(a, b) for a, b in zip(starts, ends)]
    out = np.zeros((len(bags),) + table.shape[1:], table.dtype)
    for b, lookups in enumerate(bags):
        total, count, high = np.zeros(table.shape[1:], acc), 0, None
        for j in lookups:
            if ids[j] == padding_idx:
                continue
            row = table[ids[j]].astype(acc)
            if scale is not None:
                row = (acc(scale[j]) * row).astype(acc)
            total, count = (total + row).astype(acc), count + 1
            high = row if high is None else np.maximum(high, row)
        if mode == "max":
            out[b] = 0 if high is None else high
        elif mode == "mean":
            out[b] = (total / acc(count)).astype(table.dtype) if count else 0
        else:
            out[b] = total.astype(table.dtype)
    return torch.from_numpy(out)


def documented_refusal(key, record):
    """The exception class tensorjit raises where the README says it
    refuses the sample, or None."""
    if record["dtype"].startswith("torch.complex"):
        return tensorjit.TypeMismatch  # no element type of tensorjit's
    if key.startswith("nn.functional.embedding") and \
            record["kwargs"].get("max_norm") is not None:
        return tensorjit.SignatureError  # max_norm rewrites the table in place
    return None


def check_result(key, record, got, what):
    want = record["want"]
    if key != "nn.functional.embedding_bag":
        assert_same(got, want, what)
        return
    got = got if isinstance(got, torch.Tensor) else torch.from_numpy(np.asarray(got))
    kwargs = record["kwargs"]
    assert_same(got, spec_bag(record["args"][0], record["args"][1], **kwargs), what)
    weighted = kwargs.get("per_sample_weights") is not None
    f16_mean = want.dtype == torch.float16 and kwargs.get("mode", "mean") == "mean"
    if weighted or f16_mean:  # torch fuses multiply-adds and rounds its f16 mean twice
        torch.testing.assert_close(got, want, msg=what)
    else:
        assert_same(got, want, what)


@pytest.mark.parametrize("key", list(OPS))
def test_opinfo_samples_give_torchs_results(key):
    fn = OPS[key]
    ran = 0
    for record in records_of(key):
        if record["kind"] != "sample":
            continue
        what = f"{key} {record['dtype']} sample {record['n']}"
        calls = [("tensors", record["args"], record["kwargs"])]
        if record["dtype"] != "torch.bfloat16":  # numpy has no bfloat16
            calls.append(("numpy", as_numpy(record["args"]), as_numpy(record["kwargs"])))
        refusal = documented_refusal(key, record)
        for kind, args, kwargs in calls:
            if record["error"] is not None:  # torch refuses it: so must tensorjit
                with pytest.raises(tensorjit.Error):
                    fn(*args, **kwargs)
            elif refusal is not None:
                with pytest.raises(refusal):
                    fn(*args, **kwargs)
            else:
                check_result(key, record, fn(*args, **kwargs), f"{what} ({kind})")
                ran += 1
    assert ran, f"no sample of {key} was compared"


# torch's functions for the extensions' check: what torch gives for the int64 index
TORCH_OPS = {"gather": torch.gather, "scatter": torch.scatter, "scatter_add": torch.scatter_add}


@pytest.mark.parametrize("key", [k for k in OPS if not k.startswith("scatter_reduce")])
def test_opinfo_error_inputs_raise_or_are_documented_extensions(key):
    records = [r for r in records_of(key) if r["kind"] == "error"]
    if not records:
        pytest.skip(f"torch's OpInfo {key} has no error inputs")
    fn = OPS[key]
    for record in records:
        args, kwargs, regex = record["args"], record["kwargs"], record["error"] or ""
        what = f"{key} error input {record['n']} ({regex!r})"
        if "Expected dtype int64 for index" in regex and args[2].dtype == torch.int32:
            # an extension: int32 indices, as torch's int64 ones
            long_args = args[:2] + (args[2].long(),) + args[3:]
            assert_same(fn(*args, **kwargs), TORCH_OPS[key](*long_args, **kwargs), what)
        elif "'weight' must be 2-D" in regex and args[0].dim() >= 1:
            # an extension: a weight of any rank >= 1, its rows
            assert_same(fn(*args, **kwargs), args[0][args[1]], what)
        else:
            with pytest.raises(tensorjit.Error):
                fn(*args, **kwargs)
