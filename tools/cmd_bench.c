/* `tensorjit bench --compile`: what a compile costs, measured as a user
 * sees it through the public API. Each run is a child process, so "first"
 * is really the first compile of a process (engine start included); the
 * order rotates so every workload is sometimes first, sometimes not. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "workloads.h"

static double tj_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int tj_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double tj_median(double *v, int n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, tj_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Compiles w through the public API; returns ms, or -1. *jit says whether
 * the JIT served. */
static double tj_compile_ms(const tj_workload *w, int *jit)
{
    jit_kernel_info info = {0};
    double t0 = tj_now_ns();
    if (w->is_scatter) {
        jit_scatter_update_fn fn = jit_scatter_update_compile(&w->scatter);
        double t = (tj_now_ns() - t0) / 1e6;
        if (!fn || jit_scatter_update_info(fn, &info))
            return -1;
        *jit = info.engine == JIT_ENGINE_JIT;
        return t;
    }
    jit_gather_nd_fn fn = jit_gather_nd_compile(&w->gather);
    double t = (tj_now_ns() - t0) / 1e6;
    if (!fn || jit_gather_nd_info(fn, &info))
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
        double t0 = tj_now_ns();
        if (w->is_scatter)
            (void)jit_scatter_update_compile(&w->scatter);
        else
            (void)jit_gather_nd_compile(&w->gather);
        v[i] = tj_now_ns() - t0;
    }
    return tj_median(v, N);
}

/* One child: compile every workload, starting at `first`; print
 * "<id> <ms> <jit>" per workload, then "hit <ns>". */
static int tj_child(int first)
{
    for (int i = 0; i < tj_workload_count; i++) {
        const tj_workload *w = &tj_workloads[(first + i) % tj_workload_count];
        int jit = 0;
        if (w->in_place)
            continue; /* the same signature as its copying twin: a cache hit */
        double ms = tj_compile_ms(w, &jit);
        printf("%s %.4f %d\n", w->id, ms, jit);
    }
    printf("hit %.1f\n", tj_hit_ns(tj_workload_find("G6")));
    jit_shutdown();
    return 0;
}

typedef struct tj_compile_stats {
    double first[64], next[16][64], hit[64];
    int nfirst, nnext[16], nhit, not_jit;
} tj_compile_stats;

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

static int tj_bench_compile(int runs, int json)
{
    static tj_compile_stats st;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return tj_cli_fail("bench: cannot find my own executable");
    self[n] = '\0';
    if (runs > 64)
        runs = 64;
    for (int r = 0; r < runs; r++)
        if (tj_run_child(self, r % tj_workload_count, &st) != 0)
            return tj_cli_fail("bench: a compile run failed");
    double first = tj_median(st.first, st.nfirst), hit = tj_median(st.hit, st.nhit);
    double worst = 0, all[1024];
    int nall = 0;
    if (!json)
        printf("compile (median over %d processes, ms; each process compiles every workload "
               "once)\n",
               runs);
    for (int i = 0; i < tj_workload_count; i++) {
        if (tj_workloads[i].in_place)
            continue;
        double m = tj_median(st.next[i], st.nnext[i]);
        for (int k = 0; k < st.nnext[i]; k++) {
            all[nall++] = st.next[i][k];
            worst = st.next[i][k] > worst ? st.next[i][k] : worst;
        }
        if (json)
            printf("%s{\"workload\": \"%s\", \"impl\": \"compile\", \"ms\": %.3f}\n",
                   nall == st.nnext[i] ? "[" : ",", tj_workloads[i].id, m);
        else
            printf("  %-5s next compile %7.2f ms\n", tj_workloads[i].id, m);
    }
    for (int k = 0; k < st.nfirst; k++)
        worst = st.first[k] > worst ? st.first[k] : worst;
    double next = tj_median(all, nall);
    if (json) {
        printf(",{\"workload\": \"*\", \"impl\": \"compile-first\", \"ms\": %.3f}\n", first);
        printf(",{\"workload\": \"*\", \"impl\": \"compile-next\", \"ms\": %.3f}\n", next);
        printf(",{\"workload\": \"G6\", \"impl\": \"cache-hit\", \"ns\": %.1f}\n]\n", hit);
    } else {
        printf("  first compile in a process: %.2f ms (engine start included)\n", first);
        printf("  next compiles, all workloads: %.2f ms\n", next);
        printf("  slowest compile seen: %.2f ms\n", worst);
        printf("  cache hit: %.0f ns\n", hit);
        if (st.not_jit)
            printf("  NOTE: %d compiles were served by the reference kernel\n", st.not_jit);
    }
    return TJ_EXIT_OK;
}

int tj_cmd_bench(int argc, char **argv)
{
    int64_t runs = 9, child = -1;
    int compile = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--compile") == 0)
            compile = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            if (tj_cli_int("--runs", argv[++i], 1, 64, &runs))
                return TJ_EXIT_USAGE;
        } else if (strcmp(argv[i], "--compile-child") == 0 && i + 1 < argc) {
            if (tj_cli_int("--compile-child", argv[++i], 0, 63, &child))
                return TJ_EXIT_USAGE;
        } else {
            return tj_cli_fail("bench: unknown argument '%s'", argv[i]);
        }
    }
    if (child >= 0)
        return tj_child((int)child);
    if (!compile)
        return tj_cli_fail("bench: only --compile is implemented so far");
    return tj_bench_compile((int)runs, json);
}
