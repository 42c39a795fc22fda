/*
 * A bag's lookups: resolving an index, prefetch and priming, the lookup
 * loops and the NaN redo.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- lookups ---------------------------------------------------------- */

/* The row index v resolves to, and whether the lookup is kept (NULL:
 * always): the policy, then padding. */
LLVMValueRef tj_bir_resolve(tj_bir *k, LLVMValueRef v, LLVMValueRef *keep)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    LLVMValueRef rows = k->rows;
    *keep = NULL;
    int wraps = g->policy == JIT_INDEX_NEGATIVE_WRAPS ||
                g->policy == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL;
    if (wraps && k->idx_signed) {
        LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_i64(e, 0), "");
        v = LLVMBuildSelect(e->b, neg, tj_add(e, v, rows, ""), v, "wrapped");
    }
    if (g->policy == JIT_INDEX_CLAMP) {
        if (k->idx_signed)
            v = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_i64(e, 0), ""),
                                tj_i64(e, 0), v, "");
        LLVMValueRef top = LLVMBuildSub(e->b, rows, tj_i64(e, 1), "top");
        v = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntUGT, v, top, ""), top, v, "clamped");
    }
    if (tj_policy_fills(g->policy))
        *keep = LLVMBuildICmp(e->b, LLVMIntULT, v, rows, "in.table");
    if (g->padding_row >= 0) {
        LLVMValueRef pad = LLVMBuildICmp(e->b, LLVMIntNE, v, tj_i64(e, g->padding_row), "not.pad");
        *keep = *keep ? LLVMBuildAnd(e->b, *keep, pad, "kept") : pad;
    }
    return v;
}

/* Prefetches every line of the row at `row` (raw: a prefetch never
 * faults, so no policy). */
void tj_bir_prefetch_lines(tj_bir *k, LLVMValueRef row)
{
    tj_emit *e = &k->e;
    unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
    LLVMTypeRef pty = e->ptr;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &pty, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &pty, 1);
    int64_t n = k->lay.row_bytes, lines[64], count = 0;
    for (int64_t o = 0; o < n && count < 63; o += 64)
        lines[count++] = o;
    if (n % 64 && n > 64) /* a row off the lines' grid spans one more */
        lines[count++] = n - 1;
    for (int64_t i = 0; i < count; i++) {
        LLVMValueRef o = tj_i64(e, lines[i]);
        /* read, locality 2 (into L2: see TJ_BAG_PREFETCH_BYTES), data */
        LLVMValueRef args[4] = {LLVMBuildGEP2(e->b, e->i8, row, &o, 1, ""), tj_i32(e, 0),
                                tj_i32(e, 2), tj_i32(e, 1)};
        LLVMBuildCall2(e->b, fty, fn, args, 4, "");
    }
}

/* Prefetches every line of the row that indices[pos] names. */
void tj_bir_prefetch_row(tj_bir *k, LLVMValueRef pos)
{
    tj_emit *e = &k->e;
    LLVMValueRef v = tj_bir_load_idx(k, k->indices, pos, "pf.index");
    LLVMValueRef off = tj_mul(e, v, k->lay.row_bytes, "pf.off");
    tj_bir_prefetch_lines(k, LLVMBuildGEP2(e->b, e->i8, k->table, &off, 1, "pf.row"));
}

/* The row of the lookup st.prefetch ahead of j (the last one near the end) */
void tj_bir_prefetch_ahead(tj_bir *k, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    LLVMValueRef ahead = tj_add(e, j, tj_i64(e, k->st.prefetch), "pf.ahead");
    LLVMValueRef last = LLVMBuildSub(e->b, k->lookups, tj_i64(e, 1), "last");
    LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, ahead, last, "");
    tj_bir_prefetch_row(k, LLVMBuildSelect(e->b, in, ahead, last, "pf.at"));
}

/* The rows of the first st.prefetch lookups from first (primed). */
void tj_bir_prime(tj_bir *k, LLVMValueRef first)
{
    tj_emit *e = &k->e;
    LLVMValueRef left = LLVMBuildSub(e->b, k->lookups, first, "");
    LLVMValueRef few = LLVMBuildICmp(e->b, LLVMIntSLT, left, tj_i64(e, k->st.prefetch), "");
    LLVMValueRef n = LLVMBuildSelect(e->b, few, left, tj_i64(e, k->st.prefetch), "prime.n");
    tj_loop l;
    tj_loop_begin_n(e, &l, "prime", n, NULL);
    tj_bir_prefetch_row(k, tj_add(e, first, l.iv, ""));
    tj_bir_loop_close(k, &l, NULL);
}

/* Lookup j into bag slot i's accumulators of block bl. */
static void tj_lookup(tj_bir *k, tj_colblock *bl, int i, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    if (bl->prefetch && k->st.prefetch)
        tj_bir_prefetch_ahead(k, j);
    LLVMValueRef keep, r = tj_bir_resolve(k, tj_bir_load_idx(k, k->indices, j, "index"), &keep);
    LLVMBasicBlockRef next = NULL;
    if (keep) {
        LLVMBasicBlockRef add = tj_block(e, "lookup.add");
        next = tj_block(e, "lookup.next");
        LLVMBuildCondBr(e->b, keep, add, next);
        LLVMPositionBuilderAtEnd(e->b, add);
    }
    for (int64_t v = 0; v < bl->vectors; v++) {
        int64_t n = tj_bir_vector_len(k, bl, v);
        LLVMValueRef x = tj_bir_load_row(k, r, bl, v);
        if (k->g->has_weights)
            x = tj_bir_weigh(k, x, tj_bir_weight(k, j, n));
        LLVMTypeRef at = tj_bir_vec(k->aty, n);
        LLVMBuildStore(e->b, tj_bir_combine(k, tj_bir_get(k, bl->acc[i][v], at), x), bl->acc[i][v]);
    }
    if (bl->count[i])
        LLVMBuildStore(e->b, tj_add(e, tj_bir_get(k, bl->count[i], e->i64), tj_i64(e, 1), ""),
                       bl->count[i]);
    if (next) {
        LLVMBuildBr(e->b, next);
        LLVMPositionBuilderAtEnd(e->b, next);
    }
}

/* for j in [0, n): lookup start[s] + j into each slot s, where j <
 * len[s] when there are several: the bags of a group in one loop, the
 * shorter ones skipping their slot past their end (a loop of their own
 * for each bag's rest was as many more loops to generate) */
void tj_bir_lookup_loop(tj_bir *k, tj_colblock *bl, int slots, LLVMValueRef *start,
                        LLVMValueRef *len, LLVMValueRef n)
{
    tj_emit *e = &k->e;
    tj_loop l;
    tj_loop_begin_n(e, &l, "lookup", n, NULL);
    for (int s = 0; s < slots; s++) {
        LLVMBasicBlockRef next = NULL;
        if (slots > 1) {
            LLVMBasicBlockRef in = tj_block(e, "slot.in");
            next = tj_block(e, "slot.next");
            LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, l.iv, len[s], ""), in, next);
            LLVMPositionBuilderAtEnd(e->b, in);
        }
        tj_lookup(k, bl, s, tj_add(e, start[s], l.iv, "j"));
        if (next) {
            LLVMBuildBr(e->b, next);
            LLVMPositionBuilderAtEnd(e->b, next);
        }
    }
    tj_bir_loop_close(k, &l, NULL);
}

/* A float sum's (or mean's) lookups run a fast path whose adds and
 * multiplies leave NaNs to the hardware (which NaN an fadd of two gives
 * hangs on the operand order LLVM picks); NaN is sticky in them, so an
 * accumulator without one at the bag's end got the rule's bits, and one
 * with a NaN has its bag reduced again under the rule (tj_bir_nan_redo). The
 * rule's selects, a compare and a blend per vector per lookup, showed in
 * cache-resident bags (E3). */
int tj_bir_nan_redo_wanted(const tj_bir *k)
{
    return k->afloat && k->g->reduction != JIT_REDUCTION_MAX;
}

/* The group's bags under the rule into dest[s] (an accumulator of type
 * n x aty): columns [c0, c0 + n), one vector of them (no prefetch: the
 * rows were just read). */
static void tj_redo_vector(tj_bir *k, int slots, LLVMValueRef *start, LLVMValueRef *len,
                           LLVMValueRef longest, LLVMValueRef c0, int64_t n, LLVMValueRef *dest)
{
    LLVMTypeRef vt = tj_bir_vec(k->aty, n);
    tj_colblock one = {.c0 = c0, .n = n, .vectors = 1};
    for (int s = 0; s < slots; s++) {
        one.acc[s][0] = tj_bir_slot(k, vt, "redo.acc");
        tj_bir_init_bag(k, &one, s);
    }
    tj_bir_lookup_loop(k, &one, slots, start, len, longest);
    for (int s = 0; s < slots; s++)
        LLVMBuildStore(k->e.b, tj_bir_get(k, one.acc[s][0], vt), dest[s]);
}

/* If an accumulator of the group's holds a NaN: the group's bags again,
 * NaNs by the rule (a bag without one gets the same bits again), a
 * vector of columns at a time (a lane's sum reads its own column only),
 * the whole vectors in a loop through arrays on the stack: the rare path
 * then holds a vector's lookups, not the row's, and generates in less
 * time (docs/performance.md, 'Compile time of a bag kernel'). The kept
 * counts are the fast pass's. */
void tj_bir_nan_redo(tj_bir *k, tj_colblock *bl, int slots, LLVMValueRef *start,
                     LLVMValueRef *len, LLVMValueRef longest)
{
    tj_emit *e = &k->e;
    LLVMValueRef any = tj_false(e);
    for (int i = 0; i < slots; i++)
        for (int64_t v = 0; v < bl->vectors; v++) {
            int64_t w = tj_bir_vector_len(k, bl, v);
            LLVMValueRef a = tj_bir_get(k, bl->acc[i][v], tj_bir_vec(k->aty, w));
            LLVMValueRef nan = LLVMBuildFCmp(e->b, LLVMRealUNO, a, a, "");
            LLVMTypeRef bits_ty = LLVMIntTypeInContext(e->ctx, (unsigned)w);
            LLVMValueRef bits = LLVMBuildBitCast(e->b, nan, bits_ty, "");
            any = LLVMBuildOr(e->b, any,
                              LLVMBuildICmp(e->b, LLVMIntNE, bits, LLVMConstNull(bits_ty), ""),
                              "any.nan");
        }
    LLVMBasicBlockRef redo = tj_block(e, "bag.nan"), done = tj_block(e, "bag.nan.done");
    LLVMBuildCondBr(e->b, any, redo, done);
    LLVMPositionBuilderAtEnd(e->b, redo);
    k->fast_nan = 0;
    int64_t lanes = k->lay.lanes, full = bl->n / lanes, rest = bl->n % lanes;
    LLVMValueRef dest[TJ_BAG_INTERLEAVE_MAX];
    if (full == 1) {
        for (int s = 0; s < slots; s++)
            dest[s] = bl->acc[s][0];
        tj_redo_vector(k, slots, start, len, longest, bl->c0, lanes, dest);
    } else if (full > 1) {
        LLVMTypeRef vt = tj_bir_vec(k->aty, lanes), at = LLVMArrayType(vt, (unsigned)full);
        LLVMValueRef row[TJ_BAG_INTERLEAVE_MAX];
        for (int s = 0; s < slots; s++)
            row[s] = tj_bir_slot(k, at, "redo.row");
        tj_loop l;
        tj_loop_begin(e, &l, "redo.col", full, NULL);
        LLVMValueRef at_v[2] = {tj_i64(e, 0), l.iv};
        for (int s = 0; s < slots; s++)
            dest[s] = LLVMBuildGEP2(e->b, at, row[s], at_v, 2, "");
        LLVMValueRef c0 = tj_add(e, bl->c0, tj_mul(e, l.iv, lanes, ""), "redo.c0");
        tj_redo_vector(k, slots, start, len, longest, c0, lanes, dest);
        tj_bir_loop_close(k, &l, NULL);
        for (int s = 0; s < slots; s++)
            for (int64_t v = 0; v < full; v++) {
                LLVMValueRef idx[2] = {tj_i64(e, 0), tj_i64(e, v)};
                LLVMValueRef x = tj_bir_get(k, LLVMBuildGEP2(e->b, at, row[s], idx, 2, ""), vt);
                LLVMBuildStore(e->b, x, bl->acc[s][v]);
            }
    }
    if (rest) {
        for (int s = 0; s < slots; s++)
            dest[s] = bl->acc[s][full];
        tj_redo_vector(k, slots, start, len, longest,
                       tj_add(e, bl->c0, tj_i64(e, full * lanes), ""), rest, dest);
    }
    k->fast_nan = 1;
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}
