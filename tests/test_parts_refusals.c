/* The parts API's refusals (runtime/exec/parts.c): a call of the other
 * argument list (a bag's kernel through jit_validate / jit_run_range, or
 * another kernel through the bag calls) is refused with the call to use
 * named, and a dynamic kernel, which has no fixed units, by every parts
 * call; nothing is written to out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tensorjit.h"

#define FILL 0x5a

static void assert_error_names(const char *what)
{
    if (!strstr(jit_last_error(), what))
        fail_msg("the error '%s' does not name '%s'", jit_last_error(), what);
}

static int untouched(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != FILL)
            return 0;
    return 1;
}

static jit_sig gather_sig(int64_t rows)
{
    jit_sig s = {.op = JIT_OP_GATHER, .dtype = JIT_F32, .index_type = JIT_I32};
    s.data_shape = (jit_shape){2, {rows, 2}};
    s.indices_shape = (jit_shape){1, {2}};
    return s;
}

static void test_bag_kernel_refused_by_the_generic_parts(void **state)
{
    (void)state;
    jit_embedding_bag_offsets_sig t = {.dtype = JIT_F32, .index_type = JIT_I32,
                                       .table_shape = {2, {3, 2}}, .indices_shape = {1, {2}},
                                       .offsets_shape = {1, {1}}};
    jit_embedding_bag_offsets_fn k = jit_embedding_bag_offsets_compile(&t);
    assert_non_null(k);
    float table[6] = {0}, out[2];
    int32_t idx[2] = {0, 2};
    memset(out, FILL, sizeof out);
    assert_int_equal(jit_validate((jit_kernel)k, idx), JIT_STATUS_BAD_SHAPE);
    assert_error_names("call jit_validate_bag");
    assert_int_equal(jit_validate_part((jit_kernel)k, idx, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("call jit_validate_bag");
    assert_int_equal(jit_run_range((jit_kernel)k, table, idx, NULL, out, 0, 1),
                     JIT_STATUS_BAD_SHAPE);
    assert_error_names("call jit_run_range_bag");
    assert_true(untouched((unsigned char *)out, sizeof out));
    assert_int_equal(jit_embedding_bag_offsets_release(k), 0);
}

/* jit_validate_bag_part's own arguments, and its typed forms: a part
 * outside [0, parts) or parts < 1 is refused naming both numbers; a
 * kernel of another bag op through a typed form names both ops. */
static void test_bag_parts_arguments(void **state)
{
    (void)state;
    jit_embedding_bag_offsets_sig t = {.dtype = JIT_F32, .index_type = JIT_I32,
                                       .table_shape = {2, {3, 2}}, .indices_shape = {1, {2}},
                                       .offsets_shape = {1, {2}}};
    jit_embedding_bag_offsets_fn k = jit_embedding_bag_offsets_compile(&t);
    assert_non_null(k);
    int32_t idx[2] = {0, 2}, off[2] = {0, 1}, bad_off[2] = {1, 0};
    const int64_t wrong[][2] = {{-1, 2}, {2, 2}, {0, 0}, {0, -3}};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        assert_int_equal(jit_validate_bag_part((jit_kernel)k, idx, off, wrong[i][0], wrong[i][1]),
                         JIT_STATUS_BAD_SHAPE);
        char said[64];
        snprintf(said, sizeof said, "jit_validate_bag_part: part %lld of %lld",
                 (long long)wrong[i][0], (long long)wrong[i][1]);
        assert_error_names(said);
    }
    assert_int_equal(jit_embedding_bag_offsets_validate_part(k, idx, off, 3, 3),
                     JIT_STATUS_BAD_SHAPE);
    assert_error_names("jit_embedding_bag_offsets_validate_part: part 3 of 3");
    for (int64_t part = 0; part < 3; part++)
        assert_int_equal(jit_embedding_bag_offsets_validate_part(k, idx, off, part, 3), JIT_OK);
    /* offsets {1, 0}: the drop sits between the two parts' slices */
    assert_int_equal(jit_embedding_bag_offsets_validate_part(k, idx, bad_off, 0, 2), JIT_OK);
    assert_int_equal(jit_embedding_bag_offsets_validate_part(k, idx, bad_off, 1, 2),
                     JIT_STATUS_BAD_INDEX);
    assert_error_names("offsets");
    assert_int_equal(jit_embedding_bag_packed_validate_part((jit_embedding_bag_packed_fn)k, idx,
                                                            NULL, 0, 1),
                     JIT_STATUS_BAD_POINTER);
    assert_error_names("an EmbeddingBagOffsets kernel, not an EmbeddingBagPacked one");
    assert_int_equal(jit_embedding_bag_offsets_release(k), 0);
}

static void test_other_kernel_refused_by_the_bag_parts(void **state)
{
    (void)state;
    jit_sig s = gather_sig(3);
    jit_kernel k = jit_compile(&s);
    assert_non_null(k);
    float data[6] = {0}, out[4];
    int32_t idx[2] = {0, 1}, off[1] = {0};
    memset(out, FILL, sizeof out);
    assert_int_equal(jit_validate_bag(k, idx, off), JIT_STATUS_BAD_SHAPE);
    assert_error_names("not an embedding bag's kernel: call jit_validate");
    assert_int_equal(jit_validate_bag_part(k, idx, off, 0, 2), JIT_STATUS_BAD_SHAPE);
    assert_error_names("not an embedding bag's kernel: call jit_validate");
    assert_int_equal(jit_run_range_bag(k, data, idx, off, NULL, out, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("not an embedding bag's kernel: call jit_run_range");
    assert_true(untouched((unsigned char *)out, sizeof out));
    assert_int_equal(jit_release(k), 0);
}

static void test_dynamic_kernel_refused_by_every_parts_call(void **state)
{
    (void)state;
    jit_sig s = gather_sig(JIT_DIM_DYNAMIC);
    jit_kernel k = jit_compile(&s);
    assert_non_null(k);
    float data[6] = {0}, out[4];
    int32_t idx[2] = {0, 1}, off[1] = {0};
    memset(out, FILL, sizeof out);
    assert_int_equal(jit_units(k), -1);
    assert_error_names("no fixed units");
    assert_int_equal(jit_validate(k, idx), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    assert_int_equal(jit_validate_part(k, idx, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    assert_int_equal(jit_run_range(k, data, idx, NULL, out, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    /* the dynamic refusal comes first, whatever the argument list */
    assert_int_equal(jit_validate_bag(k, idx, off), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    assert_int_equal(jit_validate_bag_part(k, idx, off, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    assert_int_equal(jit_run_range_bag(k, data, idx, off, NULL, out, 0, 1), JIT_STATUS_BAD_SHAPE);
    assert_error_names("no fixed units");
    assert_true(untouched((unsigned char *)out, sizeof out));
    assert_int_equal(jit_release(k), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bag_kernel_refused_by_the_generic_parts),
        cmocka_unit_test(test_bag_parts_arguments),
        cmocka_unit_test(test_other_kernel_refused_by_the_bag_parts),
        cmocka_unit_test(test_dynamic_kernel_refused_by_every_parts_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
