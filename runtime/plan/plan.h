/*
 * The canonical plan: every op of the family is an indexed block copy
 * over a short nest of levels (XLA's one gather and one scatter with
 * dimension numbers, at a smaller scale).
 *
 * The nest visits every combination of its levels' iterations, outermost
 * first. Iteration i of level l adds i * index_step elements to the offset
 * in the index stream, i * indexed_step bytes on the indexed side and
 * i * dense_step bytes on the dense side. At each point the `depth`
 * indices there (consecutive elements) select, through dims and strides,
 * one block of block_bytes on the indexed side, copied to or from the
 * block at the dense offset:
 *
 *   gathers:  indexed side = source (data), dense side = out
 *   scatters: indexed side = destination (out), dense side = updates,
 *             after out = copy(data) unless out == data
 *
 * The reference kernel and the IR generator run this struct and nothing
 * else: the ops' own code (runtime/ops/op_*.c) only checks a signature and
 * fills it in.
 */
#ifndef TJ_PLAN_H
#define TJ_PLAN_H

#include <stdint.h>

#include "bag_plan.h"
#include "tensorjit.h"

typedef enum tj_side { TJ_INDEXED_SRC = 1, TJ_INDEXED_DST = 2 } tj_side;

/* What tj_plan_finish did with each level as the op wrote it. A dynamic
 * kernel's calls replay its template's choices (runtime/dyn/dyn.c), so that
 * every shape of the family gets the nest the kernel was compiled for. */
enum { TJ_LEVEL_KEEP = 0, TJ_LEVEL_DROP, TJ_LEVEL_MERGE };

struct tj_dyn;


/* A split kernel's check function returns this (not a status) when every
 * index is valid but some are negative, under negative-wraps: its range
 * function must then wrap them. Its range function takes a last argument
 * of flags: TJ_RANGE_NONNEG when the check proved every index
 * non-negative, and the copies skip the wrap (the validation's and the
 * copy's wraps were otherwise two per index: "wrap once"). */
#define TJ_CHECK_NEGATIVE 256
#define TJ_RANGE_NONNEG 1

/* A static split kernel whose indices take at least
 * TJ_SPLIT_CHECK_MIN_BYTES validates them in parts too: its main skips the
 * check and passes TJ_RANGE_UNCHECKED to the runtime, which has the range
 * function, called with TJ_RANGE_CHECK, validate tuples [begin, end)
 * instead of copying units (it returns TJ_CHECK_BAD and/or
 * TJ_CHECK_NEGATIVE bits, no message: the check function writes that),
 * then the copies. One thread validating S6's 8 MB of indices took a fifth
 * of its call on the 16-core Xeon, so that two threads took 0.6 of one
 * where their copies alone took 0.4-0.5 (docs/performance.md). */
#define TJ_SPLIT_CHECK_MIN_BYTES (1 << 20)
#define TJ_RANGE_CHECK 2
#define TJ_RANGE_UNCHECKED 4
#define TJ_CHECK_BAD 512

/* Work (plan units: blocks visited times the cache lines each spans)
 * below which threads never pay (ir/kernel_ir.h, TJ_IR_SPLIT_MIN_WORK,
 * says why): the kernels' gate and a dynamic call's. */
#define TJ_SPLIT_MIN_WORK 2048

/* Samples of each way a split rule keeps (runtime/exec/split_rule.c). */
#define TJ_SPLIT_SAMPLES 3

/* A split kernel's measured costs, in ps per unit of work (the split
 * rule's, runtime/exec/split_rule.c): the last TJ_SPLIT_SAMPLES of its calls
 * run on the calling thread alone (way 0) and of those split over the pool
 * (way 1), 0 where none was measured yet, and how many of each it took;
 * its calls that the rule weighed, those it ran the way its verdict did
 * not say (probes), those it ran alone because the model said a job on
 * the pool costs more than it gains, and its verdict's changes. Read and
 * written with relaxed atomics, without a lock. */
typedef struct tj_split_stat {
    int64_t sample[2][TJ_SPLIT_SAMPLES];
    int64_t taken[2];
    int64_t calls, probes, modelled, flips;
    int64_t weighed; /* calls through the rule's weighing (not quiet ones) */
    int64_t untimed; /* calls alone not timed (tj_split_run) */
    int64_t woken;   /* split calls that woke the pool before a probe, not noted */
    /* the bits of the work (a double, > 0) of the calls the rule last kept
     * alone, whose untimed calls skip it (tj_split_quiet); 0: none */
    int64_t quiet_work;
    int verdict; /* 1: split */
    int pending; /* the probe the next call runs (TJ_PROBE_*; 0: none): a
                  * confirmation of one that disagreed with the verdict, or
                  * the probe after its wake-up call */
} tj_split_stat;

/* Levels of a nest: a GatherElements of rank r has r, the others 1 to 3
 * before merging (tj_plan_finish merges what it can). */
#define TJ_MAX_LEVELS (JIT_MAX_RANK + 2)

typedef struct tj_level {
    int64_t trip;         /* iterations */
    int64_t index_step;   /* index elements per iteration */
    int64_t indexed_step; /* bytes per iteration, indexed side */
    int64_t dense_step;   /* bytes per iteration, dense side */
} tj_level;

typedef struct tj_plan {
    jit_op op;
    tj_side indexed;
    int has_updates;            /* the kernel takes (data, indices, updates, out) */
    /* scatters: how an update combines with out's value (runtime/exec/reduce.h);
     * no_init_val: a position hit by any update starts from the neutral
     * value. Both ask for passes over the positions before and after the
     * updates (runtime/exec/reduce.c) when they are mean or no_init_val. */
    jit_reduction reduction;
    int no_init_val;
    jit_dtype dtype;
    jit_dtype index_type;
    jit_index_policy policy;
    int elem_size;
    int index_size;

    int nlevels;
    tj_level levels[TJ_MAX_LEVELS];
    /* The first unit_levels levels are independent (no two of their
     * iterations write the same bytes): their iterations, flattened, are
     * the units that threads may split. 0: one unit, the whole nest. */
    int unit_levels;
    /* Of a scatter's leading levels, those whose iterations are
     * independent although they may not tile data's copy
     * (ScatterElementsUpdate's before the axis, indices smaller than data
     * there). A dynamic call may take them as its unit levels, as its
     * template does (tj_plan_loosen); where they do not tile the copy its
     * unit_copy_bytes is 0: the copy is made whole before the units run. */
    int loose_units;
    int64_t units;              /* product of the unit levels' trips, or (row_units) rows */
    /* A scatter with no unit level whose every update lands inside one row
     * of data dimension 0 (the row its first index selects): its units are
     * those rows, and a range of units applies, in order, the updates that
     * land in its rows. So threads split a ScatterNDUpdate by destination
     * rows: each row sees its updates in order, as with one thread. */
    int row_units;
    int64_t visits;             /* product of every level's trip: blocks copied */

    int depth;                  /* indices per tuple (consecutive index elements) */
    int64_t dims[JIT_MAX_RANK]; /* size of the dimension each tuple entry addresses */
    int64_t strides[JIT_MAX_RANK]; /* byte stride of each of those dimensions */
    int64_t block_bytes;        /* bytes of one block */
    int64_t copy_bytes;         /* scatters: data bytes copied to out first; gathers: 0 */
    int64_t unit_copy_bytes;    /* of them, the bytes of one unit (units split the copy too) */
    int64_t tuples;             /* tuples in indices, each validated once before any copy */
    int threads;                /* most threads a large kernel may use (1: the caller's) */

    int64_t data_bytes;
    int64_t indices_elems;
    int64_t updates_bytes;
    int64_t out_bytes;

    /* For messages: the shape that positions of tuples are counted in,
     * whether a tuple is printed as one (the op's indices end in a tuple
     * dim: "[3,1]") or as a plain value, and the data dimension that
     * tuple entry 0 addresses. */
    jit_shape tuple_shape;
    int tuple_form;
    int first_dim;

    /* The canonical form's record: levels the op wrote, and what became
     * of each (TJ_LEVEL_*). */
    int written_levels;
    unsigned char recipe[TJ_MAX_LEVELS];
    /* A dynamic kernel's plan is its template, at placeholder dims; this
     * says which of its words vary with the dims (runtime/dyn/dyn.h). NULL for
     * static signatures. */
    const struct tj_dyn *dyn;

    /* An embedding bag (runtime/bag_plan.h): the levels above are unused
     * and the kernels run `bag` instead. */
    int is_bag;
    tj_bag_plan bag;
} tj_plan;

/* Starts a plan: its identity, types and policy (checked by the caller). */
void tj_plan_init(tj_plan *p, const jit_sig *s, tj_side indexed, int has_updates);

/* Checks the signature's reduction against the op's (jit_op_info.reductions
 * of the version, the element type) and puts it in the plan; 0 or -1. */
int tj_plan_reduction(tj_plan *p, const jit_sig *s, unsigned allowed, const char *op,
                      int version);

/* A dynamic family's plan (template or call, before tj_plan_finish*):
 * its loose units taken as unit levels, so a call with indices smaller
 * than data runs the code of a template made with them equal; where they
 * do not tile data's copy, unit_copy_bytes is 0 and the copy is made
 * whole before the units run (tj_rt_dyn_parallel, the reference kernel). */
void tj_plan_loosen(tj_plan *p);

/* Appends a level; unit says whether its iterations are independent (the
 * unit levels must come first). */
void tj_plan_level(tj_plan *p, int64_t trip, int64_t index_step, int64_t indexed_step,
                   int64_t dense_step, int unit);

/* The levels of an op with one index per element (GatherElements,
 * ScatterElementsUpdate): one per dimension of indices, walking indices
 * densely, the dense side at the strides of its shape `dense` (out's,
 * which is indices', or updates', no smaller) and the indexed side
 * (data's strides) on every dimension but the axis, whose position the
 * index gives (depth 1). A gather's levels are all unit levels; a
 * scatter's only those before the axis where indices span data (two
 * elements of different rows never collide, and its copy is split with
 * the rows). 0, or -1 on overflow. */
int tj_plan_element_levels(tj_plan *p, const jit_shape *data, const jit_shape *indices,
                           const jit_shape *dense, int axis);

/* After the levels, dims, strides, sizes and copy: drops levels of one
 * trip, merges neighbours that walk as one, and computes units, visits,
 * tuples and the copy's unit bytes. 0, or -1 when a count overflows. */
int tj_plan_finish(tj_plan *p);
/* The same with the levels' fate taken from recipe (a template's) rather
 * than from the values: 0; 1 when it does not fit this plan (a level it
 * drops is not of one trip, or two it merges do not walk as one), the
 * plan then unusable; -1 on overflow. An empty nest takes a recipe whose
 * merges do not walk as one (it never walks), not one that drops a level
 * of another trip than 1, merges a unit level with another, or merges
 * trips whose product int64 does not hold (its own plan, unmerged, has
 * none of them). */
int tj_plan_finish_as(tj_plan *p, const unsigned char *recipe, int written);

/* Checks shared by every op: element type, index type, policy, engine. */
int tj_check_dtype(jit_dtype t, const char *what);
int tj_check_index_type(jit_dtype t, const char *what);
/* The index type among those of jit_op_info.index_types (types), with the
 * op's name in the message. */
int tj_check_index_type_of(jit_dtype t, unsigned types, const char *op);
/* An axis given as a tensor: an integer type, a scalar or [1]. */
int tj_check_axis_tensor(const jit_sig *s);
/* s->axis in [-rank(data), rank(data) - 1]: 0 and *axis in [0, rank), or -1. */
int tj_check_axis(const jit_sig *s, int *axis);
/* The updates' element type unset or data's. */
int tj_check_updates_dtype(const jit_sig *s);

#define TJ_TYPE_BIT(t) (1u << (t))
#define TJ_INDEX_TYPES_ALL                                                                    \
    (TJ_TYPE_BIT(JIT_I8) | TJ_TYPE_BIT(JIT_U8) | TJ_TYPE_BIT(JIT_I16) | TJ_TYPE_BIT(JIT_U16) |  \
     TJ_TYPE_BIT(JIT_I32) | TJ_TYPE_BIT(JIT_U32) | TJ_TYPE_BIT(JIT_I64) | TJ_TYPE_BIT(JIT_U64))
#define TJ_INDEX_TYPES_I32_I64 (TJ_TYPE_BIT(JIT_I32) | TJ_TYPE_BIT(JIT_I64))
#define TJ_REDUCTION_BIT(r) (1u << (r))
int tj_check_policy_engine(jit_index_policy p, jit_engine e);
/* 0 and the number of threads `threads` asks for (>= 1), or -1. */
int tj_check_threads(int threads, int *out);

/* Policies under which an index out of range is no error: the block is
 * zeros (gathers) or the update is dropped (scatters). */
static inline int tj_policy_fills(jit_index_policy p)
{
    return p == JIT_INDEX_ZERO_FILL || p == JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL;
}

#endif
