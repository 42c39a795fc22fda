/*
 * tensorjit-split-trace: what the split rule does call by call. One
 * workload of `tensorjit bench` compiled with --threads T under --policy
 * P, called --calls N times in batches of --batch K back-to-back calls,
 * the calling thread busy for --gap-us G between batches (as the bench's
 * interleaved rows keep it; the pool's workers sleep meanwhile). Per call:
 * its ns, the way it ran (split or alone, and whether it probed), and the
 * costs the rule weighed after it (ps per unit of work alone and split,
 * the pool's job cost now). Exits 1 if the rule's counts of alone and
 * split calls do not add up to the calls. For development (issue 20's
 * short runs on the 16-core host), not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_run.h"
#include "jit_support.h"
#include "workloads.h"

typedef struct st_opts {
    const char *workload;
    jit_index_policy policy;
    int threads, calls, batch;
    double gap_ns;
} st_opts;

static int st_usage(void)
{
    fprintf(stderr, "usage: tensorjit-split-trace --workload ID [--policy P] [--threads T] "
                    "[--calls N] [--batch K] [--gap-us G]\n");
    return 2;
}

static int st_parse(int argc, char **argv, st_opts *o)
{
    *o = (st_opts){.workload = NULL, .policy = JIT_INDEX_ERROR, .threads = 2, .calls = 60,
                   .batch = 2, .gap_ns = 5e6};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--workload") == 0)
            o->workload = v;
        else if (strcmp(a, "--policy") == 0) {
            if (jit_index_policy_from_name(v, &o->policy) != 0)
                return -1;
        } else if (strcmp(a, "--threads") == 0)
            o->threads = atoi(v);
        else if (strcmp(a, "--calls") == 0)
            o->calls = atoi(v);
        else if (strcmp(a, "--batch") == 0)
            o->batch = atoi(v);
        else if (strcmp(a, "--gap-us") == 0)
            o->gap_ns = atof(v) * 1e3;
        else
            return -1;
    }
    return o->workload && o->threads >= 1 && o->calls >= 1 && o->batch >= 1 && o->gap_ns >= 0
               ? 0
               : -1;
}

/* The calling thread busy (not asleep) for ns. */
static void st_busy(double ns)
{
    double until = tj_bench_now_ns() + ns;
    while (tj_bench_now_ns() < until)
        ;
}

int main(int argc, char **argv)
{
    st_opts o;
    if (st_parse(argc, argv, &o) != 0)
        return st_usage();
    const tj_workload *w = tj_workload_find(o.workload);
    if (!w)
        return fprintf(stderr, "no workload '%s'\n", o.workload), 2;
    char why[512];
    tj_bench_case c;
    memset(&c, 0, sizeof c);
    if (tj_bench_prepare(&c, w, NULL, why, sizeof why) != 0)
        return fprintf(stderr, "%s\n", why), 1;
    jit_sig s = w->sig;
    s.threads = o.threads;
    s.index_policy = o.policy;
    jit_kernel fn = jit_compile(&s);
    if (!fn)
        return fprintf(stderr, "%s\n", jit_last_error()), 1;
    int dynamic = tj_workload_is_dynamic(w);
    printf("%s %s threads %d, batches of %d, %.0f us busy between\n", w->id,
           jit_index_policy_name(o.policy), o.threads, o.batch, o.gap_ns / 1e3);
    printf("call      ns  way    probe  alone_ps  split_ps  pool_us\n");
    tj_split_counts before, after;
    tj_split_counts_of(fn, &before);
    for (int i = 0; i < o.calls; i++) {
        if (i > 0 && i % o.batch == 0)
            st_busy(o.gap_ns);
        double t0 = tj_bench_now_ns();
        int rc = tj_bench_call_fn(&c, fn, dynamic);
        double ns = tj_bench_now_ns() - t0;
        if (rc != 0)
            return fprintf(stderr, "call %d: status %d: %s\n", i + 1, rc, jit_last_error()), 1;
        tj_split_counts_of(fn, &after);
        const char *way = after.split > before.split ? "split" : "alone";
        printf("%4d %10.0f  %-5s  %-5s  %8lld  %8lld  %7.1f\n", i + 1, ns, way,
               after.probes > before.probes  ? "probe"
               : after.woken > before.woken ? "wake"
                                            : "",
               (long long)after.alone_ps,
               (long long)after.split_ps, (double)after.pool_ns / 1e3);
        before = after;
    }
    /* every call counted once, a wake-up call among the split ones */
    int bad = before.alone + before.split != o.calls;
    if (bad)
        fprintf(stderr, "the rule counted %lld alone and %lld split of %d calls\n",
                (long long)before.alone, (long long)before.split, o.calls);
    jit_release(fn);
    tj_bench_release(&c);
    jit_shutdown();
    return bad;
}
