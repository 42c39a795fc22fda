"""Inputs and numpy-computed expectations for test_cli_bags (SPEC 10).

Writes into DIR the .npy inputs of each case, its expected output
(NAME_want.npy, computed here with numpy from SPEC 10's rules, not by
tensorjit) and DIR/cases.txt: one line per case,
NAME <tab> exit status <tab> what stderr must say <tab> the arguments.
Values are small integers, so that every sum is exact in any order and a
mean is one rounded division, as SPEC 10 has it.
"""
import os
import sys

import numpy as np

rng = np.random.default_rng(25)
out_dir = sys.argv[1]
lines = []


def save(name, array):
    path = os.path.join(out_dir, name + ".npy")
    np.save(path, array)
    return path


def reduce_bag(table, idx, js, reduction, weights, pad):
    kept = [j for j in js if pad is None or idx[j] % table.shape[0] != pad]
    if not kept:
        return np.zeros(table.shape[1:], table.dtype)
    rows = table[idx[kept]]
    if weights is not None:
        rows = rows * weights[kept].reshape((-1,) + (1,) * (table.ndim - 1))
    if reduction == "max":
        return rows.max(axis=0)
    total = rows.sum(axis=0, dtype=table.dtype)
    if reduction == "mean":
        return (total / table.dtype.type(len(kept))).astype(table.dtype)
    return total


def pooled(table, idx, bags, reduction="sum", weights=None, default=None, pad=None):
    if pad is not None and pad < 0:
        pad += table.shape[0]
    out = []
    for js in bags:
        if not js and default is not None:
            out.append(table[default])
        else:
            out.append(reduce_bag(table, idx, js, reduction, weights, pad))
    return np.array(out, table.dtype).reshape((len(bags),) + table.shape[1:])


def case(name, command, inputs, flags, want=None, status=0, needle=""):
    args = [command]
    for flag, array in inputs:
        args += [flag, save(name + flag.replace("--", "_"), array)]
    args += flags
    if want is not None:
        save(name + "_want", want)
    lines.append("\t".join([name, str(status), needle, " ".join(args)]))


def table_of(e, d, dtype):
    return rng.integers(-8, 9, size=(e, d)).astype(dtype)


def offsets_cases():
    t = table_of(7, 5, np.float32)
    idx = rng.integers(0, 7, size=12).astype(np.int64)
    off = np.array([2, 5, 5, 9], np.int64)  # the first two unused, bag 1 empty
    bags = [list(range(2, 5)), [], list(range(5, 9)), list(range(9, 12))]
    case("off_sum", "embedding-bag-offsets", [("--table", t), ("--indices", idx),
         ("--offsets", off)], [], pooled(t, idx, bags))
    i32, o32 = idx.astype(np.int32), off.astype(np.int32)
    case("off_mean", "embedding-bag-offsets", [("--table", t), ("--indices", i32),
         ("--offsets", o32)], ["--reduction", "mean", "--default-index", "3"],
         pooled(t, idx, bags, "mean", default=3))
    last = np.array([0, 4, 4, 12], np.int64)
    lbags = [list(range(0, 4)), [], list(range(4, 12))]
    case("off_max_pad", "embedding-bag-offsets", [("--table", t), ("--indices", idx),
         ("--offsets", last)], ["--reduction", "max", "--padding-idx", "-2",
                                "--include-last-offset"],
         pooled(t, idx, lbags, "max", pad=-2))
    t64 = table_of(7, 3, np.float64)
    w = rng.integers(-3, 4, size=12).astype(np.float64)
    case("off_weights", "embedding-bag-offsets", [("--table", t64), ("--indices", idx),
         ("--offsets", off), ("--weights", w)], ["--opset", "3"],
         pooled(t64, idx, bags, weights=w))
    case("off_dynamic", "embedding-bag-offsets", [("--table", t), ("--indices", idx),
         ("--offsets", off)], ["--dynamic", "all", "--default-index", "0"],
         pooled(t, idx, bags, default=0))
    bad = np.array([0, 6, 4], np.int64)
    case("off_decreasing", "embedding-bag-offsets", [("--table", t), ("--indices", idx),
         ("--offsets", bad)], [], status=3, needle="offsets[2] = 4")
    far = idx.copy()
    far[6] = 7
    case("off_bad_index", "embedding-bag-offsets", [("--table", t), ("--indices", far),
         ("--offsets", off)], [], status=3, needle="indices[6] = 7")
    case("off_v3_mean", "embedding-bag-offsets", [("--table", t), ("--indices", idx),
         ("--offsets", off)], ["--opset", "3", "--reduction", "mean"], status=2,
         needle="--reduction mean needs --opset 15")


def packed_cases():
    t = table_of(6, 4, np.float32)
    idx = rng.integers(0, 6, size=(5, 3)).astype(np.int64)
    bags = [list(range(3 * b, 3 * b + 3)) for b in range(5)]
    flat = idx.reshape(-1)
    w = rng.integers(-3, 4, size=(5, 3)).astype(np.float32)
    case("packed_weights", "embedding-bag-packed", [("--table", t), ("--indices", idx),
         ("--weights", w)], [], pooled(t, flat, bags, weights=w.reshape(-1)))
    case("packed_mean_pad", "embedding-bag-packed", [("--table", t), ("--indices", idx)],
         ["--reduction", "mean", "--padding-idx", str(int(flat[0])), "--dynamic",
          "indices:0"], pooled(t, flat, bags, "mean", pad=int(flat[0])))


def segments_cases():
    t = table_of(5, 4, np.float32)
    idx = rng.integers(0, 5, size=9).astype(np.int64)
    seg = np.array([3, 0, 3, 1, 0, 3, 1, 1, 0], np.int64)  # unsorted, segment 2 empty
    w = rng.integers(-3, 4, size=9).astype(np.float32)
    bags = [[j for j in range(9) if seg[j] == s] for s in range(5)]
    case("seg_weights", "embedding-segments", [("--table", t), ("--indices", idx),
         ("--segment-ids", seg), ("--weights", w)], ["--num-segments", "5",
                                                     "--default-index", "4"],
         pooled(t, idx, bags, weights=w, default=4))
    case("seg_dynamic", "embedding-segments", [("--table", t), ("--indices", idx),
         ("--segment-ids", seg)], ["--num-segments", "5", "--dynamic", "all"],
         pooled(t, idx, bags))
    case("seg_bad_id", "embedding-segments", [("--table", t), ("--indices", idx),
         ("--segment-ids", seg)], ["--num-segments", "3"], status=3,
         needle="segment_ids[0] = 3")


offsets_cases()
packed_cases()
segments_cases()
with open(os.path.join(out_dir, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
