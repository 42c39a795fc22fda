/*
 * A split kernel (TJ_IR_SPLIT_MIN_WORK): its check function (the
 * validation alone), its range function (the copies of units
 * [begin, end) with the whole kernel's loop bodies), and the main that
 * calls them, running the range on the calling thread or over the pool;
 * a dynamic kernel's too, which runs its whole body when the call is
 * small. A static kernel that is not split gets the check and range
 * functions for the parts API.
 */
#include <stdio.h>

#include "kernel_internal.h"

static char *tj_suffixed(const char *name, const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", name, suffix);
    return buf;
}

/* A check function's return: 0, or TJ_CHECK_NEGATIVE where neg (sign
 * tracked) says an index is negative. */
static void tj_emit_check_return(tj_kir *k, LLVMValueRef neg)
{
    tj_emit *e = &k->e;
    if (!neg) {
        LLVMBuildRet(e->b, tj_i32(e, 0));
        return;
    }
    LLVMBuildRet(e->b, LLVMBuildSelect(e->b, neg, tj_i32(e, TJ_CHECK_NEGATIVE), tj_i32(e, 0),
                                       "check.result"));
}

/* i32 NAME_check(indices): the validation pass alone. */
LLVMValueRef tj_emit_check_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved = k->indices;
    LLVMTypeRef fty = LLVMFunctionType(e->i32, &e->ptr, 1, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_CHECK_SUFFIX, buf, sizeof buf), fty);
    k->indices = LLVMGetParam(e->fn, 0);
    LLVMSetValueName2(k->indices, "indices", 7);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    tj_emit_check_return(k, tj_emit_validation(k));
    k->indices = saved;
    return e->fn;
}

/* With TJ_RANGE_CHECK in flags, a range function validates tuples
 * [begin, end) and returns what it found (tj_emit_check_part). */
static void tj_emit_check_mode(tj_kir *k, LLVMValueRef flags)
{
    tj_emit *e = &k->e;
    LLVMValueRef mode = LLVMBuildAnd(e->b, flags, tj_i32(e, TJ_RANGE_CHECK), "");
    LLVMBasicBlockRef check = tj_block(e, "part.check"), copy = tj_block(e, "part.copy");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntNE, mode, tj_i32(e, 0), "checking"), check,
                    copy);
    LLVMPositionBuilderAtEnd(e->b, check);
    LLVMBuildRet(e->b, tj_emit_check_part(k));
    LLVMPositionBuilderAtEnd(e->b, copy);
}

/* i32 NAME_range(data, indices, updates, out, begin, end, flags): the
 * copies of units [begin, end), indices already validated (flags:
 * TJ_RANGE_NONNEG); a dynamic kernel's takes the call's plan before the
 * flags, and its units are that plan's. */
LLVMValueRef tj_emit_range_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved[4] = {k->data, k->indices, k->updates, k->out};
    LLVMTypeRef params[8] = {e->ptr, e->ptr, e->ptr, e->ptr, e->i64, e->i64, e->ptr, e->i32};
    if (!k->dyn)
        params[6] = e->i32;
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, k->dyn ? 8 : 7, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_RANGE_SUFFIX, buf, sizeof buf), fty);
    tj_bind_buffers(k, e->fn, 1);
    if (!k->p->has_updates)
        k->updates = NULL;
    k->begin = LLVMGetParam(e->fn, 4);
    k->end = LLVMGetParam(e->fn, 5);
    LLVMSetValueName2(k->begin, "begin", 5);
    LLVMSetValueName2(k->end, "end", 3);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    if (k->dyn)
        tj_emit_dyn_words(k, LLVMGetParam(e->fn, 6));
    if (k->st.parallel_checks)
        tj_emit_check_mode(k, LLVMGetParam(e->fn, k->dyn ? 7 : 6));
    LLVMValueRef neg = NULL;
    if (tj_tracks_sign(k)) {
        LLVMValueRef flags = LLVMGetParam(e->fn, k->dyn ? 7 : 6);
        LLVMValueRef nonneg = LLVMBuildAnd(e->b, flags, tj_i32(e, TJ_RANGE_NONNEG), "nonneg");
        neg = LLVMBuildICmp(e->b, LLVMIntEQ, nonneg, tj_i32(e, 0), "may.be.negative");
    }
    tj_emit_data_copy(k);
    tj_emit_passes_by_sign(k, neg);
    LLVMBuildRet(e->b, tj_i32(e, 0));
    k->begin = k->end = NULL;
    k->data = saved[0], k->indices = saved[1], k->updates = saved[2], k->out = saved[3];
    return e->fn;
}

/* After a call of the check function (status st): returns st unless it is
 * 0 or TJ_CHECK_NEGATIVE, and continues with the range function's flags. */
static LLVMValueRef tj_emit_check_flags(tj_kir *k, LLVMValueRef st)
{
    tj_emit *e = &k->e;
    LLVMValueRef zero = LLVMBuildICmp(e->b, LLVMIntEQ, st, tj_i32(e, 0), "check.nonneg");
    LLVMValueRef negative =
        LLVMBuildICmp(e->b, LLVMIntEQ, st, tj_i32(e, TJ_CHECK_NEGATIVE), "check.negative");
    LLVMValueRef ok = LLVMBuildOr(e->b, zero, negative, "check.passed");
    LLVMBasicBlockRef fail = tj_block(e, "check.fail"), pass = tj_block(e, "check.ok");
    LLVMBuildCondBr(e->b, ok, pass, fail);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, pass);
    return LLVMBuildZExt(e->b, zero, e->i32, "range.flags"); /* TJ_RANGE_NONNEG is 1 */
}

/* The main function of a split kernel: NULL checks, the check function,
 * then the range function over every unit, on this thread or the pool's;
 * where the checks go in parts too (parallel_checks), the runtime calls
 * the check (alone) or the range functions' check mode (split). */
void tj_emit_split_main(tj_kir *k, LLVMValueRef check, LLVMValueRef range)
{
    tj_emit *e = &k->e;
    e->fn = k->main_fn;
    tj_bind_buffers(k, e->fn, k->p->has_updates);
    LLVMPositionBuilderAtEnd(e->b, LLVMGetLastBasicBlock(e->fn));
    tj_emit_pointer_checks(k);
    LLVMValueRef flags = tj_i32(e, TJ_RANGE_UNCHECKED); /* the runtime checks in parts */
    if (!k->st.parallel_checks || k->p->threads <= 1) {
        LLVMTypeRef cty = LLVMFunctionType(e->i32, &e->ptr, 1, 0);
        LLVMValueRef st = LLVMBuildCall2(e->b, cty, check, &k->indices, 1, "check.status");
        flags = tj_emit_check_flags(k, st);
    }
    LLVMValueRef upd = k->updates ? k->updates : LLVMConstNull(e->ptr);
    if (k->p->threads > 1) {
        LLVMValueRef args[6] = {tj_self(k), k->data, k->indices, upd, k->out, flags};
        LLVMTypeRef params[6] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->i32};
        LLVMTypeRef pty = LLVMFunctionType(e->i32, params, 6, 0);
        LLVMValueRef par = LLVMAddFunction(e->mod, TJ_RT_PARALLEL, pty);
        LLVMValueRef r = LLVMBuildCall2(e->b, pty, par, args, 6, "status");
        LLVMSetTailCall(r, 1);
        LLVMBuildRet(e->b, r);
        return;
    }
    LLVMValueRef args[7] = {k->data, k->indices, upd, k->out, tj_i64(e, 0),
                            tj_i64(e, k->p->units), flags};
    LLVMTypeRef params[7] = {e->ptr, e->ptr, e->ptr, e->ptr, e->i64, e->i64, e->i32};
    LLVMTypeRef rty = LLVMFunctionType(e->i32, params, 7, 0);
    LLVMValueRef r = LLVMBuildCall2(e->b, rty, range, args, 7, "status");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(e->b, r);
}

/* i32 NAME_check(indices, plan): a split dynamic kernel's validation. */
LLVMValueRef tj_emit_dyn_check_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved = k->indices;
    LLVMTypeRef params[2] = {e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, 2, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_CHECK_SUFFIX, buf, sizeof buf), fty);
    k->indices = LLVMGetParam(e->fn, 0);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    LLVMValueRef rp = LLVMGetParam(e->fn, 1);
    tj_emit_dyn_words(k, rp);
    tj_emit_check_return(k, tj_emit_dyn_validation(k, rp));
    k->indices = saved;
    return e->fn;
}

/* The call of tj_rt_dyn_parallel with these flags, its status returned. */
static void tj_emit_dyn_parallel_call(tj_kir *k, LLVMValueRef rp, LLVMValueRef check,
                                      LLVMValueRef range, LLVMValueRef flags)
{
    tj_emit *e = &k->e;
    LLVMValueRef args[9] = {tj_self(k), LLVMConstPointerCast(range, e->ptr),
                            LLVMConstPointerCast(check, e->ptr), rp, k->data, k->indices,
                            k->updates ? k->updates : LLVMConstNull(e->ptr), k->out, flags};
    LLVMTypeRef params[9] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr,
                             e->ptr, e->ptr, e->ptr, e->i32};
    LLVMTypeRef pty = LLVMFunctionType(e->i32, params, 9, 0);
    LLVMValueRef par = LLVMGetNamedFunction(e->mod, TJ_RT_DYN_PARALLEL);
    if (!par)
        par = LLVMAddFunction(e->mod, TJ_RT_DYN_PARALLEL, pty);
    LLVMValueRef r = LLVMBuildCall2(e->b, pty, par, args, 9, "status");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(e->b, r);
}

/* A split dynamic kernel's main, after its entry: the check function, then
 * tj_rt_dyn_parallel, which runs the range over the call's units on this
 * thread or the pool's as their cost says (given the range and check
 * functions' addresses: no lookup per call). A kernel that may check in
 * parts (parallel_checks) leaves the check of a call with at least
 * TJ_SPLIT_CHECK_MIN_BYTES of indices to the runtime, as a static one's
 * main does (tj_emit_split_main). */
void tj_emit_dyn_split_main(tj_kir *k, LLVMValueRef rp, LLVMValueRef check,
                            LLVMValueRef range)
{
    tj_emit *e = &k->e;
    if (k->st.parallel_checks) {
        int64_t tuple_bytes = (int64_t)k->p->depth * k->p->index_size;
        LLVMValueRef bytes = tj_mulv(k, tj_i64(e, tuple_bytes), &k->p->tuples, "index.bytes");
        LLVMValueRef big = LLVMBuildICmp(e->b, LLVMIntUGE, bytes,
                                         tj_i64(e, TJ_SPLIT_CHECK_MIN_BYTES), "check.in.parts");
        LLVMBasicBlockRef parts = tj_block(e, "parts"), here = tj_block(e, "check.here");
        LLVMBuildCondBr(e->b, big, parts, here);
        LLVMPositionBuilderAtEnd(e->b, parts);
        tj_emit_dyn_parallel_call(k, rp, check, range, tj_i32(e, TJ_RANGE_UNCHECKED));
        LLVMPositionBuilderAtEnd(e->b, here);
    }
    LLVMTypeRef cp[2] = {e->ptr, e->ptr};
    LLVMTypeRef cty = LLVMFunctionType(e->i32, cp, 2, 0);
    LLVMValueRef cargs[2] = {k->indices, rp};
    LLVMValueRef st = LLVMBuildCall2(e->b, cty, check, cargs, 2, "check.status");
    tj_emit_dyn_parallel_call(k, rp, check, range, tj_emit_check_flags(k, st));
}

/* Whether the call's work (blocks visited times the lines each spans)
 * is below TJ_IR_SPLIT_MIN_WORK: then a split dynamic kernel runs its
 * whole body, the one-thread kernel's, with no call of the check and range
 * functions or of the runtime (G2d, 180 rows: those calls cost 10% of
 * it). */
LLVMValueRef tj_emit_dyn_small(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef block = tj_pv(k, &p->block_bytes);
    LLVMValueRef lines = tj_add(e, LLVMBuildUDiv(e->b, block, tj_i64(e, 64), ""), tj_i64(e, 1),
                                "block.lines");
    LLVMValueRef most = LLVMBuildUDiv(e->b, tj_i64(e, TJ_IR_SPLIT_MIN_WORK), lines, "small.most");
    return LLVMBuildICmp(e->b, LLVMIntULT, tj_pv(k, &p->visits), most, "small.call");
}
