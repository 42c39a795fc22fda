/* Buffers against PROT_NONE pages, before and after, so that one byte read
 * or written outside [buffer, buffer + size) faults. Every op, policy,
 * engine and index type runs with hostile indices (-1, the dim, INT32_MAX,
 * INT64_MIN, INT64_MAX, values that overflow when multiplied by a stride):
 * no fault, the status and the bytes the oracle gives, and the message
 * names the value; a refused call leaves out (or data, in place) as it was. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

typedef struct guarded {
    unsigned char *map;
    size_t map_len;
    void *p;
} guarded;

/* size bytes flush against a PROT_NONE page after (at_end) or before. */
static void *guard_alloc(guarded *g, size_t size, int at_end)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t body = (size + page - 1) / page * page;
    g->map_len = body + 2 * page;
    g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g->map != MAP_FAILED);
    assert_int_equal(mprotect(g->map, page, PROT_NONE), 0);
    assert_int_equal(mprotect(g->map + page + body, page, PROT_NONE), 0);
    g->p = at_end ? g->map + page + body - size : g->map + page;
    return g->p;
}

static void guard_free(guarded *g)
{
    munmap(g->map, g->map_len);
}

static const int64_t hostile[] = {-1, 3, 1000, INT32_MAX, INT64_MIN, INT64_MAX,
                                  INT64_MAX / 64000 + 1, -(INT64_MAX / 64000) - 2};
static const jit_dtype index_types[] = {JIT_I32, JIT_I64, JIT_U64};

static int representable(jit_dtype t, int64_t v)
{
    if (t == JIT_I32)
        return v >= INT32_MIN && v <= INT32_MAX;
    return 1; /* i64, u64 (negative values are huge unsigned ones) */
}

static void store(jit_dtype t, void *p, int64_t i, int64_t v)
{
    if (t == JIT_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

static int runs;

/* data f64 [3, 1000, 8] (a 64000-byte stride), indices [4, 2]: tuple 2
 * gets the hostile value in entry `entry`. */
static void gather_case(jit_index_policy pol, jit_engine eng, jit_dtype it, int64_t v,
                        int entry, int at_end)
{
    jit_gather_nd_sig s = {.dtype = JIT_F64, .index_type = it, .index_policy = pol,
                           .engine = eng, .data_shape = {3, {3, 1000, 8}},
                           .indices_shape = {2, {4, 2}}};
    size_t db = 3 * 1000 * 8 * 8, ob = 4 * 8 * 8;
    guarded gd, gi, go;
    unsigned char *data = guard_alloc(&gd, db, at_end);
    void *idx = guard_alloc(&gi, 8 * (size_t)jit_dtype_size(it), at_end);
    unsigned char *out = guard_alloc(&go, ob, at_end), want[4 * 8 * 8], before[4 * 8 * 8];
    for (size_t i = 0; i < db; i++)
        data[i] = (unsigned char)(i * 7);
    int64_t ok[8] = {0, 0, 2, 999, 1, 5, 2, 17};
    for (int i = 0; i < 8; i++)
        store(it, idx, i, i == 4 + entry ? v : ok[i]);
    memset(out, 0x3c, ob);
    memcpy(before, out, ob);
    memcpy(want, out, ob);
    jit_gather_nd_fn fn = jit_gather_nd_compile(&s);
    assert_non_null(fn);
    int expect = oracle_gather_nd(&s, data, idx, want);
    int got = fn(data, idx, out);
    if (got != expect)
        fail_msg("gather policy %s engine %s %s value %lld entry %d: status %d, oracle %d",
                 jit_index_policy_name(pol), jit_engine_name(eng), jit_dtype_name(it),
                 (long long)v, entry, got, expect);
    assert_memory_equal(out, got ? before : want, ob);
    if (got)
        assert_non_null(strstr(jit_last_error(), "indices[2] = ["));
    guard_free(&gd);
    guard_free(&gi);
    guard_free(&go);
    runs++;
}

/* data i32 [4, 50] in place and not, axis 1, indices [3]: index 1 hostile. */
static void scatter_case(jit_index_policy pol, jit_engine eng, jit_dtype it, int64_t v,
                         int in_place, int at_end)
{
    jit_scatter_update_sig s = {.axis = 1, .dtype = JIT_I32, .index_type = it,
                                .index_policy = pol, .engine = eng, .data_shape = {2, {4, 50}},
                                .indices_shape = {1, {3}}, .updates_shape = {2, {4, 3}}};
    size_t db = 4 * 50 * 4, ub = 4 * 3 * 4;
    guarded gd, gi, gu, go;
    int32_t *data = guard_alloc(&gd, db, at_end), *upd = guard_alloc(&gu, ub, at_end);
    void *idx = guard_alloc(&gi, 3 * (size_t)jit_dtype_size(it), at_end);
    int32_t *out = in_place ? data : guard_alloc(&go, db, at_end);
    int32_t want[200], before[200];
    for (int i = 0; i < 200; i++)
        data[i] = i;
    for (int i = 0; i < 12; i++)
        upd[i] = -1 - i;
    store(it, idx, 0, 49);
    store(it, idx, 1, v);
    store(it, idx, 2, 0);
    if (!in_place)
        memset(out, 0x3c, db);
    memcpy(before, out, db);
    memcpy(want, before, db);
    jit_scatter_update_fn fn = jit_scatter_update_compile(&s);
    assert_non_null(fn);
    int expect = oracle_scatter_update(&s, data, idx, upd, want);
    int got = fn(data, idx, upd, out);
    if (got != expect)
        fail_msg("scatter policy %s engine %s %s value %lld: status %d, oracle %d",
                 jit_index_policy_name(pol), jit_engine_name(eng), jit_dtype_name(it),
                 (long long)v, got, expect);
    assert_memory_equal(out, got ? before : want, db);
    if (got)
        assert_non_null(strstr(jit_last_error(), "indices[1] = "));
    guard_free(&gd);
    guard_free(&gi);
    guard_free(&gu);
    if (!in_place)
        guard_free(&go);
    runs++;
}

static void test_hostile_indices_against_guard_pages(void **state)
{
    (void)state;
    for (int at_end = 0; at_end < 2; at_end++)
        for (int pol = 0; pol < JIT_INDEX_POLICY_COUNT; pol++)
            for (int eng = JIT_ENGINE_AUTO; eng <= JIT_ENGINE_REFERENCE; eng++)
                for (size_t t = 0; t < sizeof index_types / sizeof *index_types; t++)
                    for (size_t h = 0; h < sizeof hostile / sizeof *hostile; h++) {
                        jit_dtype it = index_types[t];
                        if (!representable(it, hostile[h]))
                            continue;
                        for (int entry = 0; entry < 2; entry++)
                            gather_case((jit_index_policy)pol, (jit_engine)eng, it,
                                        hostile[h], entry, at_end);
                        for (int ip = 0; ip < 2; ip++)
                            scatter_case((jit_index_policy)pol, (jit_engine)eng, it,
                                         hostile[h], ip, at_end);
                    }
    printf("guard pages: %d runs, every op, policy, engine and index type\n", runs);
    jit_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_indices_against_guard_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
