/*
 * tensorjit-compile-cost: what one compile of a workload's kernel costs.
 * After a first compile of another signature (the engine's start), it
 * compiles --compiles K (at most 256) kernels of the workload's signature,
 * each with the data dim that its indices select in one longer than the
 * last (a table's rows, a gather's axis): K cache misses of the same code
 * shape. Prints each compile's wall time and their median.
 * bench/compile_cost.sh runs it under callgrind twice (K = 1 and K = 1 + N)
 * and prints the instructions one compile executes: the same on any host,
 * however loaded, so two builds' compiles compare where wall times drift by
 * 2x (issue 25's 5 ms a family). With --async each kernel comes from
 * jit_compile_async instead: the time it took to return (a pointer that
 * runs the reference kernel) and the time until the pointer ran the JIT
 * kernel (its background compile). For development, not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bags.h"
#include "bench.h"
#include "workloads.h"

typedef struct cc_opts {
    const char *workload;
    int dynamic, threads, compiles, async;
} cc_opts;

static int cc_usage(void)
{
    fprintf(stderr, "usage: tensorjit-compile-cost --workload ID (G1..S6, E1..E5) [--dynamic] "
                    "[--async] [--threads T] [--compiles K]\n");
    return 2;
}

static int cc_parse(int argc, char **argv, cc_opts *o)
{
    *o = (cc_opts){.workload = NULL, .dynamic = 0, .threads = 1, .compiles = 9};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--dynamic") == 0 || strcmp(a, "--async") == 0) {
            *(a[2] == 'd' ? &o->dynamic : &o->async) = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--workload") == 0)
            o->workload = v;
        else if (strcmp(a, "--threads") == 0)
            o->threads = atoi(v);
        else if (strcmp(a, "--compiles") == 0)
            o->compiles = atoi(v);
        else
            return -1;
    }
    return o->workload && o->threads >= 1 && o->compiles >= 1 && o->compiles <= 256 ? 0 : -1;
}

/* The workload's signature: a bag workload's (its dynamic family with
 * --dynamic), or a G/S workload's (a dynamic variant's own, G1d...). */
static int cc_sig(const cc_opts *o, jit_sig *s)
{
    const tj_bag_workload *b = tj_bag_workload_find(o->workload);
    if (b) {
        *s = tj_bags_jit_sig(b, b->bags * b->length, o->threads, o->dynamic);
        return 0;
    }
    const tj_workload *w = tj_workload_find(o->workload);
    if (!w || o->dynamic)
        return -1; /* a G/S workload's dynamic variant is a workload of its own (G1d) */
    *s = w->sig;
    s->threads = o->threads;
    return 0;
}

/* The data dim whose length only bounds the index values (no other
 * input's dim must equal it), or -1: the table's rows, the dim a Gather,
 * GatherElements or ScatterUpdate indexes along, GatherND's first after
 * its batch dims. */
static int cc_indexed_dim(const jit_sig *s)
{
    int rank = s->data_shape.rank, d;
    switch (s->op) {
    case JIT_OP_GATHER_ND:
        d = s->batch_dims;
        break;
    case JIT_OP_GATHER:
    case JIT_OP_GATHER_ELEMENTS:
    case JIT_OP_SCATTER_UPDATE:
    case JIT_OP_SCATTER_ELEMENTS_UPDATE:
        d = s->axis < 0 ? s->axis + rank : s->axis;
        break;
    default: /* ScatterNDUpdate, the bags */
        d = 0;
    }
    return d >= 0 && d < rank && s->data_shape.dims[d] != JIT_DIM_DYNAMIC ? d : -1;
}

/* K kernels from jit_compile_async: when each returned, and when it ran
 * the JIT kernel; the medians. */
static int cc_async(const cc_opts *o, const jit_sig *s, int grown)
{
    double back[256], jit[256];
    int n = o->compiles;
    for (int i = 0; i < n; i++) {
        jit_sig k = *s;
        k.data_shape.dims[grown] += i + 1;
        double t0 = tj_bench_now_ns();
        jit_kernel fn = jit_compile_async(&k);
        back[i] = (tj_bench_now_ns() - t0) / 1e6;
        jit[i] = fn ? tj_bench_until_jit(fn, t0, 10000) : -1;
        if (jit[i] < 0) {
            fprintf(stderr, "tensorjit-compile-cost: %s: %s\n", o->workload,
                    fn ? "its tiered kernel never ran the JIT kernel" : jit_last_error());
            return 1;
        }
        printf("%s%s async %d: returned in %.3f ms, the JIT kernel after %.3f ms\n",
               o->workload, o->dynamic ? " (dynamic)" : "", i + 1, back[i], jit[i]);
    }
    printf("%s%s: median of %d async compiles: returned in %.3f ms, the JIT kernel after "
           "%.3f ms\n", o->workload, o->dynamic ? " (dynamic)" : "", n, tj_bench_median(back, n),
           tj_bench_median(jit, n));
    return 0;
}

int main(int argc, char **argv)
{
    cc_opts o;
    jit_sig s;
    if (cc_parse(argc, argv, &o) != 0 || cc_sig(&o, &s) != 0)
        return cc_usage();
    int grown = cc_indexed_dim(&s);
    if (grown < 0) {
        fprintf(stderr, "tensorjit-compile-cost: %s: its indexed data dim is dynamic: no new key "
                        "of the same code shape to make\n", o.workload);
        return 2;
    }
    /* the engine's start, on a signature no workload has */
    jit_sig first = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I32,
                     .data_shape = {2, {7, 3}}, .indices_shape = {1, {2}}};
    if (!jit_compile(&first)) {
        fprintf(stderr, "tensorjit-compile-cost: %s\n", jit_last_error());
        return 1;
    }
    if (o.async) {
        int rc = cc_async(&o, &s, grown);
        jit_shutdown();
        return rc;
    }
    double ms[256];
    int n = o.compiles;
    for (int i = 0; i < n; i++) {
        jit_sig k = s;
        k.data_shape.dims[grown] += i + 1; /* a new key, the same code shape */
        double t0 = tj_bench_now_ns();
        jit_kernel fn = jit_compile(&k);
        ms[i] = (tj_bench_now_ns() - t0) / 1e6;
        if (!fn) {
            fprintf(stderr, "tensorjit-compile-cost: %s: %s\n", o.workload, jit_last_error());
            return 1;
        }
        printf("%s%s compile %d: %.3f ms\n", o.workload, o.dynamic ? " (dynamic)" : "", i + 1,
               ms[i]);
    }
    printf("%s%s: median of %d compiles %.3f ms\n", o.workload, o.dynamic ? " (dynamic)" : "",
           n, tj_bench_median(ms, n));
    jit_shutdown();
    return 0;
}
