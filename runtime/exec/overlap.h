/* What the checked calls (jit_call, jit_call_bag, jit_run_range_bag)
 * hold a call's pointers to, beyond what a kernel checks itself: an out
 * that shares no byte with an input, and no pointer for an input the
 * signature lacks. The typed pointers leave both to the caller. */
#ifndef TJ_OVERLAP_H
#define TJ_OVERLAP_H

#include "plan.h"

/* out against a gather's or scatter's inputs (a scatter may run in place,
 * out == data): 0, or -1 with the error naming both buffers. */
int tj_out_overlap(const tj_plan *p, const void *data, const void *indices,
                   const void *updates, const void *out);

/* A static bag's out against its table, indices, offsets and weights. */
int tj_bag_out_overlap(const tj_bag_plan *b, const void *table, const void *indices,
                       const void *offsets, const void *weights, const void *out);

/* Weights only where the bag has them, no offsets for Packed: a pointer
 * the kernel would ignore is a caller's mistake (unweighted sums given
 * silently, a user's trial). 0, or -1 with the error. */
int tj_bag_pointers_fit(const tj_bag_plan *b, const void *offsets, const void *weights);

#endif
