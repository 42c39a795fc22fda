/* jit_explain's words against what is compiled and against the signature.
 * A user trial found, for embedding bags: a dynamic family's plan printing
 * the dynamic search's placeholder instance ("padding row 10", a table of
 * INT64_MAX bytes), a strategy of JIT code where jit_info said the
 * reference kernel serves, a "bag length" for forms that have none, and
 * "B, N, L, E and S" for ops without L or S. The gathers and scatters
 * printed their placeholder counts too. Each test here holds one of those
 * lines to what it must say now. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tensorjit.h"

#define D JIT_DIM_DYNAMIC

static char *explain(const jit_sig *s)
{
    char *text = jit_explain(s);
    if (!text)
        fail_msg("jit_explain: %s", jit_last_error());
    return text;
}

static void expect_in(const char *text, const char *words)
{
    if (!strstr(text, words))
        fail_msg("no '%s' in:\n%s", words, text);
}

static void expect_not_in(const char *text, const char *words)
{
    if (strstr(text, words))
        fail_msg("'%s' in:\n%s", words, text);
}

/* The plan's lines: from "plan (" up to "strategy:" (cut in place). */
static char *plan_of(char *text)
{
    char *plan = strstr(text, "plan (");
    char *end = plan ? strstr(plan, "strategy:") : NULL;
    if (!plan || !end)
        fail_msg("no plan and strategy in:\n%s", text);
    *end = '\0';
    return plan;
}

/* No count of the plan reads as a template's code (a negative number) or
 * as one of the given placeholder numbers (whole tokens). */
static void expect_no_placeholders(const char *plan, const char *const *numbers, int n)
{
    for (const char *p = plan; *p; p++) {
        if (*p == '-' && p[1] >= '0' && p[1] <= '9')
            fail_msg("a negative count in:\n%s", plan);
        if ((*p >= '0' && *p <= '9') && (p == plan || p[-1] < '0' || p[-1] > '9')) {
            size_t len = strspn(p, "0123456789");
            for (int i = 0; i < n; i++)
                if (strlen(numbers[i]) == len && strncmp(p, numbers[i], len) == 0)
                    fail_msg("placeholder %s in:\n%s", numbers[i], plan);
        }
    }
}

/* explain's strategy names the engine jit_info reports for the compiled
 * kernel, and where the reference kernel serves, jit_info's why word for
 * word (one decision, tj_kernel_jit_planned, makes both). */
static void expect_engine_agrees(const jit_sig *s)
{
    jit_kernel k = jit_compile(s);
    assert_non_null(k);
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    char *text = explain(s);
    const char *strategy = strstr(text, "strategy: ");
    assert_non_null(strategy);
    if (info.engine == JIT_ENGINE_REFERENCE)
        expect_in(strategy, info.why);
    else
        expect_not_in(strategy, "engine reference");
    jit_free(text);
    assert_int_equal(jit_release(k), 0);
}

static jit_sig bag_sig(jit_op op)
{
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.dtype = JIT_F32;
    s.index_type = JIT_I64;
    return s;
}

/* EmbeddingBagOffsets with E, N and B the call's, rows of 4 f32. */
static jit_sig offsets_family(void)
{
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS);
    s.data_shape = (jit_shape){2, {D, 4}};
    s.indices_shape = (jit_shape){1, {D}};
    s.updates_shape = (jit_shape){1, {D}};
    return s;
}

/* The trial's signature: padding_idx -1 on a table whose rows are the
 * call's. The padding row is E - 1 of each call; the reference kernel
 * serves (it reads the padding row from the call), and explain says so
 * with jit_info's reason instead of describing JIT code. */
static void test_dynamic_padding_row(void **state)
{
    (void)state;
    jit_sig s = offsets_family();
    s.has_padding_idx = 1;
    s.padding_idx = -1;
    char *text = explain(&s);
    expect_in(text, "plan (an embedding bag, offsets form; B, N and E from each call's dims):\n");
    expect_in(text, "  table rows             E of 4 elements (f32)");
    expect_in(text, "  bags                   B (units");
    expect_in(text, "  lookups                N (offsets B), index policy error\n");
    expect_in(text, "padding row E - 1 (of each call's table)");
    expect_in(text, "strategy: engine reference (the reference kernel, on the caller's thread): "
                    "padding_idx is negative and the table's rows are dynamic");
    expect_not_in(text, "padding row 10");
    expect_not_in(text, "9223372036854775807");
    expect_not_in(text, "vectors"); /* no JIT code described */
    expect_not_in(text, "prefetch");
    expect_no_placeholders(plan_of(text), NULL, 0);
    jit_free(text);
    expect_engine_agrees(&s);
    s.padding_idx = -3; /* E + p for any p */
    text = explain(&s);
    expect_in(text, "padding row E - 3 (of each call's table)");
    jit_free(text);
    s.padding_idx = 2; /* a row of its own: the same in every call, the JIT's */
    text = explain(&s);
    expect_in(text, "padding row 2,");
    expect_not_in(text, "padding_idx is negative");
    jit_free(text);
    expect_engine_agrees(&s);
}

/* A dynamic table's size is the call's: the prefetch rule takes it as
 * large, and says so, not as INT64_MAX bytes. */
static void test_dynamic_table_size(void **state)
{
    (void)state;
    jit_sig s = offsets_family();
    char *text = explain(&s);
    expect_not_in(text, "9223372036854775807");
    jit_kernel k = jit_compile(&s);
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    if (info.engine == JIT_ENGINE_JIT)
        expect_in(text, "(a table of E rows, the call's, taken as >= ");
    jit_free(text);
    assert_int_equal(jit_release(k), 0);
}

/* The lookups line names only the form's own sizes: a bag length for
 * Packed, the offsets for Offsets, the segment ids for Segments; and the
 * attributes only the form's own. */
static void test_static_lookups(void **state)
{
    (void)state;
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS);
    s.data_shape = (jit_shape){2, {1000, 64}};
    s.indices_shape = (jit_shape){1, {4096}};
    s.updates_shape = (jit_shape){1, {256}};
    char *text = explain(&s);
    expect_in(text, "plan (an embedding bag, offsets form):\n");
    expect_in(text, "  lookups                4096 (offsets 256), index policy error\n");
    expect_in(text, "  attributes             weights no, default row none, padding row none, "
                    "include_last_offset 0\n");
    expect_not_in(text, "bag length");
    expect_not_in(text, "from each call's dims");
    jit_free(text);
    s.include_last_offset = 1;
    s.updates_shape.dims[0] = 257;
    text = explain(&s);
    expect_in(text, "  bags                   256 (units");
    expect_in(text, "  lookups                4096 (offsets 257)");
    jit_free(text);

    jit_sig p = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED);
    p.data_shape = (jit_shape){2, {1000, 64}};
    p.indices_shape = (jit_shape){2, {256, 16}};
    text = explain(&p);
    expect_in(text, "  lookups                4096 (bag length 16), index policy error\n");
    expect_in(text, "  attributes             weights no, padding row none\n");
    expect_not_in(text, "default_index");
    expect_not_in(text, "include_last_offset");
    jit_free(text);

    jit_sig g = bag_sig(JIT_OP_EMBEDDING_SEGMENTS);
    g.data_shape = (jit_shape){2, {1000, 64}};
    g.indices_shape = (jit_shape){1, {4096}};
    g.updates_shape = (jit_shape){1, {4096}};
    g.num_segments = 300;
    text = explain(&g);
    expect_in(text, "  bags                   300 (units");
    expect_in(text, "  lookups                4096 (segment ids 4096), index policy error\n");
    expect_in(text, "  attributes             weights no, default row none\n");
    expect_in(text, ", num_segments 300, ");
    expect_not_in(text, "bag length");
    expect_not_in(text, "padding");
    expect_not_in(text, "include_last_offset");
    jit_free(text);
}

/* A dynamic family's dims are SPEC 10's letters for its form, only those
 * that are dynamic, in the plan's title and the JIT's strategy alike. */
static void test_dynamic_dims_named(void **state)
{
    (void)state;
    struct {
        jit_sig sig;
        const char *dims, *lookups, *bags;
    } cases[4];
    cases[0].sig = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS);
    cases[0].sig.data_shape = (jit_shape){2, {100, 16}};
    cases[0].sig.indices_shape = (jit_shape){1, {D}};
    cases[0].sig.updates_shape = (jit_shape){1, {D}};
    cases[0].dims = "B and N", cases[0].lookups = "N (offsets B)", cases[0].bags = "B";
    cases[1].sig = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED);
    cases[1].sig.data_shape = (jit_shape){2, {D, 16}};
    cases[1].sig.indices_shape = (jit_shape){2, {D, 8}};
    cases[1].dims = "B and E", cases[1].lookups = "B x 8 (bag length 8)", cases[1].bags = "B";
    cases[2].sig = bag_sig(JIT_OP_EMBEDDING_BAG_PACKED);
    cases[2].sig.data_shape = (jit_shape){2, {D, 16}};
    cases[2].sig.indices_shape = (jit_shape){2, {4, D}};
    cases[2].dims = "L and E", cases[2].lookups = "4 x L (bag length L)", cases[2].bags = "4";
    cases[3].sig = bag_sig(JIT_OP_EMBEDDING_SEGMENTS);
    cases[3].sig.data_shape = (jit_shape){2, {D, 8}};
    cases[3].sig.indices_shape = (jit_shape){1, {D}};
    cases[3].sig.updates_shape = (jit_shape){1, {D}};
    cases[3].sig.num_segments = D;
    cases[3].dims = "S, N and E", cases[3].lookups = "N (segment ids N)", cases[3].bags = "S";
    for (int i = 0; i < 4; i++) {
        char *text = explain(&cases[i].sig), want[256];
        snprintf(want, sizeof want, "form; %s from each call's dims):\n", cases[i].dims);
        expect_in(text, want);
        snprintf(want, sizeof want, "  lookups                %s, ", cases[i].lookups);
        expect_in(text, want);
        snprintf(want, sizeof want, "  bags                   %s (units", cases[i].bags);
        expect_in(text, want);
        expect_not_in(text, "B, N, L, E and S");
        jit_kernel k = jit_compile(&cases[i].sig);
        jit_kernel_info info;
        assert_int_equal(jit_info(k, &info), 0);
        snprintf(want, sizeof want, "strategy: dynamic (%s from the call's dims) embedding bag",
                 cases[i].dims);
        if (info.engine == JIT_ENGINE_JIT)
            expect_in(text, want);
        expect_no_placeholders(plan_of(text), NULL, 0);
        jit_free(text);
        assert_int_equal(jit_release(k), 0);
        expect_engine_agrees(&cases[i].sig);
    }
}

/* A dynamic num_segments is "?" (with its bound "?:N"), not -1. */
static void test_dynamic_num_segments(void **state)
{
    (void)state;
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_SEGMENTS);
    s.data_shape = (jit_shape){2, {100, 8}};
    s.indices_shape = (jit_shape){1, {D}};
    s.updates_shape = (jit_shape){1, {D}};
    s.num_segments = D;
    char *text = explain(&s);
    expect_in(text, ", num_segments ?, ");
    expect_not_in(text, "num_segments -1");
    jit_free(text);
    s.num_segments_bound = 64;
    text = explain(&s);
    expect_in(text, ", num_segments ?:64, ");
    jit_free(text);
}

/* A table whose row width is the call's: the reference kernel serves,
 * and the plan does not print the template's placeholder width. */
static void test_dynamic_row_width(void **state)
{
    (void)state;
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS);
    s.data_shape = (jit_shape){2, {100, D}};
    s.indices_shape = (jit_shape){1, {40}};
    s.updates_shape = (jit_shape){1, {8}};
    char *text = explain(&s);
    expect_in(text, "  table rows             100 of the call's elements (f32)");
    expect_in(text, "strategy: engine reference");
    jit_free(text);
    expect_engine_agrees(&s);
}

/* The engine a signature asks for, and TENSORJIT_JIT's, are the strategy's
 * first words too; a static kernel the JIT serves is described as code. */
static void test_engine_asked(void **state)
{
    (void)state;
    jit_sig s = bag_sig(JIT_OP_EMBEDDING_BAG_OFFSETS);
    s.data_shape = (jit_shape){2, {1000, 64}};
    s.indices_shape = (jit_shape){1, {4096}};
    s.updates_shape = (jit_shape){1, {256}};
    expect_engine_agrees(&s);
    s.engine = JIT_ENGINE_REFERENCE;
    char *text = explain(&s);
    expect_in(text, "strategy: engine reference (the reference kernel, on the caller's thread): "
                    "the signature asks for the reference engine\n");
    jit_free(text);
    expect_engine_agrees(&s);
}

/* Gathers and scatters: the counts each call's dims give are "?", not
 * the template's placeholder instance's (here 11 rows of data and 17
 * indices, and the bytes made from them). */
static void test_nonbag_dynamic_counts(void **state)
{
    (void)state;
    jit_sig g = bag_sig(JIT_OP_GATHER);
    g.data_shape = (jit_shape){2, {D, 4}};
    g.indices_shape = (jit_shape){1, {D}};
    char *text = explain(&g);
    expect_in(text, "  level 0 (units)       ? x: index +1, data +0 bytes, out +16 bytes\n");
    expect_in(text, "sizes [?], byte strides [16]\n");
    expect_in(text, "  slice per tuple        16 bytes (4 elements of 4 bytes), ? of them\n");
    expect_in(text, "  units                  ? (threads split them");
    expect_in(text, "  validated first        ? tuples");
    expect_in(text, "  bytes                  data ?, indices ? x 8, slices ?, out ?\n");
    expect_in(text, "  from each call's dims: level 0 trip, entry 0 dim;");
    expect_not_in(text, "placeholder");
    static const char *const gather_placeholders[] = {"11", "17", "176", "272"};
    expect_no_placeholders(plan_of(text), gather_placeholders, 4);
    jit_free(text);
    expect_engine_agrees(&g);

    jit_sig n = bag_sig(JIT_OP_GATHER_ND); /* a dynamic row: block bytes vary too */
    n.data_shape = (jit_shape){3, {D, 5, D}};
    n.indices_shape = (jit_shape){2, {D, 1}};
    text = explain(&n);
    expect_in(text, "  slice per tuple        ? bytes (? elements of 4 bytes), ? of them\n");
    expect_in(text, "sizes [?], byte strides [?]\n");
    jit_free(text);

    jit_sig u = bag_sig(JIT_OP_SCATTER_ND_UPDATE);
    u.data_shape = (jit_shape){2, {D, 4}};
    u.indices_shape = (jit_shape){2, {D, 1}};
    u.updates_shape = (jit_shape){2, {D, 4}};
    text = explain(&u);
    expect_in(text, "  data copied first      ? bytes (skipped when out == data)\n");
    expect_in(text, "  bytes                  data ?, indices ? x 8, updates ?, out ?\n");
    expect_no_placeholders(plan_of(text), gather_placeholders, 4);
    jit_free(text);
    expect_engine_agrees(&u);

    g.data_shape = (jit_shape){2, {100, 4}}; /* static: every number printed */
    g.indices_shape = (jit_shape){1, {17}};
    text = explain(&g);
    expect_in(text, "  bytes                  data 1600, indices 17 x 8, slices 272, out 272\n");
    expect_not_in(text, "?");
    jit_free(text);
}

/* A family no one loop nest serves (29 dynamic dims beside a static 2^40:
 * only the all-ones shape is valid) has no shared plan: explain says the
 * reference kernel plans each call, with jit_info's reason. */
static void test_nonbag_reference_family(void **state)
{
    (void)state;
    jit_sig g = bag_sig(JIT_OP_GATHER);
    g.axis = 1;
    g.data_shape.rank = 30;
    for (int i = 0; i < 29; i++)
        g.data_shape.dims[i] = D;
    g.data_shape.dims[29] = INT64_C(1) << 40;
    g.indices_shape = (jit_shape){1, {D}};
    char *text = explain(&g);
    expect_in(text, "plan: each call's own (no loop nest serves every shape of the family)\n");
    expect_in(text, "strategy: engine reference");
    expect_in(text, "the reference kernel plans each call");
    expect_not_in(text, "level 0");
    jit_free(text);
    expect_engine_agrees(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_padding_row),
        cmocka_unit_test(test_dynamic_table_size),
        cmocka_unit_test(test_static_lookups),
        cmocka_unit_test(test_dynamic_dims_named),
        cmocka_unit_test(test_dynamic_num_segments),
        cmocka_unit_test(test_dynamic_row_width),
        cmocka_unit_test(test_engine_asked),
        cmocka_unit_test(test_nonbag_dynamic_counts),
        cmocka_unit_test(test_nonbag_reference_family),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
