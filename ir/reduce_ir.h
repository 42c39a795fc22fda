/* A scatter's reduction of one block into out, as LLVM IR (reduce_ir.c). */
#ifndef TJ_REDUCE_IR_H
#define TJ_REDUCE_IR_H

#include "emit.h"
#include "plan.h"

/* Blocks of at most this many elements are reduced in straight-line code;
 * longer ones in a loop that LLVM vectorizes. */
#define TJ_IR_REDUCE_UNROLL 8

/* What a walk of the nest does with each block of a reduction: mean and
 * use_init_val=false walk it three times (runtime/exec/ref_kernel.c does the
 * same): set up the positions hit, reduce, then divide (mean). */
typedef enum tj_reduce_pass {
    TJ_PASS_START,  /* count = 1 or 0, wide sum = out or 0, or out = neutral */
    TJ_PASS_REDUCE, /* the updates, in order */
    TJ_PASS_FINISH  /* mean: out = sum / count, once per position */
} tj_reduce_pass;

/* The block a pass works on: dst and src point at out's and the updates'
 * block, first is its first element's number in out, scratch the counts
 * (then the wide sums) of the kernel's positions (NULL: none needed). */
typedef struct tj_reduce_at {
    LLVMValueRef dst, src, first, scratch;
    LLVMValueRef out_elems; /* a dynamic kernel's elements of out (the call's), else NULL */
    LLVMValueRef block_elems; /* a dynamic kernel's elements of a block, where they vary */
} tj_reduce_at;

/* Bytes of scratch p's kernel needs per call (0: none): per element of
 * out (at least one element), tj_ir_reduce_slot_bytes. */
int64_t tj_ir_reduce_scratch_bytes(const tj_plan *p);
int64_t tj_ir_reduce_slot_bytes(const tj_plan *p);

/* One pass of the reduction over one block, element by element, in order. */
void tj_ir_reduce_block(tj_emit *e, const tj_plan *p, tj_reduce_pass pass,
                        const tj_reduce_at *at);

#endif
