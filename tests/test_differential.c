/* Seeded random differential test: random valid signatures of every op
 * (GatherND, ScatterUpdate, Gather, GatherElements, ScatterNDUpdate: every
 * rank the op takes up to a few, attributes in range in both spellings,
 * every element size, every index type the op takes, every policy,
 * zero-sized dims, duplicates and bad indices) run through the library and
 * through the independent oracle; every status, every output byte and the
 * output shape must agree. Outputs start as a canary pattern: a kernel
 * that fails must leave it, one that succeeds must not write past the
 * end. Scatters run in place too. TENSORJIT_DIFF_N sets the count
 * (default 3000), TENSORJIT_DIFF_SEED the seed. With engine AUTO the JIT
 * must serve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

/* one type of each element size: kernels move bytes */
static const jit_dtype dtypes[] = {JIT_U8, JIT_F16, JIT_F32, JIT_F64};
static const jit_dtype itypes[] = {JIT_I8,  JIT_U8,  JIT_I16, JIT_U16,
                                   JIT_I32, JIT_U32, JIT_I64, JIT_U64};
static const jit_op ops[] = {JIT_OP_GATHER_ND, JIT_OP_SCATTER_UPDATE, JIT_OP_GATHER,
                             JIT_OP_GATHER_ELEMENTS, JIT_OP_SCATTER_ND_UPDATE};
#define NOPS (sizeof ops / sizeof *ops)
#define CANARY 0xee

/* A random signature and what its indices address: entry e of each
 * tuple of depth entries indexes a data dimension of size dims[e]. */
typedef struct rand_sig {
    jit_sig sig;
    int depth;
    int64_t dims[JIT_MAX_RANK];
} rand_sig;

static int64_t rand_dim(uint64_t *rs, int64_t max)
{
    /* mostly small, sometimes zero */
    return support_rand_range(rs, 0, 19) == 0 ? 0 : support_rand_range(rs, 1, max);
}

static void random_shape(uint64_t *rs, jit_shape *s, int rank, int64_t max)
{
    s->rank = rank;
    for (int i = 0; i < rank; i++)
        s->dims[i] = rand_dim(rs, max);
}

/* The fields every op has: types (an index type the op takes), policy,
 * threads (-1 .. 3: one per core, none, 1, 2, 3). */
static void random_common(uint64_t *rs, jit_op op, jit_sig *s)
{
    jit_op_info info;
    assert_int_equal(jit_op_describe(op, &info), 0);
    s->op = op;
    s->dtype = dtypes[support_rand_range(rs, 0, 3)];
    do
        s->index_type = itypes[support_rand_range(rs, 0, 7)];
    while (!(info.index_types & (1u << s->index_type)));
    s->index_policy = (jit_index_policy)support_rand_range(rs, 0, JIT_INDEX_POLICY_COUNT - 1);
    s->threads = (int)support_rand_range(rs, -1, 3);
}

/* a in [0, r): as it is or counted from the end */
static int64_t spell_axis(uint64_t *rs, int a, int r)
{
    return support_rand_range(rs, 0, 1) ? a : a - r;
}

static void gen_gather_nd(uint64_t *rs, rand_sig *g)
{
    jit_sig *s = &g->sig;
    int r = (int)support_rand_range(rs, 1, 6), q = (int)support_rand_range(rs, 1, 5);
    s->opset = support_rand_range(rs, 0, 1) ? 8 : 5;
    s->batch_dims = (int)support_rand_range(rs, 0, (r < q ? r : q) - 1);
    random_shape(rs, &s->data_shape, r, 4);
    random_shape(rs, &s->indices_shape, q, 4);
    for (int i = 0; i < s->batch_dims; i++)
        s->indices_shape.dims[i] = s->data_shape.dims[i];
    g->depth = (int)support_rand_range(rs, 0, r - s->batch_dims);
    s->indices_shape.dims[q - 1] = g->depth;
    for (int e = 0; e < g->depth; e++)
        g->dims[e] = s->data_shape.dims[s->batch_dims + e];
}

static void gen_scatter_update(uint64_t *rs, rand_sig *g)
{
    jit_sig *s = &g->sig;
    int r = (int)support_rand_range(rs, 1, 5), q = (int)support_rand_range(rs, 0, 3);
    int a = (int)support_rand_range(rs, 0, r - 1);
    s->axis = spell_axis(rs, a, r);
    random_shape(rs, &s->data_shape, r, 4);
    random_shape(rs, &s->indices_shape, q, 4);
    /* data.shape[:axis] + indices.shape + data.shape[axis+1:] */
    jit_shape *u = &s->updates_shape;
    u->rank = 0;
    for (int i = 0; i < a; i++)
        u->dims[u->rank++] = s->data_shape.dims[i];
    for (int i = 0; i < q; i++)
        u->dims[u->rank++] = s->indices_shape.dims[i];
    for (int i = a + 1; i < r; i++)
        u->dims[u->rank++] = s->data_shape.dims[i];
    g->depth = 1;
    g->dims[0] = s->data_shape.dims[a];
}

static void gen_gather(uint64_t *rs, rand_sig *g)
{
    static const int opsets[] = {0, 1, 7, 8};
    jit_sig *s = &g->sig;
    int r = (int)support_rand_range(rs, 1, 4), q = (int)support_rand_range(rs, 0, 4);
    int a = (int)support_rand_range(rs, 0, r - 1);
    s->opset = opsets[support_rand_range(rs, 0, 3)];
    s->axis = spell_axis(rs, a, r);
    random_shape(rs, &s->data_shape, r, 5);
    random_shape(rs, &s->indices_shape, q, 5);
    /* b in [0, min(axis, q)]; Gather-1 has none (0, spelled no other
     * way). b - q spells b only when b < q (0 would mean 0, not q). */
    int b = s->opset == 1 ? 0 : (int)support_rand_range(rs, 0, a < q ? a : q);
    s->batch_dims = s->opset != 1 && b < q && support_rand_range(rs, 0, 1) ? b - q : b;
    for (int i = 0; i < b; i++)
        s->indices_shape.dims[i] = s->data_shape.dims[i];
    g->depth = 1;
    g->dims[0] = s->data_shape.dims[a];
}

static void gen_gather_elements(uint64_t *rs, rand_sig *g)
{
    jit_sig *s = &g->sig;
    int r = (int)support_rand_range(rs, 1, 4), a = (int)support_rand_range(rs, 0, r - 1);
    s->opset = support_rand_range(rs, 0, 1) ? 6 : 0;
    s->axis = spell_axis(rs, a, r);
    random_shape(rs, &s->data_shape, r, 5);
    /* data's dims except along the axis, where any size goes */
    s->indices_shape = s->data_shape;
    s->indices_shape.dims[a] = rand_dim(rs, 5);
    g->depth = 1;
    g->dims[0] = s->data_shape.dims[a];
}

static void gen_scatter_nd_update(uint64_t *rs, rand_sig *g)
{
    static const int opsets[] = {0, 3, 15};
    jit_sig *s = &g->sig;
    int r = (int)support_rand_range(rs, 1, 4), q = (int)support_rand_range(rs, 1, 4);
    s->opset = opsets[support_rand_range(rs, 0, 2)];
    random_shape(rs, &s->data_shape, r, 5);
    random_shape(rs, &s->indices_shape, q, 5);
    g->depth = (int)support_rand_range(rs, 0, r);
    s->indices_shape.dims[q - 1] = g->depth;
    /* indices.shape[:-1] + data.shape[k:] */
    jit_shape *u = &s->updates_shape;
    u->rank = 0;
    for (int i = 0; i < q - 1; i++)
        u->dims[u->rank++] = s->indices_shape.dims[i];
    for (int i = g->depth; i < r; i++)
        u->dims[u->rank++] = s->data_shape.dims[i];
    for (int e = 0; e < g->depth; e++)
        g->dims[e] = s->data_shape.dims[e];
}

static void gen(uint64_t *rs, jit_op op, rand_sig *g)
{
    memset(g, 0, sizeof *g);
    random_common(rs, op, &g->sig);
    switch (op) {
    case JIT_OP_GATHER_ND: gen_gather_nd(rs, g); break;
    case JIT_OP_SCATTER_UPDATE: gen_scatter_update(rs, g); break;
    case JIT_OP_GATHER: gen_gather(rs, g); break;
    case JIT_OP_GATHER_ELEMENTS: gen_gather_elements(rs, g); break;
    default: gen_scatter_nd_update(rs, g); break;
    }
}

static void fill_random(uint64_t *rs, void *buf, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        ((unsigned char *)buf)[i] = (unsigned char)support_rand(rs);
}

static void store_index(jit_dtype t, void *p, int64_t i, int64_t v)
{
    switch (jit_dtype_size(t)) {
    case 1: ((int8_t *)p)[i] = (int8_t)v; break;
    case 2: ((int16_t *)p)[i] = (int16_t)v; break;
    case 4: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
    }
}

/* Mostly valid indices for dim, with negatives, out-of-range values and
 * extremes mixed in at the given rate (per mille). */
static int64_t rand_index(uint64_t *rs, int64_t dim, int bad_rate)
{
    if (support_rand_range(rs, 0, 999) >= bad_rate)
        return dim ? support_rand_range(rs, 0, dim - 1) : 0;
    switch (support_rand_range(rs, 0, 4)) {
    case 0: return -1 - support_rand_range(rs, 0, dim);
    case 1: return dim + support_rand_range(rs, 0, 3);
    case 2: return -dim;
    case 3: return 127;
    default: return dim ? -support_rand_range(rs, 1, dim) : -1;
    }
}

static void random_indices(uint64_t *rs, const rand_sig *g, void *idx, int64_t n)
{
    jit_dtype t = g->sig.index_type;
    int is_unsigned = t == JIT_U8 || t == JIT_U16 || t == JIT_U32 || t == JIT_U64;
    int bad_rate = support_rand_range(rs, 0, 3) == 0 ? 300 : 5;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = rand_index(rs, g->depth ? g->dims[i % g->depth] : 0, bad_rate);
        store_index(t, idx, i, is_unsigned && v < 0 ? v & 0x7f : v);
    }
}

/* Says what failed, for which signature; returns 1 (a failure). */
__attribute__((format(printf, 4, 5))) static int report(const char *what, const rand_sig *g,
                                                        int64_t n, const char *fmt, ...)
{
    jit_op_info info;
    jit_op_describe(g->sig.op, &info);
    fprintf(stderr, "%s #%lld (%s, %s/%s, %s, threads %d): ", info.name, (long long)n, what,
            jit_dtype_name(g->sig.dtype), jit_dtype_name(g->sig.index_type),
            jit_index_policy_name(g->sig.index_policy), g->sig.threads);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (last error: %s)\n", jit_last_error());
    return 1;
}

static int untouched(const unsigned char *p, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        if (p[i] != CANARY)
            return 0;
    return 1;
}

/* Both results, the library's (lib) and the oracle's (want), of `bytes`
 * output bytes and one canary byte behind them. */
static int compare(const char *what, const rand_sig *g, int64_t n, int rc_lib, int rc_want,
                   const unsigned char *lib, const unsigned char *want, int64_t bytes)
{
    if (rc_lib != rc_want)
        return report(what, g, n, "status %d, oracle %d", rc_lib, rc_want);
    if (rc_lib != 0 && !(untouched(lib, bytes + 1) && untouched(want, bytes + 1)))
        return report(what, g, n, "status %d: the output was written", rc_lib);
    if (rc_lib == 0 && memcmp(lib, want, (size_t)bytes + 1) != 0)
        return report(what, g, n, "the output bytes differ from the oracle's");
    return 0;
}

/* The output shape and the index dims the library reports are those the
 * spec's formulas and the generator give. */
static int check_shapes(const rand_sig *g, int64_t n, jit_shape *os)
{
    jit_shape want;
    int depth;
    int64_t dims[JIT_MAX_RANK];
    oracle_output_shape(&g->sig, &want);
    if (jit_output_shape(&g->sig, os) != 0)
        return report("shape", g, n, "jit_output_shape refused a valid signature");
    if (os->rank != want.rank ||
        memcmp(os->dims, want.dims, sizeof(int64_t) * (size_t)want.rank) != 0)
        return report("shape", g, n, "output shape differs from the oracle's (rank %d, %d)",
                      os->rank, want.rank);
    if (jit_index_dims(&g->sig, &depth, dims) != 0 || depth != g->depth ||
        memcmp(dims, g->dims, sizeof(int64_t) * (size_t)depth) != 0)
        return report("index dims", g, n, "jit_index_dims differs from the generator's");
    return 0;
}

/* A scatter once more in place: the oracle's result in data itself, or on
 * a bad index data as it was. */
static int scatter_in_place(jit_kernel fn, const rand_sig *g, int64_t n, const void *data,
                            const void *idx, const void *upd, int rc_want,
                            const unsigned char *want, int64_t bytes)
{
    unsigned char *buf = malloc((size_t)bytes + 1);
    memcpy(buf, data, (size_t)bytes);
    buf[bytes] = CANARY;
    int rc = ((jit_scatter_update_fn)fn)(buf, idx, upd, buf), fails = 0;
    if (rc != rc_want)
        fails = report("in place", g, n, "status %d, oracle %d", rc, rc_want);
    else if (memcmp(buf, rc ? data : want, (size_t)bytes) != 0 || buf[bytes] != CANARY)
        fails = report("in place", g, n, "status %d: data differs from the oracle's", rc);
    free(buf);
    return fails;
}

static int one(uint64_t *rs, int64_t n, jit_op op, jit_engine eng)
{
    rand_sig g;
    gen(rs, op, &g);
    g.sig.engine = eng;
    jit_op_info info;
    assert_int_equal(jit_op_describe(op, &info), 0);
    int64_t es = jit_dtype_size(g.sig.dtype), is = jit_dtype_size(g.sig.index_type);
    int64_t nd = oracle_elems(&g.sig.data_shape), ni = oracle_elems(&g.sig.indices_shape);
    int64_t nu = info.has_updates ? oracle_elems(&g.sig.updates_shape) : 0;
    void *data = malloc((size_t)(nd * es + 1)), *idx = malloc((size_t)(ni * is + 1));
    void *upd = malloc((size_t)(nu * es + 1));
    fill_random(rs, data, nd * es);
    fill_random(rs, upd, nu * es);
    random_indices(rs, &g, idx, ni);
    int fails = 0;
    jit_shape os;
    jit_kernel fn = jit_compile(&g.sig);
    if (!fn) {
        fails = report("compile", &g, n, "a valid signature was refused");
    } else if (!(fails = check_shapes(&g, n, &os))) {
        jit_kernel_info ki;
        assert_int_equal(jit_info(fn, &ki), 0);
        assert_int_equal(ki.op, op);
        if (eng == JIT_ENGINE_AUTO)
            support_expect_jit(&ki, info.name);
        int64_t ob = oracle_elems(&os) * es;
        unsigned char *o1 = malloc((size_t)ob + 1), *o2 = malloc((size_t)ob + 1);
        memset(o1, CANARY, (size_t)ob + 1);
        memset(o2, CANARY, (size_t)ob + 1);
        int rc1 = info.has_updates ? ((jit_scatter_update_fn)fn)(data, idx, upd, o1)
                                   : ((jit_gather_nd_fn)fn)(data, idx, o1);
        int rc2 = oracle_run(&g.sig, data, idx, upd, o2);
        fails = compare("out of place", &g, n, rc1, rc2, o1, o2, ob);
        if (!fails && info.has_updates)
            fails = scatter_in_place(fn, &g, n, data, idx, upd, rc2, o2, ob);
        free(o1);
        free(o2);
    }
    free(data);
    free(idx);
    free(upd);
    return fails;
}

static void run(jit_engine eng)
{
    long count = support_env_long("TENSORJIT_DIFF_N", 3000);
    uint64_t seed = (uint64_t)support_env_long("TENSORJIT_DIFF_SEED", 20261122);
    uint64_t rs = seed;
    int fails = 0;
    long per_op[NOPS] = {0};
    for (long n = 0; n < count && fails < 10; n++) {
        size_t o = (size_t)support_rand_range(&rs, 0, NOPS - 1);
        per_op[o]++;
        fails += one(&rs, n, ops[o], eng);
    }
    printf("differential (%s engine, seed %llu): %ld signatures (", jit_engine_name(eng),
           (unsigned long long)seed, count);
    for (size_t o = 0; o < NOPS; o++) {
        jit_op_info info;
        jit_op_describe(ops[o], &info);
        printf("%s%s %ld", o ? ", " : "", info.name, per_op[o]);
    }
    printf("), %d failed\n", fails);
    jit_shutdown();
    assert_int_equal(fails, 0);
}

static void test_auto_vs_oracle(void **state)
{
    (void)state;
    run(JIT_ENGINE_AUTO);
}

static void test_reference_vs_oracle(void **state)
{
    (void)state;
    run(JIT_ENGINE_REFERENCE);
}

/* Every kernel with more than one unit whose signature asks for threads
 * split into check and range functions and run over the thread pool. */
static void test_split_kernels_vs_oracle(void **state)
{
    (void)state;
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    run(JIT_ENGINE_AUTO);
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_vs_oracle),
        cmocka_unit_test(test_reference_vs_oracle),
        cmocka_unit_test(test_split_kernels_vs_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
