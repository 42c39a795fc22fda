/* The JIT kernels of the embedding bags (ir/bag_ir.c) on bag plans built
 * by hand, against an oracle written here from SPEC section 10's rules:
 * random plans from a fixed seed (every form, reduction, element and index
 * type, policy, empty bags, default_index, padding, include_last_offset,
 * weights, rows wider than the accumulator registers), compared bit for
 * bit; bad offsets, segment ids, indices and NULL buffers return their
 * status with nothing written; and split kernels give the one-thread
 * result. ctest runs it twice: as the defaults choose, and with prefetch,
 * streaming stores and splits forced (TENSORJIT_PREFETCH, _NT, _SPLIT_MIN),
 * so that every path of the generator runs on small tables. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "bag_scan.h"
#include "cache.h"
#include "half.h"
#include "plan.h"
#include "support.h"
#include "tensorjit.h"

typedef int (*bag_fn)(const void *table, const void *indices, const void *offsets,
                      const void *weights, void *out);

/* ---- random inputs ---------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t rand_in(int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1));
}

typedef struct bag_case {
    tj_plan p;
    void *table, *indices, *offsets, *weights;
} bag_case;

static size_t elem_size(jit_dtype t)
{
    return (size_t)jit_dtype_size(t);
}

/* one in nan_rate elements is a NaN of random sign and payload, quiet or
 * signaling (which one survives a sum is a rule, SPEC 10's) */
static int nan_rate = 300;

static void rand_nan(jit_dtype t, void *at)
{
    uint64_t r = next_u64();
    uint32_t f = (uint32_t)(r & 0x807fffff) | 0x7f800000u;
    uint64_t d = (r & 0x800fffffffffffffull) | 0x7ff0000000000000ull;
    f |= (f & 0x7fffff) ? 0 : 1;
    d |= (d & 0xfffffffffffffull) ? 0 : 1;
    float ff;
    memcpy(&ff, &f, 4);
    switch (t) {
    case JIT_F32: memcpy(at, &f, 4); break;
    case JIT_F64: memcpy(at, &d, 8); break;
    case JIT_F16: *(uint16_t *)at = (uint16_t)(0x7c00 | (r & 0x83ff) | ((r & 0x3ff) ? 0 : 1)); break;
    default: *(uint16_t *)at = tj_float_to_bf16(ff); break;
    }
}

/* a table or weight element: small integers and fractions, now and then
 * a NaN, an infinity or a negative zero */
static void rand_elem(jit_dtype t, void *at)
{
    double v = (double)rand_in(-40, 40) / (rand_in(0, 1) ? 4.0 : 1.0);
    int special = rand_in(0, nan_rate - 1);
    int floats = t == JIT_F32 || t == JIT_F64 || t == JIT_F16 || t == JIT_BF16;
    if (special == 0 && floats) {
        rand_nan(t, at);
        return;
    } else if (special == 1)
        v = rand_in(0, 1) ? INFINITY : -INFINITY;
    else if (special == 2)
        v = -0.0;
    switch (t) {
    case JIT_F32: *(float *)at = (float)v; break;
    case JIT_F64: *(double *)at = v; break;
    case JIT_F16: *(uint16_t *)at = tj_float_to_half((float)v); break;
    case JIT_BF16: *(uint16_t *)at = tj_float_to_bf16((float)v); break;
    case JIT_I32: *(int32_t *)at = (int32_t)rand_in(INT32_MIN / 2, INT32_MAX / 2); break;
    case JIT_I64: *(int64_t *)at = (int64_t)next_u64(); break;
    case JIT_U8: *(uint8_t *)at = (uint8_t)next_u64(); break;
    case JIT_BOOL: *(uint8_t *)at = (uint8_t)rand_in(0, 1); break;
    default: fail_msg("no random %d", (int)t);
    }
}

static void put_index(jit_dtype t, void *buf, int64_t i, int64_t v)
{
    if (t == JIT_I32)
        ((int32_t *)buf)[i] = (int32_t)v;
    else
        ((int64_t *)buf)[i] = v;
}

static int64_t get_index(jit_dtype t, const void *buf, int64_t i)
{
    return t == JIT_I32 ? ((const int32_t *)buf)[i] : ((const int64_t *)buf)[i];
}

static jit_dtype acc_of(jit_dtype t)
{
    switch (t) {
    case JIT_F16:
    case JIT_BF16:
    case JIT_F32: return JIT_F32;
    case JIT_F64: return JIT_F64;
    case JIT_U8:
    case JIT_BOOL: return JIT_U64;
    default: return JIT_I64;
    }
}

/* an index under the policy: mostly in range, out of it where allowed */
static int64_t rand_index(const tj_bag_plan *g)
{
    int64_t E = g->rows;
    switch (g->policy) {
    case JIT_INDEX_ERROR: return rand_in(0, E - 1);
    case JIT_INDEX_NEGATIVE_WRAPS: return rand_in(-E, E - 1);
    case JIT_INDEX_CLAMP: return rand_in(-4, E + 3);
    case JIT_INDEX_ZERO_FILL: return rand_in(-3, E + 2);
    default: return rand_in(-E - 2, E + 2);
    }
}

static void rand_counts(tj_bag_plan *g);

static void fill_plan(bag_case *c, tj_bag_form form, jit_dtype dtype, jit_reduction red)
{
    tj_bag_plan *g = &c->p.bag;
    memset(c, 0, sizeof *c);
    c->p.is_bag = 1;
    g->form = form;
    g->dtype = dtype;
    g->acc_type = acc_of(dtype);
    g->reduction = red;
    g->index_type = rand_in(0, 1) ? JIT_I32 : JIT_I64;
    g->policy = (jit_index_policy)rand_in(0, JIT_INDEX_POLICY_COUNT - 1);
    g->rows = rand_in(1, 40);
    static const int64_t widths[] = {1, 3, 7, 8, 16, 17, 33, 64, 100, 130, 260};
    g->row_elems = widths[rand_in(0, sizeof widths / sizeof *widths - 1)];
    g->has_weights = red == JIT_REDUCTION_SUM && dtype != JIT_BOOL && rand_in(0, 2) == 0;
    g->default_index = rand_in(0, 2) == 0 ? rand_in(0, g->rows - 1) : -1;
    g->padding_row = rand_in(0, 3) == 0 ? rand_in(0, g->rows - 1) : -1;
    g->threads = 1;
    g->include_last_offset = form == TJ_BAG_OFFSETS && rand_in(0, 1);
    rand_counts(g);
}

/* B, N, L (and the offsets' or segment ids' count) of g's form */
static void rand_counts(tj_bag_plan *g)
{
    tj_bag_form form = g->form;
    if (form == TJ_BAG_PACKED) {
        g->bags = rand_in(0, 12);
        g->bag_len = rand_in(0, 6);
        g->lookups = g->bags * g->bag_len;
    } else if (form == TJ_BAG_SEGMENTS) {
        g->bags = rand_in(0, 9);
        g->lookups = g->bags ? rand_in(0, 30) : 0;
        g->offsets_len = g->lookups;
    } else {
        g->bags = rand_in(0, 12);
        g->offsets_len = g->bags + g->include_last_offset;
        /* lengths 0..5 (short bags interleave), now and then longer */
        int long_bags = rand_in(0, 2) == 0;
        int64_t n = rand_in(0, 3) == 0 ? rand_in(1, 3) : 0;
        for (int64_t b = 0; b < g->bags; b++)
            n += long_bags ? rand_in(0, 30) : rand_in(0, 5);
        g->lookups = n + rand_in(0, 2); /* unread indices past the last bag */
    }
}

/* the buffers of a filled plan */
static void fill_inputs(bag_case *c)
{
    tj_bag_plan *g = &c->p.bag;
    size_t es = elem_size(g->dtype), is = elem_size(g->index_type);
    c->table = calloc((size_t)(g->rows * g->row_elems) + 1, es);
    c->indices = calloc((size_t)g->lookups + 1, is);
    c->offsets = calloc((size_t)g->offsets_len + 1, is);
    c->weights = g->has_weights ? calloc((size_t)g->lookups + 1, es) : NULL;
    assert_non_null(c->table);
    for (int64_t i = 0; i < g->rows * g->row_elems; i++)
        rand_elem(g->dtype, (char *)c->table + (size_t)i * es);
    for (int64_t j = 0; j < g->lookups; j++) {
        put_index(g->index_type, c->indices, j, rand_index(g));
        if (c->weights)
            rand_elem(g->dtype, (char *)c->weights + (size_t)j * es);
    }
    if (g->form == TJ_BAG_SEGMENTS) {
        for (int64_t j = 0; j < g->lookups; j++)
            put_index(g->index_type, c->offsets, j, rand_in(0, g->bags - 1));
    } else if (g->form == TJ_BAG_OFFSETS && g->offsets_len > 0) {
        /* sorted offsets in [o0, N], the last ones maybe N (trailing empty bags) */
        int64_t o = rand_in(0, 3) == 0 ? rand_in(0, g->lookups / 4) : 0;
        for (int64_t i = 0; i < g->offsets_len; i++) {
            put_index(g->index_type, c->offsets, i, o);
            int64_t left = g->lookups - o;
            o += left > 0 ? rand_in(0, left < 6 ? left : 6) : 0;
        }
    }
}

static void free_case(bag_case *c)
{
    free(c->table);
    free(c->indices);
    free(c->offsets);
    free(c->weights);
}

/* ---- the oracle: SPEC 10, written out ---------------------------------- */

typedef union acc_v {
    float f;
    double d;
    uint64_t u; /* integers: two's complement, wrapping */
} acc_v;

static float quiet_f(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    b |= 0x00400000u;
    memcpy(&x, &b, 4);
    return x;
}

static double quiet_d(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    b |= 0x0008000000000000ull;
    memcpy(&x, &b, 8);
    return x;
}

static float default_nan_f(void)
{
    uint32_t b = 0xffc00000u;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static double default_nan_d(void)
{
    uint64_t b = 0xfff8000000000000ull;
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* runtime/reduce.c's NaN of a sum or product: a's made quiet, else b's,
 * else the default NaN */
static float arith_f(float a, float b, int mul)
{
    if (isnan(a))
        return quiet_f(a);
    if (isnan(b))
        return quiet_f(b);
    float r = mul ? a * b : a + b;
    return isnan(r) ? default_nan_f() : r;
}

static double arith_d(double a, double b, int mul)
{
    if (isnan(a))
        return quiet_d(a);
    if (isnan(b))
        return quiet_d(b);
    double r = mul ? a * b : a + b;
    return isnan(r) ? default_nan_d() : r;
}

static int is_unsigned(jit_dtype t)
{
    return t == JIT_U8 || t == JIT_BOOL;
}

static acc_v widen(jit_dtype t, const void *at)
{
    acc_v v = {0};
    switch (t) {
    case JIT_F32: memcpy(&v.f, at, 4); break;
    case JIT_F64: memcpy(&v.d, at, 8); break;
    case JIT_F16: v.f = tj_half_to_float(*(const uint16_t *)at); break;
    case JIT_BF16: v.f = tj_bf16_to_float(*(const uint16_t *)at); break;
    case JIT_I32: v.u = (uint64_t)(int64_t) * (const int32_t *)at; break;
    case JIT_I64: v.u = *(const uint64_t *)at; break;
    default: v.u = *(const uint8_t *)at; break;
    }
    return v;
}

static void narrow(jit_dtype t, acc_v v, void *at)
{
    switch (t) {
    case JIT_F32: memcpy(at, &v.f, 4); break;
    case JIT_F64: memcpy(at, &v.d, 8); break;
    case JIT_F16: *(uint16_t *)at = tj_float_to_half(v.f); break;
    case JIT_BF16: *(uint16_t *)at = tj_float_to_bf16(v.f); break;
    case JIT_I32: *(uint32_t *)at = (uint32_t)v.u; break;
    case JIT_I64: *(uint64_t *)at = v.u; break;
    default: *(uint8_t *)at = (uint8_t)v.u; break;
    }
}

static acc_v combine(const tj_bag_plan *g, acc_v a, acc_v x)
{
    jit_dtype at = g->acc_type;
    if (g->reduction == JIT_REDUCTION_MAX) {
        if (at == JIT_F32)
            a.f = isnan(a.f) ? a.f : isnan(x.f) ? x.f : x.f > a.f ? x.f : a.f;
        else if (at == JIT_F64)
            a.d = isnan(a.d) ? a.d : isnan(x.d) ? x.d : x.d > a.d ? x.d : a.d;
        else if (is_unsigned(g->dtype))
            a.u = x.u > a.u ? x.u : a.u;
        else
            a.u = (int64_t)x.u > (int64_t)a.u ? x.u : a.u;
        return a;
    }
    if (at == JIT_F32)
        a.f = arith_f(a.f, x.f, 0);
    else if (at == JIT_F64)
        a.d = arith_d(a.d, x.d, 0);
    else
        a.u += x.u;
    return a;
}

static acc_v weigh(const tj_bag_plan *g, acc_v x, acc_v w)
{
    if (g->acc_type == JIT_F32)
        x.f = arith_f(x.f, w.f, 1);
    else if (g->acc_type == JIT_F64)
        x.d = arith_d(x.d, w.d, 1);
    else
        x.u *= w.u;
    return x;
}

static acc_v start_value(const tj_bag_plan *g)
{
    acc_v v = {0};
    if (g->reduction == JIT_REDUCTION_MAX) {
        if (g->acc_type == JIT_F32)
            v.f = -INFINITY;
        else if (g->acc_type == JIT_F64)
            v.d = -INFINITY;
        else if (!is_unsigned(g->dtype))
            v.u = (uint64_t)INT64_MIN;
    }
    return v;
}

/* the row a lookup reads, or -1: dropped */
static int64_t lookup_row(const tj_bag_plan *g, int64_t v)
{
    int64_t E = g->rows;
    switch (g->policy) {
    case JIT_INDEX_NEGATIVE_WRAPS: v = v < 0 ? v + E : v; break;
    case JIT_INDEX_CLAMP: v = v < 0 ? 0 : v >= E ? E - 1 : v; break;
    case JIT_INDEX_ZERO_FILL: v = v < 0 || v >= E ? -1 : v; break;
    case JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL:
        v = v < 0 ? v + E : v;
        v = v < 0 || v >= E ? -1 : v;
        break;
    default: break;
    }
    return v == g->padding_row ? -1 : v;
}

/* out row b from lookups [s, e) (or, for segments, those naming b) */
static void oracle_bag(const bag_case *c, int64_t b, int64_t s, int64_t e, void *out)
{
    const tj_bag_plan *g = &c->p.bag;
    size_t es = elem_size(g->dtype);
    int64_t D = g->row_elems;
    char *row_out = (char *)out + (size_t)(b * D) * es;
    int64_t seen = 0;
    for (int64_t d = 0; d < D; d++) {
        acc_v a = start_value(g);
        int64_t kept = 0;
        seen = 0;
        for (int64_t j = s; j < e; j++) {
            if (g->form == TJ_BAG_SEGMENTS && get_index(g->index_type, c->offsets, j) != b)
                continue;
            seen++;
            int64_t r = lookup_row(g, get_index(g->index_type, c->indices, j));
            if (r < 0)
                continue;
            acc_v x = widen(g->dtype, (const char *)c->table + (size_t)(r * D + d) * es);
            if (g->has_weights)
                x = weigh(g, x, widen(g->dtype, (const char *)c->weights + (size_t)j * es));
            a = combine(g, a, x);
            kept++;
        }
        if (seen == 0) { /* no lookups at all: the default row as it is, or zeros */
            if (g->default_index >= 0)
                memcpy(row_out + (size_t)d * es,
                       (const char *)c->table + (size_t)(g->default_index * D + d) * es, es);
            else
                memset(row_out + (size_t)d * es, 0, es);
            continue;
        } else if (kept == 0) {
            acc_v z = {0};
            a = z;
        } else if (g->reduction == JIT_REDUCTION_MEAN) {
            if (g->acc_type == JIT_F32)
                a.f = a.f / (float)kept;
            else if (g->acc_type == JIT_F64)
                a.d = a.d / (double)kept;
            else if (is_unsigned(g->dtype))
                a.u = a.u / (uint64_t)kept;
            else
                a.u = (uint64_t)((int64_t)a.u / kept);
        }
        narrow(g->dtype, a, row_out + (size_t)d * es);
    }
}

static void oracle(const bag_case *c, void *out)
{
    const tj_bag_plan *g = &c->p.bag;
    for (int64_t b = 0; b < g->bags; b++) {
        int64_t s = 0, e = g->lookups;
        if (g->form == TJ_BAG_PACKED) {
            s = b * g->bag_len;
            e = s + g->bag_len;
        } else if (g->form == TJ_BAG_OFFSETS) {
            s = get_index(g->index_type, c->offsets, b);
            e = b + 1 < g->offsets_len ? get_index(g->index_type, c->offsets, b + 1) : g->lookups;
        }
        oracle_bag(c, b, s, e, out);
    }
}

/* ---- compiling and running -------------------------------------------- */

static int64_t serial;

static const tj_kernel *compile(const tj_plan *p)
{
    tj_key key = {.len = 2 * sizeof(int64_t), .words = {0x6a6762, ++serial}};
    tj_kernel *k = tj_cache_get(&key, p, JIT_ENGINE_JIT);
    assert_non_null(k);
    if (k->engine != JIT_ENGINE_JIT)
        fail_msg("the JIT refused a bag plan: %s", k->why);
    return k;
}

static size_t out_bytes(const tj_bag_plan *g)
{
    return (size_t)(g->bags * g->row_elems) * elem_size(g->dtype);
}

static const char *form_name(tj_bag_form f)
{
    return f == TJ_BAG_OFFSETS ? "offsets" : f == TJ_BAG_PACKED ? "packed" : "segments";
}

/* Runs c's kernel into an out at offset `shift` of a 64-byte aligned
 * buffer (0: aligned, the streaming path; else the cached one) and
 * compares it with the oracle's, bit for bit. */
static void check_case(const bag_case *c, const tj_kernel *k, size_t shift, const char *what)
{
    const tj_bag_plan *g = &c->p.bag;
    size_t n = out_bytes(g);
    unsigned char *want = malloc(n + 1), *buf = aligned_alloc(64, (n + shift + 64) / 64 * 64);
    assert_non_null(want);
    assert_non_null(buf);
    unsigned char *got = buf + shift;
    memset(want, 0xab, n + 1);
    memset(got, 0xab, n);
    oracle(c, want);
    int rc = ((bag_fn)(uintptr_t)k->entry)(c->table, c->indices, c->offsets, c->weights, got);
    if (rc != JIT_OK)
        fail_msg("%s: status %d: %s", what, rc, jit_last_error());
    size_t es = elem_size(g->dtype);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s (%s, dtype %d, idx %d, red %d, policy %d, E %lld, D %lld, B %lld, N %lld, "
                     "L %lld, last %d, weights %d, default %lld, pad %lld): out element %zu "
                     "(bag %zu) differs at byte %zu: %02x, want %02x",
                     what, form_name(g->form), (int)g->dtype, (int)g->index_type,
                     (int)g->reduction, (int)g->policy, (long long)g->rows,
                     (long long)g->row_elems, (long long)g->bags, (long long)g->lookups,
                     (long long)g->bag_len, g->include_last_offset, g->has_weights,
                     (long long)g->default_index, (long long)g->padding_row, i / es,
                     i / es / (size_t)(g->row_elems ? g->row_elems : 1), i % es, got[i], want[i]);
    free(want);
    free(buf);
}

static jit_dtype rand_dtype(jit_reduction red)
{
    static const jit_dtype types[] = {JIT_F32, JIT_F16, JIT_BF16, JIT_F64,
                                      JIT_I32, JIT_I64, JIT_U8,   JIT_BOOL};
    for (;;) {
        jit_dtype t = types[rand_in(0, sizeof types / sizeof *types - 1)];
        if (t == JIT_F16 && !support_jit_takes_f16_bags())
            continue; /* no F16C: the reference kernel serves f16, compile() demands the JIT */
        if (t != JIT_BOOL || red == JIT_REDUCTION_MAX)
            return t;
    }
}

/* ---- tests ------------------------------------------------------------ */

static void test_random_plans(void **state)
{
    (void)state;
    char what[64];
    long runs = getenv("TJ_BAG_IR_RUNS") ? atol(getenv("TJ_BAG_IR_RUNS")) : 200;
    support_env interleave = {0}; /* the caller's TENSORJIT_INTERLEAVE, back at the end */
    for (long i = 0; i < runs; i++) {
        if (i == runs / 2) /* the second half's short bags interleaved, 2-4 at a time */
            support_env_push(&interleave, "TENSORJIT_INTERLEAVE", "4");
        bag_case c;
        tj_bag_form form = (tj_bag_form)rand_in(TJ_BAG_OFFSETS, TJ_BAG_SEGMENTS);
        jit_reduction red = form == TJ_BAG_SEGMENTS ? JIT_REDUCTION_SUM
                            : (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                                JIT_REDUCTION_MAX}[rand_in(0, 2)];
        fill_plan(&c, form, rand_dtype(red), red);
        fill_inputs(&c);
        const tj_kernel *k = compile(&c.p);
        snprintf(what, sizeof what, "random plan %ld%s", i,
                 i >= runs / 2 ? " (TENSORJIT_INTERLEAVE=4)" : "");
        check_case(&c, k, (size_t)(i % 2) * 4, what);
        free_case(&c);
    }
    if (interleave.name)
        support_env_pop(&interleave);
}

/* Each form, reduction and table type at least once, with rows that need
 * several blocks of columns and bags of every length. */
static void test_every_type(void **state)
{
    (void)state;
    static const jit_dtype types[] = {JIT_F32, JIT_F16, JIT_BF16, JIT_F64, JIT_I32, JIT_I64, JIT_U8};
    char what[64];
    for (tj_bag_form f = TJ_BAG_OFFSETS; f <= TJ_BAG_SEGMENTS; f++)
        for (size_t t = 0; t < sizeof types / sizeof *types; t++)
            for (jit_reduction r = JIT_REDUCTION_SUM; r <= JIT_REDUCTION_MEAN; r++) {
                if (r != JIT_REDUCTION_SUM && r != JIT_REDUCTION_MAX && r != JIT_REDUCTION_MEAN)
                    continue;
                if (f == TJ_BAG_SEGMENTS && r != JIT_REDUCTION_SUM)
                    continue;
                if (types[t] == JIT_F16 && !support_jit_takes_f16_bags())
                    continue; /* no F16C: the reference kernel's, not the JIT's */
                bag_case c;
                fill_plan(&c, f, types[t], r);
                fill_inputs(&c);
                snprintf(what, sizeof what, "%s, type %d, reduction %d", form_name(f),
                         (int)types[t], (int)r);
                check_case(&c, compile(&c.p), 0, what);
                free_case(&c);
            }
}

/* Tables and weights of many NaNs: which NaN a sum, a product or a max
 * gives is the rule's, lane by lane. */
static void test_nan_payloads(void **state)
{
    (void)state;
    static const jit_dtype types[] = {JIT_F32, JIT_F64, JIT_BF16, JIT_F16};
    char what[64];
    nan_rate = 4;
    for (int i = 0; i < 80; i++) {
        bag_case c;
        tj_bag_form form = (tj_bag_form)rand_in(TJ_BAG_OFFSETS, TJ_BAG_SEGMENTS);
        jit_reduction red = form == TJ_BAG_SEGMENTS ? JIT_REDUCTION_SUM
                            : (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                                JIT_REDUCTION_MAX}[i % 3];
        if (types[i % 4] == JIT_F16 && !support_jit_takes_f16_bags())
            continue; /* no F16C: the reference kernel's, not the JIT's */
        fill_plan(&c, form, types[i % 4], red);
        fill_inputs(&c);
        snprintf(what, sizeof what, "NaN plan %d", i);
        check_case(&c, compile(&c.p), 0, what);
        free_case(&c);
    }
    nan_rate = 300;
}

/* A bad input of c's: status, nothing written, the message's words. */
static void expect_bad(const bag_case *c, int status, const char *words)
{
    const tj_kernel *k = compile(&c->p);
    size_t n = out_bytes(&c->p.bag);
    unsigned char *out = malloc(n + 1);
    assert_non_null(out);
    memset(out, 0xab, n + 1);
    int rc = ((bag_fn)(uintptr_t)k->entry)(c->table, c->indices, c->offsets, c->weights, out);
    assert_int_equal(rc, status);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(out[i], 0xab);
    if (!strstr(jit_last_error(), words))
        fail_msg("message '%s' lacks '%s'", jit_last_error(), words);
    free(out);
}

static void bad_plan(bag_case *c, tj_bag_form form)
{
    fill_plan(c, form, JIT_F32, JIT_REDUCTION_SUM);
    tj_bag_plan *g = &c->p.bag;
    g->policy = JIT_INDEX_ERROR;
    g->index_type = JIT_I64;
    g->bags = 6;
    g->row_elems = 16;
    g->has_weights = 0;
    if (g->rows < 8)
        g->rows = 8; /* test_dynamic_bad's default row 3 is a row, whatever the stream drew */
    if (form == TJ_BAG_PACKED) {
        g->bag_len = 3;
        g->lookups = 18;
    } else {
        g->lookups = 18;
        g->offsets_len = form == TJ_BAG_SEGMENTS ? 18 : 6;
        g->include_last_offset = 0;
    }
    fill_inputs(c);
    if (form == TJ_BAG_OFFSETS)
        for (int64_t b = 0; b < 6; b++)
            put_index(g->index_type, c->offsets, b, 3 * b);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    bag_case c;
    bad_plan(&c, TJ_BAG_OFFSETS);
    put_index(JIT_I64, c.offsets, 3, 2); /* below offsets[2] = 6 */
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "offsets[3] = 2");
    put_index(JIT_I64, c.offsets, 3, 19); /* past N = 18 */
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "offsets[3] = 19");
    put_index(JIT_I64, c.offsets, 3, 9);
    put_index(JIT_I64, c.offsets, 0, -1);
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "offsets[0] = -1");
    put_index(JIT_I64, c.offsets, 0, 0);
    put_index(JIT_I64, c.indices, 7, c.p.bag.rows); /* one past the table */
    put_index(JIT_I64, c.indices, 12, -1);
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "indices[7]");
    put_index(JIT_I64, c.offsets, 1, 13); /* indices[7] still read: offsets first */
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "offsets[2] = 6 is less than offsets[1] = 13");
    free_case(&c);

    /* an index no bag reads is not checked */
    bad_plan(&c, TJ_BAG_OFFSETS);
    c.p.bag.include_last_offset = 1;
    c.p.bag.offsets_len = 7;
    c.p.bag.bags = 6;
    free(c.offsets);
    c.offsets = calloc(8, 8);
    for (int64_t b = 0; b < 7; b++)
        put_index(JIT_I64, c.offsets, b, 1 + 2 * b); /* reads [1, 13) */
    put_index(JIT_I64, c.indices, 0, -5);
    put_index(JIT_I64, c.indices, 15, 1000);
    check_case(&c, compile(&c.p), 0, "unread bad indices");
    put_index(JIT_I64, c.indices, 12, 1000);
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "indices[12] = 1000 is out of range [0, ");
    free_case(&c);

    bad_plan(&c, TJ_BAG_SEGMENTS);
    put_index(JIT_I64, c.offsets, 5, 6); /* S = 6 */
    put_index(JIT_I64, c.indices, 2, -1);
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "segment_ids[5] = 6");
    free_case(&c);

    bad_plan(&c, TJ_BAG_PACKED);
    c.p.bag.policy = JIT_INDEX_NEGATIVE_WRAPS;
    put_index(JIT_I64, c.indices, 7, -c.p.bag.rows - 1);
    expect_bad(&c, JIT_STATUS_BAD_INDEX, "indices[2, 1]");
    put_index(JIT_I64, c.indices, 7, -c.p.bag.rows); /* wraps to row 0 */
    check_case(&c, compile(&c.p), 0, "negative-wraps at -E");
    {
        bag_case d = c;
        d.table = NULL;
        expect_bad(&d, JIT_STATUS_BAD_POINTER, "table is NULL");
        d = c;
        d.indices = NULL;
        expect_bad(&d, JIT_STATUS_BAD_POINTER, "indices is NULL");
    }
    free_case(&c);
}

/* c's kernel k on its inputs: status, nothing written where it fails, and
 * the message's words (NULL: it must succeed). */
static void run_expecting(const bag_case *c, const tj_kernel *k, int status, const char *words)
{
    size_t n = out_bytes(&c->p.bag);
    unsigned char *out = malloc(n + 1);
    assert_non_null(out);
    memset(out, 0xab, n + 1);
    int rc = ((bag_fn)(uintptr_t)k->entry)(c->table, c->indices, c->offsets, c->weights, out);
    if (rc != status)
        fail_msg("status %d, want %d (%s): %s", rc, status, words ? words : "ok", jit_last_error());
    for (size_t i = 0; status != JIT_OK && i < n; i++)
        assert_int_equal(out[i], 0xab);
    if (words && !strstr(jit_last_error(), words))
        fail_msg("message '%s' lacks '%s'", jit_last_error(), words);
    free(out);
}

/* c's kernel k finds a bad offset (segment id) and a bad index planted
 * at each position in turn, and passes c as it is. */
static void expect_each_bad_found(bag_case *c, const tj_kernel *k, int form)
{
    tj_bag_plan *g = &c->p.bag;
    jit_dtype itype = g->index_type;
    int64_t N = g->lookups;
    char words[64];
    run_expecting(c, k, JIT_OK, NULL);
    for (int64_t i = 0; i < N; i++) {
        int64_t was = get_index(itype, c->offsets, i);
        put_index(itype, c->offsets, i, form ? 3 : N + 1);
        snprintf(words, sizeof words, "%s[%lld] = %lld", form ? "segment_ids" : "offsets",
                 (long long)i, (long long)(form ? 3 : N + 1));
        run_expecting(c, k, JIT_STATUS_BAD_INDEX, words);
        put_index(itype, c->offsets, i, was);
        put_index(itype, c->indices, i, g->rows);
        snprintf(words, sizeof words, "indices[%lld] = %lld", (long long)i, (long long)g->rows);
        /* offsets: indices[0] is before the first bag */
        run_expecting(c, k, form || i > 0 ? JIT_STATUS_BAD_INDEX : JIT_OK,
                      form || i > 0 ? words : NULL);
        put_index(itype, c->indices, i, i % g->rows);
    }
}

/* The check pass (the runtime's scan, exec/bag_scan.c) reads 8 to 32
 * positions a vector at a time, then one at a time: a bad offset, segment
 * id or index is found at every position of counts around those
 * multiples, from a first bag that starts off the vectors' grid, and an
 * index before it is not read; with each level of instructions the host
 * has (AVX-512, AVX2, none). */
static void test_checks_at_chunk_edges(void **state)
{
    (void)state;
    static const int64_t counts[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 34, 50, 65};
    for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
        for (int it = 0; it < 2; it++) {
            jit_dtype itype = it ? JIT_I32 : JIT_I64;
            int64_t N = counts[ci];
            for (int form = 0; form < 2; form++) {
                bag_case c;
                bad_plan(&c, form ? TJ_BAG_SEGMENTS : TJ_BAG_OFFSETS);
                tj_bag_plan *g = &c.p.bag;
                g->index_type = itype;
                g->lookups = N;
                g->bags = form ? 3 : N; /* offsets: one bag a lookup, the first from 1 */
                g->offsets_len = form ? N : g->bags;
                free(c.indices);
                free(c.offsets);
                c.indices = calloc((size_t)N + 1, 8);
                c.offsets = calloc((size_t)N + 1, 8);
                assert_non_null(c.indices);
                assert_non_null(c.offsets);
                for (int64_t i = 0; i < N; i++) {
                    put_index(itype, c.indices, i, i % g->rows);
                    put_index(itype, c.offsets, i, form ? i % 3 : (i < 1 ? 1 : i) % (N + 1));
                }
                const tj_kernel *k = compile(&c.p);
                for (int level = tj_bag_scan_level(-1); level >= 0; level--) {
                    tj_bag_scan_level(level);
                    expect_each_bad_found(&c, k, form);
                }
                tj_bag_scan_level(-1);
                free_case(&c);
            }
        }
}

/* A kernel of 4 threads (split: its bags over the pool, or on the caller's
 * thread as the split rule says) against the oracle, on plans large
 * enough to split. */
static void test_threads(void **state)
{
    (void)state;
    char what[64];
    for (int i = 0; i < 12; i++) {
        bag_case c;
        jit_reduction red = (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                              JIT_REDUCTION_MAX}[i % 3];
        fill_plan(&c, i % 2 ? TJ_BAG_OFFSETS : TJ_BAG_PACKED, i % 4 < 2 ? JIT_F32 : JIT_BF16, red);
        tj_bag_plan *g = &c.p.bag;
        g->threads = 4;
        g->bags = 3000 + i;
        g->row_elems = 64;
        g->rows = 5000;
        if (g->form == TJ_BAG_PACKED) {
            g->bag_len = 3;
            g->lookups = g->bags * 3;
        } else {
            g->include_last_offset = 0;
            g->offsets_len = g->bags;
            g->lookups = g->bags * 3;
        }
        fill_inputs(&c);
        const tj_kernel *k = compile(&c.p);
        for (int run = 0; run < 8; run++) { /* the split rule splits some calls */
            snprintf(what, sizeof what, "threads, plan %d, call %d", i, run);
            check_case(&c, k, 0, what);
        }
        free_case(&c);
    }
}

/* How many times `what` occurs in text. */
static int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, what)); at += strlen(what))
        n++;
    return n;
}

/* What a bag's compile pays for (docs/performance.md, 'Compile time of a
 * bag kernel'): a kernel on one thread is one function, with no check or
 * range part; a split one is two, the main (its checks inline) and the
 * range it exports, with no check function (the parts API's checks are
 * the runtime's scan); and no loop of either is left for LLVM's loop
 * vectorizer to make. */
static void test_compiled_shape(void **state)
{
    (void)state;
    char why[256];
    for (int threads = 1; threads <= 4; threads += 3) {
        bag_case c;
        fill_plan(&c, TJ_BAG_OFFSETS, JIT_F32, JIT_REDUCTION_SUM);
        tj_bag_plan *g = &c.p.bag;
        g->threads = threads;
        g->rows = 1000000;
        g->row_elems = 64;
        g->bags = 2048;
        g->include_last_offset = 0;
        g->offsets_len = 2048;
        g->lookups = 204800;
        char *ir = tj_backend_dump(&c.p, TJ_DUMP_IR, why, sizeof why);
        char *opt = tj_backend_dump(&c.p, TJ_DUMP_IR_OPT, why, sizeof why);
        if (!ir || !opt)
            fail_msg("no IR: %s", why);
        int split = threads > 1;
        if (occurrences(ir, "define ") != (split ? 2 : 1) || occurrences(ir, "_check(") > 0 ||
            (occurrences(ir, "_range(") > 0) != split)
            fail_msg("threads %d: %d functions, %d check and %d range mentions in\n%s", threads,
                     occurrences(ir, "define "), occurrences(ir, "_check("),
                     occurrences(ir, "_range("), ir);
        if (strstr(opt, "llvm.loop.isvectorized"))
            fail_msg("threads %d: the loop vectorizer ran on\n%s", threads, opt);
        free(ir);
        free(opt);
    }
}

/* A row of several blocks of accumulators is one loop over them, each trip
 * prefetching the lines of its own columns (from one address, "pf.block"). In
 * 256-bit vectors of f32 (blocks of 64 elements, 256 bytes): a row of 128
 * has one lookup loop and 4 prefetches, one of 64 (one block) 4 for its
 * whole row; one of 136 (544 bytes, rows 32 bytes off the lines' grid:
 * two blocks and a rest of 8) two loops, a block spanning 5 lines and the
 * rest's 32 bytes one: 6; one of 140 (560 bytes, 16 off) 5 and the rest's
 * 48 bytes 2: 7. In 128-bit vectors of bf16 (blocks of 32, 64 bytes), a
 * row of 100 (200 bytes, 8 off): a block 2, the rest's 8 bytes 1. A copy
 * of the block per trip was a sixth to a quarter of the compile
 * (docs/performance.md, 'Sixth round'). */
static void test_blocks_in_a_loop(void **state)
{
    (void)state;
    static const struct {
        jit_dtype dtype;
        const char *bits;
        int64_t elems;
        int loops, prefetches, cols;
    } rows[] = {{JIT_F32, "256", 128, 1, 4, 1}, {JIT_F32, "256", 64, 1, 4, 0},
                {JIT_F32, "256", 136, 2, 6, 1}, {JIT_F32, "256", 140, 2, 7, 1},
                {JIT_BF16, "128", 100, 2, 3, 1}};
    char why[256];
    /* the caller's knobs, back at the end: streaming stores (the forced
     * run's TENSORJIT_NT=1) would give the bags twice, and the prefetch
     * distance is the default's (NULL: unset) */
    static const char *const knobs[3][2] = {{"TENSORJIT_VECTOR_WIDTH", NULL},
                                            {"TENSORJIT_NT", "0"},
                                            {"TENSORJIT_PREFETCH", NULL}};
    support_env saved[3];
    for (int i = 0; i < 3; i++)
        support_env_push(&saved[i], knobs[i][0], knobs[i][1]);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        support_setenv("TENSORJIT_VECTOR_WIDTH", rows[i].bits);
        bag_case c;
        fill_plan(&c, TJ_BAG_OFFSETS, rows[i].dtype, JIT_REDUCTION_SUM);
        tj_bag_plan *g = &c.p.bag;
        g->rows = 1000000; /* in memory: prefetched */
        g->row_elems = rows[i].elems;
        g->bags = 2048;
        g->include_last_offset = 0;
        g->offsets_len = 2048;
        g->lookups = 204800;
        g->policy = JIT_INDEX_ERROR;
        g->default_index = g->padding_row = -1;
        g->has_weights = 0;
        char *ir = tj_backend_dump(&c.p, TJ_DUMP_IR, why, sizeof why);
        if (!ir)
            fail_msg("no IR: %s", why);
        int loops = occurrences(ir, "\nlookup.loop");
        int pf = occurrences(ir, "call void @llvm.prefetch");
        int cols = occurrences(ir, "%pf.block = ");
        if (loops != rows[i].loops || pf != rows[i].prefetches || cols != rows[i].cols)
            fail_msg("rows of %lld: %d lookup loops, %d prefetches, %d column offsets (want "
                     "%d, %d, %d) in\n%s",
                     (long long)rows[i].elems, loops, pf, cols, rows[i].loops,
                     rows[i].prefetches, rows[i].cols, ir);
        free(ir);
    }
    for (int i = 2; i >= 0; i--)
        support_env_pop(&saved[i]);
}

/* Large tables: the default strategy prefetches; rows of every width. */
static void test_prefetched_tables(void **state)
{
    (void)state;
    static const int64_t widths[] = {16, 32, 64, 128, 200};
    char what[64];
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++) {
        bag_case c;
        fill_plan(&c, i % 2 ? TJ_BAG_PACKED : TJ_BAG_OFFSETS, JIT_F32, JIT_REDUCTION_SUM);
        tj_bag_plan *g = &c.p.bag;
        g->row_elems = widths[i];
        g->rows = (4 << 20) / (widths[i] * 4);
        g->bags = 64;
        if (g->form == TJ_BAG_PACKED) {
            g->bag_len = 5;
            g->lookups = 320;
        } else {
            g->include_last_offset = 0;
            g->offsets_len = 64;
            g->lookups = 320;
        }
        fill_inputs(&c);
        snprintf(what, sizeof what, "prefetched, %lld-element rows", (long long)widths[i]);
        check_case(&c, compile(&c.p), 0, what);
        free_case(&c);
    }
}

typedef int (*bag_dyn_fn)(const void *table, const void *indices, const void *offsets,
                          const void *weights, void *out, const int64_t *dims);

/* The template of g's family: its counts coded as the dims of a [E, D]
 * table (bag_ir.h), the derived ones left negative. */
static void make_template(const tj_plan *p, tj_plan *t)
{
    *t = *p;
    tj_bag_plan *g = &t->bag;
    g->dynamic = 1;
    g->rows = -1;
    if (g->form == TJ_BAG_PACKED) {
        g->bags = -3, g->bag_len = -4, g->lookups = -99;
    } else {
        g->lookups = -3, g->offsets_len = -4;
        g->bags = g->form == TJ_BAG_SEGMENTS ? -5 : -99;
    }
}

static void dims_of(const tj_bag_plan *g, int64_t *dims)
{
    dims[0] = g->rows;
    dims[1] = g->row_elems;
    dims[2] = g->form == TJ_BAG_PACKED ? g->bags : g->lookups;
    dims[3] = g->form == TJ_BAG_PACKED ? g->bag_len : g->offsets_len;
    dims[4] = g->bags;
}

/* Runs a dynamic kernel on c's shape, against the oracle. */
static void check_dyn_call(const bag_case *c, const tj_kernel *k, const char *what)
{
    const tj_bag_plan *g = &c->p.bag;
    size_t n = out_bytes(g);
    unsigned char *want = malloc(n + 1), *got = malloc(n + 1);
    assert_non_null(want);
    assert_non_null(got);
    memset(want, 0xab, n + 1);
    memset(got, 0xab, n + 1);
    oracle(c, want);
    int64_t dims[5];
    dims_of(g, dims);
    int rc = ((bag_dyn_fn)(uintptr_t)k->entry)(c->table, c->indices, c->offsets, c->weights, got,
                                               dims);
    if (rc != JIT_OK)
        fail_msg("%s: status %d: %s", what, rc, jit_last_error());
    size_t at = 0;
    while (at < n && got[at] == want[at])
        at++;
    if (at < n)
        fail_msg("%s (%s, dtype %d, red %d, policy %d, E %lld, D %lld, B %lld, N %lld, L %lld): "
                 "out differs at byte %zu", what, form_name(g->form), (int)g->dtype, (int)g->reduction,
                 (int)g->policy, (long long)g->rows, (long long)g->row_elems,
                 (long long)g->bags, (long long)g->lookups, (long long)g->bag_len, at);
    free(want);
    free(got);
}

/* Dynamic families: one kernel per family, calls of new E, B, N, L and S
 * each against the oracle, compiling nothing more. */
static void test_dynamic_families(void **state)
{
    (void)state;
    char what[64];
    for (int f = 0; f < 60; f++) {
        bag_case c;
        tj_bag_form form = (tj_bag_form)rand_in(TJ_BAG_OFFSETS, TJ_BAG_SEGMENTS);
        jit_reduction red = form == TJ_BAG_SEGMENTS ? JIT_REDUCTION_SUM
                            : (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                                JIT_REDUCTION_MAX}[rand_in(0, 2)];
        fill_plan(&c, form, rand_dtype(red), red);
        tj_plan t;
        make_template(&c.p, &t);
        const tj_kernel *k = compile(&t);
        int64_t least = c.p.bag.default_index > c.p.bag.padding_row ? c.p.bag.default_index
                                                                    : c.p.bag.padding_row;
        for (int call = 0; call < 5; call++) {
            bag_case d = c;
            d.p.bag.rows = rand_in(least >= 0 ? least + 1 : 1, 40);
            rand_counts(&d.p.bag);
            fill_inputs(&d);
            snprintf(what, sizeof what, "dynamic family %d, call %d", f, call);
            check_dyn_call(&d, k, what);
            free_case(&d);
        }
    }
}

/* A dynamic kernel's bad dims and bad indices: a status, its message,
 * nothing written. */
static void test_dynamic_bad(void **state)
{
    (void)state;
    bag_case c;
    bad_plan(&c, TJ_BAG_OFFSETS);
    c.p.bag.default_index = 3;
    tj_plan t;
    make_template(&c.p, &t);
    const tj_kernel *k = compile(&t);
    int64_t dims[5];
    unsigned char out[6 * 16 * 4 + 1];
    struct {
        int at;
        int64_t value;
        int status;
        const char *words;
    } cases[] = {{3, -1, JIT_STATUS_BAD_SHAPE, "dims[3] = -1"},
                 {0, 2, JIT_STATUS_BAD_SHAPE, "default row 3 is past the table's 2 rows"},
                 {0, INT64_MAX / 8, JIT_STATUS_BAD_SHAPE, "overflow"},
                 {2, 17, JIT_STATUS_BAD_INDEX, "offsets[5] = 18 is out of range [0, 17]"}};
    put_index(JIT_I64, c.offsets, 5, 18);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dims_of(&c.p.bag, dims);
        dims[cases[i].at] = cases[i].value;
        memset(out, 0xab, sizeof out);
        int rc = ((bag_dyn_fn)(uintptr_t)k->entry)(c.table, c.indices, c.offsets, c.weights, out,
                                                   dims);
        assert_int_equal(rc, cases[i].status);
        for (size_t j = 0; j < sizeof out; j++)
            assert_int_equal(out[j], 0xab);
        if (!strstr(jit_last_error(), cases[i].words))
            fail_msg("message '%s' lacks '%s'", jit_last_error(), cases[i].words);
    }
    free_case(&c);
}

/* --explain's words for a bag. */
static void test_strategy_words(void **state)
{
    (void)state;
    bag_case c;
    fill_plan(&c, TJ_BAG_OFFSETS, JIT_F32, JIT_REDUCTION_SUM);
    c.p.bag.rows = 1000000;
    c.p.bag.row_elems = 64;
    char buf[1024];
    tj_backend_strategy(&c.p, buf, sizeof buf);
    if (!strstr(buf, "embedding bag") || !strstr(buf, "-bit vectors") || !strstr(buf, "stores"))
        fail_msg("strategy: %s", buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type),
        cmocka_unit_test(test_random_plans),
        cmocka_unit_test(test_nan_payloads),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_checks_at_chunk_edges),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_prefetched_tables),
        cmocka_unit_test(test_strategy_words),
        cmocka_unit_test(test_dynamic_families),
        cmocka_unit_test(test_dynamic_bad),
        /* last: its plans draw from the random stream, which the plans
         * of the tests above must not see moved */
        cmocka_unit_test(test_compiled_shape),
        cmocka_unit_test(test_blocks_in_a_loop),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tj_cache_clear();
    return rc;
}
