"""Hostile arguments to every public function of tensorjit, tensorjit.numpy
and tensorjit.torch: huge, negative and empty dims, int64 extremes as indices,
NaN where integers belong, strided, reversed, overlapping, read-only,
byte-swapped and unaligned arrays, object arrays, subclasses, out= aliasing an
input or of the wrong kind, tensors that require grad, kernels freed by
shutdown, malformed strings and wrong argument counts. Each call must either
give the right answer or raise a tensorjit.Error (python/README.md, "Errors")
whose message names the argument: never crash, hang, read what was never
written or leak another class. Run it under the ASan + UBSan build too
(python/README.md, "Memory checks of the extension")."""

import warnings

import numpy as np
import pytest

import tensorjit as tj
from tensorjit import numpy as tnp

I64 = np.iinfo(np.int64)
F32 = np.arange(12, dtype=np.float32).reshape(3, 4)
IDX = np.array([2, 0])


def refused(exc, words, fn, *args, **kw):
    """fn(*args, **kw) raises exc, a tensorjit.Error, naming each of words."""
    with pytest.raises(exc) as info:
        fn(*args, **kw)
    assert isinstance(info.value, tj.Error), f"{type(info.value).__mro__}: {info.value}"
    for w in (words,) if isinstance(words, str) else words:
        assert w in str(info.value), f"{w!r} not in {str(info.value)!r}"
    return info.value


def strided_zeros(shape, dtype=np.float32):
    """An array of shape whose elements all share one (read-only, 0 strides)."""
    return np.broadcast_to(np.zeros(1, dtype), shape)


# --------------------------------------------------------------------------
# tensorjit's own names

@pytest.mark.parametrize("policy", ["error", "negative-wraps", "clamp", "zero-fill",
                                    "negative-wraps-zero-fill"])
@pytest.mark.parametrize("value", [I64.min, I64.min + 1, I64.max, -5, 5, -1])
def test_int64_extremes_as_indices(policy, value):
    idx = np.array([value])
    n = F32.shape[0]
    wraps = policy.startswith("negative") and -n <= value < 0
    inside = value if 0 <= value < n else value + n if wraps else None
    if inside is not None or policy == "clamp":
        want = F32[[inside if inside is not None else min(max(value, 0), n - 1)]]
        np.testing.assert_array_equal(tj.gather(F32, idx, index_policy=policy), want)
    elif "zero-fill" in policy:
        np.testing.assert_array_equal(tj.gather(F32, idx, index_policy=policy),
                                      np.zeros((1, 4), np.float32))
    else:
        refused(IndexOutOfRange, ["indices[0]", str(value)], tj.gather, F32, idx,
                index_policy=policy)
        before = F32.copy()
        refused(IndexOutOfRange, "indices", tj.scatter_update, before, idx,
                np.ones((1, 4), np.float32), 0, index_policy=policy, out=before)
        np.testing.assert_array_equal(before, F32)  # nothing written
        refused(IndexOutOfRange, "indices", tj.gather_nd, F32, np.array([[value, 0]]),
                index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.gather_elements, F32,
                np.full((3, 4), value), 1, index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.scatter_nd_update, F32, np.array([[value]]),
                np.zeros((1, 4), np.float32), index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.scatter_elements_update, F32,
                np.full((3, 4), value), np.zeros((3, 4), np.float32), 1, index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.embedding_bag_offsets, F32,
                np.array([value, 0]), np.array([0, 1]), index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.embedding_bag_packed, F32,
                np.array([[value, 0]]), index_policy=policy)
        refused(IndexOutOfRange, "indices", tj.embedding_segments, F32,
                np.array([value, 0]), np.array([0, 1]), 2, index_policy=policy)


IndexOutOfRange, SignatureError, TypeMismatch, KernelError = (
    tj.IndexOutOfRange, tj.SignatureError, tj.TypeMismatch, tj.KernelError)


def test_uint64_beyond_int64_is_out_of_range():
    refused(IndexOutOfRange, "18446744073709551615", tj.gather, F32,
            np.array([2**64 - 1], np.uint64))
    np.testing.assert_array_equal(
        tj.gather(F32, np.array([2**64 - 1], np.uint64), index_policy="clamp"), F32[[2]])


@pytest.mark.parametrize("axis,exc,word", [
    (I64.min, SignatureError, "axis"), (I64.max, SignatureError, "axis"),
    (2**63, SignatureError, "axis"), (-2**63 - 1, SignatureError, "axis"),
    (2**70, SignatureError, "axis"), (2, SignatureError, "axis"), (-3, SignatureError, "axis"),
    (1.5, TypeMismatch, "axis"), ("0", TypeMismatch, "axis"), (np.float64(1), TypeMismatch,
                                                               "axis")])
def test_bad_axis(axis, exc, word):
    refused(exc, word, tj.gather, F32, IDX, axis)
    refused(exc, word, tj.gather_elements, F32, np.zeros((3, 4), np.int64), axis)
    refused(exc, word, tj.scatter_update, F32, IDX, np.zeros((2, 4), np.float32), axis)


@pytest.mark.parametrize("name,value", [("batch_dims", I64.min), ("batch_dims", 2**31),
                                        ("batch_dims", 5), ("opset", I64.min),
                                        ("opset", 2**31 - 1), ("opset", -1)])
def test_bad_int_attributes(name, value):
    refused(SignatureError, name, tj.gather, F32, IDX, **{name: value})


def test_malformed_names():
    refused(TypeMismatch, "index_policy", tj.gather, F32, IDX, index_policy=3)
    refused(SignatureError, "index_policy", tj.gather, F32, IDX, index_policy="nope")
    refused(SignatureError, "reduction", tj.scatter_nd_update, F32, np.array([[0]]),
            np.zeros((1, 4), np.float32), None)
    refused(SignatureError, "reduction", tj.embedding_bag_offsets, F32, IDX, np.array([0]),
            reduction="none")
    # a NUL ended the C string ("error\0x" was read as "error"); a lone
    # surrogate, which UTF-8 cannot hold, was a UnicodeEncodeError
    for bad in ("error\0x", "\ud800"):
        refused(SignatureError, "index_policy", tj.gather, F32, IDX, index_policy=bad)
        refused(SignatureError, "reduction", tj.scatter_nd_update, F32, np.array([[0]]),
                np.zeros((1, 4), np.float32), bad.replace("error", "sum"))
        refused(SignatureError, "reduction", tj.embedding_bag_offsets, F32, IDX,
                np.array([0]), reduction=bad.replace("error", "sum"))
        refused(SignatureError, "op", tj.compile_dynamic, bad.replace("error", "gather"),
                (None, 4), (None,), dtype=np.float32, index_dtype=np.int64)


@pytest.mark.parametrize("data,word", [
    (np.array([object()] * 3), "data"), (np.array(["a", "b", "c"]), "data"),
    (np.zeros(3, "i4,f4"), "data"), (np.zeros(3, "M8[s]"), "data"),
    (np.zeros(3, np.complex64), "data")])
def test_dtypes_without_a_kernel_type(data, word):
    refused(TypeMismatch, word, tj.gather, data, np.array([0]))


@pytest.mark.parametrize("indices", [np.array([0, None]), np.array([0.5]), np.array([True]),
                                     [2**70], "0", np.array([0, 1], np.float16)])
def test_indices_of_no_integer_type(indices):
    refused(TypeMismatch, "indices", tj.gather, F32, indices)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_strange_layouts_are_read_as_their_values():
    for data in (F32.astype(">f4"), F32[::-1].copy()[::-1], np.asfortranarray(F32),
                 np.frombuffer(b"\0" + F32.tobytes(), np.float32, 12, 1).reshape(3, 4),
                 np.broadcast_to(F32, (3, 4)), np.matrix(F32), np.ma.masked_array(F32)):
        np.testing.assert_array_equal(np.asarray(tj.gather(data, IDX)), F32[IDX])
    for idx in (IDX.astype(">i8"), np.array([0, 2, 1])[::-1][1:], IDX.astype(np.uint8)):
        np.testing.assert_array_equal(tj.gather(F32, idx), F32[np.asarray(idx)])
    np.testing.assert_array_equal(tj.gather(F32, [0] * 100_000), F32[[0] * 100_000])


def test_inputs_numpy_cannot_make_or_copy():
    # numpy's own ValueError / MemoryError came through as they were
    e = refused(SignatureError, "indices", tj.gather, F32, [[0], [1, 2]])  # ragged
    assert isinstance(e.__cause__, ValueError)
    # copies of 2**57 bytes and more: past any address space, so that they
    # fail where the kernel overcommits memory too (4 TiB was taken on a
    # 128 GB machine, and the copy's writes had the process killed)
    e = refused(KernelError, "data", tj.gather, strided_zeros((2**55,)), IDX)
    assert isinstance(e.__cause__, MemoryError)
    refused(KernelError, "indices", tj.gather, F32, strided_zeros((2**54,), np.int64))
    refused(KernelError, "table", tj.embedding_bag_offsets, strided_zeros((3, 2**55)),
            np.zeros(0, np.int64), [0])


def test_zero_size_dims():
    assert tj.gather(np.zeros((0, 4), np.float32), np.zeros(0, np.int64)).shape == (0, 4)
    assert tj.gather(np.zeros((3, 0), np.float32), IDX).shape == (2, 0)
    refused(IndexOutOfRange, "size 0", tj.gather, np.zeros((0, 4), np.float32), [0])
    assert tj.gather(np.zeros((0, 4), np.float32), [0],
                     index_policy="zero-fill").tolist() == [[0] * 4]
    assert tj.embedding_bag_packed(F32, np.zeros((5, 0), np.int64)).tolist() == [[0] * 4] * 5
    assert tj.embedding_bag_offsets(np.zeros((3, 0), np.float32), IDX, [0]).shape == (1, 0)


def test_ranks_at_and_past_the_maximum():
    r = tj.MAX_RANK if hasattr(tj, "MAX_RANK") else tj._tensorjit.MAX_RANK
    assert tj.gather(np.zeros((1,) * r), np.array([0])).shape == (1,) * r
    refused(SignatureError, "rank", tj.gather, F32, np.zeros((1,) * r, np.int64))


def test_results_too_large_to_allocate():
    e = refused(KernelError, ["shape", "bytes"], tj.gather,
                np.empty((0, 2**31, 2**31), np.int8), np.zeros(8, np.int64),
                index_policy="zero-fill")
    assert e.__cause__ is not None
    refused(SignatureError, "more bytes than int64", tj.embedding_segments, F32, [0], [0],
            2**62)


@pytest.mark.parametrize("out,words", [
    (np.zeros((2, 4)), ["out", "dtype"]), (np.zeros((4, 2), np.float32), ["out", "shape"]),
    (strided_zeros((2, 4)), ["out", "read-only"]),
    (np.zeros((2, 8), np.float32)[:, ::2], ["out", "C-contiguous"]),
    (np.zeros((2, 4), ">f4"), ["out", "byte order"]), ([[0] * 4] * 2, ["out", "list"])])
def test_bad_out(out, words):
    refused(SignatureError, words, tj.gather, F32, IDX, out=out)


def test_out_aliasing_an_input():
    ints = np.arange(8, dtype=np.int64)
    idx = np.array([0, 1, 2, 3])
    refused(SignatureError, ["out", "indices"], tj.gather, ints, idx, out=idx)
    refused(SignatureError, ["out", "data"], tj.gather, ints, idx, out=ints[:4])
    refused(SignatureError, ["out", "updates"], tj.scatter_update, ints, idx[:1], ints[:1], 0,
            out=ints)
    refused(SignatureError, ["out", "table"], tj.embedding_bag_offsets, F32, IDX, [0],
            out=F32[:1])
    before = ints.copy()
    got = tj.scatter_update(ints, np.array([1]), np.array([-7]), 0, out=ints)  # in place
    assert got is ints and ints[1] == -7 and (np.delete(ints, 1) == np.delete(before, 1)).all()


def test_missing_and_extra_arguments():
    refused(SignatureError, "data", tj.gather, None, IDX)
    refused(SignatureError, "indices", tj.gather, F32, None)
    refused(TypeMismatch, "foo", tj.gather, F32, IDX, foo=1)
    refused(TypeMismatch, "positional", tj.gather, F32, IDX, 0, 0, 0)
    refused(TypeMismatch, "missing", tj.scatter_update, F32, IDX)
    refused(SignatureError, "scalar", tj.gather, 5, [0])


@pytest.mark.parametrize("offsets,exc,words", [
    (np.array([0, np.nan]), TypeMismatch, "offsets"),
    (np.array([0, -1]), IndexOutOfRange, "offsets[1]"),
    (np.array([2, 0]), IndexOutOfRange, "offsets[1]"),
    (np.array([0, I64.max]), IndexOutOfRange, "offsets[1]"),
    (np.array([I64.min, 0]), IndexOutOfRange, "offsets[0]"),
    (np.array([0, 2], np.int32), TypeMismatch, "offsets"),
    (np.array([[0, 2]]), SignatureError, "offsets")])
def test_bad_offsets(offsets, exc, words):
    refused(exc, words, tj.embedding_bag_offsets, F32, np.array([0, 2, 1]), offsets)


@pytest.mark.parametrize("kw,exc,word", [
    (dict(default_index=I64.min), SignatureError, "default_index"),
    (dict(default_index=2**64), SignatureError, "default_index"),
    (dict(default_index=1.5), TypeMismatch, "default_index"),
    (dict(padding_idx=I64.min), SignatureError, "padding_idx"),
    (dict(padding_idx=I64.max), SignatureError, "padding_idx"),
    (dict(padding_idx="1"), TypeMismatch, "padding_idx"),
    (dict(weights=np.ones(3)), TypeMismatch, "weights"),
    (dict(weights=np.ones(2, np.float32)), SignatureError, "weights"),
    (dict(weights=np.ones(3, np.float32), reduction="max"), SignatureError, "weights"),
    (dict(reduction=3), SignatureError, "reduction"),
    (dict(out=np.zeros((2, 4))), SignatureError, "out")])
def test_bad_bag_arguments(kw, exc, word):
    refused(exc, word, tj.embedding_bag_offsets, F32, np.array([0, 2, 1]), np.array([0, 2]),
            **kw)


@pytest.mark.parametrize("n,exc,word", [
    (I64.min, SignatureError, "num_segments"), (-1, SignatureError, "num_segments"),
    (2**62, SignatureError, "int64"), (I64.max, SignatureError, "num_segments"),
    (2**64, SignatureError, "num_segments"), (1.5, TypeMismatch, "num_segments"),
    ("3", TypeMismatch, "num_segments"), (None, TypeMismatch, "num_segments")])
def test_bad_num_segments(n, exc, word):
    refused(exc, word, tj.embedding_segments, F32, np.array([0, 2, 1]), np.array([0, 1, 0]), n)
    refused(exc, word, tj.embedding_segments_info, F32, np.array([0, 2, 1]),
            np.array([0, 1, 0]), n)


def test_module_functions():
    refused(SignatureError, "set_kernel_limit", tj.set_kernel_limit, -1)
    refused(SignatureError, "set_kernel_limit", tj.set_kernel_limit, 2**70)
    refused(TypeMismatch, "set_kernel_limit", tj.set_kernel_limit, "x")
    refused(TypeMismatch, "set_kernel_limit", tj.set_kernel_limit, 1, 2, 3)
    refused(SignatureError, "null", tj.open_cache, "/nonexistent/\0x")
    refused(TypeMismatch, "dir", tj.open_cache, 5)
    refused(tj.Error, "folder", tj.open_cache, "/dev/null")
    # a wrong count of arguments is a TypeMismatch everywhere (these were bare TypeErrors)
    for fn in (tj.stats, tj.library_version, tj.shutdown):
        refused(TypeMismatch, [fn.__name__, "no arguments"], fn, 1)
        refused(TypeMismatch, [fn.__name__, "no arguments"], fn, x=1)
    k = gather_kernel()
    refused(TypeMismatch, "bind", k.bind)
    refused(TypeMismatch, "bind", k.bind, (3, 4))
    refused(TypeMismatch, ["info", "no arguments"], k.info, 1)
    assert tj.stats()["kernels"] >= 0 and tj.library_version() and isinstance(k.info(), dict)


# --------------------------------------------------------------------------
# DynamicKernel

def gather_kernel():
    return tj.compile_dynamic("gather", (None, 4), (None,), dtype=np.float32,
                              index_dtype=np.int64)


def test_dynamic_kernel_calls():
    k = gather_kernel()
    np.testing.assert_array_equal(k(F32, IDX), F32[IDX])
    refused(TypeMismatch, "data", k, F32.astype(np.float64), IDX)
    refused(TypeMismatch, "indices", k, F32, IDX.astype(np.int32))
    refused(SignatureError, "data", k, F32.reshape(1, 3, 4), IDX)
    refused(SignatureError, "data.shape[1]", k, np.zeros((3, 5), np.float32), IDX)
    refused(TypeMismatch, "foo", k, F32, IDX, foo=1)
    refused(SignatureError, "out", k, F32, IDX, out=np.zeros(3))
    refused(SignatureError, "out", k, F32, IDX, out=F32)


def test_dynamic_kernel_bind():
    k = gather_kernel()
    assert k.bind((3, 4), (5,)) == (5, 4)
    assert k.bind([3, 4], iter([5])) == (5, 4)
    refused(SignatureError, "must not be negative", k.bind, (-5, 4), (3,))
    refused(SignatureError, "int64", k.bind, (2**62, 4), (2**62,))
    refused(TypeMismatch, "data", k.bind, ("a", 4), (3,))
    refused(TypeMismatch, "data", k.bind, (3.5, 4), (3,))
    # a shape that is no sequence was PySequence_Fast's bare TypeError, and a
    # None dim was read as 0 (int_arg's default)
    refused(TypeMismatch, "indices_shape", k.bind, (3, 4), 5)
    refused(TypeMismatch, "data_shape[0]", k.bind, (None, 4), (3,))
    refused(TypeMismatch, "bind", k.bind, data_shape=(3, 4), indices_shape=(3,))  # bare before
    # each shape holds its input's rank: the dims were once concatenated and
    # read by the signature's ranks, so a short shape left the kernel reading
    # dims never written (k.bind((3, 4), ()) gave (10860792, 4)) and a long
    # one moved its extra dims into the next input's
    for shapes, word in ((((3, 4), ()), "indices_shape"), (((3,), (3,)), "data_shape"),
                         (((3, 4, 5), (3,)), "data_shape"), (((), (3, 4, 5)), "data_shape"),
                         (((3, 4), (3, 4)), "indices_shape"), ((None, (3,)), "data_shape")):
        refused(SignatureError, [word, "rank"], k.bind, *shapes)
    refused(TypeMismatch, "updates", k.bind, (3, 4), (2,), (1,))
    refused(TypeMismatch, "updates", k, F32, IDX, F32)  # was ignored
    s = tj.compile_dynamic("scatter_update", (None, 4), (None,), (None, 4), dtype=np.float32,
                           index_dtype=np.int64)
    assert s.bind((3, 4), (2,), (2, 4)) == (3, 4)
    refused(SignatureError, ["updates_shape", "rank"], s.bind, (3, 4), (2,), (2,))
    refused(SignatureError, "updates_shape", s.bind, (3, 4), (2,))


@pytest.mark.parametrize("kw,exc,word", [
    (dict(data_shape=(-5, 4)), SignatureError, "data_shape"),
    (dict(data_shape=None), SignatureError, "data_shape"),
    (dict(data_shape=(1.5, 4)), TypeMismatch, "data"),
    (dict(data_shape=[None] * 40), SignatureError, "rank"),
    (dict(dtype=object), TypeMismatch, "dtype"),
    (dict(index_dtype=np.float32), TypeMismatch, "index_dtype"),
    (dict(axis=I64.min), SignatureError, "axis"),
    (dict(data_bound=(-1, 4)), SignatureError, "data_bound"),
    (dict(data_bound=(1,)), SignatureError, "data_bound"),
    (dict(data_bound=("x", 4)), TypeMismatch, "data_bound"),
    (dict(index_policy=5), TypeMismatch, "index_policy"),
    (dict(op="nope"), SignatureError, "op"), (dict(op=5), TypeMismatch, "op"),
    (dict(op="scatter_update"), SignatureError, "updates_shape"),
    (dict(op="embedding_bag_offsets"), SignatureError, "compile_dynamic"),
    # numpy's TypeError, a comparison's TypeError, iteration's TypeError and
    # the C half's OverflowError came through as they were, naming nothing
    (dict(dtype="nope"), TypeMismatch, "dtype"), (dict(index_dtype="nope"), TypeMismatch,
                                                  "index_dtype"),
    (dict(data_shape=("x", 4)), TypeMismatch, "data_shape"),
    (dict(data_shape=5), TypeMismatch, "data_shape"),
    (dict(indices_shape=(2**64,)), SignatureError, "indices_shape"),
    (dict(axis=2**70), SignatureError, "axis"), (dict(axis=1.5), TypeMismatch, "axis"),
    (dict(batch_dims=2**40), SignatureError, "batch_dims"),
    (dict(opset="8"), TypeMismatch, "opset"), (dict(data_bound=5), TypeMismatch, "data_bound"),
    (dict(updates_shape=(None, 4)), SignatureError, "updates_shape")])  # was ignored
def test_compile_dynamic_refusals(kw, exc, word):
    args = dict(op="gather", data_shape=(None, 4), indices_shape=(None,), dtype=np.float32,
                index_dtype=np.int64)
    args.update(kw)
    refused(exc, word, tj.compile_dynamic, **args)


def test_kernels_freed_by_shutdown():
    k = gather_kernel()
    tj.shutdown()
    for call in (lambda: k(F32, IDX), lambda: k.bind((3, 4), (2,)), k.info):
        refused(KernelError, "shutdown", call)
    assert "freed" in repr(k)
    assert k.output_shape == (None, 4)
    np.testing.assert_array_equal(tj.gather(F32, IDX), F32[IDX])  # the module starts over


# --------------------------------------------------------------------------
# tensorjit.numpy

def test_numpy_take():
    a = np.arange(10.)
    refused(IndexOutOfRange, "indices[0]", tnp.take, a, [I64.max])
    refused(IndexOutOfRange, "18446744073709551615", tnp.take, a,
            np.array([2**64 - 1], np.uint64))
    # numpy 1.24's own take(mode="wrap") of I64.min loops some 1e18 times: not the reference
    assert tnp.take(a, [I64.min], mode="wrap") == [a[I64.min % 10]]
    assert tnp.take(a, [I64.min, I64.max], mode="clip").tolist() == [0., 9.]
    refused(SignatureError, "mode", tnp.take, a, [0], mode=5)
    refused(TypeMismatch, "axis", tnp.take, a, [0], axis=1.5)
    refused(getattr(np, "exceptions", np).AxisError, "axis", tnp.take, a, [0], axis=2**70)
    refused(TypeMismatch, "indices", tnp.take, a, [np.nan])
    refused(TypeMismatch, "data", tnp.take, np.array([object()] * 3), [0])
    refused(SignatureError, ["out", "shape"], tnp.take, a, [1, 0], out=np.zeros(3))
    ro = np.zeros(2)
    ro.flags.writeable = False
    refused(SignatureError, ["out", "read-only"], tnp.take, a, [1, 0], out=ro)
    ro_strided = np.zeros(4)[::2]  # not contiguous: the path through a buffer
    ro_strided.flags.writeable = False
    refused(SignatureError, ["out", "read-only"], tnp.take, a, [1, 0], out=ro_strided)
    ro_other = np.zeros(2, np.int8)  # of another dtype: the same path
    ro_other.flags.writeable = False
    refused(SignatureError, ["out", "read-only"], tnp.take, a, [1, 0], out=ro_other)
    for out in (a[:2], np.zeros(2, ">f8"), np.zeros(4)[::2], np.zeros(2, np.int8)):
        want = a[[1, 0]].tolist()
        assert tnp.take(a, [1, 0], out=out) is out  # out=a[:2] overlaps a: numpy takes it
        assert out.tolist() == want


def test_numpy_along_axis():
    refused(TypeMismatch, "axis", tnp.take_along_axis, F32, np.zeros((3, 1), np.int64), "1")
    refused(IndexError, "take_along_axis", tnp.take_along_axis, F32, np.array([[None]] * 3), 1)
    refused(IndexOutOfRange, "indices[0,0]", tnp.take_along_axis, F32,
            np.full((3, 1), I64.min), 1)
    refused(IndexError, "shape mismatch", tnp.take_along_axis, F32, np.zeros((2, 1), np.int64),
            1)
    refused(SignatureError, "rank", tnp.take_along_axis, F32, np.zeros(3, np.int64), 1)
    b = np.zeros((3, 4))
    refused(SignatureError, "values", tnp.put_along_axis, b, np.zeros((3, 1), np.int64),
            np.ones(7), 1)
    e = refused(SignatureError, ["values", "broadcast"], tnp.put_along_axis, b,
                np.zeros((3, 1), np.int64), np.ones(7), 1)
    # values arr's dtype cannot hold: the message says so, not that they do not broadcast
    for arr, values, exc in ((np.zeros((3, 4), np.int64), np.nan, SignatureError),
                             (np.zeros((3, 4)), "x", SignatureError),
                             (np.zeros((3, 4)), object(), TypeMismatch),
                             (np.zeros((3, 4), np.int8), 2**70, OverflowError)):
        e = refused(exc, ["values", f"dtype {arr.dtype}"], tnp.put_along_axis, arr,
                    np.zeros((3, 1), np.int64), values, 1)
        assert "broadcast" not in str(e) and e.__cause__ is not None
        assert (arr == 0).all()
    refused(SignatureError, "read-only", tnp.put_along_axis, np.broadcast_to(b, (3, 4)),
            np.zeros((3, 1), np.int64), 1., 1)
    refused(TypeMismatch, "arr", tnp.put_along_axis, [[1, 2]], np.zeros((1, 1), np.int64), 1, 1)
    refused(IndexOutOfRange, "18446744073709551615", tnp.put_along_axis, b,
            np.full((3, 1), 2**64 - 1, np.uint64), 1., 1)
    refused(TypeMismatch, "data", tnp.put_along_axis, np.zeros((3, 1), object),
            np.zeros((3, 1), np.int64), 1, 1)
    tnp.put_along_axis(b, np.zeros((3, 4), np.int64), b, 1)  # values overlapping arr
    c = b.astype(">f8")
    tnp.put_along_axis(c, np.ones((3, 1), np.int64), 5., 1)
    assert (c[:, 1] == 5).all()


AT = [tnp.add_at, tnp.subtract_at, tnp.multiply_at, tnp.maximum_at, tnp.minimum_at]


@pytest.mark.parametrize("fn", AT, ids=lambda f: f.__name__)
def test_numpy_at(fn):
    name = fn.__name__
    a = np.zeros(5)
    refused(IndexOutOfRange, "indices[0]", fn, a, [I64.min], 1.)
    refused(IndexOutOfRange, "18446744073709551615", fn, a, np.array([2**64 - 1], np.uint64), 1.)
    for bad in ([0.5], np.array([np.nan])):
        refused(IndexError, name, fn, a, bad, 1.)
    for bad in (np.array([True] * 5), slice(0, 2), ..., None, np.array([0, None])):
        refused(TypeMismatch, name, fn, a, bad, 1.)
    refused(IndexOutOfRange, "too many indices", fn, a, (0, 0), 1.)
    refused(TypeMismatch, "a", fn, [1., 2.], [0], 1.)
    refused(SignatureError, "read-only", fn, np.broadcast_to(a, (5,)), [0], 1.)
    refused(TypeMismatch, "data", fn, np.zeros(3, object), [0], 1)
    refused(SignatureError, "indices", fn, a, [[0, 1], [2]], 1.)  # ragged
    refused(SignatureError, "indices", fn, a, ([[0, 1], [2]],), 1.)
    refused(SignatureError, "b", fn, a, [0, 1, 2], np.ones(2))  # does not broadcast
    refused(SignatureError, "b", fn, a, [0, 1], [[1., 2.], [3.]])  # ragged
    # b numpy has no loop with a's dtype for: numpy's ufunc.at refuses it (TypeError)
    for b in (object(), None, "x", b"x", np.datetime64(1, "s"), np.array([object()] * 2)):
        e = refused(TypeMismatch, "b", fn, a, [0, 1], b)
        assert isinstance(e.__cause__, TypeError)
    refused(TypeMismatch, "b", fn, np.zeros(3, "M8[s]"), [0], 1.)  # no common type at all
    # a Python int past what numpy converts, where the result needs it (numpy's
    # maximum of 1 and -2**70 is 1): OverflowError (numpy's class) too
    for b in (2**70, -2**70):
        small, want = np.ones(3, np.int8), np.ones(3, np.int8)
        try:
            getattr(np, name[:-3]).at(want, [0, 1], b)
        except OverflowError:
            e = refused(SignatureError, "b", fn, small, [0, 1], b)
            assert isinstance(e, OverflowError) and isinstance(e.__cause__, OverflowError)
        else:
            fn(small, [0, 1], b)
        np.testing.assert_array_equal(small, want)
    assert (a == 0).all()  # nothing written by any of them
    for target in (np.zeros(3, ">f8"), np.zeros(6)[::2]):
        want = np.array(target)
        getattr(np, name[:-3]).at(want, [0, 2, 0], 3.)
        fn(target, [0, 2, 0], 3.)
        np.testing.assert_array_equal(target, want)
    big = np.ones(3)
    fn(big, [0] * 10_000, 1.)
    want = np.ones(3)
    getattr(np, name[:-3]).at(want, [0] * 10_000, 1.)
    np.testing.assert_array_equal(big, want)
    b = np.arange(5.)
    want = b.copy()
    getattr(np, name[:-3]).at(want, [0, 1, 2, 3, 4], want.copy())
    fn(b, [0, 1, 2, 3, 4], b)  # b = a
    np.testing.assert_array_equal(b, want)


# --------------------------------------------------------------------------
# tensorjit.torch

torch = pytest.importorskip("torch")
from tensorjit import torch as tt  # noqa: E402

X = torch.arange(12.).reshape(3, 4)
TI = torch.tensor([[0, 2], [1, 0], [2, 2]])


@pytest.mark.parametrize("dim,exc", [(I64.min, SignatureError), (I64.max, SignatureError),
                                     (2, SignatureError), (-3, SignatureError),
                                     (2**70, SignatureError), (1.5, TypeMismatch),
                                     ("1", TypeMismatch), (None, TypeMismatch)])
def test_torch_bad_dim(dim, exc):
    refused(exc, "dim", tt.gather, X, dim, TI)
    refused(exc, "dim", tt.index_select, X, dim, torch.tensor([0]))
    refused(exc, "dim", tt.scatter_add, X, dim, TI, torch.ones(3, 2))


@pytest.mark.parametrize("make,word", [
    (lambda x: x.to_sparse(), "input"), (lambda x: torch.empty(3, 4, device="meta"), "input"),
    (lambda x: torch.quantize_per_tensor(x, 0.1, 0, torch.quint8), "input"),
    (lambda x: x.to(torch.complex64), "input"), (lambda x: x.to(torch.complex64).conj(),
                                                 "input")])
def test_torch_tensors_without_a_kernel(make, word):
    refused(tj.Error, word, tt.gather, make(X), 1, TI)


def test_torch_views_are_read_as_their_values():
    want = torch.gather(X, 1, TI)
    for x in (torch._neg_view(-X), X.t().contiguous().t(), torch.nn.Parameter(X.clone()),
              X.clone().requires_grad_()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.equal(tt.gather(x, 1, TI), want)
    assert torch.equal(tt.gather(torch.zeros(1, 4).expand(3, 4), 1, TI), torch.zeros(3, 2))
    assert torch.equal(tt.gather(X, 1, TI.t().contiguous().t()), want)
    # its .contiguous() copy fails in torch's allocator: that, not "has no
    # .contiguous()" (2**59 bytes: past any address space, overcommitted or not)
    e = refused(KernelError, "input", tt.gather, torch.zeros(1, 1).expand(2**55, 4), 1, TI)
    assert "contiguous" in str(e) and "allocate" in str(e)
    refused(IndexOutOfRange, "index[0,0]", tt.gather, X, 1, torch.full((3, 2), I64.min))
    refused(TypeMismatch, "index", tt.gather, X, 1, TI.float())


@pytest.mark.parametrize("out,words", [
    (torch.zeros(3), ["out", "shape"]), (torch.zeros(2, 4, requires_grad=True), ["out"]),
    (torch.zeros(1, 4).expand(2, 4), ["out", "contiguous"]),
    (torch._neg_view(torch.zeros(2, 4)), ["out", "negative"]),
    (torch.zeros(2, 4, dtype=torch.int32), ["out", "dtype"])])
def test_torch_bad_out(out, words):
    refused(SignatureError, words, tt.index_select, X, 0, torch.tensor([2, 0]), out=out)


def test_torch_out_aliasing():
    x = X.clone()
    refused(SignatureError, ["out", "input"], tt.index_select, x, 0, torch.tensor([2, 0, 1]),
            out=x)
    s = torch.ones(1, 4)
    refused(SignatureError, ["out", "source"], tt.index_add, torch.zeros(1, 4), 0,
            torch.tensor([0]), s, out=s)
    refused(SignatureError, ["out", "source"], tt.index_add, x, 0, torch.tensor([0, 1, 2]), x,
            out=x)
    assert tt.index_add(x, 0, torch.tensor([0]), s, out=x) is x  # in place
    assert torch.equal(x, X + torch.tensor([[1.], [0.], [0.]]))


@pytest.mark.parametrize("alpha,dtype,exc", [
    ("x", torch.float32, TypeMismatch), (None, torch.float32, TypeMismatch),
    (torch.tensor([1., 2.]), torch.float32, TypeMismatch), (1j, torch.float32, TypeMismatch),
    (-300, torch.uint8, SignatureError), (float("nan"), torch.int32, SignatureError),
    (float("inf"), torch.int64, SignatureError), (2**63, torch.int64, SignatureError),
    (1e10, torch.float16, SignatureError)])
def test_torch_bad_alpha(alpha, dtype, exc):
    refused(exc, "alpha", tt.index_add, torch.zeros(3, dtype=dtype), 0, torch.tensor([0]),
            torch.ones(1, dtype=dtype), alpha=alpha)


def test_torch_scatter_arguments():
    refused(SignatureError, "src or value", tt.scatter, X, 1, TI)
    # both: torch 1.13 refuses them ("invalid combination of arguments", a TypeError)
    with pytest.raises(TypeError):
        torch.scatter(X, 1, TI, torch.ones(3, 2), value=2.)
    refused(TypeMismatch, ["src", "value"], tt.scatter, X, 1, TI, torch.ones(3, 2), value=2.)
    refused(TypeMismatch, ["src", "value"], tt.scatter, torch.tensor(0.), 0, torch.tensor(0),
            torch.tensor(1.), value=2.)
    # a value input's dtype cannot hold (torch: RuntimeError or TypeError)
    xi = torch.zeros(3, 4, dtype=torch.int64)
    for inp, v, exc in ((xi, float("nan"), SignatureError), (xi, float("inf"), SignatureError),
                        (torch.zeros(3, 4, dtype=torch.int8), 2**70, SignatureError),
                        (torch.zeros(3, 4, dtype=torch.int8), 300, SignatureError),
                        (X, "x", TypeMismatch), (X, object(), TypeMismatch)):
        e = refused(exc, ["value", str(inp.dtype)], tt.scatter, inp, 1, TI, value=v)
        assert e.__cause__ is not None
        refused(exc, ["src", str(inp.dtype)], tt.scatter, inp, 1, TI, v)  # as a scalar src
    refused(SignatureError, "value", tt.scatter, torch.tensor(0), 0, torch.tensor(0),
            value=float("nan"))
    assert torch.equal(tt.scatter(xi, 1, TI, value=1.5), torch.scatter(xi, 1, TI, value=1.5))
    refused(SignatureError, "reduce", tt.scatter, X, 1, TI, torch.ones(3, 2), reduce="nope")
    refused(SignatureError, "reduce", tt.scatter, X, 1, TI, torch.ones(3, 2), reduce=5)
    refused(SignatureError, "src", tt.scatter, X, 1, TI, torch.ones(1, 1))
    refused(SignatureError, "src", tt.scatter, X, 1, TI, torch.ones(3, 2, dtype=torch.float64))
    refused(SignatureError, "reduce", tt.scatter_reduce, X, 1, TI, torch.ones(3, 2), "nope")
    big = torch.full((3, 2), I64.max)
    assert torch.equal(tt.scatter_reduce(torch.zeros(3, 4, dtype=torch.int64), 1, TI, big,
                                         "mean", include_self=False)[0, 0], torch.tensor(I64.max))


def test_torch_scatter_value_refused_for_a_numpy_input_names_it_once():
    """A numpy input's value (or scalar src) it cannot hold is refused in
    one message naming the argument given: _scalar_for's error was wrapped
    again ('... int64: tensorjit: scatter's value=nan ...', its own class
    as the cause), and a scalar src was named value."""
    for inp, v, exc in ((np.zeros((3, 4), np.int64), float("nan"), SignatureError),
                        (np.zeros((3, 4), np.uint8), 300, SignatureError),
                        (np.zeros((3, 4), np.int64), 2**70, SignatureError),
                        (np.zeros((3, 4), np.float32), "x", TypeMismatch)):
        for name, kw, args in (("value", dict(value=v), ()), ("src", {}, (v,))):
            words = [name] + ([str(inp.dtype)] if exc is SignatureError else [])
            e = refused(exc, words, tt.scatter, inp, 1, TI.numpy(), *args, **kw)
            assert str(e).count("tensorjit:") == 1, str(e)
            assert not isinstance(e.__cause__, tj.Error), repr(e.__cause__)
            if name == "src":
                assert "value" not in str(e), str(e)


def test_torch_scatter_value_into_a_numpy_input_as_into_a_tensor():
    """A value is read as torch.scatter reads it for a tensor of that dtype,
    for a tensor and a numpy input alike, whatever index's size (numpy's
    full wrapped 300 into uint8 (44) and 2**63 into int64, and made NaN some
    integer with a warning; torch >= 2.9 fills a one-element tensor with
    70000.0 as f16's inf where its scatter refuses it)."""
    values = (float("nan"), float("inf"), -float("inf"), 1.5, -1.5, 2**63, -2**63 - 1,
              2**63 - 1, 300, -300, 255, -255, 128, -129, True, 1e300, 70000.0)
    dtypes = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.float32, torch.float64)
    for dtype, v, i in [(d, v, i) for d in dtypes for v in values
                        for i in (torch.tensor([1]), torch.tensor([1, 2]))]:
        x = torch.zeros(3, dtype=dtype)
        try:
            outcome = [torch.scatter(x, 0, i, value=v).view(-1).double().tolist()]
        except (RuntimeError, OverflowError, TypeError):
            outcome = [tj.Error]
        for inp, idx in ((x, i), (x.numpy(), i.numpy())):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # numpy's cast warning is a failure here
                try:
                    got = tt.scatter(inp, 0, idx, value=v)
                    outcome.append(torch.as_tensor(got).view(-1).double().tolist())
                except tj.Error:
                    outcome.append(tj.Error)
        assert str(outcome[0]) == str(outcome[1]) == str(outcome[2]), (dtype, v, outcome)


@pytest.mark.parametrize("kw,exc,word", [
    (dict(offsets=torch.tensor([0., float("nan")])), TypeMismatch, "offsets"),
    (dict(offsets=[0, float("nan")]), TypeMismatch, "offsets"),
    (dict(offsets=torch.tensor([1, 2])), IndexOutOfRange, "offsets[0]"),
    (dict(offsets=torch.tensor([0, I64.min])), IndexOutOfRange, "offsets[1]"),
    (dict(offsets=np.array([0, 2**64 - 1], np.uint64)), TypeMismatch, "offsets"),
    (dict(mode="min"), SignatureError, "mode"), (dict(mode=1), SignatureError, "mode"),
    (dict(max_norm=1.), SignatureError, "max_norm"),
    (dict(mode="sum", per_sample_weights=torch.ones(2)), SignatureError, "per_sample_weights"),
    (dict(padding_idx=1.5), TypeMismatch, "padding_idx"),
    (dict(padding_idx=I64.min), SignatureError, "padding_idx")])
def test_torch_bad_embedding_bag(kw, exc, word):
    args = dict(offsets=torch.tensor([0, 2]))
    args.update(kw)
    refused(exc, word, tt.embedding_bag, torch.tensor([0, 2, 1]), X, **args)


def test_torch_embedding():
    refused(IndexOutOfRange, "input[0]", tt.embedding, torch.tensor([I64.min]), X)
    refused(TypeMismatch, "input", tt.embedding, torch.tensor([0.]), X)
    refused(TypeMismatch, "input", tt.embedding, torch.tensor([True]), X)
    refused(TypeMismatch, "padding_idx", tt.embedding, torch.tensor([0]), X, padding_idx="1")
    refused(SignatureError, "max_norm", tt.embedding, torch.tensor([0]), X, max_norm=1.)
    assert torch.equal(tt.embedding([0] * 50_000, X), X[[0] * 50_000])
    refused(SignatureError, "input", tt.embedding_bag, torch.zeros(1, 1, 1, dtype=torch.long), X)
    refused(SignatureError, "weight", tt.embedding_bag, torch.tensor([0, 1]), torch.tensor(1.),
            torch.tensor([0]))
    with torch.no_grad():
        refused(KernelError, "trace", torch.jit.trace, lambda a: tt.embedding(a, X),
                torch.tensor([0]))
