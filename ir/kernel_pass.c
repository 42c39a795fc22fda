/*
 * The walks of the nest a kernel body makes: a reduction's passes (the
 * positions' start, the updates, a mean's division) after its scratch, the
 * copies twice where the validation proved no index negative (wrap once)
 * or out may take streaming stores, a dynamic nest skipped when the call
 * visits nothing, and a range function's rows of units.
 */
#include "kernel_internal.h"
#include "reduce.h"

static void tj_emit_copy_loops(tj_kir *k);
static void tj_emit_copies(tj_kir *k);

/* A mean's counts: the calling thread's scratch, asked for before anything
 * is written, so that running short (JIT_STATUS_NO_MEMORY) writes nothing. */
void tj_emit_scratch(tj_kir *k)
{
    tj_emit *e = &k->e;
    int64_t bytes = tj_ir_reduce_scratch_bytes(k->p);
    if (bytes == 0)
        return;
    LLVMTypeRef fty = LLVMFunctionType(e->ptr, &e->i64, 1, 0);
    LLVMValueRef fn = tj_runtime_fn(e, TJ_RT_SCRATCH, fty);
    LLVMValueRef n = tj_i64(e, bytes);
    if (tj_pdyn(k, &k->p->out_bytes)) { /* the call's: tj_ir_reduce_scratch_bytes' rule */
        k->out_elems = LLVMBuildUDiv(e->b, tj_pv(k, &k->p->out_bytes),
                                     tj_i64(e, k->p->elem_size), "out.elems");
        LLVMValueRef none = LLVMBuildICmp(e->b, LLVMIntEQ, k->out_elems, tj_i64(e, 0), "");
        LLVMValueRef slots = LLVMBuildSelect(e->b, none, tj_i64(e, 1), k->out_elems, "slots");
        n = tj_mul(e, slots, tj_ir_reduce_slot_bytes(k->p), "scratch.bytes");
    }
    k->scratch = LLVMBuildCall2(e->b, fty, fn, &n, 1, "scratch");
    LLVMValueRef none = LLVMBuildICmp(e->b, LLVMIntEQ, k->scratch, LLVMConstNull(e->ptr),
                                      "no.scratch");
    LLVMBasicBlockRef fail = tj_block(e, "scratch.fail"), ok = tj_block(e, "scratch.ok");
    LLVMBuildCondBr(e->b, none, fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, tj_i32(e, JIT_STATUS_NO_MEMORY));
    LLVMPositionBuilderAtEnd(e->b, ok);
}

/* A dynamic kernel's nest can be empty at one call and not at another:
 * an inner level of 0 trips under outer ones of any size would still walk
 * every outer iteration (each loop is skipped only when its own trip is
 * 0), where the static and reference kernels return at once. One compare
 * of the call's visits skips every pass, as the reference kernel does.
 * Returns the block after the passes, or NULL when visits are a constant
 * (tj_emit_copy_loops skips a constant 0). */
static LLVMBasicBlockRef tj_emit_skip_empty_nest(tj_kir *k)
{
    tj_emit *e = &k->e;
    if (!tj_pdyn(k, &k->p->visits))
        return NULL;
    LLVMValueRef none =
        LLVMBuildICmp(e->b, LLVMIntEQ, tj_pv(k, &k->p->visits), tj_i64(e, 0), "no.visits");
    LLVMBasicBlockRef walk = tj_block(e, "nest"), done = tj_block(e, "nest.done");
    LLVMBuildCondBr(e->b, none, done, walk);
    LLVMPositionBuilderAtEnd(e->b, walk);
    return done;
}

/* The copies; a reduction that needs them walks the nest before (the
 * positions' start) and after (a mean's division) its updates. */
static void tj_emit_passes(tj_kir *k)
{
    const tj_plan *p = k->p;
    LLVMBasicBlockRef done = tj_emit_skip_empty_nest(k);
    if (tj_reduce_needs_passes(p)) {
        k->pass = TJ_PASS_START;
        tj_emit_copies(k);
    }
    k->pass = TJ_PASS_REDUCE;
    tj_emit_copies(k);
    if (p->reduction == JIT_REDUCTION_MEAN) {
        k->pass = TJ_PASS_FINISH;
        tj_emit_copies(k);
    }
    if (done) { /* placed after the nest's blocks, where the dump reads it */
        LLVMBuildBr(k->e.b, done);
        LLVMMoveBasicBlockAfter(done, LLVMGetLastBasicBlock(k->e.fn));
        LLVMPositionBuilderAtEnd(k->e.b, done);
    }
}

/* The copies, twice where neg (i1, NULL: no sign tracked) says whether an
 * index is negative: without the wrap on the path where none is, which
 * the validation proved (wrap once). */
void tj_emit_passes_by_sign(tj_kir *k, LLVMValueRef neg)
{
    tj_emit *e = &k->e;
    if (!neg) {
        tj_emit_passes(k);
        return;
    }
    LLVMBasicBlockRef wrap = tj_block(e, "copy.wrap"), plain = tj_block(e, "copy.nonneg");
    LLVMBasicBlockRef done = tj_block(e, "copy.end");
    LLVMBuildCondBr(e->b, neg, wrap, plain);
    LLVMPositionBuilderAtEnd(e->b, plain);
    k->nowrap = 1;
    tj_emit_passes(k);
    k->nowrap = 0;
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, wrap);
    tj_emit_passes(k);
    LLVMBuildBr(e->b, done);
    LLVMMoveBasicBlockAfter(done, LLVMGetLastBasicBlock(e->fn));
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* With non-temporal stores: the loops twice, for a 16-byte aligned out
 * (streaming stores, then a fence that orders them) and for any other. */
static void tj_emit_copies(tj_kir *k)
{
    tj_emit *e = &k->e;
    if (!k->st.nontemporal || k->p->visits == 0) {
        tj_emit_copy_loops(k);
        return;
    }
    LLVMValueRef addr = LLVMBuildPtrToInt(e->b, k->out, e->i64, "out.addr");
    LLVMValueRef low = LLVMBuildAnd(e->b, addr, tj_i64(e, 15), "out.misalign");
    LLVMValueRef aligned = LLVMBuildICmp(e->b, LLVMIntEQ, low, tj_i64(e, 0), "out.aligned");
    LLVMBasicBlockRef nt = tj_block(e, "copy.stream"), plain = tj_block(e, "copy.cached");
    LLVMBasicBlockRef done = tj_block(e, "copy.done");
    LLVMBuildCondBr(e->b, aligned, nt, plain);
    LLVMPositionBuilderAtEnd(e->b, nt);
    k->nt_path = 1;
    tj_emit_copy_loops(k);
    k->nt_path = 0;
    LLVMBuildFence(e->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, plain);
    tj_emit_copy_loops(k);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* The copies of units [begin, end). A range is a stretch of the unit
 * levels' flattened trips: it walks them a row at a time, a row being
 * the part of the innermost unit level's iterations that lies in the range
 * under one position of the outer unit levels (a division per level and
 * row, not per unit), and each row with the whole kernel's loop bodies
 * (tj_emit_level_n: vector gathers, TJ_IR_LOOP_UNROLL copies per trip,
 * prefetch), the levels below the units whole. So a range runs as fast
 * per unit as the whole kernel, which split kernels count on: their
 * calling thread runs the range of every unit when threads do not pay. */
static void tj_emit_range_loops(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    tj_vcursor zero = {tj_i64(e, 0), tj_i64(e, 0), tj_i64(e, 0)};
    if (p->row_units) { /* every tuple; tj_emit_tuple keeps those of the rows */
        tj_emit_nest(k, 0, zero);
        return;
    }
    int inner = p->unit_levels - 1;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b), body = tj_block(e, "row");
    LLVMBasicBlockRef exit = tj_block(e, "row.exit");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSGE, k->begin, k->end, "range.empty"), exit,
                    body);
    LLVMPositionBuilderAtEnd(e->b, body);
    if (inner < 0) { /* no unit level: one unit, the whole nest */
        tj_emit_nest(k, 0, zero);
        LLVMBuildBr(e->b, exit);
        LLVMPositionBuilderAtEnd(e->b, exit);
        return;
    }
    const tj_level *v = &p->levels[inner];
    LLVMValueRef u = LLVMBuildPhi(e->b, e->i64, "row.unit");
    LLVMAddIncoming(u, &k->begin, &pre, 1);
    LLVMValueRef rest = u, at[TJ_MAX_LEVELS];
    for (int l = inner; l >= 0; l--) {
        LLVMValueRef n = tj_pv(k, &p->levels[l].trip);
        at[l] = l ? LLVMBuildURem(e->b, rest, n, "unit.at") : rest;
        if (l)
            rest = LLVMBuildUDiv(e->b, rest, n, "unit.rest");
    }
    tj_vcursor start = zero;
    for (int l = 0; l < inner; l++)
        start = tj_advance(k, start, &p->levels[l], at[l]);
    /* the row's iterations: to the level's end or the range's, whichever first */
    LLVMValueRef to_end = LLVMBuildSub(e->b, tj_pv(k, &v->trip), at[inner], "row.left");
    LLVMValueRef to_range = LLVMBuildSub(e->b, k->end, u, "range.left");
    LLVMValueRef shorter = LLVMBuildICmp(e->b, LLVMIntULT, to_end, to_range, "row.shorter");
    LLVMValueRef n = LLVMBuildSelect(e->b, shorter, to_end, to_range, "row.trips");
    tj_emit_level_n(k, inner, v, tj_advance(k, start, v, at[inner]), n, start, at[inner]);
    LLVMValueRef next = LLVMBuildNUWAdd(e->b, u, n, "row.next");
    LLVMAddIncoming(u, &next, (LLVMBasicBlockRef[]){LLVMGetInsertBlock(e->b)}, 1);
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, next, k->end, "row.more"), body, exit);
    LLVMPositionBuilderAtEnd(e->b, exit);
}

static void tj_emit_copy_loops(tj_kir *k)
{
    tj_emit *e = &k->e;
    if (k->p->visits == 0 && !tj_pdyn(k, &k->p->visits))
        return;
    if (k->begin) {
        tj_emit_range_loops(k);
        return;
    }
    tj_vcursor c = {tj_i64(e, 0), tj_i64(e, 0), tj_i64(e, 0)};
    tj_emit_nest(k, 0, c);
}
