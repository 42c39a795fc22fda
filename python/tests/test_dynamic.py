"""tensorjit.compile_dynamic: one kernel for a family of shapes (SPEC section 6).

Each compiled dynamic kernel is called on several shapes of its family and
compared with numpy (take, fancy indexing and assignment, take_along_axis)
and with the static path of the same arrays (tensorjit's op functions, the
static kernel of the concrete signature); never with values the dynamic
kernel produced.
"""

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(6)


def table(shape, dtype=np.float32):
    return RNG.standard_normal(size=shape).astype(dtype)


def test_gather_rows_of_any_count():
    # negative rows as numpy.take takes them: the policy is named (the default is error)
    k = tensorjit.compile_dynamic("gather", (None, 8), (None,), dtype=np.float32,
                                  index_dtype=np.int64, index_policy="negative-wraps")
    assert k.op == "Gather"
    assert k.output_shape == (None, 8)
    info = k.info()
    assert info["dynamic"] is True
    for rows, n in [(5, 3), (9, 0), (1, 7), (0, 0), (12, 12), (5, 3)]:
        data = table((rows, 8))
        idx = RNG.integers(-rows, rows, size=n) if rows else np.zeros(0, np.int64)
        got = k(data, idx)
        want = np.take(data, idx, axis=0)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, tensorjit.gather(data, idx, 0,
                                                             index_policy="negative-wraps"))


def test_every_dim_dynamic_with_leading_batch():
    k = tensorjit.compile_dynamic("gather", [-1, -1, -1], [-1, -1], axis=1,
                                  dtype=np.int16, index_dtype=np.int32)
    assert k.output_shape == (None, None, None, None)
    for shape, ishape in [((2, 5, 3), (4, 2)), ((1, 1, 1), (1, 1)), ((3, 4, 0), (2, 3))]:
        data = RNG.integers(-100, 100, size=shape).astype(np.int16)
        idx = RNG.integers(0, shape[1], size=ishape).astype(np.int32)
        np.testing.assert_array_equal(k(data, idx), np.take(data, idx, axis=1))


def test_gather_nd_against_fancy_indexing():
    k = tensorjit.compile_dynamic("gather_nd", (None, 4, 3), (None, 2), dtype=np.float64,
                                  index_dtype=np.int32)
    for rows, n in [(6, 5), (2, 1), (3, 0), (7, 9)]:
        data = table((rows, 4, 3), np.float64)
        idx = np.stack([RNG.integers(0, rows, size=n), RNG.integers(0, 4, size=n)],
                       axis=1).astype(np.int32)
        want = data[idx[:, 0], idx[:, 1]]
        np.testing.assert_array_equal(k(data, idx), want)
        np.testing.assert_array_equal(k(data, idx), tensorjit.gather_nd(data, idx))


def test_gather_elements_against_take_along_axis():
    k = tensorjit.compile_dynamic("GatherElements", (None, None), (None, None), axis=1,
                                  dtype=np.float32, index_dtype=np.int64)
    for shape, cols in [((3, 5), 2), ((4, 2), 6), ((1, 3), 3)]:
        data = table(shape)
        idx = RNG.integers(0, shape[1], size=(shape[0], cols))
        np.testing.assert_array_equal(k(data, idx), np.take_along_axis(data, idx, axis=1))


def test_scatter_update_against_assignment():
    k = tensorjit.compile_dynamic("scatter_update", (None, 4), (None,), (None, 4),
                                  dtype=np.float32, index_dtype=np.int64)
    for rows, n in [(6, 3), (4, 4), (5, 0), (9, 2)]:
        data = table((rows, 4))
        idx = RNG.permutation(rows)[:n].astype(np.int64)
        upd = table((n, 4))
        want = data.copy()
        want[idx] = upd
        np.testing.assert_array_equal(k(data, idx, upd), want)
        np.testing.assert_array_equal(k(data, idx, upd),
                                      tensorjit.scatter_update(data, idx, upd, 0))
        # in place
        buf = data.copy()
        assert k(buf, idx, upd, out=buf) is buf
        np.testing.assert_array_equal(buf, want)


def test_scatter_nd_update_against_assignment():
    k = tensorjit.compile_dynamic("scatter_nd_update", (None, 3), (None, 1), (None, 3),
                                  dtype=np.int32, index_dtype=np.int32)
    for rows, n in [(5, 2), (3, 3), (4, 0)]:
        data = RNG.integers(0, 50, size=(rows, 3)).astype(np.int32)
        idx = RNG.permutation(rows)[:n].astype(np.int32).reshape(n, 1)
        upd = RNG.integers(0, 50, size=(n, 3)).astype(np.int32)
        want = data.copy()
        want[idx[:, 0]] = upd
        np.testing.assert_array_equal(k(data, idx, upd), want)


def test_shapes_outside_the_family_raise():
    k = tensorjit.compile_dynamic("gather", (None, 8), (None,), dtype=np.float32,
                                  index_dtype=np.int64, data_bound=(10, None))
    with pytest.raises(ValueError, match="data"):
        k(table((3, 7)), np.zeros(2, np.int64))  # a static dim differs
    with pytest.raises(ValueError, match="bound"):
        k(table((11, 8)), np.zeros(2, np.int64))  # over the bound
    with pytest.raises(ValueError, match="rank"):
        k(table((3, 8, 1)), np.zeros(2, np.int64))
    with pytest.raises(TypeError):
        k(table((3, 8)), np.zeros(2, np.int32))  # not the kernel's index type
    assert k.bind((4, 8), (6,)) == (6, 8)
    with pytest.raises(ValueError):
        k.bind((4, 9), (6,))


def test_bad_index_raises_and_writes_nothing():
    k = tensorjit.compile_dynamic("gather_nd", (None, 4), (None, 1), dtype=np.float32,
                                  index_dtype=np.int64)
    data = table((3, 4))
    out = np.full((2, 4), 7.0, np.float32)
    with pytest.raises(IndexError):
        k(data, np.array([[0], [3]]), out=out)
    np.testing.assert_array_equal(out, np.full((2, 4), 7.0, np.float32))


def test_a_family_without_a_valid_shape_is_refused():
    with pytest.raises(ValueError):
        tensorjit.compile_dynamic("gather_elements", (None, None), (None,), axis=0,
                                  dtype=np.float32, index_dtype=np.int64)
    with pytest.raises(ValueError, match="dynamic"):
        tensorjit.compile_dynamic("gather", (3, 8), (2,), dtype=np.float32,
                                  index_dtype=np.int64)


def test_bounds_are_part_of_the_kernel():
    a = tensorjit.compile_dynamic("gather", (None, 2), (None,), dtype=np.float32,
                                  index_dtype=np.int64, indices_bound=(4,))
    b = tensorjit.compile_dynamic("gather", (None, 2), (None,), dtype=np.float32,
                                  index_dtype=np.int64)
    data = table((5, 2))
    idx = np.arange(5)
    with pytest.raises(ValueError, match="bound"):
        a(data, idx)
    np.testing.assert_array_equal(b(data, idx), data)
    np.testing.assert_array_equal(a(data, idx[:4]), data[:4])


def test_gather_nd_with_a_dynamic_tuple_length():
    # every dim dynamic: the tuple length k, and so the output's rank, is
    # the call's (output_shape is None)
    k = tensorjit.compile_dynamic("gather_nd", (None, None, None), (None, None),
                                  dtype=np.float32, index_dtype=np.int64)
    assert k.output_shape is None
    data = table((4, 3, 5))
    for depth, n in [(1, 3), (2, 4), (3, 2), (2, 0)]:
        idx = np.stack([RNG.integers(0, data.shape[d], size=n) for d in range(depth)],
                       axis=1).astype(np.int64) if n else np.zeros((0, depth), np.int64)
        want = data[tuple(idx[:, d] for d in range(depth))]
        got = k(data, idx)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_output_shape_holds_for_every_call_of_the_family():
    # GatherND, data and indices of rank 23 with every dim dynamic: only
    # tuples of 13 to 23 keep the output within 32 dims, and the library
    # once took the rank of 23's (22) for the family's, since no other
    # tuple length it tried was valid. The rank is the call's.
    k = tensorjit.compile_dynamic("gather_nd", [None] * 23, [None] * 23,
                                  dtype=np.float32, index_dtype=np.int64)
    assert k.output_shape is None
    data = table((2,) + (1,) * 22)
    for depth in (23, 18, 13):
        idx = np.zeros((3,) + (1,) * 21 + (depth,), np.int64)
        idx[1, ..., 0] = 1
        got = k(data, idx)
        want = data[tuple(idx[..., d] for d in range(depth))]
        assert got.ndim == 22 + 23 - depth
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    # torch.gather's dims, data (1, 5), index (?, 3): the index's rows may
    # be 0 or 1, so the output's first dim is the call's (it was said 1)
    g = tensorjit.compile_dynamic("gather_elements", (1, 5), (None, 3), axis=1,
                                  torch_dims=True, dtype=np.float32, index_dtype=np.int64)
    assert g.output_shape == (None, 3)
    data = table((1, 5))
    for rows in (0, 1):
        idx = RNG.integers(0, 5, size=(rows, 3)).astype(np.int64)
        np.testing.assert_array_equal(g(data, idx), np.take_along_axis(data[:rows], idx, 1))


def test_a_kernel_made_before_shutdown_raises_after_it():
    # Issue 19: the old object crashed the interpreter, or, once a new family
    # was compiled at the same address, ran that kernel (an f64 one wrote past
    # an f32 output). Now every use raises, and the new kernel is unharmed.
    k = tensorjit.compile_dynamic("gather", (None, 8), (None,), dtype=np.float32,
                                  index_dtype=np.int64)
    data = table((5, 8))
    idx = np.array([1, 0, 4], np.int64)
    np.testing.assert_array_equal(k(data, idx), np.take(data, idx, 0))
    tensorjit.shutdown()
    k64 = tensorjit.compile_dynamic("gather", (None, 8), (None,), dtype=np.float64,
                                    index_dtype=np.int64)
    out = np.zeros((3, 8), np.float32)
    for use in (lambda: k(data, idx), lambda: k(data, idx, out=out), k.info,
                lambda: k.bind((5, 8), (3,))):
        with pytest.raises(RuntimeError, match="freed by tensorjit.shutdown"):
            use()
    assert not out.any()
    wide = data.astype(np.float64)
    np.testing.assert_array_equal(k64(wide, idx), np.take(wide, idx, 0))


def test_family_kernels_survive_a_shutdown_made_in_c():
    # A jit_shutdown() that bypasses tensorjit.shutdown() (another user of the
    # library in the process) must not leave the module calling freed kernels.
    data = table((6, 4))
    idx = np.array([5, 2], np.int64)
    np.testing.assert_array_equal(tensorjit.gather(data, idx, 0), np.take(data, idx, 0))
    from tensorjit import _tensorjit
    _tensorjit._raw_shutdown()  # jit_shutdown() alone, as another user would call it
    for _ in range(3):  # kernels compiled after it may land where the old ones were
        np.testing.assert_array_equal(tensorjit.gather(data.astype(np.float64), idx, 0),
                                      np.take(data.astype(np.float64), idx, 0))
        np.testing.assert_array_equal(tensorjit.gather(data, idx, 0), np.take(data, idx, 0))


@pytest.mark.parametrize("op", ["embedding_bag_offsets", "embedding_segments"])
def test_bags_with_a_third_index_input_are_refused_by_name(op):
    """A DynamicKernel has no place for offsets or segment ids: the library's
    message was 'offsets of shape [] must be 1-D', about a shape never given."""
    with pytest.raises(tensorjit.SignatureError, match="compile_dynamic does not make .*"
                                                       f"tensorjit.{op}\\(\\) runs"):
        tensorjit.compile_dynamic(op, (None, 4), (None,), (None,), dtype=np.float32,
                                  index_dtype=np.int64)
    k = tensorjit.compile_dynamic("embedding_bag_packed", (None, 4), (None, None),
                                  dtype=np.float32, index_dtype=np.int64)  # no third input
    table = np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_array_equal(k(table, np.array([[1, 2]])), table[[1]] + table[[2]])
