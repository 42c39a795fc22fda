#include "layer_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t tj_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void tj_fill(uint64_t *s, void *buf, int64_t bytes)
{
    unsigned char *b = buf;
    for (int64_t i = 0; i < bytes; i += 8) {
        uint64_t v = tj_next(s);
        memcpy(b + i, &v, (size_t)(bytes - i < 8 ? bytes - i : 8));
    }
}

static void tj_store(jit_dtype t, void *p, int64_t i, int64_t v)
{
    switch (jit_dtype_size(t)) {
    case 1: ((int8_t *)p)[i] = (int8_t)v; break;
    case 2: ((int16_t *)p)[i] = (int16_t)v; break;
    case 4: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
    }
}

/* indices valid for dims[i % depth]; when bad, one entry set to dim. */
static void tj_fill_indices(uint64_t *s, jit_dtype t, void *idx, int64_t n, const int64_t *dims,
                            int depth, int bad)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t d = dims[depth ? i % depth : 0];
        tj_store(t, idx, i, d > 0 ? (int64_t)(tj_next(s) % (uint64_t)d) : 0);
    }
    if (bad && n > 0) {
        int64_t i = (int64_t)(tj_next(s) % (uint64_t)n);
        int64_t d = dims[depth ? i % depth : 0];
        int max_pos = jit_dtype_size(t) == 1 && d > 127;
        tj_store(t, idx, i, max_pos ? -1 : d);
    }
}

/* a + b and a * b (both non-negative), or INT64_MAX past int64: the byte
 * counts here are only compared with a budget, and one past int64 is
 * over every budget. A total that wrapped negative once passed as small,
 * was allocated, and was reported as a failed run. */
static int64_t tj_add_sat(int64_t a, int64_t b)
{
    int64_t sum;
    return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

static int64_t tj_mul_sat(int64_t a, int64_t b)
{
    int64_t product;
    return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

/* Bytes of a shape's elements of type t, saturated. A zero dim after a
 * saturated product still gives 0, the exact count. */
static int64_t tj_shape_bytes(const jit_shape *s, jit_dtype t)
{
    int64_t n = jit_dtype_size(t);
    for (int i = 0; i < s->rank; i++)
        n = tj_mul_sat(n, s->dims[i]);
    return n;
}

static int tj_shape_is_empty(const jit_shape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] == 0)
            return 1;
    return 0;
}

static void tj_record(tj_check_result *r, int ok, const char *what, int run)
{
    r->runs++;
    if (ok) {
        r->passed++;
        return;
    }
    if (!r->failed) /* what is cut to fit, which a Release build's -Wformat-truncation asks */
        snprintf(r->first_failure, sizeof r->first_failure, "run %d: %.230s", run, what);
    r->failed++;
}

/* The buffers of one signature: inputs, and the JIT's and the
 * reference's outputs (one guard byte each past the end). An embedding
 * bag's offsets or segment ids are in u, its weights in w. */
typedef struct tj_buffers {
    int64_t data, indices, updates, weights, out; /* bytes */
    unsigned char *d, *i, *u, *w, *o1, *o2;
    int takes_u, takes_w; /* the signature has them: else a call passes NULL */
} tj_buffers;

/* u and w as a call passes them: a bag kernel refuses a pointer for an
 * input its signature lacks (weights unweighted, offsets packed). */
static const void *tj_u(const tj_buffers *b) { return b->takes_u ? b->u : NULL; }
static const void *tj_w(const tj_buffers *b) { return b->takes_w ? b->w : NULL; }

/* The bytes of sig's buffers (saturated); out is the output's. A bag's
 * offsets (or segment ids) are of the index type, its weights of the
 * table's type, one per index. */
static void tj_buffers_of(const jit_sig *sig, const jit_op_info *op, int64_t out, tj_buffers *b)
{
    *b = (tj_buffers){.out = out};
    b->data = tj_shape_bytes(&sig->data_shape, sig->dtype);
    b->indices = tj_shape_bytes(&sig->indices_shape, sig->index_type);
    if (op->has_updates)
        b->updates = tj_shape_bytes(&sig->updates_shape, sig->dtype);
    else if (op->attrs & JIT_ATTR_OFFSETS)
        b->updates = tj_shape_bytes(&sig->updates_shape, sig->index_type);
    if ((op->attrs & JIT_ATTR_BAG) && sig->has_weights)
        b->weights = tj_shape_bytes(&sig->indices_shape, sig->dtype);
    b->takes_u = op->has_updates || (op->attrs & JIT_ATTR_OFFSETS);
    b->takes_w = (op->attrs & JIT_ATTR_BAG) && sig->has_weights;
}

static int tj_buffers_alloc(tj_buffers *b)
{
    b->d = malloc((size_t)b->data + 1);
    b->i = malloc((size_t)b->indices + 1);
    b->u = malloc((size_t)b->updates + 1);
    b->w = malloc((size_t)b->weights + 1);
    b->o1 = malloc((size_t)b->out + 1);
    b->o2 = malloc((size_t)b->out + 1);
    return b->d && b->i && b->u && b->w && b->o1 && b->o2 ? 0 : -1;
}

/* What the buffers take in all, saturated (tj_add_sat). */
static int64_t tj_buffers_total(const tj_buffers *b)
{
    int64_t inputs = tj_add_sat(tj_add_sat(b->data, b->indices), b->updates);
    return tj_add_sat(tj_add_sat(inputs, b->weights), tj_mul_sat(2, b->out));
}

static void tj_buffers_free(tj_buffers *b)
{
    free(b->d);
    free(b->i);
    free(b->u);
    free(b->w);
    free(b->o1);
    free(b->o2);
}

/* The values a bag's index takes under the policy, [lo, lo + span): the
 * rows, and where the policy gives other values a meaning (negative ones
 * wrapped, others clamped or zero-filled) those too. */
static void tj_bag_index_range(jit_index_policy policy, int64_t rows, int64_t *lo, int64_t *span)
{
    *lo = 0;
    *span = rows;
    if (rows > INT64_MAX / 4) /* a table of empty rows: 4 * rows would overflow */
        return;
    switch (policy) {
    case JIT_INDEX_NEGATIVE_WRAPS: *lo = -rows; *span = 2 * rows; return;
    case JIT_INDEX_CLAMP:
    case JIT_INDEX_ZERO_FILL: *lo = -rows; *span = 3 * rows; return;
    case JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL: *lo = -2 * rows; *span = 4 * rows; return;
    default: return;
    }
}

/* A bag's indices: values the policy takes (tj_bag_index_range); when
 * bad, one set to the table's row count, which only clamp and the
 * zero-fill policies take. */
static void tj_fill_bag_indices(uint64_t *s, const jit_sig *sig, void *idx, int64_t n, int bad)
{
    int64_t rows = sig->data_shape.dims[0], lo, span;
    tj_bag_index_range(sig->index_policy, rows, &lo, &span);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = span > 0 ? lo + (int64_t)(tj_next(s) % (uint64_t)span) : 0;
        tj_store(sig->index_type, idx, i, v);
    }
    if (bad && n > 0)
        tj_store(sig->index_type, idx, (int64_t)(tj_next(s) % (uint64_t)n), rows);
}

/* An embedding bag's inputs: indices by tj_fill_bag_indices; offsets from
 * 0, non-decreasing, the last N with include_last_offset, so that every
 * index is read; segment ids in [0, S). When bad_offset, one offset is
 * past N (one segment id S). */
static void tj_fill_bag(uint64_t *s, const jit_sig *sig, tj_buffers *b, int bad_index,
                        int bad_offset)
{
    jit_dtype t = sig->index_type;
    int64_t n = b->indices / jit_dtype_size(t);
    int64_t k = b->updates / jit_dtype_size(t), at = 0;
    int segments = sig->op == JIT_OP_EMBEDDING_SEGMENTS;
    tj_fill_bag_indices(s, sig, b->i, n, bad_index);
    tj_fill(s, b->w, b->weights);
    for (int64_t j = 0; j < k; j++) {
        if (segments) {
            int64_t S = sig->num_segments;
            tj_store(t, b->u, j, S > 0 ? (int64_t)(tj_next(s) % (uint64_t)S) : 0);
            continue;
        }
        /* steps of up to twice the mean bag: empty bags occur too */
        if (j > 0)
            at += (int64_t)(tj_next(s) % (uint64_t)(2 * n / k + 1));
        at = at < n ? at : n;
        tj_store(t, b->u, j, sig->include_last_offset && j == k - 1 ? n : at);
    }
    if (bad_offset && k > 0)
        tj_store(t, b->u, (int64_t)(tj_next(s) % (uint64_t)k),
                 segments ? sig->num_segments : n + 1);
}

/* Whether inputs filled as valid are: every index (and, for a bag, segment
 * id) has a value to take. A zero dim leaves none, and the fill's 0 is
 * then out of range. */
static int tj_fill_is_valid(const jit_sig *sig, int depth, const int64_t *dims, int64_t n_idx)
{
    if (n_idx == 0)
        return 1;
    if (sig->op == JIT_OP_EMBEDDING_SEGMENTS && sig->num_segments == 0)
        return 0;
    for (int e = 0; e < depth; e++)
        if (dims[e] == 0)
            return 0;
    return 1;
}

/* The kernel under test: a static one, or a dynamic one with the dims of
 * the concrete shape the buffers have. */
typedef struct tj_callee {
    jit_kernel fn;
    const int64_t *dims; /* NULL: a static kernel */
    int bag;             /* an embedding bag's: (table, indices, offsets, weights, out) */
} tj_callee;

static int tj_call(const tj_callee *c, const void *d, const void *i, const void *u,
                   const void *w, void *o)
{
    if (c->bag && c->dims)
        return jit_call_bag_dynamic(c->fn, d, i, u, w, o, c->dims);
    if (c->bag)
        return jit_call_bag(c->fn, d, i, u, w, o);
    if (c->dims)
        return jit_call_dynamic(c->fn, d, i, u, o, c->dims);
    return jit_call(c->fn, d, i, u, o);
}

const char *tj_check_compare(const tj_outcome *jit, const tj_outcome *ref, size_t bytes,
                             int messages)
{
    static _Thread_local char differ[256];
    if (jit->status != ref->status)
        return "status differs";
    if (messages && jit->status != JIT_OK && strcmp(jit->message, ref->message) != 0) {
        snprintf(differ, sizeof differ, "messages differ: jit '%.100s', reference '%.100s'",
                 jit->message, ref->message);
        return differ;
    }
    if (memcmp(jit->out, ref->out, bytes) != 0)
        return "output bytes differ";
    return NULL;
}

/* One run: the kernel against the reference, then (scatters) the kernel
 * in place, whose result must be the reference's, or data untouched on a
 * bad index. A valid input must succeed: two kernels that refuse alike
 * (called with the wrong arguments, say) are no check. An embedding bag's
 * refusals must name the same position. *refused: both refused alike. */
static const char *tj_check_once(const tj_callee *fj, const tj_callee *fr, int in_place,
                                 int valid, tj_buffers *b, int *refused)
{
    static _Thread_local char why[192], message[256];
    memset(b->o1, 0x5a, (size_t)b->out + 1);
    memset(b->o2, 0x5a, (size_t)b->out + 1);
    int s1 = tj_call(fj, b->d, b->i, tj_u(b), tj_w(b), b->o1);
    snprintf(message, sizeof message, "%s", s1 != JIT_OK ? jit_last_error() : "");
    int s2 = tj_call(fr, b->d, b->i, tj_u(b), tj_w(b), b->o2);
    tj_outcome jit = {s1, message, b->o1}, ref = {s2, s2 != JIT_OK ? jit_last_error() : "", b->o2};
    if (valid && s1 == s2 && s1 != JIT_OK) {
        snprintf(why, sizeof why, "a valid input was refused: %.150s", jit_last_error());
        return why;
    }
    const char *what = tj_check_compare(&jit, &ref, (size_t)b->out + 1, fj->bag);
    if (what)
        return what;
    *refused = s1 != JIT_OK;
    if (!in_place)
        return NULL;
    memcpy(b->o1, b->d, (size_t)b->data);
    int s3 = tj_call(fj, b->o1, b->i, tj_u(b), NULL, b->o1);
    if (s3 != s2 || memcmp(b->o1, s2 ? b->d : b->o2, (size_t)b->data) != 0)
        return "in place differs";
    return NULL;
}

static void tj_check_failed(tj_check_result *r, const char *what)
{
    snprintf(r->first_failure, sizeof r->first_failure, "%s", what);
    r->failed = r->runs = 1;
}

/* The same note for a total of any size: past int64 it is said so, not
 * printed as the saturated value. */
static void tj_note_skipped(tj_check_result *r, int64_t total, int64_t max_bytes)
{
    r->skipped = 1;
    if (total == INT64_MAX)
        snprintf(r->first_failure, sizeof r->first_failure,
                 "skipped: more bytes of buffers than int64 holds, over the budget of %lld",
                 (long long)max_bytes);
    else
        snprintf(r->first_failure, sizeof r->first_failure,
                 "skipped: %lld bytes of buffers, over the budget of %lld", (long long)total,
                 (long long)max_bytes);
}

/* Whether sig is an embedding bag's (SPEC 10): five-argument kernels. */
static int tj_is_bag(const jit_sig *sig)
{
    jit_op_info op;
    return jit_op_describe(sig->op, &op) == 0 && (op.attrs & JIT_ATTR_BAG);
}

/* `runs` random inputs of the concrete signature sig through fj, against
 * the reference kernel of sig. */
static void tj_check_against(const jit_sig *sig, const tj_callee *fj, int runs, uint64_t seed,
                             int64_t max_bytes, tj_check_result *r)
{
    memset(r, 0, sizeof *r);
    jit_sig ref = *sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit_kernel fr = jit_compile(&ref);
    jit_kernel_info info;
    jit_op_info op;
    int depth = 1;
    int64_t dims[JIT_MAX_RANK] = {sig->data_shape.dims[0]}; /* a bag's: rows of its table */
    if (!fr || jit_info(fr, &info) || jit_op_describe(sig->op, &op) ||
        (!tj_is_bag(sig) && jit_index_dims(sig, &depth, dims))) {
        tj_check_failed(r, jit_last_error());
        return;
    }
    tj_buffers b;
    tj_buffers_of(sig, &op, info.out_bytes, &b);
    int bag = tj_is_bag(sig);
    tj_callee rc = {fr, NULL, bag};
    int64_t total = tj_buffers_total(&b);
    if (total > max_bytes) {
        tj_note_skipped(r, total, max_bytes);
        return;
    }
    /* within the budget, so no count above saturated */
    int64_t n_idx = b.indices / jit_dtype_size(sig->index_type);
    int allocated = tj_buffers_alloc(&b) == 0;
    if (!allocated) {
        snprintf(r->first_failure, sizeof r->first_failure, "out of memory for %lld bytes",
                 (long long)total);
        r->failed = r->runs = 1;
    }
    for (int run = 0; allocated && run < runs; run++) {
        int bad = run == runs - 1 && runs > 1, refused = 0;
        /* before the bad index, with a valid run left before both */
        int bad_offset = bag && (op.attrs & JIT_ATTR_OFFSETS) && run == runs - 2 && runs > 2;
        tj_fill(&seed, b.d, b.data);
        if (bag) {
            tj_fill_bag(&seed, sig, &b, bad, bad_offset);
        } else {
            tj_fill(&seed, b.u, b.updates);
            tj_fill_indices(&seed, sig->index_type, b.i, n_idx, dims, depth, bad);
        }
        int valid = !bad && !bad_offset && tj_fill_is_valid(sig, depth, dims, n_idx);
        const char *what = tj_check_once(fj, &rc, op.has_updates, valid, &b, &refused);
        tj_record(r, what == NULL, what, run);
        r->refused += what == NULL && refused;
    }
    tj_buffers_free(&b);
}

void tj_check_layer(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                    tj_check_result *r)
{
    jit_sig jit = *sig;
    jit.engine = JIT_ENGINE_AUTO;
    tj_callee fj = {jit_compile(&jit), NULL, tj_is_bag(sig)};
    if (!fj.fn) {
        memset(r, 0, sizeof *r);
        tj_check_failed(r, jit_last_error());
        return;
    }
    tj_check_against(sig, &fj, runs, seed, max_bytes, r);
}

/* The inputs of sig whose dims a dynamic kernel takes, in its order: an
 * embedding bag's offsets or segment ids third, and EmbeddingSegmentsSum's
 * S last, as an input of rank 1 (held in s_dim). */
typedef struct tj_dyn_inputs {
    const jit_shape *in[4];
    const int64_t *bound[4];
    const char *name[4];
    jit_shape s_dim;
    int n;
} tj_dyn_inputs;

static void tj_inputs(const jit_sig *sig, tj_dyn_inputs *x)
{
    jit_op_info op;
    int known = jit_op_describe(sig->op, &op) == 0, bag = known && (op.attrs & JIT_ATTR_BAG);
    int segments = bag && (op.attrs & JIT_ATTR_NUM_SEGMENTS);
    *x = (tj_dyn_inputs){.in = {&sig->data_shape, &sig->indices_shape, &sig->updates_shape},
                         .bound = {sig->data_bound, sig->indices_bound, sig->updates_bound},
                         .name = {bag ? "table" : "data", "indices",
                                  !bag ? "updates" : segments ? "segment_ids" : "offsets"},
                         .s_dim = {1, {sig->num_segments}},
                         .n = known && (op.has_updates || (op.attrs & JIT_ATTR_OFFSETS)) ? 3 : 2};
    if (segments) {
        x->in[3] = &x->s_dim;
        x->bound[3] = &sig->num_segments_bound;
        x->name[3] = "num_segments";
        x->n = 4;
    }
}

/* Candidate k of the family's shapes into dims: every dynamic dim v for
 * v in 1, 2, 3, 0; then the same with a dynamic dim at a position where
 * another input has a static dim taking that dim (the rules of the
 * family mostly tie dims at the same position together); then dynamic
 * dims alternating 2 and 3. A bound caps the value. 0, or -1 past the
 * last candidate. */
#define TJ_CANDIDATES 9

/* The fewest rows a bag's table can have: its default row and its padding
 * row must be rows of it (-p for a negative padding_idx p, which names
 * row p + E). A dynamic table of fewer rows binds to nothing, and the
 * candidates' 1, 2, 3 once left a valid family with default_index 3
 * without a shape to check (a user's trial). */
static int64_t tj_least_rows(const jit_sig *sig)
{
    int64_t least = 0;
    if (!tj_is_bag(sig))
        return 0;
    if (sig->has_default_index && sig->default_index >= 0)
        least = sig->default_index + 1;
    if (sig->has_padding_idx && sig->padding_idx < INT64_MAX) {
        int64_t need = sig->padding_idx >= 0 ? sig->padding_idx + 1
                       : sig->padding_idx == INT64_MIN ? INT64_MAX
                                                        : -sig->padding_idx;
        least = need > least ? need : least;
    }
    return least;
}

static int tj_candidate(const jit_sig *sig, int k, int64_t *dims, int *ndims)
{
    static const int64_t values[4] = {1, 2, 3, 0};
    tj_dyn_inputs x;
    tj_inputs(sig, &x);
    const jit_shape *const *in = x.in;
    const int64_t *const *bound = x.bound;
    int n = x.n, at = 0, nth = 0;
    int64_t least = tj_least_rows(sig);
    if (k >= TJ_CANDIDATES)
        return -1;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < in[i]->rank; d++, at++) {
            int64_t v = in[i]->dims[d];
            if (v != JIT_DIM_DYNAMIC) {
                dims[at] = v;
                continue;
            }
            v = k < 8 ? values[k % 4] : 2 + nth++ % 2;
            for (int j = 0; k >= 4 && k < 8 && j < n; j++)
                if (j != i && d < in[j]->rank && in[j]->dims[d] != JIT_DIM_DYNAMIC) {
                    v = in[j]->dims[d];
                    break;
                }
            if (i == 0 && d == 0 && v < least) /* the table's rows */
                v = least;
            dims[at] = bound[i][d] > 0 && v > bound[i][d] ? bound[i][d] : v;
        }
    *ndims = at;
    return 0;
}

/* Whether a concrete signature has no element in an input or its output:
 * the name of the first that has none ("out" for the output), or NULL. */
static const char *tj_sig_empty(const jit_sig *sig)
{
    tj_dyn_inputs x;
    jit_shape out;
    tj_inputs(sig, &x);
    for (int i = 0; i < x.n; i++)
        if (tj_shape_is_empty(x.in[i]))
            return x.name[i];
    return jit_output_shape(sig, &out) == 0 && tj_shape_is_empty(&out) ? "out" : NULL;
}

/* Whether shape k of r repeats an earlier one. */
static int tj_seen(const tj_dyn_check_result *r, const int64_t *dims, int ndims)
{
    for (int i = 0; i < r->shapes; i++)
        if (memcmp(r->shape[i].dims, dims, sizeof(int64_t) * (size_t)ndims) == 0)
            return 1;
    return 0;
}

/* Bytes of the buffers a check of a concrete signature takes (inputs and
 * two outputs), saturated as tj_check_against counts them: a candidate
 * tied to large static dims may total more than int64 holds. */
static int64_t tj_sig_bytes(const jit_sig *sig)
{
    jit_op_info op;
    jit_shape out;
    tj_buffers b;
    if (jit_op_describe(sig->op, &op) != 0 || jit_output_shape(sig, &out) != 0)
        return INT64_MAX;
    tj_buffers_of(sig, &op, tj_shape_bytes(&out, sig->dtype), &b);
    return tj_buffers_total(&b);
}

/* The concrete signature of candidate dims, when the op's rules accept
 * them (jit_sig_bind and jit_output_shape); concrete is kept otherwise. */
static int tj_bind(const jit_sig *sig, const int64_t *dims, jit_sig *concrete)
{
    jit_sig bound;
    jit_shape out;
    if (jit_sig_bind(sig, dims, &bound) != 0 || jit_output_shape(&bound, &out) != 0)
        return -1;
    *concrete = bound;
    return 0;
}

/* Which of the dims a dynamic kernel takes (in its order) are dynamic. */
static void tj_dynamic_dims(const jit_sig *sig, unsigned char *dynamic)
{
    tj_dyn_inputs x;
    tj_inputs(sig, &x);
    const jit_shape *const *in = x.in;
    int n = x.n, at = 0;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < in[i]->rank; d++)
            dynamic[at++] = in[i]->dims[d] == JIT_DIM_DYNAMIC;
}

/* dims[at] halved, alone or (ties) with every dynamic dim equal to it:
 * the op may tie dims together (ScatterUpdate's indices and updates
 * rows), and then only both shrink. 0 when the halved dims bind. */
static int tj_halve(const jit_sig *sig, const unsigned char *dynamic, int64_t *dims, int ndims,
                    int at, int ties, jit_sig *concrete)
{
    int64_t halved[3 * JIT_MAX_RANK];
    for (int i = 0; i < ndims; i++)
        halved[i] = i == at || (ties && dynamic[i] && dims[i] == dims[at]) ? dims[i] / 2 : dims[i];
    if (tj_bind(sig, halved, concrete) != 0)
        return -1;
    memcpy(dims, halved, sizeof(int64_t) * (size_t)ndims);
    return 0;
}

/* Shrinks a bound candidate's dynamic dims until its buffers fit
 * max_bytes: the largest first, halved (never below 1, so a shape with
 * elements keeps them); a dim that binds halved neither alone nor with
 * its equals is kept. 0 when it fits (concrete then its signature), -1
 * when no dim shrinks further: only the static dims then exceed. */
static int tj_shrink_to_fit(const jit_sig *sig, int64_t *dims, int ndims, int64_t max_bytes,
                            jit_sig *concrete)
{
    unsigned char dynamic[3 * JIT_MAX_RANK], kept[3 * JIT_MAX_RANK] = {0};
    tj_dynamic_dims(sig, dynamic);
    while (tj_sig_bytes(concrete) > max_bytes) {
        int at = -1;
        for (int i = 0; i < ndims; i++)
            if (dynamic[i] && !kept[i] && dims[i] > 1 && (at < 0 || dims[i] > dims[at]))
                at = i;
        if (at < 0)
            return -1;
        if (tj_halve(sig, dynamic, dims, ndims, at, 0, concrete) != 0 &&
            tj_halve(sig, dynamic, dims, ndims, at, 1, concrete) != 0)
            kept[at] = 1;
    }
    return 0;
}

/* A candidate k that binds and fits max_bytes, as it is or (shrink)
 * with its dynamic dims shrunk; 0, or -1 (over_budget counts those that
 * bind but cannot fit). */
static int tj_fitting_candidate(const jit_sig *sig, int k, int shrink, int64_t max_bytes,
                                tj_dyn_check_result *r, tj_dyn_shape *s)
{
    if (tj_candidate(sig, k, s->dims, &s->ndims) != 0 || tj_bind(sig, s->dims, &s->sig) != 0)
        return -1;
    if (!shrink)
        return tj_sig_bytes(&s->sig) <= max_bytes ? 0 : -1;
    if (tj_shrink_to_fit(sig, s->dims, s->ndims, max_bytes, &s->sig) != 0) {
        r->over_budget++;
        return -1;
    }
    return 0;
}

/* The concrete shapes of the family the check runs: the candidates that
 * bind and fit max_bytes, without repeats; only when none with elements
 * fits as it is, the candidates shrunk to fit. A candidate tied to a large
 * static dim (an embedding table's rows) must neither take the place of
 * small ones nor be tried at its size: it once was, at 7.7 TB. */
/* Adds the bound shape s (r->shape[r->shapes]) unless it is a repeat. */
static void tj_add_shape(tj_dyn_check_result *r, tj_dyn_shape *s)
{
    if (tj_seen(r, s->dims, s->ndims))
        return;
    s->empty_part = tj_sig_empty(&s->sig);
    s->empty = s->empty_part != NULL;
    r->empty += s->empty;
    r->nonempty += !s->empty;
    r->shapes++;
}

/* An empty shape from a valid one with elements: a dynamic dim at 0, the
 * dims equal to it too (the op may tie them). The candidates' all-zero
 * shape misses families whose rules tie a dim to a number (ScatterNDUpdate
 * with data [?,?,?], indices [?,?], updates [?,?]: its tuple length is 2,
 * and indices [0,2] is empty). */
static void tj_add_empty_of(const jit_sig *sig, const tj_dyn_shape *full, tj_dyn_check_result *r)
{
    unsigned char dynamic[3 * JIT_MAX_RANK];
    tj_dynamic_dims(sig, dynamic);
    for (int at = 0; at < full->ndims && r->shapes < TJ_DYN_SHAPES && !r->empty; at++) {
        if (!dynamic[at] || full->dims[at] == 0)
            continue;
        for (int ties = 0; ties < 2 && !r->empty; ties++) {
            tj_dyn_shape *s = &r->shape[r->shapes];
            *s = *full;
            for (int i = 0; i < full->ndims; i++)
                if (i == at || (ties && dynamic[i] && full->dims[i] == full->dims[at]))
                    s->dims[i] = 0;
            if (tj_bind(sig, s->dims, &s->sig) == 0 && tj_sig_empty(&s->sig))
                tj_add_shape(r, s);
        }
    }
}

static void tj_pick_shapes(const jit_sig *sig, int64_t max_bytes, tj_dyn_check_result *r)
{
    for (int shrink = 0; shrink < 2 && r->nonempty == 0; shrink++)
        for (int k = 0; k < TJ_CANDIDATES && r->shapes < TJ_DYN_SHAPES; k++) {
            tj_dyn_shape *s = &r->shape[r->shapes];
            memset(s, 0, sizeof *s);
            if (tj_fitting_candidate(sig, k, shrink, max_bytes, r, s) == 0)
                tj_add_shape(r, s);
        }
    for (int i = 0, n = r->shapes; i < n && !r->empty; i++)
        if (!r->shape[i].empty)
            tj_add_empty_of(sig, &r->shape[i], r);
}

void tj_check_dynamic(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                      tj_dyn_check_result *r)
{
    memset(r, 0, sizeof *r);
    jit_sig jit = *sig;
    jit.engine = JIT_ENGINE_AUTO;
    tj_callee fj = {jit_compile(&jit), NULL, tj_is_bag(sig)};
    if (!fj.fn) {
        tj_check_failed(&r->total, jit_last_error());
        return;
    }
    tj_pick_shapes(sig, max_bytes, r);
    if (!r->nonempty && r->over_budget) {
        /* the empty shapes that fit prove little alone: none is run or listed */
        r->shapes = r->empty = 0;
        r->total.skipped = 1;
        snprintf(r->total.first_failure, sizeof r->total.first_failure,
                 "skipped: no shape with elements fits in %lld bytes of buffers",
                 (long long)max_bytes);
        return;
    }
    if (!r->nonempty) {
        /* the family compiled, so some shape is valid: the candidates missed
         * it, which says nothing against the kernel */
        r->shapes = r->empty = 0;
        r->total.skipped = 1;
        snprintf(r->total.first_failure, sizeof r->total.first_failure,
                 "skipped: no shape with elements among the candidates (every dynamic dim 1, "
                 "2, 3, ...) is valid");
        return;
    }
    for (int i = 0; i < r->shapes; i++) {
        tj_dyn_shape *s = &r->shape[i];
        fj.dims = s->dims;
        tj_check_against(&s->sig, &fj, runs, seed + (uint64_t)i, max_bytes, &s->check);
        r->total.runs += s->check.runs;
        r->total.passed += s->check.passed;
        r->total.skipped += s->check.skipped;
        r->total.refused += s->check.refused;
        if (s->check.failed && !r->total.failed)
            snprintf(r->total.first_failure, sizeof r->total.first_failure,
                     "shape %d: %.200s", i, s->check.first_failure);
        r->total.failed += s->check.failed;
    }
    /* skipped only when every shape was: then say so, as tj_check_layer does */
    r->total.skipped = r->total.skipped == r->shapes;
    if (r->total.skipped)
        snprintf(r->total.first_failure, sizeof r->total.first_failure,
                 "skipped: the buffers of every shape exceed %lld bytes", (long long)max_bytes);
}

void tj_dyn_shape_text(const tj_dyn_shape *s, char *buf, size_t len)
{
    tj_dyn_inputs x;
    tj_inputs(&s->sig, &x);
    const jit_shape *const *in = x.in;
    const char *const *names = x.name;
    int n = x.n;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        used += (size_t)snprintf(buf + used, len - used, "%s%s [", i ? ", " : "", names[i]);
        for (int d = 0; d < in[i]->rank && used < len; d++)
            used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? "," : "",
                                     (long long)in[i]->dims[d]);
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "]");
    }
    if (s->empty && used < len)
        snprintf(buf + used, len - used, " (empty %s)", s->empty_part);
}
