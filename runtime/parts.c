/* jit_units / validate / run_range: a kernel's work for the caller's own
 * threads. JIT kernels of threads > 1 serve them with their generated
 * check and range functions; every other kernel (one thread asked for, a
 * reduction of several passes, the reference kernel) with the reference
 * code on its plan. Each query pins the kernel while it runs
 * (user_kernel.h).
 *
 * Wrap once, for ranges too: jit_validate keeps the indices its check
 * found all non-negative (negative-wraps), and a range of those same
 * indices runs the copies without the wrap, as the kernel's own calls do.
 * The caller must not change the indices between the two, which the
 * parts API already asks (the ranges do not check them again). */
#include "error.h"
#include "jit_support.h"
#include "plan.h"
#include "ref_kernel.h"
#include "typed_api.h"
#include "user_kernel.h"

int tj_validate_of(jit_kernel fn, jit_op op, const void *indices)
{
    int tiered, rc;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    if (k->plan.dyn) {
        tj_error_set("a dynamic kernel has no fixed units: its parts API is not offered");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (!indices && k->plan.indices_elems) {
        tj_error_set("indices is NULL but the signature needs bytes there");
        rc = JIT_STATUS_BAD_POINTER;
    } else {
        rc = k->check ? k->check(indices) : tj_report_bad_index(&k->plan, indices);
        tj_kernel *mk = (tj_kernel *)(uintptr_t)k; /* the note is mutable while pinned */
        __atomic_store_n(&mk->nonneg_indices, rc == JIT_OK && k->check ? indices : NULL,
                         __ATOMIC_RELAXED);
        if (rc == TJ_CHECK_NEGATIVE) /* valid; its ranges wrap */
            rc = JIT_OK;
    }
    tj_user_kernel_done(&pin);
    return rc;
}

/* Ranges the reference code ran (tj_parts_reference_ranges). */
static int64_t tj_reference_ranges;

/* The range function's flags for indices: TJ_RANGE_NONNEG where the last
 * jit_validate of k found these indices none negative. */
static int tj_range_flags(const tj_kernel *k, const void *indices)
{
    const void *nonneg = __atomic_load_n(&k->nonneg_indices, __ATOMIC_RELAXED);
    return indices && nonneg == indices ? TJ_RANGE_NONNEG : 0;
}

static int tj_range_of(const tj_kernel *k, const void *data, const void *indices,
                       const void *updates, void *out, int64_t begin, int64_t end)
{
    if (k->plan.dyn) {
        tj_error_set("a dynamic kernel has no fixed units: its parts API is not offered");
        return JIT_STATUS_BAD_SHAPE;
    }
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
        return k->range(data, indices, updates, out, begin, end, tj_range_flags(k, indices));
    __atomic_add_fetch(&tj_reference_ranges, 1, __ATOMIC_RELAXED);
    return tj_ref_range(&k->plan, data, indices, updates, out, begin, end);
}

int64_t tj_parts_reference_ranges(void)
{
    return __atomic_load_n(&tj_reference_ranges, __ATOMIC_RELAXED);
}

int tj_run_range_of(jit_kernel fn, jit_op op, const void *data, const void *indices,
                    const void *updates, void *out, int64_t begin, int64_t end)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    int rc = tj_range_of(k, data, indices, k->plan.has_updates ? updates : NULL, out, begin,
                         end);
    tj_user_kernel_done(&pin);
    return rc;
}

int64_t tj_units_of(jit_kernel fn, jit_op op)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin);
    int64_t units = k && !k->plan.dyn ? k->plan.units : -1;
    if (k && k->plan.dyn)
        tj_error_set("a dynamic kernel has no fixed units: its parts API is not offered");
    tj_user_kernel_done(&pin);
    return units;
}

int64_t jit_units(jit_kernel kernel)
{
    return tj_units_of(kernel, JIT_OP_NONE);
}

int jit_validate(jit_kernel kernel, const void *indices)
{
    return tj_validate_of(kernel, JIT_OP_NONE, indices);
}

int jit_run_range(jit_kernel kernel, const void *data, const void *indices, const void *updates,
                  void *out, int64_t begin, int64_t end)
{
    return tj_run_range_of(kernel, JIT_OP_NONE, data, indices, updates, out, begin, end);
}
