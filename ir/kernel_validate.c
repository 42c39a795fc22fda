/*
 * What a kernel checks before it writes anything: the buffers it needs
 * are not NULL (check.ptr), and every index is in range (check), in a pass
 * of its own, branch-free with an OR-ed flag so that it vectorizes; a
 * static kernel's whole chunks in the index type's own width, a dynamic
 * kernel's over the call's tuples. Each failure is a tail call of the
 * runtime, which writes the message.
 */
#include "kernel_internal.h"

#include <string.h>

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
    LLVMValueRef callee = tj_runtime_fn(e, rt, fty);
    LLVMValueRef status = LLVMBuildCall2(e->b, fty, callee, args, nargs, "status");
    /* a tail call: the hot path then needs no stack frame (a jmp, not a call) */
    LLVMSetTailCall(status, 1);
    LLVMBuildRet(e->b, status);
    LLVMPositionBuilderAtEnd(e->b, ok);
}

/* One branch for every buffer the signature needs: the unsigned minimum of
 * their addresses is 0 only if one is NULL. A test and branch per pointer
 * cost the per-call kernels (G6, S3) a visible share of their time, this
 * about a third of it (docs/performance.md, 'The targets'). */
void tj_emit_pointer_checks(tj_kir *k)
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
/* The largest chunk whose lanes' largest values stay in vector registers
 * across the loop (two of AVX-512, four of AVX2): tj_check_chunks_max. */
#define TJ_CHECK_MAX_BYTES 128

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

/* A call of the overloaded intrinsic `name` on vectors like a (and b). */
static LLVMValueRef tj_vector_intrinsic(tj_emit *e, const char *name, LLVMValueRef a,
                                        LLVMValueRef b, const char *what)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, &t, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, &t, 1);
    LLVMValueRef args[2] = {a, b};
    return LLVMBuildCall2(e->b, fty, fn, args, b ? 2 : 1, what);
}

/* llvm.vector.reduce.or of v */
static LLVMValueRef tj_reduce_or(tj_emit *e, LLVMValueRef v, const char *name)
{
    return tj_vector_intrinsic(e, "llvm.vector.reduce.or", v, NULL, name);
}

/* The lanes of one chunk: its bounds and the wrap's shifts, lane by lane. */
typedef struct tj_chunk_lanes {
    unsigned n;
    LLVMTypeRef vty;
    LLVMValueRef bounds, shifts;
    int any_shift;
} tj_chunk_lanes;

static void tj_chunk_lanes_of(tj_kir *k, const uint64_t *bound, const uint64_t *shift,
                              tj_chunk_lanes *c)
{
    const tj_plan *p = k->p;
    LLVMValueRef bvals[32 * TJ_CHECK_CHUNK], svals[32 * TJ_CHECK_CHUNK];
    c->n = (unsigned)(p->depth * TJ_CHECK_CHUNK);
    c->any_shift = 0;
    for (unsigned l = 0; l < c->n; l++) {
        bvals[l] = LLVMConstInt(k->idx_ty, bound[l % (unsigned)p->depth], 0);
        svals[l] = LLVMConstInt(k->idx_ty, shift[l % (unsigned)p->depth], 0);
        c->any_shift |= shift[l % (unsigned)p->depth] != 0;
    }
    c->vty = LLVMVectorType(k->idx_ty, c->n);
    c->bounds = LLVMConstVector(bvals, c->n);
    c->shifts = LLVMConstVector(svals, c->n);
}

/* Chunk c's lanes, loaded. */
static LLVMValueRef tj_chunk_load(tj_kir *k, const tj_chunk_lanes *cl, LLVMValueRef c)
{
    tj_emit *e = &k->e;
    LLVMValueRef off = tj_mul(e, c, (int64_t)cl->n * k->p->index_size, "chunk.off");
    return tj_load(e, cl->vty, tj_byte_gep(e, k->indices, off, "chunk.ptr"), "chunk");
}

/* What one chunk v folds into the two values the chunk loop carries: the
 * lanes' "out of range" summary, and (sign tracking: acc2 not NULL) their
 * "negative" one. */
typedef void (*tj_chunk_step)(tj_kir *k, const tj_chunk_lanes *cl, LLVMValueRef v,
                              LLVMValueRef *acc, LLVMValueRef *acc2);

/* The loop over chunks both checks share (chunks trips, or run_chunks, the
 * call's), *acc and *acc2 (if not NULL) carried from their initial values
 * to the values after it. */
static void tj_chunk_loop(tj_kir *k, const tj_chunk_lanes *cl, int64_t chunks,
                          LLVMValueRef run_chunks, tj_chunk_step step, LLVMValueRef *acc,
                          LLVMValueRef *acc2)
{
    tj_emit *e = &k->e;
    tj_loop l = {0};
    LLVMValueRef c = tj_i64(e, 0);
    int loop = run_chunks || chunks > 1;
    if (run_chunks)
        tj_loop_begin_n(e, &l, "check.chunk", run_chunks, *acc);
    else if (chunks > 1)
        tj_loop_begin(e, &l, "check.chunk", chunks, *acc);
    if (loop) {
        c = l.iv;
        *acc = l.carry;
        if (acc2)
            *acc2 = tj_loop_carry2(e, &l, *acc2);
    }
    step(k, cl, tj_chunk_load(k, cl, c), acc, acc2);
    if (loop) {
        if (acc2)
            l.carry2_next = *acc2;
        *acc = tj_loop_end(e, &l, *acc);
        if (acc2)
            *acc2 = l.carry2_out;
    }
}

/* The largest-value check's step: each lane's largest value (after the
 * wrap's shift) and the OR of the raw values. */
static void tj_max_step(tj_kir *k, const tj_chunk_lanes *cl, LLVMValueRef v, LLVMValueRef *most,
                        LLVMValueRef *bits)
{
    tj_emit *e = &k->e;
    if (bits)
        *bits = LLVMBuildOr(e->b, *bits, v, "chunk.bits");
    if (cl->any_shift)
        v = LLVMBuildAdd(e->b, v, cl->shifts, "chunk.wrapped");
    *most = tj_vector_intrinsic(e, "llvm.umax", *most, v, "chunk.most");
}

/* tj_check_chunks where a chunk's lanes are a power of two and at most
 * TJ_CHECK_MAX_BYTES: each lane's largest value (unsigned, after the wrap's
 * shift) and (sign tracking) the OR of the raw values, whose sign bit says
 * whether one was negative, the bounds compared once after the loop. A
 * compare per chunk ORed into mask registers (two under negative-wraps)
 * kept the Xeon's port 0 busy: G3's check took about 0.4 us more under
 * negative-wraps than under error (docs/performance.md). Other lane counts
 * (G1's 24: tuples of three) do not live in registers across the loop,
 * so they keep the masks. */
static LLVMValueRef tj_check_chunks_max(tj_kir *k, const tj_chunk_lanes *cl, int64_t chunks,
                                        LLVMValueRef run_chunks, LLVMValueRef *neg)
{
    tj_emit *e = &k->e;
    LLVMValueRef most = LLVMConstNull(cl->vty), bits = LLVMConstNull(cl->vty);
    tj_chunk_loop(k, cl, chunks, run_chunks, tj_max_step, &most, neg ? &bits : NULL);
    if (neg) {
        LLVMValueRef all = tj_reduce_or(e, bits, "chunks.bits");
        LLVMValueRef below = LLVMBuildICmp(e->b, LLVMIntSLT, all, LLVMConstNull(k->idx_ty),
                                           "chunks.negative");
        *neg = LLVMBuildOr(e->b, *neg, below, "any.negative");
    }
    LLVMValueRef out = LLVMBuildICmp(e->b, LLVMIntUGE, most, cl->bounds, "chunks.oob");
    return tj_reduce_or(e, out, "chunks.bad");
}

/* The masked check's step: "out of range" and "negative" ORed into masks
 * (a vector of the entries themselves, 24 lanes for G1, was split into
 * scalars and spilled). */
static void tj_mask_step(tj_kir *k, const tj_chunk_lanes *cl, LLVMValueRef v, LLVMValueRef *acc,
                         LLVMValueRef *nacc)
{
    tj_emit *e = &k->e;
    if (nacc)
        *nacc = LLVMBuildOr(e->b, *nacc,
                            LLVMBuildICmp(e->b, LLVMIntSLT, v, LLVMConstNull(cl->vty), "chunk.neg"),
                            "chunk.signs");
    if (cl->any_shift)
        v = LLVMBuildAdd(e->b, v, cl->shifts, "chunk.wrapped");
    LLVMValueRef bad = LLVMBuildICmp(e->b, LLVMIntUGE, v, cl->bounds, "chunk.oob");
    *acc = LLVMBuildOr(e->b, *acc, bad, "chunk.bad");
}

/* tj_check_chunks for other lane counts: each chunk compared with the
 * bounds, "out of range" and "negative" kept as masks. */
static LLVMValueRef tj_check_chunks_masked(tj_kir *k, const tj_chunk_lanes *cl, int64_t chunks,
                                           LLVMValueRef run_chunks, LLVMValueRef *neg)
{
    tj_emit *e = &k->e;
    LLVMTypeRef bty = LLVMVectorType(e->i1, cl->n);
    LLVMValueRef acc = LLVMConstNull(bty), nacc = LLVMConstNull(bty);
    tj_chunk_loop(k, cl, chunks, run_chunks, tj_mask_step, &acc, neg ? &nacc : NULL);
    if (neg) {
        LLVMValueRef below = tj_reduce_or(e, nacc, "chunks.negative");
        *neg = LLVMBuildOr(e->b, *neg, below, "any.negative");
    }
    return tj_reduce_or(e, acc, "chunks.bad");
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
    tj_chunk_lanes cl;
    tj_chunk_lanes_of(k, bound, shift, &cl);
    /* a bound of 0 would fail a loop of no trips (its largest value starts
     * at 0): every index is out of range there anyway */
    int zero_bound = 0;
    for (int d = 0; d < k->p->depth; d++)
        zero_bound |= bound[d] == 0;
    if ((cl.n & (cl.n - 1)) == 0 && cl.n * (unsigned)k->p->index_size <= TJ_CHECK_MAX_BYTES &&
        !zero_bound)
        return tj_check_chunks_max(k, &cl, chunks, run_chunks, neg);
    return tj_check_chunks_masked(k, &cl, chunks, run_chunks, neg);
}

/* The validation pass; returns whether any index is negative (i1) where
 * it tracks that (tj_tracks_sign), else NULL. */
LLVMValueRef tj_emit_validation(tj_kir *k)
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

/* Whether the indexed dims are the same for every call (a static kernel's
 * always; a dynamic one's where none of them varies), so that the checks
 * may compare against constant bounds in vectors. */
static int tj_bounds_constant(tj_kir *k)
{
    for (int d = 0; d < k->p->depth; d++)
        if (tj_pdyn(k, &k->p->dims[d]))
            return 0;
    return 1;
}

/* A range function's check mode (TJ_RANGE_CHECK): tuples [k->begin,
 * k->end) validated, whole chunks in vectors as the check function's, then
 * the rest; returns the i32 bits TJ_CHECK_BAD (one is out of range) and
 * TJ_CHECK_NEGATIVE (one is negative, where the sign is tracked). No
 * message: the runtime has the check function write it. */
LLVMValueRef tj_emit_check_part(tj_kir *k)
{
    tj_emit *e = &k->e;
    const tj_plan *p = k->p;
    LLVMValueRef saved = k->indices;
    int64_t tuple_bytes = (int64_t)p->depth * p->index_size;
    k->indices = tj_byte_gep(e, k->indices, tj_mul(e, k->begin, tuple_bytes, ""), "part.indices");
    LLVMValueRef n = LLVMBuildSub(e->b, k->end, k->begin, "part.tuples");
    LLVMValueRef bad = tj_false(e), neg = tj_false(e);
    LLVMValueRef *negp = tj_tracks_sign(k) ? &neg : NULL;
    LLVMValueRef first = tj_i64(e, 0);
    uint64_t bound[JIT_MAX_RANK], shift[JIT_MAX_RANK];
    if (tj_bounds_constant(k) && tj_native_bounds(k, bound, shift)) {
        LLVMValueRef chunks = LLVMBuildUDiv(e->b, n, tj_i64(e, TJ_CHECK_CHUNK), "part.chunks");
        bad = tj_check_chunks(k, 0, chunks, bound, shift, negp);
        first = tj_mul(e, chunks, TJ_CHECK_CHUNK, "part.rest");
    }
    bad = tj_check_loop(k, first, LLVMBuildSub(e->b, n, first, ""), bad, negp);
    k->indices = saved;
    LLVMValueRef bits = LLVMBuildSelect(e->b, bad, tj_i32(e, TJ_CHECK_BAD), tj_i32(e, 0), "");
    LLVMValueRef negative = LLVMBuildSelect(e->b, neg, tj_i32(e, TJ_CHECK_NEGATIVE), tj_i32(e, 0), "");
    return LLVMBuildOr(e->b, bits, negative, "part.check");
}

/* A dynamic kernel's validation: the same checks over the call's tuples,
 * in a loop of run-time trips; the message from the call's plan. Returns
 * whether an index is negative, as tj_emit_validation. */
LLVMValueRef tj_emit_dyn_validation(tj_kir *k, LLVMValueRef rp)
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
        LLVMValueRef first = tj_i64(e, 0);
        if (tj_bounds_constant(k) && tj_native_bounds(k, bound, shift)) {
            LLVMValueRef chunks = LLVMBuildUDiv(e->b, n, tj_i64(e, TJ_CHECK_CHUNK), "chunks");
            bad = tj_check_chunks(k, 0, chunks, bound, shift, negp);
            first = tj_mul(e, chunks, TJ_CHECK_CHUNK, "chunked");
        }
        bad = tj_check_loop(k, first, LLVMBuildSub(e->b, n, first, "rest"), bad, negp);
    }
    tj_emit_fail(k, bad, "check.fail", "check.ok", TJ_RT_DYN_BAD_INDEX, args, 2);
    return negp ? neg : NULL;
}
