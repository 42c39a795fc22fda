/* tools/layer_check.c on its own, with budgets small enough to test: the
 * buffers a check allocates never exceed its max_bytes, whatever the
 * signature's size, and a dynamic family is checked on shapes shrunk to
 * fit rather than skipped or tried at full size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "layer_check.h"

/* The bytes of a shape's elements, the test's own count (in double: the
 * shapes here stay far below 2^53). */
static double shape_bytes(const jit_shape *s, jit_dtype t)
{
    double n = jit_dtype_size(t);
    for (int i = 0; i < s->rank; i++)
        n *= (double)s->dims[i];
    return n;
}

/* What a check of a concrete signature allocates: its inputs and two
 * outputs (the JIT's and the reference's). */
static double check_bytes(const jit_sig *sig)
{
    jit_op_info op;
    jit_shape out;
    assert_int_equal(jit_op_describe(sig->op, &op), 0);
    assert_int_equal(jit_output_shape(sig, &out), 0);
    double n = shape_bytes(&sig->data_shape, sig->dtype) +
               shape_bytes(&sig->indices_shape, sig->index_type) +
               2 * shape_bytes(&out, sig->dtype);
    if (op.has_updates)
        n += shape_bytes(&sig->updates_shape, sig->dtype);
    return n;
}

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

/* Every shape a dynamic check picked fits max_bytes, and one with
 * elements ran and passed. */
static void expect_within_budget(const tj_dyn_check_result *r, int64_t max_bytes)
{
    assert_true(r->nonempty > 0);
    assert_int_equal(r->total.skipped, 0);
    assert_int_equal(r->total.failed, 0);
    assert_true(r->total.passed > 0);
    for (int i = 0; i < r->shapes; i++) {
        double bytes = check_bytes(&r->shape[i].sig);
        if (bytes > (double)max_bytes)
            fail_msg("shape %d takes %.0f bytes, over the budget of %lld", i, bytes,
                     (long long)max_bytes);
        assert_int_equal(r->shape[i].check.skipped, 0);
    }
}

/* GatherElements of an embedding-like table [64,4] with indices [?,?] on
 * axis 0: dim 1 must be 4, so the only candidates that bind take the
 * table's dims ([64,4], 5120 bytes with the outputs). Under a budget of
 * 2048 the check once listed that shape and skipped it; the axis dim is
 * free and shrinks until the shape fits. */
static void test_dynamic_tied_shape_shrinks_to_fit(void **state)
{
    (void)state;
    jit_sig sig = {.op = JIT_OP_GATHER_ELEMENTS, .dtype = JIT_F32, .index_type = JIT_I64,
                   .data_shape = shape2(64, 4),
                   .indices_shape = shape2(JIT_DIM_DYNAMIC, JIT_DIM_DYNAMIC)};
    const int64_t budget = 2048;
    tj_dyn_check_result r;
    tj_check_dynamic(&sig, 2, 1, budget, &r);
    expect_within_budget(&r, budget);
    for (int i = 0; i < r.shapes; i++)
        assert_int_equal(r.shape[i].sig.indices_shape.dims[1], 4);
}

/* ScatterUpdate of a table [64,4] with indices [?] and updates [?,?] on
 * axis 0: updates must be [n,4] for indices [n], so only the candidates
 * tied to the table's dims bind ([64], [64,4]: 4608 bytes). The two dims
 * equal to 64 shrink together, or the shape would no longer bind. */
static void test_dynamic_equal_dims_shrink_together(void **state)
{
    (void)state;
    jit_sig sig = {.op = JIT_OP_SCATTER_UPDATE, .dtype = JIT_F32, .index_type = JIT_I64,
                   .data_shape = shape2(64, 4),
                   .indices_shape = {.rank = 1, .dims = {JIT_DIM_DYNAMIC}},
                   .updates_shape = shape2(JIT_DIM_DYNAMIC, JIT_DIM_DYNAMIC)};
    const int64_t budget = 3584;
    tj_dyn_check_result r;
    tj_check_dynamic(&sig, 2, 1, budget, &r);
    expect_within_budget(&r, budget);
    for (int i = 0; i < r.shapes; i++)
        assert_int_equal(r.shape[i].sig.updates_shape.dims[0],
                         r.shape[i].sig.indices_shape.dims[0]);
}

/* A family whose static part alone exceeds the budget: no shape is tried
 * (none is listed), and the check says it was skipped, not failed. */
static void test_dynamic_static_part_over_budget_skipped(void **state)
{
    (void)state;
    jit_sig sig = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I64,
                   .data_shape = shape2(1000, 64),
                   .indices_shape = {.rank = 1, .dims = {JIT_DIM_DYNAMIC}}};
    tj_dyn_check_result r;
    tj_check_dynamic(&sig, 2, 1, 4096, &r);
    assert_int_equal(r.shapes, 0);
    assert_int_equal(r.total.skipped, 1);
    assert_int_equal(r.total.failed, 0);
    assert_true(r.over_budget > 0);
    assert_non_null(strstr(r.total.first_failure, "skipped: "));
}

/* The comparison of one run's two outcomes: equal bits pass; outputs that
 * differ only in a NaN's payload, or refusals alike but for the message
 * (the position it names), do not. */
static void test_compare_outcomes(void **state)
{
    (void)state;
    float a[3] = {1.0f, 0.0f, 2.0f}, b[3];
    uint32_t quiet = 0x7fc00000u, payload = 0x7fc00001u; /* two NaNs */
    memcpy(&a[1], &quiet, sizeof quiet);
    memcpy(b, a, sizeof a);
    tj_outcome jit = {JIT_OK, "", a}, ref = {JIT_OK, "", b};
    assert_null(tj_check_compare(&jit, &ref, sizeof a, 1));
    memcpy(&b[1], &payload, sizeof payload);
    assert_string_equal(tj_check_compare(&jit, &ref, sizeof a, 1), "output bytes differ");
    memcpy(b, a, sizeof a);
    jit = (tj_outcome){JIT_STATUS_BAD_INDEX, "offsets[1] = 9 is out of range", a};
    ref = (tj_outcome){JIT_STATUS_BAD_INDEX, "offsets[2] = 9 is out of range", b};
    assert_non_null(strstr(tj_check_compare(&jit, &ref, sizeof a, 1), "messages differ"));
    assert_null(tj_check_compare(&jit, &ref, sizeof a, 0)); /* messages not asked for */
    ref.status = JIT_OK;
    assert_string_equal(tj_check_compare(&jit, &ref, sizeof a, 1), "status differs");
}

/* A bag's check runs hold bad inputs: the last run a bad index, the one
 * before a bad offset (or segment id), each refused alike by both engines;
 * a policy that takes any index (clamp) leaves only the offset refused, and
 * a packed bag has no offsets. */
static void test_bag_runs_hold_bad_offsets_and_indices(void **state)
{
    (void)state;
    static const struct {
        jit_op op;
        jit_index_policy policy;
        int refused;
    } cases[] = {
        {JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_INDEX_ERROR, 2},
        {JIT_OP_EMBEDDING_BAG_OFFSETS, JIT_INDEX_CLAMP, 1},
        {JIT_OP_EMBEDDING_SEGMENTS, JIT_INDEX_ERROR, 2},
        {JIT_OP_EMBEDDING_BAG_PACKED, JIT_INDEX_ERROR, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int packed = cases[i].op == JIT_OP_EMBEDDING_BAG_PACKED;
        int segments = cases[i].op == JIT_OP_EMBEDDING_SEGMENTS;
        jit_sig sig = {.op = cases[i].op, .opset = segments ? 3 : 15,
                       .dtype = JIT_F32, .index_type = JIT_I64, .index_policy = cases[i].policy,
                       .reduction = JIT_REDUCTION_SUM, .data_shape = shape2(10, 3),
                       .indices_shape = packed ? shape2(4, 3) : (jit_shape){1, {12}},
                       .updates_shape = {packed ? 0 : 1, {segments ? 12 : 4}},
                       .num_segments = 5};
        tj_check_result r;
        tj_check_layer(&sig, 6, 7, INT64_C(1) << 20, &r);
        if (r.failed || r.skipped)
            fail_msg("case %zu: %s", i, r.first_failure);
        assert_int_equal(r.passed, 6);
        if (r.refused != cases[i].refused)
            fail_msg("case %zu: %d runs refused, not %d", i, r.refused, cases[i].refused);
    }
}

/* A table of 2^62 empty rows fits any budget (no bytes), and the range
 * of indices a zero-filling policy gives meaning to, [-2E, 2E), is past
 * int64: the check draws them in [0, E) instead of overflowing (UBSan's
 * build once stopped here). */
static void test_bag_huge_table_of_empty_rows(void **state)
{
    (void)state;
    jit_sig sig = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .opset = 15, .dtype = JIT_F32,
                   .index_type = JIT_I64, .index_policy = JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL,
                   .reduction = JIT_REDUCTION_SUM, .data_shape = shape2(INT64_C(1) << 62, 0),
                   .indices_shape = {1, {4}}, .updates_shape = {1, {2}}};
    tj_check_result r;
    tj_check_layer(&sig, 4, 3, INT64_C(1) << 20, &r);
    if (r.failed || r.skipped)
        fail_msg("%s", r.first_failure);
    assert_int_equal(r.passed, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_over_budget_skipped_at_any_size),
        cmocka_unit_test(test_dynamic_tied_shape_shrinks_to_fit),
        cmocka_unit_test(test_dynamic_equal_dims_shrink_together),
        cmocka_unit_test(test_dynamic_static_part_over_budget_skipped),
        cmocka_unit_test(test_compare_outcomes),
        cmocka_unit_test(test_bag_runs_hold_bad_offsets_and_indices),
        cmocka_unit_test(test_bag_huge_table_of_empty_rows),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
