/* jit_units / validate / run_range: a kernel's work for the caller's own
 * threads. Split JIT kernels serve them with their generated check and
 * range functions; every other kernel (one thread asked for, or too small
 * to split) with the reference code on its plan. Each query pins
 * the kernel while it runs (user_kernel.h). */
#include "bag_check.h"
#include "bag_ref.h"
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
    } else if (k->plan.is_bag) {
        tj_error_set("an embedding bag's kernel checks its offsets too: call jit_validate_bag");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (!indices && k->plan.indices_elems) {
        tj_error_set("indices is NULL but the signature needs bytes there");
        rc = JIT_STATUS_BAD_POINTER;
    } else {
        rc = k->check ? k->check(indices) : tj_report_bad_index(&k->plan, indices);
        if (rc == TJ_CHECK_NEGATIVE) /* valid; the note is for the kernel's own range */
            rc = JIT_OK;
    }
    tj_user_kernel_done(&pin);
    return rc;
}

static int tj_range_of(const tj_kernel *k, const void *data, const void *indices,
                       const void *updates, void *out, int64_t begin, int64_t end)
{
    if (k->plan.dyn) {
        tj_error_set("a dynamic kernel has no fixed units: its parts API is not offered");
        return JIT_STATUS_BAD_SHAPE;
    }
    if (k->plan.is_bag) {
        tj_error_set("an embedding bag's kernel takes its offsets and weights: call "
                     "jit_run_range_bag");
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
        return k->range(data, indices, updates, out, begin, end, 0); /* may wrap */
    return tj_ref_range(&k->plan, data, indices, updates, out, begin, end);
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

/* An embedding bag's parts: a split JIT kernel's own check and range
 * functions (tj_bag_check_fn, tj_bag_range_fn), else the reference code on
 * its plan, which gives the same bytes. */
int tj_validate_bag_of(jit_kernel fn, jit_op op, const void *indices, const void *offsets)
{
    int tiered, rc;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    if (!k->plan.is_bag || k->plan.dyn) {
        tj_error_set("%s", k->plan.dyn ? "a dynamic kernel has no fixed units: its parts API "
                                         "is not offered"
                                       : "not an embedding bag's kernel: call jit_validate");
        rc = JIT_STATUS_BAD_SHAPE;
    } else if (k->check) { /* table, weights and out are not read: any address */
        rc = ((tj_bag_check_fn)(uintptr_t)k->check)("", indices, offsets, "", "");
    } else {
        rc = tj_bag_check_buffers(&k->plan, "", indices, offsets, "", "");
        if (rc == JIT_OK)
            rc = tj_bag_report_bad(&k->plan, indices, offsets);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

/* Bags [begin, end) (clamped to the kernel's), the inputs checked. */
static int tj_bag_range(const tj_kernel *k, const void *table, const void *indices,
                        const void *offsets, const void *weights, void *out, int64_t begin,
                        int64_t end)
{
    const void *w = k->plan.bag.has_weights ? weights : NULL;
    if (!k->range)
        return tj_bag_ref_range(&k->plan, table, indices, offsets, w, out, begin, end);
    if (begin < 0)
        begin = 0;
    if (end > k->plan.bag.bags)
        end = k->plan.bag.bags;
    if (begin >= end)
        return JIT_OK;
    return ((tj_bag_range_fn)(uintptr_t)k->range)(table, indices, offsets, w, out, begin, end);
}

int tj_run_range_bag_of(jit_kernel fn, jit_op op, const void *table, const void *indices,
                        const void *offsets, const void *weights, void *out, int64_t begin,
                        int64_t end)
{
    int tiered, rc;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin);
    if (!k)
        return JIT_STATUS_BAD_POINTER;
    if (!k->plan.is_bag || k->plan.dyn) {
        tj_error_set("%s", k->plan.dyn ? "a dynamic kernel has no fixed units: its parts API "
                                         "is not offered"
                                       : "not an embedding bag's kernel: call jit_run_range");
        rc = JIT_STATUS_BAD_SHAPE;
    } else {
        rc = tj_bag_check_buffers(&k->plan, table, indices, offsets, weights, out);
        if (rc == JIT_OK)
            rc = tj_bag_range(k, table, indices, offsets, weights, out, begin, end);
    }
    tj_user_kernel_done(&pin);
    return rc;
}

int jit_validate_bag(jit_kernel kernel, const void *indices, const void *offsets)
{
    return tj_validate_bag_of(kernel, JIT_OP_NONE, indices, offsets);
}

int jit_run_range_bag(jit_kernel kernel, const void *table, const void *indices,
                      const void *offsets, const void *weights, void *out, int64_t begin,
                      int64_t end)
{
    return tj_run_range_bag_of(kernel, JIT_OP_NONE, table, indices, offsets, weights, out, begin,
                               end);
}
