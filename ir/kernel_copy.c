/*
 * The copies of a kernel: out = data for a scatter (copy.data), and the
 * indexed block of one tuple, copied by size (llvm.memcpy, straight-line
 * moves, llvm.memcpy.inline, streaming stores), reduced into out under a
 * reduction, or zeros / dropped under a filling policy.
 */
#include <string.h>

#include "kernel_internal.h"

/* out = data, unless out == data; in the range function only the part of
 * units [begin, end). */
void tj_emit_data_copy(tj_kir *k)
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

/* The function being emitted takes 64-byte moves as one zmm each. LLVM
 * splits a 512-bit type into two ymm where the host prefers 256-bit
 * vectors (its tuning for Intel's AVX-512 cores) unless the function says
 * it needs 512 bits, as clang's functions using 512-bit intrinsics do:
 * the loop vectorizer keeps its preferred width. gcc inlines such a copy
 * with zmm there, and G8's rows ran 1.3-1.5x the static kernel's time in
 * ymm halves (docs/performance.md, 'A 16-core Xeon'). An explicit
 * TENSORJIT_VECTOR_WIDTH is obeyed as it is. */
static void tj_allow_zmm_moves(tj_kir *k)
{
    static const char key[] = "min-legal-vector-width";
    if (k->st.vector_width[0] && strcmp(k->st.vector_width, "512") != 0)
        return;
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(k->e.b));
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, key, sizeof key - 1);
    tj_add_string_attr(&k->e, fn, key, "512");
}

/* One move of `bytes` (16 to 64) at constant byte offset off. */
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

/* A block of `bytes` in moves of m bytes, stores ascending, the last one
 * overlapping its neighbour where the block is no multiple of m. */
static void tj_emit_moves(tj_kir *k, LLVMValueRef dst, LLVMValueRef src, int64_t bytes, int m)
{
    if (m == TJ_IR_WIDE_MOVE)
        tj_allow_zmm_moves(k);
    for (int64_t off = 0; off + m <= bytes; off += m)
        tj_emit_move(k, dst, src, off, m);
    if (bytes % m)
        tj_emit_move(k, dst, src, bytes - m, m);
}

/* A small block that no single move fits (16 to 127 bytes, not a power
 * of two): moves of the largest power of two up to 32 bytes that fits
 * (tj_emit_moves: stores ascending). LLVM's own
 * expansion of llvm.memcpy stores the overlapping tail first, and on a
 * Sapphire Rapids core that order halved the copy rate: G1's 60-byte
 * slices ran 1.7-1.8x the time of the same four moves with the stores in
 * ascending order, as gcc emits them (docs/performance.md, 'A 16-core
 * Xeon'). Returns 0 for the sizes llvm.memcpy moves without overlap. */
static int tj_emit_small_copy(tj_kir *k, LLVMValueRef dst, LLVMValueRef src, int64_t bytes)
{
    if (bytes < 16 || bytes >= TJ_IR_STRAIGHT_COPY_MIN || (bytes & (bytes - 1)) == 0)
        return 0;
    tj_emit_moves(k, dst, src, bytes, bytes >= 32 ? 32 : 16);
    return 1;
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
        tj_emit_moves(k, dst, src, k->p->block_bytes, wide ? TJ_IR_WIDE_MOVE : 32);
        return;
    }
    if (tj_emit_small_copy(k, dst, src, k->p->block_bytes))
        return;
    if (k->p->block_bytes < k->st.inline_copy_min) {
        LLVMBuildMemCpy(e->b, dst, 1, src, 1, size);
        return;
    }
#if !defined(__x86_64__) && !defined(__i386__)
    /* elsewhere llvm.memcpy.inline has no rep movsb to become: AArch64
     * without MOPS expands it into one load and store pair per 16 or 32
     * bytes, as many as the block holds (a 1 GiB row never finished
     * compiling); memcpy's own loop instead */
    LLVMBuildMemCpy(e->b, dst, 1, src, 1, size);
    return;
#endif
    LLVMTypeRef tys[3] = {e->ptr, e->ptr, e->i64};
    unsigned id = LLVMLookupIntrinsicID("llvm.memcpy.inline", 18);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, tys, 3);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, tys, 3);
    LLVMValueRef args[4] = {dst, src, size, LLVMConstInt(e->i1, 0, 0)};
    LLVMBuildCall2(e->b, fty, fn, args, 4, "");
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
void tj_emit_tuple(tj_kir *k, tj_vcursor c)
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
