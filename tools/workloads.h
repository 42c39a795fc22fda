/* The benchmark workloads of shared/bench/workloads.md as signatures of
 * the generic API: any op of the family fits one entry. */
#ifndef TJ_WORKLOADS_H
#define TJ_WORKLOADS_H

#include "tensorjit.h"

/* How a workload's indices are filled (shared/bench/workloads.md: valid,
 * uniformly random from a fixed seed, unless the workload says more). */
typedef enum tj_index_fill {
    TJ_FILL_RANDOM = 0,  /* each entry uniformly random in its dimension */
    TJ_FILL_DISTINCT,    /* no value twice (ScatterUpdate: no duplicate row) */
    TJ_FILL_ROW_PERMUTATION, /* each innermost row a permutation (GatherElements G9) */
    TJ_FILL_FIXED        /* the values the spec's own example gives */
} tj_index_fill;

typedef struct tj_workload {
    const char *id;
    const char *what;
    int in_place;          /* a scatter run with out == data */
    tj_index_fill fill;
    const int64_t *fixed;  /* TJ_FILL_FIXED: every index entry, in order */
    jit_sig sig;
} tj_workload;

extern const tj_workload tj_workloads[];
extern const int tj_workload_count;

/* The workload named id, or NULL. */
const tj_workload *tj_workload_find(const char *id);

/* 1 when the op of w's signature takes updates (a scatter). */
int tj_workload_has_updates(const tj_workload *w);

/* 1 when an earlier workload has the same signature (S2ip: S2 run in
 * place), so that compiling it again is a cache hit, not a compile. */
int tj_workload_is_twin(const tj_workload *w);

/* The ids, comma-separated, for messages. */
const char *tj_workload_ids(void);

#endif
