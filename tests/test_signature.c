/* Every signature rule of SPEC sections 1-2: refused, with a message that
 * names the rule, the input and the numbers. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alloc.h"
#include "tensorjit.h"

static jit_gather_nd_sig g_ok(void)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32,
                               .data_shape = {2, {3, 4}}, .indices_shape = {2, {5, 1}}};
}

static jit_scatter_update_sig s_ok(void)
{
    return (jit_scatter_update_sig){.axis = 1, .dtype = JIT_F32, .index_type = JIT_I32,
                                    .data_shape = {3, {2, 3, 4}}, .indices_shape = {1, {5}},
                                    .updates_shape = {3, {2, 5, 4}}};
}

static void refuse_g(jit_gather_nd_sig s, const char *msg)
{
    if (jit_gather_nd_compile(&s))
        fail_msg("accepted; expected: %s", msg);
    assert_string_equal(jit_last_error(), msg);
    jit_shape out;
    assert_int_equal(jit_gather_nd_output_shape(&s, &out), -1);
}

static void refuse_s(jit_scatter_update_sig s, const char *msg)
{
    if (jit_scatter_update_compile(&s))
        fail_msg("accepted; expected: %s", msg);
    assert_string_equal(jit_last_error(), msg);
}

static void test_gather_rules(void **state)
{
    (void)state;
    jit_gather_nd_sig s = g_ok();
    assert_non_null(jit_gather_nd_compile(&s));
    s = g_ok(), s.opset = 7;
    refuse_g(s, "opset=7 must be 5 or 8");
    s = g_ok(), s.dtype = JIT_DTYPE_UNSET;
    refuse_g(s, "data element type is not set");
    s = g_ok(), s.dtype = JIT_U4;
    refuse_g(s, "data element type u4 is a sub-byte type; tensorjit moves whole bytes (1, 2, 4 "
                "or 8 per element)");
    s = g_ok(), s.dtype = (jit_dtype)99;
    refuse_g(s, "data element type 99 is not a known type");
    s = g_ok(), s.index_type = JIT_F16;
    refuse_g(s, "indices element type f16 must be an integer type (i8, u8, i16, u16, i32, u32, "
                "i64, u64)");
    s = g_ok(), s.index_type = JIT_BOOL;
    refuse_g(s, "indices element type bool must be an integer type (i8, u8, i16, u16, i32, u32, "
                "i64, u64)");
    s = g_ok(), s.index_policy = (jit_index_policy)9;
    refuse_g(s, "index_policy=9 is not a known policy");
    s = g_ok(), s.data_shape.rank = 0;
    refuse_g(s, "rank(data)=0 (a scalar) must be at least 1");
    s = g_ok(), s.indices_shape.rank = 33;
    refuse_g(s, "rank(indices)=33 exceeds the maximum rank 32");
    s = g_ok(), s.data_shape.dims[1] = -4;
    refuse_g(s, "data.shape[1]=-4 must not be negative");
    s = g_ok(), s.batch_dims = -1;
    refuse_g(s, "batch_dims=-1 must not be negative");
    s = g_ok(), s.batch_dims = 2;
    refuse_g(s, "batch_dims=2 must be less than rank(indices)=2");
    s = g_ok(), s.batch_dims = 1, s.indices_shape = (jit_shape){3, {3, 2, 1}},
    s.data_shape = (jit_shape){1, {3}};
    refuse_g(s, "batch_dims=1 must be less than rank(data)=1");
    s = g_ok(), s.batch_dims = 1;
    refuse_g(s, "data.shape[0]=3 must equal indices.shape[0]=5 (batch dimension 0 of "
                "batch_dims=1)");
    s = g_ok(), s.indices_shape.dims[1] = 3;
    refuse_g(s, "indices.shape[-1]=3 plus batch_dims=0 must not exceed rank(data)=2");
    s = g_ok(), s.data_shape = (jit_shape){2, {INT64_C(1) << 40, INT64_C(1) << 30}};
    refuse_g(s, "data of shape [1099511627776,1073741824] with 4-byte elements has more bytes "
                "than int64 holds");
    /* output rank = (32-1) + (32-0) */
    s = g_ok(), s.data_shape.rank = 32, s.indices_shape.rank = 32;
    for (int i = 0; i < 32; i++)
        s.data_shape.dims[i] = s.indices_shape.dims[i] = 1;
    s.indices_shape.dims[31] = 0;
    refuse_g(s, "output rank 63 (rank(indices)-1 plus rank(data)-batch_dims-0) exceeds the "
                "maximum rank 32");
    assert_null(jit_gather_nd_compile(NULL));
    assert_string_equal(jit_last_error(), "the GatherND signature is NULL");
}

static void test_gather_partial_product_overflow(void **state)
{
    (void)state;
    /* total bytes are 0 (a zero dim), yet a batch alone overflows */
    jit_gather_nd_sig s = {.dtype = JIT_F64, .index_type = JIT_I64,
                           .data_shape = {3, {0, INT64_C(1) << 62, 4}},
                           .indices_shape = {2, {2, 1}}};
    assert_null(jit_gather_nd_compile(&s));
    assert_non_null(strstr(jit_last_error(), "int64"));
}

static void test_scatter_rules(void **state)
{
    (void)state;
    jit_scatter_update_sig s = s_ok();
    assert_non_null(jit_scatter_update_compile(&s));
    s = s_ok(), s.updates_dtype = JIT_U32;
    refuse_s(s, "updates element type u32 must equal data element type f32");
    s = s_ok(), s.axis_type = JIT_F32;
    refuse_s(s, "axis element type f32 must be an integer type (i8, u8, i16, u16, i32, u32, i64, "
                "u64)");
    s = s_ok(), s.axis_shape = (jit_shape){1, {2}};
    refuse_s(s, "axis must be a scalar or a 1-D tensor of one element, got shape [2]");
    s = s_ok(), s.axis_shape = (jit_shape){1, {1}};
    assert_non_null(jit_scatter_update_compile(&s));
    s = s_ok(), s.axis = 3;
    refuse_s(s, "axis=3 must be in [-rank(data), rank(data)-1] = [-3, 2]");
    s = s_ok(), s.axis = -4;
    refuse_s(s, "axis=-4 must be in [-rank(data), rank(data)-1] = [-3, 2]");
    s = s_ok(), s.updates_shape.rank = 2;
    refuse_s(s, "rank(updates)=2 must equal rank(indices)+rank(data)-1=3 (expected updates "
                "shape [2,5,4] for axis 1)");
    s = s_ok(), s.updates_shape.dims[2] = 5;
    refuse_s(s, "updates.shape[2]=5 must equal 4 (expected updates shape [2,5,4] = "
                "data.shape[:1] + indices.shape + data.shape[2:])");
    s = s_ok(), s.data_shape.rank = 0, s.axis = 0;
    refuse_s(s, "rank(data)=0 (a scalar) must be at least 1");
    s = s_ok(), s.index_type = JIT_F64;
    refuse_s(s, "indices element type f64 must be an integer type (i8, u8, i16, u16, i32, u32, "
                "i64, u64)");
    /* negative axis means the same kernel as its positive spelling */
    jit_scatter_update_sig a = s_ok(), b = s_ok();
    b.axis = -2;
    assert_ptr_equal((void *)(uintptr_t)jit_scatter_update_compile(&a),
                     (void *)(uintptr_t)jit_scatter_update_compile(&b));
}

/* The generic signature of each new op, valid as it stands. */
static jit_sig gather_ok(void)
{
    return (jit_sig){.op = JIT_OP_GATHER, .axis = 1, .batch_dims = 1, .dtype = JIT_F32,
                     .index_type = JIT_I32, .data_shape = {3, {2, 3, 4}},
                     .indices_shape = {2, {2, 5}}};
}

static jit_sig gather_elements_ok(void)
{
    return (jit_sig){.op = JIT_OP_GATHER_ELEMENTS, .axis = 1, .dtype = JIT_F32,
                     .index_type = JIT_I64, .data_shape = {2, {3, 3}},
                     .indices_shape = {2, {3, 7}}};
}

static jit_sig scatter_nd_ok(void)
{
    return (jit_sig){.op = JIT_OP_SCATTER_ND_UPDATE, .dtype = JIT_F32, .index_type = JIT_I32,
                     .data_shape = {3, {3, 3, 3}}, .indices_shape = {2, {2, 1}},
                     .updates_shape = {3, {2, 3, 3}}};
}

/* Refused by jit_compile and jit_output_shape, with exactly msg. */
static void refuse(jit_sig s, const char *msg)
{
    if (jit_compile(&s))
        fail_msg("accepted; expected: %s", msg);
    assert_string_equal(jit_last_error(), msg);
    jit_shape out;
    assert_int_equal(jit_output_shape(&s, &out), -1);
    assert_string_equal(jit_last_error(), msg);
}

static void *ptr(jit_sig s)
{
    jit_kernel k = jit_compile(&s);
    if (!k)
        fail_msg("refused: %s", jit_last_error());
    return (void *)(uintptr_t)k;
}

static void test_gather_v1_7_8_rules(void **state)
{
    (void)state;
    jit_sig s = gather_ok();
    assert_non_null(jit_compile(&s));
    s = gather_ok(), s.axis = 3;
    refuse(s, "axis=3 must be in [-rank(data), rank(data)-1] = [-3, 2]");
    s = gather_ok(), s.axis = -4;
    refuse(s, "axis=-4 must be in [-rank(data), rank(data)-1] = [-3, 2]");
    s = gather_ok(), s.batch_dims = 2, s.indices_shape = (jit_shape){2, {2, 3}};
    refuse(s, "batch_dims=2 must not exceed axis=1 (both counted from the front)");
    /* -1 is batch_dims 1 of rank-2 indices; with axis 0 that exceeds it */
    s = gather_ok(), s.axis = -3, s.batch_dims = -1;
    refuse(s, "batch_dims=1 must not exceed axis=0 (both counted from the front)");
    s = gather_ok(), s.batch_dims = 3;
    refuse(s, "batch_dims=3 must be in [-rank(indices), rank(indices)] = [-2, 2]");
    s = gather_ok(), s.batch_dims = -3;
    refuse(s, "batch_dims=-3 must be in [-rank(indices), rank(indices)] = [-2, 2]");
    s = gather_ok(), s.opset = 1;
    refuse(s, "batch_dims=1: Gather-1 has no batch_dims (use opset 7 or 8)");
    s = gather_ok(), s.opset = 1, s.batch_dims = 0;
    assert_non_null(jit_compile(&s));
    s = gather_ok(), s.opset = 5;
    refuse(s, "opset=5 must be 1, 7 or 8");
    s = gather_ok(), s.indices_shape.dims[0] = 3;
    refuse(s, "data.shape[0]=2 must equal indices.shape[0]=3 (batch dimension 0 of "
              "batch_dims=1)");
    s = gather_ok(), s.index_type = JIT_F32;
    refuse(s, "indices element type f32 must be an integer type (i8, u8, i16, u16, i32, u32, "
              "i64, u64)");
    s = gather_ok(), s.axis_shape = (jit_shape){1, {2}};
    refuse(s, "axis must be a scalar or a 1-D tensor of one element, got shape [2]");
    s = gather_ok(), s.data_shape.rank = 0, s.axis = 0, s.batch_dims = 0;
    refuse(s, "rank(data)=0 (a scalar) must be at least 1");
    /* 0-D indices and every integer index type are Gather's */
    s = gather_ok(), s.batch_dims = 0, s.indices_shape.rank = 0, s.index_type = JIT_U16;
    assert_non_null(jit_compile(&s));
}

static void test_gather_elements_rules(void **state)
{
    (void)state;
    jit_sig s = gather_elements_ok();
    assert_non_null(jit_compile(&s));
    s = gather_elements_ok(), s.indices_shape = (jit_shape){2, {2, 1}};
    refuse(s, "indices.shape[0]=2 must equal data.shape[0]=3 (every dimension but axis 1); "
              "torch.gather's rule, no larger, is the signature's torch_dims (CLI: --torch-dims)");
    s = gather_elements_ok(), s.index_type = JIT_U32;
    refuse(s, "indices element type u32: GatherElements takes i32 or i64 indices");
    s = gather_elements_ok(), s.index_type = JIT_I16;
    refuse(s, "indices element type i16: GatherElements takes i32 or i64 indices");
    /* a float too: the op's two types, not every integer type */
    s = gather_elements_ok(), s.index_type = JIT_F32;
    refuse(s, "indices element type f32: GatherElements takes i32 or i64 indices");
    s = gather_elements_ok(), s.axis = -3;
    refuse(s, "axis=-3 must be in [-rank(data), rank(data)-1] = [-2, 1]");
    s = gather_elements_ok(), s.indices_shape = (jit_shape){3, {3, 3, 1}};
    refuse(s, "rank(indices)=3 must equal rank(data)=2");
    s = gather_elements_ok(), s.opset = 7;
    refuse(s, "opset=7 must be 6");
    jit_op_info info;
    assert_int_equal(jit_op_describe(JIT_OP_GATHER_ELEMENTS, &info), 0);
    assert_int_equal(info.index_types, (1u << JIT_I32) | (1u << JIT_I64));
}

static void test_scatter_nd_update_rules(void **state)
{
    (void)state;
    jit_sig s = scatter_nd_ok();
    assert_non_null(jit_compile(&s));
    s = scatter_nd_ok(), s.indices_shape = (jit_shape){2, {2, 4}};
    refuse(s, "indices.shape[-1]=4 must not exceed rank(data)=3");
    s = scatter_nd_ok(), s.updates_shape = (jit_shape){2, {3, 3}};
    refuse(s, "rank(updates)=2 must equal rank(indices)-1+rank(data)-1=3 (expected updates "
              "shape [2,3,3])");
    s = scatter_nd_ok(), s.updates_shape.dims[2] = 2;
    refuse(s, "updates.shape[2]=2 must equal 3 (expected updates shape [2,3,3] = "
              "indices.shape[:-1] + data.shape[1:])");
    s = scatter_nd_ok(), s.updates_dtype = JIT_I32;
    refuse(s, "updates element type i32 must equal data element type f32");
    s = scatter_nd_ok(), s.index_type = JIT_U32;
    refuse(s, "indices element type u32: ScatterNDUpdate takes i32 or i64 indices");
    s = scatter_nd_ok(), s.opset = 12;
    refuse(s, "opset=12 must be 3 or 15");
    s = scatter_nd_ok(), s.indices_shape.rank = 0, s.updates_shape.rank = 0;
    refuse(s, "rank(indices)=0 (a scalar) must be at least 1");
}

/* One full tuple (k = rank(data), one of them) updates a single element:
 * the spec's updates shape is [], and OpenVINO also takes a tensor of one
 * element there (the 1x1 vector of scatter_nd_update.json gives [1]). */
static void test_scatter_nd_update_single_element(void **state)
{
    (void)state;
    jit_sig s = scatter_nd_ok();
    s.indices_shape = (jit_shape){1, {3}};
    s.updates_shape = (jit_shape){0};
    assert_non_null(jit_compile(&s));
    s.updates_shape = (jit_shape){1, {1}};
    assert_non_null(jit_compile(&s));
    s.updates_shape = (jit_shape){2, {1, 1}};
    assert_non_null(jit_compile(&s));
    s.updates_shape = (jit_shape){1, {2}};
    refuse(s, "updates of shape [2] must be a scalar or hold a single element (expected updates "
              "shape [] = indices.shape[:-1] + data.shape[3:])");
    s.updates_shape = (jit_shape){2, {1, 0}};
    refuse(s, "updates of shape [1,0] must be a scalar or hold a single element (expected "
              "updates shape [] = indices.shape[:-1] + data.shape[3:])");
    /* and it writes that element, in place too */
    float data[27] = {0}, upd = 7.0f;
    int32_t idx[3] = {2, 1, 0};
    s.updates_shape = (jit_shape){1, {1}};
    assert_int_equal(jit_call(jit_compile(&s), data, idx, &upd, data), 0);
    for (int i = 0; i < 27; i++)
        assert_true(data[i] == (i == 2 * 9 + 1 * 3 + 0 ? 7.0f : 0.0f));
    /* with more than one tuple the updates' shape is not [] */
    s.indices_shape = (jit_shape){2, {2, 3}};
    refuse(s, "updates.shape[0]=1 must equal 2 (expected updates shape [2] = "
              "indices.shape[:-1] + data.shape[3:])");
}

/* The key is the signature's meaning: spellings of one meaning share a
 * kernel, fields the op does not take are ignored, and the typed calls
 * give the generic call's pointer; a field that changes what the kernel
 * does gives another. */
static void test_new_ops_key(void **state)
{
    (void)state;
    jit_sig a = gather_ok(), b = gather_ok();
    a.axis = -1, b.axis = 2; /* rank(data) 3 */
    assert_ptr_equal(ptr(a), ptr(b));
    a = gather_ok(), b = gather_ok();
    a.batch_dims = -1; /* rank(indices) 2: batch_dims 1 */
    assert_ptr_equal(ptr(a), ptr(b));
    a = gather_ok(), b = gather_ok();
    b.opset = 8;
    assert_ptr_equal(ptr(a), ptr(b));
    b.opset = 7;
    assert_ptr_not_equal(ptr(a), ptr(b));
    b = gather_ok(), b.axis_type = JIT_I64, b.axis_shape = (jit_shape){1, {1}};
    assert_ptr_equal(ptr(a), ptr(b));
    b = gather_ok(), b.index_policy = JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL;
    assert_ptr_not_equal(ptr(a), ptr(b));
    jit_gather_sig typed = {.axis = -2, .batch_dims = 1, .dtype = JIT_F32, .index_type = JIT_I32,
                            .data_shape = a.data_shape, .indices_shape = a.indices_shape};
    assert_ptr_equal((void *)(uintptr_t)jit_gather_compile(&typed), ptr(a));

    a = gather_elements_ok(), b = gather_elements_ok();
    a.axis = -1;
    assert_ptr_equal(ptr(a), ptr(b));
    a.opset = 6, a.batch_dims = 1, a.updates_shape = (jit_shape){1, {4}};
    assert_ptr_equal(ptr(a), ptr(b));
    a = gather_elements_ok(), a.index_type = JIT_I32;
    assert_ptr_not_equal(ptr(a), ptr(b));
    jit_gather_elements_sig ge = {.axis = 1, .dtype = JIT_F32, .index_type = JIT_I64,
                                  .data_shape = b.data_shape, .indices_shape = b.indices_shape};
    assert_ptr_equal((void *)(uintptr_t)jit_gather_elements_compile(&ge), ptr(b));

    a = scatter_nd_ok(), b = scatter_nd_ok();
    a.opset = 15, a.updates_dtype = JIT_F32, a.axis = 2, a.batch_dims = 1; /* 0: the newest */
    assert_ptr_equal(ptr(a), ptr(b));
    a = scatter_nd_ok(), a.opset = 3;
    assert_ptr_not_equal(ptr(a), ptr(b));
    a = scatter_nd_ok(), a.index_policy = JIT_INDEX_ZERO_FILL;
    assert_ptr_not_equal(ptr(a), ptr(b));
    jit_scatter_nd_update_sig sn = {.dtype = JIT_F32, .index_type = JIT_I32,
                                    .data_shape = b.data_shape, .indices_shape = b.indices_shape,
                                    .updates_shape = b.updates_shape};
    assert_ptr_equal((void *)(uintptr_t)jit_scatter_nd_update_compile(&sn), ptr(b));
    jit_shutdown();
}

/* A cached kernel proves its key valid, so a spelling the checks refuse
 * must never share a valid signature's key: else jit_compile would accept
 * it or not depending on what was compiled before. */
static void test_refused_spelling_never_hits_the_cache(void **state)
{
    (void)state;
    jit_shutdown();
    /* GatherND: batch_dims must not be negative (-1 is not q-1 there) */
    jit_sig nd = {.op = JIT_OP_GATHER_ND, .batch_dims = 1, .dtype = JIT_F32,
                  .index_type = JIT_I32, .data_shape = {2, {2, 4}},
                  .indices_shape = {2, {2, 1}}};
    assert_non_null(jit_compile(&nd));
    nd.batch_dims = -1;
    refuse(nd, "batch_dims=-1 must not be negative");
    /* Gather-1: no batch_dims, not even -rank(indices) for 0 */
    jit_sig g = gather_ok();
    g.opset = 1, g.batch_dims = 0;
    assert_non_null(jit_compile(&g));
    g.batch_dims = -2;
    refuse(g, "batch_dims=-2: Gather-1 has no batch_dims (use opset 7 or 8)");
    jit_shutdown();
}

/* Every allocation of the compile path (cache, kernel, JIT engine,
 * closure) fails in turn: the call returns NULL with "out of memory", or a
 * working kernel (the reference one if the JIT could not start, saying
 * why); never a crash or a leak (LeakSanitizer in CI). A failed start is
 * not remembered: the JIT serves again afterwards. */
static void test_allocation_failures(void **state)
{
    (void)state;
    int nulls = 0, fallbacks = 0;
    float data[12] = {0}, out[20]; /* g_ok: data [3,4], indices [5,1] -> out [5,4] */
    int32_t idx[5] = {0, 1, 2, 0, 1};
    for (long n = 1; n < 24; n++) {
        jit_shutdown();
        tj_alloc_fail_after(n);
        jit_gather_nd_sig s = g_ok();
        jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
        tj_alloc_fail_after(0);
        if (!fn) {
            assert_non_null(strstr(jit_last_error(), "out of memory"));
            nulls++;
            continue;
        }
        jit_kernel_info info;
        assert_int_equal(jit_gather_nd_info(fn, &info), 0);
        if (info.engine == JIT_ENGINE_REFERENCE) {
            assert_non_null(strstr(info.why, "out of memory"));
            fallbacks++;
        }
        assert_int_equal(fn(data, idx, out), 0);
    }
    assert_true(nulls > 0);
    /* the same for ScatterUpdate, every policy, both engines */
    for (int pol = 0; pol < JIT_INDEX_POLICY_COUNT; pol++)
        for (int eng = JIT_ENGINE_AUTO; eng <= JIT_ENGINE_REFERENCE; eng++)
            for (long n = 1; n < 24; n++) {
                jit_shutdown();
                jit_scatter_update_sig u = s_ok();
                u.index_policy = (jit_index_policy)pol;
                u.engine = (jit_engine)eng;
                tj_alloc_fail_after(n);
                jit_scatter_update_fn fn = jit_scatter_update_compile(&u);
                tj_alloc_fail_after(0);
                if (!fn) {
                    assert_non_null(strstr(jit_last_error(), "out of memory"));
                    continue;
                }
                static float d[24], upd[40], o[24];
                int32_t ix[5] = {0, 2, 1, 2, 0}; /* axis 1 of data [2,3,4] */
                assert_int_equal(fn(d, ix, upd, o), 0);
            }
    jit_shutdown();
    jit_gather_nd_sig s = g_ok();
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(jit_gather_nd_compile(&s), &info), 0);
#ifdef TJ_WITH_JIT
    assert_true(fallbacks > 0);
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
#endif
    jit_shutdown();
}

/* The element-level byte strides of GatherElements and
 * ScatterElementsUpdate (one level per dimension of indices): a zero dim
 * makes every total 0 while the stride of a dimension before it, in
 * bytes, may still be out of int64's range. Computed unchecked, that was
 * a signed overflow (UBSan) and a wrapped step in the plan; now refused,
 * naming the tensor, the dimension and the shape. */
static void test_element_strides_overflow(void **state)
{
    (void)state;
    const int64_t big = INT64_C(1) << 60; /* 2^60 elements fit; 2^60 8-byte ones do not */
    char want[256];
    /* the case: indices [0,2^61] (2^63 bytes of i32) under f64 */
    jit_sig g = {.op = JIT_OP_GATHER_ELEMENTS, .axis = 1, .dtype = JIT_F64,
                 .index_type = JIT_I32, .data_shape = {2, {0, 1}},
                 .indices_shape = {2, {0, 2 * big}}};
    snprintf(want, sizeof want,
             "indices of shape [0,%" PRId64 "] with 4-byte elements: the stride of dimension 0 "
             "(the bytes of one step along it) overflows int64",
             2 * big);
    refuse(g, want);
    /* only the output's stride overflows */
    g.indices_shape.dims[1] = big;
    snprintf(want, sizeof want,
             "output of shape [0,%" PRId64 "] with 8-byte elements: the stride of dimension 0 "
             "(the bytes of one step along it) overflows int64",
             big);
    refuse(g, want);
    jit_sig u = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .axis = 1, .dtype = JIT_F64,
                 .index_type = JIT_I32, .data_shape = {2, {0, 1}},
                 .indices_shape = {2, {0, big}}, .updates_shape = {2, {0, big}}};
    snprintf(want, sizeof want,
             "updates of shape [0,%" PRId64 "] with 8-byte elements: the stride of dimension 0 "
             "(the bytes of one step along it) overflows int64",
             big);
    refuse(u, want);
    /* i64 indices of f32 data: only the indices' own stride overflows */
    g.dtype = JIT_F32;
    g.index_type = JIT_I64;
    snprintf(want, sizeof want,
             "indices of shape [0,%" PRId64 "] with 8-byte elements: the stride of dimension 0 "
             "(the bytes of one step along it) overflows int64",
             big);
    refuse(g, want);
    /* data's own: [0, 2^60, 1] f64 */
    jit_sig d = {.op = JIT_OP_GATHER_ELEMENTS, .axis = 2, .dtype = JIT_F64,
                 .index_type = JIT_I32, .data_shape = {3, {0, big, 1}},
                 .indices_shape = {3, {0, big, 1}}};
    snprintf(want, sizeof want,
             "data of shape [0,%" PRId64 ",1] with 8-byte elements: the stride of dimension 0 "
             "(the bytes of one step along it) overflows int64",
             big);
    refuse(d, want);
    /* strides of 2^62 bytes fit: the same shapes compile */
    g.indices_shape.dims[1] = big / 2;
    assert_non_null(ptr(g));
    u.indices_shape.dims[1] = u.updates_shape.dims[1] = big / 2;
    assert_non_null(ptr(u));
}

/* A refused dynamic family is remembered with its message: the search
 * behind a refusal (up to 20000 plans, some 40 ms) ran again on every
 * compile of the same family. The repeat plans nothing now, so it
 * allocates nothing: with the next allocation made to fail, it still gives
 * the refusal, not "out of memory planning a dynamic signature". */
static void test_refused_family_remembered(void **state)
{
    (void)state;
    jit_sig s = {.op = JIT_OP_GATHER_ELEMENTS, .dtype = JIT_F32, .index_type = JIT_I32,
                 .data_shape = {2, {JIT_DIM_DYNAMIC, JIT_DIM_DYNAMIC}},
                 .indices_shape = {1, {JIT_DIM_DYNAMIC}}}; /* ranks differ: no shape valid */
    assert_null(jit_compile(&s));
    char first[1024];
    snprintf(first, sizeof first, "%s", jit_last_error());
    assert_non_null(strstr(first, "no shape of this dynamic signature is valid"));
    assert_non_null(strstr(first, "rank(indices)=1 must equal rank(data)=2"));
    for (int round = 0; round < 2; round++) {
        tj_alloc_fail_after(1);
        jit_kernel k = jit_compile(&s);
        tj_alloc_fail_after(0);
        assert_null(k);
        assert_string_equal(jit_last_error(), first);
        tj_alloc_fail_after(1);
        jit_shape out;
        int shape_rc = jit_output_shape(&s, &out);
        tj_alloc_fail_after(0);
        assert_int_equal(shape_rc, -1);
        assert_string_equal(jit_last_error(), first);
        jit_shutdown(); /* a refusal does not depend on the library's state */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_rules),
        cmocka_unit_test(test_gather_partial_product_overflow),
        cmocka_unit_test(test_scatter_rules),
        cmocka_unit_test(test_gather_v1_7_8_rules),
        cmocka_unit_test(test_gather_elements_rules),
        cmocka_unit_test(test_scatter_nd_update_rules),
        cmocka_unit_test(test_scatter_nd_update_single_element),
        cmocka_unit_test(test_new_ops_key),
        cmocka_unit_test(test_refused_spelling_never_hits_the_cache),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_element_strides_overflow),
        cmocka_unit_test(test_refused_family_remembered),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
