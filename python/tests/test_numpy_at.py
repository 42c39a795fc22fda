"""tensorjit.numpy's add_at, subtract_at, multiply_at, maximum_at and
minimum_at against numpy's own ufunc.at, bit for bit (floats compared as
integers of their width): random calls, and the cases where arithmetic has
corners (signed zeros, NaN payloads and signs, infinities, subnormals,
integer wraparound). Each check also says who served the call: the
library's ScatterNDUpdate, or numpy's ufunc.at where tensorjit.numpy hands
it over by its documented rules (python/README.md, "numpy's and torch's
names")."""

import itertools
import os

import numpy as np
import pytest

import tensorjit
import tensorjit.numpy as tnp

AT = {"add_at": np.add, "subtract_at": np.subtract, "multiply_at": np.multiply,
      "maximum_at": np.maximum, "minimum_at": np.minimum}
FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def bits(x):
    x = np.asarray(x)
    return x.view(BITS[x.dtype.itemsize]) if x.dtype.kind == "f" else x


@pytest.fixture
def served(monkeypatch):
    """Counts of the calls the library served (its scatter_nd_update, or
    _at_plain, the C path of the plainest calls, when it says it served one)
    and numpy's ufunc.at (tensorjit.numpy's hand-over) served."""
    count = {"library": 0, "numpy": 0}
    lib, plain, handed = tnp._tj.scatter_nd_update, tnp._tj._at_plain, tnp._numpy_at

    def library(*args, **kwargs):
        count["library"] += 1
        return lib(*args, **kwargs)

    def at_plain(*args):
        done = plain(*args)
        count["library"] += done
        return done

    def numpy(*args):
        count["numpy"] += 1
        return handed(*args)

    monkeypatch.setattr(tnp._tj, "scatter_nd_update", library)
    monkeypatch.setattr(tnp._tj, "_at_plain", at_plain)
    monkeypatch.setattr(tnp, "_numpy_at", numpy)
    return count


def both(name, a, indices, b):
    """(numpy's result, tensorjit's) of name(a, indices, b) on copies of a."""
    want, got = a.copy(), a.copy()
    with np.errstate(all="ignore"):
        AT[name].at(want, indices, b)
        getattr(tnp, name)(got, indices, b)
    return want, got


def assert_same_bits(want, got, msg=""):
    assert want.dtype == got.dtype
    np.testing.assert_array_equal(bits(got), bits(want), err_msg=msg)


def rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "f":  # no zeros, no NaNs: every call is the library's
        return (rng.standard_normal(size=shape) * 50 + 0.5).astype(dtype) + dtype.type(0.25)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("name", list(AT))
@pytest.mark.parametrize("dtype", FLOATS + INTS + [np.bool_])
@pytest.mark.parametrize("seed", range(3 if os.environ.get("TENSORJIT_NUMPY_AT_ALL") else 1))
def test_random_calls_match_numpy_bit_for_bit(name, dtype, seed, served):
    if name == "subtract_at" and dtype == np.bool_:
        pytest.skip("numpy refuses a boolean subtract (test_boolean_subtract_is_a_type_error)")
    rng = np.random.default_rng(seed * 100 + list(AT).index(name))
    calls = 0
    for _ in range(6):
        shape = tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 4))))
        a = rand(rng, shape, dtype)
        k = int(rng.integers(1, len(shape) + 1))
        n = int(rng.integers(0, 12))
        # indices in [-s, s): negatives and, over small dims, duplicates
        idx = [rng.integers(-shape[d], shape[d], size=n) for d in range(k)]
        if k == 2 and rng.integers(0, 2):  # index arrays that broadcast: an outer product
            idx = [idx[0][:, None], idx[1][None, :3]]
        sel = np.broadcast_shapes(*(i.shape for i in idx)) + shape[k:]
        b_shape = sel[int(rng.integers(0, len(sel) + 1)):]  # b broadcasts to the selection
        b = rand(rng, b_shape, dtype)
        indices = tuple(idx) if k > 1 else idx[0]
        want, got = both(name, a, indices, b)
        assert_same_bits(want, got, f"{name} {np.dtype(dtype)} {shape} {indices} {b}")
        calls += 1
    assert served == {"library": calls, "numpy": 0}


def nan(dtype, payload=0, negative=False):
    """A quiet NaN of dtype with payload in its low mantissa bits."""
    u = BITS[np.dtype(dtype).itemsize]
    v = np.array(np.nan, dtype).view(u) | u(payload)
    if negative:
        v |= u(1 << (8 * np.dtype(dtype).itemsize - 1))
    return v.view(dtype)[()]


def specials(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    return [0.0, -0.0, np.inf, -np.inf, 1.5, -2.0, tiny, -tiny, np.nan, -np.nan,
            nan(dtype, 1), nan(dtype, 3, negative=True), nan(dtype, 2)]


@pytest.mark.parametrize("name", list(AT))
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_corners_match_numpy_bit_for_bit(name, dtype):
    """Every pair of special values, as a's element and b's, once, twice at
    one index (applied in order) and interleaved with a's own value."""
    for x, y in itertools.product(specials(dtype), repeat=2):
        a = np.array([x, x, 1.0], dtype)
        for idx, b in (([0], [y]), ([0, 0], [y, y]), ([1, 1, 1], [y, x, y]),
                       ([0, -3, 2], [y, -y, x]), ([-1, 2], [x, y])):
            want, got = both(name, a, idx, np.array(b, dtype))
            assert_same_bits(want, got, f"{name} a={bits(a)} idx={idx} b={b}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["add_at", "subtract_at", "multiply_at", "maximum_at",
                                  "minimum_at"])
def test_f32_f64_nans_and_infinities_are_the_librarys(name, dtype, served):
    """Which NaN survives (a's or b's, payload and sign), inf - inf, 0 * inf:
    the library's bits are numpy's, so these calls stay on the library."""
    a = np.array([nan(dtype, 5), np.inf, 0.0, -np.inf, nan(dtype, 1, negative=True)], dtype)
    b = np.array([nan(dtype, 7, negative=True), np.inf, np.inf, -1.0, 3.0], dtype)
    want, got = both(name, a, [0, 1, 2, 3, 4, 0], np.append(b, nan(dtype, 9)))
    assert_same_bits(want, got)
    assert served == {"library": 1, "numpy": 0}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum_at", "minimum_at"])
def test_signed_zero_ties(name, dtype, served):
    """np.maximum(0.0, -0.0) and np.maximum(-0.0, 0.0) (and minimum): numpy
    1.24's ufunc.at keeps the later of a tie for f32 and f64 (the earlier for
    f16, where np.maximum itself keeps the later), the library the earlier;
    a call where such a tie can occur is numpy's. One where it cannot (b's
    zeros all of a's zeros' sign, or no zero in b) stays on the library."""
    for x, y in ((0.0, -0.0), (-0.0, 0.0)):
        want, got = both(name, np.array([x], dtype), [0], np.array([y], dtype))
        assert_same_bits(want, got)
    assert served == {"library": 0, "numpy": 2}
    b = np.array([-0.0, 0.0, -0.0, 0.0], dtype)
    want, got = both(name, np.array([0.0, 0.0], dtype), [0, 0, 0, 1], b)
    assert_same_bits(want, got)  # zeros of both signs in b: numpy's
    assert served == {"library": 0, "numpy": 3}
    want, got = both(name, np.array([0.0, -1.0, 3.0], dtype), [0, 1, 0], 0.0)  # a clamp at 0
    assert_same_bits(want, got)
    want, got = both(name, np.array([-0.0, 2.0], dtype), [0, 1], np.array([-0.0, -2.0], dtype))
    assert_same_bits(want, got)
    want, got = both(name, np.array([-0.0, 2.0], dtype), [0, 1], np.array([1.0, -2.0], dtype))
    assert_same_bits(want, got)
    # numpy 2's ufunc.at makes a float64 array of the Python 0.0: f16 and f32
    # in float64's loop, which numpy serves (f64 stays the library's)
    promoted = NUMPY2 and dtype != np.float64
    assert served == ({"library": 2, "numpy": 4} if promoted else {"library": 3, "numpy": 3})


def test_f16_nans_go_to_numpy_and_the_rest_stays(served):
    """The library computes f16 in f32 and rounds back, which drops a NaN's
    payload (numpy's keeps it): a NaN in b or in a's selected elements sends
    the call to numpy; one elsewhere in a does not."""
    a = np.array([1.0, nan(np.float16, 1), 2.0], np.float16)
    for name in AT:
        want, got = both(name, a, [0, 0], np.array([nan(np.float16, 3), 1.0], np.float16))
        assert_same_bits(want, got)
        want, got = both(name, a, [1], np.float16(2.0))
        assert_same_bits(want, got)
    assert served == {"library": 0, "numpy": 10}
    for name in AT:
        want, got = both(name, a, [0, 2, -1], np.float16(0.5))
        assert_same_bits(want, got)
    assert served == {"library": 5, "numpy": 10}


def test_integer_wraparound_is_the_librarys(served):
    """uint8 subtract below 0 and int8 multiply overflow wrap as numpy's."""
    a = np.array([0, 5, 250], np.uint8)
    want, got = both("subtract_at", a, [0, 0, 1, 2], np.array([1, 7, 6, 255], np.uint8))
    assert_same_bits(want, got)
    assert got.tolist() == [248, 255, 251]
    a = np.array([100, -128, 3], np.int8)
    want, got = both("multiply_at", a, [0, 1, 2, 2, 2], np.array([3, -1, 100, 2, -1], np.int8))
    assert_same_bits(want, got)
    for name in AT:
        for dtype in INTS:
            info = np.iinfo(dtype)
            a = np.array([info.min, info.max, 0], dtype)
            b = np.array([info.max, info.min, info.max, 2, info.min], dtype)
            want, got = both(name, a, [0, 1, 2, 0, 1], b)
            assert_same_bits(want, got, f"{name} {np.dtype(dtype)}")
    assert served == {"library": 2 + 5 * len(INTS), "numpy": 0}


@pytest.mark.parametrize("name", ["add_at", "multiply_at", "maximum_at", "minimum_at"])
def test_bool_as_numpy(name, served):
    a = np.array([True, False, False, True])
    for b in ([True, False, True], True, False):
        want, got = both(name, a, [1, 1, 3], b)
        assert_same_bits(want, got)
    assert served == {"library": 3, "numpy": 0}


def test_boolean_subtract_is_a_type_error():
    a = np.array([True, False])
    with pytest.raises(TypeError):
        np.subtract.at(a.copy(), [0], True)
    with pytest.raises(tensorjit.TypeMismatch, match="boolean subtract"):
        tnp.subtract_at(a, [0], True)
    assert a.tolist() == [True, False]
    # a bad index is numpy 1's IndexError first (numpy 2 refuses the
    # subtract before it reads an index); here the index first, either way,
    # and nothing written
    with pytest.raises(TypeError if NUMPY2 else IndexError):
        np.subtract.at(a.copy(), [5], True)
    with pytest.raises(tensorjit.IndexOutOfRange):
        tnp.subtract_at(a, [5], True)
    assert a.tolist() == [True, False]


def test_boolean_a_integer_b_subtract_is_numpys(served):
    """numpy subtracts an integer b from bool a in b's type and casts back:
    only a subtract in bool is refused."""
    for b in (1, np.array([1, 0], np.int8), 2.5):
        want, got = both("subtract_at", np.array([True, False]), [0, 1], b)
        assert_same_bits(want, got, repr(b))
    assert served == {"library": 0, "numpy": 3}


def test_b_numpy_promotes_goes_to_numpy(served):
    """numpy computes in the type it promotes a's and b's to and casts back:
    an f64 b on f32 a rounds once there (the library's f32 sum would round
    b first), 200 on int8 a is int16's 200 for maximum. Integer b on integer
    a for add, subtract and multiply stays on the library: wrapped to a's
    type, it gives the same bits."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(5).astype(np.float32)
    for name in AT:
        want, got = both(name, a, [0, 1, 1, 4], rng.standard_normal(4))
        assert_same_bits(want, got, name)
    i8 = np.array([5, -3, 100], np.int8)
    for name in AT:
        want, got = both(name, i8, [0, 1, 2, 2], 200)
        assert_same_bits(want, got, name)
        want, got = both(name, i8, [0, 2], 1.5)  # a float b: numpy's loop and cast
        assert_same_bits(want, got, name)
    # 200 on int8 for add, subtract and multiply is the library's in numpy 1
    # (wrapped, the same bits); numpy 2's ufunc.at makes an int64 array of it
    # (computed in int64 and wrapped back): numpy serves those calls here
    assert served == ({"library": 0, "numpy": 3 * len(AT)} if NUMPY2 else
                      {"library": 3, "numpy": 3 * len(AT) - 3})
    for name in ("add_at", "subtract_at", "multiply_at"):
        want, got = both(name, np.array([250, 3], np.uint8), [0, 0, 1], np.array([7, -300, 1000]))
        assert_same_bits(want, got, name)
    want, got = both("maximum_at", np.array([1.0, 2.0], np.float16), [0, 1], 1.5)  # a scalar: f16
    assert_same_bits(want, got)  # (numpy 2: float64's loop, numpy's)
    assert served == ({"library": 3, "numpy": 3 * len(AT) + 1} if NUMPY2 else
                      {"library": 7, "numpy": 3 * len(AT) - 3})


@pytest.mark.parametrize("name", list(AT))
def test_errors_as_numpy_and_nothing_written(name):
    """An index out of range is numpy's IndexError and writes nothing (numpy's
    own ufunc.at writes the updates before it: here none, on the library's
    path and on a call handed to numpy alike); float indices an IndexError;
    more indices than a's dims an IndexError."""
    for a, b in ((np.arange(5.0), 1.0), (np.zeros(5, np.float16), np.float16(np.nan)),
                 (np.zeros(5, np.int8), 200)):
        before = a.copy()
        with pytest.raises(IndexError):
            AT[name].at(a.copy(), [0, 5], b)
        for bad in ([0, 5], [-6], ([0], [0])):
            with pytest.raises(IndexError):
                AT[name].at(a.copy(), bad, b)
            with pytest.raises(tensorjit.IndexOutOfRange):
                getattr(tnp, name)(a, bad, b)
            assert_same_bits(before, a)
        with pytest.raises(IndexError):
            AT[name].at(a.copy(), np.array([0.0]), b)
        with pytest.raises(IndexError):
            getattr(tnp, name)(a, np.array([0.0]), b)
        assert_same_bits(before, a)


@pytest.mark.parametrize("name", list(AT))
def test_whole_array_tuples_and_negative_indices(name, served):
    a = np.arange(1.0, 13.0).reshape(3, 4)
    for indices, b in (((), 2.0), (([0, -1, 0], [1, 1, 1]), np.array([3.0, 0.5, 4.0])),
                       (np.array([-1, -1, 2]), np.arange(2.0, 6.0)),
                       ((np.array([[0], [2]]), np.array([[1, -1, 1]])), 1.25)):
        want, got = both(name, a, indices, b)
        assert_same_bits(want, got, f"{name} {indices}")
    assert served == {"library": 4, "numpy": 0}


@pytest.mark.parametrize("name", list(AT))
def test_an_array_ufunc_override_gets_numpys_call(name):
    seen = []

    class Logged(np.ndarray):
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            seen.append((ufunc, method))
            inputs = tuple(np.asarray(x) if isinstance(x, Logged) else x for x in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)

    a = np.array([1.0, 4.0, 2.0]).view(Logged)
    getattr(tnp, name)(a, [0, 0], 3.0)
    want = np.array([1.0, 4.0, 2.0])
    AT[name].at(want, [0, 0], 3.0)
    assert seen == [(AT[name], "at")]
    assert_same_bits(want, np.asarray(a))


@pytest.mark.parametrize("name", ["add_at", "subtract_at", "multiply_at"])
def test_python_int_that_does_not_fit_goes_to_numpy_2(name, served, monkeypatch):
    # numpy 2 (NEP 50) refuses a Python int that does not fit int8 with an
    # OverflowError, where numpy 1 computed in a wider type and cast back
    # (the same bits as the library's wrap): under numpy 2 such a call is
    # numpy's own, whatever numpy is installed here; one that fits stays
    monkeypatch.setattr(tnp, "_NUMPY2", True)
    a = np.arange(4, dtype=np.int8)
    try:
        getattr(tnp, name)(a, [0, 1], 200)
    except OverflowError:
        pass  # numpy 2's answer, where numpy 2 is installed
    assert served == {"library": 0, "numpy": 1}
    getattr(tnp, name)(np.arange(4, dtype=np.int8), [0, 1], 100)
    assert served == {"library": 1, "numpy": 1}


# (name, dtype, b, served by the library) under numpy 2's rule for a Python
# number b (tnp._numpy2_number), whatever numpy is installed: the library
# where numpy's loop, int64 / float64 or a's own type, gives its bits
NUMPY2_NUMBERS = [
    ("add_at", np.float32, 1.5, True), ("multiply_at", np.float32, -0.1015625, True),
    ("subtract_at", np.float32, 16777217, False),  # not a float32: rounded twice
    ("add_at", np.float32, 0.1, False), ("add_at", np.float32, 3.4028234663852886e38, True),
    ("add_at", np.float32, 3.4e38, False), ("add_at", np.float32, np.inf, True),
    ("add_at", np.float32, -2**24, True), ("add_at", np.float32, 2**63, False),
    ("add_at", np.float32, np.nan, False), ("maximum_at", np.float32, 1.5, False),
    ("minimum_at", np.float32, 7, False),
    ("add_at", np.float64, 0.1, True), ("add_at", np.float64, np.nan, True),
    ("maximum_at", np.float64, 2.5, True), ("minimum_at", np.float64, 0.0, False),
    ("add_at", np.float64, 2**53 + 1, False), ("multiply_at", np.float64, -2**62, True),
    ("add_at", np.float16, 1.0, False), ("add_at", np.int8, 1.5, False),
    ("add_at", np.int8, -128, True), ("maximum_at", np.uint8, 255, True),
    ("minimum_at", np.int16, -3, True), ("subtract_at", np.uint32, 2**32 - 1, True),
    ("add_at", np.uint64, 5, False), ("add_at", np.uint64, 2**63 + 5, True),
    ("multiply_at", np.int64, -2**63, True), ("add_at", np.int64, 2**63, False),
    ("add_at", np.int32, True, False),
]


@pytest.mark.parametrize("name,dtype,b,library", NUMPY2_NUMBERS)
def test_python_number_b_under_numpy_2s_rule(name, dtype, b, library, served, monkeypatch):
    """A Python number b under numpy 2's rule: served by the library only
    where numpy's loop cannot give other bits, and numpy's bits either way
    (those of the numpy installed: numpy 1 computes these in a's type or
    as numpy 2 does). The others are numpy's own calls, handed over at
    once; float64's and a bool b go on to the general path, which asks the
    numpy installed how it promotes."""
    monkeypatch.setattr(tnp, "_NUMPY2", True)
    rng = np.random.default_rng(5)
    a = (rng.integers(0, 100, 6) if np.dtype(dtype).kind in "iu"
         else rng.standard_normal(6) * 1e3).astype(dtype)
    if dtype == np.float32:
        a[0] = 16777216.0  # where 2**24 + 1 rounds
    idx = np.array([0, 2, 2, 5, 0])
    want, got = both(name, a, idx, b)
    assert_same_bits(want, got, f"{name} {np.dtype(dtype)} b={b!r}")
    if library:
        assert served == {"library": 1, "numpy": 0}
    elif NUMPY2 or dtype != np.float64 and type(b) in (int, float):
        assert served == {"library": 0, "numpy": 1}
    summed = name in ("add_at", "subtract_at", "multiply_at")
    assert (tnp._numpy2_number(np.dtype(dtype), b, summed) is not None) == library


@pytest.mark.parametrize("name", list(AT))
def test_numpy_2s_hand_over_checks_the_indices_first(name, served, monkeypatch):
    """A Python number handed to numpy's ufunc.at under numpy 2's rule (0.1
    on float32: numpy's loop may round it otherwise) meets a bad index
    before numpy does: IndexOutOfRange naming it, as the library's path
    words it, and nothing written, for one index array and a tuple; a
    negative index within range is numpy's to wrap."""
    monkeypatch.setattr(tnp, "_NUMPY2", True)
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    before = a.copy()
    calls = ((np.array([1, 0, 4]), "index 4 is out of range for a's dimension 0 of size 4"),
             ((np.array([1, 2], np.int32), np.array([0, -4])),
              "index -4 is out of range for a's dimension 1 of size 3"))
    for indices, message in calls:
        with pytest.raises(tensorjit.IndexOutOfRange, match=message):
            getattr(tnp, name)(a, indices, 0.1)
        assert_same_bits(before, a)
    want, got = both(name, a, (np.array([3, -1, 0]), np.array([-3, 2, 2])), 0.1)
    assert_same_bits(want, got)
    assert served == {"library": 0, "numpy": 1}


@pytest.mark.skipif(tnp._NUMPY2, reason="numpy 2 promotes a Python number by its own rule "
                    "(NEP 50), and tensorjit.numpy's general path decides those calls")
@pytest.mark.parametrize("name", list(AT))
def test_python_number_b_next_to_numpy_1s_promotion_bounds(name, served):
    """A Python number b, on either side of where numpy 1 stops computing in
    a's own float type (tnp._keeps_float: by b's value): the bits are numpy's
    (where numpy computes in float64 and casts back, an add rounds twice), and
    a call numpy computes in a's type stays on the library."""
    a32 = np.array([1.0000001, -3.0e38, 16777216.0, 0.1, 3.0e38], np.float32)
    a64 = np.array([1.0000000000000002, -1e308, 2.0**53, 0.1], np.float64)
    kept32 = [3.3999999e38, -3.3999999e38, np.inf, -np.inf, np.nan, 1e-45, 0.1, 65535, -32768]
    wider32 = [3.4e38, -3.4e38, 3.41e38, 1e300, 65536, -32769, 2**53 + 1]
    kept64 = [1e308, -1e-320, 0.1, 2**63 - 1, 2**63, 2**64 - 1, -2**63, 2**53 + 1]
    idx = np.array([0, 1, 2, 3, 0, -1])  # an array: a list takes the general path
    for a, values in ((a32, kept32 + wider32), (a64, kept64 + [2**64, -2**63 - 1])):
        for b in values:
            want, got = both(name, a, idx, b)
            assert_same_bits(want, got, f"{name} {a.dtype} b={b!r}")
    assert served == {"library": len(kept32) + len(kept64), "numpy": len(wider32) + 2}


@pytest.mark.parametrize("name", list(AT))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.int16])
def test_tuples_of_index_arrays_and_number_b(name, dtype, served):
    """A tuple of index arrays (int32 and int64 mixed, negative, repeated)
    with an array b, a row to broadcast, and a Python number: numpy's bits,
    every call the library's (numpy 1); numpy 2 makes an int64 or float64
    array of a Python number, and the library serves it where that loop's
    bits are its own (tnp._numpy2_number): all but a float32 maximum or
    minimum, which numpy serves."""
    rng = np.random.default_rng(7 + list(AT).index(name))
    a = rand(rng, (4, 5, 3), dtype)
    i = rng.integers(-4, 4, 9).astype(np.int32)
    j = rng.integers(-5, 5, 9)
    i[1], j[1] = i[0], j[0]  # a repeat: applied in order
    number = 3 if np.dtype(dtype).kind in "iu" else 1.5
    for b in (rand(rng, (9, 3), dtype), rand(rng, (3,), dtype), number):
        want, got = both(name, a, (i, j), b)
        assert_same_bits(want, got, f"{name} {np.dtype(dtype)} b={b!r}")
        want, got = both(name, a, (i, j, np.zeros(9, np.int64)), b if np.ndim(b) == 0 else 2)
        assert_same_bits(want, got, f"{name} {np.dtype(dtype)} all three dims")
    promoted = NUMPY2 and dtype == np.float32 and name in ("maximum_at", "minimum_at")
    assert served == ({"library": 2, "numpy": 4} if promoted else {"library": 6, "numpy": 0})


@pytest.mark.parametrize("name", list(AT))
def test_bad_index_on_the_plain_calls_writes_nothing(name):
    """The plainest calls (one index array or a tuple of them, b of the
    selection's shape) meet a bad index in the library: IndexOutOfRange, and
    a is as it was, whichever index array held it."""
    a = np.arange(1.0, 21.0, dtype=np.float32).reshape(4, 5)
    before = a.copy()
    for indices, b in ((np.array([1, 4]), np.ones((2, 5), np.float32)),
                       ((np.array([0, 1]), np.array([2, 5])), np.ones(2, np.float32)),
                       ((np.array([-5, 1], np.int32), np.array([0, 1], np.int32)), 2.0)):
        with pytest.raises(tensorjit.IndexOutOfRange):
            getattr(tnp, name)(a, indices, b)
        assert_same_bits(before, a)


@pytest.mark.parametrize("name", list(AT))
def test_arrays_the_plain_path_does_not_take(name, served):
    """a Fortran-ordered, a strided view, a big-endian array; indices
    uint16, big-endian, strided; b of another byte order: numpy's bits,
    through the general path (the library's for all but the big-endian a,
    whose native b numpy promotes it to: numpy's own call)."""
    rng = np.random.default_rng(11)
    base = rand(rng, (6, 4), np.float32)
    idx = np.array([0, 2, 2, -1])
    cases = [(np.asfortranarray(base), idx, rand(rng, (4, 4), np.float32)),
             (base[::2], np.array([0, 1, -1]), rand(rng, (3, 4), np.float32)),
             (base.astype(">f4"), idx, rand(rng, (4, 4), np.float32)),
             (base, idx.astype(np.uint16) % 6, rand(rng, (4, 4), np.float32)),
             (base, idx.astype(">i8"), rand(rng, (4, 4), np.float32)),
             (base, np.arange(8)[::2] % 6, rand(rng, (4, 4), np.float32)),
             (base, idx, rand(rng, (4, 4), np.float32).astype(">f4"))]
    for a, indices, b in cases:
        want, got = both(name, a, indices, b)
        assert_same_bits(want, got, f"{name} a {a.dtype} {a.flags.f_contiguous} {indices}")
    assert served == {"library": len(cases) - 1, "numpy": 1}
