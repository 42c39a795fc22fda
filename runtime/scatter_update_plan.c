/* ScatterUpdate-3 (and tf.compat.v1.scatter_update, its axis-0 case)
 * translated to the plan. */
#include <inttypes.h>

#include "error.h"
#include "plan.h"
#include "shape.h"

static int tj_scatter_check_types(const jit_scatter_update_sig *s)
{
    if (tj_check_dtype(s->dtype, "data") || tj_check_index_type(s->index_type, "indices") ||
        tj_check_policy_engine(s->index_policy, s->engine))
        return -1;
    if (s->updates_dtype != JIT_DTYPE_UNSET && s->updates_dtype != s->dtype)
        return tj_error_set("updates element type %s must equal data element type %s",
                            jit_dtype_name(s->updates_dtype), jit_dtype_name(s->dtype));
    if (s->axis_type != JIT_DTYPE_UNSET && tj_check_index_type(s->axis_type, "axis"))
        return -1;
    const jit_shape *a = &s->axis_shape;
    if (a->rank < 0 || a->rank > 1 || (a->rank == 1 && a->dims[0] != 1)) {
        char buf[64];
        return tj_error_set("axis must be a scalar or a 1-D tensor of one element, got shape %s",
                            tj_shape_format(a, buf, sizeof buf));
    }
    return 0;
}

/* Normalizes the axis into [0, r) and checks updates.shape against
 * data.shape[:axis] + indices.shape + data.shape[axis+1:]. */
static int tj_scatter_check_shapes(const jit_scatter_update_sig *s, int *axis)
{
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape, *u = &s->updates_shape;
    if (tj_shape_check(d, "data", 1) || tj_shape_check(ix, "indices", 0) ||
        tj_shape_check(u, "updates", 0))
        return -1;
    int r = d->rank;
    if (s->axis < -r || s->axis > r - 1)
        return tj_error_set("axis=%" PRId64 " must be in [-rank(data), rank(data)-1] = [%d, %d]",
                            s->axis, -r, r - 1);
    int a = (int)(s->axis < 0 ? s->axis + r : s->axis);
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

int tj_scatter_update_plan(const jit_scatter_update_sig *s, tj_plan *p, jit_shape *out_shape)
{
    int a;
    if (tj_scatter_check_types(s) || tj_scatter_check_shapes(s, &a))
        return -1;
    const jit_shape *d = &s->data_shape, *ix = &s->indices_shape;

    *p = (tj_plan){0};
    p->op = TJ_OP_SCATTER_UPDATE;
    p->indexed = TJ_INDEXED_DST;
    p->dtype = s->dtype;
    p->index_type = s->index_type;
    p->policy = s->index_policy;
    p->elem_size = jit_dtype_size(s->dtype);
    p->index_size = jit_dtype_size(s->index_type);
    int64_t idx_bytes, inner;
    if (tj_shape_bytes(d, p->elem_size, "data", &p->data_bytes) ||
        tj_shape_bytes(ix, p->index_size, "indices", &idx_bytes) ||
        tj_shape_bytes(&s->updates_shape, p->elem_size, "updates", &p->updates_bytes))
        return -1;
    p->indices_elems = idx_bytes / p->index_size;
    p->out_bytes = p->data_bytes;
    p->copy_bytes = p->data_bytes;
    /* partial products are checked: a zero dim elsewhere hides their size */
    if (tj_shape_product(d, 0, a, &p->outer) || tj_shape_product(d, a + 1, d->rank, &inner) ||
        tj_mul_i64(inner, p->elem_size, &p->block_bytes) ||
        tj_mul_i64(p->block_bytes, d->dims[a], &p->indexed_outer_bytes) ||
        tj_mul_i64(p->block_bytes, p->indices_elems, &p->plain_outer_bytes))
        return tj_error_set("a partial product of the data or updates shape overflows int64");
    p->items = p->indices_elems;
    p->depth = 1;
    p->dims[0] = d->dims[a];
    p->strides[0] = p->block_bytes;
    p->index_outer_elems = 0; /* every outer position uses the same indices */
    p->tuple_shape = *ix;
    p->first_dim = a;
    p->units = p->outer;
    if (tj_check_threads(s->threads, &p->threads))
        return -1;
    if (out_shape)
        *out_shape = *d;
    return 0;
}
