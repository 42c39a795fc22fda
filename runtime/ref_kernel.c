/* The reference kernel: the plan's nest, interpreted. Indices are
 * validated in a pass of their own before anything is written, so a bad
 * index leaves out as it was (for an in-place scatter: no half update). */
#include "ref_kernel.h"

#include <string.h>

#include "error.h"
#include "index.h"

int tj_check_buffers(const tj_plan *p, const void *data, const void *indices,
                     const void *updates, const void *out)
{
    const char *which = NULL;
    if (!data && p->data_bytes)
        which = "data";
    else if (!indices && p->indices_elems)
        which = "indices";
    else if (p->has_updates && !updates && p->updates_bytes)
        which = "updates";
    else if (!out && p->out_bytes)
        which = "out";
    if (!which)
        return JIT_OK;
    tj_error_set("%s is NULL but the signature needs bytes there", which);
    return JIT_STATUS_BAD_POINTER;
}

/* Byte offset of the block a tuple selects, or -1 when the policy drops
 * it (only the filling policies get here with a bad tuple: under the
 * others every tuple was validated first). */
static int64_t tj_tuple_offset(const tj_plan *p, const void *indices, int64_t first)
{
    int64_t off = 0;
    for (int e = 0; e < p->depth; e++) {
        int64_t pos;
        int64_t v = tj_index_load(indices, p->index_type, first + e);
        if (!tj_index_resolve(v, p->dims[e], p->policy, &pos))
            return -1;
        off += pos * p->strides[e];
    }
    return off;
}

/* Where the nest stands: offsets in the index stream and on both sides. */
typedef struct tj_cursor {
    int64_t index, indexed, dense;
} tj_cursor;

typedef struct tj_buffers {
    const char *data, *updates;
    const void *indices;
    char *out;
} tj_buffers;

static void tj_ref_block(const tj_plan *p, const tj_buffers *b, const tj_cursor *c)
{
    int64_t off = tj_tuple_offset(p, b->indices, c->index);
    size_t n = (size_t)p->block_bytes;
    if (p->indexed == TJ_INDEXED_SRC) {
        if (off < 0)
            memset(b->out + c->dense, 0, n);
        else
            memcpy(b->out + c->dense, b->data + c->indexed + off, n);
    } else if (off >= 0) {
        memcpy(b->out + c->indexed + off, b->updates + c->dense, n);
    }
}

/* Every point of levels [from, nlevels) from cursor c, in row-major order. */
static void tj_ref_levels(const tj_plan *p, const tj_buffers *b, int from, tj_cursor c)
{
    int64_t iv[TJ_MAX_LEVELS] = {0};
    for (;;) {
        tj_ref_block(p, b, &c);
        int l = p->nlevels - 1;
        for (; l >= from; l--) {
            const tj_level *v = &p->levels[l];
            if (++iv[l] < v->trip) {
                c.index += v->index_step;
                c.indexed += v->indexed_step;
                c.dense += v->dense_step;
                break;
            }
            iv[l] = 0;
            c.index -= (v->trip - 1) * v->index_step;
            c.indexed -= (v->trip - 1) * v->indexed_step;
            c.dense -= (v->trip - 1) * v->dense_step;
        }
        if (l < from)
            return;
    }
}

int tj_ref_run(const tj_plan *p, const void *data, const void *indices, const void *updates,
               void *out)
{
    int rc = tj_check_buffers(p, data, indices, updates, out);
    if (rc != JIT_OK)
        return rc;
    rc = tj_report_bad_index(p, indices);
    if (rc != JIT_OK)
        return rc;
    return tj_ref_range(p, data, indices, updates, out, 0, p->units);
}

int tj_ref_range(const tj_plan *p, const void *data, const void *indices, const void *updates,
                 void *out, int64_t begin, int64_t end)
{
    if (begin < 0)
        begin = 0;
    if (end > p->units)
        end = p->units;
    if (begin >= end)
        return JIT_OK;
    if (p->copy_bytes && out != data) /* a scatter: each unit copies its part first */
        memcpy((char *)out + begin * p->unit_copy_bytes,
               (const char *)data + begin * p->unit_copy_bytes,
               (size_t)((end - begin) * p->unit_copy_bytes));
    if (p->visits == 0)
        return JIT_OK;
    tj_buffers b = {data, updates, indices, out};
    for (int64_t u = begin; u < end; u++) {
        tj_cursor c = {0, 0, 0};
        for (int64_t l = p->unit_levels - 1, rest = u; l >= 0; l--) {
            const tj_level *v = &p->levels[l];
            int64_t i = rest % v->trip;
            rest /= v->trip;
            c.index += i * v->index_step;
            c.indexed += i * v->indexed_step;
            c.dense += i * v->dense_step;
        }
        tj_ref_levels(p, &b, p->unit_levels, c);
    }
    return JIT_OK;
}
