#include "jit_support.h"

#include <inttypes.h>
#include <string.h>

#include "bag_check.h"
#include "bag_prime.h"
#include "bag_ref.h"
#include "bag_scan.h"
#include "cache.h"
#include "dyn.h"
#include "pool.h"
#include "error.h"
#include "index.h"
#include "ref_kernel.h"
#include "scratch.h"
#include "split_rule.h"
#include "user_kernel.h"

int tj_rt_bad_index(const void *self, const void *indices)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (k && tj_report_bad_index(&k->plan, indices) == JIT_STATUS_BAD_INDEX)
        return JIT_STATUS_BAD_INDEX;
    /* only reachable if the generated check and the reference disagree */
    tj_error_set("an index is out of range (the kernel could not say which)");
    return JIT_STATUS_BAD_INDEX;
}

/* The status and message of a bag call (plan p, NULL for a kernel the
 * cache does not hold) that a kernel's checks found bad: the lowest bad
 * buffer, offset, segment id or index, as the reference kernel names it. */
static int tj_bag_word_bad(const tj_plan *p, const void *table, const void *indices,
                           const void *offsets, const void *weights, const void *out)
{
    int rc = p ? tj_bag_check_buffers(&p->bag, table, indices, offsets, weights, out) : JIT_OK;
    if (p && rc == JIT_OK)
        rc = tj_bag_report_bad(p, indices, offsets);
    if (rc != JIT_OK)
        return rc;
    /* only reachable if the kernel's checks and the reference's disagree,
     * or for a kernel the cache does not hold (the IR's own tests) */
    tj_error_set("an offset, segment id or index is out of range, or a buffer is NULL (the "
                 "kernel could not say which)");
    return table && indices && out ? JIT_STATUS_BAD_INDEX : JIT_STATUS_BAD_POINTER;
}

int tj_rt_bag_bad(const void *self, const void *table, const void *indices, const void *offsets,
                  const void *weights, const void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    return tj_bag_word_bad(k ? &k->plan : NULL, table, indices, offsets, weights, out);
}

/* tj_bag_word_bad for a dynamic bag kernel's (k) call, its plan bound to
 * the call's dims. */
static int tj_bag_dyn_bad(const tj_kernel *k, const int64_t *dims, const void *table,
                          const void *indices, const void *offsets, const void *weights,
                          const void *out)
{
    tj_plan p = k->plan;
    int rc = tj_bag_bind(&k->plan.bag, dims, &p.bag);
    return rc != JIT_OK ? rc : tj_bag_word_bad(&p, table, indices, offsets, weights, out);
}

/* The rows of a checked call's first `ahead` lookups prefetched, as a
 * kernel's own priming would before its first bag (bag_prime.h). */
static void tj_bag_prime_call(const tj_bag_plan *g, const void *table, const void *indices,
                              const void *offsets, int64_t ahead)
{
    if (ahead <= 0 || g->row_elems <= 0 || g->form == TJ_BAG_SEGMENTS)
        return;
    int64_t first = 0; /* packed: bag 0's first lookup */
    if (g->form == TJ_BAG_OFFSETS)
        first = g->bags > 0 ? tj_index_load(offsets, g->index_type, 0) : g->lookups;
    int64_t n = g->lookups - first < ahead ? g->lookups - first : ahead;
    tj_rt_bag_prime(table, indices, first, n, g->row_elems * jit_dtype_size(g->dtype),
                    g->index_type);
}

/* A dynamic bag kernel's (self) template and its plan bound to the
 * call's dims (*call); NULL with *rc the status where the cache does not
 * know self or the dims break a rule of the op. The dims are first held
 * against the signature as the reference kernel's call holds them
 * (tj_dyn_plan: static dims equal, dynamic ones not negative and within
 * their bounds, every rule of the op; remembered per thread, so a shape
 * seen before costs a compare): tj_bag_bind reads the dynamic dims alone
 * and knows no bounds, and a dim that lied about the buffers' sizes would
 * send the kernel past them. The statuses and messages are then the
 * reference's too. */
static const tj_kernel *tj_bag_dyn_call(const void *self, const int64_t *dims,
                                        const void *table, const void *indices,
                                        const void *offsets, const void *out, tj_bag_plan *call,
                                        int *rc)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k) {
        tj_error_set("internal: a dynamic kernel the cache does not know");
        *rc = JIT_STATUS_BAD_POINTER;
        return NULL;
    }
    const tj_plan *checked;
    int fits;
    /* a kernel of a signature has its dyn; one compiled from a plan
     * alone (the IR's own tests) has no signature to hold dims to */
    *rc = k->plan.dyn ? tj_dyn_plan(self, k->plan.dyn, dims, table, indices, offsets, out,
                                    &checked, &fits)
                      : JIT_OK;
    if (*rc == JIT_OK)
        *rc = tj_bag_bind(&k->plan.bag, dims, call);
    return *rc == JIT_OK ? k : NULL;
}

int tj_rt_bag_dyn_begin(const void *self, const int64_t *dims, const void *table,
                        const void *indices, const void *offsets, const void *weights,
                        const void *out, int64_t prime)
{
    tj_bag_plan call;
    int rc;
    const tj_kernel *k = tj_bag_dyn_call(self, dims, table, indices, offsets, out, &call, &rc);
    if (!k)
        return rc;
    if (tj_bag_check_buffers(&call, table, indices, offsets, weights, out) != JIT_OK ||
        (!call.unchecked && tj_bag_scan_plan(&call, indices, offsets)))
        return tj_bag_dyn_bad(k, dims, table, indices, offsets, weights, out);
    tj_bag_prime_call(&call, table, indices, offsets, prime);
    return JIT_OK;
}

int tj_rt_bag_redo(const void *self, const int64_t *dims, const void *table, const void *indices,
                   const void *offsets, const void *weights, void *out, int64_t begin,
                   int64_t end)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k) {
        tj_error_set("internal: a bag kernel the cache does not know");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_plan p = k->plan;
    int rc = dims ? tj_bag_bind(&k->plan.bag, dims, &p.bag) : JIT_OK;
    return rc != JIT_OK ? rc
                        : tj_bag_ref_redo_nan(&p, table, indices, offsets, weights, out, begin, end);
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

/* What a call of p does, in units of work: each block visited with the
 * cache lines it spans, and each line of a scatter's copy of data, unless
 * it runs in place (no copy). */
static double tj_split_work(const tj_plan *p, int in_place)
{
    double lines = (double)(p->block_bytes / 64 + 1);
    double w = (double)p->visits * lines + (in_place ? 0 : (double)p->copy_bytes / 64);
    return w > 0 ? w : 1;
}


int tj_split_counts_of(jit_kernel fn, tj_split_counts *out)
{
    int tiered;
    tj_cache_pinned pin;
    memset(out, 0, sizeof *out);
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, JIT_OP_NONE, &tiered, &pin, NULL);
    if (!k)
        return -1;
    tj_split_counts_read(k->dyn ? &k->dyn->split : &k->split, out);
    tj_user_kernel_done(&pin);
    return 0;
}

/* A call of a split kernel, static (range and check: its own) or dynamic
 * (dyn_range and dyn_check, with the call's plan p). */
typedef struct tj_parallel_job {
    const tj_plan *p;
    tj_range_fn range;
    int (*check)(const void *indices);
    tj_dyn_range_fn dyn_range;
    int (*dyn_check)(const void *indices, const void *plan);
    const void *data, *indices, *updates;
    void *out;
    int flags;
} tj_parallel_job;

static int tj_job_range(const tj_parallel_job *j, int64_t begin, int64_t end, int flags)
{
    if (j->dyn_range)
        return j->dyn_range(j->data, j->indices, j->updates, j->out, begin, end, j->p, flags);
    return j->range(j->data, j->indices, j->updates, j->out, begin, end, flags);
}

/* The check function's status (a bad index's message written by it). */
static int tj_job_check(const tj_parallel_job *j)
{
    return j->dyn_check ? j->dyn_check(j->indices, j->p) : j->check(j->indices);
}

/* A dynamic call whose units do not tile data's copy (unit_copy_bytes 0,
 * tj_dyn_plan_sig): the copy, whole, before any unit writes out. */
static void tj_job_copy_first(const tj_parallel_job *j)
{
    if (j->p->unit_copy_bytes == 0 && j->p->copy_bytes > 0 && j->out != j->data)
        memcpy(j->out, j->data, (size_t)j->p->copy_bytes);
}

static void tj_parallel_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_parallel_job *j = ctx;
    (void)tj_job_range(j, begin, end, j->flags);
}

/* The range functions' check mode over tuples [begin, end) of a call
 * (TJ_RANGE_CHECK), what they found ORed into bits. */
typedef struct tj_check_parts {
    const tj_parallel_job *j;
    int bits; /* atomic */
} tj_check_parts;

static void tj_check_part(void *ctx, int64_t begin, int64_t end)
{
    tj_check_parts *c = ctx;
    int bits = tj_job_range(c->j, begin, end, TJ_RANGE_CHECK);
    __atomic_fetch_or(&c->bits, bits, __ATOMIC_RELAXED);
}

/* After the check of a call (its function's status, or the parts' bits):
 * the range flags, or the status of a bad index (its message written by
 * the check function). */
static int tj_checked_flags(tj_parallel_job *j, int checked)
{
    if (checked == 0 || checked == TJ_CHECK_NEGATIVE) {
        j->flags = checked == 0 ? TJ_RANGE_NONNEG : 0;
        return JIT_OK;
    }
    return checked;
}

/* A call whose main left the check to the runtime, alone: the check
 * function, then every unit. */
static int tj_checked_alone(void *ctx)
{
    tj_parallel_job *j = ctx;
    int rc = tj_checked_flags(j, tj_job_check(j));
    if (rc == JIT_OK) {
        tj_job_copy_first(j);
        tj_parallel_part(j, 0, j->p->units);
    }
    return rc;
}

/* The same split: the tuples checked in parts, then the units; a bad
 * index found is reported by the check function, which names the first
 * one as a call on one thread would. */
static int tj_checked_split(void *ctx, int parts)
{
    tj_parallel_job *j = ctx;
    tj_check_parts c = {j, 0};
    tj_pool_run(parts, j->p->tuples, tj_check_part, &c);
    int bits = __atomic_load_n(&c.bits, __ATOMIC_RELAXED);
    int rc = tj_checked_flags(j, bits & TJ_CHECK_BAD ? tj_job_check(j) : bits & TJ_CHECK_NEGATIVE);
    if (rc == JIT_OK) {
        tj_job_copy_first(j);
        tj_pool_run(parts, j->p->units, tj_parallel_part, j);
    }
    return rc;
}

static const tj_split_ways tj_checked_ways = {tj_checked_alone, tj_checked_split};

/* A call of job over its plan's units, as the split rule (costs in st)
 * says; with TJ_RANGE_UNCHECKED in its flags, its indices checked first,
 * both ways timed with their checks. */
static int tj_parallel_run(tj_parallel_job *job, tj_split_stat *st, int in_place)
{
    tj_split_size size = {job->p->units, job->p->threads, job->p->block_bytes};
    double work = tj_split_work(job->p, in_place);
    if (job->flags & TJ_RANGE_UNCHECKED)
        return tj_split_ways_run(&size, work, st, &tj_checked_ways, job);
    tj_job_copy_first(job);
    tj_split_run(&size, work, st, tj_parallel_part, job);
    return JIT_OK;
}

int tj_rt_dyn_parallel(const void *self, const void *range, const void *check, const void *plan,
                       const void *data, const void *indices, const void *updates, void *out,
                       int flags)
{
    tj_parallel_job job = {.p = plan,
                           .dyn_range = (tj_dyn_range_fn)(uintptr_t)range,
                           .dyn_check = (int (*)(const void *, const void *))(uintptr_t)check,
                           .data = data,
                           .indices = indices,
                           .updates = updates,
                           .out = out,
                           .flags = flags};
    if (job.p->units == 0 || job.p->visits == 0) { /* no copies, but the data's */
        int rc = flags & TJ_RANGE_UNCHECKED ? tj_job_check(&job) : JIT_OK;
        if (rc != JIT_OK && rc != TJ_CHECK_NEGATIVE)
            return rc;
        if (job.p->copy_bytes && out != data)
            memcpy(out, data, (size_t)job.p->copy_bytes);
        return JIT_OK;
    }
    /* the kernel's family owns the cost; without it (not reachable while
     * the kernel runs) the call runs here, as a first call does */
    tj_split_stat none = {0};
    const tj_kernel *k = tj_split_work(job.p, out == data) >= TJ_SPLIT_MIN_WORK
                             ? tj_cache_find_entry((tj_entry_fn)self)
                             : NULL; /* a small call: no lookup, it runs here */
    return tj_parallel_run(&job, k && k->dyn ? &k->dyn->split : &none, out == data);
}

void *tj_rt_scratch(int64_t bytes)
{
    void *s = bytes > 0 ? tj_scratch((size_t)bytes) : NULL;
    if (!s)
        tj_error_set("out of memory for the counts of a reduction (%lld bytes)",
                     (long long)bytes);
    return s;
}

int tj_rt_parallel(const void *self, const void *data, const void *indices, const void *updates,
                   void *out, int flags)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k || !k->range || !k->check) {
        tj_error_set("internal: a parallel kernel without its range function");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_parallel_job job = {.p = &k->plan,
                           .range = k->range,
                           .check = k->check,
                           .data = data,
                           .indices = indices,
                           .updates = updates,
                           .out = out,
                           .flags = flags};
    /* the cost is the kernel's own, mutable while the cache holds it */
    return tj_parallel_run(&job, &((tj_kernel *)(uintptr_t)k)->split, out == data);
}

typedef struct tj_bag_job {
    tj_bag_range_fn range;         /* a static kernel's, or */
    tj_bag_dyn_range_fn dyn_range; /* a dynamic one's, with the call's dims */
    const int64_t *dims;
    const void *table, *indices, *offsets, *weights;
    void *out;
    int status; /* a part's failure (a segment range's scratch); atomic */
} tj_bag_job;

static void tj_bag_part(void *ctx, int64_t begin, int64_t end)
{
    tj_bag_job *j = ctx;
    int rc = j->dyn_range ? j->dyn_range(j->table, j->indices, j->offsets, j->weights, j->out,
                                         begin, end, j->dims)
                          : j->range(j->table, j->indices, j->offsets, j->weights, j->out,
                                     begin, end);
    if (rc != JIT_OK)
        __atomic_store_n(&j->status, rc, __ATOMIC_RELAXED);
}

/* The scratch a Segments range of `segments` takes (ir/bag_segments.c):
 * a flag byte a segment, their count rounded up to 64, and for f16 and
 * bf16 a row of f32 sums a segment; bag_sig.c has checked that it fits. */
static size_t tj_segments_scratch(const tj_bag_plan *g, int64_t segments)
{
    int wide = g->dtype == JIT_F16 || g->dtype == JIT_BF16;
    int64_t bytes = (segments + 63) / 64 * 64 + (wide ? segments * g->row_elems * 4 : 0);
    return bytes > 0 ? (size_t)bytes : 1;
}

/* The bags (or segments) of a call of g over the pool as the split rule
 * says: a bag's units are its bags, a unit of work one lookup's row (the
 * cache lines it spans), the work of tj_split_work's visits. A part that
 * failed (a NaN redo) fails the call: its message was a worker's, so the
 * caller's is written here. A Segments range writes its segments as it
 * goes, so one part short of scratch would leave the others' written
 * under JIT_STATUS_NO_MEMORY, whose rule is that nothing is: the caller
 * holds scratch for the whole call first (or returns having written
 * nothing), and where a part could not have its own, runs the whole call
 * again on its thread over that scratch. */
static int tj_bag_split(const tj_bag_plan *g, tj_split_stat *st, tj_bag_job *job)
{
    int64_t row_bytes = g->row_elems * jit_dtype_size(g->dtype);
    double work = (double)g->lookups * (double)(row_bytes / 64 + 1);
    int segments = g->form == TJ_BAG_SEGMENTS;
    if (row_bytes == 0 || g->bags == 0)
        return JIT_OK; /* nothing to write (a range of rows of no bytes returns at once) */
    if (segments && !tj_scratch(tj_segments_scratch(g, g->bags))) {
        tj_error_set("out of memory for the sums of %" PRId64 " segments", g->bags);
        return JIT_STATUS_NO_MEMORY;
    }
    tj_split_size size = {g->bags, g->threads, row_bytes};
    tj_split_run(&size, work > 0 ? work : 1, st, tj_bag_part, job);
    int rc = __atomic_load_n(&job->status, __ATOMIC_RELAXED);
    if (rc == JIT_STATUS_NO_MEMORY && segments) {
        __atomic_store_n(&job->status, JIT_OK, __ATOMIC_RELAXED);
        tj_bag_part(job, 0, g->bags);
        rc = __atomic_load_n(&job->status, __ATOMIC_RELAXED);
    }
    if (rc == JIT_STATUS_NO_MEMORY)
        tj_error_set("out of memory for the sums of %" PRId64 " segments", g->bags);
    else if (rc != JIT_OK) /* a worker's redo of NaN bags (tj_rt_bag_redo) */
        tj_error_set("internal: a part of the bags failed (status %d)", rc);
    return rc;
}

int tj_rt_bag_parallel(const void *self, const void *table, const void *indices,
                       const void *offsets, const void *weights, void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k || !k->range) {
        tj_error_set("internal: a parallel kernel without its range function");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_bag_job job = {.range = (tj_bag_range_fn)(uintptr_t)k->range, .table = table,
                      .indices = indices, .offsets = offsets, .weights = weights, .out = out};
    /* the cost is the kernel's own, mutable while the cache holds it */
    return tj_bag_split(&k->plan.bag, &((tj_kernel *)(uintptr_t)k)->split, &job);
}

int tj_rt_bag_dyn_parallel(const void *self, const void *range, const int64_t *dims,
                           const void *table, const void *indices, const void *offsets,
                           const void *weights, void *out)
{
    tj_bag_plan call;
    int rc;
    const tj_kernel *k = tj_bag_dyn_call(self, dims, table, indices, offsets, out, &call, &rc);
    if (!k)
        return rc;
    tj_bag_job job = {.dyn_range = (tj_bag_dyn_range_fn)(uintptr_t)range, .dims = dims,
                      .table = table, .indices = indices, .offsets = offsets,
                      .weights = weights, .out = out};
    /* the family's cost, as a dynamic kernel's (tj_rt_dyn_parallel) */
    tj_kernel *mk = (tj_kernel *)(uintptr_t)k;
    return tj_bag_split(&call, mk->dyn ? &mk->dyn->split : &mk->split, &job);
}
