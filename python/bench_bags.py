"""torch's embedding_bag, one thread, on the bag workloads E1-E5 of
shared/bench/workloads.md: the torch column of `tensorjit bench --bags`.

    python3 python/bench_bags.py [--workload E1 ...] [--rounds N] [--json]
                                 [--c-json FILE] [--tensorjit]

Same shapes, index types, bag lengths and reductions as the C bench (the
values come from torch's own generator, not the C bench's seed), and the
same rule for index sets: enough of them that between two uses of one set
the calls read twice the last-level cache in rows. Prints ns per call and
per lookup; given the JSON of `tensorjit bench --bags --json` (--c-json), the
ratio to that run's static kernel, ns per lookup against ns per lookup.
Ratios across two processes drift more than the C bench's interleaved ones.

The table is 2 MB aligned and madvise(MADV_HUGEPAGE)'d before it is
filled, as the C bench's buffers are, and the rows say how much of it the
kernel put on huge pages (they move E2 by about 20%). With --c-json a row
also gives `jit_over_torch`: that run's JIT kernel's ns per lookup over
torch's, which is tensorjit's time as a fraction of FBGEMM's where torch
was built with it (pip's x86 wheels; the row says `fbgemm`).

With --tensorjit, tensorjit's own kernel (the package's embedding_bag_offsets
or _packed into a preallocated out) is timed in the same rounds
as torch's, their order turning each round, on the same tensors: the ratio
of the two in one process (`tensorjit_over_torch`, the median of the rounds'
ratios), which the C run's `jit_over_torch` can only estimate across two
processes; and whether the two outputs are equal bit for bit. The process
is then pinned to one CPU: the package's kernels may split a call over every
CPU of the process's affinity mask (JIT_THREADS_ALL), torch runs on one.

torch 1.13 refuses bf16 tables in embedding_bag: there E5 times
`embedding(indices, table).sum(1)` instead, and says so.
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

# id: rows, width, dtype, bags, length, varying, index dtype, mode, weighted, packed, min sets
WORKLOADS = {
    "E1": (1000000, 64, torch.float32, 2048, 100, False, torch.int64, "sum", False, False, 0),
    "E2a": (4000000, 128, torch.float32, 8192, 1, False, torch.int64, "sum", False, False, 256),
    "E2b": (4000000, 128, torch.float32, 2048, 27, False, torch.int64, "sum", False, False, 0),
    "E3": (30522, 128, torch.float32, 512, 64, True, torch.int64, "mean", False, False, 0),
    "E4": (4000000, 32, torch.float32, 4096, 20, False, torch.int32, "sum", True, False, 0),
    "E5": (1000000, 128, torch.bfloat16, 4096, 8, False, torch.int64, "sum", False, True, 0),
}


def llc_bytes():
    """The largest cache of cpu0 in sysfs, else 32 MiB (as the C bench)."""
    best = 0
    for i in range(8):
        try:
            with open(f"/sys/devices/system/cpu/cpu0/cache/index{i}/size") as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        best = max(best, int(text.rstrip("KM")) * scale)
    return best or 32 << 20


HUGE = 2 << 20
MADV_HUGEPAGE = 14


def huge_table(rows, width, dtype):
    """An unfilled table, 2 MB aligned and madvise'd for huge pages before
    anything touches it (over-allocated by 2 MB to align)."""
    elem = torch.empty((), dtype=dtype).element_size()
    nbytes = rows * width * elem
    if nbytes < HUGE:
        return torch.empty(rows, width, dtype=dtype)
    size = (nbytes + HUGE - 1) // HUGE * HUGE  # the advised range, inside raw
    raw = torch.empty(size + HUGE, dtype=torch.uint8)
    start = (-raw.data_ptr()) % HUGE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.madvise(raw.data_ptr() + start, size, MADV_HUGEPAGE)
    return raw[start:start + nbytes].view(dtype).view(rows, width)


def huge_bytes(t):
    """Bytes of t's buffer that /proc/self/smaps counts as AnonHugePages."""
    lo, total, inside = t.data_ptr(), 0, False
    hi = lo + t.numel() * t.element_size()
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split()[0]
                if "-" in head and all(c in "0123456789abcdef-" for c in head):
                    a, b = (int(x, 16) for x in head.split("-"))
                    inside = a < hi and b > lo
                elif inside and line.startswith("AnonHugePages:"):
                    total += int(line.split()[1]) * 1024
    except OSError:
        return 0
    return min(total, hi - lo)


def bf16_bags_work():
    """Whether this torch's embedding_bag takes a bf16 table (1.13 refuses)."""
    try:
        F.embedding_bag(torch.zeros(1, 1, dtype=torch.long),
                        torch.zeros(2, 2, dtype=torch.bfloat16), mode="sum")
        return True
    except RuntimeError:
        return False


def inputs(wid, gen):
    rows, width, dtype, bags, length, varying, itype, mode, weighted, packed, min_sets = \
        WORKLOADS[wid]
    table = huge_table(rows, width, dtype)
    if dtype == torch.float32:
        table.uniform_(-1, 1, generator=gen)
    else:
        table.copy_(torch.empty(rows, width, dtype=torch.float32).uniform_(-1, 1,
                                                                             generator=gen))
    if varying:
        lengths = torch.randint(0, length + 1, (bags,), generator=gen)
    else:
        lengths = torch.full((bags,), length)
    n = int(lengths.sum())
    offsets = (torch.cumsum(lengths, 0) - lengths).to(itype)
    per_call = n * width * table.element_size()
    sets = max(2, min_sets, math.ceil(2 * llc_bytes() / per_call) + 1 if per_call else 2)
    index_sets = [torch.randint(0, rows, (n,), generator=gen).to(itype) for _ in range(sets)]
    if packed:
        index_sets = [ix.view(bags, length) for ix in index_sets]
    weight_sets = [None] * sets
    if weighted:
        weight_sets = [torch.empty(n, dtype=dtype).uniform_(-1, 1, generator=gen)
                       for _ in range(sets)]
    return table, offsets, index_sets, weight_sets, n, mode, packed, dtype


def call_of(wid, table, offsets, mode, packed, dtype):
    """The torch expression for one call, and what it is."""
    if packed and dtype == torch.bfloat16 and not bf16_bags_work():
        return (lambda ix, w: F.embedding(ix, table).sum(1)), \
            "embedding(...).sum(1): torch 1.13's embedding_bag refuses bf16"
    if packed:
        return (lambda ix, w: F.embedding_bag(ix, table, mode=mode)), "embedding_bag"
    return (lambda ix, w: F.embedding_bag(ix, table, offsets, mode=mode,
                                          per_sample_weights=w)), "embedding_bag"


def bits(t):
    """t's elements as integers of their width (NaNs and signed zeros compared)."""
    width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(width)


def tensorjit_call(table, offsets, mode, packed, bags):
    """tensorjit's kernel for the same call, writing one preallocated out."""
    import tensorjit as tj
    out = torch.empty((bags, table.shape[1]), dtype=table.dtype)
    if packed:
        return lambda ix, w: tj.embedding_bag_packed(table, ix, weights=w, reduction=mode,
                                                     out=out)
    return lambda ix, w: tj.embedding_bag_offsets(table, ix, offsets, weights=w,
                                                  reduction=mode, offsets_from_zero=True,
                                                  out=out)


def time_calls(impls, index_sets, weight_sets, rounds, batch_s):
    """Each impl's median ns a call, the impls timed in turn within each
    round (the order turning), index sets in rotation; and each impl's
    median over the rounds of its time over the first impl's."""
    sets, state = len(index_sets), {"next": 0}

    def runner(fn):
        def one():
            k = state["next"]
            state["next"] = (k + 1) % sets
            return fn(index_sets[k], weight_sets[k])
        return one

    ones = {name: runner(fn) for name, fn in impls.items()}
    names = list(ones)
    first = ones[names[0]]
    first()
    t0 = time.perf_counter()
    first()
    calls = max(1, int(batch_s / max(time.perf_counter() - t0, 1e-9)))
    samples = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            one = ones[name]
            one()  # untimed, as in the C bench
            t0 = time.perf_counter()
            for _ in range(calls):
                one()
            samples[name].append((time.perf_counter() - t0) / calls * 1e9)
    ns = {name: statistics.median(s) for name, s in samples.items()}
    ratio = {name: statistics.median(a / b for a, b in zip(s, samples[names[0]]))
             for name, s in samples.items()}
    return ns, ratio


def time_workload(wid, rounds, batch_s, with_tensorjit=False):
    gen = torch.Generator().manual_seed(20261122)
    table, offsets, index_sets, weight_sets, n, mode, packed, dtype = inputs(wid, gen)
    fn, what = call_of(wid, table, offsets, mode, packed, dtype)
    impls = {"torch": fn}
    same = None
    if with_tensorjit:
        bags = index_sets[0].shape[0] if packed else offsets.numel()
        ours = tensorjit_call(table, offsets, mode, packed, bags)
        impls["tensorjit"] = ours
        theirs = fn(index_sets[0], weight_sets[0])
        mine = ours(index_sets[0], weight_sets[0])
        same = theirs.shape == mine.shape and torch.equal(bits(theirs), bits(mine))
    ns, ratio = time_calls(impls, index_sets, weight_sets, rounds, batch_s)
    return ns, ratio, same, n, len(index_sets), what, huge_bytes(table), \
        table.numel() * table.element_size()


def per_lookup(rows, impl):
    """workload id -> that impl's ns per lookup in a C bench JSON's rows."""
    return {r["workload"]: r["ns_per_lookup"] for r in rows if r.get("impl") == impl}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--c-json", help="the output of `tensorjit bench --bags --json`")
    ap.add_argument("--tensorjit", action="store_true",
                    help="time tensorjit's kernel in the same rounds (the package built)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.tensorjit:  # before the package reads the mask: one thread for it too
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    c_rows = []
    if args.c_json:
        with open(args.c_json) as f:
            c_rows = json.load(f)
    static, jit = per_lookup(c_rows, "static"), per_lookup(c_rows, "jit")
    fbgemm = "fbgemm" in torch.backends.quantized.supported_engines
    rows = []
    for wid in args.workload or list(WORKLOADS):
        times, ratios, same, n, sets, what, huge, nbytes = time_workload(
            wid, args.rounds, 0.02, args.tensorjit)
        ns = times["torch"]
        ratio = ns / n / static[wid] if wid in static else None
        ours = jit[wid] / (ns / n) if wid in jit else None
        row = {"workload": wid, "impl": "torch", "threads": 1, "ns": round(ns, 2),
               "ns_per_lookup": round(ns / n, 4), "index_sets": sets,
               "vs_static": round(ratio, 4) if ratio else None,
               "jit_over_torch": round(ours, 4) if ours else None, "call": what,
               "torch": torch.__version__, "fbgemm": fbgemm,
               "table_bytes": nbytes, "huge_page_bytes": huge}
        if args.tensorjit:
            row.update({"tensorjit_ns": round(times["tensorjit"], 2),
                        "tensorjit_over_torch": round(ratios["tensorjit"], 4),
                        "same_bits": same})
        rows.append(row)
        if not args.json:
            vs = f"{ratio:9.2f}x" if ratio else f"{'-':>10}"
            us = f"{ours:6.2f}x" if ours else f"{'-':>7}"
            print(f"{wid:<5}{ns:14.1f} ns/call {ns / n:9.2f} ns/lookup  vs static {vs}  "
                  f"jit over torch {us}  ({sets} index sets; {what}; "
                  f"{huge >> 20} of {nbytes >> 20} MiB on huge pages; "
                  f"fbgemm {'yes' if fbgemm else 'no'})", flush=True)
            if args.tensorjit:
                print(f"     tensorjit {times['tensorjit']:14.1f} ns/call, over torch "
                      f"{ratios['tensorjit']:.2f}x in the same rounds; outputs "
                      f"{'equal bit for bit' if same else 'differ'}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
