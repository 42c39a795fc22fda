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
        support_store_index(t, idx, i, is_unsigned && v < 0 ? v & 0x7f : v);
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

/* ---- dynamic signatures (SPEC section 6) ---- */

/* The dims a dynamic kernel's call passes: data, indices, [updates]. */
static int sig_dims(const jit_sig *s, int with_updates, int64_t *dims, jit_shape **shapes,
                    jit_sig *w)
{
    int n = 0;
    jit_shape *sh[3] = {&w->data_shape, &w->indices_shape, &w->updates_shape};
    (void)s;
    for (int i = 0; i < 2 + with_updates; i++)
        for (int d = 0; d < sh[i]->rank; d++) {
            if (dims)
                dims[n] = sh[i]->dims[d];
            if (shapes)
                shapes[n] = sh[i];
            n++;
        }
    return n;
}

/* The bound of call dim number at of sig (0: none). */
static int64_t *bound_at(jit_sig *s, int with_updates, int at)
{
    int64_t *b[3] = {s->data_bound, s->indices_bound, s->updates_bound};
    jit_shape *sh[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
    for (int i = 0; i < 2 + with_updates; i++) {
        if (at < sh[i]->rank)
            return &b[i][at];
        at -= sh[i]->rank;
    }
    return NULL;
}

static int64_t *dim_at(jit_sig *s, int with_updates, int at)
{
    jit_shape *sh[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
    for (int i = 0; i < 2 + with_updates; i++) {
        if (at < sh[i]->rank)
            return &sh[i]->dims[at];
        at -= sh[i]->rank;
    }
    return NULL;
}

/* "data [?,4] indices [3] updates [...] dims {..}" for the reports */
static const char *dyn_text(const jit_sig *s, int hu, const int64_t *dims, int nd)
{
    static char t[1024];
    const jit_shape *sh[3] = {&s->data_shape, &s->indices_shape, &s->updates_shape};
    const int64_t *b[3] = {s->data_bound, s->indices_bound, s->updates_bound};
    static const char *const names[3] = {"data", "indices", "updates"};
    t[0] = 0;
    snprintf(t, sizeof t, "axis %lld batch_dims %d opset %d:", (long long)s->axis, s->batch_dims,
             s->opset);
    for (int i = 0; i < 2 + hu; i++) {
        snprintf(t + strlen(t), sizeof t - strlen(t), " %s [", names[i]);
        for (int d = 0; d < sh[i]->rank; d++) {
            if (sh[i]->dims[d] == JIT_DIM_DYNAMIC)
                snprintf(t + strlen(t), sizeof t - strlen(t), "%s?", d ? "," : "");
            else
                snprintf(t + strlen(t), sizeof t - strlen(t), "%s%lld", d ? "," : "",
                         (long long)sh[i]->dims[d]);
            if (b[i][d] && sh[i]->dims[d] == JIT_DIM_DYNAMIC)
                snprintf(t + strlen(t), sizeof t - strlen(t), "<=%lld", (long long)b[i][d]);
        }
        snprintf(t + strlen(t), sizeof t - strlen(t), "]");
    }
    snprintf(t + strlen(t), sizeof t - strlen(t), " dims {");
    for (int i = 0; dims && i < nd; i++)
        snprintf(t + strlen(t), sizeof t - strlen(t), "%s%lld", i ? "," : "", (long long)dims[i]);
    snprintf(t + strlen(t), sizeof t - strlen(t), "}");
    return t;
}

/* A shape of the family that breaks a rule: the kernel must say
 * BAD_SHAPE and touch nothing. */
static int dyn_refused(jit_kernel fn, const rand_sig *g, int64_t n, const int64_t *dims)
{
    unsigned char buf[3][64], out[64];
    memset(buf, 0x11, sizeof buf);
    memset(out, CANARY, sizeof out);
    int rc = ((jit_dynamic_fn)fn)(buf[0], buf[1], buf[2], out, dims);
    if (rc != JIT_STATUS_BAD_SHAPE)
        return report("dynamic, bad shape", g, n, "status %d for dims that jit_sig_bind or "
                      "jit_output_shape refuse", rc);
    if (!untouched(out, sizeof out))
        return report("dynamic, bad shape", g, n, "BAD_SHAPE, but the output was written");
    return 0;
}

/* One call of the dynamic kernel fn (signature dyn) with dims: against the
 * oracle and the static kernel of the concrete signature, out of place
 * and, for scatters, in place. */
static int dyn_call(uint64_t *rs, jit_kernel fn, const rand_sig *dyn, int64_t n,
                    const int64_t *dims, int has_updates)
{
    rand_sig g = *dyn;
    jit_shape os, want;
    if (jit_sig_bind(&dyn->sig, dims, &g.sig) != 0 || jit_output_shape(&g.sig, &os) != 0)
        return dyn_refused(fn, dyn, n, dims);
    oracle_output_shape(&g.sig, &want);
    if (os.rank != want.rank || memcmp(os.dims, want.dims, sizeof(int64_t) * (size_t)os.rank))
        return report("dynamic, shape", &g, n, "output shape differs from the oracle's");
    if (jit_index_dims(&g.sig, &g.depth, g.dims) != 0)
        return report("dynamic", &g, n, "jit_index_dims refused a bound signature");
    jit_kernel st = jit_compile(&g.sig);
    if (!st)
        return report("dynamic", &g, n, "the static kernel of a bound signature was refused");
    int64_t es = jit_dtype_size(g.sig.dtype), is = jit_dtype_size(g.sig.index_type);
    int64_t nd = oracle_elems(&g.sig.data_shape), ni = oracle_elems(&g.sig.indices_shape);
    int64_t nu = has_updates ? oracle_elems(&g.sig.updates_shape) : 0;
    int64_t ob = oracle_elems(&os) * es;
    unsigned char *data = malloc((size_t)(nd * es + 1)), *idx = malloc((size_t)(ni * is + 1));
    unsigned char *upd = malloc((size_t)(nu * es + 1));
    unsigned char *o[3];
    fill_random(rs, data, nd * es);
    fill_random(rs, upd, nu * es);
    random_indices(rs, &g, idx, ni);
    for (int i = 0; i < 3; i++) {
        o[i] = malloc((size_t)ob + 1);
        memset(o[i], CANARY, (size_t)ob + 1);
    }
    char msg[1024];
    int rc_dyn = ((jit_dynamic_fn)fn)(data, idx, upd, o[0], dims);
    snprintf(msg, sizeof msg, "%s", jit_last_error());
    int rc_oracle = oracle_run(&g.sig, data, idx, upd, o[1]);
    int rc_static = jit_call(st, data, idx, upd, o[2]);
    int fails = compare("dynamic vs oracle", &g, n, rc_dyn, rc_oracle, o[0], o[1], ob) ||
                compare("dynamic vs static", &g, n, rc_dyn, rc_static, o[0], o[2], ob);
    if (!fails && rc_dyn != JIT_OK && strcmp(msg, jit_last_error()) != 0)
        fails = report("dynamic", &g, n, "message '%s', the static kernel's differs", msg);
    if (!fails && has_updates) {
        unsigned char *buf = malloc((size_t)ob + 1);
        memcpy(buf, data, (size_t)ob);
        buf[ob] = CANARY;
        int rc = ((jit_dynamic_fn)fn)(buf, idx, upd, buf, dims);
        if (rc != rc_oracle)
            fails = report("dynamic, in place", &g, n, "status %d, oracle %d", rc, rc_oracle);
        else if (memcmp(buf, rc ? data : o[1], (size_t)ob) != 0 || buf[ob] != CANARY)
            fails = report("dynamic, in place", &g, n, "status %d: data differs", rc);
        free(buf);
    }
    if (fails)
        fprintf(stderr, "  %s\n",
                dyn_text(&dyn->sig, has_updates, dims,
                         dyn->sig.data_shape.rank + dyn->sig.indices_shape.rank +
                             (has_updates ? dyn->sig.updates_shape.rank : 0)));
    for (int i = 0; i < 3; i++)
        free(o[i]);
    free(data);
    free(idx);
    free(upd);
    return fails;
}

/* A random valid signature with a random set of its dims dynamic (or all
 * of them), sometimes bounded; its kernel on the original shape and on
 * others of the family: groups of dynamic dims equal in the original get
 * a new value together (0 included). Shapes that break a rule must be
 * refused with BAD_SHAPE. *calls counts the calls checked. */
static long refused_families;

static int one_dynamic(uint64_t *rs, int64_t n, jit_op op, long *calls)
{
    rand_sig g;
    gen(rs, op, &g);
    if (support_rand_range(rs, 0, 3) == 0)
        g.sig.engine = JIT_ENGINE_REFERENCE;
    jit_op_info info;
    assert_int_equal(jit_op_describe(op, &info), 0);
    int hu = info.has_updates;
    int64_t orig[3 * JIT_MAX_RANK];
    int nd = sig_dims(&g.sig, hu, orig, NULL, &g.sig);
    rand_sig dyn = g;
    int all = support_rand_range(rs, 0, 3) == 0, bounded = support_rand_range(rs, 0, 2) == 0;
    int ndyn = 0;
    for (int at = 0; at < nd; at++)
        if (all || support_rand_range(rs, 0, 1)) {
            *dim_at(&dyn.sig, hu, at) = JIT_DIM_DYNAMIC;
            ndyn++;
            if (bounded && support_rand_range(rs, 0, 1))
                *bound_at(&dyn.sig, hu, at) = (orig[at] ? orig[at] : 1) +
                                              support_rand_range(rs, 0, 2);
        }
    if (nd == 0) /* rank 0 everywhere: nothing to make dynamic */
        return 0;
    if (!ndyn) {
        int at = (int)support_rand_range(rs, 0, nd - 1);
        *dim_at(&dyn.sig, hu, at) = JIT_DIM_DYNAMIC;
    }
    jit_kernel fn = jit_compile(&dyn.sig);
    if (!fn) {
        /* the generator's shape is valid, so the family must be: a
         * refusal is a failure (it was one of the library's, found here:
         * the template's search missed families whose rules tie dynamic
         * dims to static ones, before the ops' tie hooks). Counted apart,
         * so that the calls of the other families are still checked. */
        refused_families++;
        report("dynamic, compile", &dyn, n, "a family with a valid shape was refused");
        fprintf(stderr, "  %s\n", dyn_text(&dyn.sig, hu, orig, nd));
        return 0;
    }
    jit_kernel_info ki;
    assert_int_equal(jit_info(fn, &ki), 0);
    if (!ki.dynamic || ki.op != op)
        return report("dynamic, info", &dyn, n, "info.dynamic %d, op %d", ki.dynamic, ki.op);
    int fails = dyn_call(rs, fn, &dyn, n, orig, hu);
    (*calls)++;
    for (int shape = 0; shape < 4 && !fails; shape++) {
        int64_t dims[3 * JIT_MAX_RANK];
        memcpy(dims, orig, sizeof dims);
        int done[3 * JIT_MAX_RANK] = {0};
        for (int at = 0; at < nd; at++) {
            if (done[at] || *dim_at(&dyn.sig, hu, at) != JIT_DIM_DYNAMIC)
                continue;
            int64_t v = support_rand_range(rs, 0, 5) == 0 ? 0 : support_rand_range(rs, 1, 6);
            int change = support_rand_range(rs, 0, 1);
            for (int j = at; j < nd; j++)
                if (!done[j] && orig[j] == orig[at] &&
                    *dim_at(&dyn.sig, hu, j) == JIT_DIM_DYNAMIC) {
                    done[j] = 1;
                    int64_t b = *bound_at(&dyn.sig, hu, j);
                    if (change)
                        dims[j] = b > 0 && v > b && support_rand_range(rs, 0, 3) ? b : v;
                }
        }
        fails = dyn_call(rs, fn, &dyn, n, dims, hu);
        (*calls)++;
    }
    return fails;
}

static void run_dynamic(void)
{
    long count = support_env_long("TENSORJIT_DIFF_N", 3000) / 10;
    uint64_t seed = (uint64_t)support_env_long("TENSORJIT_DIFF_SEED", 20261122);
    uint64_t rs = seed ^ 0x9e3779b97f4a7c15ull;
    int fails = 0;
    long per_op[NOPS] = {0}, calls = 0;
    for (long n = 0; n < count && fails < 10; n++) {
        size_t o = (size_t)support_rand_range(&rs, 0, NOPS - 1);
        per_op[o]++;
        fails += one_dynamic(&rs, n, ops[o], &calls);
    }
    printf("differential, dynamic (seed %llu): %ld signatures (", (unsigned long long)seed,
           count);
    for (size_t o = 0; o < NOPS; o++) {
        jit_op_info info;
        jit_op_describe(ops[o], &info);
        printf("%s%s %ld", o ? ", " : "", info.name, per_op[o]);
    }
    printf("), %ld calls, %d failed, %ld valid families refused\n", calls, fails,
           refused_families);
    jit_shutdown();
    assert_int_equal(fails, 0);
    assert_int_equal(refused_families, 0);
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

/* Random dynamic signatures: each call of their kernels against the
 * oracle and the static kernel of the call's shape (TENSORJIT_DIFF_N / 10
 * signatures, 5 shapes each). */
static void test_dynamic_vs_oracle_and_static(void **state)
{
    (void)state;
    run_dynamic();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_vs_oracle_and_static),
        cmocka_unit_test(test_auto_vs_oracle),
        cmocka_unit_test(test_reference_vs_oracle),
        cmocka_unit_test(test_split_kernels_vs_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
