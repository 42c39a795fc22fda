/* torch's index dims (jit_sig.torch_dims, JIT_ATTR_TORCH_DIMS): GatherElements
 * with indices smaller than data in the dims but the axis (torch.gather),
 * ScatterElementsUpdate with updates larger than indices (torch.scatter,
 * scatter_add, scatter_reduce). The rules and their refusals, the key, the
 * explanation, and random GatherElements signatures of the flavour on the
 * JIT, the reference kernel, split over threads and as dynamic kernels,
 * each against tests/oracle.c (written from the formula, which reads data
 * at its own strides whatever the indices' shape). The scatter's results,
 * with every reduction, are test_reductions' (its torch_dims run).
 * TENSORJIT_TORCH_N sets the count of random signatures (default 800). */
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

#define CANARY 0xa5

static jit_sig gather_elements_torch(void)
{
    /* data [4, 5, 3], axis 1, indices [2, 7, 3]: smaller along dim 0 */
    return (jit_sig){.op = JIT_OP_GATHER_ELEMENTS, .axis = 1, .dtype = JIT_F32,
                     .index_type = JIT_I64, .data_shape = {3, {4, 5, 3}},
                     .indices_shape = {3, {2, 7, 3}}, .torch_dims = 1};
}

static jit_sig scatter_elements_torch(void)
{
    /* data [4, 5], axis 0, indices [3, 2], updates [3, 4]: larger along dim 1 */
    return (jit_sig){.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .axis = 0, .dtype = JIT_F32,
                     .index_type = JIT_I32, .data_shape = {2, {4, 5}},
                     .indices_shape = {2, {3, 2}}, .updates_shape = {2, {3, 4}},
                     .reduction = JIT_REDUCTION_SUM, .torch_dims = 1};
}

static void refuse(jit_sig s, const char *msg)
{
    if (jit_compile(&s))
        fail_msg("accepted; expected: %s", msg);
    assert_string_equal(jit_last_error(), msg);
    jit_shape out;
    assert_int_equal(jit_output_shape(&s, &out), -1);
    assert_string_equal(jit_last_error(), msg);
}

static jit_kernel compile(jit_sig s)
{
    jit_kernel k = jit_compile(&s);
    if (!k)
        fail_msg("refused: %s", jit_last_error());
    return k;
}

static void test_ops_that_take_it(void **state)
{
    (void)state;
    for (int op = JIT_OP_NONE + 1; op < JIT_OP_COUNT; op++) {
        jit_op_info info;
        assert_int_equal(jit_op_describe((jit_op)op, &info), 0);
        int takes = op == JIT_OP_GATHER_ELEMENTS || op == JIT_OP_SCATTER_ELEMENTS_UPDATE;
        assert_int_equal((info.attrs & JIT_ATTR_TORCH_DIMS) != 0, takes);
    }
}

static void test_gather_elements_rules(void **state)
{
    (void)state;
    jit_sig s = gather_elements_torch();
    compile(s);
    jit_shape out;
    assert_int_equal(jit_output_shape(&s, &out), 0);
    assert_int_equal(out.rank, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(out.dims[i], s.indices_shape.dims[i]);
    s.torch_dims = 0; /* OpenVINO's rule without it */
    refuse(s, "indices.shape[0]=2 must equal data.shape[0]=4 (every dimension but axis 1); "
              "torch.gather's rule, no larger, is the signature's torch_dims (CLI: --torch-dims)");
    s = gather_elements_torch(), s.indices_shape.dims[2] = 4;
    refuse(s, "indices.shape[2]=4 must not exceed data.shape[2]=3 (every dimension but axis "
              "1, torch_dims)");
    s = gather_elements_torch(), s.indices_shape.dims[0] = 0; /* empty: a no-op */
    compile(s);
    s = gather_elements_torch(), s.indices_shape.rank = 2;
    refuse(s, "rank(indices)=2 must equal rank(data)=3");
}

static void test_scatter_elements_rules(void **state)
{
    (void)state;
    jit_sig s = scatter_elements_torch();
    compile(s);
    s.torch_dims = 0; /* ONNX's and OpenVINO's rule without it */
    refuse(s, "updates shape [3,4] must equal indices shape [3,2]");
    s = scatter_elements_torch(), s.updates_shape.dims[0] = 2;
    refuse(s, "updates.shape[0]=2 must not be smaller than indices.shape[0]=3 (torch_dims: an "
              "update is read at each index's position)");
    s = scatter_elements_torch(), s.updates_shape.rank = 3, s.updates_shape.dims[2] = 1;
    refuse(s, "rank(updates)=3 must equal rank(indices)=2");
    s = scatter_elements_torch(), s.indices_shape.dims[1] = 6, s.updates_shape.dims[1] = 6;
    refuse(s, "indices.shape[1]=6 must not exceed data.shape[1]=5 (every dimension but axis "
              "0)");
    /* along the axis indices and updates may exceed data, as torch's may */
    s = scatter_elements_torch(), s.indices_shape.dims[0] = 9, s.updates_shape.dims[0] = 9;
    compile(s);
}

/* The flag is part of the key where the op takes it, and ignored (as every
 * attribute an op lacks) where it does not. */
static void test_key(void **state)
{
    (void)state;
    jit_sig a = gather_elements_torch(), b;
    a.indices_shape.dims[0] = 4; /* valid both ways */
    b = a, b.torch_dims = 0;
    assert_ptr_not_equal(compile(a), compile(b));
    b = a, b.torch_dims = 7; /* any non-zero means 1 */
    assert_ptr_equal(compile(a), compile(b));
    jit_gather_elements_sig typed = {.axis = 1, .dtype = JIT_F32, .index_type = JIT_I64,
                                     .data_shape = a.data_shape,
                                     .indices_shape = a.indices_shape, .torch_dims = 1};
    assert_ptr_equal((jit_kernel)jit_gather_elements_compile(&typed), compile(a));

    jit_sig s = scatter_elements_torch();
    jit_scatter_elements_update_sig st = {.axis = 0, .dtype = JIT_F32, .index_type = JIT_I32,
                                          .data_shape = s.data_shape,
                                          .indices_shape = s.indices_shape,
                                          .updates_shape = s.updates_shape,
                                          .reduction = JIT_REDUCTION_SUM, .torch_dims = 1};
    assert_ptr_equal((jit_kernel)jit_scatter_elements_update_compile(&st), compile(s));

    jit_sig g = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = {2, {4, 3}}, .indices_shape = {1, {2}}};
    b = g, b.torch_dims = 1;
    assert_ptr_equal(compile(g), compile(b));
}

static void test_explain_says_so(void **state)
{
    (void)state;
    jit_sig s = gather_elements_torch();
    char *text = jit_explain(&s);
    assert_non_null(text);
    if (!strstr(text, "torch_dims"))
        fail_msg("no torch_dims in:\n%s", text);
    jit_free(text);
    s.indices_shape.dims[0] = 4, s.torch_dims = 0;
    text = jit_explain(&s);
    assert_non_null(text);
    assert_null(strstr(text, "torch_dims"));
    jit_free(text);
    s = scatter_elements_torch();
    text = jit_explain(&s);
    assert_non_null(text);
    if (!strstr(text, "torch_dims"))
        fail_msg("no torch_dims in:\n%s", text);
    jit_free(text);
}

/* A dynamic kernel of the flavour takes indices smaller than data and
 * refuses larger ones (nothing written), naming the input, dim and value;
 * its results are the static kernels'. */
static void test_dynamic_refuses_larger_indices(void **state)
{
    (void)state;
    jit_sig s = gather_elements_torch();
    for (int i = 0; i < 3; i++)
        s.data_shape.dims[i] = s.indices_shape.dims[i] = JIT_DIM_DYNAMIC;
    jit_dynamic_fn f = (jit_dynamic_fn)compile(s);
    float data[4 * 5 * 3], out[2 * 7 * 3 + 1], want[2 * 7 * 3];
    int64_t idx[2 * 7 * 3];
    for (int i = 0; i < 60; i++)
        data[i] = (float)i * 0.5f;
    for (int i = 0; i < 42; i++)
        idx[i] = (i * 7) % 5;
    jit_sig st = gather_elements_torch();
    assert_int_equal(oracle_gather_elements(&st, data, idx, want), JIT_OK);
    int64_t dims[6] = {4, 5, 3, 2, 7, 3};
    memset(out, CANARY, sizeof out);
    assert_int_equal(f(data, idx, NULL, out, dims), JIT_OK);
    assert_memory_equal(out, want, sizeof want);
    int64_t bad[6] = {4, 5, 3, 2, 7, 4}; /* indices.shape[2] = 4 > data's 3 */
    memset(out, CANARY, sizeof out);
    assert_int_equal(f(data, idx, NULL, out, bad), JIT_STATUS_BAD_SHAPE);
    if (!strstr(jit_last_error(), "indices.shape[2]=4 must not exceed data.shape[2]=3"))
        fail_msg("message: %s", jit_last_error());
    for (size_t b = 0; b < sizeof out; b++)
        assert_int_equal(((unsigned char *)out)[b], CANARY);

    jit_sig u = scatter_elements_torch();
    for (int i = 0; i < 2; i++)
        u.data_shape.dims[i] = u.indices_shape.dims[i] = u.updates_shape.dims[i] =
            JIT_DIM_DYNAMIC;
    jit_dynamic_fn g = (jit_dynamic_fn)compile(u);
    int64_t small_upd[6] = {4, 5, 3, 2, 2, 2}; /* updates.shape[0] = 2 < indices' 3 */
    float upd[12] = {0}, dst[20];
    int32_t ix[6] = {0};
    memset(dst, CANARY, sizeof dst);
    assert_int_equal(g(dst, ix, upd, dst, small_upd), JIT_STATUS_BAD_SHAPE);
    if (!strstr(jit_last_error(), "updates.shape[0]=2 must not be smaller than "
                                  "indices.shape[0]=3"))
        fail_msg("message: %s", jit_last_error());
    for (size_t b = 0; b < sizeof dst; b++)
        assert_int_equal(((unsigned char *)dst)[b], CANARY);
}

/* ---- random GatherElements of the flavour against the oracle ---- */

static const jit_dtype dtypes[] = {JIT_U8, JIT_F16, JIT_F32, JIT_F64};

static int64_t rand_dim(uint64_t *rs, int64_t max)
{
    return support_rand_range(rs, 0, 15) == 0 ? 0 : support_rand_range(rs, 1, max);
}

static void rand_sig(uint64_t *rs, jit_sig *s)
{
    memset(s, 0, sizeof *s);
    s->op = JIT_OP_GATHER_ELEMENTS;
    s->torch_dims = 1;
    s->dtype = dtypes[support_rand_range(rs, 0, 3)];
    s->index_type = support_rand_range(rs, 0, 1) ? JIT_I32 : JIT_I64;
    s->index_policy = (jit_index_policy)support_rand_range(rs, 0, JIT_INDEX_POLICY_COUNT - 1);
    s->threads = (int)support_rand_range(rs, 0, 3);
    int r = (int)support_rand_range(rs, 1, 4), a = (int)support_rand_range(rs, 0, r - 1);
    s->axis = support_rand_range(rs, 0, 1) ? a : a - r;
    s->data_shape.rank = s->indices_shape.rank = r;
    for (int i = 0; i < r; i++) {
        int64_t d = rand_dim(rs, 6);
        s->data_shape.dims[i] = d;
        /* smaller than data's but along the axis, equal at times */
        s->indices_shape.dims[i] = i == a                             ? rand_dim(rs, 6)
                                   : support_rand_range(rs, 0, 2) == 0 ? d
                                                                      : support_rand_range(rs, 0, d);
    }
}

static void fill(uint64_t *rs, void *buf, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        ((unsigned char *)buf)[i] = (unsigned char)support_rand(rs);
}

static void rand_indices(uint64_t *rs, const jit_sig *s, void *idx, int64_t n)
{
    int r = s->data_shape.rank;
    int64_t dim = s->data_shape.dims[s->axis < 0 ? s->axis + r : s->axis];
    int wild = support_rand_range(rs, 0, 9) == 0; /* bad and negative ones too */
    for (int64_t i = 0; i < n; i++) {
        int64_t v = wild || dim == 0 ? support_rand_range(rs, -dim - 2, dim + 1)
                                     : support_rand_range(rs, 0, dim - 1);
        support_store_index(s->index_type, idx, i, v);
    }
}

static void print_sig(const jit_sig *s, long n, const char *what)
{
    fprintf(stderr, "#%ld %s: GatherElements axis %lld %s %s policy %s threads %d data [", n,
            what, (long long)s->axis, jit_dtype_name(s->dtype), jit_dtype_name(s->index_type),
            jit_index_policy_name(s->index_policy), s->threads);
    for (int i = 0; i < s->data_shape.rank; i++)
        fprintf(stderr, "%s%lld", i ? "," : "", (long long)s->data_shape.dims[i]);
    fprintf(stderr, "] indices [");
    for (int i = 0; i < s->indices_shape.rank; i++)
        fprintf(stderr, "%s%lld", i ? "," : "", (long long)s->indices_shape.dims[i]);
    fprintf(stderr, "]\n");
}

/* The status and every byte of one way of running s (and the canary past
 * the output) against the oracle's; 1 on a difference. */
static int compare(const jit_sig *s, long n, const char *what, int rc, int want_rc,
                   const unsigned char *got, const unsigned char *want, int64_t ob)
{
    const char *why = NULL;
    if (rc != want_rc)
        why = "status differs from the oracle's";
    else if (got[ob] != CANARY)
        why = "wrote past the output";
    else if (rc == JIT_OK && memcmp(got, want, (size_t)ob) != 0)
        why = "output differs from the oracle's";
    for (int64_t b = 0; !why && rc != JIT_OK && b < ob; b++)
        if (got[b] != CANARY)
            why = "a refused call wrote to out";
    if (!why)
        return 0;
    print_sig(s, n, what);
    fprintf(stderr, "  %s (status %d, oracle %d)\n", why, rc, want_rc);
    return 1;
}

/* The dims of one call of the family with every dim dynamic. */
static jit_sig all_dynamic(const jit_sig *s, int64_t *dims)
{
    jit_sig d = *s;
    int n = 0;
    for (int i = 0; i < s->data_shape.rank; i++) {
        dims[n++] = s->data_shape.dims[i];
        d.data_shape.dims[i] = JIT_DIM_DYNAMIC;
    }
    for (int i = 0; i < s->indices_shape.rank; i++) {
        dims[n++] = s->indices_shape.dims[i];
        d.indices_shape.dims[i] = JIT_DIM_DYNAMIC;
    }
    return d;
}

static long served_jit, served_dyn_jit;

static int one(uint64_t *rs, long n)
{
    jit_sig s;
    rand_sig(rs, &s);
    int es = jit_dtype_size(s.dtype), is = jit_dtype_size(s.index_type);
    int64_t nd = oracle_elems(&s.data_shape), ni = oracle_elems(&s.indices_shape);
    int64_t ob = ni * es;
    unsigned char *data = malloc((size_t)(nd * es + 1)), *idx = malloc((size_t)(ni * is + 1));
    unsigned char *want = malloc((size_t)ob + 1), *got = malloc((size_t)ob + 1);
    assert_true(data && idx && want && got);
    fill(rs, data, nd * es);
    rand_indices(rs, &s, idx, ni);
    memset(want, CANARY, (size_t)ob + 1);
    int want_rc = oracle_gather_elements(&s, data, idx, want);
    int fails = 0;
    static const jit_engine engines[] = {JIT_ENGINE_AUTO, JIT_ENGINE_REFERENCE};
    for (int e = 0; e < 2 && !fails; e++) {
        jit_sig v = s;
        v.engine = engines[e];
        jit_kernel k = jit_compile(&v);
        if (!k) {
            print_sig(&v, n, "compile");
            fprintf(stderr, "  refused: %s\n", jit_last_error());
            return 1;
        }
        jit_kernel_info info;
        assert_int_equal(jit_info(k, &info), 0);
        if (e == 0) {
            support_expect_jit(&info, "GatherElements, torch_dims");
            served_jit += info.engine == JIT_ENGINE_JIT;
        }
        memset(got, CANARY, (size_t)ob + 1);
        int rc = ((jit_gather_elements_fn)k)(data, idx, got);
        fails = compare(&v, n, e ? "reference" : "auto", rc, want_rc, got, want, ob);
        int64_t dims[2 * JIT_MAX_RANK];
        jit_sig d = all_dynamic(&v, dims);
        jit_kernel dk = jit_compile(&d);
        if (!fails && !dk) {
            print_sig(&v, n, "dynamic compile");
            fprintf(stderr, "  refused: %s\n", jit_last_error());
            fails = 1;
        }
        if (fails)
            break;
        assert_int_equal(jit_info(dk, &info), 0);
        served_dyn_jit += e == 0 && info.engine == JIT_ENGINE_JIT;
        memset(got, CANARY, (size_t)ob + 1);
        rc = ((jit_dynamic_fn)dk)(data, idx, NULL, got, dims);
        fails = compare(&v, n, e ? "reference, dynamic" : "auto, dynamic", rc, want_rc, got,
                        want, ob);
    }
    free(data);
    free(idx);
    free(want);
    free(got);
    return fails;
}

static void run_random(const char *what, uint64_t seed)
{
    long count = support_env_long("TENSORJIT_TORCH_N", 250);
    uint64_t rs = seed;
    int fails = 0;
    long n = 0;
    served_jit = served_dyn_jit = 0;
    for (; n < count && fails < 10; n++)
        fails += one(&rs, n);
    printf("torch_dims, %s (seed %llu): %ld GatherElements signatures, %d failed; JIT-served "
           "%ld static, %ld dynamic\n",
           what, (unsigned long long)seed, n, fails, served_jit, served_dyn_jit);
    jit_shutdown();
    assert_int_equal(fails, 0);
}

static void test_random_gather_elements(void **state)
{
    (void)state;
    run_random("JIT, reference and dynamic vs oracle",
               (uint64_t)support_env_long("TENSORJIT_TORCH_SEED", 20260421));
}

/* The same with every kernel of more than one unit split over the pool. */
static void test_random_gather_elements_split(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    run_random("split over threads",
               (uint64_t)support_env_long("TENSORJIT_TORCH_SEED", 20260421) ^ 0x5eed);
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_that_take_it),
        cmocka_unit_test(test_gather_elements_rules),
        cmocka_unit_test(test_scatter_elements_rules),
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_explain_says_so),
        cmocka_unit_test(test_dynamic_refuses_larger_indices),
        cmocka_unit_test(test_random_gather_elements),
        cmocka_unit_test(test_random_gather_elements_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
