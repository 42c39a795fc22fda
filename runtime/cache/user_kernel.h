/* The kernel behind a pointer a caller holds, for the queries that take
 * one (info, units, validate, run_range). */
#ifndef TJ_USER_KERNEL_H
#define TJ_USER_KERNEL_H

#include "cache.h"
#include "kernel.h"

/* The op's kernel behind fn (op JIT_OP_NONE: any op's): a cached kernel (direct or behind its stub),
 * pinned until tj_user_kernel_done(pin), or what a tiered kernel runs now
 * (*tiered = 1; it lives until jit_shutdown). NULL with jit_last_error()
 * set when fn is a released kernel, another op's, or none of ours; then
 * *status (where not NULL) is the status a call that returns one answers:
 * JIT_STATUS_RELEASED for a released kernel, as calling its pointer does,
 * else JIT_STATUS_BAD_POINTER. */
const tj_kernel *tj_user_kernel(tj_entry_fn fn, jit_op op, int *tiered, tj_cache_pinned *pin,
                                int *status);
void tj_user_kernel_done(tj_cache_pinned *pin);

#endif
