/*
 * The plan of an embedding bag (SPEC section 10): a gather whose rows are
 * pooled per bag. It does not fit the block-copy nest of plan.h (a bag's
 * lookups are reduced, not copied, and where a bag starts is data), so a
 * bag signature's plan carries this instead of levels: every number the
 * reference kernel and the IR generator need, and nothing op-specific
 * beyond it.
 */
#ifndef TJ_BAG_PLAN_H
#define TJ_BAG_PLAN_H

#include <stdint.h>

#include "tensorjit.h"

typedef enum tj_bag_form {
    TJ_BAG_OFFSETS = 1, /* bag b: indices[offsets[b] .. offsets[b+1]) (the last to N) */
    TJ_BAG_PACKED,      /* bag b: row b of indices [B, L] */
    TJ_BAG_SEGMENTS     /* lookup j adds into bag segment_ids[j] */
} tj_bag_form;

typedef struct tj_bag_plan {
    tj_bag_form form;
    jit_dtype dtype;          /* table, weights and out */
    jit_dtype index_type;     /* indices and offsets / segment ids */
    jit_dtype acc_type;       /* F32 for f16/bf16/f32, F64, I64 signed, U64 unsigned and bool */
    jit_reduction reduction;  /* SUM, MEAN or MAX */
    jit_index_policy policy;
    int64_t rows;             /* E */
    int64_t row_elems;        /* d1 * ... (1 for a rank-1 table) */
    int64_t bags;             /* out rows: B, or S for segments */
    int64_t lookups;          /* N (packed: B * L) */
    int64_t bag_len;          /* packed: L; else 0 */
    int64_t offsets_len;      /* offsets: B or B + 1; segments: N; packed: 0 */
    int include_last_offset;
    int has_weights;
    int64_t default_index;    /* the row of an empty bag; -1: none */
    int64_t padding_row;      /* padding_idx resolved into [0, E); -1: none */
    int threads;
    /* A dynamic signature's template: the counts above that come from the
     * call's dims (runtime/dyn.h's convention: table dims, indices dims,
     * then offsets / segment ids dims and S) are negative codes here. */
    int dynamic;
    /* 1: no index, offset or segment-id checks in the code. Set only by
     * the bench (bench/bags_unchecked.c), under a key no signature has,
     * to measure what the checks cost; no signature plans to it. */
    int unchecked;
} tj_bag_plan;

/* The dims a dynamic bag plan's counts take from each call (its negative
 * codes), as SPEC 10 names them and only the form's own: "B, N and E"
 * (offsets), "B, L and E" (packed), "S, N and E" (segments), those that
 * are static left out; "" for none. Written to buf (len bytes), returned.
 * jit_explain and the bag strategy's words both say it (runtime/plan/
 * explain.c), so the two name the same dims. */
const char *tj_bag_call_dims(const tj_bag_plan *b, char *buf, size_t len);

#endif
