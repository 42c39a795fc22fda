/* Checks that the ops' signatures share. */
#include <inttypes.h>

#include "error.h"
#include "host_cpus.h"
#include "op.h"
#include "plan.h"
#include "shape.h"

static int tj_dtype_is_subbyte(jit_dtype t)
{
    return t == JIT_U1 || t == JIT_U4 || t == JIT_I4 || t == JIT_NF4;
}

int tj_tie(int64_t *a, int64_t *b)
{
    if (*a < 0 && *b >= 0) {
        *a = *b;
        return 1;
    }
    if (*b < 0 && *a >= 0) {
        *b = *a;
        return 1;
    }
    if (*a < 0 && *b < 0 && *a != *b) { /* one group: the lower code */
        *a = *b = *a < *b ? *a : *b;
        return 1;
    }
    return 0;
}

int64_t tj_rule_dim(int64_t dim)
{
    return dim < 0 ? JIT_DIM_DYNAMIC : dim;
}

int64_t tj_rule_product(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    int dynamic = 0;
    for (int i = from; i < to; i++) {
        if (dims[i] == 0)
            return 0;
        if (dims[i] < 0 || dynamic || tj_mul_i64(p, dims[i], &p))
            dynamic = 1; /* the rest may still hold a 0 */
    }
    return dynamic ? JIT_DIM_DYNAMIC : p;
}

int tj_rule_copy(const jit_shape *in, jit_shape *out)
{
    if (in->rank < 0 || in->rank > JIT_MAX_RANK)
        return -1;
    out->rank = in->rank;
    for (int i = 0; i < in->rank; i++)
        out->dims[i] = tj_rule_dim(in->dims[i]);
    return 0;
}

int tj_check_dtype(jit_dtype t, const char *what)
{
    if (t == JIT_DTYPE_UNSET)
        return tj_error_set("%s element type is not set", what);
    if ((unsigned)t >= JIT_DTYPE_COUNT)
        return tj_error_set("%s element type %d is not a known type", what, (int)t);
    if (tj_dtype_is_subbyte(t))
        return tj_error_set("%s element type %s is a sub-byte type; tensorjit moves whole "
                            "bytes (1, 2, 4 or 8 per element)",
                            what, jit_dtype_name(t));
    return 0;
}

int tj_check_index_type(jit_dtype t, const char *what)
{
    switch (t) {
    case JIT_I8:
    case JIT_U8:
    case JIT_I16:
    case JIT_U16:
    case JIT_I32:
    case JIT_U32:
    case JIT_I64:
    case JIT_U64:
        return 0;
    case JIT_DTYPE_UNSET:
        return tj_error_set("%s element type is not set", what);
    default:
        return tj_error_set("%s element type %s must be an integer type "
                            "(i8, u8, i16, u16, i32, u32, i64, u64)",
                            what, jit_dtype_name(t));
    }
}

int tj_check_index_type_of(jit_dtype t, unsigned types, const char *op)
{
    if (t == JIT_DTYPE_UNSET)
        return tj_check_index_type(t, "indices");
    if ((unsigned)t < 32 && (types & TJ_TYPE_BIT(t)))
        return 0;
    /* a float or bool too: the op's own types, not every integer type, which
     * would send the user to one (u8) that is refused next */
    return tj_error_set("indices element type %s: %s takes i32 or i64 indices", jit_dtype_name(t),
                        op);
}

int tj_check_axis_tensor(const jit_sig *s)
{
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

int tj_check_axis(const jit_sig *s, int *axis)
{
    int r = s->data_shape.rank;
    if (s->axis < -r || s->axis > r - 1)
        return tj_error_set("axis=%" PRId64 " must be in [-rank(data), rank(data)-1] = [%d, %d]",
                            s->axis, -r, r - 1);
    *axis = (int)(s->axis < 0 ? s->axis + r : s->axis);
    return 0;
}

int tj_check_updates_dtype(const jit_sig *s)
{
    if (s->updates_dtype != JIT_DTYPE_UNSET && s->updates_dtype != s->dtype)
        return tj_error_set("updates element type %s must equal data element type %s",
                            jit_dtype_name(s->updates_dtype), jit_dtype_name(s->dtype));
    return 0;
}

int tj_check_policy_engine(jit_index_policy p, jit_engine e)
{
    if ((unsigned)p >= JIT_INDEX_POLICY_COUNT)
        return tj_error_set("index_policy=%d is not a known policy", (int)p);
    if (e != JIT_ENGINE_AUTO && e != JIT_ENGINE_REFERENCE && e != JIT_ENGINE_JIT)
        return tj_error_set("engine=%d is not a known engine", (int)e);
    return 0;
}

int tj_check_threads(int threads, int *out)
{
    if (threads < JIT_THREADS_ALL || threads > JIT_THREADS_MAX)
        return tj_error_set("threads=%d must be in [-1, %d] (-1: one per core)", threads,
                            JIT_THREADS_MAX);
    if (threads == JIT_THREADS_ALL) {
        int n = tj_host_cpus();
        threads = n < JIT_THREADS_MAX ? n : JIT_THREADS_MAX;
    }
    *out = threads > 1 ? threads : 1;
    return 0;
}
