/* The op table is searched once per entry point: a compile resolves its
 * signature's op entry (tj_op_find) and passes it to the key, the plan,
 * the dynamic template and the explanation, and a dynamic kernel's calls
 * use the entry its family kept. The library's own calls of tj_op_find are
 * counted by linking this test with -Wl,--wrap=tj_op_find (tests/
 * CMakeLists.txt): nothing in the library counts them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "op.h"
#include "tensorjit.h"

#define D JIT_DIM_DYNAMIC

static atomic_int lookups;

const tj_op_def *__real_tj_op_find(jit_op op);
const tj_op_def *__wrap_tj_op_find(jit_op op);

const tj_op_def *__wrap_tj_op_find(jit_op op)
{
    atomic_fetch_add(&lookups, 1);
    return __real_tj_op_find(op);
}

/* Gather axis 0: data [rows, 4], indices [n] (D for dynamic dims). */
static jit_sig gather_sig(int64_t rows, int64_t n)
{
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = JIT_OP_GATHER;
    s.dtype = JIT_F32;
    s.index_type = JIT_I32;
    s.data_shape = (jit_shape){2, {rows, 4}};
    s.indices_shape = (jit_shape){1, {n}};
    return s;
}

static int setup(void **state)
{
    (void)state;
    jit_shutdown(); /* every compile below a miss */
    atomic_store(&lookups, 0);
    return 0;
}

static void test_a_static_compile_looks_its_op_up_once(void **state)
{
    (void)state;
    jit_sig s = gather_sig(5, 3);
    assert_non_null(jit_compile(&s));
    assert_int_equal(atomic_load(&lookups), 1);
    atomic_store(&lookups, 0);
    assert_non_null(jit_compile(&s)); /* a hit */
    assert_int_equal(atomic_load(&lookups), 1);
}

static void test_a_dynamic_compile_looks_its_op_up_once(void **state)
{
    (void)state;
    jit_sig s = gather_sig(D, D);
    jit_dynamic_fn fn = (jit_dynamic_fn)jit_compile(&s);
    assert_non_null(fn);
    assert_int_equal(atomic_load(&lookups), 1);
}

static void test_a_dynamic_kernels_calls_look_nothing_up(void **state)
{
    (void)state;
    jit_sig s = gather_sig(D, D);
    jit_dynamic_fn fn = (jit_dynamic_fn)jit_compile(&s);
    assert_non_null(fn);
    float data[3 * 4] = {0}, out[2 * 4];
    int32_t indices[2] = {2, 0};
    for (int i = 0; i < 12; i++)
        data[i] = (float)i;
    atomic_store(&lookups, 0);
    assert_int_equal(fn(data, indices, NULL, out, (const int64_t[]){3, 4, 2}), JIT_OK);
    assert_int_equal(fn(data, indices, NULL, out, (const int64_t[]){3, 4, 1}), JIT_OK);
    assert_int_equal(atomic_load(&lookups), 0);
    assert_memory_equal(out, &data[8], 4 * sizeof(float)); /* row indices[0] */
}

static void test_the_other_entry_points_look_their_op_up_once(void **state)
{
    (void)state;
    jit_sig st = gather_sig(5, 3), dy = gather_sig(D, D);
    jit_shape out;
    assert_int_equal(jit_output_shape(&dy, &out), 0);
    assert_int_equal(atomic_load(&lookups), 1);
    atomic_store(&lookups, 0);
    char *text = jit_explain(&dy);
    assert_non_null(text);
    jit_free(text);
    assert_int_equal(atomic_load(&lookups), 1);
    atomic_store(&lookups, 0);
    assert_non_null(jit_compile_async(&st));
    assert_int_equal(atomic_load(&lookups), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_static_compile_looks_its_op_up_once, setup),
        cmocka_unit_test_setup(test_a_dynamic_compile_looks_its_op_up_once, setup),
        cmocka_unit_test_setup(test_a_dynamic_kernels_calls_look_nothing_up, setup),
        cmocka_unit_test_setup(test_the_other_entry_points_look_their_op_up_once, setup),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
