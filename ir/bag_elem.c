/*
 * Element types and the small builders of a bag's IR: widen and narrow,
 * f16/bf16 bits, neutral values, combine and weigh.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- small builders --------------------------------------------------- */

LLVMTypeRef tj_bir_vec(LLVMTypeRef t, int64_t n)
{
    return LLVMVectorType(t, (unsigned)n);
}

/* the constant c (an integer's bits, or a float's value) in n lanes of t */
static LLVMValueRef tj_splat_const(LLVMTypeRef t, int64_t n, LLVMValueRef c)
{
    LLVMValueRef lanes[64];
    for (int64_t i = 0; i < n; i++)
        lanes[i] = c;
    (void)t;
    return LLVMConstVector(lanes, (unsigned)n);
}

/* A call of the runtime's function `name` (an i32 status) with args, its
 * type from theirs; NULL for more than TJ_BIR_MAX_RT_ARGS of them (the
 * callers pass constant counts within it). */
LLVMValueRef tj_bir_call_rt(tj_bir *k, const char *name, LLVMValueRef *args, unsigned n,
                            const char *what)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[TJ_BIR_MAX_RT_ARGS];
    if (n > TJ_BIR_MAX_RT_ARGS)
        return NULL;
    for (unsigned i = 0; i < n; i++)
        params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, n, 0);
    return LLVMBuildCall2(e->b, fty, tj_runtime_fn(e, name, fty), args, n, what);
}

LLVMValueRef tj_bir_splat_value(tj_bir *k, LLVMValueRef x, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vt = tj_bir_vec(LLVMTypeOf(x), n);
    LLVMValueRef one = LLVMBuildInsertElement(e->b, LLVMGetUndef(vt), x, tj_i32(e, 0), "");
    LLVMValueRef zeros = LLVMConstNull(tj_bir_vec(e->i32, n));
    return LLVMBuildShuffleVector(e->b, one, LLVMGetUndef(vt), zeros, "splat");
}

static LLVMValueRef tj_c32v(tj_bir *k, uint32_t v, int64_t n)
{
    return tj_splat_const(k->e.i32, n, LLVMConstInt(k->e.i32, v, 0));
}

void tj_bir_store_at(tj_bir *k, LLVMValueRef v, LLVMValueRef ptr, int nt)
{
    tj_emit *e = &k->e;
    LLVMValueRef to = LLVMBuildPointerCast(e->b, ptr, LLVMPointerType(LLVMTypeOf(v), 0), "");
    LLVMValueRef st = LLVMBuildStore(e->b, v, to);
    if (!nt) {
        LLVMSetAlignment(st, 1);
        return;
    }
    /* the streaming path runs only for a 64-byte aligned out with rows of
     * whole vectors: every store is aligned to its size */
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned bytes = LLVMGetVectorSize(t) * (unsigned)k->esize;
    LLVMSetAlignment(st, bytes);
    LLVMValueRef one = LLVMConstInt(e->i32, 1, 0);
    LLVMSetMetadata(st, LLVMGetMDKindIDInContext(e->ctx, "nontemporal", 11),
                    LLVMMDNodeInContext(e->ctx, &one, 1));
}

/* tj_loop_end, then the counter's next value passed through llvm.expect,
 * which the code generator replaces by its operand: scalar evolution sees
 * no induction variable then, and loop strength reduction, a fifth of a
 * bag kernel's code generation, leaves the loop as it is (its addresses
 * are base + index x scale, which x86 addresses in one operand); see
 * docs/performance.md, 'Compile time of a bag kernel'. */
/* llvm.expect(v, 0), an i64 the code generator replaces by v */
static LLVMValueRef tj_bir_expect(tj_bir *k, LLVMValueRef v)
{
    tj_emit *e = &k->e;
    LLVMTypeRef ty = e->i64;
    unsigned id = LLVMLookupIntrinsicID("llvm.expect", 11);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &ty, 1);
    LLVMValueRef args[2] = {v, tj_i64(e, 0)};
    return LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, &ty, 1), fn, args, 2, "counter");
}

LLVMValueRef tj_bir_loop_close(tj_bir *k, tj_loop *l, LLVMValueRef carry_next)
{
    tj_emit *e = &k->e;
    LLVMValueRef out = tj_loop_end(e, l, carry_next);
    LLVMValueRef next = LLVMGetIncomingValue(l->iv, 1); /* the latch's */
    LLVMBasicBlockRef at = LLVMGetInsertBlock(e->b);
    LLVMPositionBuilderBefore(e->b, LLVMGetNextInstruction(next));
    LLVMValueRef hidden = tj_bir_expect(k, LLVMGetUndef(e->i64));
    LLVMReplaceAllUsesWith(next, hidden);
    LLVMSetOperand(hidden, 0, next);
    LLVMPositionBuilderAtEnd(e->b, at);
    return out;
}

void tj_bir_while_begin(tj_bir *k, tj_loop *l, const char *name, LLVMValueRef n)
{
    tj_emit *e = &k->e;
    char buf[64];
    l->name = name;
    l->end = n;
    l->carry = l->carry2 = NULL;
    l->pre = LLVMGetInsertBlock(e->b);
    LLVMBasicBlockRef head = tj_block_of(e, name, "head");
    l->body = tj_block_of(e, name, "loop");
    l->exit = tj_block_of(e, name, "exit");
    LLVMBuildBr(e->b, head);
    LLVMPositionBuilderAtEnd(e->b, head);
    l->iv = LLVMBuildPhi(e->b, e->i64, name);
    LLVMValueRef zero = tj_i64(e, 0);
    LLVMAddIncoming(l->iv, &zero, &l->pre, 1);
    snprintf(buf, sizeof buf, "%s.done", name);
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSGE, l->iv, n, buf), l->exit, l->body);
    LLVMPositionBuilderAtEnd(e->b, l->body);
}

void tj_bir_while_close(tj_bir *k, tj_loop *l)
{
    tj_emit *e = &k->e;
    char buf[64];
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->b);
    snprintf(buf, sizeof buf, "%s.next", l->name);
    LLVMValueRef counter = tj_bir_expect(k, LLVMBuildNUWAdd(e->b, l->iv, tj_i64(e, 1), buf));
    LLVMAddIncoming(l->iv, &counter, &latch, 1);
    LLVMBuildBr(e->b, LLVMGetInstructionParent(l->iv));
    LLVMPositionBuilderAtEnd(e->b, l->exit);
}

/* a value of type t kept in an alloca of the function's entry */
LLVMValueRef tj_bir_slot(tj_bir *k, LLVMTypeRef t, const char *name)
{
    tj_emit *e = &k->e;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(e->ctx);
    LLVMValueRef first = LLVMGetFirstInstruction(k->allocas);
    if (first)
        LLVMPositionBuilderBefore(b, first);
    else
        LLVMPositionBuilderAtEnd(b, k->allocas);
    LLVMValueRef a = LLVMBuildAlloca(b, t, name);
    LLVMDisposeBuilder(b);
    return a;
}

LLVMValueRef tj_bir_get(tj_bir *k, LLVMValueRef slot, LLVMTypeRef t)
{
    return LLVMBuildLoad2(k->e.b, t, slot, "");
}

/* the element at position i of an index-typed buffer, widened to i64 */
LLVMValueRef tj_bir_load_idx(tj_bir *k, LLVMValueRef buf, LLVMValueRef i, const char *name)
{
    tj_emit *e = &k->e;
    int size = jit_dtype_size(k->g->index_type);
    LLVMValueRef v = tj_load(e, k->idx_ty, tj_byte_gep(e, buf, tj_mul(e, i, size, ""), ""), name);
    if (size == 8)
        return v;
    return k->idx_signed ? LLVMBuildSExt(e->b, v, e->i64, name)
                         : LLVMBuildZExt(e->b, v, e->i64, name);
}

/* buf[i] where cond holds, else 0: where it does not, the load reads a
 * zero of the stack instead of buf (which may then be NULL), so there is
 * no branch: code generation pays for every block */
LLVMValueRef tj_bir_load_idx_if(tj_bir *k, LLVMValueRef cond, LLVMValueRef buf,
                                LLVMValueRef i, const char *name)
{
    tj_emit *e = &k->e;
    if (LLVMIsAConstantInt(cond))
        return LLVMConstIntGetZExtValue(cond) ? tj_bir_load_idx(k, buf, i, name) : tj_i64(e, 0);
    LLVMValueRef zero = tj_bir_slot(k, e->i64, "zero");
    LLVMBuildStore(e->b, tj_i64(e, 0), zero);
    int size = jit_dtype_size(k->g->index_type);
    LLVMValueRef some = tj_byte_gep(e, buf, tj_mul(e, i, size, ""), "");
    /* of one pointer type where LLVM's pointers are typed (LLVM 14) */
    zero = LLVMBuildPointerCast(e->b, zero, LLVMTypeOf(some), "");
    LLVMValueRef at = LLVMBuildSelect(e->b, cond, some, zero, "");
    LLVMValueRef v = tj_load(e, k->idx_ty, at, name);
    if (size == 8)
        return v;
    return k->idx_signed ? LLVMBuildSExt(e->b, v, e->i64, name)
                         : LLVMBuildZExt(e->b, v, e->i64, name);
}

static LLVMValueRef tj_is_nan(tj_bir *k, LLVMValueRef v)
{
    return LLVMBuildFCmp(k->e.b, LLVMRealUNO, v, v, "is.nan");
}

/* ---- element types ---------------------------------------------------- */

/* n table elements (as loaded) to the accumulator's type: exact */
LLVMValueRef tj_bir_widen(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef at = tj_bir_vec(k->aty, n);
    switch (k->g->dtype) {
    case JIT_F32:
    case JIT_F64: return v;
    case JIT_F16: {
        LLVMTypeRef h = tj_bir_vec(LLVMHalfTypeInContext(e->ctx), n);
        return LLVMBuildFPExt(e->b, LLVMBuildBitCast(e->b, v, h, ""), at, "f16.wide");
    }
    case JIT_BF16: {
        LLVMValueRef w = LLVMBuildZExt(e->b, v, tj_bir_vec(e->i32, n), "");
        return LLVMBuildBitCast(e->b, LLVMBuildShl(e->b, w, tj_c32v(k, 16, n), ""), at,
                                "bf16.wide");
    }
    default:
        return k->usigned ? LLVMBuildZExt(e->b, v, at, "wide") : LLVMBuildSExt(e->b, v, at, "wide");
    }
}

/* f32 to f16 bits: nearest even, a NaN the quiet NaN of its sign
 * (runtime/half.h: fptrunc alone would keep its payload) */
static LLVMValueRef tj_to_f16(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef i16 = LLVMInt16TypeInContext(e->ctx), v16 = tj_bir_vec(i16, n);
    LLVMValueRef h = LLVMBuildFPTrunc(e->b, v, tj_bir_vec(LLVMHalfTypeInContext(e->ctx), n), "");
    h = LLVMBuildBitCast(e->b, h, v16, "f16.bits");
    LLVMValueRef x = LLVMBuildBitCast(e->b, v, tj_bir_vec(e->i32, n), "");
    LLVMValueRef sign = LLVMBuildAnd(e->b, LLVMBuildLShr(e->b, x, tj_c32v(k, 16, n), ""),
                                     tj_c32v(k, 0x8000, n), "");
    LLVMValueRef qnan = LLVMBuildTrunc(e->b, LLVMBuildOr(e->b, sign, tj_c32v(k, 0x7e00, n), ""),
                                       v16, "f16.nan");
    return LLVMBuildSelect(e->b, tj_is_nan(k, v), qnan, h, "f16");
}

/* f32 to bf16 bits: runtime/half.h's tj_float_to_bf16, lane by lane.
 * A float sum's or mean's fast path (k->fast_nan) rounds a NaN as a
 * number: its accumulators are sums of bf16 rows widened (or of their
 * products with bf16 weights widened), a mean's divided by a count, and a
 * NaN any of these gives (an operand's, quieted, or the default NaN) has
 * the low 16 bits its operands' NaNs had, zero, so adding 0x8000 at most
 * carries nothing out of them: the lane stays a NaN, and the redo, which
 * finds its bags by the NaNs in their rows (tj_bag_ref_redo_nan), writes
 * them as the reference does. Three vector instructions fewer a vector. */
static LLVMValueRef tj_to_bf16(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMValueRef x = LLVMBuildBitCast(e->b, v, tj_bir_vec(e->i32, n), "");
    LLVMValueRef hi = LLVMBuildLShr(e->b, x, tj_c32v(k, 16, n), "");
    LLVMValueRef up = LLVMBuildAdd(
        e->b, LLVMBuildAdd(e->b, x, tj_c32v(k, 0x7fff, n), ""),
        LLVMBuildAnd(e->b, hi, tj_c32v(k, 1, n), ""), "");
    LLVMValueRef bits = LLVMBuildLShr(e->b, up, tj_c32v(k, 16, n), "");
    if (!k->fast_nan) {
        LLVMValueRef nan = tj_is_nan(k, v); /* a float compare: less to select than the bits' */
        bits = LLVMBuildSelect(e->b, nan, LLVMBuildOr(e->b, hi, tj_c32v(k, 0x40, n), ""), bits,
                               "");
    }
    return LLVMBuildTrunc(e->b, bits, tj_bir_vec(LLVMInt16TypeInContext(e->ctx), n), "bf16");
}

/* accumulators to table elements: rounded once, nearest even; integers cut */
LLVMValueRef tj_bir_narrow(tj_bir *k, LLVMValueRef v, int64_t n)
{
    switch (k->g->dtype) {
    case JIT_F32:
    case JIT_F64: return v;
    case JIT_F16: return tj_to_f16(k, v, n);
    case JIT_BF16: return tj_to_bf16(k, v, n);
    default:
        return k->esize == 8 ? v : LLVMBuildTrunc(k->e.b, v, tj_bir_vec(k->ety, n), "narrow");
    }
}

/* the accumulator's start: +0, or the smallest value for max */
LLVMValueRef tj_bir_neutral(tj_bir *k, int64_t n)
{
    LLVMTypeRef t = tj_bir_vec(k->aty, n);
    if (k->g->reduction != JIT_REDUCTION_MAX || (!k->afloat && k->usigned))
        return LLVMConstNull(t);
    LLVMValueRef c = k->afloat ? LLVMConstReal(k->aty, -__builtin_inf())
                               : LLVMConstInt(k->aty, (unsigned long long)INT64_MIN, 1);
    return tj_splat_const(k->aty, n, c);
}

/* acc combined with x: sum (a's NaN first, see the top), or max (a's NaN,
 * else x's, else the larger, a on a tie) */
LLVMValueRef tj_bir_combine(tj_bir *k, LLVMValueRef a, LLVMValueRef x)
{
    LLVMBuilderRef b = k->e.b;
    if (k->g->reduction == JIT_REDUCTION_MAX) {
        if (!k->afloat)
            return LLVMBuildSelect(
                b, LLVMBuildICmp(b, k->usigned ? LLVMIntUGT : LLVMIntSGT, x, a, ""), x, a, "max");
        LLVMValueRef v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, a, ""), x, a, "");
        v = LLVMBuildSelect(b, tj_is_nan(k, x), x, v, "");
        return LLVMBuildSelect(b, tj_is_nan(k, a), a, v, "max");
    }
    if (!k->afloat)
        return LLVMBuildAdd(b, a, x, "sum");
    if (k->fast_nan)
        return LLVMBuildFAdd(b, a, x, "sum");
#if !TJ_NAN_SELECTS /* emit.h: x86's NaN is the reference's once a's stands for both */
    return LLVMBuildFAdd(b, a, LLVMBuildSelect(b, tj_is_nan(k, a), a, x, ""), "sum");
#else
    return tj_reference_nan(&k->e, LLVMBuildFAdd(b, a, x, "sum"), a, x);
#endif
}

/* row x weight (the row's NaN first), rounded to the accumulator type */
LLVMValueRef tj_bir_weigh(tj_bir *k, LLVMValueRef x, LLVMValueRef w)
{
    LLVMBuilderRef b = k->e.b;
    if (!k->afloat)
        return LLVMBuildMul(b, x, w, "weighted");
    if (k->fast_nan)
        return LLVMBuildFMul(b, x, w, "weighted");
#if !TJ_NAN_SELECTS
    return LLVMBuildFMul(b, x, LLVMBuildSelect(b, tj_is_nan(k, x), x, w, ""), "weighted");
#else
    return tj_reference_nan(&k->e, LLVMBuildFMul(b, x, w, "weighted"), x, w);
#endif
}
