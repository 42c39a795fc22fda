/* Kernel behaviour with expected values worked out by hand from the
 * specification: index policies, in-place scatter, zero-sized shapes, k=0,
 * 0-D indices, duplicates, every element size, NULL buffers, the cache
 * and the info query. Every test runs on every engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

static jit_engine engine_under_test;

static jit_gather_nd_fn gather(jit_gather_nd_sig s)
{
    s.engine = engine_under_test;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    if (!fn)
        fail_msg("signature refused: %s", jit_last_error());
    return fn;
}

static jit_scatter_update_fn scatter(jit_scatter_update_sig s)
{
    s.engine = engine_under_test;
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    if (!fn)
        fail_msg("signature refused: %s", jit_last_error());
    return fn;
}

/* data [[1,2],[3,4],[5,6]] (3x2), tuples of one index: rows. */
static jit_gather_nd_sig rows_sig(jit_index_policy p, int n)
{
    return (jit_gather_nd_sig){.dtype = JIT_I32, .index_type = JIT_I32, .index_policy = p,
                               .data_shape = {2, {3, 2}}, .indices_shape = {2, {n, 1}}};
}

static const int32_t rows[6] = {1, 2, 3, 4, 5, 6};

static void test_policy_error(void **state)
{
    (void)state;
    int32_t idx[3] = {2, 0, 3}, out[6];
    memset(out, 0x7f, sizeof out);
    int32_t before[6];
    memcpy(before, out, sizeof out);
    assert_int_equal(gather(rows_sig(JIT_INDEX_ERROR, 3))(rows, idx, out), JIT_STATUS_BAD_INDEX);
    assert_memory_equal(out, before, sizeof out);
    assert_string_equal(jit_last_error(),
                        "indices[2] = [3] is out of range for data dimension 0 of size 3");
    idx[2] = -1;
    assert_int_equal(gather(rows_sig(JIT_INDEX_ERROR, 3))(rows, idx, out), JIT_STATUS_BAD_INDEX);
    idx[2] = 1;
    assert_int_equal(gather(rows_sig(JIT_INDEX_ERROR, 3))(rows, idx, out), 0);
    int32_t want[6] = {5, 6, 1, 2, 3, 4};
    assert_memory_equal(out, want, sizeof want);
}

static void test_policy_negative_wraps(void **state)
{
    (void)state;
    int32_t idx[3] = {-1, -3, 2}, out[6];
    assert_int_equal(gather(rows_sig(JIT_INDEX_NEGATIVE_WRAPS, 3))(rows, idx, out), 0);
    int32_t want[6] = {5, 6, 1, 2, 5, 6};
    assert_memory_equal(out, want, sizeof want);
    idx[1] = -4; /* below -dim */
    assert_int_equal(gather(rows_sig(JIT_INDEX_NEGATIVE_WRAPS, 3))(rows, idx, out),
                     JIT_STATUS_BAD_INDEX);
    assert_non_null(strstr(jit_last_error(), "indices[1] = [-4]"));
    assert_non_null(strstr(jit_last_error(), "negative-wraps"));
}

static void test_policy_clamp(void **state)
{
    (void)state;
    int32_t idx[3] = {-5, 7, 1}, out[6];
    assert_int_equal(gather(rows_sig(JIT_INDEX_CLAMP, 3))(rows, idx, out), 0);
    int32_t want[6] = {1, 2, 5, 6, 3, 4};
    assert_memory_equal(out, want, sizeof want);
}

static void test_policy_zero_fill(void **state)
{
    (void)state;
    int32_t idx[3] = {1, 3, -1}, out[6];
    memset(out, 0x7f, sizeof out);
    assert_int_equal(gather(rows_sig(JIT_INDEX_ZERO_FILL, 3))(rows, idx, out), 0);
    int32_t want[6] = {3, 4, 0, 0, 0, 0};
    assert_memory_equal(out, want, sizeof want);
}

/* data 3x5, indices [0,2], axis 1, updates 3x2: the spec's example 2. */
static jit_scatter_update_sig example2(jit_index_policy p)
{
    return (jit_scatter_update_sig){.axis = 1, .dtype = JIT_F32, .index_type = JIT_I64,
                                    .index_policy = p, .data_shape = {2, {3, 5}},
                                    .indices_shape = {1, {2}}, .updates_shape = {2, {3, 2}}};
}

static const float ex2_data[15] = {-1, 1, -1, 3, 4, -1, 6, -1, 8, 9, -1, 11, 1, 13, 14};
static const float ex2_upd[6] = {1, 1, 1, 1, 1, 2};
static const float ex2_want[15] = {1, 1, 1, 3, 4, 1, 6, 1, 8, 9, 1, 11, 2, 13, 14};

static void test_scatter_example2_and_in_place(void **state)
{
    (void)state;
    int64_t idx[2] = {0, 2};
    float out[15], data[15];
    jit_scatter_update_fn fn = scatter(example2(JIT_INDEX_ERROR));
    assert_int_equal(fn(ex2_data, idx, ex2_upd, out), 0);
    assert_memory_equal(out, ex2_want, sizeof out);
    memcpy(data, ex2_data, sizeof data);
    assert_int_equal(fn(data, idx, ex2_upd, data), 0);
    assert_memory_equal(data, ex2_want, sizeof data);
}

static void test_scatter_bad_index_in_place_is_all_or_nothing(void **state)
{
    (void)state;
    int64_t idx[2] = {0, 5};
    float data[15];
    memcpy(data, ex2_data, sizeof data);
    jit_scatter_update_fn fn = scatter(example2(JIT_INDEX_ERROR));
    assert_int_equal(fn(data, idx, ex2_upd, data), JIT_STATUS_BAD_INDEX);
    assert_memory_equal(data, ex2_data, sizeof data);
    assert_string_equal(jit_last_error(),
                        "indices[1] = 5 is out of range for data dimension 1 of size 5");
}

static void test_scatter_policies(void **state)
{
    (void)state;
    float out[15];
    int64_t wrap[2] = {-5, -3};
    assert_int_equal(scatter(example2(JIT_INDEX_NEGATIVE_WRAPS))(ex2_data, wrap, ex2_upd, out), 0);
    assert_memory_equal(out, ex2_want, sizeof out);
    int64_t clamp[2] = {-9, 9}; /* -> 0 and 4 */
    float want_clamp[15] = {1, 1, -1, 3, 1, 1, 6, -1, 8, 1, 1, 11, 1, 13, 2};
    assert_int_equal(scatter(example2(JIT_INDEX_CLAMP))(ex2_data, clamp, ex2_upd, out), 0);
    assert_memory_equal(out, want_clamp, sizeof out);
    int64_t drop[2] = {2, 5}; /* the second update is dropped */
    float want_drop[15] = {-1, 1, 1, 3, 4, -1, 6, 1, 8, 9, -1, 11, 1, 13, 14};
    assert_int_equal(scatter(example2(JIT_INDEX_ZERO_FILL))(ex2_data, drop, ex2_upd, out), 0);
    assert_memory_equal(out, want_drop, sizeof out);
}

static void test_scatter_duplicates_last_wins(void **state)
{
    (void)state;
    /* data 4 rows of 2, indices [[1,1],[3,1]]: row 1 is written three
     * times; the last in row-major order of indices (updates row 3) wins. */
    jit_scatter_update_sig s = {.dtype = JIT_I16, .index_type = JIT_I32,
                                .data_shape = {2, {4, 2}}, .indices_shape = {2, {2, 2}},
                                .updates_shape = {3, {2, 2, 2}}};
    int16_t data[8] = {0}, upd[8] = {10, 11, 20, 21, 30, 31, 40, 41}, out[8];
    int32_t idx[4] = {1, 1, 3, 1};
    assert_int_equal(scatter(s)(data, idx, upd, out), 0);
    int16_t want[8] = {0, 0, 40, 41, 0, 0, 30, 31};
    assert_memory_equal(out, want, sizeof want);
}

static void test_scatter_0d_indices(void **state)
{
    (void)state;
    /* indices is a scalar: updates has rank r-1 */
    jit_scatter_update_sig s = {.axis = 0, .dtype = JIT_U8, .index_type = JIT_U8,
                                .data_shape = {2, {3, 2}}, .indices_shape = {0, {0}},
                                .updates_shape = {1, {2}}};
    uint8_t data[6] = {1, 2, 3, 4, 5, 6}, upd[2] = {9, 8}, out[6], idx = 2;
    assert_int_equal(scatter(s)(data, &idx, upd, out), 0);
    uint8_t want[6] = {1, 2, 3, 4, 9, 8};
    assert_memory_equal(out, want, sizeof want);
    idx = 3;
    assert_int_equal(scatter(s)(data, &idx, upd, out), JIT_STATUS_BAD_INDEX);
    assert_string_equal(jit_last_error(),
                        "indices = 3 is out of range for data dimension 0 of size 3");
}

static void test_gather_k0_copies_whole_batch(void **state)
{
    (void)state;
    /* indices [2,0]: two empty tuples, each copies all of data */
    jit_gather_nd_sig s = {.dtype = JIT_I64, .index_type = JIT_I32, .data_shape = {1, {3}},
                           .indices_shape = {2, {2, 0}}};
    int64_t data[3] = {7, 8, 9}, out[6];
    assert_int_equal(gather(s)(data, NULL, out), 0);
    int64_t want[6] = {7, 8, 9, 7, 8, 9};
    assert_memory_equal(out, want, sizeof want);
    jit_shape shape;
    assert_int_equal(jit_gather_nd_output_shape(&s, &shape), 0);
    assert_int_equal(shape.rank, 2);
    assert_int_equal(shape.dims[0], 2);
    assert_int_equal(shape.dims[1], 3);
}

/* k = 0 with a trillion empty tuples: valid, nothing to check or copy,
 * and it must return at once (found by fuzzing: the reference kernel
 * looped over every tuple). */
static void test_k0_with_huge_tuple_count_returns(void **state)
{
    (void)state;
    jit_gather_nd_sig s = {.dtype = JIT_F32, .index_type = JIT_I32,
                           .data_shape = {2, {0, 3}},
                           .indices_shape = {3, {INT64_C(1) << 40, 1 << 20, 0}}};
    assert_int_equal(gather(s)(NULL, NULL, NULL), 0);
    s.threads = 2;
    assert_int_equal(gather(s)(NULL, NULL, NULL), 0);
}

static void test_zero_sized(void **state)
{
    (void)state;
    /* empty indices: empty output, nothing read or written */
    jit_gather_nd_sig g = {.dtype = JIT_F32, .index_type = JIT_I64, .data_shape = {2, {3, 4}},
                           .indices_shape = {2, {0, 1}}};
    float data[12] = {0};
    assert_int_equal(gather(g)(data, NULL, NULL), 0);
    /* a zero-sized data dim with tuples into it: every index is bad */
    g.data_shape = (jit_shape){2, {0, 4}};
    int64_t idx[1] = {0};
    float out[4];
    assert_int_equal(gather((jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I64,
                                                .data_shape = {2, {0, 4}},
                                                .indices_shape = {2, {1, 1}}})(NULL, idx, out),
                     JIT_STATUS_BAD_INDEX);
    /* zero-sized slices: indices still validated, nothing copied */
    jit_gather_nd_sig z = {.dtype = JIT_F32, .index_type = JIT_I64, .data_shape = {2, {3, 0}},
                           .indices_shape = {2, {2, 1}}};
    int64_t ok[2] = {0, 2}, bad[2] = {0, 3};
    assert_int_equal(gather(z)(NULL, ok, NULL), 0);
    assert_int_equal(gather(z)(NULL, bad, NULL), JIT_STATUS_BAD_INDEX);
    /* scatter with empty indices: out = data */
    jit_scatter_update_sig s = {.dtype = JIT_F32, .index_type = JIT_I32,
                                .data_shape = {2, {2, 2}}, .indices_shape = {1, {0}},
                                .updates_shape = {2, {0, 2}}};
    float sd[4] = {1, 2, 3, 4}, so[4];
    assert_int_equal(scatter(s)(sd, NULL, NULL, so), 0);
    assert_memory_equal(so, sd, sizeof sd);
}

/* A 2x3 gather of one row, for every element size: the row's bytes. */
static void test_every_element_size(void **state)
{
    (void)state;
    const jit_dtype types[] = {JIT_BOOL, JIT_I8, JIT_U8, JIT_I16, JIT_U16, JIT_F16, JIT_BF16,
                               JIT_I32, JIT_U32, JIT_F32, JIT_I64, JIT_U64, JIT_F64};
    const jit_dtype itypes[] = {JIT_I8, JIT_U8, JIT_I16, JIT_U16,
                                JIT_I32, JIT_U32, JIT_I64, JIT_U64};
    unsigned char data[48], out[24];
    for (int i = 0; i < 48; i++)
        data[i] = (unsigned char)(i * 7 + 1);
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t it = 0; it < sizeof itypes / sizeof *itypes; it++) {
            int es = jit_dtype_size(types[t]);
            jit_gather_nd_sig s = {.dtype = types[t], .index_type = itypes[it],
                                   .data_shape = {2, {2, 3}}, .indices_shape = {2, {1, 1}}};
            unsigned char idx[8] = {1}; /* index 1 in every width, little-endian */
            assert_int_equal(gather(s)(data, idx, out), 0);
            assert_memory_equal(out, data + 3 * es, (size_t)(3 * es));
        }
}

/* u64 indices above INT64_MAX are out of range, not negative. */
static void test_u64_indices_above_int64(void **state)
{
    (void)state;
    jit_gather_nd_sig s = rows_sig(JIT_INDEX_NEGATIVE_WRAPS, 1);
    s.index_type = JIT_U64;
    uint64_t idx[1] = {UINT64_MAX}; /* would be -1 if read as signed */
    int32_t out[2];
    assert_int_equal(gather(s)(rows, idx, out), JIT_STATUS_BAD_INDEX);
    assert_non_null(strstr(jit_last_error(), "18446744073709551615"));
    s.index_policy = JIT_INDEX_CLAMP;
    assert_int_equal(gather(s)(rows, idx, out), 0);
    assert_int_equal(out[0], 5);
}

static void test_null_buffers(void **state)
{
    (void)state;
    int32_t idx[1] = {0}, out[2];
    jit_gather_nd_fn fn = gather(rows_sig(JIT_INDEX_ERROR, 1));
    assert_int_equal(fn(NULL, idx, out), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "data"));
    assert_int_equal(fn(rows, idx, NULL), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "out"));
}

static void test_cache_identity_and_info(void **state)
{
    (void)state;
    jit_gather_nd_sig a = rows_sig(JIT_INDEX_ERROR, 2);
    jit_gather_nd_fn f1 = gather(a), f2 = gather(a);
    assert_ptr_equal((void *)(uintptr_t)f1, (void *)(uintptr_t)f2);
    /* dims past the rank do not matter; any other field does */
    a.data_shape.dims[5] = 99;
    assert_ptr_equal((void *)(uintptr_t)gather(a), (void *)(uintptr_t)f1);
    jit_gather_nd_sig b = rows_sig(JIT_INDEX_CLAMP, 2), c = rows_sig(JIT_INDEX_ERROR, 3);
    assert_ptr_not_equal((void *)(uintptr_t)gather(b), (void *)(uintptr_t)f1);
    assert_ptr_not_equal((void *)(uintptr_t)gather(c), (void *)(uintptr_t)f1);
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(f1, &info), 0);
    assert_int_equal(info.out_bytes, 2 * 2 * 4);
    assert_true(info.compile_ms >= 0);
    if (engine_under_test == JIT_ENGINE_REFERENCE) {
        assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
        assert_string_equal(info.why, "the signature asks for the reference engine");
    }
    /* a gather kernel is not a scatter kernel */
    assert_int_equal(jit_scatter_update_info((jit_scatter_update_fn)(uintptr_t)f1, &info), -1);
    /* after shutdown the pointer is unknown, and the library works again */
    jit_shutdown();
    assert_int_equal(jit_gather_nd_info(f1, &info), -1);
    int32_t idx[2] = {2, 0}, out[4];
    assert_int_equal(gather(a)(rows, idx, out), 0);
    assert_int_equal(out[0], 5);
}

static void test_env_forces_reference(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_JIT", "off");
    jit_gather_nd_sig s = rows_sig(JIT_INDEX_ERROR, 4);
    s.engine = JIT_ENGINE_AUTO;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    support_unsetenv("TENSORJIT_JIT");
    jit_kernel_info info;
    assert_non_null(fn);
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
    assert_string_equal(info.why, "TENSORJIT_JIT=off");
    /* the other spellings of off (a user's FALSE left the JIT on unsaid) */
    const char *offs[] = {"OFF", "false", "No"};
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        support_setenv("TENSORJIT_JIT", offs[i]);
        fn = jit_gather_nd_compile(&s);
        assert_int_equal(jit_gather_nd_info(fn, &info), 0);
        assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
        support_unsetenv("TENSORJIT_JIT");
    }
}

/* Every reduction and use_init_val is a kernel of its own (a key that
 * left them out served the first one compiled for all), and each computes
 * its own result: the example of SPEC section 5 worked by hand. */
static void test_reductions_are_kernels_of_their_own(void **state)
{
    (void)state;
    static const jit_reduction reds[] = {JIT_REDUCTION_NONE, JIT_REDUCTION_SUM,
                                         JIT_REDUCTION_PROD, JIT_REDUCTION_MIN,
                                         JIT_REDUCTION_MAX, JIT_REDUCTION_MEAN};
    /* data [1, 2, 3, 4]; updates 10, 20, 30 to positions 1, 1, 3 */
    static const int32_t want[][2][4] = {
        {{1, 20, 3, 30}, {1, 20, 3, 30}},   /* none: the last wins either way */
        {{1, 32, 3, 34}, {1, 30, 3, 30}},   /* sum; without data: 10+20, 30 */
        {{1, 400, 3, 120}, {1, 200, 3, 30}}, /* prod */
        {{1, 2, 3, 4}, {1, 10, 3, 30}},     /* min */
        {{1, 20, 3, 30}, {1, 20, 3, 30}},   /* max */
        {{1, 10, 3, 17}, {1, 15, 3, 30}},   /* mean: floor(32/3), floor(34/2) */
    };
    const int32_t data[4] = {1, 2, 3, 4}, upd[3] = {10, 20, 30};
    const int64_t idx[3] = {1, 1, 3};
    jit_kernel seen[12] = {0};
    for (int r = 0; r < 6; r++)
        for (int ni = 0; ni < 2; ni++) {
            jit_sig s = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .opset = 12, .dtype = JIT_I32,
                         .index_type = JIT_I64, .engine = engine_under_test,
                         .reduction = reds[r], .no_init_val = ni,
                         .data_shape = {1, {4}}, .indices_shape = {1, {3}},
                         .updates_shape = {1, {3}}};
            jit_kernel k = jit_compile(&s);
            assert_non_null(k);
            int32_t out[4];
            assert_int_equal(jit_call(k, data, idx, upd, out), 0);
            assert_memory_equal(out, want[r][ni], sizeof out);
            seen[2 * r + ni] = k;
            for (int j = 0; j < 2 * r + ni; j++) /* none ignores use_init_val */
                assert_true(seen[j] != k || (r == 0 && j == 0));
        }
}

static int use_auto(void **state)
{
    (void)state;
    engine_under_test = JIT_ENGINE_AUTO;
    return 0;
}

static int use_reference(void **state)
{
    (void)state;
    engine_under_test = JIT_ENGINE_REFERENCE;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    return 0;
}

#define BOTH_ENGINES(t) cmocka_unit_test_setup_teardown(t, use_auto, teardown), \
                        cmocka_unit_test_setup_teardown(t, use_reference, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH_ENGINES(test_policy_error),
        BOTH_ENGINES(test_policy_negative_wraps),
        BOTH_ENGINES(test_policy_clamp),
        BOTH_ENGINES(test_policy_zero_fill),
        BOTH_ENGINES(test_scatter_example2_and_in_place),
        BOTH_ENGINES(test_scatter_bad_index_in_place_is_all_or_nothing),
        BOTH_ENGINES(test_scatter_policies),
        BOTH_ENGINES(test_scatter_duplicates_last_wins),
        BOTH_ENGINES(test_scatter_0d_indices),
        BOTH_ENGINES(test_gather_k0_copies_whole_batch),
        BOTH_ENGINES(test_zero_sized),
        BOTH_ENGINES(test_k0_with_huge_tuple_count_returns),
        BOTH_ENGINES(test_every_element_size),
        BOTH_ENGINES(test_u64_indices_above_int64),
        BOTH_ENGINES(test_null_buffers),
        BOTH_ENGINES(test_cache_identity_and_info),
        BOTH_ENGINES(test_reductions_are_kernels_of_their_own),
        cmocka_unit_test_teardown(test_env_forces_reference, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
