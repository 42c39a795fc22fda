"""tensorjit's Python package against numpy, over the installed C library.

Run with the library findable (TENSORJIT_LIBRARY, TENSORJIT_PREFIX or the
loader): python3 -m pytest python/tests
"""

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(12)

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16,
          np.int32, np.uint32, np.int64, np.uint64, np.bool_]
INDEX_DTYPES = [np.int32, np.int64, np.int8, np.uint8, np.int16, np.uint16, np.uint32,
                np.uint64]


def random_array(shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def random_indices(shape, high, dtype=np.int64):
    return RNG.integers(0, high, size=shape).astype(dtype)


def ref_gather_nd(data, indices, batch_dims=0):
    """GatherND-8 by numpy fancy indexing, one batch position at a time."""
    b, k = batch_dims, indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[b + k:], data.dtype)
    for pos in np.ndindex(*data.shape[:b]):
        d, ix = data[pos], indices[pos]
        out[pos] = d[tuple(ix[..., j] for j in range(k))]
    return out


def ref_scatter_update(data, indices, updates, axis):
    """ScatterUpdate-3 by numpy assignment, index by index in row-major
    order, so that the last duplicate wins."""
    axis = axis % data.ndim
    out = data.copy()
    lead = (slice(None),) * axis
    for pos in np.ndindex(*indices.shape):
        out[lead + (indices[pos],)] = updates[lead + pos]
    return out


# GatherND

@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_nd_dtypes(dtype):
    data = random_array((5, 4, 3), dtype)
    indices = np.stack([random_indices((7,), 5), random_indices((7,), 4)], axis=-1)
    out = tensorjit.gather_nd(data, indices)
    assert out.dtype == data.dtype and out.shape == (7, 3)
    np.testing.assert_array_equal(out, ref_gather_nd(data, indices))


@pytest.mark.parametrize("itype", INDEX_DTYPES)
def test_gather_nd_index_types(itype):
    data = random_array((6, 5), np.float32)
    indices = random_indices((2, 3, 1), 6, itype)
    np.testing.assert_array_equal(tensorjit.gather_nd(data, indices),
                                  ref_gather_nd(data, indices))


def test_gather_nd_embedding_matches_take():
    table = random_array((100, 16), np.float32)
    ids = random_indices((8, 20), 100)
    out = tensorjit.gather_nd(table, ids[..., None])
    np.testing.assert_array_equal(out, table[ids])


@pytest.mark.parametrize("batch_dims,k", [(1, 1), (1, 2), (2, 1), (2, 2)])
def test_gather_nd_batch_dims(batch_dims, k):
    data = random_array((2, 3, 4, 5, 6), np.float32)
    inner = data.shape[batch_dims:batch_dims + k]
    indices = np.stack([random_indices(data.shape[:batch_dims] + (4,), n) for n in inner],
                       axis=-1)
    out = tensorjit.gather_nd(data, indices, batch_dims)
    np.testing.assert_array_equal(out, ref_gather_nd(data, indices, batch_dims))


def test_gather_nd_opset5_merges_batch_dims():
    data = random_array((2, 3, 4, 5), np.float32)
    indices = random_indices((2, 3, 7, 1), 4)
    out8 = tensorjit.gather_nd(data, indices, 2)
    out5 = tensorjit.gather_nd(data, indices, 2, opset=5)
    assert out8.shape == (2, 3, 7, 5)
    assert out5.shape == (6, 7, 5)
    np.testing.assert_array_equal(out5, out8.reshape(6, 7, 5))


def test_gather_nd_negative_index_policy():
    data = random_array((5, 3), np.float32)
    indices = np.array([[-1], [2], [-5]])
    with pytest.raises(IndexError, match=r"indices\[0\] = \[-1\] is out of range"):
        tensorjit.gather_nd(data, indices)
    out = tensorjit.gather_nd(data, indices, index_policy="negative-wraps")
    np.testing.assert_array_equal(out, data[[-1, 2, -5]])
    out = tensorjit.gather_nd(data, indices, index_policy="negative_wraps")
    np.testing.assert_array_equal(out, data[[-1, 2, -5]])


def test_gather_nd_clamp_and_zero_fill():
    data = random_array((4, 2), np.int32)
    indices = np.array([[9], [1], [-3]])
    np.testing.assert_array_equal(tensorjit.gather_nd(data, indices, index_policy="clamp"),
                                  data[[3, 1, 0]])
    out = tensorjit.gather_nd(data, indices, index_policy="zero-fill")
    np.testing.assert_array_equal(out, np.stack([np.zeros(2, np.int32), data[1],
                                                 np.zeros(2, np.int32)]))


def test_gather_nd_bad_index_raises_index_error_and_writes_nothing():
    data = random_array((4, 3), np.float64)
    out = np.full((2, 3), 7.0)
    with pytest.raises(IndexError) as e:
        tensorjit.gather_nd(data, np.array([[1], [4]]), out=out)
    assert str(e.value) == "indices[1] = [4] is out of range for data dimension 0 of size 4"
    assert (out == 7.0).all()


@pytest.mark.parametrize("kwargs,message", [
    ({"batch_dims": 2}, "batch_dims"),
    ({"opset": 7}, "opset"),
])
def test_gather_nd_invalid_signature_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tensorjit.gather_nd(np.zeros((3, 4), np.float32), np.zeros((2, 1), np.int64), **kwargs)


def test_gather_nd_index_depth_above_data_rank_is_the_library_message():
    with pytest.raises(ValueError) as e:
        tensorjit.gather_nd(np.zeros((3,), np.float32), np.zeros((2, 2), np.int64))
    assert str(e.value)  # the library's jit_last_error(), not empty


def test_gather_nd_out():
    data = random_array((6, 5), np.float32)
    indices = random_indices((3, 1), 6)
    out = np.empty((3, 5), np.float32)
    assert tensorjit.gather_nd(data, indices, out=out) is out
    np.testing.assert_array_equal(out, ref_gather_nd(data, indices))
    for bad in (np.empty((3, 4), np.float32), np.empty((3, 5), np.float64),
                np.empty((5, 3), np.float32).T, [[0.0] * 5] * 3):
        with pytest.raises(ValueError):
            tensorjit.gather_nd(data, indices, out=bad)
    read_only = np.empty((3, 5), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tensorjit.gather_nd(data, indices, out=read_only)
    with pytest.raises(ValueError, match="overlaps data"):
        tensorjit.gather_nd(data, indices, out=data[:3])


def test_gather_nd_non_contiguous_inputs():
    base = random_array((8, 6, 4), np.float32)
    data = base[::2, :, 1:]            # strided
    indices = random_indices((5, 2), 4).T.copy().T  # Fortran order
    indices[:, 1] %= 6
    assert not data.flags.c_contiguous and not indices.flags.c_contiguous
    np.testing.assert_array_equal(tensorjit.gather_nd(data, indices),
                                  ref_gather_nd(np.ascontiguousarray(data), indices))
    transposed = random_array((4, 6), np.int16).T
    np.testing.assert_array_equal(tensorjit.gather_nd(transposed, [[5], [0]]),
                                  transposed[[5, 0]])


def test_gather_nd_big_endian_input():
    data = random_array((4, 3), np.float32).astype(">f4")
    out = tensorjit.gather_nd(data, np.array([[3], [0]], ">i8"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, data[[3, 0]])


def test_gather_nd_lists_in():
    out = tensorjit.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]])
    np.testing.assert_array_equal(out, [3, 2])


def test_unsupported_dtypes_raise_type_error():
    with pytest.raises(TypeError, match="complex"):
        tensorjit.gather_nd(np.zeros((2, 2), np.complex64), np.zeros((1, 1), np.int64))
    with pytest.raises(TypeError, match="indices"):
        tensorjit.gather_nd(np.zeros((2, 2), np.float32), np.zeros((1, 1), np.float32))


def test_unknown_index_policy_raises_value_error():
    with pytest.raises(ValueError, match="index_policy"):
        tensorjit.gather_nd(np.zeros((2, 2), np.float32), np.zeros((1, 1), np.int64),
                            index_policy="wrap")


def test_kernels_are_compiled_per_family_not_per_shape():
    # A family is (op, dtype, index type, ranks, attributes): new lengths of
    # data and indices reuse its kernel; another dtype is another family.
    tensorjit.shutdown()  # an empty table: the families other tests made are gone
    data = random_array((9, 2), np.float32)
    tensorjit.gather_nd(data, random_indices((4, 1), 9))
    before = tensorjit.stats()
    for rows, n in [(9, 5), (30, 1), (2, 17), (1000, 0)]:
        d = random_array((rows, 2), np.float32)
        i = random_indices((n, 1), rows)
        np.testing.assert_array_equal(tensorjit.gather_nd(d, i), ref_gather_nd(d, i))
    after = tensorjit.stats()
    assert after["compiles"] == before["compiles"]
    assert after["kernels"] == before["kernels"]
    tensorjit.gather_nd(data.astype(np.float64), random_indices((4, 1), 9))
    assert tensorjit.stats()["compiles"] == before["compiles"] + 1


def test_gather_nd_info():
    info = tensorjit.gather_nd_info(np.zeros((3, 4), np.float32), np.zeros((2, 1), np.int32))
    assert info["engine"] in ("jit", "reference")
    assert info["out_bytes"] == 2 * 4 * 4
    if info["engine"] == "jit":
        assert info["why"] == "" and info["code_bytes"] > 0
    else:
        assert info["why"]


# ScatterUpdate

@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_update_dtypes(dtype):
    data = random_array((4, 5, 3), dtype)
    indices = np.array([4, 0], np.int32)
    updates = random_array((4, 2, 3), dtype)
    out = tensorjit.scatter_update(data, indices, updates, axis=1)
    np.testing.assert_array_equal(out, ref_scatter_update(data, indices, updates, 1))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_scatter_update_axes(axis):
    data = random_array((3, 4, 5), np.float64)
    n = data.shape[axis]
    indices = random_indices((2, 2), n)
    a = axis % 3
    updates = random_array(data.shape[:a] + indices.shape + data.shape[a + 1:], np.float64)
    out = tensorjit.scatter_update(data, indices, updates, axis)
    np.testing.assert_array_equal(out, ref_scatter_update(data, indices, updates, axis))


def test_scatter_update_last_duplicate_wins():
    data = np.zeros((5, 2), np.int64)
    indices = np.array([1, 3, 1, 1])
    updates = np.array([[1, 1], [2, 2], [3, 3], [4, 4]])
    out = tensorjit.scatter_update(data, indices, updates, 0)
    np.testing.assert_array_equal(out, [[0, 0], [4, 4], [0, 0], [2, 2], [0, 0]])
    np.testing.assert_array_equal(out, ref_scatter_update(data, indices, updates, 0))


def test_scatter_update_0d_indices():
    data = random_array((3, 4), np.float32)
    updates = random_array((3,), np.float32)
    out = tensorjit.scatter_update(data, np.int64(2), updates, axis=1)
    expect = data.copy()
    expect[:, 2] = updates
    np.testing.assert_array_equal(out, expect)


def test_scatter_update_in_place():
    data = random_array((6, 4), np.float32)
    before = data.copy()
    indices = np.array([5, 2])
    updates = random_array((2, 4), np.float32)
    out = tensorjit.scatter_update(data, indices, updates, 0, out=data)
    assert out is data
    np.testing.assert_array_equal(data, ref_scatter_update(before, indices, updates, 0))


def test_scatter_update_in_place_bad_index_writes_nothing():
    data = random_array((6, 4), np.float32)
    before = data.copy()
    with pytest.raises(IndexError) as e:
        tensorjit.scatter_update(data, np.array([1, 6]), random_array((2, 4), np.float32), 0,
                                 out=data)
    assert str(e.value) == "indices[1] = 6 is out of range for data dimension 0 of size 6"
    np.testing.assert_array_equal(data, before)


def test_scatter_update_policies():
    data = np.zeros((4, 2), np.int8)
    updates = np.array([[1, 1], [2, 2]], np.int8)
    with pytest.raises(IndexError):
        tensorjit.scatter_update(data, np.array([-1, 0]), updates, 0)
    out = tensorjit.scatter_update(data, np.array([-1, 0]), updates, 0,
                                   index_policy="negative-wraps")
    np.testing.assert_array_equal(out, [[2, 2], [0, 0], [0, 0], [1, 1]])
    out = tensorjit.scatter_update(data, np.array([7, 1]), updates, 0, index_policy="zero-fill")
    np.testing.assert_array_equal(out, [[0, 0], [2, 2], [0, 0], [0, 0]])
    out = tensorjit.scatter_update(data, np.array([7, 1]), updates, 0, index_policy="clamp")
    np.testing.assert_array_equal(out, [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_scatter_update_invalid_signatures_raise_value_error():
    data = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match="axis"):
        tensorjit.scatter_update(data, np.array([0]), np.zeros((1, 3), np.float32), axis=2)
    with pytest.raises(ValueError, match="updates"):
        tensorjit.scatter_update(data, np.array([0]), np.zeros((2, 3), np.float32), axis=0)
    with pytest.raises(ValueError):  # the library refuses updates of another type
        tensorjit.scatter_update(data, np.array([0]), np.zeros((1, 3), np.float64), axis=0)


def test_scatter_update_out_checks():
    data = random_array((4, 3), np.float32)
    indices = np.array([0])
    updates = random_array((1, 3), np.float32)
    out = np.empty((4, 3), np.float32)
    assert tensorjit.scatter_update(data, indices, updates, 0, out=out) is out
    np.testing.assert_array_equal(out, ref_scatter_update(data, indices, updates, 0))
    with pytest.raises(ValueError, match="shape"):
        tensorjit.scatter_update(data, indices, updates, 0, out=np.empty((3, 4), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        tensorjit.scatter_update(data, indices, updates, 0, out=np.empty((4, 3), np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        tensorjit.scatter_update(data, indices, updates, 0,
                                 out=np.empty((3, 4), np.float32).T)
    with pytest.raises(ValueError, match="overlaps updates"):
        tensorjit.scatter_update(data, indices, data[:1], 0, out=data)
    # data not contiguous: it is copied, so out=data cannot be in place
    strided = random_array((8, 3), np.float32)[::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        tensorjit.scatter_update(strided, indices, updates, 0, out=strided)


def test_scatter_update_non_contiguous_inputs():
    data = random_array((5, 8), np.uint16)[:, ::2]
    indices = np.array([3, 9, 0, 9], np.int32)[::2]
    updates = random_array((2, 5), np.uint16).T
    for a in (data, indices, updates):
        assert not a.flags.c_contiguous
    out = tensorjit.scatter_update(data, indices, updates, 1)
    np.testing.assert_array_equal(out, ref_scatter_update(np.ascontiguousarray(data),
                                                          indices, updates, 1))


def test_scatter_update_info():
    info = tensorjit.scatter_update_info(np.zeros((4, 3), np.float32), np.array([0]),
                                         np.zeros((1, 3), np.float32), 0)
    assert info["engine"] in ("jit", "reference")
    assert info["out_bytes"] == 4 * 3 * 4


def test_library_version_matches_package():
    assert tensorjit.library_version().split(".")[:2] == tensorjit.__version__.split(".")[:2]
