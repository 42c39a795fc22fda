/* The check pass of an embedding bag: offsets in [0, N] and never
 * decreasing, segment ids in [0, S), then the indices that some bag reads
 * under the index policy. The JIT's kernels call this to name what their
 * own pass found. */
#include "bag_check.h"

#include <inttypes.h>

#include "error.h"
#include "index.h"

static int tj_bag_bad_offsets(const tj_bag_plan *b, const void *offsets)
{
    int64_t prev = 0;
    for (int64_t i = 0; i < b->offsets_len; i++) {
        int64_t v = tj_index_load(offsets, b->index_type, i);
        if (v < 0 || v > b->lookups)
            return tj_error_set("offsets[%" PRId64 "] = %" PRId64 " is out of range [0, N] = "
                                "[0, %" PRId64 "] (N: the number of indices)",
                                i, v, b->lookups);
        if (i > 0 && v < prev)
            return tj_error_set("offsets[%" PRId64 "] = %" PRId64 " is less than offsets[%" PRId64
                                "] = %" PRId64 ": offsets must not decrease",
                                i, v, i - 1, prev);
        prev = v;
    }
    return 0;
}

static int tj_bag_bad_segments(const tj_bag_plan *b, const void *ids)
{
    for (int64_t j = 0; j < b->offsets_len; j++) {
        int64_t v = tj_index_load(ids, b->index_type, j);
        if (v < 0 || v >= b->bags)
            return tj_error_set("segment_ids[%" PRId64 "] = %" PRId64 " is out of range [0, "
                                "num_segments) = [0, %" PRId64 ")",
                                j, v, b->bags);
    }
    return 0;
}

/* The indices bags read: offsets form, from the first bag's start to the
 * last bag's end (offsets checked already); the other forms, all. */
static void tj_bag_read_span(const tj_bag_plan *b, const void *offsets, int64_t *from,
                             int64_t *to)
{
    *from = 0;
    *to = b->lookups;
    if (b->form != TJ_BAG_OFFSETS)
        return;
    if (b->offsets_len == 0) {
        *to = 0;
        return;
    }
    *from = tj_index_load(offsets, b->index_type, 0);
    if (b->include_last_offset)
        *to = tj_index_load(offsets, b->index_type, b->offsets_len - 1);
}

static int tj_bag_bad_index(const tj_bag_plan *b, int64_t j, int64_t v)
{
    const char *pol = jit_index_policy_name(b->policy);
    if (b->policy == JIT_INDEX_CLAMP)
        return tj_error_set("indices[%" PRId64 "] = %" PRId64 " cannot be clamped: the table has "
                            "no rows (index policy %s)",
                            j, v, pol);
    if (b->policy == JIT_INDEX_NEGATIVE_WRAPS)
        return tj_error_set("indices[%" PRId64 "] = %" PRId64 " is out of range [-E, E) = [%" PRId64
                            ", %" PRId64 ") for a table of %" PRId64 " rows (index policy %s)",
                            j, v, -b->rows, b->rows, b->rows, pol);
    return tj_error_set("indices[%" PRId64 "] = %" PRId64 " is out of range [0, E) = [0, %" PRId64
                        ") for a table of %" PRId64 " rows",
                        j, v, b->rows, b->rows);
}

int tj_bag_report_bad(const tj_plan *p, const void *indices, const void *offsets)
{
    const tj_bag_plan *b = &p->bag;
    if (b->form == TJ_BAG_OFFSETS && tj_bag_bad_offsets(b, offsets))
        return JIT_STATUS_BAD_INDEX;
    if (b->form == TJ_BAG_SEGMENTS && tj_bag_bad_segments(b, offsets))
        return JIT_STATUS_BAD_INDEX;
    if (tj_policy_fills(b->policy))
        return JIT_OK;
    int64_t from, to, pos;
    tj_bag_read_span(b, offsets, &from, &to);
    for (int64_t j = from; j < to; j++) {
        int64_t v = tj_index_load(indices, b->index_type, j);
        if (!tj_index_resolve(v, b->rows, b->policy, &pos)) {
            tj_bag_bad_index(b, j, v);
            return JIT_STATUS_BAD_INDEX;
        }
    }
    return JIT_OK;
}
