/*
 * The kernel of one signature, as LLVM IR. What it gains from knowing the
 * signature at compile time: every shape, stride, block size and trip
 * count is a constant, so offsets fold, loops have known trip counts and
 * each block copy has a fixed size, emitted by size (tj_emit_block_copy).
 *
 * Shape of every kernel:
 *   1. check.ptr   buffers the signature needs are non-NULL (cold path
 *                  calls tj_rt_bad_pointer for the message)
 *   2. check       every index validated in its own pass, branch-free with
 *                  an OR-ed flag so it vectorizes; check.fail calls
 *                  tj_rt_bad_index for the message; nothing written yet
 *   3. copy.data   scatter only: out = data unless out == data
 *   4. tuple       the indexed block copies, in row-major order of the
 *                  indices (last duplicate wins)
 * Small signatures are fully unrolled; others get counted loops. A split
 * kernel (TJ_IR_SPLIT_MIN_WORK) has step 2 in a check function and steps
 * 3-4 in a range function, whose loops have the whole kernel's bodies; its
 * main does step 1, calls the check, and has tj_rt_parallel run the range
 * on the calling thread or over the pool, as the call's measured cost says
 * (runtime/exec/jit_support.c). Under negative-wraps the validation also says
 * whether any index is negative, and the copies skip the wrap where none
 * is (tj_emit_passes_by_sign).
 *
 * This file builds the module from those parts, each in a file of its own
 * (kernel_internal.h lists them): the entry, the checks, the copies, the
 * nest's levels and walks, and a split kernel's functions.
 */
#include "kernel_ir.h"

#include <stdio.h>

#include "kernel_internal.h"

static int tj_index_signed(jit_dtype t)
{
    return t == JIT_I8 || t == JIT_I16 || t == JIT_I32 || t == JIT_I64;
}

/* The body of a dynamic kernel: entry, validation, copies. */
static int tj_emit_dyn_kernel(tj_kir *k, const char *name, char *why, size_t why_len)
{
    (void)why, (void)why_len; /* every dynamic plan has its code */
    k->dyn = k->p->dyn;
    LLVMValueRef rp = tj_emit_dyn_entry(k, name);
    if (k->st.split) {
        LLVMBasicBlockRef at = LLVMGetInsertBlock(k->e.b);
        LLVMValueRef main_fn = k->e.fn;
        LLVMValueRef check = tj_emit_dyn_check_function(k, name);
        LLVMValueRef range = tj_emit_range_function(k, name);
        k->e.fn = main_fn;
        LLVMPositionBuilderAtEnd(k->e.b, at);
        tj_emit_dyn_words(k, rp); /* the range function's are its own */
        LLVMBasicBlockRef split = tj_block(&k->e, "split"), whole = tj_block(&k->e, "whole");
        LLVMBuildCondBr(k->e.b, tj_emit_dyn_small(k), whole, split);
        LLVMPositionBuilderAtEnd(k->e.b, split);
        tj_emit_dyn_split_main(k, rp, check, range);
        LLVMPositionBuilderAtEnd(k->e.b, whole);
    } else {
        tj_emit_dyn_words(k, rp);
    }
    LLVMValueRef neg = tj_emit_dyn_validation(k, rp);
    tj_emit_scratch(k);
    tj_emit_data_copy(k);
    tj_emit_passes_by_sign(k, neg);
    LLVMBuildRet(k->e.b, tj_i32(&k->e, 0));
    return 0;
}

LLVMModuleRef tj_ir_kernel(LLVMContextRef ctx, const tj_plan *p, const tj_ir_strategy *st,
                           const char *name, char *why, size_t why_len)
{
    tj_kir k = {0};
    tj_emit *e = &k.e;
    k.p = p;
    k.st = *st;
    e->ctx = ctx;
    e->mod = LLVMModuleCreateWithNameInContext(name, ctx);
    e->b = LLVMCreateBuilderInContext(ctx);
    e->i1 = LLVMInt1TypeInContext(ctx);
    e->i8 = LLVMInt8TypeInContext(ctx);
    e->i32 = LLVMInt32TypeInContext(ctx);
    e->i64 = LLVMInt64TypeInContext(ctx);
    e->ptr = LLVMPointerType(e->i8, 0);
    k.idx_ty = LLVMIntTypeInContext(ctx, (unsigned)p->index_size * 8);
    k.idx_signed = tj_index_signed(p->index_type);

    if (p->dyn) {
        if (tj_emit_dyn_kernel(&k, name, why, why_len)) {
            LLVMDisposeBuilder(e->b);
            LLVMDisposeModule(e->mod);
            return NULL;
        }
    } else if (tj_emit_signature(&k, name), k.st.split) {
        LLVMValueRef check = tj_emit_check_function(&k, name);
        LLVMValueRef range = tj_emit_range_function(&k, name);
        tj_emit_split_main(&k, check, range);
    } else {
        tj_emit_pointer_checks(&k);
        LLVMValueRef neg = tj_emit_validation(&k);
        tj_emit_scratch(&k);
        tj_emit_data_copy(&k);
        tj_emit_passes_by_sign(&k, neg);
        LLVMBuildRet(e->b, tj_i32(e, 0));
        if (k.st.ranges) { /* the parts API's, beside the whole main */
            tj_emit_check_function(&k, name);
            tj_emit_range_function(&k, name);
        }
    }
    return tj_emit_finish(e, why, why_len);
}
