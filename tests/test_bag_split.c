/* The embedding bags split across threads (SPEC 10: "results identical for
 * any thread count"): dynamic Offsets and Packed kernels and
 * EmbeddingSegmentsSum, static and dynamic, compiled for 1 to 8 threads
 * with every call split (TENSORJIT_SPLIT_MIN=1), give the bytes of the
 * reference kernel on one thread; the split rule's counts show that the
 * JIT's range code ran over the pool. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc.h"
#include "jit_support.h"
#include "support.h"

#define CANARY 16  /* bytes after out that must stay as they were */
#define MAX_THREADS 8

typedef struct split_case {
    jit_sig sig;
    int64_t bags;  /* out rows: B, or S */
    void *table, *idx, *off, *w;
    size_t out_bytes;
} split_case;

static const jit_dtype dtypes[] = {JIT_F32, JIT_BF16, JIT_F64, JIT_I32, JIT_I64, JIT_U8};

/* A random element of t at p[i]: floats with fractions (bf16: a float's
 * upper half), integers small enough that sums stay exact. */
static void put_value(jit_dtype t, void *p, int64_t i, uint64_t *rng)
{
    int64_t r = support_rand_range(rng, -4000, 4000);
    float f = (float)r / 37.0f;
    uint32_t bits;
    switch (t) {
    case JIT_F32: ((float *)p)[i] = f; break;
    case JIT_F64: ((double *)p)[i] = (double)r / 37.0; break;
    case JIT_BF16:
        memcpy(&bits, &f, 4);
        ((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
        break;
    case JIT_I32: ((int32_t *)p)[i] = (int32_t)(r / 40); break;
    case JIT_I64: ((int64_t *)p)[i] = r / 40; break;
    default: ((uint8_t *)p)[i] = (uint8_t)(r & 0xff); break;
    }
}

/* Offsets from a random start, non-decreasing: repeats are empty bags. */
static void offsets_case(uint64_t *rng, split_case *c, int64_t n)
{
    jit_sig *s = &c->sig;
    s->include_last_offset = (int)support_rand_range(rng, 0, 1);
    int64_t len = support_rand_range(rng, s->include_last_offset, 40);
    c->bags = len - s->include_last_offset;
    s->updates_shape = (jit_shape){1, {len}};
    c->off = calloc((size_t)len + 1, 8);
    assert_non_null(c->off);
    int64_t at = support_rand_range(rng, 0, 3) ? 0 : support_rand_range(rng, 0, n);
    for (int64_t b = 0; b < len; b++) {
        support_store_index(s->index_type, c->off, b, at);
        at = support_rand_range(rng, 0, 2) ? at : support_rand_range(rng, at, n);
        if (support_rand_range(rng, 0, 1))
            at = at + (n - at) / (len - b + 1);
    }
}

/* Segment ids in any order; segments none names are empty. */
static void segments_case(uint64_t *rng, split_case *c, int64_t n)
{
    jit_sig *s = &c->sig;
    s->num_segments = support_rand_range(rng, 1, 40);
    c->bags = s->num_segments;
    s->updates_shape = (jit_shape){1, {n}};
    c->off = calloc((size_t)n + 1, 8);
    assert_non_null(c->off);
    int64_t hi = support_rand_range(rng, 0, s->num_segments - 1);
    for (int64_t j = 0; j < n; j++)
        support_store_index(s->index_type, c->off, j, support_rand_range(rng, 0, hi));
}

static void random_case(uint64_t *rng, split_case *c)
{
    memset(c, 0, sizeof *c);
    jit_sig *s = &c->sig;
    s->op = (jit_op)(JIT_OP_EMBEDDING_BAG_OFFSETS + support_rand_range(rng, 0, 2));
    int segments = s->op == JIT_OP_EMBEDDING_SEGMENTS, packed = s->op == JIT_OP_EMBEDDING_BAG_PACKED;
    s->dtype = dtypes[support_rand_range(rng, 0, sizeof dtypes / sizeof *dtypes - 1)];
    s->index_type = support_rand_range(rng, 0, 1) ? JIT_I32 : JIT_I64;
    s->opset = segments ? 3 : 15;
    s->reduction = segments ? JIT_REDUCTION_SUM
                            : (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                                JIT_REDUCTION_MAX}[support_rand_range(rng, 0, 2)];
    s->has_weights = s->reduction == JIT_REDUCTION_SUM && support_rand_range(rng, 0, 1);
    /* a few row widths, so that one dynamic kernel serves calls of many
     * counts (each call's own B and N decide its parts) */
    static const int64_t widths[] = {1, 5, 48, 67};
    int64_t e = support_rand_range(rng, 1, 60), d = widths[support_rand_range(rng, 0, 3)];
    s->data_shape = (jit_shape){2, {e, d}};
    s->has_default_index = !packed && support_rand_range(rng, 0, 1);
    s->default_index = s->has_default_index ? support_rand_range(rng, -1, e - 1) : 0;
    int64_t n;
    if (packed) {
        c->bags = support_rand_range(rng, 0, 40);
        int64_t l = support_rand_range(rng, 0, 9);
        s->indices_shape = (jit_shape){2, {c->bags, l}};
        n = c->bags * l;
    } else {
        n = support_rand_range(rng, 0, 300);
        s->indices_shape = (jit_shape){1, {n}};
    }
    c->idx = calloc((size_t)n + 1, 8);
    c->w = s->has_weights ? calloc((size_t)n + 1, 8) : NULL;
    assert_non_null(c->idx);
    for (int64_t j = 0; j < n; j++) {
        support_store_index(s->index_type, c->idx, j, support_rand_range(rng, 0, e - 1));
        if (c->w)
            put_value(s->dtype, c->w, j, rng);
    }
    if (segments)
        segments_case(rng, c, n);
    else if (!packed)
        offsets_case(rng, c, n);
    c->table = calloc((size_t)(e * d), 8);
    assert_non_null(c->table);
    for (int64_t i = 0; i < e * d; i++)
        put_value(s->dtype, c->table, i, rng);
    c->out_bytes = (size_t)(c->bags * d * jit_dtype_size(s->dtype));
}

static void free_case(split_case *c)
{
    free(c->table);
    free(c->idx);
    free(c->off);
    free(c->w);
}

/* s with its counts dynamic (the row's width stays static: the JIT's
 * dynamic bag kernels take it as a constant). */
static jit_sig counts_dynamic(const jit_sig *s)
{
    return support_bag_dynamic(s, 0);
}

/* c's kernel for `threads` (dynamic: its counts the call's) run into got;
 * *split: the calls the split rule ran over the pool for it. */
static int run_case(const split_case *c, int dynamic, int threads, char *got, int64_t *split)
{
    jit_sig s = dynamic ? counts_dynamic(&c->sig) : c->sig;
    s.threads = threads;
    jit_kernel k = jit_compile(&s);
    if (!k)
        fail_msg("refused: %s", jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    if (c->sig.engine != JIT_ENGINE_REFERENCE)
        support_expect_jit(&info, dynamic ? "dynamic bag kernel" : "bag kernel");
    tj_split_counts before, after;
    assert_int_equal(tj_split_counts_of(k, &before), 0);
    memset(got, 0xa5, c->out_bytes + CANARY);
    int64_t dims[4 * JIT_MAX_RANK];
    support_bag_call_dims(&c->sig, dims);
    int rc = dynamic ? jit_call_bag_dynamic(k, c->table, c->idx, c->off, c->w, got, dims)
                     : jit_call_bag(k, c->table, c->idx, c->off, c->w, got);
    assert_int_equal(tj_split_counts_of(k, &after), 0);
    *split = after.split - before.split;
    jit_release(k);
    return rc;
}

static const char *const op_names[] = {"offsets", "packed", "segments"};

/* Each random case, static and counts-dynamic, on 1 to 8 threads: the
 * reference kernel's bytes on one thread, every call with at least two
 * bags (or segments) split over the pool by the JIT's range code. */
static void threads_agree(uint64_t rng, int runs)
{
    int64_t split_calls = 0;
    for (int r = 0; r < runs; r++) {
        split_case c;
        random_case(&rng, &c);
        char *want = malloc(c.out_bytes + CANARY), *got = malloc(c.out_bytes + CANARY);
        assert_true(want && got);
        int64_t split;
        c.sig.engine = JIT_ENGINE_REFERENCE;
        assert_int_equal(run_case(&c, 0, 1, want, &split), JIT_OK);
        c.sig.engine = JIT_ENGINE_AUTO;
        for (int dynamic = 0; dynamic < 2; dynamic++)
            for (int t = 1; t <= MAX_THREADS; t++) {
                int rc = run_case(&c, dynamic, t, got, &split);
                if (rc != JIT_OK || memcmp(got, want, c.out_bytes + CANARY) != 0)
                    fail_msg("run %d (%s, %s, %s, %s, weights %d, %lld bags, %d threads): "
                             "status %d or bytes differ from the reference kernel's",
                             r, op_names[c.sig.op - JIT_OP_EMBEDDING_BAG_OFFSETS],
                             dynamic ? "dynamic" : "static", jit_dtype_name(c.sig.dtype),
                             jit_reduction_name(c.sig.reduction), c.sig.has_weights,
                             (long long)c.bags, t, rc);
                int want_split = getenv("TENSORJIT_JIT") == NULL && t > 1 && c.bags >= 2;
                if (want_split != (split == 1))
                    fail_msg("run %d (%s, %s, %lld bags, %d threads): %lld split calls, %d "
                             "expected", r, op_names[c.sig.op - JIT_OP_EMBEDDING_BAG_OFFSETS],
                             dynamic ? "dynamic" : "static", (long long)c.bags, t,
                             (long long)split, want_split);
                split_calls += split;
            }
        free(want);
        free(got);
        free_case(&c);
    }
    if (getenv("TENSORJIT_JIT") == NULL)
        assert_true(split_calls > 0);
}

static void test_threads_agree(void **state)
{
    (void)state;
    threads_agree(2026, (int)support_env_long("TJ_BAG_RUNS", 400) / 8);
}

/* The same with prefetch, which the small tables above go without: a
 * segments range prefetches only its own segments' rows. */
static void test_threads_agree_prefetch(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_PREFETCH", "3");
    threads_agree(2027, (int)support_env_long("TJ_BAG_RUNS", 400) / 16);
    support_setenv("TENSORJIT_PREFETCH", NULL);
}

/* A pool of the caller's: POOL threads each check their part of one
 * kernel's call (jit_validate_bag_part) at once, wait for all, then, only
 * where every part passed, run their part of the bags (jit_run_range_bag),
 * as docs/library.md's "Your own pool" tells. Under TSan in CI. */
#define POOL 4

typedef struct pool_part {
    jit_kernel k;
    const split_case *c;
    char *out;
    int64_t part, units;
    pthread_barrier_t *checked;
    const struct pool_part *all; /* every part's, read after the barrier */
    int check_rc, range_rc;
    char msg[256];
} pool_part;

static void *pool_part_run(void *arg)
{
    pool_part *p = arg;
    const split_case *c = p->c;
    p->check_rc = jit_validate_bag_part(p->k, c->idx, c->off, p->part, POOL);
    snprintf(p->msg, sizeof p->msg, "%s", p->check_rc == JIT_OK ? "" : jit_last_error());
    pthread_barrier_wait(p->checked);
    for (int i = 0; i < POOL; i++)
        if (p->all[i].check_rc != JIT_OK)
            return NULL; /* no range runs on indices a part refused */
    int64_t q = p->units / POOL, r = p->units % POOL;
    int64_t begin = q * p->part + (p->part < r ? p->part : r);
    int64_t end = q * (p->part + 1) + (p->part + 1 < r ? p->part + 1 : r);
    p->range_rc = jit_run_range_bag(p->k, c->table, c->idx, c->off, c->w, p->out, begin, end);
    return NULL;
}

/* c's kernel on POOL threads of ours into got: JIT_OK, or a part's check
 * status (*msg its message; every failing part's must be the same). */
static int run_on_pool(const split_case *c, char *got, char *msg, size_t msg_len)
{
    jit_kernel k = jit_compile(&c->sig);
    if (!k)
        fail_msg("refused: %s", jit_last_error());
    pthread_barrier_t checked;
    assert_int_equal(pthread_barrier_init(&checked, NULL, POOL), 0);
    pool_part parts[POOL];
    pthread_t t[POOL];
    for (int i = 0; i < POOL; i++) {
        parts[i] = (pool_part){.k = k, .c = c, .out = got, .part = i, .units = jit_units(k),
                               .checked = &checked, .all = parts};
        assert_int_equal(pthread_create(&t[i], NULL, pool_part_run, &parts[i]), 0);
    }
    int rc = JIT_OK;
    msg[0] = '\0';
    for (int i = 0; i < POOL; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(parts[i].range_rc, JIT_OK); /* not run, or run on checked indices */
        if (parts[i].check_rc == JIT_OK)
            continue;
        if (rc != JIT_OK && (parts[i].check_rc != rc || strcmp(parts[i].msg, msg) != 0))
            fail_msg("two parts disagree: %d (%s) and %d (%s)", rc, msg, parts[i].check_rc,
                     parts[i].msg);
        rc = parts[i].check_rc;
        snprintf(msg, msg_len, "%s", parts[i].msg);
    }
    pthread_barrier_destroy(&checked);
    jit_release(k);
    return rc;
}

/* Random static cases on a pool of ours give the kernel's own bytes; with
 * an index planted past the table, the parts say what the call says. */
static void test_a_pool_of_ours(void **state)
{
    (void)state;
    uint64_t rng = 2028;
    int runs = (int)support_env_long("TJ_BAG_RUNS", 400) / 8, refused = 0;
    for (int r = 0; r < runs; r++) {
        split_case c;
        random_case(&rng, &c);
        int64_t n = c.sig.indices_shape.dims[0] * (c.sig.indices_shape.rank == 2
                                                      ? c.sig.indices_shape.dims[1]
                                                      : 1);
        if (n > 0 && support_rand_range(&rng, 0, 2) == 0)
            support_store_index(c.sig.index_type, c.idx, support_rand_range(&rng, 0, n - 1),
                                c.sig.data_shape.dims[0]);
        char *want = malloc(c.out_bytes + CANARY), *got = malloc(c.out_bytes + CANARY);
        assert_true(want && got);
        memset(want, 0xa5, c.out_bytes + CANARY);
        memset(got, 0xa5, c.out_bytes + CANARY);
        jit_kernel k = jit_compile(&c.sig);
        assert_non_null(k);
        int want_rc = jit_call_bag(k, c.table, c.idx, c.off, c.w, want);
        char want_msg[256], msg[256];
        snprintf(want_msg, sizeof want_msg, "%s", want_rc == JIT_OK ? "" : jit_last_error());
        jit_release(k);
        int rc = run_on_pool(&c, got, msg, sizeof msg);
        if (rc != want_rc || strcmp(msg, want_msg) != 0)
            fail_msg("run %d: the pool's parts said %d (%s), the call %d (%s)", r, rc, msg,
                     want_rc, want_msg);
        if (memcmp(got, want, c.out_bytes + CANARY) != 0) /* refused: both untouched */
            fail_msg("run %d (%s): the pool's bytes differ from the call's", r,
                     op_names[c.sig.op - JIT_OP_EMBEDDING_BAG_OFFSETS]);
        refused += rc != JIT_OK;
        free(want);
        free(got);
        free_case(&c);
    }
    assert_true(refused > 0 && refused < runs);
}

/* A split Segments call whose part cannot have its scratch (each
 * allocation of the call made to fail in turn): it writes nothing and says
 * NO_MEMORY, or, the caller holding scratch for the whole call, runs it
 * again whole on its thread and gives the reference's bytes. Its parts
 * wrote their segments as they went, so one part short used to leave the
 * others' written under NO_MEMORY. Each case has more segments than the
 * one before, so that the pool's threads grow their scratch (and can fail
 * to) in it; static and dynamic, f32 and bf16 (whose scratch holds sums). */
static void test_segments_short_of_scratch_write_nothing(void **state)
{
    (void)state;
    uint64_t rng = 2028;
    int retried = 0;
    for (int i = 0; i < 4; i++) {
        split_case c;
        memset(&c, 0, sizeof c);
        jit_sig *s = &c.sig;
        int dynamic = i / 2;
        s->op = JIT_OP_EMBEDDING_SEGMENTS;
        s->opset = 3;
        s->dtype = i % 2 ? JIT_BF16 : JIT_F32;
        s->index_type = JIT_I64;
        s->reduction = JIT_REDUCTION_SUM;
        int64_t e = 50, d = 16, n = 6000;
        s->num_segments = c.bags = 2000 * (i + 1);
        s->data_shape = (jit_shape){2, {e, d}};
        s->indices_shape = s->updates_shape = (jit_shape){1, {n}};
        c.table = calloc((size_t)(e * d), 8);
        c.idx = calloc((size_t)n, 8);
        c.off = calloc((size_t)n, 8);
        assert_true(c.table && c.idx && c.off);
        for (int64_t k = 0; k < e * d; k++)
            put_value(s->dtype, c.table, k, &rng);
        for (int64_t j = 0; j < n; j++) {
            support_store_index(JIT_I64, c.idx, j, support_rand_range(&rng, 0, e - 1));
            support_store_index(JIT_I64, c.off, j, support_rand_range(&rng, 0, c.bags - 1));
        }
        c.out_bytes = (size_t)(c.bags * d * jit_dtype_size(s->dtype));
        char *want = malloc(c.out_bytes + CANARY), *got = malloc(c.out_bytes + CANARY);
        char *untouched = malloc(c.out_bytes + CANARY);
        assert_true(want && got && untouched);
        int64_t split;
        s->engine = JIT_ENGINE_REFERENCE;
        assert_int_equal(run_case(&c, 0, 1, want, &split), JIT_OK);
        s->engine = JIT_ENGINE_AUTO;
        jit_sig k_sig = dynamic ? counts_dynamic(s) : *s;
        k_sig.threads = 2;
        jit_kernel k = jit_compile(&k_sig);
        assert_non_null(k);
        int64_t dims[4 * JIT_MAX_RANK];
        support_bag_call_dims(s, dims);
        memset(untouched, 0xa5, c.out_bytes + CANARY);
        for (long fail = 1;; fail++) {
            memset(got, 0xa5, c.out_bytes + CANARY);
            tj_alloc_fail_after(fail);
            int rc = dynamic ? jit_call_bag_dynamic(k, c.table, c.idx, c.off, NULL, got, dims)
                             : jit_call_bag(k, c.table, c.idx, c.off, NULL, got);
            int failed = !tj_alloc_fail_pending();
            tj_alloc_fail_after(0);
            if (rc == JIT_STATUS_NO_MEMORY) {
                if (memcmp(got, untouched, c.out_bytes + CANARY) != 0)
                    fail_msg("case %d, allocation %ld failed: NO_MEMORY, but out was written",
                             i, fail);
                continue;
            }
            if (rc != JIT_OK || memcmp(got, want, c.out_bytes + CANARY) != 0)
                fail_msg("case %d, allocation %ld failed: status %d, or bytes not the "
                         "reference kernel's", i, fail, rc);
            retried += failed;
            if (!failed) /* past the call's last allocation */
                break;
        }
        jit_release(k);
        free(want);
        free(got);
        free(untouched);
        free_case(&c);
    }
    /* Not asserted: that a worker's allocation failed and the call came
     * right through the rerun (here most runs), since the pool may run every
     * part on the caller (slow workers, as under the sanitizers). */
    printf("split Segments calls right after a part's failed allocation: %d\n", retried);
}

/* A split Segments kernel over rows of no bytes (a [1, 0] table) has
 * nothing to write and takes no scratch, whatever S: the scratch for the
 * whole call was asked for first, so 2**40 segments failed NO_MEMORY on 2
 * threads where 1 thread returned JIT_OK (a review's find). No allocation
 * is made at all (the first is made to fail). */
static void test_segments_of_empty_rows_take_no_scratch(void **state)
{
    (void)state;
    jit_sig s = {.op = JIT_OP_EMBEDDING_SEGMENTS, .opset = 3, .dtype = JIT_F32,
                 .index_type = JIT_I64, .reduction = JIT_REDUCTION_SUM,
                 .data_shape = {2, {1, 0}}, .indices_shape = {1, {0}},
                 .updates_shape = {1, {0}}, .num_segments = 4};
    int64_t segments = (int64_t)1 << 40;
    for (int threads = 1; threads <= MAX_THREADS; threads *= 8) {
        jit_sig k_sig = counts_dynamic(&s);
        k_sig.threads = threads;
        jit_kernel k = jit_compile(&k_sig);
        assert_non_null(k);
        int64_t dims[4 * JIT_MAX_RANK];
        s.num_segments = segments;
        support_bag_call_dims(&s, dims);
        s.num_segments = 4;
        float table[1], out[1];
        int64_t idx[1] = {0}, ids[1] = {0};
        tj_alloc_fail_after(1);
        int rc = jit_call_bag_dynamic(k, table, idx, ids, NULL, out, dims);
        int allocated = !tj_alloc_fail_pending();
        tj_alloc_fail_after(0);
        if (rc != JIT_OK || allocated)
            fail_msg("%d threads: status %d (%s), %s", threads, rc, rc ? jit_last_error() : "",
                     allocated ? "an allocation made" : "nothing allocated");
        jit_release(k);
    }
}

int main(void)
{
    /* every call of a split kernel in parts (the rule's forced way) */
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segments_short_of_scratch_write_nothing),
        cmocka_unit_test(test_segments_of_empty_rows_take_no_scratch),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_a_pool_of_ours),
        cmocka_unit_test(test_threads_agree_prefetch),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
