/* The reference kernel: the plan's nest, interpreted. Indices are
 * validated in a pass of their own before anything is written, so a bad
 * index leaves out as it was (for an in-place scatter: no half update). */
#include "ref_kernel.h"

#include <string.h>

#include "error.h"
#include "index.h"
#include "reduce.h"
#include "scratch.h"

int tj_check_buffers(const tj_plan *p, const void *data, const void *indices,
                     const void *updates, const void *out)
{
    const char *which = NULL;
    if (!data && p->data_bytes)
        which = p->is_bag ? "table" : "data";
    else if (!indices && p->indices_elems)
        which = "indices";
    else if ((p->has_updates || p->is_bag) && !updates && p->updates_bytes)
        which = !p->is_bag ? "updates" : p->bag.form == TJ_BAG_SEGMENTS ? "segment_ids" : "offsets";
    else if (!out && p->out_bytes)
        which = "out";
    if (!which)
        return JIT_OK;
    tj_error_set("%s is NULL but the signature needs bytes there", which);
    return JIT_STATUS_BAD_POINTER;
}

/* Byte offset of the block a tuple selects, or -1 when the policy drops
 * it (only the filling policies get here with a bad tuple: under the
 * others every tuple was validated first). */
static int64_t tj_tuple_offset(const tj_plan *p, const void *indices, int64_t first)
{
    int64_t off = 0;
    for (int e = 0; e < p->depth; e++) {
        int64_t pos;
        int64_t v = tj_index_load(indices, p->index_type, first + e);
        if (!tj_index_resolve(v, p->dims[e], p->policy, &pos))
            return -1;
        off += pos * p->strides[e];
    }
    return off;
}

/* Where the nest stands: offsets in the index stream and on both sides. */
typedef struct tj_cursor {
    int64_t index, indexed, dense;
} tj_cursor;

typedef struct tj_run tj_run;
/* What is done with one block: its offset on the indexed side (off < 0: a
 * filling policy dropped it). */
typedef void (*tj_visit_fn)(const tj_run *r, const tj_cursor *c, int64_t off);

/* One call's buffers, and the scratch of a reduction's passes: per
 * element of out, how many values its mean divides and (integers) their
 * wide sum. */
struct tj_run {
    const tj_plan *p;
    const char *data, *updates;
    const void *indices;
    char *out;
    int64_t *count, *sum;
    tj_visit_fn visit;
    int64_t row_begin, row_end; /* row units: the rows this range applies */
};

/* Row units: whether the tuple at index element `first` lands in the
 * range's rows (a dropped one does not matter: it is visited as dropped). */
static int tj_in_rows(const tj_run *r, int64_t first)
{
    const tj_plan *p = r->p;
    int64_t pos;
    if (!p->row_units)
        return 1;
    if (!tj_index_resolve(tj_index_load(r->indices, p->index_type, first), p->dims[0], p->policy,
                          &pos))
        return 1;
    return pos >= r->row_begin && pos < r->row_end;
}

static void tj_visit_copy(const tj_run *r, const tj_cursor *c, int64_t off)
{
    const tj_plan *p = r->p;
    size_t n = (size_t)p->block_bytes;
    if (p->indexed == TJ_INDEXED_SRC) {
        if (off < 0)
            memset(r->out + c->dense, 0, n);
        else
            memcpy(r->out + c->dense, r->data + c->indexed + off, n);
    } else if (off >= 0) {
        memcpy(r->out + c->indexed + off, r->updates + c->dense, n);
    }
}

/* Element e of the block at c + off: its index in out, and its update. */
static int64_t tj_elem_at(const tj_run *r, const tj_cursor *c, int64_t off, int64_t e)
{
    return (c->indexed + off) / r->p->elem_size + e;
}

static const char *tj_update_at(const tj_run *r, const tj_cursor *c, int64_t e)
{
    return r->updates + c->dense + e * r->p->elem_size;
}

static void tj_visit_reduce(const tj_run *r, const tj_cursor *c, int64_t off)
{
    const tj_plan *p = r->p;
    int64_t n = p->block_bytes / p->elem_size;
    if (off < 0)
        return;
    if (p->reduction != JIT_REDUCTION_MEAN) {
        tj_reduce_elems(p, r->out + c->indexed + off, r->updates + c->dense, n);
        return;
    }
    for (int64_t e = 0; e < n; e++) {
        int64_t q = tj_elem_at(r, c, off, e);
        r->count[q]++;
        if (r->sum)
            r->sum[q] = (int64_t)((uint64_t)r->sum[q] +
                                  (uint64_t)tj_reduce_load_wide(p, tj_update_at(r, c, e)));
        else
            tj_reduce_elems(p, r->out + q * p->elem_size, tj_update_at(r, c, e), 1);
    }
}

/* Before the updates: every position an update hits starts from data's
 * value counted once, or (no_init_val) from the neutral value. */
static void tj_visit_start(const tj_run *r, const tj_cursor *c, int64_t off)
{
    const tj_plan *p = r->p;
    if (off < 0)
        return;
    for (int64_t e = 0, n = p->block_bytes / p->elem_size; e < n; e++) {
        int64_t q = tj_elem_at(r, c, off, e);
        char *dst = r->out + q * p->elem_size;
        if (r->count)
            r->count[q] = p->no_init_val ? 0 : 1;
        if (r->sum)
            r->sum[q] = p->no_init_val ? 0 : tj_reduce_load_wide(p, dst);
        else if (p->no_init_val)
            tj_reduce_neutral(p, dst, 1);
    }
}

/* After them: a mean divides, once per position. */
static void tj_visit_finish(const tj_run *r, const tj_cursor *c, int64_t off)
{
    const tj_plan *p = r->p;
    if (off < 0)
        return;
    for (int64_t e = 0, n = p->block_bytes / p->elem_size; e < n; e++) {
        int64_t q = tj_elem_at(r, c, off, e);
        if (r->count[q] > 0)
            tj_reduce_mean_store(p, r->out + q * p->elem_size, r->sum ? r->sum[q] : 0,
                                 r->count[q]);
        r->count[q] = 0;
    }
}

/* Every point of levels [from, nlevels) from cursor c, in row-major order. */
static void tj_ref_levels(const tj_run *r, int from, tj_cursor c)
{
    const tj_plan *p = r->p;
    int64_t iv[TJ_MAX_LEVELS] = {0};
    for (;;) {
        if (tj_in_rows(r, c.index))
            r->visit(r, &c, tj_tuple_offset(p, r->indices, c.index));
        int l = p->nlevels - 1;
        for (; l >= from; l--) {
            const tj_level *v = &p->levels[l];
            if (++iv[l] < v->trip) {
                c.index += v->index_step;
                c.indexed += v->indexed_step;
                c.dense += v->dense_step;
                break;
            }
            iv[l] = 0;
            c.index -= (v->trip - 1) * v->index_step;
            c.indexed -= (v->trip - 1) * v->indexed_step;
            c.dense -= (v->trip - 1) * v->dense_step;
        }
        if (l < from)
            return;
    }
}

/* The nest for units [begin, end), visiting every block with fn. */
static void tj_ref_units(tj_run *r, tj_visit_fn fn, int64_t begin, int64_t end)
{
    const tj_plan *p = r->p;
    r->visit = fn;
    if (p->row_units) { /* every tuple, those of rows [begin, end) applied */
        r->row_begin = begin;
        r->row_end = end;
        tj_ref_levels(r, 0, (tj_cursor){0, 0, 0});
        return;
    }
    for (int64_t u = begin; u < end; u++) {
        tj_cursor c = {0, 0, 0};
        for (int64_t l = p->unit_levels - 1, rest = u; l >= 0; l--) {
            const tj_level *v = &p->levels[l];
            int64_t i = rest % v->trip;
            rest /= v->trip;
            c.index += i * v->index_step;
            c.indexed += i * v->indexed_step;
            c.dense += i * v->dense_step;
        }
        tj_ref_levels(r, p->unit_levels, c);
    }
}

/* The scratch of a reduction's passes, from the thread's own (scratch.h):
 * counts for a mean, and integer means' sums. 0, or -1 when short. */
static int tj_ref_scratch(tj_run *r)
{
    const tj_plan *p = r->p;
    if (p->reduction != JIT_REDUCTION_MEAN)
        return 0;
    /* an empty out: one slot, never used, as the JIT's (reduce_ir.c) */
    int64_t elems = p->out_bytes / p->elem_size ? p->out_bytes / p->elem_size : 1;
    int wide = tj_reduce_wide_sum(p);
    int64_t *s = tj_scratch((size_t)elems * sizeof(int64_t) * (wide ? 2 : 1));
    if (!s) {
        tj_error_set("out of memory for the counts of a mean (%lld bytes)",
                     (long long)(elems * (int64_t)sizeof(int64_t) * (wide ? 2 : 1)));
        return -1;
    }
    r->count = s;
    r->sum = wide ? s + elems : NULL;
    return 0;
}

int tj_ref_run(const tj_plan *p, const void *data, const void *indices, const void *updates,
               void *out)
{
    int rc = tj_check_buffers(p, data, indices, updates, out);
    if (rc != JIT_OK)
        return rc;
    rc = tj_report_bad_index(p, indices);
    if (rc != JIT_OK)
        return rc;
    if (p->units == 0 && p->copy_bytes && out != data) { /* loose units of a zero trip */
        memcpy(out, data, (size_t)p->copy_bytes);
        return JIT_OK;
    }
    return tj_ref_range(p, data, indices, updates, out, 0, p->units);
}

int tj_ref_range(const tj_plan *p, const void *data, const void *indices, const void *updates,
                 void *out, int64_t begin, int64_t end)
{
    if (begin < 0)
        begin = 0;
    if (end > p->units)
        end = p->units;
    if (begin >= end)
        return JIT_OK;
    tj_run r = {p, data, updates, indices, out, NULL, NULL, NULL, 0, 0};
    if (tj_ref_scratch(&r) != 0) /* before anything is written */
        return JIT_STATUS_NO_MEMORY;
    if (p->copy_bytes && out != data) { /* a scatter: each unit copies its part first */
        int64_t at = begin * p->unit_copy_bytes, n = (end - begin) * p->unit_copy_bytes;
        if (p->unit_copy_bytes == 0) { /* loose units (tj_dyn_plan_sig): only run whole */
            at = 0;
            n = p->copy_bytes;
        }
        memcpy((char *)out + at, (const char *)data + at, (size_t)n);
    }
    if (p->visits == 0)
        return JIT_OK;
    if (p->reduction == JIT_REDUCTION_NONE) {
        tj_ref_units(&r, tj_visit_copy, begin, end);
        return JIT_OK;
    }
    if (tj_reduce_needs_passes(p))
        tj_ref_units(&r, tj_visit_start, begin, end);
    tj_ref_units(&r, tj_visit_reduce, begin, end);
    if (p->reduction == JIT_REDUCTION_MEAN)
        tj_ref_units(&r, tj_visit_finish, begin, end);
    return JIT_OK;
}
