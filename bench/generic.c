/* The generic loop: what a framework's reference kernel does. Shapes are
 * run-time values, each slice is a memcpy call; indices are validated
 * first, as tensorjit does, so that every implementation keeps the same
 * contract. */
#include <string.h>

#include "bench.h"

static int64_t tj_load(const void *p, int size, int is_signed, int64_t i)
{
    switch (size) {
    case 4: return is_signed ? (int64_t)((const int32_t *)p)[i] : (int64_t)((const uint32_t *)p)[i];
    case 8: return ((const int64_t *)p)[i];
    case 2: return is_signed ? (int64_t)((const int16_t *)p)[i] : (int64_t)((const uint16_t *)p)[i];
    default: return is_signed ? (int64_t)((const int8_t *)p)[i] : (int64_t)((const uint8_t *)p)[i];
    }
}

int tj_generic_run(const tj_bench_shape *s, const void *data, const void *indices,
                   const void *updates, void *out)
{
    int64_t tuples = s->scatter ? s->items : s->outer * s->items;
    for (int64_t t = 0; t < tuples; t++)
        for (int e = 0; e < s->depth; e++)
            if ((uint64_t)tj_load(indices, s->index_size, s->index_signed, t * s->depth + e) >=
                (uint64_t)s->dims[e])
                return 1;
    if (s->scatter && out != data)
        memcpy(out, data, (size_t)s->data_bytes);
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t j = 0; j < s->items; j++) {
            int64_t first = s->scatter ? j : (o * s->items + j) * s->depth, off = 0;
            for (int e = 0; e < s->depth; e++)
                off += tj_load(indices, s->index_size, s->index_signed, first + e) * s->strides[e];
            char *o_base = (char *)out;
            if (s->scatter)
                memcpy(o_base + o * s->indexed_outer + off,
                       (const char *)updates + (o * s->items + j) * s->block, (size_t)s->block);
            else
                memcpy(o_base + (o * s->items + j) * s->block,
                       (const char *)data + o * s->indexed_outer + off, (size_t)s->block);
        }
    return 0;
}
