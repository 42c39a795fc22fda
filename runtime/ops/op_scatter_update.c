/* ScatterUpdate-3 (and tf.compat.v1.scatter_update, its axis-0 case): a
 * level over the positions before the axis (independent: each writes its
 * own part of out), a level over the indices; each index selects a block
 * of out, written with the updates in row-major order (the last duplicate
 * wins). */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

static int tj_scatter_update_check_types(const jit_sig *s)
{
    if (s->opset != 0 && s->opset != 3)
        return tj_error_set("opset=%d must be 3", s->opset);
    if (tj_check_dtype(s->dtype, "data") || tj_check_index_type(s->index_type, "indices") ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    if (tj_check_updates_dtype(s))
        return -1;
    return tj_check_axis_tensor(s);
}

/* Normalizes the axis into [0, r) and checks updates.shape against
 * data.shape[:axis] + indices.shape + data.shape[axis+1:]. */
static int tj_scatter_update_check_shapes(const jit_sig *s, int *axis)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape, *u = &s->updates_shape;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 0) ||
        tj_shape_check(u, "updates", 0))
        return -1;
    int r = d->rank;
    int a = 0;
    if (tj_check_axis(s, &a))
        return -1;
    jit_shape want = {.rank = r - 1 + ix->rank};
    if (want.rank > JIT_MAX_RANK)
        return tj_error_set("rank(updates) would be rank(indices)+rank(data)-1=%d, above the "
                            "maximum rank %d",
                            want.rank, JIT_MAX_RANK);
    int n = 0;
    for (int i = 0; i < a; i++)
        want.dims[n++] = d->dims[i];
    for (int i = 0; i < ix->rank; i++)
        want.dims[n++] = ix->dims[i];
    for (int i = a + 1; i < r; i++)
        want.dims[n++] = d->dims[i];
    char buf[256];
    if (u->rank != want.rank)
        return tj_error_set("rank(updates)=%d must equal rank(indices)+rank(data)-1=%d "
                            "(expected updates shape %s for axis %d)",
                            u->rank, want.rank, tj_shape_format(&want, buf, sizeof buf), a);
    for (int i = 0; i < want.rank; i++)
        if (u->dims[i] != want.dims[i])
            return tj_error_set("updates.shape[%d]=%" PRId64 " must equal %" PRId64
                                " (expected updates shape %s = data.shape[:%d] + indices.shape "
                                "+ data.shape[%d:])",
                                i, u->dims[i], want.dims[i],
                                tj_shape_format(&want, buf, sizeof buf), a, a + 1);
    *axis = a;
    return 0;
}

static int tj_scatter_update_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    int a = 0;
    if (tj_scatter_update_check_types(s) || tj_scatter_update_check_shapes(s, &a))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    tj_plan_init(p, s, TJ_INDEXED_DST, 1);
    int64_t idx_bytes, inner, outer, outer_bytes, dense_outer;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(&s->updates_shape, p->elem_size, "updates", &p->updates_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    p->out_bytes = p->data_bytes;
    p->copy_bytes = p->data_bytes;
    /* partial products are checked: a zero dim elsewhere hides their size */
    if (tj_shape_product(d, 0, a, &outer) || tj_shape_product(d, a + 1, d->rank, &inner) ||
        tj_mul_i64(inner, p->elem_size, &p->block_bytes) ||
        tj_mul_i64(p->block_bytes, d->dims[a], &outer_bytes) ||
        tj_mul_i64(p->block_bytes, p->indices_elems, &dense_outer))
        return tj_error_set("a partial product of the data or updates shape overflows int64");
    tj_plan_level(p, outer, 0, outer_bytes, dense_outer, 1); /* every outer: the same indices */
    tj_plan_level(p, p->indices_elems, 1, 0, p->block_bytes, 0);
    p->depth = 1;
    p->dims[0] = d->dims[a];
    p->strides[0] = p->block_bytes;
    p->tuple_shape = *ix;
    p->first_dim = a;
    tj_rule_copy(d, out); /* the op's shape rule, of a checked rank */
    return 0;
}

static void tj_scatter_update_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512], b3[512];
    snprintf(buf, len,
             "ScatterUpdate-3, axis %" PRId64 ", data %s %s, indices %s %s, updates %s, "
             "index policy %s\noutput shape: %s (the data shape)\n",
             s->axis, jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             tj_shape_format_bounded(&s->updates_shape, s->updates_bound, b3, sizeof b3),
             jit_index_policy_name(s->index_policy), b1);
}

/* The op's shape rule (op.h): data's shape. */
static int tj_scatter_update_rule(const jit_sig *s, jit_shape *out)
{
    return tj_rule_copy(&s->data_shape, out);
}

/* updates.shape == data.shape[:a] + indices.shape + data.shape[a+1:] */
static int tj_scatter_update_tie(jit_sig *s)
{
    int64_t *d = s->data_shape.dims, *ix = s->indices_shape.dims, *u = s->updates_shape.dims;
    int rd = s->data_shape.rank, ri = s->indices_shape.rank, a = (int)s->axis, n = 0;
    if (a < 0 || a >= rd || ri < 0 || s->updates_shape.rank != rd - 1 + ri ||
        s->updates_shape.rank > JIT_MAX_RANK)
        return 0;
    for (int i = 0; i < a; i++)
        n += tj_tie(&u[i], &d[i]);
    for (int j = 0; j < ri; j++)
        n += tj_tie(&u[a + j], &ix[j]);
    for (int i = a + 1; i < rd; i++)
        n += tj_tie(&u[i - 1 + ri], &d[i]);
    return n;
}

const tj_op_def tj_op_scatter_update = {
    .info = {.op = JIT_OP_SCATTER_UPDATE, .name = "ScatterUpdate",
             .command = "scatter-update", .attrs = JIT_ATTR_AXIS | JIT_ATTR_AXIS_TENSOR | JIT_ATTR_UPDATES,
             .has_updates = 1, .opsets = {3}, .default_opset = 3,
             .index_types = TJ_INDEX_TYPES_ALL},
    .plan = tj_scatter_update_plan,
    .describe = tj_scatter_update_describe,
    .tie = tj_scatter_update_tie,
    .shape_rule = tj_scatter_update_rule,
};

static jit_sig tj_scatter_update_sig_of(const jit_scatter_update_sig *t)
{
    return (jit_sig){.op = JIT_OP_SCATTER_UPDATE, .axis = t->axis, .dtype = t->dtype,
                     .updates_dtype = t->updates_dtype, .index_type = t->index_type,
                     .axis_type = t->axis_type, .axis_shape = t->axis_shape,
                     .index_policy = t->index_policy, .engine = t->engine,
                     .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape, .updates_shape = t->updates_shape};
}

TJ_TYPED_API(scatter_update, "ScatterUpdate", jit_scatter_update_sig, jit_scatter_update_fn,
             tj_scatter_update_sig_of)
TJ_TYPED_KERNEL_API(scatter_update, JIT_OP_SCATTER_UPDATE, jit_scatter_update_fn)
TJ_TYPED_RANGE_SCATTER(scatter_update, JIT_OP_SCATTER_UPDATE, jit_scatter_update_fn)
