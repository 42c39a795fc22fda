/*
 * The check pass of a bag's kernel: pointers, offsets, segment ids and
 * the indices some bag reads, one branch to the cold path.
 */
#include "bag_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- the check pass --------------------------------------------------- */

/* if (bad) return tj_rt_bag_bad(self, the buffers) */
static void tj_fail_if(tj_bir *k, LLVMValueRef bad)
{
    tj_emit *e = &k->e;
    LLVMBasicBlockRef fail = tj_block(e, "check.fail"), ok = tj_block(e, "check.ok");
    LLVMBuildCondBr(e->b, bad, fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    /* a dynamic kernel's message needs the call's dims */
    const char *rt = k->dims ? TJ_RT_BAG_DYN_BAD : TJ_RT_BAG_BAD;
    unsigned n = k->dims ? 7 : 6;
    LLVMTypeRef params[7] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, rt);
    if (!fn)
        fn = LLVMAddFunction(e->mod, rt, fty);
    LLVMValueRef self = LLVMConstPointerCast(k->main_fn, e->ptr);
    LLVMValueRef args[7] = {self, k->table, k->indices, k->offsets, k->weights, k->out};
    if (k->dims) {
        LLVMValueRef with_dims[7] = {self,       k->dims,    k->table, k->indices,
                                     k->offsets, k->weights, k->out};
        memcpy(args, with_dims, sizeof args);
    }
    LLVMValueRef st = LLVMBuildCall2(e->b, fty, fn, args, n, "status");
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

/* n index-typed elements of buf from position i widened to i64: a
 * vector (only the lanes of mask read, zeros elsewhere, where mask is not
 * NULL), or the scalar where n is 1 */
static LLVMValueRef tj_load_idxs(tj_bir *k, LLVMValueRef buf, LLVMValueRef i, int64_t n,
                                 LLVMValueRef mask, const char *name)
{
    tj_emit *e = &k->e;
    if (n == 1)
        return tj_bir_load_idx(k, buf, i, name);
    int size = jit_dtype_size(k->g->index_type);
    LLVMValueRef at = tj_byte_gep(e, buf, tj_mul(e, i, size, ""), "");
    LLVMTypeRef vty = tj_bir_vec(k->idx_ty, n);
    LLVMValueRef v;
    if (mask) {
        LLVMTypeRef tys[2] = {vty, LLVMPointerType(vty, 0)};
        unsigned id = LLVMLookupIntrinsicID("llvm.masked.load", 16);
        LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
        LLVMValueRef args[4] = {LLVMBuildPointerCast(e->b, at, tys[1], ""), tj_i32(e, 1), mask,
                                LLVMConstNull(vty)};
        v = LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, tys, 2), fn, args, 4, name);
    } else {
        v = tj_load(e, vty, at, name);
    }
    if (size == 8)
        return v;
    LLVMTypeRef wide = tj_bir_vec(e->i64, n);
    return k->idx_signed ? LLVMBuildSExt(e->b, v, wide, name) : LLVMBuildZExt(e->b, v, wide, name);
}

/* x in n lanes (x itself where n is 1) */
static LLVMValueRef tj_lanes(tj_bir *k, LLVMValueRef x, int64_t n)
{
    return n == 1 ? x : tj_bir_splat_value(k, x, n);
}

/* A check of positions [first, end) of a buffer: bad(i) for n of them
 * from i, only the lanes of mask read. */
typedef LLVMValueRef (*tj_bad_fn)(tj_bir *k, LLVMValueRef i, int64_t n, LLVMValueRef mask);

typedef struct tj_check {
    LLVMValueRef first, end;
    tj_bad_fn bad;
} tj_check;

/* ceil((end - first) / chunk), 0 when end <= first */
static LLVMValueRef tj_chunks(tj_bir *k, const tj_check *c, int64_t chunk)
{
    tj_emit *e = &k->e;
    LLVMValueRef n = LLVMBuildSub(e->b, c->end, c->first, "");
    LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSGT, n, tj_i64(e, 0), "");
    LLVMValueRef up = LLVMBuildSDiv(e->b, tj_add(e, n, tj_i64(e, chunk - 1), ""),
                                    tj_i64(e, chunk), "");
    return LLVMBuildSelect(e->b, some, up, tj_i64(e, 0), "chunks");
}

/* OR of every check's bad(i) over its positions (two at most): one loop,
 * TJ_BAG_CHECK_CHUNK positions of each check an iteration, an OR-ed vector
 * of flags; no early exit. A check's last chunk ends at its last position,
 * overlapping the one before, and a check with fewer chunks than the loop
 * reads its last again: positions checked twice are still its own, so
 * every load stays in the buffer and its mask (lanes past a check shorter
 * than a chunk) is the same in every iteration, made before the loop. A
 * mask made per iteration, with the offsets' and the indices' in one loop,
 * made the checks a tenth of E3's call (docs/performance.md). The chunks
 * are vectors in the IR, so that the pipeline needs no loop vectorizer,
 * and the offsets (or segment ids) and the indices share the loop: each
 * loop was code generation ('Compile time of a bag kernel'). */
static LLVMValueRef tj_any_bad(tj_bir *k, const tj_check *checks, int n)
{
    tj_emit *e = &k->e;
    const int64_t chunk = TJ_BAG_CHECK_CHUNK;
    LLVMValueRef chunks = NULL, last[2], mask[2], zero = tj_i64(e, 0);
    LLVMValueRef iota[TJ_BAG_CHECK_CHUNK];
    for (int64_t i = 0; i < chunk; i++)
        iota[i] = tj_i64(e, i);
    LLVMValueRef lanes = LLVMConstVector(iota, (unsigned)chunk);
    for (int i = 0; i < n; i++) {
        LLVMValueRef c = tj_chunks(k, &checks[i], chunk);
        chunks = !chunks ? c
                         : LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSGT, c, chunks, ""), c,
                                           chunks, "chunks");
        LLVMValueRef len = LLVMBuildSub(e->b, checks[i].end, checks[i].first, "len");
        LLVMValueRef over = LLVMBuildSub(e->b, len, tj_i64(e, chunk), "");
        last[i] = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSGT, over, zero, ""), over,
                                  zero, "last.chunk");
        LLVMValueRef full = LLVMBuildICmp(e->b, LLVMIntSGT, len, tj_i64(e, chunk), "");
        LLVMValueRef left = LLVMBuildSelect(e->b, full, tj_i64(e, chunk), len, "");
        mask[i] = LLVMBuildICmp(e->b, LLVMIntSLT, lanes, tj_lanes(k, left, chunk), "mask");
    }
    tj_loop c;
    tj_loop_begin_n(e, &c, "check", chunks, LLVMConstNull(tj_bir_vec(e->i1, chunk)));
    LLVMValueRef flags = c.carry;
    LLVMValueRef step = tj_mul(e, c.iv, chunk, "");
    for (int i = 0; i < n; i++) {
        LLVMValueRef before = LLVMBuildICmp(e->b, LLVMIntSLT, step, last[i], "");
        LLVMValueRef at = tj_add(e, checks[i].first,
                                 LLVMBuildSelect(e->b, before, step, last[i], ""), "");
        LLVMValueRef bad = LLVMBuildAnd(e->b, checks[i].bad(k, at, chunk, mask[i]), mask[i], "");
        flags = LLVMBuildOr(e->b, flags, bad, "any.bad");
    }
    flags = tj_bir_loop_close(k, &c, flags);
    LLVMValueRef bits = LLVMBuildBitCast(e->b, flags, LLVMIntTypeInContext(e->ctx, chunk), "");
    return LLVMBuildICmp(e->b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), "any.bad");
}

static LLVMValueRef tj_bad_offset(tj_bir *k, LLVMValueRef i, int64_t n, LLVMValueRef mask)
{
    tj_emit *e = &k->e;
    LLVMValueRef o = tj_load_idxs(k, k->offsets, i, n, mask, "offset");
    LLVMValueRef prev =
        tj_load_idxs(k, k->offsets, LLVMBuildSub(e->b, i, tj_i64(e, 1), ""), n, mask, "prev");
    LLVMValueRef out = LLVMBuildICmp(e->b, LLVMIntUGT, o, tj_lanes(k, k->lookups, n), "");
    return LLVMBuildOr(e->b, out, LLVMBuildICmp(e->b, LLVMIntSLT, o, prev, ""), "offset.bad");
}

static LLVMValueRef tj_bad_segment(tj_bir *k, LLVMValueRef i, int64_t n, LLVMValueRef mask)
{
    LLVMValueRef s = tj_load_idxs(k, k->offsets, i, n, mask, "segment");
    return LLVMBuildICmp(k->e.b, LLVMIntUGE, s, tj_lanes(k, k->bags, n), "segment.bad");
}

/* error: v in [0, E); negative-wraps: v + E in [0, 2E) */
static LLVMValueRef tj_bad_index(tj_bir *k, LLVMValueRef i, int64_t n, LLVMValueRef mask)
{
    tj_emit *e = &k->e;
    LLVMValueRef v = tj_load_idxs(k, k->indices, i, n, mask, "index");
    LLVMValueRef rows = tj_lanes(k, k->rows, n);
    if (k->g->policy == JIT_INDEX_NEGATIVE_WRAPS && k->idx_signed)
        return LLVMBuildICmp(e->b, LLVMIntUGE, tj_add(e, v, rows, ""), tj_add(e, rows, rows, ""),
                             "index.bad");
    return LLVMBuildICmp(e->b, LLVMIntUGE, v, rows, "index.bad");
}

/* buf[i] where cond holds, else 0: a load only when there is an element */
LLVMValueRef tj_bir_load_idx_if(tj_bir *k, LLVMValueRef cond, LLVMValueRef buf,
                                LLVMValueRef i, const char *name)
{
    tj_emit *e = &k->e;
    if (LLVMIsAConstantInt(cond))
        return LLVMConstIntGetZExtValue(cond) ? tj_bir_load_idx(k, buf, i, name) : tj_i64(e, 0);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b), load = tj_block(e, "load.some");
    LLVMBasicBlockRef done = tj_block(e, "load.done");
    LLVMBuildCondBr(e->b, cond, load, done);
    LLVMPositionBuilderAtEnd(e->b, load);
    LLVMValueRef v = tj_bir_load_idx(k, buf, i, name);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
    LLVMValueRef phi = LLVMBuildPhi(e->b, e->i64, name);
    LLVMValueRef vals[2] = {tj_i64(e, 0), v};
    LLVMBasicBlockRef from[2] = {pre, load};
    LLVMAddIncoming(phi, vals, from, 2);
    return phi;
}

/* Offsets (or segment ids) and the indices some bag reads, in one loop;
 * one branch to the message, which the runtime words from the inputs
 * (tj_rt_bag_bad). The indices' range comes from offsets not yet known
 * good: kept within [0, N], so that it reads no index past N, and a bad
 * offset fails whatever it says. */
void tj_bir_emit_checks(tj_bir *k)
{
    tj_emit *e = &k->e;
    const tj_bag_plan *g = k->g;
    tj_check_pointers(k);
    if (g->unchecked)
        return;
    LLVMValueRef zero = tj_i64(e, 0), first = zero, end = k->lookups, bad = tj_false(e);
    tj_check checks[2];
    int n = 0;
    if (g->form == TJ_BAG_OFFSETS) {
        LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSGT, k->offsets_len, zero, "has.offsets");
        LLVMValueRef o0 = tj_bir_load_idx_if(k, some, k->offsets, zero, "offset0");
        bad = LLVMBuildAnd(e->b, some, LLVMBuildICmp(e->b, LLVMIntUGT, o0, k->lookups, ""), "");
        checks[n++] = (tj_check){tj_i64(e, 1), k->offsets_len, tj_bad_offset};
        first = o0;
        if (g->include_last_offset)
            end = tj_bir_load_idx_if(k, some, k->offsets,
                                 LLVMBuildSub(e->b, k->offsets_len, tj_i64(e, 1), ""), "last");
        LLVMValueRef none = LLVMBuildICmp(e->b, LLVMIntEQ, k->bags, zero, "no.bags");
        first = LLVMBuildSelect(e->b, none, zero, first, "first");
        end = LLVMBuildSelect(e->b, none, zero, end, "end");
        LLVMValueRef past = LLVMBuildICmp(e->b, LLVMIntUGT, end, k->lookups, "");
        end = LLVMBuildSelect(e->b, past, k->lookups, end, "end.in");
    } else if (g->form == TJ_BAG_SEGMENTS) {
        checks[n++] = (tj_check){zero, k->offsets_len, tj_bad_segment};
    }
    if (g->policy == JIT_INDEX_CLAMP) { /* fails only into an empty table */
        LLVMValueRef empty = LLVMBuildICmp(e->b, LLVMIntEQ, k->rows, zero, "no.rows");
        LLVMValueRef reads = LLVMBuildICmp(e->b, LLVMIntSLT, first, end, "reads.any");
        bad = LLVMBuildOr(e->b, bad, LLVMBuildAnd(e->b, empty, reads, ""), "");
    } else if (!tj_policy_fills(g->policy)) {
        checks[n++] = (tj_check){first, end, tj_bad_index};
    }
    if (n)
        bad = LLVMBuildOr(e->b, bad, tj_any_bad(k, checks, n), "");
    if (!LLVMIsAConstantInt(bad) || LLVMConstIntGetZExtValue(bad))
        tj_fail_if(k, bad);
}
