/* The reference kernel of the embedding bags (SPEC 10): the bag plan,
 * interpreted, with SPEC 10's arithmetic exactly; the oracle the JIT's bag
 * kernels are held to, bit for bit. */
#ifndef TJ_BAG_REF_H
#define TJ_BAG_REF_H

#include "plan.h"

/* The whole kernel: buffers, the check pass, then every bag. A status. */
int tj_bag_ref_run(const tj_plan *p, const void *table, const void *indices, const void *offsets,
                   const void *weights, void *out);

/* Bags [begin, end) of out, the inputs checked already. A status. */
int tj_bag_ref_range(const tj_plan *p, const void *table, const void *indices,
                     const void *offsets, const void *weights, void *out, int64_t begin,
                     int64_t end);

/* Of bags [begin, end), those whose rows in out hold a NaN reduced again
 * (a float sum's or mean's JIT fast path leaves NaNs to the hardware: a
 * row without one has the rule's bits already). A status. */
int tj_bag_ref_redo_nan(const tj_plan *p, const void *table, const void *indices,
                        const void *offsets, const void *weights, void *out, int64_t begin,
                        int64_t end);

#endif
