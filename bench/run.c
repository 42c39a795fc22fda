/*
 * The performance table. For each workload, in one process: inputs filled
 * once (data with a pattern, indices uniformly random from a fixed seed,
 * distinct for ScatterUpdate), every implementation's output checked
 * against the static kernel's, then rounds in which each implementation
 * runs a batch of calls in turn (interleaved, so that drift on a shared
 * machine hits all alike). Per implementation: the median ns per call.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench.h"
#include "bench_run.h"
#include "stub.h" /* the library's own: what a kernel limit puts in front of a kernel */

static uint64_t tj_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tj_bench_store_index(const tj_bench_shape *s, void *p, int64_t i, int64_t v)
{
    if (s->index_size == 4)
        ((int32_t *)p)[i] = (int32_t)v;
    else if (s->index_size == 8)
        ((int64_t *)p)[i] = v;
    else if (s->index_size == 2)
        ((int16_t *)p)[i] = (int16_t)v;
    else
        ((int8_t *)p)[i] = (int8_t)v;
}

static void tj_fill_random(const tj_bench_shape *s, void *idx, uint64_t *seed)
{
    for (int64_t i = 0; i < s->index_count; i++)
        tj_bench_store_index(s, idx, i, (int64_t)(tj_rng(seed) % (uint64_t)s->dims[i % s->depth]));
}

/* Runs of `run` entries, each the first `run` values of a shuffled
 * 0..dim-1 (dim = the first tuple entry's dimension), so that no value
 * repeats within a run; one run of every entry is TJ_FILL_DISTINCT. */
static void tj_fill_shuffled(const tj_bench_shape *s, void *idx, int64_t run, uint64_t *seed)
{
    int64_t dim = s->dims[0], *perm = malloc(sizeof(int64_t) * (size_t)(dim ? dim : 1));
    for (int64_t from = 0; from < s->index_count; from += run) {
        for (int64_t i = 0; i < dim; i++)
            perm[i] = i;
        for (int64_t i = 0; i < run && from + i < s->index_count; i++) {
            int64_t j = i < dim ? i + (int64_t)(tj_rng(seed) % (uint64_t)(dim - i)) : i % dim;
            int64_t t = perm[i % dim];
            perm[i % dim] = perm[j];
            perm[j] = t;
            tj_bench_store_index(s, idx, from + i, perm[i % dim]);
        }
    }
    free(perm);
}

static void tj_fill_indices(const tj_workload *w, const tj_bench_shape *s, void *idx)
{
    uint64_t seed = 20261122;
    switch (w->fill) {
    case TJ_FILL_FIXED:
        for (int64_t i = 0; i < s->index_count; i++)
            tj_bench_store_index(s, idx, i, w->fixed[i]);
        break;
    case TJ_FILL_DISTINCT:
        tj_fill_shuffled(s, idx, s->index_count, &seed);
        break;
    case TJ_FILL_ROW_PERMUTATION:
        tj_fill_shuffled(s, idx, s->nlevels ? s->levels[s->nlevels - 1].trip : 1, &seed);
        break;
    default:
        tj_fill_random(s, idx, &seed);
    }
}

/* Large buffers on 2 MB pages, as an inference engine would allocate its
 * tensors (THP is in madvise mode on these machines): random reads over
 * 64 MB otherwise spend their time in page walks, which under a hypervisor
 * are two-dimensional. The same for every implementation. */
void *tj_bench_alloc(int64_t bytes)
{
    size_t n = (size_t)(bytes ? bytes : 1);
    if (n < ((size_t)2 << 20))
        return malloc(n);
    size_t huge = (size_t)2 << 20;
    void *p = aligned_alloc(huge, (n + huge - 1) / huge * huge);
    if (p)
        madvise(p, (n + huge - 1) / huge * huge, MADV_HUGEPAGE);
    return p;
}

/* A pattern that never repeats within a slice, so that wrong offsets
 * show. For a sum, floats in [-1, 1) instead of raw bits: no NaN, and no
 * subnormal whose assists would time the FPU rather than the loop, however
 * many calls add to the same data in place. */
static void *tj_alloc_pattern(int64_t bytes, int salt, int floats)
{
    unsigned char *p = tj_bench_alloc(bytes);
    if (!p)
        return NULL;
    uint32_t v = (uint32_t)salt * 2654435761u;
    for (int64_t i = 0; i < bytes; i += 4) {
        v = v * 1664525u + 1013904223u;
        float f = (float)(int32_t)v * (1.0f / 2147483648.0f);
        memcpy(p + i, floats ? (const void *)&f : (const void *)&v,
               (size_t)(bytes - i < 4 ? bytes - i : 4));
    }
    return p;
}

/* Waits (up to 2 s) for the tiered kernel to run the JIT kernel. */
static int tj_wait_switch(tj_bench_case *c)
{
    for (int i = 0; i < 2000; i++) {
        jit_kernel_info info = {0};
        if (jit_info(c->tiered, &info))
            return -1;
        if (info.engine == JIT_ENGINE_JIT)
            return 0;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* A dynamic variant's kernels: its own, from jit_compile of its dynamic
 * signature, and the fully static one of its twin (c->jit), which it is
 * measured against; its call dims must bind to the twin's shapes. */
static int tj_prepare_dynamic(tj_bench_case *c, char *why, size_t len)
{
    const tj_workload *w = c->w, *twin = tj_workload_concrete(w);
    jit_sig bound;
    tj_workload_call_dims(w, c->dims);
    c->dyn = jit_compile(&w->sig);
    c->jit = jit_compile(&twin->sig);
    if (!c->dyn || !c->jit || jit_info(c->dyn, &c->dyn_info) != 0) {
        snprintf(why, len, "%s: %s", w->id, jit_last_error());
        return -1;
    }
    if (!c->dyn_info.dynamic) {
        snprintf(why, len, "%s: jit_info says its kernel is not dynamic", w->id);
        return -1;
    }
    if (jit_sig_bind(&w->sig, c->dims, &bound) != 0) {
        snprintf(why, len, "%s: the dims of %s do not bind: %s", w->id, twin->id,
                 jit_last_error());
        return -1;
    }
    if (memcmp(&bound.data_shape, &twin->sig.data_shape, sizeof bound.data_shape) != 0 ||
        memcmp(&bound.indices_shape, &twin->sig.indices_shape, sizeof bound.indices_shape) != 0 ||
        (c->s.scatter &&
         memcmp(&bound.updates_shape, &twin->sig.updates_shape, sizeof bound.updates_shape) != 0)) {
        snprintf(why, len, "%s: jit_sig_bind gives other shapes than %s's", w->id, twin->id);
        return -1;
    }
    if (tj_workload_concrete(w)->in_place) { /* the second-shape check starts from it */
        c->pristine = tj_bench_alloc(c->s.data_bytes);
        if (!c->pristine) {
            snprintf(why, len, "out of memory for workload %s", w->id);
            return -1;
        }
        memcpy(c->pristine, c->data, (size_t)c->s.data_bytes);
    }
    return 0;
}

int tj_bench_prepare(tj_bench_case *c, const tj_workload *w, void *static_lib, char *why,
                     size_t len)
{
    memset(c, 0, sizeof *c);
    c->w = w;
    tj_bench_shape_of(w, &c->s);
    const tj_bench_shape *s = &c->s;
    const tj_workload *cw = tj_workload_concrete(w); /* fill and in_place: the twin's */
    c->data = tj_alloc_pattern(s->data_bytes, 1, s->sum);
    c->indices = malloc((size_t)(s->index_count * s->index_size + 8));
    c->updates = s->scatter ? tj_alloc_pattern(s->updates_bytes, 2, s->sum) : NULL;
    c->out = cw->in_place ? c->data : tj_bench_alloc(s->out_bytes);
    c->check = tj_bench_alloc(s->out_bytes);
    if (!c->data || !c->indices || !c->out || !c->check || (s->scatter && !c->updates)) {
        snprintf(why, len, "out of memory for workload %s", w->id);
        return -1;
    }
    tj_fill_indices(cw, s, c->indices);
    c->static_fn = tj_static_find(static_lib, w->id);
    if (tj_workload_is_dynamic(w))
        return tj_prepare_dynamic(c, why, len);
    jit_sig ref = w->sig, two = w->sig;
    ref.engine = JIT_ENGINE_REFERENCE;
    two.threads = TJ_BENCH_THREADS;
    /* tiered first, so that its entry switches to the kernel compiled here */
    c->tiered = jit_compile_async(&w->sig);
    c->jit = jit_compile(&w->sig);
    c->ref = jit_compile(&ref);
    c->jit2 = jit_compile(&two);
    if (!c->jit || !c->ref || !c->jit2 || !c->tiered || tj_wait_switch(c) != 0) {
        snprintf(why, len, "%s: %s", w->id, jit_last_error());
        return -1;
    }
    c->stub = tj_stub_new((tj_entry_fn)c->jit);
    return 0;
}

void tj_bench_release(tj_bench_case *c)
{
    if (c->out != c->data)
        free(c->out);
    free(c->data);
    free(c->indices);
    free(c->updates);
    free(c->check);
    free(c->pristine);
}

int tj_bench_call_fn(const tj_bench_case *c, jit_kernel fn, int dynamic)
{
    if (dynamic) /* as a caller holding a jit_dynamic_fn calls it */
        return ((jit_dynamic_fn)fn)(c->data, c->indices, c->updates, c->out, c->dims);
    if (c->s.scatter)
        return ((jit_scatter_update_fn)fn)(c->data, c->indices, c->updates, c->out);
    return ((jit_gather_nd_fn)fn)(c->data, c->indices, c->out);
}

/* One call of implementation i; returns its status. */
int tj_bench_call(tj_bench_case *c, tj_impl i)
{
    const tj_bench_shape *s = &c->s;
    switch (i) {
    case TJ_IMPL_JIT:
        return tj_bench_call_fn(c, c->jit, 0);
    case TJ_IMPL_DYNAMIC:
        return tj_bench_call_fn(c, c->dyn, 1);
    case TJ_IMPL_JIT_STUB:
        return tj_bench_call_fn(c, (jit_kernel)c->stub, 0);
    case TJ_IMPL_TIERED:
        return tj_bench_call_fn(c, c->tiered, 0);
    case TJ_IMPL_JIT_THREADS:
        return tj_bench_call_fn(c, c->jit2, 0);
    case TJ_IMPL_REFERENCE:
        return tj_bench_call_fn(c, c->ref, 0);
    case TJ_IMPL_GENERIC:
        return tj_generic_run(s, c->data, c->indices, c->updates, c->out);
    case TJ_IMPL_STATIC:
        return s->scatter
                   ? ((tj_static_scatter_fn)c->static_fn)(c->data, c->indices, c->updates, c->out)
                   : ((tj_static_gather_fn)c->static_fn)(c->data, c->indices, c->out);
    case TJ_IMPL_MEMCPY:
        if (!s->scatter) { /* from check: data may be smaller than out */
            memcpy(c->out, c->check, (size_t)s->out_bytes);
        } else {
            if (c->out != c->data)
                memcpy(c->out, c->data, (size_t)s->data_bytes);
            /* updates larger than out (S5): piece by piece, over out again */
            for (int64_t at = 0; at < s->updates_bytes; at += s->out_bytes) {
                int64_t n = s->updates_bytes - at;
                memcpy(c->out, (const char *)c->updates + at,
                       (size_t)(n < s->out_bytes ? n : s->out_bytes));
            }
        }
        return 0;
    default:
        return -1;
    }
}

/* A dynamic variant runs its kernel against the twin's JIT kernel, the
 * static kernel and memcpy (the other peers are the twin's rows). */
int tj_bench_available(const tj_bench_case *c, tj_impl i)
{
    if (c->dyn)
        return i == TJ_IMPL_DYNAMIC || i == TJ_IMPL_JIT || i == TJ_IMPL_MEMCPY ||
               (i == TJ_IMPL_STATIC && c->static_fn);
    return i != TJ_IMPL_DYNAMIC && (i != TJ_IMPL_STATIC || c->static_fn) &&
           (i != TJ_IMPL_JIT_STUB || c->stub);
}

/* Every implementation must write the same bytes as the first one that
 * ran (the static kernel when there is one). */
int tj_bench_verify(tj_bench_case *c, char *why, size_t len)
{
    const tj_impl order[] = {TJ_IMPL_STATIC,      TJ_IMPL_JIT,       TJ_IMPL_DYNAMIC,
                             TJ_IMPL_JIT_STUB,    TJ_IMPL_TIERED,    TJ_IMPL_JIT_THREADS,
                             TJ_IMPL_REFERENCE,   TJ_IMPL_GENERIC};
    int have = 0;
    size_t n = (size_t)c->s.out_bytes;
    void *pristine = NULL;
    if (tj_workload_concrete(c->w)->in_place) { /* in place: each starts from the same data */
        pristine = malloc(n ? n : 1);
        memcpy(pristine, c->data, n);
    }
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        if (!tj_bench_available(c, order[k]))
            continue;
        if (pristine)
            memcpy(c->data, pristine, n);
        int rc = tj_bench_call(c, order[k]);
        if (rc != 0) { /* the library's kernels say why; the bench's own loops do not */
            int lib = order[k] != TJ_IMPL_STATIC && order[k] != TJ_IMPL_GENERIC;
            snprintf(why, len, "%s: %s failed (status %d%s%s)", c->w->id, tj_impl_name(order[k]),
                     rc, lib ? ": " : "", lib ? jit_last_error() : "");
            free(pristine);
            return -1;
        }
        if (!have) {
            memcpy(c->check, c->out, n);
            have = 1;
        } else if (memcmp(c->check, c->out, n) != 0) {
            snprintf(why, len, "%s: %s's output differs from %s's", c->w->id,
                     tj_impl_name(order[k]), tj_impl_name(order[0]));
            free(pristine);
            return -1;
        }
    }
    free(pristine);
    return 0;
}

/* Calls per timed batch, so that a batch takes about target_ns. */
static int64_t tj_batch_size(tj_bench_case *c, tj_impl i, double target_ns)
{
    double t0 = tj_bench_now_ns();
    tj_bench_call(c, i);
    double one = tj_bench_now_ns() - t0;
    int64_t n = one > 0 ? (int64_t)(target_ns / one) : 1000;
    return n < 1 ? 1 : n > 1000000 ? 1000000 : n;
}

void tj_bench_time(tj_bench_case *c, int rounds, double batch_ns)
{
    int64_t n[TJ_IMPL_COUNT];
    double samples[TJ_IMPL_COUNT][64];
    if (rounds > 64)
        rounds = 64;
    for (int i = 0; i < TJ_IMPL_COUNT; i++)
        if (tj_bench_available(c, (tj_impl)i)) {
            tj_bench_call(c, (tj_impl)i); /* warm up */
            n[i] = tj_batch_size(c, (tj_impl)i, batch_ns);
        }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < TJ_IMPL_COUNT; i++) {
            if (!tj_bench_available(c, (tj_impl)i))
                continue;
            /* one untimed call first, for every implementation: its caches
             * and (jit x2) its pool thread are warm when the batch starts */
            tj_bench_call(c, (tj_impl)i);
            double t0 = tj_bench_now_ns();
            for (int64_t k = 0; k < n[i]; k++)
                tj_bench_call(c, (tj_impl)i);
            samples[i][r] = (tj_bench_now_ns() - t0) / (double)n[i];
        }
    for (int i = 0; i < TJ_IMPL_COUNT; i++) {
        if (!tj_bench_available(c, (tj_impl)i)) {
            c->ns[i] = 0;
            continue;
        }
        c->ns[i] = tj_bench_median(samples[i], rounds);
    }
}

const char *tj_impl_name(tj_impl i)
{
    static const char *const names[TJ_IMPL_COUNT] = {"jit",       "dynamic", "jit stub",
                                                     "tiered",    "jit",     "reference",
                                                     "generic",   "static",  "memcpy"};
    return (unsigned)i < TJ_IMPL_COUNT ? names[i] : "?";
}
