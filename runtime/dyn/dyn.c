/* Dynamic signatures: binding a call's dims, planning a call (with the
 * family's template: dyn_template.c), and the per-thread memory of the
 * plans of shapes seen before. */
#include "dyn.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "op.h"
#include "bag_ref.h"
#include "ref_kernel.h"
#include "scratch.h"
#include "user_kernel.h"

static void tj_input_add(tj_inputs *in, const int *rank, int64_t *dims, int64_t *bound,
                         int nbound, const char *name)
{
    in->rank[in->n] = rank;
    in->dims[in->n] = dims;
    in->bound[in->n] = bound;
    in->nbound[in->n] = nbound;
    in->name[in->n++] = name;
}

static const int tj_rank_one = 1;

void tj_inputs_of(const tj_op_def *def, jit_sig *s, tj_inputs *in)
{
    unsigned a = def->info.attrs;
    int bag = (a & JIT_ATTR_BAG) != 0;
    in->n = 0;
    tj_input_add(in, &s->data_shape.rank, s->data_shape.dims, s->data_bound, JIT_MAX_RANK,
                 bag ? "table" : "data");
    tj_input_add(in, &s->indices_shape.rank, s->indices_shape.dims, s->indices_bound,
                 JIT_MAX_RANK, "indices");
    if (def->info.has_updates || (a & JIT_ATTR_OFFSETS))
        tj_input_add(in, &s->updates_shape.rank, s->updates_shape.dims, s->updates_bound,
                     JIT_MAX_RANK,
                     !bag ? "updates" : a & JIT_ATTR_NUM_SEGMENTS ? "segment_ids" : "offsets");
    if (a & JIT_ATTR_NUM_SEGMENTS) /* S: the output's first dim, a dim like the others */
        tj_input_add(in, &tj_rank_one, &s->num_segments, &s->num_segments_bound, 1,
                     "num_segments");
}

int tj_sig_dynamic(const tj_op_def *def, const jit_sig *sig)
{
    jit_sig s = *sig;
    tj_inputs in;
    tj_inputs_of(def, &s, &in);
    for (int i = 0; i < in.n; i++)
        for (int d = 0; d < *in.rank[i] && d < JIT_MAX_RANK; d++)
            if (in.dims[i][d] == JIT_DIM_DYNAMIC)
                return 1;
    return 0;
}

int jit_sig_is_dynamic(const jit_sig *sig)
{
    const tj_op_def *def = sig ? tj_op_find(sig->op) : NULL;
    return def ? tj_sig_dynamic(def, sig) : 0;
}

int tj_dyn_check_bounds(const tj_op_def *def, jit_sig *s, int *ndims)
{
    tj_inputs in;
    tj_inputs_of(def, s, &in);
    *ndims = 0;
    for (int i = 0; i < in.n; i++) {
        int rank = *in.rank[i];
        int64_t *dims = in.dims[i];
        if (rank < 0 || rank > JIT_MAX_RANK)
            return tj_error_set("rank(%s)=%d is outside [0, %d]", in.name[i], rank,
                                JIT_MAX_RANK);
        for (int d = 0; d < in.nbound[i]; d++) {
            int dynamic = d < rank && dims[d] == JIT_DIM_DYNAMIC;
            if (d < rank && dims[d] < 0 && !dynamic) /* the search codes dynamic
                                                         dims as negatives */
                return tj_error_set("%s.shape[%d]=%" PRId64 " must not be negative "
                                    "(JIT_DIM_DYNAMIC, -1, marks a dynamic dim)",
                                    in.name[i], d, dims[d]);
            if (dynamic && in.bound[i][d] < 0)
                return tj_error_set("%s_bound[%d]=%" PRId64 " must not be negative",
                                    in.name[i], d, in.bound[i][d]);
            if (!dynamic) /* ignored: zeroed so that the key ignores it too */
                in.bound[i][d] = 0;
        }
        *ndims += rank;
    }
    return 0;
}

/* How a message names dim d of input i: "indices.shape[1]", but S, a
 * count the call passes as a dim of its own, as "num_segments". */
static int tj_is_count(const tj_inputs *in, int i)
{
    return strcmp(in->name[i], "num_segments") == 0;
}

static const char *tj_dim_label(const tj_inputs *in, int i, int d, char *buf, size_t len)
{
    if (tj_is_count(in, i))
        return "num_segments";
    snprintf(buf, len, "%s.shape[%d]", in->name[i], d);
    return buf;
}

/* One dynamic dim's value v against its bound: 0, or -1 with the error. */
static int tj_dim_fits(const tj_inputs *in, int i, int d, int64_t v, int64_t bound)
{
    char buf[64];
    if (v < 0)
        return tj_error_set("%s=%" PRId64 " must not be negative",
                            tj_dim_label(in, i, d, buf, sizeof buf), v);
    if (bound < 0)
        return tj_is_count(in, i)
                   ? tj_error_set("num_segments_bound=%" PRId64 " must not be negative", bound)
                   : tj_error_set("%s_bound[%d]=%" PRId64 " must not be negative", in->name[i],
                                  d, bound);
    if (bound > 0 && v > bound)
        return tj_error_set("%s=%" PRId64 " exceeds its bound %" PRId64,
                            tj_dim_label(in, i, d, buf, sizeof buf), v, bound);
    return 0;
}

/* sig with dims in place of its dynamic dims, checked against its static
 * dims and the bounds (not yet against the op's rules). */
static int tj_sig_bind_dims(const tj_op_def *def, const jit_sig *sig, const int64_t *dims,
                            jit_sig *out)
{
    tj_inputs in;
    *out = *sig;
    tj_inputs_of(def, out, &in);
    int at = 0;
    for (int i = 0; i < in.n; i++) {
        int rank = *in.rank[i];
        int64_t *sh = in.dims[i];
        if (rank < 0 || rank > JIT_MAX_RANK)
            return tj_error_set("rank(%s)=%d is outside [0, %d]", in.name[i], rank,
                                JIT_MAX_RANK);
        for (int d = 0; d < rank; d++, at++) {
            int64_t v = dims[at];
            if (sh[d] != JIT_DIM_DYNAMIC) {
                char buf[64];
                if (v != sh[d])
                    return tj_error_set("%s=%" PRId64 " must be %" PRId64
                                        " (static in the signature)",
                                        tj_dim_label(&in, i, d, buf, sizeof buf), v, sh[d]);
                continue;
            }
            if (tj_dim_fits(&in, i, d, v, in.bound[i][d]) != 0)
                return -1;
            sh[d] = v;
        }
        memset(in.bound[i], 0, sizeof(int64_t) * (size_t)in.nbound[i]);
    }
    return 0;
}

int jit_sig_bind(const jit_sig *sig, const int64_t *dims, jit_sig *out)
{
    tj_plan p;
    jit_sig s;
    if (!sig || !out || !dims)
        return tj_error_set("jit_sig_bind: NULL argument");
    const tj_op_def *def = tj_op_find(sig->op);
    if (!def)
        return tj_error_set("op %d is not an op of the family", (int)sig->op);
    if (tj_sig_bind_dims(def, sig, dims, &s) || tj_sig_plan(def, &s, &p, NULL))
        return -1; /* *out as it was */
    *out = s;
    return 0;
}

int tj_dyn_fits(const tj_dyn *d, const tj_plan *p)
{
    const uint64_t *wt = (const uint64_t *)(const void *)&d->tmpl;
    const uint64_t *wp = (const uint64_t *)(const void *)p;
    for (size_t w = 0; w < sizeof(tj_plan) / 8; w++)
        if (!((d->vary[w / 64] >> (w % 64)) & 1) && wt[w] != wp[w])
            return 0;
    return 1;
}

int tj_dyn_plan_sig(const tj_dyn *d, const jit_sig *s, int as_template, tj_plan *p, int *fits)
{
    memset(p, 0, sizeof *p);
    if (d->def->plan(s, p, &(jit_shape){0}) || tj_check_threads(s->threads, &p->threads))
        return -1;
    tj_plan_loosen(p); /* as the template was planned (tj_sig_plan_dyn) */
    int rc;
    if (as_template) {
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

/* The plan of one shape; -1 (error set) when it breaks a rule. */
static int tj_dyn_plan_shape(const tj_dyn *d, const int64_t *dims, tj_plan *p, int *fits)
{
    jit_sig s;
    if (tj_sig_bind_dims(d->def, &d->sig, dims, &s))
        return -1;
    return tj_dyn_plan_sig(d, &s, d->jit_ok, p, fits);
}

/* The engine of one call of k with dims, planned afresh (no memory of it
 * kept: a query must not change what later calls find). */
static int tj_dyn_call_engine(const tj_kernel *k, int tiered, const int64_t *dims,
                              jit_engine *engine, char *why, size_t why_len)
{
    const tj_dyn *d = k->plan.dyn;
    tj_plan p;
    int fits = 0;
    if (!d)
        return tj_error_set("not a dynamic kernel (its signature has no dynamic dim): "
                            "jit_info says its engine");
    if (tj_dyn_plan_shape(d, dims, &p, &fits))
        return -1;
    const char *no = k->engine != JIT_ENGINE_JIT && tiered
                         ? "tiered: the JIT kernel is not ready yet (or could not be made)"
                     : k->engine != JIT_ENGINE_JIT ? k->why
                     : !fits ? "this shape does not fit the loop nest the kernel's code was "
                               "made for (its dims do not walk as the template's did): the "
                               "reference kernel plans it"
                             : NULL;
    *engine = no ? JIT_ENGINE_REFERENCE : JIT_ENGINE_JIT;
    if (why && why_len)
        snprintf(why, why_len, "%s", no ? no : "");
    return 0;
}

int jit_dynamic_engine(jit_kernel kernel, const int64_t *dims, jit_engine *engine, char *why,
                       size_t why_len)
{
    int tiered;
    tj_cache_pinned pin;
    if (!dims || !engine)
        return tj_error_set("jit_dynamic_engine: NULL argument");
    const tj_kernel *k = tj_user_kernel((tj_entry_fn)kernel, JIT_OP_NONE, &tiered, &pin, NULL);
    if (!k)
        return -1;
    int rc = tj_dyn_call_engine(k, tiered, dims, engine, why, why_len);
    tj_user_kernel_done(&pin);
    return rc;
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
           ((p->has_updates || p->is_bag) && p->updates_bytes ? 4u : 0) |
           (p->out_bytes ? 8u : 0);
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

int tj_dyn_bag_ref_call(const void *who, const tj_dyn *d, const int64_t *dims, const void *table,
                        const void *indices, const void *offsets, const void *weights,
                        void *out)
{
    const tj_plan *p;
    int fits;
    int rc = tj_dyn_plan(who, d, dims, table, indices, offsets, out, &p, &fits);
    if (rc != JIT_OK)
        return rc;
    return tj_bag_ref_run(p, table, indices, offsets, weights, out);
}
