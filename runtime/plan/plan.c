/* Building a plan's nest, and its canonical form: levels of one trip
 * dropped, neighbours that walk as one level merged, so that every way of
 * writing the same copy gets the same (shortest) nest. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "plan.h"
#include "shape.h"

void tj_plan_init(tj_plan *p, const jit_sig *s, tj_side indexed, int has_updates)
{
    memset(p, 0, sizeof *p);
    p->op = s->op;
    p->indexed = indexed;
    p->has_updates = has_updates;
    p->dtype = s->dtype;
    p->index_type = s->index_type;
    p->policy = s->index_policy;
    p->elem_size = jit_dtype_size(s->dtype);
    p->index_size = jit_dtype_size(s->index_type);
}

int tj_plan_reduction(tj_plan *p, const jit_sig *s, unsigned allowed, const char *op,
                      int version)
{
    jit_reduction r = s->reduction;
    if ((unsigned)r >= JIT_REDUCTION_COUNT)
        return tj_error_set("reduction=%d is not a known reduction", (int)r);
    if (!(allowed & (1u << r))) {
        char names[96] = "";
        size_t n = 0;
        for (int i = 0; i < JIT_REDUCTION_COUNT && n < sizeof names; i++)
            if (allowed & (1u << i))
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                      jit_reduction_name((jit_reduction)i));
        return tj_error_set("reduction=%s is not a reduction of %s-%d (%s)",
                            jit_reduction_name(r), op, version, names);
    }
    if (r == JIT_REDUCTION_MEAN && s->dtype == JIT_BOOL)
        return tj_error_set("reduction mean is not defined for bool data");
    p->reduction = r;
    p->no_init_val = r != JIT_REDUCTION_NONE && s->no_init_val;
    return 0;
}

void tj_plan_level(tj_plan *p, int64_t trip, int64_t index_step, int64_t indexed_step,
                   int64_t dense_step, int unit)
{
    if (p->nlevels == TJ_MAX_LEVELS)
        return; /* no op makes more: rank <= JIT_MAX_RANK */
    p->levels[p->nlevels++] = (tj_level){trip, index_step, indexed_step, dense_step};
    if (unit)
        p->unit_levels = p->nlevels;
}

/* The byte strides of a row-major tensor of shape s with elements of
 * elem bytes: each the product of the dims after it. A zero dim makes the
 * tensor's total 0 while a stride before it may still be out of int64's
 * range, so each is checked (SPEC: every byte count fits in int64). */
static int tj_byte_strides(const jit_shape *s, int elem, const char *name, int64_t *strides)
{
    char buf[128];
    int64_t stride = elem;
    for (int i = s->rank - 1; i >= 0; i--) {
        strides[i] = stride;
        if (i > 0 && tj_mul_i64(stride, s->dims[i], &stride))
            return tj_error_set("%s of shape %s with %d-byte elements: the stride of dimension "
                                "%d (the bytes of one step along it) overflows int64",
                                name, tj_shape_format(s, buf, sizeof buf), elem, i - 1);
    }
    return 0;
}

int tj_plan_element_levels(tj_plan *p, const jit_shape *d, const jit_shape *ix,
                           const jit_shape *dense, int a)
{
    int gather = p->indexed == TJ_INDEXED_SRC, units = 1;
    int64_t data_stride[JIT_MAX_RANK], index_stride[JIT_MAX_RANK], dense_stride[JIT_MAX_RANK];
    if (tj_byte_strides(d, p->elem_size, "data", data_stride) ||
        tj_byte_strides(ix, p->index_size, "indices", index_stride) ||
        tj_byte_strides(dense, p->elem_size, gather ? "output" : "updates", dense_stride))
        return -1;
    p->loose_units = gather ? 0 : a; /* a scatter's rows before the axis never collide */
    for (int i = 0; i < d->rank; i++) {
        units = gather || (units && i < a && ix->dims[i] == d->dims[i]);
        tj_plan_level(p, ix->dims[i], index_stride[i] / p->index_size,
                      i == a ? 0 : data_stride[i], dense_stride[i], units);
    }
    p->block_bytes = p->elem_size;
    p->depth = 1;
    p->dims[0] = d->dims[a];
    p->strides[0] = data_stride[a];
    p->tuple_shape = *ix;
    p->first_dim = a;
    return 0;
}

/* step * trip == want; a product out of int64's range equals nothing. */
static int tj_steps_reach(int64_t step, int64_t trip, int64_t want)
{
    int64_t reach;
    return tj_mul_i64(step, trip, &reach) == 0 && reach == want;
}

/* Level b walks on from where a's last iteration ends: one level of
 * a.trip * b.trip iterations does the same. */
static int tj_continues(const tj_level *a, const tj_level *b)
{
    return tj_steps_reach(b->index_step, b->trip, a->index_step) &&
           tj_steps_reach(b->indexed_step, b->trip, a->indexed_step) &&
           tj_steps_reach(b->dense_step, b->trip, a->dense_step);
}

/* Whether level v may take the fate `how` after the n levels kept so far
 * (the first `units` of them unit levels); walk 0: whether the merged
 * levels walk as one is not asked (an empty nest never walks). */
static int tj_level_fits(const tj_plan *p, int n, int units, const tj_level *v, int unit, int how,
                         int walk)
{
    if (how == TJ_LEVEL_DROP)
        return v->trip == 1;
    if (how == TJ_LEVEL_MERGE) /* a unit level merges only with a unit level */
        return n > 0 && unit == (n <= units) && (!walk || tj_continues(&p->levels[n - 1], v));
    return 1;
}

/* Drops and merges levels, as recipe says or (recipe NULL) as their
 * values allow, recording what it did; 1 if recipe does not fit, -1 when
 * a merged trip overflows. check 0: an empty nest, whose merges need not
 * walk as one (it never walks), but whose dropped levels must still be of
 * one trip (a zero trip dropped would make it run) and whose merges must
 * still keep unit levels apart from the others (the units split a
 * scatter's copy of data). Nor need the trips it merges multiply within
 * int64 (the zero trip may be in another level): such a merge does not
 * fit, and the nest is planned on its own. */
static int tj_plan_merge(tj_plan *p, const unsigned char *recipe, int check)
{
    int n = 0, units = 0;
    for (int l = 0; l < p->nlevels; l++) {
        const tj_level *v = &p->levels[l];
        int unit = l < p->unit_levels, how;
        if (recipe) {
            how = recipe[l];
            if (!tj_level_fits(p, n, units, v, unit, how, check))
                return 1;
        } else if (!check) {
            how = TJ_LEVEL_KEEP;
        } else {
            how = tj_level_fits(p, n, units, v, unit, TJ_LEVEL_DROP, 1)    ? TJ_LEVEL_DROP
                  : tj_level_fits(p, n, units, v, unit, TJ_LEVEL_MERGE, 1) ? TJ_LEVEL_MERGE
                                                                           : TJ_LEVEL_KEEP;
        }
        p->recipe[l] = (unsigned char)how;
        if (how == TJ_LEVEL_DROP)
            continue;
        if (how == TJ_LEVEL_MERGE && n > 0) {
            tj_level *m = &p->levels[n - 1];
            if (tj_mul_i64(m->trip, v->trip, &m->trip))
                return check ? tj_error_set("the number of index tuples overflows int64") : 1;
            m->index_step = v->index_step;
            m->indexed_step = v->indexed_step;
            m->dense_step = v->dense_step;
            continue;
        }
        p->levels[n++] = *v;
        if (unit)
            units = n;
    }
    p->nlevels = n;
    p->unit_levels = units;
    return 0;
}

/* *reach += (count - 1) * step, the bytes past the first of count steps
 * (a count of 0 takes one step back, as it always has); -1 when that
 * overflows. */
static int tj_reach_add(int64_t *reach, int64_t count, int64_t step)
{
    int64_t span;
    return tj_mul_i64(count - 1, step, &span) || tj_add_i64(*reach, span, reach);
}

/* Whether every update of a unit-less scatter stays in the row of data
 * dimension 0 its first index selects: the block, the other entries' reach
 * and the levels' steps on the indexed side fit in one row, and the rows
 * tile the data copied first. */
static int tj_plan_rows(const tj_plan *p)
{
    int64_t rows_bytes, reach = p->block_bytes;
    if (p->unit_levels || p->indexed != TJ_INDEXED_DST || p->depth < 1 || p->first_dim != 0 ||
        p->dims[0] < 2 || tj_mul_i64(p->dims[0], p->strides[0], &rows_bytes) ||
        p->copy_bytes != rows_bytes)
        return 0;
    /* a reach out of int64's range is no row's: the plan keeps one unit */
    for (int e = 1; e < p->depth; e++)
        if (tj_reach_add(&reach, p->dims[e], p->strides[e]))
            return 0;
    for (int l = 0; l < p->nlevels; l++)
        if (tj_reach_add(&reach, p->levels[l].trip, p->levels[l].indexed_step))
            return 0;
    return reach <= p->strides[0];
}

/* Whether the unit levels walk data's copy densely: the first spans it,
 * each next one its predecessor's step, so unit u copies bytes [u, u + 1)
 * x unit_copy_bytes. Loose units (tj_plan_loosen) may not: indices
 * smaller than data leave rows no unit holds. */
static int tj_units_tile_copy(const tj_plan *p)
{
    if (p->loose_units == 0 || p->unit_levels == 0 || p->row_units || p->copy_bytes == 0)
        return 1; /* only loose units may leave rows out */
    int64_t span = p->copy_bytes;
    for (int l = 0; l < p->unit_levels; l++) {
        const tj_level *v = &p->levels[l];
        if (!tj_steps_reach(v->indexed_step, v->trip, span))
            return 0;
        span = v->indexed_step;
    }
    return 1;
}

void tj_plan_loosen(tj_plan *p)
{
    if (p->loose_units > p->unit_levels && p->copy_bytes > 0)
        p->unit_levels = p->loose_units;
}

/* A mean keeps a count (and, for integers, a wide sum) per element of out
 * in scratch: up to 16 bytes an element, whose total must be a size the
 * kernels can compute, however small the elements themselves are. */
static int tj_plan_mean_scratch_fits(const tj_plan *p)
{
    int64_t elems = p->elem_size ? p->out_bytes / p->elem_size : 0;
    if (p->reduction != JIT_REDUCTION_MEAN || elems <= INT64_MAX / 16)
        return 0;
    return tj_error_set("reduction mean: the counts of data's (out's) %" PRId64
                        " elements (up to 16 bytes each) overflow int64; "
                        "data is too large for a mean",
                        elems);
}

static int tj_plan_count(tj_plan *p)
{
    int64_t visits = 1, units = 1;
    for (int l = 0; l < p->nlevels; l++) {
        if (tj_mul_i64(visits, p->levels[l].trip, &visits))
            return tj_error_set("the number of index tuples overflows int64");
        if (l < p->unit_levels)
            units *= p->levels[l].trip; /* a factor of visits: no overflow */
    }
    if (p->block_bytes == 0) /* empty blocks: nothing to copy, however many */
        visits = 0;
    if (tj_plan_rows(p)) {
        p->row_units = 1;
        units = p->dims[0];
    }
    if (p->is_bag) /* no levels: threads split its bags */
        units = p->bag.bags;
    p->visits = visits;
    p->units = units;
    p->unit_copy_bytes = units ? p->copy_bytes / units : 0;
    if (!tj_units_tile_copy(p))
        p->unit_copy_bytes = 0; /* loose units: the copy is made whole first */
    p->tuples = p->depth ? p->indices_elems / p->depth : 0;
    return tj_plan_mean_scratch_fits(p);
}

static int tj_plan_empty(const tj_plan *p)
{
    for (int l = 0; l < p->nlevels; l++)
        if (p->levels[l].trip == 0)
            return 1;
    return 0;
}

int tj_plan_finish(tj_plan *p)
{
    p->written_levels = p->nlevels;
    /* an empty nest is left as it is: it never runs */
    if (tj_plan_merge(p, NULL, !tj_plan_empty(p)))
        return -1;
    return tj_plan_count(p);
}

int tj_plan_finish_as(tj_plan *p, const unsigned char *recipe, int written)
{
    if (p->nlevels != written)
        return 1;
    p->written_levels = p->nlevels;
    /* an empty nest keeps a zero trip through its merges: it never runs */
    int rc = tj_plan_merge(p, recipe, !tj_plan_empty(p));
    return rc ? rc : tj_plan_count(p);
}
