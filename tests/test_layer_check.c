/* tools/layer_check.c on its own, with budgets small enough to test: the
 * buffers a check allocates never exceed its max_bytes, whatever the
 * signature's size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "layer_check.h"

static jit_shape shape2(int64_t a, int64_t b)
{
    jit_shape s = {.rank = 2, .dims = {a, b}};
    return s;
}

/* A static signature past its budget is skipped, at any size: one whose
 * buffers total more than int64 holds once wrapped negative and was
 * allocated (and reported as a failure); half of it was skipped. */
static void test_static_over_budget_skipped_at_any_size(void **state)
{
    (void)state;
    for (int64_t rows = INT64_C(1) << 58; rows <= INT64_C(1) << 59; rows *= 2) {
        jit_sig sig = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I64, .axis = 1,
                       .data_shape = shape2(rows, 1), .indices_shape = {.rank = 1, .dims = {2}}};
        jit_shape out;
        assert_int_equal(jit_output_shape(&sig, &out), 0); /* a valid signature */
        tj_check_result r;
        tj_check_layer(&sig, 2, 1, INT64_C(1) << 20, &r);
        assert_int_equal(r.skipped, 1);
        assert_int_equal(r.failed, 0);
        assert_int_equal(r.runs, 0);
        assert_non_null(strstr(r.first_failure, "skipped: "));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_over_budget_skipped_at_any_size),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
