/*
 * tensorjit-family-calls: what a call of a dynamic bag kernel costs beyond
 * its lookups, and what families taking turns cost, as a model's layers
 * call them: F families (f32 rows of 16 + f, every dim but the rows'
 * width dynamic) called in turn with 4 lookups in 2 bags, on T threads, N
 * calls each, every call's output checked; prints ns a call (wall time
 * over the calls of one thread). K cycles compile, call and shut down
 * again (new kernels, maybe at the last ones' addresses). Under
 * callgrind, the difference of two call counts over their difference is
 * the instructions of one call (docs/performance.md, 'A family's checks
 * in one call'). For development, not installed.
 *   tensorjit-family-calls [--families F] [--threads T] [--calls N] [--cycles K]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorjit.h"

#define FC_MAX_FAMILIES 64
#define FC_MAX_THREADS 64
#define FC_WIDTH 16 /* family f's rows are FC_WIDTH + f wide */
#define FC_ROWS 8

static jit_embedding_bag_dynamic_fn fc_fns[FC_MAX_FAMILIES];
static float *fc_tables[FC_MAX_FAMILIES];
static int fc_families = 8;
static long fc_calls = 2000000;

static double fc_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Family f's call: bags {1, 2} and {3, 4} of its table, where row r's
 * column c holds 1000 r + c; whether out is their sums (a kernel of
 * another family, another width, writes other columns). */
static int fc_call(int f, float *out)
{
    static const int64_t idx[4] = {1, 2, 3, 4}, offsets[2] = {0, 2};
    int64_t w = FC_WIDTH + f, dims[4] = {FC_ROWS, w, 4, 2};
    if (fc_fns[f](fc_tables[f], idx, offsets, NULL, out, dims) != 0)
        return 0;
    return out[w - 1] == 3000.0f + 2.0f * (float)(w - 1) && out[w] == 7000.0f &&
           out[2 * w - 1] == 7000.0f + 2.0f * (float)(w - 1);
}

/* fc_calls calls, the families in turn; the count of wrong ones */
static void *fc_run(void *arg)
{
    (void)arg;
    float out[2 * (FC_WIDTH + FC_MAX_FAMILIES)];
    long wrong = 0;
    for (long i = 0; i < fc_calls; i++)
        wrong += !fc_call((int)(i % fc_families), out);
    return (void *)(intptr_t)wrong;
}

static int fc_tables_make(void)
{
    for (int f = 0; f < fc_families; f++) {
        int64_t w = FC_WIDTH + f;
        fc_tables[f] = malloc((size_t)(FC_ROWS * w) * sizeof(float));
        if (!fc_tables[f])
            return -1;
        for (int64_t r = 0; r < FC_ROWS; r++)
            for (int64_t c = 0; c < w; c++)
                fc_tables[f][r * w + c] = (float)(1000 * r + c);
    }
    return 0;
}

static int fc_compile(void)
{
    for (int f = 0; f < fc_families; f++) {
        jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .dtype = JIT_F32,
                     .index_type = JIT_I64, .threads = 1};
        s.data_shape = (jit_shape){2, {FC_ROWS, FC_WIDTH + f}};
        s.indices_shape = (jit_shape){1, {JIT_DIM_DYNAMIC}};
        s.updates_shape = (jit_shape){1, {JIT_DIM_DYNAMIC}};
        fc_fns[f] = (jit_embedding_bag_dynamic_fn)jit_compile(&s);
        if (!fc_fns[f]) {
            fprintf(stderr, "tensorjit-family-calls: %s\n", jit_last_error());
            return -1;
        }
    }
    return 0;
}

/* The families compiled, called on `threads` threads, shut down; ns a
 * call, or -1 where a thread did not start or a call went wrong. */
static double fc_cycle(int threads)
{
    if (fc_compile() != 0)
        return -1;
    pthread_t t[FC_MAX_THREADS];
    int started = 0;
    double t0 = fc_now_ns();
    for (int i = 0; i < threads; i++)
        started += pthread_create(&t[started], NULL, fc_run, NULL) == 0;
    long wrong = 0;
    for (int i = 0; i < started; i++) {
        void *r;
        pthread_join(t[i], &r);
        wrong += (long)(intptr_t)r;
    }
    double ns = (fc_now_ns() - t0) / (double)fc_calls;
    jit_shutdown(); /* the next cycle's kernels: new code, maybe at these addresses */
    if (started != threads || wrong) {
        fprintf(stderr, "tensorjit-family-calls: %d of %d threads started, %ld calls wrong\n",
                started, threads, wrong);
        return -1;
    }
    return ns;
}

static int fc_usage(void)
{
    fprintf(stderr, "usage: tensorjit-family-calls [--families 1..%d] [--threads 1..%d] "
                    "[--calls N] [--cycles K]\n",
            FC_MAX_FAMILIES, FC_MAX_THREADS);
    return 2;
}

int main(int argc, char **argv)
{
    int threads = 1, cycles = 1;
    for (int i = 1; i < argc; i++) {
        long v = i + 1 < argc ? strtol(argv[i + 1], NULL, 10) : 0;
        if (!strcmp(argv[i], "--families") && v >= 1 && v <= FC_MAX_FAMILIES)
            fc_families = (int)v;
        else if (!strcmp(argv[i], "--threads") && v >= 1 && v <= FC_MAX_THREADS)
            threads = (int)v;
        else if (!strcmp(argv[i], "--calls") && v >= 1)
            fc_calls = v;
        else if (!strcmp(argv[i], "--cycles") && v >= 1 && v <= 100)
            cycles = (int)v;
        else
            return fc_usage();
        i++;
    }
    int rc = fc_tables_make() == 0 ? 0 : 1;
    for (int c = 0; c < cycles && rc == 0; c++) {
        double ns = fc_cycle(threads);
        if (ns < 0)
            rc = 1;
        else
            printf("%d families in turn, %d threads: %.1f ns a call\n", fc_families, threads, ns);
    }
    for (int f = 0; f < fc_families; f++)
        free(fc_tables[f]);
    return rc;
}
