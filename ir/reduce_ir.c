/*
 * A scatter's block reduced into out, element by element, as LLVM IR. The
 * arithmetic is runtime/exec/reduce.c's, step for step, so that the JIT kernel
 * and the reference kernel agree bit for bit: integers wrap (plain add,
 * sub, mul); min and max return out's NaN, else the update's NaN, else the
 * smaller or larger with out's on a tie (compares and selects, never
 * llvm.minnum, whose NaN and signed-zero rules differ); a sum, sub or prod
 * that gives a NaN gives out's NaN made quiet, else the update's, else
 * x86's default NaN (LLVM leaves the bits of an fadd's NaN open, and may
 * swap its operands: see tj_arith); f16 and bf16 go
 * through f32 with the conversions of runtime/half.h spelled in integer
 * operations (LLVM's fptrunc to half keeps a NaN's payload, half.h does
 * not, and a conversion may become a library call the kernels cannot
 * link); bool is or, and, xor of its 0/1 values. The element loop has a
 * constant trip count (a dynamic kernel's may be the call's) and no
 * collision inside a block, so LLVM vectorizes it; blocks follow one
 * another in the order of the indices.
 */
#include "reduce_ir.h"

#include <stdio.h>
#include <string.h>

#include "reduce.h"

typedef struct tj_rir {
    tj_emit *e;
    const tj_plan *p;
    LLVMTypeRef f32, f64;
} tj_rir;

static LLVMValueRef tj_c32(const tj_rir *r, uint32_t v)
{
    return LLVMConstInt(r->e->i32, v, 0);
}

static LLVMValueRef tj_is_nan(const tj_rir *r, LLVMValueRef v)
{
    return LLVMBuildFCmp(r->e->b, LLVMRealUNO, v, v, "is.nan");
}

/* min/max as runtime/exec/reduce.c: a's NaN, else b's, else b when strictly
 * smaller (min) or larger (max), else a. */
static LLVMValueRef tj_float_minmax(const tj_rir *r, LLVMValueRef a, LLVMValueRef b, int max)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef better = LLVMBuildFCmp(bd, max ? LLVMRealOGT : LLVMRealOLT, b, a, "better");
    LLVMValueRef v = LLVMBuildSelect(bd, better, b, a, "pick");
    v = LLVMBuildSelect(bd, tj_is_nan(r, b), b, v, "b.nan");
    return LLVMBuildSelect(bd, tj_is_nan(r, a), a, v, "a.nan");
}

#if !TJ_NAN_SELECTS
/* a op b for sum, sub or prod, with runtime/exec/reduce.c's NaN. x86 already
 * returns the one NaN operand made quiet, or the default NaN (negative,
 * quiet) when neither is one; only with two NaNs does its answer hang on
 * operand order, which LLVM may swap. With b replaced by a where a is a
 * NaN, both operands are a's NaN then: one compare and one select ahead
 * of the operation. The full selects after it (tj_reference_nan) cost S5
 * and S6 1.7x (docs/performance.md, 'Reductions'): the JIT runs on its
 * host only. */
static LLVMValueRef tj_arith(const tj_rir *r, LLVMOpcode op, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef b2 = LLVMBuildSelect(bd, tj_is_nan(r, a), a, b, "nan.first");
    return LLVMBuildBinOp(bd, op, a, b2, "arith");
}
#else
/* a op b for sum, sub or prod, its NaN made runtime/exec/reduce.c's */
static LLVMValueRef tj_arith(const tj_rir *r, LLVMOpcode op, LLVMValueRef a, LLVMValueRef b)
{
    return tj_reference_nan(r->e, LLVMBuildBinOp(r->e->b, op, a, b, "arith"), a, b);
}
#endif

static LLVMValueRef tj_float_op(const tj_rir *r, LLVMValueRef a, LLVMValueRef b)
{
    switch (r->p->reduction) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MEAN: return tj_arith(r, LLVMFAdd, a, b);
    case JIT_REDUCTION_SUB: return tj_arith(r, LLVMFSub, a, b);
    case JIT_REDUCTION_PROD: return tj_arith(r, LLVMFMul, a, b);
    case JIT_REDUCTION_MIN: return tj_float_minmax(r, a, b, 0);
    case JIT_REDUCTION_MAX: return tj_float_minmax(r, a, b, 1);
    default: return b;
    }
}

static int tj_unsigned(jit_dtype t)
{
    return t == JIT_U8 || t == JIT_U16 || t == JIT_U32 || t == JIT_U64;
}

static LLVMValueRef tj_int_op(const tj_rir *r, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bd = r->e->b;
    int u = tj_unsigned(r->p->dtype);
    switch (r->p->reduction) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MEAN: return LLVMBuildAdd(bd, a, b, "sum");
    case JIT_REDUCTION_SUB: return LLVMBuildSub(bd, a, b, "sub");
    case JIT_REDUCTION_PROD: return LLVMBuildMul(bd, a, b, "prod");
    case JIT_REDUCTION_MIN:
        return LLVMBuildSelect(bd, LLVMBuildICmp(bd, u ? LLVMIntULT : LLVMIntSLT, b, a, "lt"), b,
                               a, "min");
    case JIT_REDUCTION_MAX:
        return LLVMBuildSelect(bd, LLVMBuildICmp(bd, u ? LLVMIntUGT : LLVMIntSGT, b, a, "gt"), b,
                               a, "max");
    default: return b;
    }
}

static LLVMValueRef tj_bool_op(const tj_rir *r, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef zero = LLVMConstInt(r->e->i8, 0, 0);
    a = LLVMBuildZExt(bd, LLVMBuildICmp(bd, LLVMIntNE, a, zero, "a.bool"), r->e->i8, "a01");
    b = LLVMBuildZExt(bd, LLVMBuildICmp(bd, LLVMIntNE, b, zero, "b.bool"), r->e->i8, "b01");
    switch (r->p->reduction) {
    case JIT_REDUCTION_SUM:
    case JIT_REDUCTION_MAX: return LLVMBuildOr(bd, a, b, "or");
    case JIT_REDUCTION_PROD:
    case JIT_REDUCTION_MIN: return LLVMBuildAnd(bd, a, b, "and");
    case JIT_REDUCTION_SUB: return LLVMBuildXor(bd, a, b, "xor");
    default: return b;
    }
}

/* runtime/half.h's tj_half_to_float: exact, subnormals as man * 2^-24. */
static LLVMValueRef tj_half_to_f32(const tj_rir *r, LLVMValueRef h16)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef h = LLVMBuildZExt(bd, h16, r->e->i32, "h");
    LLVMValueRef sign = LLVMBuildShl(bd, LLVMBuildAnd(bd, h, tj_c32(r, 0x8000), ""), tj_c32(r, 16),
                                     "h.sign");
    LLVMValueRef exp = LLVMBuildAnd(bd, LLVMBuildLShr(bd, h, tj_c32(r, 10), ""), tj_c32(r, 0x1f),
                                    "h.exp");
    LLVMValueRef man = LLVMBuildAnd(bd, h, tj_c32(r, 0x3ff), "h.man");
    LLVMValueRef man13 = LLVMBuildShl(bd, man, tj_c32(r, 13), "");
    LLVMValueRef normal = LLVMBuildOr(
        bd, sign,
        LLVMBuildOr(bd, LLVMBuildShl(bd, LLVMBuildAdd(bd, exp, tj_c32(r, 112), ""), tj_c32(r, 23), ""),
                    man13, ""),
        "h.normal");
    LLVMValueRef special = LLVMBuildOr(bd, LLVMBuildOr(bd, sign, tj_c32(r, 0x7f800000), ""), man13,
                                       "h.special");
    LLVMValueRef sub = LLVMBuildFMul(bd, LLVMBuildUIToFP(bd, man, r->f32, ""),
                                     LLVMConstReal(r->f32, 0x1p-24), "h.sub");
    LLVMValueRef subbits = LLVMBuildOr(bd, LLVMBuildBitCast(bd, sub, r->e->i32, ""), sign, "");
    LLVMValueRef bits = LLVMBuildSelect(
        bd, LLVMBuildICmp(bd, LLVMIntEQ, exp, tj_c32(r, 0x1f), ""), special,
        LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntEQ, exp, tj_c32(r, 0), ""), subbits, normal,
                        ""),
        "h.bits");
    return LLVMBuildBitCast(bd, bits, r->f32, "h.f32");
}

/* runtime/half.h's tj_float_to_half, round to nearest even, a NaN to the
 * quiet NaN of its sign. */
static LLVMValueRef tj_f32_to_half(const tj_rir *r, LLVMValueRef f)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef x = LLVMBuildBitCast(bd, f, r->e->i32, "x");
    LLVMValueRef sign = LLVMBuildAnd(bd, LLVMBuildLShr(bd, x, tj_c32(r, 16), ""), tj_c32(r, 0x8000),
                                     "x.sign");
    LLVMValueRef absx = LLVMBuildAnd(bd, x, tj_c32(r, 0x7fffffff), "x.abs");
    /* inf, NaN, overflow */
    LLVMValueRef nan = LLVMBuildICmp(bd, LLVMIntUGT, absx, tj_c32(r, 0x7f800000), "x.nan");
    LLVMValueRef inf = LLVMBuildOr(bd, sign, LLVMBuildSelect(bd, nan, tj_c32(r, 0x7e00),
                                                             tj_c32(r, 0x7c00), ""), "x.inf");
    /* normal */
    LLVMValueRef lsb = LLVMBuildAnd(bd, LLVMBuildLShr(bd, absx, tj_c32(r, 13), ""), tj_c32(r, 1), "");
    LLVMValueRef rn = LLVMBuildSub(
        bd, LLVMBuildAdd(bd, LLVMBuildAdd(bd, absx, tj_c32(r, 0xfff), ""), lsb, ""),
        tj_c32(r, 0x38000000), "");
    LLVMValueRef normal = LLVMBuildOr(bd, sign, LLVMBuildLShr(bd, rn, tj_c32(r, 13), ""), "x.normal");
    /* subnormal: m >> s rounded to even, where s = 126 - e is in [14, 24]
     * (the select below takes this only for absx < 0x38800000) */
    LLVMValueRef e = LLVMBuildLShr(bd, absx, tj_c32(r, 23), "x.e");
    LLVMValueRef m = LLVMBuildOr(bd, LLVMBuildAnd(bd, absx, tj_c32(r, 0x7fffff), ""),
                                 tj_c32(r, 0x800000), "x.m");
    LLVMValueRef s = LLVMBuildSub(bd, tj_c32(r, 126), e, "x.s");
    LLVMValueRef tiny = LLVMBuildOr(bd, LLVMBuildICmp(bd, LLVMIntEQ, e, tj_c32(r, 0), ""),
                                    LLVMBuildICmp(bd, LLVMIntUGT, s, tj_c32(r, 24), ""), "x.tiny");
    /* every shift below by sc or sc - 1 stays in [0, 31] for every x, the
     * normal ones (s <= 13, or wrapped) included: no poison anywhere */
    LLVMValueRef s_ok = LLVMBuildICmp(bd, LLVMIntULT, LLVMBuildSub(bd, s, tj_c32(r, 1), ""),
                                      tj_c32(r, 24), "x.s.ok");
    LLVMValueRef sc = LLVMBuildSelect(bd, s_ok, s, tj_c32(r, 24), "x.sc");
    LLVMValueRef q = LLVMBuildLShr(bd, m, sc, "x.q");
    LLVMValueRef mask = LLVMBuildSub(bd, LLVMBuildShl(bd, tj_c32(r, 1), sc, ""), tj_c32(r, 1), "");
    LLVMValueRef rem = LLVMBuildAnd(bd, m, mask, "x.rem");
    LLVMValueRef half = LLVMBuildShl(bd, tj_c32(r, 1), LLVMBuildSub(bd, sc, tj_c32(r, 1), ""), "");
    LLVMValueRef up = LLVMBuildOr(
        bd, LLVMBuildICmp(bd, LLVMIntUGT, rem, half, ""),
        LLVMBuildAnd(bd, LLVMBuildICmp(bd, LLVMIntEQ, rem, half, ""),
                     LLVMBuildICmp(bd, LLVMIntNE, LLVMBuildAnd(bd, q, tj_c32(r, 1), ""),
                                   tj_c32(r, 0), ""), ""),
        "x.up");
    q = LLVMBuildAdd(bd, q, LLVMBuildZExt(bd, up, r->e->i32, ""), "x.qr");
    LLVMValueRef subn = LLVMBuildOr(bd, sign, LLVMBuildSelect(bd, tiny, tj_c32(r, 0), q, ""),
                                    "x.subn");
    LLVMValueRef bits = LLVMBuildSelect(
        bd, LLVMBuildICmp(bd, LLVMIntUGE, absx, tj_c32(r, 0x7f800000), ""), inf,
        LLVMBuildSelect(
            bd, LLVMBuildICmp(bd, LLVMIntUGE, absx, tj_c32(r, 0x477ff000), ""),
            LLVMBuildOr(bd, sign, tj_c32(r, 0x7c00), ""),
            LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntULT, absx, tj_c32(r, 0x38800000), ""),
                            subn, normal, ""),
            ""),
        "x.bits");
    return LLVMBuildTrunc(bd, bits, LLVMInt16TypeInContext(r->e->ctx), "x.h");
}

static LLVMValueRef tj_bf16_to_f32(const tj_rir *r, LLVMValueRef h16)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef h = LLVMBuildZExt(bd, h16, r->e->i32, "");
    return LLVMBuildBitCast(bd, LLVMBuildShl(bd, h, tj_c32(r, 16), ""), r->f32, "bf.f32");
}

/* runtime/half.h's tj_float_to_bf16. */
static LLVMValueRef tj_f32_to_bf16(const tj_rir *r, LLVMValueRef f)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef x = LLVMBuildBitCast(bd, f, r->e->i32, "");
    LLVMValueRef hi = LLVMBuildLShr(bd, x, tj_c32(r, 16), "");
    LLVMValueRef nan = LLVMBuildICmp(bd, LLVMIntUGT, LLVMBuildAnd(bd, x, tj_c32(r, 0x7fffffff), ""),
                                     tj_c32(r, 0x7f800000), "");
    LLVMValueRef rounded = LLVMBuildLShr(
        bd, LLVMBuildAdd(bd, LLVMBuildAdd(bd, x, tj_c32(r, 0x7fff), ""),
                         LLVMBuildAnd(bd, hi, tj_c32(r, 1), ""), ""),
        tj_c32(r, 16), "");
    LLVMValueRef bits = LLVMBuildSelect(bd, nan, LLVMBuildOr(bd, hi, tj_c32(r, 0x40), ""), rounded,
                                        "bf.bits");
    return LLVMBuildTrunc(bd, bits, LLVMInt16TypeInContext(r->e->ctx), "bf.h");
}

/* The element type as LLVM sees it for loads and stores. */
static LLVMTypeRef tj_elem_type(const tj_rir *r)
{
    switch (r->p->dtype) {
    case JIT_F32: return r->f32;
    case JIT_F64: return r->f64;
    default: return LLVMIntTypeInContext(r->e->ctx, (unsigned)r->p->elem_size * 8);
    }
}

static LLVMValueRef tj_combine(const tj_rir *r, LLVMValueRef a, LLVMValueRef b)
{
    switch (r->p->dtype) {
    case JIT_BOOL: return tj_bool_op(r, a, b);
    case JIT_F32:
    case JIT_F64: return tj_float_op(r, a, b);
    case JIT_F16: return tj_f32_to_half(r, tj_float_op(r, tj_half_to_f32(r, a), tj_half_to_f32(r, b)));
    case JIT_BF16:
        return tj_f32_to_bf16(r, tj_float_op(r, tj_bf16_to_f32(r, a), tj_bf16_to_f32(r, b)));
    default: return tj_int_op(r, a, b);
    }
}

static LLVMValueRef tj_widen(const tj_rir *r, LLVMValueRef v)
{
    return tj_unsigned(r->p->dtype) ? LLVMBuildZExt(r->e->b, v, r->e->i64, "wide")
                                    : LLVMBuildSExt(r->e->b, v, r->e->i64, "wide");
}

/* The element type's neutral value of the reduction, as runtime/exec/reduce.c
 * defines it (its bytes, here a constant). */
static LLVMValueRef tj_neutral(const tj_rir *r, LLVMTypeRef t)
{
    unsigned char bytes[8] = {0};
    uint64_t bits = 0;
    tj_reduce_neutral(r->p, bytes, 1);
    if (r->p->dtype == JIT_F32 || r->p->dtype == JIT_F64) { /* +-inf, 1 or 0: exact */
        double v;
        if (r->p->dtype == JIT_F32) {
            float f;
            memcpy(&f, bytes, sizeof f);
            v = f;
        } else {
            memcpy(&v, bytes, sizeof v);
        }
        return LLVMConstReal(t, v);
    }
    for (int i = r->p->elem_size - 1; i >= 0; i--)
        bits = bits << 8 | bytes[i]; /* little-endian */
    return LLVMConstInt(t, bits, 0);
}

/* i64 slots of the scratch: counts at [0, elems), wide sums after them. */
static LLVMValueRef tj_slot(const tj_rir *r, const tj_reduce_at *at, LLVMValueRef q, int sum)
{
    tj_emit *e = r->e;
    LLVMValueRef elems = at->out_elems ? at->out_elems : tj_i64(e, r->p->out_bytes / r->p->elem_size);
    LLVMValueRef n = sum ? tj_add(e, q, elems, "sum.q") : q;
    LLVMValueRef p = tj_byte_gep(e, at->scratch, tj_mul(e, n, 8, "slot.off"), "slot");
    return LLVMBuildPointerCast(e->b, p, LLVMPointerType(e->i64, 0), "");
}

static void tj_store(const tj_rir *r, LLVMValueRef v, LLVMValueRef ptr, LLVMTypeRef t)
{
    LLVMValueRef to = LLVMBuildPointerCast(r->e->b, ptr, LLVMPointerType(t, 0), "");
    LLVMSetAlignment(LLVMBuildStore(r->e->b, v, to), 1);
}

static LLVMValueRef tj_load_slot(const tj_rir *r, LLVMValueRef slot)
{
    return LLVMBuildLoad2(r->e->b, r->e->i64, slot, "slot.v");
}

/* The mean of a float sum (in out) over count, in the element type. */
static LLVMValueRef tj_float_mean(const tj_rir *r, LLVMValueRef v, LLVMValueRef count)
{
    LLVMBuilderRef bd = r->e->b;
    switch (r->p->dtype) {
    case JIT_F64: return LLVMBuildFDiv(bd, v, LLVMBuildSIToFP(bd, count, r->f64, ""), "mean");
    case JIT_F32: return LLVMBuildFDiv(bd, v, LLVMBuildSIToFP(bd, count, r->f32, ""), "mean");
    case JIT_F16:
        return tj_f32_to_half(r, LLVMBuildFDiv(bd, tj_half_to_f32(r, v),
                                               LLVMBuildSIToFP(bd, count, r->f32, ""), "mean"));
    default:
        return tj_f32_to_bf16(r, LLVMBuildFDiv(bd, tj_bf16_to_f32(r, v),
                                               LLVMBuildSIToFP(bd, count, r->f32, ""), "mean"));
    }
}

/* floor(sum / count) (count > 0), cut to the element type. */
static LLVMValueRef tj_int_mean(const tj_rir *r, LLVMValueRef sum, LLVMValueRef count,
                                LLVMTypeRef t)
{
    LLVMBuilderRef bd = r->e->b;
    LLVMValueRef q;
    if (tj_unsigned(r->p->dtype)) {
        q = LLVMBuildUDiv(bd, sum, count, "mean");
    } else {
        q = LLVMBuildSDiv(bd, sum, count, "quot");
        LLVMValueRef inexact = LLVMBuildICmp(bd, LLVMIntNE, LLVMBuildSRem(bd, sum, count, ""),
                                             tj_i64(r->e, 0), "");
        LLVMValueRef neg = LLVMBuildICmp(bd, LLVMIntSLT, sum, tj_i64(r->e, 0), "");
        LLVMValueRef down = LLVMBuildZExt(bd, LLVMBuildAnd(bd, inexact, neg, ""), r->e->i64, "");
        q = LLVMBuildSub(bd, q, down, "mean"); /* toward negative infinity */
    }
    return LLVMBuildTrunc(bd, q, t, "mean.t");
}

static int tj_wide(const tj_plan *p)
{
    return p->reduction == JIT_REDUCTION_MEAN && tj_reduce_wide_sum(p);
}

/* Element e (at byte off of the block) in one pass. */
static void tj_pass_one(const tj_rir *r, tj_reduce_pass pass, const tj_reduce_at *at,
                        LLVMValueRef e_idx, LLVMValueRef off)
{
    tj_emit *e = r->e;
    const tj_plan *p = r->p;
    LLVMTypeRef t = tj_elem_type(r);
    int mean = p->reduction == JIT_REDUCTION_MEAN, wide = tj_wide(p);
    LLVMValueRef pd = tj_byte_gep(e, at->dst, off, "red.dst");
    LLVMValueRef q = mean ? tj_add(e, at->first, e_idx, "red.q") : NULL;
    LLVMValueRef count = mean ? tj_slot(r, at, q, 0) : NULL, sum = wide ? tj_slot(r, at, q, 1) : NULL;
    if (pass == TJ_PASS_START) {
        if (count)
            LLVMBuildStore(e->b, tj_i64(e, p->no_init_val ? 0 : 1), count);
        if (sum)
            LLVMBuildStore(e->b, p->no_init_val ? tj_i64(e, 0) : tj_widen(r, tj_load(e, t, pd, "")),
                           sum);
        else if (p->no_init_val)
            tj_store(r, tj_neutral(r, t), pd, t);
        return;
    }
    if (pass == TJ_PASS_FINISH) {
        LLVMValueRef c = tj_load_slot(r, count);
        LLVMValueRef hit = LLVMBuildICmp(e->b, LLVMIntSGT, c, tj_i64(e, 0), "hit");
        LLVMValueRef safe = LLVMBuildSelect(e->b, hit, c, tj_i64(e, 1), "count");
        LLVMValueRef old = tj_load(e, t, pd, "red.out");
        LLVMValueRef m = wide ? tj_int_mean(r, tj_load_slot(r, sum), safe, t)
                              : tj_float_mean(r, old, safe);
        tj_store(r, LLVMBuildSelect(e->b, hit, m, old, "red.mean"), pd, t);
        LLVMBuildStore(e->b, tj_i64(e, 0), count); /* divided once */
        return;
    }
    LLVMValueRef u = tj_load(e, t, tj_byte_gep(e, at->src, off, "red.src"), "red.upd");
    if (count)
        LLVMBuildStore(e->b, LLVMBuildAdd(e->b, tj_load_slot(r, count), tj_i64(e, 1), ""), count);
    if (sum)
        LLVMBuildStore(e->b, LLVMBuildAdd(e->b, tj_load_slot(r, sum), tj_widen(r, u), ""), sum);
    else
        tj_store(r, tj_combine(r, tj_load(e, t, pd, "red.out"), u), pd, t);
}

int64_t tj_ir_reduce_slot_bytes(const tj_plan *p)
{
    return p->reduction != JIT_REDUCTION_MEAN ? 0 : 8 * (tj_wide(p) ? 2 : 1);
}

int64_t tj_ir_reduce_scratch_bytes(const tj_plan *p)
{
    /* an empty out still has code for its (never valid) tuples, which
     * addresses slots: one, never used */
    int64_t elems = p->out_bytes / p->elem_size;
    return (elems ? elems : 1) * tj_ir_reduce_slot_bytes(p);
}

void tj_ir_reduce_block(tj_emit *e, const tj_plan *p, tj_reduce_pass pass,
                        const tj_reduce_at *at)
{
    tj_rir r = {e, p, LLVMFloatTypeInContext(e->ctx), LLVMDoubleTypeInContext(e->ctx)};
    tj_loop l;
    if (at->block_elems) { /* the call's: a loop of run-time trips, vectorized all the same */
        tj_loop_begin_n(e, &l, "elem", at->block_elems, NULL);
        tj_pass_one(&r, pass, at, l.iv, tj_mul(e, l.iv, p->elem_size, "elem.off"));
        tj_loop_end(e, &l, NULL);
        return;
    }
    int64_t n = p->block_bytes / p->elem_size;
    if (n <= TJ_IR_REDUCE_UNROLL) {
        for (int64_t i = 0; i < n; i++)
            tj_pass_one(&r, pass, at, tj_i64(e, i), tj_i64(e, i * p->elem_size));
        return;
    }
    tj_loop_begin(e, &l, "elem", n, NULL);
    tj_pass_one(&r, pass, at, l.iv, tj_mul(e, l.iv, p->elem_size, "elem.off"));
    tj_loop_end(e, &l, NULL);
}
