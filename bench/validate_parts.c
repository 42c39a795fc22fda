/*
 * tensorjit-validate-parts: what jit_validate_part gains a pool of the
 * user's. A GatherND [1024, 1024] f32 kernel by N i64 tuples of 2 (8 MB of
 * indices by default, S6's size): jit_validate on one thread against the
 * same check in T parts, one per thread of a pool of T - 1 spinning
 * workers and the caller (so that no thread start is timed), call by call
 * alternately; medians. Exits 1 when a check disagrees (a valid index set
 * refused, or a bad index that no part finds). For development, not
 * installed; docs/performance.md has its numbers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tensorjit.h"

enum { VP_MAX_THREADS = 64, VP_MAX_ROUNDS = 1001 };

typedef struct vp_pool {
    jit_kernel kernel;
    const int64_t *indices;
    int parts;
    int round;          /* the round the workers run next; atomic */
    int finished;       /* workers done with the current round; atomic */
    int quit;           /* atomic */
    int status[VP_MAX_THREADS];
} vp_pool;

typedef struct vp_worker {
    vp_pool *pool;
    int part;
} vp_worker;

static void *vp_work(void *arg)
{
    vp_worker *w = arg;
    vp_pool *p = w->pool;
    int seen = 0;
    for (;;) {
        int round;
        while ((round = __atomic_load_n(&p->round, __ATOMIC_ACQUIRE)) == seen)
            if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
                return NULL;
        seen = round;
        p->status[w->part] = jit_validate_part(p->kernel, p->indices, w->part, p->parts);
        __atomic_add_fetch(&p->finished, 1, __ATOMIC_ACQ_REL);
    }
}

/* One check in p->parts parts: the caller's part 0, the workers' the rest.
 * Returns the first part's status that is not JIT_OK, else JIT_OK. */
static int vp_parts(vp_pool *p)
{
    __atomic_store_n(&p->finished, 0, __ATOMIC_RELEASE);
    __atomic_add_fetch(&p->round, 1, __ATOMIC_ACQ_REL);
    p->status[0] = jit_validate_part(p->kernel, p->indices, 0, p->parts);
    while (__atomic_load_n(&p->finished, __ATOMIC_ACQUIRE) < p->parts - 1)
        ;
    for (int i = 0; i < p->parts; i++)
        if (p->status[i] != JIT_OK)
            return p->status[i];
    return JIT_OK;
}

static int vp_usage(void)
{
    fprintf(stderr, "usage: tensorjit-validate-parts [--tuples N] [--threads T] [--rounds R] "
                    "[--kernel-threads K] [--smoke]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long long tuples = 524288, threads = 2, rounds = 41, kernel_threads = 1;
    for (int i = 1; i < argc; i++) {
        long long *v = !strcmp(argv[i], "--tuples")           ? &tuples
                       : !strcmp(argv[i], "--threads")        ? &threads
                       : !strcmp(argv[i], "--rounds")         ? &rounds
                       : !strcmp(argv[i], "--kernel-threads") ? &kernel_threads
                                                              : NULL;
        if (!strcmp(argv[i], "--smoke"))
            tuples = 65536, rounds = 3; /* 1 MB: the check mode serves */
        else if (!v || i + 1 == argc)
            return vp_usage();
        else
            *v = atoll(argv[++i]);
    }
    if (tuples < 1 || threads < 1 || threads > VP_MAX_THREADS || rounds < 1 ||
        rounds > VP_MAX_ROUNDS || kernel_threads < 1)
        return vp_usage();
    int64_t *idx = malloc((size_t)tuples * 2 * sizeof *idx);
    double *whole = malloc((size_t)rounds * sizeof *whole),
           *parted = malloc((size_t)rounds * sizeof *parted);
    if (!idx || !whole || !parted)
        return fprintf(stderr, "out of memory\n"), 1;
    uint64_t x = 88172645463325252ull;
    for (long long i = 0; i < tuples * 2; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        idx[i] = (int64_t)(x % 1024);
    }
    jit_sig s = {0};
    s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
    s.data_shape = (jit_shape){2, {1024, 1024}};
    s.indices_shape = (jit_shape){2, {tuples, 2}};
    s.threads = (int)kernel_threads;
    vp_pool pool = {.kernel = jit_compile(&s), .indices = idx, .parts = (int)threads};
    if (!pool.kernel)
        return fprintf(stderr, "compile: %s\n", jit_last_error()), 1;
    pthread_t th[VP_MAX_THREADS];
    vp_worker w[VP_MAX_THREADS];
    for (int i = 1; i < threads; i++) {
        w[i] = (vp_worker){&pool, i};
        if (pthread_create(&th[i], NULL, vp_work, &w[i]) != 0)
            return fprintf(stderr, "no thread\n"), 1;
    }
    int bad = vp_parts(&pool) != JIT_OK; /* the parts module compiles here */
    for (long long r = 0; r < rounds && !bad; r++) {
        double t0 = tj_bench_now_ns();
        bad |= jit_validate(pool.kernel, idx) != JIT_OK;
        double t1 = tj_bench_now_ns();
        bad |= vp_parts(&pool) != JIT_OK;
        whole[r] = t1 - t0, parted[r] = tj_bench_now_ns() - t1;
    }
    idx[tuples * 2 - 1] = 1024; /* the last index: the last part must find it */
    bad |= jit_validate(pool.kernel, idx) != JIT_STATUS_BAD_INDEX ||
           vp_parts(&pool) != JIT_STATUS_BAD_INDEX;
    __atomic_store_n(&pool.quit, 1, __ATOMIC_RELEASE);
    for (int i = 1; i < threads; i++)
        pthread_join(th[i], NULL);
    if (bad) {
        fprintf(stderr, "a check disagreed: %s\n", jit_last_error());
        return 1;
    }
    double a = tj_bench_median(whole, (int)rounds), b = tj_bench_median(parted, (int)rounds);
    printf("GatherND [1024,1024] f32, %lld i64 tuples of 2 (%.1f MiB), kernel threads %lld: "
           "jit_validate %.1f us, %lld parts on %lld threads %.1f us (%.2f); medians of %lld\n",
           tuples, (double)tuples * 16 / 1048576, kernel_threads, a / 1e3, threads, threads,
           b / 1e3, b / a, rounds);
    jit_shutdown();
    free(idx), free(whole), free(parted);
    return 0;
}
