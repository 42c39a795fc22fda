/* The first rows of an embedding bag kernel's call, prefetched before its
 * first bag (SPEC section 10's "primed for the first rows"). A JIT kernel
 * calls it rather than generating the loop: the loop, its index loads and
 * a prefetch per cache line of a row were 3-5% of a compile's instructions
 * (docs/performance.md, 'Sixth round'). */
#ifndef TJ_BAG_PRIME_H
#define TJ_BAG_PRIME_H

#include <stdint.h>

/* Prefetches into L2 (the T1 hint) every cache line of the rows of
 * row_bytes that indices[first, first + n) name, as a kernel's
 * whole-row prefetch does (tj_bir_prefetch_lines): a line every 64 bytes,
 * at most 63, and the row's last byte where the row is off the lines'
 * grid. index_type is the indices' jit_dtype, read as the reference kernel
 * reads them (tj_index_load). The indices need not be in range: a prefetch
 * never faults, and the address is computed in integers (no pointer
 * arithmetic on the table past its end). Nothing for n <= 0. */
void tj_rt_bag_prime(const void *table, const void *indices, int64_t first, int64_t n,
                     int64_t row_bytes, int64_t index_type);

#endif
