/* 8 threads compile and call overlapping sets of signatures at once (the
 * same new signature from several threads included), single-threaded and
 * pooled kernels, both ops; every result is checked against the reference
 * kernel. Built under ThreadSanitizer by build.sh. TENSORJIT_STRESS_ROUNDS
 * runs it longer. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

enum { THREADS = 8, SIGS = 12 };

static pthread_barrier_t start;
static long rounds;

static jit_gather_nd_sig gather_sig(int n)
{
    /* n % 6 picks the shape, n / 6 the thread count: overlapping sets */
    jit_gather_nd_sig s = {.dtype = JIT_F32, .index_type = JIT_I32,
                           .data_shape = {2, {64 + n % 6, 32}},
                           .indices_shape = {2, {700 + 100 * (n % 6), 1}},
                           .threads = n / 6 ? 2 : 0};
    return s;
}

static jit_scatter_update_sig scatter_sig(int n)
{
    jit_scatter_update_sig s = {.axis = 1, .dtype = JIT_I16, .index_type = JIT_I64,
                                .data_shape = {2, {300, 16 + n % 6}},
                                .indices_shape = {1, {4}},
                                .updates_shape = {2, {300, 4}},
                                .threads = n / 6 ? 2 : 0};
    return s;
}

static int check_gather(int n, uint64_t *rs)
{
    jit_gather_nd_sig s = gather_sig(n), r = s;
    r.engine = JIT_ENGINE_REFERENCE;
    jit_gather_nd_fn fj = jit_gather_nd_compile(&s), fr = jit_gather_nd_compile(&r);
    if (!fj || !fr)
        return 1;
    int64_t rows = s.data_shape.dims[0], m = s.indices_shape.dims[0];
    float *data = malloc(sizeof(float) * (size_t)(rows * 32));
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)m);
    float *o1 = malloc(sizeof(float) * (size_t)(m * 32)), *o2 = malloc(sizeof(float) * (size_t)(m * 32));
    for (int64_t i = 0; i < rows * 32; i++)
        data[i] = (float)i;
    for (int64_t i = 0; i < m; i++)
        idx[i] = (int32_t)(support_rand(rs) % (uint64_t)rows);
    int bad = fj(data, idx, o1) != 0 || fr(data, idx, o2) != 0 ||
              memcmp(o1, o2, sizeof(float) * (size_t)(m * 32)) != 0;
    free(data);
    free(idx);
    free(o1);
    free(o2);
    return bad;
}

static int check_scatter(int n, uint64_t *rs)
{
    jit_scatter_update_sig s = scatter_sig(n), r = s;
    r.engine = JIT_ENGINE_REFERENCE;
    jit_scatter_update_fn fj = jit_scatter_update_compile(&s), fr = jit_scatter_update_compile(&r);
    if (!fj || !fr)
        return 1;
    int64_t cols = s.data_shape.dims[1], n_data = 300 * cols;
    int16_t *data = malloc(sizeof(int16_t) * (size_t)n_data), upd[1200];
    int16_t *o1 = malloc(sizeof(int16_t) * (size_t)n_data), *o2 = malloc(sizeof(int16_t) * (size_t)n_data);
    int64_t idx[4];
    for (int64_t i = 0; i < n_data; i++)
        data[i] = (int16_t)i;
    for (int i = 0; i < 1200; i++)
        upd[i] = (int16_t)-i;
    for (int i = 0; i < 4; i++)
        idx[i] = (int64_t)(support_rand(rs) % (uint64_t)cols);
    int bad = fj(data, idx, upd, o1) != 0 || fr(data, idx, upd, o2) != 0 ||
              memcmp(o1, o2, sizeof(int16_t) * (size_t)n_data) != 0;
    free(data);
    free(o1);
    free(o2);
    return bad;
}

static void *worker(void *arg)
{
    intptr_t id = (intptr_t)arg;
    uint64_t rs = (uint64_t)id * 7919 + 1;
    int bad = 0;
    pthread_barrier_wait(&start);
    for (long r = 0; r < rounds; r++) {
        /* everyone starts on signature r % SIGS: the same new one at once */
        for (int k = 0; k < 3; k++) {
            int n = (int)((r + (k ? id + k : 0)) % SIGS);
            bad += (id + k) % 2 ? check_gather(n, &rs) : check_scatter(n, &rs);
        }
    }
    return (void *)(intptr_t)bad;
}

static void test_threads_compile_and_call(void **state)
{
    (void)state;
    rounds = support_env_long("TENSORJIT_STRESS_ROUNDS", 24);
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)(intptr_t)r;
    }
    pthread_barrier_destroy(&start);
    jit_shutdown();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads_compile_and_call)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
