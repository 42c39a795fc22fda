/* ScatterNDUpdate-3 and -15 (ONNX ScatterND, tf.tensor_scatter_nd_*): one
 * level over the tuples of indices, each of k indices selecting a block of
 * out, written (or, -15, reduced) in row-major order of the tuples (the
 * last duplicate wins). Tuples may collide, so the level is not a unit
 * level; threads split the rows of out instead (plan.h, row_units). */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

/* Where the updates' shape would be a scalar (one k = rank(data) tuple),
 * OpenVINO's spec lets it be "a tensor with single element", and its own
 * 1x1 test passes shape [1] (tests/cases/scatter_nd_update.json). */
static int tj_scatter_nd_update_one_element(const jit_shape *u, int k)
{
    int64_t n = 0;
    char buf[256];
    if (tj_shape_product(u, 0, u->rank, &n) == 0 && n == 1)
        return 0;
    return tj_error_set("updates of shape %s must be a scalar or hold a single element "
                        "(expected updates shape [] = indices.shape[:-1] + data.shape[%d:])",
                        tj_shape_format(u, buf, sizeof buf), k);
}

static int tj_scatter_nd_update_check(const jit_sig *s)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape, *u = &s->updates_shape;
    int opset = s->opset ? s->opset : 15;
    if (opset != 3 && opset != 15)
        return tj_error_set("opset=%d must be 3 or 15", s->opset);
    if (tj_check_dtype(s->dtype, "data") ||
        tj_check_index_type_of(s->index_type, TJ_INDEX_TYPES_I32_I64, "ScatterNDUpdate") ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    if (tj_check_updates_dtype(s))
        return -1;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 1) ||
        tj_shape_check(u, "updates", 0))
        return -1;
    int64_t k = ix->dims[ix->rank - 1];
    if (k > d->rank)
        return tj_error_set("indices.shape[-1]=%" PRId64 " must not exceed rank(data)=%d", k,
                            d->rank);
    jit_shape want = {.rank = ix->rank - 1 + d->rank - (int)k};
    if (want.rank > JIT_MAX_RANK)
        return tj_error_set("rank(updates) would be %d, above the maximum rank %d", want.rank,
                            JIT_MAX_RANK);
    int n = 0;
    for (int i = 0; i < ix->rank - 1; i++)
        want.dims[n++] = ix->dims[i];
    for (int i = (int)k; i < d->rank; i++)
        want.dims[n++] = d->dims[i];
    char buf[256];
    if (want.rank == 0 && u->rank > 0)
        return tj_scatter_nd_update_one_element(u, (int)k);
    if (u->rank != want.rank)
        return tj_error_set("rank(updates)=%d must equal rank(indices)-1+rank(data)-%" PRId64
                            "=%d (expected updates shape %s)",
                            u->rank, k, want.rank, tj_shape_format(&want, buf, sizeof buf));
    for (int i = 0; i < want.rank; i++)
        if (u->dims[i] != want.dims[i])
            return tj_error_set("updates.shape[%d]=%" PRId64 " must equal %" PRId64
                                " (expected updates shape %s = indices.shape[:-1] + "
                                "data.shape[%" PRId64 ":])",
                                i, u->dims[i], want.dims[i],
                                tj_shape_format(&want, buf, sizeof buf), k);
    return 0;
}

#define TJ_ND_REDUCTIONS                                                                      \
    (TJ_REDUCTION_BIT(JIT_REDUCTION_NONE) | TJ_REDUCTION_BIT(JIT_REDUCTION_SUM) |               \
     TJ_REDUCTION_BIT(JIT_REDUCTION_SUB) | TJ_REDUCTION_BIT(JIT_REDUCTION_PROD) |               \
     TJ_REDUCTION_BIT(JIT_REDUCTION_MIN) | TJ_REDUCTION_BIT(JIT_REDUCTION_MAX))

static int tj_scatter_nd_update_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    if (tj_scatter_nd_update_check(s))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    int k = (int)ix->dims[ix->rank - 1], opset = s->opset ? s->opset : 15;
    tj_rule_copy(d, out); /* the op's shape rule, of a checked rank */
    tj_plan_init(p, s, TJ_INDEXED_DST, 1);
    if (tj_plan_reduction(p, s,
                          opset == 15 ? TJ_ND_REDUCTIONS : TJ_REDUCTION_BIT(JIT_REDUCTION_NONE),
                          "ScatterNDUpdate", opset))
        return -1;
    int64_t idx_bytes, tuples, slice_elems, stride;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(&s->updates_shape, p->elem_size, "updates", &p->updates_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    p->out_bytes = p->data_bytes;
    p->copy_bytes = p->data_bytes;
    if (tj_shape_product(ix, 0, ix->rank - 1, &tuples) ||
        tj_shape_product(d, k, d->rank, &slice_elems) ||
        tj_mul_i64(slice_elems, p->elem_size, &p->block_bytes))
        return tj_error_set("a partial product of the data or indices shape overflows int64");
    stride = p->block_bytes;
    for (int i = k - 1; i >= 0; i--) {
        p->dims[i] = d->dims[i];
        p->strides[i] = stride;
        if (tj_mul_i64(stride, d->dims[i], &stride))
            return tj_error_set("data has more bytes than int64 holds");
    }
    p->depth = k;
    tj_plan_level(p, tuples, k, 0, p->block_bytes, 0);
    p->tuple_shape.rank = ix->rank - 1;
    for (int i = 0; i < ix->rank - 1; i++)
        p->tuple_shape.dims[i] = ix->dims[i];
    p->tuple_form = 1;
    return 0;
}

static void tj_scatter_nd_update_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512], b3[512];
    snprintf(buf, len,
             "ScatterNDUpdate-%d, reduction %s, data %s %s, indices %s %s, updates %s, index "
             "policy %s\noutput shape: %s (the data shape)\n",
             s->opset ? s->opset : 15, jit_reduction_name(s->reduction), jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             tj_shape_format_bounded(&s->updates_shape, s->updates_bound, b3, sizeof b3),
             jit_index_policy_name(s->index_policy), b1);
}

/* The op's shape rule (op.h): data's shape. */
static int tj_scatter_nd_update_rule(const jit_sig *s, jit_shape *out)
{
    return tj_rule_copy(&s->data_shape, out);
}

/* k = indices.shape[-1] fixed by the ranks (rank(updates) = rank(indices)
 * - 1 + rank(data) - k); updates.shape == indices.shape[:-1] +
 * data.shape[k:] */
static int tj_scatter_nd_update_tie(jit_sig *s)
{
    int64_t *d = s->data_shape.dims, *ix = s->indices_shape.dims, *u = s->updates_shape.dims;
    int rd = s->data_shape.rank, ri = s->indices_shape.rank, ru = s->updates_shape.rank, n = 0;
    if (ri < 1 || ri > JIT_MAX_RANK || rd < 0 || rd > JIT_MAX_RANK || ru < 0)
        return 0;
    int64_t k = rd - (ru - (ri - 1));
    if (ix[ri - 1] < 0 && k >= 0 && k <= rd) { /* a dynamic tuple length */
        ix[ri - 1] = k;
        n++;
    }
    if (ix[ri - 1] != k || k < 0 || k > rd) /* the ranks' k only: any other breaks a rule */
        return n;
    for (int j = 0; j < ri - 1; j++)
        n += tj_tie(&u[j], &ix[j]);
    for (int i = (int)k; i < rd; i++)
        n += tj_tie(&u[ri - 1 + i - k], &d[i]);
    return n;
}

const tj_op_def tj_op_scatter_nd_update = {
    .info = {.op = JIT_OP_SCATTER_ND_UPDATE, .name = "ScatterNDUpdate",
             .command = "scatter-nd-update", .attrs = JIT_ATTR_UPDATES | JIT_ATTR_REDUCTION,
             .has_updates = 1, .opsets = {3, 15}, .default_opset = 15,
             .index_types = TJ_INDEX_TYPES_I32_I64, .reductions = TJ_ND_REDUCTIONS},
    .plan = tj_scatter_nd_update_plan,
    .describe = tj_scatter_nd_update_describe,
    .tie = tj_scatter_nd_update_tie,
    .shape_rule = tj_scatter_nd_update_rule,
};

static jit_sig tj_scatter_nd_update_sig_of(const jit_scatter_nd_update_sig *t)
{
    return (jit_sig){.op = JIT_OP_SCATTER_ND_UPDATE, .opset = t->opset, .dtype = t->dtype,
                     .updates_dtype = t->updates_dtype, .index_type = t->index_type,
                     .index_policy = t->index_policy, .engine = t->engine,
                     .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape, .updates_shape = t->updates_shape,
                     .reduction = t->reduction};
}

TJ_TYPED_API(scatter_nd_update, "ScatterNDUpdate", jit_scatter_nd_update_sig,
             jit_scatter_nd_update_fn, tj_scatter_nd_update_sig_of)
TJ_TYPED_KERNEL_API(scatter_nd_update, JIT_OP_SCATTER_ND_UPDATE, jit_scatter_nd_update_fn)
TJ_TYPED_RANGE_SCATTER(scatter_nd_update, JIT_OP_SCATTER_ND_UPDATE, jit_scatter_nd_update_fn)
