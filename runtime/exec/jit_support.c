#include "jit_support.h"

#include <string.h>

#include "bag_check.h"
#include "cache.h"
#include "config.h"
#include "dyn.h"
#include "pool.h"
#include "error.h"
#include "ref_kernel.h"
#include "scratch.h"

int tj_rt_bad_index(const void *self, const void *indices)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (k && tj_report_bad_index(&k->plan, indices) == JIT_STATUS_BAD_INDEX)
        return JIT_STATUS_BAD_INDEX;
    /* only reachable if the generated check and the reference disagree */
    tj_error_set("an index is out of range (the kernel could not say which)");
    return JIT_STATUS_BAD_INDEX;
}

int tj_rt_bag_bad(const void *self, const void *table, const void *indices, const void *offsets,
                  const void *weights, const void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (k) {
        int rc = tj_bag_check_buffers(&k->plan, table, indices, offsets, weights, out);
        if (rc == JIT_OK)
            rc = tj_bag_report_bad(&k->plan, indices, offsets);
        if (rc != JIT_OK)
            return rc;
    }
    /* only reachable if the generated check and the reference disagree,
     * or for a kernel the cache does not hold (the IR's own tests) */
    tj_error_set("an offset, segment id or index is out of range, or a buffer is NULL (the "
                 "kernel could not say which)");
    return table && indices && out ? JIT_STATUS_BAD_INDEX : JIT_STATUS_BAD_POINTER;
}

int tj_rt_bag_dyn_enter(const void *self, const int64_t *dims)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k) {
        tj_error_set("internal: a dynamic kernel the cache does not know");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_bag_plan call;
    return tj_bag_bind(&k->plan.bag, dims, &call);
}

int tj_rt_bag_dyn_bad(const void *self, const int64_t *dims, const void *table,
                      const void *indices, const void *offsets, const void *weights,
                      const void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (k) {
        tj_plan p = k->plan;
        int rc = tj_bag_bind(&k->plan.bag, dims, &p.bag);
        if (rc == JIT_OK)
            rc = tj_bag_check_buffers(&p, table, indices, offsets, weights, out);
        if (rc == JIT_OK)
            rc = tj_bag_report_bad(&p, indices, offsets);
        if (rc != JIT_OK)
            return rc;
    }
    tj_error_set("an offset, segment id or index is out of range, or a buffer is NULL (the "
                 "kernel could not say which)");
    return table && indices && out ? JIT_STATUS_BAD_INDEX : JIT_STATUS_BAD_POINTER;
}

int tj_rt_bad_pointer(const void *self, const void *data, const void *indices,
                      const void *updates, const void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (k && tj_check_buffers(&k->plan, data, indices, updates, out) == JIT_STATUS_BAD_POINTER)
        return JIT_STATUS_BAD_POINTER;
    tj_error_set("a buffer is NULL but the signature needs bytes there");
    return JIT_STATUS_BAD_POINTER;
}

int tj_rt_dyn_enter(const void *self, const int64_t *dims, const void *data, const void *indices,
                    const void *updates, void *out, const void **plan)
{
    const tj_plan *p;
    int fits, rc;
    if (!tj_dyn_recall(self, dims, data, indices, updates, out, &p, &fits, &rc)) {
        const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
        if (!k || !k->plan.dyn) {
            tj_error_set("internal: a dynamic kernel the cache does not know");
            return JIT_STATUS_BAD_POINTER;
        }
        rc = tj_dyn_plan(self, k->plan.dyn, dims, data, indices, updates, out, &p, &fits);
    }
    if (rc != JIT_OK)
        return rc;
    if (!fits)
        return tj_ref_run(p, data, indices, p->has_updates ? updates : NULL, out);
    *plan = p;
    return -1;
}

int tj_rt_dyn_bad_index(const void *plan, const void *indices)
{
    if (tj_report_bad_index(plan, indices) == JIT_STATUS_BAD_INDEX)
        return JIT_STATUS_BAD_INDEX;
    tj_error_set("an index is out of range (the kernel could not say which)");
    return JIT_STATUS_BAD_INDEX;
}

typedef int (*tj_dyn_range_fn)(const void *data, const void *indices, const void *updates,
                               void *out, int64_t begin, int64_t end, const void *plan,
                               int flags);

/*
 * The split rule. A split kernel's call runs on the calling thread unless
 * threads pay. Its expected time alone (its work, from the call's plan,
 * times its measured cost per unit of work alone) is weighed against what
 * a job on the pool costs now (measured by the pool: tj_pool_cost_ns): it
 * gets as many parts, up to its threads and the host's CPUs, as leave each
 * at least TJ_SPLIT_PART_COSTS of those costs of work, so that T parts
 * are expected to take at most (1 + 1/TJ_SPLIT_PART_COSTS) / T of its
 * time alone (0.75 for two). Then what was measured decides: a kernel
 * whose split calls took longer per unit of work than TJ_SPLIT_MARGIN of
 * its calls alone runs alone (a scatter by rows, each part scanning every
 * update; a host whose other processes hold the cores; a call of 10 us,
 * G1d, whose split gains too little to tell from noise: flipping between
 * the two ways lost it 3-6%), and some calls run the other way (probes),
 * so that both costs follow the host. The first call runs alone and gives
 * the first cost.
 * The same rule for static and dynamic kernels, a dynamic kernel's calls
 * each with their own work (docs/performance.md, 'Parallel execution').
 */
#define TJ_SPLIT_PART_COSTS 2
#define TJ_SPLIT_MARGIN 0.9
#define TJ_SPLIT_PROBE 64
/* Calls run alone first, whatever the model says: the first one's time
 * is a cold one (page faults, caches), not the cost to compare with; and
 * as many split calls are tried before their cost is compared. */
#define TJ_SPLIT_WARM 2

/* What a call of p does, in units of work: each block visited with the
 * cache lines it spans, and each line of a scatter's copy of data, unless
 * it runs in place (no copy). */
static double tj_split_work(const tj_plan *p, int in_place)
{
    double lines = (double)(p->block_bytes / 64 + 1);
    double w = (double)p->visits * lines + (in_place ? 0 : (double)p->copy_bytes / 64);
    return w > 0 ? w : 1;
}

/* TENSORJIT_SPLIT_MIN: the old rule by bytes, for tests that want every
 * split kernel's call split (the kernel's choice to split is the same). */
static int tj_split_forced(const tj_plan *p, int *parts)
{
    const tj_knob *k = &tj_config_get()->codegen.split_min;
    if (!k->set)
        return 0;
    int64_t unit_bytes = p->block_bytes > 64 ? p->block_bytes : 64;
    int worth = p->units >= k->value / unit_bytes || p->units > INT64_MAX / unit_bytes ||
                p->units * unit_bytes >= k->value;
    *parts = worth && p->units >= 2 ? p->threads : 1;
    return 1;
}

/* How a call's ps per unit of work changes a cost. */
typedef enum tj_sample { TJ_SAMPLE_WARM, TJ_SAMPLE_PROBE, TJ_SAMPLE_USUAL } tj_sample;

/* The parts the expected time alone (alone_ps per unit of work) is worth. */
static int tj_split_model(const tj_plan *p, double work, int64_t alone_ps)
{
    if (alone_ps <= 0)
        return 1;
    double alone_ns = (double)alone_ps * work / 1000;
    double n = alone_ns / ((double)TJ_SPLIT_PART_COSTS * (double)tj_pool_cost_ns());
    int most = p->threads < tj_pool_cpus() ? p->threads : tj_pool_cpus();
    int parts = n >= most ? most : (int)n;
    if (parts > p->units)
        parts = (int)p->units;
    return parts < 2 ? 1 : parts;
}

/* How many parts a call of p (with `work`) runs in, from st; *how: what
 * its time will be to the cost of the way it runs. */
static int tj_split_parts(const tj_plan *p, double work, tj_split_stat *st, tj_sample *how)
{
    *how = TJ_SAMPLE_USUAL;
    int parts;
    if (tj_split_forced(p, &parts))
        return parts;
    if (p->threads <= 1 || p->units < 2 || work < TJ_SPLIT_MIN_WORK)
        return 1;
    int64_t alone = __atomic_load_n(&st->alone, __ATOMIC_RELAXED);
    int64_t split = __atomic_load_n(&st->split, __ATOMIC_RELAXED);
    int64_t calls = __atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED);
    parts = tj_split_model(p, work, alone);
    if (parts <= 1 || calls <= TJ_SPLIT_WARM) {
        *how = calls <= TJ_SPLIT_WARM ? TJ_SAMPLE_WARM : TJ_SAMPLE_USUAL;
        return 1;
    }
    /* probes at calls 8, 16, 32, then every TJ_SPLIT_PROBE: a verdict
     * from a noisy start is looked at again soon */
    int probe = calls < TJ_SPLIT_PROBE ? calls >= 8 && (calls & (calls - 1)) == 0
                                       : calls % TJ_SPLIT_PROBE == 0;
    /* split calls are tried TJ_SPLIT_WARM times before they are judged:
     * the first one starts the pool's threads */
    int64_t splits = __atomic_load_n(&st->splits, __ATOMIC_RELAXED);
    int warm = splits < TJ_SPLIT_WARM;
    int split_wins = warm || (double)split < TJ_SPLIT_MARGIN * (double)alone;
    *how = probe ? TJ_SAMPLE_PROBE : warm ? TJ_SAMPLE_WARM : TJ_SAMPLE_USUAL;
    if (split_wins == probe)
        return 1;
    __atomic_add_fetch(&st->splits, 1, __ATOMIC_RELAXED);
    return parts;
}

/* A cost given a call's ps per unit of work: while warm (the first
 * TJ_SPLIT_WARM calls of that way) the lowest so far, so that a cold
 * first call does not linger; a probe's replaces it (the other way's cost
 * is stale by then, and one probe must be able to turn the verdict); a
 * usual call's moves it a quarter of the way, up or down alike, so that
 * no lucky sample decides alone. Racing calls may lose an update: an
 * estimate. */
static void tj_split_note(int64_t *cost, double ns, double work, tj_sample how)
{
    int64_t ps = (int64_t)(ns * 1000 / work);
    if (ps < 1)
        ps = 1;
    int64_t old = __atomic_load_n(cost, __ATOMIC_RELAXED), next = ps;
    if (old > 0 && how == TJ_SAMPLE_WARM)
        next = ps < old ? ps : old;
    else if (old > 0 && how == TJ_SAMPLE_USUAL)
        next = old + (ps - old) / 4;
    __atomic_store_n(cost, next, __ATOMIC_RELAXED);
}

/* A split call: range(ctx, begin, end) over p's units, alone or over the
 * pool as tj_split_parts says, its time noted in st. A call below
 * TJ_SPLIT_MIN_WORK (a dynamic kernel's small shape) runs alone untimed,
 * unless TENSORJIT_SPLIT_MIN splits it. */
static void tj_split_call(const tj_plan *p, int in_place, tj_split_stat *st, tj_pool_fn range,
                          void *ctx)
{
    double work = tj_split_work(p, in_place);
    tj_sample how;
    int parts = tj_split_parts(p, work, st, &how);
    if (parts <= 1 && work < TJ_SPLIT_MIN_WORK) {
        range(ctx, 0, p->units);
        return;
    }
    int64_t t0 = tj_pool_now_ns();
    if (parts <= 1)
        range(ctx, 0, p->units);
    else
        tj_pool_run(parts, p->units, range, ctx);
    tj_split_note(parts <= 1 ? &st->alone : &st->split, (double)(tj_pool_now_ns() - t0), work, how);
}

typedef struct tj_dyn_job {
    tj_dyn_range_fn range;
    const tj_plan *p;
    const void *data, *indices, *updates;
    void *out;
    int flags;
} tj_dyn_job;

static void tj_dyn_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_dyn_job *j = ctx;
    j->range(j->data, j->indices, j->updates, j->out, begin, end, j->p, j->flags);
}

int tj_rt_dyn_parallel(const void *self, const void *range, const void *plan, const void *data,
                       const void *indices, const void *updates, void *out, int flags)
{
    tj_dyn_job job = {(tj_dyn_range_fn)(uintptr_t)range, plan, data, indices, updates, out,
                      flags};
    if (job.p->units == 0 || job.p->visits == 0) { /* no copies, but the data's */
        if (job.p->copy_bytes && out != data)
            memcpy(out, data, (size_t)job.p->copy_bytes);
        return JIT_OK;
    }
    /* the kernel's family owns the cost; without it (not reachable while
     * the kernel runs) the call runs here, as a first call does */
    tj_split_stat none = {0, 0, 0, 0};
    const tj_kernel *k = tj_split_work(job.p, out == data) >= TJ_SPLIT_MIN_WORK
                             ? tj_cache_find_entry((tj_entry_fn)self)
                             : NULL; /* a small call: no lookup, it runs here */
    tj_split_call(job.p, out == data, k && k->dyn ? &k->dyn->split : &none, tj_dyn_part, &job);
    return JIT_OK;
}

void *tj_rt_scratch(int64_t bytes)
{
    void *s = bytes > 0 ? tj_scratch((size_t)bytes) : NULL;
    if (!s)
        tj_error_set("out of memory for the counts of a reduction (%lld bytes)",
                     (long long)bytes);
    return s;
}

typedef struct tj_parallel_job {
    const tj_kernel *k;
    const void *data, *indices, *updates;
    void *out;
    int flags;
} tj_parallel_job;

static void tj_parallel_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_parallel_job *j = ctx;
    j->k->range(j->data, j->indices, j->updates, j->out, begin, end, j->flags);
}

int tj_rt_parallel(const void *self, const void *data, const void *indices, const void *updates,
                   void *out, int flags)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k || !k->range) {
        tj_error_set("internal: a parallel kernel without its range function");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_parallel_job job = {k, data, indices, updates, out, flags};
    /* the cost is the kernel's own, mutable while the cache holds it */
    tj_split_call(&k->plan, out == data, &((tj_kernel *)(uintptr_t)k)->split, tj_parallel_part,
                  &job);
    return JIT_OK;
}

typedef struct tj_bag_job {
    tj_bag_range_fn range;
    const void *table, *indices, *offsets, *weights;
    void *out;
} tj_bag_job;

static void tj_bag_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_bag_job *j = ctx;
    j->range(j->table, j->indices, j->offsets, j->weights, j->out, begin, end);
}

int tj_rt_bag_parallel(const void *self, const void *table, const void *indices,
                       const void *offsets, const void *weights, void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k || !k->range) {
        tj_error_set("internal: a parallel kernel without its range function");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_bag_job job = {(tj_bag_range_fn)(uintptr_t)k->range, table, indices, offsets, weights,
                      out};
    /* the split rule reads a plan's units, visits, blocks and threads: a
     * bag's units are its bags, a visit one lookup of a row */
    const tj_bag_plan *g = &k->plan.bag;
    tj_plan units = {.units = g->bags, .visits = g->lookups, .threads = g->threads,
                     .block_bytes = g->row_elems * jit_dtype_size(g->dtype)};
    tj_split_call(&units, 0, &((tj_kernel *)(uintptr_t)k)->split, tj_bag_part, &job);
    return JIT_OK;
}
