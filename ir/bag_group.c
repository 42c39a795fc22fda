/*
 * Bags in groups: column blocks, interleaved groups, bags by the out's
 * alignment, and finishing a bag.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- the bags --------------------------------------------------------- */


int64_t tj_bir_vector_len(const tj_bir *k, const tj_colblock *bl, int64_t v)
{
    int64_t rest = bl->n - v * k->lay.lanes;
    return rest < k->lay.lanes ? rest : k->lay.lanes;
}

/* row r of base, made once per block of IR and reused by the row's
 * other vectors there */
static LLVMValueRef tj_bir_row_at(tj_bir *k, LLVMValueRef base, LLVMValueRef r, int64_t row_bytes)
{
    tj_emit *e = &k->e;
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(e->b);
    tj_row_memo *m = &k->row_memo;
    /* reused only in the block that made it, where every emitter appends */
    if (m->bb != bb || m->base != base || m->r != r || m->row_bytes != row_bytes) {
        m->bb = bb, m->base = base, m->r = r, m->row_bytes = row_bytes;
        m->at = tj_byte_gep(e, base, tj_mul(e, r, row_bytes, ""), "row.at");
        m->blk = NULL;
    }
    return m->at;
}

/* Byte address of column c0 + off of row r of base, for the block bl
 * starting at column c0 (none: 0) and off in elements of esize bytes. A
 * block's columns in a loop over blocks start from one address a row,
 * the row's plus the block's bytes (made before the lookup loop), and
 * each vector is a constant from it: the address arithmetic code
 * generation would otherwise fold (or, where FastISel selects, keep as
 * instructions in the loop) is not made. */
static LLVMValueRef tj_bir_col_at(tj_bir *k, LLVMValueRef base, LLVMValueRef r,
                                  const tj_colblock *bl, LLVMValueRef off, int64_t esize,
                                  int64_t row_bytes)
{
    tj_emit *e = &k->e;
    LLVMValueRef at = tj_bir_row_at(k, base, r, row_bytes);
    LLVMValueRef c0_bytes = bl ? bl->c0_bytes : tj_i64(e, 0);
    if (LLVMIsAConstantInt(c0_bytes)) {
        LLVMValueRef c0 = tj_i64(e, LLVMConstIntGetSExtValue(c0_bytes) / k->esize);
        LLVMValueRef bytes = tj_mul(e, tj_add(e, c0, off, ""), esize, "");
        return tj_is_zero(bytes) ? at : tj_byte_gep(e, at, bytes, "cols");
    }
    tj_row_memo *m = &k->row_memo;
    if (!m->blk || m->blk_c0 != c0_bytes || m->blk_esize != esize) {
        /* elements of another size than the table's (none a loop's block
         * addresses yet): the block's columns in those */
        LLVMValueRef bytes =
            esize == k->esize
                ? c0_bytes
                : tj_mul(e, LLVMBuildExactUDiv(e->b, c0_bytes, tj_i64(e, k->esize), ""), esize,
                         "");
        m->blk = tj_byte_gep(e, at, bytes, "cols.block");
        m->blk_c0 = c0_bytes, m->blk_esize = esize;
    }
    if (tj_is_zero(off))
        return m->blk;
    return tj_byte_gep(e, m->blk, tj_mul(e, off, esize, ""), "cols");
}

/* byte address of the block's column c0 + v * lanes of row r of base */
LLVMValueRef tj_bir_cols(tj_bir *k, LLVMValueRef base, LLVMValueRef r, const tj_colblock *bl,
                         int64_t v, int64_t esize, int64_t row_bytes)
{
    return tj_bir_col_at(k, base, r, bl, tj_i64(&k->e, v * k->lay.lanes), esize, row_bytes);
}

/* row r's vector v of the block, widened */
LLVMValueRef tj_bir_load_row(tj_bir *k, LLVMValueRef r, const tj_colblock *bl, int64_t v)
{
    int64_t n = tj_bir_vector_len(k, bl, v);
    LLVMValueRef at = tj_bir_cols(k, k->table, r, bl, v, k->esize, k->lay.row_bytes);
    return tj_bir_widen(k, tj_load(&k->e, tj_bir_vec(k->ety, n), at, "row"), n);
}

/* weights[j] widened, in n lanes */
LLVMValueRef tj_bir_weight(tj_bir *k, LLVMValueRef j, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMValueRef at = tj_byte_gep(e, k->weights, tj_mul(e, j, k->esize, ""), "weight.ptr");
    LLVMValueRef w = tj_bir_widen(k, tj_load(e, tj_bir_vec(k->ety, 1), at, "weight"), 1);
    w = LLVMBuildExtractElement(e->b, w, tj_i32(e, 0), "");
    return tj_bir_splat_value(k, w, n);
}

/* Bag slot i's accumulators at the start: the neutral value (an empty
 * bag's row comes at its end, tj_finish_bag). */
void tj_bir_init_bag(tj_bir *k, tj_colblock *bl, int i)
{
    tj_emit *e = &k->e;
    if (bl->count[i])
        LLVMBuildStore(e->b, tj_i64(e, 0), bl->count[i]);
    for (int64_t v = 0; v < bl->vectors; v++)
        LLVMBuildStore(e->b, tj_bir_neutral(k, tj_bir_vector_len(k, bl, v)), bl->acc[i][v]);
}

/* n elements of the default row from column col as the table holds them
 * (its bits, NaN payloads included: SPEC 10 gives an empty bag that
 * row), or zeros. */
static LLVMValueRef tj_default_at(tj_bir *k, const tj_colblock *bl, LLVMValueRef off,
                                  int64_t n)
{
    if (k->g->default_index < 0)
        return LLVMConstNull(tj_bir_vec(k->ety, n));
    LLVMValueRef at = tj_bir_col_at(k, k->table, tj_i64(&k->e, k->g->default_index), bl, off,
                                    k->esize, k->lay.row_bytes);
    return tj_load(&k->e, tj_bir_vec(k->ety, n), at, "default.row");
}

/* The default row's vector v of block bl, or zeros (tj_default_at). */
LLVMValueRef tj_bir_default_row(tj_bir *k, const tj_colblock *bl, int64_t v)
{
    return tj_default_at(k, bl, tj_i64(&k->e, v * k->lay.lanes), tj_bir_vector_len(k, bl, v));
}

/* A bf16 or f16 row is rounded in a loop over its block's whole vectors,
 * from a buffer on the stack that the accumulators are stored to: the
 * rounding's instructions (ten for bf16, seven in a float sum's fast
 * path), once per vector of the row, were
 * a third of a bf16 kernel's code generation (docs/performance.md, 'Compile time of a
 * bag kernel'), and a bag's rows cost far more than the buffer's round
 * trip through L1. */
static int tj_narrow_in_loop(const tj_bir *k, const tj_colblock *bl)
{
    return (k->g->dtype == JIT_BF16 || k->g->dtype == JIT_F16) && bl->n / k->lay.lanes >= 2;
}

/* Bytes of a parked element: the accumulator of a bf16 or f16 row, f32. */
#define TJ_PARKED_BYTES 4

/* The stack buffer of tj_narrow_in_loop, one per function. */
static LLVMValueRef tj_narrow_buffer(tj_bir *k)
{
    LLVMValueRef fn = LLVMGetBasicBlockParent(k->allocas);
    if (k->narrow_buf_fn != fn) {
        LLVMTypeRef t = LLVMArrayType(k->e.i8, (unsigned)(TJ_BAG_ACC_VECTORS * k->lay.lanes *
                                                          TJ_PARKED_BYTES));
        k->narrow_buf = tj_bir_slot(k, t, "narrow.buf");
        LLVMSetAlignment(k->narrow_buf, 64);
        k->narrow_buf_fn = fn;
    }
    return k->narrow_buf;
}

/* a, the bag's value in n lanes from the block's column c0 + off, to out row b:
 * rounded to the table's type, the default row where the bag is empty */
static void tj_store_bag_vector(tj_bir *k, LLVMValueRef a, LLVMValueRef b, const tj_colblock *bl,
                                LLVMValueRef off, int64_t n, LLVMValueRef empty)
{
    a = tj_bir_narrow(k, a, n);
    if (empty)
        a = LLVMBuildSelect(k->e.b, empty, tj_default_at(k, bl, off, n), a, "bag.value");
    tj_bir_store_at(k, a, tj_bir_col_at(k, k->out, b, bl, off, k->esize, k->lay.row_bytes),
                    k->nt);
}

/* The narrow buffer's vector of accumulators from element `first` (a
 * value), as a pointer of the vector's type (LLVM 14's typed pointers
 * store and load through nothing else). */
static LLVMValueRef tj_parked_at(tj_bir *k, LLVMValueRef first)
{
    tj_emit *e = &k->e;
    LLVMValueRef bytes = LLVMBuildPointerCast(e->b, tj_narrow_buffer(k), e->ptr, "");
    LLVMValueRef at = tj_byte_gep(e, bytes, tj_mul(e, first, TJ_PARKED_BYTES, ""), "parked");
    return LLVMBuildPointerCast(e->b, at, LLVMPointerType(tj_bir_vec(k->aty, k->lay.lanes), 0),
                                "");
}

/* The whole vectors of block bl parked in the narrow buffer to out row b,
 * one vector a trip. */
static void tj_store_parked(tj_bir *k, const tj_colblock *bl, LLVMValueRef b, LLVMValueRef empty)
{
    tj_emit *e = &k->e;
    int64_t lanes = k->lay.lanes;
    LLVMTypeRef vt = tj_bir_vec(k->aty, lanes);
    tj_loop l;
    tj_loop_begin(e, &l, "narrow", bl->n / lanes, NULL);
    LLVMValueRef first = tj_mul(e, l.iv, lanes, "");
    LLVMValueRef a = tj_load(e, vt, tj_parked_at(k, first), "parked");
    tj_store_bag_vector(k, a, b, bl, first, lanes, empty);
    tj_bir_loop_close(k, &l, NULL);
}

/* Bag b (slot i, len lookups) of block bl to out, rounded once: mean
 * divided by the kept count, max zeros where every lookup was dropped, an
 * empty bag the default row as it is or zeros. The default row is
 * selected after the rounding, never computed with: an arithmetic
 * identity (x / 1) or the trip through f32 may quiet a signaling NaN, and
 * LLVM 14 folded the select of the division and its operand into one. */
static void tj_finish_bag(tj_bir *k, tj_colblock *bl, int i, LLVMValueRef b, LLVMValueRef len)
{
    tj_emit *e = &k->e;
    jit_reduction red = k->g->reduction;
    LLVMValueRef count = bl->count[i] ? tj_bir_get(k, bl->count[i], e->i64) : len;
    /* made only where used: dead ones reach code generation (mem2reg) */
    LLVMValueRef some = NULL, divisor = NULL;
    if (red == JIT_REDUCTION_MEAN || (red == JIT_REDUCTION_MAX && bl->count[i]))
        some = LLVMBuildICmp(e->b, LLVMIntSGT, count, tj_i64(e, 0), "");
    if (red == JIT_REDUCTION_MEAN)
        divisor = LLVMBuildSelect(e->b, some, count, tj_i64(e, 1), "divisor");
    /* An empty bag's sum or mean (0 / 1) is the neutral zeros it started
     * from, and so is a max of counted lookups (none kept: zeros): without
     * a default row that is its row already, and the select, which the
     * code generator makes a branch per vector, is not made
     * (docs/performance.md, 'Compile time of a bag kernel'). */
    int zeros_when_empty =
        k->g->default_index < 0 && (red != JIT_REDUCTION_MAX || bl->count[i] != NULL);
    int park = tj_narrow_in_loop(k, bl);
    LLVMValueRef if_empty =
        zeros_when_empty ? NULL : LLVMBuildICmp(e->b, LLVMIntEQ, len, tj_i64(e, 0), "empty");
    /* a mean's divisor, as the accumulator's type, splat once per vector
     * length (the passes, mem2reg alone, would leave a copy per vector
     * for code generation to build and merge) */
    LLVMValueRef div = NULL, d = NULL;
    int64_t d_lanes = 0;
    if (red == JIT_REDUCTION_MEAN)
        div = k->afloat ? LLVMBuildSIToFP(e->b, divisor, k->aty, "") : divisor;
    for (int64_t v = 0; v < bl->vectors; v++) {
        int64_t n = tj_bir_vector_len(k, bl, v);
        LLVMTypeRef vt = tj_bir_vec(k->aty, n);
        LLVMValueRef a = tj_bir_get(k, bl->acc[i][v], vt);
        if (div && n != d_lanes) {
            d = tj_bir_splat_value(k, div, n);
            d_lanes = n;
        }
        if (red == JIT_REDUCTION_MEAN && k->afloat) {
            a = LLVMBuildFDiv(e->b, a, d, "mean");
        } else if (red == JIT_REDUCTION_MEAN) {
            a = k->usigned ? LLVMBuildUDiv(e->b, a, d, "mean") : LLVMBuildSDiv(e->b, a, d, "mean");
        } else if (red == JIT_REDUCTION_MAX && bl->count[i]) {
            a = LLVMBuildSelect(e->b, some, a, LLVMConstNull(vt), "");
        }
        if (park && n == k->lay.lanes) {
            LLVMBuildStore(e->b, a, tj_parked_at(k, tj_i64(e, v * k->lay.lanes)));
            continue;
        }
        tj_store_bag_vector(k, a, b, bl, tj_i64(e, v * k->lay.lanes), n, if_empty);
    }
    if (park)
        tj_store_parked(k, bl, b, if_empty);
}

/* [*start, *end) of bag b's lookups */
static void tj_bag_bounds(tj_bir *k, LLVMValueRef b, LLVMValueRef *start, LLVMValueRef *end)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    if (g->form == TJ_BAG_PACKED) {
        *start = LLVMBuildMul(e->b, b, k->bag_len, "bag.start");
        *end = tj_add(e, *start, k->bag_len, "bag.end");
        return;
    }
    *start = tj_bir_load_idx(k, k->offsets, b, "bag.start");
    LLVMValueRef nb = tj_add(e, b, tj_i64(e, 1), "");
    if (g->include_last_offset) {
        *end = tj_bir_load_idx(k, k->offsets, nb, "bag.end");
        return;
    }
    /* the last bag runs to N: offsets[B] is not there to read */
    LLVMValueRef more = LLVMBuildICmp(e->b, LLVMIntULT, nb, k->offsets_len, "");
    LLVMValueRef at = LLVMBuildSelect(e->b, more, nb, b, "");
    LLVMValueRef next = tj_bir_load_idx(k, k->offsets, at, "");
    *end = LLVMBuildSelect(e->b, more, next, k->lookups, "bag.end");
}

/* Bags [b, b + slots) over block bl, those before end (every one where
 * end is NULL): their lookups interleaved up to the longest one's end,
 * each bag in index order; a slot past end has no lookups and writes
 * nothing. */
static void tj_emit_group_block(tj_bir *k, tj_colblock *bl, LLVMValueRef b, int slots,
                                LLVMValueRef end)
{
    tj_emit *e = &k->e;
    LLVMValueRef start[TJ_BAG_INTERLEAVE_MAX], len[TJ_BAG_INTERLEAVE_MAX];
    LLVMValueRef bi[TJ_BAG_INTERLEAVE_MAX];
    LLVMValueRef in[TJ_BAG_INTERLEAVE_MAX] = {NULL};
    LLVMValueRef longest = NULL;
    for (int i = 0; i < slots; i++) {
        LLVMValueRef last;
        bi[i] = tj_add(e, b, tj_i64(e, i), "bag");
        if (i > 0 && end) /* bag b is there: the group's first */
            in[i] = LLVMBuildICmp(e->b, LLVMIntSLT, bi[i], end, "slot.used");
        tj_bag_bounds(k, in[i] ? LLVMBuildSelect(e->b, in[i], bi[i], b, "") : bi[i], &start[i],
                      &last);
        len[i] = LLVMBuildSub(e->b, last, start[i], "bag.len");
        if (in[i])
            len[i] = LLVMBuildSelect(e->b, in[i], len[i], tj_i64(e, 0), "bag.len");
        tj_bir_init_bag(k, bl, i);
        if (!longest) {
            longest = len[i];
            continue;
        }
        LLVMValueRef more = LLVMBuildICmp(e->b, LLVMIntSGT, len[i], longest, "");
        longest = LLVMBuildSelect(e->b, more, len[i], longest, "longest");
    }
    k->fast_nan = k->nan_seen != NULL;
    tj_bir_lookup_loop(k, bl, slots, start, len, longest);
    if (k->fast_nan)
        tj_bir_nan_note(k, bl, slots);
    for (int i = 0; i < slots; i++) {
        LLVMBasicBlockRef next = NULL;
        if (in[i]) {
            LLVMBasicBlockRef write = tj_block(e, "slot.write");
            next = tj_block(e, "slot.done");
            LLVMBuildCondBr(e->b, in[i], write, next);
            LLVMPositionBuilderAtEnd(e->b, write);
        }
        tj_finish_bag(k, bl, i, bi[i], len[i]);
        if (next) {
            LLVMBuildBr(e->b, next);
            LLVMPositionBuilderAtEnd(e->b, next);
        }
    }
    k->fast_nan = 0;
}

/* The accumulators of a block of n columns. */
static void tj_block_slots(tj_bir *k, tj_colblock *bl, int64_t n, int slots)
{
    tj_emit *e = &k->e;
    bl->n = n;
    bl->vectors = (n + k->lay.lanes - 1) / k->lay.lanes;
    int counted = k->drops && k->g->reduction != JIT_REDUCTION_SUM;
    for (int i = 0; i < slots; i++) {
        for (int64_t v = 0; v < bl->vectors; v++)
            bl->acc[i][v] = tj_bir_slot(k, tj_bir_vec(k->aty, tj_bir_vector_len(k, bl, v)), "acc");
        bl->count[i] = counted ? tj_bir_slot(k, e->i64, "kept") : NULL;
    }
}

/* Bags [b, b + slots) before end, block by block of the row. A row of
 * two or more blocks is a loop over them, each trip prefetching its own
 * columns: a copy of the block per trip was a sixth to a quarter of the
 * compile of a row of 128 f32 or bf16 in 256-bit vectors
 * (docs/performance.md, 'Sixth round'). */
static void tj_emit_group(tj_bir *k, LLVMValueRef b, int slots, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    int64_t width = k->lay.block_elems, full = k->g->row_elems / width;
    int64_t rest = k->g->row_elems % width;
    tj_colblock bl = {0};
    tj_block_slots(k, &bl, width, slots);
    if (full == 1) {
        bl.prefetch = TJ_PREFETCH_ROW;
        bl.c0_bytes = tj_i64(e, 0);
        tj_emit_group_block(k, &bl, b, slots, end);
    } else {
        tj_loop l;
        bl.prefetch = TJ_PREFETCH_BLOCK;
        tj_loop_begin(e, &l, "block", full, NULL);
        bl.c0_bytes = tj_mul(e, l.iv, width * k->esize, "block.bytes");
        tj_emit_group_block(k, &bl, b, slots, end);
        tj_bir_loop_close(k, &l, NULL);
    }
    if (rest) {
        tj_colblock tail = {0};
        tj_block_slots(k, &tail, rest, slots);
        tail.prefetch = full == 1 ? TJ_PREFETCH_NONE : TJ_PREFETCH_BLOCK;
        tail.c0_bytes = tj_i64(e, full * width * k->esize);
        tj_emit_group_block(k, &tail, b, slots, end);
    }
}

/* Bags [begin, end): groups of `interleave` (the last one short: one
 * group's code rather than a loop of its own for the rest), or one by
 * one. */
static void tj_emit_bags(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    if (k->g->row_elems == 0)
        return;
    if (k->st.prefetch && !k->primed) {
        LLVMValueRef first;
        if (k->g->form == TJ_BAG_PACKED) {
            first = LLVMBuildMul(e->b, begin, k->bag_len, "first");
        } else { /* offsets[begin], when there is a bag there */
            LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSLT, begin, end, "");
            LLVMValueRef at = LLVMBuildSelect(e->b, some, begin, tj_i64(e, 0), "");
            LLVMValueRef o = tj_bir_load_idx_if(k, some, k->offsets, at, "");
            first = LLVMBuildSelect(e->b, some, o, k->lookups, "first");
        }
        tj_bir_prime(k, first);
    }
    int64_t n = k->lay.interleave;
    tj_loop l;
    if (n > 1) { /* the last group's slots past end idle */
        LLVMValueRef bags = LLVMBuildSub(e->b, end, begin, "");
        LLVMValueRef groups = LLVMBuildSDiv(e->b, tj_add(e, bags, tj_i64(e, n - 1), ""),
                                            tj_i64(e, n), "groups");
        /* bags known to fill every group: no slot tests whether its bag is there */
        int whole = LLVMIsAConstantInt(bags) && LLVMConstIntGetSExtValue(bags) % n == 0;
        tj_loop_begin_n(e, &l, "group", groups, NULL);
        tj_emit_group(k, tj_add(e, begin, tj_mul(e, l.iv, n, ""), "group.bag"), (int)n,
                      whole ? NULL : end);
        tj_bir_loop_close(k, &l, NULL);
        return;
    }
    tj_loop_begin_range(e, &l, "bag", begin, end);
    tj_emit_group(k, l.iv, 1, NULL);
    tj_bir_loop_close(k, &l, NULL);
}

static void tj_emit_bags_stored(tj_bir *k, LLVMValueRef begin, LLVMValueRef end);

/* Bags [begin, end), then those a float sum's fast path left with a NaN
 * again (tj_bir_nan_redo); the status to return (an i32). */
LLVMValueRef tj_bir_emit_bags_by_alignment(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    k->nan_seen = NULL;
    if (k->g->row_elems > 0 && tj_bir_nan_redo_wanted(k)) {
        LLVMTypeRef t = tj_bir_nan_type(k);
        k->nan_seen = tj_bir_slot(k, t, "nan.seen");
        LLVMBuildStore(e->b, LLVMConstNull(t), k->nan_seen);
    }
    tj_emit_bags_stored(k, begin, end);
    return k->nan_seen ? tj_bir_nan_redo(k, begin, end) : tj_i32(e, 0);
}

/* With streaming stores: the bags twice, for a 64-byte aligned out
 * (streaming, then a fence that orders them) and for any other. */
static void tj_emit_bags_stored(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    if (!k->st.nontemporal) {
        tj_emit_bags(k, begin, end);
        return;
    }
    LLVMValueRef addr = LLVMBuildPtrToInt(e->b, k->out, e->i64, "out.addr");
    LLVMValueRef low = LLVMBuildAnd(e->b, addr, tj_i64(e, 63), "");
    LLVMBasicBlockRef nt = tj_block(e, "bags.stream"), plain = tj_block(e, "bags.cached");
    LLVMBasicBlockRef done = tj_block(e, "bags.done");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, low, tj_i64(e, 0), ""), nt, plain);
    LLVMPositionBuilderAtEnd(e->b, nt);
    k->nt = 1;
    tj_emit_bags(k, begin, end);
    k->nt = 0;
    LLVMBuildFence(e->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, plain);
    tj_emit_bags(k, begin, end);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}
