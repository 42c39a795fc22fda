/* The check pass of a bag's JIT kernel (runtime/exec/bag_scan.c) against
 * the reference kernel's (exec/bag_check.c, one element at a time): the
 * same verdict on random offsets, segment ids and indices with bad values
 * planted at random positions, at the edges of each range and of the
 * vectors, for i32 and i64, every policy, every form, tables of 0 to 2^40
 * rows, with each level of instructions the host has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bag_check.h"
#include "bag_prime.h"
#include "bag_scan.h"
#include "plan.h"
#include "support.h"
#include "tensorjit.h"

static uint64_t seed = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    return support_rand(&seed);
}

/* in [lo, hi] */
static int64_t pick(int64_t lo, int64_t hi)
{
    return support_rand_range(&seed, lo, hi);
}

static void put(jit_dtype t, void *buf, int64_t i, int64_t v)
{
    if (t == JIT_I64)
        memcpy((char *)buf + 8 * i, &v, 8);
    else {
        int32_t w = (int32_t)v;
        memcpy((char *)buf + 4 * i, &w, 4);
    }
}

/* tables of these rows too: the edges of i32's range and of 2E in int64
 * (a table of rows of no bytes may have INT64_MAX of them) */
static const int64_t big_rows[] = {0,
                                   1,
                                   5,
                                   1000,
                                   ((int64_t)1 << 31) - 1,
                                   (int64_t)1 << 31,
                                   ((int64_t)1 << 31) + 1,
                                   ((int64_t)1 << 32) - 1,
                                   (int64_t)1 << 32,
                                   (int64_t)1 << 40,
                                   (int64_t)1 << 62,
                                   INT64_MAX - 1,
                                   INT64_MAX};
#define BIG_ROWS ((int64_t)(sizeof big_rows / sizeof *big_rows))

/* A value an index might hold: inside the policy's range, at its edges,
 * just past them, or extreme. */
static int64_t index_value(const tj_bag_plan *g, int bad)
{
    int64_t E = g->rows;
    if (!bad) {
        if (E == 0)
            return 0; /* no valid value: only written where a bad one is wanted too */
        int64_t lo = g->policy == JIT_INDEX_NEGATIVE_WRAPS ? -E : 0;
        uint64_t span = (uint64_t)E - (uint64_t)lo; /* 2E fits in uint64 */
        int64_t v = pick(0, 3) == 0 ? (pick(0, 1) ? lo : E - 1)
                                    : (int64_t)((uint64_t)lo + next() % span);
        return g->index_type == JIT_I32 && (v > INT32_MAX || v < INT32_MIN) ? 0 : v;
    }
    static const int64_t extreme[] = {INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -1};
    /* near E and -E - 1, kept in int64 */
    int64_t up = E > INT64_MAX - 100 ? INT64_MAX - pick(0, 3) : E + pick(0, 100);
    int64_t down = E > INT64_MAX - 100 ? INT64_MIN + pick(0, 3) : -E - pick(1, 100);
    switch (pick(0, 4)) {
    case 0: return E;
    case 1: return E == INT64_MAX ? INT64_MIN : -E - 1;
    case 2: return up;
    case 3: return down;
    default: return extreme[pick(0, 4)];
    }
}

typedef struct scan_case {
    tj_plan p;
    void *indices, *offsets;
} scan_case;

/* A random plan and inputs, valid or with a few bad values planted. */
static void make_case(scan_case *c)
{
    memset(&c->p, 0, sizeof c->p);
    tj_bag_plan *g = &c->p.bag;
    c->p.is_bag = 1;
    g->form = (tj_bag_form)pick(0, 2);
    g->index_type = pick(0, 1) ? JIT_I64 : JIT_I32;
    static const jit_index_policy pols[] = {JIT_INDEX_ERROR, JIT_INDEX_NEGATIVE_WRAPS,
                                            JIT_INDEX_CLAMP, JIT_INDEX_ZERO_FILL,
                                            JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL};
    g->policy = pols[pick(0, 4)];
    g->rows = pick(0, 2) ? pick(0, 2000) : big_rows[pick(0, BIG_ROWS - 1)];
    g->lookups = pick(0, 3) ? pick(0, 70) : pick(0, 600);
    g->row_elems = 1;
    if (g->form == TJ_BAG_OFFSETS) {
        g->include_last_offset = (int)pick(0, 1);
        g->bags = pick(0, 40);
        g->offsets_len = g->bags + g->include_last_offset;
    } else if (g->form == TJ_BAG_SEGMENTS) {
        g->bags = pick(0, 9);
        g->offsets_len = g->lookups;
    } else {
        g->bags = g->lookups;
        g->bag_len = 1;
    }
    int64_t size = jit_dtype_size(g->index_type);
    c->indices = malloc((size_t)(g->lookups * size + 1));
    c->offsets = malloc((size_t)(g->offsets_len * size + 1));
    assert_non_null(c->indices);
    assert_non_null(c->offsets);
    int64_t at = g->lookups ? pick(0, g->lookups) : 0;
    for (int64_t i = 0; i < g->offsets_len; i++) { /* non-decreasing in [0, N] */
        at = pick(0, 2) ? at : pick(at, g->lookups);
        put(g->index_type, c->offsets, i,
            g->form == TJ_BAG_SEGMENTS ? (g->bags ? pick(0, g->bags - 1) : 0) : at);
    }
    if (g->form == TJ_BAG_OFFSETS && g->offsets_len > 0 && pick(0, 1)) /* sorted from 0 */
        for (int64_t i = 0, o = 0; i < g->offsets_len; i++) {
            o = pick(o, o + (o < g->lookups));
            put(g->index_type, c->offsets, i, o > g->lookups ? g->lookups : o);
        }
    for (int64_t i = 0; i < g->lookups; i++)
        put(g->index_type, c->indices, i, index_value(g, 0));
    int plant = (int)pick(0, 3); /* 0: none */
    for (int n = 0; n < plant; n++) {
        if (g->offsets_len > 0 && pick(0, 2) == 0) {
            int64_t i = pick(0, g->offsets_len - 1);
            int64_t v = pick(0, 1) ? (pick(0, 1) ? -1 : g->lookups + 1) : pick(-3, g->lookups + 3);
            if (g->form == TJ_BAG_SEGMENTS)
                v = pick(0, 1) ? g->bags : pick(-2, g->bags + 2);
            put(g->index_type, c->offsets, i, v);
        } else if (g->lookups > 0) {
            put(g->index_type, c->indices, pick(0, g->lookups - 1), index_value(g, 1));
        }
    }
}

static void free_case(scan_case *c)
{
    free(c->indices);
    free(c->offsets);
}

static void expect_same_verdict(const scan_case *c, int level, int iteration)
{
    const tj_bag_plan *g = &c->p.bag;
    int want = tj_bag_report_bad(&c->p, c->indices, c->offsets) != JIT_OK;
    int64_t flags = tj_bag_scan_flags(g);
    int got = flags ? tj_rt_bag_scan(c->indices, c->offsets, g->offsets_len, g->lookups, g->rows,
                                     g->bags, flags)
                    : 0;
    if (got != want)
        fail_msg("case %d, level %d: the scan says %d, the reference %d (form %d, %s, policy %d, "
                 "E %lld, N %lld, offsets %lld, bags %lld, last %d): %s",
                 iteration, level, got, want, g->form, jit_dtype_name(g->index_type), g->policy,
                 (long long)g->rows, (long long)g->lookups, (long long)g->offsets_len,
                 (long long)g->bags, g->include_last_offset, want ? jit_last_error() : "");
}

/* jit_validate_bag_part's scan: the parts of every split of the call
 * together say what the whole scan says (a drop between two parts' slices
 * of the offsets is one of them). */
static void expect_parts_agree(const scan_case *c, int want, int level, int iteration)
{
    const tj_bag_plan *g = &c->p.bag;
    const int64_t counts[] = {1, 2, 3, pick(4, 9), pick(1, g->offsets_len + g->lookups + 2)};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int got = 0;
        for (int64_t part = 0; part < counts[i]; part++)
            got |= tj_bag_scan_plan_part(g, c->indices, c->offsets, part, counts[i]);
        if (got != want)
            fail_msg("case %d, level %d: %lld parts say %d, the reference %d (form %d, %s, "
                     "policy %d, E %lld, N %lld, offsets %lld, bags %lld, last %d)",
                     iteration, level, (long long)counts[i], got, want, g->form,
                     jit_dtype_name(g->index_type), g->policy, (long long)g->rows,
                     (long long)g->lookups, (long long)g->offsets_len, (long long)g->bags,
                     g->include_last_offset);
    }
}

static void test_random_cases(void **state)
{
    (void)state;
    int host = tj_bag_scan_level(-1), bad = 0;
    for (int i = 0; i < 20000; i++) {
        scan_case c;
        make_case(&c);
        bad += tj_bag_report_bad(&c.p, c.indices, c.offsets) != JIT_OK;
        for (int level = host; level >= 0; level--) {
            tj_bag_scan_level(level);
            expect_same_verdict(&c, level, i);
            expect_parts_agree(&c, tj_bag_report_bad(&c.p, c.indices, c.offsets) != JIT_OK,
                               level, i);
        }
        tj_bag_scan_level(-1);
        free_case(&c);
    }
    /* both verdicts were asked for often */
    assert_true(bad > 4000 && bad < 16000);
}

/* Every level finds what the reference does (and only that) in s. */
static void expect_levels_agree(const scan_case *c, int want_bad, const char *what, int64_t at)
{
    const tj_bag_plan *g = &c->p.bag;
    int ref = tj_bag_report_bad(&c->p, c->indices, c->offsets) != JIT_OK;
    for (int level = tj_bag_scan_level(-1); level >= 0; level--) {
        tj_bag_scan_level(level);
        int got = tj_rt_bag_scan(c->indices, c->offsets, g->offsets_len, g->lookups, g->rows,
                                 g->bags, tj_bag_scan_flags(g));
        if (got != want_bad || ref != want_bad)
            fail_msg("level %d, form %d, %s, policy %d, n %lld: %s at %lld: the scan says %d, "
                     "the reference %d, want %d",
                     level, g->form, jit_dtype_name(g->index_type), g->policy,
                     (long long)g->lookups, what, (long long)at, got, ref, want_bad);
    }
    tj_bag_scan_level(-1);
}

/* A valid case of n lookups: offsets 0, 1, ..., n - 1 (one bag a lookup)
 * or segment ids i % 3; indices in range under the policy. */
static void edge_case(scan_case *c, tj_bag_form form, jit_dtype it, jit_index_policy pol,
                      int64_t n)
{
    memset(&c->p, 0, sizeof c->p);
    tj_bag_plan *g = &c->p.bag;
    g->form = form;
    g->index_type = it;
    g->policy = pol;
    g->rows = 7;
    g->lookups = g->offsets_len = n;
    g->bags = form == TJ_BAG_SEGMENTS ? 3 : n;
    c->indices = calloc((size_t)n, 8);
    c->offsets = calloc((size_t)n, 8);
    assert_non_null(c->indices);
    assert_non_null(c->offsets);
    for (int64_t i = 0; i < n; i++) {
        put(it, c->indices, i, pol == JIT_INDEX_NEGATIVE_WRAPS ? i % 14 - 7 : i % 7);
        put(it, c->offsets, i, form == TJ_BAG_SEGMENTS ? i % 3 : i);
    }
}

/* One bad value at every position of arrays around the vectors' widths
 * (8, 16, 32 lanes and twice that), each the only one: an index past
 * either end of its policy's range, an offset past N, negative or below
 * the one before, a segment id past S or negative; i32 and i64. */
static void test_every_position(void **state)
{
    (void)state;
    static const tj_bag_form forms[] = {TJ_BAG_OFFSETS, TJ_BAG_SEGMENTS};
    static const jit_index_policy pols[] = {JIT_INDEX_ERROR, JIT_INDEX_NEGATIVE_WRAPS};
    for (int f = 0; f < 2; f++)
        for (int it = 0; it < 2; it++)
            for (int pi = 0; pi < 2; pi++)
                for (int64_t n = 1; n <= 70; n++) {
                    scan_case c;
                    jit_dtype t = it ? JIT_I64 : JIT_I32;
                    edge_case(&c, forms[f], t, pols[pi], n);
                    expect_levels_agree(&c, 0, "nothing bad", -1);
                    int wraps = pols[pi] == JIT_INDEX_NEGATIVE_WRAPS;
                    int64_t bad_index[] = {7, wraps ? -8 : -1, INT32_MIN};
                    int64_t bad_offset[] = {n + 1, -1, INT32_MIN};
                    int64_t bad_segment[] = {3, -1, INT32_MIN};
                    for (int64_t at = 0; at < n; at++) {
                        int64_t was = pols[pi] == JIT_INDEX_NEGATIVE_WRAPS ? at % 14 - 7 : at % 7;
                        for (int k = 0; k < 3; k++) {
                            put(t, c.indices, at, bad_index[k]);
                            expect_levels_agree(&c, 1, "a bad index", at);
                        }
                        put(t, c.indices, at, was);
                        int64_t o = forms[f] == TJ_BAG_SEGMENTS ? at % 3 : at;
                        for (int k = 0; k < 3; k++) {
                            put(t, c.offsets, at,
                                forms[f] == TJ_BAG_SEGMENTS ? bad_segment[k] : bad_offset[k]);
                            expect_levels_agree(&c, 1, "a bad offset or segment id", at);
                        }
                        if (forms[f] == TJ_BAG_OFFSETS && at > 0) { /* a drop, in range */
                            put(t, c.offsets, at - 1, at);
                            put(t, c.offsets, at, at - 1);
                            expect_levels_agree(&c, 1, "a drop", at);
                            put(t, c.offsets, at - 1, at - 1);
                        }
                        put(t, c.offsets, at, o);
                    }
                    expect_levels_agree(&c, 0, "nothing bad again", -1);
                    free_case(&c);
                }
}

/* The primer reads exactly indices[first, first + n), whatever their
 * values (wild ones only make wild prefetches, which never fault), for
 * every integer index type and rows on and off the lines' grid; n <= 0
 * reads nothing. ASan holds the reads to the buffers, which are allocated
 * to the byte; UBSan the arithmetic. */
static void test_prime_reads_only_its_indices(void **state)
{
    (void)state;
    static const int64_t wild[] = {0, 1, -1, INT64_MIN, INT64_MAX, 123456789012345, -77};
    static const jit_dtype types[] = {JIT_I8, JIT_U8, JIT_I16, JIT_U16,
                                      JIT_I32, JIT_U32, JIT_I64, JIT_U64};
    static const int64_t rows[] = {4, 64, 100, 256, 4096, 5000};
    float table[64];
    memset(table, 0, sizeof table);
    for (size_t z = 0; z < sizeof types / sizeof *types; z++)
        for (int first = 0; first < 3; first++) {
            int n = 7, size = (int)jit_dtype_size(types[z]);
            unsigned char *idx = malloc((size_t)((first + n) * size));
            assert_non_null(idx);
            for (int i = 0; i < first + n; i++) {
                int64_t v = wild[i % 7];
                memcpy(idx + i * size, &v, (size_t)size); /* the low bytes (little-endian) */
            }
            for (int r = 0; r < 6; r++)
                tj_rt_bag_prime(table, idx, first, n, rows[r] * 4, types[z]);
            tj_rt_bag_prime(table, NULL, 0, 0, 256, types[z]);
            tj_rt_bag_prime(table, NULL, 5, -3, 256, types[z]);
            free(idx);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_every_position),
        cmocka_unit_test(test_prime_reads_only_its_indices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
