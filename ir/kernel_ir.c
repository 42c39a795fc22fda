/*
 * The kernel of one signature, as LLVM IR. What it gains from knowing the
 * signature at compile time: every shape, stride, block size and trip
 * count is a constant, so offsets fold, loops have known trip counts and
 * each block copy has a fixed size, emitted by size (tj_emit_block_copy).
 *
 * Shape of every kernel:
 *   1. check.ptr   buffers the signature needs are non-NULL (cold path
 *                  calls tj_rt_bad_pointer for the message)
 *   2. check       every index validated in its own pass, branch-free with
 *                  an OR-ed flag so it vectorizes; check.fail calls
 *                  tj_rt_bad_index for the message; nothing written yet
 *   3. copy.data   scatter only: out = data unless out == data
 *   4. tuple       the indexed block copies, in row-major order of the
 *                  indices (last duplicate wins)
 * Small signatures are fully unrolled; others get counted loops. A split
 * kernel (TJ_IR_SPLIT_MIN_WORK) has step 2 in a check function and steps
 * 3-4 in a range function, whose loops have the whole kernel's bodies; its
 * main does step 1, calls the check, and has tj_rt_parallel run the range
 * on the calling thread or over the pool, as the call's measured cost says
 * (runtime/exec/jit_support.c). Under negative-wraps the validation also says
 * whether any index is negative, and the copies skip the wrap where none
 * is (tj_emit_passes_by_sign).
 */
#include "kernel_ir.h"

#include <llvm-c/Analysis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string.h>

#include "dyn.h"
#include "emit.h"
#include "reduce.h"
#include "reduce_ir.h"

typedef struct tj_kir {
    tj_emit e;
    const tj_plan *p;
    tj_ir_strategy st;
    LLVMTypeRef idx_ty;
    int idx_signed;
    int nt_path; /* emitting the non-temporal copy */
    /* Wrap once (negative-wraps): the validation pass also says whether any
     * index is negative (sign: it tracks that), and the copies are emitted
     * twice, the path for indices proven non-negative (nowrap) without the
     * wrap. */
    int sign;
    int nowrap;
    LLVMValueRef main_fn; /* the kernel's entry: what the runtime knows it by */
    LLVMValueRef data, indices, updates, out;
    LLVMValueRef begin, end; /* the range function's bounds; NULL elsewhere */
    tj_reduce_pass pass;     /* a reduction: which walk of the nest is emitted */
    LLVMValueRef scratch;    /* a mean's counts (tj_rt_scratch), else NULL */
    LLVMValueRef out_elems;  /* a dynamic kernel's mean: the call's elements of out */
    /* A dynamic kernel: its family, and the words of the call's plan that
     * vary, loaded once at entry (NULL where the template's are constants). */
    const tj_dyn *dyn;
    LLVMValueRef word[TJ_DYN_WORDS];
} tj_kir;

/* A number of the plan (field points into k->p): the call's where it
 * varies in a dynamic kernel, else the constant. */
static LLVMValueRef tj_pv(const tj_kir *k, const int64_t *field)
{
    size_t w = (size_t)((const char *)field - (const char *)k->p) / 8;
    if (k->dyn && w < TJ_DYN_WORDS && k->word[w])
        return k->word[w];
    return tj_i64(&k->e, *field);
}

/* Whether that number is only known at call time. */
static int tj_pdyn(const tj_kir *k, const int64_t *field)
{
    size_t w = (size_t)((const char *)field - (const char *)k->p) / 8;
    return k->dyn && w < TJ_DYN_WORDS && k->word[w] != NULL;
}

/* a * the plan's number at field */
static LLVMValueRef tj_mulv(tj_kir *k, LLVMValueRef a, const int64_t *field, const char *name)
{
    if (!tj_pdyn(k, field))
        return tj_mul(&k->e, a, *field, name);
    return LLVMBuildMul(k->e.b, a, tj_pv(k, field), name);
}

static int tj_index_signed(jit_dtype t)
{
    return t == JIT_I8 || t == JIT_I16 || t == JIT_I32 || t == JIT_I64;
}

/* Bytes of data that the addresses of one vector of the innermost level
 * v can fall in: every tuple entry's dimension, plus the level's own step
 * across the lanes (capped at INT64_MAX). */
static int64_t tj_gather_span(const tj_plan *p, const tj_level *v, int64_t lanes)
{
    int64_t span = p->elem_size;
    for (int d = 0; d < p->depth; d++) /* each term within data_bytes; an empty dim: none */
        span += (p->dims[d] > 0 ? p->dims[d] - 1 : 0) * p->strides[d];
    int64_t walk = v->indexed_step < 0 ? -v->indexed_step : v->indexed_step;
    if (walk > (INT64_MAX - span) / lanes)
        return INT64_MAX;
    return span + (lanes - 1) * walk;
}

/* Lanes of the vector gathers for p's innermost level (see
 * TJ_IR_GATHER_BYTES), or 0: the scalar loop. */
static int64_t tj_gather_lanes(const tj_plan *p, const tj_ir_strategy *s)
{
    if (p->indexed != TJ_INDEXED_SRC || s->unrolled || s->prefetch || s->nontemporal ||
        p->nlevels == 0 || p->depth == 0 || p->block_bytes != p->elem_size ||
        (p->elem_size != 4 && p->elem_size != 8))
        return 0;
    const tj_level *v = &p->levels[p->nlevels - 1];
    int64_t lanes = TJ_IR_GATHER_BYTES / p->elem_size;
    /* the tuples of one vector are loaded as one vector of at most 64
     * index elements: deeper tuples keep the scalar loop */
    if (lanes * p->depth > 64)
        return 0;
    if (v->dense_step != p->block_bytes || v->index_step != p->depth || v->trip < lanes ||
        v->indexed_step % p->elem_size != 0 || tj_gather_span(p, v, lanes) < TJ_IR_GATHER_MIN_SPAN)
        return 0;
    for (int d = 0; d < p->depth; d++)
        if (p->strides[d] % p->elem_size != 0 || p->dims[d] == 0)
            return 0;
    return lanes;
}

/* Whether threads may ever pay for p (TJ_IR_SPLIT_MIN_WORK); with
 * TENSORJIT_SPLIT_MIN, the old rule by bytes (tests that force splits). */
static int tj_ir_may_pay(const tj_plan *p, const tj_codegen_config *cfg)
{
    if (cfg->split_min.set) {
        int64_t min = cfg->split_min.value, unit_bytes = p->block_bytes > 64 ? p->block_bytes : 64;
        return p->units >= min / unit_bytes || p->units * unit_bytes >= min;
    }
    /* a scatter's copy of data is not counted: in place it never runs,
     * and a kernel such as S4 (32 rows into 16 MB) would pay the split
     * call on every call for nothing */
    int64_t lines = p->block_bytes / 64 + 1; /* cache lines a block touches, about */
    return p->visits >= TJ_IR_SPLIT_MIN_WORK / lines;
}

void tj_ir_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *s)
{
    memset(s, 0, sizeof *s);
    s->tuples = p->visits;
    s->checks = tj_policy_fills(p->policy) ? 0 : p->tuples;
    s->budget = cfg->unroll.set ? cfg->unroll.value : TJ_IR_UNROLL_BUDGET;
    int64_t width = p->depth > 1 ? p->depth : 1;
    int64_t most = s->tuples > s->checks ? s->tuples : s->checks;
    s->entries = most > INT64_MAX / width ? INT64_MAX : most * width;
    s->unrolled = s->entries <= s->budget;
    int64_t distance = cfg->prefetch.set ? cfg->prefetch.value : TJ_IR_PREFETCH_DISTANCE;
    s->prefetch = distance > 0 && p->indexed == TJ_INDEXED_SRC && !s->unrolled && p->depth > 0 &&
                          p->data_bytes >= TJ_IR_PREFETCH_MIN_DATA && s->tuples > distance
                      ? distance
                      : 0;
    s->nontemporal = (cfg->nontemporal.set ? cfg->nontemporal.value : TJ_IR_NT_DEFAULT) &&
                     !s->unrolled && p->reduction == JIT_REDUCTION_NONE &&
                     p->block_bytes >= TJ_IR_NT_MIN_BLOCK && p->block_bytes % 16 == 0 &&
                     s->tuples * p->block_bytes >= TJ_IR_NT_MIN_OUT;
    /* single-threaded kernels stay whole: nothing to split for; the
     * passes of a mean or use_init_val=false are one thread's */
    s->split = p->threads > 1 && !s->unrolled && p->units >= 2 && !tj_reduce_needs_passes(p) &&
               tj_ir_may_pay(p, cfg);
    s->inline_copy_min =
        cfg->inline_copy_min.set ? cfg->inline_copy_min.value : TJ_IR_INLINE_COPY_MIN;
    snprintf(s->vector_width, sizeof s->vector_width, "%s", cfg->vector_width);
    s->gather_lanes = tj_gather_lanes(p, s);
    if (p->dyn) { /* loops of run-time trips: nothing that needs the counts */
        s->unrolled = s->nontemporal = 0, s->prefetch = s->gather_lanes = 0;
        /* split for threads; whether a call's copies are worth them is the
         * call's question (tj_rt_dyn_parallel) */
        s->split = p->threads > 1 && !tj_reduce_needs_passes(p) &&
                   !tj_dyn_varies(p->dyn, &p->dyn->tmpl.row_units);
    }
    /* other kernels get them when the parts API first asks (tj_backend_parts) */
    s->ranges = s->split;
}

/* indices[i] widened to i64 (sign- or zero-extended by the index type) */
static LLVMValueRef tj_load_index(tj_kir *k, LLVMValueRef i)
{
    tj_emit *e = &k->e;
    LLVMValueRef off = tj_mul(e, i, k->p->index_size, "index.off");
    LLVMValueRef v = tj_load(e, k->idx_ty, tj_byte_gep(e, k->indices, off, "index.ptr"), "index");
    if (k->p->index_size == 8)
        return v;
    return k->idx_signed ? LLVMBuildSExt(e->b, v, e->i64, "index.i64")
                         : LLVMBuildZExt(e->b, v, e->i64, "index.i64");
}

/* The constant c in the shape of v: an i64, or a splat of c over a vector
 * of i64 (the vector gathers apply the policies lane by lane with the same
 * code as the scalar path). */
static LLVMValueRef tj_like(const tj_emit *e, LLVMValueRef v, int64_t c)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return tj_i64(e, c);
    LLVMValueRef lanes[64];
    unsigned n = LLVMGetVectorSize(t);
    for (unsigned i = 0; i < n; i++)
        lanes[i] = tj_i64(e, c);
    return LLVMConstVector(lanes, n);
}

/* The size of the dimension tuple entry d addresses, plus add, in the
 * shape of v (a dynamic one is a scalar: dynamic kernels have no vector
 * gathers). */
static LLVMValueRef tj_dim_like(tj_kir *k, LLVMValueRef v, int d, int64_t add)
{
    if (!tj_pdyn(k, &k->p->dims[d]))
        return tj_like(&k->e, v, k->p->dims[d] + add);
    LLVMValueRef dim = tj_pv(k, &k->p->dims[d]);
    return add ? tj_add(&k->e, dim, tj_i64(&k->e, add), "dim.plus") : dim;
}

/* Negative indices counted from the end, for negative-wraps. */
static LLVMValueRef tj_wrap(tj_kir *k, LLVMValueRef v, int d)
{
    tj_emit *e = &k->e;
    if (k->p->policy != JIT_INDEX_NEGATIVE_WRAPS || !k->idx_signed)
        return v;
    LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "is.negative");
    return LLVMBuildSelect(e->b, neg, tj_add(e, v, tj_dim_like(k, v, d, 0), "wrapped"), v,
                           "wrap");
}

/* The position entry d of a tuple selects, and (zero-fill) whether it is
 * in range; *valid is left alone for the other policies. */
static LLVMValueRef tj_position(tj_kir *k, LLVMValueRef v, int d, LLVMValueRef *valid)
{
    tj_emit *e = &k->e;
    switch (k->p->policy) {
    case JIT_INDEX_CLAMP: {
        LLVMValueRef top = tj_dim_like(k, v, d, -1);
        if (k->idx_signed) {
            LLVMValueRef low = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "below");
            v = LLVMBuildSelect(e->b, low, tj_like(e, v, 0), v, "clamp.low");
            LLVMValueRef high = LLVMBuildICmp(e->b, LLVMIntSGT, v, top, "above");
            return LLVMBuildSelect(e->b, high, top, v, "clamp");
        }
        LLVMValueRef high = LLVMBuildICmp(e->b, LLVMIntUGT, v, top, "above");
        return LLVMBuildSelect(e->b, high, top, v, "clamp");
    }
    case JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL:
    case JIT_INDEX_ZERO_FILL: {
        if (k->p->policy == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL && k->idx_signed) {
            LLVMValueRef neg = LLVMBuildICmp(e->b, LLVMIntSLT, v, tj_like(e, v, 0), "is.negative");
            v = LLVMBuildSelect(e->b, neg, tj_add(e, v, tj_dim_like(k, v, d, 0), "wrapped"), v,
                                "wrap");
        }
        LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, v, tj_dim_like(k, v, d, 0), "in.range");
        *valid = *valid ? LLVMBuildAnd(e->b, *valid, in, "valid") : in;
        return v;
    }
    default:
        return k->nowrap ? v : tj_wrap(k, v, d);
    }
}

/* Whether the validation also looks for negative indices, so that the
 * copies can skip the wrap when there are none: negative-wraps on a signed
 * index type, in loop kernels (an unrolled one's wraps fold into its
 * straight-line code, and its second copy would cost the per-call kernels). */
static int tj_tracks_sign(const tj_kir *k)
{
    return k->p->policy == JIT_INDEX_NEGATIVE_WRAPS && k->idx_signed && k->p->depth > 0 &&
           !k->st.unrolled;
}

/* OR of "entry out of range" over the tuple starting at index element t0;
 * with sign tracking (neg not NULL), *neg ORs "entry negative" too. */
static LLVMValueRef tj_check_tuple(tj_kir *k, LLVMValueRef t0, LLVMValueRef bad, LLVMValueRef *neg)
{
    tj_emit *e = &k->e;
    for (int d = 0; d < k->p->depth; d++) {
        LLVMValueRef i = d ? tj_add(e, t0, tj_i64(e, d), "index.i") : t0;
        LLVMValueRef raw = tj_load_index(k, i);
        LLVMValueRef v = tj_wrap(k, raw, d);
        LLVMValueRef out = LLVMBuildICmp(e->b, LLVMIntUGE, v, tj_dim_like(k, v, d, 0), "oob");
        bad = LLVMBuildOr(e->b, bad, out, "bad");
        if (neg) {
            LLVMValueRef below = LLVMBuildICmp(e->b, LLVMIntSLT, raw, tj_i64(e, 0), "negative");
            *neg = LLVMBuildOr(e->b, *neg, below, "any.negative");
        }
    }
    return bad;
}

/* The scalar validation of n tuples from tuple `first` (loop), ORed into
 * bad and (sign tracking: neg not NULL) *neg. */
static LLVMValueRef tj_check_loop(tj_kir *k, LLVMValueRef first, LLVMValueRef n,
                                  LLVMValueRef bad, LLVMValueRef *neg)
{
    tj_emit *e = &k->e;
    tj_loop l;
    tj_loop_begin_n(e, &l, "check", n, bad);
    LLVMValueRef negv = neg ? tj_loop_carry2(e, &l, *neg) : NULL;
    LLVMValueRef t0 = tj_mul(e, tj_add(e, first, l.iv, "tuple"), k->p->depth, "tuple.first");
    LLVMValueRef next = tj_check_tuple(k, t0, l.carry, neg ? &negv : NULL);
    if (neg)
        l.carry2_next = negv;
    bad = tj_loop_end(e, &l, next);
    if (neg)
        *neg = l.carry2_out;
    return bad;
}

/* if (bad) return rt(args...); continues in a block named ok_name */
static void tj_emit_fail(tj_kir *k, LLVMValueRef bad, const char *fail_name, const char *ok_name,
                         const char *rt, LLVMValueRef *args, unsigned nargs)
{
    tj_emit *e = &k->e;
    LLVMBasicBlockRef fail = tj_block(e, fail_name), ok = tj_block(e, ok_name);
    LLVMBuildCondBr(e->b, bad, fail, ok);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMTypeRef params[5];
    for (unsigned i = 0; i < nargs; i++)
        params[i] = e->ptr;
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, nargs, 0);
    LLVMValueRef callee = LLVMGetNamedFunction(e->mod, rt);
    if (!callee)
        callee = LLVMAddFunction(e->mod, rt, fty);
    LLVMValueRef status = LLVMBuildCall2(e->b, fty, callee, args, nargs, "status");
    /* a tail call: the hot path then needs no stack frame (a jmp, not a call) */
    LLVMSetTailCall(status, 1);
    LLVMBuildRet(e->b, status);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

static LLVMValueRef tj_self(tj_kir *k)
{
    return LLVMConstPointerCast(k->main_fn, k->e.ptr);
}

/* One branch for every buffer the signature needs: the unsigned minimum of
 * their addresses is 0 only if one is NULL. A test and branch per pointer
 * cost the per-call kernels (G6, S3) a visible share of their time, this
 * about a third of it (docs/performance.md, 'The targets'). */
static void tj_emit_pointer_checks(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef low = NULL;
    struct {
        LLVMValueRef v;
        int needed;
    } bufs[] = {{k->data, p->data_bytes > 0},
                {k->indices, p->indices_elems > 0},
                {k->updates, p->has_updates && p->updates_bytes > 0},
                {k->out, p->out_bytes > 0}};
    unsigned id = LLVMLookupIntrinsicID("llvm.umin", 9);
    LLVMValueRef umin = LLVMGetIntrinsicDeclaration(e->mod, id, &e->i64, 1);
    LLVMTypeRef umin_ty = LLVMIntrinsicGetType(e->ctx, id, &e->i64, 1);
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        if (!bufs[i].needed)
            continue;
        LLVMValueRef a = LLVMBuildPtrToInt(e->b, bufs[i].v, e->i64, "addr");
        LLVMValueRef args[2] = {low, a};
        low = low ? LLVMBuildCall2(e->b, umin_ty, umin, args, 2, "lowest") : a;
    }
    if (!low)
        return;
    LLVMValueRef bad = LLVMBuildICmp(e->b, LLVMIntEQ, low, tj_i64(e, 0), "null");
    LLVMValueRef args[5] = {tj_self(k), k->data, k->indices,
                            k->updates ? k->updates : LLVMConstNull(e->ptr), k->out};
    tj_emit_fail(k, bad, "check.ptr.fail", "check.ptr.ok", TJ_RT_BAD_POINTER, args, 5);
}

/* Tuples per chunk of the vector validation pass. */
#define TJ_CHECK_CHUNK 8

/* The bound each index entry d is compared with, in the index type's own
 * width: error: v >=u dim; negative-wraps (signed): v + dim >=u 2 dim.
 * Exact when dim <= 2^(w-1) for a signed type of w bits (a negative value
 * is then a huge unsigned one) and dim < 2^w for an unsigned one; 0 when
 * that does not hold, and the i64 path must be used. */
static int tj_native_bounds(const tj_kir *k, uint64_t *bound, uint64_t *shift)
{
    const tj_plan *p = k->p;
    unsigned w = (unsigned)p->index_size * 8;
    uint64_t half = (uint64_t)1 << (w - 1);
    uint64_t mask = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
    int wrap = p->policy == JIT_INDEX_NEGATIVE_WRAPS && k->idx_signed;
    for (int d = 0; d < p->depth; d++) {
        uint64_t dim = (uint64_t)p->dims[d];
        if (k->idx_signed ? dim > half : dim > mask)
            return 0;
        shift[d] = wrap ? dim : 0;
        bound[d] = wrap ? 2 * dim : dim; /* 2 dim <= 2^w: fits unless dim = 2^(w-1) */
        if (wrap && dim == half)
            return 0;
    }
    return 1;
}

/* llvm.vector.reduce.or of v */
static LLVMValueRef tj_reduce_or(tj_emit *e, LLVMValueRef v, const char *name)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    unsigned id = LLVMLookupIntrinsicID("llvm.vector.reduce.or", 21);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &t, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &t, 1);
    return LLVMBuildCall2(e->b, fty, fn, &v, 1, name);
}

/* Validation of TJ_CHECK_CHUNK tuples at a time: one contiguous load of the
 * index stream, compared lane by lane with the bounds repeated, with no
 * de-interleaving shuffles. Returns the OR of "out of range" over
 * [0, chunks * TJ_CHECK_CHUNK) tuples; a dynamic kernel's count of chunks
 * is run_chunks, the call's (chunks is then ignored). */
static LLVMValueRef tj_check_chunks(tj_kir *k, int64_t chunks, LLVMValueRef run_chunks,
                                    const uint64_t *bound, const uint64_t *shift,
                                    LLVMValueRef *neg)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    unsigned lanes = (unsigned)(p->depth * TJ_CHECK_CHUNK);
    LLVMValueRef bvals[32 * TJ_CHECK_CHUNK], svals[32 * TJ_CHECK_CHUNK];
    int any_shift = 0;
    for (unsigned l = 0; l < lanes; l++) {
        bvals[l] = LLVMConstInt(k->idx_ty, bound[l % (unsigned)p->depth], 0);
        svals[l] = LLVMConstInt(k->idx_ty, shift[l % (unsigned)p->depth], 0);
        any_shift |= shift[l % (unsigned)p->depth] != 0;
    }
    LLVMTypeRef vty = LLVMVectorType(k->idx_ty, lanes), bty = LLVMVectorType(e->i1, lanes);
    LLVMValueRef bounds = LLVMConstVector(bvals, lanes), shifts = LLVMConstVector(svals, lanes);
    tj_loop l = {0};
    LLVMValueRef c = tj_i64(e, 0), acc = LLVMConstNull(bty), nacc = LLVMConstNull(bty);
    int loop = run_chunks || chunks > 1;
    if (run_chunks)
        tj_loop_begin_n(e, &l, "check.chunk", run_chunks, acc);
    else if (chunks > 1)
        tj_loop_begin(e, &l, "check.chunk", chunks, acc);
    if (loop) {
        c = l.iv;
        acc = l.carry;
        if (neg) /* lanes that held a negative entry: a mask like acc (a vector of
                  * the entries themselves, 24 lanes for G1, was split into
                  * scalars and spilled) */
            nacc = tj_loop_carry2(e, &l, nacc);
    }
    LLVMValueRef off = tj_mul(e, c, (int64_t)lanes * p->index_size, "chunk.off");
    LLVMValueRef v = tj_load(e, vty, tj_byte_gep(e, k->indices, off, "chunk.ptr"), "chunk");
    if (neg)
        nacc = LLVMBuildOr(e->b, nacc,
                           LLVMBuildICmp(e->b, LLVMIntSLT, v, LLVMConstNull(vty), "chunk.neg"),
                           "chunk.signs");
    if (any_shift)
        v = LLVMBuildAdd(e->b, v, shifts, "chunk.wrapped");
    LLVMValueRef bad = LLVMBuildICmp(e->b, LLVMIntUGE, v, bounds, "chunk.oob");
    acc = LLVMBuildOr(e->b, acc, bad, "chunk.bad");
    if (loop) {
        l.carry2_next = nacc;
        acc = tj_loop_end(e, &l, acc);
        nacc = l.carry2_out;
    }
    if (neg) {
        LLVMValueRef below = tj_reduce_or(e, nacc, "chunks.negative");
        *neg = LLVMBuildOr(e->b, *neg, below, "any.negative");
    }
    return tj_reduce_or(e, acc, "chunks.bad");
}

/* The validation pass; returns whether any index is negative (i1) where
 * it tracks that (tj_tracks_sign), else NULL. */
static LLVMValueRef tj_emit_validation(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    if (k->st.checks == 0 || p->depth == 0) /* nothing to check, or a filling policy */
        return NULL;
    LLVMValueRef args[2] = {tj_self(k), k->indices};
    if (p->policy == JIT_INDEX_CLAMP) {
        /* clamping fails only into an empty dimension: known now */
        for (int d = 0; d < p->depth; d++)
            if (p->dims[d] == 0) {
                tj_emit_fail(k, LLVMConstInt(e->i1, 1, 0), "check.fail", "check.ok",
                             TJ_RT_BAD_INDEX, args, 2);
                return NULL;
            }
        return NULL;
    }
    LLVMValueRef bad = tj_false(e), neg = tj_false(e);
    LLVMValueRef *negp = tj_tracks_sign(k) ? &neg : NULL;
    uint64_t bound[JIT_MAX_RANK], shift[JIT_MAX_RANK];
    int64_t first = 0, chunks = k->st.checks / TJ_CHECK_CHUNK;
    if (!k->st.unrolled && chunks > 0 && tj_native_bounds(k, bound, shift)) {
        bad = tj_check_chunks(k, chunks, NULL, bound, shift, negp);
        first = chunks * TJ_CHECK_CHUNK;
    }
    int64_t rest = k->st.checks - first;
    if (k->st.unrolled || rest < TJ_CHECK_CHUNK) {
        for (int64_t t = first; t < k->st.checks; t++)
            bad = tj_check_tuple(k, tj_i64(e, t * p->depth), bad, negp);
    } else {
        bad = tj_check_loop(k, tj_i64(e, first), tj_i64(e, rest), bad, negp);
    }
    tj_emit_fail(k, bad, "check.fail", "check.ok", TJ_RT_BAD_INDEX, args, 2);
    return negp ? neg : NULL;
}

/* A dynamic kernel's validation: the same checks over the call's tuples,
 * in a loop of run-time trips; the message from the call's plan. Returns
 * whether an index is negative, as tj_emit_validation. */
static LLVMValueRef tj_emit_dyn_validation(tj_kir *k, LLVMValueRef rp)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    if (tj_policy_fills(p->policy) || p->depth == 0 || (!tj_pdyn(k, &p->tuples) && !p->tuples))
        return NULL;
    LLVMValueRef args[2] = {rp, k->indices}, n = tj_pv(k, &p->tuples), bad = tj_false(e);
    LLVMValueRef neg = tj_false(e), *negp = tj_tracks_sign(k) ? &neg : NULL;
    if (p->policy == JIT_INDEX_CLAMP) { /* fails only into an empty dimension */
        for (int d = 0; d < p->depth; d++) {
            LLVMValueRef dim = tj_pv(k, &p->dims[d]);
            bad = LLVMBuildOr(e->b, bad, LLVMBuildICmp(e->b, LLVMIntEQ, dim, tj_i64(e, 0), ""),
                              "empty.dim");
        }
        LLVMValueRef any = LLVMBuildICmp(e->b, LLVMIntNE, n, tj_i64(e, 0), "any.tuple");
        bad = LLVMBuildAnd(e->b, bad, any, "bad");
    } else {
        /* constant bounds: whole chunks as a static kernel's, then the rest */
        uint64_t bound[JIT_MAX_RANK], shift[JIT_MAX_RANK];
        int constant = 1;
        for (int d = 0; d < p->depth; d++)
            constant &= !tj_pdyn(k, &p->dims[d]);
        LLVMValueRef first = tj_i64(e, 0);
        if (constant && tj_native_bounds(k, bound, shift)) {
            LLVMValueRef chunks = LLVMBuildUDiv(e->b, n, tj_i64(e, TJ_CHECK_CHUNK), "chunks");
            bad = tj_check_chunks(k, 0, chunks, bound, shift, negp);
            first = tj_mul(e, chunks, TJ_CHECK_CHUNK, "chunked");
        }
        bad = tj_check_loop(k, first, LLVMBuildSub(e->b, n, first, "rest"), bad, negp);
    }
    tj_emit_fail(k, bad, "check.fail", "check.ok", TJ_RT_DYN_BAD_INDEX, args, 2);
    return negp ? neg : NULL;
}

/* out = data, unless out == data; in the range function only the part of
 * units [begin, end). */
static void tj_emit_data_copy(tj_kir *k)
{
    tj_emit *e = &k->e;
    if (k->p->copy_bytes == 0 && !tj_pdyn(k, &k->p->copy_bytes))
        return;
    LLVMValueRef same = LLVMBuildICmp(e->b, LLVMIntEQ, k->out, k->data, "in.place");
    LLVMValueRef dst = k->out, src = k->data, size = tj_pv(k, &k->p->copy_bytes);
    if (k->begin) {
        LLVMValueRef empty = LLVMBuildICmp(e->b, LLVMIntSGE, k->begin, k->end, "range.empty");
        same = LLVMBuildOr(e->b, same, empty, "no.copy");
    }
    LLVMBasicBlockRef copy = tj_block(e, "copy.data"), done = tj_block(e, "copy.done");
    LLVMBuildCondBr(e->b, same, done, copy);
    LLVMPositionBuilderAtEnd(e->b, copy);
    if (k->begin) {
        LLVMValueRef off = tj_mulv(k, k->begin, &k->p->unit_copy_bytes, "range.off");
        LLVMValueRef n = LLVMBuildSub(e->b, k->end, k->begin, "range.units");
        size = tj_mulv(k, n, &k->p->unit_copy_bytes, "range.bytes");
        dst = tj_byte_gep(e, k->out, off, "range.dst");
        src = tj_byte_gep(e, k->data, off, "range.src");
    }
    LLVMBuildMemCpy(e->b, dst, 1, src, 1, size);
    LLVMBuildBr(e->b, done);
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* dst[0..block) = src[0..block) with 16-byte loads and non-temporal
 * 16-byte stores; dst is 16-byte aligned (checked at entry). */
static void tj_emit_nt_copy(tj_kir *k, LLVMValueRef dst, LLVMValueRef src)
{
    tj_emit *e = &k->e;
    LLVMTypeRef v16 = LLVMVectorType(e->i32, 4);
    int64_t chunks = k->p->block_bytes / 16;
    tj_loop l = {0};
    LLVMValueRef c = tj_i64(e, 0);
    if (chunks > 1) {
        tj_loop_begin(e, &l, "nt", chunks, NULL);
        c = l.iv;
    }
    LLVMValueRef off = tj_mul(e, c, 16, "nt.off");
    LLVMValueRef v = tj_load(e, v16, tj_byte_gep(e, src, off, "nt.src"), "nt.v");
    LLVMValueRef to = LLVMBuildPointerCast(e->b, tj_byte_gep(e, dst, off, "nt.dst"),
                                           LLVMPointerType(v16, 0), "");
    LLVMValueRef st = LLVMBuildStore(e->b, v, to);
    LLVMSetAlignment(st, 16);
    LLVMValueRef one = LLVMConstInt(e->i32, 1, 0);
    LLVMValueRef md = LLVMMDNodeInContext(e->ctx, &one, 1);
    LLVMSetMetadata(st, LLVMGetMDKindIDInContext(e->ctx, "nontemporal", 11), md);
    if (chunks > 1)
        tj_loop_end(e, &l, NULL);
}

/* One move of `bytes` (32 or 64) at constant byte offset off. */
static void tj_emit_move(tj_kir *k, LLVMValueRef dst, LLVMValueRef src, int64_t off, int bytes)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vt = LLVMVectorType(e->i32, (unsigned)bytes / 4);
    LLVMValueRef o = tj_i64(e, off);
    LLVMValueRef v = tj_load(e, vt, tj_byte_gep(e, src, o, "mv.src"), "mv.v");
    LLVMValueRef to = LLVMBuildPointerCast(e->b, tj_byte_gep(e, dst, o, "mv.dst"),
                                           LLVMPointerType(vt, 0), "");
    LLVMSetAlignment(LLVMBuildStore(e->b, v, to), 1);
}

/* A block copy, as a static compiler would inline it. Below
 * TJ_IR_STRAIGHT_COPY_MIN bytes llvm.memcpy (LLVM inlines small ones);
 * up to TJ_IR_INLINE_COPY_MIN straight-line 32-byte moves, the last one
 * overlapping, or TJ_IR_WIDE_MOVE-byte moves for blocks of a multiple of
 * that (gcc: 16 zmm moves for 1 KB), which brought G5, S1 and G2
 * to the static kernel's speed where a call to memcpy, rep movsb or LLVM's
 * own expansion lost (for 60 B, G1, a threshold of 32 gained nothing),
 * and G7's 3 KB rows, where rep movsb lost to glibc's vector loop in the
 * static kernel; from there llvm.memcpy.inline, which x86 lowers to rep
 * movsb (docs/performance.md, 'Block copies'). */
static void tj_emit_block_copy(tj_kir *k, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef size)
{
    tj_emit *e = &k->e;
    if (k->nt_path) {
        tj_emit_nt_copy(k, dst, src);
        return;
    }
    if (tj_pdyn(k, &k->p->block_bytes)) { /* a size known at call time: memcpy's choice */
        LLVMBuildMemCpy(e->b, dst, 1, src, 1, size);
        return;
    }
    if (k->p->block_bytes >= TJ_IR_STRAIGHT_COPY_MIN && k->p->block_bytes < TJ_IR_INLINE_COPY_MIN) {
        /* a dynamic kernel's count of blocks is the call's: wide when they may be */
        int wide = k->p->block_bytes % TJ_IR_WIDE_MOVE == 0 &&
                   (k->dyn || k->st.tuples >= TJ_IR_WIDE_MOVE_MIN_BYTES / k->p->block_bytes);
        int m = wide ? TJ_IR_WIDE_MOVE : 32;
        for (int64_t off = 0; off + m <= k->p->block_bytes; off += m)
            tj_emit_move(k, dst, src, off, m);
        if (k->p->block_bytes % m)
            tj_emit_move(k, dst, src, k->p->block_bytes - m, m);
        return;
    }
    if (k->p->block_bytes < k->st.inline_copy_min) {
        LLVMBuildMemCpy(e->b, dst, 1, src, 1, size);
        return;
    }
    LLVMTypeRef tys[3] = {e->ptr, e->ptr, e->i64};
    unsigned id = LLVMLookupIntrinsicID("llvm.memcpy.inline", 18);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 3);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, 3);
    LLVMValueRef args[4] = {dst, src, size, LLVMConstInt(e->i1, 0, 0)};
    LLVMBuildCall2(e->b, fty, fn, args, 4, "");
}

/* Where the nest stands: offsets in the index stream (elements) and on
 * the indexed and dense sides (bytes), constants when unrolled. */
typedef struct tj_vcursor {
    LLVMValueRef index, indexed, dense;
} tj_vcursor;

/* c advanced by i iterations of level v. */
static tj_vcursor tj_advance(tj_kir *k, tj_vcursor c, const tj_level *v, LLVMValueRef i)
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

/* A block to out: copied, or a scatter's reduced into it (the block
 * starts at byte `indexed` of out). */
static void tj_emit_block_write(tj_kir *k, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef size,
                                LLVMValueRef indexed)
{
    tj_emit *e = &k->e;
    if (k->p->reduction == JIT_REDUCTION_NONE) {
        tj_emit_block_copy(k, dst, src, size);
        return;
    }
    tj_reduce_at at = {dst, src, NULL, k->scratch, k->out_elems, NULL};
    if (k->scratch)
        at.first = LLVMBuildUDiv(e->b, indexed, tj_i64(e, k->p->elem_size), "first.elem");
    if (tj_pdyn(k, &k->p->block_bytes))
        at.block_elems = LLVMBuildUDiv(e->b, size, tj_i64(e, k->p->elem_size), "block.elems");
    tj_ir_reduce_block(e, k->p, k->pass, &at);
}

/* One indexed block copy, of the tuple at cursor c. */
static void tj_emit_tuple(tj_kir *k, tj_vcursor c)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef off = tj_i64(e, 0), valid = NULL;
    for (int d = 0; d < p->depth; d++) {
        LLVMValueRef i = d ? tj_add(e, c.index, tj_i64(e, d), "index.i") : c.index;
        LLVMValueRef pos = tj_position(k, tj_load_index(k, i), d, &valid);
        off = tj_add(e, off, tj_mulv(k, pos, &p->strides[d], "entry.off"), "block.off");
        if (d == 0 && p->row_units && k->begin) { /* a range of rows: its tuples only */
            LLVMValueRef rel = LLVMBuildSub(e->b, pos, k->begin, "row.rel");
            LLVMValueRef span = LLVMBuildSub(e->b, k->end, k->begin, "row.span");
            LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULT, rel, span, "row.in");
            valid = valid ? LLVMBuildAnd(e->b, valid, in, "valid") : in;
        }
    }
    LLVMValueRef indexed = tj_add(e, c.indexed, off, "indexed.off");
    int gather = p->indexed == TJ_INDEXED_SRC;
    LLVMValueRef src = gather ? tj_byte_gep(e, k->data, indexed, "slice.src")
                              : tj_byte_gep(e, k->updates, c.dense, "block.src");
    LLVMValueRef dst = gather ? tj_byte_gep(e, k->out, c.dense, "slice.dst")
                              : tj_byte_gep(e, k->out, indexed, "block.dst");
    LLVMValueRef size = tj_pv(k, &p->block_bytes);
    if (!valid) {
        tj_emit_block_write(k, dst, src, size, indexed);
        return;
    }
    LLVMBasicBlockRef copy = tj_block(e, "tuple.copy"), skip = tj_block(e, "tuple.invalid");
    LLVMBasicBlockRef next = tj_block(e, "tuple.next");
    LLVMBuildCondBr(e->b, valid, copy, skip);
    LLVMPositionBuilderAtEnd(e->b, copy);
    tj_emit_block_write(k, dst, src, size, indexed);
    LLVMBuildBr(e->b, next);
    LLVMPositionBuilderAtEnd(e->b, skip);
    if (gather) /* a filling policy: the slice is zeros; a scatter drops the update */
        LLVMBuildMemSet(e->b, dst, LLVMConstInt(e->i8, 0, 0), size, 1);
    LLVMBuildBr(e->b, next);
    LLVMPositionBuilderAtEnd(e->b, next);
}

/* <n x t> with lane i = base + i * step */
static LLVMValueRef tj_const_lanes(LLVMTypeRef t, unsigned n, int64_t base, int64_t step)
{
    LLVMValueRef lanes[64];
    for (unsigned i = 0; i < n; i++)
        lanes[i] = LLVMConstInt(t, (unsigned long long)(base + (int64_t)i * step), 1);
    return LLVMConstVector(lanes, n);
}

/* The run-time scalar x in every lane of <n x typeof(x)> */
static LLVMValueRef tj_splat(tj_kir *k, LLVMValueRef x, unsigned n, const char *name)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(x), n);
    LLVMValueRef one = LLVMBuildInsertElement(e->b, LLVMGetUndef(vt), x, tj_i32(e, 0), "");
    LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(e->i32, n));
    return LLVMBuildShuffleVector(e->b, one, LLVMGetUndef(vt), zeros, name);
}

/* Entry d of each of the lanes tuples in raw (lanes x depth consecutive
 * index elements), widened to i64 as the index type says. */
static LLVMValueRef tj_lane_entries(tj_kir *k, LLVMValueRef raw, unsigned lanes, int d)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef v = raw;
    if (p->depth > 1) {
        LLVMValueRef mask = tj_const_lanes(e->i32, lanes, d, p->depth);
        v = LLVMBuildShuffleVector(e->b, raw, LLVMGetUndef(LLVMTypeOf(raw)), mask, "lanes.entry");
    }
    if (p->index_size == 8)
        return v;
    LLVMTypeRef wide = LLVMVectorType(e->i64, lanes);
    return k->idx_signed ? LLVMBuildSExt(e->b, v, wide, "lanes.i64")
                         : LLVMBuildZExt(e->b, v, wide, "lanes.i64");
}

/* llvm.masked.gather of <lanes x ety> from ptrs under mask, zeros where
 * the mask is off. */
static LLVMValueRef tj_masked_gather(tj_kir *k, LLVMTypeRef ety, LLVMValueRef ptrs,
                                     LLVMValueRef mask, unsigned lanes)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vty = LLVMVectorType(ety, lanes);
    LLVMTypeRef tys[2] = {vty, LLVMTypeOf(ptrs)};
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.gather", 18);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, 2);
    LLVMValueRef args[4] = {ptrs, tj_i32(e, 1), mask, LLVMConstNull(vty)};
    return LLVMBuildCall2(e->b, fty, fn, args, 4, "lanes.value");
}

/* Iterations [0, lanes) of the innermost level v from cursor c, as one
 * vector: the tuples' index entries in one load, their element offsets in
 * a vector (in i32 when every element of data is addressable so, which
 * lets x86 use its 32-bit-index gathers), the policy lane by lane (the
 * error policy validated them before: nothing to apply), one gather from
 * data and one store to the contiguous out. */
static void tj_emit_gather_lanes(tj_kir *k, const tj_level *v, tj_vcursor c)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    unsigned lanes = (unsigned)k->st.gather_lanes;
    int64_t elem = p->elem_size;
    int narrow = p->data_bytes / elem <= INT32_MAX;
    LLVMTypeRef ety = LLVMIntTypeInContext(e->ctx, (unsigned)elem * 8);
    LLVMTypeRef oty = narrow ? e->i32 : e->i64, voty = LLVMVectorType(oty, lanes);
    LLVMValueRef at = tj_mul(e, c.index, p->index_size, "lanes.index.off");
    LLVMTypeRef rty = LLVMVectorType(k->idx_ty, lanes * (unsigned)p->depth);
    LLVMValueRef raw = tj_load(e, rty, tj_byte_gep(e, k->indices, at, "lanes.index.ptr"), "lanes");
    LLVMValueRef base = LLVMBuildExactSDiv(e->b, c.indexed, tj_i64(e, elem), "lanes.base");
    if (narrow)
        base = LLVMBuildTrunc(e->b, base, oty, "lanes.base32");
    LLVMValueRef off = LLVMBuildAdd(e->b, tj_splat(k, base, lanes, "lanes.base.v"),
                                    tj_const_lanes(oty, lanes, 0, v->indexed_step / elem),
                                    "lanes.off");
    LLVMValueRef valid = NULL;
    for (int d = 0; d < p->depth; d++) {
        LLVMValueRef pos = tj_position(k, tj_lane_entries(k, raw, lanes, d), d, &valid);
        if (narrow)
            pos = LLVMBuildTrunc(e->b, pos, voty, "lanes.pos32");
        LLVMValueRef scaled = LLVMBuildMul(e->b, pos,
                                           tj_const_lanes(oty, lanes, p->strides[d] / elem, 0),
                                           "lanes.entry.off");
        off = LLVMBuildAdd(e->b, off, scaled, "lanes.off");
    }
    LLVMValueRef typed = LLVMBuildPointerCast(e->b, k->data, LLVMPointerType(ety, 0), "");
    LLVMValueRef ptrs = LLVMBuildGEP2(e->b, ety, typed, &off, 1, "lanes.src");
    LLVMValueRef mask = valid ? valid : LLVMConstAllOnes(LLVMVectorType(e->i1, lanes));
    LLVMValueRef value = tj_masked_gather(k, ety, ptrs, mask, lanes);
    LLVMValueRef dst = tj_byte_gep(e, k->out, c.dense, "lanes.dst");
    LLVMValueRef to = LLVMBuildPointerCast(e->b, dst, LLVMPointerType(LLVMTypeOf(value), 0), "");
    LLVMSetAlignment(LLVMBuildStore(e->b, value, to), 1);
}

/* The innermost level v from cursor c, gather_lanes iterations at a time,
 * then the remaining iterations one by one. */
static void tj_emit_vector_level(tj_kir *k, const tj_level *v, tj_vcursor c)
{
    tj_emit *e = &k->e;
    int64_t lanes = k->st.gather_lanes, chunks = v->trip / lanes, rest = v->trip % lanes;
    tj_loop lp;
    if (chunks > 1) {
        tj_loop_begin(e, &lp, "lanes", chunks, NULL);
        tj_emit_gather_lanes(k, v, tj_advance(k, c, v, tj_mul(e, lp.iv, lanes, "lanes.first")));
        tj_loop_end(e, &lp, NULL);
    } else {
        tj_emit_gather_lanes(k, v, c);
    }
    tj_vcursor tail = tj_advance(k, c, v, tj_i64(e, chunks * lanes));
    if (rest == 1) {
        tj_emit_tuple(k, tail);
    } else if (rest > 1) {
        tj_loop_begin(e, &lp, "lanes.rest", rest, NULL);
        tj_emit_tuple(k, tj_advance(k, tail, v, lp.iv));
        tj_loop_end(e, &lp, NULL);
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

static void tj_emit_nest(tj_kir *k, int l, tj_vcursor c);

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
static void tj_emit_level_n(tj_kir *k, int l, const tj_level *v, tj_vcursor c, LLVMValueRef n,
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
static void tj_emit_nest(tj_kir *k, int l, tj_vcursor c)
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

static void tj_emit_copy_loops(tj_kir *k);
static void tj_emit_copies(tj_kir *k);

/* A mean's counts: the calling thread's scratch, asked for before anything
 * is written, so that running short (JIT_STATUS_NO_MEMORY) writes nothing. */
static void tj_emit_scratch(tj_kir *k)
{
    tj_emit *e = &k->e;
    int64_t bytes = tj_ir_reduce_scratch_bytes(k->p);
    if (bytes == 0)
        return;
    LLVMTypeRef fty = LLVMFunctionType(e->ptr, &e->i64, 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, TJ_RT_SCRATCH);
    if (!fn)
        fn = LLVMAddFunction(e->mod, TJ_RT_SCRATCH, fty);
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
static void tj_emit_passes_by_sign(tj_kir *k, LLVMValueRef neg)
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

/* Attributes every function of a kernel carries. */
static void tj_function_attrs(tj_emit *e, const tj_ir_strategy *st, LLVMValueRef fn)
{
    tj_add_attr(e, fn, LLVMAttributeFunctionIndex, "nounwind");
    /* Without this LLVM assumes the function may need 512-bit vectors and
     * uses zmm registers even where the CPU prefers 256 (clang always sets
     * it); TENSORJIT_VECTOR_WIDTH=512 asks for zmm on purpose. */
    tj_add_string_attr(e, fn, "min-legal-vector-width", "0");
    if (st->vector_width[0])
        tj_add_string_attr(e, fn, "prefer-vector-width", st->vector_width);
}

/* data, indices, [updates,] out of fn from its first parameters; a
 * scatter may run in place (out == data), so only its indices and updates
 * are noalias; a gather's buffers never overlap. */
static void tj_bind_buffers(tj_kir *k, LLVMValueRef fn, int with_updates)
{
    tj_emit *e = &k->e;
    int scatter = k->p->indexed == TJ_INDEXED_DST;
    k->data = LLVMGetParam(fn, 0);
    k->indices = LLVMGetParam(fn, 1);
    k->updates = with_updates ? LLVMGetParam(fn, 2) : NULL;
    k->out = LLVMGetParam(fn, with_updates ? 3 : 2);
    LLVMSetValueName2(k->data, "data", 4);
    LLVMSetValueName2(k->indices, "indices", 7);
    if (k->updates)
        LLVMSetValueName2(k->updates, scatter ? "updates" : "unused", scatter ? 7 : 6);
    LLVMSetValueName2(k->out, "out", 3);
    tj_add_attr(e, fn, 2, "noalias");
    if (scatter) {
        tj_add_attr(e, fn, 3, "noalias");
    } else {
        tj_add_attr(e, fn, 1, "noalias");
        tj_add_attr(e, fn, with_updates ? 4 : 3, "noalias");
    }
}

/* The kernel's entry, of the ABI of SPEC section 3. */
static void tj_emit_signature(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    int with_updates = k->p->has_updates;
    LLVMTypeRef params[4] = {e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, with_updates ? 4 : 3, 0);
    e->fn = k->main_fn = LLVMAddFunction(e->mod, name, fty);
    tj_bind_buffers(k, e->fn, with_updates);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
}

static char *tj_suffixed(const char *name, const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", name, suffix);
    return buf;
}

/* A check function's return: 0, or TJ_CHECK_NEGATIVE where neg (sign
 * tracked) says an index is negative. */
static void tj_emit_check_return(tj_kir *k, LLVMValueRef neg)
{
    tj_emit *e = &k->e;
    if (!neg) {
        LLVMBuildRet(e->b, tj_i32(e, 0));
        return;
    }
    LLVMBuildRet(e->b, LLVMBuildSelect(e->b, neg, tj_i32(e, TJ_CHECK_NEGATIVE), tj_i32(e, 0),
                                       "check.result"));
}

/* i32 NAME_check(indices): the validation pass alone. */
static LLVMValueRef tj_emit_check_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved = k->indices;
    LLVMTypeRef fty = LLVMFunctionType(e->i32, &e->ptr, 1, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_CHECK_SUFFIX, buf, sizeof buf), fty);
    k->indices = LLVMGetParam(e->fn, 0);
    LLVMSetValueName2(k->indices, "indices", 7);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    tj_emit_check_return(k, tj_emit_validation(k));
    k->indices = saved;
    return e->fn;
}

/* The words of the call's plan rp that vary, loaded in the current function
 * (LLVM drops those it does not use). */
static void tj_emit_dyn_words(tj_kir *k, LLVMValueRef rp)
{
    tj_emit *e = &k->e;
    for (size_t w = 0; w < TJ_DYN_WORDS && w < sizeof(tj_plan) / 8; w++) {
        k->word[w] = NULL;
        if (!tj_dyn_varies(k->dyn, (const char *)&k->dyn->tmpl + w * 8))
            continue;
        LLVMValueRef at = tj_byte_gep(e, rp, tj_i64(e, (int64_t)(w * 8)), "");
        k->word[w] = tj_load(e, e->i64, at, "plan.word");
    }
}

/* i32 NAME_range(data, indices, updates, out, begin, end, flags): the
 * copies of units [begin, end), indices already validated (flags:
 * TJ_RANGE_NONNEG); a dynamic kernel's takes the call's plan before the
 * flags, and its units are that plan's. */
static LLVMValueRef tj_emit_range_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved[4] = {k->data, k->indices, k->updates, k->out};
    LLVMTypeRef params[8] = {e->ptr, e->ptr, e->ptr, e->ptr, e->i64, e->i64, e->ptr, e->i32};
    if (!k->dyn)
        params[6] = e->i32;
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, k->dyn ? 8 : 7, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_RANGE_SUFFIX, buf, sizeof buf), fty);
    tj_bind_buffers(k, e->fn, 1);
    if (!k->p->has_updates)
        k->updates = NULL;
    k->begin = LLVMGetParam(e->fn, 4);
    k->end = LLVMGetParam(e->fn, 5);
    LLVMSetValueName2(k->begin, "begin", 5);
    LLVMSetValueName2(k->end, "end", 3);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    if (k->dyn)
        tj_emit_dyn_words(k, LLVMGetParam(e->fn, 6));
    LLVMValueRef neg = NULL;
    if (tj_tracks_sign(k)) {
        LLVMValueRef flags = LLVMGetParam(e->fn, k->dyn ? 7 : 6);
        LLVMValueRef nonneg = LLVMBuildAnd(e->b, flags, tj_i32(e, TJ_RANGE_NONNEG), "nonneg");
        neg = LLVMBuildICmp(e->b, LLVMIntEQ, nonneg, tj_i32(e, 0), "may.be.negative");
    }
    tj_emit_data_copy(k);
    tj_emit_passes_by_sign(k, neg);
    LLVMBuildRet(e->b, tj_i32(e, 0));
    k->begin = k->end = NULL;
    k->data = saved[0], k->indices = saved[1], k->updates = saved[2], k->out = saved[3];
    return e->fn;
}

/* After a call of the check function (status st): returns st unless it is
 * 0 or TJ_CHECK_NEGATIVE, and continues with the range function's flags. */
static LLVMValueRef tj_emit_check_flags(tj_kir *k, LLVMValueRef st)
{
    tj_emit *e = &k->e;
    LLVMValueRef zero = LLVMBuildICmp(e->b, LLVMIntEQ, st, tj_i32(e, 0), "check.nonneg");
    LLVMValueRef negative =
        LLVMBuildICmp(e->b, LLVMIntEQ, st, tj_i32(e, TJ_CHECK_NEGATIVE), "check.negative");
    LLVMValueRef ok = LLVMBuildOr(e->b, zero, negative, "check.passed");
    LLVMBasicBlockRef fail = tj_block(e, "check.fail"), pass = tj_block(e, "check.ok");
    LLVMBuildCondBr(e->b, ok, pass, fail);
    LLVMPositionBuilderAtEnd(e->b, fail);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, pass);
    return LLVMBuildZExt(e->b, zero, e->i32, "range.flags"); /* TJ_RANGE_NONNEG is 1 */
}

/* The main function of a split kernel: NULL checks, the check function,
 * then the range function over every unit, on this thread or the pool's. */
static void tj_emit_split_main(tj_kir *k, LLVMValueRef check, LLVMValueRef range)
{
    tj_emit *e = &k->e;
    e->fn = k->main_fn;
    tj_bind_buffers(k, e->fn, k->p->has_updates);
    LLVMPositionBuilderAtEnd(e->b, LLVMGetLastBasicBlock(e->fn));
    tj_emit_pointer_checks(k);
    LLVMTypeRef cty = LLVMFunctionType(e->i32, &e->ptr, 1, 0);
    LLVMValueRef st = LLVMBuildCall2(e->b, cty, check, &k->indices, 1, "check.status");
    LLVMValueRef flags = tj_emit_check_flags(k, st);
    LLVMValueRef upd = k->updates ? k->updates : LLVMConstNull(e->ptr);
    if (k->p->threads > 1) {
        LLVMValueRef args[6] = {tj_self(k), k->data, k->indices, upd, k->out, flags};
        LLVMTypeRef params[6] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->i32};
        LLVMTypeRef pty = LLVMFunctionType(e->i32, params, 6, 0);
        LLVMValueRef par = LLVMAddFunction(e->mod, TJ_RT_PARALLEL, pty);
        LLVMValueRef r = LLVMBuildCall2(e->b, pty, par, args, 6, "status");
        LLVMSetTailCall(r, 1);
        LLVMBuildRet(e->b, r);
        return;
    }
    LLVMValueRef args[7] = {k->data, k->indices, upd, k->out, tj_i64(e, 0),
                            tj_i64(e, k->p->units), flags};
    LLVMTypeRef params[7] = {e->ptr, e->ptr, e->ptr, e->ptr, e->i64, e->i64, e->i32};
    LLVMTypeRef rty = LLVMFunctionType(e->i32, params, 7, 0);
    LLVMValueRef r = LLVMBuildCall2(e->b, rty, range, args, 7, "status");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(e->b, r);
}

/* The entry of a dynamic kernel, int (data, indices, updates, out, dims):
 * tj_rt_dyn_enter checks the call's dims and buffers and gives its plan
 * (or answers the call itself: a bad shape, or a shape the code was not
 * made for); the words of that plan that vary are loaded once, here.
 * Returns the plan's pointer. */
static LLVMValueRef tj_emit_dyn_entry(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    LLVMTypeRef params[7] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, 5, 0);
    e->fn = k->main_fn = LLVMAddFunction(e->mod, name, fty);
    tj_bind_buffers(k, e->fn, 1);
    if (!k->p->has_updates)
        k->updates = NULL;
    LLVMValueRef dims = LLVMGetParam(e->fn, 4);
    LLVMSetValueName2(dims, "dims", 4);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    LLVMValueRef slot = LLVMBuildAlloca(e->b, e->ptr, "plan.slot");
    LLVMValueRef args[7] = {tj_self(k), dims, k->data, k->indices,
                            k->updates ? k->updates : LLVMConstNull(e->ptr), k->out,
                            LLVMBuildPointerCast(e->b, slot, e->ptr, "")}; /* LLVM 14: i8** */
    LLVMTypeRef ety = LLVMFunctionType(e->i32, params, 7, 0);
    LLVMValueRef enter = LLVMAddFunction(e->mod, TJ_RT_DYN_ENTER, ety);
    LLVMValueRef st = LLVMBuildCall2(e->b, ety, enter, args, 7, "enter");
    LLVMValueRef answered = LLVMBuildICmp(e->b, LLVMIntNE, st, tj_i32(e, -1), "answered");
    LLVMBasicBlockRef done = tj_block(e, "answered"), run = tj_block(e, "run");
    LLVMBuildCondBr(e->b, answered, done, run);
    LLVMPositionBuilderAtEnd(e->b, done);
    LLVMBuildRet(e->b, st);
    LLVMPositionBuilderAtEnd(e->b, run);
    return LLVMBuildLoad2(e->b, e->ptr, slot, "plan");
}


/* i32 NAME_check(indices, plan): a split dynamic kernel's validation. */
static LLVMValueRef tj_emit_dyn_check_function(tj_kir *k, const char *name)
{
    tj_emit *e = &k->e;
    char buf[128];
    LLVMValueRef saved = k->indices;
    LLVMTypeRef params[2] = {e->ptr, e->ptr};
    LLVMTypeRef fty = LLVMFunctionType(e->i32, params, 2, 0);
    e->fn = LLVMAddFunction(e->mod, tj_suffixed(name, TJ_IR_CHECK_SUFFIX, buf, sizeof buf), fty);
    k->indices = LLVMGetParam(e->fn, 0);
    tj_function_attrs(e, &k->st, e->fn);
    LLVMPositionBuilderAtEnd(e->b, tj_block(e, "entry"));
    LLVMValueRef rp = LLVMGetParam(e->fn, 1);
    tj_emit_dyn_words(k, rp);
    tj_emit_check_return(k, tj_emit_dyn_validation(k, rp));
    k->indices = saved;
    return e->fn;
}


/* A split dynamic kernel's main, after its entry: the check function, then
 * tj_rt_dyn_parallel, which runs the range over the call's units on this
 * thread or the pool's as their bytes say (given the range function's
 * address: no lookup per call). */
static void tj_emit_dyn_split_main(tj_kir *k, LLVMValueRef rp, LLVMValueRef check,
                                   LLVMValueRef range)
{
    tj_emit *e = &k->e;
    LLVMTypeRef cp[2] = {e->ptr, e->ptr};
    LLVMTypeRef cty = LLVMFunctionType(e->i32, cp, 2, 0);
    LLVMValueRef cargs[2] = {k->indices, rp};
    LLVMValueRef st = LLVMBuildCall2(e->b, cty, check, cargs, 2, "check.status");
    LLVMValueRef flags = tj_emit_check_flags(k, st);
    LLVMValueRef args[8] = {tj_self(k), LLVMConstPointerCast(range, e->ptr), rp, k->data,
                            k->indices, k->updates ? k->updates : LLVMConstNull(e->ptr), k->out,
                            flags};
    LLVMTypeRef params[8] = {e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->ptr, e->i32};
    LLVMTypeRef pty = LLVMFunctionType(e->i32, params, 8, 0);
    LLVMValueRef par = LLVMAddFunction(e->mod, TJ_RT_DYN_PARALLEL, pty);
    LLVMValueRef r = LLVMBuildCall2(e->b, pty, par, args, 8, "status");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(e->b, r);
}

/* Whether the call's work (blocks visited times the lines each spans)
 * is below TJ_IR_SPLIT_MIN_WORK: then a split dynamic kernel runs its
 * whole body, the one-thread kernel's, with no call of the check and range
 * functions or of the runtime (G2d, 180 rows: those calls cost 10% of
 * it). */
static LLVMValueRef tj_emit_dyn_small(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef block = tj_pv(k, &p->block_bytes);
    LLVMValueRef lines = tj_add(e, LLVMBuildUDiv(e->b, block, tj_i64(e, 64), ""), tj_i64(e, 1),
                                "block.lines");
    LLVMValueRef most = LLVMBuildUDiv(e->b, tj_i64(e, TJ_IR_SPLIT_MIN_WORK), lines, "small.most");
    return LLVMBuildICmp(e->b, LLVMIntULT, tj_pv(k, &p->visits), most, "small.call");
}

/* The body of a dynamic kernel: entry, validation, copies. */
static int tj_emit_dyn_kernel(tj_kir *k, const char *name, char *why, size_t why_len)
{
    (void)why, (void)why_len; /* every dynamic plan has its code */
    k->dyn = k->p->dyn;
    LLVMValueRef rp = tj_emit_dyn_entry(k, name);
    if (k->st.split) {
        LLVMBasicBlockRef at = LLVMGetInsertBlock(k->e.b);
        LLVMValueRef main_fn = k->e.fn;
        LLVMValueRef check = tj_emit_dyn_check_function(k, name);
        LLVMValueRef range = tj_emit_range_function(k, name);
        k->e.fn = main_fn;
        LLVMPositionBuilderAtEnd(k->e.b, at);
        tj_emit_dyn_words(k, rp); /* the range function's are its own */
        LLVMBasicBlockRef split = tj_block(&k->e, "split"), whole = tj_block(&k->e, "whole");
        LLVMBuildCondBr(k->e.b, tj_emit_dyn_small(k), whole, split);
        LLVMPositionBuilderAtEnd(k->e.b, split);
        tj_emit_dyn_split_main(k, rp, check, range);
        LLVMPositionBuilderAtEnd(k->e.b, whole);
    } else {
        tj_emit_dyn_words(k, rp);
    }
    LLVMValueRef neg = tj_emit_dyn_validation(k, rp);
    tj_emit_scratch(k);
    tj_emit_data_copy(k);
    tj_emit_passes_by_sign(k, neg);
    LLVMBuildRet(k->e.b, tj_i32(&k->e, 0));
    return 0;
}

LLVMModuleRef tj_ir_kernel(LLVMContextRef ctx, const tj_plan *p, const tj_ir_strategy *st,
                           const char *name, char *why, size_t why_len)
{
    tj_kir k = {0};
    tj_emit *e = &k.e;
    k.p = p;
    k.st = *st;
    e->ctx = ctx;
    e->mod = LLVMModuleCreateWithNameInContext(name, ctx);
    e->b = LLVMCreateBuilderInContext(ctx);
    e->i1 = LLVMInt1TypeInContext(ctx);
    e->i8 = LLVMInt8TypeInContext(ctx);
    e->i32 = LLVMInt32TypeInContext(ctx);
    e->i64 = LLVMInt64TypeInContext(ctx);
    e->ptr = LLVMPointerType(e->i8, 0);
    k.idx_ty = LLVMIntTypeInContext(ctx, (unsigned)p->index_size * 8);
    k.idx_signed = tj_index_signed(p->index_type);

    if (p->dyn) {
        if (tj_emit_dyn_kernel(&k, name, why, why_len)) {
            LLVMDisposeBuilder(e->b);
            LLVMDisposeModule(e->mod);
            return NULL;
        }
    } else if (tj_emit_signature(&k, name), k.st.split) {
        LLVMValueRef check = tj_emit_check_function(&k, name);
        LLVMValueRef range = tj_emit_range_function(&k, name);
        tj_emit_split_main(&k, check, range);
    } else {
        tj_emit_pointer_checks(&k);
        LLVMValueRef neg = tj_emit_validation(&k);
        tj_emit_scratch(&k);
        tj_emit_data_copy(&k);
        tj_emit_passes_by_sign(&k, neg);
        LLVMBuildRet(e->b, tj_i32(e, 0));
        if (k.st.ranges) { /* the parts API's, beside the whole main */
            tj_emit_check_function(&k, name);
            tj_emit_range_function(&k, name);
        }
    }
    LLVMDisposeBuilder(e->b);

    char *msg = NULL;
    if (LLVMVerifyModule(e->mod, LLVMReturnStatusAction, &msg)) {
        snprintf(why, why_len, "generated IR failed verification: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        LLVMDisposeModule(e->mod);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    return e->mod;
}
