/* jit_*_units / validate / run_range: a kernel's work for the caller's own
 * threads. Split JIT kernels serve them with their generated check and
 * range functions; every other kernel with the reference code on its plan
 * (small kernels, where a thread would not pay anyway). */
#include "error.h"
#include "ref_kernel.h"
#include "user_kernel.h"

static const tj_kernel *tj_parts_kernel(tj_entry_fn fn, tj_op op)
{
    int tiered;
    return tj_user_kernel(fn, op, &tiered);
}

static int tj_validate(tj_entry_fn fn, tj_op op, const void *indices)
{
    const tj_kernel *k = tj_parts_kernel(fn, op);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    if (!indices && k->plan.indices_elems) {
        tj_error_set("indices is NULL but the signature needs bytes there");
        return JIT_STATUS_BAD_POINTER;
    }
    return k->check ? k->check(indices) : tj_report_bad_index(&k->plan, indices);
}

static int tj_run_range(tj_entry_fn fn, tj_op op, const void *data, const void *indices,
                        const void *updates, void *out, int64_t begin, int64_t end)
{
    const tj_kernel *k = tj_parts_kernel(fn, op);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
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

int64_t jit_gather_nd_units(jit_gather_nd_fn kernel)
{
    const tj_kernel *k = tj_parts_kernel((tj_entry_fn)kernel, TJ_OP_GATHER_ND);
    return k ? k->plan.units : -1;
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
    const tj_kernel *k = tj_parts_kernel((tj_entry_fn)kernel, TJ_OP_SCATTER_UPDATE);
    return k ? k->plan.units : -1;
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
