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

int64_t tj_bench_load_index(const tj_bench_shape *s, const void *p, int64_t i)
{
    return tj_load(p, s->index_size, s->index_signed, i);
}

typedef struct tj_generic_args {
    const tj_bench_shape *s;
    const char *data, *indices, *updates;
    char *out;
} tj_generic_args;

/* Levels [l, nlevels) from the given offsets. */
static void tj_walk(const tj_generic_args *a, int l, int64_t index, int64_t indexed, int64_t dense)
{
    const tj_bench_shape *s = a->s;
    if (l == s->nlevels) {
        int64_t off = indexed;
        for (int e = 0; e < s->depth; e++)
            off += tj_load(a->indices, s->index_size, s->index_signed, index + e) * s->strides[e];
        if (s->sum) {
            float *o = (float *)(a->out + off);
            const float *u = (const float *)(a->updates + dense);
            for (int64_t j = 0; j < s->block / 4; j++)
                o[j] += u[j];
        } else if (s->scatter)
            memcpy(a->out + off, a->updates + dense, (size_t)s->block);
        else
            memcpy(a->out + dense, a->data + off, (size_t)s->block);
        return;
    }
    const tj_bench_level *v = &s->levels[l];
    for (int64_t i = 0; i < v->trip; i++)
        tj_walk(a, l + 1, index + i * v->index_step, indexed + i * v->indexed_step,
                dense + i * v->dense_step);
}

int tj_generic_run(const tj_bench_shape *s, const void *data, const void *indices,
                   const void *updates, void *out)
{
    int64_t tuples = s->depth ? s->index_count / s->depth : 0;
    for (int64_t t = 0; t < tuples; t++)
        for (int e = 0; e < s->depth; e++)
            if ((uint64_t)tj_load(indices, s->index_size, s->index_signed, t * s->depth + e) >=
                (uint64_t)s->dims[e])
                return 1;
    if (s->scatter && out != data)
        memcpy(out, data, (size_t)s->data_bytes);
    tj_generic_args a = {s, data, indices, updates, out};
    tj_walk(&a, 0, 0, 0, 0);
    return 0;
}
