#include "emit.h"

#include <llvm-c/Analysis.h>

#include <stdio.h>
#include <string.h>

LLVMBasicBlockRef tj_block_of(const tj_emit *e, const char *name, const char *suffix)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s.%s", name, suffix);
    return tj_block(e, buf);
}

void tj_loop_begin(const tj_emit *e, tj_loop *l, const char *name, int64_t trip,
                   LLVMValueRef carry_init)
{
    char buf[64];
    l->name = name;
    l->trip = trip;
    l->pre = LLVMGetInsertBlock(e->b);
    snprintf(buf, sizeof buf, "%s.loop", name);
    l->body = tj_block(e, buf);
    LLVMBuildBr(e->b, l->body);
    LLVMPositionBuilderAtEnd(e->b, l->body);
    l->end = NULL;
    l->iv = LLVMBuildPhi(e->b, e->i64, name);
    l->carry2 = NULL;
    LLVMValueRef zero = tj_i64(e, 0);
    LLVMAddIncoming(l->iv, &zero, &l->pre, 1);
    l->carry = NULL;
    if (carry_init) {
        snprintf(buf, sizeof buf, "%s.carry", name);
        l->carry = LLVMBuildPhi(e->b, LLVMTypeOf(carry_init), buf);
        LLVMAddIncoming(l->carry, &carry_init, &l->pre, 1);
    }
}

void tj_loop_begin_range(const tj_emit *e, tj_loop *l, const char *name, LLVMValueRef begin,
                         LLVMValueRef end)
{
    char buf[64];
    l->name = name;
    l->end = end;
    l->carry = l->carry2 = NULL;
    l->pre = LLVMGetInsertBlock(e->b);
    l->body = tj_block_of(e, name, "loop");
    l->exit = tj_block_of(e, name, "exit");
    snprintf(buf, sizeof buf, "%s.empty", name);
    LLVMValueRef empty = LLVMBuildICmp(e->b, LLVMIntSGE, begin, end, buf);
    LLVMBuildCondBr(e->b, empty, l->exit, l->body);
    LLVMPositionBuilderAtEnd(e->b, l->body);
    l->iv = LLVMBuildPhi(e->b, e->i64, name);
    LLVMAddIncoming(l->iv, &begin, &l->pre, 1);
}

void tj_loop_begin_n(const tj_emit *e, tj_loop *l, const char *name, LLVMValueRef n,
                     LLVMValueRef carry_init)
{
    char buf[64];
    tj_loop_begin_range(e, l, name, tj_i64(e, 0), n);
    l->carry_init = carry_init;
    if (carry_init) {
        snprintf(buf, sizeof buf, "%s.carry", name);
        l->carry = LLVMBuildPhi(e->b, LLVMTypeOf(carry_init), buf);
        LLVMAddIncoming(l->carry, &carry_init, &l->pre, 1);
    }
}

LLVMValueRef tj_loop_carry2(const tj_emit *e, tj_loop *l, LLVMValueRef init)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s.carry2", l->name);
    LLVMBasicBlockRef at = LLVMGetInsertBlock(e->b);
    LLVMValueRef first = LLVMGetFirstInstruction(l->body);
    LLVMPositionBuilderBefore(e->b, first); /* phis stay at the block's top */
    l->carry2 = LLVMBuildPhi(e->b, LLVMTypeOf(init), buf);
    LLVMPositionBuilderAtEnd(e->b, at);
    l->carry2_init = init;
    l->carry2_next = l->carry2_out = init;
    LLVMAddIncoming(l->carry2, &init, &l->pre, 1);
    return l->carry2;
}

/* The second carried value after the loop: a phi of its initial value
 * and the body's where the loop may be skipped. */
static void tj_loop_carry2_out(const tj_emit *e, tj_loop *l, LLVMBasicBlockRef latch)
{
    char buf[64];
    LLVMAddIncoming(l->carry2, &l->carry2_next, &latch, 1);
    if (!l->end) {
        l->carry2_out = l->carry2_next;
        return;
    }
    snprintf(buf, sizeof buf, "%s.out2", l->name);
    LLVMValueRef out = LLVMBuildPhi(e->b, LLVMTypeOf(l->carry2_init), buf);
    LLVMValueRef vals[2] = {l->carry2_init, l->carry2_next};
    LLVMBasicBlockRef from[2] = {l->pre, latch};
    LLVMAddIncoming(out, vals, from, 2);
    l->carry2_out = out;
}

LLVMValueRef tj_loop_end(const tj_emit *e, tj_loop *l, LLVMValueRef carry_next)
{
    char buf[64];
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->b);
    snprintf(buf, sizeof buf, "%s.next", l->name);
    LLVMValueRef next = LLVMBuildNUWAdd(e->b, l->iv, tj_i64(e, 1), buf);
    LLVMAddIncoming(l->iv, &next, &latch, 1);
    if (l->carry)
        LLVMAddIncoming(l->carry, &carry_next, &latch, 1);
    snprintf(buf, sizeof buf, "%s.done", l->name);
    LLVMValueRef done =
        LLVMBuildICmp(e->b, LLVMIntEQ, next, l->end ? l->end : tj_i64(e, l->trip), buf);
    snprintf(buf, sizeof buf, "%s.exit", l->name);
    LLVMBasicBlockRef exit = l->end ? l->exit : tj_block(e, buf);
    LLVMBuildCondBr(e->b, done, exit, l->body);
    LLVMPositionBuilderAtEnd(e->b, exit);
    if (l->carry2)
        tj_loop_carry2_out(e, l, latch);
    if (l->end && l->carry) { /* skipped or run: the carry either way */
        snprintf(buf, sizeof buf, "%s.out", l->name);
        LLVMValueRef out = LLVMBuildPhi(e->b, LLVMTypeOf(carry_next), buf);
        LLVMValueRef vals[2] = {l->carry_init, carry_next};
        LLVMBasicBlockRef from[2] = {l->pre, latch};
        LLVMAddIncoming(out, vals, from, 2);
        return out;
    }
    return carry_next;
}

void tj_add_attr(const tj_emit *e, LLVMValueRef fn, unsigned idx, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    if (kind == 0)
        return;
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(e->ctx, kind, 0));
}

void tj_add_string_attr(const tj_emit *e, LLVMValueRef fn, const char *key, const char *value)
{
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(e->ctx, key, (unsigned)strlen(key), value,
                                                      (unsigned)strlen(value)));
}

LLVMValueRef tj_runtime_fn(const tj_emit *e, const char *name, LLVMTypeRef fty)
{
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    return fn ? fn : LLVMAddFunction(e->mod, name, fty);
}

LLVMModuleRef tj_emit_finish(tj_emit *e, char *why, size_t why_len)
{
    LLVMDisposeBuilder(e->b);
    char *msg = NULL;
    if (LLVMVerifyModule(e->mod, LLVMReturnStatusAction, &msg)) {
        snprintf(why, why_len, "generated IR failed verification: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(e->mod);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    return e->mod;
}

#if TJ_NAN_SELECTS
/* c (an integer constant) in the shape of t: itself, or splat over t's lanes */
static LLVMValueRef tj_const_shaped(const tj_emit *e, LLVMTypeRef t, LLVMValueRef c)
{
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return c;
    /* a splat of any width (insert, then a shuffle of lane 0), which the
     * builder folds into the constant: a lane array would cap the width */
    LLVMValueRef one = LLVMBuildInsertElement(e->b, LLVMGetPoison(t), c, tj_i32(e, 0), "");
    LLVMTypeRef mask = LLVMVectorType(e->i32, LLVMGetVectorSize(t));
    return LLVMBuildShuffleVector(e->b, one, LLVMGetPoison(t), LLVMConstNull(mask), "");
}

LLVMValueRef tj_reference_nan(const tj_emit *e, LLVMValueRef v, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef ft = LLVMTypeOf(v);
    int vec = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
    int dbl = LLVMGetTypeKind(vec ? LLVMGetElementType(ft) : ft) == LLVMDoubleTypeKind;
    LLVMTypeRef is = dbl ? e->i64 : e->i32;
    LLVMTypeRef it = vec ? LLVMVectorType(is, LLVMGetVectorSize(ft)) : is;
    LLVMValueRef quiet =
        tj_const_shaped(e, it, LLVMConstInt(is, dbl ? 0x0008000000000000ull : 0x00400000u, 0));
    LLVMValueRef dflt = LLVMBuildBitCast(
        e->b, tj_const_shaped(e, it, LLVMConstInt(is, dbl ? 0xfff8000000000000ull : 0xffc00000u, 0)),
        ft, "nan.default");
    LLVMValueRef qa = LLVMBuildBitCast(
        e->b, LLVMBuildOr(e->b, LLVMBuildBitCast(e->b, a, it, ""), quiet, ""), ft, "nan.a");
    LLVMValueRef qb = LLVMBuildBitCast(
        e->b, LLVMBuildOr(e->b, LLVMBuildBitCast(e->b, b, it, ""), quiet, ""), ft, "nan.b");
    LLVMValueRef b_nan = LLVMBuildFCmp(e->b, LLVMRealUNO, b, b, "");
    LLVMValueRef a_nan = LLVMBuildFCmp(e->b, LLVMRealUNO, a, a, "");
    LLVMValueRef v_nan = LLVMBuildFCmp(e->b, LLVMRealUNO, v, v, "");
    LLVMValueRef nan = LLVMBuildSelect(e->b, b_nan, qb, dflt, "");
    nan = LLVMBuildSelect(e->b, a_nan, qa, nan, "nan");
    return LLVMBuildSelect(e->b, v_nan, nan, v, "nan.rule");
}
#endif
