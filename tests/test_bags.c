/* The embedding bags (SPEC section 10): every case and invalid case of
 * tests/cases/embedding_bag.json and invalid_embedding_bag.json on both
 * engines, static and with every dim dynamic; random signatures against an
 * oracle written here from SPEC 10's rules (not from the library's
 * kernels); hostile inputs refused with nothing written out of place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "alloc.h"
#include "half.h"
#include "support.h"

#define CANARY 16 /* bytes after out that must stay as they were */

static const jit_engine engines[] = {JIT_ENGINE_AUTO, JIT_ENGINE_REFERENCE};

static const cJSON *field(const cJSON *c, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(c, name);
}

static const char *case_name(const cJSON *c)
{
    const cJSON *s = field(c, "why_invalid");
    if (!cJSON_IsString(s))
        s = field(c, "note");
    if (!cJSON_IsString(s))
        s = field(c, "source");
    return cJSON_IsString(s) ? s->valuestring : "?";
}

static int64_t int_or(const cJSON *c, const char *name, int64_t dflt)
{
    const cJSON *v = field(c, name);
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

/* One value (a number or "nan", "inf", "-inf") stored as type t. */
static void store_value(const cJSON *e, jit_dtype t, char *p)
{
    double v = e->valuedouble;
    if (cJSON_IsString(e))
        v = strcmp(e->valuestring, "nan") == 0 ? NAN
            : strcmp(e->valuestring, "inf") == 0 ? INFINITY : -INFINITY;
    switch (t) {
    case JIT_F16: { uint16_t h = tj_float_to_half((float)v); memcpy(p, &h, 2); break; }
    case JIT_BF16: { uint16_t h = tj_float_to_bf16((float)v); memcpy(p, &h, 2); break; }
    case JIT_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case JIT_F64: memcpy(p, &v, 8); break;
    case JIT_BOOL: case JIT_U8: case JIT_I8: { int8_t x = (int8_t)(int64_t)v; memcpy(p, &x, 1); break; }
    case JIT_I16: case JIT_U16: { int16_t x = (int16_t)(int64_t)v; memcpy(p, &x, 2); break; }
    case JIT_I32: case JIT_U32: { int32_t x = (int32_t)(int64_t)v; memcpy(p, &x, 4); break; }
    default: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    }
}

/* A JSON list as a buffer of type t (at least one byte; NULL for null). */
static void *values(const cJSON *arr, jit_dtype t)
{
    if (!cJSON_IsArray(arr))
        return NULL;
    int n = cJSON_GetArraySize(arr), es = jit_dtype_size(t);
    char *buf = calloc((size_t)(n ? n : 1), (size_t)es);
    assert_non_null(buf);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) store_value(e, t, buf + (size_t)i++ * (size_t)es);
    return buf;
}

static jit_shape list_shape(const cJSON *arr)
{
    jit_shape s = {1, {cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0}};
    return s;
}

/* The case's signature; *ok 0 when the C signature cannot express it (a
 * weights or default_index tensor of another type or shape: the CLI and
 * the model reader meet those). */
static jit_sig case_sig(const cJSON *c, int *ok)
{
    jit_sig s = support_sig(c);
    *ok = 1;
    s.reduction = JIT_REDUCTION_SUM;
    const cJSON *r = field(c, "reduction");
    if (cJSON_IsString(r))
        assert_int_equal(jit_reduction_from_name(r->valuestring, &s.reduction), 0);
    s.data_shape = support_shape(field(c, "table_shape"));
    s.has_default_index = cJSON_IsNumber(field(c, "default_index"));
    s.default_index = int_or(c, "default_index", 0);
    s.has_padding_idx = cJSON_IsNumber(field(c, "padding_idx"));
    s.padding_idx = int_or(c, "padding_idx", 0);
    s.include_last_offset = cJSON_IsTrue(field(c, "include_last_offset"));
    s.num_segments = int_or(c, "num_segments", 0);
    const cJSON *w = field(c, "weights"), *ws = field(c, "weights_shape");
    s.has_weights = cJSON_IsArray(w) || cJSON_IsArray(ws);
    if (s.op == JIT_OP_EMBEDDING_BAG_OFFSETS) {
        const cJSON *os = field(c, "offsets_shape");
        s.updates_shape = cJSON_IsArray(os) ? support_shape(os) : list_shape(field(c, "offsets"));
        s.updates_dtype = support_dtype(c, "offsets_type", JIT_DTYPE_UNSET);
    } else if (s.op == JIT_OP_EMBEDDING_SEGMENTS) {
        const cJSON *ss = field(c, "segment_ids_shape");
        s.updates_shape =
            cJSON_IsArray(ss) ? support_shape(ss) : list_shape(field(c, "segment_ids"));
        s.updates_dtype = support_dtype(c, "segment_ids_type", JIT_DTYPE_UNSET);
    }
    if (cJSON_IsArray(ws)) {
        jit_shape wsh = support_shape(ws);
        if (wsh.rank != s.indices_shape.rank ||
            memcmp(wsh.dims, s.indices_shape.dims, sizeof(int64_t) * (size_t)wsh.rank))
            *ok = 0;
    }
    if (support_dtype(c, "weights_type", s.dtype) != s.dtype || cJSON_IsFalse(field(c, "cli")))
        *ok = 0;
    return s;
}

typedef struct bag_buffers {
    void *table, *idx, *off, *w, *want;
    char *out;
    size_t out_bytes;
} bag_buffers;

static void free_buffers(bag_buffers *b)
{
    free(b->table);
    free(b->idx);
    free(b->off);
    free(b->w);
    free(b->want);
    free(b->out);
}

static void load_buffers(const cJSON *c, const jit_sig *s, size_t out_bytes, bag_buffers *b)
{
    memset(b, 0, sizeof *b);
    b->table = values(field(c, "table"), s->dtype);
    b->idx = values(field(c, "indices"), s->index_type);
    b->off = values(field(c, s->op == JIT_OP_EMBEDDING_SEGMENTS ? "segment_ids" : "offsets"),
                    s->index_type);
    b->w = values(field(c, "weights"), s->dtype);
    b->want = values(field(c, "expected"), s->dtype);
    b->out_bytes = out_bytes;
    b->out = malloc(out_bytes + CANARY);
    assert_non_null(b->out);
    memset(b->out, 0xa5, out_bytes + CANARY);
}

static void expect_canary(const bag_buffers *b, const char *name)
{
    for (size_t i = 0; i < CANARY; i++)
        if ((unsigned char)b->out[b->out_bytes + i] != 0xa5)
            fail_msg("%s: a byte past the output was written", name);
}

/* How a case's signature is compiled: its static dims, every dim
 * dynamic, or every dim but the row's (the table's dims after the first:
 * the JIT's dynamic bag kernels take the row's width as a constant). */
enum { STATIC, ALL_DYNAMIC, COUNTS_DYNAMIC, MODES };
static const char *const mode_names[MODES] = {"static", "dynamic", "counts dynamic"};

/* Every dim of s dynamic (but the row's, rows_static). */
static jit_sig dynamic_sig(const jit_sig *s, int rows_static)
{
    return support_bag_dynamic(s, !rows_static);
}

static jit_sig all_dynamic(const jit_sig *s)
{
    return dynamic_sig(s, 0);
}

static jit_sig mode_sig(const jit_sig *s, int mode)
{
    return mode == STATIC ? *s : dynamic_sig(s, mode == COUNTS_DYNAMIC);
}

/* The JIT serves s (compiled in mode) unless the reference engine is
 * asked for, its dynamic row width or a padding row counted from a
 * dynamic table's end is the call's (the reference kernel serves those),
 * or an f16 table meets a host without F16C. */
static void expect_engine(const jit_sig *s, int mode, const jit_kernel_info *info,
                          const char *name)
{
    int row_dynamic = mode == ALL_DYNAMIC && s->data_shape.rank > 1;
    int pad_from_end = mode != STATIC && s->has_padding_idx && s->padding_idx < 0;
    if (s->engine == JIT_ENGINE_REFERENCE) {
        assert_int_equal(info->engine, JIT_ENGINE_REFERENCE);
        return;
    }
    if (row_dynamic || pad_from_end) {
        if (info->engine != JIT_ENGINE_REFERENCE || !strstr(info->why, "reference kernel serves"))
            fail_msg("%s (%s): engine %d, why '%s'", name, mode_names[mode], info->engine,
                     info->why);
        return;
    }
    if (s->dtype == JIT_F16 && info->engine == JIT_ENGINE_REFERENCE && strstr(info->why, "F16C"))
        return;
    char what[256];
    snprintf(what, sizeof what, "%s (%s)", name, mode_names[mode]);
    support_expect_jit(info, what);
}

/* Runs s (compiled in mode; a dynamic one called with the case's dims)
 * on b; the kernel's status. */
static int run_sig(const jit_sig *s, int mode, bag_buffers *b, const char *name)
{
    jit_sig d = mode_sig(s, mode);
    int dynamic = mode != STATIC;
    jit_kernel k = jit_compile(&d);
    if (!k)
        fail_msg("%s (%s, %s): refused: %s", name, jit_engine_name(s->engine),
                 mode_names[mode], jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    assert_int_equal(info.op, s->op);
    assert_int_equal(info.dynamic, dynamic);
    expect_engine(s, mode, &info, name);
    if (!dynamic)
        assert_int_equal(info.out_bytes, (int64_t)b->out_bytes);
    int64_t dims[4 * JIT_MAX_RANK];
    support_bag_call_dims(s, dims);
    int rc = dynamic ? jit_call_bag_dynamic(k, b->table, b->idx, b->off, b->w, b->out, dims)
                     : ((jit_embedding_bag_fn)k)(b->table, b->idx, b->off, b->w, b->out);
    assert_int_equal(jit_release(k), 0);
    return rc;
}

static void test_cases(void **state)
{
    (void)state;
    cJSON *cases = support_load_cases("embedding_bag.json");
    assert_non_null(cases);
    int ran = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        int ok;
        jit_sig s = case_sig(c, &ok);
        const char *name = case_name(c);
        assert_int_not_equal(s.op, JIT_OP_NONE);
        assert_true(ok);
        jit_shape out;
        if (jit_output_shape(&s, &out) != 0)
            fail_msg("%s: refused: %s", name, jit_last_error());
        jit_shape want = support_shape(field(c, "expected_shape"));
        assert_int_equal(out.rank, want.rank);
        assert_memory_equal(out.dims, want.dims, sizeof(int64_t) * (size_t)want.rank);
        int64_t elems = 1;
        for (int i = 0; i < out.rank; i++)
            elems *= out.dims[i];
        for (int e = 0; e < 2; e++)
            for (int mode = 0; mode < MODES; mode++) {
                bag_buffers b;
                s.engine = engines[e];
                load_buffers(c, &s, (size_t)elems * (size_t)jit_dtype_size(s.dtype), &b);
                int rc = run_sig(&s, mode, &b, name);
                if (rc != JIT_OK)
                    fail_msg("%s (%s, %s): status %d: %s", name, jit_engine_name(s.engine),
                             mode_names[mode], rc, jit_last_error());
                if (memcmp(b.out, b.want, b.out_bytes) != 0)
                    fail_msg("%s (%s, %s): the output differs from expected, bit for bit", name,
                             jit_engine_name(s.engine), mode_names[mode]);
                expect_canary(&b, name);
                free_buffers(&b);
                ran++;
            }
    }
    assert_int_equal(ran, 2 * MODES * cJSON_GetArraySize(cases));
    cJSON_Delete(cases);
}

/* An index entry: BAD_INDEX, out untouched, the message naming the input,
 * the position and the value. */
static void expect_bad_index(const cJSON *c, jit_sig *s, const char *name)
{
    int64_t pos = int_or(c, "bad_position", -1), val = int_or(c, "bad_value", 0);
    const cJSON *input = field(c, "bad_input");
    char needle[128];
    snprintf(needle, sizeof needle, "%s[%lld] = %lld", input->valuestring, (long long)pos,
             (long long)val);
    jit_shape out;
    assert_int_equal(jit_output_shape(s, &out), 0);
    int64_t elems = 1;
    for (int i = 0; i < out.rank; i++)
        elems *= out.dims[i];
    for (int e = 0; e < 2; e++)
        for (int mode = 0; mode < MODES; mode++) {
            bag_buffers b;
            s->engine = engines[e];
            load_buffers(c, s, (size_t)elems * (size_t)jit_dtype_size(s->dtype), &b);
            int rc = run_sig(s, mode, &b, name);
            if (rc != JIT_STATUS_BAD_INDEX)
                fail_msg("%s: status %d, not a bad index", name, rc);
            if (!strstr(jit_last_error(), needle))
                fail_msg("%s: '%s' does not say '%s'", name, jit_last_error(), needle);
            for (size_t i = 0; i < b.out_bytes + CANARY; i++)
                if ((unsigned char)b.out[i] != 0xa5)
                    fail_msg("%s: out was written before the bad %s was found", name,
                             input->valuestring);
            free_buffers(&b);
        }
}

static void test_invalid(void **state)
{
    (void)state;
    cJSON *cases = support_load_cases("invalid_embedding_bag.json");
    assert_non_null(cases);
    int refused = 0, unexpressible = 0, bad = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        int ok;
        jit_sig s = case_sig(c, &ok);
        const char *name = case_name(c);
        const cJSON *kind = field(c, "kind");
        if (strcmp(kind->valuestring, "index") == 0) {
            assert_true(ok);
            expect_bad_index(c, &s, name);
            bad++;
            continue;
        }
        if (!ok && jit_compile(&s)) { /* the C signature cannot state what is wrong */
            unexpressible++;
            continue;
        }
        for (int e = 0; e < 2; e++) {
            s.engine = engines[e];
            jit_shape out;
            if (jit_compile(&s) || jit_output_shape(&s, &out) == 0)
                fail_msg("%s: accepted", name);
            assert_true(strlen(jit_last_error()) > 0);
            /* with every dim dynamic, only a rule on a dim's value may hold
             * for other shapes (a default row of a larger table, offsets
             * of another length) */
            jit_sig d = all_dynamic(&s);
            int on_dims = (s.has_default_index && s.default_index != -1) ||
                          s.has_padding_idx || s.include_last_offset;
            if (jit_compile(&d) && !on_dims)
                fail_msg("%s: accepted with every dim dynamic", name);
        }
        refused++;
    }
    assert_true(refused >= 10);
    assert_true(bad >= 8);
    assert_true(unexpressible <= 6);
    cJSON_Delete(cases);
}


/*
 * The oracle: SPEC 10's rules as its table states them, one bag at a time
 * over plain lists of the lookups each bag keeps.
 */
typedef struct rnd_case {
    jit_sig sig;
    int64_t e, d, n, bags;
    void *table, *idx, *off, *w;
    size_t out_bytes;
} rnd_case;

static double elem_get(jit_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case JIT_F16: return tj_half_to_float(((const uint16_t *)p)[i]);
    case JIT_BF16: return tj_bf16_to_float(((const uint16_t *)p)[i]);
    case JIT_F32: return ((const float *)p)[i];
    case JIT_F64: return ((const double *)p)[i];
    case JIT_I8: return ((const int8_t *)p)[i];
    case JIT_I32: return ((const int32_t *)p)[i];
    case JIT_I64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i]; /* u8, bool */
    }
}

static int64_t index_get(jit_dtype t, const void *p, int64_t i)
{
    return t == JIT_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* The row an index selects under the policy, -1 dropped, -2 an error. */
static int64_t oracle_row(const rnd_case *c, int64_t v)
{
    int64_t e = c->e;
    switch (c->sig.index_policy) {
    case JIT_INDEX_ERROR: return v >= 0 && v < e ? v : -2;
    case JIT_INDEX_NEGATIVE_WRAPS: return v >= -e && v < e ? (v < 0 ? v + e : v) : -2;
    case JIT_INDEX_CLAMP: return e == 0 ? -2 : v < 0 ? 0 : v >= e ? e - 1 : v;
    case JIT_INDEX_ZERO_FILL: return v >= 0 && v < e ? v : -1;
    default: return v >= -e && v < e ? (v < 0 ? v + e : v) : -1;
    }
}

/* One output element of a bag from its kept lookups (rows, weights). */
static void oracle_elem(const rnd_case *c, const int64_t *rows, const int64_t *js, int kept,
                        int64_t col, char *dst)
{
    jit_dtype t = c->sig.dtype;
    jit_reduction r = c->sig.reduction;
    int isfloat = t == JIT_F16 || t == JIT_BF16 || t == JIT_F32;
    float f = 0;
    double d = 0;
    int64_t i = 0;
    for (int k = 0; k < kept; k++) {
        double v = elem_get(t, c->table, rows[k] * c->d + col);
        double w = c->w ? elem_get(t, c->w, js[k]) : 1;
        if (r == JIT_REDUCTION_MAX) {
            if (k == 0 || (!isnan(f) && !isnan(d) && (isnan(v) || v > (isfloat ? f : t == JIT_F64 ? d : (double)i)))) {
                f = (float)v;
                d = v;
                i = (int64_t)v;
            }
            continue;
        }
        float pf = (float)w * (float)v; /* rounded to f32 before the add */
        f += c->w ? pf : (float)v;
        d += c->w ? w * v : v;
        i = (int64_t)((uint64_t)i + (uint64_t)(int64_t)w * (uint64_t)(int64_t)v);
    }
    if (kept && r == JIT_REDUCTION_MEAN) {
        f /= (float)kept;
        d /= (double)kept;
        i /= kept;
    }
    switch (t) {
    case JIT_F16: { uint16_t h = tj_float_to_half(f); memcpy(dst, &h, 2); break; }
    case JIT_BF16: { uint16_t h = tj_float_to_bf16(f); memcpy(dst, &h, 2); break; }
    case JIT_F32: memcpy(dst, &f, 4); break;
    case JIT_F64: memcpy(dst, &d, 8); break;
    case JIT_I8: case JIT_U8: case JIT_BOOL: { uint8_t x = (uint8_t)i; memcpy(dst, &x, 1); break; }
    case JIT_I32: { int32_t x = (int32_t)(uint32_t)(uint64_t)i; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &i, 8); break;
    }
}

/* The output, or a bad-index status. */
static int oracle_run(const rnd_case *c, char *out)
{
    const jit_sig *s = &c->sig;
    int es = jit_dtype_size(s->dtype);
    int64_t pad = !s->has_padding_idx  ? -1
                  : s->padding_idx < 0 ? s->padding_idx + c->e
                                       : s->padding_idx;
    int64_t *rows = calloc((size_t)c->n + 1, sizeof *rows), *js = calloc((size_t)c->n + 1, 8);
    int rc = JIT_OK;
    for (int64_t b = 0; b < c->bags && rc == JIT_OK; b++) {
        int kept = 0, looked = 0;
        for (int64_t j = 0; j < c->n; j++) {
            int in;
            if (s->op == JIT_OP_EMBEDDING_BAG_PACKED)
                in = j / s->indices_shape.dims[1] == b;
            else if (s->op == JIT_OP_EMBEDDING_SEGMENTS)
                in = index_get(s->index_type, c->off, j) == b;
            else {
                int64_t lo = index_get(s->index_type, c->off, b);
                int64_t hi = b + 1 < s->updates_shape.dims[0] ? index_get(s->index_type, c->off, b + 1) : c->n;
                in = j >= lo && j < hi;
            }
            if (!in)
                continue;
            looked++;
            int64_t r = oracle_row(c, index_get(s->index_type, c->idx, j));
            if (r == -2)
                rc = JIT_STATUS_BAD_INDEX;
            if (r >= 0 && r != pad) {
                rows[kept] = r;
                js[kept++] = j;
            }
        }
        for (int64_t col = 0; col < c->d; col++) {
            char *dst = out + (b * c->d + col) * es;
            if (!looked && s->has_default_index && s->default_index >= 0)
                memcpy(dst, (const char *)c->table + (s->default_index * c->d + col) * es, (size_t)es);
            else
                oracle_elem(c, rows, js, kept, col, dst);
        }
    }
    free(rows);
    free(js);
    return rc;
}

/* Sizes of random cases are scaled by this; one value in `specials`
 * (0: none) of a float table or weights is a NaN with a random payload
 * (signaling or quiet, either sign), an infinity or -0. */
static int64_t rnd_scale = 1;
static int rnd_specials = 0;

static int put_special(jit_dtype t, void *p, int64_t i, uint64_t *rng)
{
    int floats = t == JIT_F16 || t == JIT_BF16 || t == JIT_F32 || t == JIT_F64;
    if (!floats || !rnd_specials || support_rand_range(rng, 0, rnd_specials - 1))
        return 0;
    uint64_t r = support_rand(rng), kind = r % 4;
    if (kind == 0) { /* a NaN: exponent all ones, a nonzero random payload */
        uint64_t bits = t == JIT_F64 ? (r & 0x800fffffffffffffull) | 0x7ff0000000000001ull
                        : t == JIT_F32 ? (r & 0x807fffffull) | 0x7f800001ull
                        : t == JIT_F16 ? (r & 0x83ffull) | 0x7c01ull
                                       : (r & 0x807full) | 0x7f81ull;
        memcpy((char *)p + i * jit_dtype_size(t), &bits, (size_t)jit_dtype_size(t));
        return 1;
    }
    cJSON *n = kind == 1 ? cJSON_CreateString(r & 16 ? "inf" : "-inf") : cJSON_CreateNumber(-0.0);
    store_value(n, t, (char *)p + i * jit_dtype_size(t));
    cJSON_Delete(n);
    return 1;
}

static void put_value(jit_dtype t, void *p, int64_t i, uint64_t *rng)
{
    double v;
    if (put_special(t, p, i, rng))
        return;
    if (t == JIT_BOOL)
        v = (double)support_rand_range(rng, 0, 1);
    else if (t == JIT_U8)
        v = (double)support_rand_range(rng, 0, 255);
    else if (t == JIT_I8 || t == JIT_I32 || t == JIT_I64)
        v = (double)support_rand_range(rng, -100, 100);
    else
        v = (double)support_rand_range(rng, -4000, 4000) / 37.0;
    cJSON *n = cJSON_CreateNumber(v);
    store_value(n, t, (char *)p + i * jit_dtype_size(t));
    cJSON_Delete(n);
}

static const jit_dtype rnd_dtypes[] = {JIT_F16, JIT_BF16, JIT_F32, JIT_F64, JIT_I8,
                                       JIT_I32, JIT_I64, JIT_U8, JIT_BOOL};

/* A random valid signature and inputs whose indices the policy takes
 * (most of the time: under error policies some are out of range). */
static void random_case(uint64_t *rng, rnd_case *c)
{
    memset(c, 0, sizeof *c);
    jit_sig *s = &c->sig;
    s->op = (jit_op)(JIT_OP_EMBEDDING_BAG_OFFSETS + support_rand_range(rng, 0, 2));
    s->dtype = rnd_dtypes[support_rand_range(rng, 0, 8)];
    s->index_type = support_rand_range(rng, 0, 1) ? JIT_I32 : JIT_I64;
    s->index_policy = (jit_index_policy)support_rand_range(rng, 0, JIT_INDEX_POLICY_COUNT - 1);
    s->threads = (int)support_rand_range(rng, 1, 3);
    int segments = s->op == JIT_OP_EMBEDDING_SEGMENTS, packed = s->op == JIT_OP_EMBEDDING_BAG_PACKED;
    s->opset = segments ? 3 : 15;
    s->reduction = segments ? JIT_REDUCTION_SUM
                            : (jit_reduction[]){JIT_REDUCTION_SUM, JIT_REDUCTION_MEAN,
                                                JIT_REDUCTION_MAX}[support_rand_range(rng, 0, 2)];
    if (s->dtype == JIT_BOOL && segments)
        s->dtype = JIT_U8; /* bool takes max only, segments sum only */
    if (s->dtype == JIT_BOOL)
        s->reduction = JIT_REDUCTION_MAX;
    s->has_weights = s->reduction == JIT_REDUCTION_SUM && support_rand_range(rng, 0, 1);
    c->e = support_rand_range(rng, 1, 7 * rnd_scale);
    c->d = support_rand_range(rng, 1, 5 * rnd_scale);
    s->data_shape = c->d == 1 && support_rand_range(rng, 0, 1) ? (jit_shape){1, {c->e}}
                                                               : (jit_shape){2, {c->e, c->d}};
    s->has_default_index = !packed && support_rand_range(rng, 0, 2);
    s->default_index = s->has_default_index ? support_rand_range(rng, -1, c->e - 1) : 0;
    s->has_padding_idx = !segments && support_rand_range(rng, 0, 1);
    s->padding_idx = s->has_padding_idx ? support_rand_range(rng, -c->e, c->e - 1) : 0;
    if (packed) {
        int64_t b = support_rand_range(rng, 0, 5 * rnd_scale);
        int64_t l = support_rand_range(rng, 0, 4 * rnd_scale);
        s->indices_shape = (jit_shape){2, {b, l}};
        c->n = b * l;
        c->bags = b;
    } else {
        c->n = support_rand_range(rng, 0, 12 * rnd_scale);
        s->indices_shape = (jit_shape){1, {c->n}};
    }
    c->idx = calloc((size_t)c->n + 1, 8);
    c->w = s->has_weights ? calloc((size_t)c->n + 1, 8) : NULL;
    int strict = s->index_policy == JIT_INDEX_ERROR || s->index_policy == JIT_INDEX_NEGATIVE_WRAPS;
    for (int64_t j = 0; j < c->n; j++) {
        int64_t lo = strict && support_rand_range(rng, 0, 30) ? (s->index_policy == JIT_INDEX_ERROR ? 0 : -c->e) : -c->e - 2;
        int64_t hi = strict && support_rand_range(rng, 0, 30) ? c->e - 1 : c->e + 2;
        support_store_index(s->index_type, c->idx, j, support_rand_range(rng, lo, hi));
        if (c->w)
            put_value(s->dtype, c->w, j, rng);
    }
    if (segments) {
        s->num_segments = support_rand_range(rng, 0, 5 * rnd_scale);
        c->bags = s->num_segments;
        s->updates_shape = (jit_shape){1, {c->n}};
        c->off = calloc((size_t)c->n + 1, 8);
        for (int64_t j = 0; j < c->n; j++)
            support_store_index(s->index_type, c->off, j,
                                s->num_segments ? support_rand_range(rng, 0, s->num_segments - 1) : 0);
        if (!s->num_segments && c->n) { /* no segment can take them: make it one */
            s->num_segments = c->bags = 1;
        }
    } else if (!packed) {
        s->include_last_offset = support_rand_range(rng, 0, 1);
        int64_t len = support_rand_range(rng, s->include_last_offset, 5 * rnd_scale);
        c->bags = len - s->include_last_offset;
        s->updates_shape = (jit_shape){1, {len}};
        c->off = calloc((size_t)len + 1, 8);
        int64_t at = support_rand_range(rng, 0, 1) ? 0 : support_rand_range(rng, 0, c->n);
        for (int64_t b = 0; b < len; b++) {
            support_store_index(s->index_type, c->off, b, at);
            at = support_rand_range(rng, at, c->n);
        }
    }
    c->table = calloc((size_t)(c->e * c->d), 8);
    for (int64_t i = 0; i < c->e * c->d; i++)
        put_value(s->dtype, c->table, i, rng);
    c->out_bytes = (size_t)(c->bags * c->d * jit_dtype_size(s->dtype));
}

static void free_case(rnd_case *c)
{
    free(c->table);
    free(c->idx);
    free(c->off);
    free(c->w);
}

static void test_random_oracle(void **state)
{
    (void)state;
    uint64_t rng = 25;
    int runs = (int)support_env_long("TJ_BAG_RUNS", 400), bad = 0;
    for (int r = 0; r < runs; r++) {
        rnd_case c;
        random_case(&rng, &c);
        char *want = calloc(c.out_bytes + 1, 1), *got = malloc(c.out_bytes + CANARY);
        int want_rc = oracle_run(&c, want);
        bad += want_rc != JIT_OK;
        for (int e = 0; e < 2; e++)
            for (int mode = 0; mode < MODES; mode++) {
                c.sig.engine = engines[e];
                jit_sig sig = mode_sig(&c.sig, mode);
                jit_kernel k = jit_compile(&sig);
                if (!k)
                    fail_msg("run %d: refused: %s", r, jit_last_error());
                jit_kernel_info info;
                assert_int_equal(jit_info(k, &info), 0);
                char name[32];
                snprintf(name, sizeof name, "run %d", r);
                expect_engine(&c.sig, mode, &info, name);
                memset(got, 0xa5, c.out_bytes + CANARY);
                int64_t dims[4 * JIT_MAX_RANK];
                support_bag_call_dims(&c.sig, dims);
                int rc = mode != STATIC
                             ? jit_call_bag_dynamic(k, c.table, c.idx, c.off, c.w, got, dims)
                             : jit_call_bag(k, c.table, c.idx, c.off, c.w, got);
                if (rc != want_rc)
                    fail_msg("run %d (%s, op %d, %s): status %d, the oracle's %d (%s)", r,
                             jit_engine_name(c.sig.engine), c.sig.op, jit_dtype_name(c.sig.dtype),
                             rc, want_rc, jit_last_error());
                for (size_t i = rc == JIT_OK ? c.out_bytes : 0; i < c.out_bytes + CANARY; i++)
                    assert_int_equal((unsigned char)got[i], 0xa5);
                if (rc == JIT_OK && memcmp(got, want, c.out_bytes) != 0)
                    fail_msg("run %d (%s, %s, op %d, %s, reduction %s, policy %s): differs from "
                             "the oracle", r, jit_engine_name(c.sig.engine), mode_names[mode], c.sig.op,
                             jit_dtype_name(c.sig.dtype), jit_reduction_name(c.sig.reduction),
                             jit_index_policy_name(c.sig.index_policy));
                jit_release(k);
            }
        free(want);
        free(got);
        free_case(&c);
    }
    assert_true(bad > 0 && bad < runs); /* both kinds were met */
}

/* A zero-initialised signature (only op, types and shapes set) means no
 * default row and no padding: plain sums, against the oracle, for each
 * form, and the typed signatures alike. Row 0 is both looked up and the
 * would-be default of an empty bag / segment, so either trap shows. */
static void zero_case(jit_op op, rnd_case *c)
{
    static const int64_t idx[4] = {0, 1, 0, 2}, off[3] = {0, 2, 2}, seg[4] = {0, 0, 2, 2};
    memset(c, 0, sizeof *c);
    c->e = 3;
    c->d = 2;
    c->n = 4;
    c->bags = op == JIT_OP_EMBEDDING_BAG_PACKED ? 2 : 3;
    c->sig = (jit_sig){.op = op, .dtype = JIT_F32, .index_type = JIT_I64,
                       .data_shape = {2, {3, 2}}, .indices_shape = {1, {4}}};
    if (op == JIT_OP_EMBEDDING_BAG_PACKED)
        c->sig.indices_shape = (jit_shape){2, {2, 2}};
    else if (op == JIT_OP_EMBEDDING_BAG_OFFSETS)
        c->sig.updates_shape = (jit_shape){1, {3}};
    else {
        c->sig.updates_shape = (jit_shape){1, {4}};
        c->sig.num_segments = 3;
    }
    c->table = calloc(6, sizeof(float));
    c->idx = calloc(4, sizeof(int64_t));
    c->off = calloc(4, sizeof(int64_t));
    assert_true(c->table && c->idx && c->off);
    for (int i = 0; i < 6; i++)
        ((float *)c->table)[i] = (float)(i + 1) * 1.5f;
    memcpy(c->idx, idx, sizeof idx);
    memcpy(c->off, op == JIT_OP_EMBEDDING_SEGMENTS ? seg : off,
           op == JIT_OP_EMBEDDING_SEGMENTS ? sizeof seg : sizeof off);
    c->out_bytes = (size_t)(c->bags * c->d) * sizeof(float);
}

static void expect_plain_sums(const rnd_case *c, jit_kernel k)
{
    float want[6] = {0}, got[6];
    assert_int_equal(oracle_run(c, (char *)want), JIT_OK);
    assert_non_null(k);
    const void *off = c->sig.op == JIT_OP_EMBEDDING_BAG_PACKED ? NULL : c->off; /* it has none */
    assert_int_equal(jit_call_bag(k, c->table, c->idx, off, NULL, got), JIT_OK);
    if (memcmp(got, want, c->out_bytes) != 0)
        fail_msg("op %d: a zero-initialised signature did not give plain sums (bag 0: %g, "
                 "%g; the oracle: %g, %g)", c->sig.op, got[0], got[1], want[0], want[1]);
}

static void test_zero_initialised(void **state)
{
    (void)state;
    for (int op = JIT_OP_EMBEDDING_BAG_OFFSETS; op <= JIT_OP_EMBEDDING_SEGMENTS; op++) {
        rnd_case c;
        zero_case((jit_op)op, &c);
        jit_kernel k = jit_compile(&c.sig);
        if (!k)
            fail_msg("op %d: refused: %s", op, jit_last_error());
        expect_plain_sums(&c, k);
        jit_release(k);
        jit_kernel t = NULL;
        if (op == JIT_OP_EMBEDDING_BAG_OFFSETS) {
            jit_embedding_bag_offsets_sig o = {.dtype = JIT_F32, .index_type = JIT_I64,
                                               .table_shape = c.sig.data_shape,
                                               .indices_shape = c.sig.indices_shape,
                                               .offsets_shape = c.sig.updates_shape};
            t = (jit_kernel)jit_embedding_bag_offsets_compile(&o);
        } else if (op == JIT_OP_EMBEDDING_BAG_PACKED) {
            jit_embedding_bag_packed_sig p = {.dtype = JIT_F32, .index_type = JIT_I64,
                                              .table_shape = c.sig.data_shape,
                                              .indices_shape = c.sig.indices_shape};
            t = (jit_kernel)jit_embedding_bag_packed_compile(&p);
        } else {
            jit_embedding_segments_sig g = {.dtype = JIT_F32, .index_type = JIT_I64,
                                            .table_shape = c.sig.data_shape,
                                            .indices_shape = c.sig.indices_shape,
                                            .segment_ids_shape = c.sig.updates_shape,
                                            .num_segments = 3};
            t = (jit_kernel)jit_embedding_segments_compile(&g);
        }
        if (!t)
            fail_msg("op %d (typed): refused: %s", op, jit_last_error());
        expect_plain_sums(&c, t);
        jit_release(t);
        free_case(&c);
    }
}

/* Runs c's kernel (compiled in mode) whole; its status, out in got. */
static int run_whole(const rnd_case *c, int mode, char *got)
{
    jit_sig sig = mode_sig(&c->sig, mode);
    jit_kernel k = jit_compile(&sig);
    if (!k)
        fail_msg("refused: %s", jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    expect_engine(&c->sig, mode, &info, "whole");
    memset(got, 0xa5, c->out_bytes + CANARY);
    int64_t dims[4 * JIT_MAX_RANK];
    support_bag_call_dims(&c->sig, dims);
    int rc = mode != STATIC ? jit_call_bag_dynamic(k, c->table, c->idx, c->off, c->w, got, dims)
                            : jit_call_bag(k, c->table, c->idx, c->off, c->w, got);
    jit_release(k);
    return rc;
}

/* The JIT and the reference kernel agree bit for bit, NaN payloads,
 * infinities and -0 included (SPEC 10's NaN rule: exec/reduce.h), on
 * larger random signatures, static and dynamic, over 1 to 3 threads. */
static void test_engines_agree(void **state)
{
    (void)state;
    uint64_t rng = 2525;
    rnd_scale = 6;
    rnd_specials = 5;
    for (int r = 0; r < (int)support_env_long("TJ_BAG_RUNS", 400) / 2; r++) {
        rnd_case c;
        random_case(&rng, &c);
        char *ref = malloc(c.out_bytes + CANARY), *jit = malloc(c.out_bytes + CANARY);
        assert_non_null(ref);
        assert_non_null(jit);
        c.sig.engine = JIT_ENGINE_REFERENCE;
        int want = run_whole(&c, STATIC, ref);
        char ref_msg[512];
        snprintf(ref_msg, sizeof ref_msg, "%s", want == JIT_OK ? "" : jit_last_error());
        c.sig.engine = JIT_ENGINE_AUTO;
        for (int mode = 0; mode < MODES; mode++) {
            int rc = run_whole(&c, mode, jit);
            if (rc != want || (rc != JIT_OK && strcmp(jit_last_error(), ref_msg) != 0))
                fail_msg("run %d (%s): status %d '%s', the reference's %d '%s'", r,
                         mode_names[mode], rc, rc ? jit_last_error() : "", want, ref_msg);
            size_t es = (size_t)jit_dtype_size(c.sig.dtype);
            for (size_t i = 0; rc == JIT_OK && i < c.out_bytes; i += es)
                if (memcmp(ref + i, jit + i, es) != 0)
                    fail_msg("run %d (%s, op %d, %s, reduction %s, weights %d): out element %zu "
                             "differs from the reference kernel's", r, mode_names[mode],
                             c.sig.op, jit_dtype_name(c.sig.dtype),
                             jit_reduction_name(c.sig.reduction), c.sig.has_weights, i / es);
            for (size_t i = rc == JIT_OK ? c.out_bytes : 0; i < c.out_bytes + CANARY; i++)
                assert_int_equal((unsigned char)jit[i], 0xa5);
        }
        free(ref);
        free(jit);
        free_case(&c);
    }
    rnd_scale = 1;
    rnd_specials = 0;
}

/* jit_validate_bag_part in 1, 2 and n parts: every part JIT_OK where the
 * call was, else at least one part with the call's status and message,
 * the others JIT_OK. */
static void expect_parts_validate(jit_kernel k, const rnd_case *c, int rc, const char *call_msg,
                                  int64_t n)
{
    const int64_t counts[] = {1, 2, n};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int failed = 0;
        for (int64_t part = 0; part < counts[i]; part++) {
            int prc = jit_validate_bag_part(k, c->idx, c->off, part, counts[i]);
            if (prc == JIT_OK)
                continue;
            failed++;
            if (prc != rc || strcmp(jit_last_error(), call_msg) != 0)
                fail_msg("part %lld of %lld: %d (%s), the call %d (%s)", (long long)part,
                         (long long)counts[i], prc, jit_last_error(), rc, call_msg);
        }
        if ((failed > 0) != (rc != JIT_OK))
            fail_msg("%d of %lld parts failed, the call's status %d (%s)", failed,
                     (long long)counts[i], rc, call_msg);
    }
}

/* jit_validate_bag and jit_run_range_bag: a kernel's bags cut at random
 * points and run part by part (last part first) give the whole call's
 * bytes, on both engines, split JIT kernels (their own range functions,
 * checked by the runtime's scan) and unsplit ones; a bad offset or index is the same status
 * and message from validate as from the call. Returns how many JIT kernels split. */
static int parts_round(uint64_t *rng, int runs)
{
    int split = 0;
    for (int r = 0; r < runs; r++) {
        rnd_case c;
        random_case(rng, &c);
        c.sig.threads = (int)support_rand_range(rng, 2, 4);
        for (int e = 0; e < 2; e++) {
            c.sig.engine = engines[e];
            char *whole = malloc(c.out_bytes + CANARY), *got = malloc(c.out_bytes + CANARY);
            assert_non_null(whole);
            assert_non_null(got);
            int rc = run_whole(&c, STATIC, whole);
            char call_msg[512];
            snprintf(call_msg, sizeof call_msg, "%s", rc == JIT_OK ? "" : jit_last_error());
            jit_kernel k = jit_compile(&c.sig);
            assert_non_null(k);
            char *text = jit_explain(&c.sig);
            assert_non_null(text);
            split += c.sig.engine != JIT_ENGINE_REFERENCE && strstr(text, "split across") != NULL;
            jit_free(text);
            int64_t units = jit_units(k);
            assert_int_equal(units, c.bags);
            int vrc = jit_validate_bag(k, c.idx, c.off);
            if (vrc != rc || (rc != JIT_OK && strcmp(jit_last_error(), call_msg) != 0))
                fail_msg("run %d (%s): validate %d (%s), the call %d (%s)", r,
                         jit_engine_name(c.sig.engine), vrc, jit_last_error(), rc, call_msg);
            expect_parts_validate(k, &c, rc, call_msg, support_rand_range(rng, 2, 9));
            if (rc == JIT_OK) {
                int64_t cuts[6] = {0, 0, 0, 0, 0, units};
                for (int i = 1; i < 5; i++)
                    cuts[i] = support_rand_range(rng, 0, units);
                for (int i = 1; i < 5; i++) /* sorted */
                    for (int j = i + 1; j < 5; j++)
                        if (cuts[j] < cuts[i]) {
                            int64_t t = cuts[i];
                            cuts[i] = cuts[j];
                            cuts[j] = t;
                        }
                memset(got, 0xa5, c.out_bytes + CANARY);
                for (int i = 4; i >= 0; i--)
                    assert_int_equal(jit_run_range_bag(k, c.table, c.idx, c.off, c.w, got,
                                                       cuts[i], cuts[i + 1]),
                                     JIT_OK);
                if (memcmp(got, whole, c.out_bytes + CANARY) != 0)
                    fail_msg("run %d (%s, op %d, %s): the parts differ from the whole call", r,
                             jit_engine_name(c.sig.engine), c.sig.op,
                             jit_dtype_name(c.sig.dtype));
            }
            jit_release(k);
            free(whole);
            free(got);
        }
        free_case(&c);
    }
    return split;
}

static void test_parts(void **state)
{
    (void)state;
    uint64_t rng = 77;
    rnd_scale = 8;
    int runs = (int)support_env_long("TJ_BAG_RUNS", 400) / 4;
    parts_round(&rng, runs);
    /* every kernel of more than one bag and thread split (TENSORJIT_SPLIT_MIN) */
    support_setenv("TENSORJIT_SPLIT_MIN", "1");
    int split = parts_round(&rng, runs);
    support_unsetenv("TENSORJIT_SPLIT_MIN");
    rnd_scale = 1;
    if (getenv("TENSORJIT_JIT") == NULL)
        assert_true(split > 0);
}

/* Hostile shapes: dims whose bytes overflow int64 are refused when
 * compiling, naming the input. */
static void test_overflow_dims(void **state)
{
    (void)state;
    jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = {2, {INT64_MAX / 2, 4}}, .indices_shape = {1, {4}},
                 .updates_shape = {1, {2}}};
    assert_null(jit_compile(&s));
    assert_non_null(strstr(jit_last_error(), "table"));
    s.data_shape = (jit_shape){2, {4, 4}};
    s.indices_shape = (jit_shape){1, {INT64_MAX / 4}};
    assert_null(jit_compile(&s));
    assert_non_null(strstr(jit_last_error(), "indices"));
    s.indices_shape = (jit_shape){1, {4}};
    s.updates_shape = (jit_shape){1, {INT64_MAX / 4}};
    assert_null(jit_compile(&s));
    assert_non_null(strstr(jit_last_error(), "offsets"));
    s.updates_shape = (jit_shape){1, {INT64_MAX / 9}};
    assert_null(jit_compile(&s));
    assert_non_null(strstr(jit_last_error(), "output"));
    /* weights of f64 over i32 indices: the indices' bytes fit, the
     * weights' (N of the table's type) do not (a review found them
     * unchecked: the dynamic kernel refused such an N, the static
     * signature took it) */
    s.updates_shape = (jit_shape){1, {2}};
    s.dtype = JIT_F64;
    s.index_type = JIT_I32;
    s.has_weights = 1;
    s.indices_shape = (jit_shape){1, {INT64_MAX / 6}};
    assert_null(jit_compile(&s));
    if (!strstr(jit_last_error(), "weights"))
        fail_msg("%s", jit_last_error());
    s.has_weights = 0;
    jit_kernel fits = jit_compile(&s); /* without weights the same indices fit */
    assert_non_null(fits);
    jit_release(fits);
    jit_sig g = {.op = JIT_OP_EMBEDDING_SEGMENTS, .dtype = JIT_F64, .index_type = JIT_I32,
                 .data_shape = {2, {4, 4}}, .indices_shape = {1, {4}},
                 .updates_shape = {1, {4}}, .num_segments = INT64_MAX / 8};
    assert_null(jit_compile(&g));
    if (!strstr(jit_last_error(), "output"))
        fail_msg("%s", jit_last_error());
    /* bf16: the output's S x 4 x 2 bytes fit, the kernel's f32 sums' do not */
    g.dtype = JIT_BF16;
    g.num_segments = INT64_MAX / 10;
    assert_null(jit_compile(&g));
    if (!strstr(jit_last_error(), "scratch"))
        fail_msg("%s", jit_last_error());
}

/* One call of a dynamic offsets kernel of [?, 16] f32 rows (E <= 3,
 * N <= 4, B + 0 <= 2 offsets) on engine e: its status, its message in msg,
 * and whether out (two rows and a guard row) kept its bytes. */
static int dyn_bounded_call(jit_engine e, const int64_t *dims, char *msg, size_t len,
                            int *untouched)
{
    jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_OFFSETS, .opset = 15, .dtype = JIT_F32,
                 .index_type = JIT_I64, .engine = e,
                 .data_shape = {2, {JIT_DIM_DYNAMIC, 16}}, .indices_shape = {1, {JIT_DIM_DYNAMIC}},
                 .updates_shape = {1, {JIT_DIM_DYNAMIC}}};
    s.data_bound[0] = 3;
    s.indices_bound[0] = 4;
    s.updates_bound[0] = 2;
    jit_kernel k = jit_compile(&s);
    assert_non_null(k);
    float table[3 * 16], out[3 * 16];
    for (int i = 0; i < 3 * 16; i++)
        table[i] = (float)i;
    memset(out, 0x5a, sizeof out);
    int64_t idx[4] = {0, 1, 2, 2}, off[2] = {0, 1};
    int rc = jit_call_bag_dynamic(k, table, idx, off, NULL, out, dims);
    snprintf(msg, len, "%s", rc ? jit_last_error() : "");
    *untouched = 1;
    for (size_t i = 0; i < sizeof out; i++)
        *untouched &= ((unsigned char *)out)[i] == 0x5a;
    return rc;
}

/* S is a count the call passes as a dim of its own: a message names it
 * num_segments, not as the shape it has none of (a user's trial). */
static void test_num_segments_named_as_a_count(void **state)
{
    (void)state;
    jit_sig s = {.op = JIT_OP_EMBEDDING_SEGMENTS, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = {2, {6, 4}}, .indices_shape = {1, {JIT_DIM_DYNAMIC}},
                 .updates_shape = {1, {JIT_DIM_DYNAMIC}}, .num_segments = JIT_DIM_DYNAMIC,
                 .num_segments_bound = 16};
    int64_t dims[5] = {6, 4, 3, 3, 17};
    jit_sig bound;
    assert_int_equal(jit_sig_bind(&s, dims, &bound), -1);
    assert_string_equal(jit_last_error(), "num_segments=17 exceeds its bound 16");
    dims[4] = -2;
    assert_int_equal(jit_sig_bind(&s, dims, &bound), -1);
    assert_string_equal(jit_last_error(), "num_segments=-2 must not be negative");
    s.num_segments_bound = -1;
    dims[4] = 5;
    assert_int_equal(jit_sig_bind(&s, dims, &bound), -1);
    assert_string_equal(jit_last_error(), "num_segments_bound=-1 must not be negative");
    s.num_segments_bound = 16;
    dims[4] = 16;
    assert_int_equal(jit_sig_bind(&s, dims, &bound), 0);
    assert_int_equal(bound.num_segments, 16);
}

/* A dynamic kernel's dims are held to its signature on every engine alike
 * before anything is read: a static dim that lies, a dynamic one past its
 * bound or negative, NULL dims; each gets the reference's status and
 * message from the JIT too, and out keeps its bytes. */
static void test_dynamic_dims_held_to_the_signature(void **state)
{
    (void)state;
    static const struct {
        int64_t dims[4];
        const char *says;
    } bad[] = {
        {{3, 16, 4, 3}, "offsets.shape[0]=3 exceeds its bound 2"},
        {{5, 16, 4, 2}, "table.shape[0]=5 exceeds its bound 3"},
        {{3, 16, 9, 2}, "indices.shape[0]=9 exceeds its bound 4"},
        {{3, 8, 4, 2}, "table.shape[1]=8 must be 16"},
        {{3, 16, -1, 2}, "indices.shape[0]=-1 must not be negative"},
    };
    char jit_msg[512], ref_msg[512];
    int untouched;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = dyn_bounded_call(JIT_ENGINE_AUTO, bad[i].dims, jit_msg, sizeof jit_msg,
                                  &untouched);
        assert_int_equal(rc, JIT_STATUS_BAD_SHAPE);
        assert_true(untouched);
        if (!strstr(jit_msg, bad[i].says))
            fail_msg("dims %zu: %s", i, jit_msg);
        rc = dyn_bounded_call(JIT_ENGINE_REFERENCE, bad[i].dims, ref_msg, sizeof ref_msg,
                              &untouched);
        assert_int_equal(rc, JIT_STATUS_BAD_SHAPE);
        assert_true(untouched);
        assert_string_equal(jit_msg, ref_msg);
    }
    int64_t fine[4] = {3, 16, 4, 2};
    assert_int_equal(dyn_bounded_call(JIT_ENGINE_AUTO, fine, jit_msg, sizeof jit_msg,
                                      &untouched), JIT_OK);
    assert_int_equal(dyn_bounded_call(JIT_ENGINE_AUTO, NULL, jit_msg, sizeof jit_msg,
                                      &untouched), JIT_STATUS_BAD_POINTER);
    assert_int_equal(dyn_bounded_call(JIT_ENGINE_REFERENCE, NULL, ref_msg, sizeof ref_msg,
                                      &untouched), JIT_STATUS_BAD_POINTER);
    assert_string_equal(jit_msg, ref_msg);
}

/* Rows of no bytes: any number of bags is written at once (nothing to
 * write), on the reference kernel too, which looped over them. */
static void test_empty_rows_many_bags(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_PACKED, .opset = 15, .dtype = JIT_F32,
                     .index_type = JIT_I64, .engine = e ? JIT_ENGINE_REFERENCE : JIT_ENGINE_AUTO,
                     .data_shape = {2, {2, 0}}, .indices_shape = {2, {(int64_t)1 << 60, 0}}};
        jit_kernel k = jit_compile(&s);
        assert_non_null(k);
        float table[1], out[1];
        int64_t idx[1];
        assert_int_equal(jit_call_bag(k, table, idx, NULL, NULL, out), JIT_OK);
    }
}

/* The reference's segments in groups as large as its heap scratch holds,
 * and in the stack's groups where the scratch cannot be had: rows of two
 * column chunks (2500 elements), ids in any order; both agree with the
 * JIT's bytes. */
static void test_reference_segment_groups(void **state)
{
    (void)state;
    enum { E = 6, D = 2500, S = 40, N = 120 };
    jit_sig s = {.op = JIT_OP_EMBEDDING_SEGMENTS, .dtype = JIT_F32, .index_type = JIT_I64,
                 .data_shape = {2, {E, D}}, .indices_shape = {1, {N}},
                 .updates_shape = {1, {N}}, .num_segments = S, .has_weights = 1};
    float *table = malloc(sizeof(float) * E * D), w[N];
    float *want = malloc(sizeof(float) * S * D), *got = malloc(sizeof(float) * S * D);
    int64_t idx[N], seg[N];
    uint64_t rng = 25;
    for (int i = 0; i < E * D; i++)
        table[i] = (float)support_rand_range(&rng, -1000, 1000) / 64;
    for (int i = 0; i < N; i++) {
        idx[i] = support_rand_range(&rng, 0, E - 1);
        seg[i] = support_rand_range(&rng, 0, S - 3); /* the last two: no id */
        w[i] = (float)support_rand_range(&rng, -8, 8) / 4;
    }
    jit_kernel k = jit_compile(&s);
    assert_non_null(k);
    assert_int_equal(jit_call_bag(k, table, idx, seg, w, want), JIT_OK);
    s.engine = JIT_ENGINE_REFERENCE;
    jit_kernel r = jit_compile(&s);
    assert_non_null(r);
    for (int fail = 0; fail < 2; fail++) {
        memset(got, 0x5a, sizeof(float) * S * D);
        tj_alloc_fail_after(fail); /* 1: the scratch is refused */
        assert_int_equal(jit_call_bag(r, table, idx, seg, w, got), JIT_OK);
        tj_alloc_fail_after(0);
        assert_memory_equal(got, want, sizeof(float) * S * D);
    }
    free(table), free(want), free(got);
}

/* The generic calls of the other argument lists refuse a bag's kernel,
 * naming the right one; NULL buffers are named. */
static void test_calls(void **state)
{
    (void)state;
    jit_embedding_bag_offsets_sig t = {.dtype = JIT_F32, .index_type = JIT_I32,
                                       .table_shape = {2, {3, 2}}, .indices_shape = {1, {2}},
                                       .offsets_shape = {1, {1}}, .has_weights = 1};
    jit_embedding_bag_offsets_fn k = jit_embedding_bag_offsets_compile(&t);
    assert_non_null(k);
    float table[6] = {1, 2, 3, 4, 5, 6}, w[2] = {2, 3}, out[2];
    int32_t idx[2] = {0, 2}, off[1] = {0};
    assert_int_equal(jit_call((jit_kernel)k, table, idx, off, out), JIT_STATUS_BAD_SHAPE);
    assert_non_null(strstr(jit_last_error(), "jit_call_bag"));
    assert_int_equal(jit_validate((jit_kernel)k, idx), JIT_STATUS_BAD_SHAPE);
    assert_int_equal(k(table, idx, off, NULL, out), JIT_STATUS_BAD_POINTER);
    assert_non_null(strstr(jit_last_error(), "weights"));
    assert_int_equal(k(table, idx, off, w, out), JIT_OK);
    assert_true(out[0] == 2 * 1 + 3 * 5 && out[1] == 2 * 2 + 3 * 6);
    assert_int_equal(jit_embedding_bag_offsets_units(k), 1);
    assert_int_equal(jit_embedding_bag_offsets_validate(k, idx, off), JIT_OK);
    memset(out, 0, sizeof out);
    assert_int_equal(jit_embedding_bag_offsets_run_range(k, table, idx, off, w, out, 0, 1), JIT_OK);
    assert_true(out[0] == 17);
    jit_kernel_info info;
    assert_int_equal(jit_embedding_bag_offsets_info(k, &info), 0);
    assert_int_equal(info.op, JIT_OP_EMBEDDING_BAG_OFFSETS);
    char *text = jit_embedding_bag_offsets_explain(&t);
    assert_non_null(text);
    assert_non_null(strstr(text, "EmbeddingBagOffsets-15"));
    jit_free(text);
    assert_int_equal(jit_embedding_bag_offsets_release(k), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_random_oracle),
        cmocka_unit_test(test_zero_initialised),
        cmocka_unit_test(test_engines_agree),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_overflow_dims),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_dynamic_dims_held_to_the_signature),
        cmocka_unit_test(test_num_segments_named_as_a_count),
        cmocka_unit_test(test_empty_rows_many_bags),
        cmocka_unit_test(test_reference_segment_groups),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
