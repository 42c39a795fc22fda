/* `tensorjit bench [--workload ID] [--json] [--rounds N] [--no-compile]
 * [--compile] [--threads 1,2,... [--policy NAME]]` and `--bags`: the performance table
 * of shared/bench/workloads.md and the compile figures, or (--threads)
 * how each workload's kernel scales with threads. Ratios are measured in
 * one run, interleaved; absolute times on a shared machine drift. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bags.h"
#include "bench.h"
#include "bench_compile.h"
#include "bench_run.h"
#include "bench_scaling.h"
#include "cli.h"

typedef struct tj_bench_opts {
    const char *only;
    int json, rounds, compile, compile_only, compile_runs;
    int rounds_given, policy_given, runs_given; /* to refuse what would be ignored */
    tj_scale_opts scale; /* ncounts > 0: --threads */
} tj_bench_opts;

/* Flags one mode ignores are refused: a user's --compile --workload G6
 * timed every workload's compile. 0, or -1 after the error line. */
static int tj_bench_consistent(const tj_bench_opts *o)
{
    if (o->compile_only && (o->only || o->rounds_given || o->scale.ncounts || !o->compile))
        return tj_cli_fail("bench: --compile times every workload's compile over --runs N "
                           "processes: --workload, --rounds, --threads and --no-compile do "
                           "not apply to it"), -1;
    if (o->policy_given && !o->scale.ncounts)
        return tj_cli_fail("bench: --policy is the index policy of the --threads runs: give "
                           "--threads too"), -1;
    if (o->scale.verbose && !o->scale.ncounts)
        return tj_cli_fail("bench: --verbose says what the split rule did in the --threads "
                           "runs: give --threads too"), -1;
    if (o->runs_given && !o->compile_only)
        return tj_cli_fail("bench: --runs is the number of processes of --compile: give "
                           "--compile too"), -1;
    return 0;
}

static int tj_bench_args(int argc, char **argv, tj_bench_opts *o)
{
    *o = (tj_bench_opts){.rounds = 11, .compile = 1, .compile_runs = 5};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n;
        if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--verbose") == 0)
            o->scale.verbose = 1;
        else if (strcmp(a, "--no-compile") == 0)
            o->compile = 0;
        else if (strcmp(a, "--compile") == 0)
            o->compile_only = 1, o->compile_runs = 9;
        else if (strcmp(a, "--workload") == 0 && v) {
            if (!tj_workload_find(v))
                return tj_cli_fail("bench: no workload '%s' (%s)", v, tj_workload_ids()), -1;
            o->only = argv[++i];
        } else if (strcmp(a, "--rounds") == 0 && v) {
            if (tj_cli_int("--rounds", argv[++i], 3, 64, &n))
                return -1;
            o->rounds = (int)n;
            o->rounds_given = 1;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (tj_scale_parse(argv[++i], &o->scale) != 0)
                return tj_cli_fail("bench: --threads takes a list of 1 to %d counts in [1, 64], "
                                   "such as 1,2,4",
                                   TJ_SCALE_MAX),
                       -1;
        } else if (strcmp(a, "--policy") == 0 && v) {
            if (jit_index_policy_from_name(argv[++i], &o->scale.policy) != 0)
                return tj_cli_fail("bench: no index policy '%s'", argv[i]), -1;
            o->policy_given = 1;
        } else if (strcmp(a, "--runs") == 0 && v) {
            if (tj_cli_int("--runs", argv[++i], 1, 64, &n))
                return -1;
            o->compile_runs = (int)n;
            o->runs_given = 1;
        } else if (tj_cli_is_help(a)) {
            tj_cli_usage("bench", stdout);
            return 1;
        } else
            return tj_cli_unknown("bench: unknown argument", a, tj_cli_words("bench")), -1;
    }
    return tj_bench_consistent(o);
}

static const char *tj_yes(int v)
{
    return v ? "true" : "false";
}

/* A dynamic variant's second shape: no compile, and the output right. */
static void tj_print_reshape(const tj_bench_case *c, int json)
{
    const tj_bench_reshape *r = &c->reshape;
    int compiled = r->kernels_after != r->kernels_before || !r->same_info || !r->same_pointer;
    if (json) {
        printf(",{\"workload\": \"%s\", \"impl\": \"dynamic-second-shape\", \"shape\": \"%s\", "
               "\"ns_first\": %.2f, \"ns\": %.2f, \"output_ok\": %s, \"back_ok\": %s, "
               "\"jit_kernels_before\": %lld, \"jit_kernels_after\": %lld, \"same_info\": %s, "
               "\"same_pointer\": %s, \"recompiled\": %s}\n",
               c->w->id, r->shape, r->first_ns, r->next_ns, tj_yes(r->output_ok),
               tj_yes(r->back_ok), (long long)r->kernels_before, (long long)r->kernels_after,
               tj_yes(r->same_info), tj_yes(r->same_pointer), tj_yes(compiled));
        return;
    }
    printf("      second shape, %s: output %s, then the first shape again %s\n", r->shape,
           r->output_ok ? "equals the generic loop's" : "DIFFERS from the generic loop's",
           r->back_ok ? "right" : "WRONG");
    printf("      first call %.1f ns (plans the shape), next %.1f ns; JIT kernels %lld -> %lld, "
           "jit_info %s, jit_compile %s: %s\n",
           r->first_ns, r->next_ns, (long long)r->kernels_before, (long long)r->kernels_after,
           r->same_info ? "unchanged" : "CHANGED",
           r->same_pointer ? "gives the same pointer" : "gives ANOTHER pointer",
           compiled ? "SOMETHING WAS COMPILED" : "no compile for the new shape");
}

static void tj_print_case(const tj_bench_case *c, int json, int *first)
{
    double st = c->ns[TJ_IMPL_STATIC], mc = c->ns[TJ_IMPL_MEMCPY], jt = c->ns[TJ_IMPL_JIT];
    const jit_kernel_info *di = &c->dyn_info;
    if (!json) {
        printf("%-5s %s\n", c->w->id, c->w->what);
        if (c->dyn)
            printf("      dynamic kernel: %s%s%s%s, made in %.2f ms; called with %s's shapes, "
                   "\"jit\" is %s's kernel\n",
                   jit_engine_name(di->engine), *di->why ? " (" : "", di->why,
                   *di->why ? ")" : "", di->compile_ms, c->w->static_twin, c->w->static_twin);
        printf("      %-10s %14s %9s %10s %10s%s\n", "impl", "ns/call", "GB/s", "vs static",
               "vs memcpy", c->dyn ? "     vs jit" : "");
    }
    for (int i = 0; i < TJ_IMPL_COUNT; i++) {
        double ns = c->ns[i];
        if (!tj_bench_available(c, (tj_impl)i))
            continue;
        if (json) {
            printf("%s{\"workload\": \"%s\", \"impl\": \"%s\", \"ns\": %.2f, \"threads\": %d, "
                   "\"gbps\": %.3f, \"vs_static\": %.4f, \"vs_memcpy\": %.4f",
                   *first ? "" : ",", c->w->id, tj_impl_name((tj_impl)i), ns,
                   i == TJ_IMPL_JIT_THREADS ? TJ_BENCH_THREADS : 1,
                   (double)c->s.moved_bytes / ns, st > 0 ? ns / st : 0, mc > 0 ? ns / mc : 0);
            if (c->dyn) /* a dynamic variant: against its fully static twin's JIT kernel */
                printf(", \"vs_jit\": %.4f", jt > 0 ? ns / jt : 0);
            if (i == TJ_IMPL_DYNAMIC)
                printf(", \"engine\": \"%s\", \"dynamic\": %d", jit_engine_name(di->engine),
                       di->dynamic);
            printf("}\n");
            *first = 0;
            continue;
        }
        char label[32];
        snprintf(label, sizeof label, "%s%s", tj_impl_name((tj_impl)i),
                 i == TJ_IMPL_JIT_THREADS ? " x2" : "");
        printf("      %-10s %14.1f %9.2f", label, ns, (double)c->s.moved_bytes / ns);
        if (st > 0)
            printf(" %9.2fx", ns / st);
        else
            printf(" %10s", "-");
        printf(" %9.2fx", ns / mc);
        if (c->dyn)
            printf(" %9.2fx", ns / jt);
        printf("\n");
    }
    if (c->dyn)
        tj_print_reshape(c, json);
}

int tj_cmd_bench_run(int argc, char **argv)
{
    if (tj_bench_wants_bags(argc, argv))
        return tj_bench_bags(argc, argv);
    tj_bench_opts o;
    int rc = tj_bench_args(argc, argv, &o);
    if (rc)
        return rc > 0 ? TJ_EXIT_OK : TJ_EXIT_USAGE;
    setenv("TENSORJIT_CACHE_DIR", "off", 1); /* compile figures are compiles */
    int first = 1;
    if (o.json)
        printf("[\n");
    if (o.scale.ncounts) {
        const tj_workload *ws[32];
        int n = 0;
        for (int i = 0; i < tj_workload_count; i++)
            if (!o.only || strcmp(o.only, tj_workloads[i].id) == 0)
                ws[n++] = &tj_workloads[i];
        o.scale.rounds = o.rounds, o.scale.json = o.json;
        rc = tj_bench_scaling(ws, n, &o.scale, &first);
        if (o.json)
            printf("]\n");
        return rc == 0 ? TJ_EXIT_OK : TJ_EXIT_FAILURE;
    }
    if (!o.compile_only) {
        const tj_workload *ws[32];
        int n = 0;
        for (int i = 0; i < tj_workload_count; i++)
            if (!o.only || strcmp(o.only, tj_workloads[i].id) == 0)
                ws[n++] = &tj_workloads[i];
        void *lib = NULL;
        char why[512];
        if (tj_static_build(ws, n, &lib, why, sizeof why) != 0)
            fprintf(stderr, "tensorjit: bench: %s; the static column is skipped\n", why);
        for (int i = 0; i < n; i++) {
            tj_bench_case c;
            if (tj_bench_prepare(&c, ws[i], lib, why, sizeof why) != 0 ||
                tj_bench_verify(&c, why, sizeof why) != 0) {
                tj_bench_release(&c);
                tj_static_close(lib);
                return tj_cli_fail("bench: %s", why);
            }
            tj_bench_time(&c, o.rounds, 2e5);
            if (c.dyn && tj_bench_reshape_check(&c, why, sizeof why) != 0) {
                tj_bench_release(&c);
                tj_static_close(lib);
                return tj_cli_fail("bench: %s", why);
            }
            tj_print_case(&c, o.json, &first);
            tj_bench_release(&c);
            jit_shutdown();
        }
        tj_static_close(lib);
    }
    if (o.compile || o.compile_only) {
        tj_compile_summary cs;
        if (tj_bench_compile_collect(o.compile_runs, &cs) != 0)
            return TJ_EXIT_FAILURE;
        tj_bench_compile_print(&cs, o.json, first);
    }
    if (o.json)
        printf("]\n");
    return TJ_EXIT_OK;
}
