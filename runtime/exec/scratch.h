/* Per-thread scratch memory for kernels that need some per call (a mean's
 * counts): kept and grown per thread, so that calls from many threads
 * never share it and a thread's later calls allocate nothing. */
#ifndef TJ_SCRATCH_H
#define TJ_SCRATCH_H

#include <stddef.h>

/* At least `bytes` of the calling thread's scratch (its contents are
 * whatever the last call left), or NULL when memory is short. */
void *tj_scratch(size_t bytes);

/* The calling thread's memory of dynamic shapes (runtime/dyn/dyn.c): `bytes`,
 * zeroed when first had (every call must ask the same size), or NULL when
 * memory is short. Freed with the scratch. */
void *tj_scratch_shapes(size_t bytes);

/* Frees the calling thread's scratch (jit_shutdown calls it); other
 * threads' goes when they exit. */
void tj_scratch_release(void);

#endif
