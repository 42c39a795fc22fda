/* A bag workload's peers in one process: each call takes the next index
 * set, for every peer alike, so that no call finds its rows cached from
 * the last use of its set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bags_probe2.h"
#include "bags_run.h"
#include "bench.h"

/* The probe's candidate distances in lookups (workloads.md: 8 to 256). */
static const long long tj_probe_distances[] = {8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
#define TJ_VERIFY_SETS 4

const char *tj_bag_impl_name(const tj_bag_case *c, tj_bag_impl i)
{
    static const char *const names[TJ_BAG_JIT_THREADS] = {
        "static", "prefetch16", "probe", "probe x2", "memcpy", "jit", "jit dyn", "jit unchecked"};
    if ((unsigned)i < TJ_BAG_JIT_THREADS)
        return names[i];
    return (unsigned)i < TJ_BAG_COUNT ? c->thread_names[i - TJ_BAG_JIT_THREADS] : "?";
}

int tj_bag_threads(const tj_bag_case *c, tj_bag_impl i)
{
    if (i == TJ_BAG_PROBE_X2)
        return 2;
    return i >= TJ_BAG_JIT_THREADS && i < TJ_BAG_COUNT ? c->threads[i - TJ_BAG_JIT_THREADS] : 1;
}

int tj_bag_available(const tj_bag_case *c, tj_bag_impl i)
{
    if (i == TJ_BAG_MEMCPY)
        return 1;
    switch (i) {
    case TJ_BAG_PROBE:
        return c->probe != NULL;
    case TJ_BAG_PROBE_X2:
        return c->worker != NULL;
    case TJ_BAG_JIT_DYN:
        return c->dyn != NULL;
    default:
        return c->fn[i] != NULL;
    }
}

static int tj_bag_call_set(tj_bag_case *c, tj_bag_impl i, int set)
{
    const tj_bag_inputs *in = &c->in;
    const void *ix = tj_bag_set_indices(in, set), *wt = tj_bag_set_weights(in, set);
    switch (i) {
    case TJ_BAG_MEMCPY:
        memcpy(c->out, c->reference, (size_t)in->out_bytes);
        return 0;
    case TJ_BAG_PROBE:
        return c->probe(in->table, ix, in->offsets, wt, c->out, c->distance);
    case TJ_BAG_PROBE_X2:
        return tj_probe_x2(c->worker, c->probe_range, in->table, ix, in->offsets, wt, c->out,
                           c->distance, in->w->bags);
    case TJ_BAG_JIT_DYN:
        return c->dyn(in->table, ix, in->offsets, wt, c->out, c->dims);
    default:
        return c->fn[i](in->table, ix, in->offsets, wt, c->out);
    }
}

static int tj_bag_call(tj_bag_case *c, tj_bag_impl i)
{
    int set = c->next_set;
    c->next_set = (set + 1) % c->in.sets;
    return tj_bag_call_set(c, i, set);
}

/* Median ns per call of `calls` probe calls at distance d, over 3 batches. */
static double tj_probe_time(tj_bag_case *c, long long d, int calls)
{
    double v[3];
    c->distance = d;
    tj_bag_call(c, TJ_BAG_PROBE);
    for (int k = 0; k < 3; k++) {
        double t0 = tj_bench_now_ns();
        for (int i = 0; i < calls; i++)
            tj_bag_call(c, TJ_BAG_PROBE);
        v[k] = (tj_bench_now_ns() - t0) / calls;
    }
    return tj_bench_median(v, 3);
}

/* The fastest distance, searched once and then fixed for the rounds. */
static void tj_probe_search(tj_bag_case *c, double batch_ns)
{
    double t0 = tj_bench_now_ns();
    c->distance = 16;
    tj_bag_call(c, TJ_BAG_PROBE);
    double one = tj_bench_now_ns() - t0;
    int calls = one > 0 && batch_ns / one > 1 ? (int)(batch_ns / one) : 1;
    double best = 0;
    long long pick = 16;
    for (size_t k = 0; k < sizeof tj_probe_distances / sizeof *tj_probe_distances; k++) {
        double ns = tj_probe_time(c, tj_probe_distances[k], calls);
        if (k == 0 || ns < best)
            best = ns, pick = tj_probe_distances[k];
    }
    c->distance = pick;
}

/* tensorjit's rows; the static and the dynamic kernel first, timed. */
static void tj_bag_compile_jit(tj_bag_case *c, const tj_bag_workload *w, const int *threads)
{
    char *why = c->jit_why;
    size_t len = sizeof c->jit_why;
    c->compile_ms = c->compile_dyn_ms = -1;
    jit_shutdown(); /* the earlier workloads' kernels are released already */
    c->first_compile_ms = tj_bags_jit_first_compile();
    c->fn[TJ_BAG_JIT] = tj_bags_jit_compile(w, c->in.n, 1, &c->compile_ms, why, len);
    c->dyn = tj_bags_jit_compile_dynamic(w, &c->compile_dyn_ms, why, len);
    tj_bags_jit_async(w, &c->async_back_ms, &c->async_jit_ms);
    tj_bags_jit_dims(w, c->in.n, c->dims);
    c->fn[TJ_BAG_JIT_UNCHECKED] = tj_bags_jit_compile_unchecked(w, c->in.n, why, len);
    for (int k = 0; k < TJ_BAG_THREAD_ROWS && threads[k] > 0; k++) {
        c->threads[k] = threads[k];
        snprintf(c->thread_names[k], sizeof c->thread_names[k], "jit x%d", threads[k]);
        c->fn[TJ_BAG_JIT_THREADS + k] = tj_bags_jit_compile(w, c->in.n, threads[k], NULL, why, len);
    }
    if (!c->fn[TJ_BAG_JIT])
        c->compile_ms = -1;
    if (!c->dyn)
        c->compile_dyn_ms = -1;
}

int tj_bag_prepare(tj_bag_case *c, const tj_bag_workload *w, const int *threads, int smoke,
                   char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    if (tj_bag_inputs_make(&c->in, w, tj_bag_llc_bytes(), smoke ? 3 : 0, why, len) != 0)
        return -1;
    c->out = tj_bag_alloc(c->in.out_bytes, NULL);
    c->reference = tj_bag_alloc(c->in.out_bytes, NULL);
    if (!c->out || !c->reference) {
        snprintf(why, len, "%s: out of memory for the outputs", w->id);
        return -1;
    }
    if (tj_bag_static_build(&w, &c->in.n, 1, &c->lib, why, len) != 0)
        return -1;
    c->fn[TJ_BAG_STATIC] = (tj_bag_fn)tj_bag_static_find(c->lib, "static", w->id);
    c->fn[TJ_BAG_PREFETCH] = (tj_bag_fn)tj_bag_static_find(c->lib, "prefetch", w->id);
    c->probe = (tj_bag_probe_fn)tj_bag_static_find(c->lib, "probe", w->id);
    c->probe_range = (tj_bag_probe_range_fn)tj_bag_static_find(c->lib, "probe_range", w->id);
    if (!c->fn[TJ_BAG_STATIC] || !c->fn[TJ_BAG_PREFETCH] || !c->probe || !c->probe_range) {
        snprintf(why, len, "%s: the compiled static kernels lack a symbol", w->id);
        return -1;
    }
    tj_bag_compile_jit(c, w, threads);
    tj_probe_search(c, smoke ? 2e5 : 2e7);
    c->worker = tj_probe_worker_start(); /* at the one-thread probe's distance */
    return 0;
}

void tj_bag_release(tj_bag_case *c)
{
    tj_probe_worker_stop(c->worker);
    tj_bag_inputs_free(&c->in);
    free(c->out);
    free(c->reference);
    if (c->lib)
        tj_bag_static_close(c->lib);
    memset(c, 0, sizeof *c);
}

/* Peer i on one set against the static kernel's output `want`: 1 when
 * equal, else 0 and why on stderr. */
static int tj_bag_check_one(tj_bag_case *c, tj_bag_impl i, int set, const void *want,
                            const char *corrupt)
{
    size_t n = (size_t)c->in.out_bytes;
    memset(c->out, 0xa5, n); /* nothing left from an earlier call passes for output */
    int rc = tj_bag_call_set(c, i, set);
    if (corrupt && strcmp(corrupt, tj_bag_impl_name(c, i)) == 0 && n)
        ((unsigned char *)c->out)[n / 2] ^= 1;
    const unsigned char *a = c->out, *b = want;
    size_t at = 0;
    while (at < n && a[at] == b[at])
        at++;
    if (rc == 0 && at == n)
        return 1;
    if (rc != 0)
        fprintf(stderr, "tensorjit: bench: %s: MISMATCH: %s failed (status %d) on index set %d\n",
                c->in.w->id, tj_bag_impl_name(c, i), rc, set);
    else
        fprintf(stderr, "tensorjit: bench: %s: MISMATCH: %s's output differs from the static "
                        "kernel's on index set %d, first at byte %zu of %zu\n",
                c->in.w->id, tj_bag_impl_name(c, i), set, at, n);
    return 0;
}

int tj_bag_verify(tj_bag_case *c)
{
    const char *corrupt = getenv("TENSORJIT_BENCH_BAGS_CORRUPT");
    size_t n = (size_t)c->in.out_bytes;
    void *want = tj_bag_alloc(c->in.out_bytes, NULL);
    int bad = 0, sets = c->in.sets < TJ_VERIFY_SETS ? c->in.sets : TJ_VERIFY_SETS;
    for (int i = 0; i < TJ_BAG_COUNT; i++)
        c->ok[i] = tj_bag_available(c, (tj_bag_impl)i);
    if (!want || tj_bag_call_set(c, TJ_BAG_STATIC, 0) != 0) {
        fprintf(stderr, "tensorjit: bench: %s: %s\n", c->in.w->id,
                want ? "the static kernel fails on its own inputs" : "out of memory");
        free(want);
        memset(c->ok, 0, sizeof c->ok);
        return TJ_BAG_COUNT;
    }
    memcpy(c->reference, c->out, n);
    for (int set = 0; set < sets; set++) {
        if (tj_bag_call_set(c, TJ_BAG_STATIC, set) != 0)
            c->ok[TJ_BAG_STATIC] = 0;
        memcpy(want, c->out, n);
        for (int i = 0; i < TJ_BAG_COUNT; i++)
            if (c->ok[i] && i != TJ_BAG_STATIC && (i != TJ_BAG_MEMCPY || set == 0))
                c->ok[i] = tj_bag_check_one(c, (tj_bag_impl)i, set, set ? want : c->reference,
                                            corrupt);
    }
    free(want);
    for (int i = 0; i < TJ_BAG_COUNT; i++)
        bad += tj_bag_available(c, (tj_bag_impl)i) && !c->ok[i];
    return bad;
}

static int64_t tj_bag_batch(tj_bag_case *c, tj_bag_impl i, double target_ns)
{
    double t0 = tj_bench_now_ns();
    tj_bag_call(c, i);
    double one = tj_bench_now_ns() - t0;
    int64_t n = one > 0 ? (int64_t)(target_ns / one) : 1000;
    return n < 1 ? 1 : n > 100000 ? 100000 : n;
}

void tj_bag_time(tj_bag_case *c, int rounds, double batch_ns)
{
    int64_t n[TJ_BAG_COUNT] = {0};
    double samples[TJ_BAG_COUNT][TJ_BAG_MAX_ROUNDS];
    rounds = rounds > TJ_BAG_MAX_ROUNDS ? TJ_BAG_MAX_ROUNDS : rounds;
    c->rounds = rounds;
    for (int i = 0; i < TJ_BAG_COUNT; i++)
        if (tj_bag_available(c, (tj_bag_impl)i)) {
            tj_bag_call(c, (tj_bag_impl)i);
            n[i] = tj_bag_batch(c, (tj_bag_impl)i, batch_ns);
        }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < TJ_BAG_COUNT; i++) {
            if (!n[i])
                continue;
            tj_bag_call(c, (tj_bag_impl)i); /* untimed: the batch starts like the others */
            double t0 = tj_bench_now_ns();
            for (int64_t k = 0; k < n[i]; k++)
                tj_bag_call(c, (tj_bag_impl)i);
            samples[i][r] = (tj_bench_now_ns() - t0) / (double)n[i];
            c->round_ns[i][r] = samples[i][r];
        }
    for (int i = 0; i < TJ_BAG_COUNT; i++) {
        c->ns[i] = n[i] ? tj_bench_median(samples[i], rounds) : 0; /* sorts them */
        c->ns_min[i] = n[i] ? samples[i][0] : 0;
        c->ns_max[i] = n[i] ? samples[i][rounds - 1] : 0;
    }
}

double tj_bag_ratio(const tj_bag_case *c, tj_bag_impl a, tj_bag_impl b)
{
    double v[TJ_BAG_MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < c->rounds; r++)
        if (c->round_ns[b][r] > 0)
            v[n++] = c->round_ns[a][r] / c->round_ns[b][r];
    return tj_bench_median(v, n);
}
