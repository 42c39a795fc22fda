/* Every vector of tests/cases (a copy of ../shared/cases) through the public API: each valid case
 * as recorded, then again for every other element type and index type that
 * holds its values exactly, through both engines; every invalid entry is
 * refused (signature) or makes the kernel fail without writing (index). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

static const jit_dtype all_dtypes[] = {JIT_BOOL, JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                       JIT_F16,  JIT_BF16, JIT_I32, JIT_U32, JIT_F32,
                                       JIT_I64,  JIT_U64, JIT_F64};
static const jit_dtype index_dtypes[] = {JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                         JIT_I32, JIT_U32, JIT_I64, JIT_U64};
static const jit_engine engines[] = {JIT_ENGINE_AUTO, JIT_ENGINE_REFERENCE};

static int runs;

static const char *case_name(const cJSON *c)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "source");
    return cJSON_IsString(s) ? s->valuestring : "?";
}

static void expect_shape(const jit_shape *got, const cJSON *want, const char *name)
{
    jit_shape w = support_shape(want);
    if (got->rank != w.rank || memcmp(got->dims, w.dims, sizeof(int64_t) * (size_t)w.rank)) {
        fail_msg("%s: output shape rank %d differs from expected rank %d", name, got->rank,
                 w.rank);
    }
}

/* One valid gather case with the given types and engine; skipped (0) when
 * the values are not exact in those types. */
static int run_gather(const cJSON *c, jit_dtype dt, jit_dtype it, jit_engine eng, int exact)
{
    jit_gather_nd_sig sig = support_gather_sig(c);
    sig.dtype = dt;
    sig.index_type = it;
    sig.engine = eng;
    int64_t nd, ni, ne;
    void *data = support_values(cJSON_GetObjectItemCaseSensitive(c, "data"), dt, &nd, exact);
    void *idx = support_values(cJSON_GetObjectItemCaseSensitive(c, "indices"), it, &ni, exact);
    void *want = support_values(cJSON_GetObjectItemCaseSensitive(c, "expected"), dt, &ne, exact);
    int ran = 0;
    if (data && idx && want) {
        const char *name = case_name(c);
        jit_gather_nd_fn fn = jit_gather_nd_compile(&sig);
        if (!fn)
            fail_msg("%s (%s/%s): refused: %s", name, jit_dtype_name(dt), jit_dtype_name(it),
                     jit_last_error());
        jit_kernel_info info;
        assert_int_equal(jit_gather_nd_info(fn, &info), 0);
        if (eng == JIT_ENGINE_AUTO)
            support_expect_jit(&info, name);
        jit_shape shape;
        assert_int_equal(jit_gather_nd_output_shape(&sig, &shape), 0);
        expect_shape(&shape, cJSON_GetObjectItemCaseSensitive(c, "expected_shape"), name);
        size_t bytes = (size_t)ne * (size_t)jit_dtype_size(dt);
        char *out = malloc(bytes + 16);
        memset(out, 0xa5, bytes + 16);
        int rc = fn(data, idx, out);
        if (rc != 0)
            fail_msg("%s: kernel returned %d: %s", name, rc, jit_last_error());
        if (memcmp(out, want, bytes) != 0)
            fail_msg("%s (%s/%s, %s): output differs from expected", name, jit_dtype_name(dt),
                     jit_dtype_name(it), jit_engine_name(eng));
        for (int i = 0; i < 16; i++)
            assert_int_equal((unsigned char)out[bytes + i], 0xa5);
        free(out);
        ran = 1;
    }
    free(data);
    free(idx);
    free(want);
    return ran;
}

static int run_scatter(const cJSON *c, jit_dtype dt, jit_dtype it, jit_engine eng, int inplace,
                       int exact)
{
    jit_scatter_update_sig sig = support_scatter_sig(c);
    sig.dtype = dt;
    sig.index_type = it;
    sig.engine = eng;
    int64_t nd, ni, nu, ne;
    void *data = support_values(cJSON_GetObjectItemCaseSensitive(c, "data"), dt, &nd, exact);
    void *idx = support_values(cJSON_GetObjectItemCaseSensitive(c, "indices"), it, &ni, exact);
    void *upd = support_values(cJSON_GetObjectItemCaseSensitive(c, "updates"), dt, &nu, exact);
    void *want = support_values(cJSON_GetObjectItemCaseSensitive(c, "expected"), dt, &ne, exact);
    int ran = 0;
    if (data && idx && upd && want) {
        const char *name = case_name(c);
        jit_scatter_update_fn fn = jit_scatter_update_compile(&sig);
        if (!fn)
            fail_msg("%s: refused: %s", name, jit_last_error());
        jit_kernel_info info;
        assert_int_equal(jit_scatter_update_info(fn, &info), 0);
        if (eng == JIT_ENGINE_AUTO)
            support_expect_jit(&info, name);
        jit_shape shape;
        assert_int_equal(jit_scatter_update_output_shape(&sig, &shape), 0);
        expect_shape(&shape, cJSON_GetObjectItemCaseSensitive(c, "expected_shape"), name);
        size_t bytes = (size_t)ne * (size_t)jit_dtype_size(dt);
        char *out = inplace ? data : malloc(bytes + 1);
        int rc = fn(data, idx, upd, out);
        if (rc != 0)
            fail_msg("%s: kernel returned %d: %s", name, rc, jit_last_error());
        if (memcmp(out, want, bytes) != 0)
            fail_msg("%s (%s/%s, %s%s): output differs from expected", name, jit_dtype_name(dt),
                     jit_dtype_name(it), jit_engine_name(eng), inplace ? ", in place" : "");
        if (!inplace)
            free(out);
        ran = 1;
    }
    free(data);
    free(idx);
    free(upd);
    free(want);
    return ran;
}

static void test_gather_cases(void **state)
{
    (void)state;
    cJSON *cases = support_load_cases("gather_nd.json");
    assert_non_null(cases);
    int ncases = 0, before = runs;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        jit_gather_nd_sig rec = support_gather_sig(c);
        ncases++;
        for (size_t e = 0; e < 2; e++) {
            /* as recorded: must run */
            if (!run_gather(c, rec.dtype, rec.index_type, engines[e], 0))
                fail_msg("%s: recorded values do not fit the recorded types", case_name(c));
            runs++;
            for (size_t d = 0; d < sizeof all_dtypes / sizeof *all_dtypes; d++)
                runs += run_gather(c, all_dtypes[d], rec.index_type, engines[e], 1);
            for (size_t i = 0; i < sizeof index_dtypes / sizeof *index_dtypes; i++)
                runs += run_gather(c, rec.dtype, index_dtypes[i], engines[e], 1);
        }
    }
    printf("gather_nd.json: %d cases, %d runs (types x engines)\n", ncases, runs - before);
    assert_int_equal(ncases, cJSON_GetArraySize(cases));
    cJSON_Delete(cases);
}

static void test_scatter_cases(void **state)
{
    (void)state;
    cJSON *cases = support_load_cases("scatter_update.json");
    assert_non_null(cases);
    int ncases = 0, before = runs;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        jit_scatter_update_sig rec = support_scatter_sig(c);
        ncases++;
        for (size_t e = 0; e < 2; e++)
            for (int inplace = 0; inplace < 2; inplace++) {
                if (!run_scatter(c, rec.dtype, rec.index_type, engines[e], inplace, 0))
                    fail_msg("%s: recorded values do not fit the recorded types", case_name(c));
                runs++;
                for (size_t d = 0; d < sizeof all_dtypes / sizeof *all_dtypes; d++)
                    runs += run_scatter(c, all_dtypes[d], rec.index_type, engines[e], inplace, 1);
                for (size_t i = 0; i < sizeof index_dtypes / sizeof *index_dtypes; i++)
                    runs += run_scatter(c, rec.dtype, index_dtypes[i], engines[e], inplace, 1);
            }
    }
    printf("scatter_update.json: %d cases, %d runs (types x engines x in-place)\n", ncases,
           runs - before);
    cJSON_Delete(cases);
}

/* The message must name an input of the op. */
static void expect_named(const char *msg, const char *src)
{
    static const char *const inputs[] = {"data", "indices", "updates", "axis", "batch_dims"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        if (strstr(msg, inputs[i]))
            return;
    fail_msg("%s: message '%s' names no input", src, msg);
}

static void refuse_signature(const cJSON *c, int is_gather)
{
    const char *src = case_name(c);
    void *fn;
    if (is_gather) {
        jit_gather_nd_sig s = support_gather_sig(c);
        fn = (void *)(uintptr_t)jit_gather_nd_compile(&s);
    } else {
        jit_scatter_update_sig s = support_scatter_sig(c);
        fn = (void *)(uintptr_t)jit_scatter_update_compile(&s);
    }
    if (fn)
        fail_msg("%s: accepted an invalid signature", src);
    expect_named(jit_last_error(), src);
    printf("  refused: %s\n", jit_last_error());
}

/* A valid signature with an out-of-range index: non-zero status, the
 * output untouched, and a message that names the position. */
static void refuse_index(const cJSON *c, int is_gather)
{
    const char *src = case_name(c);
    int64_t n;
    int rc;
    unsigned char out[4096];
    memset(out, 0x5a, sizeof out);
    if (is_gather) {
        jit_gather_nd_sig s = support_gather_sig(c);
        void *data = support_values(cJSON_GetObjectItemCaseSensitive(c, "data"), s.dtype, &n, 0);
        void *idx = support_values(cJSON_GetObjectItemCaseSensitive(c, "indices"), s.index_type,
                                   &n, 0);
        jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
        assert_non_null(fn);
        rc = fn(data, idx, out);
        free(data);
        free(idx);
    } else {
        jit_scatter_update_sig s = support_scatter_sig(c);
        int64_t dn = 1, un = 1;
        for (int i = 0; i < s.data_shape.rank; i++)
            dn *= s.data_shape.dims[i];
        for (int i = 0; i < s.updates_shape.rank; i++)
            un *= s.updates_shape.dims[i];
        float data[256] = {0}, upd[256];
        for (int i = 0; i < 256; i++)
            upd[i] = (float)i + 1;
        assert_true(dn <= 256 && un <= 256);
        void *idx = support_values(cJSON_GetObjectItemCaseSensitive(c, "indices"), s.index_type,
                                   &n, 0);
        jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
        assert_non_null(fn);
        rc = fn(data, idx, upd, out);
        assert_int_not_equal(rc, 0);
        /* in place: data must come back unchanged */
        float before[256];
        memcpy(before, data, sizeof data);
        assert_int_not_equal(fn(data, idx, upd, data), 0);
        assert_memory_equal(before, data, sizeof data);
        free(idx);
    }
    if (rc != JIT_STATUS_BAD_INDEX)
        fail_msg("%s: kernel returned %d for an out-of-range index", src, rc);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(out[i], 0x5a);
    if (!strstr(jit_last_error(), "out of range") || !strstr(jit_last_error(), "indices["))
        fail_msg("%s: message '%s' does not name the index", src, jit_last_error());
    printf("  bad index: %s\n", jit_last_error());
}

static void test_invalid_cases(void **state)
{
    (void)state;
    cJSON *cases = support_load_cases("invalid.json");
    assert_non_null(cases);
    int sig = 0, idx = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(c, "kind");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
        int is_gather = strcmp(op->valuestring, "GatherND") == 0;
        if (strcmp(kind->valuestring, "signature") == 0) {
            refuse_signature(c, is_gather);
            sig++;
        } else {
            refuse_index(c, is_gather);
            idx++;
        }
    }
    printf("invalid.json: %d signatures refused, %d bad-index runs refused\n", sig, idx);
    assert_int_equal(sig + idx, cJSON_GetArraySize(cases));
    cJSON_Delete(cases);
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
        cmocka_unit_test_teardown(test_gather_cases, teardown),
        cmocka_unit_test_teardown(test_scatter_cases, teardown),
        cmocka_unit_test_teardown(test_invalid_cases, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
