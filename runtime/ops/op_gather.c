/* Gather (OpenVINO Gather-1/-7/-8, ONNX Gather, tf.gather, numpy take):
 * levels over the batch, over the data positions between the batch dims
 * and the axis, and over the indices of a batch; each index selects the
 * slice of data behind the axis. */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

/* The checks, and axis and batch_dims brought into [0, r) and [0, q]. */
static int tj_gather_check(const jit_sig *s, int *axis, int *batch)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int opset = s->opset ? s->opset : 8;
    if (opset != 1 && opset != 7 && opset != 8)
        return tj_error_set("opset=%d must be 1, 7 or 8", s->opset);
    if (tj_check_dtype(s->dtype, "data") || tj_check_index_type(s->index_type, "indices") ||
        tj_check_policy_engine(s->index_policy, s->engine) || tj_check_axis_tensor(s))
        return -1;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 0))
        return -1;
    int r = d->rank, q = ix->rank;
    int a = 0, b = s->batch_dims;
    if (tj_check_axis(s, &a))
        return -1;
    if (opset == 1 && b != 0)
        return tj_error_set("batch_dims=%d: Gather-1 has no batch_dims (use opset 7 or 8)", b);
    if (b < -q || b > q)
        return tj_error_set("batch_dims=%d must be in [-rank(indices), rank(indices)] = [%d, %d]",
                            b, -q, q);
    if (b < 0)
        b += q;
    if (b > a)
        return tj_error_set("batch_dims=%d must not exceed axis=%d (both counted from the "
                            "front)", b, a);
    for (int i = 0; i < b; i++)
        if (d->dims[i] != ix->dims[i])
            return tj_error_set("data.shape[%d]=%" PRId64 " must equal indices.shape[%d]=%" PRId64
                                " (batch dimension %d of batch_dims=%d)",
                                i, d->dims[i], i, ix->dims[i], i, b);
    if (r - 1 + q - b > JIT_MAX_RANK)
        return tj_error_set("output rank %d (rank(data)-1 plus rank(indices)-batch_dims) exceeds "
                            "the maximum rank %d", r - 1 + q - b, JIT_MAX_RANK);
    *axis = a;
    *batch = b;
    return 0;
}

/* data.shape[:axis] + indices.shape[b:] + data.shape[axis+1:] (dynamic
 * dims JIT_DIM_DYNAMIC, for the shape rule) */
static void tj_gather_shape(const jit_shape *d, const jit_shape *ix, int a, int b, jit_shape *out)
{
    out->rank = 0;
    for (int i = 0; i < a; i++)
        out->dims[out->rank++] = tj_rule_dim(d->dims[i]);
    for (int i = b; i < ix->rank; i++)
        out->dims[out->rank++] = tj_rule_dim(ix->dims[i]);
    for (int i = a + 1; i < d->rank; i++)
        out->dims[out->rank++] = tj_rule_dim(d->dims[i]);
}

/* The op's shape rule (op.h): the ranks and attributes fix the rank. */
static int tj_gather_rule(const jit_sig *s, jit_shape *out)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int r = d->rank, q = ix->rank;
    if (r < 1 || r > JIT_MAX_RANK || q < 0 || q > JIT_MAX_RANK || s->axis < -r || s->axis >= r)
        return -1;
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
    int b = s->batch_dims < 0 ? s->batch_dims + q : s->batch_dims;
    if (b < 0 || b > q || r - 1 + q - b > JIT_MAX_RANK)
        return -1;
    tj_gather_shape(d, ix, a, b, out);
    return 0;
}

static int tj_gather_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    int a = 0, b = 0;
    if (tj_gather_check(s, &a, &b))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    tj_gather_shape(d, ix, a, b, out);
    tj_plan_init(p, s, TJ_INDEXED_SRC, 0);
    int64_t idx_bytes, batches, pre, per_batch, rest, batch_bytes, slab, pre_dense, batch_dense;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(out, p->elem_size, "output", &p->out_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    /* partial products are checked: a zero dim elsewhere hides their size */
    if (tj_shape_product(d, 0, b, &batches) || tj_shape_product(d, b, a, &pre) ||
        tj_shape_product(ix, b, ix->rank, &per_batch) ||
        tj_shape_product(d, a + 1, d->rank, &rest) ||
        tj_mul_i64(rest, p->elem_size, &p->block_bytes) ||
        tj_mul_i64(p->block_bytes, d->dims[a], &slab) || tj_mul_i64(slab, pre, &batch_bytes) ||
        tj_mul_i64(per_batch, p->block_bytes, &pre_dense) ||
        tj_mul_i64(pre_dense, pre, &batch_dense))
        return tj_error_set("a partial product of the data or indices shape overflows int64");
    tj_plan_level(p, batches, per_batch, batch_bytes, batch_dense, 1);
    tj_plan_level(p, pre, 0, slab, pre_dense, 1); /* the same indices for each */
    tj_plan_level(p, per_batch, 1, 0, p->block_bytes, 1);
    p->depth = 1;
    p->dims[0] = d->dims[a];
    p->strides[0] = p->block_bytes;
    p->tuple_shape = *ix;
    p->first_dim = a;
    return 0;
}

extern const tj_op_def tj_op_gather;

static void tj_gather_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512], b3[512] = "?";
    jit_shape out;
    if (tj_sig_output_shape(&tj_op_gather, s, &out) == 0) /* a dynamic signature's too */
        tj_shape_format(&out, b3, sizeof b3);
    snprintf(buf, len,
             "Gather-%d, axis %" PRId64 ", batch_dims %d, data %s %s, indices %s %s, index "
             "policy %s\noutput shape: %s\n",
             s->opset ? s->opset : 8, s->axis, s->batch_dims, jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             jit_index_policy_name(s->index_policy), b3);
}

/* batch_dims counted from the end means its positive spelling (Gather-7
 * and -8). Gather-1 takes none: there it stays as written, refused unless
 * 0, so that no spelling shares the key of a valid one. */
static void tj_gather_normalize(jit_sig *s)
{
    int q = s->indices_shape.rank;
    if (s->opset != 1 && s->batch_dims < 0 && s->batch_dims >= -q)
        s->batch_dims += q;
}

/* data.shape[:b] == indices.shape[:b] (b normalized) */
static int tj_gather_tie(jit_sig *s)
{
    int n = 0;
    for (int i = 0; i < s->batch_dims && i < s->data_shape.rank && i < s->indices_shape.rank; i++)
        n += tj_tie(&s->data_shape.dims[i], &s->indices_shape.dims[i]);
    return n;
}

const tj_op_def tj_op_gather = {
    .info = {.op = JIT_OP_GATHER, .name = "Gather", .command = "gather",
             .attrs = JIT_ATTR_AXIS | JIT_ATTR_AXIS_TENSOR | JIT_ATTR_BATCH_DIMS,
             .opsets = {1, 7, 8}, .default_opset = 8, .index_types = TJ_INDEX_TYPES_ALL},
    .plan = tj_gather_plan,
    .normalize = tj_gather_normalize,
    .describe = tj_gather_describe,
    .tie = tj_gather_tie,
    .shape_rule = tj_gather_rule,
};

static jit_sig tj_gather_sig_of(const jit_gather_sig *t)
{
    return (jit_sig){.op = JIT_OP_GATHER, .opset = t->opset, .axis = t->axis,
                     .batch_dims = t->batch_dims, .dtype = t->dtype, .index_type = t->index_type,
                     .index_policy = t->index_policy, .engine = t->engine,
                     .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape};
}

TJ_TYPED_API(gather, "Gather", jit_gather_sig, jit_gather_fn, tj_gather_sig_of)
TJ_TYPED_KERNEL_API(gather, JIT_OP_GATHER, jit_gather_fn)
TJ_TYPED_RANGE_GATHER(gather, JIT_OP_GATHER, jit_gather_fn)
