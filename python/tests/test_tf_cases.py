"""TensorFlow's kernel-test cases for its indexing ops, held against tensorjit.

SPEC section 1 claims TensorFlow's semantics for tf.gather_nd (with batch_dims),
tf.gather (axis, batch_dims), tf.compat.v1.scatter_update and
tf.tensor_scatter_nd_update / _add / _sub / _min / _max. TensorFlow is not
installed here, so its own kernel tests (tensorflow/python/kernel_tests/array_ops:
gather_nd_op_test.py, gather_op_test.py, batch_gather_op_test.py,
scatter_nd_ops_test.py, scatter_ops_test.py, and array_ops_test.py's
BatchGatherNdTest) were read for their facts: the inputs each case builds, its
attributes, and the output or the error TF expects. Those facts are written
down below as data; the code is ours. Each test names the TF test it stands for.

How a TF call maps onto tensorjit:
- tf.gather(params, indices, axis=None, batch_dims=0): axis None means
  axis = batch_dims (TF's rule), then tensorjit.gather(data, indices, axis,
  batch_dims); tf.compat.v1.batch_gather is batch_dims = axis = rank(indices)-1.
- tf.gather_nd(params, indices, batch_dims) = tensorjit.gather_nd.
- tf.tensor_scatter_nd_{update,add,sub,min,max} (and the stateful
  scatter_nd_{update,add,sub}, the same arithmetic on a variable) =
  tensorjit.scatter_nd_update with reduction none / sum / sub / min / max.
- tf.compat.v1.scatter_update = tensorjit.scatter_update(axis=0); the other
  tf.compat.v1.scatter_{add,sub,mul,min,max} are ScatterNDUpdate with
  indices[..., None] (one index into axis 0 per tuple).

Expected errors: TF's CPU kernels raise InvalidArgumentError for an index out
of range, for shapes that do not fit and for bad attributes; tensorjit raises
IndexOutOfRange (an IndexError) and SignatureError (a ValueError), and the
tests hold its message to naming the input, the position, the value and the
data dimension, as TF's does.

Intended differences (each also marked where its case is):
- updates of TF's scatter_update may be a scalar broadcast over the slice
  (scatter_ops_test, "Scalar" cases); SPEC section 1 says updates.shape must be
  data.shape[:axis] + indices.shape + data.shape[axis+1:] exactly, so tensorjit
  refuses them (SignatureError).
- ScatterNDUpdate takes updates of one element ([1]) where the rule's shape is
  [] (docs/design.md, OpenVINO's spec); TF's tf.scatter_nd refuses that
  (ScatterNdTest.testInvalidShape).
- string and complex element types, tf.compat.v1.scatter_div and float8 have
  no tensorjit kernel (SPEC section 2: element types by byte size 1/2/4/8,
  reductions none/sum/sub/prod/min/max); complex is refused with TypeMismatch.
"""

import subprocess

import numpy as np
import pytest

import tensorjit
from tj_cli import find_cli

try:
    import torch
except ImportError:  # bf16 cases need torch (no ml_dtypes here)
    torch = None

CLI = find_cli()

INDEX_TYPES = (np.int16, np.int32, np.int64)
ND_INDEX_TYPES = (np.int32, np.int64)  # scatter_nd_update: OpenVINO's i32/i64


# --- mappings -------------------------------------------------------------

def tf_gather(params, indices, axis=None, batch_dims=0):
    if batch_dims is None:
        batch_dims = 0
    if axis is None:
        axis = batch_dims
    return tensorjit.gather(params, indices, axis, batch_dims)


def tf_batch_gather(params, indices):
    b = np.ndim(indices) - 1
    return tensorjit.gather(params, indices, b, b)


REDUCTION = {"update": "none", "add": "sum", "sub": "sub", "min": "min", "max": "max",
             "mul": "prod"}


def tf_tensor_scatter(op, tensor, indices, updates):
    return tensorjit.scatter_nd_update(tensor, indices, updates, REDUCTION[op])


def tf_v1_scatter(op, ref, indices, updates):
    """tf.compat.v1.scatter_<op> on axis 0 of ref."""
    if op == "update":
        return tensorjit.scatter_update(ref, indices, updates, 0)
    return tensorjit.scatter_nd_update(ref, np.asarray(indices)[..., None], updates,
                                       REDUCTION[op])


def same(got, want):
    """Bit for bit, shape and dtype included (NaN-free inputs here)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes(), (got, want)


def cast(values, dtype):
    return np.asarray(values).astype(dtype)


# Element types TF's cases use that tensorjit has (complex/string/float8 have not).
GATHER_ND_DTYPES = (np.float16, np.float32, np.float64, np.int16, np.int32, np.int64)
GATHER_DTYPES = (np.int64, np.float32, np.uint32, np.uint64)


def bf16_available():
    return torch is not None


# --- tf.gather_nd (gather_nd_op_test.py) ------------------------------------

@pytest.mark.parametrize("dtype", GATHER_ND_DTYPES)
@pytest.mark.parametrize("itype", INDEX_TYPES)
def test_gather_nd_simple_dtype(dtype, itype):
    # GatherNdTest.testSimpleDtype
    params = cast([8, 1, 2, 3, 7, 5], dtype)
    out = tensorjit.gather_nd(params, cast([[4], [4], [0]], itype))
    same(out, cast([7, 7, 8], dtype))


@pytest.mark.skipif(not bf16_available(), reason="bf16 needs torch")
@pytest.mark.parametrize("itype", (torch.int32, torch.int64) if torch else ())
def test_gather_nd_simple_bf16(itype):
    params = torch.tensor([8, 1, 2, 3, 7, 5], dtype=torch.bfloat16)
    out = tensorjit.gather_nd(params, torch.tensor([[4], [4], [0]], dtype=itype))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16
    assert out.tolist() == [7, 7, 8]


def test_gather_nd_empty_indices_and_params():
    # GatherNdTest.testEmptyIndicesAndParamsOKButJustEmptyParamsFails
    params = np.ones((3, 3), np.float32)
    same(tensorjit.gather_nd(params, np.empty((0, 2), np.int32)), np.empty((0,), np.float32))
    same(tensorjit.gather_nd(params, np.empty((0, 1), np.int32)), np.empty((0, 3), np.float32))
    empty = np.empty((0, 3), np.float32)
    same(tensorjit.gather_nd(empty, np.empty((0, 2), np.int32)), np.empty((0,), np.float32))
    # TF: "Requested more than 0 entries, but params is empty."
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"indices\[0\] = \[0,0\] .*data dimension 0 of size 0"):
        tensorjit.gather_nd(empty, np.zeros((1, 2), np.int32))


# params of the next cases: TF builds them transposed (a non-contiguous view)
P2 = np.array([[-8, -1, -2, -3, -7, -5], [8, 1, 2, 3, 7, 5]], np.float32).T
P3 = np.array([[[-8, -1, -2, -3, -7, -5], [8, 1, 2, 3, 7, 5]],
               [[-80, -10, -20, -30, -70, -50], [80, 10, 20, 30, 70, 50]]], np.float32).T


def test_gather_nd_index_scalar():
    # testIndexScalar: one full tuple, a 0-D result
    same(tensorjit.gather_nd(P2, np.array([4, 1], np.int32)), np.array(7, np.float32))


def test_gather_nd_slices():
    # testParamsRankLargerThanIndexIndexScalarSlices, testParamsRankLargerThanIndexSlices
    same(tensorjit.gather_nd(P2, np.array([4], np.int32)), np.array([-7, 7], np.float32))
    same(tensorjit.gather_nd(P2, np.array([[4], [4], [0]], np.int32)),
         np.array([[-7, 7], [-7, 7], [-8, 8]], np.float32))


def test_gather_nd_higher_rank_params_slices():
    # testHigherRankParamsLargerThanIndexSlices, ...AndIndicesLargerThanIndexSlices
    assert P3.shape == (6, 2, 2)
    same(tensorjit.gather_nd(P3, np.array([[4], [4], [0]], np.int32)), P3[[4, 4, 0]])
    same(tensorjit.gather_nd(P3, np.array([[[3], [2], [1]], [[4], [4], [0]]], np.int32)),
         P3[[3, 2, 1, 4, 4, 0]].reshape(2, 3, 2, 2))


def test_gather_nd_empty_last_dim_copies_all():
    # testEmptyIndicesLastRankMeansCopyEntireTensor: indices [2, 0]
    out = tensorjit.gather_nd(P3, np.zeros((2, 0), np.int32))
    same(out, np.stack([P3, P3]))


@pytest.mark.parametrize("seed", [0, 1])
def test_gather_nd_higher_rank(seed):
    # testHigherRankParams, testHigherRankParamsAndIndices (2000 tuples)
    rng = np.random.default_rng(seed)
    shape = (10, 20, 5, 1, 17)
    params = rng.random(shape)
    indices = np.stack([rng.integers(0, s, size=2000) for s in shape]).T
    same(tensorjit.gather_nd(params, indices), params[tuple(indices.T)])
    same(tensorjit.gather_nd(params, indices.reshape(10, 10, 20, 5)),
         params[tuple(indices.T)].reshape(10, 10, 20))


def test_gather_nd_bad_indices_cpu():
    # testBadIndicesCPU: TF "indices[0,1] = [7] does not index into param shape [3]"
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0,1\] = \[7\] .*data dimension 0 of size 3"):
        tensorjit.gather_nd(np.array([0, 1, 2]), np.array([[[0], [7]]]))
    # testBadIndicesWithSlicesCPU: "indices[0,2] = [1] does not index into param shape [1,3]"
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0,2\] = \[1\] .*data dimension 0 of size 1"):
        tensorjit.gather_nd(np.array([[0, 1, 2]]), np.array([[[0], [0], [1]]]))


def test_gather_nd_variable_cases():
    # testGatherNdRefVariable / testGatherNdResourceVariable
    same(tensorjit.gather_nd(np.array([[1, 2], [3, 4], [5, 6]], np.int32),
                             np.array([[0, 1], [2, 0]])), np.array([2, 5], np.int32))


# The gradient of tf.scatter_nd is a gather_nd of the incoming gradient at
# the indices: scatter_nd_ops_test's expected_updates_grad values are gather_nd facts.
SCATTER_ND_GRAD_CASES = [
    # testGradientsRank2ElementUpdate
    ([[1, 2], [3, 4]], [[0, 0], [1, 1]], [1, 4]),
    # testGradientsRank2SliceUpdate
    ([[3, 4], [1, 2]], [[1], [0]], [[1, 2], [3, 4]]),
    # testGradientsRank3SliceUpdate
    ([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], [[[0, 1], [1, 0]], [[0, 0], [1, 1]]],
     [[[3, 4], [5, 6]], [[1, 2], [7, 8]]]),
    # testGradientsRank7SliceUpdate
    ([[[[[[[1, 2], [3, 4]]]], [[[[5, 6], [7, 8]]]]]]],
     [[[[[[[0, 0, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0]]]], [[[[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1]]]]]]],
     [[[[[[[3, 4], [5, 6]]]], [[[[1, 2], [7, 8]]]]]]]),
]


@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.float64))
@pytest.mark.parametrize("case", range(len(SCATTER_ND_GRAD_CASES)))
def test_gather_nd_from_scatter_nd_gradients(case, dtype):
    grad, indices, want = SCATTER_ND_GRAD_CASES[case]
    same(tensorjit.gather_nd(cast(grad, dtype), np.array(indices, np.int32)), cast(want, dtype))


# --- tf.gather_nd with batch_dims (array_ops_test.py BatchGatherNdTest) -----

BATCH_ND_SHAPES = [
    ((2, 2, 2), (2, 1), 1), ((2, 2, 2), (2, 2), 1), ((2, 2, 2), (2, 3), 0),
    ((2, 2, 2), (3,), 0), ((2, 2, 2), (1,), 0), ((2, 2, 3, 2), (2, 3), 1),
    ((2, 2, 3, 2), (2, 2), 1), ((2, 2, 3, 2), (2, 1), 1), ((2, 2, 3, 2), (2, 1, 3), 1),
    ((2, 2, 3, 2), (2, 2, 2), 1), ((2, 2, 3, 2), (2, 3, 1), 1),
    ((3, 2, 2, 3, 4), (3, 2, 3), 2), ((3, 2, 2, 3, 4), (3, 2, 2), 2),
    ((3, 2, 2, 3, 4), (3, 2, 1), 2), ((3, 2, 2, 3, 4), (3, 2, 1, 3), 2),
    ((3, 2, 2, 3, 4), (3, 2, 2, 2), 2), ((3, 2, 2, 3, 4), (3, 2, 3, 1), 2),
    # testBatchDimsAsTensor
    ((3, 2, 2, 3, 4), (3, 2, 3, 1), 0), ((3, 2, 2, 3, 4), (3, 2, 3, 1), 1),
]


def batch_gather_nd_by_hand(params, indices, b):
    """gather_nd per batch element, as BatchGatherNdTest's map_fn does."""
    if b == 0:
        return params[tuple(np.moveaxis(indices, -1, 0))] if indices.shape[-1] else \
            np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    return np.stack([batch_gather_nd_by_hand(params[i], indices[i], b - 1)
                     for i in range(params.shape[0])])


@pytest.mark.parametrize("params_shape,indices_shape,b", BATCH_ND_SHAPES)
def test_gather_nd_batch_dims(params_shape, indices_shape, b):
    # testShapesMatch (all-ones inputs: the shape), testSameResultAsMapFn,
    # testNoneBatchDimensions, testBatchDimsAsTensor
    ones = tensorjit.gather_nd(np.ones(params_shape), np.ones(indices_shape, np.int32), b)
    k = indices_shape[-1]
    assert ones.shape == indices_shape[:-1] + params_shape[b + k:]
    rng = np.random.default_rng(hash((params_shape, indices_shape, b)) & 0xffff)
    params = rng.random(params_shape)
    indices = rng.integers(0, 2, size=indices_shape)
    same(tensorjit.gather_nd(params, indices, b), batch_gather_nd_by_hand(params, indices, b))


@pytest.mark.parametrize("indices_shape", [(1,), (3, 1), (3, 3, 1), (2,), (3, 2), (3, 3, 2),
                                           (3,), (3, 3), (3, 3, 3)])
def test_gather_nd_batch_dims_zero(indices_shape):
    # testReducesToGatherNDWhenBatchDimIsZero
    rng = np.random.default_rng(len(indices_shape) * 10 + indices_shape[-1])
    params = rng.random((7, 8, 9))
    indices = rng.integers(0, 7, size=indices_shape)
    same(tensorjit.gather_nd(params, indices, 0), tensorjit.gather_nd(params, indices))
    same(tensorjit.gather_nd(params, indices, 0), params[tuple(np.moveaxis(indices, -1, 0))])


def test_gather_nd_invalid_batch_dims():
    # testInvalidBatchDimsRaisesException: -1 and 4 (>= rank(indices) = 3) refused
    params = np.ones((3, 2, 2, 3, 4))
    indices = np.zeros((3, 2, 3), np.int64)
    with pytest.raises(tensorjit.SignatureError, match=r"batch_dims=-1"):
        tensorjit.gather_nd(params, indices, -1)
    with pytest.raises(tensorjit.SignatureError, match=r"batch_dims=4 .*rank\(indices\)=3"):
        tensorjit.gather_nd(params, indices, 4)


# --- tf.gather (gather_op_test.py) -----------------------------------------

GATHER_2D = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13, 14]])


@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize("indices", [4, [1, 2, 2, 4, 5]])
def test_gather_scalar_1d(dtype, itype, indices):
    # testScalar1D: a 0-D index and a list
    params = cast([0, 1, 2, 3, 7, 5], dtype)
    same(tf_gather(params, np.array(indices, itype)), params[indices])


@pytest.mark.parametrize("dtype", GATHER_DTYPES)
@pytest.mark.parametrize("itype", INDEX_TYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_2d(dtype, itype, axis):
    # testScalar2D (0-D index 2) and testSimpleTwoD32 ([0, 1, 0, 2])
    params = GATHER_2D.astype(dtype)
    same(tf_gather(params, np.array(2, itype), axis=axis), np.take(params, 2, axis=axis))
    out = tf_gather(params, np.array([0, 1, 0, 2], itype), axis=axis)
    assert out.shape == params.shape[:axis] + (4,) + params.shape[axis + 1:]
    same(out, np.take(params, [0, 1, 0, 2], axis=axis))


@pytest.mark.skipif(not bf16_available(), reason="bf16 needs torch")
def test_gather_bf16():
    # testScalar1D / testSimpleTwoD32 for bfloat16
    params = torch.tensor(GATHER_2D, dtype=torch.bfloat16)
    for axis in (0, 1):
        out = tf_gather(params, torch.tensor([0, 1, 0, 2]), axis=axis)
        assert out.dtype == torch.bfloat16
        assert out.float().numpy().tolist() == np.take(GATHER_2D, [0, 1, 0, 2], axis).tolist()


@pytest.mark.parametrize("indices_shape", [(), (0,), (2, 0), (2, 3)])
@pytest.mark.parametrize("axis", range(4))
@pytest.mark.parametrize("dtype", (np.int64, np.float32))
def test_gather_higher_rank(indices_shape, axis, dtype):
    # testHigherRank / testHigherRankGradientTape: axis and axis - rank
    shape = (2, 1, 3, 2)
    rng = np.random.default_rng(axis)
    params = (rng.standard_normal(shape) * 100).astype(dtype)
    indices = rng.integers(0, shape[axis], size=indices_shape)
    want = np.take(params, indices, axis)
    assert want.shape == shape[:axis] + indices_shape + shape[axis + 1:]
    same(tf_gather(params, indices, axis=axis), want)
    same(tf_gather(params, indices, axis=axis - len(shape)), want)


@pytest.mark.parametrize("dtype", (np.uint32, np.uint64))
def test_gather_unsigned(dtype):
    # testUInt32AndUInt64
    params = np.array([[1, 2, 3], [7, 8, 9]], dtype)
    same(tf_gather(params, np.array(1), axis=0), np.array([7, 8, 9], dtype))
    same(tf_gather(params, np.array(0), axis=1), np.array([1, 7], dtype))


def test_gather_bad_indices_type():
    # testBadIndicesType: float indices ("not in list of allowed values")
    with pytest.raises(tensorjit.TypeMismatch, match="indices"):
        tf_gather(np.array([0]), np.array(0.0))


def test_gather_bad_indices_cpu():
    # testBadIndicesCPU: "indices[0,0] = 7 is not in [0, 2)" / "[0, 3)"
    params = np.array([[0, 1, 2], [3, 4, 5]])
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0,0\] = 7 .*data dimension 0 of size 2"):
        tf_gather(params, np.array([[7]]), axis=0)
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0,0\] = 7 .*data dimension 1 of size 3"):
        tf_gather(params, np.array([[7]]), axis=1)


@pytest.mark.parametrize("axis", [1, 2, -2])
def test_gather_bad_axis(axis):
    # testBadAxis: params of rank 1
    with pytest.raises(tensorjit.SignatureError, match=rf"axis={axis} .*\[-1, 0\]"):
        tf_gather(np.array([0, 1, 2]), np.array(0), axis=axis)


def test_gather_axis_and_batch_dims_extreme_bounds():
    # testAxisExtremeBounds, testBatchDimsExtremeBounds
    params = np.array([[0.69]], np.float32)
    indices = np.array([0])
    for axis in (-2 ** 63, 2 ** 63 - 1):
        with pytest.raises(tensorjit.SignatureError, match=rf"axis={axis}"):
            tensorjit.gather(params, indices, axis)
    for b in (-2 ** 31, 2 ** 31 - 1):
        with pytest.raises(tensorjit.SignatureError, match=rf"batch_dims={b}"):
            tensorjit.gather(params, indices, 0, b)


@pytest.mark.parametrize("dtype", (np.int64, np.float32))
@pytest.mark.parametrize("itype", INDEX_TYPES)
def test_gather_empty_slices(dtype, itype):
    # testEmptySlices (leading, middle, trailing axis)
    indices = np.array([3, 4], itype)
    same(tf_gather(np.zeros((7, 0, 0), dtype), indices, axis=0), np.zeros((2, 0, 0), dtype))
    same(tf_gather(np.zeros((0, 7, 0), dtype), indices, axis=1), np.zeros((0, 2, 0), dtype))
    same(tf_gather(np.zeros((0, 0, 7), dtype), indices, axis=2), np.zeros((0, 0, 2), dtype))


# testBatchDims: (batch_dims, axis, params, indices, expected)
GATHER_BATCH_CASES = [
    (0, None, [6, 7, 8, 9], [[2, 1], [0, 3]], [[8, 7], [6, 9]]),
    (0, None, [6, 7, 8, 9], [[[3, 1], [2, 0]], [[0, 3], [2, 2]]],
     [[[9, 7], [8, 6]], [[6, 9], [8, 8]]]),
    (0, None, [8, 9], [[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
     [[[[8, 9], [9, 8]], [[8, 8], [9, 9]]], [[[9, 9], [8, 8]], [[8, 9], [9, 8]]]]),
    (1, None, [[10, 11, 12, 13], [20, 21, 22, 23]], [[2, 1], [0, 3]], [[12, 11], [20, 23]]),
    (2, None, [[[100, 101], [110, 111]], [[200, 201], [210, 211]]],
     [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[100, 101], [111, 110]], [[200, 200], [211, 211]]]),
    (-1, None, [[10, 11, 12, 13], [20, 21, 22, 23]], [[2, 1], [0, 3]], [[12, 11], [20, 23]]),
    (-1, None, [[[100, 101], [110, 111]], [[200, 201], [210, 211]]],
     [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[100, 101], [111, 110]], [[200, 200], [211, 211]]]),
    (1, None, [[10, 11, 12, 13], [20, 21, 22, 23]], [2, 1], [12, 21]),
    (2, None, [[[100, 101, 102, 103], [110, 111, 112, 113]],
               [[200, 201, 202, 203], [210, 211, 212, 213]]], [[2, 1], [0, 3]],
     [[102, 111], [200, 213]]),
    (1, None, [[10, 11, 12, 13], [20, 21, 22, 23]], [[[3, 1], [2, 0]], [[0, 3], [2, 2]]],
     [[[13, 11], [12, 10]], [[20, 23], [22, 22]]]),
    (1, None, [[6, 7], [8, 9]],
     [[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
     [[[[6, 7], [7, 6]], [[6, 6], [7, 7]]], [[[9, 9], [8, 8]], [[8, 9], [9, 8]]]]),
    (2, None, [[[2, 3], [4, 5]], [[6, 7], [8, 9]]],
     [[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 1], [0, 0]], [[0, 1], [1, 0]]]],
     [[[[2, 3], [3, 2]], [[4, 4], [5, 5]]], [[[7, 7], [6, 6]], [[8, 9], [9, 8]]]]),
    (1, 2, [[[10, 11, 12], [13, 14, 15]], [[20, 21, 22], [23, 24, 25]]],
     [[[0, 1, 2, 1, 0]], [[0, 1, 2, 1, 0]]],
     [[[[10, 11, 12, 11, 10]], [[13, 14, 15, 14, 13]]], [[[20, 21, 22, 21, 20]], [[23, 24, 25, 24, 23]]]]),
    (None, 1, [[10, 11, 12], [13, 14, 15]], [1, 0], [[11, 10], [14, 13]]),
    (-3, 1, [[0, 1, 2], [3, 4, 5]], [[[0, 1], [1, 0]]], [[[[0, 1], [1, 0]]], [[[3, 4], [4, 3]]]]),
]


@pytest.mark.parametrize("case", range(len(GATHER_BATCH_CASES)))
@pytest.mark.parametrize("dtype", (np.int32, np.float64))
def test_gather_batch_dims(case, dtype):
    b, axis, params, indices, expected = GATHER_BATCH_CASES[case]
    out = tf_gather(cast(params, dtype), np.array(indices, np.int32), axis=axis, batch_dims=b)
    same(out, cast(expected, dtype))


def batch_take(params, indices, axis, b):
    """np.take per batch element (testBatchDimsMatchesPythonBatching's oracle)."""
    if b == 0:
        return np.take(params, indices, axis=axis)
    return np.stack([batch_take(params[i], indices[i], axis - 1, b - 1)
                     for i in range(params.shape[0])])


@pytest.mark.parametrize("axis", [2, 3, 4, 5, -4, -3, -2, -1])
def test_gather_batch_dims_matches_python_batching(axis):
    params_shape, indices_shape, b = (2, 3, 4, 5, 6, 7), (2, 3, 8, 9, 10), 2
    params = np.arange(np.prod(params_shape)).reshape(params_shape)
    indices = np.arange(np.prod(indices_shape)).reshape(indices_shape) % params_shape[axis]
    a = axis % len(params_shape)
    out = tf_gather(params, indices, axis=axis, batch_dims=b)
    assert out.shape == params_shape[:a] + indices_shape[2:] + params_shape[a + 1:]
    same(out, batch_take(params, indices, a, b))


def test_gather_variable_cases():
    # testGatherRefVariable / testGatherResourceVariable
    same(tf_gather(np.array([[1, 2], [3, 4], [5, 6]], np.int32), np.array([0, 2])),
         np.array([[1, 2], [5, 6]], np.int32))


# --- tf.compat.v1.batch_gather (batch_gather_op_test.py) --------------------

@pytest.mark.parametrize("dtype", (np.int64, np.float32))
@pytest.mark.parametrize("itype", (np.int32, np.int64))
def test_batch_gather(dtype, itype):
    # testSimpleGather, test2DArray, testHigherRank
    data = np.array([0, 1, 2, 3, 7, 5, 8, 9, 10, 11, 15, 13], dtype)
    same(tf_batch_gather(data, np.array([3, 4], itype)), np.array([3, 7], dtype))
    data = np.array([[0, 1, 2, 3, 7, 5], [8, 9, 10, 11, 15, 13]], dtype)
    same(tf_batch_gather(data, np.array([[3], [4]], itype)), np.array([[3], [15]], dtype))
    data = np.array([[[0, 1, 2], [3, 7, 5]], [[8, 9, 10], [11, 15, 13]]], dtype)
    same(tf_batch_gather(data, np.array([[[2, 0], [1, 2]], [[2, 0], [0, 1]]], itype)),
         np.array([[[2, 0], [7, 5]], [[10, 8], [11, 15]]], dtype))
    # testEmptySlices
    same(tf_batch_gather(np.zeros((7, 0, 0), dtype), np.array([3, 4], itype)),
         np.zeros((2, 0, 0), dtype))


def test_batch_gather_bad_indices_cpu():
    # testBadIndicesCPU: "indices[0] = 7 is not in [0, 2)"
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0\] = 7 .*data dimension 0 of size 2"):
        tf_batch_gather(np.array([[0, 1, 2], [3, 4, 5]]), np.array([7]))


# --- tf.tensor_scatter_nd_* and stateful scatter_nd_* (scatter_nd_ops_test.py)

@pytest.mark.parametrize("dtype", (np.int32, np.int64, np.float32, np.float64))
def test_scatter_nd_simple(dtype):
    # StatefulScatterNdTest.testSimple / testSimpleResource
    out = tf_tensor_scatter("update", np.zeros(8, dtype), np.array([[4], [3], [1], [7]], np.int32),
                            cast([9, 10, 11, 12], dtype))
    same(out, cast([0, 11, 0, 10, 9, 0, 0, 12], dtype))


@pytest.mark.skipif(not bf16_available(), reason="bf16 needs torch")
def test_scatter_nd_simple_bf16():
    out = tf_tensor_scatter("update", torch.zeros(8, dtype=torch.bfloat16),
                            torch.tensor([[4], [3], [1], [7]], dtype=torch.int32),
                            torch.tensor([9, 10, 11, 12], dtype=torch.bfloat16))
    assert out.dtype == torch.bfloat16 and out.tolist() == [0, 11, 0, 10, 9, 0, 0, 12]


def test_scatter_nd_simple_2_and_3():
    # testSimple2 (element tuples), testSimple3 (a row)
    zeros = np.zeros((3, 2), np.float32)
    want = np.array([[0, 0], [11, 12], [0, 0]], np.float32)
    same(tf_tensor_scatter("update", zeros, np.array([[1, 0], [1, 1]], np.int32),
                           np.array([11, 12], np.float32)), want)
    same(tf_tensor_scatter("update", zeros, np.array([[1]], np.int32),
                           np.array([[11, 12]], np.float32)), want)


def numpy_scatter_nd(op, ref, indices, updates):
    """One tuple after another, in row-major order (TF's _NumpyScatterNd)."""
    fn = {"update": lambda p, u: u, "add": lambda p, u: p + u, "sub": lambda p, u: p - u,
          "min": np.minimum, "max": np.maximum}[op]
    out = ref.copy()
    k = indices.shape[-1]
    flat_i = indices.reshape(-1, k)
    flat_u = updates.reshape((flat_i.shape[0],) + ref.shape[k:])
    for t, u in zip(flat_i, flat_u):
        out[tuple(t)] = fn(out[tuple(t)], u)
    return out


RANK_CASES = list(zip([(3, 6), (3, 6), (3, 6, 9), (3, 6, 9), (3, 6, 9), (3, 6, 9)],
                      [(2,), (2, 2), (2,), (2, 2), (2, 3), (2, 3, 3)]))


@pytest.mark.parametrize("op,repeat", [("update", False), ("add", False), ("sub", False),
                                       ("add", True), ("sub", True)])
@pytest.mark.parametrize("dtype", (np.int32, np.float16, np.float32, np.float64))
@pytest.mark.parametrize("itype", ND_INDEX_TYPES)
def test_scatter_nd_variable_rank(op, dtype, itype, repeat):
    # testVariableRankUpdate/Add/Sub, testScatterRepeatIndices (add, sub).
    # TF compares with a tolerance; the SPEC's order (row-major, one update at
    # a time, f16 rounded after every step) makes numpy's loop exact here.
    rng = np.random.default_rng(8)
    for ref_shape, indices_shape in RANK_CASES:
        n, k = indices_shape[0], indices_shape[-1]
        area = list(np.ndindex(*ref_shape[:k]))
        picks = rng.permutation(len(area))[:n]
        indices = np.array([area[p] for p in picks])
        if n > 1 and repeat:
            half = indices[: n // 2]
            extra = half[rng.integers(0, n // 2, size=n - n // 2)]
            indices = rng.permutation(np.concatenate([half, extra]))
        indices = indices.astype(itype)
        updates = (rng.standard_normal((n,) + ref_shape[k:]) * 4).astype(dtype)
        ref = (rng.standard_normal(ref_shape) * 4).astype(dtype)
        same(tf_tensor_scatter(op, ref, indices, updates),
             numpy_scatter_nd(op, ref, indices, updates))


@pytest.mark.parametrize("op", ["add", "sub", "update"])
def test_scatter_nd_out_of_range_cpu(op):
    # testScatterOutOfRangeCpu: "indices[0] = [-1] does not index into shape [6]"
    params = np.array([1, 2, 3, 4, 5, 6], np.float32)
    updates = np.array([-3, -4, -5], np.float32)
    tf_tensor_scatter(op, params, np.array([[2], [0], [5]]), updates)
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0\] = \[-1\] .*data dimension 0 of size 6"):
        tf_tensor_scatter(op, params, np.array([[-1], [0], [5]]), updates)
    out = params.copy()
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[2\] = \[6\] .*data dimension 0 of size 6"):
        tf_tensor_scatter(op, params, np.array([[2], [0], [6]]), updates)
    # and in place: nothing written (SPEC: all-or-nothing on a bad index)
    with pytest.raises(tensorjit.IndexOutOfRange):
        tensorjit.scatter_nd_update(out, np.array([[2], [0], [6]]), updates, REDUCTION[op],
                                    out=out)
    same(out, params)


def test_scatter_nd_valid_shapes():
    # testRank3ValidShape, testExtraIndicesDimensions, testSmokeScatterNd*
    same(tf_tensor_scatter("update", np.zeros((2, 2, 2), np.int32), np.zeros((2, 2, 2), np.int32),
                           np.zeros((2, 2, 2), np.int32)), np.zeros((2, 2, 2), np.int32))
    same(tf_tensor_scatter("update", np.zeros((2, 2), np.int32), np.zeros((1, 1, 2), np.int32),
                           np.zeros((1, 1), np.int32)), np.zeros((2, 2), np.int32))
    for data, indices, updates in [((4, 6, 7), (3, 5, 2), (3, 5, 7)), ((4, 6, 7), (0, 2), (0, 7)),
                                   ((3, 4, 5, 6, 7, 8, 9), (1, 3), (1, 6, 7, 8, 9)),
                                   ((3, 4, 5, 6, 7, 8, 9), (1, 2, 3), (1, 2, 6, 7, 8, 9))]:
        for op in ("add", "update"):
            same(tf_tensor_scatter(op, np.zeros(data, np.float32), np.zeros(indices, np.int32),
                                   np.zeros(updates, np.float32)), np.zeros(data, np.float32))


def test_scatter_nd_invalid_shapes():
    # testRank3InvalidShape1: "Dimensions [0,1) of indices[shape=[3,2,2]] ..."
    with pytest.raises(tensorjit.SignatureError, match=r"updates.shape\[0\]=2 must equal 3"):
        tf_tensor_scatter("update", np.zeros((2, 2, 2), np.int32), np.zeros((3, 2, 2), np.int32),
                          np.zeros((2, 2, 2), np.int32))
    # testRank3InvalidShape2: "Dimensions [1,2) of input[shape=[2,2,2]] ..."
    with pytest.raises(tensorjit.SignatureError, match=r"rank\(updates\)=2 must equal"):
        tf_tensor_scatter("update", np.zeros((2, 2, 2), np.int32), np.zeros((2, 2, 1), np.int32),
                          np.zeros((2, 2), np.int32))
    # testUpdatesRankSmallerThanIndicesOuterDimsInvalid (both classes)
    with pytest.raises(tensorjit.SignatureError, match=r"rank\(updates\)=1 must equal"):
        tf_tensor_scatter("update", np.ones(8, np.int32), np.array([[[4]], [[3]], [[1]], [[7]]]),
                          np.array([9, 10, 11, 12], np.int32))
    # testResVarInvalidOutputShape: "Output must be at least 1-D"
    with pytest.raises(tensorjit.SignatureError, match=r"rank\(data\)=0"):
        tf_tensor_scatter("update", np.zeros((), np.float32), np.array([[0]]),
                          np.array([0.22], np.float32))


def test_scatter_nd_one_element_updates_where_scalar_expected():
    # ScatterNdTest.testInvalidShape: indices [0] (one tuple of k = 1 into a
    # [1] tensor), updates [0.0]. TF refuses: the updates' shape should be [].
    # INTENDED DIFFERENCE (docs/design.md, after OpenVINO's spec): an update
    # of one element is taken where the rule's shape is []; more are refused.
    same(tf_tensor_scatter("update", np.zeros(1, np.float32), np.array([0]),
                           np.array([0.5], np.float32)), np.array([0.5], np.float32))
    with pytest.raises(tensorjit.SignatureError, match=r"updates of shape \[2\]"):
        tf_tensor_scatter("update", np.zeros(2, np.float32), np.array([0]),
                          np.array([0.5, 1], np.float32))


def test_scatter_nd_empty_output():
    # testEmptyOutputShape1/2: data [0, 3, 2], indices and updates [2, 2, 2]:
    # TF "Indices and updates specified for empty output"
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"^indices\[0,0\] = \[0,0\] .*data dimension 0 of size 0"):
        tf_tensor_scatter("add", np.zeros((0, 3, 2), np.int32), np.zeros((2, 2, 2), np.int32),
                          np.zeros((2, 2, 2), np.int32))
    # testEmptyOutputShape3: indices [0] (k = 0, one empty tuple), updates [0], shape [0]
    same(tf_tensor_scatter("add", np.zeros(0, np.int32), np.zeros(0, np.int32),
                           np.zeros(0, np.int32)), np.zeros(0, np.int32))


def test_scatter_nd_concurrent_and_repeated_adds():
    # testConcurrentUpdates: 10000 adds into [0, 1] of a [2, 2] f64 tensor;
    # testScatterNdRepeatedIndicesAdd: 100000 adds into [1]. TF checks
    # allclose to the sum; SPEC's row-major order makes it np.add.at exactly.
    rng = np.random.default_rng(5)
    values = rng.random(10000)
    out = tf_tensor_scatter("add", np.zeros((2, 2)), np.tile([[0, 1]], (10000, 1)).astype(np.int32),
                            values)
    want = np.zeros((2, 2))
    np.add.at(want, (np.zeros(10000, int), np.ones(10000, int)), values)
    same(out, want)
    assert np.allclose(out[0, 1], values.sum())
    values = rng.standard_normal(100000)
    out = tf_tensor_scatter("add", np.zeros(1), np.zeros((100000, 1), np.int32), values)
    want = np.zeros(1)
    np.add.at(want, np.zeros(100000, int), values)
    same(out, want)
    # testDeterminism: the same bits on every run, update and add
    for op in ("update", "add"):
        first = tf_tensor_scatter(op, np.zeros(1), np.zeros((100000, 1), np.int32), values)
        for _ in range(5):
            same(tf_tensor_scatter(op, np.zeros(1), np.zeros((100000, 1), np.int32), values), first)
    same(tf_tensor_scatter("update", np.zeros(1), np.zeros((100000, 1), np.int32), values),
         values[-1:])


@pytest.mark.parametrize("dtype", (np.int32, np.float32))
def test_tensor_scatter_update_add_sub_min_max(dtype):
    # ScatterNdTensorTest.testUpdateAddSub, testUpdateMinMax,
    # testTensorScatterUpdateWithForwarding
    ones = np.ones(8, dtype)
    indices = np.array([[4], [3], [1], [7]])
    u = cast([9, 10, 11, 12], dtype)
    same(tf_tensor_scatter("update", ones, indices, u), cast([1, 11, 1, 10, 9, 1, 1, 12], dtype))
    same(tf_tensor_scatter("add", ones, indices, u), cast([1, 12, 1, 11, 10, 1, 1, 13], dtype))
    same(tf_tensor_scatter("sub", ones, indices, u), cast([1, -10, 1, -9, -8, 1, 1, -11], dtype))
    u = cast([0, 2, -1, 2], dtype)
    same(tf_tensor_scatter("update", ones, indices, u), cast([1, -1, 1, 2, 0, 1, 1, 2], dtype))
    same(tf_tensor_scatter("min", ones, indices, u), cast([1, -1, 1, 1, 0, 1, 1, 1], dtype))
    same(tf_tensor_scatter("max", ones, indices, u), cast([1, 1, 1, 2, 1, 1, 1, 2], dtype))


def test_tensor_scatter_repeated_indices():
    # testUpdateRepeatedIndices1D / 2D: the last duplicate wins on CPU
    out = tf_tensor_scatter("update", np.zeros((10, 1), np.float32), np.array([[5], [5]]),
                            np.array([[4], [8]], np.float32))
    want = np.zeros((10, 1), np.float32)
    want[5] = 8
    same(out, want)
    out = tf_tensor_scatter("update", np.zeros((10, 10), np.float32), np.array([[5], [6], [6]]),
                            np.stack([np.arange(10), np.arange(11, 21),
                                      np.arange(10, 20)]).astype(np.float32))
    same(out[6], np.arange(10, 20).astype(np.float32))
    same(out[5], np.arange(10).astype(np.float32))


def test_scatter_nd_bool():
    # ScatterNdTest.testBool: tf.scatter_nd adds into zeros; for bool, add is or
    indices = np.array([[4], [3], [1], [7]], np.int32)
    want = np.array([False, False, False, True, False, False, False, True])
    same(tf_tensor_scatter("add", np.zeros(8, bool), indices,
                           np.array([False, True, False, True])), want)
    same(tf_tensor_scatter("add", np.zeros(8, bool), np.array([[4], [3], [3], [7]], np.int32),
                         np.array([False, True, True, True])), want)


# tf.scatter_nd into zeros is the gradient of gather_nd: gather_nd_op_test's
# expected gradients are scatter-add facts (zeros, indices, updates, want).
GATHER_ND_GRAD_CASES = [
    # testGradientsRank2Elements
    ((2, 2), [[0, 0], [1, 1]], [1, 2], [[1, 0], [0, 2]]),
    # testGradientsRank2Slices
    ((2, 2), [[1], [0]], [[1, 2], [3, 4]], [[3, 4], [1, 2]]),
    # testGradientsRank3Elements / testGradientsInt64Indices
    ((2, 2, 2), [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
     [[[5, 6], [1, 2]], [[3, 4], [7, 8]]]),
    # testGradientsRank7Elements
    ((1, 1, 2, 1, 1, 2, 2),
     [[[[[[[0, 0, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0]]]], [[[[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1]]]]]]],
     [[[[[[[1, 2], [3, 4]]]], [[[[5, 6], [7, 8]]]]]]],
     [[[[[[[5, 6], [1, 2]]]], [[[[3, 4], [7, 8]]]]]]]),
    # testGradientsRank2SlicesWithEmptySpace
    ((6, 9), [[2], [0], [5]], [[1] * 9, [2] * 9, [3] * 9],
     [[2] * 9, [0] * 9, [1] * 9, [0] * 9, [0] * 9, [3] * 9]),
]


@pytest.mark.parametrize("case", range(len(GATHER_ND_GRAD_CASES)))
@pytest.mark.parametrize("itype", ND_INDEX_TYPES)
def test_scatter_nd_add_from_gather_nd_gradients(case, itype):
    shape, indices, updates, want = GATHER_ND_GRAD_CASES[case]
    same(tf_tensor_scatter("add", np.zeros(shape), np.array(indices, itype), cast(updates, np.float64)),
         cast(want, np.float64))


# --- tf.compat.v1.scatter_* (scatter_ops_test.py and the v1 cases of
#     scatter_nd_ops_test.py: testMin, testMax, testAdd, testSub) ------------

@pytest.mark.parametrize("op,updates,want", [
    ("min", [0, 2, -1, 2], [1, -1, 1, 1, 0, 1, 1, 1]),
    ("max", [0, 2, -1, 2], [1, 1, 1, 2, 1, 1, 1, 2]),
    ("add", [0, 2, -1, 3], [1, 0, 1, 3, 1, 1, 1, 4]),
    ("sub", [0, 2, -1, 2], [1, 2, 1, -1, 1, 1, 1, -1]),
])
def test_v1_scatter_min_max_add_sub(op, updates, want):
    out = tf_v1_scatter(op, np.ones(8, np.int32), np.array([4, 3, 1, 7]),
                        np.array(updates, np.int32))
    same(out, np.array(want, np.int32))


def numpy_v1_scatter(op, ref, indices, updates):
    """scatter_ops_test's loops: element by element, in row-major order."""
    fn = {"update": lambda p, u: u, "add": lambda p, u: p + u, "sub": lambda p, u: p - u,
          "mul": lambda p, u: p * u, "min": np.minimum, "max": np.maximum}[op]
    out = ref.copy()
    for i, ix in np.ndenumerate(indices):
        out[ix] = fn(out[ix], updates[i])
    return out


@pytest.mark.parametrize("op,repeat", [("update", False)] + [
    (op, r) for op in ("add", "sub", "mul", "min", "max") for r in (False, True)])
# TF's runs every dtype with both index types; here int32 indices run with
# f32 alone (the index type is the only thing they change, and each pair
# costs 12 compiles: the suite's time, docs/testing.md)
@pytest.mark.parametrize("dtype,itype", [(np.float32, np.int32), (np.float32, np.int64),
                                         (np.float64, np.int64), (np.int32, np.int64),
                                         (np.float16, np.int64)])
def test_v1_scatter_variable_rank(op, dtype, itype, repeat):
    # testVariableRank<Op> and testRepeatIndices<Op>: indices of shapes
    # (), (2,), (3, 7), (3, 4, 7) into a first dim of 3 * size, slices (), (5,), (5, 9).
    # (scatter_div has no tensorjit reduction; bf16 runs in the bf16 tests.)
    rng = np.random.default_rng(8)
    for indices_shape in [(), (2,), (3, 7), (3, 4, 7)]:
        for extra in [(), (5,), (5, 9)]:
            size = int(np.prod(indices_shape))
            indices = rng.permutation(3 * size)[:size]
            if size > 1 and repeat:
                half = indices[: size // 2]
                indices = rng.permutation(np.concatenate(
                    [half, half[rng.integers(0, size // 2, size=size - size // 2)]]))
            indices = indices.reshape(indices_shape).astype(itype)
            updates = rng.standard_normal(indices_shape + extra)
            if dtype == np.int32:
                updates = np.where(np.abs(updates) < 1, rng.choice([-1, 1], updates.shape),
                                   updates * 3)
            updates = np.asarray(updates).astype(dtype)
            ref = rng.standard_normal((3 * size,) + extra).astype(dtype)
            same(tf_v1_scatter(op, ref, indices, updates),
                 numpy_v1_scatter(op, ref, indices, updates))


@pytest.mark.skipif(not bf16_available(), reason="bf16 needs torch")
@pytest.mark.parametrize("op", ["update", "add", "sub", "mul", "min", "max"])
def test_v1_scatter_bf16(op):
    # the bfloat16 runs of testVariableRank<Op> / testRepeatIndices<Op>:
    # torch's bf16 arithmetic rounds after every step, as SPEC says ours does
    rng = np.random.default_rng(9)
    fn = {"update": lambda p, u: u, "add": lambda p, u: p + u, "sub": lambda p, u: p - u,
          "mul": lambda p, u: p * u, "min": torch.minimum, "max": torch.maximum}[op]
    for indices_shape, extra in [((2,), (5,)), ((3, 7), ()), ((3, 4, 7), (5, 9))]:
        size = int(np.prod(indices_shape))
        indices = rng.permutation(3 * size)[:size]
        if op != "update":
            indices = np.concatenate([indices[: size // 2], indices[: size - size // 2]])
        indices = rng.permutation(indices).reshape(indices_shape)
        updates = torch.tensor(rng.standard_normal(indices_shape + extra)).bfloat16()
        ref = torch.tensor(rng.standard_normal((3 * size,) + extra)).bfloat16()
        want = ref.clone()
        for i, ix in np.ndenumerate(indices):
            want[int(ix)] = fn(want[int(ix)], updates[i])
        got = tf_v1_scatter(op, ref, torch.from_numpy(indices), updates)
        assert got.dtype == torch.bfloat16
        assert torch.equal(got.view(torch.int16), want.view(torch.int16))


def test_v1_scatter_scalar_updates_refused():
    # testVariableRank<Op>Scalar: TF broadcasts one scalar update over every
    # slice. INTENDED DIFFERENCE (SPEC section 1): updates.shape must be
    # data.shape[:axis] + indices.shape + data.shape[axis+1:] exactly.
    ref = np.zeros((6, 5), np.float32)
    with pytest.raises(tensorjit.SignatureError, match=r"rank\(updates\)=0 must equal"):
        tf_v1_scatter("update", ref, np.array([1, 2]), np.float32(3))
    # where the exact shape is [] (0-D indices into a vector) the scalar is the rule
    same(tf_v1_scatter("update", np.zeros(6, np.float32), np.array(2), np.float32(3)),
         np.array([0, 0, 3, 0, 0, 0], np.float32))


def test_v1_boolean_scatter_update():
    # testBooleanScatterUpdate: 0-D indices of int32 and int64
    var = np.array([True, False])
    var = tf_v1_scatter("update", var, np.array(1), np.array(True))
    var = tf_v1_scatter("update", var, np.array(0, np.int64), np.array(False))
    same(var, np.array([False, True]))


@pytest.mark.parametrize("op", ["update", "add", "sub", "mul", "min", "max"])
def test_v1_scatter_out_of_range_cpu(op):
    # testScatterOutOfRangeCpu: "indices[0] = -1 is not in [0, 6)", "indices[2] = 6 ..."
    params = np.array([1, 2, 3, 4, 5, 6], np.float32)
    updates = np.array([-3, -4, -5], np.float32)
    tf_v1_scatter(op, params, np.array([2, 0, 5]), updates)
    bracket = "" if op == "update" else r"\["
    close = "" if op == "update" else r"\]"
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=rf"^indices\[0\] = {bracket}-1{close} .*data dimension 0 of size 6"):
        tf_v1_scatter(op, params, np.array([-1, 0, 5]), updates)
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=rf"^indices\[2\] = {bracket}6{close} .*data dimension 0 of size 6"):
        tf_v1_scatter(op, params, np.array([2, 0, 6]), updates)


def test_complex_dtypes_refused():
    # TF's cases also run complex64/complex128 and strings: no kernel type here
    with pytest.raises(tensorjit.TypeMismatch, match="complex"):
        tf_gather(np.array([1, 2], np.complex64), np.array([1]))


# --- the CLI on a handful of these cases -------------------------------------

def run_cli(tmp_path, op, arrays, *flags):
    paths = []
    for name, arr in arrays.items():
        p = tmp_path / f"{name}.npy"
        np.save(p, arr)
        paths += [f"--{name}", str(p)]
    out = tmp_path / "out.npy"
    r = subprocess.run([CLI, op, *paths, *flags, "-o", str(out)], capture_output=True, text=True)
    return r, (np.load(out) if r.returncode == 0 else None)


@pytest.mark.skipif(CLI is None, reason="the CLI is not built")
def test_cli_agrees(tmp_path):
    r, out = run_cli(tmp_path, "gather-nd", {"data": np.ascontiguousarray(P3),
                                             "indices": np.array([[[3], [2], [1]], [[4], [4], [0]]])})
    assert r.returncode == 0, r.stderr
    same(out, P3[[3, 2, 1, 4, 4, 0]].reshape(2, 3, 2, 2))
    b, axis, params, indices, expected = GATHER_BATCH_CASES[12]
    r, out = run_cli(tmp_path, "gather", {"data": np.array(params, np.int32),
                                          "indices": np.array(indices)},
                     "--axis", str(axis), "--batch-dims", str(b))
    assert r.returncode == 0, r.stderr
    same(out, np.array(expected, np.int32))
    r, out = run_cli(tmp_path, "gather-nd", {"data": np.ones((3, 2, 2, 3, 4), np.float32),
                                             "indices": np.ones((3, 2, 1, 3), np.int64)},
                     "--batch-dims", "2")
    assert r.returncode == 0, r.stderr
    assert out.shape == (3, 2, 1)
    r, out = run_cli(tmp_path, "scatter-nd-update",
                     {"data": np.ones(8, np.float32), "indices": np.array([[4], [3], [1], [7]]),
                      "updates": np.array([0, 2, -1, 2], np.float32)}, "--reduction", "min")
    assert r.returncode == 0, r.stderr
    same(out, np.array([1, -1, 1, 1, 0, 1, 1, 1], np.float32))
    r, out = run_cli(tmp_path, "scatter-update",
                     {"data": np.zeros(8, np.int32), "indices": np.array([4, 3, 1, 7]),
                      "updates": np.array([9, 10, 11, 12], np.int32)}, "--axis", "0")
    assert r.returncode == 0, r.stderr
    same(out, np.array([0, 11, 0, 10, 9, 0, 0, 12], np.int32))
    # errors: exit 3 for a bad index, 2 for a bad shape, one line naming it
    r, _ = run_cli(tmp_path, "gather", {"data": np.array([[0, 1, 2], [3, 4, 5]]),
                                        "indices": np.array([[7]])}, "--axis", "1")
    assert r.returncode == 3
    assert "indices[0,0] = 7" in r.stderr and "dimension 1 of size 3" in r.stderr
    r, _ = run_cli(tmp_path, "scatter-nd-update",
                   {"data": np.zeros(6, np.float32), "indices": np.array([[-1], [0], [5]]),
                    "updates": np.zeros(3, np.float32)}, "--reduction", "sum")
    assert r.returncode == 3 and "indices[0] = [-1]" in r.stderr
    r, _ = run_cli(tmp_path, "scatter-nd-update",
                   {"data": np.zeros((2, 2, 2), np.int32), "indices": np.zeros((3, 2, 2), np.int32),
                    "updates": np.zeros((2, 2, 2), np.int32)})
    assert r.returncode == 2 and "updates" in r.stderr
