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

static int64_t tj_elems(const jit_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

static void tj_record(tj_check_result *r, int ok, const char *what, int run)
{
    r->runs++;
    if (ok) {
        r->passed++;
        return;
    }
    if (!r->failed)
        snprintf(r->first_failure, sizeof r->first_failure, "run %d: %s", run, what);
    r->failed++;
}

/* The buffers of one signature: inputs, and the JIT's and the
 * reference's outputs (one guard byte each past the end). */
typedef struct tj_buffers {
    int64_t data, indices, updates, out; /* bytes */
    unsigned char *d, *i, *u, *o1, *o2;
} tj_buffers;

static int tj_buffers_alloc(tj_buffers *b)
{
    b->d = malloc((size_t)b->data + 1);
    b->i = malloc((size_t)b->indices + 1);
    b->u = malloc((size_t)b->updates + 1);
    b->o1 = malloc((size_t)b->out + 1);
    b->o2 = malloc((size_t)b->out + 1);
    return b->d && b->i && b->u && b->o1 && b->o2 ? 0 : -1;
}

static void tj_buffers_free(tj_buffers *b)
{
    free(b->d);
    free(b->i);
    free(b->u);
    free(b->o1);
    free(b->o2);
}

/* One run: the JIT against the reference, then (scatters) the JIT in
 * place, whose result must be the reference's, or data untouched on a bad
 * index. */
static const char *tj_check_once(jit_kernel fj, jit_kernel fr, int in_place, tj_buffers *b)
{
    memset(b->o1, 0x5a, (size_t)b->out + 1);
    memset(b->o2, 0x5a, (size_t)b->out + 1);
    int s1 = jit_call(fj, b->d, b->i, b->u, b->o1), s2 = jit_call(fr, b->d, b->i, b->u, b->o2);
    if (s1 != s2)
        return "status differs";
    if (memcmp(b->o1, b->o2, (size_t)b->out + 1) != 0)
        return "output bytes differ";
    if (!in_place)
        return NULL;
    memcpy(b->o1, b->d, (size_t)b->data);
    int s3 = jit_call(fj, b->o1, b->i, b->u, b->o1);
    if (s3 != s2 || memcmp(b->o1, s2 ? b->d : b->o2, (size_t)b->data) != 0)
        return "in place differs";
    return NULL;
}

void tj_check_layer(const jit_sig *sig, int runs, uint64_t seed, int64_t max_bytes,
                    tj_check_result *r)
{
    memset(r, 0, sizeof *r);
    jit_sig ref = *sig, jit = *sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit.engine = JIT_ENGINE_AUTO;
    jit_kernel fj = jit_compile(&jit), fr = jit_compile(&ref);
    jit_kernel_info info;
    jit_op_info op;
    int depth;
    int64_t dims[JIT_MAX_RANK];
    if (!fj || !fr || jit_info(fj, &info) || jit_op_describe(sig->op, &op) ||
        jit_index_dims(sig, &depth, dims)) {
        snprintf(r->first_failure, sizeof r->first_failure, "%s", jit_last_error());
        r->failed = r->runs = 1;
        return;
    }
    tj_buffers b = {0};
    int64_t n_idx = tj_elems(&sig->indices_shape);
    b.data = tj_elems(&sig->data_shape) * jit_dtype_size(sig->dtype);
    b.indices = n_idx * jit_dtype_size(sig->index_type);
    b.updates = op.has_updates ? tj_elems(&sig->updates_shape) * jit_dtype_size(sig->dtype) : 0;
    b.out = info.out_bytes;
    int64_t total = b.data + b.indices + b.updates + 2 * b.out;
    if (total > max_bytes) {
        r->skipped = 1;
        snprintf(r->first_failure, sizeof r->first_failure, "skipped: %lld bytes of buffers",
                 (long long)total);
        return;
    }
    int allocated = tj_buffers_alloc(&b) == 0;
    if (!allocated) {
        snprintf(r->first_failure, sizeof r->first_failure, "out of memory for %lld bytes",
                 (long long)total);
        r->failed = r->runs = 1;
    }
    for (int run = 0; allocated && run < runs; run++) {
        tj_fill(&seed, b.d, b.data);
        tj_fill(&seed, b.u, b.updates);
        tj_fill_indices(&seed, sig->index_type, b.i, n_idx, dims, depth,
                        run == runs - 1 && runs > 1);
        const char *what = tj_check_once(fj, fr, op.has_updates, &b);
        tj_record(r, what == NULL, what, run);
    }
    tj_buffers_free(&b);
}
