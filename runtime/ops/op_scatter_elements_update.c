/* ScatterElementsUpdate-3 and -12 (ONNX ScatterElements, torch.scatter
 * and scatter_reduce): a level per dimension of indices, each index
 * selecting one element of out along the axis, at its own coordinates
 * elsewhere, written or (-12) reduced in row-major order of indices. The
 * levels before the axis are unit levels: two of their iterations never
 * write the same element, so threads may split them (by destination rows:
 * each row sees its updates in order). Updates have indices' shape, or
 * with torch_dims any no smaller (torch.scatter's src): the dense side
 * then walks updates at their own strides. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

#define TJ_SEU_REDUCTIONS                                                                     \
    (TJ_REDUCTION_BIT(JIT_REDUCTION_NONE) | TJ_REDUCTION_BIT(JIT_REDUCTION_SUM) |               \
     TJ_REDUCTION_BIT(JIT_REDUCTION_PROD) | TJ_REDUCTION_BIT(JIT_REDUCTION_MIN) |               \
     TJ_REDUCTION_BIT(JIT_REDUCTION_MAX) | TJ_REDUCTION_BIT(JIT_REDUCTION_MEAN))

/* ONNX's and OpenVINO's rule: one update per index. */
static int tj_seu_check_updates(const jit_shape *u, const jit_shape *ix)
{
    char b1[256], b2[256];
    if (u->rank != ix->rank ||
        memcmp(u->dims, ix->dims, sizeof(int64_t) * (size_t)ix->rank) != 0)
        return tj_error_set("updates shape %s must equal indices shape %s",
                            tj_shape_format(u, b1, sizeof b1), tj_shape_format(ix, b2, sizeof b2));
    return 0;
}

/* torch.scatter's: updates of indices' rank and at least their dims; the
 * update at each index's coordinates is read, the rest never. */
static int tj_seu_check_torch_updates(const jit_shape *u, const jit_shape *ix)
{
    if (u->rank != ix->rank)
        return tj_error_set("rank(updates)=%d must equal rank(indices)=%d", u->rank, ix->rank);
    for (int i = 0; i < ix->rank; i++)
        if (u->dims[i] < ix->dims[i])
            return tj_error_set("updates.shape[%d]=%" PRId64 " must not be smaller than "
                                "indices.shape[%d]=%" PRId64 " (torch_dims: an update is read "
                                "at each index's position)",
                                i, u->dims[i], i, ix->dims[i]);
    return 0;
}

static int tj_seu_check_shapes(const jit_sig *s, int *axis)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape, *u = &s->updates_shape;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 1) ||
        tj_shape_check(u, "updates", 1))
        return -1;
    int r = d->rank;
    if (ix->rank != r)
        return tj_error_set("rank(indices)=%d must equal rank(data)=%d", ix->rank, r);
    if (s->torch_dims ? tj_seu_check_torch_updates(u, ix) : tj_seu_check_updates(u, ix))
        return -1;
    int a = 0;
    if (tj_check_axis(s, &a))
        return -1;
    for (int i = 0; i < r; i++)
        if (i != a && ix->dims[i] > d->dims[i])
            return tj_error_set("indices.shape[%d]=%" PRId64 " must not exceed data.shape[%d]=%" PRId64
                                " (every dimension but axis %d)",
                                i, ix->dims[i], i, d->dims[i], a);
    *axis = a;
    return 0;
}

static int tj_seu_check(const jit_sig *s, int *axis)
{
    int opset = s->opset ? s->opset : 12;
    if (opset != 3 && opset != 12)
        return tj_error_set("opset=%d must be 3 or 12", s->opset);
    if (tj_check_dtype(s->dtype, "data") || tj_check_index_type(s->index_type, "indices") ||
        tj_check_policy_engine(s->index_policy, s->engine) || tj_check_axis_tensor(s))
        return -1;
    if (tj_check_updates_dtype(s))
        return -1;
    return tj_seu_check_shapes(s, axis);
}

static int tj_seu_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    int a = 0, opset = s->opset ? s->opset : 12;
    if (tj_seu_check(s, &a))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    tj_rule_copy(d, out); /* the op's shape rule, of a checked rank */
    tj_plan_init(p, s, TJ_INDEXED_DST, 1);
    if (tj_plan_reduction(p, s,
                          opset == 12 ? TJ_SEU_REDUCTIONS : TJ_REDUCTION_BIT(JIT_REDUCTION_NONE),
                          "ScatterElementsUpdate", opset))
        return -1;
    int64_t idx_bytes;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(&s->updates_shape, p->elem_size, "updates", &p->updates_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    p->out_bytes = p->copy_bytes = p->data_bytes;
    return tj_plan_element_levels(p, d, ix, &s->updates_shape, a);
}

static void tj_seu_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512], b3[512], upd[600] = "";
    if (s->torch_dims)
        snprintf(upd, sizeof upd, "updates %s %s, ",
                 jit_dtype_name(s->updates_dtype ? s->updates_dtype : s->dtype),
                 tj_shape_format_bounded(&s->updates_shape, s->updates_bound, b3, sizeof b3));
    snprintf(buf, len,
             "ScatterElementsUpdate-%d, axis %" PRId64 ", reduction %s%s%s, data %s %s, indices "
             "%s %s, %sindex policy %s\noutput shape: %s (the data shape)\n",
             s->opset ? s->opset : 12, s->axis, jit_reduction_name(s->reduction),
             s->no_init_val && s->reduction ? " (use_init_val false)" : "",
             s->torch_dims ? ", torch_dims (updates may be larger than indices)" : "",
             jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             upd, jit_index_policy_name(s->index_policy), b1);
}

/* The op's shape rule (op.h): data's shape. */
static int tj_seu_rule(const jit_sig *s, jit_shape *out)
{
    return tj_rule_copy(&s->data_shape, out);
}

/* updates.shape == indices.shape (indices' dims only bounded by data's);
 * torch_dims bounds updates' by indices' instead, which is no tie */
static int tj_seu_tie(jit_sig *s)
{
    int n = 0;
    for (int i = 0; i < s->indices_shape.rank && i < s->updates_shape.rank && !s->torch_dims;
         i++)
        n += tj_tie(&s->indices_shape.dims[i], &s->updates_shape.dims[i]);
    return n;
}

const tj_op_def tj_op_scatter_elements_update = {
    .info = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .name = "ScatterElementsUpdate",
             .command = "scatter-elements-update",
             .attrs = JIT_ATTR_AXIS | JIT_ATTR_AXIS_TENSOR | JIT_ATTR_UPDATES |
                      JIT_ATTR_REDUCTION | JIT_ATTR_INIT_VAL | JIT_ATTR_TORCH_DIMS,
             .has_updates = 1, .opsets = {3, 12}, .default_opset = 12,
             .index_types = TJ_INDEX_TYPES_ALL, .reductions = TJ_SEU_REDUCTIONS},
    .plan = tj_seu_plan,
    .describe = tj_seu_describe,
    .tie = tj_seu_tie,
    .shape_rule = tj_seu_rule,
};

static jit_sig tj_seu_sig_of(const jit_scatter_elements_update_sig *t)
{
    return (jit_sig){.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .opset = t->opset, .axis = t->axis,
                     .dtype = t->dtype, .updates_dtype = t->updates_dtype,
                     .index_type = t->index_type, .axis_type = t->axis_type,
                     .axis_shape = t->axis_shape, .index_policy = t->index_policy,
                     .engine = t->engine, .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape, .updates_shape = t->updates_shape,
                     .reduction = t->reduction, .no_init_val = t->no_init_val,
                     .torch_dims = t->torch_dims};
}

TJ_TYPED_API(scatter_elements_update, "ScatterElementsUpdate", jit_scatter_elements_update_sig,
             jit_scatter_elements_update_fn, tj_seu_sig_of)
TJ_TYPED_KERNEL_API(scatter_elements_update, JIT_OP_SCATTER_ELEMENTS_UPDATE, jit_scatter_elements_update_fn)
TJ_TYPED_RANGE_SCATTER(scatter_elements_update, JIT_OP_SCATTER_ELEMENTS_UPDATE, jit_scatter_elements_update_fn)
