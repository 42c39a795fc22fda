/* tensorjit bench --threads LIST [--policy NAME]: how each workload's
 * kernel scales with its thread count (bench/scaling.c). */
#ifndef TJ_BENCH_SCALING_H
#define TJ_BENCH_SCALING_H

#include "tensorjit.h"
#include "workloads.h"

#define TJ_SCALE_MAX 16

typedef struct tj_scale_opts {
    int counts[TJ_SCALE_MAX]; /* thread counts; ratios are against the first */
    int ncounts;
    jit_index_policy policy;
    int rounds, json;
    int verbose; /* also what the split rule did with each kernel's calls */
} tj_scale_opts;

/* "1,2,4" into o->counts; 0, or -1 when it is not such a list. */
int tj_scale_parse(const char *list, tj_scale_opts *o);

/* The scaling rows of ws[0..n); 0, or -1 (said on stderr). *first: the
 * JSON array's first element is still to come. */
int tj_bench_scaling(const tj_workload *const *ws, int n, const tj_scale_opts *o, int *first);

#endif
