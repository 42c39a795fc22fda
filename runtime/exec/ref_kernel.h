/* The reference (interpreted) kernel: runs any plan. It is the fallback
 * behind every pointer the JIT cannot serve and the oracle the JIT is
 * tested against. */
#ifndef TJ_REF_KERNEL_H
#define TJ_REF_KERNEL_H

#include "plan.h"

/* updates is ignored for GatherND. Returns a jit_status. */
int tj_ref_run(const tj_plan *p, const void *data, const void *indices, const void *updates,
               void *out);

/* The copies of units [begin, end) of the plan (the iterations of its unit
 * levels, each with its part of a scatter's data copy); indices must have
 * been validated. */
int tj_ref_range(const tj_plan *p, const void *data, const void *indices, const void *updates,
                 void *out, int64_t begin, int64_t end);

/* Buffers NULL where the plan needs bytes: JIT_STATUS_BAD_POINTER with the
 * message set, else JIT_OK. */
int tj_check_buffers(const tj_plan *p, const void *data, const void *indices,
                     const void *updates, const void *out);

/* Finds the first tuple (row-major) that the policy rejects, sets
 * jit_last_error() to name its position, value and dimension, and returns
 * JIT_STATUS_BAD_INDEX; JIT_OK when every tuple is usable. */
int tj_report_bad_index(const tj_plan *p, const void *indices);
/* 1 when the policy rejects a tuple of [begin, end) (0 <= begin <= end <=
 * p->tuples), else 0; no message (jit_validate_part's slices). */
int tj_bad_index_in(const tj_plan *p, const void *indices, int64_t begin, int64_t end);

#endif
