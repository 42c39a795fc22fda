/*
 * The module of an embedding bag's kernel (bag_internal.h says how its
 * IR is generated): functions, counts, the dynamic entry, dispatch.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- functions -------------------------------------------------------- */

static void tj_function_attrs(tj_bir *k, LLVMValueRef fn)
{
    tj_emit *e = &k->e;
    tj_add_attr(e, fn, LLVMAttributeFunctionIndex, "nounwind");
    tj_add_string_attr(e, fn, "min-legal-vector-width", "0");
    tj_add_string_attr(e, fn, "prefer-vector-width", k->st.vector_width);
}

/* The five buffers of the bag ABI from fn's first parameters. */
static void tj_bind(tj_bir *k, LLVMValueRef fn)
{
    static const char *names[5] = {"table", "indices", "offsets", "weights", "out"};
    LLVMValueRef *slots[5] = {&k->table, &k->indices, &k->offsets, &k->weights, &k->out};
    for (unsigned i = 0; i < 5; i++) {
        *slots[i] = LLVMGetParam(fn, i);
        LLVMSetValueName2(*slots[i], names[i], strlen(names[i]));
    }
}

/* A function of the five buffers (then extra parameters), positioned in
 * its entry block, where the allocas go too, before its code
 * (tj_bir_slot): no block of their own, since code generation pays for
 * every block (docs/performance.md, 'A compile counted in
 * instructions'). */
static LLVMValueRef tj_bag_function(tj_bir *k, const char *name, LLVMTypeRef *extra, unsigned n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[8] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr};
    for (unsigned i = 0; i < n; i++)
        params[5 + i] = extra[i];
    LLVMValueRef fn = LLVMAddFunction(e->mod, name, LLVMFunctionType(e->i32, params, 5 + n, 0));
    for (unsigned i = 1; i <= 5; i++)
        tj_add_attr(e, fn, i, "noalias");
    tj_function_attrs(k, fn);
    tj_bind(k, fn);
    e->fn = fn;
    k->allocas = tj_block(e, "entry");
    LLVMPositionBuilderAtEnd(e->b, k->allocas);
    return fn;
}

/* A count of the plan: a constant, or a dynamic template's code -1 - i
 * for the call's dims[i]. */
static LLVMValueRef tj_count(tj_bir *k, int64_t v, const char *name)
{
    tj_emit *e = &k->e;
    if (v >= 0 || !k->dims)
        return tj_i64(e, v);
    LLVMValueRef at = tj_byte_gep(e, k->dims, tj_i64(e, (-1 - v) * 8), "");
    return tj_load(e, e->i64, at, name);
}

/* The counts, in the current function; a dynamic template's derived ones
 * (offsets' B = offsets_len - include_last_offset, packed N = B x L, the
 * segment ids' length N) from those the dims give. */
static void tj_load_counts(tj_bir *k)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    k->rows = tj_count(k, g->rows, "rows");
    k->bag_len = tj_i64(e, 0);
    if (g->form == TJ_BAG_PACKED) {
        k->bags = tj_count(k, g->bags, "bags");
        k->bag_len = tj_count(k, g->bag_len, "bag.len");
        k->lookups = g->lookups >= 0 || !k->dims ? tj_i64(e, g->lookups)
                                                 : LLVMBuildMul(e->b, k->bags, k->bag_len, "lookups");
        k->offsets_len = tj_i64(e, 0);
    } else if (g->form == TJ_BAG_OFFSETS) {
        k->lookups = tj_count(k, g->lookups, "lookups");
        k->offsets_len = tj_count(k, g->offsets_len, "offsets.len");
        if (g->bags >= 0 || !k->dims)
            k->bags = tj_i64(e, g->bags);
        else if (g->include_last_offset)
            k->bags = LLVMBuildSub(e->b, k->offsets_len, tj_i64(e, 1), "bags");
        else
            k->bags = k->offsets_len;
    } else {
        k->lookups = tj_count(k, g->lookups, "lookups");
        k->bags = tj_count(k, g->bags, "segments");
        k->offsets_len = k->lookups; /* the runtime checked that they agree */
    }
    k->last_lookup =
        k->st.prefetch ? LLVMBuildSub(e->b, k->lookups, tj_i64(e, 1), "last") : NULL;
}

static void tj_emit_dyn_begin(tj_bir *k);

/* A function of the five buffers, then extra parameters, then a dynamic
 * kernel's dims, with the counts loaded; a dynamic kernel's main checks
 * its call first (tj_emit_dyn_begin), before it reads the dims. */
static LLVMValueRef tj_counted_function(tj_bir *k, const char *name, LLVMTypeRef *extra,
                                        unsigned n, int main)
{
    LLVMTypeRef params[4];
    for (unsigned i = 0; i < n; i++)
        params[i] = extra[i];
    if (k->g->dynamic)
        params[n++] = k->e.ptr;
    LLVMValueRef fn = tj_bag_function(k, name, params, n);
    k->dims = k->g->dynamic ? LLVMGetParam(fn, 5 + n - 1) : NULL;
    if (k->dims)
        LLVMSetValueName2(k->dims, "dims", 4);
    if (main)
        k->main_fn = fn;
    if (main && k->dims)
        tj_emit_dyn_begin(k);
    tj_load_counts(k);
    return fn;
}

/* A dynamic kernel's entry: tj_rt_bag_dyn_begin checks the call (its
 * dims, buffers, offsets or segment ids and indices) and returns the
 * status of a bad one, which the kernel returns; a kernel on one thread
 * has it prime the call's first rows too. The checks and the priming of
 * a static kernel, in the kernel, were a fifth of a family's compile (docs/performance.md, 'A family's checks in one call'); a
 * dynamic kernel finds its template through its address on every call
 * anyway. */
static void tj_emit_dyn_begin(tj_bir *k)
{
    tj_emit *e = &k->e;
    k->primed = !k->st.split && k->g->form != TJ_BAG_SEGMENTS && k->st.prefetch > 0;
    LLVMValueRef args[8] = {LLVMConstPointerCast(k->main_fn, e->ptr),
                            k->dims,
                            k->table,
                            k->indices,
                            k->offsets,
                            k->weights,
                            k->out,
                            tj_i64(e, k->primed ? k->st.prefetch : 0)};
    LLVMValueRef st = tj_bir_call_rt(k, TJ_RT_BAG_DYN_BEGIN, args, 8, "begin");
    LLVMBasicBlockRef fail = tj_block(e, "call.bad"), ok = tj_block(e, "call.ok");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntNE, st, tj_i32(e, 0), ""), fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

/* return tj_rt_bag_parallel(main, the buffers), or for a dynamic kernel
 * tj_rt_bag_dyn_parallel(main, range, dims, the buffers): the range over
 * the pool as the split rule says (the dynamic call's counts, per call). */
static void tj_emit_parallel_call(tj_bir *k, LLVMValueRef fn, LLVMValueRef range)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[8] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMValueRef args[8] = {LLVMConstPointerCast(fn, e->ptr)};
    unsigned n = 1;
    if (k->dims) {
        args[n++] = LLVMConstPointerCast(range, e->ptr);
        args[n++] = k->dims;
    }
    LLVMValueRef bufs[5] = {k->table, k->indices, k->offsets, k->weights, k->out};
    for (unsigned i = 0; i < 5; i++)
        args[n++] = bufs[i];
    const char *callee = k->dims ? TJ_RT_BAG_DYN_PARALLEL : TJ_RT_BAG_PARALLEL;
    LLVMTypeRef pty = LLVMFunctionType(e->i32, params, n, 0);
    LLVMValueRef par = LLVMAddFunction(e->mod, callee, pty);
    LLVMValueRef r = LLVMBuildCall2(e->b, pty, par, args, n, "status");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(e->b, r);
}

/* A range function's body: bags (or segments) [begin, end); the status
 * it returns (tj_bir_emit_bags_by_alignment's). A segments
 * range of every segment (a call the split rule keeps alone) runs the
 * whole kernel's loop, without the test of each id against the range,
 * which short rows pay for (docs/performance.md, 'Embedding bags'). */
static LLVMValueRef tj_emit_range_body(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    if (k->g->form != TJ_BAG_SEGMENTS)
        return tj_bir_emit_bags_by_alignment(k, begin, end);
    LLVMValueRef all = LLVMBuildAnd(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, begin, tj_i64(e, 0), ""),
                                    LLVMBuildICmp(e->b, LLVMIntEQ, end, k->bags, ""), "all");
    LLVMBasicBlockRef whole = tj_block(e, "segments.all"), part = tj_block(e, "segments.part");
    LLVMBuildCondBr(e->b, all, whole, part);
    LLVMPositionBuilderAtEnd(e->b, whole);
    tj_bir_emit_segments(k, NULL, NULL);
    LLVMBuildRet(e->b, tj_i32(e, 0));
    LLVMPositionBuilderAtEnd(e->b, part);
    tj_bir_emit_segments(k, begin, end);
    return tj_i32(e, 0);
}

/* A split kernel (offsets and packed forms, and segments): the main
 * (created first: the cold paths pass its address), name_range, then the
 * main's body: the checks, then the range over the pool. A static
 * kernel's range is exported for the parts API, whose checks are the
 * runtime's scan (runtime/exec/parts.c): a check function of its own was
 * a second function to generate code for, 0.5-0.75 ms of the compile
 * (docs/performance.md, 'Compile time of a bag kernel'). A dynamic
 * kernel's range is internal: its main passes it to the runtime (the
 * parts API offers no dynamic kernel's). */
static void tj_emit_bag_kernel(tj_bir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef fn = tj_counted_function(k, name, NULL, 0, 1);
    LLVMBasicBlockRef main_at = LLVMGetInsertBlock(e->b), main_allocas = k->allocas;

    snprintf(buf, sizeof buf, "%s%s", name, TJ_IR_RANGE_SUFFIX);
    LLVMTypeRef bounds[2] = {e->i64, e->i64};
    LLVMValueRef range = tj_counted_function(k, buf, bounds, 2, 0);
    LLVMSetLinkage(range, k->st.ranges ? LLVMExternalLinkage : LLVMInternalLinkage);
    LLVMBuildRet(e->b, tj_emit_range_body(k, LLVMGetParam(range, 5), LLVMGetParam(range, 6)));

    e->fn = fn;
    k->allocas = main_allocas;
    tj_bind(k, fn);
    k->dims = k->g->dynamic ? LLVMGetParam(fn, 5) : NULL;
    LLVMPositionBuilderAtEnd(e->b, main_at);
    tj_load_counts(k); /* the main's own (tj_count builds no block) */
    tj_bir_emit_checks(k);
    tj_emit_parallel_call(k, fn, range);
}

/* A kernel without parts (not split): one function, the checks then the
 * bags. The parts of a split kernel, in one that calls each once, were a
 * large share of its code generation: LLVM generates code function by
 * function (docs/performance.md, 'Compile time of a bag kernel'). */
static void tj_emit_whole_kernel(tj_bir *k, const char *name)
{
    tj_counted_function(k, name, NULL, 0, 1);
    tj_bir_emit_checks(k);
    LLVMBuildRet(k->e.b, tj_bir_emit_bags_by_alignment(k, tj_i64(&k->e, 0), k->bags));
}

/* Segments: one function, the checks then the sums; a split kernel's as
 * the bags'. */
static void tj_emit_segment_kernel(tj_bir *k, const char *name)
{
    if (k->st.split) {
        tj_emit_bag_kernel(k, name);
        return;
    }
    tj_counted_function(k, name, NULL, 0, 1);
    tj_bir_emit_checks(k);
    tj_bir_emit_segments(k, NULL, NULL);
    LLVMBuildRet(k->e.b, tj_i32(&k->e, 0));
}

static int tj_unsigned_type(jit_dtype t)
{
    return t == JIT_BOOL || t == JIT_U8 || t == JIT_U16 || t == JIT_U32 || t == JIT_U64;
}

/* Types of the plan's table and accumulator; why and -1 if unsupported. */
static int tj_bag_types(tj_bir *k, char *why, size_t why_len)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    k->esize = jit_dtype_size(g->dtype);
    k->afloat = g->acc_type == JIT_F32 || g->acc_type == JIT_F64;
    k->aty = g->acc_type == JIT_F32 ? k->f32 : g->acc_type == JIT_F64 ? k->f64 : e->i64;
    k->ety = g->dtype == JIT_F32   ? k->f32
             : g->dtype == JIT_F64 ? k->f64
                                   : LLVMIntTypeInContext(e->ctx, (unsigned)k->esize * 8);
    k->usigned = tj_unsigned_type(g->dtype);
    int isize = jit_dtype_size(g->index_type);
    k->idx_signed = !tj_unsigned_type(g->index_type);
    k->idx_ty = LLVMIntTypeInContext(e->ctx, (unsigned)(isize > 0 ? isize : 8) * 8);
    k->drops = tj_policy_fills(g->policy) || g->padding_row >= 0;
    if (k->esize <= 0 || isize <= 0) {
        snprintf(why, why_len, "embedding bag: an element or index type without a byte size");
        return -1;
    }
    if (g->dtype == JIT_F16 && !k->lay.f16c) {
        snprintf(why, why_len, "embedding bag: f16 tables need a host with F16C");
        return -1;
    }
    if (k->lay.lanes > 64 || k->lay.lanes < 1) {
        snprintf(why, why_len, "embedding bag: %" PRId64 " lanes per vector", k->lay.lanes);
        return -1;
    }
    return 0;
}

LLVMModuleRef tj_ir_bag_kernel(LLVMContextRef ctx, const tj_plan *p, const tj_ir_strategy *st,
                               const char *name, char *why, size_t why_len)
{
    tj_bir k = {0};
    tj_emit *e = &k.e;
    k.p = p;
    k.g = &p->bag;
    k.st = *st;
    tj_bag_layout_of(p, st, &k.lay);
    e->ctx = ctx;
    e->i1 = LLVMInt1TypeInContext(ctx);
    e->i8 = LLVMInt8TypeInContext(ctx);
    e->i32 = LLVMInt32TypeInContext(ctx);
    e->i64 = LLVMInt64TypeInContext(ctx);
    e->ptr = LLVMPointerType(e->i8, 0);
    k.f32 = LLVMFloatTypeInContext(ctx);
    k.f64 = LLVMDoubleTypeInContext(ctx);
    if (tj_bag_types(&k, why, why_len))
        return NULL;
    e->mod = LLVMModuleCreateWithNameInContext(name, ctx);
    e->b = LLVMCreateBuilderInContext(ctx);
    if (k.g->form == TJ_BAG_SEGMENTS)
        tj_emit_segment_kernel(&k, name);
    else if (!k.st.split) /* a dynamic split kernel too has a range (not loaded) */
        tj_emit_whole_kernel(&k, name);
    else
        tj_emit_bag_kernel(&k, name);
    return tj_emit_finish(e, why, why_len);
}
