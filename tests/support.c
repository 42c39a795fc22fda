#include "support.h"

#include <math.h>
#include <setjmp.h> /* cmocka's, for support_read_file's failure */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "config.h"
#include "half.h"

#ifndef TJ_CASES_DIR
#error "TJ_CASES_DIR must name the conformance vectors folder"
#endif

cJSON *support_load_cases(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TJ_CASES_DIR, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (configure with -DTENSORJIT_CASES_DIR=...)\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    if (!j || !cJSON_IsArray(j))
        fprintf(stderr, "%s is not a JSON array\n", path);
    return j;
}

jit_shape support_shape(const cJSON *arr)
{
    jit_shape s = {0};
    const cJSON *e;
    if (!cJSON_IsArray(arr))
        return s;
    cJSON_ArrayForEach(e, arr)
    {
        if (s.rank < JIT_MAX_RANK)
            s.dims[s.rank] = (int64_t)e->valuedouble;
        s.rank++;
    }
    return s;
}

jit_dtype support_dtype(const cJSON *c, const char *field, jit_dtype dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, field);
    if (!cJSON_IsString(v))
        return dflt;
    jit_dtype t = jit_dtype_from_name(v->valuestring);
    if (t == JIT_DTYPE_UNSET) {
        fprintf(stderr, "unknown dtype '%s' in a case\n", v->valuestring);
        abort();
    }
    return t;
}

/* 1 and the bytes of v in type t at p, or 0 if v is not exact in t. */
static int support_store(double v, jit_dtype t, void *p, int exact)
{
    int is_int = v == floor(v);
#define STORE_INT(T, lo, hi)                              \
    do {                                                  \
        if (!is_int || v < (double)(lo) || v > (double)(hi)) \
            return 0;                                     \
        T x = (T)v;                                       \
        memcpy(p, &x, sizeof x);                          \
        return 1;                                         \
    } while (0)
    switch (t) {
    case JIT_BOOL: if (v != 0 && v != 1) return 0; STORE_INT(uint8_t, 0, 1);
    case JIT_I8: STORE_INT(int8_t, INT8_MIN, INT8_MAX);
    case JIT_U8: STORE_INT(uint8_t, 0, UINT8_MAX);
    case JIT_I16: STORE_INT(int16_t, INT16_MIN, INT16_MAX);
    case JIT_U16: STORE_INT(uint16_t, 0, UINT16_MAX);
    case JIT_I32: STORE_INT(int32_t, INT32_MIN, INT32_MAX);
    case JIT_U32: STORE_INT(uint32_t, 0, UINT32_MAX);
    case JIT_I64: STORE_INT(int64_t, -9007199254740992.0, 9007199254740992.0);
    case JIT_U64: STORE_INT(uint64_t, 0, 9007199254740992.0);
    case JIT_F16: {
        uint16_t h = tj_float_to_half((float)v);
        if (exact && (double)tj_half_to_float(h) != v)
            return 0;
        memcpy(p, &h, 2);
        return 1;
    }
    case JIT_BF16: {
        uint16_t h = tj_float_to_bf16((float)v);
        if (exact && (double)tj_bf16_to_float(h) != v)
            return 0;
        memcpy(p, &h, 2);
        return 1;
    }
    case JIT_F32: {
        float x = (float)v;
        if (exact && (double)x != v)
            return 0;
        memcpy(p, &x, 4);
        return 1;
    }
    case JIT_F64: memcpy(p, &v, 8); return 1;
    default: return 0;
    }
#undef STORE_INT
}

void *support_values(const cJSON *arr, jit_dtype t, int64_t *count, int exact)
{
    int n = cJSON_GetArraySize(arr), es = jit_dtype_size(t);
    char *buf = malloc((size_t)(n ? n : 1) * (size_t)es);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (!support_store(e->valuedouble, t, buf + (size_t)i * es, exact)) {
            free(buf);
            return NULL;
        }
        i++;
    }
    if (count)
        *count = n;
    return buf;
}

static int support_int(const cJSON *c, const char *field, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, field);
    return cJSON_IsNumber(v) ? v->valueint : dflt;
}

static jit_index_policy support_policy(const cJSON *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "index_policy");
    jit_index_policy p = JIT_INDEX_ERROR;
    if (cJSON_IsString(v) && jit_index_policy_from_name(v->valuestring, &p) != 0) {
        fprintf(stderr, "unknown index policy '%s'\n", v->valuestring);
        abort();
    }
    return p;
}

jit_sig support_sig(const cJSON *c)
{
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
    jit_sig s = {0};
    s.op = cJSON_IsString(op) ? jit_op_from_name(op->valuestring) : JIT_OP_NONE;
    s.opset = support_int(c, "version", 0);
    s.axis = support_int(c, "axis", 0);
    s.batch_dims = support_int(c, "batch_dims", 0);
    s.dtype = support_dtype(c, "dtype", JIT_F32);
    s.updates_dtype = support_dtype(c, "updates_dtype", JIT_DTYPE_UNSET);
    s.index_type = support_dtype(c, "index_type", JIT_I32);
    s.axis_type = support_dtype(c, "axis_type", JIT_DTYPE_UNSET);
    s.axis_shape = support_shape(cJSON_GetObjectItemCaseSensitive(c, "axis_shape"));
    s.index_policy = support_policy(c);
    s.data_shape = support_shape(cJSON_GetObjectItemCaseSensitive(c, "data_shape"));
    s.indices_shape = support_shape(cJSON_GetObjectItemCaseSensitive(c, "indices_shape"));
    s.updates_shape = support_shape(cJSON_GetObjectItemCaseSensitive(c, "updates_shape"));
    if (jit_reduction_from_name(support_reduction(c), &s.reduction) != 0)
        s.reduction = JIT_REDUCTION_COUNT; /* a name the library does not know: refused */
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(c, "use_init_val");
    s.no_init_val = cJSON_IsFalse(init);
    return s;
}

const char *support_reduction(const cJSON *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "reduction");
    return cJSON_IsString(v) ? v->valuestring : "none";
}

uint64_t support_rand(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t support_rand_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(support_rand(s) % (uint64_t)(hi - lo + 1));
}

void support_expect_jit(const jit_kernel_info *info, const char *what)
{
#ifdef TJ_WITH_JIT
    const char *off = getenv("TENSORJIT_JIT");
    if (off && (strcasecmp(off, "off") == 0 || strcmp(off, "0") == 0 ||
                strcasecmp(off, "false") == 0 || strcasecmp(off, "no") == 0))
        return;
    if (info->engine != JIT_ENGINE_JIT) {
        fprintf(stderr, "%s: the reference kernel served (%s), not the JIT\n", what, info->why);
        abort();
    }
#else
    (void)info;
    (void)what;
#endif
}

int support_jit_takes_f16_bags(void)
{
    static int known, takes;
    if (known)
        return takes;
    jit_sig s = {.op = JIT_OP_EMBEDDING_BAG_PACKED, .dtype = JIT_F16, .index_type = JIT_I64,
                 .threads = 1, .reduction = JIT_REDUCTION_SUM};
    s.data_shape = (jit_shape){2, {16, 8}};
    s.indices_shape = (jit_shape){2, {2, 3}};
    jit_kernel k = jit_compile(&s);
    if (!k)
        fail_msg("an f16 packed bag: refused: %s", jit_last_error());
    jit_kernel_info info;
    assert_int_equal(jit_info(k, &info), 0);
    takes = !(info.engine == JIT_ENGINE_REFERENCE && strstr(info.why, "F16C"));
    /* the JIT off or absent says something else, and is asked again later */
    known = info.engine == JIT_ENGINE_JIT || !takes;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (!takes && __builtin_cpu_supports("f16c"))
        fail_msg("this CPU has F16C, but an f16 bag was refused: %s", info.why);
#endif
    jit_release(k);
    return takes;
}

void support_setenv(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    jit_shutdown();
}

void support_env_push(support_env *saved, const char *name, const char *value)
{
    const char *v = getenv(name);
    saved->name = name;
    saved->had = v != NULL;
    snprintf(saved->value, sizeof saved->value, "%s", v ? v : "");
    support_setenv(name, value);
}

void support_env_pop(const support_env *saved)
{
    support_setenv(saved->name, saved->had ? saved->value : NULL);
}

void support_unsetenv(const char *name)
{
    unsetenv(name);
    tj_config_reset();
}

long support_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

void support_store_index(jit_dtype t, void *indices, int64_t i, int64_t v)
{
    switch (jit_dtype_size(t)) {
    case 1: ((int8_t *)indices)[i] = (int8_t)v; break;
    case 2: ((int16_t *)indices)[i] = (int16_t)v; break;
    case 4: ((int32_t *)indices)[i] = (int32_t)v; break;
    default: ((int64_t *)indices)[i] = v; break;
    }
}

int support_bag_call_dims(const jit_sig *s, int64_t *dims)
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

jit_sig support_bag_dynamic(const jit_sig *s, int row_dynamic)
{
    jit_sig d = *s;
    for (int i = 0; i < (row_dynamic ? d.data_shape.rank : 1); i++)
        d.data_shape.dims[i] = JIT_DIM_DYNAMIC;
    for (int i = 0; i < d.indices_shape.rank; i++)
        d.indices_shape.dims[i] = JIT_DIM_DYNAMIC;
    for (int i = 0; i < d.updates_shape.rank; i++)
        d.updates_shape.dims[i] = JIT_DIM_DYNAMIC;
    if (d.op == JIT_OP_EMBEDDING_SEGMENTS)
        d.num_segments = JIT_DIM_DYNAMIC;
    return d;
}

enum { SUPPORT_TEXT_MAX = 1 << 20 };

char *support_read_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = malloc(SUPPORT_TEXT_MAX + 1);
    assert_non_null(text);
    FILE *f = fopen(path, "rb");
    if (!f) {
        free(text);
        fail_msg("cannot open %s", path);
    }
    size_t n = fread(text, 1, SUPPORT_TEXT_MAX, f);
    fclose(f);
    text[n] = '\0';
    return text;
}
