/* A scatter's reduction of one block into out, as LLVM IR (reduce_ir.c). */
#ifndef TJ_REDUCE_IR_H
#define TJ_REDUCE_IR_H

#include "emit.h"
#include "plan.h"

/* Blocks of at most this many elements are reduced in straight-line code;
 * longer ones in a loop that LLVM vectorizes. */
#define TJ_IR_REDUCE_UNROLL 8

/* 1 when the generator compiles p's reduction (else the reference kernel
 * serves, and says why). */
int tj_ir_reduces(const tj_plan *p);

/* out[dst + e] = reduction(out[dst + e], updates[src + e]) for every
 * element e of one block, in order. */
void tj_ir_reduce_block(tj_emit *e, const tj_plan *p, LLVMValueRef dst, LLVMValueRef src);

#endif
