/* The first rows of a bag kernel's call, prefetched (bag_prime.h). */
#include "bag_prime.h"

#include <stddef.h>
#include <string.h>

static int64_t tj_prime_index(const unsigned char *indices, int64_t i, int64_t flags)
{
    int size = (int)(flags & 0xff), sgn = (flags & TJ_PRIME_SIGNED) != 0;
    const unsigned char *at = indices + (size_t)i * (size_t)size;
    switch (size) {
    case 1: return sgn ? (int64_t)(int8_t)at[0] : (int64_t)at[0];
    case 2: {
        uint16_t v;
        memcpy(&v, at, 2);
        return sgn ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, at, 4);
        return sgn ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
        int64_t v;
        memcpy(&v, at, 8);
        return v;
    }
    }
}

void tj_rt_bag_prime(const void *table, const void *indices, int64_t first, int64_t n,
                     int64_t row_bytes, int64_t flags)
{
    for (int64_t i = 0; i < n; i++) {
        /* the row's address in integers: an index out of range (a policy
         * that wraps, clamps or drops it later) forms no pointer */
        uint64_t row = (uint64_t)(uintptr_t)table +
                       (uint64_t)tj_prime_index(indices, first + i, flags) * (uint64_t)row_bytes;
        int lines = 0;
        for (int64_t o = 0; o < row_bytes && lines < 63; o += 64, lines++)
            __builtin_prefetch((const void *)(uintptr_t)(row + (uint64_t)o), 0, 2);
        if (row_bytes % 64 && row_bytes > 64) /* a row off the lines' grid spans one more */
            __builtin_prefetch((const void *)(uintptr_t)(row + (uint64_t)row_bytes - 1), 0, 2);
    }
}
