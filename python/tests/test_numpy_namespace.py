"""tensorjit.numpy against numpy itself, on random shapes, dtypes and axes."""

import warnings

import numpy as np
import pytest

import tensorjit
import tensorjit.numpy as tnp

RNG = np.random.default_rng(21)
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint16, np.int32, np.int64,
          np.uint64, np.bool_]


def rand(shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    return (RNG.standard_normal(size=shape) * 50).astype(dtype)


def rand_shape(rank, low=1, high=6):
    return tuple(int(d) for d in RNG.integers(low, high, size=rank))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(6))
def test_take_matches_numpy(dtype, trial):
    shape = rand_shape(int(RNG.integers(1, 4)))
    a = rand(shape, dtype)
    axis = int(RNG.integers(-len(shape), len(shape)))
    n = shape[axis]
    idx = RNG.integers(-n, n, size=rand_shape(int(RNG.integers(0, 3)), 0, 5))
    np.testing.assert_array_equal(tnp.take(a, idx, axis=axis), np.take(a, idx, axis=axis))
    flat = RNG.integers(-a.size, a.size, size=7)
    np.testing.assert_array_equal(tnp.take(a, flat), np.take(a, flat))
    for mode in ("wrap", "clip"):
        wild = RNG.integers(-3 * n, 3 * n, size=5)
        np.testing.assert_array_equal(tnp.take(a, wild, axis=axis, mode=mode),
                                      np.take(a, wild, axis=axis, mode=mode))


def test_take_scalar_index_and_out_and_errors():
    a = rand((5, 3), np.float32)
    assert tnp.take(a[0], 2) == np.take(a[0], 2)
    out = np.empty((2, 3), np.float32)
    assert tnp.take(a, [4, 0], axis=0, out=out) is out
    np.testing.assert_array_equal(out, np.take(a, [4, 0], axis=0))
    before = out.copy()
    with pytest.raises(IndexError):
        tnp.take(a, [5], axis=0, out=out[:1])
    np.testing.assert_array_equal(out, before)
    with pytest.raises(tensorjit.Error):
        tnp.take(a, [0], axis=0, mode="bogus")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(5))
def test_take_along_axis_matches_numpy(dtype, trial):
    shape = rand_shape(int(RNG.integers(1, 4)))
    a = rand(shape, dtype)
    axis = int(RNG.integers(-len(shape), len(shape)))
    ishape = list(shape)
    ishape[axis] = int(RNG.integers(0, 6))
    if len(shape) > 1 and trial % 2:  # broadcast a dim of indices
        other = (axis + 1) % len(shape)
        ishape[other] = 1
    idx = RNG.integers(-shape[axis], shape[axis], size=ishape)
    np.testing.assert_array_equal(tnp.take_along_axis(a, idx, axis),
                                  np.take_along_axis(a, idx, axis))
    flat = RNG.integers(0, a.size, size=4)
    np.testing.assert_array_equal(tnp.take_along_axis(a, flat, None),
                                  np.take_along_axis(a, flat, None))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(5))
def test_put_along_axis_matches_numpy(dtype, trial):
    shape = rand_shape(int(RNG.integers(1, 4)))
    axis = int(RNG.integers(-len(shape), len(shape)))
    ishape = list(shape)
    ishape[axis] = int(RNG.integers(1, 4))
    # distinct positions along axis: numpy leaves the winner of duplicates unsaid
    idx = np.argsort(RNG.random(shape), axis=axis).take(range(min(ishape[axis], shape[axis])),
                                                      axis=axis)
    values = rand(idx.shape, dtype)
    want = rand(shape, dtype)
    got = want.copy()
    np.put_along_axis(want, idx, values, axis)
    assert tnp.put_along_axis(got, idx, values, axis) is None
    np.testing.assert_array_equal(got, want)
    # a strided view is written through too
    big = rand(shape + (2,), dtype)
    view, want2 = big[..., 0], big[..., 0].copy()
    np.put_along_axis(want2, idx, values, axis)
    tnp.put_along_axis(view, idx, values, axis)
    np.testing.assert_array_equal(big[..., 0], want2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("trial", range(5))
def test_add_at_matches_numpy(dtype, trial):
    shape = rand_shape(int(RNG.integers(1, 4)), 1, 7)
    a = rand(shape, dtype)
    k = int(RNG.integers(1, len(shape) + 1))
    n = int(RNG.integers(0, 12))
    idx = tuple(RNG.integers(-shape[d], shape[d], size=n) for d in range(k))
    b = rand((n,) + shape[k:], dtype)
    want, got = a.copy(), a.copy()
    np.add.at(want, idx if k > 1 else idx[0], b)
    tnp.add_at(got, idx if k > 1 else idx[0], b)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float64 else 1e-4)
    else:
        np.testing.assert_array_equal(got, want)


def test_add_at_scalar_update_and_bad_index():
    a = np.zeros(5)
    tnp.add_at(a, [0, 0, 4], 1.5)
    np.testing.assert_array_equal(a, [3, 0, 0, 0, 1.5])
    with pytest.raises(IndexError):
        tnp.add_at(a, [5], 1.0)
    np.testing.assert_array_equal(a, [3, 0, 0, 0, 1.5])


@pytest.mark.parametrize("itype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32,
                                   np.uint64])
def test_numpy_names_take_every_integer_index_type(itype):
    """numpy indexes with any integer type; GatherElements and
    ScatterNDUpdate take int32 and int64 only (a user's trial found
    take_along_axis and add_at refusing int8 indices)."""
    a = rand((4, 6), np.float64)
    idx = RNG.integers(0, 4, size=(4, 3)).astype(itype)
    np.testing.assert_array_equal(tnp.take_along_axis(a, idx, 1), np.take_along_axis(a, idx, 1))
    want, got = a.copy(), a.copy()
    np.add.at(want, (idx[:, 0], idx[:, 1]), 2.0)
    tnp.add_at(got, (idx[:, 0], idx[:, 1]), 2.0)
    np.testing.assert_array_equal(got, want)
    if itype == np.uint64:  # beyond int64: out of range, not wrapped to -1
        far = np.array([[0, 2**64 - 1, 1]] * 4, np.uint64)
        with pytest.raises(tensorjit.IndexOutOfRange, match=r"indices\[0,1\] = 18446744073709551615"):
            tnp.take_along_axis(a, far, 1)


def test_library_names_refuse_index_types_the_op_does_not_take():
    """OpenVINO's GatherElements and ScatterNDUpdate take i32 or i64 indices:
    another is a TypeMismatch (a TypeError) naming both, not a SignatureError."""
    a = np.zeros((4, 6), np.float32)
    with pytest.raises(tensorjit.TypeMismatch, match="indices has dtype i8; GatherElements "
                                                     "takes i32, i64 indices"):
        tensorjit.gather_elements(a, np.zeros((4, 6), np.int8), 1)
    with pytest.raises(TypeError, match="ScatterNDUpdate takes i32, i64"):
        tensorjit.scatter_nd_update(a, np.zeros((2, 1), np.uint16), np.zeros((2, 6), np.float32))
    np.testing.assert_array_equal(tensorjit.gather(a, np.zeros(3, np.uint8), 1), np.zeros((4, 3)))


def test_in_place_calls_refuse_what_they_cannot_write_into():
    """add_at and put_along_axis write into their first argument: a list
    was copied, written and dropped, and add_at returned as if it had added
    (numpy's add.at raises); a CPU tensor, whose memory numpy shares, is
    written in place (put_along_axis raised a TypeError from numpy's dtype)."""
    for call in (lambda a: tnp.add_at(a, [0, 0], 1),
                 lambda a: tnp.put_along_axis(a, np.array([0]), 5, 0)):
        with pytest.raises(tensorjit.TypeMismatch, match="in place.*not list"):
            call([1, 2, 3])
    torch = pytest.importorskip("torch")
    a = torch.zeros(3)
    tnp.add_at(a, [0, 0, 2], 1)
    tnp.put_along_axis(a, np.array([1]), 5, 0)
    assert a.tolist() == [2, 5, 1]


def test_in_place_calls_raise_the_package_errors():
    """SPEC 8: every error a tensorjit.Error. A read-only array raised
    numpy's ValueError from deep inside, a tensor numpy cannot view (one
    that requires grad; bf16) torch's RuntimeError or numpy's TypeError."""
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    for call in (lambda a: tnp.add_at(a, [0, 0], 1),
                 lambda a: tnp.put_along_axis(a, np.array([0]), 5, 0)):
        with pytest.raises(tensorjit.SignatureError, match="in place, but a(rr)? is read-only"):
            call(ro)
    assert ro.tolist() == [0, 0, 0]
    torch = pytest.importorskip("torch")
    for t in (torch.zeros(3, requires_grad=True), torch.zeros(3, dtype=torch.bfloat16)):
        with pytest.raises(tensorjit.TypeMismatch, match="numpy cannot share its memory"):
            tnp.add_at(t, [0], 1)


AXIS_ERROR = getattr(getattr(np, "exceptions", None), "AxisError", None) or np.AxisError


def test_numpy_names_raise_the_classes_numpy_raises():
    """numpy's own TestTakeAlongAxis.test_invalid expects an IndexError for
    bool and float indices and np.AxisError for axis=10; tensorjit raised a
    TypeMismatch (a TypeError) and a SignatureError (a ValueError), so code
    catching numpy's class missed them. Each is now a tensorjit.Error and
    numpy's class."""
    a = np.ones((10, 10))
    ai = np.ones((10, 2), np.intp)
    for bad in (ai.astype(bool), ai.astype(float)):
        for call in (lambda: tnp.take_along_axis(a, bad, axis=1),
                     lambda: tnp.put_along_axis(a.copy(), bad, 0.0, axis=1)):
            with pytest.raises(tensorjit.TypeMismatch) as e:
                call()
            assert isinstance(e.value, IndexError)
    with pytest.raises(tensorjit.Error) as e:  # np.add.at: IndexError for float indices
        tnp.add_at(a.copy(), np.array([0.0]), 1.0)
    assert isinstance(e.value, IndexError)
    for call in (lambda: tnp.take_along_axis(a, ai, axis=10),
                 lambda: tnp.put_along_axis(a.copy(), ai, 0.0, axis=-3),
                 lambda: tnp.take(a, [0], axis=2)):
        with pytest.raises(AXIS_ERROR) as e:
            call()
        assert isinstance(e.value, tensorjit.SignatureError)
    # index arrays that do not broadcast: numpy's IndexError ("shape mismatch")
    for call in (lambda: tnp.take_along_axis(np.zeros((2, 3)), np.zeros((3, 2), np.intp), 1),
                 lambda: tnp.add_at(np.zeros((2, 3)), ([0, 1], [0, 1, 2]), 1.0)):
        with pytest.raises(tensorjit.Error) as e:
            call()
        assert isinstance(e.value, IndexError)


def test_take_out_may_overlap_the_input_or_be_strided():
    """numpy's TestTake.test_out_overlap takes into a view of the array it
    reads (np.take(x, [1, 2, 3], out=x[2:5], mode='wrap') gives [1, 2, 3]);
    tensorjit refused it ('out overlaps data'), and any strided out numpy
    accepts. Such an out is written once the result is complete."""
    x = np.arange(5)
    y = tnp.take(x, [1, 2, 3], out=x[2:5], mode="wrap")
    assert y.base is x  # the out given, returned
    assert y.tolist() == [1, 2, 3] and x.tolist() == [0, 1, 1, 2, 3]
    idx = np.array([3, 0, 4, 1])
    tnp.take(np.arange(10, 15), idx, out=idx)  # out is the indices themselves
    assert idx.tolist() == [13, 10, 14, 11]
    a = rand((4, 5), np.float32)
    out = np.zeros((5, 4), np.float32).T[:, :2]  # Fortran-ordered, strided
    assert tnp.take(a, [3, -1], axis=1, out=out) is out
    np.testing.assert_array_equal(out, np.take(a, [3, -1], axis=1))
    before = x.copy()
    with pytest.raises(IndexError):  # a bad index leaves the overlapping out as it was
        tnp.take(x, [1, 9], out=x[3:5])
    np.testing.assert_array_equal(x, before)
    with pytest.raises(tensorjit.SignatureError):
        tnp.take(x, [1, 2], out=x[0:3])  # numpy: out of the wrong shape is refused too


def test_add_at_whole_array_empty_and_too_many_indices():
    """From numpy's TestUfunc.test_inplace_fancy_indexing: add.at(a, (), 1)
    adds to the whole of a (tensorjit raised numpy's bare ValueError from
    np.stack); indexing a 0-d array with 0 or [] is an IndexError (tensorjit
    raised a SignatureError, and a TypeMismatch for [], read as floats)."""
    a = np.array(0)
    tnp.add_at(a, (), 1)
    assert a == 1
    for bad in (0, []):
        with pytest.raises(tensorjit.IndexOutOfRange):
            tnp.add_at(a, bad, 1)
    assert a == 1
    m = np.arange(6.0).reshape(2, 3)
    tnp.add_at(m, (), [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(m, [[10, 21, 32], [13, 24, 35]])
    tnp.add_at(m, [], 1.0)  # an empty sequence selects nothing, as numpy's
    tnp.add_at(m, ([], []), 1.0)
    np.testing.assert_array_equal(m, [[10, 21, 32], [13, 24, 35]])


def test_add_at_reads_b_overlapping_a_as_before_and_writes_any_layout():
    """numpy's test_mem_overlap (test_ufunc_at_manual) adds a view of a into
    a; tensorjit refused it ('out overlaps updates'). numpy's
    test_inplace_fancy_indexing adds into a byte-swapped array; tensorjit
    refused that out too."""
    a = np.arange(10.0)
    tnp.add_at(a, [1, 2, 1], a[4:7])  # b is read as it was: 4, 5, 6
    np.testing.assert_array_equal(a, [0, 11, 7, 3, 4, 5, 6, 7, 8, 9])
    values = np.array([1, 2, 3, 4], np.dtype("f").newbyteorder())
    tnp.add_at(values, np.array([1, 2, 1], np.dtype("i").newbyteorder()), 3)
    np.testing.assert_array_equal(values, [1, 8, 6, 4])
    empty = np.arange(4)[:, None][:, 0:0]  # numpy's "empty subspace" case
    tnp.add_at(empty, [0, 1], 3)
    assert empty.shape == (4, 0)


def _put_along_axis_by_loop(arr, indices, values, axis):
    """numpy.put_along_axis's definition written out: indices broadcast with
    arr in every dim but axis, values to that shape, each position written
    in row-major order (so of duplicates the last stands). Returns whether
    some element was written more than once."""
    a_shape, i_shape = list(arr.shape), list(indices.shape)
    a_shape[axis] = i_shape[axis] = 1
    shape = list(np.broadcast_shapes(tuple(a_shape), tuple(i_shape)))
    shape[axis] = indices.shape[axis]
    indices, values = np.broadcast_to(indices, shape), np.broadcast_to(values, shape)
    written = set()
    twice = False
    for pos in np.ndindex(*shape):
        where = [p if arr.shape[d] > 1 else 0 for d, p in enumerate(pos)]
        where[axis] = indices[pos] % arr.shape[axis]
        twice |= tuple(where) in written
        written.add(tuple(where))
        arr[tuple(where)] = values[pos]
    return twice


@pytest.mark.parametrize("a_shape, i_shape, axis", [
    ((3, 4, 1), (1, 2, 5), 1),   # numpy's TestPutAlongAxis.test_broadcast
    ((3, 4), (1, 2), 1),         # indices' 1 writes every row of arr
    ((1, 4, 3), (2, 3, 1), 1),   # arr's 1 takes each of indices' rows in turn
    ((2, 1, 5, 1), (2, 3, 2, 4), 2),
    ((5, 1), (3, 6), 0),
])
def test_put_along_axis_broadcasts_as_numpy(a_shape, i_shape, axis):
    """numpy broadcasts indices against arr in every dim but axis; tensorjit
    refused indices longer than arr's 1 ('must not exceed data.shape') and,
    worse, wrote indices shorter than arr's dims into their own rows only
    (numpy's test_broadcast; put_along_axis(zeros((3, 4)), [[1, 2]], 5, 1)
    set row 0 alone)."""
    n = a_shape[axis]
    idx = RNG.integers(-n, n, size=i_shape)
    values = np.arange(np.prod(i_shape), dtype=np.float64).reshape(i_shape) + 100
    base = np.zeros(a_shape)
    want, got = base.copy(), base.copy()
    twice = _put_along_axis_by_loop(want, idx, values, axis)
    tnp.put_along_axis(got, idx, values, axis)
    np.testing.assert_array_equal(got, want)
    if not twice:  # numpy leaves the winner of duplicates unsaid; elsewhere it must agree
        ref = base.copy()
        np.put_along_axis(ref, idx, values, axis)
        np.testing.assert_array_equal(got, ref)


def test_put_along_axis_writes_a_strided_arr_for_axis_none_and_reads_values_as_before():
    """axis=None on an arr that is not C-contiguous wrote a reshaped copy and
    dropped it: arr was left as it was, silently. values overlapping arr are
    read as they were (the kernel refused the overlap)."""
    # numpy 1 writes into a strided arr (through a copy); numpy 2 refuses it
    # (its flat view is read-only): want is a C-ordered copy's
    got, want = np.zeros((4, 3)).T, np.ascontiguousarray(np.zeros((4, 3)).T)
    np.put_along_axis(want, np.array([1, 2, 7]), 5.0, None)
    tnp.put_along_axis(got, np.array([1, 2, 7]), 5.0, None)
    np.testing.assert_array_equal(got, want)
    assert got.sum() == 15
    a = np.arange(6.0)
    tnp.put_along_axis(a, np.array([0, 1]), a[4:6], 0)
    np.testing.assert_array_equal(a, [4, 5, 2, 3, 4, 5])


class _Tagged(np.ndarray):
    """An ndarray subclass whose results carry an attribute, as numpy's
    TestRegression.test_attributes has one."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


def test_subclasses_and_overriding_arrays_get_numpys_own_results():
    """numpy's np.take of a masked array takes its mask too, of a subclass
    returns the subclass with its attributes, and an __array_ufunc__
    override decides what add.at does; tensorjit.numpy gave the raw elements
    (ma's own TestMaskedArrayMethods.test_take failed on the lost mask,
    TestRegression.test_attributes on the lost attribute, and
    TestSpecialMethods.test_ufunc_override_with_super on the skipped
    override). Such arguments go to numpy's function."""
    m = np.ma.array([1, 2, 3, 4], mask=[0, 1, 0, 0])
    got = tnp.take(m, [1, 2])
    assert isinstance(got, np.ma.MaskedArray) and got.mask.tolist() == [True, False]
    got = tnp.take_along_axis(m, np.array([3, 1]), 0)
    assert got.mask.tolist() == [False, True]
    tnp.put_along_axis(m, np.array([1]), 9, 0)  # a masked put unmasks what it writes
    assert m.mask.tolist() == [False, False, False, False] and m[1] == 9
    t = np.arange(6).view(_Tagged)
    t.tag = "kept"
    got = tnp.take(t, [5, 0])
    assert type(got) is _Tagged and got.tag == "kept" and got.tolist() == [5, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # numpy's note on matrix
        mat = np.matrix([[1, 2], [3, 4]])
    assert type(tnp.take(mat, [0, 3])) is np.matrix and tnp.take(mat, [0, 3]).shape == (1, 2)

    seen = []

    class Logged(np.ndarray):
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            seen.append(method)
            inputs = tuple(np.asarray(x) if isinstance(x, Logged) else x for x in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)

    a = np.zeros(3).view(Logged)
    tnp.add_at(a, [0, 0], 1.0)
    assert seen == ["at"] and a.tolist() == [2, 0, 0]
    # a subclass that keeps ndarray's __array_ufunc__ is written by the kernel:
    # numpy's add.at writes its elements just so
    t2 = np.zeros(3).view(_Tagged)
    tnp.add_at(t2, [2, 2], 1.5)
    assert t2.tolist() == [0, 0, 3]


@pytest.mark.parametrize("axis", ["1", 1.0, [1]])
def test_an_axis_that_is_no_integer_is_a_type_mismatch(axis):
    """The axis check that gives numpy's AxisError compared the axis with
    the rank before asking whether it was an integer: take and
    put_along_axis raised a bare TypeError ("'<=' not supported between
    'int' and 'str'", "list indices must be integers"), no tensorjit.Error;
    take_along_axis did so before it. numpy raises TypeError too."""
    a = np.arange(6.0).reshape(2, 3)
    for call in (lambda: tnp.take(a, [0], axis=axis),
                 lambda: tnp.take(a, [0], axis=axis, mode="wrap"),
                 lambda: tnp.take_along_axis(a, np.zeros((2, 1), np.intp), axis),
                 lambda: tnp.put_along_axis(a.copy(), np.zeros((2, 1), np.intp), 1.0, axis)):
        with pytest.raises(tensorjit.TypeMismatch, match="axis must be an integer"):
            call()
        with pytest.raises(TypeError):
            np.take(a, [0], axis=axis)
    # numpy's integers are integers, as operator.index reads them, and so is
    # bool for take_along_axis; numpy's take refuses a bool axis, and so does ours
    np.testing.assert_array_equal(tnp.take(a, [2], axis=np.int64(1)), np.take(a, [2], axis=1))
    with pytest.raises(TypeError):
        np.take(a, [0], axis=True)
    with pytest.raises(tensorjit.TypeMismatch, match="axis must be an integer, not bool"):
        tnp.take(a, [0], axis=True)
    np.testing.assert_array_equal(tnp.take_along_axis(a, np.zeros((2, 1), np.intp), True),
                                  a[:, :1])


def test_reads_overlapping_what_is_written_are_read_as_they_were():
    """The scatters ask whether an operand overlaps what they write only
    once the library refuses it ('out overlaps'), and take whether out
    overlaps its inputs: each operand that does is still read as it was
    before the call, as numpy reads it, here against numpy's own calls."""
    def both(call):
        got, want = [np.array([[1, 0, 2], [2, 1, 0], [0, 0, 1]], np.int64) for _ in range(2)]
        call(tnp, got)
        call(None, want)
        np.testing.assert_array_equal(got, want)

    pal = lambda m: m.put_along_axis if m else np.put_along_axis  # noqa: E731
    add = lambda m: m.add_at if m else np.add.at  # noqa: E731
    take = lambda m: m.take if m else np.take  # noqa: E731
    both(lambda m, x: pal(m)(x, x[1:2], 7, 0))  # indices: a row of arr itself
    both(lambda m, x: pal(m)(x, np.array([[2, 0, 1]]), x[0:1], 0))  # values
    both(lambda m, x: pal(m)(x, np.array([0, 4]), x.reshape(-1)[7:9], None))
    both(lambda m, x: add(m)(x, [2, 0, 2], x[1]))
    both(lambda m, x: add(m)(x.reshape(-1), [8, 0, 8], x.reshape(-1)[8:9]))
    both(lambda m, x: take(m)(x.reshape(-1), [8, 7, 6], out=x.reshape(-1)[0:3]))
    both(lambda m, x: take(m)(np.arange(10, 19), x.reshape(-1)[0:3], out=x.reshape(-1)[0:3]))
    both(lambda m, x: take(m)(x, [2, 0], axis=1, out=x[:, 1:]))  # strided out, overlapping


def test_take_into_an_out_of_another_dtype_as_numpy():
    """numpy's take writes into an out of another dtype when that dtype
    casts to the data's safely (int16 for float64 data: the result then cast
    into out, truncating and wrapping), and refuses the others (float32 for
    int64 data); from numpy 2.5 it takes every out, with a DeprecationWarning
    where the data's dtype does not cast to out's under same_kind. tensorjit
    refused every out but one of the data's dtype; now it does as numpy does."""
    rng = np.random.default_rng(7)
    types = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16,
             np.float32, np.float64]
    for data_type in types:
        a = (rng.standard_normal(40) * 300).astype(data_type)
        idx = rng.integers(-40, 40, size=(3, 2))
        for out_type in types:
            want, got = np.zeros((3, 2), out_type), np.zeros((3, 2), out_type)
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings(record=True) as theirs:
                    warnings.simplefilter("always")
                    np.take(a, idx, out=want)
            except TypeError:
                with pytest.raises(tensorjit.TypeMismatch, match="safely"):
                    tnp.take(a, idx, out=got)
                assert not got.any()  # untouched
                continue
            with np.errstate(all="ignore"), warnings.catch_warnings(record=True) as ours:
                warnings.simplefilter("always")
                assert tnp.take(a, idx, out=got) is got
            np.testing.assert_array_equal(got, want, err_msg=f"{data_type} into {out_type}")
            deprecated = [any(issubclass(w.category, DeprecationWarning) for w in ws)
                          for ws in (theirs, ours)]
            assert deprecated[0] == deprecated[1], (data_type, out_type, deprecated)


def test_small_calls_keep_numpys_answers():
    """The calls the functions serve without their general checks (an
    ndarray a, native int32 or int64 index arrays, nothing to broadcast):
    negative and out-of-range indices, a scalar index's numpy scalar, out=,
    each mode, as numpy answers them; a bad index writes nothing."""
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    for idx in (np.array([-1, 0, 3]), np.array([-4, 2], np.int32)):
        np.testing.assert_array_equal(tnp.take(a, idx, axis=0), np.take(a, idx, axis=0))
    for scalar in (3, -1, np.int64(7)):
        got, want = tnp.take(a, scalar), np.take(a, scalar)
        assert type(got) is type(want) and got == want  # a numpy scalar, not a 0-D array
    out = np.empty(3, np.float32)
    assert tnp.take(a, np.array([-1, 0, 19]), out=out) is out
    np.testing.assert_array_equal(out, [19.0, 0.0, 19.0])
    wild = np.array([-41, -6, 23, 5, 0])
    for mode in ("wrap", "clip"):
        for axis in (None, 1, -2):
            np.testing.assert_array_equal(tnp.take(a, wild, axis=axis, mode=mode),
                                          np.take(a, wild, axis=axis, mode=mode))
    with pytest.raises(tensorjit.IndexOutOfRange):
        tnp.take(a, np.array([0, 5]), axis=1)
    i2 = np.array([[-1, 0], [4, -5], [2, 2], [0, -2]])
    np.testing.assert_array_equal(tnp.take_along_axis(a, i2, 1), np.take_along_axis(a, i2, 1))
    with pytest.raises(tensorjit.IndexOutOfRange):
        tnp.take_along_axis(a, i2 + 3, 1)
    for values in (np.float32(-1.5), 7, np.full((4, 2), 2.5, np.float32)):
        got, want = a.copy(), a.copy()
        tnp.put_along_axis(got, i2, values, 1)
        np.put_along_axis(want, i2, values, 1)
        np.testing.assert_array_equal(got, want)
    before = a.copy()
    with pytest.raises(tensorjit.IndexOutOfRange):
        tnp.put_along_axis(a, np.array([[0, 5]] * 4), 1.0, 1)
    np.testing.assert_array_equal(a, before)
