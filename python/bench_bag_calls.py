"""tensorjit's embedding bags called from Python against torch's
embedding_bag (one thread), per call, on tables from tiny to DLRM-sized:
the table of docs/performance.md, 'Python's bag families'. Every result is
checked against torch's, and the engine that served is printed (a family
whose calls the reference kernel serves is a bug: it was the case before).

    python3 python/bench_bag_calls.py            # needs torch
    TENSORJIT_JIT=off python3 python/bench_bag_calls.py   # the reference's times
"""

import os
import sys
import time

import torch
import torch.nn.functional as F

# the installed package, not the sources beside this file (no extension there)
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
import tensorjit  # noqa: E402
import tensorjit.torch as tt  # noqa: E402

SHAPES = [(100, 16, 8, 4), (1000, 64, 64, 10), (100000, 64, 512, 20), (30522, 128, 512, 32),
          (1000000, 64, 2048, 100)]


def best_us(fn, number, repeats=7):
    """Microseconds a call: the best of `repeats` loops of `number` calls."""
    for _ in range(max(3, number // 10)):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number * 1e6)
    return min(times)


def main():
    torch.set_num_threads(1)
    print("| table | bags x length | torch | tensorjit.torch (torch tensors) "
          "| tensorjit, numpy arrays | engine |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rows, width, bags, length in SHAPES:
        g = torch.Generator().manual_seed(1)
        table = torch.randn(rows, width, generator=g)
        idx = torch.randint(0, rows, (bags * length,), generator=g)
        off = torch.arange(0, bags * length, length)
        tn, inn, on = table.numpy(), idx.numpy(), off.numpy()
        want = F.embedding_bag(idx, table, off, mode="sum")
        assert torch.equal(tt.embedding_bag(idx, table, off, mode="sum"), want)
        assert torch.equal(torch.from_numpy(tensorjit.embedding_bag_offsets(tn, inn, on)), want)
        number = max(20, int(2e6 / (bags * length * width // 16 + 500)))
        a = best_us(lambda: F.embedding_bag(idx, table, off, mode="sum"), number)
        b = best_us(lambda: tt.embedding_bag(idx, table, off, mode="sum"), number)
        c = best_us(lambda: tensorjit.embedding_bag_offsets(tn, inn, on), number)
        engine = tensorjit.embedding_bag_offsets_info(tn, inn, on)["engine"]
        print(f"| [{rows}, {width}] f32 | {bags} x {length} | {a:.1f} us | {b:.1f} | {c:.1f} "
              f"| {engine} |")


if __name__ == "__main__":
    main()
