/* GatherND (OpenVINO GatherND-5 and -8, tf.gather_nd, ONNX GatherND): a
 * level over the batch, a level over the tuples of a batch; each tuple of
 * k indices selects a slice of data. */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

static int tj_gather_nd_check(const jit_sig *s)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int opset = s->opset ? s->opset : 8;
    if (opset != 5 && opset != 8)
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

/* The output's rank, rank(indices) - 1 + rank(data) - b - k, with the
 * batch dims one dim at opset 5 (b > 1); -1 where it has no value: a
 * dynamic tuple length k, or one breaking a rule. */
static int tj_gather_nd_rank(const jit_sig *s, int *lead, int *tail)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int b = s->batch_dims, opset = s->opset ? s->opset : 8;
    if (ix->rank < 1 || ix->rank > JIT_MAX_RANK || d->rank > JIT_MAX_RANK || b < 0 ||
        b >= ix->rank)
        return -1;
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 0 || k > d->rank - b)
        return -1;
    *lead = ix->rank - 1 - (opset == 5 && b > 1 ? b - 1 : 0);
    *tail = d->rank - b - (int)k;
    return 0;
}

/* opset 8: indices.shape[:-1] + data.shape[b+k:]; opset 5 multiplies the
 * batch dims into one. The op's shape rule (op.h): the rank follows the
 * tuple length, so a family whose tuple length is dynamic has none. */
static int tj_gather_nd_rule(const jit_sig *s, jit_shape *out)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int lead, tail, b = s->batch_dims, from = 0;
    if (tj_gather_nd_rank(s, &lead, &tail) || lead + tail > JIT_MAX_RANK)
        return -1;
    out->rank = 0;
    if (lead < ix->rank - 1) { /* opset 5's one batch dim */
        out->dims[out->rank++] = tj_rule_product(ix->dims, 0, b);
        from = b;
    }
    for (int i = from; i < ix->rank - 1; i++)
        out->dims[out->rank++] = tj_rule_dim(ix->dims[i]);
    for (int i = d->rank - tail; i < d->rank; i++)
        out->dims[out->rank++] = tj_rule_dim(d->dims[i]);
    return 0;
}

/* The rule's shape of a checked signature, or the message of what
 * breaks it. */
static int tj_gather_nd_shape(const jit_sig *s, jit_shape *out)
{
    const jit_shape *ix = &s->indices_shape;
    int lead, tail, b = s->batch_dims;
    int64_t batch;
    if (tj_gather_nd_rank(s, &lead, &tail)) /* the checks leave it one */
        return tj_error_set("GatherND: these shapes give the output no rank");
    if (lead + tail > JIT_MAX_RANK)
        return tj_error_set("output rank %d (rank(indices)-1 plus rank(data)-batch_dims-%d) "
                            "exceeds the maximum rank %d",
                            lead + tail, (int)ix->dims[ix->rank - 1], JIT_MAX_RANK);
    if (lead < ix->rank - 1 && tj_shape_product(ix, 0, b, &batch) != 0)
        return tj_error_set("output batch dimension overflows int64");
    return tj_gather_nd_rule(s, out);
}

static int tj_gather_nd_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    if (tj_gather_nd_check(s) || tj_gather_nd_shape(s, out))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int b = s->batch_dims, k = (int)ix->dims[ix->rank - 1];
    tj_plan_init(p, s, TJ_INDEXED_SRC, 0);
    int64_t idx_bytes, outer, items, slice_elems, batch_bytes, index_batch, dense_batch;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(out, p->elem_size, "output", &p->out_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    /* A zero-sized dim makes the totals 0 while a partial product may
     * still overflow, so every partial product is checked too. */
    if (tj_shape_product(d, 0, b, &outer) || tj_shape_product(ix, b, ix->rank - 1, &items) ||
        tj_shape_product(d, b + k, d->rank, &slice_elems) ||
        tj_mul_i64(slice_elems, p->elem_size, &p->block_bytes))
        return tj_error_set("a partial product of the data or indices shape overflows int64");
    p->depth = k;
    batch_bytes = p->block_bytes;
    for (int i = k - 1; i >= 0; i--) {
        p->dims[i] = d->dims[b + i];
        p->strides[i] = batch_bytes;
        if (tj_mul_i64(batch_bytes, p->dims[i], &batch_bytes))
            return tj_error_set("a batch of data has more bytes than int64 holds");
    }
    if (tj_mul_i64(items, k, &index_batch) || tj_mul_i64(items, p->block_bytes, &dense_batch))
        return tj_error_set("a batch of the output has more bytes than int64 holds");
    tj_plan_level(p, outer, index_batch, batch_bytes, dense_batch, 1);
    tj_plan_level(p, items, k, 0, p->block_bytes, 1);
    p->tuple_shape.rank = ix->rank - 1;
    for (int i = 0; i < ix->rank - 1; i++)
        p->tuple_shape.dims[i] = ix->dims[i];
    p->tuple_form = 1;
    p->first_dim = b;
    return 0;
}

extern const tj_op_def tj_op_gather_nd;

static void tj_gather_nd_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512], o5[512] = "?", o8[512] = "?";
    jit_shape out;
    jit_sig v = *s; /* through tj_sig_output_shape: a dynamic signature's too */
    v.opset = 5;
    if (tj_sig_output_shape(&tj_op_gather_nd, &v, &out) == 0)
        tj_shape_format(&out, o5, sizeof o5);
    v.opset = 8;
    if (tj_sig_output_shape(&tj_op_gather_nd, &v, &out) == 0)
        tj_shape_format(&out, o8, sizeof o8);
    snprintf(buf, len,
             "GatherND-%d, batch_dims %d, data %s %s, indices %s %s, index policy %s\n"
             "output shape: %s (opset 8), %s (opset 5)\n",
             s->opset ? s->opset : 8, s->batch_dims, jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             jit_index_policy_name(s->index_policy), o8, o5);
}

/* data.shape[:b] == indices.shape[:b] */
static int tj_gather_nd_tie(jit_sig *s)
{
    int n = 0;
    for (int i = 0; i < s->batch_dims && i < s->data_shape.rank && i < s->indices_shape.rank; i++)
        n += tj_tie(&s->data_shape.dims[i], &s->indices_shape.dims[i]);
    return n;
}

const tj_op_def tj_op_gather_nd = {
    .info = {.op = JIT_OP_GATHER_ND, .name = "GatherND", .command = "gather-nd",
             .attrs = JIT_ATTR_BATCH_DIMS, .opsets = {5, 8}, .default_opset = 8,
             .index_types = TJ_INDEX_TYPES_ALL},
    .plan = tj_gather_nd_plan,
    .describe = tj_gather_nd_describe,
    .tie = tj_gather_nd_tie,
    .shape_rule = tj_gather_nd_rule,
};

static jit_sig tj_gather_nd_sig_of(const jit_gather_nd_sig *t)
{
    return (jit_sig){.op = JIT_OP_GATHER_ND, .opset = t->opset, .batch_dims = t->batch_dims,
                     .dtype = t->dtype, .index_type = t->index_type,
                     .index_policy = t->index_policy, .engine = t->engine,
                     .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape};
}

TJ_TYPED_API(gather_nd, "GatherND", jit_gather_nd_sig, jit_gather_nd_fn, tj_gather_nd_sig_of)
TJ_TYPED_KERNEL_API(gather_nd, JIT_OP_GATHER_ND, jit_gather_nd_fn)
TJ_TYPED_RANGE_GATHER(gather_nd, JIT_OP_GATHER_ND, jit_gather_nd_fn)
