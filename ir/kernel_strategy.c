/*
 * How the kernel of a plan is generated (tj_ir_strategy): unrolled or
 * loops, prefetch, non-temporal stores, vector gathers, split for threads.
 * Decided once per kernel, from the plan and the code-changing knobs,
 * before any IR is built.
 */
#include <stdio.h>
#include <string.h>

#include "kernel_internal.h"
#include "reduce.h"

/* Bytes of data that the addresses of one vector of the innermost level
 * v can fall in: every tuple entry's dimension, plus the level's own step
 * across the lanes (capped at INT64_MAX). */
static int64_t tj_gather_span(const tj_plan *p, const tj_level *v, int64_t lanes)
{
    int64_t span = p->elem_size;
    for (int d = 0; d < p->depth; d++) /* each term within data_bytes; an empty dim: none */
        span += (p->dims[d] > 0 ? p->dims[d] - 1 : 0) * p->strides[d];
    int64_t walk = v->indexed_step < 0 ? -v->indexed_step : v->indexed_step;
    if (walk > (INT64_MAX - span) / lanes)
        return INT64_MAX;
    return span + (lanes - 1) * walk;
}

/* Lanes of the vector gathers for p's innermost level (see
 * TJ_IR_GATHER_BYTES), or 0: the scalar loop. */
static int64_t tj_gather_lanes(const tj_plan *p, const tj_ir_strategy *s)
{
    if (p->indexed != TJ_INDEXED_SRC || s->unrolled || s->prefetch || s->nontemporal ||
        p->nlevels == 0 || p->depth == 0 || p->block_bytes != p->elem_size ||
        (p->elem_size != 4 && p->elem_size != 8))
        return 0;
    const tj_level *v = &p->levels[p->nlevels - 1];
    int64_t lanes = TJ_IR_GATHER_BYTES / p->elem_size;
    /* the tuples of one vector are loaded as one vector of at most 64
     * index elements: deeper tuples keep the scalar loop */
    if (lanes * p->depth > 64)
        return 0;
    if (v->dense_step != p->block_bytes || v->index_step != p->depth || v->trip < lanes ||
        v->indexed_step % p->elem_size != 0 || tj_gather_span(p, v, lanes) < TJ_IR_GATHER_MIN_SPAN)
        return 0;
    for (int d = 0; d < p->depth; d++)
        if (p->strides[d] % p->elem_size != 0 || p->dims[d] == 0)
            return 0;
    return lanes;
}

/* Whether threads may ever pay for p (TJ_IR_SPLIT_MIN_WORK); with
 * TENSORJIT_SPLIT_MIN, the old rule by bytes (tests that force splits). */
static int tj_ir_may_pay(const tj_plan *p, const tj_codegen_config *cfg)
{
    if (cfg->split_min.set) {
        int64_t min = cfg->split_min.value, unit_bytes = p->block_bytes > 64 ? p->block_bytes : 64;
        return p->units >= min / unit_bytes || p->units * unit_bytes >= min;
    }
    /* a scatter's copy of data is not counted: in place it never runs,
     * and a kernel such as S4 (32 rows into 16 MB) would pay the split
     * call on every call for nothing */
    int64_t lines = p->block_bytes / 64 + 1; /* cache lines a block touches, about */
    return p->visits >= TJ_IR_SPLIT_MIN_WORK / lines;
}

int tj_ir_checks_in_parts(const tj_plan *p, const tj_ir_strategy *s)
{
    if (p->depth <= 0 || p->policy == JIT_INDEX_CLAMP || tj_policy_fills(p->policy) ||
        (!p->dyn && s->checks <= 0))
        return 0;
    int64_t check_min = TJ_SPLIT_CHECK_MIN_BYTES / (p->index_size * p->depth);
    /* a dynamic family's calls each ask (their bytes: tj_emit_dyn_split_main) */
    return p->dyn ? tj_dyn_varies(p->dyn, &p->tuples) || p->tuples >= check_min
                  : s->checks >= check_min;
}

void tj_ir_choose(const tj_plan *p, const tj_codegen_config *cfg, tj_ir_strategy *s)
{
    memset(s, 0, sizeof *s);
    s->tuples = p->visits;
    s->checks = tj_policy_fills(p->policy) ? 0 : p->tuples;
    s->budget = cfg->unroll.set ? cfg->unroll.value : TJ_IR_UNROLL_BUDGET;
    int64_t width = p->depth > 1 ? p->depth : 1;
    int64_t most = s->tuples > s->checks ? s->tuples : s->checks;
    s->entries = most > INT64_MAX / width ? INT64_MAX : most * width;
    s->unrolled = s->entries <= s->budget;
    int64_t distance = cfg->prefetch.set ? cfg->prefetch.value : TJ_IR_PREFETCH_DISTANCE;
    s->prefetch = distance > 0 && p->indexed == TJ_INDEXED_SRC && !s->unrolled && p->depth > 0 &&
                          p->data_bytes >= TJ_IR_PREFETCH_MIN_DATA && s->tuples > distance
                      ? distance
                      : 0;
    s->nontemporal = (cfg->nontemporal.set ? cfg->nontemporal.value : TJ_IR_NT_DEFAULT) &&
                     !s->unrolled && p->reduction == JIT_REDUCTION_NONE &&
                     p->block_bytes >= TJ_IR_NT_MIN_BLOCK && p->block_bytes % 16 == 0 &&
                     s->tuples * p->block_bytes >= TJ_IR_NT_MIN_OUT;
    /* single-threaded kernels stay whole: nothing to split for; the
     * passes of a mean or use_init_val=false are one thread's */
    s->split = p->threads > 1 && !s->unrolled && p->units >= 2 && !tj_reduce_needs_passes(p) &&
               tj_ir_may_pay(p, cfg);
    s->inline_copy_min =
        cfg->inline_copy_min.set ? cfg->inline_copy_min.value : TJ_IR_INLINE_COPY_MIN;
    snprintf(s->vector_width, sizeof s->vector_width, "%s", cfg->vector_width);
    s->gather_lanes = tj_gather_lanes(p, s);
    if (p->dyn) { /* loops of run-time trips: nothing that needs the counts */
        s->unrolled = s->nontemporal = 0, s->prefetch = s->gather_lanes = 0;
        /* split for threads; whether a call's copies are worth them is the
         * call's question (tj_rt_dyn_parallel) */
        s->split = p->threads > 1 && !tj_reduce_needs_passes(p) &&
                   !tj_dyn_varies(p->dyn, &p->dyn->tmpl.row_units);
    }
    /* other kernels get them when the parts API first asks (tj_backend_parts) */
    s->ranges = s->split;
    s->checks_part = s->ranges;
    s->parallel_checks = s->split && tj_ir_checks_in_parts(p, s);
}
