/* The benchmark workloads of shared/bench/workloads.md as signatures. */
#ifndef TJ_WORKLOADS_H
#define TJ_WORKLOADS_H

#include "tensorjit.h"

typedef struct tj_workload {
    const char *id;
    const char *what;
    int is_scatter;
    int in_place;
    jit_gather_nd_sig gather;
    jit_scatter_update_sig scatter;
} tj_workload;

extern const tj_workload tj_workloads[];
extern const int tj_workload_count;

/* The workload named id, or NULL. */
const tj_workload *tj_workload_find(const char *id);

#endif
