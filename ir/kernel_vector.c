/*
 * An innermost level of element gathers as vector gathers
 * (TJ_IR_GATHER_BYTES): the tuples' index entries in one load, their
 * offsets in a vector, the policy lane by lane, one llvm.masked.gather
 * from data and one store to the contiguous out, the remaining
 * iterations one by one.
 */
#include "kernel_internal.h"

#include <llvm/Config/llvm-config.h>

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
 * the mask is off, each lane's pointer aligned to 1. From LLVM 22 on the
 * intrinsic has no alignment operand (an align attribute on ptrs replaced
 * it, and its absence means align 1): (ptrs, mask, passthru). Before 22:
 * (ptrs, i32 align, mask, passthru). */
static LLVMValueRef tj_masked_gather(tj_kir *k, LLVMTypeRef ety, LLVMValueRef ptrs,
                                     LLVMValueRef mask, unsigned lanes)
{
    tj_emit *e = &k->e;
    LLVMTypeRef vty = LLVMVectorType(ety, lanes);
    LLVMTypeRef tys[2] = {vty, LLVMTypeOf(ptrs)};
    unsigned id = LLVMLookupIntrinsicID("llvm.masked.gather", 18);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 2);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, 2);
#if LLVM_VERSION_MAJOR >= 22
    LLVMValueRef args[3] = {ptrs, mask, LLVMConstNull(vty)};
#else
    LLVMValueRef args[4] = {ptrs, tj_i32(e, 1), mask, LLVMConstNull(vty)};
#endif
    return LLVMBuildCall2(e->b, fty, fn, args, sizeof args / sizeof args[0], "lanes.value");
}

/* Iterations [0, lanes) of the innermost level v from cursor c, as one
 * vector: the tuples' index entries in one load, their element offsets in
 * a vector (in i32 when every element of data is addressable so, which
 * lets x86 use its 32-bit-index gathers), the policy lane by lane (the
 * error policy validated them before: nothing to apply), one gather from
 * data and one store to the contiguous out. */
void tj_emit_gather_lanes(tj_kir *k, const tj_level *v, tj_vcursor c)
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
void tj_emit_vector_level(tj_kir *k, const tj_level *v, tj_vcursor c)
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
