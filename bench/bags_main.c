/* `tensorjit bench --bags [--workload E1..E5] [--rounds N] [--json]`: the
 * embedding-bag table (shared/bench/workloads.md, "Embedding bags"). Not
 * part of the default bench: E2's table alone is 2 GB. workloads.md judges
 * on the median of five interleaved runs: a round here is such a run (it
 * times every row once, in turn), five by default. The hidden
 * --bags-smoke runs the same on small shapes and --dump DIR writes each
 * workload's inputs (index set 0) and the static kernel's output as .npy,
 * bf16 as its uint16 bits: the bench's test checks them with an oracle. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bags.h"
#include "bags_run.h"
#include "bench_scaling.h"
#include "cli.h"
#include "jit_support.h"
#include "npy.h"

typedef struct tj_bags_opts {
    const char *only, *dump;
    int json, rounds, smoke;
    int threads[TJ_BAG_THREAD_ROWS]; /* the "jit xN" rows; 0 after the last */
} tj_bags_opts;

int tj_bench_wants_bags(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--bags") == 0 || strcmp(argv[i], "--bags-smoke") == 0 ||
            (strcmp(argv[i], "--workload") == 0 && i + 1 < argc &&
             tj_bag_workload_find(argv[i + 1])))
            return 1;
    return 0;
}

/* --threads 1,2,4,8 as the scaling bench takes it: a "jit xN" row for
 * each N > 1 (the jit row is the 1-thread one). */
static int tj_bags_threads(const char *list, int *threads)
{
    tj_scale_opts s;
    int k = 0;
    if (tj_scale_parse(list, &s) != 0)
        return tj_cli_fail("bench: --threads takes a list of counts in [1, 64], such as 1,2,4");
    memset(threads, 0, TJ_BAG_THREAD_ROWS * sizeof *threads);
    for (int i = 0; i < s.ncounts; i++) {
        if (s.counts[i] == 1)
            continue;
        if (k == TJ_BAG_THREAD_ROWS)
            return tj_cli_fail("bench: --threads '%s' with --bags: at most %d counts above 1",
                               list, TJ_BAG_THREAD_ROWS);
        threads[k++] = s.counts[i];
    }
    return 0;
}

static int tj_bags_args(int argc, char **argv, tj_bags_opts *o)
{
    *o = (tj_bags_opts){.rounds = 5, .threads = {2}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n;
        if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--bags") == 0)
            continue;
        else if (strcmp(a, "--bags-smoke") == 0)
            o->smoke = 1;
        else if (strcmp(a, "--workload") == 0 && v) {
            if (!tj_bag_workload_find(v))
                return tj_cli_fail("bench: no bag workload '%s' (E1, E2a, E2b, E3, E4, E5)", v);
            o->only = argv[++i];
        } else if (strcmp(a, "--rounds") == 0 && v) {
            if (tj_cli_int("--rounds", argv[++i], 3, 64, &n))
                return TJ_EXIT_USAGE;
            o->rounds = (int)n;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (tj_bags_threads(argv[++i], o->threads))
                return TJ_EXIT_USAGE;
        } else if (strcmp(a, "--dump") == 0 && v)
            o->dump = argv[++i];
        else
            return tj_cli_fail("bench: unknown argument '%s' with --bags", a);
    }
    return 0;
}

static const char *tj_madvise_word(int madvised)
{
    return madvised > 0 ? "ok" : madvised == 0 ? "refused" : "not asked under 2 MB";
}

/* The compile figures, what the checks cost (jit against jit unchecked)
 * and what the dynamic dims cost (jit dyn against jit), in the same
 * rounds. */
static void tj_print_compile(const tj_bag_case *c)
{
    if (c->compile_ms >= 0 || c->compile_dyn_ms >= 0)
        printf("      compile after a first (%.2f ms): static %.2f ms, dynamic %.2f ms\n",
               c->first_compile_ms, c->compile_ms, c->compile_dyn_ms);
    if (c->async_back_ms >= 0)
        printf("      dynamic through jit_compile_async (another key): a pointer after %.2f ms, "
               "the JIT kernel in it after %.2f ms\n", c->async_back_ms, c->async_jit_ms);
    if (tj_bag_available(c, TJ_BAG_JIT) && tj_bag_available(c, TJ_BAG_JIT_UNCHECKED) &&
        c->ns[TJ_BAG_JIT_UNCHECKED] > 0)
        printf("      run-time checks: jit / jit unchecked %.3fx\n",
               tj_bag_ratio(c, TJ_BAG_JIT, TJ_BAG_JIT_UNCHECKED));
    if (tj_bag_available(c, TJ_BAG_JIT) && tj_bag_available(c, TJ_BAG_JIT_DYN))
        printf("      dynamic dims: jit dyn / jit %.3fx\n",
               tj_bag_ratio(c, TJ_BAG_JIT_DYN, TJ_BAG_JIT));
}

/* Two threads over one, the probe's and a "jit x2" row's: what the one
 * says the cores can do beside what the other did. */
static void tj_print_two_threads(const tj_bag_case *c)
{
    if (!tj_bag_available(c, TJ_BAG_PROBE_X2))
        return;
    printf("      two threads over one: probe x2 / probe %.2f",
           tj_bag_ratio(c, TJ_BAG_PROBE_X2, TJ_BAG_PROBE));
    for (int i = TJ_BAG_JIT_THREADS; i < TJ_BAG_COUNT; i++)
        if (tj_bag_threads(c, (tj_bag_impl)i) == 2 && tj_bag_available(c, (tj_bag_impl)i) &&
            tj_bag_available(c, TJ_BAG_JIT))
            printf(", jit x2 / jit %.2f", tj_bag_ratio(c, (tj_bag_impl)i, TJ_BAG_JIT));
    printf("\n");
}

/* What the split rule did with a "jit xN" row's calls: a jit x2 row near
 * its one-thread time ran alone, or split at a loss (runtime/exec/split_rule.c). */
static void tj_print_split_rule(const tj_bag_case *c, tj_bag_impl i)
{
    tj_split_counts s;
    if (i < TJ_BAG_JIT_THREADS || tj_split_counts_of((jit_kernel)c->fn[i], &s) != 0 ||
        s.alone + s.split == 0)
        return;
    printf("      %-22s split rule: %lld of %lld calls split, %lld probes, %lld verdict "
           "changes; a unit of work %.1f ns alone, %.1f split; a pool job %lld ns\n", "",
           (long long)s.split, (long long)(s.split + s.alone), (long long)s.probes,
           (long long)s.flips, (double)s.alone_ps / 1000, (double)s.split_ps / 1000,
           (long long)s.pool_ns);
}

/* The same as JSON fields of a "jit xN" row (bench --threads --json's names). */
static void tj_print_split_json(const tj_bag_case *c, tj_bag_impl i)
{
    tj_split_counts s;
    if (i < TJ_BAG_JIT_THREADS || tj_split_counts_of((jit_kernel)c->fn[i], &s) != 0)
        return;
    printf(", \"split_calls\": %lld, \"alone_calls\": %lld, \"probes\": %lld, "
           "\"verdict_changes\": %lld, \"alone_ps\": %lld, \"split_ps\": %lld, "
           "\"pool_job_ns\": %lld", (long long)s.split, (long long)s.alone, (long long)s.probes,
           (long long)s.flips, (long long)s.alone_ps, (long long)s.split_ps,
           (long long)s.pool_ns);
}

static void tj_print_text(const tj_bag_case *c)
{
    const tj_bag_inputs *in = &c->in;
    const tj_bag_workload *w = in->w;
    double mb = 1024.0 * 1024.0;
    double between = (double)(in->sets - 1) * (double)(in->n * w->width * (int64_t)in->elem);
    printf("%-5s %s\n", w->id, w->what);
    printf("      %lld lookups a call; %d index sets (%.0f MiB of rows read between two uses of "
           "one, %.1fx the LLC)\n",
           (long long)in->n, in->sets, between / mb, between / (double)tj_bag_llc_bytes());
    printf("      table on huge pages: %.0f of %.0f MiB (THP %s, madvise %s)\n",
           (double)in->huge_bytes / mb, (double)in->table_bytes / mb, tj_bag_thp_mode(),
           tj_madvise_word(in->madvised));
    tj_print_compile(c);
    printf("      %-22s %14s %10s %10s  %s\n", "impl", "ns/call", "ns/lookup", "vs static",
           "min..max ns/call");
    for (int i = 0; i < TJ_BAG_COUNT; i++) {
        char label[48];
        if (i >= TJ_BAG_JIT_THREADS && !c->threads[i - TJ_BAG_JIT_THREADS])
            continue;
        if (!tj_bag_available(c, (tj_bag_impl)i)) {
            printf("      %-22s (%s)\n", tj_bag_impl_name(c, (tj_bag_impl)i), c->jit_why);
            continue;
        }
        if (i == TJ_BAG_PROBE || i == TJ_BAG_PROBE_X2)
            snprintf(label, sizeof label, "%s (distance %lld)",
                     tj_bag_impl_name(c, (tj_bag_impl)i), c->distance);
        else
            snprintf(label, sizeof label, "%s", tj_bag_impl_name(c, (tj_bag_impl)i));
        printf("      %-22s %14.1f %10.2f %9.2fx  %.1f..%.1f%s\n", label, c->ns[i],
               in->n ? c->ns[i] / (double)in->n : 0,
               tj_bag_ratio(c, (tj_bag_impl)i, TJ_BAG_STATIC), c->ns_min[i], c->ns_max[i],
               c->ok[i] ? "" : "  OUTPUT DIFFERS FROM THE STATIC KERNEL'S");
        tj_print_split_rule(c, (tj_bag_impl)i);
    }
    tj_print_two_threads(c);
}

static const char *tj_bool(int v)
{
    return v ? "true" : "false";
}

static void tj_print_json(const tj_bag_case *c, int *first)
{
    const tj_bag_inputs *in = &c->in;
    const tj_bag_workload *w = in->w;
    for (int i = 0; i < TJ_BAG_COUNT; i++) {
        if (!tj_bag_available(c, (tj_bag_impl)i))
            continue;
        printf("%s{\"workload\": \"%s\", \"impl\": \"%s\", \"ns\": %.2f, \"ns_per_lookup\": %.4f, "
               "\"vs_static\": %.4f, \"threads\": %d, \"output_ok\": %s, \"lookups\": %lld, "
               "\"index_sets\": %d, \"reduction\": \"%s\", \"weighted\": %s, \"form\": \"%s\", "
               "\"table_bytes\": %lld, \"huge_page_bytes\": %lld, \"thp\": \"%s\", "
               "\"madvise\": \"%s\", \"rounds\": %d, \"ns_min\": %.2f, \"ns_max\": %.2f",
               *first ? "" : ",", w->id, tj_bag_impl_name(c, (tj_bag_impl)i), c->ns[i],
               in->n ? c->ns[i] / (double)in->n : 0,
               tj_bag_ratio(c, (tj_bag_impl)i, TJ_BAG_STATIC), tj_bag_threads(c, (tj_bag_impl)i),
               tj_bool(c->ok[i]), (long long)in->n, in->sets, w->mean ? "mean" : "sum",
               tj_bool(w->weighted), w->packed ? "packed" : "offsets",
               (long long)in->table_bytes, (long long)in->huge_bytes, tj_bag_thp_mode(),
               tj_madvise_word(in->madvised), c->rounds, c->ns_min[i], c->ns_max[i]);
        if (i == TJ_BAG_JIT && c->compile_ms >= 0)
            printf(", \"compile_ms\": %.3f, \"first_compile_ms\": %.3f", c->compile_ms,
                   c->first_compile_ms);
        if (i == TJ_BAG_JIT_DYN && c->compile_dyn_ms >= 0)
            printf(", \"compile_ms\": %.3f, \"first_compile_ms\": %.3f", c->compile_dyn_ms,
                   c->first_compile_ms);
        if (i == TJ_BAG_JIT_DYN && c->async_back_ms >= 0)
            printf(", \"async_back_ms\": %.3f, \"async_jit_ms\": %.3f", c->async_back_ms,
                   c->async_jit_ms);
        if (i == TJ_BAG_JIT_DYN && tj_bag_available(c, TJ_BAG_JIT))
            printf(", \"vs_jit\": %.4f", tj_bag_ratio(c, TJ_BAG_JIT_DYN, TJ_BAG_JIT));
        if (i == TJ_BAG_JIT_UNCHECKED && c->ns[TJ_BAG_JIT_UNCHECKED] > 0)
            printf(", \"jit_vs_unchecked\": %.4f", tj_bag_ratio(c, TJ_BAG_JIT, i));
        if (i == TJ_BAG_PROBE || i == TJ_BAG_PROBE_X2)
            printf(", \"prefetch_distance\": %lld", c->distance);
        if (i == TJ_BAG_PROBE_X2)
            printf(", \"vs_probe\": %.4f", tj_bag_ratio(c, i, TJ_BAG_PROBE));
        tj_print_split_json(c, (tj_bag_impl)i);
        printf("}\n");
        *first = 0;
    }
}

static int tj_dump_one(const char *dir, const char *id, const char *what, jit_dtype t,
                       jit_shape s, const void *data)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s_%s.npy", dir, id, what);
    if (tj_npy_write(path, t, &s, data, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "tensorjit: bench: %s\n", err);
    return -1;
}

static int tj_dump(const tj_bag_case *c, const char *dir)
{
    const tj_bag_inputs *in = &c->in;
    const tj_bag_workload *w = in->w;
    jit_dtype t = w->bf16 ? JIT_U16 : JIT_F32, it = w->index_size == 4 ? JIT_I32 : JIT_I64;
    jit_shape ix = w->packed ? (jit_shape){2, {w->bags, w->length}} : (jit_shape){1, {in->n}};
    mkdir(dir, 0755);
    int rc = tj_dump_one(dir, w->id, "table", t, (jit_shape){2, {w->rows, w->width}}, in->table);
    rc |= tj_dump_one(dir, w->id, "indices", it, ix, tj_bag_set_indices(in, 0));
    rc |= tj_dump_one(dir, w->id, "out", t, (jit_shape){2, {w->bags, w->width}}, c->reference);
    if (!w->packed)
        rc |= tj_dump_one(dir, w->id, "offsets", it, (jit_shape){1, {w->bags}}, in->offsets);
    if (w->weighted)
        rc |= tj_dump_one(dir, w->id, "weights", t, ix, tj_bag_set_weights(in, 0));
    return rc;
}

/* How every figure below was taken: the same for every row. */
static void tj_print_header(const tj_bags_opts *o)
{
    printf("tensorjit bench --bags: %d interleaved rounds, each timing every row once in turn; "
           "ns/call is their median, a ratio the median of the rounds' ratios\n",
           o->rounds);
    printf("huge pages: transparent (THP %s); every buffer of 2 MB or more, of every row alike, "
           "is 2 MB aligned and madvise(MADV_HUGEPAGE)'d\n",
           tj_bag_thp_mode());
    printf("compiles: disk cache off; each workload's come after a first bag compile (another "
           "signature) in a library just shut down, so that none is a cache hit\n");
    printf("\n");
}

static int tj_bags_one(const tj_bag_workload *w, const tj_bags_opts *o, int *first, int *bad)
{
    tj_bag_case c;
    char why[512];
    if (tj_bag_prepare(&c, w, o->threads, o->smoke, why, sizeof why) != 0) {
        tj_bag_release(&c);
        return tj_cli_fail("bench: %s", why);
    }
    *bad += tj_bag_verify(&c);
    if (o->dump && tj_dump(&c, o->dump) != 0) {
        tj_bag_release(&c);
        return TJ_EXIT_FAILURE;
    }
    tj_bag_time(&c, o->rounds, o->smoke ? 2e5 : 2e7);
    if (o->json)
        tj_print_json(&c, first);
    else
        tj_print_text(&c);
    fflush(stdout);
    tj_bag_release(&c);
    return 0;
}

int tj_bench_bags(int argc, char **argv)
{
    tj_bags_opts o;
    int rc = tj_bags_args(argc, argv, &o), first = 1, bad = 0;
    if (rc)
        return rc;
    const tj_bag_workload *ws = o.smoke ? tj_bag_smoke_workloads : tj_bag_workloads;
    int count = o.smoke ? tj_bag_smoke_count : tj_bag_workload_count;
    jit_cache_close(); /* compile times are compiles, not disk-cache loads */
    if (o.json)
        printf("[\n");
    else
        tj_print_header(&o);
    for (int i = 0; i < count && rc == 0; i++)
        if (!o.only || strcmp(o.only, ws[i].id) == 0)
            rc = tj_bags_one(&ws[i], &o, &first, &bad);
    if (o.json)
        printf("]\n");
    if (rc)
        return rc;
    if (bad)
        fprintf(stderr, "tensorjit: bench: %d output(s) differ from the static kernel's (see the "
                        "MISMATCH lines)\n", bad);
    return bad ? TJ_EXIT_FAILURE : TJ_EXIT_OK;
}
