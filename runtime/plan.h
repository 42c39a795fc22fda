/*
 * The canonical plan: GatherND and ScatterUpdate both reduce to an indexed
 * block copy. For every outer position o and item j, a tuple of `depth`
 * indices selects a block of `block_bytes` on the indexed side; the block
 * on the other (plain) side is at o * plain_outer_bytes + j * block_bytes.
 *
 *   GatherND:      indexed side = source (data), plain side = out
 *   ScatterUpdate: indexed side = destination (out), plain side = updates,
 *                  after out = copy(data) unless out == data
 *
 * The reference kernel and the IR generator both run from this struct; the
 * op-specific code only translates a signature into it.
 */
#ifndef TJ_PLAN_H
#define TJ_PLAN_H

#include <stdint.h>

#include "tensorjit.h"

typedef enum tj_op { TJ_OP_GATHER_ND = 1, TJ_OP_SCATTER_UPDATE = 2 } tj_op;

typedef enum tj_side { TJ_INDEXED_SRC = 1, TJ_INDEXED_DST = 2 } tj_side;

typedef struct tj_plan {
    tj_op op;
    tj_side indexed;
    jit_dtype dtype;
    jit_dtype index_type;
    jit_index_policy policy;
    int elem_size;
    int index_size;

    int64_t outer;              /* batch count (gather) / outer count (scatter) */
    int64_t items;              /* tuples per batch / index count */
    int depth;                  /* indices per tuple: k (gather) / 1 (scatter) */
    int64_t dims[JIT_MAX_RANK]; /* size of the dimension each tuple entry addresses */
    int64_t strides[JIT_MAX_RANK]; /* byte stride of each of those dimensions */
    int64_t block_bytes;        /* bytes of one slice / one update block */
    int64_t index_outer_elems;  /* index elements between outer positions (0: shared) */
    int64_t indexed_outer_bytes; /* bytes between outer positions on the indexed side */
    int64_t plain_outer_bytes;  /* bytes between outer positions on the plain side */
    int64_t copy_bytes;         /* scatter: data bytes copied to out first; gather: 0 */
    int64_t units;              /* independent parts of the copies: tuples / outer positions */
    int threads;                /* most threads a large kernel may use (1: the caller's) */

    int64_t data_bytes;
    int64_t indices_elems;
    int64_t updates_bytes;
    int64_t out_bytes;

    /* For messages: the shape that positions of tuples are counted in
     * (gather: indices.shape[:-1]; scatter: indices.shape) and the data
     * dimension that tuple entry 0 addresses. */
    jit_shape tuple_shape;
    int first_dim;
} tj_plan;

/* 0 and *plan, or -1 with jit_last_error() naming the rule broken. */
int tj_gather_nd_plan(const jit_gather_nd_sig *sig, tj_plan *plan, jit_shape *out_shape);
int tj_scatter_update_plan(const jit_scatter_update_sig *sig, tj_plan *plan,
                           jit_shape *out_shape);

/* Checks shared by both ops: element type, index type, policy, engine. */
int tj_check_dtype(jit_dtype t, const char *what);
int tj_check_index_type(jit_dtype t, const char *what);
int tj_check_policy_engine(jit_index_policy p, jit_engine e);
/* 0 and the number of threads `threads` asks for (>= 1), or -1. */
int tj_check_threads(int threads, int *out);

/* Number of tuples that must be validated: with shared indices (scatter)
 * each is checked once, not once per outer position. */
static inline int64_t tj_plan_tuples_to_check(const tj_plan *p)
{
    return p->index_outer_elems ? p->outer * p->items : p->items;
}

#endif
