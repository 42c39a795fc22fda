/*
 * `tensorjit bench --threads 1,2,...`: each workload's JIT kernel compiled
 * for every thread count of the list (a dynamic variant's dynamic kernel,
 * called with its twin's dims), under the policy --policy names; every
 * output checked against the first count's, then rounds in which each
 * count runs a batch of calls in turn (interleaved, as the main table).
 * Per count: the median ns per call and its ratio to the first count's,
 * which is what the split rule must keep at or below 1 (issue 20); and the
 * static-shape C kernel in the same rounds, where there is one (its loops
 * refuse no index, so they are the error policy's: the workloads' indices
 * are all valid and non-negative, and every policy's output is the same).
 * --json and --verbose also say what the split rule did with each split
 * kernel's calls (tj_split_counts_of): how many ran split and alone, the
 * probes, the verdict's changes and the costs it weighed.
 * A signature whose kernel would not split gets the first count's kernel
 * itself (api.c): its row says "the same kernel", and its ratio is the
 * host's noise between two batches of one function.
 * Beside each count, the memory-limit peer (issue 20): memcpy of the bytes
 * the workload moves (its shape's moved_bytes: the output, or a scatter's
 * copied data and its updates) into a buffer of its own, over the same
 * pool in as many parts as the split rule allows the count (tj_pool_run,
 * parts of whole pages), in the same rounds: where memcpy itself gains
 * little from a second thread, the host's memory is the limit, not the
 * rule.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_run.h"
#include "bench_scaling.h"
#include "jit_support.h"
#include "pool.h"

/* The peer's parts are of whole pages: glibc's memcpy keeps its aligned
 * paths in every part. */
#define TJ_PEER_UNIT 4096

typedef struct tj_scale_peer {
    const char *src[2]; /* what the workload reads, in order; NULL: none */
    int64_t len[2];
    char *dst;          /* bytes, its own */
    int64_t bytes;
    atomic_int ran;     /* parts of the call running now */
    int parts[TJ_SCALE_MAX]; /* per count: the fewest parts a timed call ran in */
} tj_scale_peer;

typedef struct tj_scale_run {
    tj_bench_case c;    /* buffers (tj_bench_prepare), the twin's dims */
    jit_kernel fn[TJ_SCALE_MAX];
    void *pristine;     /* in place: data as filled, restored before each check */
    int dynamic;
    int nfn;            /* kernels in fn; the static kernel is one more where there is one */
    int nimpl;          /* kernels and the static one: what is checked */
    tj_scale_peer peer; /* timed after them, one per count */
    /* per count, for --verbose: the split rule's counts of the timed rounds
     * alone (calls before them subtracted), and the fastest and slowest
     * sample of the rounds */
    tj_split_counts timed[TJ_SCALE_MAX];
    double low[TJ_SCALE_MAX], high[TJ_SCALE_MAX];
} tj_scale_run;

/* Copies pages [begin, end) of the workload's sources, one stream after
 * the other, to the same offsets of dst. */
static void tj_peer_part(void *ctx, int64_t begin, int64_t end)
{
    tj_scale_peer *p = ctx;
    atomic_fetch_add_explicit(&p->ran, 1, memory_order_relaxed);
    int64_t b = begin * TJ_PEER_UNIT, e = end * TJ_PEER_UNIT < p->bytes ? end * TJ_PEER_UNIT
                                                                         : p->bytes;
    for (int s = 0; s < 2; s++) {
        int64_t at = s ? p->len[0] : 0, lo = b > at ? b : at;
        int64_t hi = e < at + p->len[s] ? e : at + p->len[s];
        if (p->src[s] && lo < hi)
            memcpy(p->dst + lo, p->src[s] + (lo - at), (size_t)(hi - lo));
    }
}

/* The peer of count i: its parts, as tj_split_most would cap a kernel's. */
static void tj_peer_call(tj_scale_run *r, const tj_scale_opts *o, int i)
{
    tj_scale_peer *p = &r->peer;
    int parts = o->counts[i] < tj_pool_cpus() ? o->counts[i] : tj_pool_cpus();
    atomic_store_explicit(&p->ran, 0, memory_order_relaxed);
    tj_pool_run(parts, (p->bytes + TJ_PEER_UNIT - 1) / TJ_PEER_UNIT, tj_peer_part, p);
    int ran = atomic_load_explicit(&p->ran, memory_order_relaxed);
    if (p->parts[i] == 0 || ran < p->parts[i])
        p->parts[i] = ran;
}

/* The peer's sources and its own destination; 0, or -1 (out of memory). */
static int tj_peer_prepare(tj_scale_run *r)
{
    tj_bench_case *c = &r->c;
    tj_scale_peer *p = &r->peer;
    if (!c->s.scatter) { /* the output, from the first count's copy of it */
        p->src[0] = c->check, p->len[0] = c->s.out_bytes;
    } else {
        if (c->out != c->data)
            p->src[0] = c->data, p->len[0] = c->s.data_bytes;
        p->src[1] = c->updates, p->len[1] = c->s.updates_bytes;
    }
    p->bytes = p->len[0] + p->len[1];
    p->dst = tj_bench_alloc(p->bytes);
    if (!p->dst)
        return -1;
    memset(p->dst, 0, (size_t)(p->bytes ? p->bytes : 1)); /* its pages, before the timing */
    return 0;
}

/* Count i's kernel, (i == ncounts) the static kernel, or from nimpl on
 * count (i - nimpl)'s peer. */
static int tj_scale_call(tj_scale_run *r, const tj_scale_opts *o, int i)
{
    tj_bench_case *c = &r->c;
    if (i >= r->nimpl) {
        tj_peer_call(r, o, i - r->nimpl);
        return 0;
    }
    if (i == r->nfn)
        return tj_bench_call(c, TJ_IMPL_STATIC);
    return tj_bench_call_fn(c, r->fn[i], r->dynamic);
}

static const char *tj_scale_name(const tj_scale_run *r, const tj_scale_opts *o, int i)
{
    static _Thread_local char buf[32];
    if (i == r->nfn)
        return "the static kernel";
    snprintf(buf, sizeof buf, "%d threads", o->counts[i]);
    return buf;
}

static int tj_scale_compile(tj_scale_run *r, const tj_scale_opts *o, char *why, size_t len)
{
    const tj_workload *w = r->c.w;
    r->dynamic = tj_workload_is_dynamic(w);
    r->nfn = o->ncounts;
    r->nimpl = o->ncounts + (r->c.static_fn != NULL);
    for (int i = 0; i < o->ncounts; i++) {
        jit_sig s = w->sig;
        s.threads = o->counts[i];
        s.index_policy = o->policy;
        r->fn[i] = jit_compile(&s);
        if (!r->fn[i]) {
            snprintf(why, len, "%s, %d threads: %s", w->id, o->counts[i], jit_last_error());
            return -1;
        }
    }
    return 0;
}

/* Every count's output equals the first count's. */
static int tj_scale_verify(tj_scale_run *r, const tj_scale_opts *o, char *why, size_t len)
{
    tj_bench_case *c = &r->c;
    size_t n = (size_t)c->s.out_bytes;
    int in_place = c->out == c->data;
    if (in_place) {
        r->pristine = malloc(n ? n : 1);
        if (!r->pristine)
            return snprintf(why, len, "out of memory"), -1;
        memcpy(r->pristine, c->data, n);
    }
    for (int i = 0; i < r->nimpl; i++) {
        if (in_place)
            memcpy(c->data, r->pristine, n);
        int rc = tj_scale_call(r, o, i);
        if (rc != 0)
            return snprintf(why, len, "%s, %s: status %d: %s", c->w->id, tj_scale_name(r, o, i),
                            rc, jit_last_error()),
                   -1;
        if (i == 0)
            memcpy(c->check, c->out, n);
        else if (memcmp(c->check, c->out, n) != 0)
            return snprintf(why, len, "%s: the output of %s differs from %d thread(s)'",
                            c->w->id, tj_scale_name(r, o, i), o->counts[0]),
                   -1;
    }
    if (in_place)
        memcpy(c->data, r->pristine, n);
    return 0;
}

/* ns[0..nimpl) the kernels' and the static one's, then the peers'. */
static void tj_scale_time(tj_scale_run *r, const tj_scale_opts *o, double *ns)
{
    double samples[2 * TJ_SCALE_MAX + 1][64];
    int64_t batch[2 * TJ_SCALE_MAX + 1];
    int rounds = o->rounds > 64 ? 64 : o->rounds, all = r->nimpl + o->ncounts;
    for (int i = 0; i < all; i++) {
        tj_scale_call(r, o, i); /* warm: caches, the pool, the kernel's measured cost */
        /* the batch from the fastest of three calls: one call sized it
         * before, and a split kernel's first split call (which starts the
         * pool) made G1's batch one call where one thread's had 18 */
        double one = 0;
        for (int k = 0; k < 3; k++) {
            double t0 = tj_bench_now_ns();
            tj_scale_call(r, o, i);
            double t = tj_bench_now_ns() - t0;
            one = k == 0 || t < one ? t : one;
        }
        int64_t b = one > 0 ? (int64_t)(2e5 / one) : 1000;
        batch[i] = b < 1 ? 1 : b > 1000000 ? 1000000 : b;
    }
    memset(r->peer.parts, 0, sizeof r->peer.parts); /* of the timed calls only */
    for (int i = 0; i < r->nfn; i++)
        tj_split_counts_of(r->fn[i], &r->timed[i]);
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < all; i++) {
            tj_scale_call(r, o, i);
            double t0 = tj_bench_now_ns();
            for (int64_t j = 0; j < batch[i]; j++)
                tj_scale_call(r, o, i);
            samples[i][k] = (tj_bench_now_ns() - t0) / (double)batch[i];
        }
    for (int i = 0; i < r->nfn; i++) {
        tj_split_counts now;
        tj_split_counts_of(r->fn[i], &now);
        r->timed[i].split = now.split - r->timed[i].split;
        r->timed[i].alone = now.alone - r->timed[i].alone;
        r->timed[i].probes = now.probes - r->timed[i].probes;
    }
    for (int i = 0; i < all; i++)
        ns[i] = tj_bench_median(samples[i], rounds); /* sorts them */
    for (int i = 0; i < r->nfn && rounds > 0; i++)
        r->low[i] = samples[i][0], r->high[i] = samples[i][rounds - 1];
}

/* What the split rule did with count i's kernel: JSON fields, or a line. */
static void tj_scale_print_rule(const tj_scale_run *r, const tj_scale_opts *o, int i)
{
    tj_split_counts c;
    if (tj_split_counts_of(r->fn[i], &c) != 0 || c.alone + c.split == 0)
        return;
    if (o->json) {
        printf(", \"split_calls\": %lld, \"alone_calls\": %lld, \"probes\": %lld, "
               "\"wake_calls\": %lld, "
               "\"modelled_alone\": %lld, \"quiet_calls\": %lld, \"verdict_changes\": %lld, "
               "\"alone_ps\": %lld, \"split_ps\": %lld, \"pool_job_ns\": %lld",
               (long long)c.split, (long long)c.alone, (long long)c.probes,
               (long long)c.woken, (long long)c.modelled, (long long)c.quiet, (long long)c.flips,
               (long long)c.alone_ps, (long long)c.split_ps, (long long)c.pool_ns);
        printf(", \"timed_split_calls\": %lld, \"timed_alone_calls\": %lld, "
               "\"timed_probes\": %lld, \"ns_low\": %.2f, \"ns_high\": %.2f",
               (long long)r->timed[i].split, (long long)r->timed[i].alone,
               (long long)r->timed[i].probes, r->low[i], r->high[i]);
        return;
    }
    printf("      x%d: %lld split, %lld alone (%lld probes, %lld wake-up calls, %lld by the model, "
           "%lld not weighed), "
           "%lld verdict change(s); ps per unit of work: alone %lld, split %lld (%.2f); pool "
           "job %.1f us\n",
           o->counts[i], (long long)c.split, (long long)c.alone, (long long)c.probes,
           (long long)c.woken, (long long)c.modelled, (long long)c.quiet, (long long)c.flips,
           (long long)c.alone_ps, (long long)c.split_ps,
           c.alone_ps ? (double)c.split_ps / (double)c.alone_ps : 0.0, (double)c.pool_ns / 1000);
    printf("          in the timed rounds: %lld split, %lld alone, %lld probes; samples %.1f to "
           "%.1f ns\n",
           (long long)r->timed[i].split, (long long)r->timed[i].alone,
           (long long)r->timed[i].probes, r->low[i], r->high[i]);
}

static void tj_scale_print(const tj_scale_run *r, const tj_scale_opts *o, const double *ns,
                           int *first)
{
    const char *id = r->c.w->id, *pol = jit_index_policy_name(o->policy);
    const double *peer = ns + r->nimpl;
    if (o->json) {
        for (int i = 0; i < o->ncounts; i++) {
            printf("%s{\"workload\": \"%s\", \"impl\": \"jit\", \"policy\": \"%s\", "
                   "\"threads\": %d, \"ns\": %.2f, \"vs_first\": %.4f",
                   *first ? "" : ",", id, pol, o->counts[i], ns[i], ns[i] / ns[0]);
            printf(", \"memcpy_bytes\": %lld, \"memcpy_parts\": %d, \"memcpy_ns\": %.2f, "
                   "\"memcpy_vs_first\": %.4f",
                   (long long)r->peer.bytes, r->peer.parts[i], peer[i], peer[i] / peer[0]);
            if (i > 0)
                printf(", \"same_kernel_as_first\": %s", r->fn[i] == r->fn[0] ? "true" : "false");
            tj_scale_print_rule(r, o, i);
            printf("}\n");
            *first = 0;
        }
        if (r->nimpl > r->nfn)
            printf(",{\"workload\": \"%s\", \"impl\": \"static\", \"ns\": %.2f, "
                   "\"jit_1_vs_static\": %.4f}\n",
                   id, ns[r->nfn], ns[0] / ns[r->nfn]);
        return;
    }
    printf("%-5s %-16s", id, pol);
    for (int i = 0; i < o->ncounts; i++) {
        printf("  x%d %12.1f ns (%.2f", o->counts[i], ns[i], ns[i] / ns[0]);
        if (i > 0 && r->fn[i] == r->fn[0])
            printf("; the same kernel");
        if (i > 0)
            printf("; memcpy %.2f", peer[i] / peer[0]);
        printf(")");
    }
    if (r->nimpl > r->nfn)
        printf("  static %12.1f ns (x%d %.2f of it)", ns[r->nfn], o->counts[0],
               ns[0] / ns[r->nfn]);
    printf("  memcpy %lld B x%d %.1f ns\n", (long long)r->peer.bytes, o->counts[0], peer[0]);
    for (int i = 0; i < o->ncounts && o->verbose; i++)
        tj_scale_print_rule(r, o, i);
}

int tj_bench_scaling(const tj_workload *const *ws, int n, const tj_scale_opts *o, int *first)
{
    char why[512];
    void *lib = NULL;
    if (tj_static_build(ws, n, &lib, why, sizeof why) != 0)
        fprintf(stderr, "tensorjit: bench: %s; the static column is skipped\n", why);
    if (!o->json)
        printf("threads scaling (%s): ns per call, in brackets against %d thread(s), beside "
               "memcpy of the bytes the workload moves, split the same way, against its own "
               "%d-thread time\n",
               jit_index_policy_name(o->policy), o->counts[0], o->counts[0]);
    for (int k = 0; k < n; k++) {
        tj_scale_run r;
        memset(&r, 0, sizeof r);
        int rc = tj_bench_prepare(&r.c, ws[k], lib, why, sizeof why);
        if (rc == 0)
            rc = tj_scale_compile(&r, o, why, sizeof why);
        if (rc == 0)
            rc = tj_scale_verify(&r, o, why, sizeof why);
        if (rc == 0 && tj_peer_prepare(&r) != 0)
            rc = -1, snprintf(why, sizeof why, "%s: out of memory for the memcpy peer", ws[k]->id);
        if (rc == 0) {
            double ns[2 * TJ_SCALE_MAX + 1];
            tj_scale_time(&r, o, ns);
            tj_scale_print(&r, o, ns, first);
        }
        free(r.pristine);
        free(r.peer.dst);
        tj_bench_release(&r.c);
        jit_shutdown();
        if (rc != 0) {
            fprintf(stderr, "tensorjit: bench: %s\n", why);
            tj_static_close(lib);
            return -1;
        }
    }
    tj_static_close(lib);
    return 0;
}

int tj_scale_parse(const char *list, tj_scale_opts *o)
{
    o->ncounts = 0;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 64 || o->ncounts == TJ_SCALE_MAX ||
            (*end != ',' && *end != '\0'))
            return -1;
        o->counts[o->ncounts++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return o->ncounts > 0 ? 0 : -1;
}
