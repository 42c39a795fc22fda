/* One workload's buffers, kernels and timings. */
#ifndef TJ_BENCH_RUN_H
#define TJ_BENCH_RUN_H

#include "bench.h"

typedef enum tj_impl {
    TJ_IMPL_JIT,
    TJ_IMPL_JIT_STUB,    /* the same JIT kernel through a kernel-limit entry stub */
    TJ_IMPL_TIERED,      /* the tiered kernel of the signature, after its switch */
    TJ_IMPL_JIT_THREADS, /* the JIT kernel compiled with threads = TJ_BENCH_THREADS */
    TJ_IMPL_REFERENCE,
    TJ_IMPL_GENERIC,
    TJ_IMPL_STATIC,
    TJ_IMPL_MEMCPY,
    TJ_IMPL_COUNT
} tj_impl;

typedef struct tj_bench_case {
    const tj_workload *w;
    tj_bench_shape s;
    void *data, *indices, *updates, *out, *check;
    jit_kernel jit, ref, jit2, tiered; /* of the workload's op: see tj_bench_call */
    void (*stub)(void); /* NULL where there are no stubs */
    void *static_fn;
    double ns[TJ_IMPL_COUNT]; /* median ns per call; 0 when not run */
} tj_bench_case;

#define TJ_BENCH_THREADS 2

int tj_bench_prepare(tj_bench_case *c, const tj_workload *w, void *static_lib, char *why,
                     size_t len);
void tj_bench_release(tj_bench_case *c);
int tj_bench_call(tj_bench_case *c, tj_impl i);
int tj_bench_available(const tj_bench_case *c, tj_impl i);
int tj_bench_verify(tj_bench_case *c, char *why, size_t len);
void tj_bench_time(tj_bench_case *c, int rounds, double batch_ns);
const char *tj_impl_name(tj_impl i);

#endif
