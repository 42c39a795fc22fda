"""Which engine serves a call of the Python families (issue 21): every dim
of a family is dynamic, so a call must run on the JIT's code whatever its
shape: a reduction's row width, torch's index smaller than its input. The
*_info calls say what serves one call (jit_dynamic_engine); the values are
checked against numpy and torch, never against tensorjit itself."""

import numpy as np
import pytest

import tensorjit

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(21)


def expect_jit(info):
    assert info["engine"] == "jit", info["why"]


@pytest.mark.parametrize("reduction", ["sum", "prod", "min", "max"])
@pytest.mark.parametrize("width", [1, 7, 256])
def test_scatter_nd_reduction_runs_the_jit(reduction, width):
    data = RNG.standard_normal((50, width)).astype(np.float32)
    idx = RNG.integers(0, 50, size=(300, 1)).astype(np.int64)
    upd = RNG.standard_normal((300, width)).astype(np.float32)
    expect_jit(tensorjit.scatter_nd_update_info(data, idx, upd, reduction))
    want = data.copy()
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
    ufunc[reduction].at(want, idx[:, 0], upd)
    got = tensorjit.scatter_nd_update(data, idx, upd, reduction)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_s5_shape_runs_the_jit():
    """S5's shape, from the issue (info only: no run of 1 GB)."""
    data = np.zeros((100000, 256), np.float32)
    idx = np.zeros((1048576, 1), np.int64)
    upd = np.broadcast_to(np.float32(0), (1048576, 256))
    expect_jit(tensorjit.scatter_nd_update_info(data, idx, upd, "sum"))


@pytest.mark.parametrize("reduction", ["sum", "prod", "mean", "amax", "amin"])
def test_torch_scatter_reduce_runs_the_jit(reduction):
    x = torch.randn(8, 16, 12)
    idx = torch.randint(0, 12, (8, 16, 5))
    src = torch.randn(8, 16, 7)
    lib = {"amax": "max", "amin": "min"}.get(reduction, reduction)
    expect_jit(tensorjit.scatter_elements_update_info(x, idx, src, 2, lib, torch_dims=True))
    want = x.scatter_reduce(2, idx, src, reduction)
    torch.testing.assert_close(tensorjit.torch.scatter_reduce(x, 2, idx, src, reduction), want)


def test_torch_index_add_and_numpy_add_at_run_the_jit():
    x = torch.randn(40, 32)
    idx = torch.randint(0, 40, (100,))
    src = torch.randn(100, 32)
    expect_jit(tensorjit.scatter_nd_update_info(x, idx.reshape(-1, 1), src, "sum"))
    torch.testing.assert_close(tensorjit.torch.index_add(x, 0, idx, src),
                               x.index_add(0, idx, src))
    a = RNG.standard_normal((30, 9))
    at = RNG.integers(0, 9, size=(30, 20))
    b = RNG.standard_normal((30, 20))
    expect_jit(tensorjit.scatter_elements_update_info(a, at, b, 1, "sum"))


@pytest.mark.parametrize("x_shape, idx_shape, dim", [
    ((64, 512, 256), (64, 384, 128), 2),   # the example
    ((6, 9, 10), (6, 9, 4), 2),
    ((6, 9, 10), (3, 9, 4), 2),
    ((6, 9, 10), (6, 2, 10), 1),
    ((6, 9, 10), (2, 3, 4), 0),
])
def test_torch_gather_with_a_smaller_index_runs_the_jit(x_shape, idx_shape, dim):
    x = torch.randn(*x_shape)
    idx = torch.randint(0, x_shape[dim], idx_shape)
    expect_jit(tensorjit.gather_elements_info(x, idx, dim, torch_dims=True))
    torch.testing.assert_close(tensorjit.torch.gather(x, dim, idx), torch.gather(x, dim, idx))


def test_compile_dynamic_takes_torch_dims():
    k = tensorjit.compile_dynamic("gather_elements", (None, None, None), (None, None, None),
                                  dtype=np.float32, index_dtype=np.int64, axis=2,
                                  torch_dims=True)
    x = torch.randn(64, 512, 256)
    idx = torch.randint(0, 256, (64, 384, 128))
    torch.testing.assert_close(k(x, idx), torch.gather(x, 2, idx))
    with pytest.raises(tensorjit.SignatureError):
        tensorjit.compile_dynamic("gather_elements", (None, None), (None, None),
                                  dtype=np.float32, index_dtype=np.int64, axis=1)(
            np.zeros((2, 5), np.float32), np.zeros((1, 3), np.int64))


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_gather_nd_and_scatter_nd_run_the_jit_at_every_tuple_length(k):
    """A family is one tuple length (the nest's depth): with it dynamic,
    only the length the library compiled for ran on the JIT (a user saw
    k=2 take 10x numpy's time)."""
    data = RNG.standard_normal((6, 7, 5, 4)).astype(np.float32)
    idx = np.stack([RNG.integers(0, n, size=(30, 2)) for n in data.shape[:k]], axis=-1) \
        if k else np.zeros((30, 2, 0), np.int64)
    expect_jit(tensorjit.gather_nd_info(data, idx))
    if k == 0:  # every tuple selects the whole of data
        want = np.broadcast_to(data, idx.shape[:-1] + data.shape)
        np.testing.assert_array_equal(tensorjit.gather_nd(data, idx), want)
        return
    np.testing.assert_array_equal(tensorjit.gather_nd(data, idx),
                                  data[tuple(np.moveaxis(idx, -1, 0))])
    flat = idx.reshape(-1, k)[:1]  # one tuple: the result does not depend on the write order
    upd = RNG.standard_normal((1,) + data.shape[k:]).astype(np.float32)
    expect_jit(tensorjit.scatter_nd_update_info(data, flat, upd))
    want = data.copy()
    want[tuple(flat.T)] = upd
    np.testing.assert_array_equal(tensorjit.scatter_nd_update(data, flat, upd), want)


@pytest.mark.parametrize("x_shape, idx_shape, dim", [
    ((100, 1000), (50, 1000), 1),          # a user's trial: 10x torch's time
    ((6, 9, 10), (3, 9, 4), 2),
    ((6, 9, 10), (6, 2, 4), 2),
    ((6, 9, 10), (1, 1, 10), 2),
    ((6, 9, 10), (6, 9, 4), 2),
])
def test_torch_scatter_with_a_smaller_index_runs_the_jit(x_shape, idx_shape, dim):
    x = torch.randn(*x_shape)
    src = torch.randn(*idx_shape)
    # one index per row along dim: the result does not depend on the order of duplicates
    idx = torch.stack([torch.randperm(x_shape[dim])[:idx_shape[dim]]
                       for _ in range(int(np.prod(idx_shape)) // idx_shape[dim])])
    idx = idx.reshape(*idx_shape[:dim], *idx_shape[dim + 1:], idx_shape[dim]).movedim(-1, dim)
    expect_jit(tensorjit.scatter_elements_update_info(x, idx, src, dim, torch_dims=True))
    torch.testing.assert_close(tensorjit.torch.scatter(x, dim, idx, src), x.scatter(dim, idx, src))
    torch.testing.assert_close(tensorjit.torch.scatter_add(x, dim, idx, src),
                               x.scatter_add(dim, idx, src))
