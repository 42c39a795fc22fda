#include "jit_support.h"

#include "cache.h"
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
