/*
 * The check pass of a bag's kernel: pointers, offsets, segment ids and
 * the indices some bag reads, one branch to the cold path.
 */
#include "bag_internal.h"

#include "bag_scan.h"

/* ---- the check pass --------------------------------------------------- */

/* if (bad) return tj_rt_bag_bad(self, the buffers): the function's one
 * cold block, made by its first check. A static kernel's only: the
 * message of a dynamic one needs its call's dims (tj_rt_bag_dyn_begin
 * words it). */
static void tj_fail_if(tj_bir *k, LLVMValueRef bad)
{
    tj_emit *e = &k->e;
    LLVMBasicBlockRef ok = tj_block(e, "check.ok");
    if (k->fail && k->fail_fn == e->fn) {
        LLVMBuildCondBr(e->b, bad, k->fail, ok);
        LLVMPositionBuilderAtEnd(e->b, ok);
        return;
    }
    LLVMBasicBlockRef fail = tj_block(e, "check.fail");
    k->fail = fail, k->fail_fn = e->fn;
    LLVMBuildCondBr(e->b, bad, fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMValueRef args[6] = {LLVMConstPointerCast(k->main_fn, e->ptr), k->table, k->indices,
                            k->offsets, k->weights, k->out};
    LLVMValueRef st = tj_bir_call_rt(k, TJ_RT_BAG_BAD, args, 6, "status");
    LLVMSetTailCall(st, 1);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

/* One branch for the NULL buffers: the unsigned minimum of the needed
 * addresses is 0 only if one is NULL. */
static void tj_check_pointers(tj_bir *k)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    LLVMValueRef zero = tj_i64(e, 0);
    struct {
        LLVMValueRef v, count;
        int needed;
    } bufs[] = {{k->table, k->rows, g->row_elems > 0},
                {k->indices, k->lookups, 1},
                {k->offsets, k->offsets_len, g->form != TJ_BAG_PACKED},
                {k->weights, k->lookups, g->has_weights},
                {k->out, k->bags, g->row_elems > 0}};
    LLVMValueRef low = NULL;
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        if (!bufs[i].needed || (LLVMIsAConstantInt(bufs[i].count) &&
                                LLVMConstIntGetSExtValue(bufs[i].count) <= 0))
            continue;
        LLVMValueRef a = LLVMBuildPtrToInt(e->b, bufs[i].v, e->i64, "addr");
        /* a buffer of no bytes at this call may be NULL */
        LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSGT, bufs[i].count, zero, "");
        a = LLVMBuildSelect(e->b, some, a, tj_i64(e, -1), "");
        if (low) {
            LLVMValueRef lower = LLVMBuildICmp(e->b, LLVMIntULT, a, low, "");
            a = LLVMBuildSelect(e->b, lower, a, low, "lowest");
        }
        low = a;
    }
    if (low)
        tj_fail_if(k, LLVMBuildICmp(e->b, LLVMIntEQ, low, tj_i64(e, 0), "null"));
}

/* A static kernel's checks: the buffers, then offsets (or segment ids)
 * and the indices some bag reads: one call to the runtime's scan, the same loop for every kernel,
 * so that none generates code for it (docs/performance.md, 'Compile time
 * of a bag kernel'); one branch to the message, which the runtime words
 * from the inputs (tj_rt_bag_bad). */
void tj_bir_emit_checks(tj_bir *k)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    if (k->dims) /* a dynamic kernel's call was checked by tj_rt_bag_dyn_begin */
        return;
    tj_check_pointers(k);
    int64_t flags = tj_bag_scan_flags(g);
    if (g->unchecked || !flags)
        return;
    LLVMValueRef args[7] = {k->indices, k->offsets, k->offsets_len, k->lookups,
                            k->rows,    k->bags,    tj_i64(e, flags)};
    LLVMValueRef bad = tj_bir_call_rt(k, TJ_RT_BAG_SCAN, args, 7, "scan");
    tj_fail_if(k, LLVMBuildICmp(e->b, LLVMIntNE, bad, tj_i32(e, 0), "any.bad"));
}
