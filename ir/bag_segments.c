/*
 * The segments form: lookups added into their segment's row, its scratch
 * and its range.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- segments --------------------------------------------------------- */

/* tj_rt_scratch(bytes), or return JIT_STATUS_NO_MEMORY */
static LLVMValueRef tj_scratch(tj_bir *k, LLVMValueRef bytes)
{
    tj_emit *e = &k->e;
    LLVMTypeRef fty = LLVMFunctionType(e->ptr, &e->i64, 1, 0);
    LLVMValueRef fn = tj_runtime_fn(e, TJ_RT_SCRATCH, fty);
    LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSGT, bytes, tj_i64(e, 0), "");
    LLVMValueRef n = LLVMBuildSelect(e->b, some, bytes, tj_i64(e, 1), "scratch.bytes");
    LLVMValueRef s = LLVMBuildCall2(e->b, fty, fn, &n, 1, "scratch");
    LLVMBasicBlockRef fail = tj_block(e, "scratch.fail"), ok = tj_block(e, "scratch.ok");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, s, LLVMConstNull(e->ptr), ""), fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, tj_i32(e, JIT_STATUS_NO_MEMORY));
    LLVMPositionBuilderAtEnd(e->b, ok);
    return s;
}

/* Continues where cond holds, else at *skip (made on first use). */
static void tj_lookup_if(tj_bir *k, LLVMValueRef cond, const char *name, LLVMBasicBlockRef *skip)
{
    tj_emit *e = &k->e;
    if (!*skip)
        *skip = tj_block(e, "lookup.next");
    LLVMBasicBlockRef go = tj_block(e, name);
    LLVMBuildCondBr(e->b, cond, go, *skip);
    LLVMPositionBuilderAtEnd(e->b, go);
}

/* A segments range's prefetch: the row of the lookup st.prefetch ahead of
 * j (the last one near the end) when its segment is in [begin, begin +
 * segments), else the table's first row, which is in cache after the first:
 * a branch would mispredict as often as the ids change parts, and a
 * range that fetched every row would fetch the other parts' too. */
static void tj_prefetch_ours(tj_bir *k, LLVMValueRef j, LLVMValueRef begin,
                             LLVMValueRef segments)
{
    tj_emit *e = &k->e;
    LLVMValueRef at = tj_bir_lookup_ahead(k, j);
    LLVMValueRef seg = tj_bir_load_idx(k, k->offsets, at, "pf.segment");
    LLVMValueRef s = LLVMBuildSub(e->b, seg, begin, "");
    LLVMValueRef ours = LLVMBuildICmp(e->b, LLVMIntULT, s, segments, "pf.ours");
    LLVMValueRef v = tj_bir_load_idx(k, k->indices, at, "pf.index");
    LLVMValueRef off = LLVMBuildSelect(e->b, ours, tj_mul(e, v, k->lay.row_bytes, ""),
                                       tj_i64(e, 0), "pf.off");
    tj_bir_prefetch_lines(k, LLVMBuildGEP2(e->b, e->i8, k->table, &off, 1, "pf.row"));
}

/* Segments: each lookup added into its segment's row in memory (out, or
 * f32 rows of the scratch for f16/bf16, which must round once), in index
 * order; then the segments no id named get the default row or zeros.
 * A split kernel's range (begin non-NULL) owns segments [begin, end): it
 * scans every id and adds only the lookups of its own, so that each
 * segment's are still added in index order by one thread. */
void tj_bir_emit_segments(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    int64_t D = g->row_elems;
    if (D == 0)
        return;
    /* rows counted from the range's first */
    LLVMValueRef S = begin ? LLVMBuildSub(e->b, end, begin, "range.segments") : k->bags;
    LLVMValueRef out = begin ? tj_byte_gep(e, k->out, tj_mul(e, begin, k->lay.row_bytes, ""),
                                           "range.out")
                             : k->out;
    int wide = g->dtype == JIT_F16 || g->dtype == JIT_BF16;
    int64_t acc_row = wide ? D * 4 : k->lay.row_bytes;
    /* the named flags, a byte per segment, then (f16, bf16) the sums */
    LLVMValueRef named_bytes = LLVMBuildAnd(e->b, tj_add(e, S, tj_i64(e, 63), ""), tj_i64(e, ~63ll),
                                            "named.bytes");
    LLVMValueRef acc_bytes = tj_mul(e, S, acc_row, "acc.bytes");
    LLVMValueRef scratch =
        tj_scratch(k, wide ? tj_add(e, named_bytes, acc_bytes, "") : named_bytes);
    LLVMBuildMemSet(e->b, scratch, LLVMConstInt(e->i8, 0, 0), S, 1);
    LLVMValueRef acc = wide ? tj_byte_gep(e, scratch, named_bytes, "acc") : out;
    LLVMBuildMemSet(e->b, acc, LLVMConstInt(e->i8, 0, 0), acc_bytes, 1);
    tj_colblock bl = {.c0_bytes = tj_i64(e, 0), .n = D,
                      .vectors = (D + k->lay.lanes - 1) / k->lay.lanes};
    {
        tj_loop l;
        tj_loop_begin_n(e, &l, "lookup", k->lookups, NULL);
        if (k->st.prefetch && begin)
            tj_prefetch_ours(k, l.iv, begin, S);
        else if (k->st.prefetch)
            tj_bir_prefetch_ahead(k, l.iv);
        LLVMValueRef s = tj_bir_load_idx(k, k->offsets, l.iv, "segment");
        LLVMBasicBlockRef next = NULL;
        if (begin) {
            s = LLVMBuildSub(e->b, s, begin, "segment.ours");
            tj_lookup_if(k, LLVMBuildICmp(e->b, LLVMIntULT, s, S, ""), "lookup.ours", &next);
        }
        LLVMBuildStore(e->b, LLVMConstInt(e->i8, 1, 0), tj_byte_gep(e, scratch, s, "named"));
        LLVMValueRef keep, index = tj_bir_load_idx(k, k->indices, l.iv, "index");
        LLVMValueRef r = tj_bir_resolve(k, index, &keep);
        if (keep)
            tj_lookup_if(k, keep, "lookup.add", &next);
        for (int64_t v = 0; v < bl.vectors; v++) {
            int64_t n = tj_bir_vector_len(k, &bl, v);
            LLVMValueRef x = tj_bir_load_row(k, r, &bl, v);
            if (g->has_weights)
                x = tj_bir_weigh(k, x, tj_bir_weight(k, l.iv, n));
            LLVMValueRef at = tj_bir_cols(k, acc, s, &bl, v, wide ? 4 : k->esize, acc_row);
            LLVMValueRef a = tj_load(e, tj_bir_vec(wide ? k->f32 : k->ety, n), at, "acc.v");
            /* integers add in the table's width: the same bits as in i64, cut */
            a = wide ? a : tj_bir_widen(k, a, n);
            LLVMValueRef sum = tj_bir_combine(k, a, x);
            tj_bir_store_at(k, wide ? sum : tj_bir_narrow(k, sum, n), at, 0);
        }
        if (next) {
            LLVMBuildBr(e->b, next);
            LLVMPositionBuilderAtEnd(e->b, next);
        }
        tj_bir_loop_close(k, &l, NULL);
    }
    /* the rows: unnamed ones the default row or zeros (as written); f16
     * and bf16 from their f32 sums */
    if (g->default_index < 0 && !wide)
        return;
    tj_loop l;
    tj_loop_begin_n(e, &l, "segment", S, NULL);
    LLVMValueRef named = tj_load(e, e->i8, tj_byte_gep(e, scratch, l.iv, ""), "named");
    LLVMValueRef is = LLVMBuildICmp(e->b, LLVMIntNE, named, LLVMConstInt(e->i8, 0, 0), "");
    for (int64_t v = 0; v < bl.vectors; v++) {
        int64_t n = tj_bir_vector_len(k, &bl, v);
        LLVMValueRef sum = wide ? tj_load(e, tj_bir_vec(k->f32, n),
                                          tj_bir_cols(k, acc, l.iv, &bl, v, 4, acc_row), "acc.v")
                                : NULL;
        LLVMValueRef at = tj_bir_cols(k, out, l.iv, &bl, v, k->esize, k->lay.row_bytes);
        LLVMValueRef row =
            sum ? tj_bir_narrow(k, sum, n) : tj_load(e, tj_bir_vec(k->ety, n), at, "");
        LLVMValueRef dflt = tj_bir_default_row(k, &bl, v);
        tj_bir_store_at(k, LLVMBuildSelect(e->b, is, row, dflt, ""), at, 0);
    }
    tj_bir_loop_close(k, &l, NULL);
}
