/* Compile figures: what a compile costs, measured as a user sees it
 * through the public API. Each run is a child process, so "first" is
 * really the first compile of a process (engine start included); the order
 * rotates so every workload is sometimes first, sometimes not. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_compile.h"
#include "cli.h"

/* The workloads whose kernels the compile figures cover: one per distinct
 * signature (S2ip's is S2's), and not the dynamic variants: their kernels
 * are compiled once per family, not per shape, and are figures of their
 * own (the "dynamic" rows of the table say what their compile cost). */
static int tj_compiled(const tj_workload *w)
{
    return !tj_workload_is_twin(w) && !tj_workload_is_dynamic(w);
}

/* Compiles w through the public API; returns ms, or -1. *jit says whether
 * the JIT served. */
static double tj_compile_ms(const tj_workload *w, int *jit)
{
    jit_kernel_info info = {0};
    double t0 = tj_bench_now_ns();
    jit_kernel fn = jit_compile(&w->sig);
    double t = (tj_bench_now_ns() - t0) / 1e6;
    if (!fn || jit_info(fn, &info))
        return -1;
    *jit = info.engine == JIT_ENGINE_JIT;
    return t;
}

/* Median ns of a cache hit (the same signature compiled again). */
static double tj_hit_ns(const tj_workload *w)
{
    enum { N = 20001 };
    static double v[N];
    for (int i = 0; i < N; i++) {
        double t0 = tj_bench_now_ns();
        (void)jit_compile(&w->sig);
        v[i] = tj_bench_now_ns() - t0;
    }
    return tj_bench_median(v, N);
}

/* One child: compile every workload, starting at `first`; print
 * "<id> <ms> <jit>" per workload, then "hit <ns>". */
static int tj_child(int first)
{
    setenv("TENSORJIT_CACHE_DIR", "off", 1); /* compiles are what is measured */
    for (int i = 0; i < tj_workload_count; i++) {
        const tj_workload *w = &tj_workloads[(first + i) % tj_workload_count];
        int jit = 0;
        if (!tj_compiled(w))
            continue; /* the same signature as an earlier workload (a cache hit), or dynamic */
        double ms = tj_compile_ms(w, &jit);
        printf("%s %.4f %d\n", w->id, ms, jit);
    }
    printf("hit %.1f\n", tj_hit_ns(tj_workload_find("G6")));
    jit_shutdown();
    return 0;
}

typedef struct tj_compile_stats {
    double first[64], next[32][64], hit[64];
    int nfirst, nnext[32], nhit, not_jit;
} tj_compile_stats;

/* A process that opens the disk cache in dir (as a server would at start,
 * waiting wait_ms before its first call), then compiles every workload:
 * prints "<ms of the first call> <ms of the next ones, median> <hits>". */
static int tj_disk_child(const char *dir, int wait_ms)
{
    double ms[32];
    int n = 0, hits = 0;
    if (jit_cache_open(dir) != 0)
        return tj_cli_fail("bench: %s", jit_last_error());
    if (wait_ms) {
        struct timespec ts = {0, (long)wait_ms * 1000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < tj_workload_count; i++) {
        const tj_workload *w = &tj_workloads[i];
        jit_kernel_info info = {0};
        if (!tj_compiled(w))
            continue;
        double t0 = tj_bench_now_ns();
        jit_info(jit_compile(&w->sig), &info);
        ms[n++] = (tj_bench_now_ns() - t0) / 1e6;
        hits += info.cache_hit;
    }
    printf("%.4f %.4f %d\n", ms[0], tj_bench_median(ms + 1, n - 1), hits);
    jit_shutdown();
    return 0;
}

/* Workloads whose signatures differ: the kernels a process compiles. */
static int tj_distinct_workloads(void)
{
    int n = 0;
    for (int i = 0; i < tj_workload_count; i++)
        n += tj_compiled(&tj_workloads[i]);
    return n;
}

/* Second-process figures of the disk cache: fill a fresh folder once,
 * then `runs` processes load from it. */
static int tj_disk_figures(const char *self, int runs, int wait_ms, double *first, double *next,
                           int *misses)
{
    char dir[4096], cmd[4400];
    double f[64], x[64];
    if (tj_bench_tmpdir("cache", dir, sizeof dir) != 0)
        return -1;
    *misses = 0;
    for (int r = 0; r <= runs; r++) {
        snprintf(cmd, sizeof cmd, "'%s' bench --disk-child %s %d", self, dir, wait_ms);
        FILE *p = popen(cmd, "r");
        int hits = 0;
        if (!p || fscanf(p, "%lf %lf %d", &f[r > 0 ? r - 1 : 0], &x[r > 0 ? r - 1 : 0], &hits) != 3) {
            if (p)
                pclose(p);
            tj_bench_rmdir(dir);
            return -1;
        }
        pclose(p);
        if (r > 0)
            *misses += hits < tj_distinct_workloads();
    }
    if (tj_bench_rmdir(dir) != 0)
        return -1;
    *first = tj_bench_median(f, runs);
    *next = tj_bench_median(x, runs);
    return 0;
}

/* The workloads before the dynamic variants (which come last in the
 * table): the first compile of a run rotates over them, so that a run
 * starting at a variant (not compiled here) does not make G1 first twice. */
static int tj_static_workloads(void)
{
    int n = 0;
    while (n < tj_workload_count && !tj_workload_is_dynamic(&tj_workloads[n]))
        n++;
    return n ? n : 1;
}

static int tj_run_child(const char *self, int first, tj_compile_stats *st)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' bench --compile-child %d", self, first);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char id[16];
    double v;
    int jit, n = 0;
    while (fscanf(p, "%15s %lf", id, &v) == 2) {
        if (strcmp(id, "hit") == 0) {
            st->hit[st->nhit++] = v;
            continue;
        }
        if (fscanf(p, "%d", &jit) != 1)
            break;
        st->not_jit += !jit;
        const tj_workload *w = tj_workload_find(id);
        int wi = (int)(w - tj_workloads);
        if (n++ == 0)
            st->first[st->nfirst++] = v;
        else
            st->next[wi][st->nnext[wi]++] = v;
    }
    return pclose(p) == 0 ? 0 : -1;
}

int tj_bench_compile_collect(int runs, tj_compile_summary *out)
{
    static tj_compile_stats st;
    char self[4096];
    memset(&st, 0, sizeof st);
    memset(out, 0, sizeof *out);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return tj_cli_fail("bench: cannot find my own executable"), -1;
    self[n] = '\0';
    if (runs > 64)
        runs = 64;
    for (int r = 0; r < runs; r++)
        if (tj_run_child(self, r % tj_static_workloads(), &st) != 0)
            return tj_cli_fail("bench: a compile run failed"), -1;
    static double all[1024];
    int nall = 0;
    for (int i = 0; i < tj_workload_count; i++) {
        out->per_workload_ms[i] = tj_bench_median(st.next[i], st.nnext[i]);
        for (int k = 0; k < st.nnext[i]; k++) {
            all[nall++] = st.next[i][k];
            out->worst_ms = st.next[i][k] > out->worst_ms ? st.next[i][k] : out->worst_ms;
        }
    }
    for (int k = 0; k < st.nfirst; k++)
        out->worst_ms = st.first[k] > out->worst_ms ? st.first[k] : out->worst_ms;
    out->runs = runs;
    out->first_ms = tj_bench_median(st.first, st.nfirst);
    out->next_ms = tj_bench_median(all, nall);
    out->hit_ns = tj_bench_median(st.hit, st.nhit);
    out->not_jit = st.not_jit;
    if (tj_disk_figures(self, runs, 5, &out->disk_first_ms, &out->disk_next_ms,
                        &out->disk_misses) != 0 ||
        tj_disk_figures(self, runs, 0, &out->disk_cold_ms, &out->disk_next_ms, &out->disk_misses) != 0)
        return tj_cli_fail("bench: the disk cache runs failed"), -1;
    if (tj_bench_limit_figures(&out->limit_reload_ms, &out->release_ns) != 0)
        return tj_cli_fail("bench: the kernel-limit run failed: %s", jit_last_error()), -1;
    return 0;
}

void tj_bench_compile_print(const tj_compile_summary *c, int json, int first_json)
{
    if (json) {
        for (int i = 0; i < tj_workload_count; i++)
            if (tj_compiled(&tj_workloads[i]))
                printf("%s{\"workload\": \"%s\", \"impl\": \"compile\", \"ms\": %.3f}\n",
                       first_json && i == 0 ? "" : ",", tj_workloads[i].id, c->per_workload_ms[i]);
        printf(",{\"workload\": \"*\", \"impl\": \"compile-first\", \"ms\": %.3f}\n", c->first_ms);
        printf(",{\"workload\": \"*\", \"impl\": \"compile-next\", \"ms\": %.3f}\n", c->next_ms);
        printf(",{\"workload\": \"G6\", \"impl\": \"cache-hit\", \"ns\": %.1f}\n", c->hit_ns);
        printf(",{\"workload\": \"*\", \"impl\": \"disk-hit-first\", \"ms\": %.3f}\n",
               c->disk_first_ms);
        printf(",{\"workload\": \"*\", \"impl\": \"disk-hit-next\", \"ms\": %.3f}\n",
               c->disk_next_ms);
        printf(",{\"workload\": \"G6,S3\", \"impl\": \"limit-reload\", \"ms\": %.3f}\n",
               c->limit_reload_ms);
        printf(",{\"workload\": \"G6,S3\", \"impl\": \"release\", \"ns\": %.1f}\n",
               c->release_ns);
        return;
    }
    printf("compile (median over %d processes; each compiles every workload once)\n", c->runs);
    for (int i = 0; i < tj_workload_count; i++)
        if (tj_compiled(&tj_workloads[i]))
            printf("  %-5s %7.2f ms\n", tj_workloads[i].id, c->per_workload_ms[i]);
    printf("  first compile in a process: %.2f ms (engine start included)\n", c->first_ms);
    printf("  next compiles, all workloads: %.2f ms\n", c->next_ms);
    printf("  slowest compile seen: %.2f ms\n", c->worst_ms);
    printf("  cache hit: %.0f ns\n", c->hit_ns);
    printf("  disk cache, a second process: first call %.2f ms (cache opened 5 ms before; "
           "%.2f ms right after opening), next ones %.2f ms%s\n",
           c->disk_first_ms, c->disk_cold_ms, c->disk_next_ms,
           c->disk_misses ? " (SOME WERE NOT HITS)" : ", every one a hit");
    printf("  kernel limit 1, G6 and S3 in turn: a released kernel asked for again %.3f ms "
           "(disk load + releasing the other), jit_*_release %.0f ns\n",
           c->limit_reload_ms, c->release_ns);
    if (c->not_jit)
        printf("  NOTE: %d compiles were served by the reference kernel\n", c->not_jit);
}

int tj_cmd_bench(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--disk-child") == 0)
        return tj_disk_child(argv[2], atoi(argv[3]));
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--compile-child") == 0) {
            int64_t child;
            if (tj_cli_int("--compile-child", argv[i + 1], 0, 63, &child))
                return TJ_EXIT_USAGE;
            return tj_child((int)child);
        }
    return tj_cmd_bench_run(argc, argv);
}
