"""An embedding bag's out= and its large calls: out overlapping any given
input is refused with that input named (offsets, segment_ids, weights, not
only the table), and a call large enough to run without the GIL, from
several threads at once, gives what numpy does."""

import threading

import numpy as np
import pytest

import tensorjit

RNG = np.random.default_rng(31)


def test_out_overlapping_offsets_is_named():
    buf = np.zeros(64, np.uint8)
    offsets = buf[:8].view(np.int64)       # one bag
    out = buf[:16].view(np.float64).reshape(1, 2)
    table = RNG.random((4, 2))
    with pytest.raises(tensorjit.SignatureError, match="overlaps offsets"):
        tensorjit.embedding_bag_offsets(table, np.array([0, 1], np.int64), offsets, out=out)


def test_out_overlapping_segment_ids_is_named():
    buf = np.zeros(64, np.uint8)
    segment_ids = buf[:16].view(np.int64)  # two lookups
    out = buf[:16].view(np.float64).reshape(1, 2)
    table = RNG.random((4, 2))
    with pytest.raises(tensorjit.SignatureError, match="overlaps segment_ids"):
        tensorjit.embedding_segments(table, np.array([0, 1], np.int64), segment_ids, 1,
                                     out=out)


def test_out_overlapping_weights_is_named():
    base = np.zeros(16, np.float32)
    weights = base[:4].reshape(2, 2)
    out = base[:4].reshape(2, 2)
    table = RNG.random((5, 2)).astype(np.float32)
    with pytest.raises(tensorjit.SignatureError, match="overlaps weights"):
        tensorjit.embedding_bag_packed(table, np.array([[0, 1], [2, 3]]), weights=weights,
                                       out=out)
    assert not base.any()


def test_large_calls_from_threads_match_numpy():
    # 2048 lookups of 1 KiB rows: far past what is worth releasing the GIL for
    table = RNG.random((4096, 256)).astype(np.float32)
    calls = []
    for _ in range(4):
        indices = RNG.integers(0, table.shape[0], (256, 8))
        weights = RNG.random((256, 8)).astype(np.float32)
        want = (table[indices].astype(np.float64) * weights[..., None]).sum(axis=1)
        calls.append((indices, weights, want))
    got = [None] * len(calls)

    def run(i):
        indices, weights, _ = calls[i]
        got[i] = tensorjit.embedding_bag_packed(table, indices, weights=weights)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (_, _, want), g in zip(calls, got):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
