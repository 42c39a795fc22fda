/*
 * The kernel of an embedding bag, as LLVM IR. What it gains from knowing
 * the signature at compile time: the row width, the table's size and the
 * bag form are constants, so a bag's row is accumulated in a fixed set of
 * vector registers of the host's width, and the prefetch distance, the
 * interleaving of short bags and the kind of store are chosen for this
 * table and this output (ir/bag_strategy.c). A dynamic kernel reads the
 * counts from its call's dims instead (bag_ir.h), the rest as a static one.
 *
 * Shape of every kernel (SPEC section 10's order):
 *   1. check      NULL buffers, then offsets (each in [0, N], non-decreasing)
 *                 or segment ids (in [0, S)), then the indices some bag
 *                 reads, under the policy: OR-ed flags, one branch to the
 *                 cold path (tj_rt_bag_bad writes the message); nothing
 *                 written yet
 *   2. bags       offsets and packed forms: bags [begin, end), each bag's
 *                 lookups in index order into its accumulators (the row,
 *                 widened: f32 for f16/bf16/f32, f64, i64), a weighted one
 *                 multiplied then added (two instructions, no contraction),
 *                 mean divided by the lookups kept, max from -inf with NaN
 *                 propagated, an empty bag the default row or zeros; one
 *                 rounding to the table's type at the store
 *      segments   lookups in index order added into their segment's row of
 *                 out (of the scratch, in f32, for f16/bf16), then the
 *                 segments no id names get the default row or zeros
 * A kernel on one thread is one function; a split kernel (threads)
 * exports step 1 as name_check and step 2 as name_range over bags (or
 * segments: a range adds only the lookups of its own), and its main has
 * tj_rt_bag_parallel run the range on the calling thread or over the pool
 * (a dynamic kernel's, tj_rt_bag_dyn_parallel with its internal range and
 * the call's dims). Float NaNs follow runtime/reduce.c's
 * rule for sums: the accumulator's NaN first, then the row's (the operand
 * order of an fadd's NaN is LLVM's otherwise), and a product's the row's
 * first, then the weight's, so that both engines agree bit for bit; the
 * lookups run without the rule's selects and a bag whose sum ends in a NaN
 * runs again with them (tj_nan_redo).
 */
#include "bag_ir.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"

typedef struct tj_bir {
    tj_emit e;
    const tj_plan *p;
    const tj_bag_plan *g;
    tj_ir_strategy st;
    tj_bag_layout lay;
    LLVMTypeRef f32, f64, idx_ty;
    LLVMTypeRef ety;  /* a table element as loaded: f32, f64, or an integer of its bits */
    LLVMTypeRef aty;  /* the accumulator's element: f32, f64 or i64 */
    int esize;        /* bytes of a table element */
    int afloat;       /* the accumulator is a float */
    int usigned;      /* integer table of an unsigned type (or bool) */
    int idx_signed;
    int drops;        /* a lookup may be dropped (zero-fill, padding) */
    int nt;           /* emitting the streaming-store path */
    int fast_nan;     /* emitting a float sum's fast path: NaNs left to the hardware */
    LLVMValueRef main_fn;
    LLVMValueRef table, indices, offsets, weights, out;
    /* the counts: constants, or a dynamic kernel's from the call's dims
     * (tj_load_counts); dims is NULL in a static kernel */
    LLVMValueRef dims, rows, bags, lookups, bag_len, offsets_len;
    LLVMBasicBlockRef allocas; /* the function's entry, where its allocas go */
} tj_bir;

/* ---- small builders --------------------------------------------------- */

static LLVMTypeRef tj_vec(LLVMTypeRef t, int64_t n)
{
    return LLVMVectorType(t, (unsigned)n);
}

/* the constant c (an integer's bits, or a float's value) in n lanes of t */
static LLVMValueRef tj_splat_const(LLVMTypeRef t, int64_t n, LLVMValueRef c)
{
    LLVMValueRef lanes[64];
    for (int64_t i = 0; i < n; i++)
        lanes[i] = c;
    (void)t;
    return LLVMConstVector(lanes, (unsigned)n);
}

static LLVMValueRef tj_splat_value(tj_bir *k, LLVMValueRef x, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vt = tj_vec(LLVMTypeOf(x), n);
    LLVMValueRef one = LLVMBuildInsertElement(e->b, LLVMGetUndef(vt), x, tj_i32(e, 0), "");
    LLVMValueRef zeros = LLVMConstNull(tj_vec(e->i32, n));
    return LLVMBuildShuffleVector(e->b, one, LLVMGetUndef(vt), zeros, "splat");
}

static LLVMValueRef tj_c32v(tj_bir *k, uint32_t v, int64_t n)
{
    return tj_splat_const(k->e.i32, n, LLVMConstInt(k->e.i32, v, 0));
}

static void tj_store_at(tj_bir *k, LLVMValueRef v, LLVMValueRef ptr, int nt)
{
    tj_emit *e = &k->e;
    LLVMValueRef to = LLVMBuildPointerCast(e->b, ptr, LLVMPointerType(LLVMTypeOf(v), 0), "");
    LLVMValueRef st = LLVMBuildStore(e->b, v, to);
    if (!nt) {
        LLVMSetAlignment(st, 1);
        return;
    }
    /* the streaming path runs only for a 64-byte aligned out with rows of
     * whole vectors: every store is aligned to its size */
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned bytes = LLVMGetVectorSize(t) * (unsigned)k->esize;
    LLVMSetAlignment(st, bytes);
    LLVMValueRef one = LLVMConstInt(e->i32, 1, 0);
    LLVMSetMetadata(st, LLVMGetMDKindIDInContext(e->ctx, "nontemporal", 11),
                    LLVMMDNodeInContext(e->ctx, &one, 1));
}

/* tj_loop_end, then the counter's next value passed through llvm.expect,
 * which the code generator replaces by its operand: scalar evolution sees
 * no induction variable then, and loop strength reduction, a fifth of a
 * bag kernel's code generation, leaves the loop as it is (its addresses
 * are base + index x scale, which x86 addresses in one operand); see
 * docs/performance.md, 'Compile time of a bag kernel'. */
static LLVMValueRef tj_loop_close(tj_bir *k, tj_loop *l, LLVMValueRef carry_next)
{
    tj_emit *e = &k->e;
    LLVMValueRef out = tj_loop_end(e, l, carry_next);
    LLVMValueRef next = LLVMGetIncomingValue(l->iv, 1); /* the latch's */
    LLVMBasicBlockRef at = LLVMGetInsertBlock(e->b);
    LLVMPositionBuilderBefore(e->b, LLVMGetNextInstruction(next));
    LLVMTypeRef ty = e->i64;
    unsigned id = LLVMLookupIntrinsicID("llvm.expect", 11);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &ty, 1);
    LLVMValueRef args[2] = {LLVMGetUndef(ty), tj_i64(e, 0)};
    LLVMValueRef hidden =
        LLVMBuildCall2(e->b, LLVMIntrinsicGetType(e->ctx, id, &ty, 1), fn, args, 2, "counter");
    LLVMReplaceAllUsesWith(next, hidden);
    LLVMSetOperand(hidden, 0, next);
    LLVMPositionBuilderAtEnd(e->b, at);
    return out;
}

/* a value of type t kept in an alloca of the function's entry */
static LLVMValueRef tj_slot(tj_bir *k, LLVMTypeRef t, const char *name)
{
    tj_emit *e = &k->e;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(e->ctx);
    LLVMValueRef first = LLVMGetFirstInstruction(k->allocas);
    if (first)
        LLVMPositionBuilderBefore(b, first);
    else
        LLVMPositionBuilderAtEnd(b, k->allocas);
    LLVMValueRef a = LLVMBuildAlloca(b, t, name);
    LLVMDisposeBuilder(b);
    return a;
}

static LLVMValueRef tj_get(tj_bir *k, LLVMValueRef slot, LLVMTypeRef t)
{
    return LLVMBuildLoad2(k->e.b, t, slot, "");
}

/* the element at position i of an index-typed buffer, widened to i64 */
static LLVMValueRef tj_load_idx(tj_bir *k, LLVMValueRef buf, LLVMValueRef i, const char *name)
{
    tj_emit *e = &k->e;
    int size = jit_dtype_size(k->g->index_type);
    LLVMValueRef v = tj_load(e, k->idx_ty, tj_byte_gep(e, buf, tj_mul(e, i, size, ""), ""), name);
    if (size == 8)
        return v;
    return k->idx_signed ? LLVMBuildSExt(e->b, v, e->i64, name)
                         : LLVMBuildZExt(e->b, v, e->i64, name);
}

static LLVMValueRef tj_is_nan(tj_bir *k, LLVMValueRef v)
{
    return LLVMBuildFCmp(k->e.b, LLVMRealUNO, v, v, "is.nan");
}

/* ---- element types ---------------------------------------------------- */

/* n table elements (as loaded) to the accumulator's type: exact */
static LLVMValueRef tj_widen(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef at = tj_vec(k->aty, n);
    switch (k->g->dtype) {
    case JIT_F32:
    case JIT_F64: return v;
    case JIT_F16: {
        LLVMTypeRef h = tj_vec(LLVMHalfTypeInContext(e->ctx), n);
        return LLVMBuildFPExt(e->b, LLVMBuildBitCast(e->b, v, h, ""), at, "f16.wide");
    }
    case JIT_BF16: {
        LLVMValueRef w = LLVMBuildZExt(e->b, v, tj_vec(e->i32, n), "");
        return LLVMBuildBitCast(e->b, LLVMBuildShl(e->b, w, tj_c32v(k, 16, n), ""), at,
                                "bf16.wide");
    }
    default:
        return k->usigned ? LLVMBuildZExt(e->b, v, at, "wide") : LLVMBuildSExt(e->b, v, at, "wide");
    }
}

/* f32 to f16 bits: nearest even, a NaN the quiet NaN of its sign
 * (runtime/half.h: fptrunc alone would keep its payload) */
static LLVMValueRef tj_to_f16(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMTypeRef i16 = LLVMInt16TypeInContext(e->ctx), v16 = tj_vec(i16, n);
    LLVMValueRef h = LLVMBuildFPTrunc(e->b, v, tj_vec(LLVMHalfTypeInContext(e->ctx), n), "");
    h = LLVMBuildBitCast(e->b, h, v16, "f16.bits");
    LLVMValueRef x = LLVMBuildBitCast(e->b, v, tj_vec(e->i32, n), "");
    LLVMValueRef sign = LLVMBuildAnd(e->b, LLVMBuildLShr(e->b, x, tj_c32v(k, 16, n), ""),
                                     tj_c32v(k, 0x8000, n), "");
    LLVMValueRef qnan = LLVMBuildTrunc(e->b, LLVMBuildOr(e->b, sign, tj_c32v(k, 0x7e00, n), ""),
                                       v16, "f16.nan");
    return LLVMBuildSelect(e->b, tj_is_nan(k, v), qnan, h, "f16");
}

/* f32 to bf16 bits: runtime/half.h's tj_float_to_bf16, lane by lane */
static LLVMValueRef tj_to_bf16(tj_bir *k, LLVMValueRef v, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMValueRef x = LLVMBuildBitCast(e->b, v, tj_vec(e->i32, n), "");
    LLVMValueRef hi = LLVMBuildLShr(e->b, x, tj_c32v(k, 16, n), "");
    LLVMValueRef nan = LLVMBuildICmp(e->b, LLVMIntUGT,
                                     LLVMBuildAnd(e->b, x, tj_c32v(k, 0x7fffffff, n), ""),
                                     tj_c32v(k, 0x7f800000, n), "");
    LLVMValueRef up = LLVMBuildAdd(
        e->b, LLVMBuildAdd(e->b, x, tj_c32v(k, 0x7fff, n), ""),
        LLVMBuildAnd(e->b, hi, tj_c32v(k, 1, n), ""), "");
    LLVMValueRef rounded = LLVMBuildLShr(e->b, up, tj_c32v(k, 16, n), "");
    LLVMValueRef bits = LLVMBuildSelect(e->b, nan, LLVMBuildOr(e->b, hi, tj_c32v(k, 0x40, n), ""),
                                        rounded, "");
    return LLVMBuildTrunc(e->b, bits, tj_vec(LLVMInt16TypeInContext(e->ctx), n), "bf16");
}

/* accumulators to table elements: rounded once, nearest even; integers cut */
static LLVMValueRef tj_narrow(tj_bir *k, LLVMValueRef v, int64_t n)
{
    switch (k->g->dtype) {
    case JIT_F32:
    case JIT_F64: return v;
    case JIT_F16: return tj_to_f16(k, v, n);
    case JIT_BF16: return tj_to_bf16(k, v, n);
    default:
        return k->esize == 8 ? v : LLVMBuildTrunc(k->e.b, v, tj_vec(k->ety, n), "narrow");
    }
}

/* the accumulator's start: +0, or the smallest value for max */
static LLVMValueRef tj_neutral(tj_bir *k, int64_t n)
{
    LLVMTypeRef t = tj_vec(k->aty, n);
    if (k->g->reduction != JIT_REDUCTION_MAX || (!k->afloat && k->usigned))
        return LLVMConstNull(t);
    LLVMValueRef c = k->afloat ? LLVMConstReal(k->aty, -__builtin_inf())
                               : LLVMConstInt(k->aty, (unsigned long long)INT64_MIN, 1);
    return tj_splat_const(k->aty, n, c);
}

/* acc combined with x: sum (a's NaN first, see the top), or max (a's NaN,
 * else x's, else the larger, a on a tie) */
static LLVMValueRef tj_combine(tj_bir *k, LLVMValueRef a, LLVMValueRef x)
{
    LLVMBuilderRef b = k->e.b;
    if (k->g->reduction == JIT_REDUCTION_MAX) {
        if (!k->afloat)
            return LLVMBuildSelect(
                b, LLVMBuildICmp(b, k->usigned ? LLVMIntUGT : LLVMIntSGT, x, a, ""), x, a, "max");
        LLVMValueRef v = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, a, ""), x, a, "");
        v = LLVMBuildSelect(b, tj_is_nan(k, x), x, v, "");
        return LLVMBuildSelect(b, tj_is_nan(k, a), a, v, "max");
    }
    if (!k->afloat)
        return LLVMBuildAdd(b, a, x, "sum");
    if (k->fast_nan)
        return LLVMBuildFAdd(b, a, x, "sum");
    return LLVMBuildFAdd(b, a, LLVMBuildSelect(b, tj_is_nan(k, a), a, x, ""), "sum");
}

/* row x weight (the row's NaN first), rounded to the accumulator type */
static LLVMValueRef tj_weigh(tj_bir *k, LLVMValueRef x, LLVMValueRef w)
{
    LLVMBuilderRef b = k->e.b;
    if (!k->afloat)
        return LLVMBuildMul(b, x, w, "weighted");
    if (k->fast_nan)
        return LLVMBuildFMul(b, x, w, "weighted");
    return LLVMBuildFMul(b, x, LLVMBuildSelect(b, tj_is_nan(k, x), x, w, ""), "weighted");
}

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
        return tj_load_idx(k, buf, i, name);
    int size = jit_dtype_size(k->g->index_type);
    LLVMValueRef at = tj_byte_gep(e, buf, tj_mul(e, i, size, ""), "");
    LLVMTypeRef vty = tj_vec(k->idx_ty, n);
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
    LLVMTypeRef wide = tj_vec(e->i64, n);
    return k->idx_signed ? LLVMBuildSExt(e->b, v, wide, name) : LLVMBuildZExt(e->b, v, wide, name);
}

/* x in n lanes (x itself where n is 1) */
static LLVMValueRef tj_lanes(tj_bir *k, LLVMValueRef x, int64_t n)
{
    return n == 1 ? x : tj_splat_value(k, x, n);
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
    tj_loop_begin_n(e, &c, "check", chunks, LLVMConstNull(tj_vec(e->i1, chunk)));
    LLVMValueRef flags = c.carry;
    LLVMValueRef step = tj_mul(e, c.iv, chunk, "");
    for (int i = 0; i < n; i++) {
        LLVMValueRef before = LLVMBuildICmp(e->b, LLVMIntSLT, step, last[i], "");
        LLVMValueRef at = tj_add(e, checks[i].first,
                                 LLVMBuildSelect(e->b, before, step, last[i], ""), "");
        LLVMValueRef bad = LLVMBuildAnd(e->b, checks[i].bad(k, at, chunk, mask[i]), mask[i], "");
        flags = LLVMBuildOr(e->b, flags, bad, "any.bad");
    }
    flags = tj_loop_close(k, &c, flags);
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
static LLVMValueRef tj_load_idx_if(tj_bir *k, LLVMValueRef cond, LLVMValueRef buf,
                                   LLVMValueRef i, const char *name)
{
    tj_emit *e = &k->e;
    if (LLVMIsAConstantInt(cond))
        return LLVMConstIntGetZExtValue(cond) ? tj_load_idx(k, buf, i, name) : tj_i64(e, 0);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b), load = tj_block(e, "load.some");
    LLVMBasicBlockRef done = tj_block(e, "load.done");
    LLVMBuildCondBr(e->b, cond, load, done);
    LLVMPositionBuilderAtEnd(e->b, load);
    LLVMValueRef v = tj_load_idx(k, buf, i, name);
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
static void tj_emit_checks(tj_bir *k)
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
        LLVMValueRef o0 = tj_load_idx_if(k, some, k->offsets, zero, "offset0");
        bad = LLVMBuildAnd(e->b, some, LLVMBuildICmp(e->b, LLVMIntUGT, o0, k->lookups, ""), "");
        checks[n++] = (tj_check){tj_i64(e, 1), k->offsets_len, tj_bad_offset};
        first = o0;
        if (g->include_last_offset)
            end = tj_load_idx_if(k, some, k->offsets,
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

/* ---- lookups ---------------------------------------------------------- */

/* The row index v resolves to, and whether the lookup is kept (NULL:
 * always): the policy, then padding. */
static LLVMValueRef tj_resolve(tj_bir *k, LLVMValueRef v, LLVMValueRef *keep)
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

/* Prefetches every line of the row that indices[pos] names (raw: a
 * prefetch never faults, so no policy). */
static void tj_prefetch_row(tj_bir *k, LLVMValueRef pos)
{
    tj_emit *e = &k->e;
    LLVMValueRef v = tj_load_idx(k, k->indices, pos, "pf.index");
    LLVMValueRef off = tj_mul(e, v, k->lay.row_bytes, "pf.off");
    LLVMValueRef row = LLVMBuildGEP2(e->b, e->i8, k->table, &off, 1, "pf.row");
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

/* The row of the lookup st.prefetch ahead of j (the last one near the end) */
static void tj_prefetch_ahead(tj_bir *k, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    LLVMValueRef ahead = tj_add(e, j, tj_i64(e, k->st.prefetch), "pf.ahead");
    LLVMValueRef last = LLVMBuildSub(e->b, k->lookups, tj_i64(e, 1), "last");
    LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, ahead, last, "");
    tj_prefetch_row(k, LLVMBuildSelect(e->b, in, ahead, last, "pf.at"));
}

/* The rows of the first st.prefetch lookups from first (primed). */
static void tj_prime(tj_bir *k, LLVMValueRef first)
{
    tj_emit *e = &k->e;
    LLVMValueRef left = LLVMBuildSub(e->b, k->lookups, first, "");
    LLVMValueRef few = LLVMBuildICmp(e->b, LLVMIntSLT, left, tj_i64(e, k->st.prefetch), "");
    LLVMValueRef n = LLVMBuildSelect(e->b, few, left, tj_i64(e, k->st.prefetch), "prime.n");
    tj_loop l;
    tj_loop_begin_n(e, &l, "prime", n, NULL);
    tj_prefetch_row(k, tj_add(e, first, l.iv, ""));
    tj_loop_close(k, &l, NULL);
}

/* ---- the bags --------------------------------------------------------- */

/* A block of a bag's row: columns [c0, c0 + n) in vectors of lanes (the
 * last one shorter), with their accumulators. */
typedef struct tj_colblock {
    LLVMValueRef c0;
    int64_t n, vectors;
    LLVMValueRef acc[TJ_BAG_INTERLEAVE_MAX][TJ_BAG_ACC_VECTORS + 1];
    LLVMValueRef count[TJ_BAG_INTERLEAVE_MAX];
    int prefetch; /* this block prefetches (the first of the row) */
} tj_colblock;

static int64_t tj_vector_len(const tj_bir *k, const tj_colblock *bl, int64_t v)
{
    int64_t rest = bl->n - v * k->lay.lanes;
    return rest < k->lay.lanes ? rest : k->lay.lanes;
}

/* byte address of column c0 + v * lanes of row r of base */
static LLVMValueRef tj_cols(tj_bir *k, LLVMValueRef base, LLVMValueRef r, const tj_colblock *bl,
                            int64_t v, int64_t esize, int64_t row_bytes)
{
    tj_emit *e = &k->e;
    LLVMValueRef col = tj_add(e, bl->c0, tj_i64(e, v * k->lay.lanes), "");
    LLVMValueRef off = tj_add(e, tj_mul(e, r, row_bytes, ""), tj_mul(e, col, esize, ""), "col.off");
    return tj_byte_gep(e, base, off, "cols");
}

/* row r's vector v of the block, widened */
static LLVMValueRef tj_load_row(tj_bir *k, LLVMValueRef r, const tj_colblock *bl, int64_t v)
{
    int64_t n = tj_vector_len(k, bl, v);
    LLVMValueRef at = tj_cols(k, k->table, r, bl, v, k->esize, k->lay.row_bytes);
    return tj_widen(k, tj_load(&k->e, tj_vec(k->ety, n), at, "row"), n);
}

/* weights[j] widened, in n lanes */
static LLVMValueRef tj_weight(tj_bir *k, LLVMValueRef j, int64_t n)
{
    tj_emit *e = &k->e;
    LLVMValueRef at = tj_byte_gep(e, k->weights, tj_mul(e, j, k->esize, ""), "weight.ptr");
    LLVMValueRef w = tj_widen(k, tj_load(e, tj_vec(k->ety, 1), at, "weight"), 1);
    w = LLVMBuildExtractElement(e->b, w, tj_i32(e, 0), "");
    return tj_splat_value(k, w, n);
}

/* Lookup j into bag slot i's accumulators of block bl. */
static void tj_lookup(tj_bir *k, tj_colblock *bl, int i, LLVMValueRef j)
{
    tj_emit *e = &k->e;
    if (bl->prefetch && k->st.prefetch)
        tj_prefetch_ahead(k, j);
    LLVMValueRef keep, r = tj_resolve(k, tj_load_idx(k, k->indices, j, "index"), &keep);
    LLVMBasicBlockRef next = NULL;
    if (keep) {
        LLVMBasicBlockRef add = tj_block(e, "lookup.add");
        next = tj_block(e, "lookup.next");
        LLVMBuildCondBr(e->b, keep, add, next);
        LLVMPositionBuilderAtEnd(e->b, add);
    }
    for (int64_t v = 0; v < bl->vectors; v++) {
        int64_t n = tj_vector_len(k, bl, v);
        LLVMValueRef x = tj_load_row(k, r, bl, v);
        if (k->g->has_weights)
            x = tj_weigh(k, x, tj_weight(k, j, n));
        LLVMTypeRef at = tj_vec(k->aty, n);
        LLVMBuildStore(e->b, tj_combine(k, tj_get(k, bl->acc[i][v], at), x), bl->acc[i][v]);
    }
    if (bl->count[i])
        LLVMBuildStore(e->b, tj_add(e, tj_get(k, bl->count[i], e->i64), tj_i64(e, 1), ""),
                       bl->count[i]);
    if (next) {
        LLVMBuildBr(e->b, next);
        LLVMPositionBuilderAtEnd(e->b, next);
    }
}

/* Bag slot i's accumulators at the start: the neutral value (an empty
 * bag's row comes at its end, tj_finish_bag). */
static void tj_init_bag(tj_bir *k, tj_colblock *bl, int i)
{
    tj_emit *e = &k->e;
    if (bl->count[i])
        LLVMBuildStore(e->b, tj_i64(e, 0), bl->count[i]);
    for (int64_t v = 0; v < bl->vectors; v++)
        LLVMBuildStore(e->b, tj_neutral(k, tj_vector_len(k, bl, v)), bl->acc[i][v]);
}

/* The default row's vector v of block bl as the table holds it (its
 * bits, NaN payloads included: SPEC 10 gives an empty bag that row), or
 * zeros. */
static LLVMValueRef tj_default_row(tj_bir *k, const tj_colblock *bl, int64_t v)
{
    int64_t n = tj_vector_len(k, bl, v);
    if (k->g->default_index < 0)
        return LLVMConstNull(tj_vec(k->ety, n));
    LLVMValueRef at = tj_cols(k, k->table, tj_i64(&k->e, k->g->default_index), bl, v, k->esize,
                              k->lay.row_bytes);
    return tj_load(&k->e, tj_vec(k->ety, n), at, "default.row");
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
    LLVMValueRef empty = LLVMBuildICmp(e->b, LLVMIntEQ, len, tj_i64(e, 0), "empty");
    LLVMValueRef count = bl->count[i] ? tj_get(k, bl->count[i], e->i64) : len;
    LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSGT, count, tj_i64(e, 0), "");
    LLVMValueRef divisor = LLVMBuildSelect(e->b, some, count, tj_i64(e, 1), "divisor");
    for (int64_t v = 0; v < bl->vectors; v++) {
        int64_t n = tj_vector_len(k, bl, v);
        LLVMTypeRef vt = tj_vec(k->aty, n);
        LLVMValueRef a = tj_get(k, bl->acc[i][v], vt);
        if (red == JIT_REDUCTION_MEAN && k->afloat) {
            LLVMValueRef d = tj_splat_value(k, LLVMBuildSIToFP(e->b, divisor, k->aty, ""), n);
            a = LLVMBuildFDiv(e->b, a, d, "mean");
        } else if (red == JIT_REDUCTION_MEAN) {
            LLVMValueRef d = tj_splat_value(k, divisor, n);
            a = k->usigned ? LLVMBuildUDiv(e->b, a, d, "mean") : LLVMBuildSDiv(e->b, a, d, "mean");
        } else if (red == JIT_REDUCTION_MAX && bl->count[i]) {
            a = LLVMBuildSelect(e->b, some, a, LLVMConstNull(vt), "");
        }
        a = LLVMBuildSelect(e->b, empty, tj_default_row(k, bl, v), tj_narrow(k, a, n),
                            "bag.value");
        LLVMValueRef at = tj_cols(k, k->out, b, bl, v, k->esize, k->lay.row_bytes);
        tj_store_at(k, a, at, k->nt);
    }
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
    *start = tj_load_idx(k, k->offsets, b, "bag.start");
    LLVMValueRef nb = tj_add(e, b, tj_i64(e, 1), "");
    if (g->include_last_offset) {
        *end = tj_load_idx(k, k->offsets, nb, "bag.end");
        return;
    }
    /* the last bag runs to N: offsets[B] is not there to read */
    LLVMValueRef more = LLVMBuildICmp(e->b, LLVMIntULT, nb, k->offsets_len, "");
    LLVMValueRef at = LLVMBuildSelect(e->b, more, nb, b, "");
    *end = LLVMBuildSelect(e->b, more, tj_load_idx(k, k->offsets, at, ""), k->lookups, "bag.end");
}

/* for j in [0, n): lookup start[s] + j into each slot s, where j <
 * len[s] when there are several: the bags of a group in one loop, the
 * shorter ones skipping their slot past their end (a loop of their own
 * for each bag's rest was as many more loops to generate) */
static void tj_lookup_loop(tj_bir *k, tj_colblock *bl, int slots, LLVMValueRef *start,
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
    tj_loop_close(k, &l, NULL);
}

/* A float sum's (or mean's) lookups run a fast path whose adds and
 * multiplies leave NaNs to the hardware (which NaN an fadd of two gives
 * hangs on the operand order LLVM picks); NaN is sticky in them, so an
 * accumulator without one at the bag's end got the rule's bits, and one
 * with a NaN has its bag reduced again under the rule (tj_nan_redo). The
 * rule's selects, a compare and a blend per vector per lookup, showed in
 * cache-resident bags (E3). */
static int tj_nan_redo_wanted(const tj_bir *k)
{
    return k->afloat && k->g->reduction != JIT_REDUCTION_MAX;
}

/* The group's bags under the rule into dest[s] (an accumulator of type
 * n x aty): columns [c0, c0 + n), one vector of them (no prefetch: the
 * rows were just read). */
static void tj_redo_vector(tj_bir *k, int slots, LLVMValueRef *start, LLVMValueRef *len,
                           LLVMValueRef longest, LLVMValueRef c0, int64_t n, LLVMValueRef *dest)
{
    LLVMTypeRef vt = tj_vec(k->aty, n);
    tj_colblock one = {.c0 = c0, .n = n, .vectors = 1};
    for (int s = 0; s < slots; s++) {
        one.acc[s][0] = tj_slot(k, vt, "redo.acc");
        tj_init_bag(k, &one, s);
    }
    tj_lookup_loop(k, &one, slots, start, len, longest);
    for (int s = 0; s < slots; s++)
        LLVMBuildStore(k->e.b, tj_get(k, one.acc[s][0], vt), dest[s]);
}

/* If an accumulator of the group's holds a NaN: the group's bags again,
 * NaNs by the rule (a bag without one gets the same bits again), a
 * vector of columns at a time (a lane's sum reads its own column only),
 * the whole vectors in a loop through arrays on the stack: the rare path
 * then holds a vector's lookups, not the row's, and generates in less
 * time (docs/performance.md, 'Compile time of a bag kernel'). The kept
 * counts are the fast pass's. */
static void tj_nan_redo(tj_bir *k, tj_colblock *bl, int slots, LLVMValueRef *start,
                        LLVMValueRef *len, LLVMValueRef longest)
{
    tj_emit *e = &k->e;
    LLVMValueRef any = tj_false(e);
    for (int i = 0; i < slots; i++)
        for (int64_t v = 0; v < bl->vectors; v++) {
            int64_t w = tj_vector_len(k, bl, v);
            LLVMValueRef a = tj_get(k, bl->acc[i][v], tj_vec(k->aty, w));
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
        LLVMTypeRef vt = tj_vec(k->aty, lanes), at = LLVMArrayType(vt, (unsigned)full);
        LLVMValueRef row[TJ_BAG_INTERLEAVE_MAX];
        for (int s = 0; s < slots; s++)
            row[s] = tj_slot(k, at, "redo.row");
        tj_loop l;
        tj_loop_begin(e, &l, "redo.col", full, NULL);
        LLVMValueRef at_v[2] = {tj_i64(e, 0), l.iv};
        for (int s = 0; s < slots; s++)
            dest[s] = LLVMBuildGEP2(e->b, at, row[s], at_v, 2, "");
        LLVMValueRef c0 = tj_add(e, bl->c0, tj_mul(e, l.iv, lanes, ""), "redo.c0");
        tj_redo_vector(k, slots, start, len, longest, c0, lanes, dest);
        tj_loop_close(k, &l, NULL);
        for (int s = 0; s < slots; s++)
            for (int64_t v = 0; v < full; v++) {
                LLVMValueRef idx[2] = {tj_i64(e, 0), tj_i64(e, v)};
                LLVMValueRef x = tj_get(k, LLVMBuildGEP2(e->b, at, row[s], idx, 2, ""), vt);
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

/* Bags [b, b + slots) over block bl, those before end (every one where
 * end is NULL): their lookups interleaved up to the longest one's end,
 * each bag in index order; a slot past end has no lookups and writes
 * nothing. */
static void tj_emit_group_block(tj_bir *k, tj_colblock *bl, LLVMValueRef b, int slots,
                                LLVMValueRef end)
{
    tj_emit *e = &k->e;
    LLVMValueRef start[TJ_BAG_INTERLEAVE_MAX], len[TJ_BAG_INTERLEAVE_MAX], bi[TJ_BAG_INTERLEAVE_MAX];
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
        tj_init_bag(k, bl, i);
        longest = !longest ? len[i]
                           : LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSGT, len[i], longest, ""),
                                             len[i], longest, "longest");
    }
    k->fast_nan = tj_nan_redo_wanted(k);
    tj_lookup_loop(k, bl, slots, start, len, longest);
    if (k->fast_nan)
        tj_nan_redo(k, bl, slots, start, len, longest);
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
            bl->acc[i][v] = tj_slot(k, tj_vec(k->aty, tj_vector_len(k, bl, v)), "acc");
        bl->count[i] = counted ? tj_slot(k, e->i64, "kept") : NULL;
    }
}

/* Bags [b, b + slots) before end, block by block of the row (the first
 * prefetches). */
static void tj_emit_group(tj_bir *k, LLVMValueRef b, int slots, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    int64_t width = k->lay.block_elems, full = k->g->row_elems / width;
    int64_t rest = k->g->row_elems % width;
    tj_colblock bl = {0};
    tj_block_slots(k, &bl, width, slots);
    bl.prefetch = 1;
    bl.c0 = tj_i64(e, 0);
    tj_emit_group_block(k, &bl, b, slots, end);
    bl.prefetch = 0;
    if (full > 2) {
        tj_loop l;
        tj_loop_begin(e, &l, "block", full - 1, NULL);
        bl.c0 = tj_mul(e, tj_add(e, l.iv, tj_i64(e, 1), ""), width, "block.c0");
        tj_emit_group_block(k, &bl, b, slots, end);
        tj_loop_close(k, &l, NULL);
    } else if (full == 2) {
        bl.c0 = tj_i64(e, width);
        tj_emit_group_block(k, &bl, b, slots, end);
    }
    if (rest) {
        tj_colblock tail = {0};
        tj_block_slots(k, &tail, rest, slots);
        tail.c0 = tj_i64(e, full * width);
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
    if (k->st.prefetch) {
        LLVMValueRef first;
        if (k->g->form == TJ_BAG_PACKED) {
            first = LLVMBuildMul(e->b, begin, k->bag_len, "first");
        } else { /* offsets[begin], when there is a bag there */
            LLVMValueRef some = LLVMBuildICmp(e->b, LLVMIntSLT, begin, end, "");
            LLVMValueRef at = LLVMBuildSelect(e->b, some, begin, tj_i64(e, 0), "");
            LLVMValueRef o = tj_load_idx_if(k, some, k->offsets, at, "");
            first = LLVMBuildSelect(e->b, some, o, k->lookups, "first");
        }
        tj_prime(k, first);
    }
    int64_t n = k->lay.interleave;
    tj_loop l;
    if (n > 1) { /* the last group's slots past end idle */
        LLVMValueRef bags = LLVMBuildSub(e->b, end, begin, "");
        LLVMValueRef groups = LLVMBuildSDiv(e->b, tj_add(e, bags, tj_i64(e, n - 1), ""),
                                            tj_i64(e, n), "groups");
        tj_loop_begin_n(e, &l, "group", groups, NULL);
        tj_emit_group(k, tj_add(e, begin, tj_mul(e, l.iv, n, ""), "group.bag"), (int)n, end);
        tj_loop_close(k, &l, NULL);
        return;
    }
    tj_loop_begin_range(e, &l, "bag", begin, end);
    tj_emit_group(k, l.iv, 1, NULL);
    tj_loop_close(k, &l, NULL);
}

/* With streaming stores: the bags twice, for a 64-byte aligned out
 * (streaming, then a fence that orders them) and for any other. */
static void tj_emit_bags_by_alignment(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
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

/* ---- segments --------------------------------------------------------- */

/* tj_rt_scratch(bytes), or return JIT_STATUS_NO_MEMORY */
static LLVMValueRef tj_scratch(tj_bir *k, LLVMValueRef bytes)
{
    tj_emit *e = &k->e;
    LLVMTypeRef fty = LLVMFunctionType(e->ptr, &e->i64, 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, TJ_RT_SCRATCH);
    if (!fn)
        fn = LLVMAddFunction(e->mod, TJ_RT_SCRATCH, fty);
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
    LLVMValueRef ahead = tj_add(e, j, tj_i64(e, k->st.prefetch), "pf.ahead");
    LLVMValueRef last = LLVMBuildSub(e->b, k->lookups, tj_i64(e, 1), "last");
    LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, ahead, last, "");
    LLVMValueRef at = LLVMBuildSelect(e->b, in, ahead, last, "pf.at");
    LLVMValueRef s = LLVMBuildSub(e->b, tj_load_idx(k, k->offsets, at, "pf.segment"), begin, "");
    LLVMValueRef ours = LLVMBuildICmp(e->b, LLVMIntULT, s, segments, "pf.ours");
    LLVMValueRef v = tj_load_idx(k, k->indices, at, "pf.index");
    LLVMValueRef off = LLVMBuildSelect(e->b, ours, tj_mul(e, v, k->lay.row_bytes, ""),
                                       tj_i64(e, 0), "pf.off");
    LLVMValueRef row = LLVMBuildGEP2(e->b, e->i8, k->table, &off, 1, "pf.row");
    unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
    LLVMTypeRef pty = e->ptr;
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &pty, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &pty, 1);
    int64_t n = k->lay.row_bytes, lines[64], count = 0;
    for (int64_t o = 0; o < n && count < 63; o += 64)
        lines[count++] = o;
    if (n % 64 && n > 64) /* a row off the lines' grid spans one more */
        lines[count++] = n - 1;
    for (int64_t i = 0; i < count; i++) { /* as tj_prefetch_row's */
        LLVMValueRef o = tj_i64(e, lines[i]);
        LLVMValueRef args[4] = {LLVMBuildGEP2(e->b, e->i8, row, &o, 1, ""), tj_i32(e, 0),
                                tj_i32(e, 2), tj_i32(e, 1)};
        LLVMBuildCall2(e->b, fty, fn, args, 4, "");
    }
}

/* Segments: each lookup added into its segment's row in memory (out, or
 * f32 rows of the scratch for f16/bf16, which must round once), in index
 * order; then the segments no id named get the default row or zeros.
 * A split kernel's range (begin non-NULL) owns segments [begin, end): it
 * scans every id and adds only the lookups of its own, so that each
 * segment's are still added in index order by one thread. */
static void tj_emit_segments(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
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
    tj_colblock bl = {.c0 = tj_i64(e, 0), .n = D, .vectors = (D + k->lay.lanes - 1) / k->lay.lanes};
    {
        tj_loop l;
        tj_loop_begin_n(e, &l, "lookup", k->lookups, NULL);
        if (k->st.prefetch && begin)
            tj_prefetch_ours(k, l.iv, begin, S);
        else if (k->st.prefetch)
            tj_prefetch_ahead(k, l.iv);
        LLVMValueRef s = tj_load_idx(k, k->offsets, l.iv, "segment");
        LLVMBasicBlockRef next = NULL;
        if (begin) {
            s = LLVMBuildSub(e->b, s, begin, "segment.ours");
            tj_lookup_if(k, LLVMBuildICmp(e->b, LLVMIntULT, s, S, ""), "lookup.ours", &next);
        }
        LLVMBuildStore(e->b, LLVMConstInt(e->i8, 1, 0), tj_byte_gep(e, scratch, s, "named"));
        LLVMValueRef keep, r = tj_resolve(k, tj_load_idx(k, k->indices, l.iv, "index"), &keep);
        if (keep)
            tj_lookup_if(k, keep, "lookup.add", &next);
        for (int64_t v = 0; v < bl.vectors; v++) {
            int64_t n = tj_vector_len(k, &bl, v);
            LLVMValueRef x = tj_load_row(k, r, &bl, v);
            if (g->has_weights)
                x = tj_weigh(k, x, tj_weight(k, l.iv, n));
            LLVMValueRef at = tj_cols(k, acc, s, &bl, v, wide ? 4 : k->esize, acc_row);
            LLVMValueRef a = tj_load(e, tj_vec(wide ? k->f32 : k->ety, n), at, "acc.v");
            /* integers add in the table's width: the same bits as in i64, cut */
            a = wide ? a : tj_widen(k, a, n);
            LLVMValueRef sum = tj_combine(k, a, x);
            tj_store_at(k, wide ? sum : tj_narrow(k, sum, n), at, 0);
        }
        if (next) {
            LLVMBuildBr(e->b, next);
            LLVMPositionBuilderAtEnd(e->b, next);
        }
        tj_loop_close(k, &l, NULL);
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
        int64_t n = tj_vector_len(k, &bl, v);
        LLVMValueRef sum = wide ? tj_load(e, tj_vec(k->f32, n),
                                          tj_cols(k, acc, l.iv, &bl, v, 4, acc_row), "acc.v")
                                : NULL;
        LLVMValueRef at = tj_cols(k, out, l.iv, &bl, v, k->esize, k->lay.row_bytes);
        LLVMValueRef row = sum ? tj_narrow(k, sum, n) : tj_load(e, tj_vec(k->ety, n), at, "");
        tj_store_at(k, LLVMBuildSelect(e->b, is, row, tj_default_row(k, &bl, v), ""), at, 0);
    }
    tj_loop_close(k, &l, NULL);
}

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
 * its code; its entry block holds the allocas (tj_close_function). */
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
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "start"));
    return fn;
}

/* The allocas' block falls through to the code. */
static void tj_close_function(tj_bir *k)
{
    LLVMBasicBlockRef at = LLVMGetInsertBlock(k->e.b);
    LLVMPositionBuilderAtEnd(k->e.b, k->allocas);
    LLVMBuildBr(k->e.b, LLVMGetNextBasicBlock(k->allocas));
    LLVMPositionBuilderAtEnd(k->e.b, at);
}

/* return fn(the five buffers, extra...), a tail call */
static void tj_return_call(tj_bir *k, LLVMValueRef fn, LLVMTypeRef fty, LLVMValueRef *extra,
                           unsigned n)
{
    tj_emit *e = &k->e;
    LLVMValueRef args[8] = {k->table, k->indices, k->offsets, k->weights, k->out};
    for (unsigned i = 0; i < n; i++)
        args[5 + i] = extra[i];
    LLVMValueRef st = LLVMBuildCall2(e->b, fty, fn, args, 5 + n, "status");
    LLVMSetTailCall(st, 1);
    LLVMBuildRet(e->b, st);
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
        k->bags = g->bags >= 0 || !k->dims
                      ? tj_i64(e, g->bags)
                      : LLVMBuildSub(e->b, k->offsets_len, tj_i64(e, g->include_last_offset), "bags");
    } else {
        k->lookups = tj_count(k, g->lookups, "lookups");
        k->bags = tj_count(k, g->bags, "segments");
        k->offsets_len = k->lookups; /* the runtime checked that they agree */
    }
}

static void tj_emit_dyn_enter(tj_bir *k);

/* A function of the five buffers, then extra parameters, then a dynamic
 * kernel's dims, with the counts loaded; the kernel's main checks a
 * dynamic call's dims first. */
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
        tj_emit_dyn_enter(k);
    tj_load_counts(k);
    return fn;
}

/* A dynamic kernel's entry: tj_rt_bag_dyn_enter checks the call's dims
 * (a status where they break a rule of the op). */
static void tj_emit_dyn_enter(tj_bir *k)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[2] = {e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, 2, 0);
    LLVMValueRef fn = LLVMAddFunction(e->mod, TJ_RT_BAG_DYN_ENTER, fty);
    LLVMValueRef args[2] = {LLVMConstPointerCast(k->main_fn, e->ptr), k->dims};
    LLVMValueRef st = LLVMBuildCall2(e->b, fty, fn, args, 2, "enter");
    LLVMBasicBlockRef fail = tj_block(e, "dims.bad"), ok = tj_block(e, "dims.ok");
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

/* A range function's body: bags (or segments) [begin, end). A segments
 * range of every segment (a call the split rule keeps alone) runs the
 * whole kernel's loop, without the test of each id against the range,
 * which short rows pay for (docs/performance.md, 'Embedding bags'). */
static void tj_emit_range_body(tj_bir *k, LLVMValueRef begin, LLVMValueRef end)
{
    tj_emit *e = &k->e;
    if (k->g->form != TJ_BAG_SEGMENTS) {
        tj_emit_bags_by_alignment(k, begin, end);
        return;
    }
    LLVMValueRef all = LLVMBuildAnd(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, begin, tj_i64(e, 0), ""),
                                    LLVMBuildICmp(e->b, LLVMIntEQ, end, k->bags, ""), "all");
    LLVMBasicBlockRef whole = tj_block(e, "segments.all"), part = tj_block(e, "segments.part");
    LLVMBuildCondBr(e->b, all, whole, part);
    LLVMPositionBuilderAtEnd(e->b, whole);
    tj_emit_segments(k, NULL, NULL);
    LLVMBuildRet(e->b, tj_i32(e, 0));
    LLVMPositionBuilderAtEnd(e->b, part);
    tj_emit_segments(k, begin, end);
}

/* The offsets and packed forms, and a split segments kernel: the main
 * (created first: the cold paths pass its address), name_check,
 * name_range, then the main's body. A dynamic kernel's range is internal:
 * its main passes it to the runtime (the parts API offers no dynamic
 * kernel's). */
static void tj_emit_bag_kernel(tj_bir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef fn = tj_counted_function(k, name, NULL, 0, 1);
    LLVMBasicBlockRef main_at = LLVMGetInsertBlock(e->b), main_allocas = k->allocas;
    LLVMLinkage linkage = k->st.ranges ? LLVMExternalLinkage : LLVMInternalLinkage;

    snprintf(buf, sizeof buf, "%s%s", name, TJ_IR_CHECK_SUFFIX);
    LLVMValueRef check = tj_counted_function(k, buf, NULL, 0, 0);
    LLVMSetLinkage(check, linkage);
    tj_emit_checks(k);
    LLVMBuildRet(e->b, tj_i32(e, 0));
    tj_close_function(k);

    snprintf(buf, sizeof buf, "%s%s", name, TJ_IR_RANGE_SUFFIX);
    LLVMTypeRef bounds[2] = {e->i64, e->i64};
    LLVMValueRef range = tj_counted_function(k, buf, bounds, 2, 0);
    LLVMSetLinkage(range, linkage);
    tj_emit_range_body(k, LLVMGetParam(range, 5), LLVMGetParam(range, 6));
    LLVMBuildRet(e->b, tj_i32(e, 0));
    tj_close_function(k);

    e->fn = fn;
    k->allocas = main_allocas;
    tj_bind(k, fn);
    k->dims = k->g->dynamic ? LLVMGetParam(fn, 5) : NULL;
    LLVMPositionBuilderAtEnd(e->b, main_at);
    tj_load_counts(k); /* the main's own (tj_count builds no block) */
    LLVMValueRef args[6] = {k->table, k->indices, k->offsets, k->weights, k->out, k->dims};
    LLVMValueRef st = LLVMBuildCall2(e->b, LLVMGlobalGetValueType(check), check, args,
                                     k->dims ? 6 : 5, "check");
    LLVMBasicBlockRef fail = tj_block(e, "check.fail"), ok = tj_block(e, "check.ok");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntNE, st, tj_i32(e, 0), ""), fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, ok);
    if (k->st.split) {
        tj_emit_parallel_call(k, fn, range);
    } else {
        LLVMValueRef whole[3] = {tj_i64(e, 0), k->bags, k->dims};
        tj_return_call(k, range, LLVMGlobalGetValueType(range), whole, k->dims ? 3 : 2);
    }
    tj_close_function(k);
}

/* A kernel without parts (not split): one function, the checks then the
 * bags. The check and range functions of a split kernel, in one that
 * calls each once, were a large share of its code generation: LLVM
 * generates code function by function (docs/performance.md, 'Compile
 * time of a bag kernel'). */
static void tj_emit_whole_kernel(tj_bir *k, const char *name)
{
    tj_counted_function(k, name, NULL, 0, 1);
    tj_emit_checks(k);
    tj_emit_bags_by_alignment(k, tj_i64(&k->e, 0), k->bags);
    LLVMBuildRet(k->e.b, tj_i32(&k->e, 0));
    tj_close_function(k);
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
    tj_emit_checks(k);
    tj_emit_segments(k, NULL, NULL);
    LLVMBuildRet(k->e.b, tj_i32(&k->e, 0));
    tj_close_function(k);
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
