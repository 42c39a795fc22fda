/* tensorjit bench: the workloads of shared/bench/workloads.md, each run in
 * one process, interleaved, by the JIT kernel, the reference kernel, a
 * generic C loop, a static-shape C kernel compiled at bench time, and
 * memcpy of the same bytes. */
#ifndef TJ_BENCH_H
#define TJ_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "tensorjit.h"
#include "workloads.h"

/* A workload's loop nest, derived from its signature by the bench itself
 * (independently of the library's plan): what the peers run. Every op of
 * the family is a nest of levels; iteration i of a level adds i *
 * index_step to the position in the index stream, i * indexed_step bytes
 * on the indexed side (data for gathers, out for scatters) and i *
 * dense_step bytes on the dense side (out for gathers, updates for
 * scatters). At each point `depth` consecutive indices select, through
 * dims and strides, a block of `block` bytes. The peers know two
 * scatters: store the block, or (sum) add it element by element in f32;
 * tensorjit's other reductions and types have no peer here. */
#define TJ_BENCH_LEVELS (JIT_MAX_RANK + 2)

typedef struct tj_bench_level {
    int64_t trip, index_step, indexed_step, dense_step;
} tj_bench_level;

typedef struct tj_bench_shape {
    int scatter;
    int sum; /* a scatter that adds its f32 updates (S5, S6) instead of storing them */
    int nlevels;
    tj_bench_level levels[TJ_BENCH_LEVELS];
    int depth;
    int64_t dims[JIT_MAX_RANK];
    int64_t strides[JIT_MAX_RANK]; /* bytes */
    int64_t block;                 /* bytes per slice / update */
    int index_size, index_signed, elem_size;
    int64_t data_bytes, index_count, updates_bytes, out_bytes;
    int64_t moved_bytes; /* what memcpy copies: the output, or data + updates */
} tj_bench_shape;

void tj_bench_shape_of(const tj_workload *w, tj_bench_shape *s);

/* The generic loop: run-time shapes, a memcpy per slice, indices validated
 * first; returns 0 or 1 (bad index). */
int tj_generic_run(const tj_bench_shape *s, const void *data, const void *indices,
                   const void *updates, void *out);

/* Entry i of an index buffer of s's index type, and a store of v there. */
int64_t tj_bench_load_index(const tj_bench_shape *s, const void *p, int64_t i);
void tj_bench_store_index(const tj_bench_shape *s, void *p, int64_t i, int64_t v);

typedef int (*tj_static_gather_fn)(const void *, const void *, void *);
typedef int (*tj_static_scatter_fn)(const void *, const void *, const void *, void *);

/* Writes one C file with a static kernel per workload (shapes as
 * #defines), compiles it with cc -O3 -march=native into a shared object
 * and loads it. 0, or -1 with why (no compiler: the caller skips). */
int tj_static_build(const tj_workload *const *ws, int n, void **handle, char *why, size_t len);
void *tj_static_find(void *handle, const char *id);
void tj_static_close(void *handle);

int tj_cmd_bench_run(int argc, char **argv);

/* The C peers' build (bench/cc_load.c): emit(f, arg) writes a C file into
 * a scratch folder $TMPDIR/tensorjit-bench-WHAT-XXXXXX, which `$CC FLAGS
 * -shared -fPIC` (cc without CC) compiles and dlopen loads. 0 and
 * *handle, or -1 with why (the folder then stays when the compiler
 * failed, for its cc.log). tj_bench_cc_find: the symbol PREFIX_ID. */
typedef void (*tj_bench_emit_fn)(FILE *f, const void *arg);
int tj_bench_cc_load(const char *what, const char *flags, tj_bench_emit_fn emit, const void *arg,
                     void **handle, char *why, size_t len);
void *tj_bench_cc_find(void *handle, const char *prefix, const char *id);
void tj_bench_cc_close(void *handle);

/* A new folder $TMPDIR/tensorjit-bench-WHAT-XXXXXX (else under /tmp) in
 * dir; 0 or -1. tj_bench_rmdir removes it with what it holds. */
int tj_bench_tmpdir(const char *what, char *dir, size_t len);
int tj_bench_rmdir(const char *dir);

/* CLOCK_MONOTONIC in ns, and the median of v[0..n) (sorts v; 0 if n is 0). */
double tj_bench_now_ns(void);
double tj_bench_median(double *v, int n);
/* ms from t0 (tj_bench_now_ns) until kernel k, from jit_*_compile_async,
 * runs the JIT kernel (jit_info polled every 20 us), or -1: after limit_ms,
 * or at once where no JIT kernel is coming (a reference kernel that is not
 * a tiered one's: TENSORJIT_JIT=off, a build without the JIT). */
double tj_bench_until_jit(jit_kernel k, double t0, double limit_ms);

#endif
