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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* Runs fn on n threads at once (at most 8); the sum of what they return
 * (each its count of wrong answers). */
static long run_threads(int n, void *(*fn)(void *))
{
    pthread_t t[8];
    int started = 0;
    for (int i = 0; i < n && i < 8; i++)
        started += pthread_create(&t[started], NULL, fn, NULL) == 0;
    long bad = 0;
    for (int i = 0; i < started; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)(intptr_t)r;
    }
    assert_int_equal(started, n); /* after the joins: none left running */
    return bad;
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
    assert_int_equal(run_threads(4, caller), 0);
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
 * tiered pointer (one background compile, not two); on a loaded machine
 * the compile may finish between the two calls, and the second then gets
 * the JIT kernel's own pointer, which the first has switched to. */
static void test_twice_before_the_switch_is_one_kernel(void **state)
{
    (void)state;
    jit_gather_nd_sig s = gsig();
    s.index_policy = JIT_INDEX_ZERO_FILL; /* another signature: a fresh switch */
    jit_gather_nd_fn a = jit_gather_nd_compile_async(&s);
    jit_gather_nd_fn b = jit_gather_nd_compile_async(&s); /* microseconds later */
    assert_non_null(a);
    if (b != a) {
        assert_int_equal(engine_of(a), JIT_ENGINE_JIT);
        assert_ptr_equal((void *)(uintptr_t)b, (void *)(uintptr_t)jit_gather_nd_compile(&s));
    }
    assert_true(gather_ok(b));
    wait_for_jit(a);
    assert_true(gather_ok(a));
    jit_shutdown();
}

/* A dynamic family: an embedding bag whose table rows, lookups and bags
 * are each call's. */
static jit_sig family_sig(jit_index_policy policy)
{
    return (jit_sig){.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .opset = 15, .dtype = JIT_F32,
                     .index_type = JIT_I64, .reduction = JIT_REDUCTION_SUM, .threads = 1,
                     .index_policy = policy,
                     .data_shape = {2, {JIT_DIM_DYNAMIC, 8}},
                     .indices_shape = {1, {JIT_DIM_DYNAMIC}},
                     .updates_shape = {1, {JIT_DIM_DYNAMIC}}};
}

/* k on `bags` bags of n lookups from a table of `rows` rows, through the
 * pointer itself: 1 when every output element is the sum of its bag's rows
 * (halves, exact in float whatever the order). */
static int family_call_ok(jit_kernel k, int64_t rows, int64_t n, int64_t bags)
{
    float table[64 * 8]; /* each caller's own: threads call this at once */
    int64_t idx[40], off[40];
    float out[40 * 8], want[40 * 8] = {0};
    for (int64_t i = 0; i < rows * 8; i++)
        table[i] = (float)(i % 97) * 0.5f;
    for (int64_t i = 0; i < n; i++)
        idx[i] = (i * 7 + 3) % rows;
    for (int64_t b = 0; b < bags; b++)
        off[b] = b * n / bags;
    for (int64_t b = 0; b < bags; b++)
        for (int64_t j = off[b]; j < (b + 1 < bags ? off[b + 1] : n); j++)
            for (int c = 0; c < 8; c++)
                want[b * 8 + c] += table[idx[j] * 8 + c];
    int64_t dims[4] = {rows, 8, n, bags};
    if (((jit_embedding_bag_dynamic_fn)k)(table, idx, off, NULL, out, dims) != 0)
        return 0;
    return memcmp(out, want, (size_t)bags * 8 * sizeof(float)) == 0;
}

/* Three shapes of the family: long bags, one lookup a bag, empty bags. */
static int family_ok(jit_kernel k)
{
    return family_call_ok(k, 64, 40, 5) && family_call_ok(k, 10, 12, 12) &&
           family_call_ok(k, 33, 0, 3);
}

static void wait_for_jit_kernel(jit_kernel k)
{
    jit_kernel_info info = {0};
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(jit_info(k, &info), 0);
        if (info.engine == JIT_ENGINE_JIT)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
    assert_int_equal(info.dynamic, 1);
}

/* jit_compile_async of a dynamic family is tiered too (its one compile
 * takes milliseconds): a pointer other than the compiled kernel's, right
 * for every shape from its first call, then the JIT family kernel, and
 * jit_compile's direct pointer after that; through a stub and, where there
 * are none (TENSORJIT_FAULT=stub), a libffi closure. A bad offset through
 * the tiered entry is the kernel's status and message. */
static void test_a_family_answers_at_once_then_switches(void **state)
{
    (void)state;
    static const jit_index_policy policies[] = {JIT_INDEX_ERROR, JIT_INDEX_CLAMP};
    for (int v = 0; v < 2; v++) {
        jit_sig s = family_sig(policies[v]);
        if (v == 1)
            support_setenv("TENSORJIT_FAULT", "stub");
        jit_kernel k = jit_compile_async(&s);
        support_unsetenv("TENSORJIT_FAULT");
        assert_non_null(k);
        int64_t shape[4] = {64, 8, 40, 5};
        jit_engine e;
        char why[160];
        assert_int_equal(jit_dynamic_engine(k, shape, &e, why, sizeof why), 0);
        if (e == JIT_ENGINE_REFERENCE) /* not switched yet: it says so */
            assert_non_null(strstr(why, "tiered: the JIT kernel is not ready yet"));
        assert_true(family_ok(k)); /* from the first call, whatever runs it */
        wait_for_jit_kernel(k);
        assert_true(family_ok(k));
        jit_kernel direct = jit_compile(&s);
        assert_non_null(direct);
        assert_ptr_not_equal((void *)(uintptr_t)direct, (void *)(uintptr_t)k);
        assert_ptr_equal((void *)(uintptr_t)jit_compile_async(&s), (void *)(uintptr_t)direct);
        assert_true(family_ok(direct));
        float table[16] = {0}, out[24];
        int64_t idx[4] = {0, 1, 0, 1}, off[3] = {0, 3, 2}, dims[4] = {2, 8, 4, 3};
        assert_int_equal(jit_call_bag_dynamic(k, table, idx, off, NULL, out, dims),
                         JIT_STATUS_BAD_INDEX);
        assert_non_null(strstr(jit_last_error(), "offsets[2]"));
    }
    jit_shutdown();
}

/* A family whose kernel would not use its threads (a mean's passes run on
 * one) gets the one-thread family's pointer from jit_compile_async too:
 * the tiered one, then the JIT kernel's, every time after. */
static void test_a_family_for_threads_it_cannot_use(void **state)
{
    (void)state;
    jit_sig mean = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .opset = 12, .dtype = JIT_F32,
                    .index_type = JIT_I64, .reduction = JIT_REDUCTION_MEAN, .threads = 2,
                    .data_shape = {2, {JIT_DIM_DYNAMIC, 4}},
                    .indices_shape = {2, {JIT_DIM_DYNAMIC, 4}},
                    .updates_shape = {2, {JIT_DIM_DYNAMIC, 4}}};
    jit_kernel two = jit_compile_async(&mean);
    mean.threads = 1;
    jit_kernel one = jit_compile_async(&mean);
    assert_non_null(two);
    if (two != one) { /* the compile landed between the two calls */
        assert_ptr_equal((void *)(uintptr_t)one, (void *)(uintptr_t)jit_compile(&mean));
        two = one;
    }
    wait_for_jit_kernel(two);
    jit_kernel direct = jit_compile(&mean);
    mean.threads = 2;
    for (int i = 0; i < 2; i++) /* the second through the alias the first made */
        assert_ptr_equal((void *)(uintptr_t)jit_compile_async(&mean), (void *)(uintptr_t)direct);
    assert_ptr_equal((void *)(uintptr_t)jit_compile(&mean), (void *)(uintptr_t)direct);
    jit_shutdown();
}

/* The threads of this process now (/proc/self/status), or -1. */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* Many kernels asked for at once are compiled by one background thread, in
 * turn, not by a thread each: the process gains one thread, and every
 * kernel still switches. */
static void test_many_requests_one_compiler(void **state)
{
    (void)state;
    enum { N = 24 };
    int before = thread_count();
    jit_gather_nd_fn fn[N];
    for (int i = 0; i < N; i++) {
        jit_gather_nd_sig s = gsig();
        s.data_shape.dims[0] = 200 + i; /* a key each */
        fn[i] = jit_gather_nd_compile_async(&s);
        assert_non_null(fn[i]);
    }
    int during = thread_count();
    if (before > 0 && during > before + 2) /* the compiler; TSan's own, if it is the first */
        fail_msg("%d threads while %d kernels compile in the background (%d before)", during, N,
                 before);
    for (int i = 0; i < N; i++)
        wait_for_jit(fn[i]);
    jit_shutdown();
}

#ifndef __SANITIZE_THREAD__
/* In a child process: a kernel asked for switches (its own compiler,
 * not the parent's, which the fork did not copy), then eight more are
 * asked for and jit_shutdown drops those still queued and joins the one
 * compiling. The exit status says which failed. */
static void child_asks_then_exits(void)
{
    alarm(30); /* a hang here fails the test (SIGALRM) instead of holding up the suite */
    jit_gather_nd_sig s = gsig();
    s.data_shape.dims[0] = 400;
    jit_gather_nd_fn fn = jit_gather_nd_compile_async(&s);
    jit_kernel_info info = {0};
    for (int i = 0; fn && i < 5000; i++) {
        if (jit_gather_nd_info(fn, &info) == 0 && info.engine == JIT_ENGINE_JIT)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (!fn || info.engine != JIT_ENGINE_JIT)
        _exit(3);
    for (int i = 0; i < 8; i++) {
        s.data_shape.dims[0] = 401 + i;
        if (!jit_gather_nd_compile_async(&s))
            _exit(4);
    }
    jit_shutdown();
    exit(0);
}
#endif

/* A fork while the parent's compiler thread exists (idle: a fork while it
 * compiles could copy a lock it holds, which no library can undo), and a
 * shutdown while the child's compiles (not under TSan, which refuses
 * threads after a fork). */
static void test_fork_and_shutdown_while_compiling(void **state)
{
    (void)state;
#ifdef __SANITIZE_THREAD__
    skip();
#else
    jit_gather_nd_sig s = gsig();
    s.data_shape.dims[0] = 399;
    jit_gather_nd_fn mine = jit_gather_nd_compile_async(&s); /* the parent's compiler */
    assert_non_null(mine);
    wait_for_jit(mine);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_asks_then_exits();
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(gather_ok(mine));
    jit_shutdown();
#endif
}

static jit_kernel shared_family;
/* Calls until 100 calls after the pointer runs the JIT kernel (the
 * compile lands among them), or 20000 in all. */
static void *family_caller(void *arg)
{
    (void)arg;
    int bad = 0, after = 0;
    jit_kernel_info info;
    for (int i = 0; i < 20000 && after < 100; i++) {
        bad += !family_ok(shared_family);
        after += jit_info(shared_family, &info) == 0 && info.engine == JIT_ENGINE_JIT;
    }
    return (void *)(intptr_t)bad;
}

/* Threads call a family's tiered pointer while its compile lands (TSan
 * in CI). */
static void test_threads_call_a_family_through_the_switch(void **state)
{
    (void)state;
    jit_sig s = family_sig(JIT_INDEX_ZERO_FILL);
    shared_family = jit_compile_async(&s);
    assert_non_null(shared_family);
    assert_int_equal(run_threads(3, family_caller), 0);
    wait_for_jit_kernel(shared_family);
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
        cmocka_unit_test(test_a_family_answers_at_once_then_switches),
        cmocka_unit_test(test_threads_call_a_family_through_the_switch),
        cmocka_unit_test(test_a_family_for_threads_it_cannot_use),
        cmocka_unit_test(test_many_requests_one_compiler),
        cmocka_unit_test(test_fork_and_shutdown_while_compiling),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
