/* Seeded random differential test: random valid signatures (ranks 1..6,
 * every batch_dims and k, every element size, every index type and policy,
 * both ops, zero-sized dims, duplicates and bad indices) run through the
 * library and through the independent oracle; every output byte and every
 * status must agree. TENSORJIT_DIFF_N sets the count (default 3000),
 * TENSORJIT_DIFF_SEED the seed. With engine AUTO the JIT must serve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

static const jit_dtype dtypes[] = {JIT_U8, JIT_F16, JIT_F32, JIT_F64};
static const jit_dtype itypes[] = {JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                   JIT_I32, JIT_U32, JIT_I64, JIT_U64};

static int64_t rand_dim(uint64_t *rs)
{
    /* mostly small, sometimes zero */
    return support_rand_range(rs, 0, 19) == 0 ? 0 : support_rand_range(rs, 1, 4);
}

static void fill_random(uint64_t *rs, void *buf, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        ((unsigned char *)buf)[i] = (unsigned char)support_rand(rs);
}

static void store_index(jit_dtype t, void *p, int64_t i, int64_t v)
{
    switch (jit_dtype_size(t)) {
    case 1: ((int8_t *)p)[i] = (int8_t)v; break;
    case 2: ((int16_t *)p)[i] = (int16_t)v; break;
    case 4: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
    }
}

/* Mostly valid indices for dims, with negatives, out-of-range values and
 * extremes mixed in at the given rate (per mille). */
static int64_t rand_index(uint64_t *rs, int64_t dim, int bad_rate)
{
    if (support_rand_range(rs, 0, 999) >= bad_rate)
        return dim ? support_rand_range(rs, 0, dim - 1) : 0;
    switch (support_rand_range(rs, 0, 4)) {
    case 0: return -1 - support_rand_range(rs, 0, dim);
    case 1: return dim + support_rand_range(rs, 0, 3);
    case 2: return -dim;
    case 3: return 127;
    default: return dim ? -support_rand_range(rs, 1, dim) : -1;
    }
}

static void random_shape(uint64_t *rs, jit_shape *s, int rank)
{
    s->rank = rank;
    for (int i = 0; i < rank; i++)
        s->dims[i] = rand_dim(rs);
}

static int compare(const char *what, int64_t n, int rc_lib, int rc_ref, const void *a,
                   const void *b, int64_t bytes)
{
    if (rc_lib != rc_ref) {
        fprintf(stderr, "%s #%lld: status %d, oracle %d (%s)\n", what, (long long)n, rc_lib,
                rc_ref, jit_last_error());
        return 1;
    }
    if (rc_lib == 0 && bytes && memcmp(a, b, (size_t)bytes) != 0) {
        fprintf(stderr, "%s #%lld: output bytes differ from the oracle\n", what, (long long)n);
        return 1;
    }
    return 0;
}

static int one_gather(uint64_t *rs, int64_t n, jit_engine eng)
{
    jit_gather_nd_sig s = {0};
    int r = (int)support_rand_range(rs, 1, 6), q = (int)support_rand_range(rs, 1, 5);
    s.opset = support_rand_range(rs, 0, 1) ? 8 : 5;
    s.batch_dims = (int)support_rand_range(rs, 0, (r < q ? r : q) - 1);
    s.dtype = dtypes[support_rand_range(rs, 0, 3)];
    s.index_type = itypes[support_rand_range(rs, 0, 7)];
    s.index_policy = (jit_index_policy)support_rand_range(rs, 0, 3);
    s.engine = eng;
    s.threads = (int)support_rand_range(rs, -1, 3);
    random_shape(rs, &s.data_shape, r);
    random_shape(rs, &s.indices_shape, q);
    for (int i = 0; i < s.batch_dims; i++)
        s.indices_shape.dims[i] = s.data_shape.dims[i];
    s.indices_shape.dims[q - 1] = support_rand_range(rs, 0, r - s.batch_dims);
    int unsigned_idx = s.index_type == JIT_U8 || s.index_type == JIT_U16 ||
                       s.index_type == JIT_U32 || s.index_type == JIT_U64;
    int64_t ni = oracle_elems(&s.indices_shape), k = s.indices_shape.dims[q - 1];
    int64_t nd = oracle_elems(&s.data_shape), es = jit_dtype_size(s.dtype);
    int64_t is = jit_dtype_size(s.index_type);
    void *data = malloc((size_t)(nd * es + 1)), *idx = malloc((size_t)(ni * is + 1));
    fill_random(rs, data, nd * es);
    int bad_rate = support_rand_range(rs, 0, 3) == 0 ? 300 : 5;
    for (int64_t i = 0; i < ni; i++) {
        int64_t v = rand_index(rs, s.data_shape.dims[s.batch_dims + i % (k ? k : 1)], bad_rate);
        store_index(s.index_type, idx, i, unsigned_idx && v < 0 ? v & 0x7f : v);
    }
    jit_shape os;
    int fails = 0;
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    if (!fn || jit_gather_nd_output_shape(&s, &os) != 0) {
        fprintf(stderr, "gather #%lld refused: %s\n", (long long)n, jit_last_error());
        fails = 1;
    } else {
        jit_kernel_info info;
        assert_int_equal(jit_gather_nd_info(fn, &info), 0);
        if (eng == JIT_ENGINE_AUTO)
            support_expect_jit(&info, "gather");
        int64_t ob = oracle_elems(&os) * es;
        unsigned char *o1 = malloc((size_t)ob + 1), *o2 = malloc((size_t)ob + 1);
        memset(o1, 0xee, (size_t)ob + 1);
        memset(o2, 0xee, (size_t)ob + 1);
        int rc1 = fn(data, idx, o1), rc2 = oracle_gather_nd(&s, data, idx, o2);
        fails = compare("gather", n, rc1, rc2, o1, o2, ob + 1);
        free(o1);
        free(o2);
    }
    free(data);
    free(idx);
    return fails;
}

static int one_scatter(uint64_t *rs, int64_t n, jit_engine eng)
{
    jit_scatter_update_sig s = {0};
    int r = (int)support_rand_range(rs, 1, 5), q = (int)support_rand_range(rs, 0, 3);
    int a = (int)support_rand_range(rs, 0, r - 1);
    s.axis = support_rand_range(rs, 0, 1) ? a : a - r;
    s.dtype = dtypes[support_rand_range(rs, 0, 3)];
    s.index_type = itypes[support_rand_range(rs, 0, 7)];
    s.index_policy = (jit_index_policy)support_rand_range(rs, 0, 3);
    s.engine = eng;
    s.threads = (int)support_rand_range(rs, -1, 3);
    random_shape(rs, &s.data_shape, r);
    random_shape(rs, &s.indices_shape, q);
    s.updates_shape.rank = r - 1 + q;
    int u = 0;
    for (int i = 0; i < a; i++)
        s.updates_shape.dims[u++] = s.data_shape.dims[i];
    for (int i = 0; i < q; i++)
        s.updates_shape.dims[u++] = s.indices_shape.dims[i];
    for (int i = a + 1; i < r; i++)
        s.updates_shape.dims[u++] = s.data_shape.dims[i];
    int unsigned_idx = s.index_type == JIT_U8 || s.index_type == JIT_U16 ||
                       s.index_type == JIT_U32 || s.index_type == JIT_U64;
    int64_t es = jit_dtype_size(s.dtype), is = jit_dtype_size(s.index_type);
    int64_t nd = oracle_elems(&s.data_shape), ni = oracle_elems(&s.indices_shape);
    int64_t nu = oracle_elems(&s.updates_shape);
    void *data = malloc((size_t)(nd * es + 1)), *idx = malloc((size_t)(ni * is + 1));
    void *upd = malloc((size_t)(nu * es + 1));
    fill_random(rs, data, nd * es);
    fill_random(rs, upd, nu * es);
    int bad_rate = support_rand_range(rs, 0, 3) == 0 ? 300 : 5;
    for (int64_t i = 0; i < ni; i++) {
        int64_t v = rand_index(rs, s.data_shape.dims[a], bad_rate);
        store_index(s.index_type, idx, i, unsigned_idx && v < 0 ? v & 0x7f : v);
    }
    int fails = 0;
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    if (!fn) {
        fprintf(stderr, "scatter #%lld refused: %s\n", (long long)n, jit_last_error());
        fails = 1;
    } else {
        jit_kernel_info info;
        assert_int_equal(jit_scatter_update_info(fn, &info), 0);
        if (eng == JIT_ENGINE_AUTO)
            support_expect_jit(&info, "scatter");
        int64_t ob = nd * es;
        unsigned char *o1 = malloc((size_t)ob + 1), *o2 = malloc((size_t)ob + 1);
        memset(o1, 0xee, (size_t)ob + 1);
        memset(o2, 0xee, (size_t)ob + 1);
        int rc1 = fn(data, idx, upd, o1), rc2 = oracle_scatter_update(&s, data, idx, upd, o2);
        fails = compare("scatter", n, rc1, rc2, o1, o2, ob + 1);
        /* in place: the same result in data itself, or data untouched */
        if (!fails) {
            memcpy(o1, data, (size_t)ob);
            int rc3 = fn(o1, idx, upd, o1);
            fails = compare("scatter in place", n, rc3, rc2, o1, rc2 ? data : o2, ob);
        }
        free(o1);
        free(o2);
    }
    free(data);
    free(idx);
    free(upd);
    return fails;
}

static void run(jit_engine eng)
{
    long count = support_env_long("TENSORJIT_DIFF_N", 3000);
    uint64_t seed = (uint64_t)support_env_long("TENSORJIT_DIFF_SEED", 20261122);
    uint64_t rs = seed;
    int fails = 0;
    for (long n = 0; n < count && fails < 10; n++)
        fails += support_rand(&rs) & 1 ? one_gather(&rs, n, eng) : one_scatter(&rs, n, eng);
    printf("differential (%s engine, seed %llu): %ld signatures, %d failed\n",
           jit_engine_name(eng), (unsigned long long)seed, count, fails);
    jit_shutdown();
    assert_int_equal(fails, 0);
}

static void test_auto_vs_oracle(void **state)
{
    (void)state;
    run(JIT_ENGINE_AUTO);
}

static void test_reference_vs_oracle(void **state)
{
    (void)state;
    run(JIT_ENGINE_REFERENCE);
}

/* Every kernel with more than one unit whose signature asks for threads
 * split into check and range functions and run over the thread pool. */
static void test_split_kernels_vs_oracle(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    run(JIT_ENGINE_AUTO);
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_vs_oracle),
        cmocka_unit_test(test_reference_vs_oracle),
        cmocka_unit_test(test_split_kernels_vs_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
