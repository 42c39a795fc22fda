/* The kernel limit: holds and releases, least-recently-released order, the
 * count and byte caps, what a released pointer does when called, that no
 * released pointer is ever handed out again, kernels that are never
 * released (made without a cap, reference, tiered), the environment
 * variables, and threads compiling, calling and releasing under a small
 * cap (run under TSan in CI). */
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

#define ROWS_MAX 64
#define TAKE 5
#define COLS 4

static float gdata[ROWS_MAX * COLS];
static const int32_t gidx[TAKE] = {3, 0, 7, 1, 5};

/* A GatherND signature per `rows` (8..ROWS_MAX): a distinct kernel each. */
static jit_gather_nd_sig gsig(int rows)
{
    return (jit_gather_nd_sig){.dtype = JIT_F32, .index_type = JIT_I32,
                               .data_shape = {2, {rows, COLS}},
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

static void *ptr(jit_gather_nd_fn fn)
{
    return (void *)(uintptr_t)fn;
}

/* The generic calls given a released kernel (of any op: the kernel is
 * looked up before its op is) answer as its pointer does:
 * JIT_STATUS_RELEASED and "released under the kernel limit", not
 * JIT_STATUS_BAD_POINTER; jit_units and jit_info, which return no status,
 * -1 and the same message. No buffer is read or written: they may be
 * anything. */
static void assert_generic_released(jit_kernel k)
{
    static const char why[] = "released under the kernel limit";
    static const int64_t dims[4] = {8, COLS, TAKE, 1};
    float out[TAKE * COLS], w[TAKE];
    int64_t off[2] = {0, 2};
    memset(out, 0x5a, sizeof out);
#define RELEASED(call)                                                                      \
    do {                                                                                    \
        assert_int_equal(call, JIT_STATUS_RELEASED);                                        \
        assert_non_null(strstr(jit_last_error(), why));                                     \
    } while (0)
    RELEASED(jit_call(k, gdata, gidx, NULL, out));
    RELEASED(jit_call_dynamic(k, gdata, gidx, NULL, out, dims));
    RELEASED(jit_validate(k, gidx));
    RELEASED(jit_validate_part(k, gidx, 0, 2));
    RELEASED(jit_run_range(k, gdata, gidx, NULL, out, 0, 1));
    RELEASED(jit_call_bag(k, gdata, gidx, off, NULL, out));
    RELEASED(jit_call_bag_dynamic(k, gdata, gidx, off, w, out, dims));
    RELEASED(jit_validate_bag(k, gidx, off));
    RELEASED(jit_validate_bag_part(k, gidx, off, 0, 2));
    RELEASED(jit_run_range_bag(k, gdata, gidx, off, NULL, out, 0, 1));
#undef RELEASED
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(((unsigned char *)out)[i], 0x5a);
    assert_int_equal(jit_units(k), -1);
    assert_non_null(strstr(jit_last_error(), why));
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), -1);
    assert_non_null(strstr(jit_last_error(), why));
}

/* A released pointer answers JIT_STATUS_RELEASED, writes nothing, says why;
 * so do the generic calls and the typed ones of the parts API. */
static void assert_released(jit_gather_nd_fn fn)
{
    float out[TAKE * COLS];
    memset(out, 0x5a, sizeof out);
    assert_int_equal(fn(gdata, gidx, out), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released"));
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(((unsigned char *)out)[i], 0x5a);
    /* -1 and "released", the info left as it was (tensorjit.h, jit_*_info) */
    jit_kernel_info info, before;
    memset(&info, 0x5a, sizeof info);
    memcpy(&before, &info, sizeof info);
    assert_int_equal(jit_gather_nd_info(fn, &info), -1);
    assert_non_null(strstr(jit_last_error(), "released"));
    assert_memory_equal(&info, &before, sizeof info);
    assert_int_equal(jit_gather_nd_validate(fn, gidx), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    assert_int_equal(jit_gather_nd_run_range(fn, gdata, gidx, out, 0, 1), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    assert_int_equal(jit_gather_nd_units(fn), -1);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    assert_generic_released((jit_kernel)fn);
}

static jit_kernel_stats stats(void)
{
    jit_kernel_stats s;
    assert_int_equal(jit_get_kernel_stats(&s), 0);
    return s;
}

static jit_gather_nd_fn compile_ok(int rows)
{
    jit_gather_nd_sig s = gsig(rows);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    assert_non_null(fn);
    assert_true(gather_ok(fn));
    return fn;
}

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < ROWS_MAX * COLS; i++)
        gdata[i] = (float)i + 0.5f;
    unsetenv("TENSORJIT_MAX_KERNELS");
    unsetenv("TENSORJIT_MAX_CODE_BYTES");
    jit_shutdown();
    return 0;
}

static void test_without_a_limit_nothing_is_released(void **state)
{
    (void)state;
    jit_gather_nd_fn a = compile_ok(8);
    assert_int_equal(jit_gather_nd_release(a), 0);
    /* made without a cap: a direct pointer, which a cap set later leaves alone */
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_gather_nd_fn b = compile_ok(9);
    assert_int_equal(jit_gather_nd_release(b), 0);
    jit_gather_nd_fn c = compile_ok(10);
    assert_int_equal(jit_gather_nd_release(c), 0);
    assert_true(gather_ok(a));
    jit_kernel_stats s = stats();
    assert_int_equal(s.max_kernels, 1);
    assert_int_equal(s.jit_kernels, 1); /* a, never releasable, fills the cap alone */
    assert_int_equal(s.released, 2);
    assert_released(b);
    assert_released(c);
}

static void test_least_recently_released_goes_first(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(2, 0), 0);
    jit_gather_nd_fn a = compile_ok(8), b = compile_ok(9), c = compile_ok(10);
    /* all three held: the cap is exceeded rather than pulling held code */
    jit_kernel_stats s = stats();
    assert_int_equal(s.jit_kernels, 3);
    assert_int_equal(s.held, 3);
    assert_int_equal(s.released, 0);
    assert_true(gather_ok(a) && gather_ok(b) && gather_ok(c));

    assert_int_equal(jit_gather_nd_release(a), 0); /* over the cap: a goes at once */
    assert_released(a);
    s = stats();
    assert_int_equal(s.jit_kernels, 2);
    assert_int_equal(s.released, 1);

    assert_int_equal(jit_gather_nd_release(c), 0); /* idle, within the cap: kept */
    assert_int_equal(jit_gather_nd_release(b), 0);
    assert_true(gather_ok(c) && gather_ok(b));
    s = stats();
    assert_int_equal(s.releasable, 2);
    assert_int_equal(s.held, 0);

    jit_gather_nd_fn d = compile_ok(11); /* c was released before b: c goes */
    assert_released(c);
    assert_true(gather_ok(b));
    /* an idle kernel asked for again is a hit: the same pointer, held again */
    jit_gather_nd_sig sb = gsig(9);
    assert_ptr_equal(ptr(jit_gather_nd_compile(&sb)), ptr(b));
    assert_int_equal(stats().releasable, 0);
    /* a released signature compiles again, to a new pointer */
    jit_gather_nd_fn a2 = compile_ok(8);
    assert_ptr_not_equal(ptr(a2), ptr(a));
    assert_ptr_not_equal(ptr(a2), ptr(c));
    jit_kernel_info info;
    assert_int_equal(jit_gather_nd_info(a2, &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_JIT);
    assert_string_equal(info.why, "");
    assert_true(gather_ok(d));
}

static void test_byte_cap(void **state)
{
    (void)state;
    jit_gather_nd_fn a;
    assert_int_equal(jit_set_kernel_limit(0, 1), 0);
    a = compile_ok(8);
    int64_t one = stats().code_bytes;
    assert_true(one > 0);
    /* room for the bytes of two such kernels (they differ by a few bytes) */
    assert_int_equal(jit_set_kernel_limit(0, 2 * one + one / 2), 0);
    jit_gather_nd_fn b = compile_ok(9), c = compile_ok(10);
    assert_int_equal(stats().released, 0);
    assert_int_equal(jit_gather_nd_release(b), 0);
    assert_released(b);
    jit_kernel_stats s = stats();
    assert_int_equal(s.released, 1);
    assert_true(s.code_bytes <= 2 * one + one / 2);
    assert_int_equal(s.max_code_bytes, 2 * one + one / 2);
    assert_true(gather_ok(a) && gather_ok(c));
    /* lowering the cap releases idle kernels at once */
    assert_int_equal(jit_gather_nd_release(c), 0);
    assert_true(gather_ok(c));
    assert_int_equal(jit_set_kernel_limit(0, one), 0);
    assert_released(c);
    assert_true(gather_ok(a));
}

static int seen(void *const *list, int n, void *p)
{
    for (int i = 0; i < n; i++)
        if (list[i] == p)
            return 1;
    return 0;
}

/* The JIT frees a released kernel's code and is free to put the next one
 * there; the pointer handed out must still be new every time. */
static void test_a_released_pointer_is_never_handed_out_again(void **state)
{
    (void)state;
    enum { ROUNDS = 120 };
    void *given[ROUNDS];
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    for (int i = 0; i < ROUNDS; i++) {
        jit_gather_nd_fn fn = compile_ok(8 + i % 3);
        assert_false(seen(given, i, ptr(fn)));
        given[i] = ptr(fn);
        assert_int_equal(jit_gather_nd_release(fn), 0);
    }
    jit_kernel_stats s = stats();
    assert_int_equal(s.released, ROUNDS - 1);
    assert_int_equal(s.jit_kernels, 1);
    for (int i = 0; i < ROUNDS - 1; i++)
        assert_released((jit_gather_nd_fn)(uintptr_t)given[i]);
}

/* A pointer handed out through a stub (under a cap, or tiered) outlives
 * jit_shutdown(): called afterwards it returns JIT_STATUS_RELEASED, writes
 * nothing and says the kernel was freed; kernels compiled after the
 * shutdown never get its address (the stubs were unmapped and the next
 * arena could land where they were); jit_epoch() counts the shutdowns. */
static void test_stub_pointers_outlive_shutdown(void **state)
{
    (void)state;
    enum { LATER = 40 };
    assert_int_equal(jit_set_kernel_limit(2, 0), 0);
    jit_gather_nd_fn a = compile_ok(8);
    jit_gather_nd_sig ts = gsig(21);
    jit_gather_nd_fn tiered = jit_gather_nd_compile_async(&ts);
    assert_non_null(tiered);
    assert_true(gather_ok(tiered));
    uint64_t epoch = jit_epoch();
    assert_true(epoch >= 1);
    jit_shutdown();
    assert_int_equal(jit_epoch(), epoch + 1);
    jit_gather_nd_fn old[2] = {a, tiered};
    for (int i = 0; i < 2; i++) {
        float out[TAKE * COLS];
        memset(out, 0x5a, sizeof out);
        assert_int_equal(old[i](gdata, gidx, out), JIT_STATUS_RELEASED);
        assert_non_null(strstr(jit_last_error(), "freed by jit_shutdown"));
        for (size_t b = 0; b < sizeof out; b++)
            assert_int_equal(((unsigned char *)out)[b], 0x5a);
        jit_kernel_info info;
        assert_int_equal(jit_gather_nd_info(old[i], &info), -1);
    }
    assert_int_equal(jit_set_kernel_limit(2, 0), 0);
    for (int i = 0; i < LATER; i++) {
        jit_gather_nd_fn fn = compile_ok(8 + i % 13);
        assert_true(ptr(fn) != ptr(a) && ptr(fn) != ptr(tiered));
        assert_int_equal(jit_gather_nd_release(fn), 0);
    }
    jit_shutdown();
    assert_int_equal(jit_epoch(), epoch + 2);
    assert_int_equal(a(gdata, gidx, NULL), JIT_STATUS_RELEASED);
}

static void test_release_errors(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(-1, 0), -1);
    assert_non_null(strstr(jit_last_error(), "max_kernels -1"));
    assert_int_equal(jit_set_kernel_limit(0, -5), -1);
    assert_non_null(strstr(jit_last_error(), "max_code_bytes -5"));
    assert_int_equal(jit_get_kernel_stats(NULL), -1);

    assert_int_equal(jit_gather_nd_release(NULL), -1);
    assert_non_null(strstr(jit_last_error(), "NULL"));
    assert_int_equal(jit_gather_nd_release((jit_gather_nd_fn)(uintptr_t)gather_ok), -1);
    assert_non_null(strstr(jit_last_error(), "not a GatherND kernel"));

    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_gather_nd_fn a = compile_ok(8);
    assert_int_equal(jit_scatter_update_release((jit_scatter_update_fn)(uintptr_t)a), -1);
    assert_non_null(strstr(jit_last_error(), "this is a GatherND kernel, not a ScatterUpdate one"));
    jit_gather_nd_fn again = compile_ok(8); /* two holds */
    assert_ptr_equal(ptr(again), ptr(a));
    assert_int_equal(jit_gather_nd_release(a), 0);
    assert_int_equal(jit_gather_nd_release(a), 0);
    assert_int_equal(jit_gather_nd_release(a), -1);
    assert_non_null(strstr(jit_last_error(), "more times than it was compiled"));
    assert_true(gather_ok(a)); /* idle, within the cap */
    compile_ok(9);
    assert_released(a);
    assert_int_equal(jit_gather_nd_release(a), -1);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit already"));
    assert_int_equal(jit_gather_nd_units(a), -1);
}

static void test_reference_and_tiered_kernels_stay(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_gather_nd_sig rs = gsig(20);
    rs.engine = JIT_ENGINE_REFERENCE;
    jit_gather_nd_fn ref = jit_gather_nd_compile(&rs);
    assert_non_null(ref);
    jit_kernel_stats st = stats(); /* a reference kernel is no JIT kernel */
    assert_int_equal(st.jit_kernels, 0);
    assert_int_equal(st.held, 0);
    assert_int_equal(jit_gather_nd_release(ref), 0);

    jit_gather_nd_sig ts = gsig(21);
    jit_gather_nd_fn tiered = jit_gather_nd_compile_async(&ts);
    assert_non_null(tiered);
    assert_true(gather_ok(tiered));
    assert_int_equal(jit_gather_nd_release(tiered), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(jit_gather_nd_release(compile_ok(8 + i)), 0);
    assert_true(gather_ok(ref));
    assert_true(gather_ok(tiered));
}

/* Without stubs (other architectures; here TENSORJIT_FAULT=stub) a kernel
 * could not be released without its address coming back: none is. */
static void test_without_stubs_nothing_is_released(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_FAULT", "stub");
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_gather_nd_fn a = compile_ok(8), b = compile_ok(9);
    support_unsetenv("TENSORJIT_FAULT");
    assert_int_equal(jit_gather_nd_release(a), 0);
    assert_int_equal(jit_gather_nd_release(b), 0);
    jit_kernel_stats s = stats();
    assert_int_equal(s.jit_kernels, 2); /* over the cap, but nothing may go */
    assert_int_equal(s.released, 0);
    assert_int_equal(s.releasable, 0);
    assert_true(gather_ok(a) && gather_ok(b));
}

/* A released ScatterUpdate kernel answers JIT_STATUS_RELEASED too, and
 * writes nothing. */
static void test_released_scatter_kernel(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_scatter_update_sig s = {.axis = 0, .dtype = JIT_F32, .index_type = JIT_I32,
                                .data_shape = {2, {8, COLS}}, .indices_shape = {1, {1}},
                                .updates_shape = {2, {1, COLS}}};
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    assert_non_null(fn);
    float upd[COLS] = {-1, -2, -3, -4}, out[8 * COLS];
    int32_t idx = 2;
    assert_int_equal(fn(gdata, &idx, upd, out), JIT_OK);
    assert_true(out[2 * COLS] == -1 && out[0] == gdata[0]);
    assert_int_equal(jit_scatter_update_release(fn), 0);
    assert_int_equal(jit_gather_nd_release(compile_ok(8)), 0); /* over the cap: fn goes */
    assert_int_equal(stats().released, 1);
    memset(out, 0x5a, sizeof out);
    assert_int_equal(fn(gdata, &idx, upd, out), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released"));
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(((unsigned char *)out)[i], 0x5a);
    assert_int_equal(jit_scatter_update_release(fn), -1);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit already"));
}

/* A released kernel of each ABI the generic calls dispatch on (an
 * embedding bag's, a dynamic one's) answers them JIT_STATUS_RELEASED with
 * the reason, as its own pointer does, not JIT_STATUS_BAD_POINTER (which
 * says "not a kernel of this library" or a NULL buffer). */
static void test_released_kernels_through_the_generic_calls(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    float table[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}}, out[2][2];
    int64_t idx[4] = {0, 0, 1, 1}, off[2] = {0, 2};
    jit_embedding_bag_offsets_sig bs = {.dtype = JIT_F32, .index_type = JIT_I64,
                                        .table_shape = {2, {4, 2}}, .indices_shape = {1, {4}},
                                        .offsets_shape = {1, {2}}};
    jit_embedding_bag_offsets_fn bag = jit_embedding_bag_offsets_compile(&bs);
    assert_non_null(bag);
    jit_kernel kb = (jit_kernel)bag;
    assert_int_equal(jit_call_bag(kb, table, idx, off, NULL, out), JIT_OK);
    assert_int_equal(jit_embedding_bag_offsets_release(bag), 0);

    jit_sig ds = {.op = JIT_OP_GATHER_ND, .dtype = JIT_F32, .index_type = JIT_I32,
                  .data_shape = {2, {JIT_DIM_DYNAMIC, COLS}},
                  .indices_shape = {2, {JIT_DIM_DYNAMIC, 1}}};
    jit_kernel kd = jit_compile(&ds); /* over the cap once released: the bag goes */
    assert_non_null(kd);
    const int64_t dims[4] = {8, COLS, TAKE, 1};
    float gout[TAKE * COLS];
    assert_int_equal(jit_call_dynamic(kd, gdata, gidx, NULL, gout, dims), JIT_OK);
    assert_int_equal(jit_release(kd), 0);
    assert_int_equal(jit_gather_nd_release(compile_ok(8)), 0); /* and the dynamic one */
    assert_int_equal(stats().released, 2);

    memset(out, 0x5a, sizeof out);
    assert_int_equal(bag(table, idx, off, NULL, (float *)out), JIT_STATUS_RELEASED);
    assert_int_equal(jit_call_bag(kb, table, idx, off, NULL, out), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    assert_int_equal(jit_validate_bag(kb, idx, off), JIT_STATUS_RELEASED);
    assert_int_equal(jit_run_range_bag(kb, table, idx, off, NULL, out, 0, 2),
                     JIT_STATUS_RELEASED);
    assert_int_equal(jit_embedding_bag_offsets_validate(bag, idx, off), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(((unsigned char *)out)[i], 0x5a);
    assert_generic_released(kb);

    assert_int_equal(((jit_dynamic_fn)kd)(gdata, gidx, NULL, gout, dims), JIT_STATUS_RELEASED);
    assert_int_equal(jit_call_dynamic(kd, gdata, gidx, NULL, gout, dims), JIT_STATUS_RELEASED);
    assert_non_null(strstr(jit_last_error(), "released under the kernel limit"));
    assert_generic_released(kd);
}

static void test_limits_from_the_environment(void **state)
{
    (void)state;
    setenv("TENSORJIT_MAX_CODE_BYTES", "lots", 1); /* ignored: not a number */
    support_setenv("TENSORJIT_MAX_KERNELS", "2");
    jit_gather_nd_fn a = compile_ok(8);
    jit_kernel_stats s = stats();
    assert_int_equal(s.max_kernels, 2);
    assert_int_equal(s.max_code_bytes, 0);
    assert_int_equal(jit_gather_nd_release(a), 0);
    assert_int_equal(jit_gather_nd_release(compile_ok(9)), 0);
    assert_int_equal(jit_gather_nd_release(compile_ok(10)), 0);
    assert_released(a);
    unsetenv("TENSORJIT_MAX_KERNELS");
    unsetenv("TENSORJIT_MAX_CODE_BYTES");
    jit_shutdown(); /* the limit goes with the library's state */
    compile_ok(8);
    assert_int_equal(stats().max_kernels, 0);
}

enum { THREADS = 4, ITERATIONS = 60, SIGS = 6 };

static void *churn(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
    long bad = 0;
    for (int i = 0; i < ITERATIONS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        jit_gather_nd_sig s = gsig(8 + (int)(x % SIGS));
        s.threads = (int)((x >> 32) % 3); /* 0, 1 and 2: one kernel, aliases made and dropped */
        jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
        /* held: no other thread's compile or release may take it away */
        bad += !fn || !gather_ok(fn) || !gather_ok(fn);
        bad += fn && jit_gather_nd_release(fn) != 0;
    }
    return (void *)bad;
}

/* A signature for threads its kernel would not use gets the one-thread
 * kernel (one hold per compile); when that kernel is released, both
 * signatures compile anew, to one new pointer. */
static void test_threads_unused_share_a_released_kernel(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(1, 0), 0);
    jit_gather_nd_sig s = gsig(8);
    s.threads = 2;
    jit_gather_nd_fn two = jit_gather_nd_compile(&s);
    s.threads = 1;
    jit_gather_nd_fn one = jit_gather_nd_compile(&s);
    assert_non_null(two);
    assert_ptr_equal(ptr(two), ptr(one));
    s.threads = 2; /* the alias: a hit, one more hold */
    assert_ptr_equal(ptr(jit_gather_nd_compile(&s)), ptr(one));
    assert_int_equal(stats().jit_kernels, 1);
    assert_int_equal(jit_gather_nd_release(one), 0);
    assert_int_equal(jit_gather_nd_release(two), 0);
    assert_true(gather_ok(two)); /* held still */
    assert_int_equal(stats().releasable, 0);
    assert_int_equal(jit_gather_nd_release(two), 0);
    assert_int_equal(stats().releasable, 1);
    jit_gather_nd_fn other = compile_ok(9); /* over the cap: the shared kernel goes */
    assert_released(two);
    assert_int_equal(stats().released, 1);
    /* the alias went with it: a compile of either count is a new kernel,
     * the same for both (a stale alias would hand out the released one) */
    jit_gather_nd_fn again = jit_gather_nd_compile(&s);
    assert_non_null(again);
    assert_ptr_not_equal(ptr(again), ptr(two));
    assert_true(gather_ok(again));
    assert_ptr_equal(ptr(jit_gather_nd_compile(&s)), ptr(again));
    s.threads = 1;
    assert_ptr_equal(ptr(jit_gather_nd_compile(&s)), ptr(again));
    assert_true(gather_ok(other));
    assert_int_equal(stats().jit_kernels, 2);
}

static void test_threads_compile_call_and_release(void **state)
{
    (void)state;
    assert_int_equal(jit_set_kernel_limit(2, 0), 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    assert_int_equal(bad, 0);
    jit_kernel_stats s = stats();
    assert_int_equal(s.held, 0);
    assert_true(s.jit_kernels <= 2);
    assert_true(s.released > 0);
}

int main(void)
{
#if !defined(__x86_64__)
    return 77; /* kernels can be released only where there are entry stubs */
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_without_a_limit_nothing_is_released, setup),
        cmocka_unit_test_setup(test_least_recently_released_goes_first, setup),
        cmocka_unit_test_setup(test_byte_cap, setup),
        cmocka_unit_test_setup(test_a_released_pointer_is_never_handed_out_again, setup),
        cmocka_unit_test_setup(test_stub_pointers_outlive_shutdown, setup),
        cmocka_unit_test_setup(test_release_errors, setup),
        cmocka_unit_test_setup(test_reference_and_tiered_kernels_stay, setup),
        cmocka_unit_test_setup(test_without_stubs_nothing_is_released, setup),
        cmocka_unit_test_setup(test_released_scatter_kernel, setup),
        cmocka_unit_test_setup(test_released_kernels_through_the_generic_calls, setup),
        cmocka_unit_test_setup(test_limits_from_the_environment, setup),
        cmocka_unit_test_setup(test_threads_unused_share_a_released_kernel, setup),
        cmocka_unit_test_setup(test_threads_compile_call_and_release, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
