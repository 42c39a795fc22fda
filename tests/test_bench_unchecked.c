/* The bench's unchecked bag kernels (bench/bags_unchecked.c): the same
 * output as the checked kernel on valid inputs, and never served in its
 * place: whichever is compiled first, jit_compile of the signature still
 * refuses a bad index and a bad offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "alloc.h"
#include "backend.h"
#include "bags.h"
#include "op.h"
#include "plan.h"
#include "tensorjit.h"

enum { ROWS = 10, WIDTH = 4, N = 6, BAGS = 2 };

static jit_sig offsets_sig(int64_t rows)
{
    jit_sig s = {0};
    s.op = JIT_OP_EMBEDDING_BAG_OFFSETS;
    s.dtype = JIT_F32;
    s.index_type = JIT_I64;
    s.data_shape = (jit_shape){2, {rows, WIDTH}};
    s.indices_shape = (jit_shape){1, {N}};
    s.updates_shape = (jit_shape){1, {BAGS}};
    return s;
}

static float table[ROWS * WIDTH];

static void fill_table(void)
{
    for (int i = 0; i < ROWS * WIDTH; i++)
        table[i] = (float)(i % 7) * 0.25f + (float)i;
}

/* The checked kernel k refuses an index past the table and offsets out of
 * order, as SPEC 10 asks. */
static void check_refuses(jit_embedding_bag_fn k)
{
    int64_t bad_index[N] = {0, 1, ROWS, 3, 4, 5}, good[N] = {0, 1, 2, 3, 4, 5};
    int64_t offsets[BAGS] = {0, 3}, bad_offsets[BAGS] = {4, 3};
    float out[BAGS * WIDTH];
    assert_int_equal(k(table, bad_index, offsets, NULL, out), JIT_STATUS_BAD_INDEX);
    assert_int_not_equal(k(table, good, bad_offsets, NULL, out), JIT_OK);
}

static void check_pair(jit_embedding_bag_fn checked, jit_embedding_bag_fn unchecked)
{
    int64_t ix[N] = {9, 0, 4, 4, 7, 2}, offsets[BAGS] = {0, 2};
    float want[BAGS * WIDTH], got[BAGS * WIDTH];
    assert_true(checked != unchecked);
    memset(got, 0xa5, sizeof got);
    assert_int_equal(checked(table, ix, offsets, NULL, want), JIT_OK);
    assert_int_equal(unchecked(table, ix, offsets, NULL, got), JIT_OK);
    assert_memory_equal(want, got, sizeof want);
    check_refuses(checked);
}

static void test_unchecked_after_checked(void **state)
{
    (void)state;
    char why[256];
    jit_sig s = offsets_sig(ROWS);
    jit_embedding_bag_fn checked = (jit_embedding_bag_fn)jit_compile(&s);
    assert_non_null(checked);
    jit_embedding_bag_fn unchecked =
        (jit_embedding_bag_fn)tj_bench_compile_unchecked(&s, why, sizeof why);
    if (!unchecked)
        fail_msg("%s", why);
    check_pair(checked, unchecked);
    assert_true((jit_embedding_bag_fn)jit_compile(&s) == checked);
}

static void test_unchecked_before_checked(void **state)
{
    (void)state;
    char why[256];
    jit_sig s = offsets_sig(ROWS);
    jit_shutdown(); /* an empty kernel cache: the unchecked kernel is its first */
    jit_embedding_bag_fn unchecked =
        (jit_embedding_bag_fn)tj_bench_compile_unchecked(&s, why, sizeof why);
    if (!unchecked)
        fail_msg("%s", why);
    jit_embedding_bag_fn checked = (jit_embedding_bag_fn)jit_compile(&s);
    assert_non_null(checked);
    check_pair(checked, unchecked);
}

/* The plan flag leaves the index and offset checks out of the IR (and
 * the null-pointer checks in). */
static void test_unchecked_ir(void **state)
{
    (void)state;
    char why[256];
    jit_sig s = offsets_sig(ROWS);
    tj_plan plan;
    assert_int_equal(tj_sig_plan(tj_sig_op(&s), &s, &plan, NULL), 0);
    char *checked = tj_backend_dump(&plan, TJ_DUMP_IR, why, sizeof why);
    plan.bag.unchecked = 1;
    char *unchecked = tj_backend_dump(&plan, TJ_DUMP_IR, why, sizeof why);
    if (!checked || !unchecked)
        fail_msg("%s", why);
    /* offsets and indices are checked by one call (runtime/exec/bag_scan.c) */
    assert_non_null(strstr(checked, "@tj_rt_bag_scan("));
    assert_null(strstr(unchecked, "@tj_rt_bag_scan("));
    tj_free(checked);
    tj_free(unchecked);
}

/* Only static bag signatures have an unchecked kernel; a bad one is
 * refused with the library's reason. */
static void check_refused(const jit_sig *s, const char *word)
{
    char why[256] = "";
    assert_null(tj_bench_compile_unchecked(s, why, sizeof why));
    if (!strstr(why, word))
        fail_msg("'%s' does not say '%s'", why, word);
}

static void test_unchecked_refusals(void **state)
{
    (void)state;
    jit_sig s = offsets_sig(ROWS);
    s.indices_shape.dims[0] = JIT_DIM_DYNAMIC;
    check_refused(&s, "static");
    s = offsets_sig(ROWS);
    s.updates_shape = (jit_shape){2, {BAGS, 1}};
    check_refused(&s, "offsets");
    s = offsets_sig(ROWS);
    s.op = JIT_OP_GATHER_ND;
    s.updates_shape = (jit_shape){0};
    s.indices_shape = (jit_shape){2, {N, 1}};
    check_refused(&s, "embedding bags");
}

int main(void)
{
    fill_table();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unchecked_after_checked),
        cmocka_unit_test(test_unchecked_before_checked),
        cmocka_unit_test(test_unchecked_refusals),
        cmocka_unit_test(test_unchecked_ir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
