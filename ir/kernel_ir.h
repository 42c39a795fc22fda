/* The LLVM module of one kernel, built from the canonical plan. */
#ifndef TJ_KERNEL_IR_H
#define TJ_KERNEL_IR_H

#include <llvm-c/Core.h>
#include <stddef.h>

#include "config.h"
#include "plan.h"

/* Runtime functions the generated code calls (bad index, bad pointer: its
 * cold paths; parallel: a split kernel's copies over the pool), by name
 * (the engine defines them, and gives them to objload.c), so that objects
 * hold no absolute address. */
#define TJ_RT_BAD_INDEX "tj_rt_bad_index"
#define TJ_RT_BAD_POINTER "tj_rt_bad_pointer"
#define TJ_RT_PARALLEL "tj_rt_parallel"
#define TJ_RT_SCRATCH "tj_rt_scratch"
/* a dynamic kernel's entry and bad-index message (runtime/exec/jit_support.h) */
#define TJ_RT_DYN_ENTER "tj_rt_dyn_enter"
#define TJ_RT_DYN_BAD_INDEX "tj_rt_dyn_bad_index"
#define TJ_RT_DYN_PARALLEL "tj_rt_dyn_parallel"

/* Suffixes of the exported check and range functions: a split kernel's
 * main calls them; another static kernel gets them, beside a whole main,
 * in a second module compiled when jit_validate or jit_run_range first
 * ask for them (a runtime's own pool), so that its
 * ranges run the same loop bodies as its main. Not with every kernel:
 * the two functions double a small kernel's compile time
 * (docs/performance.md, 'Parallel execution'). A split bag kernel
 * exports its range alone (ir/bag_ir.c). */
#define TJ_IR_CHECK_SUFFIX "_check"
#define TJ_IR_RANGE_SUFFIX "_range"

/* Loop kernels (not unrolled) of signatures with threads > 1, of at least
 * two units, whose work (blocks visited times the cache lines each
 * touches; a scatter's copy of data not counted) is at least this much
 * are split: a check function, a range function over [begin, end) of
 * their units with the whole kernel's loop bodies, and a small main that
 * checks the buffers, calls the check and has the runtime run the range,
 * on the calling thread or over the pool as each call's measured cost
 * says (runtime/exec/jit_support.c, the split rule). So this only says when
 * threads may ever pay: below it a call takes about a microsecond, which
 * a round trip to another core (0.4-0.6 us) would eat. Others keep
 * everything in the main function: no call, no thread. TENSORJIT_SPLIT_MIN
 * (bytes) brings back the old rule by bytes, for tests that want every
 * call split. */
#define TJ_IR_SPLIT_MIN_WORK TJ_SPLIT_MIN_WORK /* runtime/plan/plan.h: the runtime's too */

/* A kernel is straight-line code (every offset a constant) while the index
 * entries it reads, tuples x max(depth, 1), stay within this budget; above
 * it, counted loops with constant trip counts. Unrolled element gathers run
 * faster per call than loops, but their compile time grows with every
 * entry while a loop's does not grow with its size; the budget keeps an
 * unrolled compile no slower than a loop's (docs/performance.md, 'Unroll
 * budget'). TENSORJIT_UNROLL=N moves it, for measuring. */
#define TJ_IR_UNROLL_BUDGET 16

/* Loop kernels gathering from at least TJ_IR_PREFETCH_MIN_DATA bytes of
 * data can prefetch the source of the tuple N ahead: the kernel knows the
 * index stream, which an ahead-of-time compiler does not. Off by default:
 * it gained on blocks of several elements (G8, G1) but made gathers of
 * one element slower (G3, whose copies hit in cache; G4, which loses its
 * vector gathers to it), and a default for large blocks only rests on too
 * few measurements yet (docs/performance.md, 'Prefetch').
 * TENSORJIT_PREFETCH=N turns it on with distance N. */
#define TJ_IR_PREFETCH_MIN_DATA (2 << 20)
#define TJ_IR_PREFETCH_DISTANCE 0

/* With TENSORJIT_NT=1, loop kernels whose blocks have at least
 * TJ_IR_NT_MIN_BLOCK bytes (a multiple of 16) and whose copies write at
 * least TJ_IR_NT_MIN_OUT bytes in all (meant to be more than the caches
 * hold) use non-temporal stores: no read-for-ownership of lines that are
 * overwritten whole, as glibc's memcpy does for large copies. Below that
 * the written lines may still be cached (a scatter into the same rows call
 * after call) and streaming them out costs. Off by default: on the
 * project's machine a 64 MB output still fits the host's last-level cache,
 * and streaming it out made G5 and S2ip slower (docs/performance.md,
 * 'Block copies'). */
#define TJ_IR_NT_DEFAULT 0
#define TJ_IR_NT_MIN_BLOCK 256
#define TJ_IR_NT_MIN_OUT (16 << 20)

/* How block copies are emitted, by size (tj_emit_block_copy): llvm.memcpy
 * below TJ_IR_STRAIGHT_COPY_MIN bytes, straight-line 32- or 64-byte moves
 * from there to TJ_IR_INLINE_COPY_MIN, and llvm.memcpy.inline (rep movsb) from
 * the inline-copy threshold on. TENSORJIT_INLINE_COPY_MIN moves only that
 * last threshold: the straight-line range stays [TJ_IR_STRAIGHT_COPY_MIN,
 * TJ_IR_INLINE_COPY_MIN) whatever it says. */
#define TJ_IR_STRAIGHT_COPY_MIN 128
#define TJ_IR_INLINE_COPY_MIN 4096

/* Straight-line copies of blocks that are a multiple of TJ_IR_WIDE_MOVE
 * bytes, in kernels whose copies move at least TJ_IR_WIDE_MOVE_MIN_BYTES,
 * move that many at a time (one zmm wherever the host has AVX-512, also
 * where it prefers 256-bit vectors: tj_allow_zmm_moves), as gcc does for
 * G8's rows, which ran slower with 32-byte moves. Other sizes keep
 * 32-byte moves, since an overlapping wide last move made G2's slices
 * slower; and so do small kernels: on the project's host a call that
 * touches zmm registers pays a fixed cost that dwarfs a per-call kernel
 * like S4, the static kernel's zmm copies included (docs/performance.md,
 * 'Block copies on the AMD host'). */
#define TJ_IR_WIDE_MOVE 64
#define TJ_IR_WIDE_MOVE_MIN_BYTES (64 << 10)

/* An innermost level of at most this many trips inside a loop is written
 * out (G2: 3 tuples per batch). */
#define TJ_IR_INNER_UNROLL 4

/* A longer innermost loop of blocks below TJ_IR_STRAIGHT_COPY_MIN bytes
 * (and without vector gathers) copies TJ_IR_LOOP_UNROLL blocks per trip,
 * the rest written out after the loop: for one element or a few dozen
 * bytes a block, the loop's own instructions were a large share of each
 * copy (G3, G9), and LLVM's unroller, which would do the same, is kept
 * out of the pipeline for compile time. Only while the index entries
 * written out per trip stay within the unroll budget: G1's tuples of
 * three entries gained little and compiled much longer. Larger blocks
 * keep one copy per trip (docs/performance.md, 'Unrolled element loops'). */
#define TJ_IR_LOOP_UNROLL 8

/* Element gathers (blocks of one 4- or 8-byte element, out written
 * contiguously by the innermost loop) load TJ_IR_GATHER_BYTES of elements
 * per step with llvm.masked.gather (x86: vpgatherdd/vpgatherdq; LLVM
 * splits a vector wider than the target's registers), their offsets
 * computed in a vector from one load of the index tuples, the policy
 * applied lane by lane, zero-fill as the gather's mask.
 * They pay where one vector's addresses spread over a large part of data
 * (G4's random elements: the scalar loop, unrolled or not, was slower than
 * the static kernel, the gathers faster), and lose where they fall in a
 * small window that the first-level cache holds (G9's rows, G3's rows
 * one per lane): there a gather costs the same loads as the scalar loop
 * and more instructions. So only kernels whose vector spans at least
 * TJ_IR_GATHER_MIN_SPAN bytes of data use them; between the two, the
 * measured differences were within the noise (docs/performance.md,
 * 'Vector gathers'). The error policy's indices are still validated in
 * a pass of their own: checking them in the gather pass would write out
 * before a bad index is found. */
#define TJ_IR_GATHER_BYTES 64
#define TJ_IR_GATHER_MIN_SPAN (1 << 20)

typedef struct tj_ir_strategy {
    int unrolled;      /* 1: fully unrolled; 0: counted loops */
    int64_t tuples;    /* tuples the copy visits (the plan's visits) */
    int64_t checks;    /* tuples the validation pass visits */
    int64_t entries;   /* index entries read: max(tuples, checks) x max(depth, 1) */
    int64_t budget;    /* TJ_IR_UNROLL_BUDGET, or TENSORJIT_UNROLL */
    int64_t prefetch;  /* tuples ahead to prefetch; 0: none */
    int nontemporal;   /* block copies with non-temporal stores (when out is aligned) */
    int split;         /* a main that has its range run over the pool, checked first
                        * (see TJ_IR_SPLIT_MIN_WORK) */
    int ranges;        /* range functions: a split main's, or the parts API's */
    int checks_part;   /* with the ranges, a check function (not a bag kernel's: the
                        * runtime's scan checks a bag's parts, runtime/exec/parts.c) */
    int parallel_checks; /* the range function has a check mode (tj_ir_checks_in_parts); a
                          * split main leaves the validation to the parts */
    int64_t inline_copy_min; /* TJ_IR_INLINE_COPY_MIN, or TENSORJIT_INLINE_COPY_MIN */
    char vector_width[16];   /* LLVM's prefer-vector-width ("": LLVM's choice) */
    int64_t gather_lanes;    /* innermost level as vector gathers of this many lanes; 0: scalar */
} tj_ir_strategy;

/* How the kernel of p is generated, decided once per kernel from the plan
 * and the configuration's code-changing knobs; the generator and the
 * loaders take the result as it is. */
void tj_ir_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *s);
/* Whether a kernel of p (as s chose it) may validate its indices in parts
 * (a range function's check mode, TJ_RANGE_CHECK): at least
 * TJ_SPLIT_CHECK_MIN_BYTES of them, or a dynamic family's that may have,
 * under a policy whose checks compare bounds. */
int tj_ir_checks_in_parts(const tj_plan *p, const tj_ir_strategy *s);

/* A new module in ctx holding the function `name` of the kernel ABI, as
 * st says, and for a split kernel also `name`_check and `name`_range;
 * NULL (and why) if the plan cannot be built. */
LLVMModuleRef tj_ir_kernel(LLVMContextRef ctx, const tj_plan *p, const tj_ir_strategy *st,
                           const char *name, char *why, size_t why_len);

#endif
