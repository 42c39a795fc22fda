/* jit_units / validate / run_range: a kernel's work for the caller's own
 * threads. JIT kernels serve them with generated check and range
 * functions: a split kernel's own, or for any other static one, a module
 * of them compiled on the first query (a small kernel's compile would
 * otherwise double for every caller: docs/performance.md); the reference
 * kernel, a reduction of several passes, or a kernel whose module failed
 * to compile with the reference code on its plan. Each query pins the
 * kernel while it runs (user_kernel.h).
 *
 * Wrap once, for ranges too: jit_validate keeps the indices its check
 * found all non-negative (negative-wraps), and a range of those same
 * indices runs the copies without the wrap, as the kernel's own calls do.
 * The caller must not change the indices between the two, which the
 * parts API already asks (the ranges do not check them again).
 *
 * An embedding bag's ranges (jit_validate_bag, jit_run_range_bag): a split
 * JIT bag kernel's own range function, the reference code for every other
 * bag kernel; the checks are the runtime's scan, as in the JIT kernels. */
#include "alloc.h"
#include "backend.h"
#include "bag_check.h"
#include "bag_scan.h"
#include "bag_ref.h"
#include "error.h"
#include "jit_support.h"
#include "overlap.h"
#include "parts.h"
#include "plan.h"
#include "reduce.h"
#include "ref_kernel.h"
#include "typed_api.h"
#include "user_kernel.h"

typedef struct tj_lazy_parts {
    int (*check)(const void *indices);
    tj_range_fn range; /* NULL: the module failed; the reference code serves */
    int range_checks;  /* range has a check mode (TJ_RANGE_CHECK) */
    void *handle;
} tj_lazy_parts;

/* The parts of a kernel without its own, compiled once: racing first
 * queries both compile, the first to publish wins, the other's is freed. */
static const tj_lazy_parts *tj_parts_made(const tj_kernel *k)
{
    tj_lazy_parts *made = __atomic_load_n(&k->lazy_parts, __ATOMIC_ACQUIRE);
    if (made)
        return made;
    made = tj_calloc(1, sizeof *made);
    if (!made)
        return NULL; /* no memory: the reference code serves this query */
    tj_backend_kernel bk = {0};
    char why[512];
    if (tj_backend_parts(&k->plan, &bk, why, sizeof why) == 0 && bk.check && bk.range)
        made->check = bk.check, made->range = bk.range, made->handle = bk.handle,
        made->range_checks = bk.range_checks;
    else if (bk.handle)
        tj_backend_release(bk.handle);
    tj_lazy_parts *none = NULL;
    tj_kernel *mk = (tj_kernel *)(uintptr_t)k; /* the slot is mutable while pinned */
    if (__atomic_compare_exchange_n(&mk->lazy_parts, &none, made, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return made;
    if (made->handle)
        tj_backend_release(made->handle);
    tj_free(made);
    return none;
}

/* k's check and range functions in *out; 0 where the reference code
 * serves k's parts. */
static int tj_parts_of(const tj_kernel *k, tj_lazy_parts *out)
{
    if (k->range) {
        out->check = k->check, out->range = k->range, out->range_checks = k->range_checks;
        out->handle = NULL;
        return 1;
    }
    if (k->engine != JIT_ENGINE_JIT || k->plan.dyn || tj_reduce_needs_passes(&k->plan))
        return 0;
    const tj_lazy_parts *made = tj_parts_made(k);
    if (!made || !made->range)
        return 0;
    *out = *made;
    return 1;
}

void tj_parts_free(tj_kernel *k)
{
    if (!k->lazy_parts)
        return;
    if (k->lazy_parts->handle)
        tj_backend_release(k->lazy_parts->handle);
    tj_free(k->lazy_parts);
    k->lazy_parts = NULL;
}

static const char tj_parts_dynamic[] =
    "a dynamic kernel has no fixed units: its parts API is not offered";

/* One refusal for every parts call: a dynamic kernel has no fixed units,
 * and a kernel of the other argument list (a bag's for a call that is not
 * for bags, or the reverse) is sent to its own call by wrong_kind.
 * JIT_STATUS_BAD_SHAPE with the error set, or JIT_OK where k serves a
 * call for bags (bag_call 1) or not (0). */
static int tj_parts_refuse(const tj_kernel *k, int bag_call, const char *wrong_kind)
{
    if (k->plan.dyn)
        return tj_error_set("%s", tj_parts_dynamic), JIT_STATUS_BAD_SHAPE;
    if (!k->plan.is_bag != !bag_call)
        return tj_error_set("%s", wrong_kind), JIT_STATUS_BAD_SHAPE;
    return JIT_OK;
}

/* Every index of k's call checked, by its check function where the JIT
 * serves its parts (parts: those), else by the reference's pass: JIT_OK
 * (negative ones are valid under negative-wraps; *nonneg then says none
 * was), or a bad index's status with its message. */
static int tj_validate_whole(const tj_kernel *k, const void *indices, int jit,
                             const tj_lazy_parts *parts, int *nonneg)
{
    int rc = jit ? parts->check(indices) : tj_report_bad_index(&k->plan, indices);
    if (rc == JIT_STATUS_BAD_INDEX && jit) /* a lazy module's check cannot name it */
        tj_report_bad_index(&k->plan, indices);
    *nonneg = rc == JIT_OK && jit;
    return rc == TJ_CHECK_NEGATIVE ? JIT_OK : rc;
}

static int tj_indices_missing(const tj_kernel *k, const void *indices)
{
    if (indices || !k->plan.indices_elems)
        return JIT_OK;
    tj_error_set("indices is NULL but the signature needs bytes there");
    return JIT_STATUS_BAD_POINTER;
}

/* jit_validate of a kernel the parts API serves. */
static int tj_validate_kernel(const tj_kernel *k, const void *indices)
{
    int rc = tj_indices_missing(k, indices), nonneg = 0;
    if (rc != JIT_OK)
        return rc;
    tj_lazy_parts parts;
    int jit = tj_parts_of(k, &parts);
    rc = tj_validate_whole(k, indices, jit, &parts, &nonneg);
    tj_kernel *mk = (tj_kernel *)(uintptr_t)k; /* the note is mutable while pinned */
    __atomic_store_n(&mk->nonneg_indices, nonneg ? indices : NULL, __ATOMIC_RELAXED);
    return rc;
}

void tj_part_bounds(int64_t n, int64_t part, int64_t parts, int64_t *begin, int64_t *end)
{
    int64_t q = n / parts, r = n % parts;
    *begin = q * part + (part < r ? part : r);
    *end = q * (part + 1) + (part + 1 < r ? part + 1 : r);
}

/* A part's arguments: part in [0, parts), parts at least 1. */
static int tj_part_in(const char *api, int64_t part, int64_t parts)
{
    if (parts >= 1 && part >= 0 && part < parts)
        return JIT_OK;
    tj_error_set("%s: part %lld of %lld: parts must be at least 1 and part in [0, parts)", api,
                 (long long)part, (long long)parts);
    return JIT_STATUS_BAD_SHAPE;
}

/* jit_validate_part of a kernel the parts API serves: every part checks
 * its own slice of the tuples, whichever engine answers it (a tiered
 * kernel may change engines between two parts of one check), by the range
 * function's check mode where it has one (1 MB of indices or more), else
 * by the reference's pass over the slice. A bad index found is named by
 * the whole check (the first one, as jit_validate names it). Ranges after
 * it wrap negative indices: the parts cannot tell together, without a
 * race, that none was negative. */
static int tj_validate_part_kernel(const tj_kernel *k, const char *api, const void *indices,
                                   int64_t part, int64_t parts)
{
    int rc = tj_part_in(api, part, parts), nonneg = 0;
    if (rc == JIT_OK)
        rc = tj_indices_missing(k, indices);
    if (rc != JIT_OK)
        return rc;
    tj_kernel *mk = (tj_kernel *)(uintptr_t)k; /* the note is mutable while pinned */
    __atomic_store_n(&mk->nonneg_indices, NULL, __ATOMIC_RELAXED);
    int64_t begin, end;
    tj_part_bounds(k->plan.tuples, part, parts, &begin, &end);
    if (begin >= end)
        return JIT_OK;
    tj_lazy_parts lp;
    int jit = tj_parts_of(k, &lp), bad;
    if (jit && lp.range_checks) /* the check mode reads the indices alone */
        bad = lp.range(NULL, indices, NULL, NULL, begin, end, TJ_RANGE_CHECK) & TJ_CHECK_BAD;
    else
        bad = tj_bad_index_in(&k->plan, indices, begin, end);
    return bad ? tj_validate_whole(k, indices, jit, &lp, &nonneg) : JIT_OK;
}

/* jit_validate (whole) or jit_validate_part (api: the caller's name) of
 * fn, pinned while it runs. */
static int tj_validate_call(jit_kernel fn, jit_op op, const char *api, const void *indices,
                            int whole, int64_t part, int64_t parts)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc = tj_parts_refuse(k, 0, "an embedding bag's kernel checks its offsets too: call "
                                   "jit_validate_bag");
    if (rc == JIT_OK)
        rc = whole ? tj_validate_kernel(k, indices)
                   : tj_validate_part_kernel(k, api, indices, part, parts);
    tj_user_kernel_done(&pin);
    return rc;
}

int tj_validate_of(jit_kernel fn, jit_op op, const void *indices)
{
    return tj_validate_call(fn, op, "jit_validate", indices, 1, 0, 1);
}

int tj_validate_part_of(jit_kernel fn, jit_op op, const char *api, const void *indices,
                        int64_t part, int64_t parts)
{
    return tj_validate_call(fn, op, api, indices, 0, part, parts);
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

/* A range of units must lie in [0, units): a caller's part arithmetic
 * that goes past either end is told so, not clipped into partial output. */
static int tj_range_in(const char *what, int64_t begin, int64_t end, int64_t units)
{
    if (begin >= 0 && begin <= end && end <= units)
        return JIT_OK;
    tj_error_set("%s: units [%lld, %lld) are not a range within the kernel's %lld units "
                 "(0 <= begin <= end <= units)",
                 what, (long long)begin, (long long)end, (long long)units);
    return JIT_STATUS_BAD_SHAPE;
}

static int tj_range_of(const tj_kernel *k, const char *api, const void *data,
                       const void *indices, const void *updates, void *out, int64_t begin,
                       int64_t end)
{
    int rc = tj_parts_refuse(k, 0, "an embedding bag's kernel takes its offsets and weights: "
                                   "call jit_run_range_bag");
    if (rc == JIT_OK)
        rc = tj_check_buffers(&k->plan, data, indices, updates, out);
    if (rc == JIT_OK)
        rc = tj_range_in(api, begin, end, k->plan.units);
    if (rc != JIT_OK || begin == end)
        return rc;
    tj_lazy_parts parts;
    if (tj_parts_of(k, &parts))
        return parts.range(data, indices, updates, out, begin, end, tj_range_flags(k, indices));
    __atomic_add_fetch(&tj_reference_ranges, 1, __ATOMIC_RELAXED);
    return tj_ref_range(&k->plan, data, indices, updates, out, begin, end);
}

int64_t tj_parts_reference_ranges(void)
{
    return __atomic_load_n(&tj_reference_ranges, __ATOMIC_RELAXED);
}

int tj_run_range_of(jit_kernel fn, jit_op op, const char *api, const void *data,
                    const void *indices, const void *updates, void *out, int64_t begin,
                    int64_t end)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc = tj_range_of(k, api, data, indices, k->plan.has_updates ? updates : NULL, out,
                         begin, end);
    tj_user_kernel_done(&pin);
    return rc;
}

int64_t tj_units_of(jit_kernel fn, jit_op op)
{
    int tiered;
    tj_cache_pinned pin;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, NULL);
    int64_t units = k && !k->plan.dyn ? k->plan.units : -1;
    if (k && k->plan.dyn)
        tj_error_set("%s", tj_parts_dynamic);
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

int jit_validate_part(jit_kernel kernel, const void *indices, int64_t part, int64_t parts)
{
    return tj_validate_part_of(kernel, JIT_OP_NONE, "jit_validate_part", indices, part, parts);
}

int jit_run_range(jit_kernel kernel, const void *data, const void *indices, const void *updates,
                  void *out, int64_t begin, int64_t end)
{
    return tj_run_range_of(kernel, JIT_OP_NONE, "jit_run_range", data, indices, updates, out,
                           begin, end);
}

/* An embedding bag's parts: a split JIT kernel's own range function
 * (tj_bag_range_fn), else the reference code on its plan, which gives the
 * same bytes; the checks, for every kernel, the runtime's scan (the JIT
 * kernels' own, bag_scan.h), and where it finds something bad, the
 * reference's check pass, which names it. whole: the whole check
 * (jit_validate_bag), else part `part` of `parts` (the scan of its
 * slices); a part that finds something bad names the lowest bad value of
 * the whole call, as jit_validate_bag would. */
static int tj_validate_bag_kernel(const tj_kernel *k, const void *indices, const void *offsets,
                                  int whole, int64_t part, int64_t parts)
{
    /* table, weights and out are not read: any address */
    int rc = tj_bag_check_buffers(&k->plan.bag, "", indices, offsets, "", "");
    if (rc != JIT_OK)
        return rc;
    int bad = whole ? tj_bag_scan_plan(&k->plan.bag, indices, offsets)
                    : tj_bag_scan_plan_part(&k->plan.bag, indices, offsets, part, parts);
    return bad ? tj_bag_report_bad(&k->plan, indices, offsets) : JIT_OK;
}

int tj_validate_bag_of(jit_kernel fn, jit_op op, const char *api, const void *indices,
                       const void *offsets, int whole, int64_t part, int64_t parts)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc = tj_parts_refuse(k, 1, "not an embedding bag's kernel: call jit_validate");
    if (rc == JIT_OK && !whole)
        rc = tj_part_in(api, part, parts);
    if (rc == JIT_OK)
        rc = tj_validate_bag_kernel(k, indices, offsets, whole, part, parts);
    tj_user_kernel_done(&pin);
    return rc;
}

/* Bags [begin, end) (within the kernel's), the inputs checked. */
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

int tj_run_range_bag_of(jit_kernel fn, jit_op op, const char *api, const void *table,
                        const void *indices, const void *offsets, const void *weights, void *out,
                        int64_t begin, int64_t end)
{
    int tiered;
    tj_cache_pinned pin;
    int refused;
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)fn, op, &tiered, &pin, &refused);
    if (!k)
        return refused;
    int rc = tj_parts_refuse(k, 1, "not an embedding bag's kernel: call jit_run_range");
    if (rc == JIT_OK)
        rc = tj_bag_check_buffers(&k->plan.bag, table, indices, offsets, weights, out);
    /* jit_call_bag's rules: after jit_validate_bag, an out over the
     * indices or offsets would change lookups already checked */
    if (rc == JIT_OK && (tj_bag_pointers_fit(&k->plan.bag, offsets, weights) != 0 ||
                         tj_bag_out_overlap(&k->plan.bag, table, indices, offsets, weights,
                                            out) != 0))
        rc = JIT_STATUS_BAD_POINTER;
    if (rc == JIT_OK)
        rc = tj_range_in(api, begin, end, k->plan.bag.bags);
    if (rc == JIT_OK)
        rc = tj_bag_range(k, table, indices, offsets, weights, out, begin, end);
    tj_user_kernel_done(&pin);
    return rc;
}

int jit_validate_bag(jit_kernel kernel, const void *indices, const void *offsets)
{
    return tj_validate_bag_of(kernel, JIT_OP_NONE, "jit_validate_bag", indices, offsets, 1, 0,
                              1);
}

int jit_validate_bag_part(jit_kernel kernel, const void *indices, const void *offsets,
                          int64_t part, int64_t parts)
{
    return tj_validate_bag_of(kernel, JIT_OP_NONE, "jit_validate_bag_part", indices, offsets, 0,
                              part, parts);
}

int jit_run_range_bag(jit_kernel kernel, const void *table, const void *indices,
                      const void *offsets, const void *weights, void *out, int64_t begin,
                      int64_t end)
{
    return tj_run_range_bag_of(kernel, JIT_OP_NONE, "jit_run_range_bag", table, indices, offsets,
                               weights, out, begin, end);
}
