/* One bag workload's peers: their kernels, the check of their outputs
 * against the static kernel's, and their timings (bench/bags_run.c). */
#ifndef TJ_BAGS_RUN_H
#define TJ_BAGS_RUN_H

#include "bags.h"

typedef enum tj_bag_impl {
    TJ_BAG_STATIC,
    TJ_BAG_PREFETCH,      /* the static kernel prefetching 16 lookups ahead */
    TJ_BAG_PROBE,         /* the random-gather probe at its searched distance */
    TJ_BAG_PROBE_X2,      /* the same, its bags in two halves on two threads */
    TJ_BAG_MEMCPY,        /* a copy of the output's bytes */
    TJ_BAG_JIT,           /* tensorjit's kernel, where this build has the ops */
    TJ_BAG_JIT_DYN,       /* its dynamic kernel (B, N / L dynamic) on the same inputs */
    TJ_BAG_JIT_UNCHECKED, /* the JIT kernel with its run-time checks compiled out */
    TJ_BAG_JIT_THREADS,   /* the first of the rows "jit xN": threads = N, bags split across the pool */
    TJ_BAG_COUNT = TJ_BAG_JIT_THREADS + 4
} tj_bag_impl;

/* How many "jit xN" rows one run can have (--threads 2,4,8,16). */
#define TJ_BAG_THREAD_ROWS (TJ_BAG_COUNT - TJ_BAG_JIT_THREADS)

#define TJ_BAG_MAX_ROUNDS 64

typedef struct tj_bag_case {
    tj_bag_inputs in;
    void *lib; /* the compiled static kernels */
    tj_bag_fn fn[TJ_BAG_COUNT]; /* static, prefetch, jit, jit unchecked, jit xN */
    int threads[TJ_BAG_THREAD_ROWS]; /* each "jit xN" row's N; 0: no such row */
    char thread_names[TJ_BAG_THREAD_ROWS][16];
    tj_bag_probe_fn probe;
    tj_bag_probe_range_fn probe_range;
    struct tj_probe_worker *worker; /* the second thread of "probe x2"; NULL: none */
    tj_bag_dyn_fn dyn;
    int64_t dims[6]; /* the dynamic kernel's */
    long long distance; /* the probe's, in lookups */
    void *out;
    void *reference; /* the static kernel's output on index set 0 (memcpy copies it) */
    int next_set;
    int ok[TJ_BAG_COUNT]; /* its output equals the static kernel's on every set checked */
    char jit_why[256];    /* why there is no JIT row */
    double ns[TJ_BAG_COUNT]; /* the median of the rounds */
    double ns_min[TJ_BAG_COUNT], ns_max[TJ_BAG_COUNT];
    int rounds;
    double round_ns[TJ_BAG_COUNT][TJ_BAG_MAX_ROUNDS]; /* each round's, in round order */
    /* compile ms of the static and the dynamic kernel, each a compile
     * after a first one (first_compile_ms, of another signature) in a
     * library just shut down: no kernel of an earlier workload (E2a's
     * dynamic one is E2b's) is a cache hit; -1: none */
    double first_compile_ms, compile_ms, compile_dyn_ms;
    /* the family through jit_compile_async (another key): until its
     * pointer came back, and until that ran the JIT kernel; -1: none */
    double async_back_ms, async_jit_ms;
} tj_bag_case;

/* Inputs, kernels and the probe's distance; 0, or -1 with why. threads:
 * the "jit xN" rows' thread counts, TJ_BAG_THREAD_ROWS of them, 0 after
 * the last. */
int tj_bag_prepare(tj_bag_case *c, const tj_bag_workload *w, const int *threads, int smoke,
                   char *why, size_t len);
void tj_bag_release(tj_bag_case *c);
int tj_bag_available(const tj_bag_case *c, tj_bag_impl i);
/* Every peer against the static kernel on the first index sets, bit for
 * bit; a peer that differs or fails gets ok 0 and a MISMATCH line on
 * stderr. Returns how many differ. TENSORJIT_BENCH_BAGS_CORRUPT=NAME
 * flips a bit of that peer's output first (the bench's test). */
int tj_bag_verify(tj_bag_case *c);
/* Interleaved rounds: each round times a batch of about batch_ns of
 * every peer once, in turn; fills c->ns with the median and ns_min,
 * ns_max with the spread. */
void tj_bag_time(tj_bag_case *c, int rounds, double batch_ns);
/* The threads row i runs on: 2 for "probe x2", N for "jit xN", else 1. */
int tj_bag_threads(const tj_bag_case *c, tj_bag_impl i);
/* The row's name: "static", ..., "jit x4". */
const char *tj_bag_impl_name(const tj_bag_case *c, tj_bag_impl i);
/* The median over the rounds of a's time over b's in the same round: the
 * ratio workloads.md asks for (within each run, then the median), steadier
 * on a busy host than the ratio of the two medians. 0 without rounds. */
double tj_bag_ratio(const tj_bag_case *c, tj_bag_impl a, tj_bag_impl b);

#endif
