/* The reference kernel: the plan's loop nest, interpreted. Indices are
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
    else if (p->op == TJ_OP_SCATTER_UPDATE && !updates && p->updates_bytes)
        which = "updates";
    else if (!out && p->out_bytes)
        which = "out";
    if (!which)
        return JIT_OK;
    tj_error_set("%s is NULL but the signature needs bytes there", which);
    return JIT_STATUS_BAD_POINTER;
}

/* Byte offset of the block a tuple selects, or -1 when the policy drops
 * it (only zero-fill gets here with a bad tuple: the others were
 * validated first). */
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

/* The copies of tuples (o, j) for o in [o0, o1) and, within them, of
 * flattened tuple numbers [t0, t1). */
static void tj_ref_copy_blocks(const tj_plan *p, const char *src_base, const void *indices,
                               char *dst_base, int64_t t0, int64_t t1)
{
    int64_t o0 = p->items ? t0 / p->items : 0, o1 = p->items ? (t1 + p->items - 1) / p->items : 0;
    for (int64_t o = o0; o < o1 && o < p->outer; o++) {
        int64_t tuple0 = o * p->index_outer_elems;
        int64_t j0 = o == o0 ? t0 - o * p->items : 0;
        int64_t j1 = t1 - o * p->items < p->items ? t1 - o * p->items : p->items;
        for (int64_t j = j0; j < j1; j++) {
            int64_t off = tj_tuple_offset(p, indices, tuple0 + j * p->depth);
            int64_t plain = o * p->plain_outer_bytes + j * p->block_bytes;
            int64_t indexed = o * p->indexed_outer_bytes + off;
            if (p->indexed == TJ_INDEXED_SRC) {
                if (off < 0)
                    memset(dst_base + plain, 0, (size_t)p->block_bytes);
                else
                    memcpy(dst_base + plain, src_base + indexed, (size_t)p->block_bytes);
            } else if (off >= 0) {
                memcpy(dst_base + indexed, src_base + plain, (size_t)p->block_bytes);
            }
        }
    }
}

int tj_ref_run(const tj_plan *p, const void *data, const void *indices, const void *updates,
               void *out)
{
    int rc = tj_check_buffers(p, data, indices, updates, out);
    if (rc != JIT_OK)
        return rc;
    if (p->policy != JIT_INDEX_ZERO_FILL) {
        rc = tj_report_bad_index(p, indices);
        if (rc != JIT_OK)
            return rc;
    }
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
    int gather = p->indexed == TJ_INDEXED_SRC;
    if (p->copy_bytes && out != data) /* scatter: units are outer positions */
        memcpy((char *)out + begin * p->indexed_outer_bytes,
               (const char *)data + begin * p->indexed_outer_bytes,
               (size_t)((end - begin) * p->indexed_outer_bytes));
    if (p->block_bytes == 0 || p->items == 0)
        return JIT_OK;
    int64_t t0 = gather ? begin : begin * p->items, t1 = gather ? end : end * p->items;
    tj_ref_copy_blocks(p, gather ? data : updates, indices, out, t0, t1);
    return JIT_OK;
}
