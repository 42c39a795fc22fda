/*
 * The check pass of an embedding bag, in the order SPEC section 10 rules:
 * offsets each in [0, N] and non-decreasing (segment ids each in [0, S)),
 * then the indices some bag reads, under the index policy. It stops at the
 * first bad one, so the message names the lowest bad position whatever
 * the engine and the thread count. The reference kernel runs it; a JIT
 * kernel runs its own and calls this to name what it found.
 */
#include "bag_check.h"

#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "index.h"

static int tj_bag_bad_offsets(const tj_bag_plan *b, const void *offsets)
{
    int64_t prev = 0;
    for (int64_t i = 0; i < b->offsets_len; i++) {
        int64_t v = tj_index_load(offsets, b->index_type, i);
        if (v < 0 || v > b->lookups)
            return tj_error_set("offsets[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64
                                "] (offsets are in [0, N], N the number of indices)",
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

/* "indices[j] = v", and for the packed form's [B, L] where that is */
static void tj_bag_index_name(const tj_bag_plan *b, int64_t j, int64_t v, char *buf, size_t len)
{
    if (b->form == TJ_BAG_PACKED && b->bag_len > 0)
        snprintf(buf, len, "indices[%" PRId64 "] = %" PRId64 " (indices[%" PRId64 ", %" PRId64
                 "] of [B, L])",
                 j, v, j / b->bag_len, j % b->bag_len);
    else
        snprintf(buf, len, "indices[%" PRId64 "] = %" PRId64, j, v);
}

static int tj_bag_bad_index(const tj_bag_plan *b, int64_t j, int64_t v)
{
    const char *pol = jit_index_policy_name(b->policy);
    char at[128];
    tj_bag_index_name(b, j, v, at, sizeof at);
    if (b->policy == JIT_INDEX_CLAMP)
        return tj_error_set("%s cannot be clamped: the table has no rows (index policy %s)", at,
                            pol);
    if (b->policy == JIT_INDEX_NEGATIVE_WRAPS)
        return tj_error_set("%s is out of range [-E, E) = [%" PRId64 ", %" PRId64
                            ") for a table of %" PRId64 " rows (index policy %s)",
                            at, -b->rows, b->rows, b->rows, pol);
    return tj_error_set("%s is out of range [0, E) = [0, %" PRId64 ") for a table of %" PRId64
                        " rows",
                        at, b->rows, b->rows);
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

int tj_bag_check_buffers(const tj_bag_plan *g, const void *table, const void *indices,
                         const void *offsets, const void *weights, const void *out)
{
    /* every call of a dynamic kernel asks (tj_rt_bag_dyn_begin): where
     * every buffer the form can read is there, none is missing */
    if (table && indices && out && (offsets || g->form == TJ_BAG_PACKED) &&
        (weights || !g->has_weights))
        return JIT_OK;
    struct {
        const char *name;
        const void *at;
        int needed;
    } bufs[] = {
        {"table", table, g->rows > 0 && g->row_elems > 0},
        {"indices", indices, g->lookups > 0},
        {g->form == TJ_BAG_SEGMENTS ? "segment_ids" : "offsets", offsets,
         g->form != TJ_BAG_PACKED && g->offsets_len > 0},
        {"weights", weights, g->has_weights && g->lookups > 0},
        {"out", out, g->bags > 0 && g->row_elems > 0},
    };
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i].needed && !bufs[i].at) {
            tj_error_set("%s is NULL but the signature needs bytes there", bufs[i].name);
            return JIT_STATUS_BAD_POINTER;
        }
    return JIT_OK;
}

/* dims[-1 - code] where code < 0, else code; -1 when that dim is negative */
static int tj_bag_dim(int64_t code, const int64_t *dims, const char *what, int64_t *out)
{
    *out = code >= 0 ? code : dims[-1 - code];
    if (*out >= 0)
        return 0;
    tj_error_set("dims[%" PRId64 "] = %" PRId64 " (%s) is negative", -1 - code, *out, what);
    return -1;
}

/* a * b bytes fit in int64 */
static int tj_bag_fits(int64_t a, int64_t b, const char *what)
{
    if (a == 0 || b <= INT64_MAX / a)
        return 0;
    tj_error_set("%s: %" PRId64 " x %" PRId64 " bytes overflow int64", what, a, b);
    return -1;
}

int tj_bag_bind(const tj_bag_plan *t, const int64_t *dims, tj_bag_plan *c)
{
    *c = *t;
    c->dynamic = 0;
    if (!dims) {
        tj_error_set("a dynamic kernel's dims are NULL");
        return JIT_STATUS_BAD_SHAPE;
    }
    int64_t es = jit_dtype_size(t->dtype), is = jit_dtype_size(t->index_type);
    if (tj_bag_dim(t->rows, dims, "the table's rows E", &c->rows) ||
        tj_bag_fits(c->rows, t->row_elems * es, "the table"))
        return JIT_STATUS_BAD_SHAPE;
    if (t->form == TJ_BAG_PACKED) {
        if (tj_bag_dim(t->bags, dims, "the bags B", &c->bags) ||
            tj_bag_dim(t->bag_len, dims, "the bag length L", &c->bag_len) ||
            tj_bag_fits(c->bags, c->bag_len, "the indices [B, L]"))
            return JIT_STATUS_BAD_SHAPE;
        c->lookups = c->bags * c->bag_len;
    } else {
        if (tj_bag_dim(t->lookups, dims, "the indices N", &c->lookups) ||
            tj_bag_dim(t->offsets_len, dims, t->form == TJ_BAG_OFFSETS ? "the offsets"
                                                                        : "the segment ids",
                       &c->offsets_len))
            return JIT_STATUS_BAD_SHAPE;
        if (t->form == TJ_BAG_OFFSETS) {
            c->bags = c->offsets_len - t->include_last_offset;
            if (c->bags < 0) {
                tj_error_set("offsets has no entries, but include_last_offset needs B + 1");
                return JIT_STATUS_BAD_SHAPE;
            }
        } else {
            if (tj_bag_dim(t->bags, dims, "the segments S", &c->bags))
                return JIT_STATUS_BAD_SHAPE;
            if (c->offsets_len != c->lookups) {
                tj_error_set("segment_ids has %" PRId64 " entries but indices %" PRId64,
                             c->offsets_len, c->lookups);
                return JIT_STATUS_BAD_SHAPE;
            }
        }
    }
    if (tj_bag_fits(c->lookups, es > is ? es : is, "the indices") ||
        tj_bag_fits(c->offsets_len, is, "the offsets") ||
        tj_bag_fits(c->bags, t->row_elems * es, "out"))
        return JIT_STATUS_BAD_SHAPE;
    if (t->default_index >= c->rows || t->padding_row >= c->rows) {
        tj_error_set("the %s row %" PRId64 " is past the table's %" PRId64 " rows",
                     t->default_index >= c->rows ? "default" : "padding",
                     t->default_index >= c->rows ? t->default_index : t->padding_row, c->rows);
        return JIT_STATUS_BAD_SHAPE;
    }
    return JIT_OK;
}
