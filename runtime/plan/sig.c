/* What every op's signature shares: normalization for the key, and the
 * plan with the checks every op makes. */
#include "error.h"
#include "op.h"

/* v counted from the end (in [-n, -1]) brought into [0, n); other values,
 * valid or not, stay as they are, so that no two meanings meet. */
static int64_t tj_from_end(int64_t v, int64_t n)
{
    return v < 0 && v >= -n ? v + n : v;
}

/* The embedding bags' fields (SPEC 10) an op does not take, at their
 * "none": all zero. */
static void tj_sig_normalize_bag(unsigned attrs, jit_sig *s)
{
    if (!(attrs & JIT_ATTR_WEIGHTS))
        s->has_weights = 0;
    if (!(attrs & JIT_ATTR_DEFAULT_INDEX))
        s->has_default_index = 0;
    if (!s->has_default_index)
        s->default_index = 0;
    if (!(attrs & JIT_ATTR_PADDING_IDX))
        s->has_padding_idx = 0;
    if (!s->has_padding_idx)
        s->padding_idx = 0;
    if (!(attrs & JIT_ATTR_LAST_OFFSET))
        s->include_last_offset = 0;
    if (!(attrs & JIT_ATTR_NUM_SEGMENTS))
        s->num_segments = 0;
    if (!(attrs & JIT_ATTR_NUM_SEGMENTS) || s->num_segments != JIT_DIM_DYNAMIC)
        s->num_segments_bound = 0;
}

void tj_sig_normalize(const tj_op_def *def, jit_sig *s)
{
    unsigned attrs = def->info.attrs;
    if (s->opset == 0)
        s->opset = def->info.default_opset;
    s->axis = attrs & JIT_ATTR_AXIS ? tj_from_end(s->axis, s->data_shape.rank) : 0;
    if (attrs & JIT_ATTR_AXIS_TENSOR) {
        const jit_shape *a = &s->axis_shape; /* a scalar and [1] mean the same */
        if (a->rank == 0 || (a->rank == 1 && a->dims[0] == 1))
            s->axis_shape = (jit_shape){0};
        if (s->axis_type == JIT_DTYPE_UNSET)
            s->axis_type = JIT_I64;
    } else {
        s->axis_type = JIT_DTYPE_UNSET;
        s->axis_shape = (jit_shape){0};
    }
    if (s->threads == 0) /* both mean the caller's thread: one kernel */
        s->threads = 1;
    /* batch_dims stays as written: whether one counted from the end is
     * valid is the op's rule (GatherND refuses it, Gather's normalize takes
     * it), and a key must never make a refused spelling hit the cache */
    if (!(attrs & JIT_ATTR_BATCH_DIMS))
        s->batch_dims = 0;
    if (attrs & JIT_ATTR_OFFSETS) { /* an embedding bag's offsets: of the indices' type */
        if (s->updates_dtype == JIT_DTYPE_UNSET)
            s->updates_dtype = s->index_type;
    } else if (!(attrs & JIT_ATTR_UPDATES)) {
        s->updates_dtype = JIT_DTYPE_UNSET;
        s->updates_shape = (jit_shape){0};
    } else if (s->updates_dtype == JIT_DTYPE_UNSET) {
        s->updates_dtype = s->dtype;
    }
    tj_sig_normalize_bag(attrs, s);
    if (!(attrs & JIT_ATTR_REDUCTION))
        s->reduction = JIT_REDUCTION_NONE;
    if (!(attrs & JIT_ATTR_INIT_VAL) || s->reduction == JIT_REDUCTION_NONE)
        s->no_init_val = 0; /* no effect without a reduction */
    else
        s->no_init_val = s->no_init_val != 0;
    s->torch_dims = attrs & JIT_ATTR_TORCH_DIMS ? s->torch_dims != 0 : 0;
    if (def->normalize)
        def->normalize(s);
}

const tj_op_def *tj_sig_op(const jit_sig *sig)
{
    if (!sig) {
        tj_error_set("the signature is NULL");
        return NULL;
    }
    return tj_op_find(sig->op);
}

static int tj_sig_plan_with(const tj_op_def *def, const jit_sig *s, tj_plan *p,
                            jit_shape *out_shape, int loose)
{
    jit_shape out;
    if (s->no_init_val && !(def->info.attrs & JIT_ATTR_INIT_VAL)) {
        /* an attribute the op lacks changes nothing (the key drops it too) */
        jit_sig v = *s;
        v.no_init_val = 0;
        return tj_sig_plan_with(def, &v, p, out_shape, loose);
    }
    if (def->plan(s, p, &out) != 0)
        return -1;
    if (loose)
        tj_plan_loosen(p);
    if (tj_check_threads(s->threads, &p->threads) || tj_plan_finish(p))
        return -1;
    if (out_shape)
        *out_shape = out;
    return 0;
}

int tj_sig_plan(const tj_op_def *def, const jit_sig *s, tj_plan *p, jit_shape *out_shape)
{
    return tj_sig_plan_with(def, s, p, out_shape, 0);
}

int tj_sig_plan_dyn(const tj_op_def *def, const jit_sig *s, tj_plan *p, jit_shape *out_shape)
{
    return tj_sig_plan_with(def, s, p, out_shape, 1);
}
