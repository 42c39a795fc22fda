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
    s.default_index = int_or(c, "default_index", -1);
    s.padding_idx = int_or(c, "padding_idx", JIT_NO_PADDING);
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

/* The dims of the dynamic kernel's call: table, indices, offsets / segment
 * ids, S. */
static int call_dims(const jit_sig *s, int64_t *dims)
{
    int n = 0;
    for (int i = 0; i < s->data_shape.rank; i++)
        dims[n++] = s->data_shape.dims[i];
    for (int i = 0; i < s->indices_shape.rank; i++)
        dims[n++] = s->indices_shape.dims[i];
    if (s->op != JIT_OP_EMBEDDING_BAG_PACKED)
        for (int i = 0; i < s->updates_shape.rank; i++)
            dims[n++] = s->updates_shape.dims[i];
    if (s->op == JIT_OP_EMBEDDING_SEGMENTS)
        dims[n++] = s->num_segments;
    return n;
}

/* Every dim of s dynamic. */
static jit_sig all_dynamic(const jit_sig *s)
{
    jit_sig d = *s;
    for (int i = 0; i < d.data_shape.rank; i++)
        d.data_shape.dims[i] = JIT_DIM_DYNAMIC;
    for (int i = 0; i < d.indices_shape.rank; i++)
        d.indices_shape.dims[i] = JIT_DIM_DYNAMIC;
    for (int i = 0; i < d.updates_shape.rank; i++)
        d.updates_shape.dims[i] = JIT_DIM_DYNAMIC;
    if (d.op == JIT_OP_EMBEDDING_SEGMENTS)
        d.num_segments = JIT_DIM_DYNAMIC;
    return d;
}

/* Runs s (static, or dynamic: every dim dynamic, called with the case's
 * dims) on b; the kernel's status. */
static int run_sig(const jit_sig *s, int dynamic, bag_buffers *b, const char *name)
{
    jit_sig d = dynamic ? all_dynamic(s) : *s;
    jit_kernel k = jit_compile(&d);
    if (!k)
        fail_msg("%s (%s, %s): refused: %s", name, jit_engine_name(s->engine),
                 dynamic ? "dynamic" : "static", jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    assert_int_equal(info.op, s->op);
    assert_int_equal(info.dynamic, dynamic);
    if (!dynamic)
        assert_int_equal(info.out_bytes, (int64_t)b->out_bytes);
    int64_t dims[4 * JIT_MAX_RANK];
    call_dims(s, dims);
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
            for (int dynamic = 0; dynamic < 2; dynamic++) {
                bag_buffers b;
                s.engine = engines[e];
                load_buffers(c, &s, (size_t)elems * (size_t)jit_dtype_size(s.dtype), &b);
                int rc = run_sig(&s, dynamic, &b, name);
                if (rc != JIT_OK)
                    fail_msg("%s (%s, %s): status %d: %s", name, jit_engine_name(s.engine),
                             dynamic ? "dynamic" : "static", rc, jit_last_error());
                if (memcmp(b.out, b.want, b.out_bytes) != 0)
                    fail_msg("%s (%s, %s): the output differs from expected, bit for bit", name,
                             jit_engine_name(s.engine), dynamic ? "dynamic" : "static");
                expect_canary(&b, name);
                free_buffers(&b);
                ran++;
            }
    }
    assert_int_equal(ran, 4 * cJSON_GetArraySize(cases));
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
        for (int dynamic = 0; dynamic < 2; dynamic++) {
            bag_buffers b;
            s->engine = engines[e];
            load_buffers(c, s, (size_t)elems * (size_t)jit_dtype_size(s->dtype), &b);
            int rc = run_sig(s, dynamic, &b, name);
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
            int on_dims = s.default_index != -1 || s.padding_idx != JIT_NO_PADDING ||
                          s.include_last_offset;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_invalid),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_shutdown();
    return rc;
}
