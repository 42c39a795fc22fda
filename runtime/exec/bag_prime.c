/* The first rows of a bag kernel's call, prefetched (bag_prime.h). */
#include "bag_prime.h"

#include "index.h"

void tj_rt_bag_prime(const void *table, const void *indices, int64_t first, int64_t n,
                     int64_t row_bytes, int64_t index_type)
{
    for (int64_t i = 0; i < n; i++) {
        /* the row's address in integers: an index out of range (a policy
         * that wraps, clamps or drops it later) forms no pointer */
        uint64_t row = (uint64_t)(uintptr_t)table +
                       (uint64_t)tj_index_load(indices, (jit_dtype)index_type, first + i) *
                           (uint64_t)row_bytes;
        int lines = 0;
        for (int64_t o = 0; o < row_bytes && lines < 63; o += 64, lines++)
            __builtin_prefetch((const void *)(uintptr_t)(row + (uint64_t)o), 0, 2);
        if (row_bytes % 64 && row_bytes > 64) /* a row off the lines' grid spans one more */
            __builtin_prefetch((const void *)(uintptr_t)(row + (uint64_t)row_bytes - 1), 0, 2);
    }
}
