"""tensorjit.gather, gather_elements and scatter_nd_update against numpy.

The expected values come from numpy (take, take_along_axis, fancy
assignment) or from the plain loops below, which spell out SPEC.md section
5 index by index; never from tensorjit itself.
"""

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(15)

DTYPES = [np.float16, np.int8, np.bool_, np.float64, np.float32, np.uint16, np.int64]
POLICIES = ["error", "negative-wraps", "clamp", "zero-fill", "negative-wraps-zero-fill"]


def random_array(shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def random_shape(rank, low=1, high=4):
    return tuple(int(d) for d in RNG.integers(low, high + 1, size=rank))


def resolve(v, s, policy):
    """An index under a policy (SPEC.md sections 2 and 5): the position it
    selects, None for a zero-filled slice / dropped update, or IndexError."""
    v = int(v)
    if policy in ("negative-wraps", "negative-wraps-zero-fill") and -s <= v < 0:
        v += s
    if policy == "clamp":
        if s == 0:
            raise IndexError(v)
        return min(max(v, 0), s - 1)
    if 0 <= v < s:
        return v
    if policy in ("zero-fill", "negative-wraps-zero-fill"):
        return None
    raise IndexError(v)


def ref_gather(data, indices, axis, batch_dims=0, policy="error"):
    r, q = data.ndim, indices.ndim
    a = axis % r
    b = batch_dims + q if batch_dims < 0 else batch_dims
    s = data.shape[a]
    out = np.zeros(data.shape[:a] + indices.shape[b:] + data.shape[a + 1:], data.dtype)
    for p in np.ndindex(*data.shape[:a]):
        ix = indices[p[:b]]
        for j in np.ndindex(*ix.shape):
            t = resolve(ix[j], s, policy)
            if t is not None:
                out[p + j] = data[p + (t,)]
    return out


def ref_gather_elements(data, indices, axis, policy="error"):
    a = axis % data.ndim
    out = np.zeros(indices.shape, data.dtype)
    for i in np.ndindex(*indices.shape):
        t = resolve(indices[i], data.shape[a], policy)
        if t is not None:
            out[i] = data[i[:a] + (t,) + i[a + 1:]]
    return out


def ref_scatter_nd_update(data, indices, updates, policy="error"):
    """tf.tensor_scatter_nd_update, tuple by tuple in row-major order (the
    last duplicate wins); all indices are checked before anything is written."""
    k = indices.shape[-1]
    tuples = {}
    for j in np.ndindex(*indices.shape[:-1]):
        t = [resolve(indices[j + (e,)], data.shape[e], policy) for e in range(k)]
        tuples[j] = None if None in t else tuple(t)
    out = data.copy()
    for j, t in tuples.items():
        if t is not None:
            out[t] = updates[j]
    return out


def expect(ref, call):
    """call() equals ref() bit for bit, or both raise IndexError."""
    try:
        want = ref()
    except IndexError:
        with pytest.raises(IndexError):
            call()
        return
    got = call()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


# Gather

@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_negative_wraps_is_numpy_take(dtype):
    for _ in range(6):
        data = random_array(random_shape(RNG.integers(1, 4)), dtype)
        axis = int(RNG.integers(-data.ndim, data.ndim))
        s = data.shape[axis]
        indices = RNG.integers(-s, s, size=random_shape(RNG.integers(0, 3), 0, 3))
        got = tensorjit.gather(data, indices, axis, index_policy="negative-wraps")
        assert got.tobytes() == np.take(data, indices, axis).tobytes()
        assert got.shape == np.take(data, indices, axis).shape
        # tensorjit.numpy.take keeps numpy's semantics without being told
        assert tensorjit.numpy.take(data, indices, axis).tobytes() == got.tobytes()


def test_gather_default_policy_is_error():
    # one default for every op in C, the CLI and these functions (issue 22):
    # [0, s) only; a negative index is refused as the C default refuses it
    data = np.arange(6.0)
    np.testing.assert_array_equal(tensorjit.gather(data, np.array([5, 0])), data[[5, 0]])
    for bad in (6, -1, -7):
        with pytest.raises(IndexError, match=str(bad)):
            tensorjit.gather(data, np.array([bad]))
    k = tensorjit.compile_dynamic("gather", (None,), (None,), dtype=np.float64,
                                  index_dtype=np.int64)
    with pytest.raises(IndexError):
        k(data, np.array([-1]))


def test_gather_hand_computed_batch_dims():
    # data[b, s] and indices[b, j]: out[b, j] = data[b, indices[b, j]]
    data = np.array([[10, 11, 12], [20, 21, 22]], np.int32)
    indices = np.array([[2, 0], [1, 1]], np.int64)
    out = tensorjit.gather(data, indices, axis=1, batch_dims=1)
    assert out.tolist() == [[12, 10], [21, 21]]
    assert tensorjit.gather(data, indices, axis=-1, batch_dims=-1).tolist() == [[12, 10],
                                                                               [21, 21]]


@pytest.mark.parametrize("seed", range(8))
def test_gather_batch_dims_random(seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(2, 5))
    data = random_array(tuple(int(d) for d in rng.integers(1, 4, size=r)), np.float32)
    axis = int(rng.integers(1, r))
    b = int(rng.integers(1, axis + 1))
    ishape = data.shape[:b] + tuple(int(d) for d in rng.integers(0, 3, size=rng.integers(0, 3)))
    indices = rng.integers(0, data.shape[axis], size=ishape).astype(np.int32)
    neg_axis = bool(rng.integers(0, 2))
    # batch_dims counted from the end: b - q names b unless b == q (then it is 0)
    neg_b = b < indices.ndim and rng.integers(0, 2)
    got = tensorjit.gather(data, indices, axis - r if neg_axis else axis,
                           b - indices.ndim if neg_b else b)
    want = ref_gather(data, indices, axis, b)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    if b == 1:  # tf.gather(batch_dims=1) is take_along_axis for 1 index per batch row
        assert want.shape == data.shape[:axis] + indices.shape[1:] + data.shape[axis + 1:]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("itype", [np.int32, np.int64, np.int8, np.uint16])
def test_gather_policies(policy, itype):
    for _ in range(5):
        data = random_array(random_shape(3), np.float32)
        axis = int(RNG.integers(-3, 3))
        s = data.shape[axis]
        lo = 0 if np.dtype(itype).kind == "u" else -2 * s
        indices = RNG.integers(lo, 2 * s, size=random_shape(2)).astype(itype)
        expect(lambda: ref_gather(data, indices, axis, 0, policy),
               lambda: tensorjit.gather(data, indices, axis, index_policy=policy))


def test_gather_opset8_semantics_zero_fill():
    data = np.array([1.0, 2.0, 3.0], np.float32)
    out = tensorjit.gather(data, np.array([-1, 3, -4, 0]), index_policy="negative-wraps-zero-fill")
    assert out.tolist() == [3.0, 0.0, 0.0, 1.0]


def test_gather_bad_index_writes_nothing():
    out = np.full((2,), 7.0)
    with pytest.raises(IndexError):
        tensorjit.gather(np.zeros(3), np.array([0, 5]), index_policy="error", out=out)
    assert out.tolist() == [7.0, 7.0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(axis=2), "axis"),
    (dict(axis=-3), "axis"),
    (dict(axis=1, batch_dims=1, opset=1), "batch_dims"),
    (dict(axis=0, batch_dims=1), "batch_dims"),
    (dict(axis=1, batch_dims=3), "batch_dims"),
    (dict(axis=0, opset=5), "opset"),
])
def test_gather_invalid_signature_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tensorjit.gather(np.zeros((2, 3)), np.zeros((2, 1), np.int64), **kwargs)


def test_gather_batch_dims_mismatch_names_the_dims():
    with pytest.raises(ValueError, match="indices.shape\\[0\\]"):
        tensorjit.gather(np.zeros((2, 3)), np.zeros((3, 1), np.int64), axis=1, batch_dims=1)


def test_gather_out_and_non_contiguous_inputs():
    base = random_array((6, 8), np.float64)
    data = base[::2, 1::2]            # strided view
    indices = np.array([[3, 0], [1, -1]])[:, ::-1]  # negative stride
    assert not data.flags.c_contiguous and not indices.flags.c_contiguous
    want = np.take(data, indices, 1)
    out = np.empty(want.shape, np.float64)
    got = tensorjit.gather(data, indices, 1, index_policy="negative-wraps", out=out)
    assert got is out and out.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="shape"):
        tensorjit.gather(data, indices, 1, out=np.empty((1,), np.float64))
    with pytest.raises(ValueError, match="dtype"):
        tensorjit.gather(data, indices, 1, out=np.empty(want.shape, np.float32))


def test_gather_info():
    info = tensorjit.gather_info(np.zeros((3, 4), np.float32), np.zeros((2,), np.int32), 1)
    assert info["engine"] in ("jit", "reference")
    assert info["out_bytes"] == 3 * 2 * 4


# GatherElements

@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_elements_is_take_along_axis(dtype):
    for _ in range(6):
        data = random_array(random_shape(RNG.integers(1, 5)), dtype)
        axis = int(RNG.integers(-data.ndim, data.ndim))
        ishape = list(data.shape)
        ishape[axis] = int(RNG.integers(0, 5))
        indices = RNG.integers(0, data.shape[axis], size=ishape)
        got = tensorjit.gather_elements(data, indices, axis)
        want = np.take_along_axis(data, indices, axis)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_gather_elements_hand_computed():
    # torch.gather(t, 1, idx) on t = [[1, 2], [3, 4]], idx = [[0, 0], [1, 0]]
    out = tensorjit.gather_elements(np.array([[1, 2], [3, 4]], np.int8),
                                    np.array([[0, 0], [1, 0]], np.int32), 1)
    assert out.tolist() == [[1, 1], [4, 3]]


@pytest.mark.parametrize("policy", POLICIES)
def test_gather_elements_policies(policy):
    for _ in range(6):
        data = random_array(random_shape(3), np.float16)
        axis = int(RNG.integers(-3, 3))
        s = data.shape[axis]
        indices = RNG.integers(-2 * s, 2 * s, size=data.shape).astype(np.int32)
        expect(lambda: ref_gather_elements(data, indices, axis, policy),
               lambda: tensorjit.gather_elements(data, indices, axis, index_policy=policy))


def test_gather_elements_negative_wraps_is_take_along_axis_for_negatives():
    data = random_array((3, 4), np.float32)
    indices = RNG.integers(-4, 4, size=(3, 6))
    got = tensorjit.gather_elements(data, indices, 1, index_policy="negative-wraps")
    assert got.tobytes() == np.take_along_axis(data, indices, 1).tobytes()


def test_gather_elements_bad_index_raises_and_writes_nothing():
    out = np.full((2, 2), 9, np.int64)
    with pytest.raises(IndexError):
        tensorjit.gather_elements(np.zeros((2, 2), np.int64), np.array([[0, 2], [0, 0]]), 1,
                                  out=out)
    assert (out == 9).all()
    with pytest.raises(IndexError):  # torch.gather refuses negatives too
        tensorjit.gather_elements(np.zeros((2, 2)), np.array([[0, -1], [0, 0]]), 1)


@pytest.mark.parametrize("data_shape, indices_shape, axis, message", [
    ((2, 3), (2,), 0, "rank"),
    ((2, 3), (2, 3), 2, "axis"),
    ((2, 3), (3, 3), 1, "indices.shape\\[0\\]"),
])
def test_gather_elements_invalid_signature_raises_value_error(data_shape, indices_shape, axis,
                                                              message):
    with pytest.raises(ValueError, match=message):
        tensorjit.gather_elements(np.zeros(data_shape), np.zeros(indices_shape, np.int64), axis)


def test_gather_elements_non_contiguous():
    data = random_array((4, 6), np.int8)[:, ::2]
    indices = np.ascontiguousarray(RNG.integers(0, 3, size=(5, 4)).T)[:, ::-1]
    want = np.take_along_axis(data, indices, 1)
    assert tensorjit.gather_elements(data, indices, 1).tobytes() == want.tobytes()


# ScatterNDUpdate

def nd_case(dtype, rng=RNG):
    r = int(rng.integers(1, 4))
    data = random_array(tuple(int(d) for d in rng.integers(1, 4, size=r)), dtype)
    k = int(rng.integers(0, r + 1))
    lead = tuple(int(d) for d in rng.integers(0, 3, size=rng.integers(0, 3)))
    indices = np.stack([rng.integers(0, data.shape[e], size=lead) for e in range(k)], -1) \
        if k else np.zeros(lead + (0,), np.int64)
    updates = random_array(lead + data.shape[k:], dtype)
    return data, indices.astype(np.int64), updates


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_nd_update_random(dtype):
    for _ in range(8):
        data, indices, updates = nd_case(dtype)
        got = tensorjit.scatter_nd_update(data, indices, updates)
        want = ref_scatter_nd_update(data, indices, updates)
        assert got.shape == data.shape and got.tobytes() == want.tobytes()


def test_scatter_nd_update_is_tf_tensor_scatter_nd_update():
    # tf.tensor_scatter_nd_update(tf.zeros(8), [[4], [3], [1], [7]], [9, 10, 11, 12])
    out = tensorjit.scatter_nd_update(np.zeros(8, np.float32), np.array([[4], [3], [1], [7]]),
                                      np.array([9, 10, 11, 12], np.float32))
    assert out.tolist() == [0, 11, 0, 10, 9, 0, 0, 12]
    # slices: k = 1 < rank, rows replaced
    out = tensorjit.scatter_nd_update(np.zeros((3, 2), np.int16), np.array([[2], [0]]),
                                      np.array([[1, 2], [3, 4]], np.int16))
    assert out.tolist() == [[3, 4], [0, 0], [1, 2]]


def test_scatter_nd_update_last_duplicate_wins():
    out = tensorjit.scatter_nd_update(np.zeros((2, 2)), np.array([[0, 1], [1, 0], [0, 1]]),
                                      np.array([5.0, 6.0, 7.0]))
    assert out.tolist() == [[0, 7.0], [6.0, 0]]


@pytest.mark.parametrize("policy", POLICIES)
def test_scatter_nd_update_policies(policy):
    for _ in range(8):
        data = random_array(random_shape(2), np.float64)
        indices = np.stack([RNG.integers(-2 * s, 2 * s, size=(3,)) for s in data.shape], -1)
        updates = random_array((3,), np.float64)
        expect(lambda: ref_scatter_nd_update(data, indices, updates, policy),
               lambda: tensorjit.scatter_nd_update(data, indices, updates,
                                                   index_policy=policy))


def test_scatter_nd_update_in_place():
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    result = tensorjit.scatter_nd_update(data, np.array([[1, 2]]), np.array([-1], np.int32),
                                         out=data)
    assert result is data and data.tolist() == [[0, 1, 2], [3, 4, -1]]


def test_scatter_nd_update_bad_index_in_place_writes_nothing():
    data = np.arange(4.0)
    with pytest.raises(IndexError, match="4"):
        tensorjit.scatter_nd_update(data, np.array([[0], [4]]), np.array([9.0, 9.0]), out=data)
    assert data.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_scatter_nd_update_out_and_non_contiguous():
    data = random_array((4, 6), np.bool_)[:, ::2]
    indices = np.array([[0, 2], [3, 1]])[::-1]
    updates = np.array([True, False, True])[::2]
    want = ref_scatter_nd_update(np.ascontiguousarray(data), indices, updates)
    out = np.empty((4, 3), np.bool_)
    assert tensorjit.scatter_nd_update(data, indices, updates, out=out) is out
    assert out.tobytes() == want.tobytes()
    buf = np.zeros(4)
    with pytest.raises(ValueError, match="overlaps updates"):
        tensorjit.scatter_nd_update(np.zeros(3), np.array([[0]]), buf[2:3], out=buf[:3])


@pytest.mark.parametrize("indices, updates, message", [
    (np.array([[0, 0, 0]]), np.zeros(1), "k|indices"),     # k = 3 > rank 2
    (np.array([[0]]), np.zeros((1, 2)), "updates"),        # updates must be (1, 3)
    (np.array([[0]]), np.zeros((1, 3), np.float32), "updates|type"),
])
def test_scatter_nd_update_invalid_signature_raises_value_error(indices, updates, message):
    with pytest.raises(ValueError, match=message):
        tensorjit.scatter_nd_update(np.zeros((2, 3)), indices, updates)


# numpy's unbuffered in-place ufuncs apply repeated indices one after
# another, in order: the order the library promises
UFUNCS = {"sum": np.add, "add": np.add, "sub": np.subtract, "prod": np.multiply,
          "mul": np.multiply, "min": np.minimum, "max": np.maximum}


@pytest.mark.parametrize("reduction", ["sum", "sub", "prod", "min", "max", "add", "mul"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint16])
def test_scatter_nd_update_reductions_match_numpy_ufunc_at(reduction, dtype):
    data = random_array((6, 5), dtype)
    indices = RNG.integers(0, 6, size=(20, 1))     # collisions on purpose
    updates = random_array((20, 5), dtype)
    want = data.copy()
    with np.errstate(over="ignore"):
        UFUNCS[reduction].at(want, indices[:, 0], updates)
        got = tensorjit.scatter_nd_update(data, indices, updates, reduction=reduction)
    np.testing.assert_array_equal(got, want)


def test_scatter_nd_update_reductions_in_place_and_refusals():
    data = np.zeros(4, np.float32)
    tensorjit.scatter_nd_update(data, np.array([[1], [1]]), np.array([2, 3], np.float32),
                                reduction="sum", out=data)
    np.testing.assert_array_equal(data, [0, 5, 0, 0])
    with pytest.raises(ValueError, match="reduction"):
        tensorjit.scatter_nd_update(np.zeros(3), np.array([[0]]), np.zeros(1),
                                    reduction="mean")              # not ScatterNDUpdate's
    with pytest.raises(ValueError, match="reduction"):
        tensorjit.scatter_nd_update(np.zeros(3), np.array([[0]]), np.zeros(1),
                                    reduction="sum", opset=3)      # -3 has none
    with pytest.raises(ValueError, match="reduction"):
        tensorjit.scatter_nd_update(np.zeros(3), np.array([[0]]), np.zeros(1),
                                    reduction="median")


def scatter_elements_loop(data, indices, updates, axis, reduction, use_init_val):
    """SPEC section 5 index by index, the mean's count kept aside."""
    out = data.copy()
    count = np.zeros(data.shape, np.int64)
    hit = np.zeros(data.shape, bool)
    for i in np.ndindex(indices.shape):
        target = list(i)
        target[axis] = indices[i]
        hit[tuple(target)] = True
    top, bottom = ((np.inf, -np.inf) if data.dtype.kind == "f"
                   else (np.iinfo(data.dtype).max, np.iinfo(data.dtype).min))
    neutral = {"sum": 0, "mean": 0, "prod": 1, "min": top, "max": bottom}
    if not use_init_val and reduction != "none":
        out[hit] = neutral[reduction]
    count[hit] = 1 if use_init_val else 0
    total = out.astype(np.float64)
    for i in np.ndindex(indices.shape):
        target = list(i)
        target[axis] = indices[i]
        t = tuple(target)
        u = updates[i]
        if reduction == "none":
            out[t] = u
        elif reduction in ("sum", "mean"):
            out[t] = out[t] + u
            total[t] += u
        elif reduction == "prod":
            out[t] = out[t] * u
        elif reduction == "min":
            out[t] = min(out[t], u)
        elif reduction == "max":
            out[t] = max(out[t], u)
        count[t] += 1
    if reduction == "mean":
        for t in zip(*np.nonzero(hit)):
            out[t] = out[t] / count[t] if out.dtype.kind == "f" else np.floor(total[t] / count[t])
    return out


@pytest.mark.parametrize("reduction", ["none", "sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("use_init_val", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_scatter_elements_update_matches_the_spec_loop(reduction, use_init_val, dtype):
    data = (RNG.integers(-9, 10, size=(4, 6))).astype(dtype)
    indices = RNG.integers(0, 6, size=(3, 5))
    updates = (RNG.integers(-9, 10, size=(3, 5))).astype(dtype)
    want = scatter_elements_loop(data, indices, updates, 1, reduction, use_init_val)
    got = tensorjit.scatter_elements_update(data, indices, updates, 1, reduction,
                                            use_init_val)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_scatter_elements_update_is_torch_scatter():
    data = np.zeros((2, 4), np.float32)
    indices = np.array([[3, 0], [1, 1]])
    updates = np.array([[1, 2], [3, 4]], np.float32)
    got = tensorjit.scatter_elements_update(data, indices, updates, axis=-1)
    np.testing.assert_array_equal(got, [[2, 0, 0, 1], [0, 4, 0, 0]])  # the last one wins
    got = tensorjit.scatter_elements_update(data, indices, updates, 1, "sum", out=data)
    assert got is data
    np.testing.assert_array_equal(data, [[2, 0, 0, 1], [0, 7, 0, 0]])
    with pytest.raises(IndexError):
        tensorjit.scatter_elements_update(data, np.array([[4, 0], [1, 1]]), updates, 1)
    with pytest.raises(ValueError, match="mean"):
        tensorjit.scatter_elements_update(np.zeros(3, np.bool_), np.array([0]),
                                          np.ones(1, np.bool_), 0, "mean")
