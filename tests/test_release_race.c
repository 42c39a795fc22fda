/* Threads racing the kernel limit's releases (run under ASan and TSan in
 * CI, TENSORJIT_STRESS_SECONDS each, 2 s by default):
 * - info and units queries on pointers that another thread compiles and
 *   releases (docs/library.md allows both on released pointers): each answers
 *   the kernel's own figures or "released", and never reads a freed kernel;
 * - recompiles of signatures whose kernels other threads release at the
 *   same time, with the disk cache on and cached objects loaded through
 *   LLJIT: every one must be a JIT kernel, never a silent fall-back after
 *   the new kernel's symbols met the old ones still defined in the JIT. */
#define _DEFAULT_SOURCE /* setenv, mkdtemp */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

#define COLS 4
#define TAKE 5
#define SIGS 48

static float gdata[(8 + SIGS) * COLS];
static const int32_t gidx[TAKE] = {3, 0, 7, 1, 5};
static _Atomic(jit_gather_nd_fn) published[SIGS];
static atomic_int stop;

static jit_gather_nd_sig gsig(int i)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32,
                               .data_shape = {2, {8 + i, COLS}},
                               .indices_shape = {2, {TAKE, 1}}};
}

static int gather_ok(jit_gather_nd_fn fn)
{
    float out[TAKE * COLS];
    if (fn(gdata, gidx, out) != JIT_OK)
        return 0;
    for (int i = 0; i < TAKE; i++)
        for (int c = 0; c < COLS; c++)
            if (out[i * COLS + c] != gdata[gidx[i] * COLS + c])
                return 0;
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double stress_seconds(void)
{
    return (double)support_env_long("TENSORJIT_STRESS_SECONDS", 2);
}

/* Compiles and releases every signature in turn until the time is up,
 * publishing each pointer before its release. */
static void *compile_and_release(void *arg)
{
    long bad = 0;
    double end = now_s() + *(const double *)arg;
    /* at least three rounds however slow the host, so that the limit has
     * released more than SIGS kernels when the queries stop */
    for (int round = 0; round < 3 || now_s() < end; round++)
        for (int i = 0; i < SIGS; i++) {
            jit_gather_nd_sig s = gsig(i);
            jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
            bad += !fn || !gather_ok(fn);
            if (fn)
                atomic_store(&published[i], fn);
            bad += fn && jit_gather_nd_release(fn) != 0;
        }
    atomic_store(&stop, 1);
    return (void *)bad;
}

/* info and units of published pointers: the kernel's figures, or -1 with
 * "released" once the limit has taken it. */
static void *query(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
    long bad = 0, answered = 0;
    while (!atomic_load(&stop)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        jit_gather_nd_fn fn = atomic_load(&published[x % SIGS]);
        if (!fn)
            continue;
        jit_kernel_info info;
        if (jit_gather_nd_info(fn, &info) == 0) {
            bad += info.engine != JIT_ENGINE_JIT || info.out_bytes != TAKE * COLS * 4;
            answered++;
        } else {
            bad += strstr(jit_last_error(), "released") == NULL;
        }
        int64_t units = jit_gather_nd_units(fn);
        bad += units != -1 && units != TAKE;
    }
    return (void *)(bad ? -bad : answered);
}

static void test_queries_race_releases(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(2, 0), 0);
    double seconds = stress_seconds();
    pthread_t c, q[2];
    assert_int_equal(pthread_create(&c, NULL, compile_and_release, &seconds), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&q[i], NULL, query, (void *)(uintptr_t)(i + 1)), 0);
    void *r;
    pthread_join(c, &r);
    assert_int_equal((long)r, 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(q[i], &r);
        assert_true((long)r >= 0); /* no wrong answer */
    }
    jit_kernel_stats st;
    assert_int_equal(jit_get_kernel_stats(&st), 0);
    assert_true(st.released > SIGS);
    jit_shutdown();
}

enum { RECOMPILERS = 3, HOT = 3 };

static void *recompile(void *arg)
{
    double end = now_s() + *(const double *)arg;
    long bad = 0;
    for (int n = 0; now_s() < end; n++) {
        jit_gather_nd_sig s = gsig(n % HOT);
        jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
        jit_kernel_info info;
        if (!fn || jit_gather_nd_info(fn, &info) != 0) {
            bad++;
            continue;
        }
        if (info.engine != JIT_ENGINE_JIT) {
            fprintf(stderr, "a recompile fell back to the reference kernel: %s\n", info.why);
            bad++;
        }
        bad += !gather_ok(fn);
        bad += jit_gather_nd_release(fn) != 0;
    }
    return (void *)bad;
}

static void test_recompiles_race_releases(void **state)
{
    (void)state;
    char dir[] = "/tmp/tensorjit-race-XXXXXX";
    assert_non_null(mkdtemp(dir));
    support_setenv("TENSORJIT_OBJLOAD", "llvm");
    assert_int_equal(jit_cache_open(dir), 0);
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    double seconds = stress_seconds();
    pthread_t t[RECOMPILERS];
    for (int i = 0; i < RECOMPILERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, recompile, &seconds), 0);
    long bad = 0;
    for (int i = 0; i < RECOMPILERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    assert_int_equal(bad, 0);
    int64_t entries, bytes;
    char d[256];
    assert_int_equal(jit_cache_stats(1, &entries, &bytes, d, sizeof d), 0);
    assert_int_equal(entries, HOT);
    support_setenv("TENSORJIT_OBJLOAD", NULL);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
#if !defined(__x86_64__)
    return 77; /* kernels can be released only where there are entry stubs */
#endif
    for (size_t i = 0; i < sizeof gdata / sizeof *gdata; i++)
        gdata[i] = (float)i + 0.25f;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_race_releases),
        cmocka_unit_test(test_recompiles_race_releases),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
