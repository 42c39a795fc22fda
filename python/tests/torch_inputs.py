"""What the trials of PyTorch's own tests share (test_torch_index_cases,
test_torch_scatter_gather_cases): torch's dtypes, inputs made as torch's
make_tensor makes them, and results compared bit for bit, on tensors and,
where numpy has the dtype, on numpy arrays."""

import re

import numpy as np
import torch

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
ALL = FLOATS + INTS + (torch.bool,)
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


# ---- making inputs (torch's make_tensor: floats and ints in [-9, 9]) ----------

def make(shape, dtype, rng, low=-9, high=9):
    if dtype == torch.bool:
        return torch.from_numpy(rng.integers(0, 2, shape).astype(bool))
    if dtype.is_floating_point:
        return torch.from_numpy(rng.uniform(low, high, shape)).to(dtype)
    low = max(low, 0) if dtype == torch.uint8 else low
    return torch.from_numpy(rng.integers(low, high + 1, shape)).to(dtype)


def noncontiguous(t):
    """t's values in a strided view (every other element of a wider tensor),
    as torch's make_tensor(noncontiguous=True) and noncontiguous_like."""
    if t.dim() == 0:
        return t
    view = torch.empty(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype)[..., ::2]
    view.copy_(t)
    assert not view.is_contiguous() or t.numel() <= 1
    return view


# ---- comparing bits -------------------------------------------------------------

def bits(t):
    t = (torch.from_numpy(np.ascontiguousarray(t)) if isinstance(t, np.ndarray)
         else torch.as_tensor(t)).contiguous()
    return t.to(torch.uint8) if t.dtype == torch.bool else t.view(_BITS[t.element_size()])


def assert_bits(got, want):
    got = torch.from_numpy(np.ascontiguousarray(got)) if isinstance(got, np.ndarray) else got
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape), \
        (got.dtype, want.dtype, tuple(got.shape), tuple(want.shape))
    if not torch.equal(bits(got), bits(want)):
        bad = (bits(got) != bits(want)).nonzero()[:4].tolist()
        raise AssertionError(f"bits differ at {bad}: {got.flatten()[:8]} vs {want.flatten()[:8]}")


TORCH2 = int(torch.__version__.split(".")[0]) >= 2
# torch 2's CPU kernels add and multiply f16 and bf16 in f32 and round once
# (scatter_add and scatter_reduce over duplicates, index_add with alpha),
# where torch 1.13 rounded every step as SPEC 5 and tensorjit do
TORCH_ROUNDS_ONCE = TORCH2
# torch 2.10 made every row of a 2-D embedding_bag input a bag under
# include_last_offset (pytorch#167974); before, the last row was none
TORCH_EVERY_ROW_A_BAG = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2]) >= (2, 10)


def ulps_apart(a, b):
    """Per element of two f16 or bf16 tensors, how many representable values
    lie between them (+0 and -0 none apart)."""
    def ordered(t):
        i = bits(t).to(torch.int32)
        return torch.where(i < 0, -(i & 0x7FFF), i)
    return (ordered(a) - ordered(b)).abs()


def assert_like_torch(got, theirs, ulps=8):
    """got against torch's result: bit for bit, but for f16 and bf16 under a
    torch that rounds once, NaNs where torch's are and the rest within `ulps`
    of the dtype's representable values."""
    if TORCH_ROUNDS_ONCE and theirs.dtype in (torch.float16, torch.bfloat16):
        got = torch.from_numpy(np.ascontiguousarray(got)) if isinstance(got, np.ndarray) \
            else got
        assert got.dtype == theirs.dtype and got.shape == theirs.shape
        assert torch.equal(got.isnan(), theirs.isnan())
        far = ulps_apart(got, theirs)[~theirs.isnan()]
        assert far.numel() == 0 or int(far.max()) <= ulps, int(far.max())
        return
    assert_bits(got, theirs)


def run_both(fn, *args, **kw):
    """fn on torch tensors and, where numpy has every dtype, on numpy arrays
    (the result then a numpy array, of the input's kind): both results, as
    tensors."""
    results = [fn(*args, **kw)]
    assert isinstance(results[0], torch.Tensor)
    tensors = [a for a in list(args) + list(kw.values()) if isinstance(a, torch.Tensor)]
    if all(t.dtype != torch.bfloat16 for t in tensors):
        conv = [a.numpy() if isinstance(a, torch.Tensor) else a for a in args]
        kconv = {k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        got = fn(*conv, **kconv)
        assert isinstance(got, np.ndarray)
        results.append(torch.from_numpy(np.array(got)))
    return results
