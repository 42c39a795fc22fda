/* Finding and naming a rejected index. Kept off the copy path: kernels
 * only learn that some index is bad, then call this to say which. */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "index.h"
#include "ref_kernel.h"

/* "[0,1]" for tuple number t counted in the tuple shape. */
static void tj_format_position(const jit_shape *shape, int64_t t, char *buf, size_t len)
{
    int64_t coord[JIT_MAX_RANK];
    for (int i = shape->rank - 1; i >= 0; i--) {
        int64_t d = shape->dims[i] ? shape->dims[i] : 1;
        coord[i] = t % d;
        t /= d;
    }
    size_t used = 0;
    buf[used++] = '[';
    for (int i = 0; i < shape->rank && used + 24 < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%" PRId64, i ? "," : "", coord[i]);
    snprintf(buf + used, len - used, "]");
}

/* The raw value as the user wrote it (a u64 is printed unsigned). */
static int tj_format_value(const void *indices, jit_dtype t, int64_t i, char *buf, size_t len)
{
    if (t == JIT_U64)
        return snprintf(buf, len, "%" PRIu64, ((const uint64_t *)indices)[i]);
    return snprintf(buf, len, "%" PRId64, tj_index_load(indices, t, i));
}

static int tj_describe(const tj_plan *p, const void *indices, int64_t tuple, int bad)
{
    char pos[512], val[800];
    size_t used = 0;
    int64_t base = tuple * p->depth;
    tj_format_position(&p->tuple_shape, tuple, pos, sizeof pos);
    if (p->tuple_form) {
        val[used++] = '[';
        for (int e = 0; e < p->depth && used + 24 < sizeof val; e++) {
            if (e)
                val[used++] = ',';
            used += (size_t)tj_format_value(indices, p->index_type, base + e, val + used,
                                            sizeof val - used);
        }
        snprintf(val + used, sizeof val - used, "]");
    } else {
        tj_format_value(indices, p->index_type, base, val, sizeof val);
    }
    const char *how = p->policy == JIT_INDEX_ERROR ? "" : " under index policy ";
    const char *pol = p->policy == JIT_INDEX_ERROR ? "" : jit_index_policy_name(p->policy);
    return tj_error_set("indices%s = %s is out of range for data dimension %d of size %" PRId64
                        "%s%s",
                        p->tuple_shape.rank ? pos : "", val, p->first_dim + bad, p->dims[bad], how,
                        pol);
}

/* The first tuple of [begin, end) the policy rejects: its number, and the
 * entry in *entry; -1 when every one is usable. */
static int64_t tj_first_bad(const tj_plan *p, const void *indices, int64_t begin, int64_t end,
                            int *entry)
{
    /* Tuples of k = 0 entries hold no index, and their number is bounded by
     * nothing (indices [2^40, 2^20, 0] is valid): never loop over them.
     * With k > 0 the tuples are bounded by the indices' byte count. */
    if (tj_policy_fills(p->policy) || p->depth == 0)
        return -1;
    for (int64_t t = begin; t < end; t++) {
        for (int e = 0; e < p->depth; e++) {
            int64_t v = tj_index_load(indices, p->index_type, t * p->depth + e), pos;
            if (!tj_index_resolve(v, p->dims[e], p->policy, &pos)) {
                *entry = e;
                return t;
            }
        }
    }
    return -1;
}

int tj_report_bad_index(const tj_plan *p, const void *indices)
{
    int e = 0;
    int64_t t = tj_first_bad(p, indices, 0, p->tuples, &e);
    if (t < 0)
        return JIT_OK;
    tj_describe(p, indices, t, e);
    return JIT_STATUS_BAD_INDEX;
}

int tj_bad_index_in(const tj_plan *p, const void *indices, int64_t begin, int64_t end)
{
    int e = 0;
    return tj_first_bad(p, indices, begin, end, &e) >= 0;
}
