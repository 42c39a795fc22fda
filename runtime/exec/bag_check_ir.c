/*
 * The check pass of an embedding bag, in the order SPEC section 10 rules:
 * offsets each in [0, N] and non-decreasing (segment ids each in [0, S)),
 * then the indices some bag reads, under the index policy. It stops at the
 * first bad one, so the message names the lowest bad position whatever
 * the engine and the thread count.
 */
#include "bag_check.h"

#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "index.h"

/* The indices [first, end) that some bag reads. */
static void tj_bag_read_span(const tj_bag_plan *g, const void *offsets, int64_t *first,
                             int64_t *end)
{
    *first = 0;
    *end = g->lookups;
    if (g->form != TJ_BAG_OFFSETS)
        return;
    if (g->bags == 0) { /* no bag reads any */
        *end = 0;
        return;
    }
    *first = tj_index_load(offsets, g->index_type, 0);
    if (g->include_last_offset)
        *end = tj_index_load(offsets, g->index_type, g->offsets_len - 1);
}

static int tj_bag_bad_offsets(const tj_bag_plan *g, const void *offsets)
{
    int64_t prev = 0;
    for (int64_t i = 0; i < g->offsets_len; i++) {
        int64_t o = tj_index_load(offsets, g->index_type, i);
        if (o < 0 || o > g->lookups) {
            tj_error_set("offsets[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64
                         "] (the indices' length N)",
                         i, o, g->lookups);
            return JIT_STATUS_BAD_INDEX;
        }
        if (i > 0 && o < prev) {
            tj_error_set("offsets[%" PRId64 "] = %" PRId64 " is less than offsets[%" PRId64
                         "] = %" PRId64 " (offsets must be non-decreasing)",
                         i, o, i - 1, prev);
            return JIT_STATUS_BAD_INDEX;
        }
        prev = o;
    }
    return JIT_OK;
}

static int tj_bag_bad_segments(const tj_bag_plan *g, const void *ids)
{
    for (int64_t i = 0; i < g->offsets_len; i++) {
        int64_t s = tj_index_load(ids, g->index_type, i);
        if (s < 0 || s >= g->bags) {
            tj_error_set("segment_ids[%" PRId64 "] = %" PRId64 " is out of range [0, %" PRId64
                         ") (num_segments)",
                         i, s, g->bags);
            return JIT_STATUS_BAD_INDEX;
        }
    }
    return JIT_OK;
}

/* "indices[j]", or "indices[b, l]" for the packed form's [B, L]. */
static void tj_bag_index_name(const tj_bag_plan *g, int64_t j, char *buf, size_t len)
{
    if (g->form == TJ_BAG_PACKED && g->bag_len > 0)
        snprintf(buf, len, "indices[%" PRId64 ", %" PRId64 "]", j / g->bag_len, j % g->bag_len);
    else
        snprintf(buf, len, "indices[%" PRId64 "]", j);
}

static int tj_bag_bad_indices(const tj_bag_plan *g, const void *indices, int64_t first,
                              int64_t end)
{
    if (tj_policy_fills(g->policy))
        return JIT_OK;
    for (int64_t j = first; j < end; j++) {
        int64_t v = tj_index_load(indices, g->index_type, j), row;
        if (tj_index_resolve(v, g->rows, g->policy, &row))
            continue;
        char at[64];
        tj_bag_index_name(g, j, at, sizeof at);
        if (g->policy == JIT_INDEX_CLAMP)
            tj_error_set("%s = %" PRId64 " cannot be clamped: the table has no rows", at, v);
        else if (g->policy == JIT_INDEX_NEGATIVE_WRAPS)
            tj_error_set("%s = %" PRId64 " is out of range [-%" PRId64 ", %" PRId64
                         ") (the table's rows)",
                         at, v, g->rows, g->rows);
        else
            tj_error_set("%s = %" PRId64 " is out of range [0, %" PRId64 ") (the table's rows)",
                         at, v, g->rows);
        return JIT_STATUS_BAD_INDEX;
    }
    return JIT_OK;
}

int tj_bag_report_bad(const tj_plan *p, const void *indices, const void *offsets)
{
    const tj_bag_plan *g = &p->bag;
    int rc = JIT_OK;
    if (g->form == TJ_BAG_OFFSETS)
        rc = tj_bag_bad_offsets(g, offsets);
    else if (g->form == TJ_BAG_SEGMENTS)
        rc = tj_bag_bad_segments(g, offsets);
    if (rc != JIT_OK)
        return rc;
    int64_t first, end;
    tj_bag_read_span(g, offsets, &first, &end);
    return tj_bag_bad_indices(g, indices, first, end);
}

int tj_bag_check_buffers(const tj_plan *p, const void *table, const void *indices,
                         const void *offsets, const void *weights, const void *out)
{
    const tj_bag_plan *g = &p->bag;
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
