/* Dynamic signatures: binding a call's dims, the family's template, and
 * the per-thread memory of the plans of shapes seen before. */
#include "dyn.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "op.h"
#include "ref_kernel.h"
#include "scratch.h"

/* The inputs whose dims a call passes, in the order it passes them. */
typedef struct tj_inputs {
    int n;
    jit_shape *shape[3];
    int64_t *bound[3];
    const char *name[3];
} tj_inputs;

static int tj_inputs_of(jit_sig *s, tj_inputs *in)
{
    const tj_op_def *def = tj_op_find(s->op);
    if (!def)
        return -1;
    *in = (tj_inputs){2,
                      {&s->data_shape, &s->indices_shape, &s->updates_shape},
                      {s->data_bound, s->indices_bound, s->updates_bound},
                      {"data", "indices", "updates"}};
    if (def->info.has_updates)
        in->n = 3;
    return 0;
}

int tj_sig_dynamic(const jit_sig *sig)
{
    jit_sig s = *sig;
    tj_inputs in;
    if (tj_inputs_of(&s, &in))
        return 0;
    for (int i = 0; i < in.n; i++)
        for (int d = 0; d < in.shape[i]->rank && d < JIT_MAX_RANK; d++)
            if (in.shape[i]->dims[d] == JIT_DIM_DYNAMIC)
                return 1;
    return 0;
}

int jit_sig_is_dynamic(const jit_sig *sig)
{
    return sig ? tj_sig_dynamic(sig) : 0;
}

/* The ranks in range and every bound of a dynamic dim not negative. */
static int tj_dyn_check_bounds(jit_sig *s, int *ndims)
{
    tj_inputs in;
    if (tj_inputs_of(s, &in))
        return tj_error_set("op %d is not an op of the family", (int)s->op);
    *ndims = 0;
    for (int i = 0; i < in.n; i++) {
        jit_shape *sh = in.shape[i];
        if (sh->rank < 0 || sh->rank > JIT_MAX_RANK)
            return tj_error_set("rank(%s)=%d is outside [0, %d]", in.name[i], sh->rank,
                                JIT_MAX_RANK);
        for (int d = 0; d < JIT_MAX_RANK; d++) {
            int dynamic = d < sh->rank && sh->dims[d] == JIT_DIM_DYNAMIC;
            if (dynamic && in.bound[i][d] < 0)
                return tj_error_set("%s_bound[%d]=%" PRId64 " must not be negative",
                                    in.name[i], d, in.bound[i][d]);
            if (!dynamic) /* ignored: zeroed so that the key ignores it too */
                in.bound[i][d] = 0;
        }
        *ndims += sh->rank;
    }
    return 0;
}

/* sig with dims in place of its dynamic dims, checked against its static
 * dims and the bounds (not yet against the op's rules). */
static int tj_sig_bind_dims(const jit_sig *sig, const int64_t *dims, jit_sig *out)
{
    tj_inputs in;
    *out = *sig;
    if (tj_inputs_of(out, &in))
        return tj_error_set("op %d is not an op of the family", (int)sig->op);
    int at = 0;
    for (int i = 0; i < in.n; i++) {
        jit_shape *sh = in.shape[i];
        if (sh->rank < 0 || sh->rank > JIT_MAX_RANK)
            return tj_error_set("rank(%s)=%d is outside [0, %d]", in.name[i], sh->rank,
                                JIT_MAX_RANK);
        for (int d = 0; d < sh->rank; d++, at++) {
            int64_t v = dims[at], bound = in.bound[i][d];
            if (sh->dims[d] != JIT_DIM_DYNAMIC) {
                if (v != sh->dims[d])
                    return tj_error_set("%s.shape[%d]=%" PRId64 " must be %" PRId64
                                        " (static in the signature)",
                                        in.name[i], d, v, sh->dims[d]);
                continue;
            }
            if (v < 0)
                return tj_error_set("%s.shape[%d]=%" PRId64 " must not be negative",
                                    in.name[i], d, v);
            if (bound > 0 && v > bound)
                return tj_error_set("%s.shape[%d]=%" PRId64 " exceeds its bound %" PRId64,
                                    in.name[i], d, v, bound);
            sh->dims[d] = v;
        }
        memset(in.bound[i], 0, sizeof(int64_t) * JIT_MAX_RANK);
    }
    return 0;
}

int jit_sig_bind(const jit_sig *sig, const int64_t *dims, jit_sig *out)
{
    tj_plan p;
    if (!sig || !out || !dims)
        return tj_error_set("jit_sig_bind: NULL argument");
    return tj_sig_bind_dims(sig, dims, out) || tj_sig_plan(out, &p, NULL) ? -1 : 0;
}

/* The search for the template's instances. A rule may tie a dynamic dim
 * to a static one, possibly at another position (ScatterUpdate's updates
 * hold indices' dims after data's first `axis` ones) or to a number the
 * ranks fix (ScatterNDUpdate's tuple length): the op knows its rules, this
 * file does not. So the search tries the dynamic dims free (the
 * placeholder) first, then with one, two or three of them given a value
 * among the signature's static dims and the small numbers, until an
 * instance is valid; its twin, every free dim another placeholder, must be
 * valid too and plan the same nest. Dims it had to tie become constants of
 * the template: a call where such a dim differs, if any is valid, runs on
 * the reference kernel (tj_dyn_fits). */
#define TJ_DYN_MAX_TIES 3
#define TJ_DYN_MAX_TRIES 20000
#define TJ_DYN_MAX_CANDS 24

typedef struct tj_dyn_search {
    jit_sig sig;                        /* the instance being tried */
    int64_t *slot[TJ_DYN_MAX_DIMS];     /* its dynamic dims */
    int nslots;
    int64_t cand[TJ_DYN_MAX_CANDS];     /* values a tied dim may take */
    int ncand;
    int64_t free_a, free_b;             /* the placeholders of free dims */
    int tries;
    int found_valid;                    /* an instance was valid (found_sig) */
    jit_sig found_sig;
} tj_dyn_search;

static int tj_has(const int64_t *v, int n, int64_t x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* The dynamic dims of the instance, and the candidate values. */
static void tj_dyn_search_init(tj_dyn_search *s, const jit_sig *sig)
{
    tj_inputs in;
    memset(s, 0, sizeof *s);
    s->sig = *sig;
    if (tj_inputs_of(&s->sig, &in))
        return;
    /* the op's own ties first, to a fixpoint (each pass sets a dim or ends) */
    const tj_op_def *def = tj_op_find(sig->op);
    for (int pass = 0; def && def->tie && pass < TJ_DYN_MAX_DIMS && def->tie(&s->sig); pass++)
        ;
    int64_t statics[TJ_DYN_MAX_DIMS];
    int nstatic = 0;
    for (int i = 0; i < in.n; i++)
        for (int d = 0; d < in.shape[i]->rank; d++) {
            int64_t *x = &in.shape[i]->dims[d];
            if (*x == JIT_DIM_DYNAMIC)
                s->slot[s->nslots++] = x;
            else if (*x >= 0 && !tj_has(statics, nstatic, *x))
                statics[nstatic++] = *x;
        }
    for (int64_t small = 1; small <= 4; small++) /* tuple lengths, ranks */
        if (!tj_has(statics, nstatic, small) && nstatic < TJ_DYN_MAX_DIMS)
            statics[nstatic++] = small;
    for (int i = 0; i < nstatic && s->ncand < TJ_DYN_MAX_CANDS; i++)
        s->cand[s->ncand++] = statics[i];
    /* placeholders no static dim equals: a free dim never looks tied */
    static const int64_t primes[] = {5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
    int got = 0;
    for (size_t i = 0; i < sizeof primes / sizeof *primes && got < 2; i++)
        if (!tj_has(statics, nstatic, primes[i]))
            *(got++ ? &s->free_b : &s->free_a) = primes[i];
}

/* Sets the instance: the tied slots their values, the others v. */
static void tj_dyn_assign(tj_dyn_search *s, const int *tied, const int *value, int nt, int64_t v)
{
    for (int i = 0; i < s->nslots; i++)
        *s->slot[i] = v;
    for (int t = 0; t < nt; t++)
        *s->slot[tied[t]] = s->cand[value[t]];
}

static int tj_same_structure(const tj_plan *a, const tj_plan *b)
{
    return a->written_levels == b->written_levels && a->nlevels == b->nlevels &&
           a->depth == b->depth && memcmp(a->recipe, b->recipe, sizeof a->recipe) == 0;
}

/* The template from the instance with these ties (free dims at free_a)
 * and its twin (free_b): 0 when both are valid and plan one nest. */
static int tj_dyn_try(tj_dyn *d, tj_dyn_search *s, const int *tied, const int *value, int nt)
{
    tj_plan pb;
    jit_shape oa, ob;
    s->tries++;
    tj_dyn_assign(s, tied, value, nt, s->free_a);
    if (tj_sig_plan(&s->sig, &d->tmpl, &oa))
        return -1;
    if (!s->found_valid) {
        s->found_valid = 1;
        s->found_sig = s->sig;
    }
    tj_dyn_assign(s, tied, value, nt, s->free_b);
    if (tj_sig_plan(&s->sig, &pb, &ob) || !tj_same_structure(&d->tmpl, &pb))
        return -1;
    const uint64_t *wa = (const uint64_t *)(const void *)&d->tmpl;
    const uint64_t *wb = (const uint64_t *)(const void *)&pb;
    memset(d->vary, 0, sizeof d->vary);
    for (size_t w = 0; w < sizeof(tj_plan) / 8; w++)
        if (wa[w] != wb[w])
            d->vary[w / 64] |= (uint64_t)1 << (w % 64);
    d->out_shape = oa;
    for (int i = 0; i < oa.rank; i++)
        if (oa.dims[i] != ob.dims[i])
            d->out_shape.dims[i] = JIT_DIM_DYNAMIC;
    return 0;
}

/* Every choice of nt slots (increasing, from slot `from`) and of their
 * values; 0 at the first that gives a template. */
static int tj_dyn_ties(tj_dyn *d, tj_dyn_search *s, int *tied, int *value, int t, int nt,
                       int from)
{
    if (t == nt)
        return tj_dyn_try(d, s, tied, value, nt);
    for (int i = from; i < s->nslots; i++)
        for (int c = 0; c < s->ncand; c++) {
            if (s->tries >= TJ_DYN_MAX_TRIES)
                return -1;
            tied[t] = i;
            value[t] = c;
            if (tj_dyn_ties(d, s, tied, value, t + 1, nt, i + 1) == 0)
                return 0;
        }
    return -1;
}

/* 0 and d's template, or -1 (s->found_sig then a valid instance if
 * s->found_valid). */
static int tj_dyn_search_template(tj_dyn *d, tj_dyn_search *s)
{
    int tied[TJ_DYN_MAX_TIES], value[TJ_DYN_MAX_TIES];
    for (int nt = 0; nt <= TJ_DYN_MAX_TIES && nt <= s->nslots; nt++)
        if (tj_dyn_ties(d, s, tied, value, 0, nt, 0) == 0)
            return 0;
    return -1;
}

/* d's template, or (failing that) a valid instance's plan, through s. */
static int tj_dyn_template(tj_dyn *d, tj_dyn_search *s)
{
    char first[TJ_ERROR_MAX];
    tj_dyn_search_init(s, &d->sig);
    tj_dyn_assign(s, NULL, NULL, 0, s->free_a);
    if (tj_sig_plan(&s->sig, &d->tmpl, NULL) != 0)
        snprintf(first, sizeof first, "%s", jit_last_error());
    else
        first[0] = '\0';
    if (tj_dyn_search_template(d, s) == 0) {
        d->jit_ok = 1;
        return 0;
    }
    /* No pair of instances plans one nest: a dim that decides the nest
     * itself (GatherND's tuple length k, free in the family) is dynamic.
     * The family is valid if some shape is; each call is then planned on
     * its own. */
    int ok = s->found_valid && tj_sig_plan(&s->found_sig, &d->tmpl, &d->out_shape) == 0;
    for (int64_t v = 1; !ok && v >= 0; v--) { /* a family valid only when empty, say */
        tj_dyn_assign(s, NULL, NULL, 0, v);
        ok = tj_sig_plan(&s->sig, &d->tmpl, &d->out_shape) == 0;
    }
    if (!ok)
        return tj_error_set("no shape of this dynamic signature is valid (with its dynamic dims "
                            "at %" PRId64 ": %s)",
                            s->free_a, first[0] ? first : jit_last_error());
    for (int i = 0; i < d->out_shape.rank; i++)
        d->out_shape.dims[i] = JIT_DIM_DYNAMIC;
    memset(d->vary, 0xff, sizeof d->vary);
    snprintf(d->why, sizeof d->why,
             "its dynamic dims decide the loop nest itself (the tuple length or the levels): "
             "the reference kernel plans each call");
    return 0;
}

int tj_dyn_build(const jit_sig *sig, tj_dyn *d)
{
    memset(d, 0, sizeof *d);
    const tj_op_def *def = tj_op_find(sig->op);
    if (!def)
        return -1;
    d->sig = *sig;
    tj_sig_normalize(def, &d->sig);
    if (tj_dyn_check_bounds(&d->sig, &d->ndims))
        return -1;
    tj_dyn_search *s = tj_malloc(sizeof *s); /* large: off the stack */
    if (!s)
        return tj_error_set("out of memory planning a dynamic signature");
    int rc = tj_dyn_template(d, s);
    tj_free(s);
    return rc;
}

int tj_dyn_varies(const tj_dyn *d, const void *field)
{
    size_t w = (size_t)((const char *)field - (const char *)&d->tmpl) / 8;
    return w >= TJ_DYN_WORDS || ((d->vary[w / 64] >> (w % 64)) & 1);
}

int tj_sig_template(const jit_sig *sig, tj_plan *plan, jit_shape *out, tj_dyn *d)
{
    if (!sig)
        return tj_error_set("the signature is NULL");
    if (!tj_sig_dynamic(sig))
        return tj_sig_plan(sig, plan, out);
    if (tj_dyn_build(sig, d))
        return -1;
    *plan = d->tmpl;
    plan->dyn = d;
    if (out)
        *out = d->out_shape;
    return 0;
}

/* Whether plan p runs on the template's code: every word the template
 * holds constant is the same. */
static int tj_dyn_fits(const tj_dyn *d, const tj_plan *p)
{
    const uint64_t *wt = (const uint64_t *)(const void *)&d->tmpl;
    const uint64_t *wp = (const uint64_t *)(const void *)p;
    for (size_t w = 0; w < sizeof(tj_plan) / 8; w++)
        if (!((d->vary[w / 64] >> (w % 64)) & 1) && wt[w] != wp[w])
            return 0;
    return 1;
}

/* The plan of one shape; -1 (error set) when it breaks a rule. */
static int tj_dyn_plan_shape(const tj_dyn *d, const int64_t *dims, tj_plan *p, int *fits)
{
    jit_sig s;
    const tj_op_def *def = tj_op_find(d->sig.op);
    if (tj_sig_bind_dims(&d->sig, dims, &s) || !def)
        return -1;
    memset(p, 0, sizeof *p);
    if (def->plan(&s, p, &(jit_shape){0}) || tj_check_threads(s.threads, &p->threads))
        return -1;
    int rc;
    if (d->jit_ok) {
        tj_plan as = *p;
        rc = tj_plan_finish_as(&as, d->tmpl.recipe, d->tmpl.written_levels);
        if (rc < 0)
            return -1;
        if (rc == 0 && tj_dyn_fits(d, &as)) {
            *p = as;
            *fits = 1;
            return 0;
        }
    }
    *fits = 0;
    return tj_plan_finish(p);
}

/* Remembered plans of one thread: a few shapes, replaced round robin. */
#define TJ_DYN_MEMO 4

typedef struct tj_dyn_seen {
    const void *who;
    uint64_t epoch;
    int ndims, fits;
    unsigned needs; /* bit i: buffer i (data, indices, updates, out) must not be NULL */
    int64_t dims[TJ_DYN_MAX_DIMS];
    tj_plan plan;
} tj_dyn_seen;

typedef struct tj_dyn_memo {
    unsigned next, last; /* the next to replace; the last found (tried first) */
    tj_dyn_seen seen[TJ_DYN_MEMO];
} tj_dyn_memo;

/* Bumped whenever a kernel goes; entries of another epoch are stale. */
static _Atomic uint64_t tj_dyn_epoch = 1;

void tj_dyn_forget(void)
{
    atomic_fetch_add_explicit(&tj_dyn_epoch, 1, memory_order_acq_rel);
}

/* n < 0: the entry's own count (same who and epoch: same kernel). */
static int tj_dyn_same(const tj_dyn_seen *s, const void *who, uint64_t epoch,
                       const int64_t *dims, int n)
{
    if (s->who != who || s->epoch != epoch || (n >= 0 && s->ndims != n))
        return 0;
    for (int i = 0; i < s->ndims; i++)
        if (s->dims[i] != dims[i])
            return 0;
    return 1;
}

static const tj_dyn_seen *tj_dyn_lookup(tj_dyn_memo *m, const void *who, uint64_t epoch,
                                        const int64_t *dims, int n)
{
    for (unsigned i = 0; i < TJ_DYN_MEMO; i++) {
        unsigned at = (m->last + i) % TJ_DYN_MEMO;
        if (tj_dyn_same(&m->seen[at], who, epoch, dims, n)) {
            m->last = at;
            return &m->seen[at];
        }
    }
    return NULL;
}

/* The buffers a plan needs (tj_check_buffers' rule), as tj_dyn_seen.needs. */
static unsigned tj_dyn_needs(const tj_plan *p)
{
    return (p->data_bytes ? 1u : 0) | (p->indices_elems ? 2u : 0) |
           (p->has_updates && p->updates_bytes ? 4u : 0) | (p->out_bytes ? 8u : 0);
}

int tj_dyn_recall(const void *who, const int64_t *dims, const void *data, const void *indices,
                  const void *updates, const void *out, const tj_plan **plan, int *fits,
                  int *status)
{
    tj_dyn_memo *m = dims ? tj_scratch_shapes(sizeof(tj_dyn_memo)) : NULL;
    if (!m)
        return 0;
    uint64_t epoch = atomic_load_explicit(&tj_dyn_epoch, memory_order_acquire);
    const tj_dyn_seen *hit = &m->seen[m->last]; /* a caller's usual case: the same shape */
    if (!tj_dyn_same(hit, who, epoch, dims, -1) && !(hit = tj_dyn_lookup(m, who, epoch, dims, -1)))
        return 0;
    unsigned null = (data ? 0u : 1u) | (indices ? 0u : 2u) | (updates ? 0u : 4u) | (out ? 0u : 8u);
    *status = null & hit->needs ? tj_check_buffers(&hit->plan, data, indices, updates, out)
                                : JIT_OK;
    *plan = &hit->plan;
    *fits = hit->fits;
    return 1;
}

int tj_dyn_plan(const void *who, const tj_dyn *d, const int64_t *dims, const void *data,
                const void *indices, const void *updates, const void *out, const tj_plan **plan,
                int *fits)
{
    if (!dims) {
        tj_error_set("the dims of a dynamic kernel's call are NULL");
        return JIT_STATUS_BAD_POINTER;
    }
    tj_dyn_memo *m = tj_scratch_shapes(sizeof(tj_dyn_memo));
    if (!m) {
        tj_error_set("out of memory for the plans of a dynamic kernel");
        return JIT_STATUS_NO_MEMORY;
    }
    uint64_t epoch = atomic_load_explicit(&tj_dyn_epoch, memory_order_acquire);
    const tj_dyn_seen *hit = tj_dyn_lookup(m, who, epoch, dims, d->ndims);
    if (!hit) {
        tj_dyn_seen *s = &m->seen[m->next];
        s->who = NULL; /* unusable until complete */
        if (tj_dyn_plan_shape(d, dims, &s->plan, &s->fits))
            return JIT_STATUS_BAD_SHAPE;
        m->next = (m->next + 1) % TJ_DYN_MEMO;
        memcpy(s->dims, dims, sizeof(int64_t) * (size_t)d->ndims);
        s->ndims = d->ndims;
        s->needs = tj_dyn_needs(&s->plan);
        s->epoch = epoch;
        s->who = who;
        hit = s;
    }
    int rc = tj_check_buffers(&hit->plan, data, indices, updates, out);
    if (rc != JIT_OK)
        return rc;
    *plan = &hit->plan;
    *fits = hit->fits;
    return JIT_OK;
}

int tj_dyn_ref_call(const void *who, const tj_dyn *d, const int64_t *dims, const void *data,
                    const void *indices, const void *updates, void *out)
{
    const tj_plan *p;
    int fits;
    int rc = tj_dyn_plan(who, d, dims, data, indices, updates, out, &p, &fits);
    if (rc != JIT_OK)
        return rc;
    return tj_ref_run(p, data, indices, d->tmpl.has_updates ? updates : NULL, out);
}
