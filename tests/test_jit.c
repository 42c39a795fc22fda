/* The JIT engine itself: that it serves, that its pointers are shared by
 * threads racing on a new signature, that every injected failure (LLVM
 * start-up, compile, object loading) falls back to a working reference
 * kernel with the reason, and that the dumps show the plan. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

static jit_gather_nd_sig rows(int n)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I64,
                               .data_shape = {2, {4, 3}}, .indices_shape = {2, {n, 1}}};
}

static const float data[12] = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};

static void expect_engine(jit_gather_nd_fn fn, jit_engine want, const char *why)
{
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    if (info.engine != want)
        fail_msg("engine %s (%s), expected %s", jit_engine_name(info.engine), info.why,
                 jit_engine_name(want));
    if (why)
        assert_string_equal(info.why, why);
    if (want == JIT_ENGINE_JIT) {
        assert_true(info.code_bytes > 0);
        assert_true(info.compile_ms > 0);
        assert_string_equal(info.why, "");
    }
}

static void test_auto_is_jit(void **state)
{
    (void)state;
    jit_gather_nd_sig s = rows(2);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    assert_non_null(fn);
    expect_engine(fn, JIT_ENGINE_JIT, NULL);
    int64_t idx[2] = {3, 1};
    float out[6];
    assert_int_equal(fn(data, idx, out), 0);
    float want[6] = {30, 31, 32, 10, 11, 12};
    assert_memory_equal(out, want, sizeof want);
    /* the JIT's error path names the index like the reference does */
    idx[1] = 4;
    assert_int_equal(fn(data, idx, out), JIT_STATUS_BAD_INDEX);
    assert_string_equal(jit_last_error(),
                        "indices[1] = [4] is out of range for data dimension 0 of size 4");
    assert_int_equal(fn(NULL, idx, out), JIT_STATUS_BAD_POINTER);
    assert_string_equal(jit_last_error(), "data is NULL but the signature needs bytes there");
}

/* The same fault for ScatterUpdate, under every index policy: a working
 * reference kernel with the reason. */
static void scatter_fault(const char *stage, const char *why)
{
    for (int pol = 0; pol < JIT_INDEX_POLICY_COUNT; pol++) {
        support_setenv("TENSORJIT_FAULT", stage);
        jit_scatter_update_sig s = {.axis = 0, .dtype = JIT_F32, .index_type = JIT_I64,
                                    .index_policy = (jit_index_policy)pol,
                                    .data_shape = {2, {4, 3}}, .indices_shape = {1, {1}},
                                    .updates_shape = {2, {1, 3}}};
        jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
        support_unsetenv("TENSORJIT_FAULT");
        jit_kernel_info info;
        assert_int_equal(jit_scatter_update_info(fn, &info), 0);
        assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
        if (why)
            assert_string_equal(info.why, why);
        int64_t idx = 3;
        float out[12], upd[3] = {7, 8, 9};
        assert_int_equal(fn(data, &idx, upd, out), 0);
        assert_true(out[9] == 7 && out[11] == 9 && out[0] == 0);
    }
}

static void test_fault(const char *stage, const char *why)
{
    scatter_fault(stage, why);
    support_setenv("TENSORJIT_FAULT", stage); /* a new engine: start-up runs again */
    jit_gather_nd_sig s = rows(3);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    support_unsetenv("TENSORJIT_FAULT");
    assert_non_null(fn);
    expect_engine(fn, JIT_ENGINE_REFERENCE, why);
    if (why)
        assert_string_equal(jit_last_error(), why);
    int64_t idx[3] = {0, 3, 2};
    float out[9];
    assert_int_equal(fn(data, idx, out), 0);
    float want[9] = {0, 1, 2, 30, 31, 32, 20, 21, 22};
    assert_memory_equal(out, want, sizeof want);
    /* the next signature compiles again unless the engine is gone */
    jit_gather_nd_sig t = rows(4);
    jit_gather_nd_fn fn2 = jit_gather_nd_compile(&t);
    expect_engine(fn2, strcmp(stage, "start") == 0 ? JIT_ENGINE_REFERENCE : JIT_ENGINE_JIT,
                  NULL);
    jit_shutdown();
}

static void test_fault_start(void **state)
{
    (void)state;
    test_fault("start", "LLVM start-up failed (injected by TENSORJIT_FAULT)");
}

static void test_fault_compile(void **state)
{
    (void)state;
    test_fault("compile", "compiling the kernel failed (injected by TENSORJIT_FAULT)");
}

static void test_fault_load(void **state)
{
    (void)state;
    test_fault("load", "loading the kernel's object failed (injected by TENSORJIT_FAULT)");
}

/* LLVM itself fails (a symbol no one defines): its message is the reason,
 * and nothing is printed. */
static void test_fault_link(void **state)
{
    (void)state;
    test_fault("link", NULL);
    support_setenv("TENSORJIT_FAULT", "link");
    jit_gather_nd_sig s = rows(3);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    support_unsetenv("TENSORJIT_FAULT");
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    assert_non_null(strstr(info.why, "loading the kernel: "));
    assert_non_null(strstr(info.why, "tj_rt_fault_missing"));
}

enum { THREADS = 8 };
static pthread_barrier_t barrier;
static jit_gather_nd_fn results[THREADS];

static void *race(void *arg)
{
    int i = (int)(intptr_t)arg;
    jit_gather_nd_sig s = rows(7); /* the same new signature in every thread */
    jit_gather_nd_sig own = rows(20 + i); /* and one of its own, compiled meanwhile */
    pthread_barrier_wait(&barrier);
    if (i % 2)
        results[i] = jit_gather_nd_compile(&s);
    jit_gather_nd_fn mine = jit_gather_nd_compile(&own);
    if (!(i % 2))
        results[i] = jit_gather_nd_compile(&s);
    int64_t mine_idx[27] = {0};
    float mine_out[81];
    mine_idx[20 + i - 1] = 3;
    if (!mine || mine(data, mine_idx, mine_out) != 0 || mine_out[3 * (20 + i - 1)] != 30) {
        results[i] = NULL;
        return NULL;
    }
    int64_t idx[7] = {0, 1, 2, 3, 3, 2, 1};
    float out[21];
    if (!results[i] || results[i](data, idx, out) != 0 || out[20] != 12)
        results[i] = NULL;
    return NULL;
}

static void test_threads_share_one_kernel(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, race, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < THREADS; i++) {
        assert_non_null(results[i]);
        assert_ptr_equal((void *)(uintptr_t)results[i], (void *)(uintptr_t)results[0]);
    }
}

static void test_dumps(void **state)
{
    (void)state;
    jit_gather_nd_sig s = rows(40); /* 40 entries, above the unroll budget: loops */
    char *ir = jit_gather_nd_dump(&s, JIT_DUMP_IR);
    assert_non_null(ir);
    /* the names of the plan, and every shape a constant */
    assert_non_null(strstr(ir, "define i32 @tj_gather_nd("));
    assert_non_null(strstr(ir, "noalias"));
    assert_non_null(strstr(ir, "check.fail:"));
    assert_non_null(strstr(ir, "level0.loop:"));
    assert_non_null(strstr(ir, "%slice.src"));
    /* 40 rows of 12 bytes, TJ_IR_LOOP_UNROLL (8) of them per trip */
    assert_non_null(strstr(ir, "icmp eq i64 %level0.next, 5"));
    jit_free(ir);
    jit_gather_nd_sig small = rows(2); /* unrolled: no loop at all */
    ir = jit_gather_nd_dump(&small, JIT_DUMP_IR);
    assert_null(strstr(ir, ".loop:"));
    jit_free(ir);
    char *opt = jit_gather_nd_dump(&s, JIT_DUMP_IR_OPT);
    assert_non_null(opt);
    jit_free(opt);
    char *as = jit_gather_nd_dump(&s, JIT_DUMP_ASM);
    assert_non_null(as);
    assert_non_null(strstr(as, "tj_gather_nd:"));
    assert_non_null(strstr(as, "ret"));
    jit_free(as);
    s.batch_dims = 5;
    assert_null(jit_gather_nd_dump(&s, JIT_DUMP_IR));
    assert_non_null(strstr(jit_last_error(), "batch_dims=5"));
}

/* JIT vs reference on one signature, random data and indices (a few bad
 * ones under zero-fill), with out at the given byte offset from aligned. */
static void jit_matches_reference(jit_gather_nd_sig s, size_t out_offset)
{
    jit_gather_nd_sig r = s;
    s.engine = JIT_ENGINE_AUTO;
    r.engine = JIT_ENGINE_REFERENCE;
    jit_gather_nd_fn fj = jit_gather_nd_compile(&s), fr = jit_gather_nd_compile(&r);
    jit_kernel_info info;
    assert_non_null(fj);
    assert_non_null(fr);
    assert_int_equal(jit_gather_nd_info(fj, &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
    size_t db = 4, n = 1;
    for (int i = 0; i < s.data_shape.rank; i++)
        db *= (size_t)s.data_shape.dims[i];
    for (int i = 0; i < s.indices_shape.rank; i++)
        n *= (size_t)s.indices_shape.dims[i];
    unsigned char *bytes = malloc(db), *o1 = malloc((size_t)info.out_bytes + 64);
    unsigned char *o2 = malloc((size_t)info.out_bytes + 64);
    int64_t *idx = malloc(n * 8);
    uint64_t x = 12345;
    for (size_t i = 0; i < db; i++)
        bytes[i] = (unsigned char)(i * 131 + 7);
    int k = (int)s.indices_shape.dims[s.indices_shape.rank - 1];
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t dim = s.data_shape.dims[s.batch_dims + (int)(i % (size_t)k)];
        idx[i] = (int64_t)((x >> 33) % (uint64_t)dim);
        if (s.index_policy == JIT_INDEX_ZERO_FILL && i % 97 == 5)
            idx[i] = dim + 3; /* dropped: zeros */
    }
    memset(o1, 0x77, (size_t)info.out_bytes + 64);
    memset(o2, 0x77, (size_t)info.out_bytes + 64);
    assert_int_equal(fj(bytes, idx, o1 + out_offset), fr(bytes, idx, o2 + out_offset));
    assert_memory_equal(o1, o2, (size_t)info.out_bytes + 64);
    free(bytes);
    free(o1);
    free(o2);
    free(idx);
}

/* Code paths behind size thresholds the differential test never reaches:
 * non-temporal stores (>= 16 MB written; aligned and misaligned out),
 * inline copies of >= 2 KB blocks, prefetching (>= 2 MB of data). */
static void test_large_kernel_paths(void **state)
{
    (void)state;
    jit_gather_nd_sig nt = {.dtype = JIT_F32, .index_type = JIT_I64,
                            .data_shape = {2, {1024, 64}}, .indices_shape = {2, {65536, 1}}};
    support_setenv("TENSORJIT_NT", "1");
    jit_matches_reference(nt, 0);
    jit_shutdown();
    jit_matches_reference(nt, 4); /* not 16-byte aligned: the cached path */
    nt.index_policy = JIT_INDEX_ZERO_FILL;
    jit_matches_reference(nt, 0);
    support_setenv("TENSORJIT_NT", NULL);
    jit_gather_nd_sig big = {.dtype = JIT_F32, .index_type = JIT_I32,
                             .data_shape = {2, {64, 1024}}, .indices_shape = {2, {100, 1}}};
    jit_matches_reference(big, 0); /* 4 KB blocks: inlined copies */
    jit_gather_nd_sig odd = {.dtype = JIT_F32, .index_type = JIT_I32,
                             .data_shape = {2, {50, 150}}, .indices_shape = {2, {40, 1}}};
    jit_matches_reference(odd, 0); /* 600-byte blocks: 32-byte moves, the last overlapping */
    support_setenv("TENSORJIT_PREFETCH", "8");
    jit_gather_nd_sig pf = {.dtype = JIT_F32, .index_type = JIT_I64,
                            .data_shape = {3, {2, 1024, 512}}, .indices_shape = {3, {2, 300, 1}},
                            .batch_dims = 1, .index_policy = JIT_INDEX_ZERO_FILL};
    jit_matches_reference(pf, 0);
    support_setenv("TENSORJIT_PREFETCH", NULL);
}

typedef struct range_job {
    jit_scatter_update_fn sk;
    jit_gather_nd_fn gk;
    const void *data, *indices, *updates;
    void *out;
    int64_t begin, end;
    int status;
} range_job;

static void *run_range_thread(void *arg)
{
    range_job *j = arg;
    j->status = j->gk ? jit_gather_nd_run_range(j->gk, j->data, j->indices, j->out, j->begin, j->end)
                      : jit_scatter_update_run_range(j->sk, j->data, j->indices, j->updates,
                                                     j->out, j->begin, j->end);
    return NULL;
}

/* Ranges of the caller's own threads, in any order, give the kernel's bytes. */
static void split_over_threads(range_job proto, int64_t units)
{
    enum { PARTS = 7 };
    pthread_t t[PARTS];
    range_job jobs[PARTS];
    for (int i = 0; i < PARTS; i++) {
        jobs[i] = proto;
        jobs[i].begin = units * (PARTS - 1 - i) / PARTS; /* last range first */
        jobs[i].end = units * (PARTS - i) / PARTS;
        pthread_create(&t[i], NULL, run_range_thread, &jobs[i]);
    }
    for (int i = 0; i < PARTS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(jobs[i].status, 0);
    }
}

static void test_caller_split_ranges(void **state)
{
    (void)state;
    for (int engine = 0; engine < 2; engine++) {
        /* 4096 tuples of 64 bytes, threads 2: a split kernel under the JIT */
        jit_gather_nd_sig g = {.dtype = JIT_F32, .index_type = JIT_I32, .threads = 2,
                               .engine = engine ? JIT_ENGINE_REFERENCE : JIT_ENGINE_AUTO,
                               .data_shape = {2, {512, 16}}, .indices_shape = {2, {4096, 1}}};
        jit_gather_nd_fn gk = jit_gather_nd_compile(&g);
        assert_int_equal(jit_gather_nd_units(gk), 4096);
        static float gdata[512 * 16], o1[4096 * 16], o2[4096 * 16];
        static int32_t gidx[4096];
        for (int i = 0; i < 512 * 16; i++)
            gdata[i] = (float)i;
        for (int i = 0; i < 4096; i++)
            gidx[i] = (i * 37) % 512;
        assert_int_equal(gk(gdata, gidx, o1), 0);
        assert_int_equal(jit_gather_nd_validate(gk, gidx), 0);
        memset(o2, 0, sizeof o2);
        split_over_threads((range_job){.gk = gk, .data = gdata, .indices = gidx, .out = o2}, 4096);
        assert_memory_equal(o1, o2, sizeof o1);
        gidx[4000] = 512;
        assert_int_equal(jit_gather_nd_validate(gk, gidx), JIT_STATUS_BAD_INDEX);
        assert_string_equal(jit_last_error(),
                            "indices[4000] = [512] is out of range for data dimension 0 of size 512");
        assert_int_equal(jit_gather_nd_run_range(gk, NULL, gidx, o2, 0, 1), JIT_STATUS_BAD_POINTER);

        /* scatter, outer positions as units, in place */
        jit_scatter_update_sig s = {.axis = 1, .dtype = JIT_I32, .index_type = JIT_I64,
                                    .threads = 2,
                                    .engine = g.engine, .data_shape = {2, {600, 64}},
                                    .indices_shape = {1, {3}}, .updates_shape = {2, {600, 3}}};
        jit_scatter_update_fn sk = jit_scatter_update_compile(&s);
        assert_int_equal(jit_scatter_update_units(sk), 600);
        static int32_t sdata[600 * 64], sout[600 * 64], supd[600 * 3], inplace[600 * 64];
        int64_t sidx[3] = {5, 63, 5}; /* a duplicate: the last wins in every range */
        for (int i = 0; i < 600 * 64; i++)
            sdata[i] = inplace[i] = i;
        for (int i = 0; i < 600 * 3; i++)
            supd[i] = -i;
        assert_int_equal(sk(sdata, sidx, supd, sout), 0);
        assert_int_equal(jit_scatter_update_validate(sk, sidx), 0);
        split_over_threads((range_job){.sk = sk, .data = inplace, .indices = sidx,
                                       .updates = supd, .out = inplace}, 600);
        assert_memory_equal(sout, inplace, sizeof sout);
        assert_int_equal(sout[64 * 7 + 5], -(7 * 3 + 2));
        jit_shutdown();
    }
    assert_int_equal(jit_gather_nd_units(NULL), -1);
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_auto_is_jit, teardown),
        cmocka_unit_test_teardown(test_fault_start, teardown),
        cmocka_unit_test_teardown(test_fault_compile, teardown),
        cmocka_unit_test_teardown(test_fault_load, teardown),
        cmocka_unit_test_teardown(test_fault_link, teardown),
        cmocka_unit_test_teardown(test_threads_share_one_kernel, teardown),
        cmocka_unit_test_teardown(test_dumps, teardown),
        cmocka_unit_test_teardown(test_large_kernel_paths, teardown),
        cmocka_unit_test_teardown(test_caller_split_ranges, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
