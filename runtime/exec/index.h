/* Reading one index of any integer type and applying the index policy.
 * Shared by the reference kernel and the bad-index reporter so that both
 * agree on what is in range. */
#ifndef TJ_INDEX_H
#define TJ_INDEX_H

#include <stdint.h>

#include "tensorjit.h"

/* The index at position i, widened to int64. A u64 above INT64_MAX is
 * saturated to INT64_MAX: no dim is that large, so it stays out of range
 * (and clamps to the last entry). */
static inline int64_t tj_index_load(const void *indices, jit_dtype t, int64_t i)
{
    switch (t) {
    case JIT_I8: return ((const int8_t *)indices)[i];
    case JIT_U8: return ((const uint8_t *)indices)[i];
    case JIT_I16: return ((const int16_t *)indices)[i];
    case JIT_U16: return ((const uint16_t *)indices)[i];
    case JIT_I32: return ((const int32_t *)indices)[i];
    case JIT_U32: return ((const uint32_t *)indices)[i];
    case JIT_I64: return ((const int64_t *)indices)[i];
    case JIT_U64: {
        uint64_t v = ((const uint64_t *)indices)[i];
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: return -1;
    }
}

/* 1 and *pos when index v selects an entry of a dimension of size dim
 * under policy p; 0 when it selects none. */
static inline int tj_index_resolve(int64_t v, int64_t dim, jit_index_policy p, int64_t *pos)
{
    switch (p) {
    case JIT_INDEX_NEGATIVE_WRAPS:
    case JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL:
        if (v < 0 && v >= -dim)
            v += dim;
        break;
    case JIT_INDEX_CLAMP:
        if (dim == 0)
            return 0;
        v = v < 0 ? 0 : v >= dim ? dim - 1 : v;
        break;
    default:
        break;
    }
    if (v < 0 || v >= dim)
        return 0;
    *pos = v;
    return 1;
}

#endif
