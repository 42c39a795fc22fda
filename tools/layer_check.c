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

void tj_check_gather_nd(const jit_gather_nd_sig *sig, int runs, uint64_t seed,
                        int64_t max_bytes, tj_check_result *r)
{
    memset(r, 0, sizeof *r);
    jit_gather_nd_sig ref = *sig, jit = *sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit.engine = JIT_ENGINE_AUTO;
    jit_gather_nd_fn fj = jit_gather_nd_compile(&jit), fr = jit_gather_nd_compile(&ref);
    jit_kernel_info info;
    if (!fj || !fr || jit_gather_nd_info(fj, &info)) {
        snprintf(r->first_failure, sizeof r->first_failure, "%s", jit_last_error());
        r->failed = r->runs = 1;
        return;
    }
    const jit_shape *ds = &sig->data_shape, *is = &sig->indices_shape;
    int64_t db = tj_elems(ds) * jit_dtype_size(sig->dtype);
    int64_t in = tj_elems(is), ib = in * jit_dtype_size(sig->index_type);
    if (db + ib + 2 * info.out_bytes > max_bytes) {
        r->skipped = 1;
        snprintf(r->first_failure, sizeof r->first_failure, "skipped: %lld bytes of buffers",
                 (long long)(db + ib + 2 * info.out_bytes));
        return;
    }
    int depth = (int)is->dims[is->rank - 1];
    void *data = malloc((size_t)db + 1), *idx = malloc((size_t)ib + 1);
    unsigned char *o1 = malloc((size_t)info.out_bytes + 1), *o2 = malloc((size_t)info.out_bytes + 1);
    for (int run = 0; data && idx && o1 && o2 && run < runs; run++) {
        int bad = run == runs - 1 && runs > 1;
        tj_fill(&seed, data, db);
        tj_fill_indices(&seed, sig->index_type, idx, in, ds->dims + sig->batch_dims, depth, bad);
        memset(o1, 0x5a, (size_t)info.out_bytes + 1);
        memset(o2, 0x5a, (size_t)info.out_bytes + 1);
        int s1 = fj(data, idx, o1), s2 = fr(data, idx, o2);
        int same = s1 == s2 && memcmp(o1, o2, (size_t)info.out_bytes + 1) == 0;
        tj_record(r, same, s1 != s2 ? "status differs" : "output bytes differ", run);
    }
    free(data);
    free(idx);
    free(o1);
    free(o2);
}

void tj_check_scatter_update(const jit_scatter_update_sig *sig, int runs, uint64_t seed,
                             int64_t max_bytes, tj_check_result *r)
{
    memset(r, 0, sizeof *r);
    jit_scatter_update_sig ref = *sig, jit = *sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    jit.engine = JIT_ENGINE_AUTO;
    jit_scatter_update_fn fj = jit_scatter_update_compile(&jit);
    jit_scatter_update_fn fr = jit_scatter_update_compile(&ref);
    if (!fj || !fr) {
        snprintf(r->first_failure, sizeof r->first_failure, "%s", jit_last_error());
        r->failed = r->runs = 1;
        return;
    }
    const jit_shape *ds = &sig->data_shape;
    int es = jit_dtype_size(sig->dtype);
    int64_t db = tj_elems(ds) * es, ub = tj_elems(&sig->updates_shape) * es;
    int64_t in = tj_elems(&sig->indices_shape), ib = in * jit_dtype_size(sig->index_type);
    if (3 * db + ub + ib > max_bytes) {
        r->skipped = 1;
        snprintf(r->first_failure, sizeof r->first_failure, "skipped: %lld bytes of buffers",
                 (long long)(3 * db + ub + ib));
        return;
    }
    int a = (int)(sig->axis < 0 ? sig->axis + ds->rank : sig->axis);
    unsigned char *data = malloc((size_t)db + 1), *o1 = malloc((size_t)db + 1);
    unsigned char *o2 = malloc((size_t)db + 1);
    void *idx = malloc((size_t)ib + 1), *upd = malloc((size_t)ub + 1);
    for (int run = 0; data && o1 && o2 && idx && upd && run < runs; run++) {
        int bad = run == runs - 1 && runs > 1;
        tj_fill(&seed, data, db);
        tj_fill(&seed, upd, ub);
        tj_fill_indices(&seed, sig->index_type, idx, in, &ds->dims[a], 1, bad);
        memset(o1, 0x5a, (size_t)db + 1);
        memset(o2, 0x5a, (size_t)db + 1);
        int s1 = fj(data, idx, upd, o1), s2 = fr(data, idx, upd, o2);
        int same = s1 == s2 && memcmp(o1, o2, (size_t)db + 1) == 0;
        const char *what = s1 != s2 ? "status differs" : "output bytes differ";
        /* in place: the same bytes in data itself, or data untouched */
        memcpy(o1, data, (size_t)db);
        int s3 = fj(o1, idx, upd, o1);
        if (same && !(s3 == s2 && memcmp(o1, s2 ? data : o2, (size_t)db) == 0)) {
            same = 0;
            what = "in place differs";
        }
        tj_record(r, same, what, run);
    }
    free(data);
    free(o1);
    free(o2);
    free(idx);
    free(upd);
}
