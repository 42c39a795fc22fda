/* tensorjit-ab-bags LIB_A LIB_B [--workload ID]... [--calls N] [--dynamic]
 * [--smoke] [--read-output] [--env-a NAME=VALUE]... [--env-b NAME=VALUE]...:
 * two builds of the library in one process, their kernels of the same bag
 * workload timed call by call.
 *
 * Why: on a shared host `bench --bags` run once per build moved its
 * jit/static ratio by 2x between processes of one binary (page placement,
 * the neighbours' load), more than most changes under test. Here each
 * library is loaded into a namespace of its own (dlmopen, so each has its
 * own LLVM and caches), both compile the workload's signature, and the
 * calls alternate A, B, B, A, ... on the same inputs (bench's index sets,
 * bags_inputs.c), so both kernels meet the same host. The median of each,
 * and B / A. The two outputs are compared after every call pair: builds
 * that disagree bit for bit fail (exit 1), whatever their speed. Passing
 * one library twice measures the method's own noise (docs/performance.md,
 * 'Sixth round'); passing it twice with --env-a and --env-b compares two
 * settings of a knob (TENSORJIT_PREFETCH=16): each namespace has a C
 * library, and so an environment, of its own (the process's as it was at
 * the load), and each side's variables are set in its own. Not installed: a tool for the people changing
 * the kernels. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bags.h"
#include "bench.h"

typedef jit_kernel (*tj_ab_compile_fn)(const jit_sig *sig);
typedef const char *(*tj_ab_error_fn)(void);

typedef struct tj_ab_lib {
    const char *path;
    const char *env[8]; /* NAME=VALUE, set before its compiles */
    int envs;
    void *handle;
    tj_ab_compile_fn compile;
    tj_ab_error_fn last_error;
} tj_ab_lib;

typedef struct tj_ab_opts {
    const char *ids[16];
    int count, calls, dynamic, smoke, read_output;
} tj_ab_opts;

/* Where --read-output's sums go, so that the reads are not optimized away. */
static volatile uint64_t tj_ab_sink;

/* The output read as its consumer would, every word of it: with
 * --read-output a call's time includes it, so that a kernel whose stores
 * leave the output in memory (streaming) pays for what the next layer's
 * reads of it would cost. */
static void tj_ab_read(const void *out, int64_t bytes)
{
    const uint64_t *w = out;
    uint64_t sum = 0;
    for (int64_t i = 0; i < bytes / 8; i++)
        sum += w[i];
    tj_ab_sink = sum;
}

static int tj_ab_open(tj_ab_lib *lib, const char *path)
{
    lib->path = path; /* its env, from the arguments, stays */
    lib->handle = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        fprintf(stderr, "tensorjit-ab-bags: %s\n", dlerror());
        return -1;
    }
    lib->compile = (tj_ab_compile_fn)dlsym(lib->handle, "jit_compile");
    lib->last_error = (tj_ab_error_fn)dlsym(lib->handle, "jit_last_error");
    if (!lib->compile || !lib->last_error) {
        fprintf(stderr, "tensorjit-ab-bags: %s has no jit_compile\n", path);
        return -1;
    }
    /* the namespace's own C library, whose environment its copy reads */
    int (*set)(const char *, const char *, int) =
        (int (*)(const char *, const char *, int))dlsym(lib->handle, "setenv");
    for (int e = 0; e < lib->envs; e++) {
        char name[128];
        const char *eq = strchr(lib->env[e], '=');
        size_t n = (size_t)(eq - lib->env[e]);
        if (!set || n >= sizeof name) {
            fprintf(stderr, "tensorjit-ab-bags: cannot set %s for %s\n", lib->env[e], path);
            return -1;
        }
        memcpy(name, lib->env[e], n);
        name[n] = 0;
        set(name, eq + 1, 1);
    }
    return 0;
}

/* One call of kernel k on set `set` of in, timed: ns, or -1 for a status
 * other than 0. */
static double tj_ab_call(jit_kernel k, const tj_bag_inputs *in, int set, const tj_ab_opts *o,
                         const int64_t *dims, void *out)
{
    int dynamic = o->dynamic;
    const void *ix = tj_bag_set_indices(in, set), *wt = tj_bag_set_weights(in, set);
    double t0 = tj_bench_now_ns();
    int st = dynamic ? ((tj_bag_dyn_fn)k)(in->table, ix, in->offsets, wt, out, dims)
                     : ((tj_bag_fn)k)(in->table, ix, in->offsets, wt, out);
    if (o->read_output)
        tj_ab_read(out, in->out_bytes);
    double t = tj_bench_now_ns() - t0;
    return st == 0 ? t : -1;
}

/* w on both libraries: 0, or 1 when a compile or a call failed or the
 * outputs differ. */
static int tj_ab_workload(const tj_ab_lib *lib, const tj_bag_workload *w, const tj_ab_opts *o)
{
    char why[256];
    tj_bag_inputs in;
    if (tj_bag_inputs_make(&in, w, tj_bag_llc_bytes(), o->smoke ? 3 : 0, why, sizeof why)) {
        fprintf(stderr, "tensorjit-ab-bags: %s\n", why);
        return 1;
    }
    jit_sig sig = tj_bags_jit_sig(w, in.n, 1, o->dynamic);
    int64_t dims[6];
    tj_bags_jit_dims(w, in.n, dims);
    jit_kernel k[2];
    void *out[2];
    double *t[2];
    int rc = 0;
    for (int v = 0; v < 2; v++) {
        k[v] = lib[v].compile(&sig);
        out[v] = tj_bag_alloc(in.out_bytes, NULL);
        t[v] = malloc((size_t)o->calls * sizeof *t[v]);
        if (!k[v]) {
            fprintf(stderr, "tensorjit-ab-bags: %s: %s: %s\n", w->id, lib[v].path,
                    lib[v].last_error());
            rc = 1;
        }
        if (!out[v] || !t[v])
            rc = 1;
    }
    for (int c = 0; c < o->calls && rc == 0; c++) {
        int set = c % in.sets;
        for (int q = 0; q < 2; q++) {
            int v = c & 1 ? 1 - q : q; /* A, B, then B, A */
            t[v][c] = tj_ab_call(k[v], &in, set, o, dims, out[v]);
            if (t[v][c] < 0) {
                fprintf(stderr, "tensorjit-ab-bags: %s: %s: a call failed\n", w->id,
                        lib[v].path);
                rc = 1;
            }
        }
        if (rc == 0 && memcmp(out[0], out[1], (size_t)in.out_bytes) != 0) {
            fprintf(stderr, "tensorjit-ab-bags: %s: the outputs differ (call %d)\n", w->id, c);
            rc = 1;
        }
    }
    if (rc == 0) {
        double a = tj_bench_median(t[0], o->calls), b = tj_bench_median(t[1], o->calls);
        printf("%-4s %s  A %.1f us  B %.1f us  B/A %.3f  (%d calls each, medians%s)\n", w->id,
               o->dynamic ? "dynamic" : "static ", a / 1e3, b / 1e3, b / a, o->calls,
               o->read_output ? "; each call's output read after it" : "");
    }
    for (int v = 0; v < 2; v++) {
        free(out[v]);
        free(t[v]);
    }
    tj_bag_inputs_free(&in);
    return rc;
}

static int tj_ab_usage(void)
{
    fprintf(stderr, "usage: tensorjit-ab-bags LIB_A LIB_B [--workload ID]... [--calls N] "
                    "[--dynamic] [--smoke] [--read-output] [--env-a NAME=VALUE]... "
                    "[--env-b NAME=VALUE]...\n");
    return 2;
}

static int tj_ab_args(int argc, char **argv, tj_ab_opts *o, tj_ab_lib *lib)
{
    *o = (tj_ab_opts){.calls = 400};
    for (int i = 3; i < argc; i++) {
        int side = strcmp(argv[i], "--env-a") == 0 ? 0 : strcmp(argv[i], "--env-b") == 0 ? 1 : -1;
        if (side >= 0 && i + 1 < argc && lib[side].envs < 8 && strchr(argv[i + 1], '='))
            lib[side].env[lib[side].envs++] = argv[++i];
        else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc && o->count < 16)
            o->ids[o->count++] = argv[++i];
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            o->calls = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dynamic") == 0)
            o->dynamic = 1;
        else if (strcmp(argv[i], "--smoke") == 0)
            o->smoke = 1;
        else if (strcmp(argv[i], "--read-output") == 0)
            o->read_output = 1;
        else
            return -1;
    }
    return o->calls >= 1 && o->calls <= 1000000 ? 0 : -1;
}

int main(int argc, char **argv)
{
    tj_ab_opts o;
    tj_ab_lib lib[2] = {{0}, {0}};
    if (argc < 3 || tj_ab_args(argc, argv, &o, lib))
        return tj_ab_usage();
    if (tj_ab_open(&lib[0], argv[1]) || tj_ab_open(&lib[1], argv[2]))
        return 1;
    const tj_bag_workload *set = o.smoke ? tj_bag_smoke_workloads : tj_bag_workloads;
    int n = o.smoke ? tj_bag_smoke_count : tj_bag_workload_count, rc = 0, ran = 0;
    for (int i = 0; i < n; i++) {
        int wanted = o.count == 0;
        for (int j = 0; j < o.count; j++)
            wanted |= strcmp(o.ids[j], set[i].id) == 0;
        if (wanted) {
            rc |= tj_ab_workload(lib, &set[i], &o);
            ran++;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "tensorjit-ab-bags: no workload of those names\n");
        return 2;
    }
    return rc;
}
