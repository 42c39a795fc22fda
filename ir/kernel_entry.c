/*
 * The entry functions of a kernel: the ABI's signature (SPEC section 3),
 * its buffers bound and marked noalias where they cannot overlap, the
 * attributes every function carries, and a dynamic kernel's entry, which
 * has the runtime check the call's dims and loads the words of the call's
 * plan that vary.
 */
#include "kernel_internal.h"

/* Attributes every function of a kernel carries. */
void tj_function_attrs(tj_emit *e, const tj_ir_strategy *st, LLVMValueRef fn)
{
    tj_add_attr(e, fn, LLVMAttributeFunctionIndex, "nounwind");
    /* Without this LLVM assumes the function may need 512-bit vectors and
     * uses zmm registers even where the CPU prefers 256 (clang always sets
     * it); TENSORJIT_VECTOR_WIDTH=512 asks for zmm on purpose. */
    tj_add_string_attr(e, fn, "min-legal-vector-width", "0");
    if (st->vector_width[0])
        tj_add_string_attr(e, fn, "prefer-vector-width", st->vector_width);
}

/* data, indices, [updates,] out of fn from its first parameters; a
 * scatter may run in place (out == data), so only its indices and updates
 * are noalias; a gather's buffers never overlap. */
void tj_bind_buffers(tj_kir *k, LLVMValueRef fn, int with_updates)
{
    tj_emit *e = &k->e;
    int scatter = k->p->indexed == TJ_INDEXED_DST;
    k->data = LLVMGetParam(fn, 0);
    k->indices = LLVMGetParam(fn, 1);
    k->updates = with_updates ? LLVMGetParam(fn, 2) : NULL;
    k->out = LLVMGetParam(fn, with_updates ? 3 : 2);
    LLVMSetValueName2(k->data, "data", 4);
    LLVMSetValueName2(k->indices, "indices", 7);
    if (k->updates)
        LLVMSetValueName2(k->updates, scatter ? "updates" : "unused", scatter ? 7 : 6);
    LLVMSetValueName2(k->out, "out", 3);
    tj_add_attr(e, fn, 2, "noalias");
    if (scatter) {
        tj_add_attr(e, fn, 3, "noalias");
    } else {
        tj_add_attr(e, fn, 1, "noalias");
        tj_add_attr(e, fn, with_updates ? 4 : 3, "noalias");
    }
}

/* The kernel's entry, of the ABI of SPEC section 3. */
void tj_emit_signature(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    int with_updates = k->p->has_updates;
    LLVMTypeRef params[4] = {e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, with_updates ? 4 : 3, 0);
    e->fn = k->main_fn = LLVMAddFunction(e->mod, name, fty);
    tj_bind_buffers(k, e->fn, with_updates);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
}

/* The words of the call's plan rp that vary, loaded in the current function
 * (LLVM drops those it does not use). */
void tj_emit_dyn_words(tj_kir *k, LLVMValueRef rp)
{
    tj_emit *e = &k->e;
    for (size_t w = 0; w < TJ_DYN_WORDS && w < sizeof(tj_plan) / 8; w++) {
        k->word[w] = NULL;
        if (!tj_dyn_varies(k->dyn, (const char *)&k->dyn->tmpl + w * 8))
            continue;
        LLVMValueRef at = tj_byte_gep(e, rp, tj_i64(e, (int64_t)(w * 8)), "");
        k->word[w] = tj_load(e, e->i64, at, "plan.word");
    }
}

/* The entry of a dynamic kernel, int (data, indices, updates, out, dims):
 * tj_rt_dyn_enter checks the call's dims and buffers and gives its plan
 * (or answers the call itself: a bad shape, or a shape the code was not
 * made for); the words of that plan that vary are loaded once, here.
 * Returns the plan's pointer. */
LLVMValueRef tj_emit_dyn_entry(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[7] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, 5, 0);
    e->fn = k->main_fn = LLVMAddFunction(e->mod, name, fty);
    tj_bind_buffers(k, e->fn, 1);
    if (!k->p->has_updates)
        k->updates = NULL;
    LLVMValueRef dims = LLVMGetParam(e->fn, 4);
    LLVMSetValueName2(dims, "dims", 4);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    LLVMValueRef slot = LLVMBuildAlloca(e->b, e->ptr, "plan.slot");
    LLVMValueRef args[7] = {tj_self(k), dims, k->data, k->indices,
                            k->updates ? k->updates : LLVMConstNull(e->ptr), k->out,
                            LLVMBuildPointerCast(e->b, slot, e->ptr, "")}; /* LLVM 14: i8** */
    LLVMTypeRef ety = LLVMFunctionType(e->i32, params, 7, 0);
    LLVMValueRef enter = LLVMAddFunction(e->mod, TJ_RT_DYN_ENTER, ety);
    LLVMValueRef st = LLVMBuildCall2(e->b, ety, enter, args, 7, "enter");
    LLVMValueRef answered = LLVMBuildICmp(e->b, LLVMIntNE, st, tj_i32(e, -1), "answered");
    LLVMBasicBlockRef done = tj_block(e, "answered"), run = tj_block(e, "run");
    LLVMBuildCondBr(e->b, answered, done, run);
    LLVMPositionBuilderAtEnd(e->b, done);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, run);
    return LLVMBuildLoad2(e->b, e->ptr, slot, "plan");
}
