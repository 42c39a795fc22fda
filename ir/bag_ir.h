/* The LLVM module of an embedding bag's kernel (SPEC section 10), built
 * from its bag plan (runtime/bag_plan.h). */
#ifndef TJ_BAG_IR_H
#define TJ_BAG_IR_H

#include <llvm-c/Core.h>
#include <stddef.h>

#include "config.h"
#include "kernel_ir.h"
#include "plan.h"

/* Runtime functions a bag kernel calls (runtime/jit_support.h): the
 * message of a NULL buffer or a bad offset, segment id or index; a split
 * kernel's bags over the pool. */
#define TJ_RT_BAG_BAD "tj_rt_bag_bad"
#define TJ_RT_BAG_PARALLEL "tj_rt_bag_parallel"
/* a dynamic kernel's: its call's dims, buffers, offsets and indices
 * checked, with the message of a bad one */
#define TJ_RT_BAG_DYN_BEGIN "tj_rt_bag_dyn_begin"
#define TJ_RT_BAG_DYN_PARALLEL "tj_rt_bag_dyn_parallel"
#define TJ_RT_BAG_REDO "tj_rt_bag_redo"
/* the check pass: offsets, segment ids, indices (runtime/exec/bag_scan.h) */
#define TJ_RT_BAG_SCAN "tj_rt_bag_scan"
/* the first rows of a call prefetched (runtime/exec/bag_prime.h) */
#define TJ_RT_BAG_PRIME "tj_rt_bag_prime"

/* Prefetch: the row of the lookup at least TJ_BAG_PREFETCH_MIN_ROWS and
 * TJ_BAG_PREFETCH_BYTES of rows ahead in the index stream (at most
 * TJ_BAG_PREFETCH_MAX_ROWS), every cache line of it, into L2 (the T1
 * hint), in tables of at least TJ_BAG_PREFETCH_MIN_TABLE bytes; the first
 * rows of a call are prefetched before its first bag (primed). What pays is
 * the misses in flight: an L1 prefetch (T0) of 3 KB of rows gained 3% on
 * E1 where the same distance into L2 gained 27%, and 32 lookups ahead did
 * best or near it on every workload whatever the row's width
 * (docs/performance.md, 'Embedding bags'), but for long bags (at least
 * TJ_BAG_PREFETCH_LONG_BAG lookups on average: E1's 100), which went
 * 0.64-0.66 of the static kernel at 64 lookups against 0.67-0.70 at 32,
 * where E4's and E5's short ones lost at 64; and, on an Intel core, for
 * tables that fit the last-level cache, whose rows come from it: E3's
 * 15 MB went 0.85 of the static kernel at 64 against 1.17-1.31 at 32 on a
 * 16-core Xeon, where E5's 256 MB (inside its L3) gained too (docs/
 * performance.md, 'A 16-core Xeon'). On the AMD host E3 gained at 64 too
 * until its row of 128 f32 became a loop over two blocks of columns; since,
 * 16-32 ahead beat 64 by 5-20% there, in one process and in the bench
 * ('E3's distance on the AMD host, again'). On an Intel core
 * the other bags (short, from a table in memory) prefetch
 * TJ_BAG_PREFETCH_FAR_ROWS ahead, as long as those rows take at most
 * 1/TJ_BAG_PREFETCH_L2_SHARE of its L2 (where T1 puts them): on the
 * 16-core Xeon, in interleaved pairs, E2b went 0.62-0.72 of the static
 * kernel at 128 against 0.80 at 32 and E2a 0.41-0.47 against 0.51-0.62,
 * while E1's long bags did no better at 128 than at 64 and the AMD host's
 * E4 went 0.52-0.53 at 128 against 0.43 at 32 (docs/performance.md,
 * 'Prefetch distance by host'). The vendor is the one fact of the host we
 * found that parts the two. TENSORJIT_PREFETCH=N sets the rows ahead (0:
 * none). */
#define TJ_BAG_PREFETCH_BYTES 4096
#define TJ_BAG_PREFETCH_LONG_BAG 64
#define TJ_BAG_PREFETCH_MIN_ROWS 32
#define TJ_BAG_PREFETCH_MAX_ROWS 64
#define TJ_BAG_PREFETCH_FAR_ROWS 128
#define TJ_BAG_PREFETCH_L2_SHARE 16
#define TJ_BAG_PREFETCH_MIN_TABLE (2 << 20)

/* A bag's row is accumulated in at most this many vector registers; a
 * wider row is reduced a block of columns at a time (each block reads the
 * bag's indices again), so that the accumulators never spill. */
#define TJ_BAG_ACC_VECTORS 8

/* With TENSORJIT_INTERLEAVE=N (off by default: bag_strategy.c), bags of
 * at most this many lookups on average are reduced up to N, at most 4, at
 * a time, their lookups interleaved (each bag's in its own order), so
 * that more row misses are in flight than one short bag has; as many as
 * the vector registers hold (32 with AVX-512, 16 below). */
#define TJ_BAG_INTERLEAVE_MAX_LEN 4
#define TJ_BAG_INTERLEAVE_MAX 4

/* Streaming stores when out has at least this many bytes and more than
 * the last-level cache holds (sysconf), rows a multiple of 64 bytes and of
 * the vectors: out's lines are then written whole, and caching them would
 * only evict the table's. TENSORJIT_NT=0/1 turns them off or on. */
#define TJ_BAG_NT_MIN_OUT TJ_IR_NT_MIN_OUT

/* What a bag kernel is made of, derived from its plan and strategy. */
typedef struct tj_bag_layout {
    int vector_bits;     /* 512, 256 or 128: the host's (or TENSORJIT_VECTOR_WIDTH) */
    int64_t lanes;       /* accumulator elements per vector */
    int64_t block_elems; /* row elements reduced per pass over a bag's lookups */
    int64_t interleave;  /* bags reduced at a time */
    int64_t row_bytes;
    int64_t table_bytes;
    int64_t llc_bytes;   /* the last-level cache, 0 if unknown */
    int64_t l2_bytes;    /* the core's L2, 0 if unknown */
    int far_prefetch;    /* an Intel core: rows are prefetched further ahead */
    int64_t bag_len;     /* lookups a bag on average; INT64_MAX: the call's */
    int f16c;            /* the host converts f16 in vector registers */
    int mask_regs;       /* the host has AVX-512's mask registers */
} tj_bag_layout;

/* The strategy of a bag plan's kernel (kernel_ir.h's struct: split,
 * prefetch in rows, nontemporal, vector_width). */
void tj_bag_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *s);
void tj_bag_layout_of(const tj_plan *p, const tj_ir_strategy *s, tj_bag_layout *l);
/* The strategy in words, with the numbers behind each choice. */
void tj_bag_strategy_describe(const tj_plan *p, const tj_ir_strategy *s, char *buf, size_t len);

/* Passes a bag kernel's module needs before the engine's pipeline: its
 * accumulators are allocas, promoted to registers. */
#define TJ_BAG_PASSES "function(mem2reg)"

/* A new module in ctx holding the kernel `name`,
 *   int name(const void *table, const void *indices, const void *offsets,
 *            const void *weights, void *out)
 * (a dynamic plan's, bag.dynamic: then const int64_t *dims, the call's,
 * and its template's counts rows, bags, lookups, bag_len, offsets_len are
 * each a constant (>= 0) or the code -1 - i for dims[i]; those a form
 * derives from others (the offsets form's bags, packed lookups, the
 * segment ids' count) may be left negative. tj_rt_bag_dyn_begin checks
 * the dims before the kernel reads them)
 * and for a split kernel name_range (the same arguments then int64 begin,
 * end: bags or segments [begin, end), checked before by the main or, for
 * the parts API, the runtime's scan: tj_bag_range_fn; a dynamic kernel's
 * takes the dims last and is internal, tj_bag_dyn_range_fn); NULL and why
 * if it cannot be built. */
LLVMModuleRef tj_ir_bag_kernel(LLVMContextRef ctx, const tj_plan *p, const tj_ir_strategy *st,
                               const char *name, char *why, size_t why_len);

#endif
