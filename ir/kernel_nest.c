/*
 * The plan's nest of levels: counted loops with constant trip counts,
 * written out when the kernel is unrolled or a short innermost level sits
 * inside a loop, TJ_IR_LOOP_UNROLL copies per trip for small blocks, loops
 * of the call's trips in a dynamic kernel or a range, and the prefetch
 * ahead on the innermost level.
 */
#include <stdio.h>

#include "kernel_internal.h"

/* c advanced by i iterations of level v. */
tj_vcursor tj_advance(tj_kir *k, tj_vcursor c, const tj_level *v, LLVMValueRef i)
{
    tj_emit *e = &k->e;
    c.index = tj_add(e, c.index, tj_mulv(k, i, &v->index_step, "lv.index"), "at.index");
    c.indexed =
        tj_add(e, c.indexed, tj_mulv(k, i, &v->indexed_step, "lv.indexed"), "at.indexed");
    c.dense = tj_add(e, c.dense, tj_mulv(k, i, &v->dense_step, "lv.dense"), "at.dense");
    return c;
}

/* Prefetches the source block `distance` iterations ahead on the innermost
 * level v: at its iteration i, the block of iteration min(i + distance,
 * trip - 1), found from start, the cursor of the level's first iteration
 * (the level's last iteration near its end, so that no index entry is read
 * past the level's own, all of them validated). Plain (not inbounds)
 * address arithmetic on the raw index (not wrapped, clamped or checked):
 * under a policy other than error it may make the address wild, and a
 * prefetch never faults. */
static void tj_emit_prefetch(tj_kir *k, tj_vcursor start, const tj_level *v, LLVMValueRef i)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef ahead = tj_add(e, i, tj_i64(e, k->st.prefetch), "pf.ahead");
    LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, ahead, tj_i64(e, v->trip), "pf.in");
    LLVMValueRef at = LLVMBuildSelect(e->b, in, ahead, tj_i64(e, v->trip - 1), "pf.at");
    tj_vcursor c = tj_advance(k, start, v, at);
    LLVMValueRef first = c.index, off = c.indexed;
    for (int d = 0; d < p->depth; d++) {
        LLVMValueRef x = d ? tj_add(e, first, tj_i64(e, d), "pf.index.i") : first;
        off = tj_add(e, off, tj_mul(e, tj_load_index(k, x), p->strides[d], "pf.entry"), "pf.off");
    }
    LLVMValueRef addr = LLVMBuildGEP2(e->b, e->i8, k->data, &off, 1, "pf.addr");
    unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
    LLVMTypeRef ptr_ty = e->ptr;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &ptr_ty, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &ptr_ty, 1);
    /* read, keep in all cache levels, data cache */
    LLVMValueRef args[4] = {addr, tj_i32(e, 0), tj_i32(e, 3), tj_i32(e, 1)};
    LLVMBuildCall2(e->b, fty, fn, args, 4, "");
    if (p->block_bytes > 64) { /* a block over two lines: its last line too */
        LLVMValueRef last = tj_i64(e, p->block_bytes - 1);
        args[0] = LLVMBuildGEP2(e->b, e->i8, addr, &last, 1, "pf.last");
        LLVMBuildCall2(e->b, fty, fn, args, 4, "");
    }
}

/* The innermost level v from cursor c, TJ_IR_LOOP_UNROLL iterations per
 * trip of the loop, the remaining ones written out after it. */
static void tj_emit_unrolled_level(tj_kir *k, int l, const tj_level *v, tj_vcursor c)
{
    tj_emit *e = &k->e;
    int64_t by = TJ_IR_LOOP_UNROLL, chunks = v->trip / by, rest = v->trip % by;
    char name[32];
    snprintf(name, sizeof name, "level%d", l);
    tj_loop lp;
    tj_loop_begin(e, &lp, name, chunks, NULL);
    tj_vcursor base = tj_advance(k, c, v, tj_mul(e, lp.iv, by, "by.first"));
    for (int64_t j = 0; j < by; j++)
        tj_emit_tuple(k, tj_advance(k, base, v, tj_i64(e, j)));
    tj_loop_end(e, &lp, NULL);
    for (int64_t j = 0; j < rest; j++)
        tj_emit_tuple(k, tj_advance(k, c, v, tj_i64(e, chunks * by + j)));
}

/* Whether level l (v) copies TJ_IR_LOOP_UNROLL blocks per trip (see
 * there): innermost, small blocks of a size known now, no prefetch or
 * streaming stores, the entries within the budget, and a trip count of
 * the call's or of at least two trips of the unrolled loop. */
static int tj_by_8(const tj_kir *k, int l, const tj_level *v)
{
    const tj_plan *p = k->p;
    if (l != p->nlevels - 1 || k->st.prefetch || k->nt_path || tj_pdyn(k, &p->block_bytes) ||
        p->block_bytes >= TJ_IR_STRAIGHT_COPY_MIN ||
        TJ_IR_LOOP_UNROLL * (int64_t)(p->depth > 1 ? p->depth : 1) > k->st.budget)
        return 0;
    return tj_pdyn(k, &v->trip) || v->trip >= 2 * TJ_IR_LOOP_UNROLL;
}

/* Iterations [0, n) of the innermost level v from cursor c (n known at
 * run time), `by` at a time: TJ_IR_LOOP_UNROLL tuples per trip, or one
 * vector gather of gather_lanes; returns how many it did (n rounded down
 * to a multiple of by). */
static LLVMValueRef tj_emit_chunks_n(tj_kir *k, const char *name, const tj_level *v,
                                     tj_vcursor c, LLVMValueRef n, int64_t by, int lanes)
{
    tj_emit *e = &k->e;
    tj_loop lp;
    LLVMValueRef chunks = LLVMBuildUDiv(e->b, n, tj_i64(e, by), "chunks");
    tj_loop_begin_n(e, &lp, name, chunks, NULL);
    tj_vcursor base = tj_advance(k, c, v, tj_mul(e, lp.iv, by, "by.first"));
    if (lanes)
        tj_emit_gather_lanes(k, v, base);
    else
        for (int64_t j = 0; j < by; j++)
            tj_emit_tuple(k, tj_advance(k, base, v, tj_i64(e, j)));
    tj_loop_end(e, &lp, NULL);
    return tj_mul(e, chunks, by, "chunked");
}

/* Iterations [first, first + n) of level l (v), n known at run time, from
 * c, the cursor of iteration first (start: of iteration 0, which the
 * prefetch counts from), with the bodies the whole level has: vector
 * gathers or TJ_IR_LOOP_UNROLL copies per trip, then the rest one by one
 * (prefetching where the kernel does). A dynamic kernel's level and a
 * range function's part of a level are this. */
void tj_emit_level_n(tj_kir *k, int l, const tj_level *v, tj_vcursor c, LLVMValueRef n,
                     tj_vcursor start, LLVMValueRef first)
{
    tj_emit *e = &k->e;
    int innermost = l == k->p->nlevels - 1;
    char name[32];
    snprintf(name, sizeof name, "level%d", l);
    LLVMValueRef done = NULL;
    if (innermost && k->st.gather_lanes && !k->nt_path)
        done = tj_emit_chunks_n(k, "lanes", v, c, n, k->st.gather_lanes, 1);
    else if (tj_by_8(k, l, v))
        done = tj_emit_chunks_n(k, name, v, c, n, TJ_IR_LOOP_UNROLL, 0);
    if (done) {
        c = tj_advance(k, c, v, done);
        first = tj_add(e, first, done, "first.rest");
        n = LLVMBuildSub(e->b, n, done, "rest");
        snprintf(name, sizeof name, "level%d.rest", l);
    }
    tj_loop lp;
    tj_loop_begin_n(e, &lp, name, n, NULL);
    if (innermost && k->st.prefetch)
        tj_emit_prefetch(k, start, v, tj_add(e, first, lp.iv, "pf.i"));
    tj_emit_nest(k, l + 1, tj_advance(k, c, v, lp.iv));
    tj_loop_end(e, &lp, NULL);
}

/* Level l (v) of a dynamic kernel, whose trip count is the call's. */
static void tj_emit_dyn_level(tj_kir *k, int l, const tj_level *v, tj_vcursor c)
{
    tj_emit_level_n(k, l, v, c, tj_pv(k, &v->trip), c, tj_i64(&k->e, 0));
}

/* Levels [l, nlevels) from cursor c: counted loops with constant trip
 * counts, or written out when the kernel is unrolled, and for a short
 * innermost level inside a loop (LLVM's unroller is off, and a 3-trip
 * loop per batch cost G2 against the static kernel: docs/performance.md). */
void tj_emit_nest(tj_kir *k, int l, tj_vcursor c)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    if (l == p->nlevels) {
        tj_emit_tuple(k, c);
        return;
    }
    const tj_level *v = &p->levels[l];
    int innermost = l == p->nlevels - 1;
    if (innermost && k->st.gather_lanes) {
        tj_emit_vector_level(k, v, c);
        return;
    }
    if (tj_pdyn(k, &v->trip)) {
        tj_emit_dyn_level(k, l, v, c);
        return;
    }
    if (tj_by_8(k, l, v)) {
        tj_emit_unrolled_level(k, l, v, c);
        return;
    }
    if (k->st.unrolled || (innermost && l > 0 && v->trip <= TJ_IR_INNER_UNROLL)) {
        for (int64_t i = 0; i < v->trip; i++)
            tj_emit_nest(k, l + 1, tj_advance(k, c, v, tj_i64(e, i)));
        return;
    }
    char name[24];
    snprintf(name, sizeof name, "level%d", l);
    tj_loop lp;
    tj_loop_begin(e, &lp, name, v->trip, NULL);
    tj_vcursor at = tj_advance(k, c, v, lp.iv);
    if (innermost && k->st.prefetch)
        tj_emit_prefetch(k, c, v, lp.iv);
    tj_emit_nest(k, l + 1, at);
    tj_loop_end(e, &lp, NULL);
}
