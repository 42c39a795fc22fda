"""PyTorch's own index_select and index_add tests, transcribed: tensorjit.torch held to them.

PyTorch tests these ops in test/test_torch.py (test_index_add,
test_index_add_all_dtypes, test_index_add_correctness with its broadcast
and bound checks, test_index_select; test_index_add_deterministic and the
empty-tensor cases of test_dim_function_empty are in
test_torch_scatter_gather_cases.py), in test/test_indexing.py (where newer
torch moved test_index_select: np.take as its reference) and in
test/test_sparse.py (the exhaustive index of _test_index_select, whose
dense side is torch.index_select). The errors are the checks of aten's
index_select and index_add (TensorAdvancedIndexing.cpp): "Index is supposed
to be a vector", "Expected dtype int32/int64 for index", "self and source
must have the same scalar type", "Number of indices should be equal to
source.size(dim)", "index out of range in self", a dim out of range, and
the out= checks. Debian's torch does not install its test tree, so the
cases were read there and are restated here in our own code; sizes are
scaled down (torch's 512 x 256 tensors only reach its vector paths).

Each case calls tensorjit.torch.index_select / index_add with torch tensors
and, where numpy has the dtype (not bfloat16), with numpy arrays, and holds
every result bit for bit to torch 1.13 and to a numpy restatement below:
`ref_index_select` is np.take of the elements' bits; `ref_index_add` adds
alpha * source's slices in index order, SPEC section 5's arithmetic (f16 and
bf16 computed in f32 and rounded back after every add, integers wrapping,
bool an or; alpha * source rounded to the dtype first).

The differences python/README.md documents, asserted as it says at the case:
- index_add's source must have torch's documented shape (input's, dim as
  long as index): torch 1.13 on the CPU broadcasts a smaller source (its
  test_index_add_correctness checks that), newer torch refuses it
  (pytorch/pytorch#92576), as we do, also beside an empty index;
- which NaN index_add returns where input's and source's are both NaN (or a
  NaN made by alpha * source meets a NaN): input's, by docs/reductions.md,
  where torch's fused multiply-add keeps source's; bf16 NaNs keep their
  payload, where torch 1.13 makes every bf16 NaN 0x7fc0. The NaNs are where
  torch's are; every other bit is torch's;
- alpha * source is rounded before it is added (an ulp apart from torch's
  fused multiply-add where the product is inexact: alpha 0.1);
- out= must have the result's shape and be contiguous, and may not overlap
  an input but index_add's out=input: torch resizes a wrong shape (with a
  deprecation warning) and writes strided outs;
- an index of any integer type (torch: int32 or int64), and lists, tuples
  and Python numbers read as numpy reads them (torch takes tensors only);
- errors: tensorjit's SignatureError / IndexOutOfRange / TypeMismatch naming
  the argument (input, index, source, out, alpha), the position and the
  value, where torch raises RuntimeError / IndexError / TypeError.
"""

import itertools
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorjit  # noqa: E402
import tensorjit.torch as tt  # noqa: E402

from torch_inputs import (ALL, FLOATS, INTS, TORCH2, assert_bits,  # noqa: E402
                          assert_like_torch, bits, make, noncontiguous, run_both)

MATH = INTS + FLOATS  # torch's get_all_math_dtypes on the CPU, less complex
_NP = {torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}


def _raises(cls, pattern, fn, *args, **kw):
    """fn raises cls matching pattern, with tensors and with numpy arrays."""
    for conv in (lambda a: a, lambda a: a.numpy() if isinstance(a, torch.Tensor) else a):
        with pytest.raises(cls, match=pattern):
            fn(*[conv(a) for a in args], **{k: conv(v) for k, v in kw.items()})


# ---- the references, in numpy ---------------------------------------------------

def ref_index_select(src, dim, idx):
    """np.take of the elements' bits (test_index_select's reference, exact
    for every dtype, bf16 too)."""
    return np.take(bits(src).numpy(), np.asarray(idx).astype(np.int64), axis=dim)


def _round(a32, dtype):
    """f32 values (numpy) rounded to dtype, nearest even, back in f32 (f64
    as it is)."""
    a32 = np.asarray(a32)
    if dtype == torch.float64:
        return a32
    if dtype == torch.bfloat16:  # (ascontiguousarray makes a 0-D array 1-D)
        return torch.from_numpy(np.ascontiguousarray(a32)).to(dtype).float().numpy() \
            .reshape(a32.shape)
    return a32.astype(_NP[dtype]).astype(np.float32)


def ref_index_add(x, dim, idx, src, alpha=1):
    """torch's test loop (dest2[idx[i]] += src[i] * alpha along dim), with
    SPEC 5's arithmetic: alpha * src rounded to the dtype, then each slice
    added in index order, f16/bf16 in f32 rounded back every step."""
    dtype = x.dtype
    idx = [int(i) for i in np.asarray(idx).reshape(-1)]
    out = torch.movedim(x, dim, 0) if x.dim() else x.reshape(1)
    s = torch.movedim(src, dim, 0) if src.dim() else src.reshape(1)
    if dtype == torch.bool:
        o, a = out.numpy().copy(), s.numpy() & bool(alpha)
        for k, i in enumerate(idx):
            o[i] = o[i] | a[k]
        result = torch.from_numpy(o)
    elif dtype.is_floating_point:
        wide = np.float64 if dtype == torch.float64 else np.float32
        o, a = out.to(torch.float64).numpy().astype(wide), s.to(torch.float64).numpy().astype(wide)
        if alpha != 1:  # f16 and bf16: alpha itself rounded to the dtype first, as torch's mul
            a = _round(a * _round(np.float32(alpha), dtype) if wide is np.float32 else
                       a * alpha, dtype)
        for k, i in enumerate(idx):
            o[i] = _round(o[i] + a[k], dtype)
        result = torch.from_numpy(o).to(dtype)
    else:
        o, a = out.numpy().copy(), s.numpy()
        if alpha != 1:
            a = np.multiply(a, np.array(int(alpha)).astype(a.dtype))  # wraps, -1 on uint8 too
        for k, i in enumerate(idx):
            o[i:i + 1] = o[i:i + 1] + a[k:k + 1]  # arrays wrap (numpy's scalars warn)
        result = torch.from_numpy(o)
    return torch.movedim(result, 0, dim).contiguous() if x.dim() else result.reshape(())


# ---- test_torch.py: test_index_add ----------------------------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_index_add(dtype):
    # dest, src and idx each contiguous or not; other sizes () and (4, 5);
    # int32 and int64 indices; a permutation of 3 into 3; without alpha and
    # with alpha=2 (exact: torch's fused multiply-add rounds alike)
    rng = np.random.default_rng(100)
    for dest_contig, src_contig, index_contig in itertools.product((True, False), repeat=3):
        for other in ((), (4, 5)):
            for idx_dtype in (torch.int32, torch.int64):
                dest = make((3,) + other, dtype, rng)
                dest = dest if dest_contig else noncontiguous(dest)
                src = make((3,) + other, dtype, rng)
                src = src if src_contig else noncontiguous(src)
                idx = torch.from_numpy(rng.permutation(3)).to(idx_dtype)
                idx = idx if index_contig else noncontiguous(idx)
                for alpha in (1, 2):
                    want = ref_index_add(dest, 0, idx, src, alpha)
                    assert_bits(dest.index_add(0, idx, src, alpha=alpha), want)
                    for got in run_both(tt.index_add, dest, 0, idx, src, alpha=alpha):
                        assert_bits(got, want)


# ---- test_torch.py: test_index_add_all_dtypes -------------------------------------

@pytest.mark.parametrize("dtype", MATH)
def test_index_add_all_dtypes(dtype):
    # zeros plus tensor at arange is tensor; with alpha=-1 it is -tensor
    # (uint8 wrapping, as torch's -tensor does)
    gen = torch.Generator().manual_seed(101)
    size = (5, 5)
    if dtype.is_floating_point:
        tensor = torch.rand(size, generator=gen).to(dtype)
    elif dtype == torch.uint8:
        tensor = torch.randint(0, 10, size, generator=gen).to(dtype)
    else:
        tensor = torch.randint(-5, 15, size, generator=gen).to(dtype)
    zeros = torch.zeros(size, dtype=dtype)
    for idx_dtype in (torch.int32, torch.int64):
        ar = torch.arange(0, size[0], dtype=idx_dtype)
        for got in run_both(tt.index_add, zeros, 0, ar, tensor):
            assert_bits(got, tensor)
        negated = (-tensor.to(torch.int64)).to(dtype) if dtype == torch.uint8 else -tensor
        assert_bits(zeros.index_add(0, ar, tensor, alpha=-1), negated)
        for got in run_both(tt.index_add, zeros, 0, ar, tensor, alpha=-1):
            assert_bits(got, negated)


def test_index_add_wraps_integers_and_ors_bools_as_torch():
    # duplicates past the type's range: torch adds in the type and wraps
    index = torch.tensor([0, 0, 1, 1])
    for dtype, start, step in ((torch.uint8, 200, 100), (torch.int8, 120, 5),
                               (torch.int16, 32767, 1), (torch.int32, 2**31 - 2, 3),
                               (torch.int64, 2**63 - 1, 1)):
        x = torch.tensor([start, -start if dtype != torch.uint8 else 1]).to(dtype)
        src = torch.full((4,), step).to(dtype)
        want = ref_index_add(x, 0, index, src)
        assert_bits(torch.index_add(x, 0, index, src), want)
        for got in run_both(tt.index_add, x, 0, index, src):
            assert_bits(got, want)
    x, src = torch.tensor([False, True, False]), torch.tensor([True, False, False, True])
    for got in run_both(tt.index_add, x, 0, torch.tensor([0, 1, 2, 2]), src):
        assert_bits(got, torch.tensor([True, True, True]))


# ---- test_torch.py: test_index_add_correctness ------------------------------------

def _correctness_case(dim, dtype, size_result, size_source, gen):
    tensor = torch.zeros(size_result, dtype=dtype)
    index = torch.randint(0, size_result[dim], (size_source[dim],), generator=gen)
    if dtype.is_floating_point:
        source = torch.rand(size_source, generator=gen).to(dtype)
    elif dtype == torch.uint8:
        source = torch.randint(0, 5, size_source, generator=gen).to(dtype)
    else:
        source = torch.randint(-2, 5, size_source, generator=gen).to(dtype)
    return tensor, index, source


@pytest.mark.parametrize("dtype", MATH)
def test_index_add_correctness(dtype):
    # torch's check that index_add's alpha=1 path (scatter_add's, for a long
    # index) agrees with its alpha=2. path halved; here both against the
    # loop, torch itself and the numpy arrays, on (2, 24, 16) and (5, 16, 16)
    # (torch: (2, 512, 256) and (5, 256, 256)), every dim counted from the end
    gen = torch.Generator().manual_seed(102)
    for dim in (-1, -2, -3):
        for size in ((2, 24, 16), (5, 16, 16)):
            tensor, index, source = _correctness_case(dim, dtype, size, size, gen)
            out = tensor.index_add(dim, index, source)
            ref_out = (tensor.index_add(dim, index, source, alpha=2.) / 2.).to(dtype)
            assert_like_torch(out, ref_out)  # torch's own assertion
            want = ref_index_add(tensor, dim % 3, index, source)
            assert_like_torch(want, out)
            for got in run_both(tt.index_add, tensor, dim, index, source):
                assert_bits(got, want)
            for got in run_both(tt.index_add, tensor, dim, index, source, alpha=2.):
                assert_bits((got / 2.).to(dtype), want)


def test_index_add_correctness_broadcast_sources_are_refused():
    # test_index_add_correctness "checks broadcast cases on CPU": torch 1.13
    # adds a source whose dims but dim are 1 (broadcast over input's). Its
    # documentation says they must match and newer torch refuses them
    # (pytorch/pytorch#92576): so do we, naming source's shape and torch's
    gen = torch.Generator().manual_seed(103)
    for dim in (-1, -2, -3):
        for size_result, size_source in (((2, 24, 16), (1, 24, 16)), ((2, 24, 24), (1, 24, 1)),
                                         ((2, 24, 16), (2, 1, 16))):
            tensor, index, source = _correctness_case(dim, torch.float32, size_result,
                                                      size_source, gen)
            want = list(size_result)
            want[dim] = size_source[dim]
            if tuple(want) == size_source:
                for got in run_both(tt.index_add, tensor, dim, index, source):
                    assert_bits(got, torch.index_add(tensor, dim, index, source))
                continue
            try:
                torch.index_add(tensor, dim, index, source)  # torch 1.13 takes it
            except RuntimeError:
                assert TORCH2  # torch 2 refuses it, as we do
            _raises(tensorjit.SignatureError,
                    rf"index_add's source has shape {tuple(size_source)}; it must be input's "
                    rf"with dim {dim % 3} as long as index: {tuple(want)}".replace("(", r"\(")
                    .replace(")", r"\)"), tt.index_add, tensor, dim, index, source)


def test_index_add_correctness_bounds():
    # torch: an index one longer than source's dim, and one past input's dim,
    # raise; here the first is the shape rule, the second names the position
    # of index, its value and the dimension (input (1, 64, 32); torch's 512 x 256)
    result, source = torch.zeros(1, 64, 32), torch.ones(1, 64, 32)
    for dim in (-1, -2, -3):
        long_index = torch.ones(33, dtype=torch.long)
        with pytest.raises(RuntimeError):
            result.clone().index_add_(dim, long_index, source)
        _raises(tensorjit.SignatureError, r"index_add's source has shape \(1, 64, 32\)",
                tt.index_add, result, dim, long_index, source)
        past = torch.full((32,), 33, dtype=torch.long)
        with pytest.raises((RuntimeError, IndexError)):
            result.clone().index_add_(dim, past, source)
        if dim == -1:
            _raises(tensorjit.IndexOutOfRange, r"index\[0\] = 33 is out of range for input "
                    r"dimension 2 of size 32", tt.index_add, result, dim, past, source)
        else:
            _raises(tensorjit.SignatureError, r"index_add's source has shape \(1, 64, 32\)",
                    tt.index_add, result, dim, past, source)


# ---- test_torch.py / test_indexing.py: test_index_select ----------------------------

@pytest.mark.parametrize("dtype", ALL)
def test_index_select_against_np_take(dtype):
    # src and idx contiguous or not, other sizes () and (4, 5), every dim;
    # int32 and int64 indices; the four 0-D / 1-element pairs; np.take of
    # the bits as reference
    rng = np.random.default_rng(104)
    num_src, num_out = 3, 5
    for src_contig, idx_contig in itertools.product((True, False), repeat=2):
        for other in ((), (4, 5)):
            for dim in range(len(other)):
                src = make(other[:dim] + (num_src,) + other[dim:], dtype, rng)
                src = src if src_contig else noncontiguous(src)
                idx = torch.from_numpy(rng.integers(0, num_src, num_out))
                idx = idx if idx_contig else noncontiguous(idx)
                want = ref_index_select(src, dim, idx)
                assert_bits(bits(torch.index_select(src, dim, idx)), torch.from_numpy(want))
                for got in run_both(tt.index_select, src, dim, idx):
                    assert_bits(bits(got), torch.from_numpy(want))
    for idx_type in (torch.int32, torch.int64):
        src = make((3, num_src, 2), dtype, rng)
        idx = torch.from_numpy(rng.integers(0, num_src, num_out)).to(idx_type)
        for got in run_both(tt.index_select, src, 1, idx):
            assert_bits(bits(got), torch.from_numpy(ref_index_select(src, 1, idx)))
    for size_s, size_i in itertools.product([(), (1,)], repeat=2):
        source, idx = make(size_s, dtype, rng), torch.zeros(size_i, dtype=torch.int64)
        want = torch.index_select(source, 0, idx)
        for got in run_both(tt.index_select, source, 0, idx):
            assert_bits(got, want)
            assert bits(got).item() == bits(source).item()


def test_index_select_exhaustive_index():
    # test_sparse's _test_index_select_exhaustive_index, its dense side: every
    # index of length sizes[d] into dim d, written negative there and shifted
    # by sizes[d] (dense index_select takes no negative index: #76347)
    rng = np.random.default_rng(105)
    sizes = (3, 4, 2)
    t = make(sizes, torch.float32, rng)
    for d in range(3):
        for idx in itertools.product(range(-sizes[d], 0), repeat=sizes[d]):
            t_idx = torch.tensor(idx) + sizes[d]
            want = torch.from_numpy(ref_index_select(t, d, t_idx))
            assert_bits(bits(tt.index_select(t, d, t_idx)), want)
            assert_bits(bits(tt.index_select(t.numpy(), d, t_idx.numpy())), want)
        with pytest.raises(tensorjit.IndexOutOfRange, match=rf"index\[0\] = -1 is out of range "
                           rf"for input dimension {d} of size {sizes[d]}"):
            tt.index_select(t, d, torch.tensor(idx))  # the last, all -1: unshifted


def test_index_select_copies_every_bit():
    # NaNs with payloads and signs, -0, infinities, subnormals, the extremes
    # of each integer type: a selection moves bits, it computes nothing
    for dtype in FLOATS:
        vals = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40,
                             -1.5]).to(dtype)
        payload = (bits(torch.tensor([float("nan")]).to(dtype)) | 5).view(dtype)
        vals = torch.cat([vals, payload, -payload])
        idx = torch.arange(len(vals)).flip(0)
        want = torch.from_numpy(ref_index_select(vals, 0, idx))
        assert_bits(bits(torch.index_select(vals, 0, idx)), want)
        for got in run_both(tt.index_select, vals, 0, idx):
            assert_bits(bits(got), want)
    for dtype in INTS:
        info = torch.iinfo(dtype)
        vals = torch.tensor([info.min, info.max, 0, 1], dtype=dtype)
        for got in run_both(tt.index_select, vals, 0, torch.tensor([1, 0, 1, 3])):
            assert_bits(got, vals[[1, 0, 1, 3]])


# ---- non-contiguous, expanded, reversed and byte-swapped inputs --------------------

def test_strided_expanded_and_foreign_layouts():
    rng = np.random.default_rng(106)
    x = make((4, 6), torch.float32, rng)
    idx = torch.tensor([3, 0, 3])
    for data in (x.t(), x[:, ::2], x[:1].expand(5, 6), x[1:3]):
        for dim in (0, 1):
            index = idx % data.shape[dim]
            for index in (index, index[:1].expand(4), noncontiguous(index)):
                want = torch.index_select(data, dim, index)
                for got in run_both(tt.index_select, data, dim, index):
                    assert_bits(got, want)
                shape = list(data.shape)
                shape[dim] = len(index)
                source = make(tuple(shape), torch.float32, rng)
                for src in (source, source.t().contiguous().t(), source[:1].expand(shape)):
                    want = ref_index_add(data, dim, index, src)
                    assert_bits(torch.index_add(data, dim, index, src), want)
                    for got in run_both(tt.index_add, data, dim, index, src):
                        assert_bits(got, want)
    # numpy's own layouts: reversed (negative strides), Fortran order, byte-swapped
    a = x.numpy()
    for data in (a[::-1, ::-2], np.asfortranarray(a), a.astype(">f4")):
        index = np.array([2, 0, 2])[::-1]
        want = np.take(np.asarray(data, np.float32), index, axis=1)
        got = tt.index_select(data, 1, index)
        assert isinstance(got, np.ndarray) and np.array_equal(got, want)
        src = np.arange(data.shape[0] * 3, dtype=data.dtype).reshape(data.shape[0], 3)
        want = np.asarray(data, np.float32).copy()
        np.add.at(want, (slice(None), index), np.asarray(src, np.float32))
        got = tt.index_add(data, 1, index, src)
        assert np.array_equal(np.asarray(got, np.float32), want)


# ---- scalars and 0-D tensors ----------------------------------------------------------

def test_0d_tensors_are_vectors_of_one_as_in_torch():
    rng = np.random.default_rng(107)
    x, scalar = make((3, 4), torch.float32, rng), make((), torch.float32, rng)
    for index in (torch.tensor(2), torch.tensor([2])):
        for dim in (0, 1, -1):
            want = torch.index_select(x, dim, index)
            assert want.shape[dim] == 1  # torch keeps the dim for a 0-D index
            for got in run_both(tt.index_select, x, dim, index):
                assert_bits(got, want)
        want = torch.index_add(x, 1, index, torch.ones(3, 1))
        for got in run_both(tt.index_add, x, 1, index, torch.ones(3, 1)):
            assert_bits(got, want)
    for index, source in ((torch.tensor(0), torch.tensor(3.0)),
                          (torch.tensor([0]), torch.tensor(3.0)),
                          (torch.tensor([0, 0]), torch.tensor([3.0, 0.25]))):
        try:
            want = torch.index_add(scalar, 0, index, source, alpha=2)
        except RuntimeError:  # torch 2 refuses two updates of a 0-D input; 1.13 adds both
            assert TORCH2
            want = ref_index_add(scalar, 0, index, source, 2)
        assert want.shape == ()
        for got in run_both(tt.index_add, scalar, -1, index, source, alpha=2):
            assert_bits(got, want)
    # a 1-D input takes a 0-D source beside a 0-D index (torch 1.13 and some
    # 2.x do; torch 2.11 refuses it)
    want = torch.tensor([0.0, 0.0, 5.0])
    try:
        assert_bits(torch.index_add(torch.zeros(3), 0, torch.tensor(2), torch.tensor(5.0)), want)
    except RuntimeError:
        assert TORCH2
    for got in run_both(tt.index_add, torch.zeros(3), 0, torch.tensor(2), torch.tensor(5.0)):
        assert_bits(got, want)
    # what torch refuses of them, refused: two indices into a 0-D input, a 0-D
    # source of a 2-D input, a 2-D source of a 0-D input
    _raises(tensorjit.SignatureError, r"index_select of a 0-D input takes one index, not 2",
            tt.index_select, scalar, 0, torch.tensor([0, 0]))
    _raises(tensorjit.IndexOutOfRange, r"index\[0\] = 1 is out of range for input dimension 0 "
            r"of size 1", tt.index_select, scalar, 0, torch.tensor([1]))
    _raises(tensorjit.IndexOutOfRange, r"index\[0\] = 1 is out of range for input dimension 0 "
            r"of size 1", tt.index_add, scalar, 0, torch.tensor([1]), torch.tensor([1.0]))
    _raises(tensorjit.SignatureError, r"index_add's source has shape \(\); it must be input's "
            r"with dim 0 as long as index: \(1, 4\)", tt.index_add, x, 0, torch.tensor([1]),
            torch.tensor(5.0))
    _raises(tensorjit.SignatureError, r"index_add's source has shape \(1, 1\)", tt.index_add,
            scalar, 0, torch.tensor([0]), torch.ones(1, 1))
    _raises(tensorjit.SignatureError, r"dim 1 is out of range for rank 0", tt.index_select,
            scalar, 1, torch.tensor([0]))


def test_python_numbers_as_operands_are_numpy_0d_arrays():
    # Defect fixed: a Python int index (read as numpy reads it, as lists are)
    # dropped index_select's dim ((4,) for torch's (1, 4) of a 0-D index), and
    # of a 0-D input, or a Python number as input, index_select and index_add
    # raised AttributeError ('int' object has no attribute 'reshape') or
    # recursed without end; index_add of a 2-D input refused it with the
    # library's words ('rank(index)=0 (a scalar) must be at least 1')
    rng = np.random.default_rng(108)
    x = make((3, 4), torch.float32, rng)
    for index in (1, np.int64(1), torch.tensor(1)):
        for dim in (0, 1):
            want = torch.index_select(x, dim, torch.tensor(1))
            assert_bits(tt.index_select(x, dim, index), want)
            assert_bits(torch.from_numpy(tt.index_select(x.numpy(), dim, index)), want)
        want = torch.index_add(x, 0, torch.tensor(1), torch.ones(1, 4))
        assert_bits(tt.index_add(x, 0, index, torch.ones(1, 4)), want)
        assert_bits(tt.index_add(x, 1, index, torch.ones(3, 1)),
                    torch.index_add(x, 1, torch.tensor(1), torch.ones(3, 1)))
    scalar = torch.tensor(2.5)
    assert_bits(tt.index_select(scalar, 0, 0), scalar)
    assert_bits(tt.index_add(scalar, 0, 0, torch.tensor(1.0)), torch.tensor(3.5))
    assert np.asarray(tt.index_select(2.5, 0, [0])).shape == ()  # numpy's 0-D array
    assert float(tt.index_add(2.5, 0, 0, 1.0)) == 3.5  # all f64, as numpy reads them
    # a Python float source is numpy's f64: of an f64 input it adds, of f32 it is refused
    assert_bits(tt.index_add(torch.zeros(3, dtype=torch.float64), 0, 2, 5.0),
                torch.tensor([0.0, 0.0, 5.0], dtype=torch.float64))
    _raises(tensorjit.SignatureError, r"source element type f64 must equal input element type "
            r"f32", tt.index_add, torch.zeros(3), 0, 2, 5.0)
    # None: refused, named (index_select(None, ...) recursed without end)
    for fn, args, name in ((tt.index_select, (None, 0, torch.tensor([0])), "index_select's input"),
                           (tt.index_select, (x, 0, None), "index_select's index"),
                           (tt.index_add, (None, 0, torch.tensor([0]), torch.ones(1)),
                            "index_add's input"),
                           (tt.index_add, (x, 0, None, torch.ones(1, 4)), "index_add's index"),
                           (tt.index_add, (x, 0, torch.tensor([0]), None), "index_add's source")):
        with pytest.raises(tensorjit.TypeMismatch, match=rf"{name} must be a tensor or an array, "
                           r"not None"):
            fn(*args)


def test_an_index_that_is_no_vector_is_named_with_its_shape():
    # torch: "index_select(): Index is supposed to be a vector" and index_add's
    # "... but got dim: 2 with type: Long and size: [1, 2]"; index_select's
    # message did not say the shape it was given
    x = torch.zeros(3, 4)
    for shape in ((1, 2), (0, 2), (1, 1, 1)):
        index = torch.zeros(shape, dtype=torch.long)
        with pytest.raises(IndexError, match="Index is supposed to be a vector"):
            torch.index_select(x, 0, index)
        pattern = rf"must be 1-D or 0-D, not of shape {shape}"
        pattern = pattern.replace("(", r"\(").replace(")", r"\)")
        _raises(tensorjit.SignatureError, "index_select's index " + pattern, tt.index_select, x,
                0, index)
        _raises(tensorjit.SignatureError, "index_add's index " + pattern, tt.index_add, x, 0,
                index, torch.ones(max(1, index.numel()), 4))


# ---- index dtypes ------------------------------------------------------------------------

def test_index_dtypes_torch_takes_refuses_and_the_extension():
    rng = np.random.default_rng(109)
    x = make((5, 4), torch.float32, rng)
    rows = torch.tensor([4, 0, 4])
    for dt in (torch.int32, torch.int64):  # torch's own
        for got in run_both(tt.index_select, x, 0, rows.to(dt)):
            assert_bits(got, torch.index_select(x, 0, rows.to(dt)))
        for got in run_both(tt.index_add, x, 0, rows.to(dt), torch.ones(3, 4)):
            assert_bits(got, torch.index_add(x, 0, rows.to(dt), torch.ones(3, 4)))
    for dt in (torch.uint8, torch.int8, torch.int16):  # an extension: torch refuses them
        with pytest.raises(RuntimeError, match=r"Expected dtype int32 or int64 for index"):
            torch.index_select(x, 0, rows.to(dt))
        with pytest.raises(RuntimeError, match=r"Expected dtype int32/int64 for index"):
            torch.index_add(x, 0, rows.to(dt), torch.ones(3, 4))
        for dim, src in ((0, torch.ones(3, 4)), (1, torch.ones(5, 3))):
            index = rows.to(dt) % x.shape[dim]
            for got in run_both(tt.index_select, x, dim, index):
                assert_bits(got, torch.index_select(x, dim, index.long()))
            for got in run_both(tt.index_add, x, dim, index, src):
                assert_bits(got, torch.index_add(x, dim, index.long(), src))
    for dt in (np.uint16, np.uint32, np.uint64):  # numpy's unsigned, on every dim
        for dim, src in ((0, np.ones((3, 4), np.float32)), (1, np.ones((5, 3), np.float32))):
            index = (rows.numpy() % x.shape[dim]).astype(dt)
            assert_bits(torch.from_numpy(tt.index_select(x.numpy(), dim, index)),
                        torch.index_select(x, dim, torch.from_numpy(index.astype(np.int64))))
            assert_bits(torch.from_numpy(tt.index_add(x.numpy(), dim, index, src)),
                        torch.index_add(x, dim, torch.from_numpy(index.astype(np.int64)),
                                        torch.from_numpy(src)))
    # Defect fixed: a uint64 index on dim 0 was refused in the library's words
    # ('index has dtype u64; ScatterNDUpdate takes i32, i64 index'), where other
    # dims took it; one beyond int64 is out of range, named with its value
    big = np.array([3, 2**63 + 5], np.uint64)
    for dim, src in ((0, np.ones((2, 4), np.float32)), (1, np.ones((5, 2), np.float32))):
        with pytest.raises(tensorjit.IndexOutOfRange, match=rf"index\[1\] = {2**63 + 5} is out "
                           rf"of range for input dimension {dim} of size {x.shape[dim]}"):
            tt.index_add(x.numpy(), dim, big, src)
        with pytest.raises(tensorjit.IndexOutOfRange, match=rf"index\[1\] = {2**63 + 5} is out "
                           rf"of range for input dimension {dim} of size {x.shape[dim]}"):
            tt.index_select(x.numpy(), dim, big)
    for dt, name in ((torch.float32, "f32"), (torch.bool, "bool"), (torch.float64, "f64")):
        for index in (rows.to(dt), torch.tensor([], dtype=dt)):  # empty too, as torch
            with pytest.raises(RuntimeError, match=r"Expected dtype int32"):
                torch.index_select(x, 0, index)
            _raises(tensorjit.TypeMismatch, rf"index has dtype {name}; it must be an integer "
                    r"dtype", tt.index_select, x, 0, index)
            _raises(tensorjit.TypeMismatch, rf"index has dtype {name}; it must be an integer "
                    r"dtype", tt.index_add, x, 0, index, torch.ones(len(index), 4))


# ---- alpha -------------------------------------------------------------------------------

def test_alpha_as_torch_reads_it():
    rng = np.random.default_rng(110)
    x, index, src = make((3, 4), torch.float32, rng), torch.tensor([2, 0, 2]), \
        make((3, 4), torch.float32, rng)
    # Defect fixed: torch's Scalar takes a 0-D tensor (of any dtype, read as
    # its value); it was refused ('alpha must be a real number, not Tensor')
    for alpha in (torch.tensor(2.0), torch.tensor(-2), torch.tensor(True),
                  torch.tensor(0.5, dtype=torch.float64), torch.tensor(False)):
        want = torch.index_add(x, 0, index, src, alpha=alpha)
        assert_bits(want, ref_index_add(x, 0, index, src, alpha.item()))
        for got in run_both(tt.index_add, x, 0, index, src, alpha=alpha):
            assert_bits(got, want)
    ints = torch.tensor([[1, 2], [3, 4]], dtype=torch.uint8)
    want = torch.index_add(ints, 1, torch.tensor([1]), ints[:, :1], alpha=torch.tensor(2.7))
    assert_bits(tt.index_add(ints, 1, torch.tensor([1]), ints[:, :1], alpha=torch.tensor(2.7)),
                want)  # truncated to 2, as a float alpha of an integer input
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.index_add(ints, 1, torch.tensor([1]), ints[:, :1], alpha=torch.tensor(300))
    with pytest.raises(tensorjit.SignatureError, match=r"alpha=300 does not fit input's dtype "
                       r"uint8"):
        tt.index_add(ints, 1, torch.tensor([1]), ints[:, :1], alpha=torch.tensor(300))
    # a 0-D numpy array too (torch refuses it: no Scalar), and what is no
    # real number, refused naming alpha and its value: torch's TypeError for
    # a 1-D tensor, a string, None; its RuntimeError for a complex
    assert_bits(tt.index_add(x, 0, index, src, alpha=np.array(2.0)),
                torch.index_add(x, 0, index, src, alpha=2.0))
    for alpha, shown in ((torch.tensor([2.0]), r"(Tensor \(tensor\(\[2\.\]\)\)|ndarray "
                                               r"\(array\(\[2\.\], dtype=float32\)\))"),
                         ("2", r"str \('2'\)"), (None, r"NoneType \(None\)"),
                         (1j, r"complex \(1j\)")):
        with pytest.raises((TypeError, RuntimeError)):
            torch.index_add(x, 0, index, src, alpha=alpha)
        _raises(tensorjit.TypeMismatch, rf"index_add's alpha must be a real number, not {shown}",
                tt.index_add, x, 0, index, src, alpha=alpha)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32,
                                   torch.float64])
def test_an_inexact_alpha_is_rounded_before_it_is_added(dtype):
    # documented difference: alpha * source is rounded to the dtype, then
    # added (for f16 and bf16 alpha too, as torch's own mul by a scalar); torch
    # fuses the two (one rounding): bit for bit to the rounded reference, close
    # to torch
    rng = np.random.default_rng(111)
    x, src = make((6, 5), dtype, rng), make((4, 5), dtype, rng)
    index = torch.tensor([5, 1, 5, 0])
    for alpha in (0.1, -1.7, 3.3):
        want = ref_index_add(x, 0, index, src, alpha)
        for got in run_both(tt.index_add, x, 0, index, src, alpha=alpha):
            assert_bits(got, want)
        torch.testing.assert_close(want, torch.index_add(x, 0, index, src, alpha=alpha))


# ---- the errors of aten's checks -----------------------------------------------------

def test_errors_name_the_argument_the_position_and_the_value():
    x = torch.zeros(3, 4)
    for fn, args in ((tt.index_select, (torch.tensor([0]),)),
                     (tt.index_add, (torch.tensor([0]), torch.ones(3, 1)))):
        for dim in (2, -3):  # torch: "Dimension out of range (... [-2, 1], but got 2)"
            with pytest.raises(IndexError, match="Dimension out of range"):
                torch.index_select(x, dim, torch.tensor([0]))
            _raises(tensorjit.SignatureError, rf"dim {dim} is out of range for rank 2", fn, x,
                    dim, *args)
        for dim, name in ((1.0, r"float \(1\.0\)"), ("a", r"str \('a'\)")):
            _raises(tensorjit.TypeMismatch, rf"dim must be an integer, not {name}", fn, x, dim,
                    *args)
        _raises(tensorjit.TypeMismatch, r"dim must be an integer, not bool", fn, x, True, *args)
    # torch: "index out of range in self" (and for a 0-D index "INDICES element
    # is out of DATA bounds, id=4 axis_dim=4"); here index's own position
    for dim, index in ((0, [0, 3]), (0, [-1]), (1, [3, 4, 0]), (1, 4), (-1, [1, -5])):
        bad = next(k for k, v in enumerate(np.atleast_1d(index)) if not 0 <= v < x.shape[dim])
        value = np.atleast_1d(index)[bad]
        pattern = rf"index\[{bad}\] = {value} is out of range for input dimension {dim % 2} " \
                  rf"of size {x.shape[dim]}"
        index = torch.tensor(index)
        with pytest.raises((IndexError, RuntimeError)):
            torch.index_select(x, dim, index)
        _raises(tensorjit.IndexOutOfRange, pattern, tt.index_select, x, dim, index)
        shape = [3, 4]
        shape[dim] = max(1, index.numel())
        # torch 1.13: IndexError "index out of range in self"; torch 2:
        # RuntimeError "index 3 is out of bounds for dimension 0 with size 3"
        with pytest.raises((IndexError, RuntimeError), match="out of (range|bounds)"):
            torch.index_add(x, dim, index, torch.ones(shape))
        _raises(tensorjit.IndexOutOfRange, pattern, tt.index_add, x, dim, index, torch.ones(shape))
    for index in (torch.tensor([-1], dtype=torch.int32),
                  torch.tensor([2**31 - 1], dtype=torch.int32)):
        _raises(tensorjit.IndexOutOfRange, rf"index\[0\] = {index.item()} is out of range for "
                r"input dimension 0 of size 3", tt.index_select, x, 0, index)
    # torch: "index_select(): self indexing axis dim should be positive", an
    # empty dim with an index
    _raises(tensorjit.IndexOutOfRange, r"index\[0\] = 0 is out of range for input dimension 0 "
            r"of size 0", tt.index_select, torch.zeros(0, 3), 0, torch.tensor([0]))
    # index_add's own: "self (Float) and source (Double) must have the same
    # scalar type", "Number of indices (2) should be equal to source.size(dim):
    # (3)", and source's other dims (torch: a broadcast error)
    index = torch.tensor([2, 0])
    for dtype, name in ((torch.float64, "f64"), (torch.int64, "i64"), (torch.bool, "bool"),
                        (torch.float16, "f16")):
        with pytest.raises(RuntimeError, match="must have the same scalar type"):
            torch.index_add(x, 0, index, torch.ones(2, 4, dtype=dtype))
        _raises(tensorjit.SignatureError, rf"source element type {name} must equal input "
                r"element type f32", tt.index_add, x, 0, index, torch.ones(2, 4, dtype=dtype))
    for dim, shape, want in ((0, (3, 4), (2, 4)), (0, (2, 5), (2, 4)), (1, (3, 3), (3, 2)),
                             (1, (2, 2), (3, 2)), (0, (2, 4, 1), (2, 4)), (0, (2,), (2, 4))):
        pattern = rf"index_add's source has shape {shape}; it must be input's with dim {dim} " \
                  rf"as long as index: {want}"
        _raises(tensorjit.SignatureError, pattern.replace("(", r"\(").replace(")", r"\)"),
                tt.index_add, x, dim, index, torch.ones(shape))
    # nothing written when a call raises
    y = torch.zeros(3, 4)
    for bad in ((torch.tensor([0, 1, 9]), torch.ones(3, 4)),
                (torch.tensor([0, 1]), torch.ones(2, 5))):
        with pytest.raises(tensorjit.Error):
            tt.index_add(y, 0, *bad, out=y)
        with pytest.raises(tensorjit.Error):
            tt.index_add(y.numpy(), 0, bad[0].numpy(), bad[1].numpy(), out=y.numpy())
    assert torch.equal(y, torch.zeros(3, 4))


# ---- out= ------------------------------------------------------------------------------

def test_out_as_torch_and_the_documented_rules():
    rng = np.random.default_rng(112)
    x, index = make((3, 4), torch.float32, rng), torch.tensor([2, 0, 2])
    src = make((3, 4), torch.float32, rng)
    want_s, want_a = torch.index_select(x, 0, index), torch.index_add(x, 0, index, src)
    for conv in (lambda t: t, lambda t: t.numpy()):
        out = conv(torch.full((3, 4), -7.0))
        assert tt.index_select(conv(x), 0, conv(index), out=out) is out
        assert_bits(torch.as_tensor(out), want_s)
        out = conv(torch.full((3, 4), -7.0))
        assert tt.index_add(conv(x), 0, conv(index), conv(src), out=out) is out
        assert_bits(torch.as_tensor(out), want_a)
        y = conv(x.clone())  # out=input: torch's index_add_, in place
        assert tt.index_add(y, 1, conv(torch.tensor([3])), conv(src[:, :1]), out=y) is y
        assert_bits(torch.as_tensor(y), torch.index_add(x, 1, torch.tensor([3]), src[:, :1]))
    scalar = torch.tensor(1.5)
    out = torch.empty(())
    assert tt.index_select(scalar, 0, torch.tensor([0]), out=out) is out and out.item() == 1.5
    assert tt.index_add(scalar, 0, torch.tensor(0), torch.tensor(2.0), out=out) is out
    assert out.item() == 3.5
    # torch: "self and result must have the same scalar type" / "Expected out
    # tensor to have dtype float, but got double instead"
    _raises(tensorjit.SignatureError, r"out has dtype f64; the output's is f32", tt.index_select,
            x, 0, index, out=torch.empty(3, 4, dtype=torch.float64))
    _raises(tensorjit.SignatureError, r"out has dtype f64; the output's is f32", tt.index_add,
            x, 0, index, src, out=torch.empty(3, 4, dtype=torch.float64))
    # documented difference (README, Arrays): out must have the result's shape
    # and be contiguous, and may not overlap an input (index_add's out=input
    # aside); torch resizes a wrong shape (deprecated, with a warning), writes
    # a strided out, and reads an input it is writing
    for shape in ((2, 4), (0,)):
        _raises(tensorjit.SignatureError, re.escape(f"out has shape {shape}; the output's is "
                                                    f"(3, 4)"), tt.index_select, x, 0, index,
                out=torch.empty(shape))
        _raises(tensorjit.SignatureError, r"out has shape", tt.index_add, x, 0, index, src,
                out=torch.empty(shape))
    strided = torch.empty(4, 3).t()
    assert_bits(torch.index_select(x, 0, index, out=strided), want_s)
    # (numpy's own words for a numpy out: "a C-contiguous, aligned, writeable array")
    for fn, args in ((tt.index_select, (x, 0, index)), (tt.index_add, (x, 0, index, src))):
        _raises(tensorjit.SignatureError, r"out must be (contiguous|a C-contiguous)", fn, *args,
                out=strided)
    big = torch.zeros(4, 4)
    _raises(tensorjit.SignatureError, r"out overlaps input", tt.index_select, big, 0, index,
            out=big[1:])
    _raises(tensorjit.SignatureError, r"out overlaps source", tt.index_add, x, 0, index, src,
            out=src)
    untouched = torch.full((3, 4), -7.0)
    with pytest.raises(tensorjit.IndexOutOfRange):
        tt.index_select(x, 0, torch.tensor([0, 5, 1]), out=untouched)
    assert torch.equal(untouched, torch.full((3, 4), -7.0))


# ---- empty indices --------------------------------------------------------------------

def test_empty_index():
    rng = np.random.default_rng(113)
    x = make((3, 4, 2), torch.float32, rng)
    empty = torch.tensor([], dtype=torch.long)
    for dim in range(3):
        want = torch.index_select(x, dim, empty)
        assert want.shape[dim] == 0
        for got in run_both(tt.index_select, x, dim, empty):
            assert_bits(got, want)
        shape = list(x.shape)
        shape[dim] = 0
        for got in run_both(tt.index_add, x, dim, empty, torch.empty(shape)):
            assert_bits(got, x)
        y = x.clone()
        assert tt.index_add(y, dim, empty, torch.empty(shape), out=y) is y
        assert_bits(y, x)
    for dt in (torch.int32, torch.int16, torch.uint8):  # empty of any integer type
        for got in run_both(tt.index_select, x, 1, empty.to(dt)):
            assert got.shape == (3, 0, 2)
    for got in run_both(tt.index_select, torch.zeros(0, 3), 1, torch.tensor([2, 0])):
        assert got.shape == (0, 2)
    # what torch still checks beside an empty index: dim's range, source's dtype
    _raises(tensorjit.SignatureError, r"dim 3 is out of range for rank 3", tt.index_add, x, 3,
            empty, torch.empty(0, 4, 2))
    _raises(tensorjit.SignatureError, r"source element type f64 must equal input element type "
            r"f32", tt.index_add, x, 0, empty, torch.empty(0, 4, 2, dtype=torch.float64))
    # documented difference: source's shape is held to the rule beside an empty
    # index too (torch 1.13 adds nothing and checks no other dim; newer torch refuses)
    if not TORCH2:  # torch 2 refuses it, as we do
        assert_bits(torch.index_add(x, 0, empty, torch.empty(0, 5)), x)
    _raises(tensorjit.SignatureError, r"source has shape \(0, 5\); it must be input's with dim "
            r"0 as long as index: \(0, 4, 2\)", tt.index_add, x, 0, empty, torch.empty(0, 5))


# ---- numpy arrays and lists as inputs -----------------------------------------------------

def test_numpy_arrays_lists_and_mixed_kinds():
    rng = np.random.default_rng(114)
    x, src = make((3, 4), torch.float32, rng), make((2, 4), torch.float32, rng)
    index = torch.tensor([2, 0])
    want_s, want_a = torch.index_select(x, 0, index), torch.index_add(x, 0, index, src)
    # the result is of input's kind, whatever index's and source's are
    for a, i, s in itertools.product((x, x.numpy()), (index, index.numpy(), [2, 0], (2, 0)),
                                     (src, src.numpy())):
        got = tt.index_select(a, 0, i)
        assert type(got) is type(a)
        assert_bits(torch.as_tensor(got), want_s)
        got = tt.index_add(a, 0, i, s)
        assert type(got) is type(a)
        assert_bits(torch.as_tensor(got), want_a)
    # lists as numpy reads them: a float list is f64, named as a dtype mismatch
    assert_bits(torch.from_numpy(tt.index_add(x.numpy().astype(np.float64), 0, [2, 0],
                                              src.tolist())),
                torch.index_add(x.double(), 0, index, src.double()))
    _raises(tensorjit.SignatureError, r"source element type f64 must equal input element type "
            r"f32", tt.index_add, x, 0, [2, 0], src.tolist())
    _raises(tensorjit.TypeMismatch, r"index has dtype f64", tt.index_select, x, 0, [2.0, 0.0])


# ---- NaN bits ----------------------------------------------------------------------------

_QUIET = {torch.float16: 1 << 9, torch.bfloat16: 1 << 6, torch.float32: 1 << 22,
          torch.float64: 1 << 51}


@pytest.mark.parametrize("dtype", FLOATS)
def test_index_add_nans_where_torch_has_them(dtype):
    # documented difference: of two NaNs (input's and source's, or one made
    # by inf * 0 with alpha=0) index_add returns input's, by docs/reductions.md,
    # where torch's fused multiply-add keeps source's; bf16 NaNs keep their
    # payload, where torch 1.13 makes them 0x7fc0. NaNs are where torch's are,
    # every other bit is torch's
    nan = bits(torch.tensor([float("nan")]).to(dtype))
    payload = (nan | 3).view(dtype)
    negative = (bits(-torch.tensor([float("nan")]).to(dtype)) | 1).view(dtype)
    vals = torch.cat([torch.tensor([0.0, -0.0, float("inf"), -float("inf"), 1.0, -2.5]).to(dtype),
                      payload, negative])
    a, b = torch.meshgrid(torch.arange(len(vals)), torch.arange(len(vals)), indexing="ij")
    x, src = vals[a.flatten()], vals[b.flatten()]  # every pair, once
    index = torch.arange(len(x))
    for alpha in (1, -1, 0):
        theirs = torch.index_add(x, 0, index, src, alpha=alpha)
        for got in run_both(tt.index_add, x, 0, index, src, alpha=alpha):
            assert torch.equal(got.isnan(), theirs.isnan()), alpha
            same = ~theirs.isnan()
            assert torch.equal(bits(got[same]), bits(theirs[same])), alpha
            both = x.isnan() & (src.isnan() | (src.isinf() if alpha == 0 else src.isnan()))
            if dtype != torch.float16:  # (f16: the quiet NaN of its sign, reductions.md)
                quiet = bits(x[both]) | _QUIET[dtype]
                assert torch.equal(bits(got[both]), quiet), alpha  # input's, made quiet
