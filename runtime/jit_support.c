#include "jit_support.h"

#include <string.h>

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
                               void *out, int64_t begin, int64_t end, const void *plan);

typedef struct tj_dyn_job {
    tj_dyn_range_fn range;
    const tj_plan *p;
    const void *data, *indices, *updates;
    void *out;
} tj_dyn_job;

static void tj_dyn_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_dyn_job *j = ctx;
    j->range(j->data, j->indices, j->updates, j->out, begin, end, j->p);
}

/* The split rule of a static kernel (kernel_ir.h), on the call's counts. */
static int tj_dyn_worth_threads(const tj_plan *p)
{
    const tj_knob *k = &tj_config_get()->codegen.split_min;
    int64_t min = k->set ? k->value : TJ_SPLIT_MIN_BYTES;
    int64_t unit_bytes = p->block_bytes > 64 ? p->block_bytes : 64;
    return p->threads > 1 && p->units >= 2 &&
           (p->units >= min / unit_bytes || p->units > INT64_MAX / unit_bytes ||
            p->units * unit_bytes >= min);
}

int tj_rt_dyn_parallel(const void *range, const void *plan, const void *data,
                       const void *indices, const void *updates, void *out)
{
    tj_dyn_job job = {(tj_dyn_range_fn)(uintptr_t)range, plan, data, indices, updates, out};
    if (job.p->units == 0 || job.p->visits == 0) { /* no copies, but the data's */
        if (job.p->copy_bytes && out != data)
            memcpy(out, data, (size_t)job.p->copy_bytes);
        return JIT_OK;
    }
    if (tj_dyn_worth_threads(job.p))
        tj_pool_run(job.p->threads, job.p->units, tj_dyn_part, &job);
    else
        tj_dyn_part(&job, 0, job.p->units);
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
} tj_parallel_job;

static void tj_parallel_part(void *ctx, int64_t begin, int64_t end)
{
    const tj_parallel_job *j = ctx;
    j->k->range(j->data, j->indices, j->updates, j->out, begin, end);
}

int tj_rt_parallel(const void *self, const void *data, const void *indices, const void *updates,
                   void *out)
{
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)self);
    if (!k || !k->range) {
        tj_error_set("internal: a parallel kernel without its range function");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_parallel_job job = {k, data, indices, updates, out};
    tj_pool_run(k->plan.threads, k->plan.units, tj_parallel_part, &job);
    return JIT_OK;
}
