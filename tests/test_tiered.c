/* Tiered kernels: they answer from the first call (the reference kernel),
 * switch to the JIT kernel when its background compile is done, and give
 * the same bytes all along, also while threads call them during the
 * switch (run under TSan in CI). */
#define _DEFAULT_SOURCE /* setenv */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

static jit_gather_nd_sig gsig(void)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32,
                               .data_shape = {2, {100, 8}}, .indices_shape = {2, {300, 1}}};
}

static float gdata[800];
static int32_t gidx[300];

static int gather_ok(jit_gather_nd_fn fn)
{
    float out[2400];
    if (fn(gdata, gidx, out) != 0)
        return 0;
    for (int i = 0; i < 300; i++)
        for (int c = 0; c < 8; c++)
            if (out[i * 8 + c] != gdata[gidx[i] * 8 + c])
                return 0;
    return 1;
}

static jit_engine engine_of(jit_gather_nd_fn fn)
{
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    return info.engine;
}

static void wait_for_jit(jit_gather_nd_fn fn)
{
    for (int i = 0; i < 5000 && engine_of(fn) != JIT_ENGINE_JIT; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(engine_of(fn), JIT_ENGINE_JIT);
}

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < 800; i++)
        gdata[i] = (float)i;
    for (int i = 0; i < 300; i++)
        gidx[i] = (i * 13) % 100;
    return 0;
}

static void test_answers_at_once_then_switches(void **state)
{
    (void)state;
    jit_gather_nd_sig s = gsig();
    jit_gather_nd_fn fn = jit_gather_nd_compile_async(&s);
    assert_non_null(fn);
    assert_true(gather_ok(fn)); /* from the first call, whatever runs it */
    wait_for_jit(fn);
    assert_true(gather_ok(fn));
    /* once compiled, asking again (either way) gives the direct pointer */
    jit_gather_nd_fn direct = jit_gather_nd_compile(&s);
    assert_ptr_equal((void *)(uintptr_t)jit_gather_nd_compile_async(&s), (void *)(uintptr_t)direct);
    assert_ptr_not_equal((void *)(uintptr_t)direct, (void *)(uintptr_t)fn);
    assert_int_equal(engine_of(direct), JIT_ENGINE_JIT);
    assert_true(gather_ok(direct));
    /* a bad index: the status and the message, through the tiered entry */
    gidx[7] = 100;
    float out[2400];
    assert_int_equal(fn(gdata, gidx, out), JIT_STATUS_BAD_INDEX);
    assert_string_equal(jit_last_error(),
                        "indices[7] = [100] is out of range for data dimension 0 of size 100");
    gidx[7] = 7;
    jit_shutdown();
}

static jit_gather_nd_fn shared;
static void *caller(void *arg)
{
    (void)arg;
    int bad = 0;
    for (int i = 0; i < 3000; i++)
        bad += !gather_ok(shared);
    return (void *)(intptr_t)bad;
}

static void test_threads_call_through_the_switch(void **state)
{
    (void)state;
    jit_gather_nd_sig s = gsig();
    s.index_policy = JIT_INDEX_CLAMP; /* another signature: a fresh switch */
    shared = jit_gather_nd_compile_async(&s);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, caller, NULL);
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)(intptr_t)r;
    }
    assert_int_equal(bad, 0);
    wait_for_jit(shared);
    jit_shutdown();
}

/* Where there are no entry stubs (not x86-64; here TENSORJIT_FAULT=stub)
 * the tiered entry is a libffi closure: the same answers, the same switch. */
static void test_without_stubs_a_closure_switches(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_FAULT", "stub");
    jit_gather_nd_sig s = gsig();
    s.index_policy = JIT_INDEX_NEGATIVE_WRAPS; /* another signature: a fresh switch */
    jit_gather_nd_fn fn = jit_gather_nd_compile_async(&s);
    support_unsetenv("TENSORJIT_FAULT");
    assert_non_null(fn);
    assert_true(gather_ok(fn));
    wait_for_jit(fn);
    assert_true(gather_ok(fn));
    jit_gather_nd_fn direct = jit_gather_nd_compile(&s);
    assert_ptr_not_equal((void *)(uintptr_t)direct, (void *)(uintptr_t)fn);
    gidx[3] = -1; /* wraps to 99 */
    float out[2400];
    assert_int_equal(fn(gdata, gidx, out), 0);
    assert_memory_equal(out + 3 * 8, gdata + 99 * 8, 8 * sizeof(float));
    gidx[3] = 3;
    jit_shutdown();
}

static void test_scatter_and_reference_requests(void **state)
{
    (void)state;
    jit_scatter_update_sig s = {.axis = 1, .dtype = JIT_F32, .index_type = JIT_I64,
                                .data_shape = {2, {3, 5}}, .indices_shape = {1, {2}},
                                .updates_shape = {2, {3, 2}}};
    float data[15] = {-1, 1, -1, 3, 4, -1, 6, -1, 8, 9, -1, 11, 1, 13, 14}, out[15];
    float upd[6] = {1, 1, 1, 1, 1, 2}, want[15] = {1, 1, 1, 3, 4, 1, 6, 1, 8, 9, 1, 11, 2, 13, 14};
    int64_t idx[2] = {0, 2};
    jit_scatter_update_fn fn = jit_scatter_update_compile_async(&s);
    assert_int_equal(fn(data, idx, upd, out), 0);
    assert_memory_equal(out, want, sizeof want);
    /* asking for the reference engine: nothing to switch to, the plain kernel */
    s.engine = JIT_ENGINE_REFERENCE;
    jit_scatter_update_fn ref = jit_scatter_update_compile_async(&s);
    assert_ptr_equal((void *)(uintptr_t)ref, (void *)(uintptr_t)jit_scatter_update_compile(&s));
    jit_shutdown(); /* joins the background compile */
}

/* Without stubs a ScatterUpdate's closure calls the scatter kernel (four
 * buffers), before and after the switch. */
static void test_scatter_through_a_closure(void **state)
{
    (void)state;
    jit_scatter_update_sig s = {.axis = 0, .dtype = JIT_F32, .index_type = JIT_I32,
                                .index_policy = JIT_INDEX_CLAMP, .data_shape = {2, {4, 3}},
                                .indices_shape = {1, {2}}, .updates_shape = {2, {2, 3}}};
    float data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, upd[6] = {-1, -2, -3, -4, -5, -6};
    float want[12] = {-4, -5, -6, 3, 4, 5, 6, 7, 8, -1, -2, -3}, out[12];
    int32_t idx[2] = {7, -3}; /* clamped to 3 and 0 */
    setenv("TENSORJIT_FAULT", "stub", 1);
    jit_scatter_update_fn fn = jit_scatter_update_compile_async(&s);
    unsetenv("TENSORJIT_FAULT");
    assert_non_null(fn);
    assert_int_equal(fn(data, idx, upd, out), 0);
    assert_memory_equal(out, want, sizeof want);
    jit_kernel_info info;
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(jit_scatter_update_info(fn, &info), 0);
        if (info.engine == JIT_ENGINE_JIT)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
    memset(out, 0, sizeof out);
    assert_int_equal(fn(data, idx, upd, out), 0);
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(fn(data, idx, upd, NULL), JIT_STATUS_BAD_POINTER);
    jit_shutdown();
}

/* Asked for twice before its compile is done, a signature gets the same
 * tiered pointer (one background compile, not two). */
static void test_twice_before_the_switch_is_one_kernel(void **state)
{
    (void)state;
    jit_gather_nd_sig s = gsig();
    s.index_policy = JIT_INDEX_ZERO_FILL; /* another signature: a fresh switch */
    jit_gather_nd_fn a = jit_gather_nd_compile_async(&s);
    jit_gather_nd_fn b = jit_gather_nd_compile_async(&s); /* microseconds later */
    assert_non_null(a);
    assert_ptr_equal((void *)(uintptr_t)a, (void *)(uintptr_t)b);
    assert_true(gather_ok(b));
    wait_for_jit(a);
    assert_true(gather_ok(a));
    jit_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_at_once_then_switches),
        cmocka_unit_test(test_threads_call_through_the_switch),
        cmocka_unit_test(test_without_stubs_a_closure_switches),
        cmocka_unit_test(test_scatter_and_reference_requests),
        cmocka_unit_test(test_scatter_through_a_closure),
        cmocka_unit_test(test_twice_before_the_switch_is_one_kernel),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
