/* The public API given bad arguments: NULL signatures and outputs, values
 * outside the enums, pointers this library never returned, kernels of the
 * other op, ranges outside [0, units), a cache that is not open or cannot
 * be; and allocation failures in the calls test_signature does not fail
 * (async compiles, explain, dump). Each refusal returns its error value,
 * writes nothing it should not, and says why in jit_last_error(). */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc.h"
#include "oracle.h"
#include "support.h"

static void expect_error(const char *part)
{
    if (!strstr(jit_last_error(), part))
        fail_msg("jit_last_error() is \"%s\", expected it to contain \"%s\"", jit_last_error(),
                 part);
}

/* data f32 [6, 4], indices [5, 1] -> out [5, 4] */
static jit_gather_nd_sig gsig(void)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32,
                               .data_shape = {2, {6, 4}}, .indices_shape = {2, {5, 1}}};
}

/* data f32 [6, 4], axis 0, indices [3] -> updates [3, 4] */
static jit_scatter_update_sig ssig(void)
{
    return (jit_scatter_update_sig){.axis = 0, .dtype = JIT_F32, .index_type = JIT_I32,
                                    .data_shape = {2, {6, 4}}, .indices_shape = {1, {3}},
                                    .updates_shape = {2, {3, 4}}};
}

static float data[24], updates[12];
static const int32_t gidx[5] = {5, 0, 3, 3, 1}, sidx[3] = {4, 1, 2};

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < 24; i++)
        data[i] = (float)i + 0.5f;
    for (int i = 0; i < 12; i++)
        updates[i] = -1.0f - (float)i;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    return 0;
}

static void test_null_arguments(void **state)
{
    (void)state;
    jit_gather_nd_sig g = gsig();
    jit_scatter_update_sig s = ssig();
    jit_shape shape;
    jit_kernel_info info;

    assert_null(jit_gather_nd_compile(NULL));
    expect_error("the GatherND signature is NULL");
    assert_null(jit_scatter_update_compile(NULL));
    expect_error("the ScatterUpdate signature is NULL");
    assert_null(jit_gather_nd_compile_async(NULL));
    expect_error("the GatherND signature is NULL");
    assert_null(jit_scatter_update_compile_async(NULL));
    expect_error("the ScatterUpdate signature is NULL");

    assert_int_equal(jit_gather_nd_output_shape(NULL, &shape), -1);
    expect_error("jit_gather_nd_output_shape: NULL argument");
    assert_int_equal(jit_gather_nd_output_shape(&g, NULL), -1);
    expect_error("jit_gather_nd_output_shape: NULL argument");
    assert_int_equal(jit_scatter_update_output_shape(NULL, &shape), -1);
    expect_error("jit_scatter_update_output_shape: NULL argument");
    assert_int_equal(jit_scatter_update_output_shape(&s, NULL), -1);
    expect_error("jit_scatter_update_output_shape: NULL argument");

    assert_null(jit_gather_nd_explain(NULL));
    expect_error("the GatherND signature is NULL");
    assert_null(jit_scatter_update_explain(NULL));
    expect_error("the ScatterUpdate signature is NULL");
    assert_null(jit_gather_nd_dump(NULL, JIT_DUMP_IR));
    expect_error("the GatherND signature is NULL");
    assert_null(jit_scatter_update_dump(NULL, JIT_DUMP_IR));
    expect_error("the ScatterUpdate signature is NULL");

    assert_int_equal(jit_get_kernel_stats(NULL), -1);
    expect_error("jit_get_kernel_stats: NULL argument");

    /* a real kernel, but nowhere to write its info */
    jit_gather_nd_fn fn = jit_gather_nd_compile(&g);
    assert_non_null(fn);
    assert_int_equal(jit_gather_nd_info(fn, NULL), -1);
    expect_error("info is NULL: nowhere to write the kernel's info (NULL argument)");
    assert_int_equal(jit_info((jit_kernel)fn, NULL), -1);
    expect_error("info is NULL");
    assert_int_equal(jit_gather_nd_info(fn, &info), 0);
    assert_int_equal(info.out_bytes, 5 * 4 * 4);
}

/* An invalid signature is refused by explain and async compile as by compile. */
static void test_invalid_signatures(void **state)
{
    (void)state;
    jit_gather_nd_sig g = gsig();
    g.engine = (jit_engine)7;
    assert_null(jit_gather_nd_compile(&g));
    expect_error("engine=7 is not a known engine");
    assert_null(jit_gather_nd_compile_async(&g));
    expect_error("engine=7 is not a known engine");

    jit_scatter_update_sig s = ssig();
    s.axis = 2;
    assert_null(jit_scatter_update_explain(&s));
    expect_error("axis");
    assert_null(jit_scatter_update_compile_async(&s));
    expect_error("axis");

    /* a negative rank is named by its number */
    g = gsig();
    g.data_shape.rank = -1;
    assert_null(jit_gather_nd_compile(&g));
    expect_error("rank(data)=-1 must be at least 1");
    /* batch_dims beyond the indices' rank */
    g = gsig();
    g.batch_dims = 1;
    g.indices_shape = (jit_shape){1, {5}};
    assert_null(jit_gather_nd_compile(&g));
    expect_error("batch_dims");
}

static void test_enum_names_out_of_range(void **state)
{
    (void)state;
    jit_index_policy p = JIT_INDEX_CLAMP;
    assert_string_equal(jit_dtype_name(JIT_DTYPE_COUNT), "unknown");
    assert_string_equal(jit_dtype_name((jit_dtype)-1), "unknown");
    assert_int_equal(jit_dtype_from_name(NULL), JIT_DTYPE_UNSET);
    assert_int_equal(jit_dtype_from_name("f33"), JIT_DTYPE_UNSET);
    assert_int_equal(jit_dtype_from_name("unset"), JIT_DTYPE_UNSET); /* not a type to ask for */
    assert_int_equal(jit_dtype_from_name("nf4"), JIT_NF4);
    assert_int_equal(jit_dtype_size(JIT_DTYPE_COUNT), 0);
    assert_int_equal(jit_dtype_size(JIT_F64), 8);
    assert_string_equal(jit_index_policy_name(JIT_INDEX_POLICY_COUNT), "unknown");
    assert_int_equal(jit_index_policy_from_name(NULL, &p), -1);
    assert_int_equal(jit_index_policy_from_name("clamp", NULL), -1); /* a name, nowhere to put it */
    assert_int_equal(jit_index_policy_from_name("clam", &p), -1);
    assert_int_equal(jit_index_policy_from_name("clamped", &p), -1);
    assert_int_equal(jit_index_policy_from_name("zero_fill", &p), 0);
    assert_int_equal(p, JIT_INDEX_ZERO_FILL);
    assert_int_equal(jit_index_policy_from_name("bogus", &p), -1);
    assert_int_equal(p, JIT_INDEX_ZERO_FILL); /* a failure leaves it alone */
    assert_string_equal(jit_engine_name(JIT_ENGINE_COUNT), "unknown");
    assert_string_equal(jit_engine_name(JIT_ENGINE_JIT), "jit");
    jit_reduction r = JIT_REDUCTION_MAX;
    assert_string_equal(jit_reduction_name(JIT_REDUCTION_COUNT), "unknown");
    assert_string_equal(jit_reduction_name(JIT_REDUCTION_MEAN), "mean");
    assert_int_equal(jit_reduction_from_name(NULL, &r), -1);
    assert_int_equal(jit_reduction_from_name("sum", NULL), -1);
    assert_int_equal(jit_reduction_from_name("average", &r), -1);
    assert_int_equal(r, JIT_REDUCTION_MAX); /* a failure leaves it alone */
    assert_int_equal(jit_reduction_from_name("mul", &r), 0); /* ONNX's name */
    assert_int_equal(r, JIT_REDUCTION_PROD);
    jit_op_info info;
    assert_int_equal(jit_op_describe(JIT_OP_COUNT, &info), -1);
    assert_non_null(strstr(jit_last_error(), "is not an op of this library"));
    assert_int_equal(jit_op_describe(JIT_OP_GATHER, NULL), -1);
    assert_int_equal(jit_op_from_name(NULL), JIT_OP_NONE);
    assert_int_equal(jit_op_from_name("gather-everything"), JIT_OP_NONE);
    assert_int_equal(jit_op_from_name("SCATTER-ND-UPDATE"), JIT_OP_SCATTER_ND_UPDATE);
}

/* A mean's counts are the calling thread's scratch: when a thread cannot
 * get it, its call returns JIT_STATUS_NO_MEMORY and writes nothing, on
 * both engines; the next call that can runs. */
typedef struct mean_call {
    jit_kernel k;
    long fail_after;
    int status;
    float out[4];
} mean_call;

static void *call_mean(void *arg)
{
    mean_call *m = arg;
    static const float mdata[4] = {1, 2, 3, 4}, upd[3] = {10, 20, 30};
    static const int64_t idx[3] = {1, 1, 3};
    tj_alloc_fail_after(m->fail_after); /* in a fresh thread: its first scratch */
    m->status = jit_call(m->k, mdata, idx, upd, m->out);
    tj_alloc_fail_after(0);
    return NULL;
}

static void test_mean_without_scratch(void **state)
{
    (void)state;
    for (int eng = 0; eng < 2; eng++)
        for (long n = 1; n <= 3; n++) {
            jit_sig s = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .dtype = JIT_F32,
                         .index_type = JIT_I64, .reduction = JIT_REDUCTION_MEAN,
                         .engine = eng ? JIT_ENGINE_REFERENCE : JIT_ENGINE_AUTO,
                         .data_shape = {1, {4}}, .indices_shape = {1, {3}},
                         .updates_shape = {1, {3}}};
            mean_call m = {.k = jit_compile(&s), .fail_after = n,
                           .out = {-1, -1, -1, -1}};
            assert_non_null(m.k);
            pthread_t t;
            assert_int_equal(pthread_create(&t, NULL, call_mean, &m), 0);
            pthread_join(t, NULL);
            if (m.status == JIT_STATUS_NO_MEMORY) {
                for (int i = 0; i < 4; i++)
                    assert_true(m.out[i] == -1); /* nothing written */
            } else { /* the failing allocation was not the scratch's */
                assert_int_equal(m.status, JIT_OK);
                const float want[4] = {1, 32.0f / 3, 3, 17};
                assert_memory_equal(m.out, want, sizeof want);
            }
            assert_true(n > 1 || m.status == JIT_STATUS_NO_MEMORY);
        }
    jit_shutdown();
}

/* A mean into an empty out: no position exists, so every index is out of
 * range, clamped or not; the JIT compiled such a kernel with no scratch to
 * address (a crash in LLVM, found by test_reductions). Both engines
 * compile it and agree. */
static void test_mean_into_empty_out(void **state)
{
    (void)state;
    const jit_index_policy pol[] = {JIT_INDEX_ERROR, JIT_INDEX_CLAMP, JIT_INDEX_ZERO_FILL};
    for (size_t i = 0; i < sizeof pol / sizeof *pol; i++) {
        int status[2];
        for (int eng = 0; eng < 2; eng++) {
            jit_sig s = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .dtype = JIT_U64,
                         .index_type = JIT_I32, .reduction = JIT_REDUCTION_MEAN,
                         .index_policy = pol[i],
                         .engine = eng ? JIT_ENGINE_REFERENCE : JIT_ENGINE_JIT,
                         .data_shape = {1, {0}}, .indices_shape = {1, {1}},
                         .updates_shape = {1, {1}}};
            jit_kernel k = jit_compile(&s);
            assert_non_null(k);
            jit_kernel_info info;
            assert_int_equal(jit_info(k, &info), 0);
            assert_int_equal(info.engine, eng ? JIT_ENGINE_REFERENCE : JIT_ENGINE_JIT);
            const uint64_t empty_data[1] = {0}, upd[1] = {7};
            const int32_t idx[1] = {0};
            uint64_t out[1] = {0};
            status[eng] = jit_call(k, empty_data, idx, upd, out);
        }
        assert_int_equal(status[0], status[1]);
    }
    jit_shutdown();
}

/* GatherElements from data whose axis dim is empty, under zero-fill:
 * every element is a zero. Choosing the vector gathers computed the span
 * of data from dim - 1, -1 here (a signed overflow under UBSan, found by
 * test_differential's random run). */
static void test_gather_from_empty_dim(void **state)
{
    (void)state;
    for (int eng = 0; eng < 2; eng++) {
        jit_sig s = {.op = JIT_OP_GATHER_ELEMENTS, .dtype = JIT_F64, .index_type = JIT_I64,
                     .index_policy = JIT_INDEX_ZERO_FILL,
                     .engine = eng ? JIT_ENGINE_REFERENCE : JIT_ENGINE_JIT,
                     .data_shape = {3, {0, 5, 5}}, .indices_shape = {3, {4, 5, 5}}};
        jit_kernel k = jit_compile(&s);
        assert_non_null(k);
        int64_t idx[100] = {0};
        double out[100], none[1] = {0};
        memset(out, 0xff, sizeof out);
        assert_int_equal(jit_call(k, none, idx, NULL, out), JIT_OK);
        for (int i = 0; i < 100; i++)
            assert_true(out[i] == 0.0);
    }
    jit_shutdown();
}

static int fake_kernel(const void *a, const void *b, void *c)
{
    (void)a, (void)b, (void)c;
    return 0;
}

/* The parts API (units, validate, run_range) on pointers it must refuse,
 * and ranges it must clip; for a JIT kernel and a reference kernel. */
static void test_parts_bad_arguments(void **state)
{
    (void)state;
    jit_gather_nd_fn fake = fake_kernel;
    assert_int_equal(jit_gather_nd_units(NULL), -1);
    expect_error("not a kernel returned by this library");
    assert_int_equal(jit_gather_nd_units(fake), -1);
    assert_int_equal(jit_gather_nd_validate(fake, gidx), JIT_STATUS_BAD_POINTER);
    expect_error("not a kernel returned by this library");
    float out[20];
    assert_int_equal(jit_gather_nd_run_range(fake, data, gidx, out, 0, 1), JIT_STATUS_BAD_POINTER);
    expect_error("not a kernel returned by this library");

    for (int eng = JIT_ENGINE_AUTO; eng <= JIT_ENGINE_REFERENCE; eng++) {
        jit_gather_nd_sig g = gsig();
        g.engine = (jit_engine)eng;
        jit_gather_nd_fn fn = jit_gather_nd_compile(&g);
        jit_scatter_update_sig s = ssig();
        s.engine = (jit_engine)eng;
        jit_scatter_update_fn sfn = jit_scatter_update_compile(&s);
        assert_non_null(fn);
        assert_non_null(sfn);
        /* each op's kernel is refused by the other op's calls */
        assert_int_equal(jit_scatter_update_units((jit_scatter_update_fn)(uintptr_t)fn), -1);
        expect_error("this is a GatherND kernel, not a ScatterUpdate one");
        assert_int_equal(jit_gather_nd_units((jit_gather_nd_fn)(uintptr_t)sfn), -1);
        assert_int_equal(jit_scatter_update_validate((jit_scatter_update_fn)(uintptr_t)fn, sidx),
                         JIT_STATUS_BAD_POINTER);
        assert_int_equal(jit_scatter_update_run_range((jit_scatter_update_fn)(uintptr_t)fn, data,
                                                      sidx, updates, out, 0, 1),
                         JIT_STATUS_BAD_POINTER);

        int64_t units = jit_gather_nd_units(fn);
        assert_true(units > 0);
        assert_int_equal(jit_gather_nd_validate(fn, NULL), JIT_STATUS_BAD_POINTER);
        expect_error("indices is NULL but the signature needs bytes there");
        assert_int_equal(jit_gather_nd_validate(fn, gidx), JIT_OK);
        assert_int_equal(jit_gather_nd_validate_part(fn, gidx, 0, 2), JIT_OK);
        assert_int_equal(jit_gather_nd_validate_part(fn, gidx, 2, 2), JIT_STATUS_BAD_SHAPE);
        /* the typed call names itself, as the typed run_range does */
        expect_error("jit_gather_nd_validate_part: part 2 of 2");
        assert_int_equal(jit_validate_part((jit_kernel)fn, gidx, -1, 2), JIT_STATUS_BAD_SHAPE);
        expect_error("jit_validate_part: part -1 of 2");
        assert_int_equal(jit_scatter_update_validate_part(sfn, sidx, 0, 1), JIT_OK);

        /* an empty range writes nothing; one past either end, or reversed, is
         * refused (a caller's part arithmetic gone wrong), writing nothing */
        float want[20], before[20];
        memset(out, 0x5a, sizeof out);
        memcpy(before, out, sizeof out);
        assert_int_equal(jit_gather_nd_run_range(fn, data, gidx, out, 3, 3), JIT_OK);
        const int64_t bad[][2] = {{units, units + 5}, {-7, units}, {0, units + 1}, {2, 1}};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            assert_int_equal(jit_gather_nd_run_range(fn, data, gidx, out, bad[i][0], bad[i][1]),
                             JIT_STATUS_BAD_SHAPE);
            assert_non_null(strstr(jit_last_error(), "not a range within the kernel's"));
        }
        assert_memory_equal(out, before, sizeof out);
        assert_int_equal(oracle_gather_nd(&g, data, gidx, want), 0);
        assert_int_equal(jit_gather_nd_run_range(fn, data, gidx, out, 0, units), JIT_OK);
        assert_memory_equal(out, want, sizeof want);
        /* a NULL buffer is refused before any unit runs */
        assert_int_equal(jit_gather_nd_run_range(fn, NULL, gidx, out, 0, units),
                         JIT_STATUS_BAD_POINTER);

        int64_t sunits = jit_scatter_update_units(sfn);
        assert_true(sunits > 0);
        float sout[24], swant[24];
        assert_int_equal(oracle_scatter_update(&s, data, sidx, updates, swant), 0);
        assert_int_equal(jit_scatter_update_run_range(sfn, data, sidx, updates, sout, -1, sunits + 1),
                         JIT_STATUS_BAD_SHAPE);
        assert_int_equal(jit_scatter_update_run_range(sfn, data, sidx, updates, sout, 0, sunits),
                         JIT_OK);
        assert_memory_equal(sout, swant, sizeof swant);
        assert_int_equal(jit_scatter_update_validate(sfn, NULL), JIT_STATUS_BAD_POINTER);
        jit_shutdown();
    }
}

/* The typed kernel calls of the four later ops: each works on its own op's
 * kernels like the generic call, and refuses another op's kernel of the
 * same C type, naming both ops. jit_sig views: data f32 [6, 4]. */
/* ScatterElementsUpdate along axis 0 with no reduction, from its
 * definition (the oracle has no such op): out = data, then
 * out[idx[i][j]][j] = updates[i][j] in row-major order. */
static void scatter_elements_axis0(const jit_sig *g, const int64_t *idx, float *out)
{
    int64_t cols = g->data_shape.dims[1];
    memcpy(out, data, sizeof data);
    for (int64_t i = 0; i < g->indices_shape.dims[0]; i++)
        for (int64_t j = 0; j < cols; j++)
            out[idx[i * cols + j] * cols + j] = updates[i * cols + j];
}

static void check_typed_calls(jit_op op, jit_kernel k, jit_kernel other, const jit_sig *g,
                              const int64_t *idx, const int64_t *bad_idx)
{
    jit_kernel_info info, ginfo;
    int64_t units = 0; /* set by every case: clang cannot tell that fail() returns no more */
    int valid = 0, invalid = 0, invalid_part = 0, refused = 0;
    float out[24], want[24];
    memset(out, 0x5a, sizeof out);
    if (op == JIT_OP_SCATTER_ELEMENTS_UPDATE)
        scatter_elements_axis0(g, idx, want);
    else
        assert_int_equal(oracle_run(g, data, idx, updates, want), 0);
    switch (op) {
#define TYPED(NAME, FN, RANGE)                                                                \
    case JIT_OP_##NAME:                                                                       \
        assert_int_equal(jit_##FN##_info((jit_##FN##_fn)k, &info), 0);                        \
        units = jit_##FN##_units((jit_##FN##_fn)k);                                           \
        valid = jit_##FN##_validate((jit_##FN##_fn)k, idx);                                   \
        invalid = jit_##FN##_validate((jit_##FN##_fn)k, bad_idx);                             \
        valid |= jit_##FN##_validate_part((jit_##FN##_fn)k, idx, 1, 2);                       \
        invalid_part = jit_##FN##_validate_part((jit_##FN##_fn)k, bad_idx, 0, 1);             \
        assert_int_equal(RANGE, JIT_OK);                                                      \
        refused = jit_##FN##_info((jit_##FN##_fn)other, &info);                               \
        break;
        TYPED(GATHER, gather,
              jit_gather_run_range((jit_gather_fn)k, data, idx, out, 0, units))
        TYPED(GATHER_ELEMENTS, gather_elements,
              jit_gather_elements_run_range((jit_gather_elements_fn)k, data, idx, out, 0, units))
        TYPED(SCATTER_ND_UPDATE, scatter_nd_update,
              jit_scatter_nd_update_run_range((jit_scatter_nd_update_fn)k, data, idx, updates,
                                              out, 0, units))
        TYPED(SCATTER_ELEMENTS_UPDATE, scatter_elements_update,
              jit_scatter_elements_update_run_range((jit_scatter_elements_update_fn)k, data, idx,
                                                    updates, out, 0, units))
#undef TYPED
    default:
        fail();
    }
    assert_int_equal(jit_info(k, &ginfo), 0);
    assert_int_equal(ginfo.op, op);
    assert_int_equal(units, jit_units(k));
    assert_true(units > 0);
    assert_int_equal(valid, JIT_OK);
    assert_int_equal(invalid, JIT_STATUS_BAD_INDEX);
    assert_int_equal(invalid_part, JIT_STATUS_BAD_INDEX);
    assert_memory_equal(out, want, (size_t)ginfo.out_bytes);
    assert_int_equal(refused, -1);
    expect_error("kernel, not a");
}

static void test_typed_calls_of_every_op(void **state)
{
    (void)state;
    static const int64_t gi[3] = {5, 0, 2}, gbad[3] = {5, 6, 2};
    static const int64_t ei[24] = {5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4,
                                   0, 0, 0, 0, 5, 5, 5, 5, 1, 2, 3, 4};
    int64_t ebad[24];
    memcpy(ebad, ei, sizeof ebad);
    ebad[7] = -9;
    static const int64_t ni[3] = {4, 1, 2}, nbad[3] = {4, 6, 2};
    jit_sig base = {.dtype = JIT_F32, .index_type = JIT_I64, .data_shape = {2, {6, 4}}};
    jit_sig gather = base, elements = base, nd = base, se = base;
    gather.op = JIT_OP_GATHER;
    gather.indices_shape = (jit_shape){1, {3}};
    elements.op = JIT_OP_GATHER_ELEMENTS;
    elements.indices_shape = (jit_shape){2, {6, 4}};
    nd.op = JIT_OP_SCATTER_ND_UPDATE;
    nd.indices_shape = (jit_shape){2, {3, 1}};
    nd.updates_shape = (jit_shape){2, {3, 4}};
    se.op = JIT_OP_SCATTER_ELEMENTS_UPDATE;
    se.indices_shape = (jit_shape){2, {3, 4}};
    se.updates_shape = (jit_shape){2, {3, 4}};
    for (int eng = JIT_ENGINE_AUTO; eng <= JIT_ENGINE_REFERENCE; eng++) {
        gather.engine = elements.engine = nd.engine = se.engine = (jit_engine)eng;
        jit_kernel kg = jit_compile(&gather), ke = jit_compile(&elements);
        jit_kernel kn = jit_compile(&nd), ks = jit_compile(&se);
        assert_non_null(kg);
        assert_non_null(ke);
        assert_non_null(kn);
        assert_non_null(ks);
        /* each is given a kernel of the other op of its argument list */
        check_typed_calls(JIT_OP_GATHER, kg, ke, &gather, gi, gbad);
        check_typed_calls(JIT_OP_GATHER_ELEMENTS, ke, kg, &elements, ei, ebad);
        check_typed_calls(JIT_OP_SCATTER_ND_UPDATE, kn, ks, &nd, ni, nbad);
        check_typed_calls(JIT_OP_SCATTER_ELEMENTS_UPDATE, ks, kn, &se, ei, ebad);
        assert_int_equal(jit_gather_release((jit_gather_fn)ke), -1);
        expect_error("this is a GatherElements kernel, not a Gather one");
        assert_int_equal(jit_gather_release((jit_gather_fn)kg), 0);
        assert_int_equal(jit_gather_elements_release((jit_gather_elements_fn)ke), 0);
        assert_int_equal(jit_scatter_nd_update_release((jit_scatter_nd_update_fn)kn), 0);
        assert_int_equal(jit_scatter_elements_update_release((jit_scatter_elements_update_fn)ks),
                         0);
        jit_shutdown();
    }
}

/* jit_call refuses an out that shares bytes with an input (the header's
 * rule), writing nothing; a scatter's out == data runs in place. */
static void test_call_refuses_overlapping_out(void **state)
{
    (void)state;
    jit_sig g = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = {1, {8}}, .indices_shape = {1, {4}}};
    jit_kernel k = jit_compile(&g);
    assert_non_null(k);
    float buf[16];
    for (int i = 0; i < 16; i++)
        buf[i] = (float)i;
    int64_t idx[4] = {7, 6, 5, 4};
    assert_int_equal(jit_call(k, buf, idx, NULL, buf + 2), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps data"));
    assert_true(buf[2] == 2.0f); /* nothing written */
    assert_int_equal(jit_call(k, buf, idx, NULL, (float *)(void *)idx), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps indices"));
    assert_int_equal(jit_call(k, buf, idx, NULL, buf + 8), JIT_OK); /* just past data */
    assert_true(buf[8] == 7.0f && buf[11] == 4.0f);
    jit_sig sc = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .dtype = JIT_F32, .index_type = JIT_I64,
                  .data_shape = {1, {8}}, .indices_shape = {1, {2}}, .updates_shape = {1, {2}}};
    k = jit_compile(&sc);
    assert_non_null(k);
    float dst[8] = {0}, upd[2] = {5, 6};
    int64_t at[2] = {1, 3};
    assert_int_equal(jit_call(k, dst, at, upd, dst), JIT_OK); /* in place */
    assert_true(dst[1] == 5.0f && dst[3] == 6.0f);
    assert_int_equal(jit_call(k, dst, at, upd, dst + 1), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "out == data"));
    jit_shutdown();
}

/* jit_call_bag holds a static bag's out to the same rule (an out over
 * the indices let one bag's result change the next bag's lookups after
 * they were checked: a read past the table, a user's trial), and refuses
 * pointers the kernel would ignore: weights to a kernel without them,
 * offsets to a Packed one. Nothing is written. */
static void test_call_bag_refuses_overlap_and_stray_pointers(void **state)
{
    (void)state;
    float table[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    int64_t buf[8] = {0, 0, 1, 1, 0, 0, 0, 0}, off[2] = {0, 2};
    jit_embedding_bag_offsets_sig sig = {.dtype = JIT_F32, .index_type = JIT_I64,
                                         .table_shape = {2, {4, 2}}, .indices_shape = {1, {4}},
                                         .offsets_shape = {1, {2}}};
    jit_kernel k = (jit_kernel)jit_embedding_bag_offsets_compile(&sig);
    assert_non_null(k);
    assert_int_equal(jit_call_bag(k, table, buf, off, NULL, &buf[2]), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps indices"));
    assert_true(buf[2] == 1 && buf[3] == 1);
    assert_int_equal(jit_call_bag(k, table, buf, off, NULL, table), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps table"));
    assert_true(table[0][0] == 1.0f);
    int64_t offs[4] = {0, 2, 0, 0};
    assert_int_equal(jit_call_bag(k, table, buf, offs, NULL, &offs[1]), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps offsets"));
    float w[4] = {1, 1, 1, 1}, out[2][2];
    assert_int_equal(jit_call_bag(k, table, buf, off, w, out), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "compiled without weights"));
    assert_int_equal(jit_call_bag(k, table, buf, off, NULL, out), JIT_OK);
    assert_true(out[0][0] == 2.0f && out[1][0] == 6.0f); /* rows 0+0, 1+1 */
    jit_embedding_bag_packed_sig ps = {.dtype = JIT_F32, .index_type = JIT_I64,
                                       .table_shape = {2, {4, 2}}, .indices_shape = {2, {2, 2}}};
    jit_kernel kp = (jit_kernel)jit_embedding_bag_packed_compile(&ps);
    assert_non_null(kp);
    assert_int_equal(jit_call_bag(kp, table, buf, off, NULL, out), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "takes none"));
    assert_int_equal(jit_call_bag(k, table, buf, off, NULL, out), JIT_OK);
    /* jit_run_range_bag after jit_validate_bag holds to the same rules */
    assert_int_equal(jit_validate_bag(k, buf, off), JIT_OK);
    assert_int_equal(jit_run_range_bag(k, table, buf, off, NULL, (float *)(void *)&buf[2], 0, 2),
                     JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "overlaps indices"));
    assert_true(buf[2] == 1 && buf[3] == 1);
    assert_int_equal(jit_run_range_bag(k, table, buf, off, w, out, 0, 2), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "compiled without weights"));
    assert_int_equal(jit_run_range_bag(kp, table, buf, off, NULL, out, 0, 2),
                     JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "takes none"));
    assert_int_equal(jit_run_range_bag(k, table, buf, off, NULL, out, 0, 2), JIT_OK);
    /* the typed call names itself; op names of OpenVINO's version 3 */
    assert_int_equal(jit_embedding_bag_offsets_run_range((jit_embedding_bag_offsets_fn)k, table,
                                                         buf, off, NULL, out, 1, 9),
                     JIT_STATUS_BAD_SHAPE);
    assert_non_null(strstr(jit_last_error(), "jit_embedding_bag_offsets_run_range"));
    assert_int_equal(jit_gather_release((jit_gather_fn)k), -1);
    assert_non_null(strstr(jit_last_error(), "this is an EmbeddingBagOffsets kernel, not a "
                                             "Gather one"));
    assert_int_equal(jit_op_from_name("EmbeddingBagOffsetsSum"), JIT_OP_EMBEDDING_BAG_OFFSETS);
    assert_int_equal(jit_op_from_name("embeddingbagpackedsum"), JIT_OP_EMBEDDING_BAG_PACKED);
    jit_shutdown();
}

/* The buffers a kernel needs, each NULL in turn: refused, named. */
static void test_null_buffers_are_named(void **state)
{
    (void)state;
    for (int eng = JIT_ENGINE_AUTO; eng <= JIT_ENGINE_REFERENCE; eng++) {
        jit_scatter_update_sig s = ssig();
        s.engine = (jit_engine)eng;
        jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
        assert_non_null(fn);
        float out[24];
        assert_int_equal(fn(data, NULL, updates, out), JIT_STATUS_BAD_POINTER);
        assert_string_equal(jit_last_error(), "indices is NULL but the signature needs bytes there");
        assert_int_equal(fn(data, sidx, NULL, out), JIT_STATUS_BAD_POINTER);
        assert_string_equal(jit_last_error(), "updates is NULL but the signature needs bytes there");
        assert_int_equal(fn(data, sidx, updates, NULL), JIT_STATUS_BAD_POINTER);
        assert_string_equal(jit_last_error(), "out is NULL but the signature needs bytes there");
        jit_shutdown();
    }
}

static void test_dump_kind_out_of_range(void **state)
{
    (void)state;
    jit_gather_nd_sig g = gsig();
    assert_null(jit_gather_nd_dump(&g, (jit_dump_kind)9));
    expect_error("dump kind 9 is not IR, optimized IR or assembly");
    jit_scatter_update_sig s = ssig();
    assert_null(jit_scatter_update_dump(&s, (jit_dump_kind)-1));
    expect_error("is not IR, optimized IR or assembly");
}

/* Without a folder named or in TENSORJIT_CACHE_DIR there is no cache. */
static void test_cache_without_a_folder(void **state)
{
    (void)state;
    char *saved = getenv("TENSORJIT_CACHE_DIR") ? strdup(getenv("TENSORJIT_CACHE_DIR")) : NULL;
    jit_cache_close();
    unsetenv("TENSORJIT_CACHE_DIR");
    assert_int_equal(jit_cache_open(NULL), -1);
    expect_error("no cache folder given and TENSORJIT_CACHE_DIR is not set");
    setenv("TENSORJIT_CACHE_DIR", "off", 1);
    assert_int_equal(jit_cache_open(""), -1);
    expect_error("no cache folder given");
    int64_t entries = 5, bytes = 5;
    char dir[64] = "x";
    assert_int_equal(jit_cache_stats(0, &entries, &bytes, dir, sizeof dir), -1);
    expect_error("no cache folder is open");
    assert_string_equal(dir, "");
#ifndef TJ_WITH_JIT
    assert_int_equal(jit_cache_open("/tmp"), -1);
    expect_error("this build has no JIT backend");
#else
    /* the variable is the folder when none is named */
    char base[] = "/tmp/tj_api_XXXXXX";
    assert_non_null(mkdtemp(base));
    char sub[64];
    snprintf(sub, sizeof sub, "%s/cache", base);
    setenv("TENSORJIT_CACHE_DIR", sub, 1);
    jit_shutdown(); /* the library reads its environment again */
    assert_int_equal(jit_cache_open(NULL), 0);
    char got[64];
    assert_int_equal(jit_cache_stats(0, &entries, &bytes, got, sizeof got), 0);
    assert_string_equal(got, sub);
    assert_int_equal(entries, 0);
    /* jit_shutdown, not jit_cache_close: opening started the engine on a
     * background thread, which opens TENSORJIT_CACHE_DIR again if it starts
     * after a close (a race of the library, reported); shutdown joins it */
    jit_shutdown();
    assert_int_equal(jit_cache_stats(0, &entries, &bytes, got, sizeof got), -1);

    /* a folder that cannot be created: its parent is a file */
    char file[64], under[80];
    snprintf(file, sizeof file, "%s/file", base);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(under, sizeof under, "%s/sub/cache", file);
    assert_int_equal(jit_cache_open(under), -1);
    expect_error("cannot create cache folder");
    expect_error("Not a directory");

    /* a path longer than the cache keeps */
    char *longp = malloc(5000);
    assert_non_null(longp);
    memset(longp, 'a', 4999);
    longp[0] = '/';
    longp[4999] = '\0';
    assert_int_equal(jit_cache_open(longp), -1);
    expect_error("cache folder path is too long");
    free(longp);

    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    assert_int_equal(system(cmd), 0);
#endif
    if (saved)
        setenv("TENSORJIT_CACHE_DIR", saved, 1);
    else
        unsetenv("TENSORJIT_CACHE_DIR");
    free(saved);
}

/* Every allocation of an async compile, an explanation and a dump fails in
 * turn: NULL and "out of memory", or a right answer. */
static void test_allocation_failures(void **state)
{
    (void)state;
    int nulls = 0, oks = 0;
    for (long n = 1; n < 40; n++) {
        jit_shutdown();
        jit_gather_nd_sig g = gsig();
        g.index_policy = (jit_index_policy)(n % JIT_INDEX_POLICY_COUNT);
        tj_alloc_fail_after(n);
        jit_gather_nd_fn fn = jit_gather_nd_compile_async(&g);
        tj_alloc_fail_after(0);
        if (!fn) {
            expect_error("out of memory");
            nulls++;
            continue;
        }
        float out[20], want[20];
        assert_int_equal(oracle_gather_nd(&g, data, gidx, want), 0);
        assert_int_equal(fn(data, gidx, out), 0);
        assert_memory_equal(out, want, sizeof want);
        oks++;
    }
    assert_true(nulls > 0);
    assert_true(oks > 0);

    jit_scatter_update_sig s = ssig();
    int explained = 0;
    for (long n = 1; n < 8; n++) {
        tj_alloc_fail_after(n);
        char *text = jit_scatter_update_explain(&s);
        tj_alloc_fail_after(0);
        if (!text) {
            expect_error("out of memory explaining a signature");
            continue;
        }
        assert_non_null(strstr(text, "ScatterUpdate-3"));
        jit_free(text);
        explained++;
    }
    assert_true(explained > 0);

#ifdef TJ_WITH_JIT
    /* a dump: the engine starts, then its text is copied */
    jit_gather_nd_sig g = gsig();
    int dumped = 0, refused = 0;
    for (long n = 1; n < 40; n++) {
        jit_shutdown();
        tj_alloc_fail_after(n);
        char *text = jit_gather_nd_dump(&g, n % 2 ? JIT_DUMP_ASM : JIT_DUMP_IR);
        tj_alloc_fail_after(0);
        if (!text) {
            expect_error("out of memory");
            refused++;
            continue;
        }
        assert_non_null(strstr(text, n % 2 ? "tj_" : "define"));
        jit_free(text);
        dumped++;
    }
    assert_true(refused > 0);
    assert_true(dumped > 0);
#endif
    jit_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_invalid_signatures),
        cmocka_unit_test(test_enum_names_out_of_range),
        cmocka_unit_test(test_parts_bad_arguments),
        cmocka_unit_test(test_typed_calls_of_every_op),
        cmocka_unit_test(test_null_buffers_are_named),
        cmocka_unit_test(test_call_refuses_overlapping_out),
        cmocka_unit_test(test_call_bag_refuses_overlap_and_stray_pointers),
        cmocka_unit_test(test_dump_kind_out_of_range),
        cmocka_unit_test(test_cache_without_a_folder),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_mean_without_scratch),
        cmocka_unit_test(test_mean_into_empty_out),
        cmocka_unit_test(test_gather_from_empty_dim),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
