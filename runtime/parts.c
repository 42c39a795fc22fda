/* jit_*_units / validate / run_range: a kernel's work for the caller's own
 * threads. Split JIT kernels serve them with their generated check and
 * range functions; every other kernel (one thread asked for, or too small
 * to split) with the reference code on its plan. Each query pins
 * the kernel while it runs (user_kernel.h). */
#include "error.h"
#include "ref_kernel.h"
#include "user_kernel.h"

static int tj_validate(tj_entry_fn fn, tj_op op, const void *indices)
{
    int tiered, rc;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel(fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    if (!indices && k->plan.indices_elems) {
        tj_error_set("indices is NULL but the signature needs bytes there");
        rc = JIT_STATUS_BAD_POINTER;
    } else {
        rc = k->check ? k->check(indices) : tj_report_bad_index(&k->plan, indices);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

static int tj_range_of(const tj_kernel *k, const void *data, const void *indices,
                       const void *updates, void *out, int64_t begin, int64_t end)
{
    int rc = tj_check_buffers(&k->plan, data, indices, updates, out);
    if (rc != JIT_OK)
        return rc;
    if (begin < 0)
        begin = 0;
    if (end > k->plan.units)
        end = k->plan.units;
    if (begin >= end)
        return JIT_OK;
    if (k->range)
        return k->range(data, indices, updates, out, begin, end);
    return tj_ref_range(&k->plan, data, indices, updates, out, begin, end);
}

static int tj_run_range(tj_entry_fn fn, tj_op op, const void *data, const void *indices,
                        const void *updates, void *out, int64_t begin, int64_t end)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel(fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    int rc = tj_range_of(k, data, indices, updates, out, begin, end);
    tj_user_kernel_done(&pin);
    return rc;
}

static int64_t tj_units(tj_entry_fn fn, tj_op op)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel(fn, op, &tiered, &pin);
    int64_t units = k ? k->plan.units : -1;
    tj_user_kernel_done(&pin);
    return units;
}

int64_t jit_gather_nd_units(jit_gather_nd_fn kernel)
{
    return tj_units((tj_entry_fn)kernel, TJ_OP_GATHER_ND);
}

int jit_gather_nd_validate(jit_gather_nd_fn kernel, const void *indices)
{
    return tj_validate((tj_entry_fn)kernel, TJ_OP_GATHER_ND, indices);
}

int jit_gather_nd_run_range(jit_gather_nd_fn kernel, const void *data, const void *indices,
                            void *out, int64_t begin, int64_t end)
{
    return tj_run_range((tj_entry_fn)kernel, TJ_OP_GATHER_ND, data, indices, NULL, out, begin,
                        end);
}

int64_t jit_scatter_update_units(jit_scatter_update_fn kernel)
{
    return tj_units((tj_entry_fn)kernel, TJ_OP_SCATTER_UPDATE);
}

int jit_scatter_update_validate(jit_scatter_update_fn kernel, const void *indices)
{
    return tj_validate((tj_entry_fn)kernel, TJ_OP_SCATTER_UPDATE, indices);
}

int jit_scatter_update_run_range(jit_scatter_update_fn kernel, const void *data,
                                 const void *indices, const void *updates, void *out,
                                 int64_t begin, int64_t end)
{
    return tj_run_range((tj_entry_fn)kernel, TJ_OP_SCATTER_UPDATE, data, indices, updates, out,
                        begin, end);
}
