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
    /* A dynamic variant (SPEC section 6): the id of its fully static twin,
     * whose signature gives the concrete shapes every call of this one's
     * dynamic kernel (sig, with JIT_DIM_DYNAMIC dims) is made with; its
     * in_place and fill are the twin's. NULL for every other workload. */
    const char *static_twin;
} tj_workload;

extern const tj_workload tj_workloads[];
extern const int tj_workload_count;

/* The workload named id, or NULL. */
const tj_workload *tj_workload_find(const char *id);

/* The workload whose signature holds w's concrete shapes: w's static twin
 * for a dynamic variant, else w itself. */
const tj_workload *tj_workload_concrete(const tj_workload *w);

/* 1 for a dynamic variant (its signature has a JIT_DIM_DYNAMIC dim). */
int tj_workload_is_dynamic(const tj_workload *w);

/* The actual dims of a call of w's kernel as jit_dynamic_fn takes them:
 * data's, indices', then (ops with updates) updates', from the concrete
 * shapes; returns how many (at most 3 * JIT_MAX_RANK). */
int tj_workload_call_dims(const tj_workload *w, int64_t *dims);

/* 1 when the op of w's signature takes updates (a scatter). */
int tj_workload_has_updates(const tj_workload *w);

/* 1 when an earlier workload has the same signature (S2ip: S2 run in
 * place), so that compiling it again is a cache hit, not a compile. */
int tj_workload_is_twin(const tj_workload *w);

/* The ids, comma-separated, for messages. */
const char *tj_workload_ids(void);

#endif
