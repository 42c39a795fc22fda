/* GatherElements (OpenVINO GatherElements-6, ONNX, torch.gather): a level
 * per dimension of indices, each index selecting one element of data
 * along the axis, at its own coordinates elsewhere. Indices have data's
 * rank and, except along the axis, its dims (OpenVINO's rule), or with
 * torch_dims dims no larger (torch.gather's): the levels walk data at its
 * own strides either way, so the flavour costs no code of its own. */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "op.h"
#include "shape.h"
#include "typed_api.h"

static int tj_gather_elements_check(const jit_sig *s, int *axis)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    if (s->opset != 0 && s->opset != 6)
        return tj_error_set("opset=%d must be 6", s->opset);
    if (tj_check_dtype(s->dtype, "data") ||
        tj_check_index_type_of(s->index_type, TJ_INDEX_TYPES_I32_I64, "GatherElements") ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 1))
        return -1;
    int r = d->rank;
    if (ix->rank != r)
        return tj_error_set("rank(indices)=%d must equal rank(data)=%d", ix->rank, r);
    int a = 0;
    if (tj_check_axis(s, &a))
        return -1;
    for (int i = 0; i < r; i++) {
        if (i == a)
            continue;
        if (s->torch_dims && ix->dims[i] > d->dims[i])
            return tj_error_set("indices.shape[%d]=%" PRId64 " must not exceed data.shape[%d]=%"
                                PRId64 " (every dimension but axis %d, torch_dims)",
                                i, ix->dims[i], i, d->dims[i], a);
        if (!s->torch_dims && ix->dims[i] != d->dims[i])
            return tj_error_set("indices.shape[%d]=%" PRId64 " must equal data.shape[%d]=%" PRId64
                                " (every dimension but axis %d)%s",
                                i, ix->dims[i], i, d->dims[i], a,
                                ix->dims[i] < d->dims[i] ? "; torch.gather's rule, no larger, is "
                                                           "the signature's torch_dims (CLI: "
                                                           "--torch-dims)"
                                                         : "");
    }
    *axis = a;
    return 0;
}

static int tj_gather_elements_plan(const jit_sig *s, tj_plan *p, jit_shape *out)
{
    int a = 0;
    if (tj_gather_elements_check(s, &a))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;
    tj_rule_copy(ix, out); /* the op's shape rule, of a checked rank */
    tj_plan_init(p, s, TJ_INDEXED_SRC, 0);
    int64_t idx_bytes;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(out, p->elem_size, "output", &p->out_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    return tj_plan_element_levels(p, d, ix, ix, a);
}

static void tj_gather_elements_describe(const jit_sig *s, char *buf, size_t len)
{
    char b1[512], b2[512];
    snprintf(buf, len,
             "GatherElements-6, axis %" PRId64 "%s, data %s %s, indices %s %s, index policy %s\n"
             "output shape: %s (the indices shape)\n",
             s->axis,
             s->torch_dims ? ", torch_dims (indices may be smaller than data but along the axis)"
                           : "",
             jit_dtype_name(s->dtype),
             tj_shape_format_bounded(&s->data_shape, s->data_bound, b1, sizeof b1),
             jit_dtype_name(s->index_type),
             tj_shape_format_bounded(&s->indices_shape, s->indices_bound, b2, sizeof b2),
             jit_index_policy_name(s->index_policy), b2);
}

/* The op's shape rule (op.h): indices' shape. */
static int tj_gather_elements_rule(const jit_sig *s, jit_shape *out)
{
    return tj_rule_copy(&s->indices_shape, out);
}

/* indices' dims are data's but along the axis (normalized); torch_dims
 * only bounds them, which is no tie */
static int tj_gather_elements_tie(jit_sig *s)
{
    int n = 0;
    for (int i = 0; i < s->data_shape.rank && i < s->indices_shape.rank && !s->torch_dims; i++)
        if (i != s->axis)
            n += tj_tie(&s->data_shape.dims[i], &s->indices_shape.dims[i]);
    return n;
}

const tj_op_def tj_op_gather_elements = {
    .info = {.op = JIT_OP_GATHER_ELEMENTS, .name = "GatherElements",
             .command = "gather-elements", .attrs = JIT_ATTR_AXIS | JIT_ATTR_TORCH_DIMS,
             .opsets = {6},
             .default_opset = 6, .index_types = TJ_INDEX_TYPES_I32_I64},
    .plan = tj_gather_elements_plan,
    .describe = tj_gather_elements_describe,
    .tie = tj_gather_elements_tie,
    .shape_rule = tj_gather_elements_rule,
};

static jit_sig tj_gather_elements_sig_of(const jit_gather_elements_sig *t)
{
    return (jit_sig){.op = JIT_OP_GATHER_ELEMENTS, .axis = t->axis, .dtype = t->dtype,
                     .index_type = t->index_type, .index_policy = t->index_policy,
                     .engine = t->engine, .threads = t->threads, .data_shape = t->data_shape,
                     .indices_shape = t->indices_shape, .torch_dims = t->torch_dims};
}

TJ_TYPED_API(gather_elements, "GatherElements", jit_gather_elements_sig, jit_gather_elements_fn,
             tj_gather_elements_sig_of)
TJ_TYPED_KERNEL_API(gather_elements, JIT_OP_GATHER_ELEMENTS, jit_gather_elements_fn)
TJ_TYPED_RANGE_GATHER(gather_elements, JIT_OP_GATHER_ELEMENTS, jit_gather_elements_fn)
