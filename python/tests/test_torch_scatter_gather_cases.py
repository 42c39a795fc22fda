"""PyTorch's own scatter and gather tests, transcribed: tensorjit.torch held to them.

PyTorch tests these ops in test/test_scatter_gather.py (TestScatterGather)
and in test/test_torch.py (the scatter_ reductions, the *_to_large_input,
*_non_unique_index and bool cases, index_select, index_add's determinism,
and the empty-tensor cases of test_dim_function_empty). Debian's torch does
not install its test tree, so the cases were read there and are restated
here in our own code: the inputs each test builds, its arguments, the
result it expects (a literal, or a reference computed by loops from the
op's description) and the errors it expects. test_torch_opinfo.py runs
torch's OpInfo samples; nothing here repeats those.

Each case calls tensorjit.torch's functions with torch tensors and, where
numpy has the dtype (not bfloat16), with numpy arrays, and holds every
result bit for bit to `ref_scatter` / `ref_gather` below (the loops of
torch's tests, restated in numpy with SPEC section 5's arithmetic: updates
applied one by one in row-major order of index, f16 and bf16 computed in f32
and rounded back after every step, integers wrapping, integer mean the floor
of the quotient, bool sum/amax an or and prod/amin an and) and to torch 1.13
itself, which on the CPU applies updates in the same order.

Differences python/README.md documents, asserted as it says at the case:
- index_add with a non-integral alpha: alpha * source is rounded before it is
  added, where torch fuses a multiply-add (an ulp apart: close to torch, bit
  for bit to the rounded reference);
- an int32 index for gather and the scatters: taken (torch refuses it);
- errors: tensorjit's SignatureError / IndexOutOfRange / TypeMismatch naming
  the argument (input, index, src, source), the dim and the value, where
  torch raises RuntimeError / IndexError.
"""

import itertools
import math
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorjit  # noqa: E402
import tensorjit.torch as tt  # noqa: E402

from torch_inputs import (ALL, FLOATS, INTS, assert_bits,  # noqa: E402
                          assert_like_torch, bits, make, noncontiguous, run_both)


def fill_indices(shape, dim, dim_size, rng, unique):
    """torch's _fill_indices: along dim, each line of index holds distinct
    indices (unique) or any in [0, dim_size)."""
    index = np.empty(shape, np.int64)
    per_line = shape[dim]
    for pos in np.ndindex(*[1 if d == dim else n for d, n in enumerate(shape)]):
        line = list(pos)
        line[dim] = slice(None)
        index[tuple(line)] = (rng.permutation(dim_size)[:per_line] if unique
                              else rng.integers(0, dim_size, per_line))
    return torch.from_numpy(index)


# ---- the references: torch's test loops, with SPEC 5's arithmetic ---------

_NP_FLOAT = {torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}


def _round(value, dtype):
    """A Python number (or NaN) as dtype holds it (f16/bf16 round to nearest
    even from f32; integers wrap)."""
    if dtype == torch.bool:
        return bool(value)
    if dtype in _NP_FLOAT:
        return float(_NP_FLOAT[dtype](value))
    if dtype == torch.bfloat16:
        return torch.tensor([value], dtype=torch.float32).to(dtype)[0].item()
    info = torch.iinfo(dtype)
    span = info.max - info.min + 1
    return (int(value) - info.min) % span + info.min


def _f32(x):
    return float(np.float32(x))


def _step(a, b, op, dtype):
    """a op b as SPEC 5 computes it in dtype."""
    if dtype == torch.bool:
        return (a or b) if op in ("sum", "amax") else (a and b)
    if op in ("amax", "amin"):
        if dtype.is_floating_point and (math.isnan(a) or math.isnan(b)):
            return float("nan")
        if op == "amax":
            return b if b > a else a  # a tie keeps the earlier (+0/-0)
        return b if b < a else a
    if dtype.is_floating_point:
        if dtype in (torch.float16, torch.bfloat16, torch.float32):
            r = _f32(np.float32(a) + np.float32(b)) if op == "sum" else \
                _f32(np.float32(a) * np.float32(b))
        else:
            r = a + b if op == "sum" else a * b
        return _round(r, dtype)
    return _round(a + b if op == "sum" else a * b, dtype)


_NEUTRAL = {"sum": 0, "mean": 0, "prod": 1}


def _lowest(dtype, op):
    if dtype == torch.bool:
        return op == "amin"
    if dtype.is_floating_point:
        return -math.inf if op == "amax" else math.inf
    info = torch.iinfo(dtype)
    return info.min if op == "amax" else info.max


def ref_scatter(base, dim, index, src, reduce=None, include_self=True):
    """torch's _test_scatter_base loop: for every position of index in
    row-major order, out[pos with dim := index[pos]] combined with src[pos]."""
    dtype = base.dtype
    out = base.clone()
    flat = out.tolist() if out.dim() else [out.item()]
    arr = np.array(flat, dtype=object).reshape(tuple(out.shape) or (1,))
    counts = np.zeros(arr.shape, np.int64)
    hit = np.zeros(arr.shape, bool)
    is_scalar = not isinstance(src, torch.Tensor)
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = int(index[pos])
        target = tuple(target)
        value = src if is_scalar else src[pos].item()
        if is_scalar:
            value = _round(value, dtype)
        op = {"add": "sum", "multiply": "prod"}.get(reduce, reduce)
        if op is None:
            arr[target] = value
            continue
        if not include_self and not hit[target]:
            arr[target] = _lowest(dtype, op) if op in ("amax", "amin") else _NEUTRAL[op]
            if dtype.is_floating_point and op in _NEUTRAL:
                arr[target] = float(arr[target])
        hit[target] = True
        counts[target] += 1
        arr[target] = _step(arr[target], value, "sum" if op == "mean" else op, dtype)
    if reduce == "mean":
        for pos in np.ndindex(*arr.shape):
            n = counts[pos] + (1 if include_self else 0)
            if counts[pos]:
                if dtype.is_floating_point:
                    q = arr[pos] / n if dtype == torch.float64 else _f32(np.float32(arr[pos]) / np.float32(n))
                    arr[pos] = _round(q, dtype)
                else:
                    arr[pos] = _round(arr[pos] // n, dtype)  # floor, as SPEC and torch's test
    return torch.tensor(arr.tolist(), dtype=dtype).reshape(base.shape)


def ref_gather(src, dim, index):
    out = np.empty(tuple(index.shape), dtype=object)
    for pos in np.ndindex(*index.shape):
        at = list(pos)
        at[dim] = int(index[pos])
        out[pos] = src[tuple(at)].item()
    return torch.tensor(out.tolist(), dtype=src.dtype).reshape(index.shape)


# ---- test_scatter_gather.py: test_gather ------------------------------------

def test_gather_random_3d_against_the_loop_and_max():
    rng = np.random.default_rng(1)
    for trial in range(6):
        m, n, o = (int(v) for v in rng.integers(4, 9, 3))
        elems, dim = int(rng.integers(1, 4)), trial % 3
        src = make((m, n, o), torch.float32, rng)
        shape = [m, n, o]
        shape[dim] = elems
        idx = fill_indices(shape, dim, src.shape[dim], rng, unique=True)
        want = ref_gather(src, dim, idx)
        assert_bits(torch.gather(src, dim, idx), want)
        for got in run_both(tt.gather, src, dim, idx):
            assert_bits(got, want)
    # gather along 2 of the argmax gives the max itself
    src = make((3, 4, 5), torch.float32, rng)
    values, idx = src.max(2, True)
    for got in run_both(tt.gather, src, 2, idx):
        assert_bits(got, values)


@pytest.mark.parametrize("dtype", [torch.int8, torch.bfloat16])
def test_gather_large_discontiguous_misaligned_expanded(dtype):
    # test_gather_large at a smaller size (its 4096 x 4100 only reaches torch's
    # vector paths): discontiguous, misaligned and row-padded sources, an
    # expanded (stride 0) index and a discontiguous expanded one, against
    # src[ind0] / src[:, ind0]
    rng = np.random.default_rng(2)
    for m, k, count in ((64, 48, 40), (64, 52, 40)):
        src = make((m, k), dtype, rng)
        discontig = torch.empty(m, 2 * k, dtype=dtype)[:, ::2].copy_(src)
        misaligned = torch.empty(m * k + 1, dtype=dtype)[1:].view(m, k).copy_(src)
        padded = torch.empty(m, k + 4, dtype=dtype)[:, :-4].copy_(src)
        for dim in (0, 1):
            ind0 = torch.from_numpy(rng.integers(0, src.shape[dim], count))
            strided0 = torch.empty(2 * count, dtype=torch.int64)[::2].copy_(ind0)
            view = [1, 1]
            view[dim] = count
            shape = list(src.shape)
            shape[dim] = count
            ind = ind0.view(view).expand(shape)
            ind_strided = strided0.view(view).expand(shape)
            want = src[ind0] if dim == 0 else src[:, ind0]
            for data, index in itertools.product((src, discontig, misaligned, padded),
                                                 (ind, ind_strided)):
                assert_bits(torch.gather(data, dim, index), want)
                for got in run_both(tt.gather, data, dim, index):
                    assert_bits(got, want)
    # an index of size 1 along dim, expanded over the last dim
    src = make((16, 2, 16), dtype, rng)
    ind = torch.from_numpy(rng.integers(0, 2, (16, 1))).view(16, 1, 1).expand(16, 1, 16)
    for got in run_both(tt.gather, src, 1, ind):
        assert_bits(got, torch.gather(src, 1, ind))


def test_gather_bool():
    src = torch.tensor(((False, True), (True, True)))
    idx = torch.tensor(((0, 0), (1, 0)))
    for got in run_both(tt.gather, src, 1, idx):
        assert_bits(got, torch.tensor(((False, False), (True, True))))


def test_gather_with_an_empty_index_along_the_last_dim():
    # test_gather_backward_with_empty_index_tensor's forward call
    rng = np.random.default_rng(3)
    for dtype in (torch.float32, torch.float64):
        x = make((10, 5), dtype, rng)
        index = torch.from_numpy(rng.integers(0, 2, (3, 0)))
        for got in run_both(tt.gather, x, -1, index):
            assert_bits(got, torch.empty(3, 0, dtype=dtype))


# ---- test_scatter_gather.py: _test_scatter_base and its users ---------------

def _scatter_case(fn, dtype, rng, *, is_scalar, reduction, unique, include_self=True):
    m, n, o = (int(v) for v in rng.integers(3, 7, 3))
    elems, dim = int(rng.integers(1, 5)), int(rng.integers(0, 3))
    shape = [m, n, o]
    shape[dim] = elems
    idx = fill_indices(shape, dim, [m, n, o][dim], rng, unique)
    if is_scalar:
        src = float(rng.uniform(0, 1))
    else:
        src = make(tuple(s + int(rng.integers(1, 4)) for s in shape), dtype, rng)  # larger
    base = make((m, n, o), dtype, rng)
    want = ref_scatter(base, dim, idx, src, "sum" if fn == "scatter_add" else reduction,
                       include_self)
    if fn == "scatter":
        call = lambda *a: tt.scatter(*a, reduce=reduction)  # noqa: E731
        theirs = torch.scatter(base, dim, idx, src, reduce=reduction) if reduction else \
            torch.scatter(base, dim, idx, src)
    elif fn == "scatter_add":
        call = tt.scatter_add
        theirs = torch.scatter_add(base, dim, idx, src)
    else:
        call = lambda *a: tt.scatter_reduce(*a, reduction, include_self=include_self)  # noqa
        theirs = torch.scatter_reduce(base, dim, idx, src, reduction, include_self=include_self)
    if is_scalar:
        results = [call(base, dim, idx, src)]
        if dtype != torch.bfloat16:
            results.append(torch.from_numpy(call(base.numpy(), dim, idx.numpy(), src)))
    else:
        results = run_both(call, base, dim, idx, src)
    assert_like_torch(want, theirs)  # torch 1.13 agrees with the loop (torch 2 within ulps)
    for got in results:
        assert_bits(got, want)
    if not include_self:
        return  # (the empty-index case below once per dtype and reduction: compiles cost)
    # the empty-index case every scatter test ends with: a (2, 2) input, a (0,) index
    dst, empty = make((2, 2), dtype, rng), torch.tensor((), dtype=torch.long)
    src2 = make((2, 2), dtype, rng)
    for got in run_both(call, dst, 0, empty, src2):
        assert_bits(got, dst)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_scatter_(dtype):
    rng = np.random.default_rng(10)
    for _ in range(2):  # torch runs it deterministic and not: one result here
        _scatter_case("scatter", dtype, rng, is_scalar=False, reduction=None, unique=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_scatter__scalar(dtype):
    _scatter_case("scatter", dtype, np.random.default_rng(11), is_scalar=True,
                  reduction=None, unique=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("reduction", ["add", "multiply"])
def test_scatter__reductions(dtype, reduction):
    rng = np.random.default_rng(12)
    for is_scalar in (False, True):
        _scatter_case("scatter", dtype, rng, is_scalar=is_scalar, reduction=reduction,
                      unique=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_scatter_add_(dtype):
    _scatter_case("scatter_add", dtype, np.random.default_rng(13), is_scalar=False,
                  reduction=None, unique=True)


def test_scatter_add_mult_index_base():
    m, n = 30, 40
    idx, src = torch.zeros(m, n, dtype=torch.long), torch.ones(m, n)
    for got in run_both(tt.scatter_add, torch.zeros(m, n), 0, idx, src):
        assert_bits(got[0], torch.full((n,), float(m)))
        assert_bits(got[1:], torch.zeros(m - 1, n))
    for got in run_both(tt.scatter_add, torch.zeros(m, n), 1, idx, src):
        assert_bits(got[:, 0], torch.full((m,), float(n)))


_REDUCE_DTYPES = {"sum": FLOATS + INTS, "mean": FLOATS + INTS, "prod": ALL,
                  "amax": ALL, "amin": ALL}


@pytest.mark.parametrize("reduction", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_every_dtype_duplicates_include_self(reduction):
    # test_scatter_reduce_{sum,prod,mean,amax,amin}: non-unique indices, both
    # include_self, every dtype torch lists for them but complex (none here)
    rng = np.random.default_rng(20 + len(reduction))
    for dtype, include_self in itertools.product(_REDUCE_DTYPES[reduction], (True, False)):
        _scatter_case("scatter_reduce", dtype, rng, is_scalar=False, reduction=reduction,
                      unique=False, include_self=include_self)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_amax_amin_nan_and_inf(dtype, include_self):
    inp, idx = torch.zeros(3, dtype=dtype), torch.tensor([0, 0, 1, 1, 2, 2])
    nan, inf = float("nan"), float("inf")
    src = torch.tensor([1, nan, -inf, -inf, 2, inf], dtype=dtype)
    want = torch.tensor([nan, 0 if include_self else -inf, inf], dtype=dtype)
    for got in run_both(tt.scatter_reduce, inp, 0, idx, src, "amax", include_self=include_self):
        assert_bits(got, want)
    src = torch.tensor([1, nan, -2, -inf, inf, inf], dtype=dtype)
    want = torch.tensor([nan, -inf, 0 if include_self else inf], dtype=dtype)
    for got in run_both(tt.scatter_reduce, inp, 0, idx, src, "amin", include_self=include_self):
        assert_bits(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_scatter_expanded_index(dtype):
    # an index of stride 0 beyond dim 0 gives what its contiguous copy gives
    rng = np.random.default_rng(30)
    for input_size in ([20, 7], [20, 1], [20, 3, 2, 2]):
        inp = make(input_size, dtype, rng, -2, 2)
        idx = torch.from_numpy(rng.integers(0, input_size[0], [40] + [1] * (len(input_size) - 1)))
        idx[(idx > 1) & (idx < 4)] = 0  # some rows no update reaches
        shape = [40] + input_size[1:]
        idx_x, idx_c = idx.expand(shape), idx.expand(shape).contiguous()
        src = make(shape, dtype, rng, -2, 2)
        # the contiguous index's result here: SPEC's loop bit for bit, and
        # torch's (bit for bit in torch 1.13; within ulps for f16 and bf16 in
        # torch 2, which rounds once)
        want = tt.scatter_add(inp, 0, idx_c, src)
        assert_bits(want, ref_scatter(inp, 0, idx_c, src, "sum"))
        assert_like_torch(want, torch.scatter_add(inp, 0, idx_c, src))
        for got in run_both(tt.scatter_add, inp, 0, idx_x, src):
            assert_bits(got, want)
        for reduce, include_self in itertools.product(("sum", "prod", "mean", "amax", "amin"),
                                                      (True, False)):
            want = tt.scatter_reduce(inp, 0, idx_c, src, reduce, include_self=include_self)
            assert_bits(want, ref_scatter(inp, 0, idx_c, src, reduce, include_self))
            assert_like_torch(want, torch.scatter_reduce(inp, 0, idx_c, src, reduce,
                                                         include_self=include_self))
            for got in run_both(tt.scatter_reduce, inp, 0, idx_x, src, reduce,
                                include_self=include_self):
                assert_bits(got, want)


def test_scatter_add_broadcasted_index_deterministic():
    rng = np.random.default_rng(31)
    for d in (0, 1):
        inp = make((3, 4), torch.float32, rng)
        idx_1d = torch.from_numpy(rng.integers(0, 3, 10))
        shape = [3, 4]
        shape[d] = 10
        src = make(shape, torch.float32, rng)
        idx = idx_1d.unsqueeze(1 - d).expand(shape)
        want = torch.scatter_add(inp, d, idx, src)
        for _ in range(2):
            for got in run_both(tt.scatter_add, inp, d, idx, src):
                assert_bits(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_gather_expanded_index(dtype):
    inp = torch.arange(25).view(5, 5)
    idx = torch.arange(5).view(5, 1)
    assert_bits(tt.gather(inp.to(dtype), 0, idx), tt.gather(inp, 0, idx).to(dtype))
    rng = np.random.default_rng(32)
    for input_size in ([20, 7], [20, 1], [20, 4, 3], [20, 3, 2, 2]):
        inp = make(input_size, dtype, rng)
        idx = torch.from_numpy(rng.integers(0, 20, [40] + [1] * (len(input_size) - 1)))
        shape = [40] + input_size[1:]
        want = torch.gather(inp, 0, idx.expand(shape).contiguous())
        for got in run_both(tt.gather, inp, 0, idx.expand(shape)):
            assert_bits(got, want)
        # an index unsqueezed to size 1 along dim 0 and strided 1 along dim 1,
        # expanded over the rest
        line = torch.from_numpy(rng.integers(0, 20, input_size[1]))
        unsq = line.view([1, input_size[1]] + [1] * (len(input_size) - 2))
        shape = [1] + input_size[1:]
        want = torch.gather(inp, 0, unsq.expand(shape).contiguous())
        for got in run_both(tt.gather, inp, 0, unsq.expand(shape)):
            assert_bits(got, want)


# ---- test_torch.py: the scatter_ literals ------------------------------------

_INDEX_12 = torch.tensor([[1], [2]])


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_reduce_operations_to_large_input(dtype):
    zeros = torch.zeros(4, 4, dtype=dtype)
    want = torch.zeros(4, 4, dtype=dtype)
    want[1:3, 0] = 1
    for got in run_both(tt.scatter, zeros, 0, _INDEX_12, torch.ones(2, 2, dtype=dtype),
                        reduce="add"):
        assert_bits(got, want)
    twos = torch.full((4, 4), 2, dtype=dtype)
    want = twos.clone()
    want[1:3, 0] = 12 if dtype != torch.bool else 1  # bool: and of True, True
    for got in run_both(tt.scatter, twos, 0, _INDEX_12, torch.full((2, 2), 6, dtype=dtype),
                        reduce="multiply"):
        assert_bits(got, want)


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_reduce_scalar(dtype):
    want = torch.zeros(4, 4, dtype=dtype)
    want[1:3, 0] = 1
    for a in (torch.zeros(4, 4, dtype=dtype),) + ((np.zeros((4, 4), dtype=str(dtype)[6:]),)
                                                 if dtype != torch.bfloat16 else ()):
        assert_bits(torch.as_tensor(tt.scatter(a, 0, _INDEX_12 if isinstance(a, torch.Tensor)
                                               else _INDEX_12.numpy(), 1, reduce="add")), want)
    twos = torch.full((4, 4), 2, dtype=dtype)
    want = twos.clone()
    want[1:3, 0] = 4 if dtype != torch.bool else 1
    assert_bits(tt.scatter(twos, 0, _INDEX_12, 2, reduce="multiply"), want)
    assert_bits(torch.scatter(twos, 0, _INDEX_12, 2, reduce="multiply"), want)


def test_scatter_add_non_unique_index():
    h, w = 2, 65536
    for got in run_both(tt.scatter_add, torch.ones(h, w), 0, torch.zeros(h, w, dtype=torch.long),
                        torch.ones(h, w)):
        assert_bits(got, torch.tensor([[3.0], [1.0]]).repeat(1, w))


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_reduce_non_unique_index(dtype):
    index = torch.zeros(2, 2, dtype=torch.long)
    want = torch.tensor([[3], [1]]).to(dtype).repeat(1, 2) if dtype != torch.bool else \
        torch.ones(2, 2, dtype=dtype)
    for got in run_both(tt.scatter, torch.ones(2, 2, dtype=dtype), 0, index,
                        torch.ones(2, 2, dtype=dtype), reduce="add"):
        assert_bits(got, want)
    want = torch.tensor([[8], [2]]).to(dtype).repeat(1, 2)
    for got in run_both(tt.scatter, torch.full((2, 2), 2, dtype=dtype), 0, index,
                        torch.full((2, 2), 2, dtype=dtype), reduce="multiply"):
        assert_bits(got, want)


def test_scatter_and_scatter_add_to_large_input():
    want = torch.zeros(4, 4)
    want[1:3, 0] = 1
    for fn in (tt.scatter, tt.scatter_add):
        for got in run_both(fn, torch.zeros(4, 4), 0, _INDEX_12, torch.ones(2, 2)):
            assert_bits(got, want)


def test_scatter_bool_and_scatter_add_bool():
    x = torch.ones(2, 3, dtype=torch.bool)
    for got in run_both(tt.scatter, torch.zeros(3, 3, dtype=torch.bool), 0,
                        torch.tensor([[0, 1, 2], [0, 1, 2]]), x):
        assert_bits(got, torch.eye(3, dtype=torch.bool))
    x = torch.ones(2, 5, dtype=torch.bool)
    want = torch.tensor([[1, 1, 1, 1, 1], [0, 1, 0, 1, 0], [1, 0, 1, 0, 1]], dtype=torch.bool)
    for got in run_both(tt.scatter_add, torch.zeros(3, 5, dtype=torch.bool), 0,
                        torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), x):
        assert_bits(got, want)


# ---- test_torch.py: index_select, index_add -----------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_index_select(dtype):
    rng = np.random.default_rng(40)
    num_src, num_out = 3, 5

    def arg(batch, n, dim, contig):
        t = make(batch[:dim] + (n,) + batch[dim:], dtype, rng)
        return t if contig else noncontiguous(t)

    for src_contig, idx_contig in itertools.product((True, False), repeat=2):
        for other in ((), (4, 5)):
            for dim in range(len(other)):
                src = arg(other, num_src, dim, src_contig)
                idx = torch.from_numpy(rng.integers(0, num_src, num_out))
                idx = idx if idx_contig else noncontiguous(idx)
                want = torch.index_select(src, dim, idx)
                for got in run_both(tt.index_select, src, dim, idx):
                    assert_bits(got, want)
    for idx_type in (torch.int32, torch.int64):
        src = arg((3, 2), num_src, 1, True)
        idx = torch.from_numpy(rng.integers(0, num_src, num_out)).to(idx_type)
        for got in run_both(tt.index_select, src, 1, idx):
            assert_bits(got, src[:, idx.long()])
    # 0-D and 1-element source and index, all four pairs
    for size_s, size_i in itertools.product([(), (1,)], repeat=2):
        source, idx = make(size_s, dtype, rng), torch.zeros(size_i, dtype=torch.int64)
        for got in run_both(tt.index_select, source, 0, idx):
            assert got.numel() == 1 and bits(got).item() == bits(source).item()


def test_index_add_deterministic():
    # test_index_add_deterministic at a tenth of its size (2000 -> 200 along
    # dim): many duplicates, alpha in [1, 2). Documented difference: alpha *
    # source is rounded to f32 before it is added, where torch fuses the two;
    # so bit for bit to that rounded sum in index order (np.add.at), close to
    # torch's result.
    rng = np.random.default_rng(41)
    for dim in range(3):
        a = [5, 4, 3]
        a[dim] = 200
        b = list(a)
        b[dim] = 200 * 20
        x = torch.zeros(a)
        src = torch.from_numpy(rng.uniform(0, 1, b).astype(np.float32))
        index = torch.from_numpy(rng.integers(0, 200, b[dim]))
        alpha = float(rng.uniform(0, 1)) + 1
        scaled = np.moveaxis(src.numpy() * np.float32(alpha), dim, 0)
        want = np.moveaxis(np.zeros(a, np.float32), dim, 0).copy()
        np.add.at(want, index.numpy(), scaled)
        want = torch.from_numpy(np.ascontiguousarray(np.moveaxis(want, 0, dim)))
        first = tt.index_add(x, dim, index, src, alpha=alpha)
        assert_bits(first, want)
        for _ in range(2):  # the same bits every call
            assert_bits(tt.index_add(x, dim, index, src, alpha=alpha), first)
        assert_bits(torch.from_numpy(tt.index_add(x.numpy(), dim, index.numpy(), src.numpy(),
                                                  alpha=alpha)), first)
        torch.testing.assert_close(first, torch.index_add(x, dim, index, src, alpha=alpha),
                                   atol=1e-5, rtol=1e-5)


# ---- test_torch.py: test_dim_function_empty's gather, scatter, index_* cases --

def test_empty_tensors_gather_scatter_index_add_index_select():
    rng = np.random.default_rng(50)
    shape = (0, 1, 2, 0)
    x = torch.randn(shape)
    e64 = lambda s: torch.empty(s, dtype=torch.int64)  # noqa: E731
    for dim, index in ((0, e64(shape)), (2, e64(shape)), (2, e64((0, 1, 3, 0))),
                       (2, e64((0, 1, 0, 0)))):
        for got in run_both(tt.gather, x, dim, index):
            assert tuple(got.shape) == tuple(index.shape)
    y = make((2, 3, 4), torch.float32, rng)
    for got in run_both(tt.gather, y, 0, e64((0, 3, 4))):
        assert tuple(got.shape) == (0, 3, 4)
    for dim in (0, 2):
        for fn in (tt.scatter, tt.scatter_add):
            for got in run_both(fn, torch.randn(shape), dim, e64(shape), torch.randn(shape)):
                assert tuple(got.shape) == shape
    z, z_src = make((2, 3, 4), torch.float32, rng), make((2, 3, 4), torch.float32, rng)
    for fn in (tt.scatter, tt.scatter_add):
        for got in run_both(fn, z, 2, e64((2, 3, 0)), z_src):
            assert_bits(got, z)
    ind_empty, ind_01 = e64((0,)), torch.tensor([0, 1])
    for dim, index, source in ((0, ind_empty, (0, 1, 2, 0)), (2, ind_empty, (0, 1, 0, 0)),
                               (2, ind_01, (0, 1, 2, 0))):
        for got in run_both(tt.index_add, x, dim, index, torch.empty(source)):
            assert_bits(got, x)
    c = torch.randn(0, 1, 2)
    for got in run_both(tt.index_add, c, 0, ind_empty, torch.empty(0, 1, 2)):
        assert_bits(got, c)
    for got in run_both(tt.index_add, z, 0, ind_empty, torch.empty(0, 3, 4)):
        assert_bits(got, z)
    # index_select
    for dim, index, want in ((0, ind_empty, shape), (2, ind_empty, (0, 1, 0, 0)),
                             (2, ind_01, shape)):
        for got in run_both(tt.index_select, x, dim, index):
            assert tuple(got.shape) == want
    for got in run_both(tt.index_select, z, 0, ind_empty):
        assert tuple(got.shape) == (0, 3, 4)
    for got in run_both(tt.index_select, torch.randn(0, 3), 1, ind_01):
        assert tuple(got.shape) == (0, 2)
    for idx in (ind_01, ind_01.int()):
        for got in run_both(tt.index_select, torch.randn(3, 0), 0, idx):
            assert tuple(got.shape) == (2, 0)
    for got in run_both(tt.index_select, torch.randn([]), 0, torch.tensor([0], dtype=torch.int32)):
        assert tuple(got.shape) == ()


# ---- the errors torch's tests expect, and those its checks raise -------------

def _raises(cls, pattern, fn, *args, **kw):
    """fn raises cls matching pattern with tensors and with numpy arrays."""
    for conv in (lambda a: a, lambda a: a.numpy() if isinstance(a, torch.Tensor) else a):
        with pytest.raises(cls, match=pattern):
            fn(*[conv(a) for a in args], **{k: conv(v) for k, v in kw.items()})


def test_errors_of_index_select_from_dim_function_empty():
    w, s = torch.randn(0, 3), torch.randn([])
    # torch: "self indexing axis dim should be positive"
    _raises(tensorjit.IndexOutOfRange, r"index\[0\] = 0 is out of range for input dimension 0 "
            r"of size 0", tt.index_select, w, 0, torch.tensor([0, 1]))
    # torch: "INDICES element is out of DATA bounds"
    _raises(tensorjit.IndexOutOfRange, r"index\[1\] = 5 is out of range for input dimension 1 "
            r"of size 3", tt.index_select, w, 1, torch.tensor([0, 5]))
    # torch: "Index to scalar can have only 1 value"
    _raises(tensorjit.SignatureError, r"0-D input takes one index, not 0", tt.index_select, s, 0,
            torch.tensor([], dtype=torch.int64))
    _raises(tensorjit.SignatureError, r"0-D input takes one index, not 2", tt.index_select,
            torch.ones([]), 0, torch.tensor([0, 0]).int())


def test_errors_index_out_of_range_name_index_position_dim_and_value():
    x = torch.randn(3, 4)
    for fn, args in ((tt.gather, (x, 1, torch.tensor([[0, 4]]))),
                     (tt.scatter, (x, 1, torch.tensor([[0, 4]]), torch.ones(1, 2))),
                     (tt.scatter_add, (x, 1, torch.tensor([[0, 4]]), torch.ones(1, 2))),
                     (tt.scatter_reduce, (x, 1, torch.tensor([[0, 4]]), torch.ones(1, 2), "amax"))):
        _raises(tensorjit.IndexOutOfRange, r"index\[0,1\] = 4 is out of range for input "
                r"dimension 1 of size 4", fn, *args)
    _raises(tensorjit.IndexOutOfRange, r"index\[0,0\] = -1 is out of range for input dimension "
            r"1 of size 4", tt.gather, x, 1, torch.tensor([[-1]]))
    _raises(tensorjit.IndexOutOfRange, r"index\[1\] = 4 is out of range for input dimension 1 "
            r"of size 4", tt.index_select, x, 1, torch.tensor([0, 4]))
    # test_errors_index_copy's three bad indices (tgt 5, -1, -6), for index_add
    a, c = torch.randn(3, 5), torch.zeros(3, 8)
    for bad in (5, -1, -6):
        _raises(tensorjit.IndexOutOfRange, rf"index\[0\] = {bad} is out of range for input "
                r"dimension 1 of size 5", tt.index_add, a, 1, torch.full((8,), bad), c)
    # nothing is written when an index is bad
    y = torch.zeros(3, 4)
    with pytest.raises(tensorjit.IndexOutOfRange):
        tt.scatter_add(y, 1, torch.tensor([[0, 1, 9]]), torch.ones(1, 3), out=y)
    assert torch.equal(y, torch.zeros(3, 4))


def test_errors_of_dims_shapes_dtypes_and_reduce_names():
    x = torch.randn(3, 4)
    z = torch.zeros(3, 2, dtype=torch.long)
    _raises(tensorjit.SignatureError, r"dim 2 is out of range for rank 2", tt.gather, x, 2, z)
    _raises(tensorjit.SignatureError, r"dim -3 is out of range for rank 2", tt.scatter_add, x,
            -3, z, torch.ones(3, 2))
    _raises(tensorjit.SignatureError, r"rank\(index\)=1 must equal rank\(input\)=2", tt.gather,
            x, 1, torch.tensor([0, 1]))
    _raises(tensorjit.SignatureError, r"index\.shape\[0\]=4 must not exceed input\.shape\[0\]=3",
            tt.gather, x, 1, torch.zeros(4, 2, dtype=torch.long))
    _raises(tensorjit.SignatureError, r"index\.shape\[0\]=4 must not exceed input\.shape\[0\]=3",
            tt.scatter, x, 1, torch.zeros(4, 2, dtype=torch.long), torch.ones(4, 2))
    _raises(tensorjit.SignatureError, r"src\.shape\[0\]=2 must not be smaller than "
            r"index\.shape\[0\]=3", tt.scatter, x, 1, z, torch.ones(2, 2))
    _raises(tensorjit.SignatureError, r"src element type f64 must equal input element type f32",
            tt.scatter, x, 1, z, torch.ones(3, 2, dtype=torch.float64))
    _raises(tensorjit.SignatureError, r"source element type f64 must equal input element type "
            r"f32", tt.index_add, x, 1, torch.tensor([1]), torch.ones(3, 1, dtype=torch.float64))
    _raises(tensorjit.SignatureError, r"source has shape \(3, 2\); it must be input's with dim 1 "
            r"as long as index: \(3, 1\)", tt.index_add, x, 1, torch.tensor([1]), torch.ones(3, 2))
    _raises(tensorjit.SignatureError, r"source has shape \(1, 1, 1\)", tt.index_add,
            torch.tensor(1.0), 0, torch.tensor([0]), torch.ones(1, 1, 1))
    _raises(tensorjit.SignatureError, r"index must be 1-D or 0-D", tt.index_select, x, 1,
            torch.tensor([[1]]))
    _raises(tensorjit.TypeMismatch, r"index has dtype f32; it must be an integer dtype",
            tt.index_select, x, 1, torch.tensor([1.0]))
    _raises(tensorjit.TypeMismatch, r"index has dtype f32", tt.gather, x, 1,
            torch.tensor([[1.0]]))
    _raises(tensorjit.SignatureError, r"scatter's reduce is 'add' or 'multiply', not 'sum'",
            tt.scatter, x, 1, z, torch.ones(3, 2), reduce="sum")
    for name in ("add", "max", "multiply"):
        _raises(tensorjit.SignatureError, rf"unknown reduce '{name}' \(sum, prod, mean, amax, "
                r"amin\)", tt.scatter_reduce, x, 1, z, torch.ones(3, 2), name)
    _raises(tensorjit.SignatureError, r"reduction mean is not defined for bool input",
            tt.scatter_reduce, torch.zeros(3, dtype=torch.bool), 0, torch.tensor([1]),
            torch.ones(1, dtype=torch.bool), "mean")


def test_int32_index_for_gather_and_scatters_is_an_extension():
    # documented extension: torch 1.13 refuses an int32 index for gather and
    # the scatters (int64 only); here it gives the int64 index's result
    x = make((3, 4), torch.float32, np.random.default_rng(60))
    idx = torch.tensor([[0, 3], [2, 2], [1, 0]])
    for got in run_both(tt.gather, x, 1, idx.int()):
        assert_bits(got, torch.gather(x, 1, idx))
    for got in run_both(tt.scatter_reduce, x, 1, idx.int(), torch.ones(3, 2), "sum"):
        assert_bits(got, torch.scatter_reduce(x, 1, idx, torch.ones(3, 2), "sum"))
