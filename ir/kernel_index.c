/*
 * Index entries as the kernel reads them: loaded and widened to i64, and
 * placed by the index policy (wrapped, clamped, or marked out of range for
 * the filling policies), as scalars or lane by lane in a vector. The
 * validation and the copies both go through here.
 */
#include "kernel_internal.h"

/* indices[i] widened to i64 (sign- or zero-extended by the index type) */
LLVMValueRef tj_load_index(tj_kir *k, LLVMValueRef i)
{
    tj_emit *e = &k->e;
    LLVMValueRef off = tj_mul(e, i, k->p->index_size, "index.off");
    LLVMValueRef v = tj_load(e, k->idx_ty, tj_byte_gep(e, k->indices, off, "index.ptr"), "index");
    if (k->p->index_size == 8)
        return v;
    return k->idx_signed ? LLVMBuildSExt(e->b, v, e->i64, "index.i64")
                         : LLVMBuildZExt(e->b, v, e->i64, "index.i64");
}

/* The constant c in the shape of v: an i64, or a splat of c over a vector
 * of i64 (the vector gathers apply the policies lane by lane with the same
 * code as the scalar path). */
static LLVMValueRef tj_like(const tj_emit *e, LLVMValueRef v, int64_t c)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return tj_i64(e, c);
    LLVMValueRef lanes[64];
    unsigned n = LLVMGetVectorSize(t);
    for (unsigned i = 0; i < n; i++)
        lanes[i] = tj_i64(e, c);
    return LLVMConstVector(lanes, n);
}

/* The size of the dimension tuple entry d addresses, plus add, in the
 * shape of v (a dynamic one is a scalar: dynamic kernels have no vector
 * gathers). */
LLVMValueRef tj_dim_like(tj_kir *k, LLVMValueRef v, int d, int64_t add)
{
    if (!tj_pdyn(k, &k->p->dims[d]))
        return tj_like(&k->e, v, k->p->dims[d] + add);
    LLVMValueRef dim = tj_pv(k, &k->p->dims[d]);
    return add ? tj_add(&k->e, dim, tj_i64(&k->e, add), "dim.plus") : dim;
}

/* Negative indices counted from the end, for negative-wraps. */
LLVMValueRef tj_wrap(tj_kir *k, LLVMValueRef v, int d)
{
    tj_emit *e = &k->e;
    if (k->p->policy != JIT_INDEX_NEGATIVE_WRAPS || !k->idx_signed)
        return v;
    LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "is.negative");
    return LLVMBuildSelect(e->b, neg, tj_add(e, v, tj_dim_like(k, v, d, 0), "wrapped"), v,
                           "wrap");
}

/* The position entry d of a tuple selects, and (zero-fill) whether it is
 * in range; *valid is left alone for the other policies. */
LLVMValueRef tj_position(tj_kir *k, LLVMValueRef v, int d, LLVMValueRef *valid)
{
    tj_emit *e = &k->e;
    switch (k->p->policy) {
    case JIT_INDEX_CLAMP: {
        LLVMValueRef top = tj_dim_like(k, v, d, -1);
        if (k->idx_signed) {
            LLVMValueRef low = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "below");
            v = LLVMBuildSelect(e->b, low, tj_like(e, v, 0), v, "clamp.low");
            LLVMValueRef high = LLVMBuildICmp(e->b, LLVMIntSGT, v, top, "above");
            return LLVMBuildSelect(e->b, high, top, v, "clamp");
        }
        LLVMValueRef high = LLVMBuildICmp(e->b, LLVMIntUGT, v, top, "above");
        return LLVMBuildSelect(e->b, high, top, v, "clamp");
    }
    case JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL:
    case JIT_INDEX_ZERO_FILL: {
        if (k->p->policy == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL && k->idx_signed) {
            LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "is.negative");
            v = LLVMBuildSelect(e->b, neg, tj_add(e, v, tj_dim_like(k, v, d, 0), "wrapped"), v,
                                "wrap");
        }
        LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, v, tj_dim_like(k, v, d, 0), "in.range");
        *valid = *valid ? LLVMBuildAnd(e->b, *valid, in, "valid") : in;
        return v;
    }
    default:
        return k->nowrap ? v : tj_wrap(k, v, d);
    }
}

/* Whether the validation also looks for negative indices, so that the
 * copies can skip the wrap when there are none: negative-wraps on a signed
 * index type, in loop kernels (an unrolled one's wraps fold into its
 * straight-line code, and its second copy would cost the per-call kernels). */
int tj_tracks_sign(const tj_kir *k)
{
    return k->p->policy == JIT_INDEX_NEGATIVE_WRAPS && k->idx_signed && k->p->depth > 0 &&
           !k->st.unrolled;
}
