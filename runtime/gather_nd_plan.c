/* GatherND (opset 5 and 8, tf.gather_nd, ONNX) translated to the plan. */
#include <inttypes.h>

#include "error.h"
#include "plan.h"
#include "shape.h"

static int tj_gather_check_attrs(const jit_gather_nd_sig *s, int *opset)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    *opset = s->opset ? s->opset : 8;
    if (*opset != 5 && *opset != 8)
        return tj_error_set("opset=%d must be 5 or 8", s->opset);
    if (tj_check_dtype(s->dtype, "data") || tj_check_index_type(s->index_type, "indices") ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 1))
        return -1;
    int b = s->batch_dims;
    if (b < 0)
        return tj_error_set("batch_dims=%d must not be negative", b);
    if (b >= ix->rank)
        return tj_error_set("batch_dims=%d must be less than rank(indices)=%d", b, ix->rank);
    if (b >= d->rank)
        return tj_error_set("batch_dims=%d must be less than rank(data)=%d", b, d->rank);
    for (int i = 0; i < b; i++)
        if (d->dims[i] != ix->dims[i])
            return tj_error_set("data.shape[%d]=%" PRId64 " must equal indices.shape[%d]=%" PRId64
                                " (batch dimension %d of batch_dims=%d)",
                                i, d->dims[i], i, ix->dims[i], i, b);
    int64_t k = ix->dims[ix->rank - 1];
    if (k > d->rank - b)
        return tj_error_set("indices.shape[-1]=%" PRId64 " plus batch_dims=%d must not exceed "
                            "rank(data)=%d",
                            k, b, d->rank);
    return 0;
}

static int tj_gather_output_shape(const jit_gather_nd_sig *s, int opset, jit_shape *out)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int b = s->batch_dims, k = (int)ix->dims[ix->rank - 1];
    int lead = ix->rank - 1, tail = d->rank - b - k;
    int first = 0;
    if (opset == 5 && b > 1)
        lead -= b - 1; /* the batch dims are multiplied into one */
    if (lead + tail > JIT_MAX_RANK)
        return tj_error_set("output rank %d (rank(indices)-1 plus rank(data)-batch_dims-%d) "
                            "exceeds the maximum rank %d",
                            lead + tail, k, JIT_MAX_RANK);
    out->rank = lead + tail;
    if (opset == 5 && b > 1) {
        if (tj_shape_product(ix, 0, b, &out->dims[0]) != 0)
            return tj_error_set("output batch dimension overflows int64");
        first = 1;
        for (int i = b; i < ix->rank - 1; i++)
            out->dims[first++] = ix->dims[i];
    } else {
        for (int i = 0; i < ix->rank - 1; i++)
            out->dims[first++] = ix->dims[i];
    }
    for (int i = b + k; i < d->rank; i++)
        out->dims[first++] = d->dims[i];
    return 0;
}

static int tj_gather_sizes(const jit_gather_nd_sig *s, const jit_shape *out, tj_plan *p)
{
    int64_t idx_bytes;
    if (tj_shape_bytes(&s->data_shape, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(&s->indices_shape, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(out, p->elem_size, "output", &p->out_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    return 0;
}

int tj_gather_nd_plan(const jit_gather_nd_sig *s, tj_plan *p, jit_shape *out_shape)
{
    int opset;
    jit_shape out;
    if (tj_gather_check_attrs(s, &opset) || tj_gather_output_shape(s, opset, &out))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int b = s->batch_dims, k = (int)ix->dims[ix->rank - 1];

    *p = (tj_plan){0};
    p->op = TJ_OP_GATHER_ND;
    p->indexed = TJ_INDEXED_SRC;
    p->dtype = s->dtype;
    p->index_type = s->index_type;
    p->policy = s->index_policy;
    p->elem_size = jit_dtype_size(s->dtype);
    p->index_size = jit_dtype_size(s->index_type);
    if (tj_gather_sizes(s, &out, p))
        return -1;
    /* A zero-sized dim makes the totals 0 while a partial product may
     * still overflow, so every partial product is checked too. */
    int64_t slice_elems, stride;
    if (tj_shape_product(d, 0, b, &p->outer) || tj_shape_product(ix, b, ix->rank - 1, &p->items) ||
        tj_shape_product(d, b + k, d->rank, &slice_elems) ||
        tj_mul_i64(slice_elems, p->elem_size, &p->block_bytes))
        return tj_error_set("a partial product of the data or indices shape overflows int64");
    p->depth = k;
    stride = p->block_bytes;
    for (int i = k - 1; i >= 0; i--) {
        p->dims[i] = d->dims[b + i];
        p->strides[i] = stride;
        if (tj_mul_i64(stride, p->dims[i], &stride))
            return tj_error_set("a batch of data has more bytes than int64 holds");
    }
    p->indexed_outer_bytes = stride; /* bytes of one batch of data */
    if (tj_mul_i64(p->items, k, &p->index_outer_elems) ||
        tj_mul_i64(p->items, p->block_bytes, &p->plain_outer_bytes))
        return tj_error_set("a batch of the output has more bytes than int64 holds");
    p->tuple_shape.rank = ix->rank - 1;
    for (int i = 0; i < ix->rank - 1; i++)
        p->tuple_shape.dims[i] = ix->dims[i];
    p->first_dim = b;
    /* empty slices (a zero data dim) leave this product unbounded */
    if (tj_mul_i64(p->outer, p->items, &p->units))
        return tj_error_set("the number of index tuples overflows int64");
    if (tj_check_threads(s->threads, &p->threads))
        return -1;
    if (out_shape)
        *out_shape = out;
    return 0;
}
