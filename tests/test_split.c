/*
 * Split kernels against the one-thread kernel, bit for bit: random
 * signatures large enough for loop kernels (vector gathers, unrolled
 * element loops, rows of a scatter), compiled for threads 1 to 8 with
 * TENSORJIT_SPLIT_MIN=1, so that every call of a split kernel runs in as
 * many parts as it has threads; each output must equal the one-thread
 * kernel's, which must equal the oracle's. Under negative-wraps half the
 * index sets hold negative indices, so that both of the copies' paths (the
 * wrap, and none where the check proved every index non-negative) run.
 * Then the same kernels through jit_units / jit_run_range, their units cut
 * into random ranges run in random order. Kernels too small to split
 * serve their ranges with JIT code too, and a range of indices that
 * jit_validate found none negative skips the wrap.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache.h"
#include "jit_support.h"
#include "pool.h"
#include "split_rule.h"
#include "oracle.h"
#include "support.h"
#include "tensorjit.h"

typedef struct split_case {
    jit_sig sig;
    int depth;
    int64_t dims[JIT_MAX_RANK]; /* the dimension each tuple entry addresses */
    int has_updates;
    int oracle; /* the oracle knows the op (not ScatterElementsUpdate: test_reductions) */
    int64_t data_bytes, index_count, updates_bytes, out_bytes;
} split_case;

static const jit_dtype elem_types[] = {JIT_F32, JIT_I64, JIT_F16, JIT_F64};
static const jit_dtype index_types[] = {JIT_I32, JIT_I64, JIT_U32, JIT_I16};

static jit_shape shape2(int64_t a, int64_t b)
{
    return (jit_shape){2, {a, b}};
}

/* One random signature of the family, sizes for loop kernels. */
static void random_case(uint64_t *rs, split_case *c)
{
    memset(c, 0, sizeof *c);
    jit_sig *s = &c->sig;
    int64_t rows = support_rand_range(rs, 2, 700), cols = support_rand_range(rs, 1, 300);
    int64_t n = support_rand_range(rs, 2, 3000);
    s->dtype = elem_types[support_rand_range(rs, 0, 3)];
    s->index_type = index_types[support_rand_range(rs, 0, 1 + (rows < 32000))];
    s->index_policy = support_rand_range(rs, 0, 1) ? JIT_INDEX_NEGATIVE_WRAPS : JIT_INDEX_ERROR;
    s->data_shape = shape2(rows, cols);
    c->depth = 1;
    c->dims[0] = rows;
    switch (support_rand_range(rs, 0, 6)) {
    case 0: /* GatherND of single elements: vector gathers where data is large */
        s->op = JIT_OP_GATHER_ND, s->opset = 8;
        s->indices_shape = shape2(n, 2);
        c->depth = 2, c->dims[1] = cols;
        break;
    case 1: /* GatherND of rows */
        s->op = JIT_OP_GATHER_ND, s->opset = 8;
        s->indices_shape = shape2(n, 1);
        break;
    case 2: /* Gather along axis 1: an element per index, rows of them */
        s->op = JIT_OP_GATHER, s->opset = 8, s->axis = 1;
        s->index_type = s->index_type == JIT_I16 ? JIT_I32 : s->index_type;
        s->indices_shape = (jit_shape){1, {support_rand_range(rs, 1, 40)}};
        c->dims[0] = cols;
        break;
    case 3: /* GatherElements along the last axis: one index per element */
        s->op = JIT_OP_GATHER_ELEMENTS, s->opset = 6, s->axis = 1;
        s->index_type = s->index_type == JIT_U32 || s->index_type == JIT_I16 ? JIT_I64
                                                                            : s->index_type;
        s->indices_shape = shape2(rows, support_rand_range(rs, 1, 300));
        c->dims[0] = cols;
        break;
    case 4: /* ScatterUpdate of rows, duplicates among them (the last one wins) */
        s->op = JIT_OP_SCATTER_UPDATE, s->axis = 0;
        s->indices_shape = (jit_shape){1, {support_rand_range(rs, 2, 400)}};
        s->updates_shape = shape2(s->indices_shape.dims[0], cols);
        break;
    case 5: /* ScatterNDUpdate of rows */
        s->op = JIT_OP_SCATTER_ND_UPDATE, s->opset = 3;
        s->indices_shape = shape2(support_rand_range(rs, 2, 400), 1);
        s->updates_shape = shape2(s->indices_shape.dims[0], cols);
        break;
    default: /* ScatterElementsUpdate with a sum along the last axis */
        s->op = JIT_OP_SCATTER_ELEMENTS_UPDATE, s->opset = 12, s->axis = 1;
        s->reduction = JIT_REDUCTION_SUM;
        s->dtype = JIT_F32;
        s->index_type = JIT_I64;
        s->indices_shape = shape2(rows, support_rand_range(rs, 1, 64));
        s->updates_shape = s->indices_shape;
        c->dims[0] = cols;
        break;
    }
    jit_op_info info;
    assert_int_equal(jit_op_describe(s->op, &info), 0);
    c->has_updates = info.has_updates;
    if (!(info.index_types & (1u << s->index_type))) /* a type the op takes */
        s->index_type = JIT_I64;
    int64_t es = jit_dtype_size(s->dtype);
    jit_shape os = s->data_shape;
    c->oracle = s->op != JIT_OP_SCATTER_ELEMENTS_UPDATE;
    if (c->oracle)
        oracle_output_shape(s, &os);
    c->data_bytes = oracle_elems(&s->data_shape) * es;
    c->index_count = oracle_elems(&s->indices_shape);
    c->updates_bytes = c->has_updates ? oracle_elems(&s->updates_shape) * es : 0;
    c->out_bytes = oracle_elems(&os) * es;
}

/* Valid indices; under negative-wraps on a signed type, with negatives
 * when `negatives` (each entry in [-dim, dim)). */
static void random_indices(uint64_t *rs, const split_case *c, void *idx, int negatives)
{
    for (int64_t i = 0; i < c->index_count; i++) {
        int64_t dim = c->dims[i % c->depth];
        int64_t lo = negatives ? -dim : 0;
        support_store_index(c->sig.index_type, idx, i, support_rand_range(rs, lo, dim - 1));
    }
}

static int call(jit_kernel fn, const split_case *c, const void *data, const void *idx,
                const void *upd, void *out)
{
    if (c->has_updates)
        return ((jit_scatter_update_fn)fn)(data, idx, upd, out);
    return ((jit_gather_nd_fn)fn)(data, idx, out);
}

/* Says what differs, for which case; returns 1 (a failure). */
__attribute__((format(printf, 3, 4))) static int report(const split_case *c, int64_t n,
                                                        const char *fmt, ...)
{
    jit_op_info info;
    jit_op_describe(c->sig.op, &info);
    fprintf(stderr, "%s #%lld (%s/%s, %s, data %lldx%lld, indices %lld): ", info.name,
            (long long)n, jit_dtype_name(c->sig.dtype), jit_dtype_name(c->sig.index_type),
            jit_index_policy_name(c->sig.index_policy), (long long)c->sig.data_shape.dims[0],
            (long long)c->sig.data_shape.dims[1], (long long)c->index_count);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (last error: %s)\n", jit_last_error());
    return 1;
}

/* The kernel's units cut into random ranges, run in random order after
 * jit_validate; out must then equal want. */
static int by_ranges(uint64_t *rs, jit_kernel fn, const split_case *c, int64_t n,
                     const void *data, const void *idx, const void *upd, const void *want)
{
    int64_t units = jit_units(fn);
    if (units < 2)
        return 0;
    enum { MAX_CUTS = 9 };
    int64_t cut[MAX_CUTS + 2];
    int ncuts = (int)support_rand_range(rs, 1, MAX_CUTS);
    cut[0] = 0;
    for (int i = 1; i <= ncuts; i++)
        cut[i] = support_rand_range(rs, 0, units);
    cut[ncuts + 1] = units;
    for (int i = 1; i <= ncuts; i++) /* sorted: ranges [cut[i], cut[i+1]) */
        for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
            int64_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }
    unsigned char *out = malloc((size_t)c->out_bytes + 1);
    assert_non_null(out);
    memset(out, 0xa5, (size_t)c->out_bytes + 1);
    /* the whole check, or its parts from a random one on (jit_validate_part) */
    int parts = (int)support_rand_range(rs, 0, 5), fails = 0, rc = JIT_OK;
    if (parts == 0) {
        rc = jit_validate(fn, idx);
        if (rc != JIT_OK)
            fails = report(c, n, "jit_validate: status %d", rc);
    }
    int first = parts ? (int)support_rand_range(rs, 0, parts - 1) : 0;
    for (int i = 0; i < parts && !fails; i++) {
        int p = (first + i) % parts;
        rc = jit_validate_part(fn, idx, p, parts);
        if (rc != JIT_OK)
            fails = report(c, n, "jit_validate_part %d of %d: status %d", p, parts, rc);
    }
    int order[MAX_CUTS + 1];
    for (int i = 0; i <= ncuts; i++)
        order[i] = i;
    for (int i = ncuts; i > 0; i--) { /* shuffled */
        int j = (int)support_rand_range(rs, 0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i <= ncuts && !fails; i++) {
        int r = order[i];
        rc = jit_run_range(fn, data, idx, upd, out, cut[r], cut[r + 1]);
        if (rc != JIT_OK)
            fails = report(c, n, "jit_run_range [%lld, %lld): status %d", (long long)cut[r],
                           (long long)cut[r + 1], rc);
    }
    if (!fails && memcmp(out, want, (size_t)c->out_bytes) != 0)
        fails = report(c, n, "%d ranges of %lld units give other bytes", ncuts + 1,
                       (long long)units);
    free(out);
    return fails;
}

/* One case: the kernels of threads 1..8 on the same inputs. */
static int one_case(uint64_t *rs, int64_t n)
{
    split_case c;
    random_case(rs, &c);
    int64_t is = jit_dtype_size(c.sig.index_type);
    unsigned char *data = malloc((size_t)c.data_bytes + 1), *upd = malloc((size_t)c.updates_bytes + 1);
    void *idx = malloc((size_t)(c.index_count * is) + 1);
    unsigned char *want = malloc((size_t)c.out_bytes + 1), *got = malloc((size_t)c.out_bytes + 1);
    assert_true(data && upd && idx && want && got);
    for (int64_t i = 0; i < c.data_bytes; i++) /* small floats for a sum: no NaN, no inf */
        data[i] = (unsigned char)(c.sig.reduction ? (i % 4 == 3 ? 0x3f : support_rand(rs))
                                                  : support_rand(rs));
    for (int64_t i = 0; i < c.updates_bytes; i++)
        upd[i] = (unsigned char)(c.sig.reduction ? (i % 4 == 3 ? 0x3f : support_rand(rs))
                                                 : support_rand(rs));
    int negatives = c.sig.index_policy == JIT_INDEX_NEGATIVE_WRAPS &&
                    c.sig.index_type != JIT_U32 && support_rand_range(rs, 0, 1);
    random_indices(rs, &c, idx, negatives);

    int fails = 0;
    c.sig.threads = 1;
    jit_kernel one = jit_compile(&c.sig);
    if (!one)
        return report(&c, n, "compile, 1 thread");
    int rc = call(one, &c, data, idx, upd, want);
    unsigned char *oracle = malloc((size_t)c.out_bytes + 1);
    assert_non_null(oracle);
    if (rc != JIT_OK || (c.oracle && (oracle_run(&c.sig, data, idx, upd, oracle) != JIT_OK ||
                                      memcmp(want, oracle, (size_t)c.out_bytes) != 0)))
        fails = report(&c, n, "the one-thread kernel (status %d) differs from the oracle", rc);
    free(oracle);
    for (int t = 1; t <= 8 && !fails; t++) {
        c.sig.threads = t;
        jit_kernel fn = jit_compile(&c.sig);
        if (!fn) {
            fails = report(&c, n, "compile, %d threads", t);
            break;
        }
        jit_kernel_info ki;
        assert_int_equal(jit_info(fn, &ki), 0);
        support_expect_jit(&ki, "a split kernel");
        for (int k = 0; k < 2 && !fails; k++) { /* twice: the pool is warm the second time */
            memset(got, 0x5a, (size_t)c.out_bytes + 1);
            rc = call(fn, &c, data, idx, upd, got);
            if (rc != JIT_OK || memcmp(got, want, (size_t)c.out_bytes) != 0)
                fails = report(&c, n, "%d threads (status %d): other bytes than 1 thread's", t,
                               rc);
        }
        if (!fails && c.has_updates) { /* in place: data becomes the output */
            unsigned char *in = malloc((size_t)c.data_bytes + 1);
            assert_non_null(in);
            memcpy(in, data, (size_t)c.data_bytes);
            rc = call(fn, &c, in, idx, upd, in);
            if (rc != JIT_OK || memcmp(in, want, (size_t)c.out_bytes) != 0)
                fails = report(&c, n, "%d threads in place (status %d): other bytes", t, rc);
            free(in);
        }
        if (!fails)
            fails = by_ranges(rs, fn, &c, n, data, idx, upd, want);
    }
    free(data);
    free(upd);
    free(idx);
    free(want);
    free(got);
    return fails;
}

static void test_split_equals_one_thread(void **state)
{
    (void)state;
    long count = support_env_long("TENSORJIT_SPLIT_N", 60);
    uint64_t seed = (uint64_t)support_env_long("TENSORJIT_DIFF_SEED", 20261122), rs = seed;
    support_setenv("TENSORJIT_SPLIT_MIN", "1"); /* every call of a split kernel in parts */
    int fails = 0;
    for (long n = 0; n < count && fails < 5; n++)
        fails += one_case(&rs, n);
    printf("split kernels (seed %llu): %ld signatures x threads 1-8, %d failed\n",
           (unsigned long long)seed, count, fails);
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    assert_int_equal(fails, 0);
}

/* Without the knob the split rule decides, from measured costs; whatever
 * it decides, the bytes are the one-thread kernel's. */
static void test_split_rule_keeps_bytes(void **state)
{
    (void)state;
    uint64_t rs = 7;
    int fails = 0;
    for (long n = 0; n < 20 && !fails; n++)
        fails += one_case(&rs, n);
    assert_int_equal(fails, 0);
    jit_shutdown();
}

/* A GatherND of single f32 elements of a [rows, cols] table, tuples of
 * (row, col): unrolled, a loop below the split gate, or a split kernel. */
static jit_sig element_gather(int64_t rows, int64_t cols, int64_t tuples, jit_index_policy pol)
{
    jit_sig s = {0};
    s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
    s.index_policy = pol, s.threads = 2;
    s.data_shape = shape2(rows, cols);
    s.indices_shape = shape2(tuples, 2);
    return s;
}

static void fill_tuples(uint64_t *rs, int64_t *idx, int64_t tuples, int64_t rows, int64_t cols,
                        int negatives)
{
    for (int64_t t = 0; t < tuples; t++) {
        idx[2 * t] = support_rand_range(rs, negatives ? -rows : 0, rows - 1);
        idx[2 * t + 1] = support_rand_range(rs, negatives ? -cols : 0, cols - 1);
    }
}

/* A split kernel finds itself through its entry on every call, and each
 * thread remembers the last one it found (runtime/cache/cache.c). Kernels
 * freed and compiled again, at whatever addresses, are still found as
 * themselves: every call split, outputs against the one-thread kernel's. */
static void test_entries_found_after_frees(void **state)
{
    (void)state;
    uint64_t rs = 11;
    int fails = 0;
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    for (long n = 0; n < 12 && !fails; n++) {
        fails += one_case(&rs, n);
        jit_shutdown(); /* every kernel's code goes */
    }
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    assert_int_equal(fails, 0);
    /* the thread's memory of an entry goes with its kernel */
    jit_sig g = element_gather(64, 8, 100, JIT_INDEX_ERROR);
    g.threads = 2;
    jit_kernel fn = jit_compile(&g);
    assert_non_null(fn);
    const tj_kernel *k = tj_cache_find_entry((tj_entry_fn)fn);
    assert_non_null(k);
    assert_ptr_equal(tj_cache_find_entry((tj_entry_fn)fn), k);
    jit_shutdown();
    assert_null(tj_cache_find_entry((tj_entry_fn)fn));
}

/* Kernels too small to split (unrolled; a loop below TJ_SPLIT_MIN_WORK),
 * of one thread or two, and a split one: jit_run_range in two ranges gives
 * the whole kernel's bytes, and the reference code serves none of them
 * (their check and range functions are compiled on the first query); a
 * bad index is refused by jit_validate with its value named. */
static void test_small_kernels_ranges_are_jit(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = {{8, 8, 4}, {64, 64, 100}, {300, 200, 1500},
                                       {1024, 1024, 20000}};
    uint64_t rs = 11;
    for (int pol = 0; pol < 4; pol++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            int64_t rows = sizes[i][0], cols = sizes[i][1], n = sizes[i][2];
            jit_sig s = element_gather(rows, cols, n,
                                       pol & 1 ? JIT_INDEX_NEGATIVE_WRAPS : JIT_INDEX_ERROR);
            s.threads = 1 + pol / 2;
            jit_kernel fn = jit_compile(&s);
            assert_non_null(fn);
            jit_kernel_info ki;
            assert_int_equal(jit_info(fn, &ki), 0);
            support_expect_jit(&ki, "a small kernel of two threads");
            float *data = malloc((size_t)(rows * cols) * sizeof *data);
            int64_t *idx = malloc((size_t)n * 2 * sizeof *idx);
            float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
            assert_true(data && idx && want && got);
            for (int64_t e = 0; e < rows * cols; e++)
                data[e] = (float)support_rand(&rs) / 7.0f;
            fill_tuples(&rs, idx, n, rows, cols, pol & 1);
            assert_int_equal(((jit_gather_nd_fn)fn)(data, idx, want), JIT_OK);
            memset(got, 0x5a, (size_t)n * sizeof *got);
            int64_t units = jit_units(fn), before = tj_parts_reference_ranges();
            assert_true(units >= 1);
            assert_int_equal(jit_validate(fn, idx), JIT_OK);
            assert_int_equal(jit_run_range(fn, data, idx, NULL, got, units / 2, units), JIT_OK);
            assert_int_equal(jit_run_range(fn, data, idx, NULL, got, 0, units / 2), JIT_OK);
            assert_memory_equal(got, want, (size_t)n * sizeof *got);
            if (tj_parts_reference_ranges() != before)
                fail_msg("%lld tuples into [%lld, %lld] under %s: the reference code ran its "
                         "ranges", (long long)n, (long long)rows, (long long)cols,
                         jit_index_policy_name(s.index_policy));
            idx[2 * (n - 1) + 1] = cols + 3;
            assert_int_equal(jit_validate(fn, idx), JIT_STATUS_BAD_INDEX);
            char value[32];
            snprintf(value, sizeof value, "%lld", (long long)(cols + 3));
            if (!strstr(jit_last_error(), value))
                fail_msg("the bad index %s is not named: %s", value, jit_last_error());
            free(data), free(idx), free(want), free(got);
        }
    jit_shutdown();
}

/* Under negative-wraps a range wraps only indices jit_validate saw
 * negative. Seen from outside: after a validation that found none, one
 * tuple is made (row, -1) behind the kernel's back (the parts API forbids
 * it: the test does it to see the path); unwrapped, its element is the
 * previous row's last, wrapped its own row's last. So the range reads the
 * previous row's last; validated again (now a negative index), its own.
 * Loop kernels (below the gate, and split) track the sign; with indices
 * untouched, every range gives the whole kernel's bytes. */
static void test_ranges_wrap_once(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = {{64, 64, 100}, {1024, 1024, 20000}};
    uint64_t rs = 12;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int64_t rows = sizes[i][0], cols = sizes[i][1], n = sizes[i][2];
        jit_sig s = element_gather(rows, cols, n, JIT_INDEX_NEGATIVE_WRAPS);
        jit_kernel fn = jit_compile(&s);
        assert_non_null(fn);
        float *data = malloc((size_t)(rows * cols) * sizeof *data);
        int64_t *idx = malloc((size_t)n * 2 * sizeof *idx);
        float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
        assert_true(data && idx && want && got);
        for (int64_t e = 0; e < rows * cols; e++)
            data[e] = (float)e; /* every element its own value */
        fill_tuples(&rs, idx, n, rows, cols, 0);
        int64_t units = jit_units(fn);
        assert_int_equal(((jit_gather_nd_fn)fn)(data, idx, want), JIT_OK);
        assert_int_equal(jit_validate(fn, idx), JIT_OK);
        assert_int_equal(jit_run_range(fn, data, idx, NULL, got, 0, units), JIT_OK);
        assert_memory_equal(got, want, (size_t)n * sizeof *got);

        int64_t row = 1 + support_rand_range(&rs, 0, rows - 2);
        idx[0] = row, idx[1] = -1;
        assert_int_equal(jit_run_range(fn, data, idx, NULL, got, 0, units), JIT_OK);
        if (got[0] != data[row * cols - 1])
            fail_msg("%lld tuples: after a validation without negatives the range wrapped "
                     "(read %g, the unwrapped element is %g)",
                     (long long)n, got[0], data[row * cols - 1]);
        assert_int_equal(jit_validate(fn, idx), JIT_OK);
        assert_int_equal(jit_run_range(fn, data, idx, NULL, got, units / 3, units), JIT_OK);
        assert_int_equal(jit_run_range(fn, data, idx, NULL, got, 0, units / 3), JIT_OK);
        assert_int_equal(((jit_gather_nd_fn)fn)(data, idx, want), JIT_OK);
        assert_memory_equal(got, want, (size_t)n * sizeof *got);
        assert_true(got[0] == data[row * cols + cols - 1]);
        free(data), free(idx), free(want), free(got);
    }
    jit_shutdown();
}

typedef struct racer {
    jit_kernel fn;
    const float *data;
    const int64_t *idx;
    float *out;
    int64_t units;
    int rc;
    int parts; /* 0: jit_validate; else jit_validate_part, part by part */
} racer;

static void *race_ranges(void *arg)
{
    racer *r = arg;
    r->rc = r->parts ? JIT_OK : jit_validate(r->fn, r->idx);
    for (int p = 0; p < r->parts && r->rc == JIT_OK; p++)
        r->rc = jit_validate_part(r->fn, r->idx, p, r->parts);
    if (r->rc == JIT_OK)
        r->rc = jit_run_range(r->fn, r->data, r->idx, NULL, r->out, 0, r->units);
    return NULL;
}

/* Four threads' first queries of a fresh kernel race to compile its parts
 * (one module is kept, the others freed), two by jit_validate and two by
 * jit_validate_part (in one and three parts): each gets the whole kernel's
 * bytes, and JIT code serves them all (run under TSan by build.sh). */
static void test_parts_first_queries_race(void **state)
{
    (void)state;
    enum { RACERS = 4, ROWS = 64, COLS = 64, N = 300 };
    jit_sig s = element_gather(ROWS, COLS, N, JIT_INDEX_NEGATIVE_WRAPS);
    jit_kernel fn = jit_compile(&s);
    assert_non_null(fn);
    static float data[ROWS * COLS], want[N], out[RACERS][N];
    static int64_t idx[2 * N];
    uint64_t rs = 13;
    for (int e = 0; e < ROWS * COLS; e++)
        data[e] = (float)support_rand(&rs);
    fill_tuples(&rs, idx, N, ROWS, COLS, 1);
    assert_int_equal(((jit_gather_nd_fn)fn)(data, idx, want), JIT_OK);
    int64_t before = tj_parts_reference_ranges();
    racer r[RACERS];
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) {
        r[i] = (racer){fn, data, idx, out[i], jit_units(fn), -1, i % 2 ? i : 0};
        assert_int_equal(pthread_create(&t[i], NULL, race_ranges, &r[i]), 0);
    }
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].rc, JIT_OK);
        assert_memory_equal(out[i], want, sizeof want);
    }
    assert_int_equal(tj_parts_reference_ranges(), before);
    jit_shutdown();
}

/* The split rule's counts (tensorjit bench --verbose) add up: every call
 * of a long split kernel is weighed and timed one way or the other, and
 * its due probes (calls 8, 16, 32) ran, whatever the verdict. */
static void test_split_counts_add_up(void **state)
{
    (void)state;
    enum { ROWS = 8192, COLS = 256, N = 8192, CALLS = 40 };
    jit_sig s = {0};
    s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
    s.threads = 2;
    s.data_shape = shape2(ROWS, COLS);
    s.indices_shape = shape2(N, 1);
    jit_kernel fn = jit_compile(&s);
    assert_non_null(fn);
    float *data = calloc((size_t)ROWS * COLS, sizeof *data), *out = malloc((size_t)N * COLS * 4);
    int64_t *idx = malloc(N * sizeof *idx);
    assert_true(data && out && idx);
    uint64_t rs = 14;
    for (int i = 0; i < N; i++)
        idx[i] = support_rand_range(&rs, 0, ROWS - 1);
    for (int i = 0; i < CALLS; i++)
        assert_int_equal(((jit_gather_nd_fn)fn)(data, idx, out), JIT_OK);
    tj_split_counts c;
    assert_int_equal(tj_split_counts_of(fn, &c), 0);
    assert_int_equal(c.calls, CALLS);
    assert_int_equal(c.alone + c.split, CALLS);
    if (tj_pool_cpus() < 2) /* one CPU to run on (an affinity mask): no split, no probe */
        return;
    assert_true(c.probes >= 3);
    assert_true(c.alone_ps > 0);
    assert_int_equal(tj_split_counts_of(NULL, &c), -1);
    free(data), free(out), free(idx);
    jit_shutdown();
}

/* The body of the function whose name ends in `suffix` in ir, as a new
 * string (NULL: none). */
static char *ir_function(const char *ir, const char *suffix)
{
    for (const char *d = strstr(ir, "define "); d; d = strstr(d + 1, "define ")) {
        const char *paren = strchr(d, '(');
        size_t n = strlen(suffix);
        if (!paren || (size_t)(paren - d) < n || strncmp(paren - n, suffix, n) != 0)
            continue;
        const char *end = strstr(d, "\n}\n");
        size_t len = end ? (size_t)(end - d) : strlen(d);
        char *body = malloc(len + 1);
        assert_non_null(body);
        memcpy(body, d, len);
        body[len] = '\0';
        return body;
    }
    return NULL;
}

/* Issue 20: a row gather of 16 MB out (G5's rows, 1 KB) with streaming
 * stores asked for (TENSORJIT_NT=1) streams in the two-thread kernel's
 * range function as in the one-thread kernel, behind the same alignment
 * test of out (each part starts on a whole row, a multiple of 16 bytes
 * from out), and every call split in two parts gives the one-thread
 * kernel's bytes. */
static void test_split_ranges_stream(void **state)
{
    (void)state;
    enum { ROWS = 20000, COLS = 256, N = 16384 };
    support_setenv("TENSORJIT_NT", "1");
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    jit_shutdown(); /* the library reads its environment again */
    jit_sig s = {0};
    s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I32;
    s.data_shape = shape2(ROWS, COLS);
    s.indices_shape = shape2(N, 1);
    s.threads = 1;
    char *one = jit_dump(&s, JIT_DUMP_IR);
    s.threads = 2;
    char *two = jit_dump(&s, JIT_DUMP_IR);
    assert_true(one && two);
    assert_non_null(strstr(one, "!nontemporal"));
    char *range = ir_function(two, "_range");
    if (!range)
        fail_msg("the two-thread kernel has no range function");
    if (!strstr(range, "!nontemporal") || !strstr(range, "out.misalign"))
        fail_msg("the two-thread kernel's range function does not stream (or streams without "
                 "testing out's alignment)");
    free(range);
    jit_free(one), jit_free(two);

    jit_kernel k1, k2;
    s.threads = 1, k1 = jit_compile(&s);
    s.threads = 2, k2 = jit_compile(&s);
    assert_true(k1 && k2);
    float *data = malloc((size_t)ROWS * COLS * sizeof *data);
    float *want = aligned_alloc(64, (size_t)N * COLS * sizeof *want);
    float *got = aligned_alloc(64, (size_t)N * COLS * sizeof *got);
    int32_t *idx = malloc(N * sizeof *idx);
    assert_true(data && want && got && idx);
    uint64_t rs = 15;
    for (int64_t e = 0; e < (int64_t)ROWS * COLS; e++)
        data[e] = (float)support_rand(&rs);
    for (int i = 0; i < N; i++)
        idx[i] = (int32_t)support_rand_range(&rs, 0, ROWS - 1);
    assert_int_equal(((jit_gather_nd_fn)k1)(data, idx, want), JIT_OK);
    for (int i = 0; i < N; i++) /* the oracle: row idx[i] */
        assert_memory_equal(want + (int64_t)i * COLS, data + (int64_t)idx[i] * COLS,
                            COLS * sizeof *data);
    assert_int_equal(((jit_gather_nd_fn)k2)(data, idx, got), JIT_OK);
    assert_memory_equal(got, want, (size_t)N * COLS * sizeof *got);
    tj_split_counts c; /* and it ran in parts */
    assert_int_equal(tj_split_counts_of(k2, &c), 0);
    assert_int_equal(c.split, 1);
    free(data), free(want), free(got), free(idx);
    support_setenv("TENSORJIT_NT", NULL);
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    jit_shutdown();
}

/* A probe that loses is made the rarer the more it loses, so that the
 * probes of a kernel kept alone (G3: split calls at 5.4x) add about 1% of
 * a call, not 7%; a probe that wins, or one not measured yet, keeps the
 * usual interval, and no interval passes the cap. */
static void test_probes_back_off(void **state)
{
    (void)state;
    int64_t usual = tj_split_probe_every(1000, 1000);
    assert_true(usual >= 8);
    assert_int_equal(tj_split_probe_every(1000, 500), usual);  /* the probe wins */
    assert_int_equal(tj_split_probe_every(0, 5000), usual);    /* nothing measured */
    assert_int_equal(tj_split_probe_every(1000, 1100), usual); /* loses a tenth */
    int64_t g3 = tj_split_probe_every(726, 3953);
    if ((double)(3953 - 726) / 726 / (double)g3 > 0.011)
        fail_msg("a 5.4x probe every %lld calls costs more than 1%% a call", (long long)g3);
    int64_t worse = tj_split_probe_every(1000, 9000);
    assert_true(worse >= g3);
    int64_t cap = tj_split_probe_every(1, 1000000);
    assert_true(cap >= worse && cap <= 4096);
    /* probes fall on the calls the rule weighs (every 8th), never on the
     * quiet ones between that skip it */
    for (int64_t probe_ps = 1000; probe_ps < 400000; probe_ps = probe_ps * 3 / 2 + 7)
        if (tj_split_probe_every(1000, probe_ps) % 8 != 0)
            fail_msg("a probe every %lld calls falls between the timed ones",
                     (long long)tj_split_probe_every(1000, probe_ps));
}

/* Made-up times for the split rule (tj_split_decide, tj_split_noted): a
 * call alone costs alone_ns; a split call split_ns back to back, wake_ns
 * more when the call before it ran alone (the pool's workers asleep), and
 * cold_ns while it is one of the first `cold` (the pool starting). The
 * times are seconds, so that the model, which weighs them against the
 * real pool's job cost (whatever the tests before left it, up to
 * milliseconds on a busy host), always finds them worth two parts. */
typedef struct rule_sim {
    double alone_ns, split_ns, wake_ns, cold_ns;
    int cold, splits, last_split;
    double total_ns;
} rule_sim;

/* One call through the rule: whether it ran split. */
static int rule_sim_call(tj_split_stat *st, rule_sim *m)
{
    const tj_split_size size = {4096, 2, 256};
    const double work = 1e6; /* units of work: alone_ns 2e9 is 2e6 ps a unit */
    tj_split_way w;
    int timed = tj_split_decide(&size, work, st, &w);
    int split = w.parts > 1;
    double ns = !split                 ? m->alone_ns
                : m->splits < m->cold  ? m->cold_ns
                : m->last_split        ? m->split_ns
                                       : m->split_ns + m->wake_ns;
    m->splits += split;
    m->last_split = split;
    m->total_ns += ns;
    if (timed)
        tj_split_noted(st, w, ns, work);
    return split;
}

/* Issue 20, on the 16-core device host: S6's first split calls were slow
 * (the pool starting), so the verdict was alone; every probe after that
 * was one split call among calls alone, which met sleeping workers and
 * paid their wake-up (up to milliseconds on that virtual machine), lost,
 * and kept the kernel alone for a whole short run, although its split
 * calls back to back took half the time. A probe of the split way now
 * follows a split call that wakes the pool, and is taken back to back:
 * the verdict turns at the first probe. */
static void test_probes_wake_the_pool_first(void **state)
{
    (void)state;
    if (tj_pool_cpus() < 2)
        skip();
    support_setenv("TENSORJIT_SPLIT_MIN", NULL); /* a failed test's, left set */
    jit_shutdown();
    tj_split_stat st;
    memset(&st, 0, sizeof st);
    rule_sim m = {.alone_ns = 2e9, .split_ns = 1e9, .wake_ns = 1.5e9, .cold_ns = 3e9, .cold = 2};
    int ran_split[41] = {0};
    for (int call = 1; call <= 40; call++)
        ran_split[call] = rule_sim_call(&st, &m);
    /* from call 11 all split, but the due probes of the way alone */
    for (int call = 11; call <= 40; call++)
        if (!ran_split[call] && call != 16 && call != 32)
            fail_msg("call %d ran alone: the first probe (call 8) did not turn the verdict", call);
    tj_split_counts c;
    tj_split_counts_read(&st, &c);
    assert_int_equal(c.calls, 40);
    assert_int_equal(c.alone + c.split, 40); /* the wake-up calls among the split ones */
    assert_int_equal(c.woken, 1);             /* one probe turned it: call 8 woke the pool */
    assert_true(c.split_ps < c.alone_ps);
}

/* Where split calls lose even back to back (3 s against 2 s alone), the
 * verdict stays alone, and its probes, two split calls each now, still
 * cost at most about 1% of the calls' time after the first 64. */
static void test_probes_that_lose_stay_rare(void **state)
{
    (void)state;
    if (tj_pool_cpus() < 2)
        skip();
    enum { CALLS = 4096, FIRST = 64 };
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    jit_shutdown();
    tj_split_stat st;
    memset(&st, 0, sizeof st);
    rule_sim m = {.alone_ns = 2e9, .split_ns = 3e9, .wake_ns = 0, .cold_ns = 3e9, .cold = 2};
    for (int call = 1; call <= FIRST; call++)
        rule_sim_call(&st, &m);
    double before = m.total_ns;
    int splits = 0;
    for (int call = FIRST + 1; call <= CALLS; call++)
        splits += rule_sim_call(&st, &m);
    double extra = (m.total_ns - before) / ((CALLS - FIRST) * m.alone_ns) - 1;
    if (extra > 0.012)
        fail_msg("probes cost %.2f%% of the calls' time (%d split calls of %d)", 100 * extra,
                 splits, CALLS - FIRST);
    assert_true(splits >= 2); /* but the host is still looked at */
}

/* The buffers of the large GatherND calls below: data [1024, 1024] f32
 * holding its own element numbers, outputs and i64 tuples of 2 for n. */
typedef struct large_bufs {
    float *data, *want, *got;
    int64_t *idx;
} large_bufs;

static large_bufs large_bufs_new(int64_t n)
{
    large_bufs b = {malloc(1024 * 1024 * sizeof(float)), malloc((size_t)n * sizeof(float)),
                    malloc((size_t)n * sizeof(float)), malloc(2 * (size_t)n * sizeof(int64_t))};
    assert_true(b.data && b.want && b.got && b.idx);
    for (int i = 0; i < 1024 * 1024; i++)
        b.data[i] = (float)i;
    return b;
}

static void large_bufs_free(large_bufs *b)
{
    free(b->data), free(b->want), free(b->got), free(b->idx);
}

/* One call of a GatherND [1024,1024] f32 by `n` i64 tuples of 2 into a
 * buffer first filled with 0x5a: its status and message. */
static int call_large(jit_kernel fn, const float *data, const int64_t *idx, float *out, size_t n,
                      char *msg, size_t len)
{
    memset(out, 0x5a, n * sizeof *out);
    int rc = ((jit_gather_nd_fn)fn)(data, idx, out);
    snprintf(msg, len, "%s", rc == JIT_OK ? "" : jit_last_error());
    return rc;
}

/* A bad index refused by the one-thread kernel (rc_one, msg_one) and the
 * kernel under test alike, the same message, nothing written by either
 * (both outputs were filled alike before). */
static void expect_same_refusal(int rc_one, const char *msg_one, int rc, const char *msg,
                                const void *want, const void *got, size_t bytes)
{
    assert_int_equal(rc_one, JIT_STATUS_BAD_INDEX);
    assert_int_equal(rc, rc_one);
    assert_string_equal(msg, msg_one);
    if (memcmp(got, want, bytes) != 0)
        fail_msg("written after a bad index: %s", msg);
}

/* Where every call was forced split, at least `least` of fn's were. */
static void expect_split_calls(jit_kernel fn, int forced, int64_t least)
{
    tj_split_counts c;
    assert_int_equal(tj_split_counts_of(fn, &c), 0);
    if (forced && c.split < least)
        fail_msg("forced: %lld calls split of %lld", (long long)c.split, (long long)c.calls);
}

/* A signature for threads its kernel would never use gets the one-thread
 * kernel itself: one compile, one pointer for threads 0, 1, N and
 * JIT_THREADS_ALL (compiled or asked for in the background), a hold per
 * compile; a kernel that splits is a kernel of its own. */
static void test_threads_unused_give_the_one_thread_kernel(void **state)
{
    (void)state;
    jit_shutdown();
    jit_sig small = element_gather(8, 8, 4, JIT_INDEX_ERROR); /* unrolled: nothing to split */
    jit_kernel two = jit_compile(&small);
    assert_non_null(two);
    static const int others[] = {1, 0, JIT_THREADS_ALL, 8};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        small.threads = others[i];
        if (jit_compile(&small) != two)
            fail_msg("threads = %d: a kernel other than threads = 2's", others[i]);
    }
    small.threads = 8; /* the alias of the count above: a hit */
    assert_ptr_equal(jit_compile(&small), two);
    small.threads = 4;
    assert_ptr_equal(jit_compile_async(&small), two);
    small.threads = 6;
    small.engine = JIT_ENGINE_REFERENCE; /* runs on the caller's thread whatever the count */
    jit_kernel ref = jit_compile(&small);
    small.threads = 1;
    assert_ptr_equal(jit_compile(&small), ref);
    assert_int_equal(jit_release(ref), 0);
    assert_int_equal(jit_release(ref), 0);
    small.engine = JIT_ENGINE_AUTO;
    small.threads = 4;
    char *why = jit_explain(&small);
    assert_non_null(why);
    assert_non_null(strstr(why, "threads 4: this kernel would not split"));
    jit_free(why);
    jit_kernel_stats st;
    assert_int_equal(jit_get_kernel_stats(&st), 0);
    assert_int_equal(st.jit_kernels, 1);
    /* a bag of 8 lookups, and a dynamic family whose mean's passes are one
     * thread's: each count's the one-thread kernel too */
    jit_sig bag = {.op = JIT_OP_EMBEDDING_BAG_PACKED, .opset = 15, .dtype = JIT_F32,
                   .index_type = JIT_I32, .reduction = JIT_REDUCTION_SUM, .threads = 2,
                   .data_shape = shape2(10, 8), .indices_shape = shape2(4, 2)};
    jit_sig mean = {.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, .opset = 12, .dtype = JIT_F32,
                    .index_type = JIT_I64, .reduction = JIT_REDUCTION_MEAN, .threads = 2,
                    .data_shape = shape2(JIT_DIM_DYNAMIC, 4),
                    .indices_shape = shape2(JIT_DIM_DYNAMIC, 4),
                    .updates_shape = shape2(JIT_DIM_DYNAMIC, 4)};
    jit_sig *more[] = {&bag, &mean};
    for (int i = 0; i < 2; i++) {
        jit_kernel n = jit_compile(more[i]);
        more[i]->threads = 1;
        assert_non_null(n);
        assert_ptr_equal(jit_compile(more[i]), n);
        assert_int_equal(jit_release(n), 0);
        assert_int_equal(jit_release(n), 0);
    }
    for (int i = 0; i < 7; i++)
        assert_int_equal(jit_release(two), 0);
    assert_int_equal(jit_release(two), -1); /* seven holds, seven releases */

    large_bufs b = large_bufs_new(1 << 18);
    jit_sig large = element_gather(1024, 1024, 1 << 18, JIT_INDEX_ERROR);
    jit_kernel split = jit_compile(&large);
    large.threads = 1;
    jit_kernel one = jit_compile(&large);
    assert_non_null(split);
    assert_ptr_not_equal(split, one);
    large.threads = 2;
    why = jit_explain(&large);
    assert_non_null(why);
    assert_null(strstr(why, "would not split"));
    assert_non_null(strstr(why, "split across up to 2 threads"));
    jit_free(why);
    large.engine = JIT_ENGINE_REFERENCE; /* a kernel that splits, but not on this engine */
    why = jit_explain(&large);
    assert_non_null(why);
    assert_non_null(strstr(why, "threads 2: the reference kernel runs on the calling thread"));
    jit_free(why);
    large.engine = JIT_ENGINE_AUTO;
    uint64_t rs = 5;
    fill_tuples(&rs, b.idx, 1 << 18, 1024, 1024, 0);
    char msg[256];
    assert_int_equal(call_large(one, b.data, b.idx, b.want, 1 << 18, msg, sizeof msg), JIT_OK);
    assert_int_equal(call_large(split, b.data, b.idx, b.got, 1 << 18, msg, sizeof msg), JIT_OK);
    assert_memory_equal(b.got, b.want, (size_t)(1 << 18) * sizeof(float));
    tj_split_counts c1, c2; /* the rule weighs a split kernel's calls, no other's */
    assert_int_equal(tj_split_counts_of(one, &c1), 0);
    assert_int_equal(tj_split_counts_of(split, &c2), 0);
    assert_int_equal(c1.split + c1.alone, 0);
    assert_int_equal(c2.split + c2.alone, 1);
    large_bufs_free(&b);
    jit_shutdown();
}

/* A split kernel whose indices take 1 MB or more checks them in parts
 * too: its main calls no check function, its range function has a check
 * mode; split calls (forced) and calls alone give the one-thread kernel's
 * output under error and under negative-wraps with negative indices, and
 * a bad index in the second half gives its status and message, with
 * nothing written. */
static void test_checks_in_parts(void **state)
{
    (void)state;
    enum { N = 131072 }; /* 2 MB of i64 tuples */
    large_bufs b = large_bufs_new(N);
    float *data = b.data, *want = b.want, *got = b.got;
    int64_t *idx = b.idx;
    uint64_t rs = 31;
    static const jit_index_policy policies[] = {JIT_INDEX_ERROR, JIT_INDEX_NEGATIVE_WRAPS};
    char msg_one[512], msg_two[512];
    for (int run = 0; run < 4; run++) { /* policy by policy, calls forced split or not */
        int pi = run / 2, forced = run % 2;
        support_setenv("TENSORJIT_SPLIT_MIN", forced ? "1" : NULL); /* jit_shutdown too */
        for (int i = 0; i < 2 * N; i++)
            idx[i] = support_rand_range(&rs, pi ? -1024 : 0, 1023);
        jit_sig s = {0};
        s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
        s.index_policy = policies[pi];
        s.data_shape = shape2(1024, 1024);
        s.indices_shape = shape2(N, 2);
        s.threads = 2;
        char *ir = jit_dump(&s, JIT_DUMP_IR);
        assert_non_null(ir);
        const char *range = strstr(ir, "_range(");
        if (!range || !strstr(range, "part.check"))
            fail_msg("the range function has no check mode");
        if (strstr(ir, "call i32 @tj_gather_nd_check("))
            fail_msg("the main calls the check function");
        jit_free(ir);
        jit_kernel two = jit_compile(&s);
        s.threads = 1;
        jit_kernel one = jit_compile(&s);
        assert_true(one && two);
        assert_int_equal(call_large(one, data, idx, want, N, msg_one, sizeof msg_one), JIT_OK);
        for (int c = 0; c < 6; c++) {
            assert_int_equal(call_large(two, data, idx, got, N, msg_two, sizeof msg_two), JIT_OK);
            if (memcmp(got, want, N * sizeof *got) != 0)
                fail_msg("policy %d, forced %d, call %d: not the one-thread output", pi, forced,
                         c);
        }
        idx[2 * N - 3] = 1024; /* the column of the last tuple but one */
        int rc_one = call_large(one, data, idx, want, N, msg_one, sizeof msg_one);
        int rc = call_large(two, data, idx, got, N, msg_two, sizeof msg_two);
        expect_same_refusal(rc_one, msg_one, rc, msg_two, want, got, N * sizeof *got);
        expect_split_calls(two, forced, 6);
    }
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    large_bufs_free(&b);
}

/* A call of the dynamic GatherND kernel of data [1024, 1024] by n tuples
 * of 2, as call_large's. */
static int call_large_dynamic(jit_kernel fn, const float *data, const int64_t *idx, float *out,
                              size_t n, char *msg, size_t len)
{
    memset(out, 0x5a, n * sizeof *out);
    int rc = jit_call_dynamic(fn, data, idx, NULL, out, (int64_t[]){1024, 1024, (int64_t)n, 2});
    snprintf(msg, len, "%s", rc == JIT_OK ? "" : jit_last_error());
    return rc;
}

/* A dynamic split kernel checks a call's indices in parts where they take
 * 1 MB or more, as a static one does, and on the calling thread where they
 * take less: its main chooses by the call's bytes. With the data's dims
 * static (constant bounds: the checks' vector chunks) or dynamic, under
 * error and negative-wraps, calls forced split or not give the one-thread
 * static kernel's output and a bad index its status and message, nothing
 * written; a small call of the same kernel too. */
static void test_dynamic_checks_in_parts(void **state)
{
    (void)state;
    enum { N = 131072, SMALL = 4096 }; /* 2 MB of i64 tuples; 64 KB */
    large_bufs b = large_bufs_new(N);
    float *data = b.data, *want = b.want, *got = b.got;
    int64_t *idx = b.idx;
    uint64_t rs = 37;
    static const jit_index_policy policies[] = {JIT_INDEX_ERROR, JIT_INDEX_NEGATIVE_WRAPS};
    char msg_one[512], msg_two[512];
    for (int run = 0; run < 8; run++) { /* policy, forced split or not, data dims dynamic */
        int pi = run / 4, forced = run / 2 % 2, dyn_data = run % 2;
        support_setenv("TENSORJIT_SPLIT_MIN", forced ? "1" : NULL);
        for (int i = 0; i < 2 * N; i++)
            idx[i] = support_rand_range(&rs, pi ? -1024 : 0, 1023);
        jit_sig s = {0};
        s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
        s.index_policy = policies[pi];
        s.data_shape = dyn_data ? shape2(JIT_DIM_DYNAMIC, JIT_DIM_DYNAMIC) : shape2(1024, 1024);
        s.indices_shape = shape2(JIT_DIM_DYNAMIC, 2);
        s.threads = 2;
        char *ir = jit_dump(&s, JIT_DUMP_IR);
        assert_non_null(ir);
        const char *range = strstr(ir, "_range(");
        if (!range || !strstr(range, "part.check"))
            fail_msg("run %d: the dynamic range function has no check mode", run);
        if (!strstr(ir, "check.in.parts"))
            fail_msg("run %d: the main does not choose where the check goes", run);
        jit_free(ir);
        jit_kernel two = jit_compile(&s);
        s.data_shape = shape2(1024, 1024);
        for (int size = 0; size < 2; size++) {
            size_t n = size ? SMALL : N;
            s.indices_shape = shape2((int64_t)n, 2);
            s.threads = 1;
            jit_kernel one = jit_compile(&s);
            assert_true(one && two);
            assert_int_equal(call_large(one, data, idx, want, n, msg_one, sizeof msg_one),
                             JIT_OK);
            for (int c = 0; c < 4; c++) {
                assert_int_equal(
                    call_large_dynamic(two, data, idx, got, n, msg_two, sizeof msg_two), JIT_OK);
                if (memcmp(got, want, n * sizeof *got) != 0)
                    fail_msg("run %d, %zu tuples, call %d: not the one-thread output", run, n,
                             c);
            }
            int64_t saved = idx[2 * n - 3];
            idx[2 * n - 3] = 1024; /* the column of the last tuple but one */
            int rc_one = call_large(one, data, idx, want, n, msg_one, sizeof msg_one);
            int rc = call_large_dynamic(two, data, idx, got, n, msg_two, sizeof msg_two);
            idx[2 * n - 3] = saved;
            expect_same_refusal(rc_one, msg_one, rc, msg_two, want, got, n * sizeof *got);
        }
        expect_split_calls(two, forced, 8);
    }
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    large_bufs_free(&b);
}

/* The scatters' dynamic kernels with 1 MB of i64 indices or more (every
 * dim dynamic but the tuple length), split (forced) or not: ScatterNDUpdate-15 and
 * ScatterElementsUpdate-12 summing with collisions (S5d's and S6's
 * kinds), under error and negative-wraps: each call gives the one-thread
 * static kernel's bytes, and a bad index its status and message with
 * nothing written. */
static void test_dynamic_scatters_check_in_parts(void **state)
{
    (void)state;
    enum { ROWS = 512, COLS = 256, N = ROWS * COLS }; /* 1 MB of i64 indices */
    float *data = malloc(N * sizeof *data), *upd = malloc(N * sizeof *upd),
          *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got);
    int64_t *idx = malloc(N * sizeof *idx);
    assert_true(data && upd && want && got && idx);
    uint64_t rs = 47;
    for (int i = 0; i < N; i++)
        data[i] = (float)support_rand_range(&rs, -64, 64), upd[i] = (float)(i % 97) / 8;
    char msg_one[512], msg_two[512];
    for (int run = 0; run < 8; run++) { /* op, policy, forced split or not */
        int nd = run / 4, wraps = run / 2 % 2, forced = run % 2;
        support_setenv("TENSORJIT_SPLIT_MIN", forced ? "1" : NULL);
        jit_sig s = {0};
        s.dtype = JIT_F32, s.index_type = JIT_I64, s.reduction = JIT_REDUCTION_SUM;
        s.index_policy = wraps ? JIT_INDEX_NEGATIVE_WRAPS : JIT_INDEX_ERROR;
        s.data_shape = shape2(ROWS, COLS);
        int64_t count = N, dims[6] = {ROWS, COLS, ROWS, COLS, ROWS, COLS}, bounds[2];
        if (nd) { /* every element by a tuple of 2: indices [N / 2, 2], updates [N / 2] */
            s.op = JIT_OP_SCATTER_ND_UPDATE, s.opset = 15;
            s.indices_shape = shape2(N / 2, 2);
            s.updates_shape = (jit_shape){1, {N / 2}};
            dims[2] = N / 2, dims[3] = 2, dims[4] = N / 2;
            bounds[0] = ROWS, bounds[1] = COLS;
        } else {
            s.op = JIT_OP_SCATTER_ELEMENTS_UPDATE, s.opset = 12, s.axis = 1;
            s.indices_shape = shape2(ROWS, COLS);
            s.updates_shape = s.indices_shape;
            bounds[0] = bounds[1] = COLS;
        }
        int64_t bound = bounds[1]; /* of the last entry */
        for (int64_t i = 0; i < count; i++)
            idx[i] = support_rand_range(&rs, wraps ? -bounds[i % 2] : 0, bounds[i % 2] - 1);
        s.threads = 1;
        jit_kernel one = jit_compile(&s);
        jit_sig d = s;
        d.threads = 2;
        for (int i = 0; i < 2; i++)
            d.data_shape.dims[i] = d.indices_shape.dims[i] = d.updates_shape.dims[i] =
                JIT_DIM_DYNAMIC;
        if (nd)
            d.indices_shape.dims[1] = 2; /* the tuple length stays static */
        jit_kernel two = jit_compile(&d);
        assert_true(one && two);
        char *ir = jit_dump(&d, JIT_DUMP_IR);
        assert_non_null(ir);
        if (!strstr(ir, "check.in.parts"))
            fail_msg("run %d: the dynamic main does not choose where the check goes", run);
        jit_free(ir);
        for (int bad = 0; bad < 2; bad++) {
            if (bad)
                idx[count - 1] = bound; /* past the dim */
            memset(want, 0x5a, N * sizeof *want), memset(got, 0x5a, N * sizeof *got);
            int rc_one = jit_call(one, data, idx, upd, want);
            snprintf(msg_one, sizeof msg_one, "%s", rc_one ? jit_last_error() : "");
            int rc = jit_call_dynamic(two, data, idx, upd, got, dims);
            snprintf(msg_two, sizeof msg_two, "%s", rc ? jit_last_error() : "");
            assert_int_equal(rc_one, bad ? JIT_STATUS_BAD_INDEX : JIT_OK);
            assert_int_equal(rc, rc_one);
            assert_string_equal(msg_two, msg_one);
            if (memcmp(got, want, N * sizeof *got) != 0)
                fail_msg("run %d, bad %d: not the one-thread kernel's bytes", run, bad);
        }
        idx[count - 1] = 0;
    }
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
    free(data), free(upd), free(want), free(got), free(idx);
}

/* The part of `parts` near-equal slices of n that holds item `at`. */
static int part_holding(int64_t at, int64_t n, int parts)
{
    int64_t q = n / parts, r = n % parts;
    for (int p = 0; p < parts; p++)
        if (at < q * (p + 1) + (p + 1 < r ? p + 1 : r))
            return p;
    return -1;
}

/* jit_validate_part on the GatherND of call_large. Every part checks its
 * own slice of the tuples, whichever engine answers: the range function's
 * check mode (2 MB of indices: the split kernel's own, or the lazy parts
 * of a one-thread kernel), the reference's pass (a small kernel, the
 * reference kernel, a tiered kernel before its switch: the parts of one
 * check may meet both engines). A bad index fails the part whose slice
 * holds it, with jit_validate's message, and no other; ranges after the
 * parts wrap negative indices even where jit_validate had seen none
 * before. Bad part numbers are refused. */
static void test_validate_in_parts(void **state)
{
    (void)state;
    enum { N = 131072, SMALL = 64, RUNS = 5 };
    large_bufs b = large_bufs_new(N);
    float *data = b.data, *want = b.want, *got = b.got;
    int64_t *idx = b.idx;
    uint64_t rs = 43;
    char msg[512], whole_msg[512];
    /* one thread, two threads, a small kernel, the reference kernel, a
     * tiered kernel's parts while it switches */
    for (int run = 0; run < RUNS; run++) {
        int64_t n = run == 2 ? SMALL : N;
        for (int64_t i = 0; i < 2 * n; i++)
            idx[i] = support_rand_range(&rs, 0, 1023);
        jit_sig s = {0};
        s.op = JIT_OP_GATHER_ND, s.opset = 8, s.dtype = JIT_F32, s.index_type = JIT_I64;
        s.index_policy = JIT_INDEX_NEGATIVE_WRAPS;
        s.data_shape = shape2(1024, 1024);
        s.indices_shape = shape2(n, 2);
        s.threads = run == 1 ? 2 : 1;
        s.engine = run == 3 ? JIT_ENGINE_REFERENCE : JIT_ENGINE_AUTO;
        int64_t at = n * 5 / 8; /* in part 2 of 4, part 4 of 7 */
        if (run == 4) { /* part 3 (the bad one) before the switch, then the rest */
            at = n - 2;
            idx[2 * at + 1] = 1024;
            jit_kernel fn = jit_compile_async(&s);
            assert_non_null(fn);
            jit_kernel_info info;
            assert_int_equal(jit_info(fn, &info), 0);
            int first = info.engine; /* the reference's, unless the compile won */
            for (int p = 3; p >= 0; p--) {
                int rc = jit_validate_part(fn, idx, p, 4);
                if (rc != (p == part_holding(at, n, 4) ? JIT_STATUS_BAD_INDEX : JIT_OK))
                    fail_msg("tiered (first on engine %d): part %d of 4: status %d", first, p,
                             rc);
                for (int i = 0; p == 3 && i < 5000 && info.engine != JIT_ENGINE_JIT; i++) {
                    struct timespec ts = {0, 1000000}; /* the rest on the JIT kernel */
                    nanosleep(&ts, NULL);
                    assert_int_equal(jit_info(fn, &info), 0);
                }
            }
            assert_int_equal(jit_release(fn), 0);
            continue;
        }
        jit_kernel fn = jit_compile(&s);
        assert_non_null(fn);
        int64_t units = jit_units(fn);
        assert_int_equal(units, n);
        /* the note of a whole check that saw no negative index ... */
        assert_int_equal(jit_validate(fn, idx), JIT_OK);
        for (int64_t i = 0; i < 2 * n; i += 7) /* ... then negative ones */
            idx[i] = -1 - idx[i];
        assert_int_equal(call_large(fn, data, idx, want, (size_t)n, msg, sizeof msg), JIT_OK);
        for (int parts = 1; parts <= 7; parts += 3) {
            for (int p = 0; p < parts; p++)
                assert_int_equal(jit_validate_part(fn, idx, p, parts), JIT_OK);
            memset(got, 0x5a, (size_t)n * sizeof *got);
            for (int p = 0; p < parts; p++)
                assert_int_equal(jit_run_range(fn, data, idx, NULL, got, units / parts * p,
                                               p == parts - 1 ? units : units / parts * (p + 1)),
                                 JIT_OK);
            if (memcmp(got, want, (size_t)n * sizeof *got) != 0)
                fail_msg("run %d, %d parts: the ranges differ from the kernel's call", run, parts);
        }
        idx[2 * at + 1] = 1024;
        assert_int_equal(jit_validate(fn, idx), JIT_STATUS_BAD_INDEX);
        snprintf(whole_msg, sizeof whole_msg, "%s", jit_last_error());
        for (int parts = 1; parts <= 7; parts += 3) {
            for (int p = 0; p < parts; p++) {
                int rc = jit_validate_part(fn, idx, p, parts);
                int holds = p == part_holding(at, n, parts);
                if (rc != (holds ? JIT_STATUS_BAD_INDEX : JIT_OK))
                    fail_msg("run %d: part %d of %d: status %d", run, p, parts, rc);
                if (holds)
                    assert_string_equal(jit_last_error(), whole_msg);
            }
        }
        idx[2 * at + 1] = 0;
        assert_int_equal(jit_validate_part(fn, idx, 0, 0), JIT_STATUS_BAD_SHAPE);
        assert_non_null(strstr(jit_last_error(), "parts must be at least 1"));
        assert_int_equal(jit_validate_part(fn, idx, 3, 3), JIT_STATUS_BAD_SHAPE);
        assert_int_equal(jit_validate_part(fn, idx, -1, 3), JIT_STATUS_BAD_SHAPE);
        assert_int_equal(jit_validate_part(fn, NULL, 0, 1), JIT_STATUS_BAD_POINTER);
    }
    large_bufs_free(&b);
}

/* A kernel of G3's size (16 KB, 3 us), kept alone by the rule on most
 * hosts: past its first probes most calls skip the rule (tj_split_quiet),
 * and still every call is counted once, one way or the other, and every
 * output is the one-thread kernel's. */
static void test_quiet_calls_counted(void **state)
{
    (void)state;
    enum { CALLS = 1500 };
    jit_sig s = {0};
    s.op = JIT_OP_GATHER_ND, s.opset = 8, s.batch_dims = 3, s.dtype = JIT_F32;
    s.index_type = JIT_I32, s.index_policy = JIT_INDEX_NEGATIVE_WRAPS;
    s.data_shape = (jit_shape){4, {1, 64, 64, 320}};
    s.indices_shape = (jit_shape){5, {1, 64, 64, 1, 1}};
    jit_kernel one = jit_compile(&s);
    s.threads = 2;
    jit_kernel two = jit_compile(&s);
    assert_true(one && two);
    float *data = malloc(64 * 64 * 320 * sizeof *data), *want = malloc(4096 * sizeof *want),
          *got = malloc(4096 * sizeof *got);
    int32_t *idx = malloc(4096 * sizeof *idx);
    assert_true(data && want && got && idx);
    uint64_t rs = 20;
    for (int i = 0; i < 64 * 64 * 320; i++)
        data[i] = (float)i;
    for (int i = 0; i < 4096; i++)
        idx[i] = (int32_t)support_rand_range(&rs, -320, 319);
    assert_int_equal(((jit_gather_nd_fn)one)(data, idx, want), JIT_OK);
    for (int i = 0; i < CALLS; i++) {
        memset(got, 0xff, 4096 * sizeof *got);
        assert_int_equal(((jit_gather_nd_fn)two)(data, idx, got), JIT_OK);
        if (memcmp(got, want, 4096 * sizeof *got) != 0)
            fail_msg("call %d differs from the one-thread kernel", i);
    }
    tj_split_counts c;
    assert_int_equal(tj_split_counts_of(two, &c), 0);
    assert_int_equal(c.calls, CALLS);
    assert_int_equal(c.alone + c.split, CALLS);
    if (c.split < CALLS / 10 && c.quiet < CALLS / 2) /* kept alone: mostly without weighing */
        fail_msg("%lld of %d calls alone, %lld of them not weighed", (long long)c.alone, CALLS,
                 (long long)c.quiet);
    free(data), free(want), free(got), free(idx);
    jit_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_equals_one_thread),
        cmocka_unit_test(test_split_rule_keeps_bytes),
        cmocka_unit_test(test_entries_found_after_frees),
        cmocka_unit_test(test_quiet_calls_counted),
        cmocka_unit_test(test_checks_in_parts),
        cmocka_unit_test(test_dynamic_checks_in_parts),
        cmocka_unit_test(test_dynamic_scatters_check_in_parts),
        cmocka_unit_test(test_validate_in_parts),
        cmocka_unit_test(test_small_kernels_ranges_are_jit),
        cmocka_unit_test(test_ranges_wrap_once),
        cmocka_unit_test(test_parts_first_queries_race),
        cmocka_unit_test(test_split_counts_add_up),
        cmocka_unit_test(test_split_ranges_stream),
        cmocka_unit_test(test_probes_back_off),
        cmocka_unit_test(test_probes_wake_the_pool_first),
        cmocka_unit_test(test_probes_that_lose_stay_rare),
        cmocka_unit_test(test_threads_unused_give_the_one_thread_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
