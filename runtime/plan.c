/* Building a plan's nest, and its canonical form: levels of one trip
 * dropped, neighbours that walk as one level merged, so that every way of
 * writing the same copy gets the same (shortest) nest. */
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
    if (!(allowed & (1u << r)))
        return tj_error_set("reduction %s is not one of %s-%d's", jit_reduction_name(r), op,
                            version);
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

/* Level b walks on from where a's last iteration ends: one level of
 * a.trip * b.trip iterations does the same. */
static int tj_continues(const tj_level *a, const tj_level *b)
{
    return a->index_step == b->index_step * b->trip &&
           a->indexed_step == b->indexed_step * b->trip &&
           a->dense_step == b->dense_step * b->trip;
}

static void tj_plan_merge(tj_plan *p)
{
    int n = 0, units = 0;
    for (int l = 0; l < p->nlevels; l++) {
        const tj_level *v = &p->levels[l];
        int unit = l < p->unit_levels;
        if (v->trip == 1)
            continue;
        /* a unit level merges only with a unit level: units stay independent */
        if (n > 0 && unit == (n <= units) && tj_continues(&p->levels[n - 1], v)) {
            tj_level *m = &p->levels[n - 1];
            m->trip *= v->trip;
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
}

int tj_plan_finish(tj_plan *p)
{
    int64_t visits = 1, units = 1;
    int empty = 0;
    for (int l = 0; l < p->nlevels; l++)
        empty |= p->levels[l].trip == 0;
    if (!empty) /* an empty nest is left as it is: it never runs */
        tj_plan_merge(p);
    for (int l = 0; l < p->nlevels; l++) {
        if (tj_mul_i64(visits, p->levels[l].trip, &visits))
            return tj_error_set("the number of index tuples overflows int64");
        if (l < p->unit_levels)
            units *= p->levels[l].trip; /* a factor of visits: no overflow */
    }
    if (p->block_bytes == 0) /* empty blocks: nothing to copy, however many */
        visits = 0;
    p->visits = visits;
    p->units = units;
    p->unit_copy_bytes = units ? p->copy_bytes / units : 0;
    p->tuples = p->depth ? p->indices_elems / p->depth : 0;
    return 0;
}
