/* docs/library.md's embedding-bag example, compiled and run here: the
 * lines between the two "docs/library.md" markers below are the C block
 * that follows the page's "tests/test_bag_doc.c" comment, word for word
 * (test_doc_matches checks), so the page shows code that builds and
 * gives the output its comments state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tensorjit.h"

#ifndef TJ_SOURCE_DIR
#error "TJ_SOURCE_DIR must name the source tree"
#endif


static void test_doc_example(void **state)
{
    (void)state;
    /* docs/library.md: begin */
    float table[5][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}};   /* E = 5 rows of 2 */
    int64_t indices[3] = {0, 2, 4};                                 /* N = 3 lookups */
    int64_t offsets[3] = {0, 2, 3};            /* B = 3 bags: {0, 2}, {4}, {} (empty) */
    float out[3][2];

    jit_embedding_bag_offsets_sig sig = {
        .dtype = JIT_F32, .index_type = JIT_I64, .reduction = JIT_REDUCTION_SUM,
        .table_shape = {2, {5, 2}}, .indices_shape = {1, {3}}, .offsets_shape = {1, {3}},
    };
    jit_embedding_bag_offsets_fn bag = jit_embedding_bag_offsets_compile(&sig);
    int status = bag(table, indices, offsets, NULL, out);  /* weights: NULL (none) */
    /* status JIT_OK; out = {{4, 6}, {8, 9}, {0, 0}} */
    status = jit_call_bag((jit_kernel)bag, table, indices, offsets, NULL, out); /* the same */

    /* one kernel for every E, N and B: the generic signature, the table in
     * data_shape, the offsets in updates_shape, B bounded by updates_bound */
    jit_sig dyn = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .dtype = JIT_F32,
                   .index_type = JIT_I64, .reduction = JIT_REDUCTION_SUM,
                   .data_shape = {2, {JIT_DIM_DYNAMIC, 2}},
                   .indices_shape = {1, {JIT_DIM_DYNAMIC}},
                   .updates_shape = {1, {JIT_DIM_DYNAMIC}}, .updates_bound = {1024}};
    jit_embedding_bag_dynamic_fn any = (jit_embedding_bag_dynamic_fn)jit_compile(&dyn);
    int64_t dims[4] = {5, 2, 3, 2};        /* table's E and 2, indices' N, offsets' B */
    status = any(table, indices, offsets, NULL, out, dims);     /* the first two bags */
    /* status JIT_OK; out[0] = {4, 6}, out[1] = {8, 9} */
    jit_embedding_bag_offsets_release(bag);
    jit_release((jit_kernel)any);
    /* docs/library.md: end */
    assert_int_equal(status, JIT_OK);
    assert_true(out[0][0] == 4 && out[0][1] == 6 && out[1][0] == 8 && out[1][1] == 9);
}

/* The same example's static calls, checked one by one (the block above
 * keeps only the last status, as a reader's code would). */
static void test_doc_example_statuses(void **state)
{
    (void)state;
    float table[5][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}};
    int64_t indices[3] = {0, 2, 4}, offsets[3] = {0, 2, 3};
    const float want[3][2] = {{4, 6}, {8, 9}, {0, 0}};
    jit_embedding_bag_offsets_sig sig = {
        .dtype = JIT_F32, .index_type = JIT_I64, .reduction = JIT_REDUCTION_SUM,
        .table_shape = {2, {5, 2}}, .indices_shape = {1, {3}}, .offsets_shape = {1, {3}},
    };
    jit_embedding_bag_offsets_fn bag = jit_embedding_bag_offsets_compile(&sig);
    assert_non_null(bag);
    float out[3][2];
    memset(out, 0xff, sizeof out);
    assert_int_equal(bag(table, indices, offsets, NULL, out), JIT_OK);
    assert_memory_equal(out, want, sizeof out);
    memset(out, 0xff, sizeof out);
    assert_int_equal(jit_call_bag((jit_kernel)bag, table, indices, offsets, NULL, out), JIT_OK);
    assert_memory_equal(out, want, sizeof out);
    assert_int_equal(jit_embedding_bag_offsets_release(bag), 0);
}

/* The lines of `text` after the line holding `begin`, up to the line
 * holding `end`, each without `indent` leading spaces: cut in place. */
static char *between(char *text, const char *begin, const char *end, int indent)
{
    char *from = strstr(text, begin);
    if (!from || !(from = strchr(from, '\n')))
        fail_msg("no '%s'", begin);
    from++;
    char *to = strstr(from, end);
    if (!to)
        fail_msg("no '%s' after '%s'", end, begin);
    while (to > from && to[-1] != '\n')
        to--;
    *to = '\0';
    char *w = from;
    for (const char *r = from; *r;) {
        for (int i = 0; i < indent && *r == ' '; i++)
            r++;
        while (*r && *r != '\n')
            *w++ = *r++;
        if (*r)
            *w++ = *r++;
    }
    *w = '\0';
    return from;
}

static void test_doc_matches(void **state)
{
    (void)state;
    char *doc = support_read_file(TJ_SOURCE_DIR, "docs/library.md"),
         *self = support_read_file(TJ_SOURCE_DIR, "tests/test_bag_doc.c");
    const char *page = between(doc, "<!-- tests/test_bag_doc.c", "```\n", 0);
    if (strncmp(page, "```c\n", 5) != 0)
        fail_msg("docs/library.md: no ```c block after the tests/test_bag_doc.c comment");
    page += 5;
    const char *code = between(self, "/* docs/library.md: begin */", "/* docs/library.md: end */",
                               4);
    if (strcmp(page, code) != 0)
        fail_msg("docs/library.md's bag example differs from tests/test_bag_doc.c's:\n%s\n"
                 "---\n%s", page, code);
    free(doc);
    free(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_example),
        cmocka_unit_test(test_doc_example_statuses),
        cmocka_unit_test(test_doc_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
