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
 * exports step 2 as name_range over bags (or segments: a range adds only
 * the lookups of its own), and its main runs step 1, then has
 * tj_rt_bag_parallel run the range on the calling thread or over the pool
 * (a dynamic kernel's, tj_rt_bag_dyn_parallel with its internal range and
 * the call's dims). Float NaNs follow runtime/reduce.c's
 * rule for sums: the accumulator's NaN first, then the row's (the operand
 * order of an fadd's NaN is LLVM's otherwise), and a product's the row's
 * first, then the weight's, so that both engines agree bit for bit; the
 * lookups run without the rule's selects, and the bags whose sums end in a
 * NaN are reduced again by the reference kernel (tj_bir_nan_redo).
 *
 *   bag_ir.c        the module: functions, counts, the dynamic entry, dispatch
 *   bag_strategy.c  how a bag kernel is generated
 *   bag_elem.c      element types and the small builders
 *   bag_check.c     the check pass
 *   bag_lookup.c    resolve, prefetch and priming, lookup loops, the NaN redo's call
 *   bag_group.c     column blocks, interleaved groups, bags by alignment, finishing a bag
 *   bag_segments.c  the segments form, its scratch and its range
 */
#ifndef TJ_BAG_INTERNAL_H
#define TJ_BAG_INTERNAL_H

#include "bag_ir.h"
#include "emit.h"

typedef struct tj_row_memo {
    LLVMBasicBlockRef bb;
    LLVMValueRef base, r, at;
    int64_t row_bytes;
    /* at plus a block's bytes (tj_bir_col_at), for the block at c0_bytes
     * and elements of blk_esize bytes; NULL until made */
    LLVMValueRef blk, blk_c0;
    int64_t blk_esize;
} tj_row_memo;

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
    int primed;       /* the call's first rows were prefetched by tj_rt_bag_dyn_begin */
    /* tj_bir_nan_type's vector: a lane where some bag's fast path ended
     * in a NaN; the call's bags whose rows hold one are then redone by
     * the reference kernel (tj_bir_nan_redo); NULL where there is no fast
     * path */
    LLVMValueRef nan_seen;
    LLVMValueRef main_fn;
    LLVMValueRef table, indices, offsets, weights, out;
    /* the counts: constants, or a dynamic kernel's from the call's dims
     * (tj_load_counts); dims is NULL in a static kernel */
    LLVMValueRef dims, rows, bags, lookups, bag_len, offsets_len;
    /* lookups - 1, the last lookup a prefetch ahead reads (made with the
     * counts, outside the loops) */
    LLVMValueRef last_lookup;
    LLVMBasicBlockRef allocas; /* the function's entry, where its allocas go */
    /* a bf16 or f16 row's vectors before their rounding (tj_narrow_in_loop), and
     * the function it is an alloca of */
    LLVMValueRef narrow_buf, narrow_buf_fn;
    /* the row address tj_bir_row_at made last (and the block's address in
     * it, tj_bir_col_at), which the row's other vectors in the same block
     * reuse: one multiply and one address a row, not one a vector, so less
     * IR for code generation to select (issue 25's compile time) */
    tj_row_memo row_memo;
    /* the check pass's cold path in fail_fn, which every check of that
     * function branches to (tj_fail_if): one block, not one a check */
    LLVMBasicBlockRef fail;
    LLVMValueRef fail_fn;
} tj_bir;

/* What a block's lookups prefetch of the row ahead: nothing, the whole
 * row (a row of one block, with its rest) or the block's own columns (a
 * loop of blocks: each trip prefetches the lines the same trip of a later
 * bag reads). */
enum { TJ_PREFETCH_NONE, TJ_PREFETCH_ROW, TJ_PREFETCH_BLOCK };

/* A block of a bag's row: columns [c0, c0 + n) in vectors of lanes (the
 * last one shorter), with their accumulators; c0 is given in bytes of the
 * table's elements (a constant, or a value made before the block's
 * lookup loop). */
typedef struct tj_colblock {
    LLVMValueRef c0_bytes;
    int64_t n, vectors;
    LLVMValueRef acc[TJ_BAG_INTERLEAVE_MAX][TJ_BAG_ACC_VECTORS + 1];
    LLVMValueRef count[TJ_BAG_INTERLEAVE_MAX];
    int prefetch; /* what its lookups prefetch: TJ_PREFETCH_* */
} tj_colblock;

/* The most lanes of an accumulator vector: 512 bits of f32. */
#define TJ_BIR_MAX_LANES 16

/* The most arguments of a runtime call a kernel makes. */
#define TJ_BIR_MAX_RT_ARGS 9

/* bag_elem.c */
LLVMTypeRef tj_bir_vec(LLVMTypeRef t, int64_t n);
LLVMValueRef tj_bir_call_rt(tj_bir *k, const char *name, LLVMValueRef *args, unsigned n,
                            const char *what);
LLVMValueRef tj_bir_splat_value(tj_bir *k, LLVMValueRef x, int64_t n);
void tj_bir_store_at(tj_bir *k, LLVMValueRef v, LLVMValueRef ptr, int nt);
LLVMValueRef tj_bir_loop_close(tj_bir *k, tj_loop *l, LLVMValueRef carry_next);
/* A loop over [0, n) tested at its top (name.head), which alone reaches
 * its exit, and closed by tj_bir_while_close: the values mem2reg carries
 * through it get their phis at the head and none at the exit, where a
 * loop tested at its bottom, behind a guard for n <= 0, merges the
 * guard's values with the latch's (a bag's zeros and sums: 0.58 M of E1's
 * family's code generation, docs/performance.md, 'A family's checks in
 * one call'); llc rotates it into the same machine loop. Its counter
 * reaches the head through llvm.expect, as tj_bir_loop_close's. */
void tj_bir_while_begin(tj_bir *k, tj_loop *l, const char *name, LLVMValueRef n);
void tj_bir_while_close(tj_bir *k, tj_loop *l);
LLVMValueRef tj_bir_slot(tj_bir *k, LLVMTypeRef t, const char *name);
LLVMValueRef tj_bir_get(tj_bir *k, LLVMValueRef slot, LLVMTypeRef t);
LLVMValueRef tj_bir_load_idx(tj_bir *k, LLVMValueRef buf, LLVMValueRef i, const char *name);
LLVMValueRef tj_bir_load_idx_if(tj_bir *k, LLVMValueRef cond, LLVMValueRef buf,
                                LLVMValueRef i, const char *name);
LLVMValueRef tj_bir_widen(tj_bir *k, LLVMValueRef v, int64_t n);
LLVMValueRef tj_bir_narrow(tj_bir *k, LLVMValueRef v, int64_t n);
LLVMValueRef tj_bir_neutral(tj_bir *k, int64_t n);
LLVMValueRef tj_bir_combine(tj_bir *k, LLVMValueRef a, LLVMValueRef x);
LLVMValueRef tj_bir_weigh(tj_bir *k, LLVMValueRef x, LLVMValueRef w);
/* bag_check.c */
void tj_bir_emit_checks(tj_bir *k);
/* bag_lookup.c */
LLVMValueRef tj_bir_resolve(tj_bir *k, LLVMValueRef v, LLVMValueRef *keep);
void tj_bir_prefetch_lines(tj_bir *k, LLVMValueRef row);
LLVMValueRef tj_bir_lookup_ahead(tj_bir *k, LLVMValueRef j);
void tj_bir_prefetch_ahead(tj_bir *k, LLVMValueRef j);
void tj_bir_prime(tj_bir *k, LLVMValueRef first);
void tj_bir_lookup_loop(tj_bir *k, tj_colblock *bl, int slots, LLVMValueRef *start,
                        LLVMValueRef *len, LLVMValueRef n);
int tj_bir_nan_redo_wanted(const tj_bir *k);
/* The vector the NaN note carries: a lane's compare, as i1 where the host
 * has mask registers, else sign-extended to the accumulator's width, as
 * the compare leaves it in a vector register (an <N x i1> there is
 * legalized through such a vector at every use: 1.15 M more instructions
 * of code generation in E1's loops on an AVX2 host). */
LLVMTypeRef tj_bir_nan_type(const tj_bir *k);
void tj_bir_nan_note(tj_bir *k, const tj_colblock *bl, int slots);
LLVMValueRef tj_bir_nan_redo(tj_bir *k, LLVMValueRef begin, LLVMValueRef end);
/* bag_group.c */
int64_t tj_bir_vector_len(const tj_bir *k, const tj_colblock *bl, int64_t v);
LLVMValueRef tj_bir_cols(tj_bir *k, LLVMValueRef base, LLVMValueRef r, const tj_colblock *bl,
                         int64_t v, int64_t esize, int64_t row_bytes);
LLVMValueRef tj_bir_load_row(tj_bir *k, LLVMValueRef r, const tj_colblock *bl, int64_t v);
LLVMValueRef tj_bir_weight(tj_bir *k, LLVMValueRef j, int64_t n);
void tj_bir_init_bag(tj_bir *k, tj_colblock *bl, int i);
LLVMValueRef tj_bir_default_row(tj_bir *k, const tj_colblock *bl, int64_t v);
LLVMValueRef tj_bir_emit_bags_by_alignment(tj_bir *k, LLVMValueRef begin, LLVMValueRef end);
/* bag_segments.c */
void tj_bir_emit_segments(tj_bir *k, LLVMValueRef begin, LLVMValueRef end);

#endif
