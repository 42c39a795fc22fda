/* One workload's buffers, kernels and timings. */
#ifndef TJ_BENCH_RUN_H
#define TJ_BENCH_RUN_H

#include "bench.h"

typedef enum tj_impl {
    TJ_IMPL_JIT,
    TJ_IMPL_DYNAMIC,     /* a dynamic variant's kernel (jit_dynamic_fn), with the twin's dims */
    TJ_IMPL_JIT_STUB,    /* the same JIT kernel through a kernel-limit entry stub */
    TJ_IMPL_TIERED,      /* the tiered kernel of the signature, after its switch */
    TJ_IMPL_JIT_THREADS, /* the JIT kernel compiled with threads = TJ_BENCH_THREADS (the
                          * one-thread kernel itself where it would not split: api.c) */
    TJ_IMPL_REFERENCE,
    TJ_IMPL_GENERIC,
    TJ_IMPL_STATIC,
    TJ_IMPL_MEMCPY,
    TJ_IMPL_COUNT
} tj_impl;

/* A dynamic variant called with a second concrete shape after its timing:
 * whether that compiled anything, and whether its output was right. */
typedef struct tj_bench_reshape {
    char shape[160];      /* the second shape, "indices 13x63x3" */
    int64_t kernels_before, kernels_after; /* jit_get_kernel_stats: JIT kernels alive */
    int same_info;        /* jit_info's engine, compile_ms and code_bytes unchanged */
    int same_pointer;     /* jit_compile of the dynamic signature again: the same pointer */
    int output_ok;        /* equals the generic loop's at that shape */
    int back_ok;          /* a call with the first shape again: equals the static kernel's */
    double first_ns;      /* the first call at the second shape (it plans the shape) */
    double next_ns;       /* the median of the calls after it */
} tj_bench_reshape;

typedef struct tj_bench_case {
    const tj_workload *w;
    tj_bench_shape s;
    void *data, *indices, *updates, *out, *check;
    jit_kernel jit, ref, jit2, tiered; /* of the workload's op: see tj_bench_call */
    void (*stub)(void); /* NULL where there are no stubs */
    void *static_fn;
    /* dynamic variants only: the kernel of w->sig, called with dims (the
     * static twin's shapes; jit is then the twin's kernel), its info, and
     * for in-place ones the data as filled */
    jit_kernel dyn;
    int64_t dims[3 * JIT_MAX_RANK];
    jit_kernel_info dyn_info;
    void *pristine;
    tj_bench_reshape reshape;
    double ns[TJ_IMPL_COUNT]; /* median ns per call; 0 when not run */
} tj_bench_case;

#define TJ_BENCH_THREADS 2

int tj_bench_prepare(tj_bench_case *c, const tj_workload *w, void *static_lib, char *why,
                     size_t len);
void tj_bench_release(tj_bench_case *c);
int tj_bench_call(tj_bench_case *c, tj_impl i);
/* fn, a kernel of the workload's op, called with the case's buffers; a
 * dynamic one (jit_dynamic_fn) with its dims too. */
int tj_bench_call_fn(const tj_bench_case *c, jit_kernel fn, int dynamic);
int tj_bench_available(const tj_bench_case *c, tj_impl i);
int tj_bench_verify(tj_bench_case *c, char *why, size_t len);
void tj_bench_time(tj_bench_case *c, int rounds, double batch_ns);
/* After the timing of a dynamic variant: calls its kernel with a second
 * shape (every dynamic dim halved) and fills c->reshape; 0, or -1 with why
 * (a failed call or an output that differs). bench/dynamic.c. */
int tj_bench_reshape_check(tj_bench_case *c, char *why, size_t len);
void *tj_bench_alloc(int64_t bytes);
const char *tj_impl_name(tj_impl i);

#endif
