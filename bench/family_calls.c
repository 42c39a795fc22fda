/*
 * tensorjit-family-calls: what a call of a dynamic bag kernel costs beyond
 * its lookups, and what families taking turns cost, as a model's layers
 * call them: F families (f32 rows of 16 from tables of 1000 + f rows,
 * every other dim dynamic) called in turn with 4 lookups in 2 bags, on T
 * threads, N calls each; prints ns a call (wall time over the calls of one
 * thread). Under callgrind, the difference of two call counts over their
 * difference is the instructions of one call (docs/performance.md, 'A
 * family's checks in one call'). For development, not installed.
 *   tensorjit-family-calls [--families F] [--threads T] [--calls N]
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
#define FC_WIDTH 16

static jit_embedding_bag_dynamic_fn fc_fns[FC_MAX_FAMILIES];
static int fc_families = 8;
static long fc_calls = 2000000;
static float fc_table[(1000 + FC_MAX_FAMILIES) * FC_WIDTH];

static double fc_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* fc_calls calls, the families in turn; the count of failed ones */
static void *fc_run(void *arg)
{
    (void)arg;
    static const int64_t idx[4] = {1, 2, 3, 4}, offsets[2] = {0, 2};
    float out[2 * FC_WIDTH];
    long failed = 0;
    for (long i = 0; i < fc_calls; i++) {
        int f = (int)(i % fc_families);
        int64_t dims[4] = {1000 + f, FC_WIDTH, 4, 2};
        failed += fc_fns[f](fc_table, idx, offsets, NULL, out, dims) != 0;
    }
    return (void *)(intptr_t)failed;
}

static int fc_compile(void)
{
    for (int f = 0; f < fc_families; f++) {
        jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .dtype = JIT_F32,
                     .index_type = JIT_I64, .threads = 1};
        s.data_shape = (jit_shape){2, {1000 + f, FC_WIDTH}};
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

static int fc_usage(void)
{
    fprintf(stderr, "usage: tensorjit-family-calls [--families 1..%d] [--threads 1..%d] "
                    "[--calls N]\n",
            FC_MAX_FAMILIES, FC_MAX_THREADS);
    return 2;
}

int main(int argc, char **argv)
{
    int threads = 1;
    for (int i = 1; i < argc; i++) {
        long v = i + 1 < argc ? strtol(argv[i + 1], NULL, 10) : 0;
        if (!strcmp(argv[i], "--families") && v >= 1 && v <= FC_MAX_FAMILIES)
            fc_families = (int)v;
        else if (!strcmp(argv[i], "--threads") && v >= 1 && v <= FC_MAX_THREADS)
            threads = (int)v;
        else if (!strcmp(argv[i], "--calls") && v >= 1)
            fc_calls = v;
        else
            return fc_usage();
        i++;
    }
    if (fc_compile() != 0)
        return 1;
    pthread_t t[FC_MAX_THREADS];
    int started = 0;
    double t0 = fc_now_ns();
    for (int i = 0; i < threads; i++)
        started += pthread_create(&t[started], NULL, fc_run, NULL) == 0;
    long failed = 0;
    for (int i = 0; i < started; i++) {
        void *r;
        pthread_join(t[i], &r);
        failed += (long)(intptr_t)r;
    }
    double ns = (fc_now_ns() - t0) / (double)fc_calls;
    jit_shutdown();
    if (started != threads || failed) {
        fprintf(stderr, "tensorjit-family-calls: %d of %d threads started, %ld calls failed\n",
                started, threads, failed);
        return 1;
    }
    printf("%d families in turn, %d threads: %.1f ns a call\n", fc_families, threads, ns);
    return 0;
}
