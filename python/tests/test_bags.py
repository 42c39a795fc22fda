"""The embedding bags in Python (SPEC section 10): the OpenVINO-named
functions against a numpy oracle written here from SPEC 10's rules and
against the conformance vectors, and tensorjit.torch.embedding_bag /
embedding against torch.nn.functional (skipped where torch is absent)."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(25)
CASES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "cases" / "embedding_bag.json"


# ------------------------------------------------------------------
# The oracle: SPEC 10's rules, one lookup at a time

def acc_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.bool_
    if dtype.kind == "f":
        return np.float64 if dtype == np.float64 else np.float32
    return np.uint64 if dtype.kind == "u" else np.int64


def resolve(i, rows, policy):
    """The row lookup i reads under the index policy; None: dropped."""
    if policy == "negative-wraps" and i < 0:
        i += rows
    elif policy == "clamp":
        i = min(max(i, 0), rows - 1)
    elif policy == "zero-fill" and not 0 <= i < rows:
        return None
    assert 0 <= i < rows, "the oracle is given valid indices under error and negative-wraps"
    return i


def truncating_mean(acc, count):
    if acc.dtype.kind == "f":
        return acc / acc.dtype.type(count)  # a division, not a multiplication by 1/count
    q = np.abs(acc) // acc.dtype.type(count)
    return np.where(acc < 0, -q, q).astype(acc.dtype)


def oracle(table, indices, bags, *, weights=None, reduction="sum", default_index=None,
           padding_idx=None, policy="error"):
    """out[b] = the reduction over the lookups of bags[b] (positions into the
    flattened indices), in index order, in the accumulator type, rounded
    once to the table's type."""
    rows, row_shape = table.shape[0], table.shape[1:]
    acc_t = acc_dtype(table.dtype)
    pad = None if padding_idx is None else padding_idx % rows
    flat_idx = np.asarray(indices).reshape(-1)
    flat_w = None if weights is None else np.asarray(weights).reshape(-1)
    out = np.zeros((len(bags),) + row_shape, table.dtype)
    with np.errstate(over="ignore"):
        for b, positions in enumerate(bags):
            if not positions:
                if default_index is not None and default_index >= 0:
                    out[b] = table[default_index]
                continue
            acc, count = np.zeros(row_shape, acc_t), 0
            for j in positions:
                r = resolve(int(flat_idx[j]), rows, policy)
                if r is None or r == pad:
                    continue
                row = table[r].astype(acc_t)
                if flat_w is not None:
                    row = (acc_t(flat_w[j]) * row).astype(acc_t)
                if reduction == "max":
                    acc = row if count == 0 else np.maximum(acc, row)
                else:
                    acc = (acc + row).astype(acc_t)
                count += 1
            if count and reduction == "mean":
                acc = truncating_mean(acc, count)
            if count:
                out[b] = acc.astype(table.dtype)
    return out


def offsets_bags(offsets, n, include_last_offset=False):
    offsets = [int(o) for o in offsets]
    starts = offsets[:-1] if include_last_offset else offsets
    ends = offsets[1:] if include_last_offset else offsets[1:] + [n]
    return [list(range(s, e)) for s, e in zip(starts, ends)]


def packed_bags(b, length):
    return [list(range(i * length, (i + 1) * length)) for i in range(b)]


def segment_bags(segment_ids, s):
    return [[j for j, v in enumerate(segment_ids) if v == k] for k in range(s)]


def random_table(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "f":
        return RNG.standard_normal(size=shape).astype(dtype)
    return RNG.integers(-100 if dtype.kind == "i" else 0, 100, size=shape).astype(dtype)


def random_offsets(n, b, include_last_offset=False, first_zero=True):
    """B sorted offsets in [0, N] (repeats: empty bags), the first 0."""
    cuts = np.sort(RNG.integers(0, n + 1, size=b + (1 if include_last_offset else 0)))
    if first_zero and len(cuts):
        cuts[0] = 0
    return cuts


def random_ids(shape, rows, policy):
    low, high = {"error": (0, rows), "negative-wraps": (-rows, rows),
                 "clamp": (-3, rows + 3), "zero-fill": (-3, rows + 3)}[policy]
    return RNG.integers(low, high, size=shape)


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (got, want)


FLOATS = [np.float32, np.float64, np.float16]
TABLE_DTYPES = FLOATS + [np.int32, np.int8, np.uint8, np.int64]
POLICIES = ["error", "negative-wraps", "clamp", "zero-fill"]


# ------------------------------------------------------------------
# EmbeddingBagOffsets

@pytest.mark.parametrize("dtype", TABLE_DTYPES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "max"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_offsets_against_the_oracle(dtype, reduction, index_dtype):
    for _ in range(6):
        rows, n, b = int(RNG.integers(1, 9)), int(RNG.integers(0, 20)), int(RNG.integers(1, 7))
        table = random_table((rows,) + tuple(RNG.integers(1, 5, size=RNG.integers(0, 3))),
                             dtype)
        indices = random_ids((n,), rows, "error").astype(index_dtype)
        offsets = random_offsets(n, b).astype(index_dtype)
        default = int(RNG.integers(-1, rows)) if RNG.integers(0, 2) else None
        got = tensorjit.embedding_bag_offsets(table, indices, offsets, reduction=reduction,
                                              default_index=default)
        want = oracle(table, indices, offsets_bags(offsets, n), reduction=reduction,
                      default_index=default)
        assert_same(got, want)


@pytest.mark.parametrize("dtype", TABLE_DTYPES)
def test_offsets_weighted_sum(dtype):
    rows, n = 7, 15
    table = random_table((rows, 5), dtype)
    indices = random_ids((n,), rows, "error")
    offsets = random_offsets(n, 4)
    weights = random_table((n,), dtype)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, weights=weights)
    assert_same(got, oracle(table, indices, offsets_bags(offsets, n), weights=weights))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "max"])
def test_offsets_index_policies(policy, reduction):
    rows, n = 6, 18
    table = random_table((rows, 3), np.float32)
    indices = random_ids((n,), rows, policy)
    offsets = random_offsets(n, 5)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, reduction=reduction,
                                          index_policy=policy)
    assert_same(got, oracle(table, indices, offsets_bags(offsets, n), reduction=reduction,
                            policy=policy))


@pytest.mark.parametrize("reduction", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [0, 3, -1, -6])
def test_offsets_padding_and_last_offset(reduction, padding_idx):
    rows, n = 6, 16
    table = random_table((rows, 4), np.float32)
    indices = random_ids((n,), rows, "error")
    indices[:4] = padding_idx % rows  # a bag of padding only: zeros, not the default row
    offsets = np.concatenate([[0, 4], random_offsets(n - 4, 3, True)[1:] + 4, [n]])
    offsets = np.sort(offsets)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, reduction=reduction,
                                          include_last_offset=True, padding_idx=padding_idx,
                                          default_index=2)
    want = oracle(table, indices, offsets_bags(offsets, n, True), reduction=reduction,
                  padding_idx=padding_idx, default_index=2)
    assert_same(got, want)
    assert not want[0].any()


def test_offsets_first_offset_above_zero_leaves_indices_unused():
    table = random_table((4, 2), np.float32)
    indices = np.array([99, 1, 2, 3])  # 99 is read by no bag: not checked
    offsets = np.array([1, 3])
    got = tensorjit.embedding_bag_offsets(table, indices, offsets)
    assert_same(got, oracle(table, indices, offsets_bags(offsets, 4)))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_offsets_from_zero_is_torchs_first_offset_rule(index_dtype):
    table = random_table((4, 2), np.float32)
    indices = np.array([0, 1, 2, 3], index_dtype)
    out = np.full((2, 2), 7, np.float32)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"offsets\[0\] = 1\b.*must be 0"):
        tensorjit.embedding_bag_offsets(table, indices, np.array([1, 3], index_dtype),
                                        offsets_from_zero=True, out=out)
    assert (out == 7).all()  # refused before anything is written
    offsets = np.array([0, 3], index_dtype)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, offsets_from_zero=True)
    assert_same(got, oracle(table, indices, offsets_bags(offsets, 4)))
    none = tensorjit.embedding_bag_offsets(table, indices, np.array([], index_dtype),
                                           offsets_from_zero=True)
    assert none.shape == (0, 2)  # no bag, no first offset to hold to the rule


def test_offsets_nan_propagates_through_max():
    table = random_table((3, 2), np.float32)
    table[1, 0] = np.nan
    got = tensorjit.embedding_bag_offsets(table, np.array([0, 1, 2]), np.array([0]),
                                          reduction="max")
    assert np.isnan(got[0, 0]) and got[0, 1] == table[:, 1].max()


def test_bool_table_takes_max():
    table = random_table((5, 3), np.bool_)
    indices, offsets = random_ids((9,), 5, "error"), np.array([0, 2, 2, 7])
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, reduction="max")
    assert_same(got, oracle(table, indices, offsets_bags(offsets, 9), reduction="max"))
    with pytest.raises(tensorjit.SignatureError, match="bool"):
        tensorjit.embedding_bag_offsets(table, indices, offsets)


def test_opset_3_is_sum_only():
    table, indices, offsets = random_table((4, 2), np.float32), np.array([0, 1]), np.array([0])
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, opset=3)
    assert_same(got, oracle(table, indices, [[0, 1]]))
    for kw in ({"reduction": "mean"}, {"padding_idx": 0}, {"include_last_offset": True}):
        with pytest.raises(tensorjit.SignatureError):
            tensorjit.embedding_bag_offsets(table, indices, np.array([0, 2]), opset=3, **kw)


# ------------------------------------------------------------------
# EmbeddingBagPacked and EmbeddingSegmentsSum

@pytest.mark.parametrize("dtype", TABLE_DTYPES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "max"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_packed_against_the_oracle(dtype, reduction, index_dtype):
    for _ in range(4):
        rows, b, length = (int(v) for v in RNG.integers(1, 7, size=3))
        table = random_table((rows, int(RNG.integers(1, 6))), dtype)
        indices = random_ids((b, length), rows, "error").astype(index_dtype)
        padding = int(RNG.integers(-rows, rows)) if RNG.integers(0, 2) else None
        got = tensorjit.embedding_bag_packed(table, indices, reduction=reduction,
                                             padding_idx=padding)
        assert_same(got, oracle(table, indices, packed_bags(b, length), reduction=reduction,
                                padding_idx=padding))


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_packed_weighted(dtype):
    table = random_table((9, 4), dtype)
    indices = random_ids((5, 3), 9, "error")
    weights = random_table((5, 3), dtype)
    got = tensorjit.embedding_bag_packed(table, indices, weights=weights)
    assert_same(got, oracle(table, indices, packed_bags(5, 3), weights=weights))


@pytest.mark.parametrize("dtype", TABLE_DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_segments_against_the_oracle(dtype, index_dtype):
    for _ in range(6):
        rows, n, s = int(RNG.integers(1, 8)), int(RNG.integers(0, 14)), int(RNG.integers(0, 6))
        table = random_table((rows, 3, 2), dtype)
        indices = random_ids((n,), rows, "error").astype(index_dtype)
        ids = RNG.integers(0, max(s, 1), size=n).astype(index_dtype) if s else \
            np.zeros(0, index_dtype)
        indices = indices[:len(ids)]
        weights = random_table((len(ids),), dtype) if RNG.integers(0, 2) else None
        default = int(RNG.integers(-1, rows)) if RNG.integers(0, 2) else None
        got = tensorjit.embedding_segments(table, indices, ids, s, weights=weights,
                                           default_index=default)
        want = oracle(table, indices, segment_bags(ids, s), weights=weights,
                      default_index=default)
        assert_same(got, want)


def test_a_new_batch_or_length_compiles_nothing():
    table = random_table((50, 8), np.float32)
    tensorjit.embedding_bag_offsets(table, np.array([1, 2]), np.array([0]))
    tensorjit.embedding_bag_packed(table, np.array([[1, 2]]))
    tensorjit.embedding_segments(table, np.array([1, 2]), np.array([0, 0]), 1)
    before = tensorjit.stats()["compiles"]
    for n in (3, 17, 40):
        indices = random_ids((n,), 50, "error")
        offsets = random_offsets(n, n // 3)
        got = tensorjit.embedding_bag_offsets(table, indices, offsets)
        assert_same(got, oracle(table, indices, offsets_bags(offsets, n)))
        tensorjit.embedding_bag_packed(random_table((50 + n, 8), np.float32),
                                       indices.reshape(1, n))
        tensorjit.embedding_segments(table, indices, np.zeros(n, np.int64), n)
    assert tensorjit.stats()["compiles"] == before


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_the_jit_serves_every_form(dtype):
    """A family's kernel takes the table's row width as a constant: with
    every dim of the table dynamic the library hands the call to the
    reference kernel, which the results alone would never show."""
    for shape in ((40, 8), (40, 2, 3)):
        table = random_table(shape, dtype)
        indices = random_ids((12,), 40, "error")
        infos = [
            tensorjit.embedding_bag_offsets_info(table, indices, np.array([0, 5, 5])),
            tensorjit.embedding_bag_packed_info(table, indices.reshape(3, 4)),
            tensorjit.embedding_segments_info(table, indices, np.zeros(12, np.int64), 2),
        ]
        for info in infos:
            assert info["engine"] == "jit", info["why"]
            assert info["dynamic"] and info["code_bytes"] > 0
        assert infos[0]["out_bytes"] == 3 * table[0].nbytes
        got = tensorjit.embedding_bag_offsets(table, indices, np.array([0, 5, 5]))
        assert got.shape == (3,) + shape[1:]
        assert_same(got, oracle(table, indices, offsets_bags(np.array([0, 5, 5]), 12)))


def test_a_new_row_width_is_a_new_family_and_new_rows_are_not():
    # widths no other test uses: the count of compiles is this test's own
    indices = np.array([1, 0, 2])
    tensorjit.embedding_bag_offsets(random_table((3, 1009), np.float32), indices, np.array([0]))
    before = tensorjit.stats()["compiles"]
    for rows in (3, 9, 200):  # E is a dim of the call
        table = random_table((rows, 1009), np.float32)
        got = tensorjit.embedding_bag_offsets(table, indices, np.array([0, 2]))
        assert_same(got, oracle(table, indices, offsets_bags(np.array([0, 2]), 3)))
    assert tensorjit.stats()["compiles"] == before
    for shape in ((3, 1013), (3, 1009, 1)):  # 1013 elements a row: new; [1009, 1] is not
        table = random_table(shape, np.float32)
        got = tensorjit.embedding_bag_offsets(table, indices, np.array([0, 2]))
        assert got.shape == (2,) + shape[1:]
        assert_same(got, oracle(table, indices, offsets_bags(np.array([0, 2]), 3)))
    assert tensorjit.stats()["compiles"] == before + 1


def test_out_of_a_rank_3_table():
    """A [E, 2, 3] table's family runs on rows of 6 elements; out= must
    still have the output's own shape [B, 2, 3], not [B, 6]."""
    table = random_table((5, 2, 3), np.float32)
    indices, offsets = np.array([4, 0, 2]), np.array([0, 1])
    out = np.full((2, 2, 3), 7.0, np.float32)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, out=out)
    assert got is out
    assert_same(out, oracle(table, indices, offsets_bags(offsets, 3)))
    for shape in ((2, 6), (2, 3, 2)):  # as many elements, another shape
        bad = np.full(shape, 7.0, np.float32)
        with pytest.raises(tensorjit.SignatureError):
            tensorjit.embedding_bag_offsets(table, indices, offsets, out=bad)
        assert np.all(bad == 7.0)


def test_out_is_written_in_place():
    table = random_table((6, 4), np.float64)
    indices, offsets = random_ids((10,), 6, "error"), np.array([0, 3, 3, 8])
    out = np.full((4, 4), 7.0)
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, reduction="mean", out=out)
    assert got is out
    assert_same(out, oracle(table, indices, offsets_bags(offsets, 10), reduction="mean"))


def test_strided_inputs_read_as_numpy_reads_them():
    table = random_table((8, 6), np.float32)[::-1, ::2]
    indices = random_ids((20,), 8, "error")[::2]
    offsets = np.array([0, 0, 4, 4, 9, 9])[::2]
    weights = random_table((20,), np.float32)[::2]
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, weights=weights)
    assert_same(got, oracle(np.ascontiguousarray(table), indices, offsets_bags(offsets, 10),
                            weights=weights))


def vector(values, dtype, shape=None):
    if dtype == "bf16":
        pytest.importorskip("ml_dtypes")
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    a = np.array(values, dtype=np.float64 if values and dtype != "bool" else None)
    return a.astype(np.dtype(dtype)).reshape(shape if shape is not None else a.shape)


def cases():
    if not CASES.exists():
        return []
    return json.loads(CASES.read_text())


@pytest.mark.parametrize("case", cases(),  # none where the tests run out of the tree
                         ids=lambda c: c["source"].split("(")[-1][:40] if isinstance(c, dict)
                         else str(c))
def test_conformance_vectors(case):
    """tests/cases/embedding_bag.json (OpenVINO's tests and spec examples)."""
    dt = {"f32": "float32", "f16": "float16", "f64": "float64", "bf16": "bf16",
          "i8": "int8", "i32": "int32", "i64": "int64", "u8": "uint8", "bool": "bool"}
    dtype, itype = dt[case["dtype"]], dt[case["index_type"]]
    table = vector(case["table"], dtype, case["table_shape"])
    indices = np.array(case["indices"], itype).reshape(case["indices_shape"])
    weights = None if case["weights"] is None else \
        vector(case["weights"], dtype, case["indices_shape"])
    policy = case["index_policy"].replace("_", "-")
    default = case["default_index"]
    if case["op"] == "EmbeddingSegmentsSum":
        got = tensorjit.embedding_segments(table, indices, np.array(case["segment_ids"], itype),
                                           case["num_segments"], weights=weights,
                                           default_index=default, index_policy=policy)
    elif case["op"] == "EmbeddingBagPacked":
        got = tensorjit.embedding_bag_packed(table, indices, weights=weights,
                                             reduction=case["reduction"],
                                             padding_idx=case["padding_idx"],
                                             opset=case["version"], index_policy=policy)
    else:
        got = tensorjit.embedding_bag_offsets(
            table, indices, np.array(case["offsets"], itype), weights=weights,
            default_index=default, reduction=case["reduction"],
            include_last_offset=case["include_last_offset"], padding_idx=case["padding_idx"],
            opset=case["version"], index_policy=policy)
    assert_same(got, vector(case["expected"], dtype, case["expected_shape"]))


# ------------------------------------------------------------------
# Errors

def test_bad_index_names_its_position_and_writes_nothing():
    table = random_table((5, 2), np.float32)
    out = np.full((2, 2), 3.0, np.float32)
    with pytest.raises(tensorjit.IndexOutOfRange) as e:
        tensorjit.embedding_bag_offsets(table, np.array([0, 1, 7, 9]), np.array([0, 2]),
                                        out=out)
    assert isinstance(e.value, IndexError) and "7" in str(e.value) and "2" in str(e.value)
    assert (out == 3.0).all()


@pytest.mark.parametrize("offsets, position", [([0, 3, 1], 2), ([0, 5], 1), ([-1, 2], 0)])
def test_bad_offsets_name_their_position(offsets, position):
    table = random_table((5, 2), np.float32)
    with pytest.raises(tensorjit.IndexOutOfRange, match=rf"offsets.*\b{position}\b"):
        tensorjit.embedding_bag_offsets(table, np.array([0, 1, 2, 3]), np.array(offsets))


def test_bad_segment_id_names_its_position():
    table = random_table((5, 2), np.float32)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"segment.*\b1\b"):
        tensorjit.embedding_segments(table, np.array([0, 1]), np.array([0, 3]), 3)


def test_signature_errors_are_value_errors():
    table, indices, offsets = random_table((5, 2), np.float32), np.array([0, 1]), np.array([0])
    bad = [dict(default_index=5), dict(default_index=-2), dict(padding_idx=5),
           dict(padding_idx=-6), dict(reduction="prod"),
           dict(reduction="mean", weights=np.ones(2, np.float32)),
           dict(include_last_offset=True, opset=3), dict(opset=7)]
    for kw in bad:
        with pytest.raises(tensorjit.SignatureError):
            tensorjit.embedding_bag_offsets(table, indices, offsets, **kw)
    with pytest.raises(ValueError, match="num_segments"):
        tensorjit.embedding_segments(table, indices, np.array([0, 0]), -1)


@pytest.mark.parametrize("s", [2 ** 62, 2 ** 63 - 1])
def test_num_segments_whose_bytes_overflow_is_a_signature_error(s):
    table = random_table((3, 4), np.float32)
    with pytest.raises(tensorjit.SignatureError, match="int64"):
        tensorjit.embedding_segments(table, np.array([0]), np.array([0]), s)


def test_weights_must_match_indices():
    table, indices = random_table((5, 2), np.float32), np.array([0, 1, 2])
    with pytest.raises(tensorjit.SignatureError, match=r"weights.*\b2\b.*\b3\b"):
        tensorjit.embedding_bag_offsets(table, indices, np.array([0]),
                                        weights=np.ones(2, np.float32))
    with pytest.raises(tensorjit.SignatureError, match="weights"):
        tensorjit.embedding_bag_packed(table, indices.reshape(1, 3),
                                       weights=np.ones((3, 1), np.float32))
    with pytest.raises(tensorjit.TypeMismatch, match="weights.*f64"):
        tensorjit.embedding_bag_offsets(table, indices, np.array([0]),
                                        weights=np.ones(3, np.float64))


def test_index_types():
    table = random_table((5, 2), np.float32)
    with pytest.raises(tensorjit.TypeMismatch, match="offsets.*int32.*int64|offsets.*i32.*i64"):
        tensorjit.embedding_bag_offsets(table, np.array([0, 1], np.int64),
                                        np.array([0], np.int32))
    with pytest.raises(tensorjit.TypeMismatch, match="indices"):
        tensorjit.embedding_bag_offsets(table, np.array([0.0, 1.0]), np.array([0]))
    with pytest.raises(tensorjit.SignatureError, match="i16|index"):
        tensorjit.embedding_bag_packed(table, np.array([[0, 1]], np.int16))


def test_bad_out_is_refused_and_untouched():
    table = random_table((5, 2), np.float32)
    out = np.zeros((3, 2), np.float32)
    with pytest.raises(tensorjit.SignatureError, match="shape"):
        tensorjit.embedding_bag_packed(table, np.array([[0, 1]]), out=out)
    with pytest.raises(tensorjit.SignatureError, match="overlaps table"):
        tensorjit.embedding_bag_packed(table, np.array([[0, 1], [1, 1]]), out=table[:2])
    assert not out.any()


def test_out_of_another_shape_names_both_shapes():
    table = random_table((5, 3), np.float32)
    with pytest.raises(tensorjit.SignatureError, match=r"out has shape \(3, 3\); the output's "
                       r"is \(2, 3\)"):
        tensorjit.embedding_segments(table, np.array([0, 1, 2]), np.array([0, 0, 1]), 2,
                                     out=np.zeros((3, 3), np.float32))


@pytest.mark.parametrize("reduction", ["none", "add", "prod", "min"])
def test_only_the_bags_reductions(reduction):
    """The scatters' other reduction names are refused, not read as a sum."""
    table, indices, offsets = random_table((4, 3), np.float32), np.array([0, 1]), np.array([0])
    with pytest.raises(tensorjit.SignatureError, match=r"not one of the embedding bags' "
                       r"\(sum, mean, max\)"):
        tensorjit.embedding_bag_offsets(table, indices, offsets, reduction=reduction)
    with pytest.raises(tensorjit.SignatureError, match="sum, mean, max"):
        tensorjit.embedding_bag_packed(table, indices.reshape(1, 2), reduction=reduction)


def test_signature_errors_name_the_call_s_own_shapes():
    """A family refused by the library is refused for the call's shapes:
    the library judges a dynamic family by probe dims (all 5), which its
    message used to name."""
    table, ix = np.zeros((4, 3), np.float32), np.arange(3)
    cases = [
        (lambda: tensorjit.embedding_bag_offsets(table, np.zeros((5, 1), np.int64),
                                                 np.array([0, 2])), r"indices of shape \[5,1\]"),
        (lambda: tensorjit.embedding_bag_offsets(table, ix, np.array([[0, 2]])),
         r"offsets of shape \[1,2\]"),
        (lambda: tensorjit.embedding_bag_offsets(table, ix, np.array([0]), default_index=-2),
         r"default_index=-2 .*\[0, 4\)"),
        (lambda: tensorjit.embedding_bag_packed(table, ix), r"indices of shape \[3\]"),
        (lambda: tensorjit.embedding_bag_packed(table.astype(bool), np.zeros((2, 2), np.int64)),
         "bool takes reduction max only"),
    ]
    for call, message in cases:
        with pytest.raises(tensorjit.SignatureError, match=message) as raised:
            call()
        assert "dynamic dims at" not in str(raised.value)


def test_negative_padding_idx_runs_the_jit():
    """padding_idx -1 names row E - 1 of this call's table: the same family
    and the same bytes as padding_idx E - 1, served by the JIT (a negative
    row against dynamic rows left every call to the reference kernel)."""
    table = random_table((50, 8), np.float32)
    indices = RNG.integers(0, 50, 64)
    indices[::5] = 49
    offsets = np.arange(0, 64, 4)
    info = tensorjit.embedding_bag_offsets_info(table, indices, offsets, padding_idx=-1,
                                                reduction="mean")
    assert info["engine"] == "jit", info
    got = tensorjit.embedding_bag_offsets(table, indices, offsets, padding_idx=-1,
                                          reduction="mean")
    assert_same(got, tensorjit.embedding_bag_offsets(table, indices, offsets, padding_idx=49,
                                                     reduction="mean"))
    assert_same(got, oracle(table, indices, offsets_bags(offsets, 64), reduction="mean",
                            padding_idx=49))
    with pytest.raises(tensorjit.SignatureError, match="padding_idx"):
        tensorjit.embedding_bag_offsets(table, indices, offsets, padding_idx=-51)


def test_argument_names():
    table = random_table((5, 2), np.float32)
    with pytest.raises(TypeError):
        tensorjit.embedding_bag_offsets(table, np.array([0]), np.array([0]), None)
    with pytest.raises(TypeError, match="reduce"):
        tensorjit.embedding_bag_packed(table, np.array([[0]]), reduce="sum")
    with pytest.raises(TypeError, match="num_segments"):
        tensorjit.embedding_segments(table, np.array([0]), np.array([0]))


# ------------------------------------------------------------------
# tensorjit.torch against torch.nn.functional

def torch_or_skip():
    return pytest.importorskip("torch")


def torch_bags(torch, n, b, include_last_offset, itype):
    offsets = torch.from_numpy(random_offsets(n, b, include_last_offset)).to(itype)
    return offsets


TORCH_FLOATS = ["float32", "float64", "float16"]


@pytest.mark.parametrize("dtype", TORCH_FLOATS)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_torch_embedding_bag_bit_for_bit(dtype, mode, itype):
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    dt, it = getattr(torch, dtype), getattr(torch, itype)
    for trial in range(8):
        rows, n, b = int(RNG.integers(1, 12)), int(RNG.integers(0, 30)), int(RNG.integers(1, 8))
        weight = torch.randn(rows, int(RNG.integers(1, 9))).to(dt)
        last = bool(trial % 2)
        padding = int(RNG.integers(-rows, rows)) if trial % 3 == 0 else None
        packed = trial % 4 == 3
        if packed:
            inp, offsets = torch.randint(0, rows, (b, max(n // b, 1)), dtype=it), None
        else:
            inp = torch.randint(0, rows, (n,), dtype=it)
            offsets = torch_bags(torch, n, b, last, it)
        if last:
            # torch's contract: the last offset is len(input). Past it, torch
            # 1.13 counts the lookups after it into the last bag's mean and
            # corrupts its heap with padding_idx (test_torch_2d_last_offset)
            last = not packed
            if offsets is not None:
                offsets[-1] = n
        kw = dict(mode=mode, include_last_offset=last, padding_idx=padding)
        got = tt.embedding_bag(inp, weight, offsets, **kw)
        want = F.embedding_bag(inp, weight, offsets, **kw)
        assert isinstance(got, torch.Tensor) and got.dtype == dt and got.shape == want.shape
        if dtype == "float16" and mode == "mean":
            # torch 1.13 rounds its f16 mean twice (SPEC 10): a few ulps
            assert torch.allclose(got.float(), want.float(), rtol=2 * 2.0 ** -10, atol=2.0 ** -24)
            bags = packed_bags(b, inp.shape[1]) if packed else \
                offsets_bags(offsets.numpy(), n, last)
            assert_same(got.numpy(), oracle(weight.numpy(), inp.numpy(), bags, reduction=mode,
                                            padding_idx=padding))
        else:
            assert torch.equal(got, want), (kw, got, want)


def test_torch_2d_input_with_include_last_offset():
    """torch before 2.10 reads a 2-D input as offsets 0, L, 2L, ..., so with
    include_last_offset the last row is no bag: B - 1 bags of rows 0 to
    B - 2 (torch 1.13 itself corrupts its heap there with padding_idx, and
    counts the last row into the last bag's mean, so the oracle judges);
    torch 2.10 made every row a bag, and so does tensorjit beside such a
    torch, or beside none."""
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    from torch_inputs import TORCH_EVERY_ROW_A_BAG
    weight, inp = torch.randn(7, 3), torch.randint(0, 7, (5, 4))
    rows = inp if TORCH_EVERY_ROW_A_BAG else inp[:-1]
    for mode in ("sum", "mean", "max"):
        got = tt.embedding_bag(inp, weight, mode=mode, include_last_offset=True, padding_idx=2)
        assert_same(got.numpy(), oracle(weight.numpy(), rows.numpy(), packed_bags(len(rows), 4),
                                        reduction=mode, padding_idx=2))
    # a plain sum is safe in every torch: the same bags as the torch beside us
    got = tt.embedding_bag(inp, weight, mode="sum", include_last_offset=True)
    assert torch.equal(got, F.embedding_bag(inp, weight, mode="sum", include_last_offset=True))
    if TORCH_EVERY_ROW_A_BAG:
        assert tt.embedding_bag(inp[:0], weight, include_last_offset=True).shape == (0, 3)
    else:
        with pytest.raises(tensorjit.SignatureError, match="include_last_offset"):
            tt.embedding_bag(inp[:0], weight, include_last_offset=True)


def test_2d_input_with_include_last_offset_without_torch():
    """Without torch imported (numpy arrays only), every row of a 2-D input
    is a bag under include_last_offset, as in torch since 2.10."""
    code = ("import sys, numpy as np, tensorjit.torch as tt\n"
            "out = tt.embedding_bag(np.array([[0, 1], [1, 1], [0, 0]]),"
            " np.eye(2, dtype=np.float32), mode='sum', include_last_offset=True)\n"
            "assert 'torch' not in sys.modules\n"
            "print(out.tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[1.0, 1.0], [0.0, 2.0], [2.0, 0.0]]"


def weighted_bound(weight, inp, bags, psw):
    """SPEC 10: torch fuses multiply-adds in weighted sums, so the two
    differ by a few ulps of the accumulator on the sum of the products'
    magnitudes, plus one rounding to the table's type."""
    w, idx = weight.double().numpy(), inp.reshape(-1).numpy()
    p = psw.reshape(-1).double().numpy()
    mags = np.zeros((len(bags),) + w.shape[1:])
    for b, bag in enumerate(bags):
        for j in bag:
            mags[b] += abs(p[j]) * np.abs(w[idx[j]])
    table_eps = float(np.finfo(str(weight.dtype).replace("torch.", "")).eps)
    acc_eps = float(np.finfo(np.float64 if table_eps < 1e-10 else np.float32).eps)
    return (4 * acc_eps + table_eps) * mags


@pytest.mark.parametrize("dtype", TORCH_FLOATS)
def test_torch_per_sample_weights_within_a_few_ulps(dtype):
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    dt = getattr(torch, dtype)
    for trial in range(6):
        rows, n, b = 9, int(RNG.integers(0, 25)), int(RNG.integers(1, 6))
        weight = torch.randn(rows, 6).to(dt)
        inp = torch.randint(0, rows, (n,))
        offsets = torch_bags(torch, n, b, False, torch.int64)
        psw = torch.randn(n).to(dt)
        padding = 2 if trial % 2 else None
        got = tt.embedding_bag(inp, weight, offsets, mode="sum", per_sample_weights=psw,
                               padding_idx=padding)
        want = F.embedding_bag(inp, weight, offsets, mode="sum", per_sample_weights=psw,
                               padding_idx=padding)
        bags = offsets_bags(offsets.numpy(), n)
        diff = (got.double() - want.double()).abs().numpy()
        assert (diff <= weighted_bound(weight, inp, bags, psw)).all()
        assert_same(got.numpy(), oracle(weight.numpy(), inp.numpy(), bags, weights=psw.numpy(),
                                        padding_idx=padding))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_torch_embedding_bag_bf16(mode):
    """torch 1.13 refuses bf16 tables: f32's result rounded once is SPEC's."""
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    weight = torch.randn(10, 7).bfloat16()
    inp = torch.randint(0, 10, (20,))
    offsets = torch_bags(torch, 20, 6, False, torch.int64)
    got = tt.embedding_bag(inp, weight, offsets, mode=mode, padding_idx=3)
    want = F.embedding_bag(inp, weight.float(), offsets, mode=mode, padding_idx=3).bfloat16()
    assert got.dtype == torch.bfloat16 and torch.equal(got, want)


def test_torch_embedding_bag_defaults_and_names():
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    weight, inp = torch.randn(6, 3), torch.randint(0, 6, (4, 5))
    assert torch.equal(tt.embedding_bag(inp, weight), F.embedding_bag(inp, weight))  # mean
    offsets = torch.tensor([0, 2], dtype=torch.int32)  # cast to the indices' type
    flat = inp.reshape(-1)
    assert torch.equal(tt.embedding_bag(flat, weight, offsets, None, 2.0, False, "sum", False,
                                        None, False, None),
                       F.embedding_bag(flat, weight, offsets.long(), mode="sum"))
    assert torch.equal(tt.embedding_bag(input=flat, weight=weight, offsets=offsets, mode="sum",
                                        scale_grad_by_freq=True, sparse=True),
                       F.embedding_bag(flat, weight, offsets.long(), mode="sum"))
    for flag in ["sparse", "scale_grad_by_freq"]:  # torch's ValueError for max
        with pytest.raises(ValueError):
            F.embedding_bag(flat, weight, offsets.long(), mode="max", **{flag: True})
        with pytest.raises(tensorjit.SignatureError, match=f"mode='max'.*{flag}=True"):
            tt.embedding_bag(flat, weight, offsets, mode="max", **{flag: True})


@pytest.mark.parametrize("kind", ["torch", "numpy"])
def test_torch_offsets_past_int32_are_not_wrapped(kind):
    """int64 offsets beside int32 input: a value int32 cannot hold is the
    bad offset it is, not another offset after a cast (2**32 + 2 read as 2)."""
    torch = torch_or_skip()
    import tensorjit.torch as tt
    weight = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    inp = torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32)
    for bad in [2**32 + 2, 2**31, -2**32]:
        offsets = torch.tensor([0, bad], dtype=torch.int64)
        args = (inp, weight, offsets) if kind == "torch" else (
            inp.numpy(), weight.numpy(), offsets.numpy())
        with pytest.raises(tensorjit.IndexOutOfRange, match=rf"offsets\[1\] = {bad}\b"):
            tt.embedding_bag(*args, mode="sum")
    good = torch.tensor([0, 2], dtype=torch.int64)
    want = torch.nn.functional.embedding_bag(inp, weight, good, mode="sum")
    assert torch.equal(tt.embedding_bag(inp, weight, good, mode="sum"), want)
    assert torch.equal(tt.embedding_bag(inp.long(), weight, good.int(), mode="sum"), want)


def test_torch_embedding_bag_refusals():
    torch = torch_or_skip()
    import tensorjit.torch as tt
    weight, flat = torch.randn(6, 3), torch.tensor([0, 1, 2, 3])
    with pytest.raises(tensorjit.SignatureError, match="max_norm"):
        tt.embedding_bag(flat, weight, torch.tensor([0]), max_norm=1.0)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"offsets\[0\].*1"):
        tt.embedding_bag(flat, weight, torch.tensor([1, 2]))
    with pytest.raises(tensorjit.SignatureError, match="offsets"):
        tt.embedding_bag(flat.reshape(2, 2), weight, torch.tensor([0]))
    with pytest.raises(tensorjit.SignatureError, match="offsets"):
        tt.embedding_bag(flat, weight)
    with pytest.raises(tensorjit.SignatureError, match="per_sample_weights.*sum"):
        tt.embedding_bag(flat, weight, torch.tensor([0]), per_sample_weights=torch.ones(4))
    with pytest.raises(tensorjit.SignatureError, match="mode"):
        tt.embedding_bag(flat, weight, torch.tensor([0]), mode="prod")
    with pytest.raises(tensorjit.SignatureError, match="padding_idx"):
        tt.embedding_bag(flat, weight, torch.tensor([0]), padding_idx=6)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"^input\[2\] = 6\b"):
        tt.embedding_bag(torch.tensor([0, 1, 6]), weight, torch.tensor([0]))
    with pytest.raises(tensorjit.IndexOutOfRange, match="offsets"):
        tt.embedding_bag(flat, weight, torch.tensor([0, 9]))


@pytest.mark.parametrize("dtype", TORCH_FLOATS + ["bfloat16", "int32"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_torch_embedding(dtype, itype):
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    dt, it = getattr(torch, dtype), getattr(torch, itype)
    weight = (torch.randn(8, 5) * 10).to(dt)
    for shape in [(), (4,), (3, 2), (2, 0, 3)]:
        inp = torch.randint(0, 8, shape, dtype=it)
        got = tt.embedding(inp, weight, padding_idx=-1)
        assert got.dtype == dt and torch.equal(got, weight[inp.long()])  # padding rows as they are
        if dt.is_floating_point and dt != torch.bfloat16:
            assert torch.equal(got, F.embedding(inp, weight, padding_idx=-1))
    with pytest.raises(tensorjit.IndexOutOfRange):
        tt.embedding(torch.tensor([0, 8]), weight)
    with pytest.raises(tensorjit.SignatureError, match="max_norm"):
        tt.embedding(torch.tensor([0]), weight, max_norm=2.0)
    with pytest.raises(tensorjit.SignatureError, match="padding_idx"):
        tt.embedding(torch.tensor([0]), weight, padding_idx=8)


def test_torch_weight_that_requires_grad_is_read_detached():
    """A module's weight (requires_grad) is what users pass; DLPack refuses
    to export it, and tensorjit read it detached: the values are torch's,
    the result has no autograd history."""
    torch = torch_or_skip()
    import tensorjit.torch as tt
    bag = torch.nn.EmbeddingBag(10, 4, mode="sum")
    inp, offsets = torch.tensor([1, 2, 7, 7]), torch.tensor([0, 3])
    psw = torch.rand(4, requires_grad=True)
    with torch.no_grad():
        want = bag(inp, offsets, per_sample_weights=psw)
    with torch.no_grad():
        got = tt.embedding_bag(inp, bag.weight, offsets, mode="sum", per_sample_weights=psw)
    assert not got.requires_grad
    with pytest.warns(UserWarning, match="requires grad") as said:  # training would miss it
        tt.embedding_bag(inp, bag.weight, offsets, mode="sum")
    assert said[0].filename == __file__  # the caller's line, not tensorjit.torch's
    assert torch.allclose(got, want, rtol=1e-6, atol=1e-6)
    emb = torch.nn.Embedding(10, 4)
    src = torch.rand(3, 3, requires_grad=True)
    index = torch.tensor([[0, 1, 2]])
    with torch.no_grad():
        assert torch.equal(tt.embedding(inp, emb.weight), emb.weight.detach()[inp])
        assert torch.equal(tt.gather(src, 0, index), torch.gather(src.detach(), 0, index))
        assert torch.equal(tt.scatter_add(src, 0, index, src),
                           torch.scatter_add(src.detach(), 0, index, src.detach()))


def test_torch_messages_name_the_call_as_given():
    """A 2-D input with include_last_offset drops its last row inside; a
    per_sample_weights of the wrong shape is named with the shapes given
    (it quoted the cut ones); the offsets' bound is the input's length."""
    torch = torch_or_skip()
    import tensorjit.torch as tt
    weight = torch.randn(10, 4)
    with pytest.raises(tensorjit.SignatureError, match=r"\(3, 4\).*input's shape \(3, 5\)"):
        tt.embedding_bag(torch.randint(0, 10, (3, 5)), weight, mode="sum",
                         per_sample_weights=torch.rand(3, 4), include_last_offset=True)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"offsets\[1\] = 5 .*input's length"):
        tt.embedding_bag(torch.tensor([0, 1]), weight, torch.tensor([0, 5]))
    assert tt.embedding_bag([], weight.numpy(), [0]).shape == (1, 4)  # [] is no float input
    info = tensorjit.embedding_bag_offsets_info(weight.numpy(), np.array([0, 1]), np.array([1]),
                                                offsets_from_zero=True)
    assert info["engine"] == "jit"  # the flag taken, no value read


def test_torch_lists_and_narrow_index_types():
    """Lists are read as numpy reads them; uint8, int8 and int16 input with
    offsets is widened to the offsets' type, as torch 1.13 takes it (its
    embedding and 2-D embedding_bag refuse them: ours take them)."""
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    weight = torch.randn(10, 4)
    want = F.embedding_bag(torch.tensor([1, 2, 9]), weight, torch.tensor([0, 1]), mode="sum")
    assert torch.equal(tt.embedding_bag([1, 2, 9], weight, [0, 1], mode="sum"), want)
    assert torch.equal(tt.embedding_bag((1, 2, 9), weight, (0, 1), mode="sum"), want)
    for dt in [torch.uint8, torch.int8, torch.int16]:
        inp = torch.tensor([1, 2, 9], dtype=dt)
        for ot in [torch.int32, torch.int64]:
            offsets = torch.tensor([0, 1], dtype=ot)
            got = tt.embedding_bag(inp, weight, offsets, mode="sum")
            assert torch.equal(got, want), (dt, ot)
            assert torch.equal(got, F.embedding_bag(inp, weight, offsets, mode="sum")), (dt, ot)
            # and narrow offsets beside a wide input, as torch takes them too
            wide = torch.tensor([1, 2, 9], dtype=ot)
            narrow = torch.tensor([0, 1], dtype=dt)
            got = tt.embedding_bag(wide, weight, narrow, mode="sum")
            assert torch.equal(got, F.embedding_bag(wide, weight, narrow, mode="sum")), (ot, dt)
        assert torch.equal(tt.embedding(inp, weight), weight[inp.long()])
    assert torch.equal(tt.embedding([[1], [9]], weight), weight[torch.tensor([[1], [9]])])


def test_torch_errors_use_torch_names():
    torch = torch_or_skip()
    import tensorjit.torch as tt
    weight, inp, offsets = torch.randn(10, 4), torch.tensor([1, 2]), torch.tensor([0])
    with pytest.raises(tensorjit.TypeMismatch,
                       match=r"^tensorjit: per_sample_weights has dtype f64; it must be the "
                             r"weight's \(f32\)"):
        tt.embedding_bag(inp, weight, offsets, mode="sum",
                         per_sample_weights=torch.ones(2, dtype=torch.float64))
    with pytest.raises(tensorjit.SignatureError,
                       match=r"per_sample_weights has shape \(3,\); it must have the input's"):
        tt.embedding_bag(inp, weight, offsets, mode="sum", per_sample_weights=torch.ones(3))
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"^input\[1\] = 20 .* 10 rows"):
        tt.embedding_bag(torch.tensor([1, 20]), weight, offsets)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"\binput\b"):
        tt.embedding(torch.tensor([1, 20]), weight)
    with pytest.raises(tensorjit.TypeMismatch, match="^tensorjit: input has dtype f32"):
        tt.embedding_bag(torch.tensor([1.0]), weight, offsets)


def test_integer_arguments_are_named_when_not_integers():
    torch = torch_or_skip()
    import tensorjit.torch as tt
    weight, inp, offsets = torch.randn(10, 4), torch.tensor([1, 2]), torch.tensor([0])
    for call in [lambda: tt.embedding_bag(inp, weight, offsets, padding_idx=1.5),
                 lambda: tt.embedding(inp, weight, padding_idx=1.5)]:
        with pytest.raises(tensorjit.TypeMismatch, match=r"padding_idx must be an integer, "
                                                         r"not float \(1.5\)"):
            call()
    table = weight.numpy()
    with pytest.raises(TypeError, match="num_segments must be an integer, not float"):
        tensorjit.embedding_segments(table, np.array([1]), np.array([0]), 2.0)
    with pytest.raises(tensorjit.TypeMismatch, match="default_index must be an integer"):
        tensorjit.embedding_segments(table, np.array([1]), np.array([0]), 2, default_index=3.0)


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_a_result_too_large_to_allocate_is_a_tensorjit_error(kind):
    """2**47 segments of 4 floats: 2 PiB, past any address space, so that no
    overcommit setting lets it succeed. The allocator's MemoryError (numpy)
    or RuntimeError (torch) becomes a KernelError naming the shape, the
    allocator's error its cause."""
    table = np.ones((10, 4), np.float32)
    if kind == "torch":
        torch = torch_or_skip()
        table = torch.from_numpy(table)
    with pytest.raises(tensorjit.KernelError,
                       match=r"no memory for the result: shape \(140737488355328, 4\) of f32") as e:
        tensorjit.embedding_segments(table, np.array([1]), np.array([0]), 2**47)
    assert isinstance(e.value.__cause__, (MemoryError, RuntimeError))


def test_torch_names_take_numpy_too():
    import importlib
    tt = importlib.import_module("tensorjit.torch")
    table = random_table((6, 3), np.float32)
    inp, offsets = np.array([0, 5, 2, 2]), np.array([0, 1, 1])
    got = tt.embedding_bag(inp, table, offsets, mode="sum")
    assert isinstance(got, np.ndarray)
    assert_same(got, oracle(table, inp, offsets_bags(offsets, 4)))
    assert_same(tt.embedding(inp, table), table[inp])


def test_torch_2d_input_of_a_narrow_type_is_widened():
    """The README says a 2-D input of uint8, int8 or int16 is taken (an
    extension: torch 1.13 refuses it); it was refused ('EmbeddingBagPacked
    takes i32 or i64 input'). Held to torch's result for the int64 input."""
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    weight = torch.randn(10, 4)
    for dt in [torch.uint8, torch.int8, torch.int16]:
        inp = torch.tensor([[1, 2, 9], [0, 0, 3]], dtype=dt)
        for mode in ("sum", "mean", "max"):
            want = F.embedding_bag(inp.long(), weight, mode=mode)
            assert torch.equal(tt.embedding_bag(inp, weight, mode=mode), want), (dt, mode)
            got = tt.embedding_bag(inp.numpy(), weight.numpy(), mode=mode)
            assert np.array_equal(got, want.numpy()), (dt, mode)
        # include_last_offset drops the last row (torch 1.13's own call with
        # it corrupts its heap: README, oracle caveats), so torch's result
        # without that row
        want = F.embedding_bag(inp[:-1].long(), weight, mode="sum", padding_idx=0)
        assert torch.equal(tt.embedding_bag(inp, weight, mode="sum", padding_idx=0,
                                            include_last_offset=True), want), dt


def test_torch_bool_input_or_offsets_beside_a_wide_one_read_as_torch_reads_them():
    """torch 1.13 reads a 1-D bool input beside int32 or int64 offsets, and
    bool offsets beside such an input, as it reads uint8 (True is 1); they
    were refused ('input has dtype bool; it must be an integer dtype')."""
    torch = torch_or_skip()
    import torch.nn.functional as F
    import tensorjit.torch as tt
    weight = torch.randn(4, 3)
    flags = torch.tensor([True, False, True])
    for ot in [torch.int32, torch.int64]:
        offsets = torch.tensor([0, 1], dtype=ot)
        want = F.embedding_bag(flags, weight, offsets, mode="sum")
        assert torch.equal(tt.embedding_bag(flags, weight, offsets, mode="sum"), want), ot
        got = tt.embedding_bag(flags.numpy(), weight.numpy(), offsets.numpy(), mode="sum")
        assert np.array_equal(got, want.numpy()), ot
        wide = torch.tensor([1, 2, 3], dtype=ot)
        bool_offsets = torch.tensor([False, True])
        want = F.embedding_bag(wide, weight, bool_offsets, mode="max")
        assert torch.equal(tt.embedding_bag(wide, weight, bool_offsets, mode="max"), want), ot


def test_bool_rows_and_counts_are_refused():
    """padding_idx, default_index and num_segments given a bool: a
    TypeMismatch naming it, where True was read as row 1 (torch refuses a
    bool padding_idx; a newcomer's trial)."""
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx, off = np.array([0, 1]), np.array([0])
    calls = [("padding_idx", lambda: tensorjit.embedding_bag_offsets(
                 table, idx, off, padding_idx=True)),
             ("default_index", lambda: tensorjit.embedding_bag_offsets(
                 table, idx, off, default_index=False)),
             ("num_segments", lambda: tensorjit.embedding_segments(
                 table, idx, np.array([0, 0]), True)),
             ("padding_idx", lambda: tensorjit.embedding_bag_packed(
                 table, idx.reshape(1, 2), padding_idx=True))]
    for name, call in calls:
        with pytest.raises(tensorjit.TypeMismatch, match=f"{name} must be an integer, not bool"):
            call()
    assert tensorjit.embedding_bag_packed(table, idx.reshape(1, 2), padding_idx=1).tolist() == \
        [[0.0, 1.0, 2.0]]
    torch = pytest.importorskip("torch")
    import tensorjit.torch as tt
    for call in (lambda: tt.embedding_bag(torch.tensor([[0, 1]]), torch.ones(4, 3),
                                          padding_idx=True),
                 lambda: tt.embedding(torch.tensor([0, 1]), torch.ones(4, 3), padding_idx=True)):
        with pytest.raises(TypeError, match="padding_idx must be an integer, not bool"):
            call()
