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

/* Prefetches row + at + o for each offset o (at: an i64 value; where it
 * is not a constant, one address row + at and the offsets from it). Raw:
 * a prefetch never faults, so no policy. */
static void tj_prefetch_at(tj_bir *k, LLVMValueRef row, LLVMValueRef at, const int64_t *o,
                           int64_t count)
{
    tj_emit *e = &k->e;
    unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
    LLVMTypeRef pty = e->ptr;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &pty, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &pty, 1);
    if (!LLVMIsAConstantInt(at)) {
        row = LLVMBuildGEP2(e->b, e->i8, row, &at, 1, "pf.block");
        at = tj_i64(e, 0);
    }
    for (int64_t i = 0; i < count; i++) {
        LLVMValueRef off = tj_add(e, at, tj_i64(e, o[i]), "");
        /* read, locality 2 (into L2: see TJ_BAG_PREFETCH_BYTES), data */
        LLVMValueRef at_o = tj_is_zero(off) ? row : LLVMBuildGEP2(e->b, e->i8, row, &off, 1, "");
        LLVMValueRef args[4] = {at_o, tj_i32(e, 0), tj_i32(e, 2), tj_i32(e, 1)};
        LLVMBuildCall2(e->b, fty, fn, args, 4, "");
    }
}

/* Offsets 0, 64, ... below n into lines (at most 63, leaving room for a
 * last byte); their count. */
static int64_t tj_line_steps(int64_t n, int64_t *lines)
{
    int64_t count = 0;
    for (int64_t o = 0; o < n && count < 63; o += 64)
        lines[count++] = o;
    return count;
}

/* Prefetches every line of the row at `row`: one every 64 bytes, at most
 * 63, and the row's last byte where it is off the lines' grid (the
 * runtime's primer, tj_rt_bag_prime, prefetches the same). */
void tj_bir_prefetch_lines(tj_bir *k, LLVMValueRef row)
{
    int64_t n = k->lay.row_bytes, lines[64];
    int64_t count = tj_line_steps(n, lines);
    if (n % 64 && n > 64) /* a row off the lines' grid spans one more */
        lines[count++] = n - 1;
    tj_prefetch_at(k, row, tj_i64(&k->e, 0), lines, count);
}

/* The largest power of two up to 64 that divides v (64 for 0). */
static int64_t tj_line_align(int64_t v)
{
    int64_t a = v & -v;
    return v == 0 || a > 64 ? 64 : a;
}

/* Prefetches the lines of bytes [at, at + n) of `row`, where the row's
 * start and at are multiples of `align` bytes (a power of two up to 64)
 * from a line's start: a line every 64 bytes, and the range's last byte
 * where a range so placed can span one line more than those (a block of
 * 256 bytes 16 bytes into a line spans 5). */
static void tj_prefetch_range(tj_bir *k, LLVMValueRef row, LLVMValueRef at, int64_t n,
                              int64_t align)
{
    int64_t lines[64];
    int64_t count = tj_line_steps(n, lines);
    int64_t most = (64 - align + n - 1) / 64 + 1; /* lines it spans at the worst offset */
    if (most > count)
        lines[count++] = n - 1;
    tj_prefetch_at(k, row, at, lines, count);
}

/* The lookup st.prefetch ahead of j, or the last one near the end. */
LLVMValueRef tj_bir_lookup_ahead(tj_bir *k, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    LLVMValueRef ahead = tj_add(e, j, tj_i64(e, k->st.prefetch), "pf.ahead");
    LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, ahead, k->last_lookup, "");
    return LLVMBuildSelect(e->b, in, ahead, k->last_lookup, "pf.at");
}

/* The row of the lookup st.prefetch ahead of j (the last one near the
 * end): all of its lines, or with bl those of bl's columns. */
static void tj_prefetch_ahead_of(tj_bir *k, LLVMValueRef j, const tj_colblock *bl)
{
    tj_emit *e = &k->e;
    LLVMValueRef v = tj_bir_load_idx(k, k->indices, tj_bir_lookup_ahead(k, j), "pf.index");
    LLVMValueRef off = tj_mul(e, v, k->lay.row_bytes, "pf.off");
    LLVMValueRef row = LLVMBuildGEP2(e->b, e->i8, k->table, &off, 1, "pf.row");
    if (!bl) {
        tj_bir_prefetch_lines(k, row);
        return;
    }
    /* the block's offset in the row: a multiple of the blocks' bytes (a
     * trip of the loop over blocks) or the rest's constant offset */
    int64_t step = LLVMIsAConstantInt(bl->c0_bytes) ? LLVMConstIntGetSExtValue(bl->c0_bytes)
                                                    : k->lay.block_elems * k->esize;
    int64_t align = tj_line_align(k->lay.row_bytes);
    if (tj_line_align(step) < align)
        align = tj_line_align(step);
    tj_prefetch_range(k, row, bl->c0_bytes, bl->n * k->esize, align);
}

/* The row of the lookup st.prefetch ahead of j, all its lines. */
void tj_bir_prefetch_ahead(tj_bir *k, LLVMValueRef j)
{
    tj_prefetch_ahead_of(k, j, NULL);
}

/* The rows of the first st.prefetch lookups from first (primed): one call
 * of the runtime's loop (runtime/exec/bag_prime.h), which prefetches the
 * same lines as a whole row's prefetch; a loop of the kernel's own was
 * 3-5% of the compile's instructions (docs/performance.md, 'Sixth round'). */
void tj_bir_prime(tj_bir *k, LLVMValueRef first)
{
    tj_emit *e = &k->e;
    LLVMValueRef left = LLVMBuildSub(e->b, k->lookups, first, "");
    LLVMValueRef few = LLVMBuildICmp(e->b, LLVMIntSLT, left, tj_i64(e, k->st.prefetch), "");
    LLVMValueRef n = LLVMBuildSelect(e->b, few, left, tj_i64(e, k->st.prefetch), "prime.n");
    LLVMTypeRef params[6] = {e->ptr, e->ptr, e->i64, e->i64, e->i64, e->i64};
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->ctx), params, 6, 0);
    LLVMValueRef args[6] = {k->table, k->indices, first, n, tj_i64(e, k->lay.row_bytes),
                            tj_i64(e, k->g->index_type)};
    LLVMBuildCall2(e->b, fty, tj_runtime_fn(e, TJ_RT_BAG_PRIME, fty), args, 6, "");
}

/* Lookup j into bag slot i's accumulators of block bl. */
static void tj_lookup(tj_bir *k, tj_colblock *bl, int i, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    if (bl->prefetch && k->st.prefetch)
        tj_prefetch_ahead_of(k, j, bl->prefetch == TJ_PREFETCH_BLOCK ? bl : NULL);
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
    tj_bir_while_begin(k, &l, "lookup", n);
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
    tj_bir_while_close(k, &l);
}

/* A float sum's (or mean's) lookups run a fast path whose adds and
 * multiplies leave NaNs to the hardware (which NaN an fadd of two gives
 * hangs on the operand order LLVM picks); NaN is sticky in them, so an
 * accumulator without one at the bag's end got the rule's bits, and one
 * with a NaN has its bag reduced again by the reference kernel, whose rule
 * it is (tj_bir_nan_note, tj_bir_nan_redo). The
 * rule's selects, a compare and a blend per vector per lookup, showed in
 * cache-resident bags (E3). */
int tj_bir_nan_redo_wanted(const tj_bir *k)
{
    return k->afloat && k->g->reduction != JIT_REDUCTION_MAX;
}

/* The lanes of the group's accumulators that hold a NaN, OR-ed into
 * nan_seen: one compare and one OR per two vectors, no branch, and nothing
 * per bag to reduce to a flag: a per-bag flag (a mask moved to a general
 * register, a compare, selects of the range of such bags) was 0.4 ms of
 * E1's 3.8 ms of code generation (docs/performance.md, 'Compile time of a
 * bag kernel'). A vector shorter than a row's lanes (its tail) fills the
 * rest with no NaN. */
LLVMTypeRef tj_bir_nan_type(const tj_bir *k)
{
    LLVMTypeRef lane = k->lay.mask_regs
                           ? k->e.i1
                           : LLVMIntTypeInContext(k->e.ctx, LLVMGetTypeKind(k->aty) == LLVMFloatTypeKind
                                                                ? 32
                                                                : 64);
    return tj_bir_vec(lane, k->lay.lanes);
}

void tj_bir_nan_note(tj_bir *k, const tj_colblock *bl, int slots)
{
    tj_emit *e = &k->e;
    int64_t lanes = k->lay.lanes;
    LLVMTypeRef t = tj_bir_nan_type(k);
    LLVMValueRef seen = tj_bir_get(k, k->nan_seen, t);
    for (int i = 0; i < slots; i++)
        for (int64_t v = 0, step; v < bl->vectors; v += step) {
            int64_t w = tj_bir_vector_len(k, bl, v);
            LLVMValueRef a = tj_bir_get(k, bl->acc[i][v], tj_bir_vec(k->aty, w)), b = a;
            step = 1;
            if (v + 1 < bl->vectors && tj_bir_vector_len(k, bl, v + 1) == w) {
                b = tj_bir_get(k, bl->acc[i][v + 1], tj_bir_vec(k->aty, w));
                step = 2;
            }
            /* unordered: a lane of either is a NaN (one compare for two) */
            LLVMValueRef nan = LLVMBuildFCmp(e->b, LLVMRealUNO, a, b, "");
            if (!k->lay.mask_regs) /* the compare's lanes as vcmpps leaves them */
                nan = LLVMBuildSExt(e->b, nan, tj_bir_vec(LLVMGetElementType(t), w), "");
            if (w < lanes) {
                LLVMValueRef pick[TJ_BIR_MAX_LANES];
                for (int64_t l = 0; l < lanes; l++)
                    pick[l] = tj_i32(e, (int)(l < w ? l : w));
                nan = LLVMBuildShuffleVector(e->b, nan, LLVMConstNull(LLVMTypeOf(nan)),
                                             LLVMConstVector(pick, (unsigned)lanes), "");
            }
            seen = LLVMBuildOr(e->b, seen, nan, "nan.seen");
        }
    LLVMBuildStore(e->b, seen, k->nan_seen);
}

/* After bags [begin, end), if some fast path ended in a NaN: those bags
 * whose rows hold a NaN reduced again under the rule by the reference
 * kernel: tj_rt_bag_redo(self, dims or NULL, the buffers, begin, end),
 * which finds them (a row the fast path left without a NaN has the rule's
 * bits: NaN is sticky in its adds), its status returned if it fails.
 * After the bags' stores (and the streaming ones' fence), so that its
 * stores are the last. The call's status: 0, or the redo's (a phi, not
 * a block that returns it: code generation pays for every block). The
 * rule's own loops here, a vector of columns at a time, cost 1.5 ms of a
 * 6.5 ms compile for a path that NaNs alone take (docs/performance.md,
 * 'Compile time of a bag kernel'). */
LLVMValueRef tj_bir_nan_redo(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    LLVMTypeRef t = tj_bir_nan_type(k);
    LLVMValueRef seen = tj_bir_get(k, k->nan_seen, t);
    LLVMTypeRef bits_ty = LLVMIntTypeInContext(
        e->ctx, (unsigned)(k->lay.lanes * LLVMGetIntTypeWidth(LLVMGetElementType(t))));
    LLVMValueRef bits = LLVMBuildBitCast(e->b, seen, bits_ty, "nan.lanes");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b), redo = tj_block(e, "bag.nan");
    LLVMBasicBlockRef done = tj_block(e, "bag.nan.done");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntNE, bits, LLVMConstNull(bits_ty), ""), redo,
                    done);
    LLVMPositionBuilderAtEnd(e->b, redo);
    LLVMValueRef args[9] = {LLVMConstPointerCast(k->main_fn, e->ptr),
                            k->dims ? k->dims : LLVMConstPointerNull(e->ptr),
                            k->table, k->indices, k->offsets, k->weights, k->out, begin, end};
    LLVMValueRef st = tj_bir_call_rt(k, TJ_RT_BAG_REDO, args, 9, "status");
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
    LLVMValueRef status = LLVMBuildPhi(e->b, e->i32, "status");
    LLVMValueRef vals[2] = {tj_i32(e, 0), st};
    LLVMBasicBlockRef from[2] = {pre, redo};
    LLVMAddIncoming(status, vals, from, 2);
    return status;
}
