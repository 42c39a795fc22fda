"""The C extension's own rules: output shapes, array layouts, out=, errors,
families, and the GIL, each against numpy or the library's own answer."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(5)


def rand_shape(rank, low=1, high=5):
    return tuple(int(d) for d in RNG.integers(low, high, size=rank))


@pytest.mark.parametrize("trial", range(40))
def test_call_shapes_are_the_librarys(trial):
    # A call takes its output shape from the op's formula (no library plan
    # per new length); it must be exactly what jit_sig_bind gives.
    rd = int(RNG.integers(1, 4))
    data_shape = rand_shape(rd)
    axis = int(RNG.integers(-rd, rd))
    a = axis % rd
    ri = int(RNG.integers(0, 3)) + min(a, 1)
    b = int(RNG.integers(0, min(a, ri) + 1))
    idx_shape = data_shape[:b] + rand_shape(ri - b, 0, 4)
    data = RNG.standard_normal(data_shape).astype(np.float32)
    idx = RNG.integers(0, data_shape[a], size=idx_shape)
    k = tensorjit.compile_dynamic("gather", [None] * rd, [None] * ri, dtype=np.float32,
                                  index_dtype=idx.dtype, axis=axis, batch_dims=b)
    got = tensorjit.gather(data, idx, axis, b)
    assert got.shape == k.bind(data.shape, idx.shape)
    np.testing.assert_array_equal(got, k(data, idx))
    ishape = tuple(int(RNG.integers(1, s + 1)) for s in data_shape)
    eidx = RNG.integers(0, data_shape[a], size=ishape[:a] + (data_shape[a] + 1,) + ishape[a + 1:])
    ke = tensorjit.compile_dynamic("scatter_elements_update", [None] * rd, [None] * rd,
                                   [None] * rd, dtype=np.float32, index_dtype=eidx.dtype,
                                   axis=axis)
    upd = RNG.standard_normal(eidx.shape).astype(np.float32)
    got = tensorjit.scatter_elements_update(data, eidx, upd, axis)
    assert got.shape == ke.bind(data.shape, eidx.shape, upd.shape) == data.shape


def test_dims_that_break_a_rule_raise_and_leave_out_alone():
    data = np.ones((3, 4), np.float32)
    idx = np.zeros((2, 2), np.int64)  # batch_dims=1: idx.shape[0] must be data's 3
    with pytest.raises(tensorjit.SignatureError):
        tensorjit.gather(data, idx, 1, 1)
    out = np.full((2, 2), 7, np.float32)
    with pytest.raises(ValueError):
        tensorjit.gather_elements(data, np.zeros((2, 2), np.int64), 1, out=out)
    assert (out == 7).all()


@pytest.mark.parametrize("layout", ["strided", "reversed", "fortran", "swapped", "unaligned",
                                    "list"])
def test_any_layout_gives_numpys_result(layout):
    base = RNG.standard_normal((6, 8)).astype(np.float64)
    if layout == "strided":
        data = base[::2, ::3]
    elif layout == "reversed":
        data = base[::-1]
    elif layout == "fortran":
        data = np.asfortranarray(base)
    elif layout == "swapped":
        data = base.astype(">f8")
    elif layout == "unaligned":
        raw = np.zeros(base.nbytes + 1, np.uint8)
        data = raw[1:].view(np.float64).reshape(base.shape)
        data[...] = base
        assert not data.flags.aligned
    else:
        data = base.tolist()
    idx = np.array([1, -1, 0])
    np.testing.assert_array_equal(tensorjit.gather(data, idx[::-1], 0,
                                                   index_policy="negative-wraps"),
                                  np.take(np.asarray(data), idx[::-1], 0))


def test_out_rules():
    data = RNG.standard_normal((5, 3)).astype(np.float32)
    idx = np.array([4, 0])
    for bad, words in [(np.empty((2, 3), np.float64), "dtype"),
                       (np.empty((3, 3), np.float32), "shape"),
                       (np.empty((3, 2), np.float32).T, "C-contiguous"),
                       ([[0.0] * 3] * 2, "numpy array")]:
        with pytest.raises(tensorjit.SignatureError, match=words):
            tensorjit.gather(data, idx, 0, out=bad)
    ro = np.empty((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tensorjit.gather(data, idx, 0, out=ro)
    with pytest.raises(ValueError, match="overlaps data"):
        tensorjit.gather(data, idx, 0, out=data[:2])
    # a scatter runs in place on out=data, but not on a part of it
    upd = np.ones((1, 3), np.float32)
    assert tensorjit.scatter_update(data, np.array([2]), upd, 0, out=data) is data
    assert (data[2] == 1).all()
    with pytest.raises(ValueError, match="only out=data"):
        tensorjit.scatter_update(data[:4], np.array([2]), upd, 0, out=data[1:])


def test_errors_are_tensorjit_errors_of_the_standard_kinds():
    assert issubclass(tensorjit.SignatureError, ValueError)
    assert issubclass(tensorjit.IndexOutOfRange, IndexError)
    assert issubclass(tensorjit.TypeMismatch, TypeError)
    assert issubclass(tensorjit.KernelError, RuntimeError)
    data = np.zeros((3, 2), np.float32)
    for call, kind in [(lambda: tensorjit.gather(data, np.array([3]), 0), IndexError),
                       (lambda: tensorjit.gather(data, np.array([0.5]), 0), TypeError),
                       (lambda: tensorjit.gather(data, np.array([0]), 5), ValueError),
                       (lambda: tensorjit.gather(data.astype(np.complex64), [0], 0), TypeError),
                       (lambda: tensorjit.gather(data, [0], 0, index_policy=3), TypeError),
                       (lambda: tensorjit.scatter_nd_update(data, [[0]], [[1, 2]], "avg"),
                        ValueError)]:
        with pytest.raises(tensorjit.Error) as e:
            call()
        assert isinstance(e.value, kind)
    with pytest.raises(TypeError, match="unexpected keyword"):
        tensorjit.gather(data, [0], axes=0)
    with pytest.raises(TypeError, match="missing required argument 'axis'"):
        tensorjit.gather_elements(data, [[0]])
    with pytest.raises(TypeError, match="multiple values"):
        tensorjit.gather(data, [0], 0, axis=0)


def test_dynamic_kernel_repr_and_info():
    k = tensorjit.compile_dynamic("gather", (None, 4), (None,), dtype=np.float16,
                                  index_dtype=np.int32)
    text = repr(k)
    assert "Gather" in text and "f16" in text and "(None, 4)" in text
    info = k.info()
    assert info["dynamic"] and info["out_bytes"] == -1
    call_info = tensorjit.gather_info(np.zeros((7, 4), np.float16), np.zeros(3, np.int32), 0)
    assert call_info["dynamic"] and call_info["out_bytes"] == 3 * 4 * 2


def test_stats_count_compiles_and_live_kernels():
    tensorjit.shutdown()
    assert tensorjit.stats()["kernels"] == 0
    start = tensorjit.stats()["compiles"]
    for dtype in (np.int8, np.int16, np.int32):
        for n in (1, 5, 9):
            tensorjit.gather(np.zeros((10, 3), dtype), np.arange(n), 0)
    stats = tensorjit.stats()
    assert stats["compiles"] - start == 3 and stats["kernels"] == 3
    assert stats["kernels"] <= stats["max_kernels"]


def test_the_table_starts_over_at_its_cap_and_results_stay_right():
    from tensorjit import _tensorjit
    tensorjit.shutdown()
    _tensorjit._set_max_families(3)
    try:
        dtypes = [np.int8, np.int16, np.int32, np.int64, np.float32, np.float64]
        for round in range(2):
            for dtype in dtypes:
                data = RNG.integers(0, 100, (6, 2)).astype(dtype)
                idx = RNG.integers(0, 6, 4)
                np.testing.assert_array_equal(tensorjit.gather(data, idx, 0), data[idx])
                assert 1 <= tensorjit.stats()["kernels"] <= 3
    finally:
        _tensorjit._set_max_families(512)


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"),
                    reason="kernels are released on x86-64 only (entry stubs)")
def test_a_kernel_limit_frees_the_families_the_table_hands_back():
    """Without a limit the library keeps every kernel the module's table
    hands back (a trial: 6000 row widths kept 6.3 MB of code); with one it
    frees them. A process of its own: the limit is the whole process's."""
    script = """
import numpy as np, tensorjit
from tensorjit import _tensorjit
limit = int(__import__("sys").argv[1])
if limit:
    tensorjit.set_kernel_limit(limit)
_tensorjit._set_max_families(4)
for cols in range(1, 41):  # a family each: the row width is the bag kernel's
    table = np.arange(10 * cols, dtype=np.float32).reshape(10, cols)
    got = tensorjit.embedding_bag_offsets(table, np.array([1, 2, 9]), np.array([0, 2]))
    np.testing.assert_array_equal(got, np.stack([table[1] + table[2], table[9]]))
print(tensorjit.stats()["library_kernels"])
"""
    counts = [int(subprocess.run([sys.executable, "-c", script, str(limit)], check=True,
                                 capture_output=True, text=True).stdout)
              for limit in (0, 6)]
    assert counts[0] >= 40  # every family's code kept
    assert counts[1] <= 6 + 4  # the limit, exceeded by at most the table's held families
    with pytest.raises(tensorjit.SignatureError, match="set_kernel_limit"):
        tensorjit.set_kernel_limit(-1)
    with pytest.raises(tensorjit.SignatureError, match="set_kernel_limit"):
        tensorjit.set_kernel_limit(max_kernels=5, max_code_bytes=-1)  # the names it documents


def test_threads_first_calling_one_family_count_one_compile():
    """Threads that meet a new family at once each compile it with the GIL
    released; the library hands them one kernel, and stats() counted one
    compile per thread (4 against library_kernels' 1)."""
    tensorjit.shutdown()
    start = tensorjit.stats()["compiles"]
    go = threading.Barrier(4)
    data = np.arange(40, dtype=np.float32).reshape(10, 4)
    results = [None] * 4

    def first_call(t):
        go.wait()
        results[t] = tensorjit.gather_elements(data, np.full((10, 4), t % 4), 1)

    threads = [threading.Thread(target=first_call, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(4):
        np.testing.assert_array_equal(results[t], np.take_along_axis(data, np.full((10, 4), t), 1))
    stats = tensorjit.stats()
    assert stats["compiles"] - start == 1
    assert stats["kernels"] == 1 and stats["library_kernels"] == 1


def test_threads_clearing_the_table_under_running_kernels():
    # one thread runs long kernels without the GIL while others fill a
    # table of 2 families over and over: the running kernel must survive
    from tensorjit import _tensorjit
    _tensorjit._set_max_families(2)
    data = RNG.standard_normal((20000, 64)).astype(np.float32)
    idx = RNG.integers(0, 20000, 8000)
    errors = []

    def big():
        for _ in range(10):
            if not np.array_equal(tensorjit.gather(data, idx, 0), data[idx]):
                errors.append("big")

    def churn(t):
        for i in range(30):
            dtype = [np.int8, np.int16, np.int32, np.uint8, np.uint16][(i + t) % 5]
            small = np.arange(10).astype(dtype)
            if not np.array_equal(tensorjit.gather(small, [3, 1], 0), small[[3, 1]]):
                errors.append("small")

    try:
        threads = [threading.Thread(target=big)] + [
            threading.Thread(target=churn, args=(t,)) for t in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        _tensorjit._set_max_families(512)
    assert not errors


def test_long_calls_run_in_threads_with_the_right_results():
    # the GIL is released around large kernels: threads must not disturb
    # each other's arrays or results
    data = RNG.standard_normal((20000, 64)).astype(np.float32)
    results, errors = {}, []

    def work(t):
        try:
            idx = np.random.default_rng(t).integers(0, 20000, 5000)
            for _ in range(5):
                got = tensorjit.gather(data, idx, 0)
                if not np.array_equal(got, data[idx]):
                    errors.append(t)
            results[t] = True
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4


def test_cache_calls_take_the_keywords_and_paths_they_document(tmp_path):
    """open_cache(dir=...) and cache_stats(clear=...) as their docstrings
    and the stubs write them (both were positional only), dir a
    pathlib.Path too. A process of its own: the cache is the process's."""
    script = """
import pathlib, sys, numpy as np, tensorjit
assert tensorjit.cache_stats() is None
tensorjit.open_cache(dir=pathlib.Path(sys.argv[1]))
tensorjit.gather(np.ones((6, 4), np.float32), np.array([5, 0, 3]))
stats = tensorjit.cache_stats(clear=False)
assert stats["entries"] == 1 and stats["dir"] == sys.argv[1], stats
assert tensorjit.cache_stats(clear=True)["entries"] == 1
assert tensorjit.cache_stats()["entries"] == 0
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")],
                          capture_output=True, text=True)
    assert done.stdout == "ok\n", done.stderr


@pytest.mark.parametrize("call, kind, words", [
    (lambda: tensorjit.gather(np.zeros(3), np.zeros(1, np.int64), 0, 1, 2, 3, 4),
     tensorjit.TypeMismatch, "gather() takes at most 4 positional arguments"),
    (lambda: tensorjit.gather(np.zeros(3), np.zeros(1, np.int64), bogus=1),
     tensorjit.TypeMismatch, "unexpected keyword argument 'bogus'"),
    (lambda: tensorjit.open_cache(1), tensorjit.TypeMismatch,
     "open_cache(): dir must be a folder's path (str, bytes or os.PathLike), not int"),
    (lambda: tensorjit.open_cache("a\0b"), tensorjit.SignatureError,
     "open_cache(): embedded null"),
    (lambda: tensorjit.open_cache("a", "b"), tensorjit.TypeMismatch,
     "open_cache() takes at most 1 argument"),
    (lambda: tensorjit.set_kernel_limit("a", 1), tensorjit.TypeMismatch,
     "set_kernel_limit(): "),
    (lambda: tensorjit.set_kernel_limit(2**70, 1), tensorjit.SignatureError,
     "set_kernel_limit(): "),
    (lambda: tensorjit.cache_stats(bogus=1), tensorjit.TypeMismatch, "bogus"),
    (lambda: tensorjit.gather(indices=np.zeros(1, np.int64)),
     tensorjit.TypeMismatch, "gather() missing required argument 'data'"),
    (lambda: tensorjit.gather(np.zeros(3), np.zeros(1, np.int64), data=np.zeros(3)),
     tensorjit.TypeMismatch, "gather() got multiple values for argument 'data'"),
])
def test_python_argument_errors_are_the_package_errors(call, kind, words):
    """SPEC 8: every error the package raises is a tensorjit.Error. Python's
    own argument parsing raised plain TypeError, OverflowError and
    ValueError (open_cache(1), set_kernel_limit('a', 1), an unknown
    keyword); they are TypeMismatch (a TypeError) or SignatureError (a
    ValueError) now, saying what Python said, after the call's name."""
    with pytest.raises(kind) as raised:
        call()
    assert isinstance(raised.value, tensorjit.Error)
    assert words in str(raised.value), str(raised.value)
    # as every other message of the package, whichever parser refused it
    assert str(raised.value).startswith("tensorjit: "), str(raised.value)


def test_every_public_function_has_a_signature_and_says_what_it_does():
    """help() and inspect.signature on every name of __all__: the *_info
    calls said only their arguments, and six calls had no signature."""
    import inspect
    for name in tensorjit.__all__:
        fn = getattr(tensorjit, name)
        if not callable(fn) or isinstance(fn, type):
            continue
        inspect.signature(fn)  # raises ValueError where there is none
        doc = inspect.getdoc(fn) or ""
        assert len(doc) > 40 and not doc.startswith(name + "("), (name, doc)
    assert "engine" in tensorjit.gather_info.__doc__


def test_an_index_of_no_kernel_type_says_integers_and_why_numpy_made_object():
    """[2**70] is numpy's object dtype: the message said indices 'must be
    bool, an integer or a float dtype' (data's rule; indices take integers
    only) and not why the dtype was object."""
    table = np.ones((4, 3), np.float32)
    with pytest.raises(tensorjit.TypeMismatch,
                       match=r"indices has dtype dtype\('O'\); it must be an integer dtype "
                             r"\(numpy made object, as it does for a Python int beyond 64 bits"):
        tensorjit.gather(table, [2**70])
    with pytest.raises(tensorjit.TypeMismatch, match=r"offsets .* must be an integer dtype \("):
        tensorjit.embedding_bag_offsets(table, [1], [2**64])
    with pytest.raises(tensorjit.TypeMismatch, match=r"indices .*'<U1'\); it must be an integer "
                                                     r"dtype$"):
        tensorjit.gather(table, ["a"])
    with pytest.raises(tensorjit.TypeMismatch, match=r"data .* must be bool, an integer or a "
                                                     r"float dtype"):
        tensorjit.gather(np.array(["x"]), [0])
