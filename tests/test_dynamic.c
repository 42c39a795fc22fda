/* Dynamic signatures (SPEC section 6): the API contract of dynamic kernels
 * (jit_dynamic_fn, jit_sig_bind, jit_call_dynamic, jit_output_shape with
 * JIT_DIM_DYNAMIC, the refusals), and their results. Every result is
 * compared bit for bit with the tests' oracle and with the static kernel
 * of the call's concrete signature, never with values the dynamic code
 * produced: the same tests must hold when the JIT serves dynamic kernels.
 * The threaded test runs under ThreadSanitizer in build.sh;
 * TENSORJIT_DYN_ROUNDS makes its loops longer. */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "oracle.h"
#include "support.h"

#define D JIT_DIM_DYNAMIC
#define CANARY 0xc3
#define TAIL 16 /* canary bytes behind every output */

/* ---- signatures of the families used below ---- */

static jit_sig base(jit_op op)
{
    jit_sig s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.dtype = JIT_F32;
    s.index_type = JIT_I32;
    return s;
}

/* GatherND with data and indices of rank 23, every dim dynamic: a tuple
 * of 13 to 23 keeps the output within JIT_MAX_RANK. */
static jit_sig gather_nd_rank23(void)
{
    jit_sig s = base(JIT_OP_GATHER_ND);
    s.data_shape.rank = s.indices_shape.rank = 23;
    for (int i = 0; i < 23; i++)
        s.data_shape.dims[i] = s.indices_shape.dims[i] = D;
    return s;
}

/* Gather axis 0: data [?, 4], indices [?] -> out [?, 4]; dims {n, 4, m} */
static jit_sig gather_sig(void)
{
    jit_sig s = base(JIT_OP_GATHER);
    s.data_shape = (jit_shape){2, {D, 4}};
    s.indices_shape = (jit_shape){1, {D}};
    return s;
}

/* GatherND: data [?, 3, 4], indices [?, 2] -> out [?, 4]; dims {n, 3, 4, m, 2} */
static jit_sig gather_nd_sig(void)
{
    jit_sig s = base(JIT_OP_GATHER_ND);
    s.data_shape = (jit_shape){3, {D, 3, 4}};
    s.indices_shape = (jit_shape){2, {D, 2}};
    return s;
}

/* ScatterUpdate axis 0: data [?, 4], indices [?], updates [?, 4];
 * dims {n, 4, m, m, 4} */
static jit_sig scatter_sig(void)
{
    jit_sig s = base(JIT_OP_SCATTER_UPDATE);
    s.data_shape = (jit_shape){2, {D, 4}};
    s.indices_shape = (jit_shape){1, {D}};
    s.updates_shape = (jit_shape){2, {D, 4}};
    return s;
}

/* GatherElements axis 1: every dim dynamic; dims {a, b, c, d} */
static jit_sig gather_elements_sig(void)
{
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    s.axis = 1;
    s.data_shape = (jit_shape){2, {D, D}};
    s.indices_shape = (jit_shape){2, {D, D}};
    return s;
}

/* ScatterNDUpdate: data [?, 4], indices [?, 1], updates [?, 4];
 * dims {n, 4, m, 1, m, 4} */
static jit_sig scatter_nd_sig(void)
{
    jit_sig s = base(JIT_OP_SCATTER_ND_UPDATE);
    s.data_shape = (jit_shape){2, {D, 4}};
    s.indices_shape = (jit_shape){2, {D, 1}};
    s.updates_shape = (jit_shape){2, {D, 4}};
    return s;
}

static int has_updates(jit_op op)
{
    jit_op_info info;
    assert_int_equal(jit_op_describe(op, &info), 0);
    return info.has_updates;
}

static jit_kernel compile_dynamic(const jit_sig *s)
{
    jit_kernel fn = jit_compile(s);
    if (!fn)
        fail_msg("a dynamic signature was refused: %s", jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(fn, &info), 0);
    assert_int_equal(info.dynamic, 1);
    assert_int_equal(info.op, s->op);
    return fn;
}

/* ---- inputs and the three-way comparison ---- */

typedef struct inputs {
    void *data, *idx, *upd;
} inputs;

static void free_inputs(inputs *in)
{
    free(in->data);
    free(in->idx);
    free(in->upd);
}

/* Random data and updates, valid indices of the concrete signature c; bad
 * >= 0: index number bad (mod the count) is out of range. */
static void make_inputs(uint64_t *rs, const jit_sig *c, int64_t bad, inputs *in)
{
    int64_t es = jit_dtype_size(c->dtype), is = jit_dtype_size(c->index_type);
    int64_t nd = oracle_elems(&c->data_shape), ni = oracle_elems(&c->indices_shape);
    int64_t nu = has_updates(c->op) ? oracle_elems(&c->updates_shape) : 0;
    in->data = malloc((size_t)(nd * es) + 1);
    in->idx = malloc((size_t)(ni * is) + 1);
    in->upd = malloc((size_t)(nu * es) + 1);
    assert_true(in->data && in->idx && in->upd);
    for (int64_t i = 0; i < nd * es; i++)
        ((unsigned char *)in->data)[i] = (unsigned char)support_rand(rs);
    for (int64_t i = 0; i < nu * es; i++)
        ((unsigned char *)in->upd)[i] = (unsigned char)support_rand(rs);
    int depth;
    int64_t dims[JIT_MAX_RANK];
    assert_int_equal(jit_index_dims(c, &depth, dims), 0);
    for (int64_t i = 0; i < ni; i++) {
        int64_t dim = depth ? dims[i % depth] : 1;
        support_store_index(c->index_type, in->idx, i, dim ? support_rand_range(rs, 0, dim - 1) : 0);
    }
    if (bad >= 0 && ni > 0 && depth > 0) {
        int64_t i = bad % ni;
        support_store_index(c->index_type, in->idx, i, dims[i % depth] + 1);
    }
}

static int untouched(const unsigned char *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (p[i] != CANARY)
            return 0;
    return 1;
}

/* One call of the dynamic kernel fn of dynamic signature dyn with dims:
 * its status, output and message against the oracle's and the static
 * kernel's of the concrete signature. Returns the status. Thread-safe
 * (no cmocka assertion): 0 failures or a message on stderr and -100. */
static int check_call(jit_kernel fn, const jit_sig *dyn, const int64_t *dims, const inputs *in,
                      const char *what)
{
    jit_sig c;
    jit_shape os, want;
    if (jit_sig_bind(dyn, dims, &c) != 0 || jit_output_shape(&c, &os) != 0) {
        fprintf(stderr, "%s: bind or output shape refused: %s\n", what, jit_last_error());
        return -100;
    }
    oracle_output_shape(&c, &want);
    if (os.rank != want.rank || memcmp(os.dims, want.dims, sizeof(int64_t) * (size_t)os.rank)) {
        fprintf(stderr, "%s: output shape differs from the oracle's\n", what);
        return -100;
    }
    int64_t ob = oracle_elems(&os) * jit_dtype_size(c.dtype);
    unsigned char *o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = malloc((size_t)ob + TAIL);
        memset(o[i], CANARY, (size_t)ob + TAIL);
    }
    char msg_dyn[1024], msg_static[1024];
    int rc_dyn = ((jit_dynamic_fn)fn)(in->data, in->idx, in->upd, o[0], dims);
    snprintf(msg_dyn, sizeof msg_dyn, "%s", jit_last_error());
    int rc_oracle = oracle_run(&c, in->data, in->idx, in->upd, o[1]);
    jit_kernel st = jit_compile(&c);
    int rc_static = st ? jit_call(st, in->data, in->idx, in->upd, o[2]) : -1;
    snprintf(msg_static, sizeof msg_static, "%s", jit_last_error());
    int fails = 0;
    if (rc_dyn != rc_oracle || rc_dyn != rc_static) {
        fprintf(stderr, "%s: status %d, oracle %d, static kernel %d (%s)\n", what, rc_dyn,
                rc_oracle, rc_static, msg_dyn);
        fails = 1;
    } else if (rc_dyn != JIT_OK) {
        for (int i = 0; i < 3; i++)
            if (!untouched(o[i], ob + TAIL)) {
                fprintf(stderr, "%s: status %d but output %d was written\n", what, rc_dyn, i);
                fails = 1;
            }
        if (strcmp(msg_dyn, msg_static) != 0) {
            fprintf(stderr, "%s: message '%s', the static kernel's '%s'\n", what, msg_dyn,
                    msg_static);
            fails = 1;
        }
    } else if (memcmp(o[0], o[1], (size_t)ob + TAIL) || memcmp(o[0], o[2], (size_t)ob + TAIL)) {
        fprintf(stderr, "%s: output differs from the oracle's or the static kernel's\n", what);
        fails = 1;
    }
    for (int i = 0; i < 3; i++)
        free(o[i]);
    return fails ? -100 : rc_dyn;
}

/* Random inputs for dims, then check_call; the status. */
static int run_dims(uint64_t *rs, jit_kernel fn, const jit_sig *dyn, const int64_t *dims,
                    int64_t bad, const char *what)
{
    jit_sig c;
    if (jit_sig_bind(dyn, dims, &c) != 0) {
        fprintf(stderr, "%s: bind refused: %s\n", what, jit_last_error());
        return -100;
    }
    inputs in;
    make_inputs(rs, &c, bad, &in);
    int rc = check_call(fn, dyn, dims, &in, what);
    free_inputs(&in);
    return rc;
}

/* ---- the tests ---- */

static void test_compile_info_and_cache_key(void **state)
{
    (void)state;
    jit_sig s = gather_sig();
    assert_int_equal(jit_sig_is_dynamic(&s), 1);
    jit_kernel a = compile_dynamic(&s);
    jit_kernel_info info;
    assert_int_equal(jit_info(a, &info), 0);
    assert_int_equal(info.out_bytes, -1);
    assert_true(jit_compile(&s) == a); /* the same family, the same kernel */
    jit_sig b = s;
    b.data_bound[0] = 100;
    jit_kernel kb = compile_dynamic(&b);
    assert_true(kb != a); /* the bounds are part of the key */
    jit_sig b2 = s;
    b2.data_bound[0] = 101;
    assert_true(compile_dynamic(&b2) != kb);
    assert_true(jit_compile(&b) == kb);
    /* a bound at a static dim is ignored: the same kernel as without */
    jit_sig b3 = s;
    b3.data_bound[1] = 9;
    assert_true(jit_compile(&b3) == a);
    /* the concrete signature is a static kernel */
    jit_sig c = s;
    c.data_shape.dims[0] = 5;
    c.indices_shape.dims[0] = 3;
    assert_int_equal(jit_sig_is_dynamic(&c), 0);
    jit_kernel st = jit_compile(&c);
    assert_non_null(st);
    assert_true(st != a);
    assert_int_equal(jit_info(st, &info), 0);
    assert_int_equal(info.dynamic, 0);
    /* a dynamic dim of an input the op does not take: not dynamic */
    jit_sig g = c;
    g.updates_shape = (jit_shape){1, {D}};
    assert_int_equal(jit_sig_is_dynamic(&g), 0);
    assert_int_equal(jit_sig_is_dynamic(NULL), 0);
}

static void expect_shape(const jit_shape *got, int rank, const int64_t *dims)
{
    assert_int_equal(got->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(got->dims[i], dims[i]);
}

static void test_output_shape_with_dynamic_dims(void **state)
{
    (void)state;
    jit_shape os;
    jit_sig s = gather_sig();
    assert_int_equal(jit_output_shape(&s, &os), 0);
    expect_shape(&os, 2, (int64_t[]){D, 4});
    /* Gather: indices.shape + data.shape[1:]: data's dim 0 does not show */
    s.indices_shape = (jit_shape){2, {3, D}};
    assert_int_equal(jit_output_shape(&s, &os), 0);
    expect_shape(&os, 3, (int64_t[]){3, D, 4});
    s = gather_nd_sig();
    assert_int_equal(jit_output_shape(&s, &os), 0);
    expect_shape(&os, 2, (int64_t[]){D, 4});
    s = scatter_sig(); /* scatters: data's shape */
    assert_int_equal(jit_output_shape(&s, &os), 0);
    expect_shape(&os, 2, (int64_t[]){D, 4});
    s = gather_elements_sig(); /* indices' shape */
    assert_int_equal(jit_output_shape(&s, &os), 0);
    expect_shape(&os, 2, (int64_t[]){D, D});
}

static void expect_error(const char *a, const char *b, const char *c)
{
    const char *msg = jit_last_error();
    if (!strstr(msg, a) || !strstr(msg, b) || !strstr(msg, c))
        fail_msg("message '%s' does not name '%s', '%s' and '%s'", msg, a, b, c);
}

static void test_bind(void **state)
{
    (void)state;
    jit_sig s = scatter_sig(), c;
    s.indices_bound[0] = 6;
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 4, 3, 3, 4}, &c), 0);
    assert_int_equal(c.data_shape.dims[0], 7);
    assert_int_equal(c.indices_shape.dims[0], 3);
    assert_int_equal(c.updates_shape.dims[0], 3);
    assert_int_equal(c.indices_bound[0], 0);
    assert_int_equal(jit_sig_is_dynamic(&c), 0);
    /* a static dim that differs */
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 5, 3, 3, 4}, &c), -1);
    expect_error("data", "[1]", "5");
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 4, 3, 3, 8}, &c), -1);
    expect_error("updates", "[1]", "8");
    /* a negative dynamic dim */
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){-3, 4, 3, 3, 4}, &c), -1);
    expect_error("data", "[0]", "-3");
    /* a bound exceeded; the bound itself is fine */
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 4, 9, 3, 4}, &c), -1);
    expect_error("indices", "[0]", "9");
    expect_error("indices", "bound", "6");
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 4, 6, 6, 4}, &c), 0);
    assert_int_equal(jit_sig_bind(NULL, (int64_t[]){0}, &c), -1);
    assert_int_equal(jit_sig_bind(&s, NULL, &c), -1);
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){7, 4, 3, 3, 4}, NULL), -1);
    /* a negative bound is refused at compile */
    jit_sig nb = gather_sig();
    nb.data_bound[0] = -2;
    assert_null(jit_compile(&nb));
    expect_error("data", "bound", "-2");
}

/* include/tensorjit.h: jit_sig_bind returns -1 "when dims break a bound,
 * a static dim or a rule of the op". It once checked bounds, static dims
 * and signs only: dims that break a rule of the op (ScatterUpdate's
 * updates.shape[0] = indices.shape[0]) bound with 0. */
static void test_bind_checks_the_rules(void **state)
{
    (void)state;
    jit_sig s = scatter_sig(), c = scatter_sig();
    c.axis = 7; /* a mark: a refused bind leaves *out as it was */
    int rc = jit_sig_bind(&s, (int64_t[]){4, 4, 2, 3, 4}, &c);
    if (rc != -1)
        fail_msg("jit_sig_bind accepted dims that break a rule of the op "
                 "(updates.shape[0]=3, indices.shape[0]=2); the header says it refuses them");
    expect_error("updates", "shape[0]", "3");
    assert_int_equal(c.axis, 7);
}

/* Calls that break a rule, a bound or a static dim: BAD_SHAPE, a message,
 * nothing written. */
static void expect_bad_shape(jit_kernel fn, const int64_t *dims, const char *name)
{
    static float data[1024], upd[1024];
    static int32_t idx[1024];
    unsigned char out[4096];
    memset(out, CANARY, sizeof out);
    int rc = ((jit_dynamic_fn)fn)(data, idx, upd, out, dims);
    if (rc != JIT_STATUS_BAD_SHAPE)
        fail_msg("%s: status %d, not BAD_SHAPE", name, rc);
    if (!*jit_last_error())
        fail_msg("%s: BAD_SHAPE with no message", name);
    assert_true(untouched(out, sizeof out));
    assert_int_equal(jit_call_dynamic(fn, data, idx, upd, out, dims), JIT_STATUS_BAD_SHAPE);
    assert_true(untouched(out, sizeof out));
}

static void test_bad_dims_write_nothing(void **state)
{
    (void)state;
    jit_sig s = scatter_sig();
    s.data_bound[0] = 10;
    jit_kernel fn = compile_dynamic(&s);
    expect_bad_shape(fn, (int64_t[]){4, 5, 2, 2, 4}, "static dim of data");
    expect_error("data", "[1]", "5");
    expect_bad_shape(fn, (int64_t[]){4, 4, 2, 2, 3}, "static dim of updates");
    expect_bad_shape(fn, (int64_t[]){-1, 4, 2, 2, 4}, "negative dim");
    expect_bad_shape(fn, (int64_t[]){11, 4, 2, 2, 4}, "bound");
    expect_error("data", "[0]", "11");
    /* updates.shape[0] must be indices.shape[0]: a rule of the op */
    expect_bad_shape(fn, (int64_t[]){4, 4, 2, 3, 4}, "updates against indices");
    expect_error("updates", "", "");
    /* the same call with good dims works */
    uint64_t rs = 1;
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){4, 4, 2, 2, 4}, -1, "good"), JIT_OK);
    /* GatherND: batch dims must agree */
    jit_sig g = base(JIT_OP_GATHER_ND);
    g.batch_dims = 1;
    g.data_shape = (jit_shape){2, {D, 5}};
    g.indices_shape = (jit_shape){2, {D, 1}};
    jit_kernel gf = compile_dynamic(&g);
    expect_bad_shape(gf, (int64_t[]){3, 5, 4, 1}, "batch dims");
    assert_int_equal(run_dims(&rs, gf, &g, (int64_t[]){3, 5, 3, 1}, -1, "batch ok"), JIT_OK);
}

static void test_bad_index_like_the_static_kernel(void **state)
{
    (void)state;
    uint64_t rs = 7;
    const jit_sig sigs[] = {gather_sig(), gather_nd_sig(), scatter_sig(), gather_elements_sig(),
                            scatter_nd_sig()};
    const int64_t dims[][6] = {{5, 4, 6}, {3, 3, 4, 5, 2}, {6, 4, 3, 3, 4},
                               {3, 4, 3, 2}, {5, 4, 3, 1, 3, 4}};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        jit_kernel fn = compile_dynamic(&sigs[i]);
        for (int64_t bad = 0; bad < 3; bad++) {
            int rc = run_dims(&rs, fn, &sigs[i], dims[i], bad, "bad index");
            assert_int_equal(rc, JIT_STATUS_BAD_INDEX);
            assert_non_null(strstr(jit_last_error(), "indices["));
        }
        assert_int_equal(run_dims(&rs, fn, &sigs[i], dims[i], -1, "valid"), JIT_OK);
    }
}

/* A static dim of 0 indexed by a dynamic number of tuples: a call of no
 * tuples is valid (nothing to check), one of some is a bad index, as the
 * static kernels of the same shapes say. The check's largest values,
 * started at 0, once failed the empty call (0 >= a bound of 0). */
static void test_zero_dim_no_tuples(void **state)
{
    (void)state;
    static const jit_index_policy policies[] = {JIT_INDEX_ERROR, JIT_INDEX_NEGATIVE_WRAPS};
    for (int p = 0; p < 2; p++) {
        jit_sig s = base(JIT_OP_GATHER);
        s.index_policy = policies[p];
        s.data_shape = (jit_shape){2, {0, 4}};
        s.indices_shape = (jit_shape){1, {D}};
        jit_kernel fn = compile_dynamic(&s);
        float data[4] = {0}, out[64];
        int32_t idx[64] = {0};
        const int64_t none[] = {0, 4, 0}, some[] = {0, 4, 64};
        memset(out, CANARY, sizeof out);
        assert_int_equal(((jit_dynamic_fn)fn)(data, idx, NULL, out, none), JIT_OK);
        assert_int_equal(((jit_dynamic_fn)fn)(data, idx, NULL, out, some), JIT_STATUS_BAD_INDEX);
        assert_true(untouched((unsigned char *)out, sizeof out));
    }
}

static void test_null_pointers(void **state)
{
    (void)state;
    jit_sig s = gather_sig();
    jit_kernel fn = compile_dynamic(&s);
    float data[8] = {0};
    int32_t idx[2] = {0, 1};
    float out[8];
    memset(out, CANARY, sizeof out);
    assert_int_equal(((jit_dynamic_fn)fn)(data, idx, NULL, out, NULL), JIT_STATUS_BAD_POINTER);
    assert_true(*jit_last_error());
    assert_int_equal(jit_call_dynamic(fn, data, idx, NULL, out, NULL), JIT_STATUS_BAD_POINTER);
    assert_true(untouched((unsigned char *)out, sizeof out));
    const int64_t dims[] = {2, 4, 2};
    assert_int_equal(((jit_dynamic_fn)fn)(NULL, idx, NULL, out, dims), JIT_STATUS_BAD_POINTER);
    assert_int_equal(((jit_dynamic_fn)fn)(data, NULL, NULL, out, dims), JIT_STATUS_BAD_POINTER);
    assert_int_equal(((jit_dynamic_fn)fn)(data, idx, NULL, NULL, dims), JIT_STATUS_BAD_POINTER);
    assert_true(untouched((unsigned char *)out, sizeof out));
    /* NULL where no byte is needed: as the static kernel of the same shape */
    const int64_t empty[] = {0, 4, 0};
    jit_sig c;
    assert_int_equal(jit_sig_bind(&s, empty, &c), 0);
    jit_kernel st = jit_compile(&c);
    assert_non_null(st);
    assert_int_equal(((jit_dynamic_fn)fn)(NULL, NULL, NULL, NULL, empty),
                     jit_call(st, NULL, NULL, NULL, NULL));
    /* scatters: NULL updates where bytes are needed */
    jit_sig sc = scatter_sig();
    jit_kernel sf = compile_dynamic(&sc);
    const int64_t sd[] = {2, 4, 1, 1, 4};
    assert_int_equal(((jit_dynamic_fn)sf)(data, idx, NULL, out, sd), JIT_STATUS_BAD_POINTER);
    assert_true(untouched((unsigned char *)out, sizeof out));
    /* a pointer that is no kernel */
    assert_int_equal(jit_call_dynamic((jit_kernel)test_null_pointers, data, idx, NULL, out, dims),
                     JIT_STATUS_BAD_POINTER);
}

static void test_empty_shapes(void **state)
{
    (void)state;
    uint64_t rs = 3;
    /* gathers from empty indices, scatters of nothing, data empty where
     * no index needs it */
    jit_sig g = gather_sig(), gn = gather_nd_sig(), sc = scatter_sig(), ge = gather_elements_sig(),
            sn = scatter_nd_sig();
    struct {
        const jit_sig *s;
        int64_t dims[6];
    } runs[] = {
        {&g, {5, 4, 0}},        {&g, {0, 4, 0}},        {&gn, {4, 3, 4, 0, 2}},
        {&gn, {0, 3, 4, 0, 2}}, {&sc, {5, 4, 0, 0, 4}}, {&sc, {0, 4, 0, 0, 4}},
        {&ge, {3, 0, 3, 0}},    {&ge, {0, 2, 0, 3}},    {&ge, {3, 2, 3, 0}},
        {&sn, {3, 4, 0, 1, 0, 4}}, {&sn, {0, 4, 0, 1, 0, 4}},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        jit_kernel fn = compile_dynamic(runs[i].s);
        char what[64];
        snprintf(what, sizeof what, "empty run %zu", i);
        assert_int_equal(run_dims(&rs, fn, runs[i].s, runs[i].dims, -1, what), JIT_OK);
    }
}

static void test_static_and_dynamic_calls_do_not_mix(void **state)
{
    (void)state;
    jit_sig s = gather_sig();
    jit_kernel fn = compile_dynamic(&s);
    float data[8] = {0}, out[8];
    int32_t idx[2] = {0};
    memset(out, CANARY, sizeof out);
    assert_int_equal(jit_call(fn, data, idx, NULL, out), JIT_STATUS_BAD_SHAPE);
    assert_true(*jit_last_error());
    assert_true(untouched((unsigned char *)out, sizeof out));
    jit_sig c = s;
    c.data_shape.dims[0] = 2;
    c.indices_shape.dims[0] = 2;
    jit_kernel st = jit_compile(&c);
    assert_non_null(st);
    assert_int_equal(jit_call_dynamic(st, data, idx, NULL, out, (int64_t[]){2, 4, 2}),
                     JIT_STATUS_BAD_SHAPE);
    assert_true(*jit_last_error());
    assert_true(untouched((unsigned char *)out, sizeof out));
}

static void test_parts_api_refused(void **state)
{
    (void)state;
    jit_sig s = scatter_sig();
    s.threads = 4;
    jit_kernel fn = compile_dynamic(&s);
    float data[16] = {0}, upd[16] = {0}, out[16];
    int32_t idx[4] = {0};
    memset(out, CANARY, sizeof out);
    assert_int_equal(jit_units(fn), -1);
    assert_true(*jit_last_error());
    assert_int_not_equal(jit_validate(fn, idx), 0);
    assert_int_not_equal(jit_run_range(fn, data, idx, upd, out, 0, 1), 0);
    assert_true(untouched((unsigned char *)out, sizeof out));
}

static void test_typed_compile_refuses_dynamic_dims(void **state)
{
    (void)state;
    jit_gather_nd_sig g = {.dtype = JIT_F32, .index_type = JIT_I32,
                           .data_shape = {2, {D, 4}}, .indices_shape = {2, {3, 1}}};
    assert_null(jit_gather_nd_compile(&g));
    assert_true(*jit_last_error());
    jit_scatter_update_sig s = {.dtype = JIT_F32, .index_type = JIT_I32,
                                .data_shape = {2, {5, 4}}, .indices_shape = {1, {D}},
                                .updates_shape = {2, {D, 4}}};
    assert_null(jit_scatter_update_compile(&s));
    assert_true(*jit_last_error());
    jit_gather_sig ga = {.dtype = JIT_F32, .index_type = JIT_I32,
                         .data_shape = {2, {5, D}}, .indices_shape = {1, {3}}};
    assert_null(jit_gather_compile(&ga));
    assert_true(*jit_last_error());
    assert_null(jit_gather_compile_async(&ga));
}

/* More shapes than a thread remembers (4), alternating: each call still
 * gets its own shape's plan. */
static void test_many_shapes_alternating(void **state)
{
    (void)state;
    uint64_t rs = 11;
    jit_sig s = gather_nd_sig(), sc = scatter_sig();
    jit_kernel fn = compile_dynamic(&s), sf = compile_dynamic(&sc);
    for (int round = 0; round < 3; round++)
        for (int64_t i = 0; i < 7; i++) {
            int64_t n = 1 + i, m = 7 - i;
            assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){n, 3, 4, m, 2}, -1, "gnd"), 0);
            /* interleaved with another dynamic kernel of the same thread */
            assert_int_equal(run_dims(&rs, sf, &sc, (int64_t[]){n + 1, 4, m, m, 4}, -1, "su"), 0);
        }
}

static void test_invalid_family_refused(void **state)
{
    (void)state;
    /* GatherElements: indices must have data's rank, whatever the dims */
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    s.data_shape = (jit_shape){2, {D, D}};
    s.indices_shape = (jit_shape){1, {D}};
    assert_null(jit_compile(&s));
    assert_true(*jit_last_error());
    printf("  refused: %s\n", jit_last_error());
    jit_shape os;
    assert_int_equal(jit_output_shape(&s, &os), -1);
    /* Gather: an axis outside data's rank */
    jit_sig g = gather_sig();
    g.axis = 2;
    assert_null(jit_compile(&g));
    assert_non_null(strstr(jit_last_error(), "axis"));
    /* ScatterUpdate: updates of the wrong rank */
    jit_sig u = scatter_sig();
    u.updates_shape = (jit_shape){3, {D, 4, D}};
    assert_null(jit_compile(&u));
    assert_true(*jit_last_error());
    /* static dims that contradict each other */
    jit_sig gn = base(JIT_OP_GATHER_ND);
    gn.data_shape = (jit_shape){2, {D, 4}};
    gn.indices_shape = (jit_shape){2, {D, 3}}; /* k = 3 > rank 2 */
    assert_null(jit_compile(&gn));
    assert_true(*jit_last_error());
}

/* GatherND with the tuple length k dynamic: served (by the reference
 * kernel today, which says why) and right for every k. */
static void test_gather_nd_dynamic_k(void **state)
{
    (void)state;
    uint64_t rs = 5;
    jit_sig s = base(JIT_OP_GATHER_ND);
    s.data_shape = (jit_shape){3, {4, 3, 5}};
    s.indices_shape = (jit_shape){2, {D, D}};
    jit_kernel fn = compile_dynamic(&s);
    jit_kernel_info info;
    assert_int_equal(jit_info(fn, &info), 0);
    if (info.engine == JIT_ENGINE_REFERENCE)
        assert_true(info.why && *info.why);
    for (int64_t k = 0; k <= 3; k++)
        for (int64_t m = 0; m < 4; m++)
            assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){4, 3, 5, m, k}, -1, "k"), 0);
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){4, 3, 5, 3, 2}, 1, "k bad"),
                     JIT_STATUS_BAD_INDEX);
    expect_bad_shape(fn, (int64_t[]){4, 3, 5, 2, 4}, "k > rank");
    /* The output's rank varies with k here: jit_output_shape refuses to
     * give one shape for the family (a caller binds the call's dims
     * first). It once said rank 1, [4]: both placeholder instances took
     * data's static dims (indices [4, 3] twice), so nothing was seen to
     * vary. */
    jit_shape os;
    assert_int_equal(jit_output_shape(&s, &os), -1);
    expect_error("rank", "depends on the call's dims", "jit_sig_bind");
    jit_sig one;
    assert_int_equal(jit_sig_bind(&s, (int64_t[]){4, 3, 5, 2, 2}, &one), 0);
    assert_int_equal(jit_output_shape(&one, &os), 0);
    expect_shape(&os, 2, (int64_t[]){2, 5});
}

/* A family whose placeholders (5, 7) break a rule, so that the library
 * unifies its dynamic dims with the static dims of another input: the
 * output still varies where the family's does. GatherElements axis 1,
 * data [3, 4], indices [?, ?]: indices' dim 0 must be 3, its dim 1 (the
 * axis) may be anything, so the output is [3, ?]. It once said [3, 4]:
 * both instances became indices [3, 4] and no plan word varied. The calls themselves are right (planned
 * per shape). */
static void test_output_shape_of_a_unified_family(void **state)
{
    (void)state;
    uint64_t rs = 21;
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    s.axis = 1;
    s.data_shape = (jit_shape){2, {3, 4}};
    s.indices_shape = (jit_shape){2, {D, D}};
    jit_kernel fn = compile_dynamic(&s);
    for (int64_t n = 0; n < 6; n++)
        assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){3, 4, 3, n}, -1, "axis dim"), 0);
    expect_bad_shape(fn, (int64_t[]){3, 4, 2, 2}, "indices dim 0 against data's");
    jit_shape os;
    assert_int_equal(jit_output_shape(&s, &os), 0);
    assert_int_equal(os.rank, 2);
    if (os.dims[0] != 3 || os.dims[1] != D)
        fail_msg("jit_output_shape of GatherElements axis 1, data [3,4], "
                 "indices [?,?] is [%lld, %lld], not [3, -1]", (long long)os.dims[0],
                 (long long)os.dims[1]);
}

/* ScatterNDUpdate has no use_init_val: jit_sig.no_init_val must change
 * nothing, on the static kernel as on the dynamic one (found by
 * fuzz_signature's dynamic mode, input
 * tests/fuzz/regressions/signature/dynamic-scatter-nd-min-no-init-val).
 * It was a bug: the static kernel's plan took no_init_val from the
 * signature as written (runtime/plan/plan.c: p->no_init_val = r != NONE &&
 * s->no_init_val, on a signature tj_sig_plan did not normalize), while
 * the cache key (runtime/cache/key.c, normalized by runtime/plan/sig.c) dropped it:
 * min(-1, 0) gave 0, and whichever of the two signatures compiles first
 * decided both results. Now both give -1. */
static void test_attribute_the_op_lacks_changes_nothing(void **state)
{
    (void)state;
    float data[5] = {-1, 2, 3, 4, 5}, upd[1] = {0}, out[5];
    int64_t idx[1] = {0};
    const int64_t dims[] = {5, 1};
    for (int noinit = 1; noinit >= 0; noinit--) {
        jit_sig s = base(JIT_OP_SCATTER_ND_UPDATE);
        s.opset = 15;
        s.index_type = JIT_I64;
        s.reduction = JIT_REDUCTION_MIN;
        s.no_init_val = noinit;
        s.data_shape = (jit_shape){1, {5}};
        s.indices_shape = (jit_shape){1, {D}};
        s.updates_shape = (jit_shape){0, {0}};
        jit_kernel dyn = compile_dynamic(&s);
        assert_int_equal(jit_call_dynamic(dyn, data, idx, upd, out, dims), JIT_OK);
        assert_true(out[0] == -1.0f);
        s.indices_shape.dims[0] = 1;
        jit_kernel st = jit_compile(&s);
        assert_non_null(st);
        assert_int_equal(jit_call(st, data, idx, upd, out), JIT_OK);
        if (out[0] != -1.0f)
            fail_msg("ScatterNDUpdate-15 min with no_init_val=%d (an attribute "
                     "the op lacks) gives %g, not min(-1, 0) = -1",
                     noinit, (double)out[0]);
    }
}

/* Families with valid shapes must compile (SPEC section 6: one kernel
 * for the whole family). It was a bug (runtime/dyn/dyn.c, tj_dyn_build): a
 * valid shape was looked for only with every dynamic dim at 5 or 7 (or
 * unified with a static dim of another input at the same position), then
 * at 1 and at 0, so families whose valid shapes tie dynamic dims to each
 * other or to static dims elsewhere were refused with "no shape of this
 * dynamic signature is valid". Each family below holds the shape called. */
static void test_valid_families_compile(void **state)
{
    (void)state;
    uint64_t rs = 17;
    int refused = 0;
    /* ScatterUpdate axis 1: data [3, ?], indices [?], updates [?, ?]
     * (updates = [3, indices[0]]) */
    jit_sig a = base(JIT_OP_SCATTER_UPDATE);
    a.axis = 1;
    a.data_shape = (jit_shape){2, {3, D}};
    a.indices_shape = (jit_shape){1, {D}};
    a.updates_shape = (jit_shape){2, {D, D}};
    /* ScatterUpdate axis 0, leading dims dynamic, updates static: data
     * [?, 2], indices [?], updates [3, 2] (indices[0] must be 3) */
    jit_sig b = base(JIT_OP_SCATTER_UPDATE);
    b.data_shape = (jit_shape){2, {D, 2}};
    b.indices_shape = (jit_shape){1, {D}};
    b.updates_shape = (jit_shape){2, {3, 2}};
    /* ScatterNDUpdate, every dim dynamic: data [?, ?], indices [?, ?],
     * updates [?] (k = rank(data) = 2: whole elements) */
    jit_sig c = base(JIT_OP_SCATTER_ND_UPDATE);
    c.data_shape = (jit_shape){2, {D, D}};
    c.indices_shape = (jit_shape){2, {D, D}};
    c.updates_shape = (jit_shape){1, {D}};
    const jit_sig *sigs[] = {&a, &b, &c};
    const int64_t dims[][6] = {{3, 4, 2, 3, 2}, {5, 2, 3, 3, 2}, {2, 2, 3, 2, 3}};
    for (int i = 0; i < 3; i++) {
        jit_kernel fn = jit_compile(sigs[i]);
        if (!fn) {
            printf("  family %d refused: %s\n", i, jit_last_error());
            refused++;
            continue;
        }
        assert_int_equal(run_dims(&rs, fn, sigs[i], dims[i], -1, "family"), JIT_OK);
    }
    if (refused)
        fail_msg("%d of 3 families with valid shapes refused at compile", refused);
}

/* ScatterUpdate axis 1, every dim dynamic, indices empty: out must be a
 * copy of data. It was a bug (runtime/dyn/dyn.c, tj_dyn_plan_shape: the plan
 * made by tj_plan_finish_as on the template's nest had units = 0 and
 * unit_copy_bytes = 0 while copy_bytes = 48, where the static plan of
 * the same shape has units = 3, unit_copy_bytes = 16; the kernel then
 * copied nothing): out was left as it was. */
static void test_scatter_with_empty_indices_copies_data(void **state)
{
    (void)state;
    uint64_t rs = 19;
    jit_sig s = base(JIT_OP_SCATTER_UPDATE);
    s.axis = 1;
    s.data_shape = (jit_shape){2, {D, D}};
    s.indices_shape = (jit_shape){1, {D}};
    s.updates_shape = (jit_shape){2, {D, D}};
    jit_kernel fn = compile_dynamic(&s);
    int rc = run_dims(&rs, fn, &s, (int64_t[]){3, 4, 0, 3, 0}, -1, "empty indices, axis 1");
    if (rc != JIT_OK)
        fail_msg("ScatterUpdate axis 1, data [?,?] indices [?] updates [?,?], "
                 "dims {3,4,0,3,0}: out is not a copy of data (see stderr)");
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){3, 4, 2, 3, 2}, -1, "axis 1"), JIT_OK);
}

/* An empty nest replays the template's merges without asking whether the
 * merged levels walk as one, but a unit level must still not take in one
 * that is not: here the template (placeholder dims) has levels 0 and 1 as
 * units (indices span data there) and merges them, while the call's
 * indices dim 1 is 0 against data's 1. Merged anyway, the units came out
 * 0 and the copy of data (split by units) was skipped, on the reference
 * kernel (a mean or use_init_val=false) and on the JIT alike. Found by
 * test_reductions' dynamic runs (seed 2). */
static void test_empty_scatter_elements_keeps_units(void **state)
{
    (void)state;
    jit_sig s = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
    s.opset = 12;
    s.axis = 2;
    s.reduction = JIT_REDUCTION_SUM;
    s.data_shape = (jit_shape){3, {5, D, D}};
    s.indices_shape = (jit_shape){3, {5, D, 2}};
    s.updates_shape = (jit_shape){3, {5, D, 2}};
    const float data[5] = {1, 2, 3, 4, 5};
    const int32_t idx[1] = {0};
    const float upd[1] = {0};
    const int64_t dims[9] = {5, 1, 1, 5, 0, 2, 5, 0, 2};
    for (int no_init = 0; no_init < 2; no_init++) { /* the JIT, then the reference kernel */
        s.no_init_val = no_init;
        jit_kernel fn = compile_dynamic(&s);
        float out[6];
        memset(out, 0, sizeof out);
        assert_int_equal(jit_call_dynamic(fn, data, idx, upd, out, dims), JIT_OK);
        assert_memory_equal(out, data, sizeof data); /* no update: out is data */
        assert_true(out[5] == 0); /* and nothing past it */
    }
}

/* ---- the engine of each call ---- */

/* The call of fn with dims runs on the JIT's code (jit_dynamic_engine),
 * and its result is the oracle's and the static kernel's. */
static void expect_jit_call(uint64_t *rs, jit_kernel fn, const jit_sig *s, const int64_t *dims,
                            const char *what)
{
    jit_kernel_info info;
    char why[512];
    memset(&info, 0, sizeof info);
    if (jit_dynamic_engine(fn, dims, &info.engine, why, sizeof why) != 0)
        fail_msg("%s: jit_dynamic_engine refused: %s", what, jit_last_error());
    info.why = why;
    support_expect_jit(&info, what);
    assert_int_equal(run_dims(rs, fn, s, dims, -1, what), JIT_OK);
}

/* The call of reduction kernel fn with dims runs on the JIT's code and
 * writes what the static kernels of its shape write, the JIT's and the
 * reference's (test_reductions holds both to its reduction oracle; this
 * file's oracle has none). */
static void expect_jit_reduction(uint64_t *rs, jit_kernel fn, const jit_sig *s,
                                 const int64_t *dims, const char *what)
{
    jit_kernel_info info;
    char why[512];
    memset(&info, 0, sizeof info);
    if (jit_dynamic_engine(fn, dims, &info.engine, why, sizeof why) != 0)
        fail_msg("%s: jit_dynamic_engine refused: %s", what, jit_last_error());
    info.why = why;
    support_expect_jit(&info, what);
    jit_sig c;
    jit_shape os;
    assert_int_equal(jit_sig_bind(s, dims, &c), 0);
    assert_int_equal(jit_output_shape(&c, &os), 0);
    inputs in;
    make_inputs(rs, &c, -1, &in);
    jit_sig r = c;
    r.engine = JIT_ENGINE_REFERENCE;
    jit_kernel st = jit_compile(&c), ref = jit_compile(&r);
    assert_true(st && ref);
    int64_t ob = oracle_elems(&os) * jit_dtype_size(c.dtype);
    unsigned char *o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = malloc((size_t)ob + TAIL);
        assert_non_null(o[i]);
        memset(o[i], CANARY, (size_t)ob + TAIL);
    }
    assert_int_equal(((jit_dynamic_fn)fn)(in.data, in.idx, in.upd, o[0], dims), JIT_OK);
    assert_int_equal(jit_call(st, in.data, in.idx, in.upd, o[1]), JIT_OK);
    assert_int_equal(jit_call(ref, in.data, in.idx, in.upd, o[2]), JIT_OK);
    if (memcmp(o[0], o[1], (size_t)ob + TAIL) || memcmp(o[0], o[2], (size_t)ob + TAIL))
        fail_msg("%s, dims {%lld, %lld, ...}: out differs from the static kernels'", what,
                 (long long)dims[0], (long long)dims[1]);
    for (int i = 0; i < 3; i++)
        free(o[i]);
    free_inputs(&in);
}

/* A scatter's reduction over blocks whose width is a dynamic dim (every
 * dim dynamic, as tensorjit's Python families compile them) has JIT code:
 * the element loop takes the call's width. It ran on the reference kernel
 * ("a dynamic block size under a reduction"), 40-60x slower on S5's shape
 * from Python. Widths around the vector width and the unrolled ones. */
static void test_reduction_with_a_dynamic_block_runs_the_jit(void **state)
{
    (void)state;
    uint64_t rs = 21;
    const jit_reduction reductions[] = {JIT_REDUCTION_SUM, JIT_REDUCTION_SUB, JIT_REDUCTION_PROD,
                                        JIT_REDUCTION_MIN, JIT_REDUCTION_MAX};
    const jit_dtype dtypes[] = {JIT_F32, JIT_I32, JIT_F16};
    const int64_t widths[] = {0, 1, 3, 8, 9, 17, 64};
    for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
        for (size_t r = 0; r < sizeof reductions / sizeof *reductions; r++)
            for (int no_init = 0; no_init < 2; no_init++) {
                jit_sig s = base(JIT_OP_SCATTER_ND_UPDATE);
                s.dtype = dtypes[t];
                s.index_type = JIT_I64;
                s.reduction = reductions[r];
                s.no_init_val = no_init;
                s.data_shape = (jit_shape){2, {D, D}};
                s.indices_shape = (jit_shape){2, {D, D}};
                s.updates_shape = (jit_shape){2, {D, D}};
                jit_kernel fn = compile_dynamic(&s);
                char what[160];
                snprintf(what, sizeof what, "ScatterNDUpdate %s %s%s, every dim dynamic",
                         jit_dtype_name(s.dtype), jit_reduction_name(s.reduction),
                         no_init ? " no_init_val" : "");
                jit_kernel_info info;
                assert_int_equal(jit_info(fn, &info), 0);
                support_expect_jit(&info, what);
                for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
                    int64_t n = widths[w];
                    /* data [6, n], indices [9, 1], updates [9, n]: repeats */
                    expect_jit_reduction(&rs, fn, &s, (int64_t[]){6, n, 9, 1, 9, n}, what);
                }
            }
}

/* torch_dims families (every dim dynamic, as tensorjit.torch's): a call
 * whose indices are smaller than data where the template had them equal
 * runs on the kernel's code. The template once had every free dim at one
 * placeholder, so indices' levels that walk as one while their dims equal
 * data's were merged, and torch.gather with idx [64, 384, 128] of x [64,
 * 512, 256] (dim 2) fit nothing but the reference kernel. */
static void test_torch_dims_calls_run_the_jit(void **state)
{
    (void)state;
    uint64_t rs = 22;
    jit_sig g = base(JIT_OP_GATHER_ELEMENTS);
    g.torch_dims = 1;
    g.index_type = JIT_I64;
    g.axis = 2;
    g.data_shape = (jit_shape){3, {D, D, D}};
    g.indices_shape = (jit_shape){3, {D, D, D}};
    jit_kernel fn = compile_dynamic(&g);
    const int64_t gathers[][6] = {
        {4, 6, 5, 4, 3, 2}, /* the example's: smaller in dim 1 */
        {4, 6, 5, 4, 6, 2}, /* equal but along the axis */
        {4, 6, 5, 2, 6, 7}, /* smaller in dim 0 */
        {4, 6, 5, 3, 1, 5},
        {1, 6, 5, 1, 6, 5},
    };
    for (size_t i = 0; i < sizeof gathers / sizeof *gathers; i++)
        expect_jit_call(&rs, fn, &g, gathers[i], "GatherElements torch_dims axis 2");
    /* scatters whose indices span data before the axis (its unit levels);
     * updates larger than indices */
    jit_sig sc = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
    sc.torch_dims = 1;
    sc.index_type = JIT_I64;
    sc.axis = 2;
    sc.reduction = JIT_REDUCTION_SUM;
    sc.data_shape = (jit_shape){3, {D, D, D}};
    sc.indices_shape = (jit_shape){3, {D, D, D}};
    sc.updates_shape = (jit_shape){3, {D, D, D}};
    fn = compile_dynamic(&sc);
    const int64_t scatters[][9] = {
        {4, 6, 5, 4, 6, 2, 4, 6, 2},
        {4, 6, 5, 4, 6, 2, 5, 7, 3},
        {4, 6, 5, 4, 6, 7, 4, 6, 9},
    };
    for (size_t i = 0; i < sizeof scatters / sizeof *scatters; i++)
        expect_jit_reduction(&rs, fn, &sc, scatters[i], "ScatterElementsUpdate torch_dims axis 2");
}

/* ScatterElementsUpdate (every dim dynamic, as tensorjit's Python
 * families compile it) with indices smaller than data before the axis:
 * the template, made where they were equal, has unit levels there, which
 * such a call's own plan lacks (its rows do not tile data's copy). It ran
 * on the reference kernel (torch.scatter with half data's rows: 10x
 * torch's time); now the template's code runs it, its copy made whole
 * first. Both index rules, with and without a reduction, whole and split
 * over threads (TENSORJIT_SPLIT_MIN forces the split), against the static
 * kernels of each shape. */
static void test_scatter_elements_with_smaller_indices_runs_the_jit(void **state)
{
    (void)state;
    uint64_t rs = 23;
    const int64_t calls[][9] = {
        {4, 6, 5, 4, 6, 2, 4, 6, 2}, /* spans data before the axis */
        {4, 6, 5, 2, 6, 2, 2, 6, 2}, /* smaller in dim 0 */
        {4, 6, 5, 4, 3, 5, 4, 3, 5}, /* in dim 1 */
        {4, 6, 5, 1, 1, 7, 1, 1, 7},
        {40, 60, 50, 17, 59, 9, 17, 59, 9},
    };
    for (int split = 0; split < 2; split++) {
        support_setenv("TENSORJIT_SPLIT_MIN", split ? "1" : NULL);
        for (int torch = 0; torch < 2; torch++)
            for (int r = 0; r < 2; r++) {
                jit_sig s = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
                s.torch_dims = torch;
                s.index_type = JIT_I64;
                s.axis = 2;
                s.reduction = r ? JIT_REDUCTION_SUM : JIT_REDUCTION_NONE;
                s.threads = split ? JIT_THREADS_ALL : 1;
                s.data_shape = (jit_shape){3, {D, D, D}};
                s.indices_shape = (jit_shape){3, {D, D, D}};
                s.updates_shape = (jit_shape){3, {D, D, D}};
                jit_kernel fn = compile_dynamic(&s);
                char what[160];
                snprintf(what, sizeof what, "ScatterElementsUpdate axis 2%s%s%s",
                         torch ? " torch_dims" : "", r ? " sum" : "", split ? ", split" : "");
                for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
                    expect_jit_reduction(&rs, fn, &s, calls[i], what);
            }
    }
    support_setenv("TENSORJIT_SPLIT_MIN", NULL);
}

/* jit_dynamic_engine's refusals name what is wrong. */
static void test_dynamic_engine_refusals(void **state)
{
    (void)state;
    jit_sig s = gather_sig();
    jit_kernel fn = compile_dynamic(&s);
    jit_engine e;
    assert_int_equal(jit_dynamic_engine(fn, (int64_t[]){5, 3, 2}, &e, NULL, 0), -1);
    expect_error("data.shape[1]=3", "must be 4", "static");
    assert_int_equal(jit_dynamic_engine(fn, NULL, &e, NULL, 0), -1);
    expect_error("jit_dynamic_engine", "NULL", "");
    jit_sig c = s;
    c.data_shape.dims[0] = 5;
    c.indices_shape.dims[0] = 3;
    jit_kernel st = jit_compile(&c);
    assert_non_null(st);
    assert_int_equal(jit_dynamic_engine(st, (int64_t[]){5, 4, 3}, &e, NULL, 0), -1);
    expect_error("not a dynamic kernel", "jit_info", "");
    assert_int_equal(jit_dynamic_engine((jit_kernel)(uintptr_t)1, (int64_t[]){5, 4, 3}, &e,
                                        NULL, 0),
                     -1);
    expect_error("not a kernel", "", "");
}

/* ---- an empty nest under a huge outer dim ---- */

/* Seconds a call of an empty nest may take before the watchdog ends the
 * test. Such a call has nothing to read or write; a kernel that walks the
 * outer levels anyway makes 2^62 empty iterations and never returns, so
 * any bound far above a call's cost cannot flake. */
#define EMPTY_NEST_WATCHDOG 20

static const char *watched_call = "";

static void empty_nest_timeout(int sig)
{
    (void)sig;
    static const char msg[] = "watchdog: a call with an empty inner dim did not return: ";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    ignored = write(2, watched_call, strlen(watched_call));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(1);
}

/* The dynamic kernel of s and the static kernel of its shape at dims, each
 * called with an outer dim of 2^62 and an inner one of 0, under the
 * watchdog: both return JIT_OK at once and write the same out (a scatter's
 * copy of data, else nothing). NULL where a buffer has no byte. */
static void expect_empty_nest_returns(const jit_sig *s, const int64_t *dims, const char *what)
{
    jit_kernel fn = compile_dynamic(s);
    jit_sig c;
    if (jit_sig_bind(s, dims, &c) != 0)
        fail_msg("%s: bind refused: %s", what, jit_last_error());
    jit_kernel st = jit_compile(&c);
    if (!st)
        fail_msg("%s: the static kernel was refused: %s", what, jit_last_error());
    const float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned char out_dyn[sizeof data + TAIL], out_static[sizeof data + TAIL];
    memset(out_dyn, CANARY, sizeof out_dyn);
    memset(out_static, CANARY, sizeof out_static);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = empty_nest_timeout;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    watched_call = what;
    alarm(EMPTY_NEST_WATCHDOG);
    int rc_dyn = ((jit_dynamic_fn)fn)(data, NULL, NULL, out_dyn, dims);
    int rc_static = jit_call(st, data, NULL, NULL, out_static);
    alarm(0);
    assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
    if (rc_dyn != JIT_OK || rc_static != JIT_OK)
        fail_msg("%s: status %d, the static kernel's %d (%s)", what, rc_dyn, rc_static,
                 jit_last_error());
    if (memcmp(out_dyn, out_static, sizeof out_dyn) != 0)
        fail_msg("%s: out differs from the static kernel's", what);
}

/* Every op with an outer dim of n over an empty inner one, its kernels
 * made for `threads` (2: split, the range function walks the units). */
static void expect_empty_nests_return(int threads, int64_t n, const char *n_text)
{
    jit_sig g = base(JIT_OP_GATHER);
    g.axis = 1;
    g.data_shape = (jit_shape){2, {D, D}};
    g.indices_shape = (jit_shape){1, {D}};
    jit_sig gn = base(JIT_OP_GATHER_ND);
    gn.batch_dims = 1;
    gn.data_shape = (jit_shape){3, {D, D, 4}};
    gn.indices_shape = (jit_shape){3, {D, D, 1}};
    jit_sig ge = gather_elements_sig();
    jit_sig su = base(JIT_OP_SCATTER_UPDATE);
    su.axis = 1;
    su.data_shape = (jit_shape){2, {D, D}};
    su.indices_shape = (jit_shape){1, {D}};
    su.updates_shape = (jit_shape){2, {D, D}};
    jit_sig sn = base(JIT_OP_SCATTER_ND_UPDATE);
    sn.data_shape = (jit_shape){2, {D, 4}};
    sn.indices_shape = (jit_shape){3, {D, D, 1}};
    sn.updates_shape = (jit_shape){3, {D, D, 4}};
    jit_sig se = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
    se.axis = 1;
    se.data_shape = (jit_shape){2, {D, D}};
    se.indices_shape = (jit_shape){2, {D, D}};
    se.updates_shape = (jit_shape){2, {D, D}};
    jit_sig mean = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
    mean.reduction = JIT_REDUCTION_MEAN;
    mean.data_shape = (jit_shape){2, {D, 4}};
    mean.indices_shape = (jit_shape){2, {D, D}};
    mean.updates_shape = (jit_shape){2, {D, D}};
    struct {
        jit_sig *s;
        int64_t dims[8];
        const char *what;
    } runs[] = {
        {&g, {n, 0, 0}, "Gather axis 1, dims {n, 0, 0}"},
        {&gn, {n, 0, 4, n, 0, 1}, "GatherND batch_dims 1, dims {n, 0, 4, n, 0, 1}"},
        {&ge, {n, 0, n, 0}, "GatherElements axis 1, dims {n, 0, n, 0}"},
        {&su, {n, 0, 0, n, 0}, "ScatterUpdate axis 1, dims {n, 0, 0, n, 0}"},
        {&sn, {2, 4, n, 0, 1, n, 0, 4}, "ScatterNDUpdate, dims {2, 4, n, 0, 1, n, 0, 4}"},
        {&se, {n, 0, n, 0, n, 0}, "ScatterElementsUpdate axis 1, dims {n, 0, n, 0, n, 0}"},
        {&mean, {2, 4, n, 0, n, 0}, "ScatterElementsUpdate mean, dims {2, 4, n, 0, n, 0}"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char what[160];
        snprintf(what, sizeof what, "%s, n = %s, %d thread(s)", runs[i].what, n_text, threads);
        runs[i].s->threads = threads;
        expect_empty_nest_returns(runs[i].s, runs[i].dims, what);
    }
}

/* A dynamic kernel skipped its nest only when the nest's visits were a
 * constant 0: called with dims {n, 0, 0}, Gather axis 1 of data [?, ?] by
 * indices [?] ran n empty iterations of its outer level (0.7 s at n = 1e9)
 * where the static and the reference kernels return at once. Every op, a
 * mean's three passes over the nest included. */
static void test_empty_inner_dim_returns_at_once(void **state)
{
    (void)state;
    expect_empty_nests_return(1, (int64_t)1 << 62, "2^62");
    /* split over two threads: the pool's part bounds once overflowed at
     * 2^62 units (test_pool, test_parts_of_huge_unit_counts) */
    expect_empty_nests_return(2, (int64_t)1 << 62, "2^62");
}

/* A thread's exit frees its memory of shapes (a key destructor) while a
 * later key destructor of the same thread may still call a dynamic kernel:
 * the thread-local pointer to that memory went stale (a use after free
 * under ASan; found by a review). The library's key comes first (the
 * kernel is called before the test's key exists), so its destructor runs
 * first. */
static jit_dynamic_fn exit_fn;
static pthread_key_t exit_key;
static float exit_data[16], exit_out[16];
static const int32_t exit_idx[4] = {3, 2, 1, 0};
static int exit_rc = -1;

static void exit_dtor(void *v)
{
    (void)v;
    const int64_t dims[3] = {4, 4, 4}; /* data [4,4], indices [4] */
    exit_rc = exit_fn(exit_data, exit_idx, NULL, exit_out, dims);
}

static void *exit_thread(void *arg)
{
    (void)arg;
    const int64_t dims[3] = {4, 4, 3};
    assert_int_equal(exit_fn(exit_data, exit_idx, NULL, exit_out, dims), JIT_OK);
    pthread_setspecific(exit_key, (void *)1);
    return NULL;
}

static void test_call_from_a_late_thread_destructor(void **state)
{
    (void)state;
    jit_sig s = base(JIT_OP_GATHER);
    s.data_shape = (jit_shape){2, {D, 4}};
    s.indices_shape = (jit_shape){1, {D}};
    exit_fn = (jit_dynamic_fn)compile_dynamic(&s);
    for (int i = 0; i < 16; i++)
        exit_data[i] = (float)i;
    const int64_t dims[3] = {4, 4, 2};
    assert_int_equal(exit_fn(exit_data, exit_idx, NULL, exit_out, dims), JIT_OK);
    assert_int_equal(pthread_key_create(&exit_key, exit_dtor), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, exit_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_key_delete(exit_key);
    assert_int_equal(exit_rc, JIT_OK);
    for (int r = 0; r < 4; r++) /* rows 3, 2, 1, 0 of data */
        for (int c = 0; c < 4; c++)
            assert_true(exit_out[r * 4 + c] == exit_data[(3 - r) * 4 + c]);
}

static char cache_dir[256];

static void remove_dir(const char *dir)
{
    int64_t entries, bytes;
    char open_dir[512];
    jit_cache_stats(1, &entries, &bytes, open_dir, sizeof open_dir);
    jit_shutdown();
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
}

static void test_disk_cache(void **state)
{
    (void)state;
    uint64_t rs = 9;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/tj-dyn-XXXXXX");
    assert_non_null(mkdtemp(cache_dir));
    jit_shutdown();
    if (jit_cache_open(cache_dir) != 0) {
        /* a build without the JIT has no disk cache */
        rmdir(cache_dir);
        skip();
    }
    jit_sig s = gather_nd_sig();
    jit_kernel fn = compile_dynamic(&s);
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){5, 3, 4, 6, 2}, -1, "fill"), 0);
    jit_shutdown();
    assert_int_equal(jit_cache_open(cache_dir), 0);
    fn = compile_dynamic(&s);
    jit_kernel_info info;
    assert_int_equal(jit_info(fn, &info), 0);
    if (info.engine == JIT_ENGINE_JIT) /* only JIT code goes to the disk cache */
        assert_int_equal(info.cache_hit, 1);
    else
        printf("  disk cache: dynamic kernels run on the %s engine (%s): no entry to hit\n",
               jit_engine_name(info.engine), info.why);
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){5, 3, 4, 6, 2}, -1, "load"), 0);
    assert_int_equal(run_dims(&rs, fn, &s, (int64_t[]){2, 3, 4, 9, 2}, -1, "load 2"), 0);
    remove_dir(cache_dir);
}

/* A dynamic kernel released under the kernel limit: the plans its shapes
 * left in this thread's memory must not serve the next kernel, even one
 * whose entry comes back at the same address with the same dims. */
static void test_kernel_limit_release(void **state)
{
    (void)state;
    uint64_t rs = 13;
    jit_shutdown();
    if (jit_set_kernel_limit(1, 0) != 0) {
        printf("  no kernel limit here: %s\n", jit_last_error());
        skip();
    }
    /* the same dims array is valid for both families: {4, 3, 2, 1} */
    const int64_t dims[] = {4, 3, 2, 1};
    jit_sig a = base(JIT_OP_GATHER);
    a.data_shape = (jit_shape){2, {D, D}};
    a.indices_shape = (jit_shape){2, {D, D}};
    jit_sig b = base(JIT_OP_GATHER_ND);
    b.data_shape = (jit_shape){2, {D, D}};
    b.indices_shape = (jit_shape){2, {D, 1}};
    for (int round = 0; round < 3; round++) {
        jit_kernel ka = compile_dynamic(&a);
        assert_int_equal(run_dims(&rs, ka, &a, dims, -1, "A"), 0);
        assert_int_equal(jit_release(ka), 0);
        jit_kernel kb = compile_dynamic(&b);
        assert_int_equal(run_dims(&rs, kb, &b, dims, -1, "B after A"), 0);
        assert_int_equal(jit_release(kb), 0);
        /* and A again, after B went */
        ka = compile_dynamic(&a);
        assert_int_equal(run_dims(&rs, ka, &a, dims, -1, "A after B"), 0);
        assert_int_equal(jit_release(ka), 0);
    }
    /* the same with a shutdown in between: every address may come back */
    jit_kernel ka = compile_dynamic(&a);
    assert_int_equal(run_dims(&rs, ka, &a, dims, -1, "A"), 0);
    jit_shutdown();
    jit_kernel kb = compile_dynamic(&b);
    assert_int_equal(run_dims(&rs, kb, &b, dims, -1, "B after shutdown"), 0);
    assert_int_equal(jit_set_kernel_limit(0, 0), 0);
    jit_shutdown();
}

/* ---- threads ---- */

enum { THREADS = 4 };

static jit_kernel shared_kernel;
static jit_sig shared_sig;
static long thread_rounds;
static pthread_barrier_t barrier;

static void *thread_main(void *arg)
{
    long t = (long)(intptr_t)arg;
    uint64_t rs = 100 + (uint64_t)t;
    long fails = 0;
    pthread_barrier_wait(&barrier);
    for (long r = 0; r < thread_rounds; r++) {
        /* each thread its own shapes, several of them (past the memory) */
        int64_t n = 2 + t + (r % 6), m = 1 + (t * 3 + r) % 9;
        int64_t dims[] = {n, 3, 4, m, 2};
        char what[64];
        snprintf(what, sizeof what, "thread %ld round %ld", t, r);
        int rc = run_dims(&rs, shared_kernel, &shared_sig, dims, r % 5 == 4 ? 0 : -1, what);
        if (rc != (r % 5 == 4 && m > 0 ? JIT_STATUS_BAD_INDEX : JIT_OK))
            fails++;
    }
    return (void *)(intptr_t)fails;
}

static void test_threads_share_a_dynamic_kernel(void **state)
{
    (void)state;
    shared_sig = gather_nd_sig();
    shared_kernel = compile_dynamic(&shared_sig);
    thread_rounds = support_env_long("TENSORJIT_DYN_ROUNDS", 40);
    pthread_t th[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (long t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t), 0);
    long fails = 0;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        fails += (long)(intptr_t)r;
    }
    pthread_barrier_destroy(&barrier);
    assert_int_equal(fails, 0);
}

/* An empty nest replays its template's merges without asking whether the
 * merged levels walk as one (it never walks): GatherElements with every
 * dim dynamic, called with dims [0,2^40,2^40,0] for data and indices.
 * With axis 0 the template merges levels 1 to 3, and the merged trip,
 * 2^80, was a signed overflow (UBSan); the static plan of the same shape
 * never merges. Every axis, against the oracle and the static kernel. */
static void test_empty_nest_merge_overflow(void **state)
{
    (void)state;
    uint64_t rs = 23;
    const int64_t big = INT64_C(1) << 40;
    const int64_t dims[8] = {0, big, big, 0, 0, big, big, 0};
    for (int axis = 0; axis < 4; axis++) {
        jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
        s.dtype = JIT_F64;
        s.axis = axis;
        s.data_shape = (jit_shape){4, {D, D, D, D}};
        s.indices_shape = (jit_shape){4, {D, D, D, D}};
        jit_kernel fn = compile_dynamic(&s);
        char what[64];
        snprintf(what, sizeof what, "empty nest of 2^80 merged trips, axis %d", axis);
        assert_int_equal(run_dims(&rs, fn, &s, dims, -1, what), JIT_OK);
    }
}

/* The element-level byte strides overflow for a call's dims as for a
 * static signature (test_signature): the call is refused with the static
 * signature's message, before anything is written. */
static void test_element_strides_overflow_refused(void **state)
{
    (void)state;
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    s.dtype = JIT_F64;
    s.axis = 1;
    s.data_shape = (jit_shape){2, {D, D}};
    s.indices_shape = (jit_shape){2, {D, D}};
    jit_kernel fn = compile_dynamic(&s);
    const int64_t dims[4] = {0, 1, 0, INT64_C(1) << 61};
    jit_sig c = s;
    c.data_shape = (jit_shape){2, {0, 1}};
    c.indices_shape = (jit_shape){2, {0, INT64_C(1) << 61}};
    assert_null(jit_compile(&c));
    char want[1024];
    snprintf(want, sizeof want, "%s", jit_last_error());
    assert_non_null(strstr(want, "overflows int64"));
    unsigned char out[TAIL];
    memset(out, CANARY, sizeof out);
    assert_int_equal(jit_call_dynamic(fn, NULL, NULL, NULL, out, dims), JIT_STATUS_BAD_SHAPE);
    assert_string_equal(jit_last_error(), want);
    assert_true(untouched(out, sizeof out));
    jit_sig bound;
    assert_int_equal(jit_sig_bind(&s, dims, &bound), -1);
    assert_string_equal(jit_last_error(), want);
}

/* Families with 29 or more dynamic dims in one input: at the template's
 * placeholders (5 and 7) such an input had more bytes than int64 holds,
 * and the family was refused ("no shape of this dynamic signature is
 * valid") though small shapes of it bind and run. Each compiles now, its
 * output dims vary, and calls agree with the oracle and the static kernel:
 * all ones, then a few dims of 2 and 3. The last family has a static dim of
 * 2^40 beside them, where no placeholder but 1 fits: its calls have an
 * empty first dim (lead 0), or its data would be terabytes, and the
 * reference kernel plans each (the output shape is then the bound call's
 * to say). */
static void many_dims_run(const jit_sig *s, int64_t lead, const char *what)
{
    uint64_t rs = 29;
    jit_kernel fn = compile_dynamic(s);
    jit_shape os;
    if (lead) {
        assert_int_equal(jit_output_shape(s, &os), 0);
        int dynamic_out = 0;
        for (int i = 0; i < os.rank; i++)
            dynamic_out += os.dims[i] == D;
        assert_true(dynamic_out >= 29);
    }
    jit_sig c = *s;
    int64_t dims[3 * JIT_MAX_RANK];
    for (int variant = 0; variant < 3; variant++) {
        /* the concrete dims: static ones kept, dynamic ones 1, or 2 and 3
         * on a few dims (tied dims alike, so that the shape is valid) */
        int n = 0, first = 1;
        jit_shape *in[3] = {&c.data_shape, &c.indices_shape, &c.updates_shape};
        const jit_shape *dyn[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
        for (int t = 0; t < (has_updates(s->op) ? 3 : 2); t++)
            for (int i = 0; i < dyn[t]->rank; i++) {
                int64_t v = dyn[t]->dims[i] != D ? dyn[t]->dims[i]
                            : first             ? lead
                            : variant == 0      ? 1
                            : i % 7 == 3        ? 1 + variant
                                                : 1;
                first &= dyn[t]->dims[i] != D;
                in[t]->dims[i] = v;
                dims[n++] = v;
            }
        char name[96];
        snprintf(name, sizeof name, "%s, variant %d", what, variant);
        assert_int_equal(run_dims(&rs, fn, s, dims, -1, name), JIT_OK);
    }
}

static void test_many_dynamic_dims_compile(void **state)
{
    (void)state;
    jit_sig g = base(JIT_OP_GATHER); /* data [?] * 31, indices [?]: out 31 dims */
    g.data_shape.rank = 31;
    for (int i = 0; i < 31; i++)
        g.data_shape.dims[i] = D;
    g.indices_shape = (jit_shape){1, {D}};
    many_dims_run(&g, 1, "Gather, 31 dynamic data dims");
    jit_sig e = base(JIT_OP_GATHER_ELEMENTS); /* data and indices of 32 dims, f64, i64 */
    e.dtype = JIT_F64;
    e.index_type = JIT_I64;
    e.axis = 5;
    e.data_shape.rank = e.indices_shape.rank = JIT_MAX_RANK;
    for (int i = 0; i < JIT_MAX_RANK; i++)
        e.data_shape.dims[i] = e.indices_shape.dims[i] = D;
    many_dims_run(&e, 1, "GatherElements, 32 dynamic dims");
    jit_sig big = g; /* a static dim of 2^40: 2^29 of them would overflow */
    big.data_shape.rank = 30;
    big.data_shape.dims[29] = INT64_C(1) << 40;
    big.axis = 1; /* data's dim 0 empty, its dim 1 indexed */
    many_dims_run(&big, 0, "Gather, 29 dynamic data dims and a static 2^40");
    jit_kernel_info info;
    assert_int_equal(jit_info(jit_compile(&big), &info), 0);
    assert_int_equal(info.engine, JIT_ENGINE_REFERENCE);
    assert_non_null(strstr(info.why, "every dynamic dim 1"));
}

/* GatherND with data and indices of rank 23, every dim dynamic: only
 * tuples of 13 or more entries keep the output within 32 dims, and the
 * search, which tried tuple lengths of 1 to 4, refused the family ("no
 * shape of this dynamic signature is valid"). It compiles now, and calls
 * with tuples of 23 and of 13 agree with the oracle. */
static void test_gather_nd_high_rank_all_dynamic(void **state)
{
    (void)state;
    uint64_t rs = 31;
    jit_sig s = gather_nd_rank23();
    jit_kernel fn = compile_dynamic(&s);
    for (int k = 23; k >= 13; k -= 10) {
        int64_t dims[46];
        for (int i = 0; i < 23; i++)
            dims[i] = i % 5 == 0 ? 2 : 1;
        for (int i = 0; i < 22; i++)
            dims[23 + i] = i == 0 ? 3 : 1;
        dims[45] = k;
        char what[64];
        snprintf(what, sizeof what, "GatherND rank 23, tuples of %d", k);
        assert_int_equal(run_dims(&rs, fn, &s, dims, -1, what), JIT_OK);
    }
}

/* GatherND with data of rank 30 (every dim dynamic) and indices of rank 32
 * whose dims are 0, the 20 distinct values 5 to 24, then dynamic ones,
 * the tuple length last: only tuples of 29 or 30 keep the output within
 * 32 dims, and of the search's candidates only data's rank (30) is one.
 * The candidates were capped at 24, the 21 distinct static dims first,
 * then 1 to 4, then the ranks: the ranks were dropped and the family
 * refused ("no shape of this dynamic signature is valid"; with 19
 * distinct static dims it compiled). Twenty distinct static dims of 5 or
 * more multiply to over 10^22 elements, so a family that has them has an
 * empty dim (here indices' first) or tensors no test can hold: every call
 * here is empty, and they check the tuple lengths the family allows and
 * one it does not. */
static void test_gather_nd_rank_tuple_beside_many_static_dims(void **state)
{
    (void)state;
    uint64_t rs = 37;
    jit_sig s = base(JIT_OP_GATHER_ND);
    s.data_shape.rank = 30;
    s.indices_shape.rank = JIT_MAX_RANK;
    for (int i = 0; i < 30; i++)
        s.data_shape.dims[i] = D;
    for (int i = 0; i < JIT_MAX_RANK; i++)
        s.indices_shape.dims[i] = i == 0 ? 0 : i <= 20 ? 4 + i : D;
    jit_kernel fn = compile_dynamic(&s);
    int64_t dims[30 + JIT_MAX_RANK];
    for (int i = 0; i < 30; i++)
        dims[i] = i % 7 == 2 ? 2 : 1;
    for (int i = 0; i < JIT_MAX_RANK - 1; i++)
        dims[30 + i] = s.indices_shape.dims[i] != D ? s.indices_shape.dims[i] : 1 + i % 2;
    /* tuples as long as data's rank run the JIT's code (the template's
     * tuple length); tuples of 29, valid too, the reference kernel */
    dims[30 + JIT_MAX_RANK - 1] = 30;
    expect_jit_call(&rs, fn, &s, dims, "GatherND beside 20 static dims, tuples of 30");
    dims[30 + JIT_MAX_RANK - 1] = 29;
    const char *what = "GatherND beside 20 static dims, tuples of 29";
    assert_int_equal(run_dims(&rs, fn, &s, dims, -1, what), JIT_OK);
    dims[30 + JIT_MAX_RANK - 1] = 31; /* longer than data's rank */
    expect_bad_shape(fn, dims, "tuples of 31");
}

/* ---- a family's output shape holds for every call ---- */

static void shape_append(jit_shape *out, const jit_shape *from, int begin, int end)
{
    for (int d = begin; d < end; d++)
        out->dims[out->rank++] = from->dims[d];
}

/* A static signature's output shape by the ops' specifications, written
 * here rather than asked of the library, whose plan and family both use
 * the op's shape rule. */
static jit_shape spec_output_shape(const jit_sig *s)
{
    const jit_shape *data = &s->data_shape, *idx = &s->indices_shape;
    jit_shape out = {0};
    int b = s->batch_dims;
    switch (s->op) {
    case JIT_OP_GATHER: /* data[:axis] + indices[batch_dims:] + data[axis + 1:] */
        shape_append(&out, data, 0, (int)s->axis);
        shape_append(&out, idx, b, idx->rank);
        shape_append(&out, data, (int)s->axis + 1, data->rank);
        break;
    case JIT_OP_GATHER_ND: { /* -5: [prod(indices[:b])]; -8: indices[:b]; then the rest */
        int k = (int)idx->dims[idx->rank - 1];
        if (s->opset == 5 && b > 0) {
            int64_t prod = 1;
            for (int d = 0; d < b; d++)
                prod *= idx->dims[d];
            out.dims[out.rank++] = prod;
            shape_append(&out, idx, b, idx->rank - 1);
        } else {
            shape_append(&out, idx, 0, idx->rank - 1);
        }
        shape_append(&out, data, b + k, data->rank);
        break;
    }
    case JIT_OP_GATHER_ELEMENTS:
        out = *idx;
        break;
    case JIT_OP_EMBEDDING_BAG_OFFSETS: /* [B, d1, ...], B offsets less the last one's */
        out.dims[out.rank++] = s->updates_shape.dims[0] - (s->include_last_offset != 0);
        shape_append(&out, data, 1, data->rank);
        break;
    default: /* the scatters */
        out = *data;
        break;
    }
    return out;
}

/* The family's output shape said nothing a call of dims contradicts: the
 * bound call's output (by the specification) has its rank and, at every
 * dim it holds fixed, its value; the library's answer for the call is the
 * specification's. Skipped where dims break a rule (0), else 1. */
static int expect_call_within_family(const jit_sig *s, const jit_shape *fam,
                                     const int64_t *dims, const char *what)
{
    jit_sig one;
    jit_shape os;
    if (jit_sig_bind(s, dims, &one) != 0 || jit_output_shape(&one, &os) != 0)
        return 0;
    jit_shape spec = spec_output_shape(&one);
    if (spec.rank != os.rank || memcmp(spec.dims, os.dims, sizeof *os.dims * (size_t)os.rank))
        fail_msg("%s: the library's output shape for a call is not the specification's",
                 what);
    if (os.rank != fam->rank)
        fail_msg("%s: the family's output has rank %d, a call's %d", what, fam->rank, os.rank);
    for (int i = 0; i < os.rank; i++)
        if (fam->dims[i] != D && fam->dims[i] != os.dims[i])
            fail_msg("%s: the family's output dim %d is %lld, a call's %lld", what, i,
                     (long long)fam->dims[i], (long long)os.dims[i]);
    return 1;
}

/* jit_output_shape of s fails, naming the rank and what to do, and so
 * does jit_index_dims (the tuple length is the call's too). */
static void expect_rank_varies(const jit_sig *s, const char *what)
{
    jit_shape os;
    int depth;
    int64_t idims[JIT_MAX_RANK];
    if (jit_output_shape(s, &os) == 0)
        fail_msg("%s: jit_output_shape gave rank %d; the rank varies with the tuple length",
                 what, os.rank);
    expect_error("rank", "depends on the call's dims", "jit_sig_bind");
    if (jit_index_dims(s, &depth, idims) == 0)
        fail_msg("%s: jit_index_dims gave a depth of %d; it varies with the tuple length", what,
                 depth);
}

/* A call of GatherND family s with tuples of k (dims' last entry): its
 * output is indices.shape[:-1] + data.shape[k:] (batch_dims 0), and the
 * call agrees with the oracle and the static kernel. */
static void expect_gather_nd_call(uint64_t *rs, jit_kernel fn, const jit_sig *s,
                                  const int64_t *dims, const char *what)
{
    int rd = s->data_shape.rank, ri = s->indices_shape.rank;
    int64_t k = dims[rd + ri - 1];
    jit_shape want = {.rank = 0}, os;
    for (int i = 0; i < ri - 1; i++)
        want.dims[want.rank++] = dims[rd + i];
    for (int64_t i = k; i < rd; i++)
        want.dims[want.rank++] = dims[i];
    jit_sig one;
    assert_int_equal(jit_sig_bind(s, dims, &one), 0);
    assert_int_equal(jit_output_shape(&one, &os), 0);
    if (os.rank != ri - 1 + rd - k)
        fail_msg("%s: output rank %d, not %lld", what, os.rank, (long long)(ri - 1 + rd - k));
    expect_shape(&os, want.rank, want.dims);
    assert_int_equal(run_dims(rs, fn, s, dims, -1, what), JIT_OK);
}

/* GatherND, data and indices of rank 23 with every dim dynamic (the
 * family of test_gather_nd_high_rank_all_dynamic), and data [?] * 30 with
 * indices [0, 5, ..., 24, ?, ...] of rank 32 (that of
 * test_gather_nd_rank_tuple_beside_many_static_dims): the tuple length
 * is dynamic, so the output's rank, rank(indices) - 1 + rank(data) - k,
 * is the call's. It was a bug: jit_output_shape gave rank 22 and 31 (one
 * tuple length's), while tuples of 13 give rank 32 and of 29 rank 32.
 * Whether the rank varies was found by trying the search's candidate
 * values for the tuple length (1 to 4, the ranks, the static dims, one
 * above them: runtime/dyn/dyn_template.c), and of those only data's rank
 * keeps these outputs within 32 dims, so the rank looked fixed. */
static void test_output_rank_of_a_dynamic_tuple_length(void **state)
{
    (void)state;
    uint64_t rs = 41;
    jit_sig s = gather_nd_rank23();
    expect_rank_varies(&s, "GatherND rank 23, every dim dynamic");
    jit_kernel fn = compile_dynamic(&s);
    for (int64_t k = 23; k >= 13; k -= 2) {
        int64_t dims[46];
        for (int i = 0; i < 23; i++)
            dims[i] = i % 6 == 1 ? 2 : 1;
        for (int i = 0; i < 22; i++)
            dims[23 + i] = i == 1 ? 3 : 1;
        dims[45] = k;
        char what[64];
        snprintf(what, sizeof what, "GatherND rank 23, tuples of %lld", (long long)k);
        expect_gather_nd_call(&rs, fn, &s, dims, what);
    }
    jit_sig w = base(JIT_OP_GATHER_ND);
    w.data_shape.rank = 30;
    w.indices_shape.rank = JIT_MAX_RANK;
    for (int i = 0; i < 30; i++)
        w.data_shape.dims[i] = D;
    for (int i = 0; i < JIT_MAX_RANK; i++)
        w.indices_shape.dims[i] = i == 0 ? 0 : i <= 20 ? 4 + i : D;
    expect_rank_varies(&w, "GatherND beside 20 static dims");
    fn = compile_dynamic(&w);
    int64_t dims[30 + JIT_MAX_RANK];
    for (int i = 0; i < 30; i++)
        dims[i] = i % 5 == 3 ? 2 : 1;
    for (int i = 0; i < JIT_MAX_RANK - 1; i++)
        dims[30 + i] = w.indices_shape.dims[i] != D ? w.indices_shape.dims[i] : 2 - i % 2;
    for (int64_t k = 30; k >= 29; k--) {
        dims[30 + JIT_MAX_RANK - 1] = k;
        char what[64];
        snprintf(what, sizeof what, "GatherND beside 20 static dims, tuples of %lld",
                 (long long)k);
        expect_gather_nd_call(&rs, fn, &w, dims, what);
    }
    /* a tuple length the ranks fix (ScatterNDUpdate's) is no such
     * family: data [?, ?], indices [?, ?], updates [?] has k = 2 */
    jit_sig nd = base(JIT_OP_SCATTER_ND_UPDATE);
    nd.data_shape = (jit_shape){2, {D, D}};
    nd.indices_shape = (jit_shape){2, {D, D}};
    nd.updates_shape = (jit_shape){1, {D}};
    jit_shape os;
    assert_int_equal(jit_output_shape(&nd, &os), 0);
    expect_shape(&os, 2, (int64_t[]){D, D});
}

/* GatherElements axis 1 with torch_dims, data [1, 5], indices [?, 3]:
 * indices' dim 0 may be 0 or 1 (no larger than data's), so the output
 * [indices' dim 0, 3] is [?, 3]. It was a bug: jit_output_shape said
 * [1, 3]. The search ties that dim to 1 (its placeholders are too
 * large), and whether the output varies was found by trying the other
 * candidate values (the static dims, 1 to 4, ...), none of them valid:
 * 0 is no candidate. */
static void test_output_dim_of_a_tied_dynamic_dim(void **state)
{
    (void)state;
    uint64_t rs = 43;
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    s.axis = 1;
    s.torch_dims = 1;
    s.data_shape = (jit_shape){2, {1, 5}};
    s.indices_shape = (jit_shape){2, {D, 3}};
    jit_shape os;
    assert_int_equal(jit_output_shape(&s, &os), 0);
    assert_int_equal(os.rank, 2);
    if (os.dims[0] != D || os.dims[1] != 3)
        fail_msg("jit_output_shape of GatherElements torch_dims axis 1, data [1, 5], indices "
                 "[?, 3] is [%lld, %lld], not [-1, 3]",
                 (long long)os.dims[0], (long long)os.dims[1]);
    jit_kernel fn = compile_dynamic(&s);
    for (int64_t n = 0; n <= 1; n++) {
        int64_t dims[] = {1, 5, n, 3};
        assert_int_equal(expect_call_within_family(&s, &os, dims, "indices [n, 3]"), 1);
        assert_int_equal(run_dims(&rs, fn, &s, dims, -1, "indices [n, 3]"), JIT_OK);
    }
    expect_bad_shape(fn, (int64_t[]){1, 5, 2, 3}, "indices' dim 0 above data's");
}

/* A family of every op, its dynamic dims at random small values (0
 * included, the value a search never tries unless a static dim is 0):
 * every call its rules accept has an output its family's output shape
 * allows. */
static jit_sig family_sig(int i)
{
    jit_sig s = base(JIT_OP_GATHER_ELEMENTS);
    switch (i) {
    case 0: return gather_sig();
    case 1: return gather_nd_sig();
    case 2: return scatter_sig();
    case 3: return gather_elements_sig();
    case 4: return scatter_nd_sig();
    case 5: /* the unified family: indices' dim 0 is data's */
        s.axis = 1;
        s.data_shape = (jit_shape){2, {3, 4}};
        s.indices_shape = (jit_shape){2, {D, D}};
        return s;
    case 6: /* torch.gather: indices no larger than data but along the axis */
        s.axis = 0;
        s.torch_dims = 1;
        s.data_shape = (jit_shape){3, {D, 2, 1}};
        s.indices_shape = (jit_shape){3, {D, D, D}};
        return s;
    case 7: /* Gather, batch_dims 1, axis 2 */
        s = base(JIT_OP_GATHER);
        s.axis = 2;
        s.batch_dims = 1;
        s.data_shape = (jit_shape){3, {D, 2, D}};
        s.indices_shape = (jit_shape){2, {D, D}};
        return s;
    case 8: /* GatherND-5, batch_dims 2: the output's first dim a product */
        s = base(JIT_OP_GATHER_ND);
        s.opset = 5;
        s.batch_dims = 2;
        s.data_shape = (jit_shape){4, {D, 2, D, 3}};
        s.indices_shape = (jit_shape){4, {D, D, D, 1}};
        return s;
    case 9: /* ScatterElementsUpdate, torch_dims */
        s = base(JIT_OP_SCATTER_ELEMENTS_UPDATE);
        s.axis = 1;
        s.torch_dims = 1;
        s.data_shape = (jit_shape){2, {1, D}};
        s.indices_shape = (jit_shape){2, {D, D}};
        s.updates_shape = (jit_shape){2, {D, D}};
        return s;
    default: /* EmbeddingBagOffsets-15 with include_last_offset */
        s = base(JIT_OP_EMBEDDING_BAG_OFFSETS);
        s.opset = 15;
        s.index_type = JIT_I64;
        s.include_last_offset = 1;
        s.data_shape = (jit_shape){2, {D, 4}};
        s.indices_shape = (jit_shape){1, {D}};
        s.updates_shape = (jit_shape){1, {D}};
        return s;
    }
}

static void test_family_output_shape_holds_for_every_call(void **state)
{
    (void)state;
    uint64_t rs = 47;
    for (int f = 0; f <= 10; f++) {
        jit_sig s = family_sig(f);
        jit_shape fam;
        if (jit_output_shape(&s, &fam) != 0)
            fail_msg("family %d: jit_output_shape refused: %s", f, jit_last_error());
        int64_t dims[3 * JIT_MAX_RANK];
        const jit_shape *in[] = {&s.data_shape, &s.indices_shape, &s.updates_shape};
        int accepted = 0;
        for (int trial = 0; trial < 400; trial++) {
            int n = 0;
            for (int i = 0; i < (has_updates(s.op) || f == 10 ? 3 : 2); i++)
                for (int d = 0; d < in[i]->rank; d++)
                    dims[n++] = in[i]->dims[d] != D ? in[i]->dims[d]
                                                    : support_rand_range(&rs, 0, 4);
            char what[64];
            snprintf(what, sizeof what, "family %d, trial %d", f, trial);
            accepted += expect_call_within_family(&s, &fam, dims, what);
        }
        if (accepted < 10)
            fail_msg("family %d: only %d of 400 random calls valid", f, accepted);
    }
}

static int teardown(void **state)
{
    (void)state;
    jit_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_compile_info_and_cache_key, teardown),
        cmocka_unit_test_teardown(test_output_shape_with_dynamic_dims, teardown),
        cmocka_unit_test_teardown(test_bind, teardown),
        cmocka_unit_test_teardown(test_bind_checks_the_rules, teardown),
        cmocka_unit_test_teardown(test_bad_dims_write_nothing, teardown),
        cmocka_unit_test_teardown(test_bad_index_like_the_static_kernel, teardown),
        cmocka_unit_test_teardown(test_null_pointers, teardown),
        cmocka_unit_test_teardown(test_zero_dim_no_tuples, teardown),
        cmocka_unit_test_teardown(test_empty_shapes, teardown),
        cmocka_unit_test_teardown(test_static_and_dynamic_calls_do_not_mix, teardown),
        cmocka_unit_test_teardown(test_parts_api_refused, teardown),
        cmocka_unit_test_teardown(test_typed_compile_refuses_dynamic_dims, teardown),
        cmocka_unit_test_teardown(test_many_shapes_alternating, teardown),
        cmocka_unit_test_teardown(test_invalid_family_refused, teardown),
        cmocka_unit_test_teardown(test_gather_nd_dynamic_k, teardown),
        cmocka_unit_test_teardown(test_gather_nd_high_rank_all_dynamic, teardown),
        cmocka_unit_test_teardown(test_gather_nd_rank_tuple_beside_many_static_dims,
                                  teardown),
        cmocka_unit_test_teardown(test_output_shape_of_a_unified_family, teardown),
        cmocka_unit_test_teardown(test_output_rank_of_a_dynamic_tuple_length, teardown),
        cmocka_unit_test_teardown(test_output_dim_of_a_tied_dynamic_dim, teardown),
        cmocka_unit_test_teardown(test_family_output_shape_holds_for_every_call, teardown),
        cmocka_unit_test_teardown(test_attribute_the_op_lacks_changes_nothing, teardown),
        cmocka_unit_test_teardown(test_valid_families_compile, teardown),
        cmocka_unit_test_teardown(test_scatter_with_empty_indices_copies_data, teardown),
        cmocka_unit_test_teardown(test_empty_scatter_elements_keeps_units, teardown),
        cmocka_unit_test_teardown(test_empty_inner_dim_returns_at_once, teardown),
        cmocka_unit_test_teardown(test_call_from_a_late_thread_destructor, teardown),
        cmocka_unit_test_teardown(test_disk_cache, teardown),
        cmocka_unit_test_teardown(test_kernel_limit_release, teardown),
        cmocka_unit_test_teardown(test_threads_share_a_dynamic_kernel, teardown),
        cmocka_unit_test_teardown(test_empty_nest_merge_overflow, teardown),
        cmocka_unit_test_teardown(test_element_strides_overflow_refused, teardown),
        cmocka_unit_test_teardown(test_many_dynamic_dims_compile, teardown),
        cmocka_unit_test_teardown(test_reduction_with_a_dynamic_block_runs_the_jit, teardown),
        cmocka_unit_test_teardown(test_torch_dims_calls_run_the_jit, teardown),
        cmocka_unit_test_teardown(test_scatter_elements_with_smaller_indices_runs_the_jit,
                                  teardown),
        cmocka_unit_test_teardown(test_dynamic_engine_refusals, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
